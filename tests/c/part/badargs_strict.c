/* Partitioned communication: bad arguments and misuse give the right error class and a
 * message naming the call, the argument and the value (under MPI_ERRORS_RETURN):
 * partitions < 1 (MPI_ERR_ARG), count < 0 (MPI_ERR_COUNT), MPI_ANY_SOURCE (MPI_ERR_RANK),
 * MPI_ANY_TAG and negative tags (MPI_ERR_TAG), ranks out of range (MPI_ERR_RANK); partition
 * indices out of range in MPI_Pready/_range/_list and MPI_Parrived (MPI_ERR_ARG); MPI_Pready on
 * an inactive request, on a partition already ready, on a receive request or on a request that
 * is not partitioned, MPI_Parrived on a send request (on MPI_REQUEST_NULL it gives true), MPI_Start of an active request,
 * MPI_Request_free of an active one, MPI_Cancel (MPI_ERR_REQUEST), sizes that overflow
 * (MPI_ERR_COUNT).  The requests still work afterwards; requests with MPI_PROC_NULL complete
 * as point-to-point ones do.
 *
 * Strict: MPICH 4.0.2 does not check most of these (it crashes or hangs on several). */
#include "mtest.h"

static void expect_text(int code, const char *a, const char *b)
{
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(code, msg, &len);
    MTEST_CHECK(strstr(msg, a) != NULL && strstr(msg, b) != NULL,
                "error string \"%s\" should name \"%s\" and \"%s\"", msg, a, b);
}

