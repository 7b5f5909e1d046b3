/*
 * mtest-abi: oxmpi-header (MPICH 4.0.2's mpi.h lacks what it calls)
 * MPI-4.1 request and status calls: MPI_Request_get_status_any / _all / _some report
 * complete requests without freeing or deactivating them (null and inactive entries
 * count as complete with the empty status; with no active request, _any gives flag 1
 * and index MPI_UNDEFINED, _some outcount MPI_UNDEFINED); a truncated receive gives
 * MPI_ERR_TRUNCATE from MPI_Request_get_status and _any, MPI_ERR_IN_STATUS with the
 * MPI_ERROR field from _all and _some; MPI_Status_get/set_source/tag/error read and
 * write the fields, refusing MPI_STATUS_IGNORE and NULL; an MPI_Isendrecv whose receive
 * is truncated fails with MPI_ERR_TRUNCATE; MPI_Cancel and MPI_Request_free of a pending
 * MPI_Isendrecv; generalized requests in the arrays (status from the query function,
 * the free function only at MPI_Wait); the empty status has MPI_ERROR = MPI_SUCCESS
 * also from the single-completion calls (mpi4py checks it).
 *
 * Strict: MPICH 4.0.2 and Open MPI 4.1 do not have the MPI-4.1 functions (and MPICH
 * 4.0.2 never completes a cancelled MPI_Isendrecv).
 */
#include "mtest.h"

static void status_fields(void)
{
    MPI_Status st;
    int v = -1;
    MTEST_CALL(MPI_Status_set_source(&st, 3));
    MTEST_CALL(MPI_Status_set_tag(&st, 44));
    MTEST_CALL(MPI_Status_set_error(&st, MPI_ERR_TRUNCATE));
    MTEST_EQ("MPI_SOURCE after MPI_Status_set_source", 3, st.MPI_SOURCE);
    MTEST_EQ("MPI_TAG after MPI_Status_set_tag", 44, st.MPI_TAG);
    MTEST_EQ("MPI_ERROR after MPI_Status_set_error", MPI_ERR_TRUNCATE, st.MPI_ERROR);
    MTEST_CALL(MPI_Status_get_source(&st, &v));
    MTEST_EQ("MPI_Status_get_source", 3, v);
    MTEST_CALL(MPI_Status_get_tag(&st, &v));
    MTEST_EQ("MPI_Status_get_tag", 44, v);
    MTEST_CALL(MPI_Status_get_error(&st, &v));
    MTEST_EQ("MPI_Status_get_error", MPI_ERR_TRUNCATE, v);
    st.MPI_SOURCE = 9;
    MTEST_CALL(MPI_Status_get_source(&st, &v));
    MTEST_EQ("MPI_Status_get_source after a direct store", 9, v);

    MTEST_EXPECT_CLASS(MPI_ERR_ARG, MPI_Status_get_source(MPI_STATUS_IGNORE, &v));
    MTEST_EXPECT_CLASS(MPI_ERR_ARG, MPI_Status_get_tag(NULL, &v));
    MTEST_EXPECT_CLASS(MPI_ERR_ARG, MPI_Status_get_error(&st, NULL));
    MTEST_EXPECT_CLASS(MPI_ERR_ARG, MPI_Status_set_source(MPI_STATUS_IGNORE, 1));
    MTEST_EXPECT_CLASS(MPI_ERR_ARG, MPI_Status_set_tag(NULL, 1));
    MTEST_EXPECT_CLASS(MPI_ERR_ARG, MPI_Status_set_error(MPI_STATUS_IGNORE, 1));

    /* the status of a real receive */
    int x = 7, y = 0;
    MTEST_CALL(MPI_Sendrecv(&x, 1, MPI_INT, 0, 12, &y, 1, MPI_INT, 0, MPI_ANY_TAG, MPI_COMM_SELF,
                            &st));
    MTEST_CALL(MPI_Status_get_source(&st, &v));
    MTEST_EQ("source of a self receive", 0, v);
    MTEST_CALL(MPI_Status_get_tag(&st, &v));
    MTEST_EQ("tag of a self receive", 12, v);
}

/* On MPI_COMM_SELF: a receive still waiting, a completed send, a null handle and an
 * inactive persistent request. */
