/*
 * The large-count (MPI-4 `_c`) forms: MPI_Win_allocate_c, MPI_Win_create_c,
 * MPI_Win_allocate_shared_c with MPI_Win_shared_query_c, and MPI_Put_c, MPI_Get_c,
 * MPI_Accumulate_c, MPI_Get_accumulate_c, MPI_Rput_c, MPI_Rget_c, MPI_Raccumulate_c,
 * MPI_Rget_accumulate_c; data checked.
 */
#include "mtest.h"

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int r = mtest_rank(), n = mtest_size();
    int right = (r + 1) % n, left = (r + n - 1) % n;
    long *base;
    MPI_Win win;
    MTEST_CALL(MPI_Win_allocate_c(8 * sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
    MTEST_CALL(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    for (int i = 0; i < 8; i++)
        base[i] = 0;
    long v[2] = {10 + r, 20 + r}, got[2] = {-1, -1}, old[2] = {-1, -1};
    MTEST_CALL(MPI_Win_fence(0, win));
    MTEST_CALL(MPI_Put_c(v, (MPI_Count)2, MPI_LONG, right, 0, (MPI_Count)2, MPI_LONG, win));
    MTEST_CALL(MPI_Accumulate_c(v, (MPI_Count)2, MPI_LONG, right, 2, (MPI_Count)2, MPI_LONG, MPI_SUM, win));
    MTEST_CALL(MPI_Win_fence(0, win));
    MTEST_CALL(MPI_Get_c(got, (MPI_Count)2, MPI_LONG, left, 0, (MPI_Count)2, MPI_LONG, win));
    MTEST_CALL(MPI_Get_accumulate_c(v, (MPI_Count)2, MPI_LONG, old, (MPI_Count)2, MPI_LONG, right, 2, (MPI_Count)2, MPI_LONG, MPI_SUM, win));
    MTEST_CALL(MPI_Win_fence(0, win));
    int ll = (left + n - 1) % n;
    MTEST_EQ("put_c/get_c", 10L + ll, got[0]);
    MTEST_EQ("put_c/get_c", 20L + ll, got[1]);
    MTEST_EQ("accumulate_c", 10L + r, old[0]);
    MTEST_EQ("get_accumulate_c", 2 * (20L + left), base[3]);

    MPI_Request q[4];
    long one = 1, before = -1, seen = -1;
    MTEST_CALL(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
    MTEST_CALL(MPI_Barrier(MPI_COMM_WORLD));
    MTEST_CALL(MPI_Win_lock_all(0, win));
    MTEST_CALL(MPI_Rput_c(&one, (MPI_Count)1, MPI_LONG, right, 4, (MPI_Count)1, MPI_LONG, win, &q[0]));
    MTEST_CALL(MPI_Raccumulate_c(&one, (MPI_Count)1, MPI_LONG, 0, 5, (MPI_Count)1, MPI_LONG, MPI_SUM, win, &q[1]));
    MTEST_CALL(MPI_Rget_accumulate_c(&one, (MPI_Count)1, MPI_LONG, &before, (MPI_Count)1, MPI_LONG, 0, 6, (MPI_Count)1, MPI_LONG, MPI_SUM, win, &q[2]));
    MTEST_CALL(MPI_Waitall(3, q, MPI_STATUSES_IGNORE));
    MTEST_CALL(MPI_Win_unlock_all(win));
    MTEST_CALL(MPI_Barrier(MPI_COMM_WORLD));
    MTEST_CALL(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
    long sums[2];
    MTEST_CALL(MPI_Rget_c(sums, (MPI_Count)2, MPI_LONG, 0, 5, (MPI_Count)2, MPI_LONG, win, &q[3]));
    MTEST_CALL(MPI_Wait(&q[3], MPI_STATUS_IGNORE));
    MTEST_CALL(MPI_Win_unlock(0, win));
    MTEST_EQ("raccumulate_c", (long)n, sums[0]);
    MTEST_EQ("rget_accumulate_c", (long)n, sums[1]);
    MTEST_CHECK(before >= 0 && before < n, "fetched %ld", before);
    MTEST_CALL(MPI_Win_lock(MPI_LOCK_SHARED, r, 0, win));
    seen = base[4];
    MTEST_CALL(MPI_Win_unlock(r, win));
    MTEST_EQ("rput_c", 1L, seen);
    MTEST_CALL(MPI_Win_free(&win));

    char buf[16];
    MTEST_CALL(MPI_Win_create_c(buf, 16, 4, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    MTEST_CALL(MPI_Win_free(&win));

    double *sh;
    MTEST_CALL(MPI_Win_allocate_shared_c(2 * sizeof(double), sizeof(double), MPI_INFO_NULL, MPI_COMM_SELF, &sh, &win));
    MPI_Aint size, unit;
    double *q0;
    MTEST_CALL(MPI_Win_shared_query_c(win, 0, &size, &unit, &q0));
    MTEST_EQ("shared_query_c size", (long)(2 * sizeof(double)), (long)size);
    MTEST_EQ("shared_query_c disp_unit", (long)sizeof(double), (long)unit);
    MTEST_CHECK(q0 == sh, "shared_query_c base %p, expected %p", (void *)q0, (void *)sh);
    MTEST_CALL(MPI_Win_free(&win));
    return mtest_finalize();
}
