/*
 * MPI_Finalize while another thread of the process waits inside MPI (MPI_THREAD_MULTIPLE)
 * is an error the program can recover from: oxmpi returns MPI_ERR_OTHER and leaves MPI
 * running, the waiting receive still completes, and a second MPI_Finalize succeeds.
 * MPI_Query_thread and MPI_Is_thread_main answer from any thread. (Strict: the standard
 * makes the first MPI_Finalize erroneous, not an error it must report.)
 *
 * mtest-ldflags: -pthread
 */
#include "mtest.h"

#include <pthread.h>

static volatile int entered = 0;
static int got = -1, recv_rc = -1, level_seen = -1, main_seen = -1;

static void *waiter(void *arg)
{
    (void)arg;
    MPI_Query_thread(&level_seen);
    MPI_Is_thread_main(&main_seen);
    entered = 1;
    recv_rc = MPI_Recv(&got, 1, MPI_INT, 0, 5, MPI_COMM_SELF, MPI_STATUS_IGNORE);
    return NULL;
}

int main(int argc, char **argv)
{
    int provided = -1;
    mtest_write_pidfile();
    if (MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS) return 1;
    MTEST_CALL(MPI_Comm_rank(MPI_COMM_WORLD, &mtest.rank));
    MTEST_CALL(MPI_Comm_size(MPI_COMM_WORLD, &mtest.size));
    mtest_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    mtest_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    MTEST_EQ("provided", MPI_THREAD_MULTIPLE, provided);

    pthread_t t;
    MTEST_CHECK(pthread_create(&t, NULL, waiter, NULL) == 0, "pthread_create");
    while (!entered) mtest_sleep_ms(1);
    /* Give the thread time to be waiting inside MPI_Recv. */
    mtest_sleep_ms(500);
    int rc = MPI_Finalize();
    MTEST_EQ("class of MPI_Finalize with a thread inside MPI_Recv", MPI_ERR_OTHER, mtest_errclass(rc));
    int flag = -1;
    MTEST_CALL(MPI_Finalized(&flag));
    MTEST_EQ("MPI_Finalized after the refused MPI_Finalize", 0, flag);
    int v = 4711;
    MTEST_CALL(MPI_Send(&v, 1, MPI_INT, 0, 5, MPI_COMM_SELF));
    pthread_join(t, NULL);
    MTEST_EQ("receive of the waiting thread", MPI_SUCCESS, recv_rc);
    MTEST_EQ("value received by the waiting thread", 4711, got);
    MTEST_EQ("MPI_Query_thread on another thread", MPI_THREAD_MULTIPLE, level_seen);
    MTEST_EQ("MPI_Is_thread_main on another thread", 0, main_seen);
    return mtest_finalize();
}
