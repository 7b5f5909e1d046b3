/*
 * MPI_Gather_init, MPI_Scatter_init and MPI_Allgather_init restarted with new data each
 * round (MPICH 4.0.2 delivers stale or missing data from these on the second and later
 * starts, or at a root other than 0), alone and together with a nonblocking collective.
 */
#include "mtest.h"

#define ROUNDS 20
#define C 2

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int r = mtest_rank(), n = mtest_size();
    MPI_Comm w = MPI_COMM_WORLD;
    int root = n / 2;
    int mine[C], scat[C];
    int *all = mtest_malloc(sizeof(int) * C * n), *gat = mtest_malloc(sizeof(int) * C * n);
    int *ag = mtest_malloc(sizeof(int) * C * n);
    MPI_Request rq[4];
    MTEST_CALL(MPI_Gather_init(mine, C, MPI_INT, gat, C, MPI_INT, root, w, MPI_INFO_NULL, &rq[0]));
    MTEST_CALL(MPI_Scatter_init(all, C, MPI_INT, scat, C, MPI_INT, root, w, MPI_INFO_NULL, &rq[1]));
    MTEST_CALL(MPI_Allgather_init(mine, C, MPI_INT, ag, C, MPI_INT, w, MPI_INFO_NULL, &rq[2]));
    for (int round = 0; round < ROUNDS; round++) {
        for (int i = 0; i < C; i++) mine[i] = 10 * r + i + round;
        for (int i = 0; i < C * n; i++) all[i] = 1000 * r + i + round;
        int x = r, y = -1;
        if (round % 2) {
            MTEST_CALL(MPI_Startall(3, rq));
            MTEST_CALL(MPI_Iallreduce(&x, &y, 1, MPI_INT, MPI_SUM, w, &rq[3]));
            MTEST_CALL(MPI_Waitall(4, rq, MPI_STATUSES_IGNORE));
            MTEST_EQ("Iallreduce among persistent ones", n * (n - 1) / 2, y);
        } else {
            for (int i = 0; i < 3; i++) {
                MTEST_CALL(MPI_Start(&rq[i]));
                MTEST_CALL(MPI_Wait(&rq[i], MPI_STATUS_IGNORE));
            }
        }
        for (int i = 0; i < C; i++) MTEST_EQ("Scatter_init", 1000 * root + C * r + i + round, scat[i]);
        for (int j = 0; j < n; j++)
            for (int i = 0; i < C; i++) {
                if (r == root) MTEST_EQ("Gather_init", 10 * j + i + round, gat[C * j + i]);
                MTEST_EQ("Allgather_init", 10 * j + i + round, ag[C * j + i]);
            }
    }
    for (int i = 0; i < 3; i++) MTEST_CALL(MPI_Request_free(&rq[i]));
    free(all);
    free(gat);
    free(ag);
    return mtest_finalize();
}
