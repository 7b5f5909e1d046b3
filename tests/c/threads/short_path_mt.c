/*
 * The small-message short path under MPI_THREAD_MULTIPLE: MT_THREADS threads per rank
 * (default 4) exchange MT_ITERS (default 2000) one-int messages with the same thread of
 * the paired rank, all on one communicator and the same peer, told apart by tag. Each
 * thread mixes MPI_Send/MPI_Isend with MPI_Recv/MPI_Irecv (every fifth receive names
 * MPI_ANY_SOURCE), so threads race to take the ring's next packet, find another thread's
 * message at its head, and post. Every value must arrive once, in order per tag.
 * Ranks work in pairs (even, odd); an unpaired last rank only joins the final check.
 *
 * mtest-ldflags: -pthread
 */
#include "mtest.h"
#include <pthread.h>

#define MAXT 16

static int peer, nthreads = 4, iters = 2000;
static MPI_Comm comm;
static int errs[MAXT];

static void *worker(void *arg)
{
    int t = (int)(intptr_t)arg;
    for (int i = 0; i < iters; i++) {
        int out = i * MAXT + t, in = -1, rc;
        MPI_Request r;
        MPI_Status st;
        if (i % 2) {
            rc = MPI_Send(&out, 1, MPI_INT, peer, t, comm);
        } else {
            rc = MPI_Isend(&out, 1, MPI_INT, peer, t, comm, &r);
            if (rc == MPI_SUCCESS) rc = MPI_Wait(&r, MPI_STATUS_IGNORE);
        }
        if (rc != MPI_SUCCESS) MTEST_ABORT("thread %d: send %d failed: %s", t, i, mtest_errstr(rc));
        int src = i % 5 == 4 ? MPI_ANY_SOURCE : peer;
        if (i % 3) {
            rc = MPI_Recv(&in, 1, MPI_INT, src, t, comm, &st);
        } else {
            rc = MPI_Irecv(&in, 1, MPI_INT, src, t, comm, &r);
            if (rc == MPI_SUCCESS) rc = MPI_Wait(&r, &st);
        }
        if (rc != MPI_SUCCESS) MTEST_ABORT("thread %d: receive %d failed: %s", t, i, mtest_errstr(rc));
        if (in != out || st.MPI_TAG != t || st.MPI_SOURCE != peer) {
            if (errs[t]++ < 5)
                fprintf(stderr, "thread %d iteration %d: got %d tag %d source %d, expected %d tag %d source %d\n",
                        t, i, in, st.MPI_TAG, st.MPI_SOURCE, out, t, peer);
        }
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int provided = -1, me, size;
    mtest_write_pidfile();
    if (MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS) {
        fprintf(stderr, "MPI_Init_thread failed\n");
        return 1;
    }
    MTEST_CALL(MPI_Comm_rank(MPI_COMM_WORLD, &mtest.rank));
    MTEST_CALL(MPI_Comm_size(MPI_COMM_WORLD, &mtest.size));
    mtest_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    mtest_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    if (provided != MPI_THREAD_MULTIPLE) {
        if (mtest.rank == 0) printf("MPI_THREAD_MULTIPLE not provided (%d): nothing to test\n", provided);
        return mtest_finalize();
    }
    me = mtest.rank;
    size = mtest.size;
    const char *e = getenv("MT_THREADS");
    if (e) nthreads = atoi(e);
    if (nthreads < 1 || nthreads > MAXT) nthreads = 4;
    e = getenv("MT_ITERS");
    if (e) iters = atoi(e);
    peer = me % 2 == 0 ? me + 1 : me - 1;
    MTEST_CALL(MPI_Comm_dup(MPI_COMM_WORLD, &comm));
    if (peer < size) {
        pthread_t th[MAXT];
        for (int t = 0; t < nthreads; t++)
            if (pthread_create(&th[t], NULL, worker, (void *)(intptr_t)t) != 0) MTEST_ABORT("pthread_create");
        for (int t = 0; t < nthreads; t++) pthread_join(th[t], NULL);
    }
    MTEST_CALL(MPI_Comm_free(&comm));
    for (int t = 0; t < nthreads; t++) mtest.errors += errs[t];
    return mtest_finalize();
}