static void get_status_arrays(void)
{
    int in = -1, out = 31, pin = 0;
    MPI_Request r[4];
    MPI_Status st[4];
    int flag = -1, index = -1, outcount = -1, idx[4];
    MTEST_CALL(MPI_Irecv(&in, 1, MPI_INT, 0, 5, MPI_COMM_SELF, &r[0]));
    r[1] = MPI_REQUEST_NULL;
    MTEST_CALL(MPI_Recv_init(&pin, 1, MPI_INT, 0, 6, MPI_COMM_SELF, &r[2]));
    MTEST_CALL(MPI_Isend(&out, 1, MPI_INT, 0, 9, MPI_COMM_SELF, &r[3]));

    /* the send (eager, to self) completes; the receive cannot */
    do {
        MTEST_CALL(MPI_Request_get_status_any(4, r, &index, &flag, &st[0]));
    } while (!flag);
    MTEST_EQ("MPI_Request_get_status_any index", 3, index);
    MTEST_CHECK(r[3] != MPI_REQUEST_NULL, "MPI_Request_get_status_any freed the request");
    MTEST_CALL(MPI_Request_get_status_all(4, r, &flag, st));
    MTEST_EQ("MPI_Request_get_status_all flag with a receive pending", 0, flag);
    MTEST_CALL(MPI_Request_get_status_some(4, r, &outcount, idx, st));
    MTEST_EQ("MPI_Request_get_status_some outcount", 1, outcount);
    MTEST_EQ("MPI_Request_get_status_some index", 3, idx[0]);

    /* the matching send: now everything is complete */
    int v = 1234;
    MTEST_CALL(MPI_Send(&v, 1, MPI_INT, 0, 5, MPI_COMM_SELF));
    do {
        MTEST_CALL(MPI_Request_get_status_all(4, r, &flag, st));
    } while (!flag);
    MTEST_STATUS(&st[0], 0, 5, MPI_INT, 1);
    MTEST_EMPTY_STATUS(&st[1]);
    MTEST_EMPTY_STATUS(&st[2]);
    MTEST_EQ("received value", 1234, in);
    MTEST_CHECK(r[0] != MPI_REQUEST_NULL && r[3] != MPI_REQUEST_NULL && r[2] != MPI_REQUEST_NULL,
                "MPI_Request_get_status_all freed a request");
    MTEST_CALL(MPI_Request_get_status_some(4, r, &outcount, idx, MPI_STATUSES_IGNORE));
    MTEST_EQ("MPI_Request_get_status_some outcount when all are complete", 2, outcount);
    MTEST_EQ("first index", 0, idx[0]);
    MTEST_EQ("second index", 3, idx[1]);
    MTEST_CALL(MPI_Request_get_status_any(4, r, &index, &flag, MPI_STATUS_IGNORE));
    MTEST_EQ("MPI_Request_get_status_any flag", 1, flag);
    MTEST_EQ("MPI_Request_get_status_any index", 0, index);

    /* the requests still complete normally */
    MTEST_CALL(MPI_Waitall(4, r, st));
    MTEST_STATUS(&st[0], 0, 5, MPI_INT, 1);
    MTEST_EQ("receive handle after MPI_Waitall", MPI_REQUEST_NULL, r[0]);
    MTEST_EQ("send handle after MPI_Waitall", MPI_REQUEST_NULL, r[3]);
    MTEST_CHECK(r[2] != MPI_REQUEST_NULL, "MPI_Waitall freed the inactive persistent request");
    MTEST_CALL(MPI_Request_free(&r[2]));

    /* no active request at all */
    MPI_Request none[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    index = 0;
    flag = 0;
    st[0].MPI_ERROR = MPI_ERR_OTHER; /* the empty status carries MPI_SUCCESS (as MPICH's) */
    MTEST_CALL(MPI_Request_get_status_any(2, none, &index, &flag, &st[0]));
    MTEST_EQ("_any flag with no active request", 1, flag);
    MTEST_EQ("_any index with no active request", MPI_UNDEFINED, index);
    MTEST_EMPTY_STATUS(&st[0]);
    MTEST_EQ("_any MPI_ERROR of the empty status", MPI_SUCCESS, st[0].MPI_ERROR);
    st[0].MPI_ERROR = MPI_ERR_OTHER;
    MTEST_CALL(MPI_Waitany(2, none, &index, &st[0]));
    MTEST_EQ("MPI_Waitany index with no active request", MPI_UNDEFINED, index);
    MTEST_EQ("MPI_Waitany MPI_ERROR of the empty status", MPI_SUCCESS, st[0].MPI_ERROR);
    MTEST_CALL(MPI_Request_get_status_some(2, none, &outcount, idx, st));
    MTEST_EQ("_some outcount with no active request", MPI_UNDEFINED, outcount);
    MTEST_CALL(MPI_Request_get_status_all(2, none, &flag, st));
    MTEST_EQ("_all flag with no active request", 1, flag);
    MTEST_EMPTY_STATUS(&st[1]);
    MTEST_CALL(MPI_Request_get_status_all(0, NULL, &flag, MPI_STATUSES_IGNORE));
    MTEST_EQ("_all flag of an empty list", 1, flag);

    /* bad arguments */
    MTEST_EXPECT_CLASS(MPI_ERR_COUNT, MPI_Request_get_status_all(-1, none, &flag, st));
    MTEST_EXPECT_CLASS(MPI_ERR_ARG, MPI_Request_get_status_any(2, none, NULL, &flag, st));
    MTEST_EXPECT_CLASS(MPI_ERR_ARG, MPI_Request_get_status_any(2, none, &index, NULL, st));
    MTEST_EXPECT_CLASS(MPI_ERR_ARG, MPI_Request_get_status_some(2, none, NULL, idx, st));
    MTEST_EXPECT_CLASS(MPI_ERR_ARG, MPI_Request_get_status_all(2, NULL, &flag, st));
    MPI_Request bogus[1] = {(MPI_Request)0x12345};
    MTEST_EXPECT_CLASS(MPI_ERR_REQUEST, MPI_Request_get_status_all(1, bogus, &flag, st));
}

/* Truncation reported by the status calls, without freeing the request. */
static void truncation(void)
{
    int big[4] = {1, 2, 3, 4}, small[2] = {0, 0};
    MPI_Request r[2];
    MPI_Status st[2];
    int flag = 0, index = -1, outcount = -1, idx[2];
    MTEST_CALL(MPI_Irecv(small, 2, MPI_INT, 0, 8, MPI_COMM_SELF, &r[0]));
    MTEST_CALL(MPI_Send(big, 4, MPI_INT, 0, 8, MPI_COMM_SELF));
    MTEST_EXPECT_CLASS(MPI_ERR_TRUNCATE, MPI_Request_get_status(r[0], &flag, &st[0]));
    MTEST_EQ("flag of a truncated request", 1, flag);
    MTEST_EXPECT_CLASS(MPI_ERR_TRUNCATE,
                       MPI_Request_get_status_any(1, r, &index, &flag, MPI_STATUS_IGNORE));
    MTEST_EQ("_any index of a truncated request", 0, index);
    r[1] = MPI_REQUEST_NULL;
    st[0].MPI_ERROR = -1;
    MTEST_EXPECT_CLASS(MPI_ERR_IN_STATUS, MPI_Request_get_status_all(2, r, &flag, st));
    MTEST_EQ("MPI_ERROR of the truncated request", MPI_ERR_TRUNCATE,
             mtest_errclass(st[0].MPI_ERROR));
    MTEST_EQ("MPI_ERROR of the null request", MPI_SUCCESS, st[1].MPI_ERROR);
    MTEST_EXPECT_CLASS(MPI_ERR_IN_STATUS, MPI_Request_get_status_some(2, r, &outcount, idx, st));
    MTEST_EQ("_some outcount of a truncated request", 1, outcount);
    MTEST_CHECK(r[0] != MPI_REQUEST_NULL, "a status call freed the truncated request");
    MTEST_EXPECT_CLASS(MPI_ERR_TRUNCATE, MPI_Wait(&r[0], &st[0]));
    MTEST_EQ("request after MPI_Wait", MPI_REQUEST_NULL, r[0]);

    /* an MPI_Isendrecv whose receive is truncated */
    MPI_Request q;
    MTEST_CALL(MPI_Isendrecv(big, 4, MPI_INT, 0, 3, small, 2, MPI_INT, 0, 3, MPI_COMM_SELF, &q));
    MTEST_EXPECT_CLASS(MPI_ERR_TRUNCATE, MPI_Wait(&q, &st[0]));
    MTEST_EQ("source of the truncated MPI_Isendrecv", 0, st[0].MPI_SOURCE);
    MTEST_EQ("tag of the truncated MPI_Isendrecv", 3, st[0].MPI_TAG);
}

/* MPI_Cancel of an MPI_Isendrecv cancels its parts: a receive that cannot match is
 * cancelled (the status says so), the send that left already still arrives. A request
 * freed while pending completes on its own. */
static void cancel_and_free(void)
{
    int out = 41, in = -1, late = -1, flag = -1;
    MPI_Request q;
    MPI_Status st;
    MTEST_CALL(MPI_Isendrecv(&out, 1, MPI_INT, 0, 70, &in, 1, MPI_INT, 0, 71, MPI_COMM_SELF, &q));
    MTEST_CALL(MPI_Cancel(&q));
    MTEST_CALL(MPI_Wait(&q, &st));
    MTEST_CALL(MPI_Test_cancelled(&st, &flag));
    MTEST_EQ("cancelled flag of the MPI_Isendrecv", 1, flag);
    MTEST_EQ("receive buffer of the cancelled MPI_Isendrecv", -1, in);
    MTEST_CALL(MPI_Recv(&late, 1, MPI_INT, 0, 70, MPI_COMM_SELF, &st));
    MTEST_EQ("the send of the cancelled MPI_Isendrecv", 41, late);

    MTEST_CALL(MPI_Isendrecv(&out, 1, MPI_INT, 0, 72, &in, 1, MPI_INT, 0, 73, MPI_COMM_SELF, &q));
    MTEST_CALL(MPI_Request_free(&q));
    MTEST_EQ("handle after MPI_Request_free", MPI_REQUEST_NULL, q);
    int v = 9;
    MTEST_CALL(MPI_Send(&v, 1, MPI_INT, 0, 73, MPI_COMM_SELF));
    MTEST_CALL(MPI_Recv(&late, 1, MPI_INT, 0, 72, MPI_COMM_SELF, &st));
    MTEST_EQ("the send of the freed MPI_Isendrecv", 41, late);
    /* the freed request's receive completes through progress */
    for (int i = 0; i < 1000 && in != 9; i++) {
        MTEST_CALL(MPI_Iprobe(0, 99, MPI_COMM_SELF, &flag, MPI_STATUS_IGNORE));
    }
    MTEST_EQ("receive buffer of the freed MPI_Isendrecv", 9, in);
}

/* Generalized requests among the array: the status comes from the query function, and
 * the request is not freed (its free function runs at MPI_Wait). */
static int queries, frees;

static int query_fn(void *extra, MPI_Status *st)
{
    (void)extra;
    queries++;
    MPI_Status_set_source(st, 0);
    MPI_Status_set_tag(st, 88);
    MPI_Status_set_error(st, MPI_SUCCESS);
    MPI_Status_set_elements(st, MPI_INT, 2);
    MPI_Status_set_cancelled(st, 0);
    return MPI_SUCCESS;
}

static int free_fn(void *extra)
{
    (void)extra;
    frees++;
    return MPI_SUCCESS;
}

static int cancel_fn(void *extra, int complete)
{
    (void)extra;
    (void)complete;
    return MPI_SUCCESS;
}

static void generalized(void)
{
    MPI_Request r[2];
    MPI_Status st[2];
    int flag = -1, index = -1, outcount = -1, idx[2];
    MTEST_CALL(MPI_Grequest_start(query_fn, free_fn, cancel_fn, NULL, &r[0]));
    r[1] = MPI_REQUEST_NULL;
    MTEST_CALL(MPI_Request_get_status_any(2, r, &index, &flag, &st[0]));
    MTEST_EQ("_any flag of a pending generalized request", 0, flag);
    MTEST_CALL(MPI_Request_get_status_some(2, r, &outcount, idx, st));
    MTEST_EQ("_some outcount of a pending generalized request", 0, outcount);
    MTEST_EQ("query calls before completion", 0, queries);
    MTEST_CALL(MPI_Grequest_complete(r[0]));
    MTEST_CALL(MPI_Request_get_status_all(2, r, &flag, st));
    MTEST_EQ("_all flag of a complete generalized request", 1, flag);
    MTEST_STATUS(&st[0], 0, 88, MPI_INT, 2);
    MTEST_CALL(MPI_Request_get_status_any(2, r, &index, &flag, &st[0]));
    MTEST_EQ("_any index of the generalized request", 0, index);
    MTEST_EQ("free calls before MPI_Wait", 0, frees);
    MTEST_CHECK(r[0] != MPI_REQUEST_NULL, "a status call freed the generalized request");
    MTEST_CALL(MPI_Wait(&r[0], &st[0]));
    MTEST_EQ("free calls after MPI_Wait", 1, frees);
    MTEST_STATUS(&st[0], 0, 88, MPI_INT, 2);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    status_fields();
    get_status_arrays();
    truncation();
    cancel_and_free();
    generalized();
    return mtest_finalize();
}
