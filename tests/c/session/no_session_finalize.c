/*
 * Failure test (tests/c/failures): every rank opens a session and makes a communicator;
 * rank 1 then exits without MPI_Session_finalize while the others end properly. The job
 * must end with a non-zero status (the launcher reports the rank that left without
 * finalizing) instead of hanging in the others' goodbye to the job.
 */
#include "stest.h"

int main(void)
{
    mtest_write_pidfile();
    MPI_Session s = stest_session();
    MPI_Comm c = stest_world_comm(s, "org.oxmpi.test.nofinalize");
    int rank;
    MTEST_CALL(MPI_Comm_rank(c, &rank));
    MTEST_CALL(MPI_Barrier(c));
    if (rank == 1) {
        return 0;
    }
    MTEST_CALL(MPI_Comm_free(&c));
    MTEST_CALL(MPI_Session_finalize(&s));
    return 0;
}
