/*
 * overlap.c - how much of a nonblocking operation hides behind computation
 * (the OSU method of osu_iallreduce and friends).
 *
 *   overlap OP [options]      OP: iallreduce | ibcast | ialltoall | rndv
 *
 * For each size: t_pure is the time of the operation started and waited for
 * at once; then every rank computes for t_pure (a busy loop that makes no
 * MPI call) between the start and the wait, giving t_total, and the same
 * computation alone gives t_cpu. Overlap = 100 * (1 - (t_total - t_cpu) /
 * t_pure), clamped to 0-100: 100 means the operation finished entirely
 * while the program computed. `rndv` is one message from rank 0 to rank 1
 * (MPI_Isend / MPI_Irecv; 1 MiB is past every library's eager limit).
 * Without an asynchronous progress thread a library can only advance the
 * operation inside MPI calls, so its overlap is what polling gives.
 */
#include "common.h"

#include <time.h>

enum op { OP_IALLREDUCE, OP_IBCAST, OP_IALLTOALL, OP_RNDV };

struct ctx {
    enum op op;
    int rank, nranks;
    unsigned char *sbuf, *rbuf;
    double compute_s; /* computation between start and wait; 0 = none */
    int skip_op;      /* measure the computation alone */
};

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Keeps the busy loop's result alive. */
volatile double overlap_sink;

/* Busy work without MPI calls, for `seconds`. */
static void compute(double seconds)
{
    double end = now() + seconds, x = 1.0;
    while (now() < end)
        for (int i = 0; i < 64; i++)
            x = x * 1.0000001 + 1e-9;
    overlap_sink = x;
}

static void start(struct ctx *c, long size, MPI_Request *reqs, int *nreq)
{
    int n = (int)size;
    *nreq = 1;
    switch (c->op) {
    case OP_IALLREDUCE:
        MPI_Iallreduce(c->sbuf, c->rbuf, n / 4, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, &reqs[0]);
        break;
    case OP_IBCAST:
        MPI_Ibcast(c->sbuf, n, MPI_CHAR, 0, MPI_COMM_WORLD, &reqs[0]);
        break;
    case OP_IALLTOALL:
        MPI_Ialltoall(c->sbuf, n, MPI_CHAR, c->rbuf, n, MPI_CHAR, MPI_COMM_WORLD, &reqs[0]);
        break;
    case OP_RNDV:
        if (c->rank == 0)
            MPI_Isend(c->sbuf, n, MPI_CHAR, 1, 5, MPI_COMM_WORLD, &reqs[0]);
        else if (c->rank == 1)
            MPI_Irecv(c->rbuf, n, MPI_CHAR, 0, 5, MPI_COMM_WORLD, &reqs[0]);
        else
            *nreq = 0;
        break;
    }
}

static double loop(void *arg, long size, int iters)
{
    struct ctx *c = arg;
    MPI_Request reqs[1];
    int nreq = 0;
    double t0 = MPI_Wtime();
    for (int i = 0; i < iters; i++) {
        if (!c->skip_op)
            start(c, size, reqs, &nreq);
        if (c->compute_s > 0.0)
            compute(c->compute_s);
        if (!c->skip_op && nreq > 0)
            MPI_Wait(&reqs[0], MPI_STATUS_IGNORE);
    }
    return MPI_Wtime() - t0;
}

