/*
 * Failure test: the last rank returns from main with status 0 without calling MPI_Finalize
 * while the other ranks wait for a message from it.  The standard leaves the effect on the
 * other processes undefined; oxmpi's launcher treats it as a failed job: it must end with a
 * non-zero status within seconds, naming the rank, with no process left.
 */
#include "mtest.h"

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int rank = mtest_rank(), size = mtest_size(), x;
    mtest_barrier();
    if (rank == size - 1) {
        mtest_sleep_ms(300);
        fprintf(stderr, "rank %d: exiting with status 0 without MPI_Finalize\n", rank);
        return 0;
    }
    MPI_Recv(&x, 1, MPI_INT, size - 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    fprintf(stderr, "rank %d: MPI_Recv returned, but nothing was sent\n", rank);
    return 1;
}