int main(int argc, char **argv)
{
    int rank, size, rc, flag;
    int buf[40], rbuf[40];
    MPI_Request s, r, other;
    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    /* Initialisation arguments. */
    rc = MPI_Psend_init(buf, 0, 4, MPI_INT, rank, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &s);
    MTEST_EQ("partitions 0: class", MPI_ERR_ARG, mtest_errclass(rc));
    expect_text(rc, "MPI_Psend_init", "partitions 0");
    MTEST_EXPECT_CLASS(MPI_ERR_ARG, MPI_Precv_init(buf, -3, 4, MPI_INT, rank, 0, MPI_COMM_WORLD,
                                                   MPI_INFO_NULL, &r));
    rc = MPI_Precv_init(buf, 4, -1, MPI_INT, rank, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &r);
    MTEST_EQ("count -1: class", MPI_ERR_COUNT, mtest_errclass(rc));
    expect_text(rc, "MPI_Precv_init", "count -1");
    rc = MPI_Precv_init(buf, 4, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &r);
    MTEST_EQ("MPI_ANY_SOURCE: class", MPI_ERR_RANK, mtest_errclass(rc));
    expect_text(rc, "MPI_Precv_init", "MPI_ANY_SOURCE");
    MTEST_EXPECT_CLASS(MPI_ERR_RANK, MPI_Psend_init(buf, 4, 1, MPI_INT, MPI_ANY_SOURCE, 0,
                                                    MPI_COMM_WORLD, MPI_INFO_NULL, &s));
    rc = MPI_Precv_init(buf, 4, 1, MPI_INT, rank, MPI_ANY_TAG, MPI_COMM_WORLD, MPI_INFO_NULL, &r);
    MTEST_EQ("MPI_ANY_TAG: class", MPI_ERR_TAG, mtest_errclass(rc));
    expect_text(rc, "MPI_Precv_init", "MPI_ANY_TAG");
    MTEST_EXPECT_CLASS(MPI_ERR_TAG, MPI_Psend_init(buf, 4, 1, MPI_INT, rank, -5, MPI_COMM_WORLD,
                                                   MPI_INFO_NULL, &s));
    rc = MPI_Psend_init(buf, 4, 1, MPI_INT, size, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &s);
    MTEST_EQ("destination = size: class", MPI_ERR_RANK, mtest_errclass(rc));
    expect_text(rc, "MPI_Psend_init", "rank");
    MTEST_EXPECT_CLASS(MPI_ERR_COMM, MPI_Psend_init(buf, 4, 1, MPI_INT, 0, 0, MPI_COMM_NULL,
                                                    MPI_INFO_NULL, &s));
    MTEST_EXPECT_CLASS(MPI_ERR_TYPE, MPI_Psend_init(buf, 4, 1, MPI_DATATYPE_NULL, rank, 0,
                                                    MPI_COMM_WORLD, MPI_INFO_NULL, &s));

    /* A pair of requests to this process itself. */
    MTEST_CALL(MPI_Psend_init(buf, 4, 10, MPI_INT, rank, 9, MPI_COMM_WORLD, MPI_INFO_NULL, &s));
    MTEST_CALL(MPI_Precv_init(rbuf, 2, 20, MPI_INT, rank, 9, MPI_COMM_WORLD, MPI_INFO_NULL, &r));
    rc = MPI_Pready(0, s);
    MTEST_EQ("MPI_Pready on an inactive request: class", MPI_ERR_REQUEST, mtest_errclass(rc));
    expect_text(rc, "MPI_Pready", "inactive");
    for (int k = 0; k < 40; k++) {
        buf[k] = 3 * k;
        rbuf[k] = -1;
    }
    MTEST_CALL(MPI_Start(&r));
    MTEST_CALL(MPI_Start(&s));
    MTEST_EXPECT_CLASS(MPI_ERR_REQUEST, MPI_Start(&s));
    rc = MPI_Pready(4, s);
    MTEST_EQ("MPI_Pready(4) of 4 partitions: class", MPI_ERR_ARG, mtest_errclass(rc));
    expect_text(rc, "MPI_Pready", "partition 4");
    MTEST_EXPECT_CLASS(MPI_ERR_ARG, MPI_Pready(-1, s));
    MTEST_CALL(MPI_Pready(0, s));
    rc = MPI_Pready(0, s);
    MTEST_EQ("MPI_Pready twice: class", MPI_ERR_REQUEST, mtest_errclass(rc));
    expect_text(rc, "MPI_Pready", "partition 0");
    rc = MPI_Pready_range(2, 1, s);
    MTEST_EQ("MPI_Pready_range(2, 1): class", MPI_ERR_ARG, mtest_errclass(rc));
    expect_text(rc, "MPI_Pready_range", "partition_high 1");
    MTEST_EXPECT_CLASS(MPI_ERR_ARG, MPI_Pready_range(-1, 2, s));
    MTEST_EXPECT_CLASS(MPI_ERR_ARG, MPI_Pready_range(1, 4, s));
    int list[2] = {1, 7};
    rc = MPI_Pready_list(2, list, s);
    MTEST_EQ("MPI_Pready_list {1, 7}: class", MPI_ERR_ARG, mtest_errclass(rc));
    expect_text(rc, "MPI_Pready_list", "partition 7");
    MTEST_EXPECT_CLASS(MPI_ERR_ARG, MPI_Pready_list(-1, list, s));
    rc = MPI_Pready(1, r);
    MTEST_EQ("MPI_Pready on a receive request: class", MPI_ERR_REQUEST, mtest_errclass(rc));
    expect_text(rc, "MPI_Pready", "receive");
    rc = MPI_Parrived(s, 0, &flag);
    MTEST_EQ("MPI_Parrived on a send request: class", MPI_ERR_REQUEST, mtest_errclass(rc));
    expect_text(rc, "MPI_Parrived", "send");
    rc = MPI_Parrived(r, 2, &flag);
    MTEST_EQ("MPI_Parrived(2) of 2 partitions: class", MPI_ERR_ARG, mtest_errclass(rc));
    expect_text(rc, "MPI_Parrived", "partition 2");
    MTEST_EXPECT_CLASS(MPI_ERR_REQUEST, MPI_Pready(0, MPI_REQUEST_NULL));
    flag = 0;
    MTEST_CALL(MPI_Parrived(MPI_REQUEST_NULL, 0, &flag));
    MTEST_EQ("MPI_Parrived on MPI_REQUEST_NULL (MPI 4.1: flag true)", 1, flag);
    MTEST_CALL(MPI_Send_init(buf, 1, MPI_INT, rank, 10, MPI_COMM_WORLD, &other));
    MTEST_EXPECT_CLASS(MPI_ERR_REQUEST, MPI_Pready(0, other));
    MTEST_EXPECT_CLASS(MPI_ERR_REQUEST, MPI_Parrived(other, 0, &flag));
    MTEST_CALL(MPI_Request_free(&other));
    MTEST_EXPECT_CLASS(MPI_ERR_REQUEST, MPI_Request_free(&s));
    MTEST_EXPECT_CLASS(MPI_ERR_REQUEST, MPI_Cancel(&r));

    /* Partition 1 was marked by the failed list call before the bad entry; 2 and 3 remain. */
    MTEST_CALL(MPI_Pready_range(2, 3, s));
    MPI_Status st;
    MTEST_CALL(MPI_Wait(&r, &st));
    MTEST_STATUS(&st, rank, 9, MPI_INT, 40);
    MTEST_CALL(MPI_Wait(&s, MPI_STATUS_IGNORE));
    for (int k = 0; k < 40; k++) {
        MTEST_EQ("received element", 3 * k, rbuf[k]);
    }
    /* MPI 4.1 section 4.2.3: on an inactive request MPI_Parrived gives true (MPICH 4.0.2
     * refuses it). */
    flag = 0;
    MTEST_CALL(MPI_Parrived(r, 1, &flag));
    MTEST_EQ("MPI_Parrived on an inactive request", 1, flag);
    MTEST_CALL(MPI_Request_free(&s));
    MTEST_CALL(MPI_Request_free(&r));

    /* MPI_PROC_NULL: the send completes once every partition is ready, the receive at once
     * with the status of MPI_PROC_NULL. */
    MTEST_CALL(MPI_Psend_init(buf, 2, 3, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD,
                              MPI_INFO_NULL, &s));
    MTEST_CALL(MPI_Precv_init(rbuf, 2, 3, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD,
                              MPI_INFO_NULL, &r));
    for (int round = 0; round < 2; round++) {
        MTEST_CALL(MPI_Start(&s));
        MTEST_CALL(MPI_Start(&r));
        MTEST_CALL(MPI_Wait(&r, &st));
        MTEST_PROC_NULL_STATUS(&st);
        MTEST_CALL(MPI_Test(&s, &flag, MPI_STATUS_IGNORE));
        MTEST_EQ("send to MPI_PROC_NULL complete before its partitions are ready", 0, flag);
        MTEST_CALL(MPI_Pready_range(0, 1, s));
        MTEST_CALL(MPI_Wait(&s, MPI_STATUS_IGNORE));
    }
    MTEST_CALL(MPI_Request_free(&s));
    MTEST_CALL(MPI_Request_free(&r));

    /* partitions * count * size beyond what a process can address. */
    MTEST_EXPECT_CLASS(MPI_ERR_COUNT, MPI_Psend_init(buf, 1 << 30, (MPI_Count)1 << 40, MPI_INT,
                                                     rank, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &s));
    return mtest_finalize();
}
