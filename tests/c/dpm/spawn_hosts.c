/*
 * MPI_Comm_spawn with the `host` info key in a multi-host job (run by the script
 * tests/c/dpm/spawn_hosts, whose launcher reaches every host but those named
 * "unreachable*"): a spawn on a host the launcher cannot reach fails with MPI_ERR_SPAWN
 * within seconds, with every error code MPI_ERR_SPAWN at every parent, and the job goes
 * on; a spawn on a reachable host then works.
 */
#include "mtest.h"

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    MPI_Comm parent;
    MTEST_CALL(MPI_Comm_get_parent(&parent));
    if (parent != MPI_COMM_NULL) {
        int v = 0;
        MTEST_CALL(MPI_Bcast(&v, 1, MPI_INT, 0, parent));
        MTEST_CALL(MPI_Comm_disconnect(&parent));
        MPI_Finalize();
        return v == 7 ? 0 : 1;
    }
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Info info;
    MPI_Comm inter = MPI_COMM_WORLD;
    int codes[2] = {0, 0};
    MTEST_CALL(MPI_Info_create(&info));
    MTEST_CALL(MPI_Info_set(info, "host", "unreachable-host"));
    double t0 = MPI_Wtime();
    MTEST_EXPECT_CLASS(MPI_ERR_SPAWN, MPI_Comm_spawn(argv[0], MPI_ARGV_NULL, 2, info, 0,
                                                     MPI_COMM_WORLD, &inter, codes));
    MTEST_CHECK(MPI_Wtime() - t0 < 30, "a spawn on an unreachable host took too long");
    MTEST_CHECK(inter == MPI_COMM_NULL, "intercomm of a failed spawn is not MPI_COMM_NULL");
    for (int i = 0; i < 2; i++)
        MTEST_EQ("error code class", MPI_ERR_SPAWN, mtest_errclass(codes[i]));
    MTEST_CALL(MPI_Info_set(info, "host", "h2"));
    MTEST_CALL(MPI_Comm_spawn(argv[0], MPI_ARGV_NULL, 2, info, 0, MPI_COMM_WORLD, &inter, codes));
    for (int i = 0; i < 2; i++)
        MTEST_EQ("error code", MPI_SUCCESS, codes[i]);
    int v = 7;
    MTEST_CALL(MPI_Bcast(&v, 1, MPI_INT, rank == 0 ? MPI_ROOT : MPI_PROC_NULL, inter));
    MTEST_CALL(MPI_Comm_disconnect(&inter));
    MTEST_CALL(MPI_Info_free(&info));
    return mtest_finalize();
}
