/*
 * MPI_Comm_disconnect waits for the communication still pending on the communicator
 * (large nonblocking messages not yet waited for) before freeing it, as MPI-4.1 says;
 * the requests are complete afterwards and their data is there.
 * Strict: MPICH 4.0.2 returns with the requests incomplete (and hangs on one process).
 */
#include "mtest.h"

#define N (1 << 18)

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int rank = mtest_rank(), size = mtest_size();
    MPI_Comm c;
    MTEST_CALL(MPI_Comm_dup(MPI_COMM_WORLD, &c));
    int to = (rank + 1) % size, from = (rank + size - 1) % size;
    int *out = mtest_malloc(N * sizeof(int)), *in = mtest_malloc(N * sizeof(int));
    for (int i = 0; i < N; i++) {
        out[i] = rank * N + i;
        in[i] = -1;
    }
    MPI_Request rq[2];
    MTEST_CALL(MPI_Irecv(in, N, MPI_INT, from, 9, c, &rq[0]));
    MTEST_CALL(MPI_Isend(out, N, MPI_INT, to, 9, c, &rq[1]));
    MTEST_CALL(MPI_Comm_disconnect(&c));
    MTEST_EQ("handle after disconnect", MPI_COMM_NULL, c);
    int done = 0;
    MTEST_CALL(MPI_Testall(2, rq, &done, MPI_STATUSES_IGNORE));
    MTEST_EQ("requests complete after disconnect", 1, done);
    if (!done) {
        MTEST_CALL(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
    }
    int bad = 0;
    for (int i = 0; i < N; i++) {
        bad += in[i] != from * N + i;
    }
    MTEST_EQ("wrong elements", 0, bad);
    free(out);
    free(in);

    return mtest_finalize();
}
