/*
 * Generalized requests: MPI_Grequest_start / MPI_Grequest_complete with the completion calls.
 * - incomplete until MPI_Grequest_complete (MPI_Test, MPI_Request_get_status flag 0);
 * - MPI_Wait / MPI_Test call query_fn (which fills the status with MPI_Status_set_elements,
 *   MPI_Status_set_cancelled and the public fields) then free_fn, once each, and null the
 *   handle; MPI_Request_get_status calls only query_fn;
 * - MPI_Cancel calls cancel_fn with complete = 0 before and 1 after MPI_Grequest_complete;
 * - MPI_Request_free: free_fn at once when complete, else at MPI_Grequest_complete;
 * - mixed with ordinary requests in MPI_Waitall / MPI_Waitany / MPI_Testsome;
 * - a query_fn error code comes back from MPI_Wait unchanged and as MPI_ERR_IN_STATUS with
 *   that code in MPI_ERROR from MPI_Waitall.
 *
 * oxmpi-only checks (skipped elsewhere): MPI_Grequest_complete on MPI_REQUEST_NULL, on an
 * ordinary request and twice on the same request is MPI_ERR_REQUEST; free_fn of a request
 * freed before completion waits for MPI_Grequest_complete (MPICH 4.0.2 calls it at once);
 * MPI_ERROR holds the query_fn code itself (MPICH: a code of the same class).
 */
#include "mtest.h"

