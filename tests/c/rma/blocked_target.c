/*
 * Passive targets that sit in blocking calls: rank 0 waits in MPI_Recv while every
 * other rank locks it exclusively and accumulates into its window (strided target
 * datatype), then reads back with MPI_Get through a vector type; the last rank sends
 * the message rank 0 waits for only after its own epoch closed, so with the message
 * transport (OXMPI_RMA_TRANSPORT=am) rank 0 serves all requests from inside MPI_Recv.
 * Then everyone targets the last rank, which waits in MPI_Barrier. Exact values.
 */
#include "mtest.h"

#define N 16

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int r = mtest_rank(), n = mtest_size();
    int *base;
    MPI_Win win;
    MTEST_CALL(MPI_Win_allocate(2 * N * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
    MTEST_CALL(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    for (int i = 0; i < 2 * N; i++)
        base[i] = 0;
    MPI_Datatype strided;
    MTEST_CALL(MPI_Type_vector(N, 1, 2, MPI_INT, &strided));
    MTEST_CALL(MPI_Type_commit(&strided));
    MTEST_CALL(MPI_Barrier(MPI_COMM_WORLD));

    int vals[N], got[N];
    for (int i = 0; i < N; i++)
        vals[i] = r * 100 + i;
    if (r == 0) {
        int token = 0;
        if (n > 1)
            MTEST_CALL(MPI_Recv(&token, 1, MPI_INT, n - 1, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        MTEST_EQ("token", n > 1 ? 42 : 0, token);
    } else {
        MTEST_CALL(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
        /* Even slots get the sum of every origin's values. */
        MTEST_CALL(MPI_Accumulate(vals, N, MPI_INT, 0, 0, 1, strided, MPI_SUM, win));
        MTEST_CALL(MPI_Win_unlock(0, win));
        if (r == n - 1) {
            /* Wait until every other origin is done before waking rank 0. */
            for (int o = 1; o < n - 1; o++)
                MTEST_CALL(MPI_Recv(NULL, 0, MPI_INT, o, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            int token = 42;
            MTEST_CALL(MPI_Send(&token, 1, MPI_INT, 0, 7, MPI_COMM_WORLD));
        } else {
            MTEST_CALL(MPI_Send(NULL, 0, MPI_INT, n - 1, 8, MPI_COMM_WORLD));
        }
    }
    MTEST_CALL(MPI_Barrier(MPI_COMM_WORLD));
    /* Everyone reads rank 0's even slots (strided at the target, contiguous here). */
    MTEST_CALL(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
    MTEST_CALL(MPI_Get(got, N, MPI_INT, 0, 0, 1, strided, win));
    MTEST_CALL(MPI_Win_unlock(0, win));
    for (int i = 0; i < N; i++) {
        int want = 0;
        for (int o = 1; o < n; o++)
            want += o * 100 + i;
        MTEST_EQ("summed slot", want, got[i]);
    }

    /* The last rank waits in a barrier; the others put into its odd slots. */
    int last = n - 1;
    if (r != last) {
        MTEST_CALL(MPI_Win_lock(MPI_LOCK_SHARED, last, 0, win));
        int v = r + 1000;
        MTEST_CALL(MPI_Put(&v, 1, MPI_INT, last, 2 * (r % N) + 1, 1, MPI_INT, win));
        MTEST_CALL(MPI_Win_unlock(last, win));
    }
    MTEST_CALL(MPI_Barrier(MPI_COMM_WORLD));
    if (r == last) {
        MTEST_CALL(MPI_Win_lock(MPI_LOCK_SHARED, last, 0, win));
        for (int o = 0; o < n - 1 && o < N; o++)
            MTEST_EQ("put by a waiting target", o + 1000, base[2 * o + 1]);
        MTEST_CALL(MPI_Win_unlock(last, win));
    }
    MTEST_CALL(MPI_Type_free(&strided));
    MTEST_CALL(MPI_Win_free(&win));
    return mtest_finalize();
}
