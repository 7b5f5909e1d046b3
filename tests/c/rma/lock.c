/*
 * Passive target on windows of each flavor: an exclusive lock around a
 * read-modify-write by get and put (every rank increments each target's word; the
 * exclusive lock makes the sum exact), shared locks for concurrent gets, lock_all with
 * flush_local_all, MPI_MODE_NOCHECK, and unlocking with the target inside MPI_Barrier
 * or not calling MPI at all.
 */
#include "mtest.h"

#define ITERS 50

static void run(int flavor)
{
    int r = mtest_rank(), n = mtest_size();
    int *base, *mem = NULL;
    MPI_Win win;
    MPI_Aint bytes = 4 * sizeof(int);
    if (flavor == MPI_WIN_FLAVOR_CREATE) {
        mem = mtest_malloc(bytes);
        MTEST_CALL(MPI_Win_create(mem, bytes, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
        base = mem;
    } else {
        MTEST_CALL(MPI_Win_allocate(bytes, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
    }
    MTEST_CALL(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    MTEST_CALL(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, r, 0, win));
    base[0] = 0;
    base[1] = r * 10;
    base[2] = 0;
    base[3] = 0;
    MTEST_CALL(MPI_Win_unlock(r, win));
    MTEST_CALL(MPI_Barrier(MPI_COMM_WORLD));

    for (int i = 0; i < ITERS; i++) {
        int t = (r + i) % n, v = -1;
        MTEST_CALL(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, win));
        MTEST_CALL(MPI_Get(&v, 1, MPI_INT, t, 0, 1, MPI_INT, win));
        MTEST_CALL(MPI_Win_flush(t, win));
        v++;
        MTEST_CALL(MPI_Put(&v, 1, MPI_INT, t, 0, 1, MPI_INT, win));
        MTEST_CALL(MPI_Win_unlock(t, win));
    }
    for (int t = 0; t < n; t++) {
        int v = -1;
        MTEST_CALL(MPI_Win_lock(MPI_LOCK_SHARED, t, 0, win));
        MTEST_CALL(MPI_Get(&v, 1, MPI_INT, t, 1, 1, MPI_INT, win));
        MTEST_CALL(MPI_Win_unlock(t, win));
        MTEST_EQ("shared-lock get", t * 10, v);
    }
    MTEST_CALL(MPI_Barrier(MPI_COMM_WORLD));
    MTEST_CALL(MPI_Win_lock(MPI_LOCK_SHARED, r, 0, win));
    MTEST_EQ("exclusive increments", ITERS, base[0]);
    MTEST_CALL(MPI_Win_unlock(r, win));

    /* lock_all: everyone writes 100 + its rank into slot 2 of its right neighbour. */
    int right = (r + 1) % n, left = (r + n - 1) % n;
    MTEST_CALL(MPI_Win_lock_all(0, win));
    int val = 100 + r;
    MTEST_CALL(MPI_Put(&val, 1, MPI_INT, right, 2, 1, MPI_INT, win));
    MTEST_CALL(MPI_Win_flush_local_all(win));
    MTEST_CALL(MPI_Win_flush_all(win));
    MTEST_CALL(MPI_Win_unlock_all(win));
    MTEST_CALL(MPI_Barrier(MPI_COMM_WORLD));
    MTEST_CALL(MPI_Win_lock(MPI_LOCK_SHARED, r, MPI_MODE_NOCHECK, win));
    MTEST_EQ("lock_all put", 100 + left, base[2]);
    MTEST_CALL(MPI_Win_unlock(r, win));

    /* The target sits in a barrier (rank 0) while the others lock it and write. */
    if (r != 0) {
        int one = 1;
        MTEST_CALL(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
        MTEST_CALL(MPI_Accumulate(&one, 1, MPI_INT, 0, 3, 1, MPI_INT, MPI_SUM, win));
        MTEST_CALL(MPI_Win_unlock(0, win));
    }
    MTEST_CALL(MPI_Barrier(MPI_COMM_WORLD));
    if (r == 0) {
        MTEST_CALL(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
        MTEST_EQ("writes while the target waits", n - 1, base[3]);
        MTEST_CALL(MPI_Win_unlock(0, win));
    }
    MTEST_CALL(MPI_Win_free(&win));
    free(mem);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    run(MPI_WIN_FLAVOR_CREATE);
    run(MPI_WIN_FLAVOR_ALLOCATE);
    return mtest_finalize();
}
