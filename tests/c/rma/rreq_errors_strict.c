/*
 * Erroneous MPI_Rput / MPI_Rget (and MPI_Put / MPI_Win_flush) calls under
 * MPI_ERRORS_RETURN on a shared-memory window: each fails with the right class and
 * changes nothing, whether or not the call would otherwise take oxmpi's short path.
 * Request-based operations outside any epoch, in a fence epoch, and to a target other
 * than the locked one (MPI_ERR_RMA_SYNC); a null request (MPI_ERR_ARG); a rank out of
 * range (MPI_ERR_RANK); a range past the window (MPI_ERR_RMA_RANGE); a negative count
 * (MPI_ERR_COUNT); origin and target of different sizes (MPI_ERR_TYPE); a flush of an
 * unlocked target (MPI_ERR_RMA_SYNC). Strict: MPICH 4.0.2 accepts some of these in a
 * fence epoch.
 */
#include "mtest.h"

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int r = mtest_rank(), n = mtest_size();
    int *base;
    MPI_Win win;
    MTEST_CALL(MPI_Win_allocate(4 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
    MTEST_CALL(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    for (int i = 0; i < 4; i++)
        base[i] = 7;
    int buf[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    MPI_Request q = MPI_REQUEST_NULL;
    MTEST_CALL(MPI_Barrier(MPI_COMM_WORLD));

    /* Outside any epoch. */
    MTEST_EXPECT_CLASS(MPI_ERR_RMA_SYNC, MPI_Rput(buf, 1, MPI_INT, 0, 0, 1, MPI_INT, win, &q));
    MTEST_EXPECT_CLASS(MPI_ERR_RMA_SYNC, MPI_Rget(buf, 1, MPI_INT, 0, 0, 1, MPI_INT, win, &q));
    MTEST_CHECK(q == MPI_REQUEST_NULL, "a failed call set the request");

    /* In a fence epoch: plain puts go, request-based ones do not. */
    MTEST_CALL(MPI_Win_fence(0, win));
    MTEST_EXPECT_CLASS(MPI_ERR_RMA_SYNC, MPI_Rput(buf, 1, MPI_INT, r, 0, 1, MPI_INT, win, &q));
    MTEST_EXPECT_CLASS(MPI_ERR_RMA_SYNC, MPI_Rget(buf, 1, MPI_INT, r, 0, 1, MPI_INT, win, &q));
    MTEST_CHECK(q == MPI_REQUEST_NULL, "a failed call set the request");
    MTEST_CALL(MPI_Win_fence(0, win));

    MTEST_CALL(MPI_Win_lock(MPI_LOCK_SHARED, r, 0, win));
    if (n > 1) {
        int other = (r + 1) % n;
        MTEST_EXPECT_CLASS(MPI_ERR_RMA_SYNC, MPI_Rput(buf, 1, MPI_INT, other, 0, 1, MPI_INT, win, &q));
        MTEST_EXPECT_CLASS(MPI_ERR_RMA_SYNC, MPI_Rget(buf, 1, MPI_INT, other, 0, 1, MPI_INT, win, &q));
        MTEST_EXPECT_CLASS(MPI_ERR_RMA_SYNC, MPI_Win_flush(other, win));
    }
    MTEST_EXPECT_CLASS(MPI_ERR_ARG, MPI_Rput(buf, 1, MPI_INT, r, 0, 1, MPI_INT, win, NULL));
    MTEST_EXPECT_CLASS(MPI_ERR_ARG, MPI_Rget(buf, 1, MPI_INT, r, 0, 1, MPI_INT, win, NULL));
    MTEST_EXPECT_CLASS(MPI_ERR_RANK, MPI_Rput(buf, 1, MPI_INT, n, 0, 1, MPI_INT, win, &q));
    MTEST_EXPECT_CLASS(MPI_ERR_RANK, MPI_Rget(buf, 1, MPI_INT, -5, 0, 1, MPI_INT, win, &q));
    MTEST_EXPECT_CLASS(MPI_ERR_RMA_RANGE, MPI_Rput(buf, 2, MPI_INT, r, 3, 2, MPI_INT, win, &q));
    MTEST_EXPECT_CLASS(MPI_ERR_RMA_RANGE, MPI_Rget(buf, 5, MPI_INT, r, 0, 5, MPI_INT, win, &q));
    MTEST_EXPECT_CLASS(MPI_ERR_COUNT, MPI_Rput(buf, -1, MPI_INT, r, 0, -1, MPI_INT, win, &q));
    MTEST_EXPECT_CLASS(MPI_ERR_TYPE, MPI_Rput(buf, 2, MPI_INT, r, 0, 1, MPI_INT, win, &q));
    MTEST_EXPECT_CLASS(MPI_ERR_TYPE, MPI_Rget(buf, 1, MPI_INT, r, 0, 5, MPI_BYTE, win, &q));
    MTEST_CHECK(q == MPI_REQUEST_NULL, "a failed call set the request");
    MTEST_EXPECT_CLASS(MPI_ERR_RANK, MPI_Win_flush(n, win));
    /* Nothing was written: the window still holds 7s. */
    int back[4] = {0};
    MTEST_CALL(MPI_Rget(back, 4, MPI_INT, r, 0, 4, MPI_INT, win, &q));
    MTEST_CALL(MPI_Wait(&q, MPI_STATUS_IGNORE));
    for (int i = 0; i < 4; i++)
        MTEST_EQ("window element after the failed calls", 7, back[i]);
    MTEST_CALL(MPI_Win_unlock(r, win));

    MTEST_CALL(MPI_Win_free(&win));
    return mtest_finalize();
}
