/*
 * Calls made before MPI_Init and after MPI_Finalize.
 *
 * MPI-4.1 section 12.4.1 (table 9) lists the functions a program may call at any time:
 * MPI_Initialized, MPI_Finalized, MPI_Get_version, MPI_Get_library_version, the info
 * calls, MPI_Errhandler_free, MPI_Error_class, MPI_Error_string and the MPI_Add_error_*
 * calls.  Those must work outside MPI (all but MPI_Errhandler_free are exercised).  Any other call is erroneous; oxmpi reports it as
 * MPI_ERR_OTHER and, since no error handler can be installed outside MPI, the default
 * MPI_ERRORS_ARE_FATAL prints a line naming the call and ends the process with a
 * non-zero status.  Each such call runs in a forked child whose stderr is captured: it
 * must end with a non-zero exit status, never by a signal (a crash), and (on oxmpi) say
 * which call, the class and that MPI is not initialized / already finalized.  The call
 * list includes calls that need no communication at all (type and group queries,
 * MPI_Type_commit, MPI_Get_address), which an implementation could otherwise answer
 * from handles alone.
 *
 * Rank 0 prints " No Errors" when its checks before MPI_Finalize pass; a rank that finds
 * errors after MPI_Finalize exits non-zero, so the launcher reports the failure.
 */
#include "mtest.h"

#include <sys/wait.h>

typedef void (*action)(void);

static int strict; /* the library is oxmpi: check its message too */
static int ibuf[4];

static void comm_rank(void) { int r; MPI_Comm_rank(MPI_COMM_WORLD, &r); }
static void comm_size(void) { int r; MPI_Comm_size(MPI_COMM_WORLD, &r); }
static void do_send(void) { MPI_Send(ibuf, 1, MPI_INT, 0, 0, MPI_COMM_WORLD); }
static void do_recv(void) { MPI_Recv(ibuf, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); }
static void irecv(void) { MPI_Request r; MPI_Irecv(ibuf, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, &r); }
static void wait_null(void) { MPI_Request r = MPI_REQUEST_NULL; MPI_Wait(&r, MPI_STATUS_IGNORE); }
static void barrier(void) { MPI_Barrier(MPI_COMM_WORLD); }
static void allreduce(void) { MPI_Allreduce(ibuf, ibuf + 1, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD); }
static void comm_dup(void) { MPI_Comm c; MPI_Comm_dup(MPI_COMM_SELF, &c); }
static void type_commit(void) { MPI_Datatype t = MPI_INT; MPI_Type_commit(&t); }
static void type_contiguous(void) { MPI_Datatype t; MPI_Type_contiguous(2, MPI_INT, &t); }
static void type_size(void) { int s; MPI_Type_size(MPI_INT, &s); }
static void group_size(void) { int s; MPI_Group_size(MPI_GROUP_EMPTY, &s); }
static void op_create(void) { MPI_Op o; MPI_Op_create(NULL, 1, &o); }
static void op_commutative(void) { int c; MPI_Op_commutative(MPI_SUM, &c); }
static void get_address(void) { MPI_Aint a; MPI_Get_address(ibuf, &a); }
static void get_count(void)
{
    MPI_Status st;
    int n;
    memset(&st, 0, sizeof st);
    MPI_Get_count(&st, MPI_INT, &n);
}
static void set_errhandler(void) { MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN); }
static void comm_get_attr(void)
{
    int *v, flag;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &v, &flag);
}
static void alloc_mem(void) { void *p; MPI_Alloc_mem(16, MPI_INFO_NULL, &p); }
static void buffer_attach(void) { static char b[256]; MPI_Buffer_attach(b, sizeof b); }
static void query_thread(void) { int p; MPI_Query_thread(&p); }
static void processor_name(void)
{
    char n[MPI_MAX_PROCESSOR_NAME];
    int len;
    MPI_Get_processor_name(n, &len);
}
static void finalize(void) { MPI_Finalize(); }
static void init(void) { MPI_Init(NULL, NULL); }

