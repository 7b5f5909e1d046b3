/*
 * Communicator assertions (MPI 4.1 section 7.4.4): MPI_Comm_get_info reports an
 * assertion set to true as "true" (one not set as "false", or not at all: MPICH and
 * oxmpi report every assertion, Open MPI 4.1 only some); MPI_Comm_dup_with_info gives the
 * new communicator the hints of its info argument, not those of the parent
 * (MPI_INFO_NULL: none); MPI_Comm_set_info changes the assertions it names and keeps the
 * others; a value other than true/false does not assert; traffic with explicit sources
 * and tags works on an asserted communicator. (comm_hints_strict checks that every
 * assertion is reported, that ignored keys are not, and what MPI_Comm_dup copies.)
 */
#include "mtest.h"

/* The value of `key` in the hints of `comm`: 1 "true", 0 "false", -1 absent, -2 other. */
static int hint(MPI_Comm comm, const char *key)
{
    MPI_Info info;
    char v[MPI_MAX_INFO_VAL + 1];
    int flag = 0;
    MTEST_CALL(MPI_Comm_get_info(comm, &info));
    MTEST_CALL(MPI_Info_get(info, key, MPI_MAX_INFO_VAL, v, &flag));
    MTEST_CALL(MPI_Info_free(&info));
    if (!flag) {
        return -1;
    }
    if (strcmp(v, "true") == 0) {
        return 1;
    }
    return strcmp(v, "false") == 0 ? 0 : -2;
}

/* 1: the key must say "true"; 0: "false" or absent. */
static void expect_hint(MPI_Comm comm, const char *key, int want, const char *what)
{
    int got = hint(comm, key);
    if (want) {
        MTEST_CHECK(got == 1, "%s: %s is not \"true\" (%d)", what, key, got);
    } else {
        MTEST_CHECK(got == 0 || got == -1, "%s: %s is set, but not to \"false\" (%d)", what,
                    key, got);
    }
}

static void expect_hints(MPI_Comm comm, int tag, int source, int exact, int overtaking,
                         const char *what)
{
    expect_hint(comm, "mpi_assert_no_any_tag", tag, what);
    expect_hint(comm, "mpi_assert_no_any_source", source, what);
    expect_hint(comm, "mpi_assert_exact_length", exact, what);
    expect_hint(comm, "mpi_assert_allow_overtaking", overtaking, what);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int rank = mtest_rank(), size = mtest_size();
    MPI_Comm a, b, c;
    MPI_Info info;

    expect_hints(MPI_COMM_WORLD, 0, 0, 0, 0, "MPI_COMM_WORLD");
    expect_hints(MPI_COMM_SELF, 0, 0, 0, 0, "MPI_COMM_SELF");

    MTEST_CALL(MPI_Info_create(&info));
    MTEST_CALL(MPI_Info_set(info, "mpi_assert_no_any_tag", "true"));
    MTEST_CALL(MPI_Info_set(info, "mpi_assert_no_any_source", "true"));
    MTEST_CALL(MPI_Info_set(info, "oxmpi_test_unknown_hint", "1"));
    MTEST_CALL(MPI_Comm_dup_with_info(MPI_COMM_WORLD, info, &a));
    MTEST_CALL(MPI_Comm_set_errhandler(a, MPI_ERRORS_RETURN));
    expect_hints(a, 1, 1, 0, 0, "dup_with_info");
    expect_hints(MPI_COMM_WORLD, 0, 0, 0, 0, "MPI_COMM_WORLD after dup_with_info");

    /* the hints of the info argument replace those of the parent */
    MTEST_CALL(MPI_Comm_dup_with_info(a, MPI_INFO_NULL, &b));
    expect_hints(b, 0, 0, 0, 0, "dup_with_info(MPI_INFO_NULL) of an asserted communicator");
    MTEST_CALL(MPI_Info_free(&info));

    /* MPI_Comm_set_info changes the keys it names only */
    MTEST_CALL(MPI_Info_create(&info));
    MTEST_CALL(MPI_Info_set(info, "mpi_assert_no_any_tag", "false"));
    MTEST_CALL(MPI_Info_set(info, "mpi_assert_allow_overtaking", "true"));
    MTEST_CALL(MPI_Comm_set_info(a, info));
    expect_hints(a, 0, 1, 0, 1, "after MPI_Comm_set_info");
    MTEST_CALL(MPI_Comm_dup_with_info(b, info, &c));
    expect_hints(c, 0, 0, 0, 1, "dup_with_info with allow_overtaking");
    MTEST_CALL(MPI_Info_free(&info));

    /* traffic with explicit sources and tags on the asserted communicator */
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int out = rank * 3 + 1, in = -1;
    MPI_Status st;
    MTEST_CALL(MPI_Sendrecv(&out, 1, MPI_INT, right, 4, &in, 1, MPI_INT, left, 4, a, &st));
    MTEST_STATUS(&st, left, 4, MPI_INT, 1);
    MTEST_EQ("value received on the asserted communicator", left * 3 + 1, in);
    int sum = -1;
    MTEST_CALL(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, a));
    MTEST_EQ("allreduce on the asserted communicator", size * (size - 1) / 2, sum);

    MTEST_CALL(MPI_Comm_free(&a));
    MTEST_CALL(MPI_Comm_free(&b));
    MTEST_CALL(MPI_Comm_free(&c));
    return mtest_finalize();
}
