/*
 * Persistent collectives (MPI-4): the MPI_*_init of the collectives (MPI_Gather_init,
 * MPI_Scatter_init and MPI_Allgather_init are in persistent_strict.c), each started
 * many times with new data (MPI_Start and MPI_Startall), completed with MPI_Wait,
 * MPI_Test and MPI_Waitall in other orders than started; the request stays valid
 * (inactive) between starts, and MPI_Request_free releases it.
 * A strided datatype makes the staged path repack at every start.
 */
#include "mtest.h"

#define ROUNDS 25
#define C 2

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int r = mtest_rank(), n = mtest_size();
    MPI_Comm w = MPI_COMM_WORLD;
    MPI_Info info;
    MTEST_CALL(MPI_Info_create(&info));
    int root = n / 2;

    int ar_in[C], ar_out[C], bc[C], red[C], sc[C], ex[C], rsb[C], rs[C], scatv[C];
    int mine[C];
    int *all = mtest_malloc(sizeof(int) * C * n), *gat = mtest_malloc(sizeof(int) * C * n);
    int *gatv = mtest_malloc(sizeof(int) * C * n), *ag = mtest_malloc(sizeof(int) * C * n);
    int *agv = mtest_malloc(sizeof(int) * C * n), *ata = mtest_malloc(sizeof(int) * C * n);
    int *atav = mtest_malloc(sizeof(int) * C * n), *ataw = mtest_malloc(sizeof(int) * C * n);
    int *counts = mtest_malloc(sizeof(int) * n), *displs = mtest_malloc(sizeof(int) * n);
    int *bdispls = mtest_malloc(sizeof(int) * n);
    MPI_Datatype *types = mtest_malloc(sizeof(MPI_Datatype) * n);
    for (int i = 0; i < n; i++) {
        counts[i] = C;
        displs[i] = C * i;
        bdispls[i] = (int)sizeof(int) * C * i;
        types[i] = MPI_INT;
    }
    /* Every other int of `strided` is broadcast. */
    int strided[2 * C];
    MPI_Datatype vec;
    MTEST_CALL(MPI_Type_vector(C, 1, 2, MPI_INT, &vec));
    MTEST_CALL(MPI_Type_commit(&vec));

    enum { N = 15 };
    MPI_Request rq[N];
    int k = 0;
    MTEST_CALL(MPI_Barrier_init(w, info, &rq[k++]));
    MTEST_CALL(MPI_Bcast_init(bc, C, MPI_INT, root, w, MPI_INFO_NULL, &rq[k++]));
    MTEST_CALL(MPI_Allreduce_init(ar_in, ar_out, C, MPI_INT, MPI_SUM, w, info, &rq[k++]));
    MTEST_CALL(MPI_Reduce_init(mine, red, C, MPI_INT, MPI_SUM, root, w, info, &rq[k++]));
    MTEST_CALL(MPI_Gatherv_init(mine, C, MPI_INT, gatv, counts, displs, MPI_INT, root, w, info,
                                &rq[k++]));
    MTEST_CALL(MPI_Scatterv_init(all, counts, displs, MPI_INT, scatv, C, MPI_INT, root, w, info,
                                 &rq[k++]));
    MTEST_CALL(MPI_Allgatherv_init(mine, C, MPI_INT, agv, counts, displs, MPI_INT, w, info,
                                   &rq[k++]));
    MTEST_CALL(MPI_Alltoall_init(all, C, MPI_INT, ata, C, MPI_INT, w, info, &rq[k++]));
    MTEST_CALL(MPI_Alltoallv_init(all, counts, displs, MPI_INT, atav, counts, displs, MPI_INT, w,
                                  info, &rq[k++]));
    MTEST_CALL(MPI_Alltoallw_init(all, counts, bdispls, types, ataw, counts, bdispls, types, w,
                                  info, &rq[k++]));
    MTEST_CALL(MPI_Reduce_scatter_block_init(all, rsb, C, MPI_INT, MPI_SUM, w, info, &rq[k++]));
    MTEST_CALL(MPI_Reduce_scatter_init(all, rs, counts, MPI_INT, MPI_MAX, w, info, &rq[k++]));
    MTEST_CALL(MPI_Scan_init(mine, sc, C, MPI_INT, MPI_SUM, w, info, &rq[k++]));
    MTEST_CALL(MPI_Exscan_init(mine, ex, C, MPI_INT, MPI_SUM, w, info, &rq[k++]));
    MTEST_CALL(MPI_Bcast_init(strided, 1, vec, 0, w, info, &rq[k++]));
    MTEST_EQ("requests made", N, k);
    MTEST_CALL(MPI_Info_free(&info));
    MTEST_CALL(MPI_Type_free(&vec));

    int sumr = n * (n - 1) / 2;
    for (int round = 0; round < ROUNDS; round++) {
        for (int i = 0; i < C; i++) {
            mine[i] = ar_in[i] = 10 * r + i + round;
            bc[i] = r == root ? 5 * round + i : -1;
            ex[i] = -7;
        }
        for (int i = 0; i < C * n; i++) all[i] = 1000 * r + i + round;
        for (int i = 0; i < 2 * C; i++) strided[i] = r == 0 ? round * 7 + i : -1;
        if (round % 3 == 0) {
            MTEST_CALL(MPI_Startall(N, rq));
            MTEST_CALL(MPI_Waitall(N, rq, MPI_STATUSES_IGNORE));
        } else if (round % 3 == 1) {
            for (int i = 0; i < N; i++) MTEST_CALL(MPI_Start(&rq[i]));
            for (int i = N - 1; i >= 0; i--) {
                int flag = 0;
                while (!flag) MTEST_CALL(MPI_Test(&rq[i], &flag, MPI_STATUS_IGNORE));
            }
        } else {
            for (int i = 0; i < N; i++) MTEST_CALL(MPI_Start(&rq[i]));
            for (int i = N - 1; i >= 0; i--) MTEST_CALL(MPI_Wait(&rq[i], MPI_STATUS_IGNORE));
        }
        for (int i = 0; i < N; i++)
            MTEST_CHECK(rq[i] != MPI_REQUEST_NULL, "persistent request %d freed by completion", i);
        for (int i = 0; i < C; i++) {
            MTEST_EQ("Bcast_init", 5 * round + i, bc[i]);
            MTEST_EQ("Allreduce_init", 10 * sumr + n * (i + round), ar_out[i]);
            if (r == root) MTEST_EQ("Reduce_init", 10 * sumr + n * (i + round), red[i]);
            MTEST_EQ("Scan_init", 10 * (r * (r + 1) / 2) + (r + 1) * (i + round), sc[i]);
            if (r > 0) MTEST_EQ("Exscan_init", 10 * (r * (r - 1) / 2) + r * (i + round), ex[i]);
            MTEST_EQ("Scatterv_init", 1000 * root + C * r + i + round, scatv[i]);
            MTEST_EQ("Reduce_scatter_block_init", 1000 * sumr + n * (C * r + i + round), rsb[i]);
            MTEST_EQ("Reduce_scatter_init", 1000 * (n - 1) + C * r + i + round, rs[i]);
            MTEST_EQ("strided Bcast_init", round * 7 + 2 * i, strided[2 * i]);
            if (r != 0) MTEST_EQ("strided Bcast_init gap", -1, strided[2 * i + 1]);
        }
        for (int j = 0; j < n; j++)
            for (int i = 0; i < C; i++) {
                if (r == root) {
                    MTEST_EQ("Gatherv_init", 10 * j + i + round, gatv[C * j + i]);
                }
                MTEST_EQ("Allgatherv_init", 10 * j + i + round, agv[C * j + i]);
                MTEST_EQ("Alltoall_init", 1000 * j + C * r + i + round, ata[C * j + i]);
                MTEST_EQ("Alltoallv_init", 1000 * j + C * r + i + round, atav[C * j + i]);
                MTEST_EQ("Alltoallw_init", 1000 * j + C * r + i + round, ataw[C * j + i]);
            }
    }
    for (int i = 0; i < N; i++) {
        MTEST_CALL(MPI_Request_free(&rq[i]));
        MTEST_EQ("request after Request_free", MPI_REQUEST_NULL, rq[i]);
    }
    /* Blocking collectives still work after the persistent ones are gone. */
    int x = r, y;
    MTEST_CALL(MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, w));
    MTEST_EQ("Allreduce afterwards", sumr, y);
    free(all); free(gat); free(gatv); free(ag); free(agv); free(ata); free(atav); free(ataw);
    free(counts); free(displs); free(bdispls); free(types);
    return mtest_finalize();
}
