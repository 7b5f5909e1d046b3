/* Communicator hints: MPI_Comm_set_info accepts an info object (MPI_INFO_NULL is
 * refused, as MPICH and Open MPI do); MPI_Comm_get_info returns a new, valid info object
 * (whatever hints the library reports) that the caller frees, a fresh one per call;
 * MPI_Comm_dup_with_info gives a working communicator; MPI_COMM_NULL gives MPI_ERR_COMM,
 * a NULL result pointer MPI_ERR_ARG (Open MPI: MPI_ERR_INFO), and the communicator keeps
 * working. */
#include "mtest.h"

static void check_info_object(MPI_Info info, const char *what)
{
    int n = -1;
    MTEST_CALL(MPI_Info_get_nkeys(info, &n));
    MTEST_CHECK(n >= 0, "%s: %d keys", what, n);
    for (int i = 0; i < n; i++) {
        char key[MPI_MAX_INFO_KEY + 1];
        int len = -1, flag = 0;
        MTEST_CALL(MPI_Info_get_nthkey(info, i, key));
        MTEST_CALL(MPI_Info_get_valuelen(info, key, &len, &flag));
        MTEST_CHECK(flag && len >= 0, "%s: key %s without a value", what, key);
    }
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int rank = mtest_rank(), size = mtest_size();
    MPI_Comm dup;
    MPI_Info hints, got, got2;
    MTEST_CALL(MPI_Info_create(&hints));
    MTEST_CALL(MPI_Info_set(hints, "mpi_assert_no_any_tag", "true"));
    MTEST_CALL(MPI_Info_set(hints, "oxmpi_unknown_hint", "42"));
    MTEST_CALL(MPI_Comm_dup_with_info(MPI_COMM_WORLD, hints, &dup));
    MTEST_CALL(MPI_Comm_set_info(dup, hints));
    MTEST_CALL(MPI_Comm_get_info(dup, &got));
    MTEST_CHECK(got != MPI_INFO_NULL, "MPI_Comm_get_info returned MPI_INFO_NULL");
    check_info_object(got, "get_info of the dup");
    MTEST_CALL(MPI_Comm_get_info(dup, &got2));
    MTEST_CHECK(got2 != got, "MPI_Comm_get_info returned the same object twice");
    MTEST_CALL(MPI_Info_free(&got));
    MTEST_CALL(MPI_Info_free(&got2));
    MTEST_CALL(MPI_Comm_get_info(MPI_COMM_WORLD, &got));
    check_info_object(got, "get_info of MPI_COMM_WORLD");
    MTEST_CALL(MPI_Info_free(&got));

    MTEST_EXPECT_CLASS(MPI_ERR_COMM, MPI_Comm_set_info(MPI_COMM_NULL, hints));
    MTEST_EXPECT_CLASS(MPI_ERR_COMM, MPI_Comm_get_info(MPI_COMM_NULL, &got));
    MTEST_EXPECT_CLASS2(MPI_ERR_ARG, MPI_ERR_INFO, MPI_Comm_get_info(dup, NULL));
    MTEST_EXPECT_CLASS2(MPI_ERR_INFO, MPI_ERR_ARG, MPI_Comm_set_info(dup, MPI_INFO_NULL));
    MTEST_CALL(MPI_Info_free(&hints));

    /* the duplicate still carries traffic */
    int sum = -1;
    MTEST_CALL(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, dup));
    MTEST_EQ("allreduce on the duplicate", size * (size - 1) / 2, sum);
    MTEST_CALL(MPI_Comm_free(&dup));
    return mtest_finalize();
}
