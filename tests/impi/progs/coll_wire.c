/* Chapter 4 on the wire: run by crates/impi/tests/coll_wire.rs with 2 oxmpi ranks
 * (client 0) and a mock foreign client 1 (world rank 2) that checks every packet.
 * Bcast from 0, a sum reduced to 0, MPI_Comm_dup (its context id agreed as 4.6 says),
 * a bcast from the foreign rank on the duplicate, its free (a barrier, 4.5), and the
 * barrier of MPI_Finalize (4.24). Rank 0 prints " No Errors". */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    int rank, size, errs = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 3) {
        printf("expected 3 ranks, got %d\n", size);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    int x = rank == 0 ? 42 : 0;
    MPI_Bcast(&x, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (x != 42) {
        printf("rank %d: bcast gave %d, expected 42\n", rank, x);
        errs++;
    }
    int v = rank + 1, sum = -1;
    MPI_Reduce(&v, &sum, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0 && sum != 6) {
        printf("reduce gave %d, expected 6\n", sum);
        errs++;
    }
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    int y = 0;
    MPI_Bcast(&y, 1, MPI_INT, 2, dup);
    if (y != 7) {
        printf("rank %d: bcast from the foreign rank gave %d, expected 7\n", rank, y);
        errs++;
    }
    MPI_Comm_free(&dup);
    if (rank == 0 && errs == 0)
        printf(" No Errors\n");
    fflush(stdout);
    MPI_Finalize();
    return errs != 0;
}
