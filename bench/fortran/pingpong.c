/* 8-byte ping-pong between ranks 0 and 1 (MPI_Send / MPI_Recv of one 8-byte integer):
 * half the average round trip, microseconds, printed by rank 0. The C twin of
 * pingpong.f90, with the same warm-up and iteration count. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    const int warmup = 1000;
    int rank, n = argc > 1 ? atoi(argv[1]) : 20000;
    int64_t sbuf = 7, rbuf = 0;
    double t0 = 0.0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    for (int i = 1; i <= warmup + n; i++) {
        if (i == warmup + 1) {
            MPI_Barrier(MPI_COMM_WORLD);
            t0 = MPI_Wtime();
        }
        if (rank == 0) {
            MPI_Send(&sbuf, 1, MPI_INT64_T, 1, 1, MPI_COMM_WORLD);
            MPI_Recv(&rbuf, 1, MPI_INT64_T, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else if (rank == 1) {
            MPI_Recv(&rbuf, 1, MPI_INT64_T, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(&sbuf, 1, MPI_INT64_T, 0, 1, MPI_COMM_WORLD);
        }
    }
    double t = MPI_Wtime() - t0;
    if (rank == 0)
        printf("c 8 B latency (us): %10.3f\n", t / (2.0 * n) * 1e6);
    MPI_Finalize();
    return 0;
}
