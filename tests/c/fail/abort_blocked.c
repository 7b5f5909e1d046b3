/*
 * Failure test (tests/c/failures, run with tests/c/run --failures): the last rank calls
 * MPI_Abort(MPI_COMM_WORLD, 7) while every other rank is blocked in MPI_Recv.  Expected: the
 * launcher exits with status 7 within seconds and no process of the job remains.
 */
#include "mtest.h"

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int rank = mtest_rank(), size = mtest_size(), x;
    mtest_barrier(); /* every rank is up (and has written its pid) */
    if (rank == size - 1) {
        mtest_sleep_ms(300); /* let the others block */
        fprintf(stderr, "rank %d: calling MPI_Abort(MPI_COMM_WORLD, 7)\n", rank);
        MPI_Abort(MPI_COMM_WORLD, 7);
        fprintf(stderr, "rank %d: MPI_Abort returned\n", rank);
        return 1;
    }
    MPI_Recv(&x, 1, MPI_INT, MPI_ANY_SOURCE, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    fprintf(stderr, "rank %d: MPI_Recv returned, but nothing was sent\n", rank);
    return 1;
}
