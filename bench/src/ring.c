/*
 * ring.c - neighbour exchange on a ring of all ranks: every iteration each
 * rank sends one message to its right neighbour and one to its left and
 * receives one from each. Mode (-k) "nb" (default) posts two MPI_Irecv and
 * two MPI_Isend and calls MPI_Waitall; mode "sendrecv" does two MPI_Sendrecv
 * (shift right, then shift left). Meant for oversubscription (more ranks
 * than cores), where a rank that spins while its neighbour is descheduled
 * slows the whole ring.
 * Reported: time per iteration in microseconds, the maximum over ranks
 * (the ring is as slow as its slowest member) and the average over ranks.
 */
#include "common.h"

#define TAG_RIGHTWARD 10
#define TAG_LEFTWARD 11

struct ring {
    int rank, left, right, sendrecv;
    unsigned char *sbuf_r, *sbuf_l, *rbuf_l, *rbuf_r;
};

static double exchange(void *arg, long size, int n)
{
    const struct ring *g = arg;
    MPI_Request reqs[4];
    double t0 = MPI_Wtime();
    for (int i = 0; i < n; i++) {
        if (g->sendrecv) {
            MPI_Sendrecv(g->sbuf_r, (int)size, MPI_CHAR, g->right, TAG_RIGHTWARD, g->rbuf_l,
                         (int)size, MPI_CHAR, g->left, TAG_RIGHTWARD, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE);
            MPI_Sendrecv(g->sbuf_l, (int)size, MPI_CHAR, g->left, TAG_LEFTWARD, g->rbuf_r,
                         (int)size, MPI_CHAR, g->right, TAG_LEFTWARD, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE);
        } else {
            MPI_Irecv(g->rbuf_l, (int)size, MPI_CHAR, g->left, TAG_RIGHTWARD, MPI_COMM_WORLD,
                      &reqs[0]);
            MPI_Irecv(g->rbuf_r, (int)size, MPI_CHAR, g->right, TAG_LEFTWARD, MPI_COMM_WORLD,
                      &reqs[1]);
            MPI_Isend(g->sbuf_r, (int)size, MPI_CHAR, g->right, TAG_RIGHTWARD, MPI_COMM_WORLD,
                      &reqs[2]);
            MPI_Isend(g->sbuf_l, (int)size, MPI_CHAR, g->left, TAG_LEFTWARD, MPI_COMM_WORLD,
                      &reqs[3]);
            MPI_Waitall(4, reqs, MPI_STATUSES_IGNORE);
        }
    }
    return MPI_Wtime() - t0;
}

static void validate(const struct ring *g, long size)
{
    long at;
    unsigned s = (unsigned)size * 7u;
    bench_fill(g->sbuf_r, (size_t)size, s + (unsigned)g->rank * 2u);
    bench_fill(g->sbuf_l, (size_t)size, s + (unsigned)g->rank * 2u + 1u);
    memset(g->rbuf_l, 0, (size_t)size);
    memset(g->rbuf_r, 0, (size_t)size);
    exchange((void *)g, size, 1);
    if ((at = bench_check(g->rbuf_l, (size_t)size, s + (unsigned)g->left * 2u)) >= 0)
        bench_fail_validation("ring (from left)", size, at);
    if ((at = bench_check(g->rbuf_r, (size_t)size, s + (unsigned)g->right * 2u + 1u)) >= 0)
        bench_fail_validation("ring (from right)", size, at);
}

int main(int argc, char **argv)
{
    struct bench_opts o;
    struct ring g;
    int nranks;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &g.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    bench_default_opts(&o);
    o.sizes[0] = 8;
    o.sizes[1] = 65536;
    o.nsizes = 2;
    o.iters = 2000;
    o.warmup = 200;
    o.iters_large = 500;
    o.warmup_large = 50;
    bench_parse(argc, argv, &o, "[-k nb|sendrecv] ");
    if (o.mode == NULL || strcmp(o.mode, "nb") == 0)
        g.sendrecv = 0;
    else if (strcmp(o.mode, "sendrecv") == 0)
        g.sendrecv = 1;
    else
        bench_die("unknown ring mode '%s' (nb or sendrecv)", o.mode);
    g.left = (g.rank + nranks - 1) % nranks;
    g.right = (g.rank + 1) % nranks;

    long maxsz = 1;
    for (int k = 0; k < o.nsizes; k++)
        if (o.sizes[k] > maxsz)
            maxsz = o.sizes[k];
    g.sbuf_r = bench_alloc((size_t)maxsz);
    g.sbuf_l = bench_alloc((size_t)maxsz);
    g.rbuf_l = bench_alloc((size_t)maxsz);
    g.rbuf_r = bench_alloc((size_t)maxsz);

    if (g.rank == 0) {
        printf("# mode: %s\n", g.sendrecv ? "sendrecv" : "nb (2 Irecv + 2 Isend + Waitall)");
        bench_header("ring", "bytes us_per_iter_max us_per_iter_avg iterations", &o);
    }

    for (int k = 0; k < o.nsizes; k++) {
        long size = o.sizes[k];
        if (o.validate)
            validate(&g, size);
        int iters;
        double elapsed = bench_measure(&o, size, exchange, &g, MPI_COMM_WORLD, &iters);
        double per = elapsed * 1e6 / iters, pmax, psum;
        MPI_Reduce(&per, &pmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        MPI_Reduce(&per, &psum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
        if (g.rank == 0) {
            printf("%ld %.3f %.3f %d\n", size, pmax, psum / nranks, iters);
            fflush(stdout);
        }
    }
    free(g.sbuf_r);
    free(g.sbuf_l);
    free(g.rbuf_l);
    free(g.rbuf_r);
    MPI_Finalize();
    return 0;
}
