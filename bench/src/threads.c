/*
 * threads.c - ping-pong latency with threads (after OSU osu_latency_mt, one
 * communicator per pair of threads).
 *
 *   threads LEVEL PAIRS [options]
 *
 * LEVEL is the thread level asked of MPI_Init_thread: "single" (PAIRS must
 * be 1; the reference figure) or "multiple". Ranks 0 and 1 each run PAIRS
 * threads (the main thread is the first); thread t of rank 0 ping-pongs with
 * thread t of rank 1 on its own duplicate of MPI_COMM_WORLD, all pairs at
 * once. Reported: half the round trip in microseconds, the mean over the
 * pairs of rank 0. With PAIRS = 1 and LEVEL = multiple this is the cost of
 * MPI_THREAD_MULTIPLE granted but used by one thread.
 */
#include "common.h"

#include <pthread.h>

#define MAX_PAIRS 16

struct pool {
    int rank, pairs;
    long size;
    int n;
    int validate; /* this round checks data instead of timing */
    MPI_Comm comms[MAX_PAIRS];
    unsigned char *sbuf[MAX_PAIRS], *rbuf[MAX_PAIRS];
    double elapsed[MAX_PAIRS];
    int stop;
    pthread_barrier_t start, done;
};

static void check_pair(struct pool *p, int t)
{
    long size = p->size, at;
    MPI_Comm comm = p->comms[t];
    unsigned seed = (unsigned)(size + 31 * t);
    if (p->rank == 0) {
        bench_fill(p->sbuf[t], (size_t)size, seed);
        MPI_Send(p->sbuf[t], (int)size, MPI_CHAR, 1, 2, comm);
        memset(p->rbuf[t], 0, (size_t)size);
        MPI_Recv(p->rbuf[t], (int)size, MPI_CHAR, 1, 2, comm, MPI_STATUS_IGNORE);
        if ((at = bench_check(p->rbuf[t], (size_t)size, seed + 1)) >= 0)
            bench_fail_validation("threaded latency reply", size, at);
    } else if (p->rank == 1) {
        memset(p->rbuf[t], 0, (size_t)size);
        MPI_Recv(p->rbuf[t], (int)size, MPI_CHAR, 0, 2, comm, MPI_STATUS_IGNORE);
        if ((at = bench_check(p->rbuf[t], (size_t)size, seed)) >= 0)
            bench_fail_validation("threaded latency ping", size, at);
        bench_fill(p->sbuf[t], (size_t)size, seed + 1);
        MPI_Send(p->sbuf[t], (int)size, MPI_CHAR, 0, 2, comm);
    }
}

static void run_pair(struct pool *p, int t)
{
    if (p->validate) {
        check_pair(p, t);
        return;
    }
    MPI_Comm comm = p->comms[t];
    unsigned char *sbuf = p->sbuf[t], *rbuf = p->rbuf[t];
    int size = (int)p->size, n = p->n;
    double t0 = MPI_Wtime();
    for (int i = 0; i < n; i++) {
        if (p->rank == 0) {
            MPI_Send(sbuf, size, MPI_CHAR, 1, 1, comm);
            MPI_Recv(rbuf, size, MPI_CHAR, 1, 1, comm, MPI_STATUS_IGNORE);
        } else if (p->rank == 1) {
            MPI_Recv(rbuf, size, MPI_CHAR, 0, 1, comm, MPI_STATUS_IGNORE);
            MPI_Send(sbuf, size, MPI_CHAR, 0, 1, comm);
        }
    }
    p->elapsed[t] = MPI_Wtime() - t0;
}

struct worker_arg {
    struct pool *pool;
    int index;
};

static void *worker(void *arg)
{
    struct worker_arg *w = arg;
    for (;;) {
        pthread_barrier_wait(&w->pool->start);
        if (w->pool->stop)
            return NULL;
        run_pair(w->pool, w->index);
        pthread_barrier_wait(&w->pool->done);
    }
}

