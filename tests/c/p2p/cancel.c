/*
 * MPI_Cancel and MPI_Test_cancelled.
 *  - An unmatched MPI_Irecv (specific and wildcard source, persistent too) is cancelled:
 *    the completion call returns, MPI_Test_cancelled says true, the buffer is untouched.
 *    Completion by MPI_Wait, MPI_Test, MPI_Waitall and MPI_Request_free.
 *  - Cancelling a receive that has already been matched: if it reports cancelled, the
 *    message must still be receivable; if not, the buffer holds the message.
 *  - Cancelling sends (standard, synchronous, buffered; small and 1 MiB): either outcome is
 *    legal, but it must be consistent: if cancelled, the receiver never gets the message;
 *    otherwise it gets it intact.  The sender reports its outcome in a later message; by
 *    non-overtaking the receiver sees the data first if it exists.  (That a cancelled send
 *    completes locally, as the standard requires, is checked in p2p/cancel_strict.)
 * Rank 2k sends to 2k+1 (a lone last rank to itself); all ranks run the receive part.
 */
#include "mtest.h"

#define TAG_NEVER 77
#define TAG_DATA 10
#define TAG_OUTCOME 11
#define TAG_NEXT 12

static void cancel_unmatched_receives(void)
{
    int rank = mtest_rank();
    unsigned char buf[64];
    MPI_Request req, reqs[3];
    MPI_Status st, sts[3];
    int flag;

    for (int how = 0; how < 4; how++) {
        memset(buf, 0x3C, sizeof buf);
        int src = (how % 2) ? MPI_ANY_SOURCE : rank;
        MTEST_CALL(MPI_Irecv(buf, 64, MPI_BYTE, src, TAG_NEVER, MPI_COMM_WORLD, &req));
        MTEST_CALL(MPI_Cancel(&req));
        flag = -1;
        if (how == 0 || how == 1) {
            MTEST_CALL(MPI_Wait(&req, &st));
        } else if (how == 2) {
            int done = 0;
            while (!done) {
                MTEST_CALL(MPI_Test(&req, &done, &st));
            }
        } else {
            reqs[0] = MPI_REQUEST_NULL;
            reqs[1] = req;
            reqs[2] = MPI_REQUEST_NULL;
            MTEST_CALL(MPI_Waitall(3, reqs, sts));
            st = sts[1];
            req = reqs[1];
        }
        MTEST_CALL(MPI_Test_cancelled(&st, &flag));
        MTEST_CHECK(flag, "cancelled unmatched MPI_Irecv (variant %d): MPI_Test_cancelled false", how);
        MTEST_CHECK(req == MPI_REQUEST_NULL, "request not freed after completing a cancelled receive");
        mtest_verify_const(buf, sizeof buf, 0x3C, "buffer of a cancelled receive");
    }

    /* completion by MPI_Request_free */
    MTEST_CALL(MPI_Irecv(buf, 64, MPI_BYTE, MPI_ANY_SOURCE, TAG_NEVER, MPI_COMM_WORLD, &req));
    MTEST_CALL(MPI_Cancel(&req));
    MTEST_CALL(MPI_Request_free(&req));
    MTEST_CHECK(req == MPI_REQUEST_NULL, "MPI_Request_free after MPI_Cancel did not null the handle");

    /* a persistent receive: cancelled, then started again and used normally */
    int v = -1, out = 4711;
    MTEST_CALL(MPI_Recv_init(&v, 1, MPI_INT, rank, TAG_NEVER + 1, MPI_COMM_WORLD, &req));
    MTEST_CALL(MPI_Start(&req));
    MTEST_CALL(MPI_Cancel(&req));
    MTEST_CALL(MPI_Wait(&req, &st));
    MTEST_CALL(MPI_Test_cancelled(&st, &flag));
    MTEST_CHECK(flag, "cancelled persistent receive: MPI_Test_cancelled false");
    MTEST_CHECK(req != MPI_REQUEST_NULL, "persistent request freed by completing its cancellation");
    MTEST_EQ("buffer of the cancelled persistent receive", -1, v);
    MTEST_CALL(MPI_Start(&req));
    MPI_Request sreq;
    MTEST_CALL(MPI_Isend(&out, 1, MPI_INT, rank, TAG_NEVER + 1, MPI_COMM_WORLD, &sreq));
    MTEST_CALL(MPI_Wait(&req, &st));
    MTEST_STATUS(&st, rank, TAG_NEVER + 1, MPI_INT, 1);
    MTEST_CALL(MPI_Test_cancelled(&st, &flag));
    MTEST_EQ("MPI_Test_cancelled of a normal receive", 0, flag);
    MTEST_EQ("value received by the restarted persistent receive", 4711, v);
    MTEST_CALL(MPI_Wait(&sreq, MPI_STATUS_IGNORE));
    MTEST_CALL(MPI_Request_free(&req));
}

/* Cancel a receive after its message has (very probably) been matched: the message is sent
 * to self before a second message that is received first. */
