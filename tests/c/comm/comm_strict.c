/*
 * oxmpi-strict checks for communicators and groups (listed apart in the manifest;
 * expected to fail on MPICH).  Observed with MPICH 4.0.2:
 *   MPI_Intercomm_merge on an intracommunicator        assertion failure (abort)
 *   MPI_Comm_remote_size on an intracommunicator      MPI_SUCCESS
 *   MPI_Group_incl / MPI_Group_excl repeating a rank  MPI_SUCCESS
 *   MPI_Comm_create_group with a group that is not    segmentation fault
 *     part of the communicator
 *   MPI_Comm_split with a negative colour              MPI_SUCCESS
 *   MPI_Cart_create with a zero extent                 MPI_SUCCESS
 *   MPI_Graph_create with an edge to node nnodes      MPI_SUCCESS
 *     (one past the last node)
 *   MPI_Cart_sub keeping no dimension                  MPI_COMM_NULL except at one
 *                                                       process (each should get a
 *                                                       zero-dimensional grid of itself)
 * Every error case returns the right class under MPI_ERRORS_RETURN and the program
 * goes on communicating.
 */
#include "mtest.h"

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int rank = mtest_rank(), size = mtest_size();
    int n, res;
    MPI_Comm c;
    MPI_Group world, g;
    MTEST_CALL(MPI_Comm_group(MPI_COMM_WORLD, &world));

    MTEST_EXPECT_CLASS(MPI_ERR_COMM, MPI_Comm_remote_size(MPI_COMM_WORLD, &n));
    MTEST_EXPECT_CLASS(MPI_ERR_COMM, MPI_Comm_remote_group(MPI_COMM_WORLD, &g));
    int twice[2] = {0, 0};
    MTEST_EXPECT_CLASS(MPI_ERR_RANK, MPI_Group_incl(world, 2, twice, &g));
    MTEST_EXPECT_CLASS(MPI_ERR_RANK, MPI_Group_excl(world, 2, twice, &g));

    /* A negative colour is an error at that process; the others still get their
     * communicator (the bad process takes part as MPI_UNDEFINED). */
    int rc = MPI_Comm_split(MPI_COMM_WORLD, rank == 0 ? -3 : 1, 0, &c);
    if (rank == 0) {
        MTEST_EQ("MPI_Comm_split with colour -3: class", MPI_ERR_ARG, mtest_errclass(rc));
    } else {
        MTEST_CALL(rc);
        MTEST_CALL(MPI_Comm_size(c, &n));
        MTEST_EQ("size without the bad process", size - 1, n);
        MTEST_CALL(MPI_Comm_free(&c));
    }

    {
        int idx[1] = {2}, edges[2] = {0, 1};
        MTEST_EXPECT_CLASS(MPI_ERR_ARG, MPI_Graph_create(MPI_COMM_WORLD, 1, idx, edges, 0, &c));
    }

    int dims[2] = {size, 0}, periods[2] = {0, 0};
    MTEST_EXPECT_CLASS(MPI_ERR_DIMS, MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &c));

    {
        int d[2] = {0, 0}, p[2] = {0, 1}, none[2] = {0, 0}, nd = -1;
        MPI_Comm grid, point;
        MTEST_CALL(MPI_Dims_create(size, 2, d));
        MTEST_CALL(MPI_Cart_create(MPI_COMM_WORLD, 2, d, p, 0, &grid));
        MTEST_CALL(MPI_Cart_sub(grid, none, &point));
        MTEST_CHECK(point != MPI_COMM_NULL, "MPI_Cart_sub keeping nothing gave MPI_COMM_NULL");
        if (point != MPI_COMM_NULL) {
            MTEST_CALL(MPI_Comm_size(point, &n));
            MTEST_EQ("Cart_sub keeping nothing: size", 1, n);
            MTEST_CALL(MPI_Cartdim_get(point, &nd));
            MTEST_EQ("Cart_sub keeping nothing: dimensions", 0, nd);
            MTEST_CALL(MPI_Comm_free(&point));
        }
        MTEST_CALL(MPI_Comm_free(&grid));
    }

    if (size >= 2) {
        /* create_group with a process outside the communicator */
        MPI_Comm half;
        MTEST_CALL(MPI_Comm_split(MPI_COMM_WORLD, rank == 0, rank, &half));
        MTEST_EXPECT_CLASS(MPI_ERR_GROUP, MPI_Comm_create_group(half, world, 1, &c));
        MTEST_CALL(MPI_Comm_free(&half));

        /* compare on intercommunicators */
        int h = size / 2, low = rank < h;
        MPI_Comm local, ic, icd, other, m;
        MTEST_CALL(MPI_Comm_split(MPI_COMM_WORLD, low, rank, &local));
        MTEST_CALL(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, low ? h : 0, 5, &ic));
        MTEST_CALL(MPI_Comm_dup(ic, &icd));
        MTEST_EXPECT_CLASS(MPI_ERR_COMM, MPI_Intercomm_merge(local, 0, &m));
        MTEST_CALL(MPI_Comm_compare(ic, icd, &res));
        MTEST_EQ("compare(intercomm, its dup)", MPI_CONGRUENT, res);
        MTEST_CALL(MPI_Comm_compare(ic, ic, &res));
        MTEST_EQ("compare(intercomm, itself)", MPI_IDENT, res);
        MTEST_CALL(MPI_Comm_compare(ic, local, &res));
        MTEST_EQ("compare(intercomm, intracomm)", MPI_UNEQUAL, res);
        /* the same groups with the local one reordered: SIMILAR */
        MPI_Comm rlocal;
        MTEST_CALL(MPI_Comm_split(local, 0, -rank, &rlocal));
        int lsize;
        MTEST_CALL(MPI_Comm_size(local, &lsize));
        MTEST_CALL(MPI_Intercomm_create(rlocal, lsize - 1, MPI_COMM_WORLD, low ? h : 0, 6, &other));
        MTEST_CALL(MPI_Comm_compare(ic, other, &res));
        MTEST_EQ("compare(intercomm, reordered intercomm)", lsize > 1 || size - h > 1 ? MPI_SIMILAR : MPI_CONGRUENT,
                 res);
        MTEST_CALL(MPI_Comm_free(&other));
        MTEST_CALL(MPI_Comm_free(&rlocal));
        MTEST_CALL(MPI_Intercomm_merge(ic, !low, &m));
        MTEST_CALL(MPI_Comm_size(m, &n));
        MTEST_EQ("merge after compare", size, n);
        MTEST_CALL(MPI_Comm_free(&m));
        MTEST_CALL(MPI_Comm_free(&icd));
        MTEST_CALL(MPI_Comm_free(&ic));
        MTEST_CALL(MPI_Comm_free(&local));
    }
    MTEST_CALL(MPI_Group_free(&world));
    return mtest_finalize();
}
