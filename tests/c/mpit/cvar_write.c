/* Writing oxmpi's control variables and seeing the effect.
 *  - Before MPI_Init: OXMPI_COLL_SHM is written 0 (the shared-memory path of
 *    collectives off), and MPI_Init runs with it: afterwards the variable reads 0 and
 *    a small MPI_Allreduce runs a point-to-point algorithm, which
 *    coll_algorithm_calls counts (the shared-memory path counts nothing).
 *  - While MPI runs: OXMPI_COLL_ALLREDUCE_ALGO is written "ring", then
 *    "recursive_doubling" (an enumeration item each); each MPI_Allreduce after a write
 *    runs the written algorithm (coll_last_algorithm names it, coll_algorithm_calls
 *    counts it) and gives the right sum. OXMPI_YIELD (a number) reads back what was
 *    written; OXMPI_SHM_EAGER_LIMIT (text) reads "auto" or its value.
 *  - Refusals: a variable MPI_Init reads (OXMPI_SHM_RING_BYTES) while MPI runs:
 *    MPI_T_ERR_CVAR_SET_NOT_NOW; a variable of mpiexec (OXMPI_LAUNCHER, scope
 *    constant): MPI_T_ERR_CVAR_SET_NEVER; out-of-range and unknown values:
 *    MPI_T_ERR_INVALID; any write after MPI_Finalize: MPI_T_ERR_CVAR_SET_NEVER.
 * Other implementations: skipped (the variables are oxmpi's). */
#include "mpit_util.h"

static MPI_T_cvar_handle cvar(const char *name, int *count)
{
    MPI_T_cvar_handle h = MPI_T_CVAR_HANDLE_NULL;
    int i = mpit_cvar(name);
    MTEST_CHECK(i >= 0, "no control variable %s", name);
    if (i >= 0) {
        T_CALL(MPI_T_cvar_handle_alloc(i, NULL, &h, count));
    }
    return h;
}

/* The value of enumeration item `want` of the enumeration of control variable `name`. */
static int item_value(const char *name, const char *want)
{
    MPI_T_enum e = MPI_T_ENUM_NULL;
    MPI_Datatype t;
    T_CALL(MPI_T_cvar_get_info(mpit_cvar(name), NULL, NULL, NULL, &t, &e, NULL, NULL, NULL,
                               NULL));
    MTEST_CHECK(t == MPI_INT && e != MPI_T_ENUM_NULL, "%s is not an enumeration", name);
    int num = 0;
    T_CALL(MPI_T_enum_get_info(e, &num, NULL, NULL));
    for (int k = 0; k < num; k++) {
        char item[64];
        int len = sizeof item, value = -1;
        T_CALL(MPI_T_enum_get_item(e, k, &value, item, &len));
        if (strcmp(item, want) == 0) {
            return value;
        }
    }
    MTEST_CHECK(0, "%s has no item %s", name, want);
    return -1;
}

/* The item of enumeration `e` whose value is `v`. */
static const char *item_name(MPI_T_enum e, int v)
{
    static char item[64];
    int num = 0;
    T_CALL(MPI_T_enum_get_info(e, &num, NULL, NULL));
    for (int k = 0; k < num; k++) {
        int len = sizeof item, value = -1;
        T_CALL(MPI_T_enum_get_item(e, k, &value, item, &len));
        if (value == v) {
            return item;
        }
    }
    return "?";
}

