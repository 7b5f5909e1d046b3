/*
 * Erroneous uses of collective requests that oxmpi detects (MPI 4.1 section 6.12 and
 * 6.13 make them erroneous; MPICH 4.0.2 and Open MPI 4.1.4 do not all report them):
 * - MPI_Start of an active persistent collective request: MPI_ERR_REQUEST;
 * - MPI_Cancel of a nonblocking or persistent collective request: MPI_ERR_REQUEST;
 * - MPI_Request_free of an active collective request (a nonblocking one not done yet,
 *   a persistent one started and not completed): MPI_ERR_REQUEST (the request stays
 *   valid and completes normally);
 * - a NULL request argument: MPI_ERR_ARG;
 * - a negative count to MPI_Allreduce_init or MPI_Iscan: MPI_ERR_COUNT (MPICH 4.0.2
 *   reports MPI_ERR_OTHER, out of memory);
 * - MPI_Wait on an inactive persistent collective request returns the empty status at
 *   once (MPICH 4.0.2 hangs);
 * and the error strings name the call and what was wrong.
 */
#include "mtest.h"

static void expect_text(int rc, const char *call, const char *word)
{
    char s[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, s, &len);
    MTEST_CHECK(strstr(s, call) != NULL, "error string '%s' does not name %s", s, call);
    MTEST_CHECK(strstr(s, word) != NULL, "error string '%s' does not say '%s'", s, word);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int r = mtest_rank(), n = mtest_size();
    MPI_Comm w = MPI_COMM_WORLD;
    int a = r, b = -1;
    MPI_Request p, q;

    MTEST_EXPECT_CLASS(MPI_ERR_COUNT, MPI_Allreduce_init(&a, &b, -2, MPI_INT, MPI_SUM, w,
                                                         MPI_INFO_NULL, &p));
    MTEST_EXPECT_CLASS(MPI_ERR_COUNT, MPI_Iscan(&a, &b, -2, MPI_INT, MPI_SUM, w, &q));
    MTEST_CALL(MPI_Allreduce_init(&a, &b, 1, MPI_INT, MPI_SUM, w, MPI_INFO_NULL, &p));
    MPI_Status st;
    MTEST_CALL(MPI_Wait(&p, &st));
    MTEST_CHECK(p != MPI_REQUEST_NULL, "Wait on an inactive persistent request freed it");
    MTEST_EQ("inactive status MPI_SOURCE", MPI_ANY_SOURCE, st.MPI_SOURCE);
    MTEST_EQ("inactive status MPI_TAG", MPI_ANY_TAG, st.MPI_TAG);
    MTEST_CALL(MPI_Start(&p));
    int rc = MPI_Start(&p);
    MTEST_EQ("MPI_Start of an active persistent collective", MPI_ERR_REQUEST, mtest_errclass(rc));
    expect_text(rc, "MPI_Start", "already active");
    rc = MPI_Cancel(&p);
    MTEST_EQ("MPI_Cancel of a persistent collective", MPI_ERR_REQUEST, mtest_errclass(rc));
    expect_text(rc, "MPI_Cancel", "cannot be cancelled");
    MPI_Request keep = p;
    rc = MPI_Request_free(&p);
    MTEST_EQ("MPI_Request_free of an active persistent collective", MPI_ERR_REQUEST,
             mtest_errclass(rc));
    expect_text(rc, "MPI_Request_free", "while it is active");
    p = keep;
    MTEST_CALL(MPI_Wait(&p, MPI_STATUS_IGNORE));
    MTEST_EQ("Allreduce_init result", n * (n - 1) / 2, b);
    MTEST_CALL(MPI_Request_free(&p));

    /* A nonblocking barrier that cannot complete yet: the other ranks start theirs only
     * after rank 0's checks. */
    if (n > 1) {
        if (r == 0) {
            MTEST_CALL(MPI_Ibarrier(w, &q));
            rc = MPI_Cancel(&q);
            MTEST_EQ("MPI_Cancel of a nonblocking collective", MPI_ERR_REQUEST, mtest_errclass(rc));
            keep = q;
            rc = MPI_Request_free(&q);
            MTEST_EQ("MPI_Request_free of an active nonblocking collective", MPI_ERR_REQUEST,
                     mtest_errclass(rc));
            q = keep;
            for (int i = 1; i < n; i++) MTEST_CALL(MPI_Send(&a, 1, MPI_INT, i, 3, w));
        } else {
            int go;
            MTEST_CALL(MPI_Recv(&go, 1, MPI_INT, 0, 3, w, MPI_STATUS_IGNORE));
            MTEST_CALL(MPI_Ibarrier(w, &q));
        }
        MTEST_CALL(MPI_Wait(&q, MPI_STATUS_IGNORE));
    }

    rc = MPI_Ibarrier(w, NULL);
    MTEST_EQ("MPI_Ibarrier with a NULL request", MPI_ERR_ARG, mtest_errclass(rc));
    expect_text(rc, "MPI_Ibarrier", "request");
    rc = MPI_Bcast_init(&a, 1, MPI_INT, 0, w, MPI_INFO_NULL, NULL);
    MTEST_EQ("MPI_Bcast_init with a NULL request", MPI_ERR_ARG, mtest_errclass(rc));
    rc = MPI_Barrier_init(w, (MPI_Info)0x1c00ffff, &q);
    MTEST_EQ("MPI_Barrier_init with an invalid info", MPI_ERR_INFO, mtest_errclass(rc));

    /* Still usable. */
    MTEST_CALL(MPI_Iallreduce(&a, &b, 1, MPI_INT, MPI_MAX, w, &q));
    MTEST_CALL(MPI_Wait(&q, MPI_STATUS_IGNORE));
    MTEST_EQ("Iallreduce afterwards", n - 1, b);
    return mtest_finalize();
}
