/*
 * Matched probe: MPI_Mprobe / MPI_Improbe take a message out of the queue, so that no
 * other receive or probe can match it, and MPI_Mrecv / MPI_Imrecv (and their _c forms)
 * receive exactly that message.
 *
 * 1. Every rank (rank 0 too) sends NMSG messages (0..70000 bytes: eager and
 *    rendezvous, 5 tags) to rank 0, which takes them with matched probes in four ways
 *    (Mprobe any/any + Mrecv, Mprobe source + Imrecv, Improbe tag + Mrecv_c, Improbe
 *    any/any + Imrecv_c into a strided buffer), sizes the buffer with MPI_Get_count on
 *    the probe's status, and checks each message against its sender's list.
 * 2. Exclusivity: rank 1 sends A then B with one envelope; rank 0 matches A, then
 *    MPI_Iprobe and MPI_Recv see only B, a second Improbe sees nothing; Mrecv gets A.
 * 3. Truncation: a 100-int message matched, received into 10 ints: MPI_ERR_TRUNCATE,
 *    nothing written past the buffer.
 * 4. MPI_PROC_NULL: the probes give MPI_MESSAGE_NO_PROC with a PROC_NULL status; its
 *    receive returns at once with the PROC_NULL status and MPI_MESSAGE_NULL.
 */
#include "mtest.h"

#define NMSG 16
#define NTAGS 5
#define TAG_EXCL 50
#define TAG_TRUNC 52

static const int sizes[] = {0, 4, 100, 5000, 70000, 36};

static int msg_tag(int src, int i)
{
    return (src * 7 + i * 3) % NTAGS;
}

static int msg_size(int src, int i)
{
    return sizes[(src + i * 5) % (int)(sizeof sizes / sizeof sizes[0])];
}

static uint64_t msg_seed(int src, int i)
{
    return (uint64_t)src * 1000 + (uint64_t)i;
}

/* The earliest message not yet received from src with tag; aborts when there is none. */
static int next_msg(const char *done, int src, int tag)
{
    for (int j = 0; j < NMSG; j++) {
        if (!done[src * NMSG + j] && msg_tag(src, j) == tag) {
            return j;
        }
    }
    MTEST_ABORT("a matched probe found a message from %d tag %d that was not sent", src, tag);
    return -1;
}

