/*
 * Nonblocking and persistent neighbourhood collectives on the three topologies: a
 * periodic ring (Cartesian, 1-D), a non-periodic 2-D grid (MPI_PROC_NULL neighbours
 * leave their blocks alone), a graph (each rank linked to its two ring neighbours) and
 * a distributed graph (rank i sends to i+1 and i+2); MPI_Ineighbor_allgather(v),
 * MPI_Ineighbor_alltoall(v,w), outstanding together, and MPI_Neighbor_alltoall_init
 * restarted.
 */
#include "mtest.h"

/* Whether the n entries of v are distinct (MPICH 4.0.2's MPI_Ineighbor_alltoallv/w
 * order the blocks of a neighbour that appears twice differently from its blocking
 * calls, so those blocks are compared only without repeated neighbours). */
static int distinct(const int *v, int n)
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j < i; j++)
            if (v[i] == v[j] && v[i] != MPI_PROC_NULL) return 0;
    return 1;
}

static void run(MPI_Comm c, const char *what)
{
    int r;
    MTEST_CALL(MPI_Comm_rank(c, &r));
    int indeg, outdeg, weighted, topo;
    MTEST_CALL(MPI_Topo_test(c, &topo));
    if (topo == MPI_DIST_GRAPH) {
        MTEST_CALL(MPI_Dist_graph_neighbors_count(c, &indeg, &outdeg, &weighted));
    } else if (topo == MPI_GRAPH) {
        MTEST_CALL(MPI_Graph_neighbors_count(c, r, &indeg));
        outdeg = indeg;
    } else {
        int nd;
        MTEST_CALL(MPI_Cartdim_get(c, &nd));
        indeg = outdeg = 2 * nd;
    }
    int *src = mtest_malloc(sizeof(int) * (indeg + 1)), *dst = mtest_malloc(sizeof(int) * (outdeg + 1));
    if (topo == MPI_DIST_GRAPH) {
        MTEST_CALL(MPI_Dist_graph_neighbors(c, indeg, src, MPI_UNWEIGHTED, outdeg, dst,
                                            MPI_UNWEIGHTED));
    } else if (topo == MPI_GRAPH) {
        MTEST_CALL(MPI_Graph_neighbors(c, r, indeg, src));
        for (int i = 0; i < indeg; i++) dst[i] = src[i];
    } else {
        int nd;
        MTEST_CALL(MPI_Cartdim_get(c, &nd));
        for (int d = 0; d < nd; d++) {
            MTEST_CALL(MPI_Cart_shift(c, d, 1, &src[2 * d], &src[2 * d + 1]));
            dst[2 * d] = src[2 * d];
            dst[2 * d + 1] = src[2 * d + 1];
        }
    }
    int *ag = mtest_malloc(sizeof(int) * (indeg + 1)), *agv = mtest_malloc(sizeof(int) * 2 * (indeg + 1));
    int *ata_s = mtest_malloc(sizeof(int) * (outdeg + 1)), *ata = mtest_malloc(sizeof(int) * (indeg + 1));
    int *atav = mtest_malloc(sizeof(int) * 2 * (indeg + 1)), *ataw = mtest_malloc(sizeof(int) * (indeg + 1));
    int *rc = mtest_malloc(sizeof(int) * (indeg + 1)), *rd = mtest_malloc(sizeof(int) * (indeg + 1));
    int *sc = mtest_malloc(sizeof(int) * (outdeg + 1)), *sd = mtest_malloc(sizeof(int) * (outdeg + 1));
    MPI_Aint *rbd = mtest_malloc(sizeof(MPI_Aint) * (indeg + 1)), *sbd = mtest_malloc(sizeof(MPI_Aint) * (outdeg + 1));
    MPI_Datatype *rt = mtest_malloc(sizeof(MPI_Datatype) * (indeg + 1)), *stp = mtest_malloc(sizeof(MPI_Datatype) * (outdeg + 1));
    for (int i = 0; i < indeg; i++) {
        ag[i] = ata[i] = ataw[i] = -1;
        atav[2 * i] = atav[2 * i + 1] = -1;
        agv[2 * i] = agv[2 * i + 1] = -1;
        rc[i] = 1;
        rd[i] = 2 * i;
        rbd[i] = (MPI_Aint)sizeof(int) * i;
        rt[i] = MPI_INT;
    }
    for (int i = 0; i < outdeg; i++) {
        ata_s[i] = 100 * r + i;
        sc[i] = 1;
        sd[i] = i;
        sbd[i] = (MPI_Aint)sizeof(int) * i;
        stp[i] = MPI_INT;
    }
    int me = 7 * r + 1;
    MPI_Request rq[5];
    MTEST_CALL(MPI_Ineighbor_allgather(&me, 1, MPI_INT, ag, 1, MPI_INT, c, &rq[0]));
    MTEST_CALL(MPI_Ineighbor_allgatherv(&me, 1, MPI_INT, agv, rc, rd, MPI_INT, c, &rq[1]));
    MTEST_CALL(MPI_Ineighbor_alltoall(ata_s, 1, MPI_INT, ata, 1, MPI_INT, c, &rq[2]));
    MTEST_CALL(MPI_Ineighbor_alltoallv(ata_s, sc, sd, MPI_INT, atav, rc, rd, MPI_INT, c, &rq[3]));
    MTEST_CALL(MPI_Ineighbor_alltoallw(ata_s, sc, sbd, stp, ataw, rc, rbd, rt, c, &rq[4]));
    MTEST_CALL(MPI_Waitall(5, rq, MPI_STATUSES_IGNORE));
    /* The blocking calls give the reference. */
    int *ref_ag = mtest_malloc(sizeof(int) * (indeg + 1)), *ref_ata = mtest_malloc(sizeof(int) * (indeg + 1));
    for (int i = 0; i < indeg; i++) ref_ag[i] = ref_ata[i] = -1;
    MTEST_CALL(MPI_Neighbor_allgather(&me, 1, MPI_INT, ref_ag, 1, MPI_INT, c));
    MTEST_CALL(MPI_Neighbor_alltoall(ata_s, 1, MPI_INT, ref_ata, 1, MPI_INT, c));
    for (int i = 0; i < indeg; i++) {
        int want = src[i] == MPI_PROC_NULL ? -1 : 7 * src[i] + 1;
        MTEST_CHECK(ag[i] == want, "%s: Ineighbor_allgather block %d = %d, expected %d", what, i, ag[i], want);
        MTEST_CHECK(ref_ag[i] == want, "%s: Neighbor_allgather block %d = %d, expected %d", what, i, ref_ag[i], want);
        MTEST_CHECK(agv[2 * i] == want, "%s: Ineighbor_allgatherv block %d = %d, expected %d", what, i, agv[2 * i], want);
        MTEST_CHECK(agv[2 * i + 1] == -1, "%s: Ineighbor_allgatherv wrote a gap", what);
        MTEST_CHECK(ata[i] == ref_ata[i], "%s: Ineighbor_alltoall block %d = %d, blocking gave %d", what, i, ata[i], ref_ata[i]);
        if (distinct(src, indeg))
            MTEST_CHECK(atav[2 * i] == ref_ata[i], "%s: Ineighbor_alltoallv block %d = %d, blocking gave %d", what, i, atav[2 * i], ref_ata[i]);
        if (distinct(src, indeg))
            MTEST_CHECK(ataw[i] == ref_ata[i], "%s: Ineighbor_alltoallw block %d = %d, blocking gave %d", what, i, ataw[i], ref_ata[i]);
    }
    /* Persistent: restarted with new data. */
    MPI_Request p;
    MTEST_CALL(MPI_Neighbor_alltoall_init(ata_s, 1, MPI_INT, ata, 1, MPI_INT, c, MPI_INFO_NULL, &p));
    for (int round = 0; round < 5; round++) {
        for (int i = 0; i < outdeg; i++) ata_s[i] = 100 * r + i + 1000 * round;
        MTEST_CALL(MPI_Start(&p));
        MTEST_CALL(MPI_Wait(&p, MPI_STATUS_IGNORE));
        for (int i = 0; i < indeg; i++) {
            int want = ref_ata[i] == -1 ? -1 : ref_ata[i] + 1000 * round;
            MTEST_CHECK(ata[i] == want, "%s: Neighbor_alltoall_init round %d block %d = %d, expected %d", what, round, i, ata[i], want);
        }
    }
    MTEST_CALL(MPI_Request_free(&p));
    free(src); free(dst); free(ag); free(agv); free(ata_s); free(ata); free(atav); free(ataw);
    free(rc); free(rd); free(sc); free(sd); free(rbd); free(sbd); free(rt); free(stp);
    free(ref_ag); free(ref_ata);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int r = mtest_rank(), n = mtest_size();
    MPI_Comm ring, grid, graph, dg;
    int dims[1] = {n}, periods[1] = {1};
    MTEST_CALL(MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &ring));
    run(ring, "periodic ring");
    int d2[2] = {0, 0}, p2[2] = {0, 0};
    MTEST_CALL(MPI_Dims_create(n, 2, d2));
    MTEST_CALL(MPI_Cart_create(MPI_COMM_WORLD, 2, d2, p2, 0, &grid));
    run(grid, "2-D grid");
    int *index = mtest_malloc(sizeof(int) * n), *edges = mtest_malloc(sizeof(int) * 2 * n);
    for (int i = 0; i < n; i++) {
        index[i] = 2 * (i + 1);
        edges[2 * i] = (i + 1) % n;
        edges[2 * i + 1] = (i + n - 1) % n;
    }
    MTEST_CALL(MPI_Graph_create(MPI_COMM_WORLD, n, index, edges, 0, &graph));
    run(graph, "graph");
    int dsts[2] = {(r + 1) % n, (r + 2) % n}, srcs[2] = {(r + n - 1) % n, (r + n - 2) % n};
    MTEST_CALL(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, srcs, MPI_UNWEIGHTED, 2, dsts,
                                              MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &dg));
    run(dg, "distributed graph");
    free(index);
    free(edges);
    MTEST_CALL(MPI_Comm_free(&ring));
    MTEST_CALL(MPI_Comm_free(&grid));
    MTEST_CALL(MPI_Comm_free(&graph));
    MTEST_CALL(MPI_Comm_free(&dg));
    return mtest_finalize();
}