/* One round on every pair at once; the main thread runs pair 0. */
static void round_all(struct pool *p)
{
    pthread_barrier_wait(&p->start);
    run_pair(p, 0);
    pthread_barrier_wait(&p->done);
}

static double pingpong(void *arg, long size, int n)
{
    struct pool *p = arg;
    p->size = size;
    p->n = n;
    p->validate = 0;
    round_all(p);
    if (p->rank > 1)
        return 0.0;
    double sum = 0.0;
    for (int t = 0; t < p->pairs; t++)
        sum += p->elapsed[t];
    return sum / p->pairs;
}

int main(int argc, char **argv)
{
    struct bench_opts o;
    int rank, nranks, provided;
    int multiple = argc > 1 && strcmp(argv[1], "multiple") == 0;
    int required = multiple ? MPI_THREAD_MULTIPLE : MPI_THREAD_SINGLE;
    MPI_Init_thread(&argc, &argv, required, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    bench_default_opts(&o);
    o.max_size = 8;
    if (argc < 3)
        bench_die("%s", "usage: threads single|multiple PAIRS [options]");
    if (!multiple && strcmp(argv[1], "single") != 0)
        bench_die("unknown thread level '%s' (single or multiple)", argv[1]);
    int pairs = bench_parse_int(argv[2]);
    bench_parse(argc - 2, argv + 2, &o, "single|multiple PAIRS ");
    if (nranks < 2)
        bench_die("%s", "threads needs at least 2 ranks");
    if (provided < required)
        bench_die("%s", "the library does not grant the thread level asked for");
    if (pairs < 1 || pairs > MAX_PAIRS || (!multiple && pairs != 1))
        bench_die("bad number of thread pairs '%s' (1-16; 1 at single)", argv[2]);

    long maxsz = 1;
    for (int k = 0; k < o.nsizes; k++)
        if (o.sizes[k] > maxsz)
            maxsz = o.sizes[k];
    static struct pool p;
    p.rank = rank;
    p.pairs = pairs;
    for (int t = 0; t < pairs; t++) {
        MPI_Comm_dup(MPI_COMM_WORLD, &p.comms[t]);
        p.sbuf[t] = bench_alloc((size_t)maxsz);
        p.rbuf[t] = bench_alloc((size_t)maxsz);
    }
    pthread_barrier_init(&p.start, NULL, (unsigned)pairs);
    pthread_barrier_init(&p.done, NULL, (unsigned)pairs);
    pthread_t tids[MAX_PAIRS];
    struct worker_arg args[MAX_PAIRS];
    for (int t = 1; t < pairs; t++) {
        args[t].pool = &p;
        args[t].index = t;
        pthread_create(&tids[t], NULL, worker, &args[t]);
    }

    if (rank == 0) {
        bench_header("threads", "bytes latency_us iterations", &o);
        printf("# thread level: %s, %d pair(s) of threads\n", multiple ? "multiple" : "single",
               pairs);
    }
    for (int k = 0; k < o.nsizes; k++) {
        long size = o.sizes[k];
        if (o.validate) {
            p.size = size;
            p.validate = 1;
            round_all(&p);
        }
        int iters;
        double elapsed = bench_measure(&o, size, pingpong, &p, MPI_COMM_WORLD, &iters);
        if (rank == 0) {
            printf("%ld %.3f %d\n", size, elapsed * 1e6 / (2.0 * iters), iters);
            fflush(stdout);
        }
    }
    p.stop = 1;
    pthread_barrier_wait(&p.start);
    for (int t = 1; t < pairs; t++)
        pthread_join(tids[t], NULL);
    for (int t = 0; t < pairs; t++) {
        MPI_Comm_free(&p.comms[t]);
        free(p.sbuf[t]);
        free(p.rbuf[t]);
    }
    MPI_Finalize();
    return 0;
}
