#include <mpi.h>
#include <stdio.h>
/* IMPI 4.5 and 4.6: MPI_Comm_dup and MPI_Comm_free of intercommunicators whose groups
   (even and odd world ranks) lie in several clients. Each duplicate has its own
   context: messages with the same tag on the original and on the duplicates do not
   mix; a duplicate of a duplicate outlives the one it was made from; the round repeats
   so that freed context ids come back into use. Then MPI_Intercomm_merge (4.9) of a
   duplicate. Needs 2 ranks or more. */
int main(int argc, char **argv) {
    int rank, size, errs = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int color = rank % 2;
    MPI_Comm local, inter;
    MPI_Comm_split(MPI_COMM_WORLD, color, rank, &local);
    MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, color ? 0 : 1, 7, &inter);
    int lrank, rsize;
    MPI_Comm_rank(inter, &lrank);
    MPI_Comm_remote_size(inter, &rsize);
    for (int round = 0; round < 3; round++) {
        MPI_Comm d1, d2;
        MPI_Comm_dup(inter, &d1);
        MPI_Comm_dup(d1, &d2);
        int cmp, rs;
        MPI_Comm_compare(inter, d1, &cmp);
        MPI_Comm_remote_size(d2, &rs);
        if (cmp != MPI_CONGRUENT || rs != rsize) {
            errs++;
            printf("rank %d: compare %d remote size %d\n", rank, cmp, rs);
        }
        /* Each rank sends to remote rank lrank % rsize on all three with one tag; each
           receives from its senders in the opposite order of the communicators. */
        int peer = lrank % rsize, v[3], got;
        MPI_Request r[3];
        MPI_Comm cs[3] = {inter, d1, d2};
        for (int i = 0; i < 3; i++) {
            v[i] = 1000 * i + rank;
            MPI_Isend(&v[i], 1, MPI_INT, peer, 5, cs[i], &r[i]);
        }
        int lsize;
        MPI_Comm_size(inter, &lsize);
        /* Remote rank s sends to this rank when s % lsize == lrank. */
        for (int s = 0; s < rsize; s++) {
            if (s % lsize != lrank)
                continue;
            for (int i = 2; i >= 0; i--) {
                MPI_Status st;
                MPI_Recv(&got, 1, MPI_INT, s, 5, cs[i], &st);
                if (got / 1000 != i || st.MPI_SOURCE != s) {
                    errs++;
                    printf("rank %d: from %d on comm %d got %d\n", rank, s, i, got);
                }
            }
        }
        MPI_Waitall(3, r, MPI_STATUSES_IGNORE);
        MPI_Comm_free(&d1);
        /* d2 outlives d1: a reduction over the intercommunicator gives every rank the
           sum of the remote group's world ranks. */
        int sum = 0, want = 0;
        for (int w = 0; w < size; w++)
            if (w % 2 != color)
                want += w;
        MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, d2);
        if (sum != want) {
            errs++;
            printf("rank %d: allreduce on the duplicate %d, want %d\n", rank, sum, want);
        }
        MPI_Comm_free(&d2);
        if (d1 != MPI_COMM_NULL || d2 != MPI_COMM_NULL) errs++;
    }
    MPI_Comm d, merged;
    MPI_Comm_dup(inter, &d);
    MPI_Intercomm_merge(d, color, &merged);
    int mrank, msize;
    MPI_Comm_rank(merged, &mrank);
    MPI_Comm_size(merged, &msize);
    /* The even group (high = 0) comes first, each group in world rank order. */
    int evens = (size + 1) / 2;
    int mwant = color ? evens + rank / 2 : rank / 2;
    if (msize != size || mrank != mwant) {
        errs++;
        printf("rank %d: merged rank %d of %d, want %d\n", rank, mrank, msize, mwant);
    }
    MPI_Comm_free(&merged);
    MPI_Comm_free(&d);
    MPI_Comm_free(&inter);
    MPI_Comm_free(&local);
    int total = 0;
    MPI_Allreduce(&errs, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf(total ? " Found %d errors\n" : " No Errors\n", total);
    MPI_Finalize();
    return 0;
}
