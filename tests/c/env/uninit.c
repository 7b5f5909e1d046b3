/*
 * Calls made before MPI_Init or after MPI_Finalize. Under the default error handler
 * (MPI_ERRORS_ARE_FATAL) they must end the process cleanly: a non-zero exit status (not a
 * crash signal) and a message on stderr naming the call (oxmpi: "MPI_Send"; elsewhere the
 * name without its "MPI_" prefix is enough, as MPICH prints "internal_Send"). Each case runs in a forked child
 * whose stderr is captured; the parent checks the outcome. The calls the standard allows
 * outside MPI (MPI_Initialized, MPI_Finalized, MPI_Get_version, MPI_Get_library_version)
 * succeed.
 *
 * Rank 0 prints " No Errors" when its checks pass; ranks that find errors after
 * MPI_Finalize exit non-zero, so the launcher reports the failure.
 */
#include "mtest.h"

#include <sys/wait.h>

typedef void (*action)(void);

static int strict;

static void send_one(void)
{
    int x = 1;
    MPI_Send(&x, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
}

static void comm_rank(void)
{
    int r;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
}

static void init_again(void)
{
    MPI_Init(NULL, NULL);
}

static void barrier_like_wait(void)
{
    MPI_Request r = MPI_REQUEST_NULL;
    int x;
    MPI_Irecv(&x, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, &r);
}

/* Runs `f` in a child; returns the number of failed checks. */
static int expect_fatal(action f, const char *name, const char *when)
{
    int pipefd[2];
    fflush(stdout);
    fflush(stderr);
    if (pipe(pipefd) != 0) {
        fprintf(stderr, "pipe failed\n");
        return 1;
    }
    pid_t pid = fork();
    if (pid < 0) {
        fprintf(stderr, "fork failed\n");
        return 1;
    }
    if (pid == 0) {
        close(pipefd[0]);
        dup2(pipefd[1], 2);
        f();
        /* reached only if the call returned */
        _exit(0);
    }
    close(pipefd[1]);
    char out[4096];
    size_t got = 0;
    ssize_t n;
    while ((n = read(pipefd[0], out + got, sizeof out - 1 - got)) > 0) {
        got += (size_t)n;
    }
    out[got] = 0;
    close(pipefd[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    int errs = 0;
    if (WIFSIGNALED(status)) {
        fprintf(stderr, "%s %s: child killed by signal %d\n", name, when, WTERMSIG(status));
        errs++;
    } else if (WEXITSTATUS(status) == 0) {
        fprintf(stderr, "%s %s: returned instead of ending the process\n", name, when);
        errs++;
    }
    if (strstr(out, strict ? name : name + 4) == NULL) {
        fprintf(stderr, "%s %s: stderr does not name the call: \"%s\"\n", name, when, out);
        errs++;
    }
    return errs;
}

static int allowed_calls(int init_flag, int fin_flag, const char *when)
{
    int errs = 0, flag = -1, v = -1, sv = -1, len = -1;
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    if (MPI_Initialized(&flag) != MPI_SUCCESS || flag != init_flag) {
        fprintf(stderr, "MPI_Initialized %s: %d\n", when, flag);
        errs++;
    }
    if (MPI_Finalized(&flag) != MPI_SUCCESS || flag != fin_flag) {
        fprintf(stderr, "MPI_Finalized %s: %d\n", when, flag);
        errs++;
    }
    /* the header's numbers describe the library except in the runner's ABI mode */
    int abi = mtest_env_flag("MTEST_ABI");
    if (MPI_Get_version(&v, &sv) != MPI_SUCCESS || v < 1 ||
        (!abi && (v != MPI_VERSION || sv != MPI_SUBVERSION))) {
        fprintf(stderr, "MPI_Get_version %s: %d.%d\n", when, v, sv);
        errs++;
    }
    if (MPI_Get_library_version(lib, &len) != MPI_SUCCESS || len <= 0) {
        fprintf(stderr, "MPI_Get_library_version %s failed\n", when);
        errs++;
    }
    return errs;
}

int main(int argc, char **argv)
{
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int liblen = 0;
    MPI_Get_library_version(lib, &liblen);
    strict = strncmp(lib, "oxmpi", 5) == 0;
    int errs = allowed_calls(0, 0, "before MPI_Init");
    errs += expect_fatal(send_one, "MPI_Send", "before MPI_Init");
    errs += expect_fatal(comm_rank, "MPI_Comm_rank", "before MPI_Init");

    mtest_init(&argc, &argv);
    mtest.errors += errs;
    int rank = mtest_rank();
    int rc = mtest_finalize();

    errs = allowed_calls(1, 1, "after MPI_Finalize");
    errs += expect_fatal(send_one, "MPI_Send", "after MPI_Finalize");
    errs += expect_fatal(barrier_like_wait, "MPI_Irecv", "after MPI_Finalize");
    errs += expect_fatal(init_again, "MPI_Init", "after MPI_Finalize");
    if (errs) {
        fprintf(stderr, "rank %d: %d errors after MPI_Finalize\n", rank, errs);
        rc = 1;
    }
    return rc;
}