static void traffic(int rank, int size)
{
    unsigned char *out[NMSG];
    MPI_Request sreq[NMSG];
    for (int i = 0; i < NMSG; i++) {
        int n = msg_size(rank, i);
        out[i] = mtest_malloc((size_t)n);
        mtest_fill(out[i], (size_t)n, msg_seed(rank, i));
        MTEST_CALL(MPI_Isend(out[i], n, MPI_BYTE, 0, msg_tag(rank, i), MPI_COMM_WORLD, &sreq[i]));
    }
    if (rank == 0) {
        int total = NMSG * size, remaining = total;
        char *done = mtest_malloc((size_t)total);
        memset(done, 0, (size_t)total);
        MPI_Datatype strided;
        MTEST_CALL(MPI_Type_vector(70000, 1, 2, MPI_BYTE, &strided));
        MTEST_CALL(MPI_Type_commit(&strided));
        for (int k = 0; remaining > 0; k++) {
            MPI_Message msg = MPI_MESSAGE_NULL;
            MPI_Status st;
            int way = k % 4, flag = 0;
            if (way == 0) {
                MTEST_CALL(MPI_Mprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &msg, &st));
            } else if (way == 1 || way == 2) {
                int pick = -1;
                for (int j = 0; j < total && pick < 0; j++) {
                    int idx = (j + k * 13) % total;
                    if (!done[idx]) {
                        pick = idx;
                    }
                }
                int psrc = pick / NMSG, ptag = msg_tag(psrc, pick % NMSG);
                if (way == 1) {
                    MTEST_CALL(MPI_Mprobe(psrc, MPI_ANY_TAG, MPI_COMM_WORLD, &msg, &st));
                    MTEST_EQ("status.MPI_SOURCE of MPI_Mprobe(source, ANY_TAG)", psrc, st.MPI_SOURCE);
                } else {
                    while (!flag) {
                        MTEST_CALL(MPI_Improbe(MPI_ANY_SOURCE, ptag, MPI_COMM_WORLD, &flag, &msg, &st));
                    }
                    MTEST_EQ("status.MPI_TAG of MPI_Improbe(ANY_SOURCE, tag)", ptag, st.MPI_TAG);
                }
            } else {
                while (!flag) {
                    MTEST_CALL(MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &msg, &st));
                }
            }
            MTEST_CHECK(msg != MPI_MESSAGE_NULL && msg != MPI_MESSAGE_NO_PROC,
                        "matched probe %d returned message handle %#x", k, (unsigned)msg);
            int src = st.MPI_SOURCE, tag = st.MPI_TAG, count = -1;
            MTEST_CALL(MPI_Get_count(&st, MPI_BYTE, &count));
            if (src < 0 || src >= size || tag < 0 || tag >= NTAGS) {
                MTEST_ABORT("matched probe returned source %d tag %d", src, tag);
            }
            int i = next_msg(done, src, tag);
            MTEST_CHECK(count == msg_size(src, i), "probe count %d, message %d from %d has %d bytes",
                        count, i, src, msg_size(src, i));
            char what[80];
            snprintf(what, sizeof what, "message %d from rank %d (tag %d)", i, src, tag);
            MPI_Status rst;
            MPI_Request r;
            if (way == 3) {
                /* every other byte of a strided buffer */
                unsigned char *in = mtest_malloc(2 * 70000);
                MTEST_CALL(MPI_Imrecv_c(in, count > 0 ? 1 : 0, strided, &msg, &r));
                MTEST_EQ("message handle after MPI_Imrecv_c", MPI_MESSAGE_NULL, msg);
                MTEST_CALL(MPI_Wait(&r, &rst));
                MTEST_STATUS(&rst, src, tag, MPI_BYTE, count);
                unsigned char *packed = mtest_malloc((size_t)count + 1);
                for (int b = 0; b < count; b++) {
                    packed[b] = in[2 * b];
                }
                mtest_verify(packed, (size_t)count, msg_seed(src, i), what);
                free(packed);
                free(in);
            } else {
                unsigned char *in = mtest_malloc((size_t)count + 1);
                if (way == 0) {
                    MTEST_CALL(MPI_Mrecv(in, count, MPI_BYTE, &msg, &rst));
                } else if (way == 1) {
                    MTEST_CALL(MPI_Imrecv(in, count, MPI_BYTE, &msg, &r));
                    MTEST_EQ("message handle after MPI_Imrecv", MPI_MESSAGE_NULL, msg);
                    MTEST_CALL(MPI_Wait(&r, &rst));
                } else {
                    MTEST_CALL(MPI_Mrecv_c(in, (MPI_Count)count, MPI_BYTE, &msg, &rst));
                }
                MTEST_EQ("message handle after the matched receive", MPI_MESSAGE_NULL, msg);
                MTEST_STATUS(&rst, src, tag, MPI_BYTE, count);
                mtest_verify(in, (size_t)count, msg_seed(src, i), what);
                free(in);
            }
            done[src * NMSG + i] = 1;
            remaining--;
        }
        MTEST_CALL(MPI_Type_free(&strided));
        free(done);
    }
    MTEST_CALL(MPI_Waitall(NMSG, sreq, MPI_STATUSES_IGNORE));
    for (int i = 0; i < NMSG; i++) {
        free(out[i]);
    }
}

/* Rank 1 sends A then B (each n ints, tag `tag`); rank 0 matches A first. */
static void exclusivity(int rank, int n, int tag)
{
    int *a = mtest_malloc((size_t)n * sizeof(int)), *b = mtest_malloc((size_t)n * sizeof(int));
    if (rank == 1) {
        mtest_fill(a, (size_t)n * sizeof(int), 1);
        mtest_fill(b, (size_t)n * sizeof(int), 2);
        MPI_Request r[2];
        MTEST_CALL(MPI_Isend(a, n, MPI_INT, 0, tag, MPI_COMM_WORLD, &r[0]));
        MTEST_CALL(MPI_Isend(b, n, MPI_INT, 0, tag, MPI_COMM_WORLD, &r[1]));
        MTEST_CALL(MPI_Waitall(2, r, MPI_STATUSES_IGNORE));
    } else if (rank == 0) {
        MPI_Message msg;
        MPI_Status st;
        int flag = 0;
        MTEST_CALL(MPI_Mprobe(1, tag, MPI_COMM_WORLD, &msg, &st));
        MTEST_STATUS(&st, 1, tag, MPI_INT, n);
        /* B is the only message left with this envelope (it may still be on its way) */
        while (!flag) {
            MTEST_CALL(MPI_Iprobe(1, tag, MPI_COMM_WORLD, &flag, &st));
        }
        MTEST_STATUS(&st, 1, tag, MPI_INT, n);
        MTEST_CALL(MPI_Recv(b, n, MPI_INT, MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, &st));
        MTEST_STATUS(&st, 1, tag, MPI_INT, n);
        mtest_verify(b, (size_t)n * sizeof(int), 2, "the message after the matched one");
        MPI_Message none = MPI_MESSAGE_NULL;
        MTEST_CALL(MPI_Improbe(1, tag, MPI_COMM_WORLD, &flag, &none, &st));
        MTEST_EQ("MPI_Improbe flag once both are taken", 0, flag);
        MTEST_EQ("message handle untouched when nothing matched", MPI_MESSAGE_NULL, none);
        MTEST_CALL(MPI_Mrecv(a, n, MPI_INT, &msg, &st));
        MTEST_STATUS(&st, 1, tag, MPI_INT, n);
        mtest_verify(a, (size_t)n * sizeof(int), 1, "the matched message");
    }
    free(a);
    free(b);
}

