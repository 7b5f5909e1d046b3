/*
 * The `file` info key of MPI_Comm_spawn / MPI_Comm_spawn_multiple, in oxmpi's format: a
 * file of further info pairs for the same command, one `key=value` a line (blanks around
 * key and value ignored, empty lines and lines starting with '#' skipped), read at the
 * root; a key given in the info itself wins over the file's.
 * - a file with soft=1:2, wdir=/tmp and a comment, maxprocs 4: 2 children, running in
 *   /tmp, error codes SUCCESS, SUCCESS, then MPI_ERR_SPAWN twice;
 * - the same file with wdir=/ in the info itself: the children run in /;
 * - spawn_multiple with the file for the second command only: 1 + 2 children;
 * - a file that does not exist, a line that is not key=value, a value that is empty, a
 *   file naming another file, a malformed soft value in the file: MPI_ERR_INFO_VALUE at
 *   every parent (error codes too), no intercommunicator.
 * Strict: the format of the file is oxmpi's (the standard leaves it to the
 * implementation; MPICH's Hydra and Open MPI ignore the key).
 */
#include "mtest.h"
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TAG 9

static int child(MPI_Comm parent)
{
    int size, rank;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    char cwd[4096] = "";
    if (!getcwd(cwd, sizeof cwd))
        strcpy(cwd, "?");
    int rep[2] = {size, strcmp(cwd, "/tmp") == 0 ? 1 : strcmp(cwd, "/") == 0 ? 2 : 0};
    MTEST_CALL(MPI_Send(rep, 2, MPI_INT, 0, TAG, parent));
    MTEST_CALL(MPI_Comm_disconnect(&parent));
    MPI_Finalize();
    return 0;
}

/* Writes `text` to a new file of the root; returns its name (the same at every rank). */
static void write_file(char *name, size_t len, const char *tag, const char *text)
{
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int pid = (int)getpid();
    MTEST_CALL(MPI_Bcast(&pid, 1, MPI_INT, 0, MPI_COMM_WORLD));
    snprintf(name, len, "/tmp/oxmpi-spawn-file-%d-%s", pid, tag);
    if (rank == 0) {
        FILE *f = fopen(name, "w");
        if (!f)
            MTEST_ABORT("cannot write %s", name);
        fputs(text, f);
        fclose(f);
    }
    MTEST_CALL(MPI_Barrier(MPI_COMM_WORLD));
}

/* Receives each child's report: its world size and working directory (1: /tmp, 2: /). */
static void check_children(MPI_Comm inter, int n, const int *dirs)
{
    int rank, rsize;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MTEST_CALL(MPI_Comm_remote_size(inter, &rsize));
    MTEST_EQ("children started", n, rsize);
    if (rank == 0) {
        for (int i = 0; i < rsize; i++) {
            int rep[2];
            MTEST_CALL(MPI_Recv(rep, 2, MPI_INT, i, TAG, inter, MPI_STATUS_IGNORE));
            MTEST_EQ("child's world size", n, rep[0]);
            MTEST_EQ("child's working directory (1: /tmp, 2: /)", dirs[i], rep[1]);
        }
    }
}

