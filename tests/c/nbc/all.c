/*
 * Every nonblocking collective of MPI-3.1 on an intracommunicator, checked against
 * the values the blocking definition gives: MPI_Igather(v), MPI_Iscatter(v),
 * MPI_Iallgather(v), MPI_Ialltoall(v,w), MPI_Ireduce, MPI_Ireduce_scatter(_block),
 * MPI_Iscan, MPI_Iexscan, with MPI_IN_PLACE where allowed; all of them started before
 * any is completed, then completed with one MPI_Waitall.
 */
#include "mtest.h"

#define C 3 /* elements per block */

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int r = mtest_rank(), n = mtest_size();
    MPI_Comm w = MPI_COMM_WORLD;
    int root = n - 1;
    int *sb = mtest_malloc(sizeof(int) * C * n), *big = mtest_malloc(sizeof(int) * C * n);
    for (int i = 0; i < C * n; i++) sb[i] = 100 * r + i;
    int mine[C];
    for (int i = 0; i < C; i++) mine[i] = 100 * r + i;

    int *gat = mtest_malloc(sizeof(int) * C * n), *gatv = mtest_malloc(sizeof(int) * 2 * C * n);
    int scat[C], scatv[C];
    int *ag = mtest_malloc(sizeof(int) * C * n), *agv = mtest_malloc(sizeof(int) * 2 * C * n);
    int *ata = mtest_malloc(sizeof(int) * C * n), *atav = mtest_malloc(sizeof(int) * C * n);
    int *ataw = mtest_malloc(sizeof(int) * C * n), *inpl = mtest_malloc(sizeof(int) * C * n);
    int red[C], rsb[C], rs[C], sc[C], ex[C] = {-7, -7, -7};
    int *counts = mtest_malloc(sizeof(int) * n), *displs = mtest_malloc(sizeof(int) * n);
    int *bdispls = mtest_malloc(sizeof(int) * n);
    MPI_Datatype *types = mtest_malloc(sizeof(MPI_Datatype) * n);
    for (int i = 0; i < n; i++) {
        counts[i] = C;
        displs[i] = 2 * C * (n - 1 - i); /* reversed, with gaps */
        bdispls[i] = (int)sizeof(int) * C * i;
        types[i] = MPI_INT;
    }
    int *sdispls = mtest_malloc(sizeof(int) * n);
    for (int i = 0; i < n; i++) sdispls[i] = C * i;
    for (int i = 0; i < 2 * C * n; i++) gatv[i] = agv[i] = -1;
    for (int i = 0; i < C * n; i++) inpl[i] = 100 * r + i;

    MPI_Request rq[14];
    int k = 0;
    MTEST_CALL(MPI_Igather(mine, C, MPI_INT, gat, C, MPI_INT, root, w, &rq[k++]));
    MTEST_CALL(MPI_Igatherv(mine, C, MPI_INT, gatv, counts, displs, MPI_INT, root, w, &rq[k++]));
    MTEST_CALL(MPI_Iscatter(sb, C, MPI_INT, scat, C, MPI_INT, root, w, &rq[k++]));
    MTEST_CALL(MPI_Iscatterv(sb, counts, sdispls, MPI_INT, scatv, C, MPI_INT, 0, w, &rq[k++]));
    MTEST_CALL(MPI_Iallgather(mine, C, MPI_INT, ag, C, MPI_INT, w, &rq[k++]));
    MTEST_CALL(MPI_Iallgatherv(mine, C, MPI_INT, agv, counts, displs, MPI_INT, w, &rq[k++]));
    MTEST_CALL(MPI_Ialltoall(sb, C, MPI_INT, ata, C, MPI_INT, w, &rq[k++]));
    MTEST_CALL(MPI_Ialltoallv(sb, counts, sdispls, MPI_INT, atav, counts, sdispls, MPI_INT, w,
                              &rq[k++]));
    MTEST_CALL(MPI_Ialltoallw(sb, counts, bdispls, types, ataw, counts, bdispls, types, w,
                              &rq[k++]));
    MTEST_CALL(MPI_Ialltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, inpl, C, MPI_INT, w, &rq[k++]));
    MTEST_CALL(MPI_Ireduce(mine, red, C, MPI_INT, MPI_SUM, root, w, &rq[k++]));
    MTEST_CALL(MPI_Ireduce_scatter_block(sb, rsb, C, MPI_INT, MPI_SUM, w, &rq[k++]));
    MTEST_CALL(MPI_Ireduce_scatter(sb, rs, counts, MPI_INT, MPI_MAX, w, &rq[k++]));
    MTEST_CALL(MPI_Iscan(mine, sc, C, MPI_INT, MPI_SUM, w, &rq[k++]));
    MTEST_CALL(MPI_Waitall(k, rq, MPI_STATUSES_IGNORE));
    MTEST_CALL(MPI_Iexscan(mine, ex, C, MPI_INT, MPI_SUM, w, &rq[0]));
    MTEST_CALL(MPI_Wait(&rq[0], MPI_STATUS_IGNORE));

    int sumr = n * (n - 1) / 2;
    for (int j = 0; j < n; j++) {
        for (int i = 0; i < C; i++) {
            if (r == root) {
                MTEST_EQ("Igather", 100 * j + i, gat[C * j + i]);
                MTEST_EQ("Igatherv", 100 * j + i, gatv[displs[j] + i]);
            }
            MTEST_EQ("Iallgather", 100 * j + i, ag[C * j + i]);
            MTEST_EQ("Iallgatherv", 100 * j + i, agv[displs[j] + i]);
            MTEST_EQ("Iallgatherv gap", -1, agv[displs[j] + C + i]);
            /* rank j sent me its block r: 100 j + C r + i */
            MTEST_EQ("Ialltoall", 100 * j + C * r + i, ata[C * j + i]);
            MTEST_EQ("Ialltoallv", 100 * j + C * r + i, atav[C * j + i]);
            MTEST_EQ("Ialltoallw", 100 * j + C * r + i, ataw[C * j + i]);
            MTEST_EQ("in-place Ialltoall", 100 * j + C * r + i, inpl[C * j + i]);
        }
    }
    for (int i = 0; i < C; i++) {
        MTEST_EQ("Iscatter", 100 * root + C * r + i, scat[i]);
        MTEST_EQ("Iscatterv", C * r + i, scatv[i]);
        if (r == root) MTEST_EQ("Ireduce", 100 * sumr + n * i, red[i]);
        MTEST_EQ("Ireduce_scatter_block", 100 * sumr + n * (C * r + i), rsb[i]);
        MTEST_EQ("Ireduce_scatter (max)", 100 * (n - 1) + C * r + i, rs[i]);
        MTEST_EQ("Iscan", 100 * (r * (r + 1) / 2) + (r + 1) * i, sc[i]);
        if (r > 0) MTEST_EQ("Iexscan", 100 * (r * (r - 1) / 2) + r * i, ex[i]);
    }

    /* In place at the root: Igather, Ireduce; in place everywhere: Iallgather, Iscan,
     * Ireduce_scatter_block. */
    {
        int *g = mtest_malloc(sizeof(int) * C * n);
        for (int i = 0; i < C * n; i++) g[i] = -1;
        for (int i = 0; i < C; i++) g[C * r + i] = 100 * r + i;
        MPI_Request q[5];
        if (r == 0)
            MTEST_CALL(MPI_Igather(MPI_IN_PLACE, C, MPI_INT, g, C, MPI_INT, 0, w, &q[0]));
        else
            MTEST_CALL(MPI_Igather(mine, C, MPI_INT, NULL, 0, MPI_INT, 0, w, &q[0]));
        int rr[C];
        for (int i = 0; i < C; i++) rr[i] = mine[i];
        if (r == 0)
            MTEST_CALL(MPI_Ireduce(MPI_IN_PLACE, rr, C, MPI_INT, MPI_SUM, 0, w, &q[1]));
        else
            MTEST_CALL(MPI_Ireduce(rr, NULL, C, MPI_INT, MPI_SUM, 0, w, &q[1]));
        int *ga = mtest_malloc(sizeof(int) * C * n);
        for (int i = 0; i < C * n; i++) ga[i] = i / C == r ? 100 * r + i % C : -1;
        MTEST_CALL(MPI_Iallgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, ga, C, MPI_INT, w, &q[2]));
        int s2[C];
        for (int i = 0; i < C; i++) s2[i] = mine[i];
        MTEST_CALL(MPI_Iscan(MPI_IN_PLACE, s2, C, MPI_INT, MPI_SUM, w, &q[3]));
        int *rb = mtest_malloc(sizeof(int) * C * n);
        for (int i = 0; i < C * n; i++) rb[i] = sb[i];
        MTEST_CALL(MPI_Ireduce_scatter_block(MPI_IN_PLACE, rb, C, MPI_INT, MPI_SUM, w, &q[4]));
        MTEST_CALL(MPI_Waitall(5, q, MPI_STATUSES_IGNORE));
        for (int j = 0; j < n; j++)
            for (int i = 0; i < C; i++) {
                if (r == 0) MTEST_EQ("in-place Igather", 100 * j + i, g[C * j + i]);
                MTEST_EQ("in-place Iallgather", 100 * j + i, ga[C * j + i]);
            }
        for (int i = 0; i < C; i++) {
            if (r == 0) MTEST_EQ("in-place Ireduce", 100 * sumr + n * i, rr[i]);
            MTEST_EQ("in-place Iscan", 100 * (r * (r + 1) / 2) + (r + 1) * i, s2[i]);
            MTEST_EQ("in-place Ireduce_scatter_block", 100 * sumr + n * (C * r + i), rb[i]);
        }
        free(g);
        free(ga);
        free(rb);
    }
    free(sb); free(big); free(gat); free(gatv); free(ag); free(agv); free(ata); free(atav);
    free(ataw); free(inpl); free(counts); free(displs); free(bdispls); free(types); free(sdispls);
    return mtest_finalize();
}
