/*
 * Used by tests/net/run: every rank exchanges with its ring neighbours about every
 * millisecond for SECONDS seconds (argument, default 30), so a test can kill a host's
 * processes while the job communicates. Rank 0 prints "running" once all exchanged once.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    int rank, size, out, in;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    double secs = argc > 1 ? atof(argv[1]) : 30.0;
    double t0 = MPI_Wtime();
    for (long i = 0;; i++) {
        out = rank;
        MPI_Sendrecv(&out, 1, MPI_INT, (rank + 1) % size, 1, &in, 1, MPI_INT,
                     (rank + size - 1) % size, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (in != (rank + size - 1) % size)
            MPI_Abort(MPI_COMM_WORLD, 3);
        if (i == 0 && rank == 0) {
            printf("running\n");
            fflush(stdout);
        }
        int stop = MPI_Wtime() - t0 > secs;
        MPI_Bcast(&stop, 1, MPI_INT, 0, MPI_COMM_WORLD);
        if (stop)
            break;
        usleep(1000);
    }
    if (rank == 0)
        printf(" No Errors\n");
    MPI_Finalize();
    return 0;
}
