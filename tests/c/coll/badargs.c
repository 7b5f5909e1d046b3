/*
 * Erroneous collective calls under MPI_ERRORS_RETURN: each returns the right error class
 * (every rank makes the same bad call, so none is left waiting), and the communicator
 * stays usable afterwards.
 */
#include "mtest.h"
#include "common.h"

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int r = mtest_rank(), n = mtest_size();
    MPI_Comm w = MPI_COMM_WORLD;
    int a[8] = {1, 2, 3, 4, 5, 6, 7, 8}, b[64];
    double x[2] = {1, 2}, y[2];

    MTEST_EXPECT_CLASS(MPI_ERR_ROOT, MPI_Bcast(a, 1, MPI_INT, n, w));
    MTEST_EXPECT_CLASS(MPI_ERR_ROOT, MPI_Bcast(a, 1, MPI_INT, -1, w));
    MTEST_EXPECT_CLASS(MPI_ERR_ROOT, MPI_Reduce(a, b, 1, MPI_INT, MPI_SUM, n + 3, w));
    MTEST_EXPECT_CLASS(MPI_ERR_ROOT, MPI_Gather(a, 1, MPI_INT, b, 1, MPI_INT, n, w));
    MTEST_EXPECT_CLASS(MPI_ERR_ROOT, MPI_Scatter(a, 1, MPI_INT, b, 1, MPI_INT, -5, w));

    MTEST_EXPECT_CLASS(MPI_ERR_OP, MPI_Allreduce(a, b, 1, MPI_INT, MPI_OP_NULL, w));
    MTEST_EXPECT_CLASS(MPI_ERR_OP, MPI_Allreduce(x, y, 2, MPI_DOUBLE, MPI_BAND, w));
    MTEST_EXPECT_CLASS(MPI_ERR_OP, MPI_Allreduce(a, b, 2, MPI_INT, MPI_MAXLOC, w));
    MTEST_EXPECT_CLASS(MPI_ERR_OP, MPI_Scan(x, y, 2, MPI_DOUBLE, MPI_BOR, w));
    MTEST_EXPECT_CLASS(MPI_ERR_OP, MPI_Reduce_local(x, y, 2, MPI_DOUBLE, MPI_BXOR));
    MTEST_EXPECT_CLASS(MPI_ERR_OP, MPI_Reduce_local(a, b, 2, MPI_INT, MPI_OP_NULL));

    MTEST_EXPECT_CLASS(MPI_ERR_COUNT, MPI_Bcast(a, -1, MPI_INT, 0, w));
    MTEST_EXPECT_CLASS(MPI_ERR_COUNT, MPI_Allgather(a, -1, MPI_INT, b, -1, MPI_INT, w));

    MTEST_EXPECT_CLASS2(MPI_ERR_TYPE, MPI_ERR_OP, MPI_Allreduce(a, b, 1, MPI_DATATYPE_NULL, MPI_SUM, w));
    MTEST_EXPECT_CLASS(MPI_ERR_TYPE, MPI_Bcast(a, 1, MPI_DATATYPE_NULL, 0, w));
    MPI_Datatype unc;
    MTEST_CALL(MPI_Type_contiguous(2, MPI_INT, &unc));
    MTEST_EXPECT_CLASS(MPI_ERR_TYPE, MPI_Bcast(a, 1, unc, 0, w));
    MTEST_CALL(MPI_Type_free(&unc));

    MTEST_EXPECT_CLASS(MPI_ERR_COMM, MPI_Barrier(MPI_COMM_NULL));
    MTEST_EXPECT_CLASS(MPI_ERR_COMM, MPI_Allreduce(a, b, 1, MPI_INT, MPI_SUM, MPI_COMM_NULL));

    /* The same buffer as send and receive buffer without MPI_IN_PLACE. */
    MTEST_EXPECT_CLASS(MPI_ERR_BUFFER, MPI_Allreduce(a, a, 2, MPI_INT, MPI_SUM, w));

    /* Freeing predefined or null operations. */
    MPI_Op op = MPI_SUM;
    MTEST_EXPECT_CLASS(MPI_ERR_OP, MPI_Op_free(&op));
    op = MPI_OP_NULL;
    MTEST_EXPECT_CLASS(MPI_ERR_OP, MPI_Op_free(&op));
    int commute;
    MTEST_EXPECT_CLASS(MPI_ERR_OP, MPI_Op_commutative(MPI_OP_NULL, &commute));

    /* Still usable. */
    int s = r + 1, t = 0;
    MTEST_CALL(MPI_Allreduce(&s, &t, 1, MPI_INT, MPI_SUM, w));
    MTEST_EQ("allreduce after the errors", n * (n + 1) / 2, t);
    MTEST_CALL(MPI_Barrier(w));
    return mtest_finalize();
}
