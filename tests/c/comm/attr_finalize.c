/* Attributes on MPI_COMM_SELF are deleted at the start of MPI_Finalize, most recently
 * set first, while MPI is still usable. The verdict is printed from the last callback,
 * so a library that never calls them prints nothing and fails. */
#include "mtest.h"

static int order[2], ncalls;
static int rank = -1;
static int errors;

static int del(MPI_Comm comm, int key, void *value, void *extra)
{
    (void)key, (void)extra;
    int finalized = 1, r = -1;
    MPI_Finalized(&finalized);
    if (finalized) {
        errors++;
    }
    if (comm != MPI_COMM_SELF) {
        errors++;
    }
    if (MPI_Comm_rank(MPI_COMM_WORLD, &r) != MPI_SUCCESS || r != rank) {
        errors++;
    }
    if (ncalls < 2) {
        order[ncalls] = *(int *)value;
    }
    ncalls++;
    if (ncalls == 2) {
        if (order[0] != 2 || order[1] != 1) {
            fprintf(stderr, "rank %d: delete callbacks ran in order %d %d, expected 2 1\n", rank, order[0], order[1]);
            errors++;
        }
        if (errors == 0 && rank == 0) {
            printf(" No Errors\n");
            fflush(stdout);
        } else if (errors) {
            fprintf(stderr, "rank %d: %d errors in the finalize callbacks\n", rank, errors);
        }
    }
    return MPI_SUCCESS;
}

int main(int argc, char **argv)
{
    static int one = 1, two = 2;
    int k1, k2;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, del, &k1, NULL);
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, del, &k2, NULL);
    MPI_Comm_set_attr(MPI_COMM_SELF, k1, &one);
    MPI_Comm_set_attr(MPI_COMM_SELF, k2, &two);
    /* The keys may be freed before finalize; the callbacks must still run. */
    MPI_Comm_free_keyval(&k1);
    MPI_Finalize();
    return errors || ncalls != 2;
}
