/*
 * Instruction counts of the small-message path, for callgrind: rank 1 sends batches of 64
 * 8-byte messages; rank 0 sleeps until they have arrived, receives them and acks, so its
 * MPI_Recv calls never wait and their counts are the receive path's own (MPI_Send's are
 * the acks'). Argument "multiple" asks for MPI_THREAD_MULTIPLE, else MPI_THREAD_SINGLE.
 *
 *   mpicc -O2 -o recv_batch bench/probe/recv_batch.c
 *   cat > wrap.sh <<'X'
 *   #!/bin/sh
 *   [ "$PMI_RANK" = 0 ] && exec valgrind --tool=callgrind --callgrind-out-file=cg.$LEVEL "$@"
 *   exec "$@"
 *   X
 *   OXMPI_SPIN=0 OXMPI_YIELD=0 LEVEL=single mpiexec -n 2 sh wrap.sh ./recv_batch single
 *   callgrind_annotate --inclusive=yes cg.single | grep -E 'MPI_(Send|Recv) '
 *
 * (OXMPI_SPIN=0 OXMPI_YIELD=0: a receive that does wait polls once and sleeps, instead of
 * adding a varying number of spins.) Divide by 300 * 64 receives and 300 sends.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
int main(int argc, char **argv) {
    int level = MPI_THREAD_SINGLE, provided, rank;
    if (argc > 1 && !strcmp(argv[1], "multiple")) level = MPI_THREAD_MULTIPLE;
    MPI_Init_thread(&argc, &argv, level, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    char buf[8] = {0};
    for (int b = 0; b < 300; b++) {
        if (rank == 0) {
            usleep(10000);
            for (int i = 0; i < 64; i++) MPI_Recv(buf, 8, MPI_BYTE, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(buf, 8, MPI_BYTE, 1, 2, MPI_COMM_WORLD);
        } else {
            for (int i = 0; i < 64; i++) MPI_Send(buf, 8, MPI_BYTE, 0, 1, MPI_COMM_WORLD);
            MPI_Recv(buf, 8, MPI_BYTE, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
    }
    if (rank == 0) printf("provided %d\n", provided);
    MPI_Finalize();
    return 0;
}
