/* The tool information interface from several threads at once: while the main thread
 * sends messages to itself, four threads each initialise the interface, walk every
 * control and performance variable, read every control variable through a handle,
 * make a session with a handle of every performance variable bound to no object,
 * start, read and stop them, and free everything, many times. Every call must succeed
 * and the values stay consistent (a started counter never decreases).
 * mtest-ldflags: -lpthread
 */
#include "mpit_util.h"
#include <pthread.h>

#define THREADS 4
#define ROUNDS 20

static int thread_errors[THREADS];

static void *worker(void *arg)
{
    int me = (int)(size_t)arg, provided, n;
    int *err = &thread_errors[me];
#define W(call)                                                                                   \
    do {                                                                                          \
        int rc_ = (call);                                                                         \
        if (rc_ != MPI_SUCCESS) {                                                                 \
            fprintf(stderr, "thread %d: %s returned %d\n", me, #call, rc_);                       \
            (*err)++;                                                                             \
        }                                                                                         \
    } while (0)
    for (int round = 0; round < ROUNDS; round++) {
        W(MPI_T_init_thread(MPI_THREAD_MULTIPLE, &provided));
        int ncvar = 0, npvar = 0;
        W(MPI_T_cvar_get_num(&ncvar));
        W(MPI_T_pvar_get_num(&npvar));
        for (int i = 0; i < ncvar; i++) {
            int bind = -1, scope;
            MPI_Datatype t;
            MPI_T_enum e;
            char name[256];
            int len = sizeof name, verb;
            W(MPI_T_cvar_get_info(i, name, &len, &verb, &t, &e, NULL, &n, &bind, &scope));
            if (bind != MPI_T_BIND_NO_OBJECT) {
                continue;
            }
            MPI_T_cvar_handle h;
            int count = 0;
            W(MPI_T_cvar_handle_alloc(i, NULL, &h, &count));
            if (count > 0 && count < 100000) {
                char *buf = calloc((size_t)count, 8);
                W(MPI_T_cvar_read(h, buf));
                free(buf);
            }
            W(MPI_T_cvar_handle_free(&h));
        }
        MPI_T_pvar_session s;
        W(MPI_T_pvar_session_create(&s));
        for (int i = 0; i < npvar; i++) {
            int bind = -1, cls, ro, cont, at, verb;
            MPI_Datatype t;
            MPI_T_enum e;
            W(MPI_T_pvar_get_info(i, NULL, &n, &verb, &cls, &t, &e, NULL, &n, &bind, &ro, &cont,
                                  &at));
            if (bind != MPI_T_BIND_NO_OBJECT || t != MPI_UNSIGNED_LONG_LONG) {
                continue;
            }
            MPI_T_pvar_handle h;
            int count = 0;
            W(MPI_T_pvar_handle_alloc(s, i, NULL, &h, &count));
            if (count <= 0 || count > 100000) {
                continue;
            }
            unsigned long long *a = calloc((size_t)count, 8), *b = calloc((size_t)count, 8);
            if (!cont) {
                W(MPI_T_pvar_start(s, h));
            }
            W(MPI_T_pvar_read(s, h, a));
            W(MPI_T_pvar_read(s, h, b));
            if (!cont && cls == MPI_T_PVAR_CLASS_COUNTER) {
                for (int k = 0; k < count; k++) {
                    if (b[k] < a[k]) {
                        fprintf(stderr, "thread %d: counter %d went back\n", me, i);
                        (*err)++;
                    }
                }
                W(MPI_T_pvar_stop(s, h));
            }
            free(a);
            free(b);
            W(MPI_T_pvar_handle_free(s, &h));
        }
        W(MPI_T_pvar_session_free(&s));
        W(MPI_T_finalize());
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int provided;
    MTEST_CALL(MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided));
    MTEST_CALL(MPI_Comm_rank(MPI_COMM_WORLD, &mtest.rank));
    MTEST_CALL(MPI_Comm_size(MPI_COMM_WORLD, &mtest.size));
    int tprov = -1;
    T_CALL(MPI_T_init_thread(MPI_THREAD_MULTIPLE, &tprov));
    if (tprov != MPI_THREAD_MULTIPLE) {
        MTEST_CHECK(!mpit_is_oxmpi(), "oxmpi's MPI_T provides %d", tprov);
        if (mtest_rank() == 0) {
            printf("(skipped: MPI_T provides thread level %d)\n", tprov);
        }
        T_CALL(MPI_T_finalize());
        return mtest_finalize();
    }
    pthread_t t[THREADS];
    for (int k = 0; k < THREADS; k++) {
        MTEST_CHECK(pthread_create(&t[k], NULL, worker, (void *)(size_t)k) == 0,
                    "pthread_create failed");
    }
    /* Traffic meanwhile (only this thread calls MPI outside MPI_T). */
    for (int k = 0; k < 200; k++) {
        int x = k, y = -1;
        MTEST_CALL(MPI_Sendrecv(&x, 1, MPI_INT, mtest_rank(), 1, &y, 1, MPI_INT, mtest_rank(), 1,
                                MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        MTEST_EQ("self message", k, y);
    }
    for (int k = 0; k < THREADS; k++) {
        pthread_join(t[k], NULL);
        MTEST_EQ("errors in an MPI_T thread", 0, thread_errors[k]);
    }
    T_CALL(MPI_T_finalize());
    return mtest_finalize();
}
