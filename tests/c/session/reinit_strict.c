/*
 * Re-initialisation: a session, used and ended, then another one (the runtime stays
 * up between them), then MPI_Init after every session ended, as MPI-4.1 allows.
 * Strict: MPICH 4.0.2 crashes in the second MPI_Session_init.
 */
#include "stest.h"

static int round_trip(const char *tag)
{
    MPI_Session s = stest_session();
    MPI_Comm c = stest_world_comm(s, tag);
    int rank, size, sum = -1;
    MTEST_CALL(MPI_Comm_rank(c, &rank));
    MTEST_CALL(MPI_Comm_size(c, &size));
    MTEST_CALL(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, c));
    MTEST_EQ("sum of ranks", size * (size - 1) / 2, sum);
    MTEST_CALL(MPI_Comm_free(&c));
    MTEST_CALL(MPI_Session_finalize(&s));
    return rank;
}

int main(int argc, char **argv)
{
    mtest_write_pidfile();
    for (int i = 0; i < 3; i++) {
        round_trip("org.oxmpi.test.reinit");
    }
    int flag = 1;
    MTEST_CALL(MPI_Initialized(&flag));
    MTEST_EQ("MPI_Initialized after sessions", 0, flag);
    int errors = mtest.errors;
    mtest_init(&argc, &argv);
    mtest.errors = errors;
    int sum = -1, rank = mtest_rank(), size = mtest_size();
    MTEST_CALL(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    MTEST_EQ("sum over MPI_COMM_WORLD", size * (size - 1) / 2, sum);
    /* And sessions again while the world model runs. */
    round_trip("org.oxmpi.test.reinit.world");
    return mtest_finalize();
}
