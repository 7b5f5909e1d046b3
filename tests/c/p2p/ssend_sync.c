/*
 * Synchronous mode: an MPI_Issend cannot complete before a matching receive has started.
 * The sender tests its request (MPI_Test, MPI_Testany, MPI_Testall, MPI_Testsome) many times
 * while the receiver is blocked in a receive for another tag, and again after the receiver
 * has only probed the message (a probe is not a receive); all must report "not complete".
 * After the receiver posts the receive, MPI_Test must eventually report completion.
 * Sizes: 0 bytes, 8 bytes, 1 MiB.  Rank 2k sends to 2k+1; a lone last rank uses itself.
 */
#include "mtest.h"

#define TAG_DATA 1
#define TAG_GO 2
#define TAG_PROBED 4
#define TAG_GO2 5
#define POLLS 30

static void expect_incomplete(MPI_Request *req, const char *when, int n)
{
    for (int i = 0; i < POLLS; i++) {
        int flag = -1, idx = -7, outcount = -7, indices[1];
        MPI_Status st;
        MTEST_CALL(MPI_Test(req, &flag, &st));
        if (flag) {
            MTEST_CHECK(0, "MPI_Issend of %d bytes completed %s", n, when);
            return;
        }
        MTEST_CALL(MPI_Testany(1, req, &idx, &flag, &st));
        MTEST_CHECK(!flag, "MPI_Testany: MPI_Issend of %d bytes completed %s", n, when);
        if (flag) {
            return;
        }
        MTEST_CALL(MPI_Testall(1, req, &flag, MPI_STATUSES_IGNORE));
        MTEST_CHECK(!flag, "MPI_Testall: MPI_Issend of %d bytes completed %s", n, when);
        if (flag) {
            return;
        }
        MTEST_CALL(MPI_Testsome(1, req, &outcount, indices, MPI_STATUSES_IGNORE));
        MTEST_CHECK(outcount == 0, "MPI_Testsome: outcount %d for MPI_Issend of %d bytes %s", outcount, n,
                    when);
        if (outcount != 0) {
            return;
        }
        MTEST_CHECK(*req != MPI_REQUEST_NULL, "request became MPI_REQUEST_NULL %s", when);
        if (i % 5 == 4) {
            mtest_sleep_ms(1);
        }
    }
}

static void wait_by_test(MPI_Request *req)
{
    int flag = 0;
    MPI_Status st;
    while (!flag) {
        MTEST_CALL(MPI_Test(req, &flag, &st));
    }
    MTEST_CHECK(*req == MPI_REQUEST_NULL, "request not MPI_REQUEST_NULL after MPI_Test said complete");
}

static void sender(int dest, int n, unsigned char *buf)
{
    MPI_Request req;
    int token = 0;
    mtest_fill(buf, (size_t)n, (uint64_t)n + 3);
    MTEST_CALL(MPI_Issend(buf, n, MPI_BYTE, dest, TAG_DATA, MPI_COMM_WORLD, &req));
    expect_incomplete(&req, "while the receiver waits for another message", n);
    MTEST_CALL(MPI_Send(&token, 1, MPI_INT, dest, TAG_GO, MPI_COMM_WORLD));
    MTEST_CALL(MPI_Recv(&token, 1, MPI_INT, dest, TAG_PROBED, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    expect_incomplete(&req, "after the receiver only probed it", n);
    MTEST_CALL(MPI_Send(&token, 1, MPI_INT, dest, TAG_GO2, MPI_COMM_WORLD));
    wait_by_test(&req);
}

static void receiver(int src, int n, unsigned char *buf)
{
    int token = -1;
    MPI_Status st;
    MTEST_CALL(MPI_Recv(&token, 1, MPI_INT, src, TAG_GO, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    MTEST_CALL(MPI_Probe(src, TAG_DATA, MPI_COMM_WORLD, &st));
    MTEST_STATUS(&st, src, TAG_DATA, MPI_BYTE, n);
    MTEST_CALL(MPI_Send(&token, 1, MPI_INT, src, TAG_PROBED, MPI_COMM_WORLD));
    MTEST_CALL(MPI_Recv(&token, 1, MPI_INT, src, TAG_GO2, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    memset(buf, 0, (size_t)n);
    MTEST_CALL(MPI_Recv(buf, n, MPI_BYTE, src, TAG_DATA, MPI_COMM_WORLD, &st));
    MTEST_STATUS(&st, src, TAG_DATA, MPI_BYTE, n);
    mtest_verify(buf, (size_t)n, (uint64_t)n + 3, "synchronous message");
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int rank = mtest_rank(), size = mtest_size();
    int partner = (rank ^ 1) < size ? (rank ^ 1) : rank;
    const int sizes[] = {0, 8, 1 << 20};
    unsigned char *buf = mtest_malloc(1 << 20);
    unsigned char *rbuf = mtest_malloc(1 << 20);

    for (int s = 0; s < 3; s++) {
        int n = sizes[s];
        if (partner == rank) {
            /* alone: nothing can match until this rank posts the receive itself */
            MPI_Request req;
            MPI_Status st;
            mtest_fill(buf, (size_t)n, 11);
            MTEST_CALL(MPI_Issend(buf, n, MPI_BYTE, rank, TAG_DATA, MPI_COMM_WORLD, &req));
            expect_incomplete(&req, "before any receive was posted (self)", n);
            MTEST_CALL(MPI_Probe(rank, TAG_DATA, MPI_COMM_WORLD, &st));
            expect_incomplete(&req, "after a probe only (self)", n);
            MTEST_CALL(MPI_Recv(rbuf, n, MPI_BYTE, rank, TAG_DATA, MPI_COMM_WORLD, &st));
            MTEST_STATUS(&st, rank, TAG_DATA, MPI_BYTE, n);
            mtest_verify(rbuf, (size_t)n, 11, "synchronous message to self");
            wait_by_test(&req);
        } else if (rank % 2 == 0) {
            sender(partner, n, buf);
        } else {
            receiver(partner, n, rbuf);
        }
    }
    free(buf);
    free(rbuf);
    return mtest_finalize();
}
