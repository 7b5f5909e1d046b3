/*
 * The cost of the thread level on one rank's calls, without a peer to wait for (so a
 * loaded machine only lengthens some blocks, and the fastest block counts):
 * MPI_Irecv + MPI_Send + MPI_Wait on MPI_COMM_SELF, 8 bytes; MPI_Wait completes at its
 * first poll but goes through the blocking wait's bookkeeping, as every MPI_Recv that
 * waits does. Prints nanoseconds per iteration (fastest of BLOCKS blocks).
 *
 *   mpicc -O2 -o level_cost bench/probe/level_cost.c
 *   for i in $(seq 20); do for l in single multiple; do ./level_cost $l; done; done
 */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#define BLOCKS 200
#define ITERS 2000

int main(int argc, char **argv)
{
    int level = MPI_THREAD_SINGLE, provided;
    if (argc > 1 && !strcmp(argv[1], "multiple")) level = MPI_THREAD_MULTIPLE;
    if (argc > 1 && !strcmp(argv[1], "funneled")) level = MPI_THREAD_FUNNELED;
    if (argc > 1 && !strcmp(argv[1], "serialized")) level = MPI_THREAD_SERIALIZED;
    MPI_Init_thread(&argc, &argv, level, &provided);
    char sbuf[8] = {1}, rbuf[8];
    double best = 1e30;
    for (int b = 0; b < BLOCKS; b++) {
        double t0 = MPI_Wtime();
        for (int i = 0; i < ITERS; i++) {
            MPI_Request r;
            MPI_Irecv(rbuf, 8, MPI_BYTE, 0, 1, MPI_COMM_SELF, &r);
            MPI_Send(sbuf, 8, MPI_BYTE, 0, 1, MPI_COMM_SELF);
            MPI_Wait(&r, MPI_STATUS_IGNORE);
        }
        double t = (MPI_Wtime() - t0) / ITERS;
        if (t < best) best = t;
    }
    printf("%s %d %.1f\n", argc > 1 ? argv[1] : "single", provided, best * 1e9);
    MPI_Finalize();
    return 0;
}
