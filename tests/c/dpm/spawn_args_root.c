/*
 * MPI_Comm_spawn with the command, argv and maxprocs significant only at the root, as
 * mpi4py's test_spawn (testArgsOnlyAtRoot) does it, interleaved with spawns from
 * MPI_COMM_SELF at every rank at once. ROUNDS times (default 4):
 *   1. every rank spawns NSELF children (default 1) from MPI_COMM_SELF, all at the same time;
 *   2. the whole MPI_COMM_WORLD spawns one child with root 0 (the others pass NULL, no argv
 *      and -1 as maxprocs);
 *   3. the whole MPI_COMM_WORLD spawns one child with root size-1.
 * After each spawn: a barrier on the intercommunicator, MPI_Comm_disconnect, a barrier
 * on MPI_COMM_WORLD. The children check their argv, pass the barrier and disconnect;
 * MPI_Comm_get_parent is MPI_COMM_NULL after it.
 */
#include "mtest.h"
#include <stdlib.h>
#include <string.h>

static int child(MPI_Comm parent, int argc, char **argv)
{
    int flag, rsize;
    MTEST_CHECK(argc == 2 && strcmp(argv[1], "child-arg") == 0, "argv[1] is not child-arg");
    MTEST_CALL(MPI_Comm_test_inter(parent, &flag));
    MTEST_EQ("parent is an intercommunicator", 1, flag);
    MTEST_CALL(MPI_Comm_remote_size(parent, &rsize));
    MTEST_CHECK(rsize >= 1, "parent group size %d", rsize);
    MTEST_CALL(MPI_Barrier(parent));
    MTEST_CALL(MPI_Comm_disconnect(&parent));
    MTEST_CHECK(parent == MPI_COMM_NULL, "disconnect left the handle set");
    MTEST_CALL(MPI_Comm_get_parent(&parent));
    MTEST_CHECK(parent == MPI_COMM_NULL, "MPI_Comm_get_parent after disconnect is not null");
    return mtest_child_finalize("spawn_args_root child");
}

/* Spawn from comm with the arguments given at root only; barrier, disconnect, barrier. */
static void spawn_once(MPI_Comm comm, int root, int maxprocs, const char *cmd)
{
    int rank, lsize, rsize;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &lsize);
    char *args[] = {"child-arg", NULL};
    MPI_Comm kid = MPI_COMM_NULL;
    int errcodes[8];
    if (rank == root)
        MTEST_CALL(MPI_Comm_spawn(cmd, args, maxprocs, MPI_INFO_NULL, root, comm, &kid,
                                  errcodes));
    else
        MTEST_CALL(MPI_Comm_spawn(NULL, NULL, -1, MPI_INFO_NULL, root, comm, &kid,
                                  MPI_ERRCODES_IGNORE));
    if (kid == MPI_COMM_NULL) {
        MTEST_ABORT("MPI_Comm_spawn returned MPI_COMM_NULL");
        return;
    }
    if (rank == root)
        for (int i = 0; i < maxprocs; i++)
            MTEST_EQ("errcode", MPI_SUCCESS, errcodes[i]);
    MTEST_CALL(MPI_Comm_remote_size(kid, &rsize));
    MTEST_EQ("children", maxprocs, rsize);
    int n;
    MTEST_CALL(MPI_Comm_size(kid, &n));
    MTEST_EQ("local group of the intercommunicator", lsize, n);
    MTEST_CALL(MPI_Barrier(kid));
    MTEST_CALL(MPI_Comm_disconnect(&kid));
    MTEST_CHECK(kid == MPI_COMM_NULL, "disconnect left the handle set");
    MTEST_CALL(MPI_Barrier(MPI_COMM_WORLD));
}

int main(int argc, char **argv)
{
    MPI_Comm parent = mtest_init_spawned(&argc, &argv);
    if (parent != MPI_COMM_NULL)
        return child(parent, argc, argv);
    int size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *e = getenv("ROUNDS");
    int rounds = e ? atoi(e) : 4;
    e = getenv("NSELF");
    int nself = e ? atoi(e) : 1;
    for (int r = 0; r < rounds; r++) {
        MTEST_CALL(MPI_Barrier(MPI_COMM_WORLD));
        spawn_once(MPI_COMM_SELF, 0, nself, argv[0]);
        spawn_once(MPI_COMM_WORLD, 0, 1, argv[0]);
        spawn_once(MPI_COMM_WORLD, size - 1, 1, argv[0]);
    }
    return mtest_finalize();
}
