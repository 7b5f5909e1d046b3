/*
 * Errors of the dynamic-process calls (MPI_ERRORS_RETURN on MPI_COMM_WORLD), at every
 * rank of the communicator, without a hang:
 * - spawning a program that does not exist: MPI_ERR_SPAWN, every error code
 *   MPI_ERR_SPAWN at every parent (not only the root), the intercommunicator
 *   MPI_COMM_NULL; the job goes on; the same with MPI_Comm_spawn_multiple;
 * - a `host` info key naming a host that does not exist: MPI_ERR_SPAWN within seconds
 *   (left out with SPAWN_ERRORS_NO_HOST=1: under MPICH's Hydra the parents get the error,
 *   but Hydra 4.0.2's mpiexec then waits forever for the proxy it could not start there);
 * - maxprocs 0 at the root: MPI_ERR_ARG; an invalid root: MPI_ERR_ROOT;
 * - a malformed port name: MPI_ERR_PORT (connect), and MPI_ERR_PORT for closing a port
 *   that is not open;
 * - connecting to a closed port: MPI_ERR_PORT; connecting to an open port nobody accepts
 *   on, with info timeout=1: MPI_ERR_PORT after about a second.
 * Strict: the classes are oxmpi's choices where the standard names none (MPICH 4.0.2
 * on the development machine cannot spawn at all).
 */
#include "mtest.h"
#include <stdlib.h>
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
    /* array_of_errcodes is an output at every parent, with the root's maxprocs entries. */
    for (int i = 0; i < 3; i++)
        MTEST_EQ("error code class", MPI_ERR_SPAWN, mtest_errclass(codes[i]));
    /* The same with MPI_Comm_spawn_multiple (2 + 1 processes) and another root. */
    const char *cmds[2] = {"/nonexistent/oxmpi-no-such-program", "/nonexistent/other"};
    int np[2] = {2, 1};
    MPI_Info infos[2] = {MPI_INFO_NULL, MPI_INFO_NULL};
    for (int i = 0; i < 3; i++)
        codes[i] = 0;
    MTEST_EXPECT_CLASS(MPI_ERR_SPAWN,
                       MPI_Comm_spawn_multiple(2, (char **)cmds, MPI_ARGVS_NULL, np, infos,
                                               size - 1, MPI_COMM_WORLD, &inter, codes));
    for (int i = 0; i < 3; i++)
        MTEST_EQ("error code class (spawn_multiple)", MPI_ERR_SPAWN, mtest_errclass(codes[i]));
    /* A host that is not this one, in a job on this host only: refused at once. */
    if (!getenv("SPAWN_ERRORS_NO_HOST")) {
        MPI_Info hinfo;
        MTEST_CALL(MPI_Info_create(&hinfo));
        MTEST_CALL(MPI_Info_set(hinfo, "host", "no-such-host.invalid"));
        codes[0] = codes[1] = 0;
        double h0 = MPI_Wtime();
        MTEST_EXPECT_CLASS(MPI_ERR_SPAWN, MPI_Comm_spawn(argv[0], MPI_ARGV_NULL, 2, hinfo, 0,
                                                         MPI_COMM_WORLD, &inter, codes));
        MTEST_CHECK(MPI_Wtime() - h0 < 20, "a spawn on a host that does not exist took too long");
        for (int i = 0; i < 2; i++)
            MTEST_EQ("error code class (host)", MPI_ERR_SPAWN, mtest_errclass(codes[i]));
        MTEST_CALL(MPI_Info_free(&hinfo));
    }
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
