/*
 * rma.c - one-sided communication (OSU osu_put_latency / osu_get_latency /
 * osu_put_bw / osu_get_bw / osu_fop_latency / osu_cas_latency methodology).
 * The first argument names the test:
 *   put_lat, get_lat  rank 0 puts (gets) SIZE bytes to (from) rank 1's window
 *                     and flushes, inside one MPI_Win_lock epoch; latency per
 *                     operation + flush, in microseconds
 *   put_bw, get_bw    rank 0 issues a window (-w, default 64) of puts (gets)
 *                     of SIZE bytes then one flush; MB/s
 *   fop_lat, cas_lat  rank 0 does MPI_Fetch_and_op (sum) / MPI_Compare_and_swap
 *                     on one 8-byte integer at rank 1 and flushes; microseconds
 *   fence             every rank puts SIZE bytes to its right neighbour between
 *                     two MPI_Win_fence calls; microseconds per epoch (mean
 *                     over ranks)
 * Windows come from MPI_Win_allocate. Ranks other than 0 and 1 stay idle in
 * the passive-target tests (rank 1 waits in MPI_Barrier, serving requests on
 * implementations that need the target's progress).
 * Output columns: bytes value iterations.
 */
#include "common.h"

enum test { PUT_LAT, GET_LAT, PUT_BW, GET_BW, FOP_LAT, CAS_LAT, FENCE };
static const char *names[] = {"put_lat", "get_lat", "put_bw", "get_bw", "fop_lat", "cas_lat", "fence"};

struct ctx {
    enum test t;
    int rank, nranks, window;
    unsigned char *buf;
    MPI_Win win;
};

static double loop(void *arg, long size, int n)
{
    struct ctx *c = arg;
    double t0 = MPI_Wtime();
    if (c->t == FENCE) {
        int right = (c->rank + 1) % c->nranks;
        for (int i = 0; i < n; i++) {
            MPI_Win_fence(0, c->win);
            MPI_Put(c->buf, (int)size, MPI_BYTE, right, 0, (int)size, MPI_BYTE, c->win);
            MPI_Win_fence(0, c->win);
        }
        return MPI_Wtime() - t0;
    }
    if (c->rank != 0)
        return 0.0;
    long long one = 1, cmp = 0, res;
    MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, c->win);
    for (int i = 0; i < n; i++) {
        switch (c->t) {
        case PUT_LAT:
            MPI_Put(c->buf, (int)size, MPI_BYTE, 1, 0, (int)size, MPI_BYTE, c->win);
            break;
        case GET_LAT:
            MPI_Get(c->buf, (int)size, MPI_BYTE, 1, 0, (int)size, MPI_BYTE, c->win);
            break;
        case PUT_BW:
            for (int k = 0; k < c->window; k++)
                MPI_Put(c->buf, (int)size, MPI_BYTE, 1, 0, (int)size, MPI_BYTE, c->win);
            break;
        case GET_BW:
            for (int k = 0; k < c->window; k++)
                MPI_Get(c->buf, (int)size, MPI_BYTE, 1, 0, (int)size, MPI_BYTE, c->win);
            break;
        case FOP_LAT:
            MPI_Fetch_and_op(&one, &res, MPI_LONG_LONG, 1, 0, MPI_SUM, c->win);
            break;
        case CAS_LAT:
            MPI_Compare_and_swap(&one, &cmp, &res, MPI_LONG_LONG, 1, 0, c->win);
            break;
        default:
            break;
        }
        MPI_Win_flush(1, c->win);
    }
    MPI_Win_unlock(1, c->win);
    return MPI_Wtime() - t0;
}

/* Checks once per size that a put and a get move the right bytes. */
static void validate(struct ctx *c, unsigned char *base, long size)
{
    if (size == 0 || c->t == FOP_LAT || c->t == CAS_LAT)
        return;
    long at;
    MPI_Barrier(MPI_COMM_WORLD);
    if (c->rank == 0) {
        bench_fill(c->buf, (size_t)size, (unsigned)size);
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, c->win);
        MPI_Put(c->buf, (int)size, MPI_BYTE, 1, 0, (int)size, MPI_BYTE, c->win);
        MPI_Win_flush(1, c->win);
        memset(c->buf, 0, (size_t)size);
        MPI_Get(c->buf, (int)size, MPI_BYTE, 1, 0, (int)size, MPI_BYTE, c->win);
        MPI_Win_unlock(1, c->win);
        if ((at = bench_check(c->buf, (size_t)size, (unsigned)size)) >= 0)
            bench_fail_validation("put then get", size, at);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (c->rank == 1) {
        /* Read through MPI: MPICH 4.0.2 (ch4:ucx) shows stale bytes to plain loads
           of its own window here even after MPI_Win_sync. */
        (void)base;
        memset(c->buf, 0, (size_t)size);
        MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, c->win);
        MPI_Get(c->buf, (int)size, MPI_BYTE, 1, 0, (int)size, MPI_BYTE, c->win);
        MPI_Win_unlock(1, c->win);
        if ((at = bench_check(c->buf, (size_t)size, (unsigned)size)) >= 0)
            bench_fail_validation("target window after put", size, at);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
    struct bench_opts o;
    int rank, nranks;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    bench_default_opts(&o);
    bench_parse(argc, argv, &o, "put_lat|get_lat|put_bw|get_bw|fop_lat|cas_lat|fence");
    if (o.positional == NULL)
        bench_die("%s", "name a test: put_lat, get_lat, put_bw, get_bw, fop_lat, cas_lat or fence");
    int t = -1;
    for (int i = 0; i < (int)(sizeof names / sizeof names[0]); i++)
        if (strcmp(o.positional, names[i]) == 0)
            t = i;
    if (t < 0)
        bench_die("unknown test '%s'", o.positional);
    if (nranks < 2)
        bench_die("%s", "rma needs at least 2 ranks");
    if (t == FOP_LAT || t == CAS_LAT) {
        o.sizes[0] = 8;
        o.nsizes = 1;
    }
    long maxsz = 8;
    for (int k = 0; k < o.nsizes; k++)
        if (o.sizes[k] > maxsz)
            maxsz = o.sizes[k];
    unsigned char *base;
    struct ctx c = {(enum test)t, rank, nranks, o.window > 0 ? o.window : 64, bench_alloc((size_t)maxsz), MPI_WIN_NULL};
    MPI_Win_allocate((MPI_Aint)maxsz, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &c.win);
    memset(base, 0, (size_t)maxsz);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        char name[64];
        snprintf(name, sizeof name, "rma %s", names[t]);
        bench_header(name, t == PUT_BW || t == GET_BW ? "bytes MBps iterations" : "bytes latency_us iterations", &o);
    }
    for (int k = 0; k < o.nsizes; k++) {
        long size = o.sizes[k];
        if (o.validate)
            validate(&c, base, size);
        int iters;
        double elapsed = bench_measure(&o, size, loop, &c, MPI_COMM_WORLD, &iters);
        if (t == FENCE) {
            double sum;
            MPI_Reduce(&elapsed, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
            elapsed = sum / nranks;
        }
        if (rank == 0) {
            if (t == PUT_BW || t == GET_BW)
                printf("%ld %.3f %d\n", size, (double)size * c.window * iters / elapsed / 1e6, iters);
            else
                printf("%ld %.3f %d\n", size, elapsed * 1e6 / iters, iters);
            fflush(stdout);
        }
    }
    MPI_Win_free(&c.win);
    free(c.buf);
    MPI_Finalize();
    return 0;
}
