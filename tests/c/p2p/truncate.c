/*
 * Receive buffer too small: MPI_ERR_TRUNCATE under MPI_ERRORS_RETURN, from MPI_Recv, MPI_Irecv + MPI_Wait, MPI_Irecv + MPI_Test, MPI_Waitany,
 * MPI_Sendrecv and a zero-count receive; MPI_Waitall and MPI_Waitsome return
 * MPI_ERR_IN_STATUS with MPI_ERR_TRUNCATE in the failed request's status.MPI_ERROR and
 * MPI_SUCCESS (or MPI_ERR_PENDING, then completed later) in the others.  Nothing past the
 * receive count is written.  The sender's requests all complete successfully, and messages
 * after the truncated ones are received normally.
 * Rank 2k sends to 2k+1 (a lone last rank to itself).  Messages here are at most 400
 * bytes; truncated rendezvous-size messages are in p2p/semantics_strict (Open MPI 4.1.4
 * writes past the receive buffer for those and crashes).
 */
#include "mtest.h"

#define NSEND 14
static const int send_counts[NSEND] = {10, 100, 10, 10, 4, 50, 4, 10, 10, 5, 10, 0, 7, 3};
/* tags are 1..NSEND; tag 11 is the receive side of MPI_Sendrecv, tag 12 unused */
#define GUARD 16

static void fill_ints(int *p, int n, int tag)
{
    for (int i = 0; i < n; i++) {
        p[i] = tag * 1000000 + i;
    }
}

static int class_of(int rc)
{
    return rc == MPI_SUCCESS ? MPI_SUCCESS : mtest_errclass(rc);
}

static void expect_truncate(int rc, const char *what)
{
    MTEST_CHECK(rc != MPI_SUCCESS, "%s: expected MPI_ERR_TRUNCATE got MPI_SUCCESS", what);
    if (rc != MPI_SUCCESS) {
        MTEST_CHECK(class_of(rc) == MPI_ERR_TRUNCATE, "%s: expected MPI_ERR_TRUNCATE (%d) got class %d (%s)",
                    what, MPI_ERR_TRUNCATE, class_of(rc), mtest_errstr(rc));
    }
}

/* buffer of `count` ints followed by GUARD ints of 0x77 */
static int *guarded(int count)
{
    int *p = mtest_malloc(sizeof(int) * (size_t)(count + GUARD));
    memset(p, 0x77, sizeof(int) * (size_t)(count + GUARD));
    return p;
}

static void check_guard(int *p, int count, const char *what)
{
    mtest_verify_const(p + count, sizeof(int) * GUARD, 0x77, what);
    free(p);
}

