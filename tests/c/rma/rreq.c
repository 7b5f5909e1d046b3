/*
 * Request-based operations in passive-target epochs: MPI_Rput, MPI_Rget,
 * MPI_Raccumulate, MPI_Rget_accumulate completed with MPI_Wait / MPI_Waitall /
 * MPI_Test; data checked after the unlock.
 */
#include "mtest.h"

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
    int right = (r + 1) % n, left = (r + n - 1) % n;
    long v = 100 + r, got = -1, one = 1, before = -1;
    MPI_Request req[3];
    MTEST_CALL(MPI_Win_lock_all(0, win));
    MTEST_CALL(MPI_Rput(&v, 1, MPI_LONG, right, 0, 1, MPI_LONG, win, &req[0]));
    MTEST_CALL(MPI_Raccumulate(&one, 1, MPI_LONG, 0, 1, 1, MPI_LONG, MPI_SUM, win, &req[1]));
    MTEST_CALL(MPI_Rget_accumulate(&one, 1, MPI_LONG, &before, 1, MPI_LONG, 0, 2, 1, MPI_LONG, MPI_SUM, win, &req[2]));
    MTEST_CALL(MPI_Waitall(3, req, MPI_STATUSES_IGNORE));
    for (int i = 0; i < 3; i++)
        MTEST_CHECK(req[i] == MPI_REQUEST_NULL, "request %d not freed", i);
    MTEST_CHECK(before >= 0 && before < n, "fetched %ld", before);
    MTEST_CALL(MPI_Win_unlock_all(win));
    MTEST_CALL(MPI_Barrier(MPI_COMM_WORLD));

    MTEST_CALL(MPI_Win_lock(MPI_LOCK_SHARED, left, 0, win));
    MPI_Request q;
    MTEST_CALL(MPI_Rget(&got, 1, MPI_LONG, left, 0, 1, MPI_LONG, win, &q));
    int flag = 0;
    while (!flag)
        MTEST_CALL(MPI_Test(&q, &flag, MPI_STATUS_IGNORE));
    MTEST_CALL(MPI_Win_unlock(left, win));
    /* left's slot 0 holds what its left neighbour put. */
    MTEST_EQ("rput then rget", 100L + (left + n - 1) % n, got);
    MTEST_CALL(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
    long sums[2];
    MTEST_CALL(MPI_Rget(sums, 2, MPI_LONG, 0, 1, 2, MPI_LONG, win, &q));
    MTEST_CALL(MPI_Wait(&q, MPI_STATUS_IGNORE));
    MTEST_CALL(MPI_Win_unlock(0, win));
    MTEST_EQ("raccumulate", (long)n, sums[0]);
    MTEST_EQ("rget_accumulate", (long)n, sums[1]);
    MTEST_CALL(MPI_Win_free(&win));
    return mtest_finalize();
}
