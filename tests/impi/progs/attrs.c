#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
/* IMPI 2.5: IMPI_CLIENT_SIZE/COLOR and IMPI_HOST_SIZE/COLOR on MPI_COMM_WORLD and on
   communicators made from it. Clients hold consecutive world ranks and every oxmpi rank
   is its own IMPI host. Rank 0 prints "IMPI_CLIENT_SIZE n" for the caller to check. */
static int get(MPI_Comm c, int key, const char *name, int *errs) {
    int *v = NULL, flag = 0;
    MPI_Comm_get_attr(c, key, &v, &flag);
    if (!flag) { (*errs)++; printf("%s not set\n", name); return -1; }
    return *v;
}
int main(int argc, char **argv) {
    int rank, size, errs = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int *cp = NULL, flag = 0;
    MPI_Comm_get_attr(MPI_COMM_WORLD, IMPI_CLIENT_COLOR, &cp, &flag);
    int nclients = get(MPI_COMM_WORLD, IMPI_CLIENT_SIZE, "IMPI_CLIENT_SIZE", &errs);
    int color = get(MPI_COMM_WORLD, IMPI_CLIENT_COLOR, "IMPI_CLIENT_COLOR", &errs);
    int nhosts = get(MPI_COMM_WORLD, IMPI_HOST_SIZE, "IMPI_HOST_SIZE", &errs);
    int hcolor = get(MPI_COMM_WORLD, IMPI_HOST_COLOR, "IMPI_HOST_COLOR", &errs);
    if (nhosts != size || hcolor != rank) {
        errs++; printf("rank %d: hosts %d color %d (want %d %d)\n", rank, nhosts, hcolor, size, rank);
    }
    if (color < 0 || color >= nclients) { errs++; printf("rank %d: color %d of %d\n", rank, color, nclients); }
    /* Colors rise with the world rank and every color in 0..nclients-1 is used. */
    int *all = malloc(size * sizeof(int));
    MPI_Allgather(&color, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD);
    if (all[0] != 0 || all[size - 1] != nclients - 1) { errs++; printf("rank %d: colors %d..%d\n", rank, all[0], all[size - 1]); }
    for (int i = 1; i < size; i++)
        if (all[i] != all[i - 1] && all[i] != all[i - 1] + 1) { errs++; printf("colors not consecutive at %d\n", i); }
    /* Split by client: one client per part, color 0; one host per rank. */
    MPI_Comm part;
    MPI_Comm_split(MPI_COMM_WORLD, color, rank, &part);
    int psize;
    MPI_Comm_size(part, &psize);
    if (get(part, IMPI_CLIENT_SIZE, "split IMPI_CLIENT_SIZE", &errs) != 1
        || get(part, IMPI_CLIENT_COLOR, "split IMPI_CLIENT_COLOR", &errs) != 0
        || get(part, IMPI_HOST_SIZE, "split IMPI_HOST_SIZE", &errs) != psize) {
        errs++; printf("rank %d: attributes of its client's communicator\n", rank);
    }
    /* The pointer handed out for MPI_COMM_WORLD keeps its value. */
    if (!flag || *cp != color) { errs++; printf("rank %d: world color pointer now %d\n", rank, cp ? *cp : -1); }
    MPI_Comm_free(&part);
    /* The last rank and rank 0, in reverse order: their clients are colored by world order. */
    if (size > 1) {
        MPI_Group wg, g2;
        int ends[2] = {size - 1, 0};
        MPI_Comm_group(MPI_COMM_WORLD, &wg);
        MPI_Group_incl(wg, 2, ends, &g2);
        MPI_Comm c2;
        MPI_Comm_create(MPI_COMM_WORLD, g2, &c2);
        if (c2 != MPI_COMM_NULL) {
            int n = get(c2, IMPI_CLIENT_SIZE, "pair IMPI_CLIENT_SIZE", &errs);
            int c = get(c2, IMPI_CLIENT_COLOR, "pair IMPI_CLIENT_COLOR", &errs);
            int hc = get(c2, IMPI_HOST_COLOR, "pair IMPI_HOST_COLOR", &errs);
            int want = nclients > 1 ? 2 : 1;
            int wantc = (rank == 0 || nclients == 1) ? 0 : 1;
            if (n != want || c != wantc || hc != (rank == 0 ? 0 : 1)) {
                errs++; printf("rank %d: pair size %d color %d host color %d\n", rank, n, c, hc);
            }
            MPI_Comm_free(&c2);
        }
        MPI_Group_free(&g2);
        MPI_Group_free(&wg);
    }
    /* Predefined: cannot be set. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int one = 1, cls = 0;
    int rc = MPI_Comm_set_attr(MPI_COMM_WORLD, IMPI_CLIENT_SIZE, &one);
    MPI_Error_class(rc, &cls);
    if (rc == MPI_SUCCESS || cls != MPI_ERR_KEYVAL) { errs++; printf("set IMPI_CLIENT_SIZE: class %d\n", cls); }
    free(all);
    int tot = 0;
    MPI_Allreduce(&errs, &tot, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("IMPI_CLIENT_SIZE %d\n", nclients);
        if (tot == 0) printf(" No Errors\n"); else printf(" Found %d errors\n", tot);
    }
    MPI_Finalize();
    return 0;
}
