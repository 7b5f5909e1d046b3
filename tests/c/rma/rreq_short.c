/*
 * MPI_Rput and MPI_Rget of predefined contiguous types in passive-target epochs, the
 * calls oxmpi carries out on its short path on shared memory: every length from 1 to
 * 17 bytes and some longer, byte and typed buffers of the same total size, several
 * requests outstanding at once, completion by MPI_Wait, MPI_Test, MPI_Waitall and
 * MPI_Testall (each request becomes MPI_REQUEST_NULL), MPI_PROC_NULL as target, and
 * transfers of more than 512 KiB at odd lengths and offsets (oxmpi's vector-loop copy),
 * by MPI_Rput/MPI_Rget and by MPI_Put/MPI_Get. Every byte is read back with a get and
 * checked, as are the bytes around each target range.
 */
#include "mtest.h"

#define SMALL 4096
#define BIG (640 * 1024)
#define WIN (SMALL + BIG + 64)

static void wait_or_test(MPI_Request *q, int how)
{
    if (how % 2 == 0) {
        MTEST_CALL(MPI_Wait(q, MPI_STATUS_IGNORE));
    } else {
        int flag = 0;
        while (!flag)
            MTEST_CALL(MPI_Test(q, &flag, MPI_STATUS_IGNORE));
    }
    MTEST_CHECK(*q == MPI_REQUEST_NULL, "request not freed by its completion");
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int r = mtest_rank(), n = mtest_size();
    unsigned char *base;
    MPI_Win win;
    MTEST_CALL(MPI_Win_allocate(WIN, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
    MTEST_CALL(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    memset(base, 0xEE, WIN);
    int right = (r + 1) % n;
    unsigned char *src = malloc(BIG + 64), *dst = malloc(BIG + 64);
    MTEST_CHECK(src && dst, "out of memory");
    MTEST_CALL(MPI_Barrier(MPI_COMM_WORLD));

    /* Small lengths, one at a time, each at its own offset: put, then get back. */
    static const int lens[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 24, 31, 32, 33, 64, 100, 1000};
    const int nl = (int)(sizeof lens / sizeof lens[0]);
    MTEST_CALL(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win));
    int off = 0;
    for (int i = 0; i < nl; i++) {
        int len = lens[i];
        MPI_Request q;
        mtest_fill(src, (size_t)len, 1000u * (unsigned)r + (unsigned)len);
        memset(dst, 0, (size_t)len + 2);
        MTEST_CALL(MPI_Rput(src, len, MPI_BYTE, right, off, len, MPI_BYTE, win, &q));
        wait_or_test(&q, i);
        MTEST_CALL(MPI_Rget(dst + 1, len, MPI_BYTE, right, off, len, MPI_BYTE, win, &q));
        wait_or_test(&q, i + 1);
        mtest_verify(dst + 1, (size_t)len, 1000u * (unsigned)r + (unsigned)len, "rput then rget");
        MTEST_EQ("byte before the rget buffer", 0, dst[0]);
        MTEST_EQ("byte after the rget buffer", 0, dst[len + 1]);
        off += len + 1; /* one untouched byte between ranges */
    }
    /* The untouched bytes between the ranges. */
    MPI_Request q;
    MTEST_CALL(MPI_Rget(dst, off, MPI_BYTE, right, 0, off, MPI_BYTE, win, &q));
    MTEST_CALL(MPI_Wait(&q, MPI_STATUS_IGNORE));
    for (int i = 0, at = 0; i < nl; i++) {
        at += lens[i];
        MTEST_EQ("gap byte", 0xEE, dst[at]);
        at++;
    }

    /* Typed buffers of the same total size as the bytes at the target, several
       requests outstanding, completed together. */
    int ints[4] = {1 + r, -2, 3 << 20, 0x7fffffff}, ints_back[4] = {0};
    double dbl = 2.5 + r, dbl_back = 0;
    long long ll[2] = {-1LL - r, 1LL << 40}, ll_back[2] = {0};
    MPI_Request qs[3];
    MTEST_CALL(MPI_Rput(ints, 4, MPI_INT, right, 2048, 16, MPI_BYTE, win, &qs[0]));
    MTEST_CALL(MPI_Rput(&dbl, 1, MPI_DOUBLE, right, 2064, 8, MPI_BYTE, win, &qs[1]));
    MTEST_CALL(MPI_Rput(ll, 16, MPI_BYTE, right, 2072, 2, MPI_LONG_LONG, win, &qs[2]));
    MTEST_CALL(MPI_Waitall(3, qs, MPI_STATUSES_IGNORE));
    for (int i = 0; i < 3; i++)
        MTEST_CHECK(qs[i] == MPI_REQUEST_NULL, "request %d not freed by MPI_Waitall", i);
    MTEST_CALL(MPI_Rget(ints_back, 16, MPI_BYTE, right, 2048, 4, MPI_INT, win, &qs[0]));
    MTEST_CALL(MPI_Rget(&dbl_back, 8, MPI_BYTE, right, 2064, 1, MPI_DOUBLE, win, &qs[1]));
    MTEST_CALL(MPI_Rget(ll_back, 2, MPI_LONG_LONG, right, 2072, 16, MPI_BYTE, win, &qs[2]));
    int all = 0;
    while (!all)
        MTEST_CALL(MPI_Testall(3, qs, &all, MPI_STATUSES_IGNORE));
    for (int i = 0; i < 3; i++)
        MTEST_CHECK(qs[i] == MPI_REQUEST_NULL, "request %d not freed by MPI_Testall", i);
    for (int i = 0; i < 4; i++)
        MTEST_EQ("int back", ints[i], ints_back[i]);
    MTEST_CHECK(dbl_back == dbl, "double back %g, expected %g", dbl_back, dbl);
    MTEST_CHECK(ll_back[0] == ll[0] && ll_back[1] == ll[1], "long long back %lld %lld", ll_back[0], ll_back[1]);

    /* MPI_PROC_NULL: nothing moves, the request completes. */
    MTEST_CALL(MPI_Rput(src, 8, MPI_BYTE, MPI_PROC_NULL, 0, 8, MPI_BYTE, win, &q));
    MTEST_CALL(MPI_Wait(&q, MPI_STATUS_IGNORE));
    MTEST_CALL(MPI_Rget(src, 8, MPI_BYTE, MPI_PROC_NULL, 0, 8, MPI_BYTE, win, &q));
    MTEST_CALL(MPI_Wait(&q, MPI_STATUS_IGNORE));
    MTEST_CALL(MPI_Win_unlock(right, win));
    MTEST_CALL(MPI_Barrier(MPI_COMM_WORLD));

    /* Large transfers: odd length at an odd offset by request, an aligned one by
       MPI_Put/MPI_Get, under MPI_Win_lock_all. */
    MTEST_CALL(MPI_Win_lock_all(0, win));
    size_t big = BIG - 61;
    mtest_fill(src + 3, big, 77u + (unsigned)r);
    memset(dst, 0, BIG + 64);
    MTEST_CALL(MPI_Rput(src + 3, (int)big, MPI_BYTE, right, SMALL + 5, (int)big, MPI_BYTE, win, &q));
    MTEST_CALL(MPI_Wait(&q, MPI_STATUS_IGNORE));
    MTEST_CALL(MPI_Rget(dst + 1, (int)big, MPI_BYTE, right, SMALL + 5, (int)big, MPI_BYTE, win, &q));
    MTEST_CALL(MPI_Wait(&q, MPI_STATUS_IGNORE));
    mtest_verify(dst + 1, big, 77u + (unsigned)r, "large rput then rget");
    MTEST_EQ("byte before the large rget buffer", 0, dst[0]);
    MTEST_EQ("byte after the large rget buffer", 0, dst[big + 1]);
    MTEST_CALL(MPI_Get(dst, 8, MPI_BYTE, right, SMALL - 3, 8, MPI_BYTE, win));
    MTEST_CALL(MPI_Win_flush(right, win));
    MTEST_EQ("byte before the large range", 0xEE, dst[7]);
    mtest_fill(src, BIG, 99u + (unsigned)r);
    MTEST_CALL(MPI_Put(src, BIG / 4, MPI_INT, right, SMALL, BIG, MPI_BYTE, win));
    MTEST_CALL(MPI_Win_flush(right, win));
    memset(dst, 0, BIG);
    MTEST_CALL(MPI_Get(dst, BIG, MPI_BYTE, right, SMALL, BIG / 8, MPI_DOUBLE, win));
    MTEST_CALL(MPI_Win_flush(right, win));
    mtest_verify(dst, BIG, 99u + (unsigned)r, "large put then get");
    MTEST_CALL(MPI_Win_unlock_all(win));
    MTEST_CALL(MPI_Barrier(MPI_COMM_WORLD));

    MTEST_CALL(MPI_Win_free(&win));
    free(src);
    free(dst);
    return mtest_finalize();
}