static void receiver(int src)
{
    MPI_Request r, rs[3];
    MPI_Status st, sts[3];
    int rc, idx, outcount, indices[3], flag;
    int *b, *b2, *b3;

    b = guarded(5);
    expect_truncate(MPI_Recv(b, 5, MPI_INT, src, 1, MPI_COMM_WORLD, &st), "MPI_Recv of 10 ints into 5");
    check_guard(b, 5, "bytes past a truncated receive (10 ints into 5)");

    b = guarded(50);
    expect_truncate(MPI_Recv(b, 50, MPI_INT, src, 2, MPI_COMM_WORLD, &st), "MPI_Recv of 100 ints into 50");
    check_guard(b, 50, "bytes past a truncated receive (100 ints into 50)");

    b = guarded(3);
    MTEST_CALL(MPI_Irecv(b, 3, MPI_INT, src, 3, MPI_COMM_WORLD, &r));
    expect_truncate(MPI_Wait(&r, &st), "MPI_Irecv + MPI_Wait");
    check_guard(b, 3, "bytes past a truncated MPI_Irecv");

    b = guarded(3);
    MTEST_CALL(MPI_Irecv(b, 3, MPI_INT, src, 4, MPI_COMM_WORLD, &r));
    flag = 0;
    rc = MPI_SUCCESS;
    while (!flag && rc == MPI_SUCCESS) {
        rc = MPI_Test(&r, &flag, &st);
    }
    expect_truncate(rc, "MPI_Irecv + MPI_Test");
    check_guard(b, 3, "bytes past a truncated MPI_Irecv (MPI_Test)");

    /* MPI_Waitall: [ok, truncated, ok] */
    b = guarded(4);
    b2 = guarded(10);
    b3 = guarded(4);
    MTEST_CALL(MPI_Irecv(b, 4, MPI_INT, src, 5, MPI_COMM_WORLD, &rs[0]));
    MTEST_CALL(MPI_Irecv(b2, 10, MPI_INT, src, 6, MPI_COMM_WORLD, &rs[1]));
    MTEST_CALL(MPI_Irecv(b3, 4, MPI_INT, src, 7, MPI_COMM_WORLD, &rs[2]));
    for (int i = 0; i < 3; i++) {
        sts[i].MPI_ERROR = -12345;
    }
    rc = MPI_Waitall(3, rs, sts);
    MTEST_CHECK(rc != MPI_SUCCESS && class_of(rc) == MPI_ERR_IN_STATUS,
                "MPI_Waitall with a truncated receive: expected MPI_ERR_IN_STATUS got class %d", class_of(rc));
    if (rc != MPI_SUCCESS && class_of(rc) == MPI_ERR_IN_STATUS) {
        expect_truncate(sts[1].MPI_ERROR, "status.MPI_ERROR of the truncated receive in MPI_Waitall");
        for (int i = 0; i < 3; i += 2) {
            int e = sts[i].MPI_ERROR;
            MTEST_CHECK(e == MPI_SUCCESS || e == MPI_ERR_PENDING,
                        "status.MPI_ERROR of good receive %d in MPI_Waitall: %d", i, e);
            if (e == MPI_ERR_PENDING) {
                MTEST_CALL(MPI_Wait(&rs[i], &sts[i]));
            }
            MTEST_STATUS(&sts[i], src, 5 + i, MPI_INT, 4);
        }
    }
    MTEST_EQ("good receive next to a truncated one", 5 * 1000000 + 3, b[3]);
    MTEST_EQ("good receive next to a truncated one", 7 * 1000000 + 3, b3[3]);
    check_guard(b, 4, "guard");
    check_guard(b2, 10, "bytes past a truncated receive in MPI_Waitall");
    check_guard(b3, 4, "guard");

    /* MPI_Waitany */
    b = guarded(2);
    rs[0] = MPI_REQUEST_NULL;
    MTEST_CALL(MPI_Irecv(b, 2, MPI_INT, src, 8, MPI_COMM_WORLD, &rs[1]));
    expect_truncate(MPI_Waitany(2, rs, &idx, &st), "MPI_Waitany");
    check_guard(b, 2, "bytes past a truncated receive in MPI_Waitany");

    /* MPI_Waitsome */
    b = guarded(2);
    MTEST_CALL(MPI_Irecv(b, 2, MPI_INT, src, 9, MPI_COMM_WORLD, &rs[0]));
    sts[0].MPI_ERROR = -12345;
    outcount = -1;
    rc = MPI_Waitsome(1, rs, &outcount, indices, sts);
    MTEST_CHECK(rc != MPI_SUCCESS && class_of(rc) == MPI_ERR_IN_STATUS,
                "MPI_Waitsome with a truncated receive: expected MPI_ERR_IN_STATUS got class %d", class_of(rc));
    MTEST_EQ("MPI_Waitsome outcount", 1, outcount);
    if (outcount == 1) {
        MTEST_EQ("MPI_Waitsome index", 0, indices[0]);
        expect_truncate(sts[0].MPI_ERROR, "status.MPI_ERROR of the truncated receive in MPI_Waitsome");
    }
    check_guard(b, 2, "bytes past a truncated receive in MPI_Waitsome");

    /* zero-count receive of a 5-int message */
    int z = 0x77777777;
    expect_truncate(MPI_Recv(&z, 0, MPI_INT, src, 10, MPI_COMM_WORLD, &st), "MPI_Recv with count 0");
    MTEST_EQ("buffer of a zero-count truncated receive", 0x77777777, z);

    /* MPI_Sendrecv whose receive part is too small (the send part goes to the partner) */
    int one = 42;
    b = guarded(2);
    expect_truncate(MPI_Sendrecv(&one, 1, MPI_INT, src, 12, b, 2, MPI_INT, src, 11, MPI_COMM_WORLD, &st),
                    "MPI_Sendrecv");
    check_guard(b, 2, "bytes past a truncated MPI_Sendrecv");

    /* after all that, ordinary messages still arrive (tags 13 and 14) */
    b = guarded(7);
    MTEST_CALL(MPI_Recv(b, 7, MPI_INT, src, 13, MPI_COMM_WORLD, &st));
    MTEST_STATUS(&st, src, 13, MPI_INT, 7);
    MTEST_EQ("message after truncations", 13 * 1000000 + 6, b[6]);
    check_guard(b, 7, "guard");
    b = guarded(100);
    MTEST_CALL(MPI_Recv(b, 100, MPI_INT, src, 14, MPI_COMM_WORLD, &st));
    MTEST_STATUS(&st, src, 14, MPI_INT, 3);
    check_guard(b, 100, "guard");
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int rank = mtest_rank(), size = mtest_size();
    int partner = (rank ^ 1) < size ? (rank ^ 1) : rank;
    int sending = partner == rank || rank % 2 == 0;
    int receiving = partner == rank || rank % 2 == 1;
    int *bufs[NSEND];
    MPI_Request sreq[NSEND + 1];
    int back = -1;

    if (sending) {
        for (int t = 1; t <= NSEND; t++) {
            int n = send_counts[t - 1];
            bufs[t - 1] = mtest_malloc(sizeof(int) * (size_t)(n ? n : 1));
            fill_ints(bufs[t - 1], n, t);
            if (t == 12) {
                /* the receive side of the partner's MPI_Sendrecv */
                MTEST_CALL(MPI_Irecv(&back, 1, MPI_INT, partner, 12, MPI_COMM_WORLD, &sreq[t - 1]));
            } else {
                MTEST_CALL(MPI_Isend(bufs[t - 1], n, MPI_INT, partner, t, MPI_COMM_WORLD, &sreq[t - 1]));
            }
        }
    }
    if (receiving) {
        receiver(partner);
    }
    if (sending) {
        MPI_Status sts[NSEND];
        int rc = MPI_Waitall(NSEND, sreq, sts);
        MTEST_CHECK(rc == MPI_SUCCESS, "sender's MPI_Waitall after truncations at the receiver: %s",
                    mtest_errstr(rc));
        MTEST_EQ("value sent by the receiver's MPI_Sendrecv", 42, back);
        for (int t = 0; t < NSEND; t++) {
            free(bufs[t]);
        }
    }
    return mtest_finalize();
}
