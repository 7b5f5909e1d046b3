/*
 * oxmpi-strict (may fail on MPICH and Open MPI; listed apart in the manifest):
 * bad input to the matched probe calls is refused with the right class, and a refused
 * call leaves the matched message receivable.
 * - a message handle that names no matched message: MPI_MESSAGE_NULL, a copy of a
 *   handle whose message was received already, a request handle, garbage:
 *   MPI_ERR_REQUEST (the standard has no message class; Open MPI uses MPI_ERR_REQUEST);
 * - NULL message / flag pointers: MPI_ERR_ARG; MPI_COMM_NULL: MPI_ERR_COMM; a bad
 *   source: MPI_ERR_RANK; a bad tag: MPI_ERR_TAG;
 * - MPI_ANY_SOURCE / MPI_ANY_TAG on a communicator whose info asserts
 *   mpi_assert_no_any_source / mpi_assert_no_any_tag (erroneous, MPI 4.1 section 7.4.4):
 *   MPI_ERR_RANK / MPI_ERR_TAG, as for MPI_Probe;
 * - a negative count or an invalid datatype in MPI_Mrecv: MPI_ERR_COUNT / MPI_ERR_TYPE,
 *   the message still there for a correct MPI_Mrecv;
 * - a truncated MPI_Mrecv (MPI_ERR_TRUNCATE) delivers the first elements and, the message
 *   being received, sets the handle to MPI_MESSAGE_NULL (MPICH 4.0.2 writes neither).
 * Observed with MPICH 4.0.2: stale and request handles give MPI_ERR_ARG ("Invalid
 * MPI_Message"), the asserted wildcards are accepted, and a truncated MPI_Mrecv neither
 * delivers the first elements nor nulls the handle.
 * Every rank sends to itself, so the program runs at any size.
 */
