/*
 * Bad input to the session calls, with the classes they must give, and where errors
 * go: to the session's handler (a user handler gets the session and the code), to the
 * handler passed to MPI_Comm_create_from_group. Runs next to MPI_Init, whose
 * MPI_COMM_SELF handler (MPI_ERRORS_RETURN) reports errors with no valid session.
 * Strict: MPICH 4.0.2 aborts on an unknown process set whatever the session's handler,
 * and ignores an invalid thread_level.
 */
#include "stest.h"

static int calls = 0, last_code = 0;
static MPI_Session last_session = MPI_SESSION_NULL;

static void on_session(MPI_Session *s, int *code, ...)
{
    calls++;
    last_session = *s;
    last_code = *code;
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    MPI_Session s = stest_session(), dead = stest_session();
    MTEST_CALL(MPI_Session_finalize(&dead));
    MPI_Session stale = s + 1; /* the handle `dead` had */
    int n = 0;
    char name[MPI_MAX_PSET_NAME_LEN];
    MPI_Group g = MPI_GROUP_NULL;
    MPI_Info info = MPI_INFO_NULL;
    MPI_Comm c = MPI_COMM_NULL;
    MPI_Errhandler eh = MPI_ERRHANDLER_NULL;

    /* Invalid sessions. */
    MTEST_EXPECT_CLASS(MPI_ERR_SESSION, MPI_Session_get_num_psets(MPI_SESSION_NULL, MPI_INFO_NULL, &n));
    MTEST_EXPECT_CLASS(MPI_ERR_SESSION, MPI_Session_get_num_psets(stale, MPI_INFO_NULL, &n));
    MTEST_EXPECT_CLASS(MPI_ERR_SESSION, MPI_Session_get_info(MPI_COMM_WORLD, &info));
    MTEST_EXPECT_CLASS(MPI_ERR_SESSION, MPI_Session_finalize(&dead));
    MTEST_EXPECT_CLASS(MPI_ERR_SESSION, MPI_Group_from_session_pset(MPI_SESSION_NULL, "mpi://WORLD", &g));
    /* Bad arguments on a good session: errors go to its handler (MPI_ERRORS_RETURN). */
    MTEST_EXPECT_CLASS(MPI_ERR_ARG, MPI_Group_from_session_pset(s, "mpi://NOWHERE", &g));
    MTEST_EXPECT_CLASS(MPI_ERR_ARG, MPI_Group_from_session_pset(s, NULL, &g));
    MTEST_EXPECT_CLASS(MPI_ERR_ARG, MPI_Group_from_session_pset(s, "mpi://WORLD", NULL));
    MTEST_EXPECT_CLASS(MPI_ERR_ARG, MPI_Session_get_pset_info(s, "mpi://NOWHERE", &info));
    MTEST_EXPECT_CLASS(MPI_ERR_ARG, MPI_Session_get_num_psets(s, MPI_INFO_NULL, NULL));
    MTEST_CALL(MPI_Session_get_num_psets(s, MPI_INFO_NULL, &n));
    int len = MPI_MAX_PSET_NAME_LEN;
    MTEST_EXPECT_CLASS(MPI_ERR_ARG, MPI_Session_get_nth_pset(s, MPI_INFO_NULL, n, &len, name));
    MTEST_EXPECT_CLASS(MPI_ERR_ARG, MPI_Session_get_nth_pset(s, MPI_INFO_NULL, -1, &len, name));
    MTEST_EXPECT_CLASS(MPI_ERR_ARG, MPI_Session_get_nth_pset(s, MPI_INFO_NULL, 0, NULL, name));
    MTEST_EXPECT_CLASS(MPI_ERR_INFO, MPI_Session_get_num_psets(s, (MPI_Info)0x1c00ffff, &n));
    MTEST_EXPECT_CLASS(MPI_ERR_ARG, MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, NULL));
    MPI_Info hints;
    MPI_Session extra = MPI_SESSION_NULL;
    MTEST_CALL(MPI_Info_create(&hints));
    MTEST_CALL(MPI_Info_set(hints, "thread_level", "MPI_THREAD_PLENTY"));
    MTEST_EXPECT_CLASS(MPI_ERR_INFO_VALUE, MPI_Session_init(hints, MPI_ERRORS_RETURN, &extra));
    MTEST_EQ("session after a failed MPI_Session_init", MPI_SESSION_NULL, extra);
    MTEST_CALL(MPI_Info_free(&hints));

    /* Communicators from groups: errors go to the handler given. */
    MTEST_CALL(MPI_Group_from_session_pset(s, "mpi://WORLD", &g));
    char longtag[MPI_MAX_STRINGTAG_LEN + 8];
    memset(longtag, 't', sizeof longtag - 1);
    longtag[sizeof longtag - 1] = 0;
    MTEST_EXPECT_CLASS(MPI_ERR_ARG, MPI_Comm_create_from_group(g, longtag, MPI_INFO_NULL, MPI_ERRORS_RETURN, &c));
    MTEST_EXPECT_CLASS(MPI_ERR_ARG, MPI_Comm_create_from_group(g, NULL, MPI_INFO_NULL, MPI_ERRORS_RETURN, &c));
    MTEST_EXPECT_CLASS(MPI_ERR_GROUP, MPI_Comm_create_from_group(MPI_GROUP_NULL, "t", MPI_INFO_NULL, MPI_ERRORS_RETURN, &c));
    MTEST_EXPECT_CLASS(MPI_ERR_ARG, MPI_Comm_create_from_group(g, "t", MPI_INFO_NULL, MPI_ERRORS_RETURN, NULL));
    MTEST_EXPECT_CLASS(MPI_ERR_GROUP, MPI_Comm_create_from_group(MPI_GROUP_EMPTY, "t", MPI_INFO_NULL, MPI_ERRORS_RETURN, &c));
    if (mtest_size() > 1) {
        /* A group without the caller. */
        MPI_Group other;
        int me = mtest_rank();
        MTEST_CALL(MPI_Group_excl(g, 1, &me, &other));
        MTEST_EXPECT_CLASS(MPI_ERR_GROUP, MPI_Comm_create_from_group(other, "t", MPI_INFO_NULL, MPI_ERRORS_RETURN, &c));
        MTEST_EXPECT_CLASS(MPI_ERR_RANK, MPI_Intercomm_create_from_groups(g, 0, other, mtest_size(), "t", MPI_INFO_NULL, MPI_ERRORS_RETURN, &c));
        MTEST_CALL(MPI_Group_free(&other));
    }
    MTEST_EXPECT_CLASS(MPI_ERR_GROUP, MPI_Intercomm_create_from_groups(g, 0, g, 0, "t", MPI_INFO_NULL, MPI_ERRORS_RETURN, &c));
    MTEST_EQ("newcomm untouched by failures", MPI_COMM_NULL, c);

    /* A user handler on the session gets the session and the code. */
    MTEST_CALL(MPI_Session_create_errhandler(on_session, &eh));
    MTEST_CALL(MPI_Session_set_errhandler(s, eh));
    MPI_Errhandler got = MPI_ERRHANDLER_NULL;
    MTEST_CALL(MPI_Session_get_errhandler(s, &got));
    MTEST_EQ("MPI_Session_get_errhandler", eh, got);
    MTEST_CALL(MPI_Errhandler_free(&got));
    MTEST_CALL(MPI_Errhandler_free(&eh));
    int rc = MPI_Group_from_session_pset(s, "mpi://NOWHERE", &g);
    MTEST_EQ("handler calls", 1, calls);
    MTEST_EQ("handler's session", s, last_session);
    MTEST_EQ("handler's code", rc, last_code);
    MTEST_EQ("class", MPI_ERR_ARG, mtest_errclass(rc));
    MTEST_CALL(MPI_Session_call_errhandler(s, MPI_ERR_OTHER));
    MTEST_EQ("handler calls after MPI_Session_call_errhandler", 2, calls);
    MTEST_EQ("code passed", MPI_ERR_OTHER, last_code);
    MTEST_CALL(MPI_Session_set_errhandler(s, MPI_ERRORS_RETURN));
    /* MPI-4.1's MPI_ERR_ERRHANDLER (79 in oxmpi; MPICH 4.0.2 has no such class). */
#ifndef MPI_ERR_ERRHANDLER
#define MPI_ERR_ERRHANDLER 79
#endif
    MTEST_EXPECT_CLASS2(MPI_ERR_ERRHANDLER, MPI_ERR_ARG,
                        MPI_Session_set_errhandler(s, MPI_ERRHANDLER_NULL));

    MTEST_CALL(MPI_Group_free(&g));
    MTEST_CALL(MPI_Session_finalize(&s));
    return mtest_finalize();
}
