/*
 * MPI_Comm_free while operations on the communicator are still pending: the free only
 * marks it; a nonblocking barrier, a nonblocking allreduce, point-to-point requests and
 * an active persistent collective complete normally afterwards with the right results,
 * a persistent request outlives its communicator until freed, and communicators created
 * meanwhile (which must not get the freed context while the operations are pending)
 * carry their own traffic without mixing with them.
 */
#include "mtest.h"

#define ROUNDS 20

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int rank = mtest_rank(), size = mtest_size();
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    int want = size * (size - 1) / 2;

    for (int i = 0; i < ROUNDS; i++) {
        MPI_Comm c;
        MTEST_CALL(MPI_Comm_dup(MPI_COMM_WORLD, &c));
        int sum = -1, out = 100 * i + rank, in = -1;
        MPI_Request r[4];
        MTEST_CALL(MPI_Irecv(&in, 1, MPI_INT, prev, i, c, &r[0]));
        MTEST_CALL(MPI_Ibarrier(c, &r[1]));
        MTEST_CALL(MPI_Iallreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, c, &r[2]));
        MTEST_CALL(MPI_Isend(&out, 1, MPI_INT, next, i, c, &r[3]));
        MTEST_CALL(MPI_Comm_free(&c));
        MTEST_CHECK(c == MPI_COMM_NULL, "MPI_Comm_free did not set the handle to MPI_COMM_NULL");
        /* A new communicator while those are pending: its traffic stays its own. */
        MPI_Comm d;
        int dsum = -1, din = -1, dout = -(100 * i + rank) - 1;
        MTEST_CALL(MPI_Comm_dup(MPI_COMM_WORLD, &d));
        MPI_Request q[2];
        MTEST_CALL(MPI_Irecv(&din, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, d, &q[0]));
        MTEST_CALL(MPI_Isend(&dout, 1, MPI_INT, next, i, d, &q[1]));
        MTEST_CALL(MPI_Allreduce(&rank, &dsum, 1, MPI_INT, MPI_SUM, d));
        MTEST_CALL(MPI_Waitall(2, q, MPI_STATUSES_IGNORE));
        MTEST_EQ("allreduce on the new communicator", want, dsum);
        MTEST_EQ("message on the new communicator", -(100 * i + prev) - 1, din);
        if (i % 2) {
            MTEST_CALL(MPI_Waitall(4, r, MPI_STATUSES_IGNORE));
        } else {
            for (int k = 3; k >= 0; k--) {
                int done = 0;
                while (!done) {
                    MTEST_CALL(MPI_Test(&r[k], &done, MPI_STATUS_IGNORE));
                }
            }
        }
        MTEST_EQ("iallreduce after the free", want, sum);
        MTEST_EQ("message received after the free", 100 * i + prev, in);
        MTEST_CALL(MPI_Comm_free(&d));
    }

    /* A persistent collective: started, its communicator freed while it is active, then
     * completed, and the request freed after other communicators came and went. */
    for (int i = 0; i < ROUNDS; i++) {
        MPI_Comm c;
        MTEST_CALL(MPI_Comm_dup(MPI_COMM_WORLD, &c));
        int v = rank + i, sum = -1;
        MPI_Request p;
        MTEST_CALL(MPI_Allreduce_init(&v, &sum, 1, MPI_INT, MPI_SUM, c, MPI_INFO_NULL, &p));
        MTEST_CALL(MPI_Start(&p));
        MTEST_CALL(MPI_Wait(&p, MPI_STATUS_IGNORE));
        MTEST_EQ("persistent allreduce", want + size * i, sum);
        sum = -1;
        MTEST_CALL(MPI_Start(&p));
        MTEST_CALL(MPI_Comm_free(&c));
        MTEST_CALL(MPI_Wait(&p, MPI_STATUS_IGNORE));
        MTEST_EQ("persistent allreduce completed after the free", want + size * i, sum);
        /* Other communicators come and go while the request exists. */
        MPI_Comm d;
        int dsum = -1;
        MTEST_CALL(MPI_Comm_dup(MPI_COMM_WORLD, &d));
        MTEST_CALL(MPI_Allreduce(&v, &dsum, 1, MPI_INT, MPI_SUM, d));
        MTEST_EQ("allreduce beside the persistent request", want + size * i, dsum);
        MTEST_CALL(MPI_Comm_free(&d));
        MTEST_CALL(MPI_Request_free(&p));
        MTEST_CHECK(p == MPI_REQUEST_NULL, "MPI_Request_free did not set MPI_REQUEST_NULL");
    }
    return mtest_finalize();
}
