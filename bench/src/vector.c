/*
 * vector.c - non-contiguous (strided) data: an MPI_Type_vector of
 * TOTAL/BLOCK blocks of BLOCK bytes with a stride of 2*BLOCK (half of the
 * memory span is gaps), for block sizes -b (default 64,4096) and payload
 * totals -m (default 1 MiB .. 16 MiB, powers of two).
 * Two measurements, each printed as a line starting with a keyword:
 *   xfer BLOCK TOTAL vector_MB_per_s contig_MB_per_s iterations
 *       ping-pong between ranks 0 and 1 with the vector type on both sides,
 *       payload / half round trip; contig_MB_per_s is the same number of
 *       bytes sent contiguously (the ceiling a vector transfer can reach).
 *   pack BLOCK TOTAL pack_MB_per_s unpack_MB_per_s memcpy_MB_per_s iterations
 *       local on rank 0: MPI_Pack of one vector into a contiguous buffer,
 *       MPI_Unpack back, and memcpy of the same number of contiguous bytes.
 * 1 MB = 10^6 bytes of payload. All sizes count as "large" (-I/-X apply).
 */
#include "common.h"

struct xfer {
    int rank, count;
    MPI_Datatype type;
    unsigned char *sbuf, *rbuf;
};

static double pingpong(void *arg, long size, int n)
{
    const struct xfer *x = arg;
    (void)size;
    double t0 = MPI_Wtime();
    for (int i = 0; i < n; i++) {
        if (x->rank == 0) {
            MPI_Send(x->sbuf, x->count, x->type, 1, 300, MPI_COMM_WORLD);
            MPI_Recv(x->rbuf, x->count, x->type, 1, 300, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else if (x->rank == 1) {
            MPI_Recv(x->rbuf, x->count, x->type, 0, 300, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(x->sbuf, x->count, x->type, 0, 300, MPI_COMM_WORLD);
        }
    }
    return x->rank < 2 ? MPI_Wtime() - t0 : 0.0;
}

/* One-way payload rate of a ping-pong, in MB/s (meaningful on rank 0). */
static double xfer_rate(const struct bench_opts *o, struct xfer *x, long total, int *iters)
{
    double elapsed = bench_measure(o, total, pingpong, x, MPI_COMM_WORLD, iters);
    return elapsed > 0.0 ? (double)total * 2.0 * *iters / elapsed / 1e6 : 0.0;
}

/* Checks that rbuf holds sbuf's blocks at the vector positions and zeros in the gaps. */
static void check_vector(const unsigned char *sbuf, const unsigned char *rbuf, long block,
                         long total, const char *what)
{
    for (long off = 0; off < 2 * total; off++) {
        int in_block = (off / block) % 2 == 0;
        unsigned char want = in_block ? sbuf[off] : 0;
        if (rbuf[off] != want)
            bench_fail_validation(what, total, off);
    }
}

static void validate_xfer(int rank, unsigned char *sbuf, unsigned char *rbuf, long block,
                          long total, MPI_Datatype vec)
{
    if (rank == 0) {
        bench_fill(sbuf, (size_t)(2 * total), (unsigned)block);
        MPI_Send(sbuf, 1, vec, 1, 301, MPI_COMM_WORLD);
    } else if (rank == 1) {
        bench_fill(sbuf, (size_t)(2 * total), (unsigned)block);
        memset(rbuf, 0, (size_t)(2 * total));
        MPI_Recv(rbuf, 1, vec, 0, 301, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        check_vector(sbuf, rbuf, block, total, "vector transfer");
    }
}

static void validate_pack(unsigned char *sbuf, unsigned char *rbuf, unsigned char *packbuf,
                          int packsize, long block, long total, MPI_Datatype vec)
{
    int pos = 0;
    bench_fill(sbuf, (size_t)(2 * total), (unsigned)block + 1u);
    MPI_Pack(sbuf, 1, vec, packbuf, packsize, &pos, MPI_COMM_SELF);
    if (pos != total)
        bench_fail_validation("MPI_Pack position", total, pos);
    for (long i = 0; i < total; i++)
        if (packbuf[i] != sbuf[(i / block) * 2 * block + i % block])
            bench_fail_validation("MPI_Pack", total, i);
    memset(rbuf, 0, (size_t)(2 * total));
    pos = 0;
    MPI_Unpack(packbuf, packsize, &pos, rbuf, 1, vec, MPI_COMM_SELF);
    check_vector(sbuf, rbuf, block, total, "MPI_Unpack");
}

struct local {
    MPI_Datatype vec;
    unsigned char *sbuf, *rbuf, *packbuf;
    int packsize;
};

static double pack_loop(void *arg, long total, int n)
{
    const struct local *l = arg;
    (void)total;
    double t0 = MPI_Wtime();
    for (int i = 0; i < n; i++) {
        int pos = 0;
        MPI_Pack(l->sbuf, 1, l->vec, l->packbuf, l->packsize, &pos, MPI_COMM_SELF);
    }
    return MPI_Wtime() - t0;
}

static double unpack_loop(void *arg, long total, int n)
{
    const struct local *l = arg;
    (void)total;
    double t0 = MPI_Wtime();
    for (int i = 0; i < n; i++) {
        int pos = 0;
        MPI_Unpack(l->packbuf, l->packsize, &pos, l->rbuf, 1, l->vec, MPI_COMM_SELF);
    }
    return MPI_Wtime() - t0;
}

static double memcpy_loop(void *arg, long total, int n)
{
    const struct local *l = arg;
    double t0 = MPI_Wtime();
    for (int i = 0; i < n; i++) {
        memcpy(l->packbuf, l->sbuf + (i & 1), (size_t)total);
        /* keep the copy observable so that it cannot be dropped */
        __asm__ __volatile__("" : : "r"(l->packbuf) : "memory");
    }
    return MPI_Wtime() - t0;
}

/* Local rate of one loop on this rank, in MB/s of payload. */
static double local_rate(const struct bench_opts *o, bench_loop_fn fn, struct local *l, long total,
                         int *iters)
{
    double elapsed = bench_measure(o, total, fn, l, MPI_COMM_SELF, iters);
    return (double)total * *iters / elapsed / 1e6;
}

int main(int argc, char **argv)
{
    struct bench_opts o;
    int rank, nranks;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    bench_default_opts(&o);
    o.min_size = 1L << 20;
    o.max_size = 16L << 20;
    o.iters_large = 20;
    o.warmup_large = 3;
    o.blocks[0] = 64;
    o.blocks[1] = 4096;
    o.nblocks = 2;
    bench_parse(argc, argv, &o, "[-b BLOCK,BLOCK..] ");
    if (nranks < 2)
        bench_die("%s", "vector needs at least 2 ranks");

    long maxtotal = 0;
    for (int k = 0; k < o.nsizes; k++) {
        if (o.sizes[k] > maxtotal)
            maxtotal = o.sizes[k];
        for (int b = 0; b < o.nblocks; b++)
            if (o.blocks[b] < 1 || o.sizes[k] < o.blocks[b] || o.sizes[k] % o.blocks[b])
                bench_die("%s", "every total must be a positive multiple of every block size");
    }
    unsigned char *sbuf = bench_alloc((size_t)(2 * maxtotal));
    unsigned char *rbuf = bench_alloc((size_t)(2 * maxtotal));
    unsigned char *packbuf = bench_alloc((size_t)maxtotal + 4096);

    if (rank == 0) {
        printf("# layout: MPI_Type_vector(TOTAL/BLOCK, BLOCK, 2*BLOCK, MPI_BYTE)\n");
        bench_header("vector",
                     "xfer BLOCK TOTAL vector_MB_per_s contig_MB_per_s iterations | "
                     "pack BLOCK TOTAL pack_MB_per_s unpack_MB_per_s memcpy_MB_per_s iterations",
                     &o);
    }

    for (int b = 0; b < o.nblocks; b++) {
        long block = o.blocks[b];
        for (int k = 0; k < o.nsizes; k++) {
            long total = o.sizes[k];
            MPI_Datatype vec;
            int iv, ic;
            MPI_Type_vector((int)(total / block), (int)block, (int)(2 * block), MPI_BYTE, &vec);
            MPI_Type_commit(&vec);
            if (o.validate)
                validate_xfer(rank, sbuf, rbuf, block, total, vec);
            struct xfer xv = {rank, 1, vec, sbuf, rbuf};
            struct xfer xc = {rank, (int)total, MPI_BYTE, sbuf, rbuf};
            double rv = xfer_rate(&o, &xv, total, &iv);
            double rc = xfer_rate(&o, &xc, total, &ic);
            if (rank == 0) {
                printf("xfer %ld %ld %.2f %.2f %d\n", block, total, rv, rc, iv < ic ? iv : ic);
                fflush(stdout);
            }
            MPI_Type_free(&vec);
        }
    }

    for (int b = 0; b < o.nblocks; b++) {
        long block = o.blocks[b];
        for (int k = 0; k < o.nsizes; k++) {
            long total = o.sizes[k];
            MPI_Datatype vec;
            int packsize, iters;
            MPI_Type_vector((int)(total / block), (int)block, (int)(2 * block), MPI_BYTE, &vec);
            MPI_Type_commit(&vec);
            MPI_Pack_size(1, vec, MPI_COMM_SELF, &packsize);
            if (packsize < total || packsize > total + 4096)
                bench_die("%s", "MPI_Pack_size returned an unexpected size");
            if (rank == 0) {
                if (o.validate)
                    validate_pack(sbuf, rbuf, packbuf, packsize, block, total, vec);
                struct local l = {vec, sbuf, rbuf, packbuf, packsize};
                int ip, iu, im;
                double p = local_rate(&o, pack_loop, &l, total, &ip);
                double u = local_rate(&o, unpack_loop, &l, total, &iu);
                double m = local_rate(&o, memcpy_loop, &l, total, &im);
                iters = ip < iu ? ip : iu;
                iters = iters < im ? iters : im;
                printf("pack %ld %ld %.2f %.2f %.2f %d\n", block, total, p, u, m, iters);
                fflush(stdout);
            }
            MPI_Type_free(&vec);
            MPI_Barrier(MPI_COMM_WORLD);
        }
    }
    free(sbuf);
    free(rbuf);
    free(packbuf);
    MPI_Finalize();
    return 0;
}
