/*
 * MPI_THREAD_MULTIPLE stress: MT_THREADS threads per rank (default 4) each run MT_ITERS
 * (default 150) operations picked by a generator seeded the same on every rank, so that
 * all ranks make the same calls in the same order per thread:
 *   - point-to-point rings, probe + receive, large (rendezvous) messages
 *     and the collectives (allreduce, bcast, iallreduce, ibarrier, barrier) on the
 *     thread's private duplicate of MPI_COMM_WORLD;
 *   - point-to-point and Iprobe loops on one communicator shared by all threads, told
 *     apart by tag;
 *   - every thread pairs with a sibling thread of its own rank: one receives (blocking)
 *     what the other sends on a shared duplicate of MPI_COMM_SELF;
 *   - a request started by one thread and completed by MPI_Wait in another.
 * Every message's contents and every result are checked.
 *
 * mtest-ldflags: -pthread
 */
#include "mtest.h"

#include <pthread.h>

#define MAXT 8
#define BIG (96 * 1024)

static int nthreads = 4, iters = 150;
static MPI_Comm priv[MAXT], shared, selfc;
static int errors = 0;

/* Hand-off of a request between thread 0 and the last thread. */
static pthread_mutex_t hand_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t hand_cv = PTHREAD_COND_INITIALIZER;
static MPI_Request handed = MPI_REQUEST_NULL;
static int hand_state = 0; /* 0: empty, 1: request waiting, 2: done */

#define FAIL(...)                                                                                   \
    do {                                                                                            \
        __atomic_add_fetch(&errors, 1, __ATOMIC_SEQ_CST);                                           \
        fprintf(stderr, "rank %d: ", mtest.rank);                                                   \
        fprintf(stderr, __VA_ARGS__);                                                               \
        fputc('\n', stderr);                                                                        \
    } while (0)

