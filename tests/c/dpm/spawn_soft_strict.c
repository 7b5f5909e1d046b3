/*
 * The `soft` info key of MPI_Comm_spawn / MPI_Comm_spawn_multiple (MPI 4.1 §11.8.4): the
 * number of processes started, array_of_errcodes (MPI_SUCCESS for the processes started,
 * class MPI_ERR_SPAWN for the rest), the remote group's size, the children's
 * MPI_COMM_WORLD and MPI_UNIVERSE_SIZE. SOFT_CASE selects the case:
 *   narrow (default; any number of parents, no universe size given): soft only picks the
 *     largest allowed number up to maxprocs: "2,4,6" of 5 -> 4; spawn_multiple with
 *     "2" of 3 and no soft for 2 -> 2 + 2; malformed values -> MPI_ERR_INFO_VALUE, a
 *     set with no number from 1 to maxprocs -> MPI_ERR_SPAWN;
 * and, with oxmpi's mpiexec and a universe size of 4 (-usize 4, or a host list with 4
 * slots; one parent: tests/c/dpm/spawn_soft runs these):
 *   usize4: "1:8" of 8 -> 3; then (those running) "1:2" fits nothing -> MPI_ERR_SPAWN and
 *     nothing started, while a spawn without soft still oversubscribes;
 *   usize4b: "2,4,6" of 8 -> 2; then "1:8" of 8 -> 1; then "1" -> MPI_ERR_SPAWN;
 *   nested: one child, which spawns with "1:8" of 8 -> 2 (its parent's job counts);
 * and with a universe size of 5 (-usize 5):
 *   multiple: spawn_multiple with "1,3" of 4 -> 3 and "1:2" of 2 -> 1.
 * Strict: oxmpi's process manager applies soft; MPICH's Hydra ignores it (the library
 * still narrows maxprocs to an allowed number).
 */
#include "mtest.h"
#include <stdlib.h>
#include <string.h>

#define TAG 7

/* A child: argv = "child" SIZE UNIVERSE [nest]; reports its world size and appnum. */
static int child(MPI_Comm parent, int argc, char **argv)
{
    int size, flag, *appnum, *usize;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MTEST_CHECK(argc >= 4, "child arguments missing");
    int want = argc >= 4 ? atoi(argv[2]) : -1, universe = argc >= 4 ? atoi(argv[3]) : 0;
    MTEST_EQ("children in MPI_COMM_WORLD", want, size);
    if (universe > 0) {
        MTEST_CALL(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &usize, &flag));
        MTEST_CHECK(flag && *usize == universe, "MPI_UNIVERSE_SIZE %d, expected %d",
                    flag ? *usize : -1, universe);
    }
    MTEST_CALL(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &appnum, &flag));
    if (argc >= 5 && strcmp(argv[4], "nest") == 0) {
        /* The family runs the parent and this child: 2 of 4 slots are free. */
        MPI_Info info;
        MTEST_CALL(MPI_Info_create(&info));
        MTEST_CALL(MPI_Info_set(info, "soft", "1:8"));
        char *args[] = {"child", "2", "4", NULL};
        int codes[8];
        MPI_Comm inter;
        MTEST_CALL(MPI_Comm_spawn(argv[0], args, 8, info, 0, MPI_COMM_WORLD, &inter, codes));
        MTEST_CALL(MPI_Info_free(&info));
        int rsize;
        MTEST_CALL(MPI_Comm_remote_size(inter, &rsize));
        MTEST_EQ("grandchildren", 2, rsize);
        for (int i = 0; i < 8; i++)
            MTEST_EQ("grandchild error code class", i < 2 ? MPI_SUCCESS : MPI_ERR_SPAWN,
                     mtest_errclass(codes[i]));
        for (int i = 0; i < rsize; i++) {
            int rep[2];
            MTEST_CALL(MPI_Recv(rep, 2, MPI_INT, i, TAG, inter, MPI_STATUS_IGNORE));
            MTEST_EQ("grandchild's world size", 2, rep[0]);
        }
        MTEST_CALL(MPI_Comm_disconnect(&inter));
    }
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int rep[2] = {mtest.errors ? -1 : size, flag ? *appnum : -1};
    MTEST_CALL(MPI_Send(rep, 2, MPI_INT, 0, TAG, parent));
    MTEST_CALL(MPI_Comm_disconnect(&parent));
    int errors = mtest.errors;
    MPI_Finalize();
    return errors ? 1 : 0;
}

/* Spawns `maxprocs` children with info soft=SOFT (NULL: none); expects `started` of
 * them (0: the spawn fails with `fail_class`); keeps the intercommunicator in *out. */