static void expect_refused(const char *prog, const char *file)
{
    MPI_Info info;
    MTEST_CALL(MPI_Info_create(&info));
    MTEST_CALL(MPI_Info_set(info, "file", file));
    int codes[2] = {0, 0};
    MPI_Comm inter = MPI_COMM_WORLD;
    int rc = MPI_Comm_spawn(prog, MPI_ARGV_NULL, 2, info, 0, MPI_COMM_WORLD, &inter, codes);
    MTEST_CALL(MPI_Info_free(&info));
    MTEST_CHECK(mtest_errclass(rc) == MPI_ERR_INFO_VALUE, "file %s: class %d (%s)", file,
                mtest_errclass(rc), mtest_errstr(rc));
    MTEST_CHECK(inter == MPI_COMM_NULL, "file %s: intercomm is not MPI_COMM_NULL", file);
    for (int i = 0; i < 2; i++)
        MTEST_EQ("error code class", MPI_ERR_INFO_VALUE, mtest_errclass(codes[i]));
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    MPI_Comm parent;
    MTEST_CALL(MPI_Comm_get_parent(&parent));
    if (parent != MPI_COMM_NULL)
        return child(parent);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    char good[256], bad[256];
    write_file(good, sizeof good, "good", "# spawn settings\n soft = 1:2 \n\nwdir=/tmp\n");

    MPI_Info info;
    MTEST_CALL(MPI_Info_create(&info));
    MTEST_CALL(MPI_Info_set(info, "file", good));
    int codes[4];
    MPI_Comm inter;
    MTEST_CALL(MPI_Comm_spawn(argv[0], MPI_ARGV_NULL, 4, info, 0, MPI_COMM_WORLD, &inter, codes));
    for (int i = 0; i < 4; i++)
        MTEST_EQ("error code class", i < 2 ? MPI_SUCCESS : MPI_ERR_SPAWN,
                 mtest_errclass(codes[i]));
    int in_tmp[2] = {1, 1}, in_root[2] = {2, 2};
    check_children(inter, 2, in_tmp);
    MTEST_CALL(MPI_Comm_disconnect(&inter));

    /* A key of the info itself wins over the file's. */
    MTEST_CALL(MPI_Info_set(info, "wdir", "/"));
    MTEST_CALL(MPI_Comm_spawn(argv[0], MPI_ARGV_NULL, 4, info, 0, MPI_COMM_WORLD, &inter,
                              MPI_ERRCODES_IGNORE));
    check_children(inter, 2, in_root);
    MTEST_CALL(MPI_Comm_disconnect(&inter));
    MTEST_CALL(MPI_Info_free(&info));

    /* spawn_multiple: the file applies to the command whose info names it. */
    char *cmds[2] = {argv[0], argv[0]};
    int np[2] = {1, 3};
    MPI_Info infos[2] = {MPI_INFO_NULL, MPI_INFO_NULL};
    MTEST_CALL(MPI_Info_create(&infos[1]));
    MTEST_CALL(MPI_Info_set(infos[1], "file", good));
    int mcodes[4];
    MTEST_CALL(MPI_Comm_spawn_multiple(2, cmds, MPI_ARGVS_NULL, np, infos, 0, MPI_COMM_WORLD,
                                       &inter, mcodes));
    MTEST_CALL(MPI_Info_free(&infos[1]));
    int want[4] = {MPI_SUCCESS, MPI_SUCCESS, MPI_SUCCESS, MPI_ERR_SPAWN};
    for (int i = 0; i < 4; i++)
        MTEST_EQ("spawn_multiple error code class", want[i], mtest_errclass(mcodes[i]));
    char cwd[4096] = "";
    MTEST_CHECK(getcwd(cwd, sizeof cwd) != NULL, "getcwd");
    int dirs[3] = {strcmp(cwd, "/tmp") == 0 ? 1 : strcmp(cwd, "/") == 0 ? 2 : 0, 1, 1};
    check_children(inter, 3, dirs);
    MTEST_CALL(MPI_Comm_disconnect(&inter));

    /* Files that cannot be used. */
    expect_refused(argv[0], "/nonexistent/oxmpi-spawn-info");
    const char *texts[] = {"soft 1:2\n", "wdir=\n", "file=/etc/hostname\n", "soft=1:x\n"};
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
        write_file(bad, sizeof bad, "bad", texts[i]);
        expect_refused(argv[0], bad);
        MTEST_CALL(MPI_Barrier(MPI_COMM_WORLD));
        if (rank == 0)
            unlink(bad);
    }
    if (rank == 0)
        unlink(good);
    return mtest_finalize();
}
