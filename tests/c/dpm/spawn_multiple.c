/*
 * MPI_Comm_spawn_multiple: two commands (this program with argument "first", 1 process;
 * and with "second", 2 processes, info wdir=/tmp) started as one job of 3. The children
 * check MPI_APPNUM (0, then 1), their argument and (second command) their working
 * directory, and report their appnum to parent rank 0; the intercommunicator's remote
 * group has 3 processes in command order; MPI_ARGVS_NULL and MPI_ERRCODES_IGNORE are
 * accepted in a second spawn.
 */
#include "mtest.h"
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int child(MPI_Comm parent, int argc, char **argv)
{
    int rank, flag, *appnum;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MTEST_CALL(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &appnum, &flag));
    MTEST_CHECK(flag, "no MPI_APPNUM");
    int a = flag ? *appnum : -1;
    if (argc >= 2) {
        const char *want = a == 0 ? "first" : "second";
        MTEST_CHECK(strcmp(argv[1], want) == 0, "argv[1] %s, expected %s", argv[1], want);
        if (a == 1) {
            char cwd[4096];
            MTEST_CHECK(getcwd(cwd, sizeof cwd) && strcmp(cwd, "/tmp") == 0,
                        "working directory is not /tmp");
        }
    }
    int report[2] = {a, argc};
    MTEST_CALL(MPI_Send(report, 2, MPI_INT, 0, 5, parent));
    MTEST_CALL(MPI_Comm_disconnect(&parent));
    return mtest_child_finalize("spawn_multiple child");
}

int main(int argc, char **argv)
{
    MPI_Comm parent = mtest_init_spawned(&argc, &argv);
    if (parent != MPI_COMM_NULL)
        return child(parent, argc, argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);

    char *cmds[2] = {argv[0], argv[0]};
    char *a0[] = {"first", NULL}, *a1[] = {"second", NULL};
    char **argvs[2] = {a0, a1};
    int np[2] = {1, 2};
    MPI_Info infos[2] = {MPI_INFO_NULL, MPI_INFO_NULL};
    MTEST_CALL(MPI_Info_create(&infos[1]));
    MTEST_CALL(MPI_Info_set(infos[1], "wdir", "/tmp"));
    int codes[3] = {-1, -1, -1};
    MPI_Comm inter;
    MTEST_CALL(MPI_Comm_spawn_multiple(2, cmds, argvs, np, infos, 0, MPI_COMM_WORLD, &inter, codes));
    MTEST_CALL(MPI_Info_free(&infos[1]));
    int rsize;
    MTEST_CALL(MPI_Comm_remote_size(inter, &rsize));
    MTEST_EQ("children", 3, rsize);
    if (rank == 0) {
        for (int i = 0; i < 3; i++)
            MTEST_EQ("error code", MPI_SUCCESS, codes[i]);
        for (int c = 0; c < 3; c++) {
            int rep[2];
            MTEST_CALL(MPI_Recv(rep, 2, MPI_INT, c, 5, inter, MPI_STATUS_IGNORE));
            MTEST_EQ("appnum of child", c == 0 ? 0 : 1, rep[0]);
            MTEST_EQ("argc of child", 2, rep[1]);
        }
    }
    MTEST_CALL(MPI_Comm_disconnect(&inter));

    /* MPI_ARGVS_NULL and MPI_ERRCODES_IGNORE. */
    infos[1] = MPI_INFO_NULL;
    MTEST_CALL(MPI_Comm_spawn_multiple(2, cmds, MPI_ARGVS_NULL, np, infos, 0, MPI_COMM_WORLD,
                                       &inter, MPI_ERRCODES_IGNORE));
    if (rank == 0) {
        for (int c = 0; c < 3; c++) {
            int rep[2];
            MTEST_CALL(MPI_Recv(rep, 2, MPI_INT, c, 5, inter, MPI_STATUS_IGNORE));
            MTEST_EQ("appnum of child", c == 0 ? 0 : 1, rep[0]);
            MTEST_EQ("argc of child (no arguments)", 1, rep[1]);
        }
    }
    MTEST_CALL(MPI_Comm_disconnect(&inter));
    return mtest_finalize();
}
