/*
 * The handshake of mpi4py.futures over a spawned intercommunicator: both sides run
 * MPI_Ibarrier and poll it with MPI_Test, then the parents broadcast to the children
 * with MPI_Bcast (root = MPI_ROOT at parent 0, MPI_PROC_NULL at the other parents,
 * 0 at the children): first an 8-byte count, then a longer payload of that length.
 * The spawn's errcodes are checked at every parent. Several rounds, then Ibarrier and
 * Bcast on the merged communicator. With THREADS=N (2-8, a single parent only) N threads
 * of the parent spawn and run this at once, twice each, each with its own children, as
 * concurrent mpi4py.futures pools do: one thread's merge and another's spawn then agree
 * on context ids at the same time. NCHILD children (default 2).
 *
 * mtest-ldflags: -pthread
 */
#include "mtest.h"
#include <stdlib.h>
#include <string.h>
#include <pthread.h>

#define ROUNDS 4

static void ibarrier_poll(MPI_Comm comm)
{
    MPI_Request req;
    int done = 0;
    MTEST_CALL(MPI_Ibarrier(comm, &req));
    while (!done)
        MTEST_CALL(MPI_Test(&req, &done, MPI_STATUS_IGNORE));
}

/* One round: Ibarrier, then Bcast of a count and a payload from parent 0. */
static void round_trip(MPI_Comm inter, int is_child, int round)
{
    int rank;
    MTEST_CALL(MPI_Comm_rank(inter, &rank));
    ibarrier_poll(inter);
    long long count = 0;
    char payload[64];
    int root = is_child ? 0 : (rank == 0 ? MPI_ROOT : MPI_PROC_NULL);
    if (!is_child && rank == 0) {
        count = 20 + round;
        for (int i = 0; i < (int)count; i++)
            payload[i] = (char)('a' + (i + round) % 26);
    }
    MTEST_CALL(MPI_Bcast(&count, 8, MPI_BYTE, root, inter));
    if (is_child)
        MTEST_EQ("count broadcast from parent 0", 20 + round, (int)count);
    if (count < 0 || count > (long long)sizeof payload)
        count = 0;
    MTEST_CALL(MPI_Bcast(payload, (int)count, MPI_CHAR, root, inter));
    if (is_child)
        for (int i = 0; i < (int)count; i++)
            MTEST_EQ("payload byte", 'a' + (i + round) % 26, payload[i]);
}

static void run(MPI_Comm inter, int is_child)
{
    for (int r = 0; r < ROUNDS; r++)
        round_trip(inter, is_child, r);
    /* The merged communicator: Ibarrier, then an intracommunicator Bcast from parent 0. */
    MPI_Comm merged;
    MTEST_CALL(MPI_Intercomm_merge(inter, is_child, &merged));
    for (int r = 0; r < ROUNDS; r++) {
        ibarrier_poll(merged);
        int v = is_child ? -1 : 40 + r;
        MTEST_CALL(MPI_Bcast(&v, 1, MPI_INT, 0, merged));
        MTEST_EQ("bcast over the merged communicator", 40 + r, v);
    }
    MTEST_CALL(MPI_Comm_free(&merged));
}

static int nchild;
static char *prog;

static void parent_side(MPI_Comm comm)
{
    MPI_Comm inter;
    /* array_of_errcodes is an output at every member, not only at the root. */
    int codes[8];
    for (int i = 0; i < 8; i++)
        codes[i] = -1;
    MTEST_CALL(MPI_Comm_spawn(prog, MPI_ARGV_NULL, nchild, MPI_INFO_NULL, 0, comm, &inter, codes));
    for (int i = 0; i < nchild && i < 8; i++)
        MTEST_EQ("errcode of a spawned process", MPI_SUCCESS, codes[i]);
    run(inter, 0);
    MTEST_CALL(MPI_Comm_disconnect(&inter));
}

static void *thread_main(void *arg)
{
    (void)arg;
    for (int i = 0; i < 2; i++)
        parent_side(MPI_COMM_SELF);
    return NULL;
}

int main(int argc, char **argv)
{
    /* mtest_init with MPI_THREAD_MULTIPLE, as mpi4py asks for. */
    mtest_write_pidfile();
    int provided;
    if (MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS)
        return 1;
    MTEST_CALL(MPI_Comm_rank(MPI_COMM_WORLD, &mtest.rank));
    MTEST_CALL(MPI_Comm_size(MPI_COMM_WORLD, &mtest.size));
    mtest.initial_errhandler = mtest_get_errhandler(MPI_COMM_WORLD);
    mtest_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    mtest_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    MPI_Comm parent;
    MTEST_CALL(MPI_Comm_get_parent(&parent));
    if (parent != MPI_COMM_NULL) {
        run(parent, 1);
        MTEST_CALL(MPI_Comm_disconnect(&parent));
        int errors = mtest.errors;
        MPI_Finalize();
        if (errors)
            fprintf(stderr, "child: %d errors\n", errors);
        return errors ? 1 : 0;
    }
    const char *e = getenv("NCHILD");
    nchild = e ? atoi(e) : 2;
    const char *t = getenv("THREADS");
    int nthreads = t ? atoi(t) : 1;
    prog = argv[0];
    if (nthreads <= 1) {
        parent_side(MPI_COMM_WORLD);
        return mtest_finalize();
    }
    MTEST_EQ("thread level", MPI_THREAD_MULTIPLE, provided);
    pthread_t th[8];
    if (nthreads > 8)
        nthreads = 8;
    for (int i = 0; i < nthreads; i++)
        pthread_create(&th[i], NULL, thread_main, NULL);
    for (int i = 0; i < nthreads; i++)
        pthread_join(th[i], NULL);
    return mtest_finalize();
}