static const struct {
    const char *name;
    action f;
} calls[] = {
    {"MPI_Comm_rank", comm_rank},
    {"MPI_Comm_size", comm_size},
    {"MPI_Send", do_send},
    {"MPI_Recv", do_recv},
    {"MPI_Irecv", irecv},
    {"MPI_Wait", wait_null},
    {"MPI_Barrier", barrier},
    {"MPI_Allreduce", allreduce},
    {"MPI_Comm_dup", comm_dup},
    {"MPI_Type_commit", type_commit},
    {"MPI_Type_contiguous", type_contiguous},
    {"MPI_Type_size", type_size},
    {"MPI_Group_size", group_size},
    {"MPI_Op_create", op_create},
    {"MPI_Op_commutative", op_commutative},
    {"MPI_Get_address", get_address},
    {"MPI_Get_count", get_count},
    {"MPI_Comm_set_errhandler", set_errhandler},
    {"MPI_Comm_get_attr", comm_get_attr},
    {"MPI_Alloc_mem", alloc_mem},
    {"MPI_Buffer_attach", buffer_attach},
    {"MPI_Query_thread", query_thread},
    {"MPI_Get_processor_name", processor_name},
    {"MPI_Finalize", finalize},
};

/* Runs `f` in a child; returns the number of failed checks. */
static int expect_refused(action f, const char *name, const char *when, const char *why)
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
    while (got < sizeof out - 1 && (n = read(pipefd[0], out + got, sizeof out - 1 - got)) > 0) {
        got += (size_t)n;
    }
    out[got] = 0;
    close(pipefd[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    int errs = 0;
    if (WIFSIGNALED(status)) {
        fprintf(stderr, "%s %s: child killed by signal %d\n", name, when, WTERMSIG(status));
        return 1;
    }
    if (!strict) {
        return 0; /* other libraries: not crashing is all that is checked */
    }
    if (WEXITSTATUS(status) == 0) {
        fprintf(stderr, "%s %s: returned instead of ending the process\n", name, when);
        errs++;
    }
    if (strstr(out, name) == NULL || strstr(out, "MPI_ERR_OTHER") == NULL ||
        strstr(out, why) == NULL) {
        fprintf(stderr, "%s %s: stderr does not name the call, MPI_ERR_OTHER and \"%s\": \"%s\"\n",
                name, when, why, out);
        errs++;
    }
    return errs;
}

static int refused_calls(const char *when, const char *why)
{
    int errs = 0;
    for (size_t i = 0; i < sizeof calls / sizeof calls[0]; i++) {
        errs += expect_refused(calls[i].f, calls[i].name, when, why);
    }
    return errs;
}

/* The always-available calls work; `init_flag`/`fin_flag` are the expected flags. */
static int allowed_calls(int init_flag, int fin_flag, const char *when)
{
    int errs = 0, flag = -1, v = -1, sv = -1, len = -1;
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
#define CHECK(cond, ...)                                                                          \
    do {                                                                                          \
        if (!(cond)) {                                                                            \
            fprintf(stderr, __VA_ARGS__);                                                         \
            fprintf(stderr, " (%s)\n", when);                                                     \
            errs++;                                                                               \
        }                                                                                         \
    } while (0)
    CHECK(MPI_Initialized(&flag) == MPI_SUCCESS && flag == init_flag, "MPI_Initialized: %d",
          flag);
    CHECK(MPI_Finalized(&flag) == MPI_SUCCESS && flag == fin_flag, "MPI_Finalized: %d", flag);
    CHECK(MPI_Get_version(&v, &sv) == MPI_SUCCESS && v >= 1, "MPI_Get_version: %d.%d", v, sv);
    CHECK(MPI_Get_library_version(lib, &len) == MPI_SUCCESS && len > 0,
          "MPI_Get_library_version failed");
    if (!strict) {
        return errs; /* MPICH 4.0 and Open MPI 4.1 predate the rest of table 9 */
    }
    /* info objects */
    MPI_Info info = MPI_INFO_NULL, dup = MPI_INFO_NULL;
    char key[MPI_MAX_INFO_KEY + 1];
    CHECK(MPI_Info_create(&info) == MPI_SUCCESS, "MPI_Info_create failed");
    CHECK(MPI_Info_set(info, "colour", "blue") == MPI_SUCCESS, "MPI_Info_set failed");
    int nkeys = -1;
    CHECK(MPI_Info_get_nkeys(info, &nkeys) == MPI_SUCCESS && nkeys == 1,
          "MPI_Info_get_nkeys: %d", nkeys);
    CHECK(MPI_Info_get_nthkey(info, 0, key) == MPI_SUCCESS && strcmp(key, "colour") == 0,
          "MPI_Info_get_nthkey");
#if defined(OXMPI) || MPI_VERSION >= 4 /* MPI-4 calls (Open MPI 4.1 lacks them) */
    char val[64];
    int buflen = sizeof val;
    flag = 0;
    CHECK(MPI_Info_get_string(info, "colour", &buflen, val, &flag) == MPI_SUCCESS && flag &&
              strcmp(val, "blue") == 0,
          "MPI_Info_get_string");
    MPI_Info env = MPI_INFO_NULL;
    CHECK(MPI_Info_create_env(0, NULL, &env) == MPI_SUCCESS, "MPI_Info_create_env failed");
    CHECK(MPI_Info_free(&env) == MPI_SUCCESS, "MPI_Info_free (env)");
#endif
    CHECK(MPI_Info_dup(info, &dup) == MPI_SUCCESS, "MPI_Info_dup failed");
    CHECK(MPI_Info_delete(info, "colour") == MPI_SUCCESS, "MPI_Info_delete failed");
    CHECK(MPI_Info_free(&info) == MPI_SUCCESS && info == MPI_INFO_NULL, "MPI_Info_free");
    CHECK(MPI_Info_free(&dup) == MPI_SUCCESS, "MPI_Info_free (dup)");
    /* error classes, codes and strings */
    int cls = -1, code = -1;
    CHECK(MPI_Error_class(MPI_ERR_RANK, &cls) == MPI_SUCCESS && cls == MPI_ERR_RANK,
          "MPI_Error_class: %d", cls);
    char s[MPI_MAX_ERROR_STRING];
    len = 0;
    CHECK(MPI_Error_string(MPI_ERR_RANK, s, &len) == MPI_SUCCESS && len > 0,
          "MPI_Error_string failed");
    CHECK(MPI_Add_error_class(&cls) == MPI_SUCCESS && cls > MPI_ERR_LASTCODE,
          "MPI_Add_error_class: %d", cls);
    CHECK(MPI_Add_error_code(cls, &code) == MPI_SUCCESS && code > MPI_ERR_LASTCODE,
          "MPI_Add_error_code: %d", code);
    CHECK(MPI_Add_error_string(code, "a code added outside MPI") == MPI_SUCCESS,
          "MPI_Add_error_string failed");
    len = 0;
    CHECK(MPI_Error_string(code, s, &len) == MPI_SUCCESS &&
              strcmp(s, "a code added outside MPI") == 0,
          "MPI_Error_string of an added code: \"%s\"", s);
    int c2 = -1;
    CHECK(MPI_Error_class(code, &c2) == MPI_SUCCESS && c2 == cls, "MPI_Error_class: %d", c2);
#undef CHECK
    return errs;
}

int main(int argc, char **argv)
{
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int liblen = 0;
    MPI_Get_library_version(lib, &liblen);
    strict = strncmp(lib, "oxmpi", 5) == 0;

    int errs = allowed_calls(0, 0, "before MPI_Init");
    errs += refused_calls("before MPI_Init", "not been initialized");

    mtest_init(&argc, &argv);
    mtest.errors += errs;
    int rank = mtest_rank();
    /* the added classes are still there, and MPI works normally */
    int one = 1, sum = 0;
    MTEST_CALL(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    MTEST_EQ("MPI_Allreduce", mtest_size(), sum);
    int rc = mtest_finalize();

    errs = allowed_calls(1, 1, "after MPI_Finalize");
    errs += refused_calls("after MPI_Finalize", "already been finalized");
    errs += expect_refused(init, "MPI_Init", "after MPI_Finalize", "after MPI_Finalize");
    if (errs) {
        fprintf(stderr, "rank %d: %d errors outside MPI\n", rank, errs);
        rc = 1;
    }
    return rc;
}
