/* Partitioned communication delivers a partition as soon as it is ready, not when the last
 * one is: rank 0 readies partition 0 only, rank 1 waits until MPI_Parrived reports it (and
 * checks that partition 1 has not arrived and its data is untouched), then tells rank 0 with
 * an ordinary message to ready partition 1.  Done three times with the same requests, for a
 * small (eager) and a large (rendezvous) partition size.  Other ranks only take part in the
 * final check.
 *
 * Strict (oxmpi promise): the standard allows an implementation to hold partitions back until
 * all are ready, and MPICH 4.0.2 does (it would hang here). */
#include "mtest.h"

static void run(int rank, int count)
{
    int *buf = calloc(2 * (size_t)count, sizeof(int));
    MTEST_CHECK(buf != NULL, "out of memory");
    MPI_Request req;
    if (rank == 0) {
        MTEST_CALL(MPI_Psend_init(buf, 2, count, MPI_INT, 1, 5, MPI_COMM_WORLD, MPI_INFO_NULL,
                                  &req));
    } else {
        MTEST_CALL(MPI_Precv_init(buf, 2, count, MPI_INT, 0, 5, MPI_COMM_WORLD, MPI_INFO_NULL,
                                  &req));
    }
    for (int round = 0; round < 3; round++) {
        for (int k = 0; k < 2 * count; k++) {
            buf[k] = rank == 0 ? k + round : -1;
        }
        MTEST_CALL(MPI_Start(&req));
        if (rank == 0) {
            MTEST_CALL(MPI_Pready(0, req));
            MTEST_CALL(MPI_Recv(NULL, 0, MPI_INT, 1, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            MTEST_CALL(MPI_Pready(1, req));
            MTEST_CALL(MPI_Wait(&req, MPI_STATUS_IGNORE));
        } else {
            int flag = 0;
            while (!flag) {
                MTEST_CALL(MPI_Parrived(req, 0, &flag));
            }
            for (int k = 0; k < count; k++) {
                if (buf[k] != k + round) {
                    MTEST_CHECK(0, "round %d element %d: expected %d got %d", round, k, k + round,
                                buf[k]);
                    break;
                }
            }
            MTEST_CALL(MPI_Parrived(req, 1, &flag));
            MTEST_EQ("MPI_Parrived(1) before the sender readied it", 0, flag);
            MTEST_EQ("first element of partition 1 before it was readied", -1, buf[count]);
            MTEST_CALL(MPI_Test(&req, &flag, MPI_STATUS_IGNORE));
            MTEST_EQ("MPI_Test before partition 1 was readied", 0, flag);
            MTEST_CALL(MPI_Send(NULL, 0, MPI_INT, 0, 6, MPI_COMM_WORLD));
            MPI_Status st;
            MTEST_CALL(MPI_Wait(&req, &st));
            MTEST_STATUS(&st, 0, 5, MPI_INT, 2 * count);
            for (int k = count; k < 2 * count; k++) {
                if (buf[k] != k + round) {
                    MTEST_CHECK(0, "round %d element %d: expected %d got %d", round, k, k + round,
                                buf[k]);
                    break;
                }
            }
        }
    }
    MTEST_CALL(MPI_Request_free(&req));
    free(buf);
}

int main(int argc, char **argv)
{
    int rank, size;
    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size < 2) {
        MTEST_ABORT("needs at least 2 processes");
    }
    if (rank < 2) {
        run(rank, 16);
        run(rank, 256 * 1024);
    }
    return mtest_finalize();
}