static void cancel_matched_receive(void)
{
    int rank = mtest_rank();
    int a = 1111, b = 2222, in = -1, in2 = -1, flag = -1;
    MPI_Request rreq, s1, s2;
    MPI_Status st;
    MTEST_CALL(MPI_Irecv(&in, 1, MPI_INT, rank, 20, MPI_COMM_WORLD, &rreq));
    MTEST_CALL(MPI_Isend(&a, 1, MPI_INT, rank, 20, MPI_COMM_WORLD, &s1));
    MTEST_CALL(MPI_Isend(&b, 1, MPI_INT, rank, 21, MPI_COMM_WORLD, &s2));
    MTEST_CALL(MPI_Recv(&in2, 1, MPI_INT, rank, 21, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    MTEST_CALL(MPI_Cancel(&rreq));
    MTEST_CALL(MPI_Wait(&rreq, &st));
    MTEST_CALL(MPI_Test_cancelled(&st, &flag));
    if (flag) {
        MTEST_EQ("buffer of a cancelled receive", -1, in);
        MTEST_CALL(MPI_Recv(&in, 1, MPI_INT, rank, 20, MPI_COMM_WORLD, &st));
        MTEST_EQ("message taken back from a cancelled receive", 1111, in);
    } else {
        MTEST_STATUS(&st, rank, 20, MPI_INT, 1);
        MTEST_EQ("message of a receive whose cancel failed", 1111, in);
    }
    MTEST_CALL(MPI_Wait(&s1, MPI_STATUS_IGNORE));
    MTEST_CALL(MPI_Wait(&s2, MPI_STATUS_IGNORE));
}

enum { S_STANDARD, S_SYNC, S_BUFFERED, NKINDS };
static const char *kind_names[NKINDS] = {"MPI_Isend", "MPI_Issend", "MPI_Ibsend"};
static const int cancel_sizes[] = {8, 1 << 20};

static void cancel_send(int dest, int kind, int n, unsigned char *buf)
{
    MPI_Request req;
    MPI_Status st;
    int cancelled = -1;
    mtest_fill(buf, (size_t)n, (uint64_t)(kind * 10 + n));
    if (kind == S_STANDARD) {
        MTEST_CALL(MPI_Isend(buf, n, MPI_BYTE, dest, TAG_DATA, MPI_COMM_WORLD, &req));
    } else if (kind == S_SYNC) {
        MTEST_CALL(MPI_Issend(buf, n, MPI_BYTE, dest, TAG_DATA, MPI_COMM_WORLD, &req));
    } else {
        MTEST_CALL(MPI_Ibsend(buf, n, MPI_BYTE, dest, TAG_DATA, MPI_COMM_WORLD, &req));
    }
    MTEST_CALL(MPI_Cancel(&req));
    MTEST_CALL(MPI_Wait(&req, &st));
    MTEST_CALL(MPI_Test_cancelled(&st, &cancelled));
    cancelled = cancelled ? 1 : 0;
    MTEST_CALL(MPI_Send(&cancelled, 1, MPI_INT, dest, TAG_OUTCOME, MPI_COMM_WORLD));
    /* the receiver has looked for the data before the next round's message can exist */
    MTEST_CALL(MPI_Recv(NULL, 0, MPI_BYTE, dest, TAG_NEXT, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
}

static void check_cancelled_send(int src, int kind, int n, unsigned char *buf)
{
    MPI_Status st;
    int outcome = -1;
    char what[96];
    snprintf(what, sizeof what, "%s of %d bytes whose cancel failed", kind_names[kind], n);
    /* the data message, if it exists, precedes the outcome message from the same sender */
    MTEST_CALL(MPI_Probe(src, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
    if (st.MPI_TAG == TAG_DATA) {
        MTEST_CALL(MPI_Recv(buf, n, MPI_BYTE, src, TAG_DATA, MPI_COMM_WORLD, &st));
        MTEST_STATUS(&st, src, TAG_DATA, MPI_BYTE, n);
        mtest_verify(buf, (size_t)n, (uint64_t)(kind * 10 + n), what);
        MTEST_CALL(MPI_Recv(&outcome, 1, MPI_INT, src, TAG_OUTCOME, MPI_COMM_WORLD, &st));
        MTEST_CHECK(outcome == 0, "%s of %d bytes: reported cancelled but the message arrived",
                    kind_names[kind], n);
    } else {
        MTEST_EQ("tag of the next message from the sender", TAG_OUTCOME, st.MPI_TAG);
        MTEST_CALL(MPI_Recv(&outcome, 1, MPI_INT, src, TAG_OUTCOME, MPI_COMM_WORLD, &st));
        MTEST_CHECK(outcome == 1, "%s of %d bytes: not cancelled but the message never arrived",
                    kind_names[kind], n);
        int flag = -1;
        MTEST_CALL(MPI_Iprobe(src, TAG_DATA, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));
        MTEST_CHECK(!flag, "%s of %d bytes: cancelled message arrived after all", kind_names[kind], n);
    }
    MTEST_CALL(MPI_Send(NULL, 0, MPI_BYTE, src, TAG_NEXT, MPI_COMM_WORLD));
}

/* Alone: the same process is sender and receiver, and MPICH and Open MPI do not complete a
 * cancelled-but-not-cancellable send locally (p2p/cancel_strict checks that the standard's
 * "MPI_Wait behaves as a local function" holds).  So poll both ends: either the send
 * completes (then its cancelled flag decides) or the message becomes visible (then it must
 * not be cancelled). */
static void cancel_send_self(int kind, int n, unsigned char *buf, unsigned char *in)
{
    int rank = mtest_rank();
    MPI_Request req;
    MPI_Status st;
    char what[96];
    snprintf(what, sizeof what, "%s of %d bytes to self whose cancel failed", kind_names[kind], n);
    mtest_fill(buf, (size_t)n, (uint64_t)(kind * 10 + n));
    if (kind == S_STANDARD) {
        MTEST_CALL(MPI_Isend(buf, n, MPI_BYTE, rank, TAG_DATA, MPI_COMM_WORLD, &req));
    } else if (kind == S_SYNC) {
        MTEST_CALL(MPI_Issend(buf, n, MPI_BYTE, rank, TAG_DATA, MPI_COMM_WORLD, &req));
    } else {
        MTEST_CALL(MPI_Ibsend(buf, n, MPI_BYTE, rank, TAG_DATA, MPI_COMM_WORLD, &req));
    }
    MTEST_CALL(MPI_Cancel(&req));
    for (;;) {
        int done = 0, seen = 0, cancelled = -1;
        MTEST_CALL(MPI_Test(&req, &done, &st));
        if (done) {
            MTEST_CALL(MPI_Test_cancelled(&st, &cancelled));
            MTEST_CALL(MPI_Iprobe(rank, TAG_DATA, MPI_COMM_WORLD, &seen, MPI_STATUS_IGNORE));
            if (cancelled) {
                MTEST_CHECK(!seen, "%s of %d bytes to self: cancelled but the message is there",
                            kind_names[kind], n);
            }
            if (!cancelled || seen) {
                MTEST_CALL(MPI_Recv(in, n, MPI_BYTE, rank, TAG_DATA, MPI_COMM_WORLD, &st));
                MTEST_STATUS(&st, rank, TAG_DATA, MPI_BYTE, n);
                mtest_verify(in, (size_t)n, (uint64_t)(kind * 10 + n), what);
            }
            return;
        }
        MTEST_CALL(MPI_Iprobe(rank, TAG_DATA, MPI_COMM_WORLD, &seen, MPI_STATUS_IGNORE));
        if (seen) {
            MTEST_CALL(MPI_Recv(in, n, MPI_BYTE, rank, TAG_DATA, MPI_COMM_WORLD, &st));
            MTEST_STATUS(&st, rank, TAG_DATA, MPI_BYTE, n);
            mtest_verify(in, (size_t)n, (uint64_t)(kind * 10 + n), what);
            MTEST_CALL(MPI_Wait(&req, &st));
            MTEST_CALL(MPI_Test_cancelled(&st, &cancelled));
            MTEST_CHECK(!cancelled, "%s of %d bytes to self: received but reported cancelled",
                        kind_names[kind], n);
            return;
        }
    }
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int rank = mtest_rank(), size = mtest_size();
    int partner = (rank ^ 1) < size ? (rank ^ 1) : rank;

    cancel_unmatched_receives();
    cancel_matched_receive();

    /* room for both buffered sends at once: the receiver may not have taken the small one
     * when the large one is started */
    int bsize = 0, small = 0;
    MTEST_CALL(MPI_Pack_size(1 << 20, MPI_BYTE, MPI_COMM_WORLD, &bsize));
    MTEST_CALL(MPI_Pack_size(cancel_sizes[0], MPI_BYTE, MPI_COMM_WORLD, &small));
    bsize += small + 2 * MPI_BSEND_OVERHEAD;
    char *bbuf = mtest_malloc((size_t)bsize);
    MTEST_CALL(MPI_Buffer_attach(bbuf, bsize));
    unsigned char *buf = mtest_malloc(1 << 20), *in = mtest_malloc(1 << 20);
    for (int kind = 0; kind < NKINDS; kind++) {
        for (int s = 0; s < 2; s++) {
            int n = cancel_sizes[s];
            if (partner == rank) {
                cancel_send_self(kind, n, buf, in);
            } else if (rank % 2 == 0) {
                cancel_send(partner, kind, n, buf);
            } else {
                check_cancelled_send(partner, kind, n, buf);
            }
        }
    }
    void *addr;
    MTEST_CALL(MPI_Buffer_detach(&addr, &bsize));
    free(bbuf);
    free(buf);
    free(in);
    return mtest_finalize();
}
