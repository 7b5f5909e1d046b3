/*
 * MPI_Intercomm_merge of the parent intercommunicator with the same `high` on both sides
 * (the standard leaves the order of the two groups to the library, but both sides must
 * see the same one): parents and NCHILD children (default 2) each pass high = 0, then
 * check on the merged communicator that the ranks form one order (every rank once, each
 * group contiguous), an allreduce, and MPI_Comm_create with each side's own group (the
 * disjoint-groups form mpi4py uses to make an intercommunicator's local communicator).
 * The children's MPI_COMM_WORLD and the parents' are different jobs, whose processes
 * number each other differently: this once gave both groups the first ranks and hung.
 */
#include "mtest.h"
#include <stdlib.h>

static void check_merged(MPI_Comm inter, int is_child)
{
    int lsize, rsize, mrank, msize;
    MTEST_CALL(MPI_Comm_size(inter, &lsize));
    MTEST_CALL(MPI_Comm_remote_size(inter, &rsize));
    MPI_Comm merged;
    MTEST_CALL(MPI_Intercomm_merge(inter, 0, &merged));
    MTEST_CALL(MPI_Comm_rank(merged, &mrank));
    MTEST_CALL(MPI_Comm_size(merged, &msize));
    MTEST_EQ("merged size", lsize + rsize, msize);
    int *side = malloc(sizeof(int) * (size_t)msize);
    int *ranks = malloc(sizeof(int) * (size_t)msize);
    MTEST_CALL(MPI_Allgather(&is_child, 1, MPI_INT, side, 1, MPI_INT, merged));
    MTEST_CALL(MPI_Allgather(&mrank, 1, MPI_INT, ranks, 1, MPI_INT, merged));
    int changes = 0;
    for (int i = 0; i < msize; i++) {
        MTEST_EQ("rank reported by merged rank i", i, ranks[i]);
        if (i > 0 && side[i] != side[i - 1])
            changes++;
    }
    MTEST_EQ("groups contiguous in the merged order", 1, changes);
    int one = 1, n = 0;
    MTEST_CALL(MPI_Allreduce(&one, &n, 1, MPI_INT, MPI_SUM, merged));
    MTEST_EQ("allreduce over the merged communicator", msize, n);
    MPI_Group local;
    MPI_Comm own;
    MTEST_CALL(MPI_Comm_group(inter, &local));
    MTEST_CALL(MPI_Comm_create(merged, local, &own));
    int osize = -1;
    MTEST_CALL(MPI_Comm_size(own, &osize));
    MTEST_EQ("size of the communicator of one's own group", lsize, osize);
    MTEST_CALL(MPI_Comm_free(&own));
    MTEST_CALL(MPI_Group_free(&local));
    MTEST_CALL(MPI_Comm_free(&merged));
    free(side);
    free(ranks);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    MPI_Comm parent;
    MTEST_CALL(MPI_Comm_get_parent(&parent));
    if (parent != MPI_COMM_NULL) {
        check_merged(parent, 1);
        MTEST_CALL(MPI_Comm_disconnect(&parent));
        int errors = mtest.errors;
        MPI_Finalize();
        if (errors)
            fprintf(stderr, "child: %d errors\n", errors);
        return errors ? 1 : 0;
    }
    const char *e = getenv("NCHILD");
    int nchild = e ? atoi(e) : 2;
    MPI_Comm inter;
    MTEST_CALL(MPI_Comm_spawn(argv[0], MPI_ARGV_NULL, nchild, MPI_INFO_NULL, 0, MPI_COMM_WORLD,
                              &inter, MPI_ERRCODES_IGNORE));
    check_merged(inter, 0);
    MTEST_CALL(MPI_Comm_disconnect(&inter));
    return mtest_finalize();
}