#include "mtest.h"

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int rank = mtest_rank();
    int out[4] = {rank, 1, 2, 3}, in[4] = {0, 0, 0, 0}, flag = -1;
    MPI_Message msg = MPI_MESSAGE_NULL, stale;
    MPI_Status st;
    MPI_Request r;

    MTEST_EXPECT_CLASS(MPI_ERR_REQUEST, MPI_Mrecv(in, 4, MPI_INT, &msg, &st));
    MTEST_EXPECT_CLASS(MPI_ERR_REQUEST, MPI_Imrecv(in, 4, MPI_INT, &msg, &r));
    msg = (MPI_Message)0x12345;
    MTEST_EXPECT_CLASS(MPI_ERR_REQUEST, MPI_Mrecv(in, 4, MPI_INT, &msg, &st));
    MTEST_EXPECT_CLASS(MPI_ERR_ARG, MPI_Mrecv(in, 4, MPI_INT, NULL, &st));
    MTEST_EXPECT_CLASS(MPI_ERR_ARG, MPI_Mprobe(rank, 0, MPI_COMM_SELF, NULL, &st));
    MTEST_EXPECT_CLASS(MPI_ERR_ARG, MPI_Improbe(rank, 0, MPI_COMM_WORLD, NULL, &msg, &st));
    MTEST_EXPECT_CLASS(MPI_ERR_COMM, MPI_Mprobe(0, 0, MPI_COMM_NULL, &msg, &st));
    MTEST_EXPECT_CLASS(MPI_ERR_COMM, MPI_Improbe(0, 0, MPI_COMM_NULL, &flag, &msg, &st));
    MTEST_EXPECT_CLASS(MPI_ERR_RANK, MPI_Mprobe(mtest_size(), 0, MPI_COMM_WORLD, &msg, &st));
    MTEST_EXPECT_CLASS(MPI_ERR_TAG, MPI_Improbe(rank, -7, MPI_COMM_WORLD, &flag, &msg, &st));

    /* the wildcard assertions */
    MPI_Info info;
    MPI_Comm hinted;
    MTEST_CALL(MPI_Info_create(&info));
    MTEST_CALL(MPI_Info_set(info, "mpi_assert_no_any_source", "true"));
    MTEST_CALL(MPI_Info_set(info, "mpi_assert_no_any_tag", "true"));
    MTEST_CALL(MPI_Comm_dup_with_info(MPI_COMM_SELF, info, &hinted));
    MTEST_CALL(MPI_Info_free(&info));
    mtest_set_errhandler(hinted, MPI_ERRORS_RETURN);
    MTEST_EXPECT_CLASS(MPI_ERR_RANK, MPI_Improbe(MPI_ANY_SOURCE, 0, hinted, &flag, &msg, &st));
    MTEST_EXPECT_CLASS(MPI_ERR_TAG, MPI_Improbe(0, MPI_ANY_TAG, hinted, &flag, &msg, &st));
    MPI_Request sr;
    MTEST_CALL(MPI_Isend(out, 4, MPI_INT, 0, 3, hinted, &sr));
    MTEST_CALL(MPI_Mprobe(0, 3, hinted, &msg, &st));
    MTEST_STATUS(&st, 0, 3, MPI_INT, 4);

    /* refused receives leave the message in place */
    MTEST_EXPECT_CLASS(MPI_ERR_COUNT, MPI_Mrecv(in, -1, MPI_INT, &msg, &st));
    MTEST_EXPECT_CLASS(MPI_ERR_TYPE, MPI_Mrecv(in, 4, MPI_DATATYPE_NULL, &msg, &st));
    MTEST_CHECK(msg != MPI_MESSAGE_NULL, "a refused MPI_Mrecv released the message handle");
    stale = msg;
    MTEST_CALL(MPI_Mrecv(in, 4, MPI_INT, &msg, &st));
    MTEST_STATUS(&st, 0, 3, MPI_INT, 4);
    MTEST_EQ("data of the matched message", rank, in[0]);
    MTEST_EQ("data of the matched message", 3, in[3]);
    MTEST_EQ("message handle after MPI_Mrecv", MPI_MESSAGE_NULL, msg);
    MTEST_CALL(MPI_Wait(&sr, MPI_STATUS_IGNORE));

    /* received once: the old handle names nothing now */
    MTEST_EXPECT_CLASS(MPI_ERR_REQUEST, MPI_Mrecv(in, 4, MPI_INT, &stale, &st));
    MTEST_EXPECT_CLASS(MPI_ERR_REQUEST, MPI_Imrecv(in, 4, MPI_INT, &stale, &r));

    /* a request is not a message */
    MTEST_CALL(MPI_Irecv(in, 4, MPI_INT, 0, 4, hinted, &r));
    msg = (MPI_Message)r;
    MTEST_EXPECT_CLASS(MPI_ERR_REQUEST, MPI_Mrecv(in, 4, MPI_INT, &msg, &st));
    MTEST_CALL(MPI_Send(out, 4, MPI_INT, 0, 4, hinted));
    MTEST_CALL(MPI_Wait(&r, &st));
    MTEST_STATUS(&st, 0, 4, MPI_INT, 4);

    /* truncation: the message is received, its first elements delivered */
    MTEST_CALL(MPI_Isend(out, 4, MPI_INT, 0, 5, hinted, &sr));
    MTEST_CALL(MPI_Mprobe(0, 5, hinted, &msg, &st));
    in[0] = in[1] = in[2] = -1;
    MTEST_EXPECT_CLASS(MPI_ERR_TRUNCATE, MPI_Mrecv(in, 2, MPI_INT, &msg, &st));
    MTEST_EQ("message handle after a truncated MPI_Mrecv", MPI_MESSAGE_NULL, msg);
    MTEST_EQ("truncated data", rank, in[0]);
    MTEST_EQ("truncated data", 1, in[1]);
    MTEST_EQ("int after the receive buffer", -1, in[2]);
    MTEST_CALL(MPI_Wait(&sr, MPI_STATUS_IGNORE));

    MTEST_CALL(MPI_Comm_free(&hinted));
    return mtest_finalize();
}
