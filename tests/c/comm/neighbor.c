/* Neighbourhood collectives (MPI 4.1 section 8.6): MPI_Neighbor_allgather(v) and
 * MPI_Neighbor_alltoall(v,w) (checks in neighbor_util.h) on
 *   - 2-D Cartesian grids from MPI_Dims_create, open and periodic in the dimensions of
 *     extent 3 or more; 1-D open lines and rings of 3 or more: block order per
 *     dimension -1 then +1 neighbour, MPI_PROC_NULL blocks untouched (periodic
 *     dimensions of extent 1 or 2, where MPICH 4.0.2 delivers the wrong blocks, are in
 *     neighbor_strict.c);
 *   - a graph (ring plus opposite node plus a self loop at node 0, each neighbour once;
 *     repeated edges are in neighbor_strict.c) in MPI_Graph_neighbors order;
 *   - distributed graphs with asymmetric adjacency (in-neighbours differ from
 *     out-neighbours, zero degrees, self loops), made with
 *     MPI_Dist_graph_create_adjacent and MPI_Dist_graph_create (MPI_Neighbor_alltoallw on
 *     them, which MPICH 4.0.2 gets wrong, is in neighbor_strict.c);
 * with contiguous and derived datatypes, and the argument errors (no topology, null
 * communicator, negative counts, null and uncommitted datatypes); the communicator
 * keeps working after them. */
#include "mtest.h"
#include "neighbor_util.h"

static void cart_tests(int size)
{
    int dims[2] = {0, 0};
    MTEST_CALL(MPI_Dims_create(size, 2, dims));
    int open[2] = {0, 0}, wide[2] = {dims[0] >= 3, dims[1] >= 3};
    MPI_Comm cart;
    MTEST_CALL(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, open, 0, &cart));
    run_all(cart, "open grid");
    MTEST_CALL(MPI_Comm_free(&cart));
    MTEST_CALL(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, wide, 0, &cart));
    run_all(cart, "grid periodic where extent >= 3");
    MTEST_CALL(MPI_Comm_free(&cart));

    int line[1] = {size}, per[1] = {0};
    MTEST_CALL(MPI_Cart_create(MPI_COMM_WORLD, 1, line, per, 0, &cart));
    run_all(cart, "line");
    MTEST_CALL(MPI_Comm_free(&cart));
    if (size >= 3) {
        per[0] = 1;
        MTEST_CALL(MPI_Cart_create(MPI_COMM_WORLD, 1, line, per, 0, &cart));
        run_all(cart, "ring");
        MTEST_CALL(MPI_Comm_free(&cart));
    }
}

static void error_tests(int size)
{
    int s[8] = {0}, r[64], cnts[MAXN], displs[MAXN];
    MPI_Aint ad[MAXN];
    MPI_Datatype ty[MAXN];
    for (int i = 0; i < MAXN; i++) {
        cnts[i] = 1;
        displs[i] = i;
        ad[i] = (MPI_Aint)(sizeof(int) * (size_t)i);
        ty[i] = MPI_INT;
    }
    MTEST_EXPECT_CLASS(MPI_ERR_COMM,
                       MPI_Neighbor_alltoall(s, 1, MPI_INT, r, 1, MPI_INT, MPI_COMM_NULL));

    int dims[1] = {size}, per[1] = {0};
    MPI_Comm line;
    MTEST_CALL(MPI_Cart_create(MPI_COMM_WORLD, 1, dims, per, 0, &line));
    MTEST_EXPECT_CLASS(MPI_ERR_COUNT, MPI_Neighbor_allgather(s, -1, MPI_INT, r, 1, MPI_INT, line));
    MTEST_EXPECT_CLASS(MPI_ERR_COUNT, MPI_Neighbor_alltoall(s, 1, MPI_INT, r, -2, MPI_INT, line));
    cnts[1] = -1;
    MTEST_EXPECT_CLASS(MPI_ERR_COUNT,
                       MPI_Neighbor_allgatherv(s, 1, MPI_INT, r, cnts, displs, MPI_INT, line));
    MTEST_EXPECT_CLASS(MPI_ERR_COUNT, MPI_Neighbor_alltoallv(s, cnts, displs, MPI_INT, r, cnts,
                                                             displs, MPI_INT, line));
    MTEST_EXPECT_CLASS(MPI_ERR_COUNT,
                       MPI_Neighbor_alltoallw(s, cnts, ad, ty, r, cnts, ad, ty, line));
    cnts[1] = 1;
    MTEST_EXPECT_CLASS(MPI_ERR_TYPE,
                       MPI_Neighbor_allgather(s, 1, MPI_DATATYPE_NULL, r, 1, MPI_INT, line));
    ty[1] = MPI_DATATYPE_NULL;
    MTEST_EXPECT_CLASS(MPI_ERR_TYPE, MPI_Neighbor_alltoallw(s, cnts, ad, ty, r, cnts, ad, ty, line));
    ty[1] = MPI_INT;
    MPI_Datatype unc;
    MTEST_CALL(MPI_Type_contiguous(2, MPI_INT, &unc));
    MTEST_EXPECT_CLASS(MPI_ERR_TYPE, MPI_Neighbor_alltoall(s, 1, unc, r, 1, unc, line));
    MTEST_CALL(MPI_Type_free(&unc));
    /* the communicator still works after the failed calls */
    int me = mtest_rank(), got[2] = {SENT, SENT};
    MTEST_CALL(MPI_Neighbor_allgather(&me, 1, MPI_INT, got, 1, MPI_INT, line));
    MTEST_EQ("line: from the -1 neighbour", me > 0 ? me - 1 : SENT, got[0]);
    MTEST_EQ("line: from the +1 neighbour", me < size - 1 ? me + 1 : SENT, got[1]);
    MTEST_CALL(MPI_Comm_free(&line));
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int rank = mtest_rank(), size = mtest_size();
    if (size > 16) {
        return mtest_skip("at most 16 processes");
    }
    cart_tests(size);
    graph_tests(size, 0);
    skip_alltoallw = 1; /* see neighbor_strict.c */
    dist_graph_tests(size, rank, 0);
    skip_alltoallw = 0;
    error_tests(size);
    return mtest_finalize();
}
