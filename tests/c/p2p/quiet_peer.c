/*
 * A peer that sends, falls silent for a long time and then sends again is still heard.
 * oxmpi's progress engine polls only the rings of local ranks that send to a rank and
 * stops polling a ring that stays empty for a few thousand rounds of progress; the
 * sender's next packet must bring it back.  Rank 0 and rank 1 ping-pong many times (so
 * rank 0 makes many rounds of progress) while rank 2 stays silent toward rank 0 between
 * its messages; each of rank 2's messages must arrive, with any receive form (named
 * source, MPI_ANY_SOURCE, nonblocking, probe).  Ranks beyond 2 take part in the final
 * check only.  Needs at least 3 ranks.
 */
#include "mtest.h"

#define PINGS 9000
#define ROUNDS 4
#define T_PING 1
#define T_QUIET 2
#define T_GO 3

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int rank = mtest_rank(), size = mtest_size();
    if (size < 3) {
        if (rank == 0)
            printf("needs 3 ranks; nothing to do\n");
        return mtest_finalize();
    }
    for (int round = 0; round < ROUNDS; round++) {
        int v = -1;
        MPI_Status st;
        if (rank == 0) {
            for (int i = 0; i < PINGS; i++) {
                MTEST_CALL(MPI_Send(&i, 1, MPI_INT, 1, T_PING, MPI_COMM_WORLD));
                MTEST_CALL(MPI_Recv(&v, 1, MPI_INT, 1, T_PING, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
                MTEST_EQ("pong", i, v);
            }
            /* Rank 2 sends only after this go, through rank 1: the ring from rank 2
             * has been silent for all the pings above. */
            MTEST_CALL(MPI_Send(&round, 1, MPI_INT, 1, T_GO, MPI_COMM_WORLD));
            v = -1;
            switch (round) {
            case 0:
                MTEST_CALL(MPI_Recv(&v, 1, MPI_INT, 2, T_QUIET, MPI_COMM_WORLD, &st));
                break;
            case 1:
                MTEST_CALL(MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, T_QUIET, MPI_COMM_WORLD, &st));
                break;
            case 2: {
                MPI_Request r;
                MTEST_CALL(MPI_Irecv(&v, 1, MPI_INT, 2, MPI_ANY_TAG, MPI_COMM_WORLD, &r));
                MTEST_CALL(MPI_Wait(&r, &st));
                break;
            }
            default:
                MTEST_CALL(MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
                MTEST_EQ("probed source", 2, st.MPI_SOURCE);
                MTEST_CALL(MPI_Recv(&v, 1, MPI_INT, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD, &st));
            }
            MTEST_EQ("value from the quiet peer", 1000 + round, v);
            MTEST_EQ("status.MPI_SOURCE", 2, st.MPI_SOURCE);
            MTEST_EQ("status.MPI_TAG", T_QUIET, st.MPI_TAG);
        } else if (rank == 1) {
            for (int i = 0; i < PINGS; i++) {
                MTEST_CALL(MPI_Recv(&v, 1, MPI_INT, 0, T_PING, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
                MTEST_CALL(MPI_Send(&v, 1, MPI_INT, 0, T_PING, MPI_COMM_WORLD));
            }
            MTEST_CALL(MPI_Recv(&v, 1, MPI_INT, 0, T_GO, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            MTEST_EQ("go round", round, v);
            MTEST_CALL(MPI_Send(&v, 1, MPI_INT, 2, T_GO, MPI_COMM_WORLD));
        } else if (rank == 2) {
            MTEST_CALL(MPI_Recv(&v, 1, MPI_INT, 1, T_GO, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            MTEST_EQ("go round", round, v);
            v = 1000 + round;
            MTEST_CALL(MPI_Send(&v, 1, MPI_INT, 0, T_QUIET, MPI_COMM_WORLD));
        }
    }
    return mtest_finalize();
}
