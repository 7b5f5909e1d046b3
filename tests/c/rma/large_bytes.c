/*
 * Large puts and gets (1, 2 and 4 MiB, and 4 MiB at displacement 8)
 * checked byte for byte, between contiguous buffers, on windows from MPI_Win_allocate
 * and MPI_Win_create: each rank puts a pattern of its own into its right neighbour's
 * window under a shared lock and flush, gets it back, and after a barrier checks what
 * its left neighbour put into its own window (with a get of its own).
 */
#include "mtest.h"

#define MAXB ((4u << 20) + 8)

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int r = mtest_rank(), n = mtest_size();
    int right = (r + 1) % n, left = (r + n - 1) % n;
    unsigned char *src = mtest_malloc(MAXB), *back = mtest_malloc(MAXB), *mine = mtest_malloc(MAXB);
    static const size_t sizes[] = {1u << 20, 2u << 20, 4u << 20, 4u << 20};
    for (int flavor = 0; flavor < 2; flavor++) {
        MPI_Win win;
        if (flavor == 0) {
            unsigned char *mem;
            MTEST_CALL(MPI_Win_allocate(MAXB, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
        } else {
            MTEST_CALL(MPI_Win_create(mine, MAXB, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
        }
        MTEST_CALL(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
            size_t len = sizes[s], at = s == 3 ? 8 : 0;
            uint64_t seed = 1000 * (uint64_t)flavor + 10 * s + (uint64_t)r;
            mtest_fill(src, len, seed);
            memset(back, 0, len);
            MTEST_CALL(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win));
            MTEST_CALL(MPI_Put(src, (int)len, MPI_BYTE, right, (MPI_Aint)at, (int)len, MPI_BYTE, win));
            MTEST_CALL(MPI_Win_flush(right, win));
            MTEST_CALL(MPI_Get(back, (int)len, MPI_BYTE, right, (MPI_Aint)at, (int)len, MPI_BYTE, win));
            MTEST_CALL(MPI_Win_unlock(right, win));
            mtest_verify(back, len, seed, "data got back from the right neighbour");
            MTEST_CALL(MPI_Barrier(MPI_COMM_WORLD));
            /* Read through MPI: MPICH 4.0.2 shows stale bytes to plain loads here. */
            memset(back, 0, len);
            MTEST_CALL(MPI_Win_lock(MPI_LOCK_SHARED, r, 0, win));
            MTEST_CALL(MPI_Get(back, (int)len, MPI_BYTE, r, (MPI_Aint)at, (int)len, MPI_BYTE, win));
            MTEST_CALL(MPI_Win_unlock(r, win));
            mtest_verify(back, len, 1000 * (uint64_t)flavor + 10 * s + (uint64_t)left, "window data from the left neighbour");
            MTEST_CALL(MPI_Barrier(MPI_COMM_WORLD));
        }
        MTEST_CALL(MPI_Win_free(&win));
    }
    free(src);
    free(back);
    free(mine);
    return mtest_finalize();
}
