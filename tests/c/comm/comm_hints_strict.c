/*
 * Communicator assertions that MPICH 4.0.2 or Open MPI 4.1 do not honour:
 * - MPI_Comm_get_info reports every assertion the library supports, "false" where not
 *   set (MPI 4.1: "all hints that are supported by the implementation and have default
 *   values"), and not a key the library ignores, nor an assertion given a value other
 *   than true/false; Open MPI 4.1 reports only some assertions, and keeps both.
 * - MPI_Comm_dup copies the hints of its communicator (MPI 4.1: MPI_Comm_dup_with_info
 *   "behaves exactly as MPI_Comm_dup except that the info hints of comm are not
 *   duplicated"); MPICH 4.0.2 gives the duplicate default hints.
 * - A receive or probe with MPI_ANY_SOURCE on a communicator that asserts
 *   mpi_assert_no_any_source is erroneous (section 7.4.4); oxmpi refuses it with
 *   MPI_ERR_RANK, and MPI_ANY_TAG under mpi_assert_no_any_tag with MPI_ERR_TAG, so that
 *   the engine may rely on the assertion. MPICH 4.0.2 accepts both. The communicator
 *   keeps working, and the same calls are fine once MPI_Comm_set_info lifts the
 *   assertions.
 */
#include "mtest.h"

/* 1 "true", 0 "false", -1 absent, -2 another value. */
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

static void defaults_reported(void)
{
    const char *keys[] = {"mpi_assert_no_any_tag", "mpi_assert_no_any_source",
                          "mpi_assert_exact_length", "mpi_assert_allow_overtaking"};
    for (int i = 0; i < 4; i++) {
        MTEST_EQ(keys[i], 0, hint(MPI_COMM_WORLD, keys[i]));
    }
    MPI_Info info;
    MPI_Comm c;
    MTEST_CALL(MPI_Info_create(&info));
    MTEST_CALL(MPI_Info_set(info, "mpi_assert_exact_length", "maybe"));
    MTEST_CALL(MPI_Info_set(info, "oxmpi_test_unknown_hint", "1"));
    MTEST_CALL(MPI_Comm_dup_with_info(MPI_COMM_WORLD, info, &c));
    MTEST_CALL(MPI_Info_free(&info));
    MTEST_EQ("an assertion with a value other than true/false", 0,
             hint(c, "mpi_assert_exact_length"));
    MTEST_EQ("an ignored key", -1, hint(c, "oxmpi_test_unknown_hint"));
    MTEST_CALL(MPI_Comm_free(&c));
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int rank = mtest_rank(), size = mtest_size();
    MPI_Comm a, d;
    MPI_Info info;
    MPI_Request r;
    MPI_Status st;
    int x = 0, flag = 0;

    defaults_reported();

    MTEST_CALL(MPI_Info_create(&info));
    MTEST_CALL(MPI_Info_set(info, "mpi_assert_no_any_tag", "true"));
    MTEST_CALL(MPI_Info_set(info, "mpi_assert_no_any_source", "true"));
    MTEST_CALL(MPI_Comm_dup_with_info(MPI_COMM_WORLD, info, &a));
    MTEST_CALL(MPI_Info_free(&info));
    MTEST_CALL(MPI_Comm_set_errhandler(a, MPI_ERRORS_RETURN));

    MTEST_CALL(MPI_Comm_dup(a, &d));
    MTEST_CHECK(hint(d, "mpi_assert_no_any_tag") == 1, "MPI_Comm_dup dropped mpi_assert_no_any_tag");
    MTEST_CHECK(hint(d, "mpi_assert_no_any_source") == 1,
                "MPI_Comm_dup dropped mpi_assert_no_any_source");
    MTEST_CALL(MPI_Comm_free(&d));

    MTEST_EXPECT_CLASS(MPI_ERR_RANK, MPI_Recv(&x, 1, MPI_INT, MPI_ANY_SOURCE, 0, a, &st));
    MTEST_EXPECT_CLASS(MPI_ERR_RANK, MPI_Irecv(&x, 1, MPI_INT, MPI_ANY_SOURCE, 0, a, &r));
    MTEST_EXPECT_CLASS(MPI_ERR_RANK, MPI_Recv_init(&x, 1, MPI_INT, MPI_ANY_SOURCE, 0, a, &r));
    MTEST_EXPECT_CLASS(MPI_ERR_RANK, MPI_Iprobe(MPI_ANY_SOURCE, 0, a, &flag, &st));
    MTEST_EXPECT_CLASS(MPI_ERR_RANK, MPI_Probe(MPI_ANY_SOURCE, 0, a, &st));
    MTEST_EXPECT_CLASS(MPI_ERR_TAG, MPI_Recv(&x, 1, MPI_INT, 0, MPI_ANY_TAG, a, &st));
    MTEST_EXPECT_CLASS(MPI_ERR_TAG, MPI_Irecv(&x, 1, MPI_INT, 0, MPI_ANY_TAG, a, &r));
    MTEST_EXPECT_CLASS(MPI_ERR_TAG, MPI_Iprobe(0, MPI_ANY_TAG, a, &flag, &st));
    MTEST_EXPECT_CLASS(MPI_ERR_TAG, MPI_Sendrecv(&rank, 1, MPI_INT, rank, 0, &x, 1, MPI_INT,
                                                 rank, MPI_ANY_TAG, a, &st));
    MTEST_EXPECT_CLASS(MPI_ERR_RANK, MPI_Isendrecv(&rank, 1, MPI_INT, rank, 0, &x, 1, MPI_INT,
                                                   MPI_ANY_SOURCE, 0, a, &r));

    /* still working with explicit sources and tags */
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int out = rank + 100, in = -1;
    MTEST_CALL(MPI_Sendrecv(&out, 1, MPI_INT, right, 9, &in, 1, MPI_INT, left, 9, a, &st));
    MTEST_STATUS(&st, left, 9, MPI_INT, 1);
    MTEST_EQ("value after the refused calls", left + 100, in);

    /* lifting the assertions allows the wildcards again */
    MTEST_CALL(MPI_Info_create(&info));
    MTEST_CALL(MPI_Info_set(info, "mpi_assert_no_any_tag", "false"));
    MTEST_CALL(MPI_Info_set(info, "mpi_assert_no_any_source", "false"));
    MTEST_CALL(MPI_Comm_set_info(a, info));
    MTEST_CALL(MPI_Info_free(&info));
    MTEST_CALL(MPI_Sendrecv(&out, 1, MPI_INT, rank, 11, &in, 1, MPI_INT, MPI_ANY_SOURCE,
                            MPI_ANY_TAG, a, &st));
    MTEST_STATUS(&st, rank, 11, MPI_INT, 1);
    MTEST_EQ("value received with wildcards", rank + 100, in);

    MTEST_CALL(MPI_Comm_free(&a));
    return mtest_finalize();
}
