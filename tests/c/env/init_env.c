/*
 * Environment management: MPI_Initialized before and after MPI_Init and after MPI_Finalize,
 * MPI_Comm_size / MPI_Comm_rank on MPI_COMM_WORLD and MPI_COMM_SELF, MPI_Get_version,
 * MPI_Wtime (monotonic, advances across a sleep), MPI_Wtick, MPI_Get_processor_name.
 * Uses MPI_Init directly (not mtest_init) to check MPI_Initialized around it.
 */
#include "mtest.h"

int main(int argc, char **argv)
{
    int flag = -1;
    int errs = 0;

    /* MPI_Initialized is the one call allowed before MPI_Init. */
    if (MPI_Initialized(&flag) != MPI_SUCCESS || flag != 0) {
        fprintf(stderr, "MPI_Initialized before MPI_Init: expected flag 0 got %d\n", flag);
        errs++;
    }
    mtest_init(&argc, &argv);
    mtest.errors += errs;
    int rank = mtest_rank(), size = mtest_size();

    flag = -1;
    MTEST_CALL(MPI_Initialized(&flag));
    MTEST_CHECK(flag != 0, "MPI_Initialized after MPI_Init: expected true got %d", flag);

    /* sizes and ranks */
    int s2 = -1, r2 = -1;
    MTEST_CALL(MPI_Comm_size(MPI_COMM_WORLD, &s2));
    MTEST_CALL(MPI_Comm_rank(MPI_COMM_WORLD, &r2));
    MTEST_CHECK(s2 >= 1, "MPI_Comm_size(WORLD) = %d", s2);
    MTEST_CHECK(r2 >= 0 && r2 < s2, "MPI_Comm_rank(WORLD) = %d with size %d", r2, s2);
    MTEST_CALL(MPI_Comm_size(MPI_COMM_SELF, &s2));
    MTEST_CALL(MPI_Comm_rank(MPI_COMM_SELF, &r2));
    MTEST_EQ("MPI_Comm_size(MPI_COMM_SELF)", 1, s2);
    MTEST_EQ("MPI_Comm_rank(MPI_COMM_SELF)", 0, r2);

    /* ranks are a permutation of 0..size-1: everyone reports its rank to rank 0 */
    if (rank == 0) {
        char *seen = mtest_malloc((size_t)size);
        memset(seen, 0, (size_t)size);
        seen[0] = 1;
        for (int i = 1; i < size; i++) {
            int r = -1;
            MPI_Status st;
            MTEST_CALL(MPI_Recv(&r, 1, MPI_INT, MPI_ANY_SOURCE, 1, MPI_COMM_WORLD, &st));
            MTEST_EQ("reported rank vs status.MPI_SOURCE", st.MPI_SOURCE, r);
            MTEST_CHECK(r > 0 && r < size && !seen[r], "rank %d reported twice or out of range", r);
            if (r > 0 && r < size) {
                seen[r] = 1;
            }
        }
        free(seen);
    } else {
        MTEST_CALL(MPI_Send(&rank, 1, MPI_INT, 0, 1, MPI_COMM_WORLD));
    }

    /* version: MPI-1.2 at least as far as the version numbers go */
    int version = -1, subversion = -1;
    MTEST_CALL(MPI_Get_version(&version, &subversion));
    MTEST_CHECK(version >= 1, "MPI_Get_version: version %d", version);
    MTEST_CHECK(subversion >= 0 && subversion <= 9, "MPI_Get_version: subversion %d", subversion);
    /* the header's MPI_VERSION / MPI_SUBVERSION describe the same library, except in the
     * runner's ABI mode (MTEST_ABI=1: built with another implementation's header) */
    if (!mtest_env_flag("MTEST_ABI")) {
        MTEST_CHECK(MPI_VERSION == version && MPI_SUBVERSION == subversion,
                    "MPI_VERSION.MPI_SUBVERSION %d.%d, MPI_Get_version %d.%d", MPI_VERSION, MPI_SUBVERSION,
                    version, subversion);
    }

    /* Wtick: positive, at most a second */
    double tick = MPI_Wtick();
    MTEST_CHECK(tick > 0.0 && tick <= 1.0, "MPI_Wtick = %g", tick);

    /* Wtime: never goes backwards; advances across a 50 ms sleep by at least ~50 ms (with
     * the clock's resolution subtracted) and by less than an hour */
    double t0 = MPI_Wtime(), prev = t0;
    for (int i = 0; i < 100000; i++) {
        double t = MPI_Wtime();
        if (t < prev) {
            MTEST_CHECK(0, "MPI_Wtime went backwards: %.9f after %.9f", t, prev);
            break;
        }
        prev = t;
    }
    double a = MPI_Wtime();
    mtest_sleep_ms(50);
    double b = MPI_Wtime();
    MTEST_CHECK(b - a >= 0.050 - tick - 1e-6, "MPI_Wtime advanced %.6f s over a 50 ms sleep", b - a);
    MTEST_CHECK(b - a < 3600.0, "MPI_Wtime advanced %.6f s over a 50 ms sleep", b - a);

    /* Processor name: length matches, within bounds, NUL-terminated */
    char name[MPI_MAX_PROCESSOR_NAME + 8];
    memset(name, 0x7f, sizeof name);
    int len = -1;
    MTEST_CALL(MPI_Get_processor_name(name, &len));
    MTEST_CHECK(len > 0 && len < MPI_MAX_PROCESSOR_NAME, "MPI_Get_processor_name length %d", len);
    if (len > 0 && len < MPI_MAX_PROCESSOR_NAME) {
        MTEST_EQ("processor name NUL terminator", 0, name[len]);
        MTEST_EQ("strlen(processor name) vs resultlen", len, (long long)strlen(name));
    }
    mtest_verify_const(name + MPI_MAX_PROCESSOR_NAME, 8, 0x7f, "bytes past MPI_MAX_PROCESSOR_NAME");

    int rc = mtest_finalize();

    /* MPI_Initialized may be called after MPI_Finalize and still says true. */
    flag = -1;
    if (MPI_Initialized(&flag) != MPI_SUCCESS || flag == 0) {
        fprintf(stderr, "rank %d: MPI_Initialized after MPI_Finalize: expected true got %d\n", rank,
                flag);
        rc = 1;
    }
    return rc;
}
