/*
 * Instruction counts of small collectives, for callgrind: N iterations of one of (the
 * argument) "persist": a persistent MPI_Allreduce_init's MPI_Start + MPI_Wait,
 * "allreduce": MPI_Allreduce, "iallreduce": MPI_Iallreduce + MPI_Wait, "ialltoall":
 * MPI_Ialltoall + MPI_Wait; 8 bytes (one double; one int per peer for the all-to-all).
 *
 *   mpicc -O2 -o coll_persist bench/probe/coll_persist.c
 *   cat > wrap.sh <<'X'
 *   #!/bin/sh
 *   [ "$PMI_RANK" = 0 ] && exec valgrind --tool=callgrind --callgrind-out-file=cg.out "$@"
 *   exec "$@"
 *   X
 *   OXMPI_SPIN=0 OXMPI_YIELD=0 mpiexec -n 2 sh wrap.sh ./coll_persist persist
 *   callgrind_annotate --inclusive=yes cg.out | grep -E ' MPI_(Start|Wait|Allreduce|Iallreduce|Ialltoall) '
 *
 * Add the calls of the phase and divide by N (1000). Rank 1 runs outside valgrind, so rank 0 rarely waits and the
 * counts are mostly the calls' own.
 */
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#define N 1000
int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    double in = rank + 1, out = 0;
    const char *phase = argc > 1 ? argv[1] : "persist";
    int errs = 0;
    double want = size * (size + 1) / 2.0;
    MPI_Request req;
    /* Collectives usually follow others on the communicator (here: sets up oxmpi's
     * shared-memory path, which a nonblocking or persistent call only joins). */
    MPI_Barrier(MPI_COMM_WORLD);
    if (!strcmp(phase, "persist")) {
    MPI_Allreduce_init(&in, &out, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &req);
    for (int i = 0; i < N; i++) {
        MPI_Start(&req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        if (out != want) errs++;
    }
    MPI_Request_free(&req);
    } else if (!strcmp(phase, "allreduce")) {
    for (int i = 0; i < N; i++) {
        MPI_Allreduce(&in, &out, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        if (out != want) errs++;
    }
    } else if (!strcmp(phase, "iallreduce")) {
    for (int i = 0; i < N; i++) {
        MPI_Iallreduce(&in, &out, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        if (out != want) errs++;
    }
    } else {
    int sb[64], rb[64];
    for (int i = 0; i < N; i++) {
        for (int j = 0; j < size; j++) sb[j] = rank * 100 + j;
        MPI_Ialltoall(sb, 1, MPI_INT, rb, 1, MPI_INT, MPI_COMM_WORLD, &req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        for (int j = 0; j < size; j++) if (rb[j] != j * 100 + rank) errs++;
    }
    }
    if (rank == 0) printf("errors %d\n", errs);
    MPI_Finalize();
    return 0;
}