/* Runs an allreduce and checks the algorithm counts and the last algorithm. */
static void allreduce_runs(MPI_T_pvar_session s, MPI_T_pvar_handle calls, int ncalls,
                           MPI_T_pvar_handle last, MPI_T_enum algos, const char *want)
{
    int n = mtest_size();
    int in[64], out[64];
    unsigned long long *before = calloc((size_t)ncalls, sizeof *before);
    unsigned long long *after = calloc((size_t)ncalls, sizeof *after);
    for (int k = 0; k < 64; k++) {
        in[k] = k + mtest_rank();
    }
    T_CALL(MPI_T_pvar_read(s, calls, before));
    MTEST_CALL(MPI_Allreduce(in, out, 64, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    for (int k = 0; k < 64; k++) {
        MTEST_EQ("allreduce sum", n * k + n * (n - 1) / 2, out[k]);
    }
    T_CALL(MPI_T_pvar_read(s, calls, after));
    int changed = 0, which = -1;
    for (int k = 0; k < ncalls; k++) {
        if (after[k] != before[k]) {
            changed++;
            which = k;
            MTEST_EQ("calls of the algorithm run", before[k] + 1, after[k]);
        }
    }
    MTEST_EQ("algorithms counted for one allreduce", 1, changed);
    int lastv = -1;
    T_CALL(MPI_T_pvar_read(s, last, &lastv));
    MTEST_EQ("coll_last_algorithm is the element counted", which + 1, lastv);
    if (want) {
        const char *got = item_name(algos, lastv);
        MTEST_CHECK(strcmp(got, want) == 0, "allreduce ran %s, expected %s", got, want);
    }
    free(before);
    free(after);
}

int main(int argc, char **argv)
{
    int provided, count;
    T_CALL(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
    if (mpit_cvar("OXMPI_COLL_SHM") < 0) {
        MTEST_CHECK(!mpit_is_oxmpi(), "oxmpi lacks OXMPI_COLL_SHM");
        mtest_init(&argc, &argv);
        if (mtest_rank() == 0) {
            printf("(skipped: no oxmpi control variables)\n");
        }
        T_CALL(MPI_T_finalize());
        return mtest_finalize();
    }
    /* Before MPI_Init. */
    MPI_T_cvar_handle shm = cvar("OXMPI_COLL_SHM", &count);
    MTEST_EQ("OXMPI_COLL_SHM count", 1, count);
    int v = -1;
    T_CALL(MPI_T_cvar_read(shm, &v));
    MTEST_EQ("OXMPI_COLL_SHM default", 1, v);
    v = 2;
    T_EXPECT(MPI_T_ERR_INVALID, MPI_T_cvar_write(shm, &v));
    v = 0;
    T_CALL(MPI_T_cvar_write(shm, &v));
    v = -1;
    T_CALL(MPI_T_cvar_read(shm, &v));
    MTEST_EQ("OXMPI_COLL_SHM as written before MPI_Init", 0, v);
    MPI_T_cvar_handle ring = cvar("OXMPI_SHM_RING_BYTES", &count);
    char text[256];
    T_CALL(MPI_T_cvar_read(ring, text));

    mtest_init(&argc, &argv);
    int n = mtest_size();
    v = -1;
    T_CALL(MPI_T_cvar_read(shm, &v));
    MTEST_EQ("OXMPI_COLL_SHM after MPI_Init", 0, v);
    T_EXPECT(MPI_T_ERR_CVAR_SET_NOT_NOW, MPI_T_cvar_write(shm, &v));
    T_EXPECT(MPI_T_ERR_CVAR_SET_NOT_NOW, MPI_T_cvar_write(ring, "1m"));
    MPI_T_cvar_handle launcher = cvar("OXMPI_LAUNCHER", &count);
    int scope = -1;
    T_CALL(MPI_T_cvar_get_info(mpit_cvar("OXMPI_LAUNCHER"), NULL, NULL, NULL, NULL, NULL, NULL,
                               NULL, NULL, &scope));
    MTEST_EQ("OXMPI_LAUNCHER scope", MPI_T_SCOPE_CONSTANT, scope);
    T_EXPECT(MPI_T_ERR_CVAR_SET_NEVER, MPI_T_cvar_write(launcher, "rsh {host}"));

    /* A number written while MPI runs. */
    MPI_T_cvar_handle yield = cvar("OXMPI_YIELD", &count);
    unsigned long long y = 0;
    T_CALL(MPI_T_cvar_read(yield, &y));
    MTEST_EQ("OXMPI_YIELD default", 200, y);
    y = 17;
    T_CALL(MPI_T_cvar_write(yield, &y));
    y = 0;
    T_CALL(MPI_T_cvar_read(yield, &y));
    MTEST_EQ("OXMPI_YIELD as written", 17, y);
    y = 2000000000ULL;
    T_EXPECT(MPI_T_ERR_INVALID, MPI_T_cvar_write(yield, &y));
    MPI_T_cvar_handle eager = cvar("OXMPI_SHM_EAGER_LIMIT", &count);
    MTEST_CHECK(count >= 16, "text count %d", count);
    T_CALL(MPI_T_cvar_read(eager, text));
    MTEST_CHECK(strlen(text) > 0, "OXMPI_SHM_EAGER_LIMIT reads an empty text");

    /* The algorithm counters. */
    MPI_T_pvar_session s;
    MPI_T_pvar_handle calls, last;
    int ncalls = 0, one = 0;
    T_CALL(MPI_T_pvar_session_create(&s));
    T_CALL(MPI_T_pvar_handle_alloc(s, mpit_pvar("coll_algorithm_calls", MPI_T_PVAR_CLASS_COUNTER),
                                   NULL, &calls, &ncalls));
    int ilast = mpit_pvar("coll_last_algorithm", MPI_T_PVAR_CLASS_STATE);
    T_CALL(MPI_T_pvar_handle_alloc(s, ilast, NULL, &last, &one));
    MTEST_EQ("coll_last_algorithm count", 1, one);
    MPI_T_enum algos = MPI_T_ENUM_NULL;
    T_CALL(MPI_T_pvar_get_info(ilast, NULL, NULL, NULL, NULL, NULL, &algos, NULL, NULL, NULL, NULL,
                               NULL, NULL));
    MTEST_CHECK(algos != MPI_T_ENUM_NULL, "coll_last_algorithm has no enumeration");
    T_CALL(MPI_T_pvar_start(s, calls));
    if (n >= 2) {
        /* With the shared-memory path off even a small allreduce runs an algorithm. */
        allreduce_runs(s, calls, ncalls, last, algos, NULL);
        MPI_T_cvar_handle algo = cvar("OXMPI_COLL_ALLREDUCE_ALGO", &count);
        v = item_value("OXMPI_COLL_ALLREDUCE_ALGO", "ring");
        T_CALL(MPI_T_cvar_write(algo, &v));
        int back = -1;
        T_CALL(MPI_T_cvar_read(algo, &back));
        MTEST_EQ("OXMPI_COLL_ALLREDUCE_ALGO as written", v, back);
        allreduce_runs(s, calls, ncalls, last, algos, "Allreduce:ring");
        v = item_value("OXMPI_COLL_ALLREDUCE_ALGO", "recursive_doubling");
        T_CALL(MPI_T_cvar_write(algo, &v));
        allreduce_runs(s, calls, ncalls, last, algos, "Allreduce:recursive_doubling");
        v = 999;
        T_EXPECT(MPI_T_ERR_INVALID, MPI_T_cvar_write(algo, &v));
        T_CALL(MPI_T_cvar_handle_free(&algo));
    }
    T_CALL(MPI_T_pvar_session_free(&s));
    T_CALL(MPI_T_cvar_handle_free(&launcher));
    T_CALL(MPI_T_cvar_handle_free(&eager));
    T_CALL(MPI_T_cvar_handle_free(&ring));

    int verdict = mtest_finalize();
    /* After MPI_Finalize nothing can be set any more. */
    int late = 0;
    y = 5;
    if (MPI_T_cvar_write(yield, &y) != MPI_T_ERR_CVAR_SET_NEVER) {
        fprintf(stderr, "after MPI_Finalize: writing OXMPI_YIELD did not fail with SET_NEVER\n");
        late++;
    }
    y = 0;
    if (MPI_T_cvar_read(yield, &y) != MPI_SUCCESS || y != 17) {
        fprintf(stderr, "after MPI_Finalize: OXMPI_YIELD reads %llu\n", y);
        late++;
    }
    if (MPI_T_cvar_handle_free(&yield) != MPI_SUCCESS ||
        MPI_T_cvar_handle_free(&shm) != MPI_SUCCESS || MPI_T_finalize() != MPI_SUCCESS) {
        fprintf(stderr, "after MPI_Finalize: freeing failed\n");
        late++;
    }
    return late ? 1 : verdict;
}
