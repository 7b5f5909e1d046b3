/*
 * A session first (a library initialising itself), then MPI_Init in the same process;
 * both used; MPI_Finalize ends the world model while the session stays usable; the
 * session ends last.
 */
#include "stest.h"

int main(int argc, char **argv)
{
    mtest_write_pidfile();
    MPI_Session s = stest_session();
    MPI_Comm lib = stest_world_comm(s, "org.oxmpi.test.library");
    int rank, size, flag = 1;
    MTEST_CALL(MPI_Comm_rank(lib, &rank));
    MTEST_CALL(MPI_Comm_size(lib, &size));
    mtest.rank = rank;
    mtest.size = size;
    MTEST_CALL(MPI_Initialized(&flag));
    MTEST_EQ("MPI_Initialized before MPI_Init", 0, flag);

    MTEST_CALL(MPI_Init(&argc, &argv));
    MTEST_CALL(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    int wrank = -1, wsize = -1;
    MTEST_CALL(MPI_Comm_rank(MPI_COMM_WORLD, &wrank));
    MTEST_CALL(MPI_Comm_size(MPI_COMM_WORLD, &wsize));
    MTEST_EQ("world rank = session comm rank", rank, wrank);
    MTEST_EQ("world size = session comm size", size, wsize);
    int sum = -1;
    MTEST_CALL(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    MTEST_EQ("sum over MPI_COMM_WORLD", size * (size - 1) / 2, sum);
    MTEST_CALL(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, lib));
    MTEST_EQ("sum over the library's comm", size * (size - 1) / 2, sum);
    MTEST_CALL(MPI_Finalize());
    MTEST_CALL(MPI_Finalized(&flag));
    MTEST_EQ("MPI_Finalized", 1, flag);

    /* The library's session outlives the world model. */
    sum = -1;
    MTEST_CALL(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, lib));
    MTEST_EQ("sum after MPI_Finalize", size * (size - 1) / 2, sum);
    return stest_finish(lib, s);
}
