/*
 * Errors of the dynamic-process calls (MPI_ERRORS_RETURN on MPI_COMM_WORLD), at every
 * rank of the communicator, without a hang:
 * - spawning a program that does not exist: MPI_ERR_SPAWN, every error code
 *   MPI_ERR_SPAWN, the intercommunicator MPI_COMM_NULL; the job goes on;
 * - maxprocs 0 at the root: MPI_ERR_ARG; an invalid root: MPI_ERR_ROOT;
 * - a malformed port name: MPI_ERR_PORT (connect), and MPI_ERR_PORT for closing a port
 *   that is not open;
 * - connecting to a closed port: MPI_ERR_PORT; connecting to an open port nobody accepts
 *   on, with info timeout=1: MPI_ERR_PORT after about a second.
 * Strict: the classes are oxmpi's choices where the standard names none (MPICH 4.0.2
 * on the development machine cannot spawn at all).
 */
#include "mtest.h"
#include <string.h>

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm inter = MPI_COMM_WORLD;
    int codes[3] = {0, 0, 0};
    MTEST_EXPECT_CLASS(MPI_ERR_SPAWN,
                       MPI_Comm_spawn("/nonexistent/oxmpi-no-such-program", MPI_ARGV_NULL, 3,
                                      MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter, codes));
    MTEST_CHECK(inter == MPI_COMM_NULL, "intercomm of a failed spawn is not MPI_COMM_NULL");
    if (rank == 0)
        for (int i = 0; i < 3; i++)
            MTEST_EQ("error code class", MPI_ERR_SPAWN, mtest_errclass(codes[i]));
    MTEST_EXPECT_CLASS(MPI_ERR_SPAWN,
                       MPI_Comm_spawn("oxmpi-no-such-program-in-path", MPI_ARGV_NULL, 1,
                                      MPI_INFO_NULL, size - 1, MPI_COMM_WORLD, &inter,
                                      MPI_ERRCODES_IGNORE));
    MTEST_EXPECT_CLASS(MPI_ERR_ARG, MPI_Comm_spawn(argv[0], MPI_ARGV_NULL, 0, MPI_INFO_NULL, 0,
                                                   MPI_COMM_WORLD, &inter, MPI_ERRCODES_IGNORE));
    MTEST_EXPECT_CLASS(MPI_ERR_ROOT, MPI_Comm_spawn(argv[0], MPI_ARGV_NULL, 1, MPI_INFO_NULL,
                                                    size, MPI_COMM_WORLD, &inter,
                                                    MPI_ERRCODES_IGNORE));

    MTEST_EXPECT_CLASS(MPI_ERR_PORT, MPI_Comm_connect("not a port", MPI_INFO_NULL, 0,
                                                      MPI_COMM_WORLD, &inter));
    MTEST_EXPECT_CLASS(MPI_ERR_PORT, MPI_Close_port("not a port"));

    char port[MPI_MAX_PORT_NAME];
    if (rank == 0) {
        MTEST_CALL(MPI_Open_port(MPI_INFO_NULL, port));
        MTEST_CALL(MPI_Close_port(port));
        MTEST_EXPECT_CLASS(MPI_ERR_PORT, MPI_Close_port(port));
    }
    MTEST_CALL(MPI_Bcast(port, MPI_MAX_PORT_NAME, MPI_CHAR, 0, MPI_COMM_WORLD));
    MTEST_EXPECT_CLASS(MPI_ERR_PORT, MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD,
                                                      &inter));

    if (rank == 0)
        MTEST_CALL(MPI_Open_port(MPI_INFO_NULL, port));
    MTEST_CALL(MPI_Bcast(port, MPI_MAX_PORT_NAME, MPI_CHAR, 0, MPI_COMM_WORLD));
    MPI_Info info;
    MTEST_CALL(MPI_Info_create(&info));
    MTEST_CALL(MPI_Info_set(info, "timeout", "1"));
    double t0 = MPI_Wtime();
    MTEST_EXPECT_CLASS(MPI_ERR_PORT, MPI_Comm_connect(port, info, 0, MPI_COMM_WORLD, &inter));
    MTEST_CHECK(MPI_Wtime() - t0 < 30, "the connect timeout was not kept");
    MTEST_CALL(MPI_Info_free(&info));
    if (rank == 0)
        MTEST_CALL(MPI_Close_port(port));
    return mtest_finalize();
}
