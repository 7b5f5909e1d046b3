/*
 * Concurrent accumulates with one operation and one basic type on the same locations,
 * in every form: single-element MPI_Fetch_and_op, multi-element MPI_Accumulate,
 * MPI_Get_accumulate through a vector target type, and MPI_Fetch_and_op with
 * MPI_NO_OP reads (which must see whole values that never decrease). On shared-memory
 * windows the integer forms run with CPU atomic instructions and the double ones under
 * the target's mutex; both must be atomic per element. Exact final values.
 */
#include "mtest.h"

#define ITERS 150
#define SLOTS 4

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int r = mtest_rank(), n = mtest_size();
    long *base;
    MPI_Win win;
    /* SLOTS longs, then SLOTS doubles. */
    MTEST_CALL(MPI_Win_allocate(SLOTS * (sizeof(long) + sizeof(double)), 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
    MTEST_CALL(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    double *dbase = (double *)(base + SLOTS);
    for (int i = 0; i < SLOTS; i++) {
        base[i] = 0;
        dbase[i] = 0.0;
    }
    MPI_Datatype every_other;
    MTEST_CALL(MPI_Type_vector(SLOTS / 2, 1, 2, MPI_LONG, &every_other));
    MTEST_CALL(MPI_Type_commit(&every_other));
    MTEST_CALL(MPI_Barrier(MPI_COMM_WORLD));

    long one = 1, ones[SLOTS] = {1, 1, 1, 1}, old, olds[SLOTS / 2], last_seen = 0, nothing = 0;
    double done[SLOTS] = {1.0, 1.0, 1.0, 1.0};
    int target = n - 1;
    MTEST_CALL(MPI_Win_lock_all(0, win));
    for (int i = 0; i < ITERS; i++) {
        int s = (i + r) % SLOTS;
        MTEST_CALL(MPI_Fetch_and_op(&one, &old, MPI_LONG, target, s * sizeof(long), MPI_SUM, win));
        MTEST_CALL(MPI_Accumulate(ones, SLOTS, MPI_LONG, target, 0, SLOTS, MPI_LONG, MPI_SUM, win));
        MTEST_CALL(MPI_Get_accumulate(ones, SLOTS / 2, MPI_LONG, olds, SLOTS / 2, MPI_LONG, target, 0, 1, every_other, MPI_SUM, win));
        MTEST_CALL(MPI_Accumulate(done, SLOTS, MPI_DOUBLE, target, SLOTS * sizeof(long), SLOTS, MPI_DOUBLE, MPI_SUM, win));
        MTEST_CALL(MPI_Fetch_and_op(&nothing, &old, MPI_LONG, target, 0, MPI_NO_OP, win));
        MTEST_CALL(MPI_Win_flush(target, win));
        MTEST_CHECK(old >= last_seen, "slot 0 went back from %ld to %ld", last_seen, old);
        last_seen = old;
    }
    MTEST_CALL(MPI_Win_unlock_all(win));
    MTEST_CALL(MPI_Barrier(MPI_COMM_WORLD));
    if (r == target) {
        MTEST_CALL(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, target, 0, win));
        for (int s = 0; s < SLOTS; s++) {
            /* Fetch-and-op: ITERS per rank spread over the slots in turn. */
            long fop = 0;
            for (int o = 0; o < n; o++)
                for (int i = 0; i < ITERS; i++)
                    fop += (i + o) % SLOTS == s;
            long want = fop + (long)n * ITERS + (s % 2 == 0 ? (long)n * ITERS : 0);
            MTEST_EQ("integer slot", want, base[s]);
            MTEST_CHECK(dbase[s] == (double)n * ITERS, "double slot %d is %g", s, dbase[s]);
        }
        MTEST_CALL(MPI_Win_unlock(target, win));
    }
    MTEST_CALL(MPI_Type_free(&every_other));
    MTEST_CALL(MPI_Win_free(&win));
    return mtest_finalize();
}
