/*
 * Dynamic windows (MPI_Win_create_dynamic, MPI_Win_attach, MPI_Win_detach): each rank
 * attaches two buffers and publishes their addresses; puts, gets and accumulates use
 * absolute addresses as displacements, in fence and lock epochs; MPI_WIN_BASE is
 * MPI_BOTTOM and MPI_WIN_CREATE_FLAVOR is MPI_WIN_FLAVOR_DYNAMIC.
 */
#include "mtest.h"

#define N 8

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int r = mtest_rank(), n = mtest_size();
    int right = (r + 1) % n, left = (r + n - 1) % n;
    MPI_Win win;
    MTEST_CALL(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    MTEST_CALL(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    void *v;
    int flag;
    MTEST_CALL(MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &v, &flag));
    MTEST_EQ("flavor", MPI_WIN_FLAVOR_DYNAMIC, *(int *)v);
    MTEST_CALL(MPI_Win_get_attr(win, MPI_WIN_BASE, &v, &flag));
    MTEST_CHECK(v == MPI_BOTTOM, "MPI_WIN_BASE of a dynamic window is %p", v);

    int *a = mtest_malloc(N * sizeof(int)), *b = mtest_malloc(N * sizeof(int));
    for (int i = 0; i < N; i++)
        a[i] = b[i] = -1;
    MTEST_CALL(MPI_Win_attach(win, a, N * sizeof(int)));
    MTEST_CALL(MPI_Win_attach(win, b, N * sizeof(int)));
    MPI_Aint mine[2], all[2 * 64];
    MTEST_CALL(MPI_Get_address(a, &mine[0]));
    MTEST_CALL(MPI_Get_address(b, &mine[1]));
    if (n > 64)
        MTEST_ABORT("at most 64 ranks");
    MTEST_CALL(MPI_Allgather(mine, 2, MPI_AINT, all, 2, MPI_AINT, MPI_COMM_WORLD));

    int src[N];
    for (int i = 0; i < N; i++)
        src[i] = r * 100 + i;
    MTEST_CALL(MPI_Win_fence(0, win));
    MTEST_CALL(MPI_Put(src, N, MPI_INT, right, all[2 * right], N, MPI_INT, win));
    MTEST_CALL(MPI_Put(src, 2, MPI_INT, right, all[2 * right + 1] + 3 * sizeof(int), 2, MPI_INT, win));
    MTEST_CALL(MPI_Win_fence(0, win));
    for (int i = 0; i < N; i++)
        MTEST_EQ("put into region a", left * 100 + i, a[i]);
    MTEST_EQ("put into region b", left * 100, b[3]);
    MTEST_EQ("put into region b", left * 100 + 1, b[4]);
    MTEST_EQ("region b untouched", -1, b[5]);

    int got[N];
    MTEST_CALL(MPI_Get(got, N, MPI_INT, left, all[2 * left], N, MPI_INT, win));
    MTEST_CALL(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
    int ll = (left + n - 1) % n;
    for (int i = 0; i < N; i++)
        MTEST_EQ("get from region a", ll * 100 + i, got[i]);

    /* Everyone adds 1 to b[0] of rank 0 under a lock. */
    if (r == 0)
        b[0] = 0;
    MTEST_CALL(MPI_Barrier(MPI_COMM_WORLD));
    int one = 1;
    MTEST_CALL(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
    MTEST_CALL(MPI_Accumulate(&one, 1, MPI_INT, 0, all[1], 1, MPI_INT, MPI_SUM, win));
    MTEST_CALL(MPI_Win_unlock(0, win));
    MTEST_CALL(MPI_Barrier(MPI_COMM_WORLD));
    if (r == 0) {
        MTEST_CALL(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
        MTEST_EQ("accumulated into region b", n, b[0]);
        MTEST_CALL(MPI_Win_unlock(0, win));
    }
    MTEST_CALL(MPI_Barrier(MPI_COMM_WORLD));
    MTEST_CALL(MPI_Win_detach(win, a));
    MTEST_CALL(MPI_Win_detach(win, b));
    MTEST_CALL(MPI_Win_free(&win));
    free(a);
    free(b);
    return mtest_finalize();
}
