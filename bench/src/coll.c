/*
 * coll.c - collective latency (OSU osu_<collective> methodology):
 *   coll OP [options]   OP = allreduce | bcast | reduce | allgather | alltoall | barrier
 *                          | iallreduce | ibcast | ialltoall | allreduce_init
 * The i* operations are the nonblocking call followed by MPI_Wait (timed together);
 * allreduce_init is MPI_Start + MPI_Wait of a persistent MPI_Allreduce_init request
 * made once per size (in the untimed warm-up).
 * For each size every rank times each call separately with MPI_Wtime and
 * calls MPI_Barrier (untimed) between calls, so calls do not pipeline.
 * Each rank's mean latency is then combined over ranks: "avg" is the mean
 * over ranks of the per-rank means (OSU's reported "Avg Latency"), "min"
 * and "max" the smallest and largest per-rank mean. The driver uses avg.
 * Sizes: allreduce/reduce use MPI_FLOAT with MPI_SUM (count = bytes / 4);
 * bcast uses MPI_CHAR; allgather and alltoall count the bytes each rank
 * sends to each rank (OSU convention). Roots are rank 0. Barrier has one
 * line with size 0.
 */
#include "common.h"

enum op {
    OP_ALLREDUCE,
    OP_BCAST,
    OP_REDUCE,
    OP_ALLGATHER,
    OP_ALLTOALL,
    OP_BARRIER,
    OP_IALLREDUCE,
    OP_IBCAST,
    OP_IALLTOALL,
    OP_ALLREDUCE_INIT
};
static const char *op_names[] = {"allreduce", "bcast",   "reduce",    "allgather",     "alltoall",
                                 "barrier",   "iallreduce", "ibcast", "ialltoall", "allreduce_init"};
#define OP_LAST OP_ALLREDUCE_INIT

/* The blocking operation whose results an operation produces (for validation). */
static enum op base_op(enum op op)
{
    switch (op) {
    case OP_IALLREDUCE:
    case OP_ALLREDUCE_INIT:
        return OP_ALLREDUCE;
    case OP_IBCAST:
        return OP_BCAST;
    case OP_IALLTOALL:
        return OP_ALLTOALL;
    default:
        return op;
    }
}

/* The persistent request of allreduce_init and the size it was made for. */
static MPI_Request persistent = MPI_REQUEST_NULL;
static long persistent_size = -1;

struct ctx {
    enum op op;
    int rank, nranks;
    unsigned char *sbuf, *rbuf;
};

