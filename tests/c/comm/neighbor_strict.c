/*
 * oxmpi-strict checks for the neighbourhood collectives (listed apart in the manifest;
 * expected to fail on MPICH).  Observed with MPICH 4.0.2:
 *   MPI_Neighbor_alltoall(v,w) on a Cartesian grid   the blocks of the -1 and +1
 *     with a periodic dimension of extent 1 or 2       neighbours arrive swapped (MPI 4.1
 *                                                       section 8.6, erratum from MPI Forum
 *                                                       issue 153: block s of the sender
 *                                                       lands in block s^1)
 *   MPI_Neighbor_alltoall(v,w) on a graph or          the blocks of a neighbour that
 *     distributed graph with repeated edges            appears several times arrive in
 *                                                       reverse order (MPI 4.1 section 8.6:
 *                                                       the k-th message to a process fills
 *                                                       its k-th block naming the sender)
 *   MPI_Neighbor_alltoallw on a distributed graph     blocks left empty, others written
 *     whose in- and out-neighbours differ              outside their types (hangs at 8)
 *   MPI_Neighbor_alltoall with MPI_IN_PLACE           segmentation fault (Open MPI 4.1.4:
 *                                                       MPI_ERR_ARG; oxmpi: MPI_ERR_BUFFER)
 *   the calls on a communicator without topology      MPI_ERR_COUNT / MPI_ERR_TYPE from
 *                                                       reading arrays sized by no topology
 *                                                       (Open MPI 4.1.4: MPI_ERR_INTERN /
 *                                                       MPI_ERR_COMM), not MPI_ERR_TOPOLOGY
 * Grids: fully periodic 2-D grids from MPI_Dims_create (extent 2 in some dimension at 4,
 * 6 and 8 processes, extent 1 at 1 and 2), a periodic 3-D grid {1, 1, size} (two
 * dimensions of extent 1 where each process is its own neighbour twice), and a 2-process
 * ring; the graph and distributed graph of neighbor.c with their repeated edges kept.
 * All five calls, checks in neighbor_util.h.
 */
#include "mtest.h"
#include "neighbor_util.h"

static void no_topology(void)
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
    MPI_Comm w = MPI_COMM_WORLD;
    MTEST_EXPECT_CLASS(MPI_ERR_TOPOLOGY, MPI_Neighbor_allgather(s, 1, MPI_INT, r, 1, MPI_INT, w));
    MTEST_EXPECT_CLASS(MPI_ERR_TOPOLOGY,
                       MPI_Neighbor_allgatherv(s, 1, MPI_INT, r, cnts, displs, MPI_INT, w));
    MTEST_EXPECT_CLASS(MPI_ERR_TOPOLOGY, MPI_Neighbor_alltoall(s, 1, MPI_INT, r, 1, MPI_INT, w));
    MTEST_EXPECT_CLASS(MPI_ERR_TOPOLOGY, MPI_Neighbor_alltoallv(s, cnts, displs, MPI_INT, r, cnts,
                                                                displs, MPI_INT, w));
    MTEST_EXPECT_CLASS(MPI_ERR_TOPOLOGY,
                       MPI_Neighbor_alltoallw(s, cnts, ad, ty, r, cnts, ad, ty, w));
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int size = mtest_size();
    if (size > 16) {
        return mtest_skip("at most 16 processes");
    }
    int dims[2] = {0, 0}, per[3] = {1, 1, 1};
    MPI_Comm c;
    MTEST_CALL(MPI_Dims_create(size, 2, dims));
    MTEST_CALL(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, per, 0, &c));
    run_all(c, "periodic grid");
    MTEST_CALL(MPI_Comm_free(&c));

    int d3[3] = {1, 1, size};
    MTEST_CALL(MPI_Cart_create(MPI_COMM_WORLD, 3, d3, per, 0, &c));
    run_all(c, "periodic 1 x 1 x size grid");
    MTEST_CALL(MPI_Comm_free(&c));

    if (size >= 2) {
        int two[1] = {2};
        MTEST_CALL(MPI_Cart_create(MPI_COMM_WORLD, 1, two, per, 0, &c));
        if (c != MPI_COMM_NULL) {
            run_all(c, "ring of 2");
            int r[2];
            MTEST_EXPECT_CLASS2(MPI_ERR_BUFFER, MPI_ERR_ARG,
                                MPI_Neighbor_alltoall(MPI_IN_PLACE, 1, MPI_INT, r, 1, MPI_INT, c));
            MTEST_CALL(MPI_Comm_free(&c));
        }
    }
    graph_tests(size, 1);
    dist_graph_tests(size, mtest_rank(), 1);
    no_topology();
    return mtest_finalize();
}