/* Per-iteration time of one phase: the slowest rank's. */
static double phase(const struct bench_opts *o, struct ctx *c, long size, int *iters)
{
    double mine = bench_measure(o, size, loop, c, MPI_COMM_WORLD, iters), worst;
    MPI_Allreduce(&mine, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return worst / *iters;
}

static void validate(struct ctx *c, long size)
{
    long at;
    MPI_Request reqs[1];
    int nreq;
    size_t blocks = c->op == OP_IALLTOALL ? (size_t)c->nranks : 1;
    for (size_t k = 0; k < blocks; k++) /* alltoall: every block, one per receiver */
        bench_fill(c->sbuf + k * (size_t)size, (size_t)size, (unsigned)size);
    if (c->op == OP_IBCAST && c->rank != 0)
        memset(c->sbuf, 0, (size_t)size); /* the broadcast must bring the pattern */
    memset(c->rbuf, 0, (size_t)size * (c->op == OP_IALLTOALL ? (size_t)c->nranks : 1));
    start(c, size, reqs, &nreq);
    if (nreq > 0)
        MPI_Wait(&reqs[0], MPI_STATUS_IGNORE);
    if ((c->op == OP_RNDV && c->rank == 1) || c->op == OP_IBCAST) {
        const unsigned char *got = c->op == OP_IBCAST ? c->sbuf : c->rbuf;
        if ((at = bench_check(got, (size_t)size, (unsigned)size)) >= 0)
            bench_fail_validation("overlap data", size, at);
    } else if (c->op == OP_IALLTOALL) {
        for (int r = 0; r < c->nranks; r++)
            if ((at = bench_check(c->rbuf + (size_t)r * size, (size_t)size, (unsigned)size)) >= 0)
                bench_fail_validation("overlap alltoall block", size, at);
    }
    /* iallreduce sums float patterns; checked only for completing */
}

int main(int argc, char **argv)
{
    struct bench_opts o;
    struct ctx c;
    MPI_Init(&argc, &argv);
    memset(&c, 0, sizeof c);
    MPI_Comm_rank(MPI_COMM_WORLD, &c.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &c.nranks);
    bench_default_opts(&o);
    o.min_size = 1024;
    o.max_size = 1L << 20;
    o.iters = 200;
    o.warmup = 20;
    o.iters_large = 50;
    o.warmup_large = 5;
    bench_parse(argc, argv, &o, "iallreduce|ibcast|ialltoall|rndv ");
    if (!o.positional)
        bench_die("%s", "name an operation: iallreduce, ibcast, ialltoall or rndv");
    if (strcmp(o.positional, "iallreduce") == 0) c.op = OP_IALLREDUCE;
    else if (strcmp(o.positional, "ibcast") == 0) c.op = OP_IBCAST;
    else if (strcmp(o.positional, "ialltoall") == 0) c.op = OP_IALLTOALL;
    else if (strcmp(o.positional, "rndv") == 0) c.op = OP_RNDV;
    else bench_die("unknown operation '%s'", o.positional);
    if (c.nranks < 2)
        bench_die("%s", "overlap needs at least 2 ranks");

    long maxsz = 4;
    for (int k = 0; k < o.nsizes; k++)
        if (o.sizes[k] > maxsz)
            maxsz = o.sizes[k];
    size_t per_rank = c.op == OP_IALLTOALL ? (size_t)c.nranks : 1;
    c.sbuf = bench_alloc((size_t)maxsz * per_rank);
    c.rbuf = bench_alloc((size_t)maxsz * per_rank);

    if (c.rank == 0)
        bench_header("overlap", "bytes overlap_pct pure_us total_us iterations", &o);
    for (int k = 0; k < o.nsizes; k++) {
        long size = o.sizes[k] < 4 ? 4 : o.sizes[k];
        if (o.validate)
            validate(&c, size);
        int iters;
        c.compute_s = 0.0;
        c.skip_op = 0;
        double pure = phase(&o, &c, size, &iters);
        c.compute_s = pure;
        double total = phase(&o, &c, size, &iters);
        c.skip_op = 1;
        double cpu = phase(&o, &c, size, &iters);
        double pct = 100.0 * (1.0 - (total - cpu) / pure);
        if (pct < 0.0) pct = 0.0;
        if (pct > 100.0) pct = 100.0;
        if (c.rank == 0) {
            printf("%ld %.1f %.3f %.3f %d\n", size, pct, pure * 1e6, total * 1e6, iters);
            fflush(stdout);
        }
    }
    free(c.sbuf);
    free(c.rbuf);
    MPI_Finalize();
    return 0;
}