static void call_once(const void *arg, long size)
{
    const struct ctx *c = arg;
    switch (c->op) {
    case OP_ALLREDUCE:
        MPI_Allreduce(c->sbuf, c->rbuf, (int)(size / 4), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        break;
    case OP_REDUCE:
        MPI_Reduce(c->sbuf, c->rbuf, (int)(size / 4), MPI_FLOAT, MPI_SUM, 0, MPI_COMM_WORLD);
        break;
    case OP_BCAST:
        MPI_Bcast(c->sbuf, (int)size, MPI_CHAR, 0, MPI_COMM_WORLD);
        break;
    case OP_ALLGATHER:
        MPI_Allgather(c->sbuf, (int)size, MPI_CHAR, c->rbuf, (int)size, MPI_CHAR, MPI_COMM_WORLD);
        break;
    case OP_ALLTOALL:
        MPI_Alltoall(c->sbuf, (int)size, MPI_CHAR, c->rbuf, (int)size, MPI_CHAR, MPI_COMM_WORLD);
        break;
    case OP_BARRIER:
        MPI_Barrier(MPI_COMM_WORLD);
        break;
#ifdef BENCH_BLOCKING_COLL_ONLY
    /* Built for a library without the MPI-3/4 collectives (bench/run's fallback). */
    case OP_IALLREDUCE:
    case OP_IBCAST:
    case OP_IALLTOALL:
    case OP_ALLREDUCE_INIT:
        (void)persistent;
        (void)persistent_size;
        bench_die("%s", "this build has no nonblocking or persistent collectives");
        break;
#else
    case OP_IALLREDUCE: {
        MPI_Request r;
        MPI_Iallreduce(c->sbuf, c->rbuf, (int)(size / 4), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, &r);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        break;
    }
    case OP_IBCAST: {
        MPI_Request r;
        MPI_Ibcast(c->sbuf, (int)size, MPI_CHAR, 0, MPI_COMM_WORLD, &r);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        break;
    }
    case OP_IALLTOALL: {
        MPI_Request r;
        MPI_Ialltoall(c->sbuf, (int)size, MPI_CHAR, c->rbuf, (int)size, MPI_CHAR, MPI_COMM_WORLD,
                      &r);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        break;
    }
    case OP_ALLREDUCE_INIT:
#if defined(OPEN_MPI) && MPI_VERSION < 4
        /* Open MPI 4.1 has no persistent collectives (MPI-4). */
        (void)persistent_size;
        bench_die("%s", "allreduce_init needs MPI_Allreduce_init (MPI-4)");
#else
        if (persistent_size != size) {
            if (persistent != MPI_REQUEST_NULL)
                MPI_Request_free(&persistent);
            MPI_Allreduce_init(c->sbuf, c->rbuf, (int)(size / 4), MPI_FLOAT, MPI_SUM,
                               MPI_COMM_WORLD, MPI_INFO_NULL, &persistent);
            persistent_size = size;
        }
        MPI_Start(&persistent);
        MPI_Wait(&persistent, MPI_STATUS_IGNORE);
#endif
        break;
#endif
    }
}

static void validate(const void *arg, long size)
{
    const struct ctx *c = arg;
    long at;
    int n = c->nranks, r = c->rank;
    enum op op = base_op(c->op);
    if (op == OP_ALLREDUCE || op == OP_REDUCE) {
        float *s = (float *)c->sbuf, *d = (float *)c->rbuf;
        long cnt = size / 4;
        for (long i = 0; i < cnt; i++) {
            s[i] = (float)((r + 1) * (int)(i % 7 + 1));
            d[i] = -1.0f;
        }
        call_once(c, size);
        if (op == OP_ALLREDUCE || r == 0)
            for (long i = 0; i < cnt; i++)
                if (d[i] != (float)(n * (n + 1) / 2 * (int)(i % 7 + 1)))
                    bench_fail_validation(op_names[c->op], size, i * 4);
    } else if (op == OP_BCAST) {
        if (r == 0)
            bench_fill(c->sbuf, (size_t)size, (unsigned)size);
        else
            memset(c->sbuf, 0, (size_t)size);
        call_once(c, size);
        if ((at = bench_check(c->sbuf, (size_t)size, (unsigned)size)) >= 0)
            bench_fail_validation("bcast", size, at);
    } else if (op == OP_ALLGATHER) {
        bench_fill(c->sbuf, (size_t)size, (unsigned)r);
        memset(c->rbuf, 0, (size_t)size * (size_t)n);
        call_once(c, size);
        for (int j = 0; j < n; j++)
            if ((at = bench_check(c->rbuf + (size_t)j * (size_t)size, (size_t)size, (unsigned)j)) >= 0)
                bench_fail_validation("allgather", size, (long)j * size + at);
    } else if (op == OP_ALLTOALL) {
        for (int j = 0; j < n; j++)
            bench_fill(c->sbuf + (size_t)j * (size_t)size, (size_t)size, (unsigned)(r * n + j));
        memset(c->rbuf, 0, (size_t)size * (size_t)n);
        call_once(c, size);
        for (int j = 0; j < n; j++)
            if ((at = bench_check(c->rbuf + (size_t)j * (size_t)size, (size_t)size,
                                  (unsigned)(j * n + r))) >= 0)
                bench_fail_validation("alltoall", size, (long)j * size + at);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
    struct bench_opts o;
    struct ctx c;
    bench_coll_init(&argc, &argv, &o, &c.rank, &c.nranks);
    o.min_size = 4;
    o.max_size = 1L << 20;
    o.iters = 1000;
    o.warmup = 100;
    o.iters_large = 100;
    o.warmup_large = 10;
    bench_parse(argc, argv, &o, "OP ");
    c.op = (enum op)bench_find_op(&o, op_names, OP_LAST + 1,
                                  "allreduce, bcast, reduce, allgather, alltoall, barrier, "
                                  "iallreduce, ibcast, ialltoall, allreduce_init");
    if (c.op == OP_BARRIER) {
        o.sizes[0] = 0;
        o.nsizes = 1;
    }
    for (int k = 0; k < o.nsizes; k++)
        if ((base_op(c.op) == OP_ALLREDUCE || c.op == OP_REDUCE) &&
            (o.sizes[k] < 4 || o.sizes[k] % 4))
            bench_die("%s", "allreduce/reduce sizes must be multiples of 4 bytes (MPI_FLOAT)");

    long maxsz = 4;
    for (int k = 0; k < o.nsizes; k++)
        if (o.sizes[k] > maxsz)
            maxsz = o.sizes[k];
    size_t per = (size_t)maxsz;
    size_t all = per * (size_t)c.nranks;
    enum op b = base_op(c.op);
    c.sbuf = bench_alloc(b == OP_ALLTOALL ? all : per);
    c.rbuf = bench_alloc(b == OP_ALLTOALL || b == OP_ALLGATHER ? all : per);

    if (c.rank == 0) {
        char name[64];
        snprintf(name, sizeof name, "coll %s", op_names[c.op]);
        bench_header(name, "bytes avg_us min_us max_us iterations", &o);
    }

    bench_coll_sizes(&o, call_once, validate, &c);
    if (persistent != MPI_REQUEST_NULL)
        MPI_Request_free(&persistent);
    free(c.sbuf);
    free(c.rbuf);
    MPI_Finalize();
    return 0;
}
