/*
 * Failure test: the failures list starts this program with a malformed or out-of-range
 * OXMPI_* tunable.  MPI_Init must fail; under the default MPI_ERRORS_ARE_FATAL the job ends
 * with a non-zero status and a message naming MPI_Init, the variable and the value.  (oxmpi
 * only: other implementations ignore OXMPI_* variables.)
 */
#include "mtest.h"

int main(int argc, char **argv)
{
    mtest_init_plain(&argc, &argv); /* keeps MPI_ERRORS_ARE_FATAL */
    fprintf(stderr, "rank %d: MPI_Init succeeded although a tunable is invalid\n", mtest_rank());
    MPI_Finalize();
    return 0;
}