static void truncation(int rank, int size)
{
    int from = size - 1, out[100];
    MPI_Request sr = MPI_REQUEST_NULL;
    if (rank == from) {
        for (int i = 0; i < 100; i++) {
            out[i] = 7 * i + 1;
        }
        MTEST_CALL(MPI_Isend(out, 100, MPI_INT, 0, TAG_TRUNC, MPI_COMM_WORLD, &sr));
    }
    if (rank == 0) {
        int in[12];
        MPI_Message msg;
        MPI_Status st;
        MTEST_CALL(MPI_Mprobe(from, TAG_TRUNC, MPI_COMM_WORLD, &msg, &st));
        MTEST_STATUS(&st, from, TAG_TRUNC, MPI_INT, 100);
        in[10] = in[11] = -5;
        /* (what lands, and the handle after the error, are checked in mprobe_strict) */
        int rc = MPI_Mrecv(in, 10, MPI_INT, &msg, &st);
        MTEST_EQ("error class of a truncated MPI_Mrecv", MPI_ERR_TRUNCATE, mtest_errclass(rc));
        MTEST_EQ("int after the receive buffer", -5, in[10]);
    }
    MTEST_CALL(MPI_Wait(&sr, MPI_STATUS_IGNORE));
}

static void proc_null(void)
{
    MPI_Message msg = MPI_MESSAGE_NULL;
    MPI_Status st;
    MPI_Request r;
    int flag = 0, buf = 42;
    MTEST_CALL(MPI_Mprobe(MPI_PROC_NULL, 0, MPI_COMM_WORLD, &msg, &st));
    MTEST_EQ("message of MPI_Mprobe(MPI_PROC_NULL)", MPI_MESSAGE_NO_PROC, msg);
    MTEST_PROC_NULL_STATUS(&st);
    MTEST_CALL(MPI_Mrecv(&buf, 1, MPI_INT, &msg, &st));
    MTEST_EQ("message after MPI_Mrecv of MPI_MESSAGE_NO_PROC", MPI_MESSAGE_NULL, msg);
    MTEST_PROC_NULL_STATUS(&st);
    MTEST_EQ("buffer of MPI_Mrecv from MPI_PROC_NULL", 42, buf);
    MTEST_CALL(MPI_Improbe(MPI_PROC_NULL, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &msg, &st));
    MTEST_EQ("flag of MPI_Improbe(MPI_PROC_NULL)", 1, flag);
    MTEST_EQ("message of MPI_Improbe(MPI_PROC_NULL)", MPI_MESSAGE_NO_PROC, msg);
    MTEST_PROC_NULL_STATUS(&st);
    MTEST_CALL(MPI_Imrecv(&buf, 1, MPI_INT, &msg, &r));
    MTEST_EQ("message after MPI_Imrecv of MPI_MESSAGE_NO_PROC", MPI_MESSAGE_NULL, msg);
    MTEST_CALL(MPI_Wait(&r, &st));
    MTEST_PROC_NULL_STATUS(&st);
    MTEST_EQ("buffer of MPI_Imrecv from MPI_PROC_NULL", 42, buf);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int rank = mtest_rank(), size = mtest_size();
    proc_null();
    traffic(rank, size);
    mtest_barrier();
    if (size > 1) {
        exclusivity(rank, 3, TAG_EXCL);         /* eager */
        exclusivity(rank, 50000, TAG_EXCL + 1); /* rendezvous */
    }
    truncation(rank, size);
    return mtest_finalize();
}
