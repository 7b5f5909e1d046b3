/*
 * Info objects: MPI_Info_create / set / get / get_valuelen / get_string / delete / dup /
 * free / get_nkeys / get_nthkey, keys kept in insertion order with values replaced in place,
 * truncation by MPI_Info_get's valuelen and MPI_Info_get_string's buflen, the errors
 * (MPI_INFO_NULL and freed handles: MPI_ERR_INFO; empty or over-long keys: MPI_ERR_INFO_KEY;
 * over-long values: MPI_ERR_INFO_VALUE; deleting a missing key: MPI_ERR_INFO_NOKEY; key
 * number out of range: MPI_ERR_ARG), and MPI_INFO_ENV / MPI_Info_create_env.
 *
 * oxmpi-only checks (skipped elsewhere): truncation by MPI_Info_get (MPICH 4.0.2 reports an
 * error instead, against the standard), MPI_INFO_ENV's values (command, maxprocs, host,
 * arch, wdir, thread_level), MPI_INFO_ENV being read-only, and info objects working before
 * MPI_Init and after MPI_Finalize (MPI-4).
 */
#include "mtest.h"

static int is_oxmpi(void)
{
    char v[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    MPI_Get_library_version(v, &len);
    return strncmp(v, "oxmpi", 5) == 0;
}

static void expect_value(MPI_Info info, const char *key, const char *value, const char *what)
{
    char v[MPI_MAX_INFO_VAL];
    int flag = -1, vlen = -1;
    memset(v, 'x', sizeof v);
    MTEST_CALL(MPI_Info_get(info, key, MPI_MAX_INFO_VAL - 1, v, &flag));
    MTEST_CHECK(flag == 1, "%s: key \"%s\" not found", what, key);
    if (flag == 1) {
        MTEST_CHECK(strcmp(v, value) == 0, "%s: key \"%s\" = \"%s\", expected \"%s\"", what, key, v, value);
    }
    MTEST_CALL(MPI_Info_get_valuelen(info, key, &vlen, &flag));
    MTEST_CHECK(flag == 1, "%s: MPI_Info_get_valuelen(\"%s\") flag %d", what, key, flag);
    MTEST_EQ("MPI_Info_get_valuelen", (long long)strlen(value), vlen);
}

static void expect_absent(MPI_Info info, const char *key, const char *what)
{
    char v[8];
    int flag = -1, vlen = -1;
    MTEST_CALL(MPI_Info_get(info, key, 7, v, &flag));
    MTEST_CHECK(flag == 0, "%s: key \"%s\" unexpectedly present", what, key);
    MTEST_CALL(MPI_Info_get_valuelen(info, key, &vlen, &flag));
    MTEST_CHECK(flag == 0, "%s: MPI_Info_get_valuelen(\"%s\") flag %d", what, key, flag);
}

static void expect_keys(MPI_Info info, const char *const *keys, int n, const char *what)
{
    int nkeys = -1;
    MTEST_CALL(MPI_Info_get_nkeys(info, &nkeys));
    MTEST_CHECK(nkeys == n, "%s: %d keys, expected %d", what, nkeys, n);
    for (int i = 0; i < n && i < nkeys; i++) {
        char k[MPI_MAX_INFO_KEY];
        MTEST_CALL(MPI_Info_get_nthkey(info, i, k));
        MTEST_CHECK(strcmp(k, keys[i]) == 0, "%s: key %d is \"%s\", expected \"%s\"", what, i, k, keys[i]);
    }
}

/* Info calls usable with MPI not initialized (before MPI_Init or after MPI_Finalize). */
static int outside_mpi(const char *when)
{
    MPI_Info info = MPI_INFO_NULL;
    char v[16];
    int flag = 0, errs = 0;
    if (MPI_Info_create(&info) != MPI_SUCCESS || MPI_Info_set(info, "k", "v") != MPI_SUCCESS ||
        MPI_Info_get(info, "k", 15, v, &flag) != MPI_SUCCESS || !flag || strcmp(v, "v") != 0 ||
        MPI_Info_free(&info) != MPI_SUCCESS || info != MPI_INFO_NULL) {
        fprintf(stderr, "info calls %s MPI_Init/MPI_Finalize failed\n", when);
        errs++;
    }
    return errs;
}

int main(int argc, char **argv)
{
    int oxmpi = is_oxmpi();
    int early_errs = oxmpi ? outside_mpi("before") : 0;
    mtest_init(&argc, &argv);
    mtest.errors += early_errs;
    int size = mtest_size();
    MPI_Info info = MPI_INFO_NULL, copy = MPI_INFO_NULL;

    MTEST_CALL(MPI_Info_create(&info));
    MTEST_CHECK(info != MPI_INFO_NULL, "MPI_Info_create gave MPI_INFO_NULL");
    expect_keys(info, NULL, 0, "new info");
    MTEST_CALL(MPI_Info_set(info, "color", "blue"));
    MTEST_CALL(MPI_Info_set(info, "shape", "round"));
    MTEST_CALL(MPI_Info_set(info, "size", "42"));
    MTEST_CALL(MPI_Info_set(info, "color", "red")); /* replaced in place */
    static const char *const three[] = {"color", "shape", "size"};
    expect_keys(info, three, 3, "after 4 sets");
    expect_value(info, "color", "red", "replaced value");
    expect_value(info, "size", "42", "value");
    expect_absent(info, "Color", "keys are case sensitive");

    /* MPI_Info_get truncates to valuelen characters plus NUL */
    char v[16];
    int flag = -1;
    if (oxmpi) {
        memset(v, 'x', sizeof v);
        MTEST_CALL(MPI_Info_get(info, "shape", 3, v, &flag));
        MTEST_EQ("flag of a truncated get", 1, flag);
        MTEST_CHECK(strcmp(v, "rou") == 0, "MPI_Info_get with valuelen 3 gave \"%s\"", v);
        MTEST_EQ("byte after the truncated value", 'x', v[4]);
    }

    /* MPI_Info_get_string: buflen in = room, out = length + 1 */
    int buflen = 3;
    memset(v, 'x', sizeof v);
    MTEST_CALL(MPI_Info_get_string(info, "shape", &buflen, v, &flag));
    MTEST_EQ("MPI_Info_get_string flag", 1, flag);
    MTEST_EQ("MPI_Info_get_string buflen out", 6, buflen);
    MTEST_CHECK(strcmp(v, "ro") == 0, "MPI_Info_get_string with buflen 3 gave \"%s\"", v);
    buflen = 0;
    memset(v, 'x', sizeof v);
    MTEST_CALL(MPI_Info_get_string(info, "shape", &buflen, v, &flag));
    MTEST_EQ("MPI_Info_get_string buflen 0 out", 6, buflen);
    MTEST_EQ("MPI_Info_get_string with buflen 0 leaves value alone", 'x', v[0]);
    buflen = 16;
    MTEST_CALL(MPI_Info_get_string(info, "shape", &buflen, v, &flag));
    MTEST_CHECK(flag == 1 && strcmp(v, "round") == 0, "MPI_Info_get_string gave \"%s\"", v);
    buflen = 16;
    MTEST_CALL(MPI_Info_get_string(info, "missing", &buflen, v, &flag));
    MTEST_EQ("MPI_Info_get_string flag for a missing key", 0, flag);

    /* dup is deep; delete keeps the order of the rest */
    MTEST_CALL(MPI_Info_dup(info, &copy));
    MTEST_CALL(MPI_Info_delete(info, "shape"));
    static const char *const two[] = {"color", "size"};
    expect_keys(info, two, 2, "after delete");
    expect_absent(info, "shape", "deleted key");
    expect_keys(copy, three, 3, "duplicate");
    expect_value(copy, "shape", "round", "duplicate");
    MTEST_CALL(MPI_Info_set(copy, "color", "green"));
    expect_value(info, "color", "red", "original after changing the duplicate");

    /* limits: keys up to MPI_MAX_INFO_KEY - 1 and values up to MPI_MAX_INFO_VAL - 1 chars */
    char key[MPI_MAX_INFO_KEY + 2], big[MPI_MAX_INFO_VAL + 2];
    memset(key, 'k', sizeof key);
    key[MPI_MAX_INFO_KEY - 1] = 0;
    memset(big, 'v', sizeof big);
    big[MPI_MAX_INFO_VAL - 1] = 0;
    MTEST_CALL(MPI_Info_set(info, key, big));
    expect_value(info, key, big, "longest key and value");
    key[MPI_MAX_INFO_KEY - 1] = 'k';
    key[MPI_MAX_INFO_KEY + 1] = 0;
    MTEST_EXPECT_CLASS(MPI_ERR_INFO_KEY, MPI_Info_set(info, key, "v"));
    big[MPI_MAX_INFO_VAL - 1] = 'v';
    big[MPI_MAX_INFO_VAL + 1] = 0;
    MTEST_EXPECT_CLASS(MPI_ERR_INFO_VALUE, MPI_Info_set(info, "k", big));
    MTEST_EXPECT_CLASS(MPI_ERR_INFO_KEY, MPI_Info_set(info, "", "v"));

    /* other errors */
    int n = -1;
    MTEST_EXPECT_CLASS(MPI_ERR_INFO_NOKEY, MPI_Info_delete(info, "shape"));
    MTEST_EXPECT_CLASS(MPI_ERR_ARG, MPI_Info_get_nthkey(info, 3, key));
    MTEST_EXPECT_CLASS(MPI_ERR_ARG, MPI_Info_get_nthkey(info, -1, key));
    MTEST_EXPECT_CLASS2(MPI_ERR_INFO, MPI_ERR_ARG, MPI_Info_get_nkeys(MPI_INFO_NULL, &n));
    MTEST_EXPECT_CLASS2(MPI_ERR_INFO, MPI_ERR_ARG, MPI_Info_set(MPI_INFO_NULL, "k", "v"));
    MTEST_EXPECT_CLASS(MPI_ERR_ARG, MPI_Info_get(info, "color", -1, v, &flag));
    MPI_Info stale = copy;
    MTEST_CALL(MPI_Info_free(&copy));
    MTEST_CHECK(copy == MPI_INFO_NULL, "MPI_Info_free did not reset the handle");
    if (oxmpi) {
        MTEST_EXPECT_CLASS(MPI_ERR_INFO, MPI_Info_get_nkeys(stale, &n));
        MTEST_EXPECT_CLASS(MPI_ERR_INFO, MPI_Info_free(&stale));
    }
    MTEST_CALL(MPI_Info_free(&info));

    /* MPI_INFO_ENV and MPI_Info_create_env */
    int nenv = -1;
    MTEST_CALL(MPI_Info_get_nkeys(MPI_INFO_ENV, &nenv));
    MTEST_CHECK(nenv >= 0, "MPI_INFO_ENV has %d keys", nenv);
    MTEST_CALL(MPI_Info_create_env(argc, argv, &info));
    MTEST_CALL(MPI_Info_get_nkeys(info, &n));
    MTEST_EQ("keys of MPI_Info_create_env vs MPI_INFO_ENV", nenv, n);
    MTEST_CALL(MPI_Info_free(&info));
    MTEST_CALL(MPI_Info_dup(MPI_INFO_ENV, &info));
    MTEST_CALL(MPI_Info_set(info, "mine", "yes"));
    MTEST_CALL(MPI_Info_free(&info));
    if (oxmpi) {
        char text[64], host[MPI_MAX_PROCESSOR_NAME], cwd[4096];
        int hlen;
        snprintf(text, sizeof text, "%d", size);
        expect_value(MPI_INFO_ENV, "maxprocs", text, "MPI_INFO_ENV");
        MTEST_CALL(MPI_Get_processor_name(host, &hlen));
        expect_value(MPI_INFO_ENV, "host", host, "MPI_INFO_ENV");
        expect_value(MPI_INFO_ENV, "thread_level", "MPI_THREAD_SINGLE", "MPI_INFO_ENV");
#if defined(__x86_64__)
        expect_value(MPI_INFO_ENV, "arch", "x86_64", "MPI_INFO_ENV");
#endif
        if (getcwd(cwd, sizeof cwd)) {
            expect_value(MPI_INFO_ENV, "wdir", cwd, "MPI_INFO_ENV");
        }
        char cmd[MPI_MAX_INFO_VAL];
        int f = 0;
        MTEST_CALL(MPI_Info_get(MPI_INFO_ENV, "command", MPI_MAX_INFO_VAL - 1, cmd, &f));
        MTEST_CHECK(f && strcmp(cmd, argv[0]) == 0, "MPI_INFO_ENV command \"%s\", argv[0] \"%s\"",
                    f ? cmd : "(absent)", argv[0]);
        MPI_Info env = MPI_INFO_ENV;
        MTEST_EXPECT_CLASS(MPI_ERR_INFO, MPI_Info_set(MPI_INFO_ENV, "k", "v"));
        MTEST_EXPECT_CLASS(MPI_ERR_INFO, MPI_Info_free(&env));
    }

    int rank = mtest_rank();
    int rc = mtest_finalize();
    if (oxmpi && outside_mpi("after") != 0) {
        fprintf(stderr, "rank %d: info calls after MPI_Finalize failed\n", rank);
        rc = 1;
    }
    return rc;
}