static int is_oxmpi(void)
{
    char v[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    MPI_Get_library_version(v, &len);
    return strncmp(v, "oxmpi", 5) == 0;
}

typedef struct {
    int id;
    int queries, frees, cancels, last_complete_flag;
    int query_rc;
    int cancelled;
} greq_state;

static int query_fn(void *extra, MPI_Status *st)
{
    greq_state *g = extra;
    g->queries++;
    MPI_Status_set_elements(st, MPI_INT, 5 + g->id);
    MPI_Status_set_cancelled(st, g->cancelled);
    st->MPI_SOURCE = 100 + g->id;
    st->MPI_TAG = 200 + g->id;
    return g->query_rc;
}

static int free_fn(void *extra)
{
    greq_state *g = extra;
    g->frees++;
    return MPI_SUCCESS;
}

static int cancel_fn(void *extra, int complete)
{
    greq_state *g = extra;
    g->cancels++;
    g->last_complete_flag = complete;
    return MPI_SUCCESS;
}

static MPI_Request start(greq_state *g, int id)
{
    MPI_Request r = MPI_REQUEST_NULL;
    memset(g, 0, sizeof *g);
    g->id = id;
    g->last_complete_flag = -1;
    MTEST_CALL(MPI_Grequest_start(query_fn, free_fn, cancel_fn, g, &r));
    MTEST_CHECK(r != MPI_REQUEST_NULL, "MPI_Grequest_start gave MPI_REQUEST_NULL");
    return r;
}

static void check_counts(const greq_state *g, int q, int f, int c, const char *what)
{
    MTEST_CHECK(g->queries == q && g->frees == f && g->cancels == c,
                "%s: query/free/cancel called %d/%d/%d times, expected %d/%d/%d", what, g->queries,
                g->frees, g->cancels, q, f, c);
}

static void check_status(const MPI_Status *st, int id, const char *what)
{
    int count = -1;
    MTEST_CHECK(st->MPI_SOURCE == 100 + id && st->MPI_TAG == 200 + id, "%s: source %d tag %d", what,
                st->MPI_SOURCE, st->MPI_TAG);
    MTEST_CALL(MPI_Get_count(st, MPI_INT, &count));
    MTEST_EQ("count set by query_fn", 5 + id, count);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    greq_state g, h;
    MPI_Request r, r2, saved;
    MPI_Status st;
    int flag;

    /* basic life cycle */
    r = start(&g, 0);
    MTEST_CALL(MPI_Test(&r, &flag, &st));
    MTEST_EQ("MPI_Test before completion", 0, flag);
    MTEST_CALL(MPI_Request_get_status(r, &flag, &st));
    MTEST_EQ("MPI_Request_get_status before completion", 0, flag);
    check_counts(&g, 0, 0, 0, "before completion");
    MTEST_CALL(MPI_Grequest_complete(r));
    MTEST_CALL(MPI_Request_get_status(r, &flag, &st));
    MTEST_EQ("MPI_Request_get_status after completion", 1, flag);
    check_status(&st, 0, "MPI_Request_get_status");
    check_counts(&g, 1, 0, 0, "after MPI_Request_get_status");
    MTEST_CALL(MPI_Wait(&r, &st));
    MTEST_CHECK(r == MPI_REQUEST_NULL, "MPI_Wait did not null the handle");
    check_status(&st, 0, "MPI_Wait");
    check_counts(&g, 2, 1, 0, "after MPI_Wait");

    /* MPI_Test completes it; the cancelled flag set by query_fn is visible */
    r = start(&g, 1);
    g.cancelled = 1;
    MTEST_CALL(MPI_Grequest_complete(r));
    MTEST_CALL(MPI_Test(&r, &flag, &st));
    MTEST_EQ("MPI_Test after completion", 1, flag);
    MTEST_CHECK(r == MPI_REQUEST_NULL, "MPI_Test did not null the handle");
    check_status(&st, 1, "MPI_Test");
    MTEST_CALL(MPI_Test_cancelled(&st, &flag));
    MTEST_EQ("MPI_Test_cancelled after MPI_Status_set_cancelled(1)", 1, flag);
    check_counts(&g, 1, 1, 0, "after MPI_Test");

    /* cancel before and after completion */
    r = start(&g, 2);
    MTEST_CALL(MPI_Cancel(&r));
    MTEST_EQ("cancel_fn complete flag before completion", 0, g.last_complete_flag);
    MTEST_CALL(MPI_Grequest_complete(r));
    MTEST_CALL(MPI_Cancel(&r));
    MTEST_EQ("cancel_fn complete flag after completion", 1, g.last_complete_flag);
    MTEST_CALL(MPI_Wait(&r, MPI_STATUS_IGNORE));
    check_counts(&g, 1, 1, 2, "cancel twice then wait (status ignored)");

    /* MPI_Request_free before completion: free_fn runs at MPI_Grequest_complete */
    r = start(&g, 3);
    saved = r;
    MTEST_CALL(MPI_Request_free(&r));
    MTEST_CHECK(r == MPI_REQUEST_NULL, "MPI_Request_free did not null the handle");
    if (is_oxmpi()) {
        check_counts(&g, 0, 0, 0, "freed before completion");
    }
    MTEST_CALL(MPI_Grequest_complete(saved));
    check_counts(&g, 0, 1, 0, "completed after MPI_Request_free");

    /* MPI_Request_free after completion: free_fn at once, no query */
    r = start(&g, 4);
    MTEST_CALL(MPI_Grequest_complete(r));
    MTEST_CALL(MPI_Request_free(&r));
    check_counts(&g, 0, 1, 0, "freed after completion");

    /* with ordinary requests in MPI_Waitall, MPI_Waitany, MPI_Testsome */
    int out = 77, in = -1;
    MPI_Request reqs[4];
    MPI_Status sts[4];
    reqs[0] = start(&g, 5);
    MTEST_CALL(MPI_Irecv(&in, 1, MPI_INT, 0, 9, MPI_COMM_SELF, &reqs[1]));
    MTEST_CALL(MPI_Isend(&out, 1, MPI_INT, 0, 9, MPI_COMM_SELF, &reqs[2]));
    reqs[3] = MPI_REQUEST_NULL;
    MTEST_CALL(MPI_Grequest_complete(reqs[0]));
    MTEST_CALL(MPI_Waitall(4, reqs, sts));
    check_status(&sts[0], 5, "MPI_Waitall, generalized");
    MTEST_STATUS(&sts[1], 0, 9, MPI_INT, 1);
    MTEST_EQ("value received next to a generalized request", 77, in);
    MTEST_EMPTY_STATUS(&sts[3]);
    for (int i = 0; i < 4; i++) {
        MTEST_CHECK(reqs[i] == MPI_REQUEST_NULL, "MPI_Waitall left request %d", i);
    }
    check_counts(&g, 1, 1, 0, "MPI_Waitall");

    r = start(&g, 6);
    r2 = start(&h, 7);
    reqs[0] = r;
    reqs[1] = r2;
    MTEST_CALL(MPI_Grequest_complete(r2));
    int index = -1;
    MTEST_CALL(MPI_Waitany(2, reqs, &index, &st));
    MTEST_EQ("MPI_Waitany index", 1, index);
    check_status(&st, 7, "MPI_Waitany");
    check_counts(&h, 1, 1, 0, "MPI_Waitany, completed one");
    check_counts(&g, 0, 0, 0, "MPI_Waitany, pending one");
    int outcount = -1, indices[2];
    MTEST_CALL(MPI_Testsome(2, reqs, &outcount, indices, sts));
    MTEST_EQ("MPI_Testsome with nothing complete", 0, outcount);
    MTEST_CALL(MPI_Grequest_complete(reqs[0]));
    MTEST_CALL(MPI_Testsome(2, reqs, &outcount, indices, sts));
    MTEST_EQ("MPI_Testsome outcount", 1, outcount);
    MTEST_EQ("MPI_Testsome index", 0, indices[0]);
    check_status(&sts[0], 6, "MPI_Testsome");
    MTEST_CALL(MPI_Testsome(2, reqs, &outcount, indices, sts));
    MTEST_EQ("MPI_Testsome with only null requests", MPI_UNDEFINED, outcount);

    /* a query_fn error: the code itself from MPI_Wait, MPI_ERR_IN_STATUS from MPI_Waitall */
    int cls, code;
    MTEST_CALL(MPI_Add_error_class(&cls));
    MTEST_CALL(MPI_Add_error_code(cls, &code));
    r = start(&g, 8);
    g.query_rc = code;
    MTEST_CALL(MPI_Grequest_complete(r));
    int rc = MPI_Wait(&r, &st);
    MTEST_EQ("MPI_Wait returns the query_fn code", code, rc);
    MTEST_CHECK(r == MPI_REQUEST_NULL, "MPI_Wait with a failing query left the request");
    check_counts(&g, 1, 1, 0, "failing query");

    reqs[0] = start(&g, 9);
    reqs[1] = start(&h, 10);
    h.query_rc = code;
    MTEST_CALL(MPI_Grequest_complete(reqs[0]));
    MTEST_CALL(MPI_Grequest_complete(reqs[1]));
    sts[0].MPI_ERROR = sts[1].MPI_ERROR = -1;
    rc = MPI_Waitall(2, reqs, sts);
    MTEST_EQ("MPI_Waitall with a failing query", MPI_ERR_IN_STATUS, mtest_errclass(rc));
    MTEST_EQ("MPI_ERROR of the good generalized request", MPI_SUCCESS, sts[0].MPI_ERROR);
    if (is_oxmpi()) {
        MTEST_EQ("MPI_ERROR of the failing generalized request", code, sts[1].MPI_ERROR);
    } else {
        MTEST_CHECK(sts[1].MPI_ERROR != MPI_SUCCESS, "MPI_ERROR of the failing generalized request is MPI_SUCCESS");
    }
    check_counts(&g, 1, 1, 0, "MPI_Waitall, good one");
    check_counts(&h, 1, 1, 0, "MPI_Waitall, failing one");

    /* errors */
    if (is_oxmpi()) {
        MTEST_EXPECT_CLASS(MPI_ERR_REQUEST, MPI_Grequest_complete(MPI_REQUEST_NULL));
        MTEST_CALL(MPI_Isend(&out, 1, MPI_INT, 0, 11, MPI_COMM_SELF, &r));
        MTEST_EXPECT_CLASS(MPI_ERR_REQUEST, MPI_Grequest_complete(r));
        MTEST_CALL(MPI_Recv(&in, 1, MPI_INT, 0, 11, MPI_COMM_SELF, MPI_STATUS_IGNORE));
        MTEST_CALL(MPI_Wait(&r, MPI_STATUS_IGNORE));
        r = start(&g, 11);
        MTEST_CALL(MPI_Grequest_complete(r));
        MTEST_EXPECT_CLASS(MPI_ERR_REQUEST, MPI_Grequest_complete(r));
        MTEST_CALL(MPI_Wait(&r, MPI_STATUS_IGNORE));
    }
    return mtest_finalize();
}
