/*
 * p2p_bibw.c - bidirectional windowed bandwidth between ranks 0 and 1 (OSU
 * osu_bibw methodology): per iteration each of the two ranks posts a window
 * (default 64) of MPI_Irecv, then a window of MPI_Isend to the other, and
 * waits for all. Bandwidth is the bytes moved in both directions / elapsed
 * time on rank 0, in MB/s (1 MB = 10^6 bytes). Other ranks stay idle.
 */
#include "common.h"

struct ctx {
    int rank, window;
    unsigned char *sbuf, *rbuf;
    MPI_Request *reqs;
};

static double run_window(void *arg, long size, int n)
{
    const struct ctx *c = arg;
    int rank = c->rank, window = c->window;
    unsigned char *sbuf = c->sbuf, *rbuf = c->rbuf;
    MPI_Request *reqs = c->reqs;
    double t0 = MPI_Wtime();
    if (rank > 1)
        return 0.0;
    int peer = 1 - rank;
    for (int i = 0; i < n; i++) {
        for (int j = 0; j < window; j++)
            MPI_Irecv(rbuf, (int)size, MPI_CHAR, peer, 200, MPI_COMM_WORLD, &reqs[j]);
        for (int j = 0; j < window; j++)
            MPI_Isend(sbuf, (int)size, MPI_CHAR, peer, 200, MPI_COMM_WORLD, &reqs[window + j]);
        MPI_Waitall(2 * window, reqs, MPI_STATUSES_IGNORE);
    }
    return MPI_Wtime() - t0;
}

static void validate(int rank, unsigned char *sbuf, unsigned char *rbuf, long size)
{
    MPI_Request reqs[2];
    long at;
    if (rank > 1)
        return;
    int peer = 1 - rank;
    bench_fill(sbuf, (size_t)size, (unsigned)(size + rank));
    memset(rbuf, 0, (size_t)size);
    MPI_Irecv(rbuf, (int)size, MPI_CHAR, peer, 201, MPI_COMM_WORLD, &reqs[0]);
    MPI_Isend(sbuf, (int)size, MPI_CHAR, peer, 201, MPI_COMM_WORLD, &reqs[1]);
    MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE);
    if ((at = bench_check(rbuf, (size_t)size, (unsigned)(size + peer))) >= 0)
        bench_fail_validation("bibw", size, at);
}

int main(int argc, char **argv)
{
    struct bench_opts o;
    int rank, nranks;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    bench_default_opts(&o);
    o.min_size = 1;
    o.iters = 100;
    o.warmup = 10;
    o.iters_large = 20;
    o.warmup_large = 2;
    bench_parse(argc, argv, &o, "");
    if (nranks < 2)
        bench_die("%s", "p2p_bibw needs at least 2 ranks");

    long maxsz = 1;
    for (int k = 0; k < o.nsizes; k++)
        if (o.sizes[k] > maxsz)
            maxsz = o.sizes[k];
    unsigned char *sbuf = bench_alloc((size_t)maxsz), *rbuf = bench_alloc((size_t)maxsz);
    MPI_Request *reqs = malloc(sizeof(MPI_Request) * 2 * (size_t)o.window);
    if (!reqs)
        bench_die("%s", "out of memory");

    if (rank == 0) {
        printf("# window: %d messages per direction per iteration\n", o.window);
        bench_header("p2p_bibw", "bytes MB_per_s iterations", &o);
    }

    for (int k = 0; k < o.nsizes; k++) {
        long size = o.sizes[k];
        if (o.validate)
            validate(rank, sbuf, rbuf, size);
        struct ctx c = {rank, o.window, sbuf, rbuf, reqs};
        int iters;
        double elapsed = bench_measure(&o, size, run_window, &c, MPI_COMM_WORLD, &iters);
        if (rank == 0) {
            double bytes = 2.0 * (double)size * o.window * iters;
            printf("%ld %.2f %d\n", size, bytes / elapsed / 1e6, iters);
            fflush(stdout);
        }
    }
    free(reqs);
    free(sbuf);
    free(rbuf);
    MPI_Finalize();
    return 0;
}
