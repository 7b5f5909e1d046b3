/*
 * Large puts and gets (MiBs, past the sizes that travel inside one request message on
 * the message transport): contiguous and strided target layouts, MPI_Win_flush_local
 * before reusing the origin buffer (a put's data may be overwritten then, a get's data
 * is in), request-based forms, every rank to its neighbours at once. (Ranges past the
 * window are refused before any data moves: badargs_strict.)
 */
#include "mtest.h"
#include <stdlib.h>

#define N (256 * 1024) /* doubles: 2 MiB */

static double val(int rank, int i, int round) { return rank * 1e7 + i + round * 0.5; }

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int r = mtest_rank(), n = mtest_size();
    int right = (r + 1) % n, left = (r + n - 1) % n;
    double *base, *buf = malloc(2 * N * sizeof(double)), *got = malloc(N * sizeof(double));
    MTEST_CHECK(buf && got, "out of memory");
    MPI_Win win;
    MTEST_CALL(MPI_Win_allocate(2 * N * sizeof(double), sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
    MTEST_CALL(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    for (int i = 0; i < 2 * N; i++)
        base[i] = -1.0;
    MPI_Datatype stride; /* every other double: N/2 pieces at the target */
    MTEST_CALL(MPI_Type_vector(N / 2, 1, 2, MPI_DOUBLE, &stride));
    MTEST_CALL(MPI_Type_commit(&stride));
    MTEST_CALL(MPI_Barrier(MPI_COMM_WORLD));

    /* 1. A contiguous put to the right neighbour; the origin buffer is reused after
     * flush_local, so the target must hold what was there before. */
    MTEST_CALL(MPI_Win_lock_all(0, win));
    for (int i = 0; i < N; i++)
        buf[i] = val(r, i, 0);
    MTEST_CALL(MPI_Put(buf, N, MPI_DOUBLE, right, 0, N, MPI_DOUBLE, win));
    MTEST_CALL(MPI_Win_flush_local(right, win));
    for (int i = 0; i < N; i++)
        buf[i] = -2.0;
    /* 2. A strided put into the second half: N/2 doubles to every other slot. */
    for (int i = 0; i < N / 2; i++)
        buf[N + i] = val(r, i, 1);
    MTEST_CALL(MPI_Put(buf + N, N / 2, MPI_DOUBLE, right, N, 1, stride, win));
    MTEST_CALL(MPI_Win_flush_local_all(win));
    for (int i = 0; i < N / 2; i++)
        buf[N + i] = -3.0;
    MTEST_CALL(MPI_Win_flush_all(win));
    MTEST_CALL(MPI_Win_unlock_all(win));
    MTEST_CALL(MPI_Barrier(MPI_COMM_WORLD));
    int bad = 0;
    for (int i = 0; i < N && bad < 5; i++)
        if (base[i] != val(left, i, 0)) {
            MTEST_CHECK(0, "contiguous put: slot %d holds %g, expected %g", i, base[i], val(left, i, 0));
            bad++;
        }
    for (int i = 0; i < N && bad < 5; i++) {
        double want = i % 2 ? -1.0 : val(left, i / 2, 1);
        if (base[N + i] != want) {
            MTEST_CHECK(0, "strided put: slot %d holds %g, expected %g", N + i, base[N + i], want);
            bad++;
        }
    }
    MTEST_CALL(MPI_Barrier(MPI_COMM_WORLD));

    /* 3. A contiguous get from the left neighbour: in after flush_local. */
    MTEST_CALL(MPI_Win_lock(MPI_LOCK_SHARED, left, 0, win));
    for (int i = 0; i < N; i++)
        got[i] = 0;
    MTEST_CALL(MPI_Get(got, N, MPI_DOUBLE, left, 0, N, MPI_DOUBLE, win));
    MTEST_CALL(MPI_Win_flush_local(left, win));
    int lleft = (left + n - 1) % n;
    for (int i = 0; i < N && bad < 5; i++)
        if (got[i] != val(lleft, i, 0)) {
            MTEST_CHECK(0, "contiguous get: element %d is %g, expected %g", i, got[i], val(lleft, i, 0));
            bad++;
        }
    /* 4. A strided get: the even slots of the second half. */
    MTEST_CALL(MPI_Get(got, N / 2, MPI_DOUBLE, left, N, 1, stride, win));
    MTEST_CALL(MPI_Win_flush(left, win));
    for (int i = 0; i < N / 2 && bad < 5; i++)
        if (got[i] != val(lleft, i, 1)) {
            MTEST_CHECK(0, "strided get: element %d is %g, expected %g", i, got[i], val(lleft, i, 1));
            bad++;
        }
    MTEST_CALL(MPI_Win_unlock(left, win));
    MTEST_CALL(MPI_Barrier(MPI_COMM_WORLD));

    /* 5. Request-based forms: Rput to the right, Rget from the left, at once. */
    MTEST_CALL(MPI_Win_lock_all(0, win));
    for (int i = 0; i < N; i++)
        buf[i] = val(r, i, 2);
    MPI_Request q[2];
    MTEST_CALL(MPI_Rput(buf, N, MPI_DOUBLE, right, 0, N, MPI_DOUBLE, win, &q[0]));
    MTEST_CALL(MPI_Rget(got, N / 2, MPI_DOUBLE, left, N, 1, stride, win, &q[1]));
    MTEST_CALL(MPI_Waitall(2, q, MPI_STATUSES_IGNORE));
    MTEST_CALL(MPI_Win_unlock_all(win));
    MTEST_CALL(MPI_Barrier(MPI_COMM_WORLD));
    for (int i = 0; i < N && bad < 5; i++)
        if (base[i] != val(left, i, 2)) {
            MTEST_CHECK(0, "rput: slot %d holds %g, expected %g", i, base[i], val(left, i, 2));
            bad++;
        }
    for (int i = 0; i < N / 2 && bad < 5; i++)
        if (got[i] != val(lleft, i, 1)) {
            MTEST_CHECK(0, "rget: element %d is %g, expected %g", i, got[i], val(lleft, i, 1));
            bad++;
        }

    MTEST_CALL(MPI_Type_free(&stride));
    MTEST_CALL(MPI_Win_free(&win));
    free(buf);
    free(got);
    return mtest_finalize();
}
