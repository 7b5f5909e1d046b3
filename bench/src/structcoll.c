/*
 * structcoll.c - collectives on a non-contiguous struct datatype:
 *   structcoll OP [options]   OP = bcast | gather | scatter | allgather | alltoall
 *                                | ibcast | iallgather | ialltoall
 * The element is struct { int i; double d; } described with
 * MPI_Type_create_struct (blocks of 4 and 8 bytes at 0 and 8, extent 16,
 * 4 bytes of padding): 12 packed bytes per 16 bytes of memory.
 * SIZE is the user-buffer bytes per call and rank pair: SIZE/16 elements
 * (bcast: the whole buffer; gather/scatter/allgather/alltoall: each rank's
 * block, OSU convention). Default sizes 1 MiB .. 8 MiB (powers of two).
 * The i* operations are the nonblocking call followed by MPI_Wait (timed
 * together). Timing as in coll.c: every call timed alone, an untimed
 * MPI_Barrier between calls, "avg" is the mean over ranks of the per-rank
 * mean time per call. Roots are rank 0.
 * -c checks every element of the result once per size (the padding of
 * received elements must stay untouched).
 */
#include "common.h"
#include <stddef.h>

struct elem {
    int i;
    double d;
};

enum op { OP_BCAST, OP_GATHER, OP_SCATTER, OP_ALLGATHER, OP_ALLTOALL, OP_IBCAST, OP_IALLGATHER,
          OP_IALLTOALL };
static const char *op_names[] = {"bcast",     "gather",  "scatter",    "allgather",
                                 "alltoall",  "ibcast",  "iallgather", "ialltoall"};
#define OP_LAST OP_IALLTOALL

static enum op base_op(enum op op)
{
    switch (op) {
    case OP_IBCAST: return OP_BCAST;
    case OP_IALLGATHER: return OP_ALLGATHER;
    case OP_IALLTOALL: return OP_ALLTOALL;
    default: return op;
    }
}

struct ctx {
    enum op op;
    int rank, nranks;
    MPI_Datatype type;
    struct elem *sbuf, *rbuf;
};

static void call(const struct ctx *c, int n)
{
    MPI_Request r;
    MPI_Comm w = MPI_COMM_WORLD;
    switch (c->op) {
    case OP_BCAST: MPI_Bcast(c->sbuf, n, c->type, 0, w); break;
    case OP_GATHER: MPI_Gather(c->sbuf, n, c->type, c->rbuf, n, c->type, 0, w); break;
    case OP_SCATTER: MPI_Scatter(c->sbuf, n, c->type, c->rbuf, n, c->type, 0, w); break;
    case OP_ALLGATHER: MPI_Allgather(c->sbuf, n, c->type, c->rbuf, n, c->type, w); break;
    case OP_ALLTOALL: MPI_Alltoall(c->sbuf, n, c->type, c->rbuf, n, c->type, w); break;
    case OP_IBCAST:
        MPI_Ibcast(c->sbuf, n, c->type, 0, w, &r);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        break;
    case OP_IALLGATHER:
        MPI_Iallgather(c->sbuf, n, c->type, c->rbuf, n, c->type, w, &r);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        break;
    case OP_IALLTOALL:
        MPI_Ialltoall(c->sbuf, n, c->type, c->rbuf, n, c->type, w, &r);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        break;
    }
}

/* One call on `size` bytes of elements per block. */
static void call_once(const void *arg, long size)
{
    call(arg, (int)(size / (long)sizeof(struct elem)));
}

/* The value element k of the block that rank `from` sends to rank `to` holds. */
static struct elem value(int from, int to, long k)
{
    struct elem e;
    e.i = (int)(k * 7 + from * 1000003 + to * 131);
    e.d = (double)k * 0.5 + from * 1e6 + to * 1e3;
    return e;
}

/* Fills n elements; the padding gets 0xA5 bytes so that a check can see it unchanged. */
static void fill(struct elem *buf, long n, int from, int to)
{
    memset(buf, 0xA5, (size_t)n * sizeof *buf);
    for (long k = 0; k < n; k++) {
        struct elem e = value(from, to, k);
        buf[k].i = e.i;
        buf[k].d = e.d;
    }
}

static void check(const struct elem *buf, long n, int from, int to, const char *what, long size)
{
    for (long k = 0; k < n; k++) {
        struct elem e = value(from, to, k);
        const unsigned char *pad = (const unsigned char *)&buf[k] + sizeof(int);
        if (buf[k].i != e.i || buf[k].d != e.d)
            bench_fail_validation(what, size, k * (long)sizeof *buf);
        for (size_t p = sizeof(int); p < offsetof(struct elem, d); p++, pad++)
            if (*pad != 0x5A)
                bench_fail_validation(what, size, k * (long)sizeof *buf + (long)p);
    }
}

