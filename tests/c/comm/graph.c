/* Graph and distributed-graph topologies: MPI_Graph_create (a ring over all processes,
 * and the standard's 4-node example), every graph query, Graph_map, traffic with the
 * neighbours; MPI_Dist_graph_create_adjacent and MPI_Dist_graph_create (weighted and
 * MPI_UNWEIGHTED) with their neighbour queries; and inconsistent arguments. */
#include "mtest.h"

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int rank = mtest_rank(), size = mtest_size();
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;

    /* a ring: node i has neighbours i-1 and i+1 (one neighbour twice when size <= 2) */
    int *index = mtest_malloc(sizeof(int) * (size_t)size);
    int *edges = mtest_malloc(sizeof(int) * 2 * (size_t)size);
    for (int i = 0; i < size; i++) {
        index[i] = 2 * (i + 1);
        edges[2 * i] = (i + size - 1) % size;
        edges[2 * i + 1] = (i + 1) % size;
    }
    MPI_Comm ring;
    MTEST_CALL(MPI_Graph_create(MPI_COMM_WORLD, size, index, edges, 0, &ring));
    int status = -1, nn = -1, ne = -1, cnt = -1;
    MTEST_CALL(MPI_Topo_test(ring, &status));
    MTEST_EQ("Topo_test of a graph", MPI_GRAPH, status);
    MTEST_CALL(MPI_Graphdims_get(ring, &nn, &ne));
    MTEST_EQ("Graphdims_get nnodes", size, nn);
    MTEST_EQ("Graphdims_get nedges", 2 * size, ne);
    int *gi = mtest_malloc(sizeof(int) * (size_t)size), *ge = mtest_malloc(sizeof(int) * 2 * (size_t)size);
    MTEST_CALL(MPI_Graph_get(ring, size, 2 * size, gi, ge));
    for (int i = 0; i < size; i++) {
        if (gi[i] != index[i] || ge[2 * i] != edges[2 * i] || ge[2 * i + 1] != edges[2 * i + 1]) {
            MTEST_CHECK(0, "Graph_get differs at node %d", i);
        }
    }
    MTEST_CALL(MPI_Graph_neighbors_count(ring, rank, &cnt));
    MTEST_EQ("Graph_neighbors_count", 2, cnt);
    int nb[2] = {-1, -1};
    MTEST_CALL(MPI_Graph_neighbors(ring, rank, 2, nb));
    MTEST_EQ("first neighbour", prev, nb[0]);
    MTEST_EQ("second neighbour", next, nb[1]);
    /* traffic with the neighbours */
    {
        int got[2] = {-1, -1};
        MPI_Request rq[4];
        MTEST_CALL(MPI_Irecv(&got[0], 1, MPI_INT, nb[0], 1, ring, &rq[0]));
        MTEST_CALL(MPI_Irecv(&got[1], 1, MPI_INT, nb[1], 2, ring, &rq[1]));
        MTEST_CALL(MPI_Isend(&rank, 1, MPI_INT, nb[1], 1, ring, &rq[2]));
        MTEST_CALL(MPI_Isend(&rank, 1, MPI_INT, nb[0], 2, ring, &rq[3]));
        MTEST_CALL(MPI_Waitall(4, rq, MPI_STATUSES_IGNORE));
        MTEST_EQ("from the previous node", prev, got[0]);
        MTEST_EQ("from the next node", next, got[1]);
    }
    int nr = -1;
    MTEST_CALL(MPI_Graph_map(MPI_COMM_WORLD, size, index, edges, &nr));
    MTEST_EQ("Graph_map", rank, nr);

    /* the standard's example: 4 nodes, index 2 3 4 6, edges 1 3 0 3 0 2 */
    if (size >= 4) {
        int ix[4] = {2, 3, 4, 6}, ed[6] = {1, 3, 0, 3, 0, 2};
        int expect_cnt[4] = {2, 1, 1, 2};
        MPI_Comm g4;
        MTEST_CALL(MPI_Graph_create(MPI_COMM_WORLD, 4, ix, ed, 1, &g4));
        if (rank < 4) {
            MTEST_CALL(MPI_Graph_neighbors_count(g4, 3, &cnt));
            MTEST_EQ("example: neighbours of node 3", 2, cnt);
            int n3[2];
            MTEST_CALL(MPI_Graph_neighbors(g4, 3, 2, n3));
            MTEST_CHECK(n3[0] == 0 && n3[1] == 2, "example: node 3 neighbours %d %d", n3[0], n3[1]);
            MTEST_CALL(MPI_Graph_neighbors_count(g4, rank, &cnt));
            MTEST_EQ("example: own neighbour count", expect_cnt[rank], cnt);
            MTEST_EXPECT_CLASS(MPI_ERR_RANK, MPI_Graph_neighbors_count(g4, 4, &cnt));
            MTEST_CALL(MPI_Comm_free(&g4));
        } else {
            MTEST_CHECK(g4 == MPI_COMM_NULL, "rank %d is outside a 4-node graph but got a communicator", rank);
        }
        MTEST_CALL(MPI_Graph_map(MPI_COMM_WORLD, 4, ix, ed, &nr));
        MTEST_EQ("Graph_map of the example", rank < 4 ? rank : MPI_UNDEFINED, nr);
    }

    /* distributed graph, adjacent form: in from prev (weight prev), out to next */
    MPI_Comm dg;
    int sw = prev + 10, dw = rank + 10;
    MTEST_CALL(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &prev, &sw, 1, &next, &dw, MPI_INFO_NULL, 0, &dg));
    MTEST_CALL(MPI_Topo_test(dg, &status));
    MTEST_EQ("Topo_test of a distributed graph", MPI_DIST_GRAPH, status);
    int indeg = -1, outdeg = -1, weighted = -1;
    MTEST_CALL(MPI_Dist_graph_neighbors_count(dg, &indeg, &outdeg, &weighted));
    MTEST_EQ("adjacent indegree", 1, indeg);
    MTEST_EQ("adjacent outdegree", 1, outdeg);
    MTEST_EQ("adjacent weighted", 1, weighted);
    int s1 = -1, s1w = -1, d1 = -1, d1w = -1;
    MTEST_CALL(MPI_Dist_graph_neighbors(dg, 1, &s1, &s1w, 1, &d1, &d1w));
    MTEST_EQ("adjacent source", prev, s1);
    MTEST_EQ("adjacent source weight", prev + 10, s1w);
    MTEST_EQ("adjacent destination", next, d1);
    MTEST_EQ("adjacent destination weight", rank + 10, d1w);
    {
        int got = -1;
        MTEST_CALL(MPI_Sendrecv(&rank, 1, MPI_INT, d1, 3, &got, 1, MPI_INT, s1, 3, dg, MPI_STATUS_IGNORE));
        MTEST_EQ("traffic along the distributed graph", prev, got);
    }
    MTEST_CALL(MPI_Comm_free(&dg));

    /* distributed graph, general form: rank 0 names every edge i -> i+1 (weight 100+i) */
    int n = rank == 0 ? size : 0;
    int *srcs = mtest_malloc(sizeof(int) * (size_t)size), *degs = mtest_malloc(sizeof(int) * (size_t)size);
    int *dsts = mtest_malloc(sizeof(int) * (size_t)size), *wts = mtest_malloc(sizeof(int) * (size_t)size);
    for (int i = 0; i < size; i++) {
        srcs[i] = i;
        degs[i] = 1;
        dsts[i] = (i + 1) % size;
        wts[i] = 100 + i;
    }
    MTEST_CALL(MPI_Dist_graph_create(MPI_COMM_WORLD, n, srcs, degs, dsts, wts, MPI_INFO_NULL, 0, &dg));
    MTEST_CALL(MPI_Dist_graph_neighbors_count(dg, &indeg, &outdeg, &weighted));
    MTEST_EQ("general indegree", 1, indeg);
    MTEST_EQ("general outdegree", 1, outdeg);
    MTEST_EQ("general weighted", 1, weighted);
    MTEST_CALL(MPI_Dist_graph_neighbors(dg, 1, &s1, &s1w, 1, &d1, &d1w));
    MTEST_EQ("general source", prev, s1);
    MTEST_EQ("general source weight", 100 + prev, s1w);
    MTEST_EQ("general destination", next, d1);
    MTEST_EQ("general destination weight", 100 + rank, d1w);
    MTEST_CALL(MPI_Comm_free(&dg));

    /* general form, every process names its own out-edge, unweighted */
    MTEST_CALL(MPI_Dist_graph_create(MPI_COMM_WORLD, 1, &rank, (int[]){1}, &next, MPI_UNWEIGHTED, MPI_INFO_NULL, 0,
                                     &dg));
    MTEST_CALL(MPI_Dist_graph_neighbors_count(dg, &indeg, &outdeg, &weighted));
    MTEST_EQ("unweighted indegree", 1, indeg);
    MTEST_EQ("unweighted outdegree", 1, outdeg);
    MTEST_EQ("unweighted flag", 0, weighted);
    MTEST_CALL(MPI_Dist_graph_neighbors(dg, 1, &s1, MPI_UNWEIGHTED, 1, &d1, MPI_UNWEIGHTED));
    MTEST_EQ("unweighted source", prev, s1);
    MTEST_EQ("unweighted destination", next, d1);
    MTEST_CALL(MPI_Comm_free(&dg));

    /* no edges at all */
    MTEST_CALL(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 0, NULL, MPI_WEIGHTS_EMPTY, 0, NULL, MPI_WEIGHTS_EMPTY,
                                              MPI_INFO_NULL, 0, &dg));
    MTEST_CALL(MPI_Dist_graph_neighbors_count(dg, &indeg, &outdeg, &weighted));
    MTEST_EQ("empty indegree", 0, indeg);
    MTEST_EQ("empty outdegree", 0, outdeg);
    MTEST_CALL(MPI_Comm_free(&dg));

    /* bad arguments */
    MPI_Comm bad;
    int bad_edges[2] = {0, size + 1000};
    int idx2[1] = {2};
    MTEST_EXPECT_CLASS(MPI_ERR_ARG, MPI_Graph_create(MPI_COMM_WORLD, 1, idx2, bad_edges, 0, &bad));
    if (size >= 2) {
        int dec[2] = {2, 1}, e2[2] = {1, 0};
        MTEST_EXPECT_CLASS(MPI_ERR_ARG, MPI_Graph_create(MPI_COMM_WORLD, 2, dec, e2, 0, &bad));
    }
    MTEST_EXPECT_CLASS(MPI_ERR_TOPOLOGY, MPI_Graphdims_get(MPI_COMM_WORLD, &nn, &ne));
    MTEST_EXPECT_CLASS(MPI_ERR_TOPOLOGY, MPI_Graph_neighbors_count(MPI_COMM_WORLD, 0, &cnt));
    MTEST_EXPECT_CLASS(MPI_ERR_TOPOLOGY, MPI_Dist_graph_neighbors_count(ring, &indeg, &outdeg, &weighted));
    MTEST_EXPECT_CLASS(MPI_ERR_RANK, MPI_Graph_neighbors(ring, size, 2, nb));

    MTEST_CALL(MPI_Comm_free(&ring));
    free(index);
    free(edges);
    free(gi);
    free(ge);
    free(srcs);
    free(degs);
    free(dsts);
    free(wts);
    return mtest_finalize();
}
