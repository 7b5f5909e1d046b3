/*
 * Atomicity under contention from every rank: MPI_Fetch_and_op counters (shared locks,
 * lock_all), a mutex built from MPI_Compare_and_swap protecting a get-increment-put,
 * and accumulates with MPI_REPLACE / MPI_NO_OP; exact final values.
 */
#include "mtest.h"

#define ITERS 200

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int r = mtest_rank(), n = mtest_size();
    long *base;
    MPI_Win win;
    MTEST_CALL(MPI_Win_allocate(4 * sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
    MTEST_CALL(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    for (int i = 0; i < 4; i++)
        base[i] = 0;
    MTEST_CALL(MPI_Barrier(MPI_COMM_WORLD));

    /* A counter at rank 0, slot 0: each fetch returns a distinct value. */
    long one = 1, old, seen_max = -1;
    for (int i = 0; i < ITERS; i++) {
        MTEST_CALL(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
        MTEST_CALL(MPI_Fetch_and_op(&one, &old, MPI_LONG, 0, 0, MPI_SUM, win));
        MTEST_CALL(MPI_Win_unlock(0, win));
        MTEST_CHECK(old > seen_max && old < (long)n * ITERS, "fetched %ld after %ld", old, seen_max);
        seen_max = old;
    }
    /* The same with lock_all and a flush, into slot 1 of the last rank. */
    MTEST_CALL(MPI_Win_lock_all(0, win));
    for (int i = 0; i < ITERS; i++) {
        MTEST_CALL(MPI_Fetch_and_op(&one, &old, MPI_LONG, n - 1, 1, MPI_SUM, win));
        MTEST_CALL(MPI_Win_flush(n - 1, win));
    }
    MTEST_CALL(MPI_Win_unlock_all(win));

    /* A CAS mutex in slot 2 of rank 0 guarding a non-atomic increment of slot 3. */
    for (int i = 0; i < ITERS / 4; i++) {
        long want = r + 1, zero = 0, prev;
        MTEST_CALL(MPI_Win_lock_all(0, win));
        do {
            MTEST_CALL(MPI_Compare_and_swap(&want, &zero, &prev, MPI_LONG, 0, 2, win));
            MTEST_CALL(MPI_Win_flush(0, win));
        } while (prev != 0);
        long v;
        MTEST_CALL(MPI_Get(&v, 1, MPI_LONG, 0, 3, 1, MPI_LONG, win));
        MTEST_CALL(MPI_Win_flush(0, win));
        v++;
        MTEST_CALL(MPI_Put(&v, 1, MPI_LONG, 0, 3, 1, MPI_LONG, win));
        MTEST_CALL(MPI_Win_flush(0, win));
        MTEST_CALL(MPI_Compare_and_swap(&zero, &want, &prev, MPI_LONG, 0, 2, win));
        MTEST_CALL(MPI_Win_unlock_all(win));
        MTEST_EQ("mutex owner", (long)want, prev);
    }
    MTEST_CALL(MPI_Barrier(MPI_COMM_WORLD));

    MTEST_CALL(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
    long res[4];
    MTEST_CALL(MPI_Get(res, 4, MPI_LONG, 0, 0, 4, MPI_LONG, win));
    MTEST_CALL(MPI_Win_unlock(0, win));
    MTEST_EQ("fetch_and_op counter", (long)n * ITERS, res[0]);
    MTEST_EQ("mutex released", 0L, res[2]);
    MTEST_EQ("guarded counter", (long)n * (ITERS / 4), res[3]);
    MTEST_CALL(MPI_Win_lock(MPI_LOCK_SHARED, n - 1, 0, win));
    MTEST_CALL(MPI_Fetch_and_op(NULL, &old, MPI_LONG, n - 1, 1, MPI_NO_OP, win));
    MTEST_CALL(MPI_Win_unlock(n - 1, win));
    MTEST_EQ("lock_all counter", (long)n * ITERS, old);

    /* MPI_REPLACE through Get_accumulate swaps values atomically: the set of values
     * fetched plus the final one is every rank's exactly once. */
    MTEST_CALL(MPI_Barrier(MPI_COMM_WORLD));
    if (r == 0) {
        MTEST_CALL(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
        base[0] = -1;
        MTEST_CALL(MPI_Win_unlock(0, win));
    }
    MTEST_CALL(MPI_Barrier(MPI_COMM_WORLD));
    long mine = r, prev = -2;
    MTEST_CALL(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
    MTEST_CALL(MPI_Get_accumulate(&mine, 1, MPI_LONG, &prev, 1, MPI_LONG, 0, 0, 1, MPI_LONG, MPI_REPLACE, win));
    MTEST_CALL(MPI_Win_unlock(0, win));
    long all[64];
    MTEST_CALL(MPI_Gather(&prev, 1, MPI_LONG, all, 1, MPI_LONG, 0, MPI_COMM_WORLD));
    MTEST_CALL(MPI_Barrier(MPI_COMM_WORLD));
    if (r == 0 && n <= 63) {
        MTEST_CALL(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
        MTEST_CALL(MPI_Get(&all[n], 1, MPI_LONG, 0, 0, 1, MPI_LONG, win));
        MTEST_CALL(MPI_Win_unlock(0, win));
        int count[65] = {0};
        for (int i = 0; i <= n; i++) {
            MTEST_CHECK(all[i] >= -1 && all[i] < n, "value %ld", all[i]);
            if (all[i] >= -1 && all[i] < n)
                count[all[i] + 1]++;
        }
        for (int v = 0; v <= n; v++)
            MTEST_EQ("each value once", 1, count[v]);
    }
    MTEST_CALL(MPI_Win_free(&win));
    return mtest_finalize();
}
