/*
 * Bad arguments to nonblocking and persistent collectives return the right error
 * class under MPI_ERRORS_RETURN, start nothing, and leave the communicator usable:
 * a negative count, invalid roots, a null datatype, an invalid operation, a null
 * communicator, an invalid info handle.
 */
#include "mtest.h"

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int r = mtest_rank(), n = mtest_size();
    MPI_Comm w = MPI_COMM_WORLD;
    MPI_Request rq = MPI_REQUEST_NULL;
    int a[4] = {0}, b[4] = {0};

    MTEST_EXPECT_CLASS(MPI_ERR_COUNT, MPI_Ibcast(a, -1, MPI_INT, 0, w, &rq));
    MTEST_EXPECT_CLASS(MPI_ERR_ROOT, MPI_Ibcast(a, 1, MPI_INT, n, w, &rq));
    MTEST_EXPECT_CLASS(MPI_ERR_ROOT, MPI_Ireduce(a, b, 1, MPI_INT, MPI_SUM, -5, w, &rq));
    MTEST_EXPECT_CLASS2(MPI_ERR_TYPE, MPI_ERR_OP,
                        MPI_Iallreduce(a, b, 1, MPI_DATATYPE_NULL, MPI_SUM, w, &rq));
    MTEST_EXPECT_CLASS(MPI_ERR_OP, MPI_Iallreduce(a, b, 1, MPI_INT, MPI_OP_NULL, w, &rq));
    MTEST_EXPECT_CLASS(MPI_ERR_COMM, MPI_Ibarrier(MPI_COMM_NULL, &rq));
    MTEST_EXPECT_CLASS(MPI_ERR_ROOT, MPI_Bcast_init(a, 1, MPI_INT, n + 3, w, MPI_INFO_NULL, &rq));
    MTEST_EQ("request after failed calls", MPI_REQUEST_NULL, rq);

    /* The communicator still works, and the collective sequence is intact. */
    a[0] = r;
    MTEST_CALL(MPI_Iallreduce(a, b, 1, MPI_INT, MPI_SUM, w, &rq));
    MTEST_CALL(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    MTEST_EQ("Iallreduce after errors", n * (n - 1) / 2, b[0]);
    MTEST_CALL(MPI_Allreduce(a, b, 1, MPI_INT, MPI_SUM, w));
    MTEST_EQ("Allreduce after errors", n * (n - 1) / 2, b[0]);
    return mtest_finalize();
}
