/*
 * Calls from a thread the granted thread level does not allow are refused with
 * MPI_ERR_OTHER and a message naming the level, and MPI stays usable (oxmpi; the
 * standard makes such calls erroneous, not errors it must report). MT_LEVEL selects:
 *
 *   funneled    MPI_THREAD_FUNNELED: a second thread calls MPI_Send while the main thread
 *               is outside MPI (in pthread_join); MPI_Query_thread and MPI_Is_thread_main
 *               still answer it (any thread may call them).
 *   serialized  MPI_THREAD_SERIALIZED (also "single"): rank 0's main thread waits in
 *               MPI_Recv for rank 1, which sends 3 s later; meanwhile a second thread of
 *               rank 0 calls MPI_Iprobe and is refused. The receive then completes.
 *
 * Run with 2 ranks. Every rank then checks that point-to-point traffic still works.
 *
 * mtest-ldflags: -pthread
 */
#include "mtest.h"

#include <pthread.h>

static volatile int main_inside = 0, main_done = 0;
static int probe_rc = -1, send_rc = -1, level_seen = -1, is_main = -1;
static int main_done_at_probe = 0;

static void *funneled_thread(void *arg)
{
    (void)arg;
    int v = 1;
    MPI_Query_thread(&level_seen);
    MPI_Is_thread_main(&is_main);
    send_rc = MPI_Send(&v, 1, MPI_INT, 0, 3, MPI_COMM_SELF);
    return NULL;
}

static void *serialized_thread(void *arg)
{
    (void)arg;
    int flag = 0;
    while (!main_inside) mtest_sleep_ms(1);
    /* Let the main thread reach its wait inside MPI_Recv. */
    mtest_sleep_ms(300);
    probe_rc = MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
    main_done_at_probe = main_done;
    return NULL;
}

static void check_message(int rc, const char *needle)
{
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, msg, &len);
    MTEST_CHECK(strstr(msg, needle) != NULL, "error string '%s' does not name %s", msg, needle);
}

int main(int argc, char **argv)
{
    const char *which = getenv("MT_LEVEL");
    int provided = -1, required;
    if (which == NULL || strcmp(which, "funneled") == 0) {
        which = "funneled";
        required = MPI_THREAD_FUNNELED;
    } else if (strcmp(which, "serialized") == 0) {
        required = MPI_THREAD_SERIALIZED;
    } else if (strcmp(which, "single") == 0) {
        required = MPI_THREAD_SINGLE;
    } else {
        fprintf(stderr, "MT_LEVEL must be funneled, serialized or single\n");
        return 1;
    }
    mtest_write_pidfile();
    if (MPI_Init_thread(&argc, &argv, required, &provided) != MPI_SUCCESS) return 1;
    MTEST_CALL(MPI_Comm_rank(MPI_COMM_WORLD, &mtest.rank));
    MTEST_CALL(MPI_Comm_size(MPI_COMM_WORLD, &mtest.size));
    mtest_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    mtest_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    MTEST_EQ("provided", required, provided);
    if (mtest.size < 2) MTEST_ABORT("run with 2 ranks");

    pthread_t t;
    if (required == MPI_THREAD_FUNNELED) {
        MTEST_CHECK(pthread_create(&t, NULL, funneled_thread, NULL) == 0, "pthread_create");
        pthread_join(t, NULL);
        MTEST_EQ("class of MPI_Send from a non-main thread", MPI_ERR_OTHER, mtest_errclass(send_rc));
        check_message(send_rc, "MPI_THREAD_FUNNELED");
        MTEST_EQ("MPI_Query_thread on the other thread", MPI_THREAD_FUNNELED, level_seen);
        MTEST_EQ("MPI_Is_thread_main on the other thread", 0, is_main);
        /* Nothing was sent: no message waits on MPI_COMM_SELF. */
        int flag = -1;
        MTEST_CALL(MPI_Iprobe(0, 3, MPI_COMM_SELF, &flag, MPI_STATUS_IGNORE));
        MTEST_EQ("message left by the refused send", 0, flag);
    } else if (mtest.rank == 0) {
        int got = -1;
        MTEST_CHECK(pthread_create(&t, NULL, serialized_thread, NULL) == 0, "pthread_create");
        main_inside = 1;
        MTEST_CALL(MPI_Recv(&got, 1, MPI_INT, 1, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        main_done = 1;
        pthread_join(t, NULL);
        MTEST_EQ("value received by the main thread", 42, got);
        MTEST_CHECK(!main_done_at_probe,
                    "the main thread's receive ended before the second thread called (load?)");
        MTEST_EQ("class of MPI_Iprobe while another thread waits", MPI_ERR_OTHER,
                 mtest_errclass(probe_rc));
        check_message(probe_rc, "second thread");
    } else if (mtest.rank == 1) {
        int v = 42;
        mtest_sleep_ms(3000);
        MTEST_CALL(MPI_Send(&v, 1, MPI_INT, 0, 7, MPI_COMM_WORLD));
    }

    /* MPI still works on the main thread. */
    int right = (mtest.rank + 1) % mtest.size, left = (mtest.rank + mtest.size - 1) % mtest.size;
    int out = 100 + mtest.rank, in = -1;
    MTEST_CALL(MPI_Sendrecv(&out, 1, MPI_INT, right, 9, &in, 1, MPI_INT, left, 9, MPI_COMM_WORLD,
                            MPI_STATUS_IGNORE));
    MTEST_EQ("ring value after the refused call", 100 + left, in);
    return mtest_finalize();
}