static void validate(const void *arg, long size)
{
    const struct ctx *c = arg;
    long n = size / (long)sizeof(struct elem);
    int p = c->nranks, r = c->rank;
    enum op op = base_op(c->op);
    size_t blk = (size_t)n;
    switch (op) {
    case OP_BCAST:
        if (r == 0)
            fill(c->sbuf, n, 0, 0);
        else
            memset(c->sbuf, 0x5A, blk * sizeof(struct elem));
        call(c, (int)n);
        if (r != 0)
            check(c->sbuf, n, 0, 0, op_names[c->op], size);
        break;
    case OP_GATHER:
    case OP_ALLGATHER:
        fill(c->sbuf, n, r, 0);
        memset(c->rbuf, 0x5A, blk * (size_t)p * sizeof(struct elem));
        call(c, (int)n);
        if (op == OP_ALLGATHER || r == 0)
            for (int j = 0; j < p; j++)
                check(c->rbuf + (size_t)j * blk, n, j, 0, op_names[c->op], size);
        break;
    case OP_SCATTER:
        if (r == 0)
            for (int j = 0; j < p; j++)
                fill(c->sbuf + (size_t)j * blk, n, 0, j);
        memset(c->rbuf, 0x5A, blk * sizeof(struct elem));
        call(c, (int)n);
        check(c->rbuf, n, 0, r, op_names[c->op], size);
        break;
    case OP_ALLTOALL:
        for (int j = 0; j < p; j++)
            fill(c->sbuf + (size_t)j * blk, n, r, j);
        memset(c->rbuf, 0x5A, blk * (size_t)p * sizeof(struct elem));
        call(c, (int)n);
        for (int j = 0; j < p; j++)
            check(c->rbuf + (size_t)j * blk, n, j, r, op_names[c->op], size);
        break;
    default:
        break;
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
    struct bench_opts o;
    struct ctx c;
    bench_coll_init(&argc, &argv, &o, &c.rank, &c.nranks);
    o.min_size = 1L << 20;
    o.max_size = 8L << 20;
    o.iters_large = 20;
    o.warmup_large = 3;
    bench_parse(argc, argv, &o, "OP ");
    c.op = (enum op)bench_find_op(&o, op_names, OP_LAST + 1,
                                  "bcast, gather, scatter, allgather, alltoall, ibcast, "
                                  "iallgather, ialltoall");
    long maxsz = 0;
    for (int k = 0; k < o.nsizes; k++) {
        if (o.sizes[k] < (long)sizeof(struct elem) || o.sizes[k] % (long)sizeof(struct elem))
            bench_die("%s", "sizes must be positive multiples of 16 bytes (the struct's extent)");
        if (o.sizes[k] > maxsz)
            maxsz = o.sizes[k];
    }

    int blocklens[2] = {1, 1};
    MPI_Aint displs[2] = {offsetof(struct elem, i), offsetof(struct elem, d)};
    MPI_Datatype types[2] = {MPI_INT, MPI_DOUBLE}, tmp;
    MPI_Type_create_struct(2, blocklens, displs, types, &tmp);
    MPI_Type_create_resized(tmp, 0, (MPI_Aint)sizeof(struct elem), &c.type);
    MPI_Type_free(&tmp);
    MPI_Type_commit(&c.type);

    enum op b = base_op(c.op);
    size_t all = (size_t)maxsz * (size_t)c.nranks;
    c.sbuf = bench_alloc(b == OP_ALLTOALL || b == OP_SCATTER ? all : (size_t)maxsz);
    c.rbuf = bench_alloc(b == OP_BCAST ? 16 : b == OP_SCATTER ? (size_t)maxsz : all);

    if (c.rank == 0) {
        char name[64];
        snprintf(name, sizeof name, "structcoll %s", op_names[c.op]);
        printf("# layout: MPI_Type_create_struct {int at 0, double at 8}, extent 16 "
               "(12 packed bytes per element)\n");
        bench_header(name, "bytes avg_us min_us max_us iterations", &o);
    }
    bench_coll_sizes(&o, call_once, validate, &c);
    MPI_Type_free(&c.type);
    free(c.sbuf);
    free(c.rbuf);
    MPI_Finalize();
    return 0;
}
