/*
 * Environment inquiries: MPI_Init_thread asking for MPI_THREAD_MULTIPLE provides a level
 * between MPI_THREAD_SINGLE and MPI_THREAD_MULTIPLE that MPI_Query_thread repeats;
 * MPI_Is_thread_main is true on the main thread and false on another;
 * MPI_Get_library_version (callable before MPI_Init) is a NUL-terminated non-empty string
 * shorter than MPI_MAX_LIBRARY_VERSION_STRING; MPI_WTIME_IS_GLOBAL is an attribute of
 * MPI_COMM_WORLD with value 0 or 1; MPI_Pcontrol accepts extra arguments and returns
 * MPI_SUCCESS; MPI_Finalized is false before and true after MPI_Finalize.
 *
 * oxmpi-only checks (skipped elsewhere): the provided level is MPI_THREAD_MULTIPLE, the
 * version string starts with "oxmpi", and MPI_WTIME_IS_GLOBAL is 0 (per-node clocks).
 *
 * mtest-ldflags: -lpthread
 */
#include "mtest.h"

#include <pthread.h>

static int thread_main_flag = -1;
static void *other_thread(void *arg)
{
    (void)arg;
    MPI_Is_thread_main(&thread_main_flag);
    return NULL;
}

int main(int argc, char **argv)
{
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int vlen = -1, errs = 0, provided = -1, flag = -1;

    memset(version, 0x7f, sizeof version);
    if (MPI_Get_library_version(version, &vlen) != MPI_SUCCESS || vlen <= 0 ||
        vlen >= MPI_MAX_LIBRARY_VERSION_STRING || version[vlen] != 0 || (int)strlen(version) != vlen) {
        fprintf(stderr, "MPI_Get_library_version before MPI_Init: bad string (length %d)\n", vlen);
        errs++;
    }
    int oxmpi = strncmp(version, "oxmpi", 5) == 0;
    if (MPI_Finalized(&flag) != MPI_SUCCESS || flag != 0) {
        fprintf(stderr, "MPI_Finalized before MPI_Init: %d\n", flag);
        errs++;
    }

    mtest_write_pidfile();
    if (MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS) {
        fprintf(stderr, "MPI_Init_thread failed\n");
        return 1;
    }
    MTEST_CALL(MPI_Comm_rank(MPI_COMM_WORLD, &mtest.rank));
    MTEST_CALL(MPI_Comm_size(MPI_COMM_WORLD, &mtest.size));
    mtest_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    mtest_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    mtest.errors += errs;

    MTEST_CHECK(provided >= MPI_THREAD_SINGLE && provided <= MPI_THREAD_MULTIPLE, "provided level %d", provided);
    if (oxmpi) {
        MTEST_EQ("provided level (oxmpi gives MULTIPLE)", MPI_THREAD_MULTIPLE, provided);
    }
    int q = -1;
    MTEST_CALL(MPI_Query_thread(&q));
    MTEST_EQ("MPI_Query_thread", provided, q);

    flag = -1;
    MTEST_CALL(MPI_Is_thread_main(&flag));
    MTEST_EQ("MPI_Is_thread_main on the main thread", 1, flag);
    if (provided >= MPI_THREAD_SERIALIZED) {
        pthread_t t;
        MTEST_CHECK(pthread_create(&t, NULL, other_thread, NULL) == 0, "pthread_create failed");
        pthread_join(t, NULL);
        MTEST_EQ("MPI_Is_thread_main on another thread", 0, thread_main_flag);
    }

    int *global = NULL;
    flag = 0;
    MTEST_CALL(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_WTIME_IS_GLOBAL, &global, &flag));
    if (flag) {
        MTEST_CHECK(*global == 0 || *global == 1, "MPI_WTIME_IS_GLOBAL = %d", *global);
    }
    if (oxmpi) {
        MTEST_CHECK(flag && *global == 0, "MPI_WTIME_IS_GLOBAL: flag %d value %d (oxmpi: 0)", flag,
                    flag ? *global : -1);
    }

    MTEST_EQ("MPI_Pcontrol(0)", MPI_SUCCESS, MPI_Pcontrol(0));
    MTEST_EQ("MPI_Pcontrol(1)", MPI_SUCCESS, MPI_Pcontrol(1));
    MTEST_EQ("MPI_Pcontrol(2, extra arguments)", MPI_SUCCESS, MPI_Pcontrol(2, "trace", 3.5, 7));

    char v2[MPI_MAX_LIBRARY_VERSION_STRING];
    int v2len = -1;
    MTEST_CALL(MPI_Get_library_version(v2, &v2len));
    MTEST_CHECK(v2len == vlen && strcmp(v2, version) == 0, "library version changed after MPI_Init");

    flag = -1;
    MTEST_CALL(MPI_Finalized(&flag));
    MTEST_EQ("MPI_Finalized while running", 0, flag);
    int rank = mtest.rank;
    int rc = mtest_finalize();
    flag = -1;
    if (MPI_Finalized(&flag) != MPI_SUCCESS || flag != 1) {
        fprintf(stderr, "rank %d: MPI_Finalized after MPI_Finalize: %d\n", rank, flag);
        rc = 1;
    }
    return rc;
}
