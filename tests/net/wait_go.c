/*
 * Used by tests/net/run: rank 0 waits in MPI_Recv for a message that rank 1 sends only
 * once the file named by $OXMPI_TEST_GO exists (at most 30 s), so the test can meanwhile
 * connect to rank 0's TCP port as a stranger. Prints " No Errors" when the value arrived.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    int rank, v = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 1) {
        const char *go = getenv("OXMPI_TEST_GO");
        for (int i = 0; go && i < 3000 && access(go, F_OK) != 0; i++)
            usleep(10000);
        v = 4242;
        MPI_Send(&v, 1, MPI_INT, 0, 7, MPI_COMM_WORLD);
    } else if (rank == 0) {
        MPI_Recv(&v, 1, MPI_INT, 1, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (v != 4242) {
            fprintf(stderr, "got %d\n", v);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        printf(" No Errors\n");
    }
    MPI_Finalize();
    return 0;
}
