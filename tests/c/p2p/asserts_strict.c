/*
 * Wildcards refused under the communicator assertions, beyond comm/comm_hints_strict:
 * - assertions set with MPI_Comm_set_info on a communicator already in use (not only at
 *   MPI_Comm_dup_with_info) take effect for the next call;
 * - MPI_ANY_SOURCE under mpi_assert_no_any_source gives MPI_ERR_RANK, MPI_ANY_TAG under
 *   mpi_assert_no_any_tag MPI_ERR_TAG (MPI 4.1 section 7.4.4 makes such a call
 *   erroneous; oxmpi refuses it so that its matching may rely on the assertion), in
 *   MPI_Recv, MPI_Recv_init, MPI_Probe and MPI_Sendrecv_replace, and the error string
 *   names the assertion;
 * - a refused call takes no message: the message waiting from the right neighbour is
 *   then received by a receive that names its source and tag;
 * - only the asserted wildcard is refused: with only mpi_assert_no_any_tag set,
 *   MPI_ANY_SOURCE still works.
 * MPICH 4.0.2 accepts the wildcards (hence _strict).
 */
#include "mtest.h"

static void set_hint(MPI_Comm c, const char *key, const char *v)
{
    MPI_Info info;
    MTEST_CALL(MPI_Info_create(&info));
    MTEST_CALL(MPI_Info_set(info, key, v));
    MTEST_CALL(MPI_Comm_set_info(c, info));
    MTEST_CALL(MPI_Info_free(&info));
}

static void names(int code, const char *key)
{
    char s[MPI_MAX_ERROR_STRING];
    int len = 0;
    MTEST_CALL(MPI_Error_string(code, s, &len));
    MTEST_CHECK(strstr(s, key) != NULL, "error string \"%s\" does not name %s", s, key);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int rank = mtest_rank(), size = mtest_size();
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int x = -1, out = rank * 10 + 1;
    MPI_Comm c;
    MPI_Request r, sr;
    MPI_Status st;

    MTEST_CALL(MPI_Comm_dup(MPI_COMM_WORLD, &c));
    MTEST_CALL(MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN));
    /* in use before the assertions are made */
    MTEST_CALL(MPI_Sendrecv(&out, 1, MPI_INT, right, 1, &x, 1, MPI_INT, MPI_ANY_SOURCE, 1, c,
                            &st));
    MTEST_STATUS(&st, left, 1, MPI_INT, 1);

    set_hint(c, "mpi_assert_no_any_source", "true");
    set_hint(c, "mpi_assert_no_any_tag", "true");
    /* a message waits from the left neighbour while the refused calls are made */
    MTEST_CALL(MPI_Isend(&out, 1, MPI_INT, right, 2, c, &sr));
    MTEST_CALL(MPI_Probe(left, 2, c, &st));
    MTEST_STATUS(&st, left, 2, MPI_INT, 1);

    int rc = MPI_Recv(&x, 1, MPI_INT, MPI_ANY_SOURCE, 2, c, &st);
    MTEST_EQ("class of MPI_Recv(MPI_ANY_SOURCE)", MPI_ERR_RANK, mtest_errclass(rc));
    names(rc, "mpi_assert_no_any_source");
    rc = MPI_Probe(left, MPI_ANY_TAG, c, &st);
    MTEST_EQ("class of MPI_Probe(MPI_ANY_TAG)", MPI_ERR_TAG, mtest_errclass(rc));
    names(rc, "mpi_assert_no_any_tag");
    MTEST_EXPECT_CLASS(MPI_ERR_TAG, MPI_Recv_init(&x, 1, MPI_INT, left, MPI_ANY_TAG, c, &r));
    MTEST_EXPECT_CLASS(MPI_ERR_RANK, MPI_Sendrecv_replace(&x, 1, MPI_INT, rank, 3,
                                                          MPI_ANY_SOURCE, 3, c, &st));

    /* nothing was taken: the waiting message goes to the receive that names it */
    x = -1;
    MTEST_CALL(MPI_Recv(&x, 1, MPI_INT, left, 2, c, &st));
    MTEST_STATUS(&st, left, 2, MPI_INT, 1);
    MTEST_EQ("message after the refused calls", left * 10 + 1, x);
    MTEST_CALL(MPI_Wait(&sr, MPI_STATUS_IGNORE));

    /* only the asserted wildcard is refused */
    set_hint(c, "mpi_assert_no_any_source", "false");
    MTEST_CALL(MPI_Sendrecv(&out, 1, MPI_INT, right, 4, &x, 1, MPI_INT, MPI_ANY_SOURCE, 4, c,
                            &st));
    MTEST_STATUS(&st, left, 4, MPI_INT, 1);
    MTEST_EXPECT_CLASS(MPI_ERR_TAG, MPI_Recv(&x, 1, MPI_INT, left, MPI_ANY_TAG, c, &st));

    MTEST_CALL(MPI_Comm_free(&c));
    return mtest_finalize();
}
