/*
 * General active target synchronisation (MPI_Win_post / start / complete / wait /
 * test): a ring where each rank exposes its window to its left neighbour and accesses
 * its right one, repeated so that epochs follow each other; and a star where every
 * rank accumulates into rank 0, which polls with MPI_Win_test. Data checked after
 * each exposure epoch. On a window of MPI_Win_create (pscw_strict: MPI_Win_allocate).
 */
#include "mtest.h"

#ifndef PSCW_FLAVOR
#define PSCW_FLAVOR MPI_WIN_FLAVOR_CREATE
#endif

#define ROUNDS 20

static MPI_Group one_rank(MPI_Group world, int r)
{
    MPI_Group g;
    MTEST_CALL(MPI_Group_incl(world, 1, &r, &g));
    return g;
}

static void run(int flavor)
{
    int r = mtest_rank(), n = mtest_size();
    int *base, mem[2];
    MPI_Win win;
    if (flavor == MPI_WIN_FLAVOR_CREATE) {
        base = mem;
        MTEST_CALL(MPI_Win_create(mem, sizeof mem, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    } else {
        MTEST_CALL(MPI_Win_allocate(2 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
    }
    MTEST_CALL(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    base[0] = base[1] = -1;
    MPI_Group world;
    MTEST_CALL(MPI_Comm_group(MPI_COMM_WORLD, &world));
    int right = (r + 1) % n, left = (r + n - 1) % n;
    MPI_Group gl = one_rank(world, left), gr = one_rank(world, right);
    MTEST_CALL(MPI_Barrier(MPI_COMM_WORLD));

    for (int k = 0; k < ROUNDS; k++) {
        int v = r * 1000 + k;
        MTEST_CALL(MPI_Win_post(gl, 0, win));
        MTEST_CALL(MPI_Win_start(gr, 0, win));
        MTEST_CALL(MPI_Put(&v, 1, MPI_INT, right, 0, 1, MPI_INT, win));
        MTEST_CALL(MPI_Win_complete(win));
        MTEST_CALL(MPI_Win_wait(win));
        MTEST_EQ("ring put", left * 1000 + k, base[0]);
    }

    /* Star: rank 0 exposes to everyone, everyone adds its rank + 1. */
    MPI_Group g0 = one_rank(world, 0);
    for (int k = 0; k < ROUNDS / 4; k++) {
        if (r == 0) {
            base[1] = 0;
            MTEST_CALL(MPI_Win_post(world, 0, win));
        }
        MTEST_CALL(MPI_Win_start(g0, 0, win));
        int v = r + 1;
        MTEST_CALL(MPI_Accumulate(&v, 1, MPI_INT, 0, 1, 1, MPI_INT, MPI_SUM, win));
        MTEST_CALL(MPI_Win_complete(win));
        if (r == 0) {
            int flag = 0, polls = 0;
            while (!flag) {
                MTEST_CALL(MPI_Win_test(win, &flag));
                polls++;
            }
            MTEST_EQ("star sum", n * (n + 1) / 2, base[1]);
            MTEST_EXPECT_CLASS(MPI_ERR_RMA_SYNC, MPI_Win_wait(win));
        }
    }
    MTEST_EXPECT_CLASS(MPI_ERR_RMA_SYNC, MPI_Win_complete(win));
    int v = 0;
    MTEST_EXPECT_CLASS(MPI_ERR_RMA_SYNC, MPI_Put(&v, 1, MPI_INT, right, 0, 1, MPI_INT, win));
    MTEST_CALL(MPI_Group_free(&g0));
    MTEST_CALL(MPI_Group_free(&gl));
    MTEST_CALL(MPI_Group_free(&gr));
    MTEST_CALL(MPI_Group_free(&world));
    MTEST_CALL(MPI_Win_free(&win));
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    run(PSCW_FLAVOR);
    return mtest_finalize();
}