static void spawn_soft(const char *prog, const char *soft, int maxprocs, int started,
                       int fail_class, int universe, const char *nest, MPI_Comm *out)
{
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Info info = MPI_INFO_NULL;
    if (soft) {
        MTEST_CALL(MPI_Info_create(&info));
        MTEST_CALL(MPI_Info_set(info, "soft", soft));
    }
    char n[16], u[16];
    snprintf(n, sizeof n, "%d", started);
    snprintf(u, sizeof u, "%d", universe);
    char *args[] = {"child", n, u, (char *)nest, NULL};
    int codes[16];
    for (int i = 0; i < 16; i++)
        codes[i] = -12345;
    MPI_Comm inter = MPI_COMM_WORLD;
    int rc = MPI_Comm_spawn(prog, args, maxprocs, info, 0, MPI_COMM_WORLD, &inter, codes);
    if (info != MPI_INFO_NULL)
        MTEST_CALL(MPI_Info_free(&info));
    if (started == 0) {
        MTEST_EQ("class of a spawn that fits nothing", fail_class, mtest_errclass(rc));
        MTEST_CHECK(inter == MPI_COMM_NULL, "intercomm of a failed spawn is not MPI_COMM_NULL");
        for (int i = 0; i < maxprocs; i++)
            MTEST_EQ("error code class (failed spawn)", fail_class, mtest_errclass(codes[i]));
        *out = MPI_COMM_NULL;
        return;
    }
    MTEST_EQ("spawn with soft", MPI_SUCCESS, rc);
    if (rc != MPI_SUCCESS) {
        *out = MPI_COMM_NULL;
        return;
    }
    /* The codes are an output at every parent. */
    for (int i = 0; i < maxprocs; i++)
        MTEST_EQ("error code class", i < started ? MPI_SUCCESS : MPI_ERR_SPAWN,
                 mtest_errclass(codes[i]));
    MTEST_EQ("untouched entry after maxprocs", -12345, codes[maxprocs]);
    int rsize;
    MTEST_CALL(MPI_Comm_remote_size(inter, &rsize));
    MTEST_EQ("remote group (children started)", started, rsize);
    if (rank == 0) {
        for (int i = 0; i < rsize; i++) {
            int rep[2];
            MTEST_CALL(MPI_Recv(rep, 2, MPI_INT, i, TAG, inter, MPI_STATUS_IGNORE));
            MTEST_EQ("child's world size (-1: it found errors)", started, rep[0]);
        }
    }
    *out = inter;
}

static void disconnect_all(MPI_Comm *c, int n)
{
    for (int i = 0; i < n; i++)
        if (c[i] != MPI_COMM_NULL)
            MTEST_CALL(MPI_Comm_disconnect(&c[i]));
}

static void expect_info_error(const char *prog, const char *soft, int maxprocs, int cls)
{
    MPI_Info info;
    MTEST_CALL(MPI_Info_create(&info));
    MTEST_CALL(MPI_Info_set(info, "soft", soft));
    int codes[8];
    MPI_Comm inter = MPI_COMM_WORLD;
    int rc = MPI_Comm_spawn(prog, MPI_ARGV_NULL, maxprocs, info, 0, MPI_COMM_WORLD, &inter,
                            codes);
    MTEST_CALL(MPI_Info_free(&info));
    MTEST_CHECK(mtest_errclass(rc) == cls, "soft %s: class %d (%s), expected %d", soft,
                mtest_errclass(rc), mtest_errstr(rc), cls);
    MTEST_CHECK(inter == MPI_COMM_NULL, "soft %s: intercomm is not MPI_COMM_NULL", soft);
    for (int i = 0; i < maxprocs; i++)
        MTEST_EQ("error code class (refused)", cls, mtest_errclass(codes[i]));
}

