/* Chapter 4 on intercommunicators, on the wire: run by crates/impi/tests/coll_wire.rs
 * with 2 oxmpi ranks (client 0) and a mock foreign client 1 (world rank 2) that checks
 * every packet. The oxmpi ranks make their local communicator by themselves
 * (MPI_Comm_create_group), the mock uses MPI_COMM_SELF; MPI_Intercomm_create (4.8, tag
 * 77), MPI_Comm_dup of the intercommunicator (4.6), a message each way on the
 * duplicate (its context is the agreed one), the frees (4.5), and the barrier of
 * MPI_Finalize (4.24). Rank 0 prints " No Errors". */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    int rank, size, errs = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 3 || rank > 1) {
        printf("expected 3 ranks, the oxmpi ones 0 and 1; got rank %d of %d\n", rank, size);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_Group world, pair;
    int both[2] = {0, 1};
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group_incl(world, 2, both, &pair);
    MPI_Comm local, inter, dup;
    MPI_Comm_create_group(MPI_COMM_WORLD, pair, 0, &local);
    MPI_Group_free(&pair);
    MPI_Group_free(&world);
    MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, 2, 77, &inter);
    int rsize = -1, lrank = -1;
    MPI_Comm_remote_size(inter, &rsize);
    MPI_Comm_rank(inter, &lrank);
    if (rsize != 1 || lrank != rank) {
        printf("rank %d: remote size %d, local rank %d\n", rank, rsize, lrank);
        errs++;
    }
    MPI_Comm_dup(inter, &dup);
    if (rank == 0) {
        int v = 0x01020304;
        MPI_Send(&v, 1, MPI_INT, 0, 9, dup);
    } else {
        int got = 0;
        MPI_Status st;
        MPI_Recv(&got, 1, MPI_INT, 0, 9, dup, &st);
        if (got != 0x0a0b0c0d || st.MPI_SOURCE != 0 || st.MPI_TAG != 9) {
            printf("rank 1: got %#x from %d tag %d on the duplicate\n", got, st.MPI_SOURCE,
                   st.MPI_TAG);
            errs++;
        }
    }
    MPI_Comm_free(&dup);
    MPI_Comm_free(&inter);
    MPI_Comm_free(&local);
    if (rank == 0 && errs == 0)
        printf(" No Errors\n");
    fflush(stdout);
    MPI_Finalize();
    return errs != 0;
}
