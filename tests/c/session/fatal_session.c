/*
 * Failure test (tests/c/failures): a session with the default MPI_ERRORS_ARE_FATAL
 * handler, asked for a process set that does not exist: the job ends with a non-zero
 * status and a message naming the call (with only sessions running, no MPI_Init).
 */
#include "mtest.h"

int main(void)
{
    mtest_write_pidfile();
    MPI_Session s = MPI_SESSION_NULL;
    MPI_Group g;
    if (MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_ARE_FATAL, &s) != MPI_SUCCESS) {
        return 2;
    }
    MPI_Group_from_session_pset(s, "mpi://NOWHERE", &g);
    fprintf(stderr, "MPI_Group_from_session_pset returned under MPI_ERRORS_ARE_FATAL\n");
    return 3;
}
