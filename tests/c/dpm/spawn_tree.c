/*
 * A spawn tree: the first job (any size) spawns 2 processes with argument "1"; that job
 * (of 2) spawns 2 more with argument "2", which are leaves. Each job learns the size of
 * the subtree below it from its children's rank 0, adds its own size and reports it to
 * its parents, so the first job's rank 0 checks the total: size + 2 + 2.
 */
#include "mtest.h"
#include <stdlib.h>
#include <string.h>

#define DEPTH 2

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int rank, size, level = argc >= 2 ? atoi(argv[1]) : 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm parent;
    MTEST_CALL(MPI_Comm_get_parent(&parent));
    MTEST_CHECK((level == 0) == (parent == MPI_COMM_NULL), "level %d and parent disagree", level);

    int below = 0;
    if (level < DEPTH) {
        char next[16];
        snprintf(next, sizeof next, "%d", level + 1);
        char *args[] = {next, NULL};
        MPI_Comm kids;
        MTEST_CALL(MPI_Comm_spawn(argv[0], args, 2, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &kids,
                                  MPI_ERRCODES_IGNORE));
        if (rank == 0)
            MTEST_CALL(MPI_Recv(&below, 1, MPI_INT, 0, 9, kids, MPI_STATUS_IGNORE));
        MTEST_CALL(MPI_Comm_disconnect(&kids));
    }
    int total = below + size;
    if (parent != MPI_COMM_NULL) {
        if (rank == 0)
            MTEST_CALL(MPI_Send(&total, 1, MPI_INT, 0, 9, parent));
        MTEST_CALL(MPI_Comm_disconnect(&parent));
        int errors = mtest.errors;
        MPI_Finalize();
        return errors ? 1 : 0;
    }
    if (rank == 0)
        MTEST_EQ("processes in the tree", size + 2 + 2, total);
    return mtest_finalize();
}
