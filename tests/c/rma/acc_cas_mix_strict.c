/*
 * Mixed accumulate-family calls on one location from every rank: even ranks increment
 * a counter with a compare-and-swap loop (read with MPI_Fetch_and_op MPI_NO_OP, then
 * MPI_Compare_and_swap until it takes), odd ranks with MPI_Fetch_and_op MPI_SUM and
 * MPI_Accumulate MPI_SUM. oxmpi makes every accumulate-family call of one basic type
 * on one location atomic with all the others, whatever the operations (MPI 4.1 asks
 * it only for one operation and MPI_NO_OP): the final count is exact. A second
 * location, an int, runs MPI_BXOR and MPI_BOR against compare-and-swap loops that
 * set and clear bits of their own. Results are read after a flush (the message
 * transport delivers them then).
 */
#include "mtest.h"

#define ITERS 150

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int r = mtest_rank(), n = mtest_size();
    long *base;
    MPI_Win win;
    int target = n / 2;
    MTEST_CALL(MPI_Win_allocate(2 * sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
    MTEST_CALL(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    base[0] = 0;
    base[1] = 0;
    MTEST_CALL(MPI_Barrier(MPI_COMM_WORLD));
    long one = 1, zero = 0, old, got, want_cas = 0;
    int bit = 1 << (r % 31), ibits_old, izero = 0;
    MTEST_CALL(MPI_Win_lock_all(0, win));
    for (int i = 0; i < ITERS; i++) {
        if (r % 2 == 0) {
            MTEST_CALL(MPI_Fetch_and_op(&zero, &old, MPI_LONG, target, 0, MPI_NO_OP, win));
            MTEST_CALL(MPI_Win_flush(target, win));
            for (;;) {
                long next = old + 1;
                MTEST_CALL(MPI_Compare_and_swap(&next, &old, &got, MPI_LONG, target, 0, win));
                MTEST_CALL(MPI_Win_flush(target, win));
                if (got == old)
                    break;
                want_cas++;
                old = got;
            }
        } else if (i % 2 == 0) {
            MTEST_CALL(MPI_Fetch_and_op(&one, &old, MPI_LONG, target, 0, MPI_SUM, win));
        } else {
            MTEST_CALL(MPI_Accumulate(&one, 1, MPI_LONG, target, 0, 1, MPI_LONG, MPI_SUM, win));
        }
        /* The int at displacement 1 (in longs): bits toggled twice by BXOR, or set by
           BOR then cleared by a CAS loop; each rank owns bit r % 31 (ranks sharing a
           bit only happen past 31 ranks). */
        if (r % 2 == 1) {
            MTEST_CALL(MPI_Accumulate(&bit, 1, MPI_INT, target, 1, 1, MPI_INT, MPI_BXOR, win));
            MTEST_CALL(MPI_Accumulate(&bit, 1, MPI_INT, target, 1, 1, MPI_INT, MPI_BXOR, win));
        } else {
            MTEST_CALL(MPI_Fetch_and_op(&bit, &ibits_old, MPI_INT, target, 1, MPI_BOR, win));
            MTEST_CALL(MPI_Fetch_and_op(&izero, &ibits_old, MPI_INT, target, 1, MPI_NO_OP, win));
            MTEST_CALL(MPI_Win_flush(target, win));
            for (;;) {
                int cleared = ibits_old & ~bit, seen;
                MTEST_CHECK(ibits_old & bit, "rank %d's bit vanished (%#x)", r, ibits_old);
                MTEST_CALL(MPI_Compare_and_swap(&cleared, &ibits_old, &seen, MPI_INT, target, 1, win));
                MTEST_CALL(MPI_Win_flush(target, win));
                if (seen == ibits_old)
                    break;
                ibits_old = seen;
            }
        }
    }
    MTEST_CALL(MPI_Win_unlock_all(win));
    MTEST_CALL(MPI_Barrier(MPI_COMM_WORLD));
    if (r == target) {
        MTEST_CALL(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, target, 0, win));
        MTEST_EQ("counter", (long)n * ITERS, base[0]);
        int bits;
        memcpy(&bits, &base[1], sizeof bits);
        MTEST_EQ("bits", 0, bits);
        MTEST_CALL(MPI_Win_unlock(target, win));
    }
    (void)want_cas;
    MTEST_CALL(MPI_Win_free(&win));
    return mtest_finalize();
}
