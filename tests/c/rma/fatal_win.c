/*
 * Failure test: a window's default error handler is MPI_ERRORS_ARE_FATAL even when
 * MPI_COMM_WORLD has MPI_ERRORS_RETURN (mtest_init sets it): a put to a rank outside
 * the window ends the job, naming MPI_Put and MPI_ERR_RANK.
 */
#include "mtest.h"

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int n = mtest_size(), *base;
    MPI_Win win;
    MTEST_CALL(MPI_Win_allocate(sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
    MTEST_CALL(MPI_Win_fence(0, win));
    MPI_Put(base, 1, MPI_INT, n, 0, 1, MPI_INT, win);
    fprintf(stderr, "MPI_Put to rank %d returned\n", n);
    return 1;
}
