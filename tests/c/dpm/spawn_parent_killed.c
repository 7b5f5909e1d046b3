/*
 * A parent dies by SIGKILL after MPI_Comm_spawn while its children wait for its message:
 * the whole job (the other parents and every child) must end with a failure status,
 * without a hang and without leftover processes (tests/c/failures checks the pids every
 * process wrote).
 */
#include "mtest.h"
#include <signal.h>

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    MPI_Comm parent;
    MTEST_CALL(MPI_Comm_get_parent(&parent));
    int v = 0;
    if (parent != MPI_COMM_NULL) {
        MPI_Recv(&v, 1, MPI_INT, 0, 1, parent, MPI_STATUS_IGNORE);
        MPI_Finalize();
        return 0;
    }
    MPI_Comm kids;
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MTEST_CALL(MPI_Comm_spawn(argv[0], MPI_ARGV_NULL, 2, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &kids,
                              MPI_ERRCODES_IGNORE));
    if (rank == 0)
        raise(SIGKILL);
    MPI_Recv(&v, 1, MPI_INT, 0, 2, kids, MPI_STATUS_IGNORE);
    return mtest_finalize();
}
