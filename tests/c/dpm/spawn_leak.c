/*
 * Intercommunicators to children that exit are never freed nor disconnected, and the
 * parents spawn again: a later child may listen on the port of an exited one (which
 * tests/c/dpm/port_reuse forces), and a parent that still holds the exited child's
 * record must take the new child for a new process, not answer it with the old one's
 * key. ROUNDS times (default 6) MPI_COMM_WORLD spawns one child (root 0); in round r
 * the child and parent rank r % size exchange a message both ways on the
 * intercommunicator, so that each parent rank talks to some children and only holds
 * the record of the others. Children call MPI_Finalize without disconnecting; the
 * parents keep every intercommunicator until MPI_Finalize.
 */
#include "mtest.h"
#include <stdio.h>
#include <stdlib.h>

#define MAX_ROUNDS 64

static int child(MPI_Comm parent, int argc, char **argv)
{
    int round = argc > 1 ? atoi(argv[1]) : -1, psize, got = -1;
    MTEST_CHECK(round >= 0, "the child got no round number");
    MTEST_CALL(MPI_Comm_remote_size(parent, &psize));
    int peer = round % psize, reply = round * 1000 + peer;
    MTEST_CALL(MPI_Send(&round, 1, MPI_INT, peer, 7, parent));
    MTEST_CALL(MPI_Recv(&got, 1, MPI_INT, peer, 8, parent, MPI_STATUS_IGNORE));
    MTEST_EQ("reply from the parent", reply, got);
    return mtest_child_finalize("child of round %d", round);
}

int main(int argc, char **argv)
{
    MPI_Comm parent = mtest_init_spawned(&argc, &argv);
    if (parent != MPI_COMM_NULL)
        return child(parent, argc, argv);
    int rank = mtest_rank(), size = mtest_size();
    const char *e = getenv("ROUNDS");
    int rounds = e ? atoi(e) : 6;
    if (rounds > MAX_ROUNDS)
        rounds = MAX_ROUNDS;
    MPI_Comm kids[MAX_ROUNDS];
    for (int r = 0; r < rounds; r++) {
        char arg[16];
        snprintf(arg, sizeof arg, "%d", r);
        char *args[] = {arg, NULL};
        int code = -1;
        MTEST_CALL(MPI_Comm_spawn(argv[0], args, 1, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &kids[r],
                                  &code));
        MTEST_EQ("error code of the child", MPI_SUCCESS, code);
        if (rank == r % size) {
            int got = -1, reply = r * 1000 + rank;
            MTEST_CALL(MPI_Recv(&got, 1, MPI_INT, 0, 7, kids[r], MPI_STATUS_IGNORE));
            MTEST_EQ("round from the child", r, got);
            MTEST_CALL(MPI_Send(&reply, 1, MPI_INT, 0, 8, kids[r]));
        }
        /* The child of this round may still be running: the next spawn does not wait. */
        MTEST_CALL(MPI_Barrier(MPI_COMM_WORLD));
    }
    /* kids[] stay allocated (leaked to exited children) until MPI_Finalize. */
    return mtest_finalize();
}
