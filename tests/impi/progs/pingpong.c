/* Ping-pong latency between ranks 0 and 1: prints the median of 21 rounds of
 * one-way latency (microseconds) for 8-byte messages.  Used by tests/impi/latency to
 * compare two IMPI clients with one oxmpi job over TCP. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    int rank, iters = argc > 1 ? atoi(argv[1]) : 2000;
    double buf = 0, t[21];
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    for (int r = 0; r < 21; r++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        for (int i = 0; i < iters; i++) {
            if (rank == 0) {
                MPI_Send(&buf, 1, MPI_DOUBLE, 1, 0, MPI_COMM_WORLD);
                MPI_Recv(&buf, 1, MPI_DOUBLE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            } else if (rank == 1) {
                MPI_Recv(&buf, 1, MPI_DOUBLE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Send(&buf, 1, MPI_DOUBLE, 0, 0, MPI_COMM_WORLD);
            }
        }
        t[r] = (MPI_Wtime() - t0) / iters / 2 * 1e6;
    }
    qsort(t, 21, sizeof t[0], cmp);
    if (rank == 0)
        printf("latency_us %.2f\n", t[10]);
    MPI_Finalize();
    return 0;
}
