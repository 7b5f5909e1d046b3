/*
 * MPI_Probe / MPI_Iprobe: the status gives source, tag and count of a pending message; a
 * receive with that source and tag then gets exactly that message, even with traffic from
 * every rank (including rank 0 itself) arriving at the same time and with several tags per
 * source; probing does not consume; MPI_Iprobe is false for a tag nobody sends.
 * Every rank sends NMSG messages (sizes 0..70000 bytes, 5 tags) to rank 0, which probes in
 * four different ways in turn, receives, and checks each message against the sender's list
 * (per (source, tag) order must be the send order).
 */
#include "mtest.h"

#define NMSG 24
#define NTAGS 5
#define TAG_UNUSED 99

static const int sizes[] = {0, 1, 100, 5000, 70000, 33};

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

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int rank = mtest_rank(), size = mtest_size();
    MPI_Status st;
    int flag;

    /* every rank (rank 0 too) sends its messages to rank 0 */
    unsigned char *out[NMSG];
    MPI_Request sreq[NMSG];
    for (int i = 0; i < NMSG; i++) {
        int n = msg_size(rank, i);
        out[i] = mtest_malloc((size_t)n);
        mtest_fill(out[i], (size_t)n, msg_seed(rank, i));
        MTEST_CALL(MPI_Isend(out[i], n, MPI_BYTE, 0, msg_tag(rank, i), MPI_COMM_WORLD, &sreq[i]));
    }

    if (rank == 0) {
        int total = NMSG * size;
        char *done = mtest_malloc((size_t)total);
        memset(done, 0, (size_t)total);
        int remaining = total;

        flag = -1;
        MTEST_CALL(MPI_Iprobe(MPI_ANY_SOURCE, TAG_UNUSED, MPI_COMM_WORLD, &flag, &st));
        MTEST_EQ("MPI_Iprobe flag for a tag nobody sends", 0, flag);

        for (int k = 0; remaining > 0; k++) {
            /* choose a way of probing */
            int way = k % 4;
            if (way == 0) {
                MTEST_CALL(MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
            } else if (way == 1 || way == 2) {
                /* a source (way 1) or a tag (way 2) that still has messages */
                int pick = -1;
                for (int j = 0; j < total; j++) {
                    int idx = (j + k * 13) % total;
                    if (!done[idx]) {
                        pick = idx;
                        break;
                    }
                }
                int psrc = pick / NMSG, ptag = msg_tag(psrc, pick % NMSG);
                if (way == 1) {
                    MTEST_CALL(MPI_Probe(psrc, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
                    MTEST_EQ("status.MPI_SOURCE of MPI_Probe(source, ANY_TAG)", psrc, st.MPI_SOURCE);
                } else {
                    flag = 0;
                    while (!flag) {
                        MTEST_CALL(MPI_Iprobe(MPI_ANY_SOURCE, ptag, MPI_COMM_WORLD, &flag, &st));
                    }
                    MTEST_EQ("status.MPI_TAG of MPI_Iprobe(ANY_SOURCE, tag)", ptag, st.MPI_TAG);
                }
            } else {
                flag = 0;
                while (!flag) {
                    MTEST_CALL(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st));
                }
            }
            int src = st.MPI_SOURCE, tag = st.MPI_TAG, count = -1;
            MTEST_CALL(MPI_Get_count(&st, MPI_BYTE, &count));
            if (src < 0 || src >= size || tag < 0 || tag >= NTAGS) {
                MTEST_ABORT("probe returned source %d tag %d", src, tag);
            }
            /* the earliest unreceived message from src with this tag */
            int i = -1;
            for (int j = 0; j < NMSG; j++) {
                if (!done[src * NMSG + j] && msg_tag(src, j) == tag) {
                    i = j;
                    break;
                }
            }
            if (i < 0) {
                MTEST_ABORT("probe found a message from %d tag %d that was not sent", src, tag);
            }
            MTEST_CHECK(count == msg_size(src, i), "probe count %d, message %d from %d has %d bytes",
                        count, i, src, msg_size(src, i));
            if (k % 3 == 0) {
                /* probing again does not consume: same envelope */
                MPI_Status st2;
                MTEST_CALL(MPI_Probe(src, tag, MPI_COMM_WORLD, &st2));
                int c2 = -1;
                MTEST_CALL(MPI_Get_count(&st2, MPI_BYTE, &c2));
                MTEST_CHECK(st2.MPI_SOURCE == src && st2.MPI_TAG == tag && c2 == count,
                            "second probe: source %d tag %d count %d", st2.MPI_SOURCE, st2.MPI_TAG, c2);
            }
            /* receive exactly `count` bytes with the probed source and tag */
            unsigned char *in = mtest_malloc((size_t)count);
            MTEST_CALL(MPI_Recv(in, count, MPI_BYTE, src, tag, MPI_COMM_WORLD, &st));
            MTEST_STATUS(&st, src, tag, MPI_BYTE, count);
            char what[80];
            snprintf(what, sizeof what, "message %d from rank %d (tag %d)", i, src, tag);
            mtest_verify(in, (size_t)count, msg_seed(src, i), what);
            free(in);
            done[src * NMSG + i] = 1;
            remaining--;
            if (k % 10 == 0) {
                MTEST_CALL(MPI_Iprobe(MPI_ANY_SOURCE, TAG_UNUSED, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));
                MTEST_EQ("MPI_Iprobe flag for a tag nobody sends", 0, flag);
            }
        }
        free(done);
    }
    MTEST_CALL(MPI_Waitall(NMSG, sreq, MPI_STATUSES_IGNORE));
    for (int i = 0; i < NMSG; i++) {
        free(out[i]);
    }
    return mtest_finalize();
}
