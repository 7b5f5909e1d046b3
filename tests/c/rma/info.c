/*
 * Window info hints: the hints given at creation (no_locks, accumulate_ordering,
 * accumulate_ops) are reported by MPI_Win_get_info, MPI_Win_set_info changes them, a
 * window made without info reports no_locks=false; fence epochs work on a no_locks
 * window.
 */
#include "mtest.h"
#include <string.h>

static void expect(MPI_Info info, const char *key, const char *want)
{
    char v[MPI_MAX_INFO_VAL + 1];
    int flag = 0;
    MTEST_CALL(MPI_Info_get(info, key, MPI_MAX_INFO_VAL, v, &flag));
    MTEST_CHECK(flag && strcmp(v, want) == 0, "info %s: %s, expected %s", key, flag ? v : "(not set)", want);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int r = mtest_rank(), n = mtest_size();
    MPI_Info in, used;
    MTEST_CALL(MPI_Info_create(&in));
    MTEST_CALL(MPI_Info_set(in, "no_locks", "true"));
    MTEST_CALL(MPI_Info_set(in, "accumulate_ordering", "none"));
    MTEST_CALL(MPI_Info_set(in, "accumulate_ops", "same_op"));
    int *base;
    MPI_Win win;
    MTEST_CALL(MPI_Win_allocate(4 * sizeof(int), sizeof(int), in, MPI_COMM_WORLD, &base, &win));
    MTEST_CALL(MPI_Info_free(&in));
    MTEST_CALL(MPI_Win_get_info(win, &used));
    expect(used, "no_locks", "true");
    expect(used, "accumulate_ordering", "none");
    expect(used, "accumulate_ops", "same_op");
    MTEST_CALL(MPI_Info_free(&used));

    *base = 0;
    int one = 1;
    MTEST_CALL(MPI_Win_fence(0, win));
    MTEST_CALL(MPI_Accumulate(&one, 1, MPI_INT, (r + 1) % n, 0, 1, MPI_INT, MPI_SUM, win));
    MTEST_CALL(MPI_Win_fence(0, win));
    MTEST_EQ("accumulate on a no_locks window", 1, *base);
    MTEST_CALL(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));

    MTEST_CALL(MPI_Info_create(&in));
    MTEST_CALL(MPI_Info_set(in, "no_locks", "false"));
    MTEST_CALL(MPI_Win_set_info(win, in));
    MTEST_CALL(MPI_Info_free(&in));
    MTEST_CALL(MPI_Win_get_info(win, &used));
    expect(used, "no_locks", "false");
    MTEST_CALL(MPI_Info_free(&used));
    MTEST_CALL(MPI_Win_free(&win));

    MTEST_CALL(MPI_Win_allocate(sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
    MTEST_CALL(MPI_Win_get_info(win, &used));
    expect(used, "no_locks", "false");
    MTEST_CALL(MPI_Info_free(&used));
    MTEST_CALL(MPI_Win_free(&win));
    return mtest_finalize();
}