static void narrow(const char *prog)
{
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm c[1];
    spawn_soft(prog, "2,4,6", 5, 4, 0, 0, NULL, &c[0]);
    disconnect_all(c, 1);

    /* spawn_multiple: "2" of 3, then 2 without soft: codes per command. */
    char *cmds[2] = {(char *)prog, (char *)prog};
    char *a0[] = {"child", "4", "0", NULL};
    char **argvs[2] = {a0, a0};
    int np[2] = {3, 2};
    MPI_Info infos[2] = {MPI_INFO_NULL, MPI_INFO_NULL};
    MTEST_CALL(MPI_Info_create(&infos[0]));
    MTEST_CALL(MPI_Info_set(infos[0], "soft", "2"));
    int codes[6];
    for (int i = 0; i < 6; i++)
        codes[i] = -12345;
    MPI_Comm inter;
    MTEST_CALL(MPI_Comm_spawn_multiple(2, cmds, argvs, np, infos, 0, MPI_COMM_WORLD, &inter,
                                       codes));
    MTEST_CALL(MPI_Info_free(&infos[0]));
    int want[5] = {MPI_SUCCESS, MPI_SUCCESS, MPI_ERR_SPAWN, MPI_SUCCESS, MPI_SUCCESS};
    for (int i = 0; i < 5; i++)
        MTEST_EQ("spawn_multiple error code class", want[i], mtest_errclass(codes[i]));
    MTEST_EQ("untouched entry", -12345, codes[5]);
    int rsize;
    MTEST_CALL(MPI_Comm_remote_size(inter, &rsize));
    MTEST_EQ("spawn_multiple remote group", 4, rsize);
    if (rank == 0) {
        for (int i = 0; i < rsize; i++) {
            int rep[2];
            MTEST_CALL(MPI_Recv(rep, 2, MPI_INT, i, TAG, inter, MPI_STATUS_IGNORE));
            MTEST_EQ("child's world size", 4, rep[0]);
            MTEST_EQ("child's appnum", i < 2 ? 0 : 1, rep[1]);
        }
    }
    MTEST_CALL(MPI_Comm_disconnect(&inter));

    /* Malformed values, and sets with no number from 1 to maxprocs. */
    const char *bad[] = {"1:x", "1,,2", "4:1", "1:5:0", "1:5:-1", "1:2:3:4"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        expect_info_error(prog, bad[i], 3, MPI_ERR_INFO_VALUE);
    expect_info_error(prog, "9:12", 8, MPI_ERR_SPAWN);
    expect_info_error(prog, "0", 2, MPI_ERR_SPAWN);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    MPI_Comm parent;
    MTEST_CALL(MPI_Comm_get_parent(&parent));
    if (parent != MPI_COMM_NULL)
        return child(parent, argc, argv);
    const char *mode = getenv("SOFT_CASE");
    if (!mode)
        mode = "narrow";
    MPI_Comm c[4] = {MPI_COMM_NULL, MPI_COMM_NULL, MPI_COMM_NULL, MPI_COMM_NULL};
    if (strcmp(mode, "narrow") == 0) {
        narrow(argv[0]);
    } else if (strcmp(mode, "usize4") == 0) {
        spawn_soft(argv[0], "1:8", 8, 3, 0, 4, NULL, &c[0]);
        spawn_soft(argv[0], "1:2", 2, 0, MPI_ERR_SPAWN, 4, NULL, &c[1]);
        /* Without soft, a full universe is oversubscribed as always. */
        spawn_soft(argv[0], NULL, 1, 1, 0, 4, NULL, &c[2]);
    } else if (strcmp(mode, "usize4b") == 0) {
        spawn_soft(argv[0], "2,4,6", 8, 2, 0, 4, NULL, &c[0]);
        spawn_soft(argv[0], "1:8", 8, 1, 0, 4, NULL, &c[1]);
        spawn_soft(argv[0], "1", 1, 0, MPI_ERR_SPAWN, 4, NULL, &c[2]);
    } else if (strcmp(mode, "nested") == 0) {
        spawn_soft(argv[0], "1", 4, 1, 0, 4, "nest", &c[0]);
    } else if (strcmp(mode, "multiple") == 0) {
        char *cmds[2] = {argv[0], argv[0]};
        char *a0[] = {"child", "4", "5", NULL};
        char **argvs[2] = {a0, a0};
        int np[2] = {4, 2};
        MPI_Info infos[2];
        MTEST_CALL(MPI_Info_create(&infos[0]));
        MTEST_CALL(MPI_Info_set(infos[0], "soft", "1,3"));
        MTEST_CALL(MPI_Info_create(&infos[1]));
        MTEST_CALL(MPI_Info_set(infos[1], "soft", "1:2"));
        int codes[6];
        MTEST_CALL(MPI_Comm_spawn_multiple(2, cmds, argvs, np, infos, 0, MPI_COMM_WORLD, &c[0],
                                           codes));
        MTEST_CALL(MPI_Info_free(&infos[0]));
        MTEST_CALL(MPI_Info_free(&infos[1]));
        int want[6] = {MPI_SUCCESS, MPI_SUCCESS,   MPI_SUCCESS,
                       MPI_ERR_SPAWN, MPI_SUCCESS, MPI_ERR_SPAWN};
        for (int i = 0; i < 6; i++)
            MTEST_EQ("spawn_multiple error code class", want[i], mtest_errclass(codes[i]));
        int rsize;
        MTEST_CALL(MPI_Comm_remote_size(c[0], &rsize));
        MTEST_EQ("spawn_multiple remote group", 4, rsize);
        for (int i = 0; i < rsize; i++) {
            int rep[2];
            MTEST_CALL(MPI_Recv(rep, 2, MPI_INT, i, TAG, c[0], MPI_STATUS_IGNORE));
            MTEST_EQ("child's world size", 4, rep[0]);
            MTEST_EQ("child's appnum", i < 3 ? 0 : 1, rep[1]);
        }
    } else {
        MTEST_ABORT("unknown SOFT_CASE %s", mode);
    }
    disconnect_all(c, 4);
    return mtest_finalize();
}
