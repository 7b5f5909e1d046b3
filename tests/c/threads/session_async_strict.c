/*
 * The info key oxmpi_async_progress of MPI_Session_init (oxmpi): "true" starts the
 * asynchronous progress thread (a thread named oxmpi-progress appears in the process),
 * a second session asking again starts no second one, a value other than true/false
 * fails with MPI_ERR_INFO_VALUE, and communication on the session's communicator works
 * with the thread running.
 */
#include "../session/stest.h"

#include "progress_threads.h"

static MPI_Session session_with(const char *value)
{
    MPI_Info info;
    MPI_Session s = MPI_SESSION_NULL;
    MTEST_CALL(MPI_Info_create(&info));
    MTEST_CALL(MPI_Info_set(info, "oxmpi_async_progress", value));
    int rc = MPI_Session_init(info, MPI_ERRORS_RETURN, &s);
    MTEST_CALL(MPI_Info_free(&info));
    if (rc != MPI_SUCCESS) {
        MTEST_EQ("class of MPI_Session_init with a bad oxmpi_async_progress", MPI_ERR_INFO_VALUE,
                 mtest_errclass(rc));
        return MPI_SESSION_NULL;
    }
    return s;
}

int main(void)
{
    mtest_write_pidfile();
    /* Without the key (and without OXMPI_ASYNC_PROGRESS) no thread runs. */
    MPI_Session plain = stest_session();
    MTEST_EQ("progress threads of a plain session", 0, progress_threads());
    MTEST_CHECK(session_with("sometimes") == MPI_SESSION_NULL, "a bad value was accepted");
    MTEST_EQ("progress threads after the refused session", 0, progress_threads());

    MPI_Session a = session_with("true");
    MTEST_CHECK(a != MPI_SESSION_NULL, "session with oxmpi_async_progress=true");
    MTEST_EQ("progress threads after oxmpi_async_progress=true", 1, progress_threads_settled(1));
    MPI_Session b = session_with("true");
    mtest_sleep_ms(50);
    MTEST_EQ("progress threads after a second session asked", 1, progress_threads());

    MPI_Comm c = stest_world_comm(a, "org.oxmpi.test.session_async");
    int rank, size, sum = -1;
    MTEST_CALL(MPI_Comm_rank(c, &rank));
    MTEST_CALL(MPI_Comm_size(c, &size));
    mtest.rank = rank;
    mtest.size = size;
    MPI_Request r;
    MTEST_CALL(MPI_Iallreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, c, &r));
    MTEST_CALL(MPI_Wait(&r, MPI_STATUS_IGNORE));
    MTEST_EQ("sum with the progress thread", size * (size - 1) / 2, sum);

    MTEST_CALL(MPI_Session_finalize(&b));
    MTEST_CALL(MPI_Session_finalize(&plain));
    return stest_finish(c, a);
}
