/*
 * Active-target RMA with MPI_Win_fence, on windows made by MPI_Win_create (program
 * memory), MPI_Win_allocate and MPI_Win_allocate_shared: puts around a ring, gets from
 * the left neighbour, accumulates from every rank (MPI_SUM), a strided target datatype,
 * MPI_PROC_NULL targets, and the data checked after each fence.
 */
#include "mtest.h"

#define N 16

static void run(int flavor)
{
    int r = mtest_rank(), n = mtest_size();
    int *base = NULL, *mine = NULL;
    MPI_Win win;
    MPI_Aint bytes = (MPI_Aint)(3 * N) * (MPI_Aint)sizeof(int);
    if (flavor == MPI_WIN_FLAVOR_CREATE) {
        mine = mtest_malloc((size_t)bytes);
        MTEST_CALL(MPI_Win_create(mine, bytes, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
        base = mine;
    } else if (flavor == MPI_WIN_FLAVOR_ALLOCATE) {
        MTEST_CALL(MPI_Win_allocate(bytes, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
    } else {
        MTEST_CALL(MPI_Win_allocate_shared(bytes, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
    }
    MTEST_CALL(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    for (int i = 0; i < 3 * N; i++)
        base[i] = -1;
    int right = (r + 1) % n, left = (r + n - 1) % n;
    int src[N], got[N];
    for (int i = 0; i < N; i++)
        src[i] = r * 1000 + i;

    /* Put my vector into the right neighbour's first block. */
    MTEST_CALL(MPI_Win_fence(0, win));
    MTEST_CALL(MPI_Put(src, N, MPI_INT, right, 0, N, MPI_INT, win));
    MTEST_CALL(MPI_Put(src, N, MPI_INT, MPI_PROC_NULL, 0, N, MPI_INT, win));
    MTEST_CALL(MPI_Win_fence(0, win));
    for (int i = 0; i < N; i++)
        MTEST_EQ("put data", left * 1000 + i, base[i]);

    /* Get the left neighbour's first block (which holds what its left put). */
    MTEST_CALL(MPI_Get(got, N, MPI_INT, left, 0, N, MPI_INT, win));
    MTEST_CALL(MPI_Win_fence(0, win));
    int ll = (left + n - 1) % n;
    for (int i = 0; i < N; i++)
        MTEST_EQ("get data", ll * 1000 + i, got[i]);

    /* Everyone adds (rank + 1) * i into block 2 of everyone. */
    for (int i = 0; i < N; i++)
        base[N + i] = 0;
    MTEST_CALL(MPI_Win_fence(0, win));
    int add[N];
    for (int i = 0; i < N; i++)
        add[i] = (r + 1) * i;
    for (int t = 0; t < n; t++)
        MTEST_CALL(MPI_Accumulate(add, N, MPI_INT, t, N, N, MPI_INT, MPI_SUM, win));
    MTEST_CALL(MPI_Win_fence(0, win));
    for (int i = 0; i < N; i++)
        MTEST_EQ("accumulated sum", n * (n + 1) / 2 * i, base[N + i]);

    /* Strided target: every other element of block 3 of the right neighbour. */
    MPI_Datatype every_other;
    MTEST_CALL(MPI_Type_vector(N / 2, 1, 2, MPI_INT, &every_other));
    MTEST_CALL(MPI_Type_commit(&every_other));
    for (int i = 0; i < N; i++)
        base[2 * N + i] = -7;
    MTEST_CALL(MPI_Win_fence(0, win));
    MTEST_CALL(MPI_Put(src, N / 2, MPI_INT, right, 2 * N, 1, every_other, win));
    MTEST_CALL(MPI_Win_fence(0, win));
    for (int i = 0; i < N; i++)
        MTEST_EQ("strided put", i % 2 ? -7 : left * 1000 + i / 2, base[2 * N + i]);
    /* And back, strided on both sides. */
    int wide[N];
    for (int i = 0; i < N; i++)
        wide[i] = -3;
    MTEST_CALL(MPI_Get(wide, 1, every_other, right, 2 * N, 1, every_other, win));
    MTEST_CALL(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
    for (int i = 0; i < N; i++)
        MTEST_EQ("strided get", i % 2 ? -3 : r * 1000 + i / 2, wide[i]);
    MTEST_CALL(MPI_Type_free(&every_other));
    MTEST_CALL(MPI_Win_free(&win));
    MTEST_EQ("freed handle", (long)MPI_WIN_NULL, (long)win);
    free(mine);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    run(MPI_WIN_FLAVOR_CREATE);
    run(MPI_WIN_FLAVOR_ALLOCATE);
    run(MPI_WIN_FLAVOR_SHARED);
    return mtest_finalize();
}
