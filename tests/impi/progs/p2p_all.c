#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
/* Every rank exchanges with every other: short, sync, long messages; wildcard receive. */
int main(int argc, char **argv) {
    int rank, size, errs = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int sizes[] = {0, 4, 1000, 70000, 300000};
    for (int k = 0; k < 5; k++) {
        int n = sizes[k];
        for (int d = 1; d < size; d++) {
            int to = (rank + d) % size, from = (rank - d + size) % size;
            int *sb = malloc((n + 1) * sizeof(int)), *rb = malloc((n + 1) * sizeof(int));
            for (int i = 0; i < n; i++) sb[i] = rank * 1000003 + i;
            MPI_Request r;
            MPI_Status st;
            MPI_Irecv(rb, n, MPI_INT, MPI_ANY_SOURCE, 100 + d, MPI_COMM_WORLD, &r);
            if (k % 2) MPI_Ssend(sb, n, MPI_INT, to, 100 + d, MPI_COMM_WORLD);
            else MPI_Send(sb, n, MPI_INT, to, 100 + d, MPI_COMM_WORLD);
            MPI_Wait(&r, &st);
            int cnt; MPI_Get_count(&st, MPI_INT, &cnt);
            if (st.MPI_SOURCE != from || cnt != n) { errs++; printf("rank %d: src %d count %d (want %d %d)\n", rank, st.MPI_SOURCE, cnt, from, n); }
            for (int i = 0; i < n; i++) if (rb[i] != from * 1000003 + i) { errs++; printf("rank %d: bad data at %d from %d n %d\n", rank, i, from, n); break; }
            free(sb); free(rb);
        }
    }
    int tot = 0;
    MPI_Allreduce(&errs, &tot, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) { if (tot == 0) printf(" No Errors\n"); else printf(" Found %d errors\n", tot); }
    MPI_Finalize();
    return 0;
}
