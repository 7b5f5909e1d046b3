/*
 * MPI_Cart_map: the rank a process would have in a Cartesian grid, MPI_UNDEFINED where
 * the grid has no place for it. A zero extent makes a grid of no processes, so every
 * caller gets MPI_UNDEFINED (rsmpi's cartesian_map example at 2 and 3 ranks passes such a
 * grid); a negative extent is MPI_ERR_DIMS, a grid larger than the group MPI_ERR_ARG.
 * Observed elsewhere:
 *   Open MPI 4.1.4: every call returns the caller's own rank, even outside the grid
 *   MPICH 4.0.2:    a negative extent gives MPI_UNDEFINED and MPI_SUCCESS
 */
#include "mtest.h"

static void expect_map(const char *what, int ndims, const int *dims, int want)
{
    int periods[4] = {1, 0, 1, 0}, got = -77;
    int rc = MPI_Cart_map(MPI_COMM_WORLD, ndims, dims, periods, &got);
    MTEST_CHECK(rc == MPI_SUCCESS, "MPI_Cart_map %s failed: %s", what, mtest_errstr(rc));
    MTEST_CHECK(got == want, "MPI_Cart_map %s: newrank %d, expected %d%s", what, got, want,
                want == MPI_UNDEFINED ? " (MPI_UNDEFINED)" : "");
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int rank = mtest_rank(), size = mtest_size();

    int zero[1] = {0};
    expect_map("dims {0}", 1, zero, MPI_UNDEFINED);
    int two_zero[2] = {2, 0};
    expect_map("dims {2, 0}", 2, two_zero, MPI_UNDEFINED);
    int zero_size[2] = {0, size};
    expect_map("dims {0, size}", 2, zero_size, MPI_UNDEFINED);
    int huge_zero[3] = {65536, 65536, 0};
    expect_map("dims {65536, 65536, 0}", 3, huge_zero, MPI_UNDEFINED);

    int all[1] = {size};
    expect_map("dims {size}", 1, all, rank);
    int fewer[2] = {1, size > 1 ? size - 1 : 1};
    expect_map("dims {1, size - 1}", 2, fewer, rank < fewer[1] ? rank : MPI_UNDEFINED);

    int got = -77;
    int periods[2] = {0, 0};
    int negative[2] = {0, -1};
    MTEST_EXPECT_CLASS(MPI_ERR_DIMS, MPI_Cart_map(MPI_COMM_WORLD, 2, negative, periods, &got));
    int too_big[1] = {size + 1};
    MTEST_EXPECT_CLASS2(MPI_ERR_ARG, MPI_ERR_DIMS, MPI_Cart_map(MPI_COMM_WORLD, 1, too_big, periods, &got));

    /* The communicator still works. */
    int token = rank, sum = -1;
    MTEST_CALL(MPI_Allreduce(&token, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    MTEST_EQ("allreduce after MPI_Cart_map", size * (size - 1) / 2, sum);
    return mtest_finalize();
}
