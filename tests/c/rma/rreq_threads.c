/*
 * MPI_THREAD_MULTIPLE: four threads per rank issue MPI_Rput / MPI_Rget, MPI_Put /
 * MPI_Get with MPI_Win_flush, and MPI_Fetch_and_op on one window at once, each on its
 * own slots of the right neighbour's memory, under one MPI_Win_lock_all (the calls
 * oxmpi carries out on its short path, which shares the window's state between the
 * threads). Every value put is read back by the thread that put it, and the counter
 * every thread of the left neighbour incremented holds their total at the end.
 */
#include "mtest.h"
#include <pthread.h>

#define THREADS 4
#define ROUNDS 300
#define SLOT 8 /* long longs per thread: its values, then its counter in slot 0 of the window */

static MPI_Win win;
static int right;
static int failures[THREADS];

static void *worker(void *arg)
{
    int t = (int)(long)arg;
    MPI_Aint at = 1 + t * SLOT;
    for (int i = 0; i < ROUNDS; i++) {
        long long v[3] = {1000LL * t + i, -i, (long long)t << 33}, back[3] = {0};
        MPI_Request q;
        if (i % 2 == 0) {
            if (MPI_Rput(v, 3, MPI_LONG_LONG, right, at, 24, MPI_BYTE, win, &q) != MPI_SUCCESS ||
                MPI_Wait(&q, MPI_STATUS_IGNORE) != MPI_SUCCESS ||
                MPI_Rget(back, 24, MPI_BYTE, right, at, 3, MPI_LONG_LONG, win, &q) != MPI_SUCCESS ||
                MPI_Wait(&q, MPI_STATUS_IGNORE) != MPI_SUCCESS)
                failures[t]++;
        } else {
            if (MPI_Put(v, 3, MPI_LONG_LONG, right, at, 3, MPI_LONG_LONG, win) != MPI_SUCCESS ||
                MPI_Win_flush(right, win) != MPI_SUCCESS ||
                MPI_Get(back, 3, MPI_LONG_LONG, right, at, 3, MPI_LONG_LONG, win) != MPI_SUCCESS ||
                MPI_Win_flush(right, win) != MPI_SUCCESS)
                failures[t]++;
        }
        if (back[0] != v[0] || back[1] != v[1] || back[2] != v[2])
            failures[t]++;
        long long one = 1, old;
        if (MPI_Fetch_and_op(&one, &old, MPI_LONG_LONG, right, 0, MPI_SUM, win) != MPI_SUCCESS)
            failures[t]++;
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int provided = -1;
    mtest_write_pidfile();
    if (MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS)
        return 1;
    MTEST_CALL(MPI_Comm_rank(MPI_COMM_WORLD, &mtest.rank));
    MTEST_CALL(MPI_Comm_size(MPI_COMM_WORLD, &mtest.size));
    mtest_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    mtest_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    if (provided < MPI_THREAD_MULTIPLE) {
        /* Nothing to test at a lower level. */
        return mtest_finalize();
    }
    int r = mtest.rank, n = mtest.size;
    long long *base;
    MTEST_CALL(MPI_Win_allocate((1 + THREADS * SLOT) * sizeof(long long), sizeof(long long), MPI_INFO_NULL,
                                MPI_COMM_WORLD, &base, &win));
    MTEST_CALL(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    memset(base, 0, (1 + THREADS * SLOT) * sizeof(long long));
    right = (r + 1) % n;
    MTEST_CALL(MPI_Barrier(MPI_COMM_WORLD));
    MTEST_CALL(MPI_Win_lock_all(0, win));
    pthread_t th[THREADS];
    for (long t = 0; t < THREADS; t++)
        MTEST_CHECK(pthread_create(&th[t], NULL, worker, (void *)t) == 0, "pthread_create");
    for (int t = 0; t < THREADS; t++)
        pthread_join(th[t], NULL);
    MTEST_CALL(MPI_Win_unlock_all(win));
    for (int t = 0; t < THREADS; t++)
        MTEST_EQ("failed calls or wrong values of a thread", 0, failures[t]);
    MTEST_CALL(MPI_Barrier(MPI_COMM_WORLD));
    long long count = -1;
    MTEST_CALL(MPI_Win_lock(MPI_LOCK_SHARED, r, 0, win));
    MTEST_CALL(MPI_Get(&count, 1, MPI_LONG_LONG, r, 0, 1, MPI_LONG_LONG, win));
    MTEST_CALL(MPI_Win_unlock(r, win));
    MTEST_EQ("counter", (long long)THREADS * ROUNDS, count);
    MTEST_CALL(MPI_Win_free(&win));
    return mtest_finalize();
}
