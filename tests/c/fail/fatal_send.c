/*
 * Failure test: with the default error handler MPI_ERRORS_ARE_FATAL, rank 0 sends to rank
 * `size` (invalid) while the other ranks wait for a message from rank 0.  Expected: the job
 * ends with a non-zero status within seconds, the output names the failing call (MPI_Send),
 * and no process of the job remains.
 */
#include "mtest.h"

int main(int argc, char **argv)
{
    mtest_init_plain(&argc, &argv); /* keeps MPI_ERRORS_ARE_FATAL */
    int rank = mtest_rank(), size = mtest_size(), x = 1;
    mtest_barrier();
    if (rank == 0) {
        mtest_sleep_ms(300);
        MPI_Send(&x, 1, MPI_INT, size, 1, MPI_COMM_WORLD);
        fprintf(stderr, "rank 0: MPI_Send to rank %d returned under MPI_ERRORS_ARE_FATAL\n", size);
        return 1;
    }
    MPI_Recv(&x, 1, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    fprintf(stderr, "rank %d: MPI_Recv returned, but nothing was sent\n", rank);
    return 1;
}
