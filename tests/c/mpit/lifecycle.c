/* The life cycle of the tool information interface: every call but MPI_T_init_thread
 * fails with MPI_T_ERR_NOT_INITIALIZED outside MPI_T_init_thread..MPI_T_finalize;
 * initialisation is counted (as many MPI_T_finalize calls as MPI_T_init_thread calls,
 * one more fails; checked on oxmpi only: MPICH 4.0.2 crashes on those calls); handles made before MPI_Init stay valid through it and through
 * MPI_Finalize; the interface can be initialised again after MPI_Finalize (checked
 * on oxmpi only: MPICH 4.0.2 crashes there). */
#include "mpit_util.h"

static void not_initialized(void)
{
    int n;
    MPI_T_cvar_handle ch = MPI_T_CVAR_HANDLE_NULL;
    MPI_T_pvar_session s = MPI_T_PVAR_SESSION_NULL;
    T_EXPECT(MPI_T_ERR_NOT_INITIALIZED, MPI_T_cvar_get_num(&n));
    T_EXPECT(MPI_T_ERR_NOT_INITIALIZED, MPI_T_pvar_get_num(&n));
    T_EXPECT(MPI_T_ERR_NOT_INITIALIZED, MPI_T_category_get_num(&n));
    T_EXPECT(MPI_T_ERR_NOT_INITIALIZED, MPI_T_category_changed(&n));
    T_EXPECT(MPI_T_ERR_NOT_INITIALIZED, MPI_T_cvar_get_index("x", &n));
    T_EXPECT(MPI_T_ERR_NOT_INITIALIZED, MPI_T_cvar_handle_alloc(0, NULL, &ch, &n));
    T_EXPECT(MPI_T_ERR_NOT_INITIALIZED, MPI_T_pvar_session_create(&s));
    T_EXPECT(MPI_T_ERR_NOT_INITIALIZED, MPI_T_finalize());
}

int main(int argc, char **argv)
{
    int provided = -1, n = -1, ncvar = -1;
    int oxmpi = mpit_is_oxmpi();
    if (oxmpi) { /* MPICH 4.0.2 crashes on MPI_T calls before MPI_T_init_thread */
        not_initialized();
    }

    T_CALL(MPI_T_init_thread(MPI_THREAD_MULTIPLE, &provided));
    T_CALL(MPI_T_init_thread(MPI_THREAD_FUNNELED, &provided));
    T_CALL(MPI_T_finalize());
    /* Still initialised once. */
    T_CALL(MPI_T_cvar_get_num(&ncvar));

    /* A handle and a session made before MPI_Init. */
    MPI_T_cvar_handle ch = MPI_T_CVAR_HANDLE_NULL;
    MPI_T_pvar_session session = MPI_T_PVAR_SESSION_NULL;
    int count = -1;
    if (ncvar > 0) {
        T_CALL(MPI_T_cvar_handle_alloc(0, NULL, &ch, &count));
    }
    T_CALL(MPI_T_pvar_session_create(&session));

    mtest_init(&argc, &argv);
    T_CALL(MPI_T_cvar_get_num(&n));
    if (oxmpi) {
        MTEST_EQ("cvars after MPI_Init", ncvar, n);
    }
    char *buf = NULL;
    if (ncvar > 0) {
        buf = calloc((size_t)count, 8);
        T_CALL(MPI_T_cvar_read(ch, buf));
    }
    T_CALL(MPI_T_pvar_session_free(&session));
    MTEST_CHECK(session == MPI_T_PVAR_SESSION_NULL, "session not set to MPI_T_PVAR_SESSION_NULL");

    int verdict = mtest_finalize();

    /* After MPI_Finalize (failures are printed and make the exit status non-zero). */
    int late = 0;
#define LATE(cond, what)                                                                          \
    do {                                                                                          \
        if (!(cond)) {                                                                            \
            fprintf(stderr, "after MPI_Finalize: %s\n", what);                                    \
            late++;                                                                               \
        }                                                                                         \
    } while (0)
    if (ncvar > 0) {
        LATE(MPI_T_cvar_read(ch, buf) == MPI_SUCCESS, "MPI_T_cvar_read failed");
        LATE(MPI_T_cvar_handle_free(&ch) == MPI_SUCCESS, "MPI_T_cvar_handle_free failed");
    }
    LATE(MPI_T_finalize() == MPI_SUCCESS, "MPI_T_finalize failed");
    /* Initialised again after the last MPI_T_finalize (MPICH 4.0.2 crashes there). */
    if (oxmpi) {
        LATE(MPI_T_cvar_get_num(&n) == MPI_T_ERR_NOT_INITIALIZED, "still initialised");
        LATE(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) == MPI_SUCCESS,
             "MPI_T_init_thread failed");
        LATE(MPI_T_cvar_get_num(&n) == MPI_SUCCESS && n == ncvar, "MPI_T_cvar_get_num");
        LATE(MPI_T_pvar_session_create(&session) == MPI_SUCCESS, "MPI_T_pvar_session_create");
        LATE(MPI_T_pvar_session_free(&session) == MPI_SUCCESS, "MPI_T_pvar_session_free");
        if (ncvar > 0) {
            LATE(MPI_T_cvar_handle_alloc(0, NULL, &ch, &count) == MPI_SUCCESS,
                 "MPI_T_cvar_handle_alloc");
            LATE(MPI_T_cvar_read(ch, buf) == MPI_SUCCESS, "MPI_T_cvar_read (new handle)");
            LATE(MPI_T_cvar_handle_free(&ch) == MPI_SUCCESS, "MPI_T_cvar_handle_free (new handle)");
        }
        LATE(MPI_T_finalize() == MPI_SUCCESS, "second MPI_T_finalize");
    }
    free(buf);
    return late ? 1 : verdict;
}
