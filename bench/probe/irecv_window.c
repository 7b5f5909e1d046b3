/*
 * Instruction counts of the nonblocking small-message receive path, for callgrind:
 * rank 1 sends batches of 64 8-byte messages with MPI_Isend; rank 0 sleeps until they
 * have arrived, posts 64 MPI_Irecv, waits for them with MPI_Waitall and acks, so its
 * counts are those of a window whose messages wait in the transport. Argument "-k
 * noany" or "-k all" runs on a duplicate of MPI_COMM_WORLD asserting
 * mpi_assert_no_any_source and no_any_tag (and, for "all", exact_length and
 * allow_overtaking).
 *
 *   mpicc -O2 -o irecv_window bench/probe/irecv_window.c
 *   (wrap.sh as in recv_batch.c)
 *   OXMPI_SPIN=0 OXMPI_YIELD=0 LEVEL=base mpiexec -n 2 sh wrap.sh ./irecv_window
 *   callgrind_annotate --inclusive=yes cg.base | grep -E 'MPI_(Irecv|Waitall) '
 *
 * Divide by 300 * 64 receives and 300 waits.
 */
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
int main(int argc, char **argv) {
    int rank;
    MPI_Comm comm = MPI_COMM_WORLD;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (argc > 2 && !strcmp(argv[1], "-k")) {
        MPI_Info info;
        MPI_Info_create(&info);
        MPI_Info_set(info, "mpi_assert_no_any_source", "true");
        MPI_Info_set(info, "mpi_assert_no_any_tag", "true");
        if (!strcmp(argv[2], "all")) {
            MPI_Info_set(info, "mpi_assert_exact_length", "true");
            MPI_Info_set(info, "mpi_assert_allow_overtaking", "true");
        }
        MPI_Comm_dup_with_info(MPI_COMM_WORLD, info, &comm);
        MPI_Info_free(&info);
    }
    char buf[64][8] = {{0}};
    MPI_Request reqs[64];
    for (int b = 0; b < 300; b++) {
        if (rank == 0) {
            usleep(10000);
            for (int i = 0; i < 64; i++) MPI_Irecv(buf[i], 8, MPI_BYTE, 1, 1, comm, &reqs[i]);
            MPI_Waitall(64, reqs, MPI_STATUSES_IGNORE);
            MPI_Send(buf[0], 8, MPI_BYTE, 1, 2, comm);
        } else {
            for (int i = 0; i < 64; i++) MPI_Isend(buf[i], 8, MPI_BYTE, 0, 1, comm, &reqs[i]);
            MPI_Waitall(64, reqs, MPI_STATUSES_IGNORE);
            MPI_Recv(buf[0], 8, MPI_BYTE, 0, 2, comm, MPI_STATUS_IGNORE);
        }
    }
    if (comm != MPI_COMM_WORLD) MPI_Comm_free(&comm);
    MPI_Finalize();
    return 0;
}