#define CALL(c)                                                                                     \
    do {                                                                                            \
        int rc_ = (c);                                                                              \
        if (rc_ != MPI_SUCCESS) {                                                                   \
            FAIL("%s:%d: %s failed: %s", __FILE__, __LINE__, #c, mtest_errstr(rc_));                \
            MPI_Abort(MPI_COMM_WORLD, 1);                                                           \
        }                                                                                           \
    } while (0)

static void check_ints(const int *v, int n, int base, const char *what, int t, int it)
{
    for (int i = 0; i < n; i++) {
        if (v[i] != base + i) {
            FAIL("thread %d iter %d: %s[%d] = %d, expected %d", t, it, what, i, v[i], base + i);
            return;
        }
    }
}

static void *worker(void *arg)
{
    int t = (int)(intptr_t)arg;
    int rank = mtest.rank, size = mtest.size;
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    MPI_Comm c = priv[t];
    /* Siblings (t, t ^ 1) draw the same operations: they meet in case 8. */
    mtest_rng rng = mtest_rng_new(1000 + t / 2);
    int *big = mtest_malloc(BIG * sizeof(int)), *bigin = mtest_malloc(BIG * sizeof(int));
    for (int it = 0; it < iters; it++) {
        int op = (int)mtest_rng_below(&rng, 9);
        int n = 1 + (int)mtest_rng_below(&rng, 64);
        int v[64], w[64];
        MPI_Status st;
        switch (op) {
        case 0: { /* ring on the private communicator */
            for (int i = 0; i < n; i++) v[i] = rank * 1000 + it + i;
            CALL(MPI_Sendrecv(v, n, MPI_INT, right, it, w, n, MPI_INT, left, it, c, &st));
            check_ints(w, n, left * 1000 + it, "sendrecv", t, it);
            break;
        }
        case 1: { /* allreduce */
            for (int i = 0; i < n; i++) v[i] = rank + i;
            CALL(MPI_Allreduce(v, w, n, MPI_INT, MPI_SUM, c));
            for (int i = 0; i < n; i++)
                if (w[i] != size * (size - 1) / 2 + size * i) {
                    FAIL("thread %d iter %d: allreduce[%d] = %d", t, it, i, w[i]);
                    break;
                }
            break;
        }
        case 2: { /* bcast */
            int root = it % size;
            for (int i = 0; i < n; i++) v[i] = rank == root ? it * 7 + i : -1;
            CALL(MPI_Bcast(v, n, MPI_INT, root, c));
            check_ints(v, n, it * 7, "bcast", t, it);
            break;
        }
        case 3: { /* probe then receive */
            MPI_Request r;
            for (int i = 0; i < n; i++) v[i] = rank * 31 + it + i;
            CALL(MPI_Isend(v, n, MPI_INT, right, 5, c, &r));
            int cnt = -1;
            CALL(MPI_Probe(left, 5, c, &st));
            MPI_Get_count(&st, MPI_INT, &cnt);
            if (cnt != n) FAIL("thread %d iter %d: probe count %d, expected %d", t, it, cnt, n);
            CALL(MPI_Recv(w, 64, MPI_INT, left, 5, c, MPI_STATUS_IGNORE));
            check_ints(w, n, left * 31 + it, "probe+recv", t, it);
            CALL(MPI_Wait(&r, MPI_STATUS_IGNORE));
            break;
        }
        case 4: { /* shared communicator, tag = thread */
            MPI_Request r;
            for (int i = 0; i < n; i++) v[i] = rank * 17 + t * 3 + it + i;
            CALL(MPI_Isend(v, n, MPI_INT, right, t, shared, &r));
            CALL(MPI_Recv(w, n, MPI_INT, left, t, shared, &st));
            check_ints(w, n, left * 17 + t * 3 + it, "shared", t, it);
            CALL(MPI_Wait(&r, MPI_STATUS_IGNORE));
            break;
        }
        case 5: { /* Iprobe loop on the shared communicator (other threads probe too) */
            MPI_Request r;
            int flag = 0, cnt = -1;
            for (int i = 0; i < n; i++) v[i] = rank * 13 + t + it + i;
            CALL(MPI_Isend(v, n, MPI_INT, right, 100 + t, shared, &r));
            while (!flag) CALL(MPI_Iprobe(left, 100 + t, shared, &flag, &st));
            MPI_Get_count(&st, MPI_INT, &cnt);
            if (cnt != n || st.MPI_SOURCE != left || st.MPI_TAG != 100 + t)
                FAIL("thread %d iter %d: iprobe count %d source %d tag %d", t, it, cnt, st.MPI_SOURCE, st.MPI_TAG);
            CALL(MPI_Recv(w, n, MPI_INT, left, 100 + t, shared, MPI_STATUS_IGNORE));
            check_ints(w, n, left * 13 + t + it, "iprobe", t, it);
            CALL(MPI_Wait(&r, MPI_STATUS_IGNORE));
            break;
        }
        case 6: { /* nonblocking collectives */
            MPI_Request r[2];
            for (int i = 0; i < n; i++) v[i] = rank * i;
            CALL(MPI_Iallreduce(v, w, n, MPI_INT, MPI_MAX, c, &r[0]));
            CALL(MPI_Ibarrier(c, &r[1]));
            CALL(MPI_Waitall(2, r, MPI_STATUSES_IGNORE));
            for (int i = 0; i < n; i++)
                if (w[i] != (size - 1) * i) {
                    FAIL("thread %d iter %d: iallreduce[%d] = %d", t, it, i, w[i]);
                    break;
                }
            break;
        }
        case 7: { /* large message */
            if (it % 4) break;
            MPI_Request r;
            for (int i = 0; i < BIG; i++) big[i] = rank + it + i;
            CALL(MPI_Irecv(bigin, BIG, MPI_INT, left, 9, c, &r));
            CALL(MPI_Send(big, BIG, MPI_INT, right, 9, c));
            CALL(MPI_Wait(&r, MPI_STATUS_IGNORE));
            check_ints(bigin, BIG, left + it, "large", t, it);
            break;
        }
        case 8: { /* sibling thread of the same rank, through the shared self duplicate */
            int partner = t ^ 1;
            if (partner >= nthreads) {
                CALL(MPI_Barrier(c));
                break;
            }
            int tag = 1000 + (t < partner ? t : partner) * 1000 + it;
            if (t & 1) {
                for (int i = 0; i < n; i++) v[i] = t * 100 + it + i;
                CALL(MPI_Send(v, n, MPI_INT, 0, tag, selfc));
            } else {
                CALL(MPI_Recv(w, n, MPI_INT, 0, tag, selfc, &st));
                check_ints(w, n, partner * 100 + it, "sibling", t, it);
            }
            break;
        }
        }
    }
    /* A receive started here and completed by another thread. */
    if (nthreads > 1 && (t == 0 || t == nthreads - 1)) {
        static int box;
        if (t == 0) {
            MPI_Request r;
            CALL(MPI_Irecv(&box, 1, MPI_INT, left, 77, shared, &r));
            pthread_mutex_lock(&hand_mu);
            handed = r;
            hand_state = 1;
            pthread_cond_broadcast(&hand_cv);
            while (hand_state != 2) pthread_cond_wait(&hand_cv, &hand_mu);
            pthread_mutex_unlock(&hand_mu);
            if (box != left + 4242) FAIL("handed-over receive got %d", box);
        } else {
            int x = rank + 4242;
            CALL(MPI_Send(&x, 1, MPI_INT, right, 77, shared));
            pthread_mutex_lock(&hand_mu);
            while (hand_state != 1) pthread_cond_wait(&hand_cv, &hand_mu);
            MPI_Request r = handed;
            pthread_mutex_unlock(&hand_mu);
            CALL(MPI_Wait(&r, MPI_STATUS_IGNORE));
            pthread_mutex_lock(&hand_mu);
            hand_state = 2;
            pthread_cond_broadcast(&hand_cv);
            pthread_mutex_unlock(&hand_mu);
        }
    }
    free(big);
    free(bigin);
    return NULL;
}

int main(int argc, char **argv)
{
    int provided = -1;
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
    const char *e = getenv("MT_THREADS");
    if (e) nthreads = atoi(e);
    if (nthreads < 1 || nthreads > MAXT) nthreads = 4;
    e = getenv("MT_ITERS");
    if (e) iters = atoi(e);
    for (int t = 0; t < nthreads; t++) MTEST_CALL(MPI_Comm_dup(MPI_COMM_WORLD, &priv[t]));
    MTEST_CALL(MPI_Comm_dup(MPI_COMM_WORLD, &shared));
    MTEST_CALL(MPI_Comm_dup(MPI_COMM_SELF, &selfc));
    pthread_t th[MAXT];
    for (int t = 0; t < nthreads; t++)
        if (pthread_create(&th[t], NULL, worker, (void *)(intptr_t)t) != 0) MTEST_ABORT("pthread_create");
    for (int t = 0; t < nthreads; t++) pthread_join(th[t], NULL);
    for (int t = 0; t < nthreads; t++) MTEST_CALL(MPI_Comm_free(&priv[t]));
    MTEST_CALL(MPI_Comm_free(&shared));
    MTEST_CALL(MPI_Comm_free(&selfc));
    mtest.errors += errors;
    return mtest_finalize();
}
