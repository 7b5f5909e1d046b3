/*
 * Failure test: the last rank kills itself with SIGKILL while the other ranks wait for a
 * message from it.  Expected: the job ends with a non-zero status within seconds, the
 * launcher names the rank that died, and no process of the job remains.
 */
#include "mtest.h"

#include <signal.h>

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int rank = mtest_rank(), size = mtest_size(), x;
    mtest_barrier();
    if (rank == size - 1) {
        mtest_sleep_ms(300);
        fprintf(stderr, "rank %d: raising SIGKILL\n", rank);
        raise(SIGKILL);
        return 1;
    }
    MPI_Recv(&x, 1, MPI_INT, size - 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    fprintf(stderr, "rank %d: MPI_Recv returned, but nothing was sent\n", rank);
    return 1;
}
