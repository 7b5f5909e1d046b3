/*
 * stest.h - helpers for the session programs that run without MPI_Init: mtest.h's checks
 * work unchanged (they only count and print), and stest_finish() replaces
 * mtest_finalize(), summing the failures over a communicator made from a session.
 */
#ifndef STEST_H
#define STEST_H

#include "mtest.h"

/* Opens a session with MPI_ERRORS_RETURN (aborting the process if that fails). */
static inline MPI_Session stest_session(void)
{
    MPI_Session s = MPI_SESSION_NULL;
    int rc = MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s);
    if (rc != MPI_SUCCESS) {
        fprintf(stderr, "MPI_Session_init failed: %s\n", mtest_errstr(rc));
        exit(1);
    }
    return s;
}

/* A communicator over mpi://WORLD made from session `s` with string tag `tag`. */
static inline MPI_Comm stest_world_comm(MPI_Session s, const char *tag)
{
    MPI_Group g = MPI_GROUP_NULL;
    MPI_Comm c = MPI_COMM_NULL;
    MTEST_CALL(MPI_Group_from_session_pset(s, "mpi://WORLD", &g));
    MTEST_CALL(MPI_Comm_create_from_group(g, tag, MPI_INFO_NULL, MPI_ERRORS_RETURN, &c));
    MTEST_CALL(MPI_Group_free(&g));
    return c;
}

/* Sums the failures over `c` (which is freed) at its rank 0, prints the verdict there,
 * finalizes `s`; returns the exit status for main(). */
static inline int stest_finish(MPI_Comm c, MPI_Session s)
{
    int total = 0, rank = 0;
    MTEST_CALL(MPI_Comm_rank(c, &rank));
    MTEST_CALL(MPI_Reduce(&mtest.errors, &total, 1, MPI_INT, MPI_SUM, 0, c));
    if (rank == 0) {
        printf(total ? " Found %d errors\n" : " No Errors\n", total);
        fflush(stdout);
    }
    MTEST_CALL(MPI_Comm_free(&c));
    MTEST_CALL(MPI_Session_finalize(&s));
    return mtest.errors ? 1 : (rank == 0 && total ? 1 : 0);
}

/* True when session `s` lists process set `name`. */
static inline int stest_has_pset(MPI_Session s, const char *name)
{
    int n = 0;
    MTEST_CALL(MPI_Session_get_num_psets(s, MPI_INFO_NULL, &n));
    for (int i = 0; i < n; i++) {
        char buf[MPI_MAX_PSET_NAME_LEN];
        int len = MPI_MAX_PSET_NAME_LEN;
        MTEST_CALL(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, i, &len, buf));
        if (strcmp(buf, name) == 0) {
            return 1;
        }
    }
    return 0;
}

#endif
