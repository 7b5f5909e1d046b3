/*
 * p2p_bw.c - unidirectional windowed bandwidth between ranks 0 and 1 (OSU
 * osu_bw methodology): per iteration rank 0 posts a window of MPI_Isend
 * (default 64) and waits for all, rank 1 posts the matching MPI_Irecv,
 * waits for all and answers with a 4-byte acknowledgement. Bandwidth is
 * bytes moved / elapsed time on rank 0, in MB/s (1 MB = 10^6 bytes).
 * Ranks other than 0 and 1 (if any) stay idle.
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
    for (int i = 0; i < n; i++) {
        if (rank == 0) {
            for (int j = 0; j < window; j++)
                MPI_Isend(sbuf, (int)size, MPI_CHAR, 1, 100, MPI_COMM_WORLD, &reqs[j]);
            MPI_Waitall(window, reqs, MPI_STATUSES_IGNORE);
            MPI_Recv(rbuf, 4, MPI_CHAR, 1, 101, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else if (rank == 1) {
            for (int j = 0; j < window; j++)
                MPI_Irecv(rbuf, (int)size, MPI_CHAR, 0, 100, MPI_COMM_WORLD, &reqs[j]);
            MPI_Waitall(window, reqs, MPI_STATUSES_IGNORE);
            MPI_Send(sbuf, 4, MPI_CHAR, 0, 101, MPI_COMM_WORLD);
        }
    }
    return rank < 2 ? MPI_Wtime() - t0 : 0.0;
}

static void validate(int rank, unsigned char *sbuf, unsigned char *rbuf, long size)
{
    MPI_Request req;
    long at;
    if (rank == 0) {
        bench_fill(sbuf, (size_t)size, (unsigned)size);
        MPI_Isend(sbuf, (int)size, MPI_CHAR, 1, 102, MPI_COMM_WORLD, &req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
    } else if (rank == 1) {
        memset(rbuf, 0, (size_t)size);
        MPI_Irecv(rbuf, (int)size, MPI_CHAR, 0, 102, MPI_COMM_WORLD, &req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        if ((at = bench_check(rbuf, (size_t)size, (unsigned)size)) >= 0)
            bench_fail_validation("bw", size, at);
    }
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
        bench_die("%s", "p2p_bw needs at least 2 ranks");

    long maxsz = 4;
    for (int k = 0; k < o.nsizes; k++)
        if (o.sizes[k] > maxsz)
            maxsz = o.sizes[k];
    unsigned char *sbuf = bench_alloc((size_t)maxsz), *rbuf = bench_alloc((size_t)maxsz);
    MPI_Request *reqs = malloc(sizeof(MPI_Request) * (size_t)o.window);
    if (!reqs)
        bench_die("%s", "out of memory");

    if (rank == 0) {
        printf("# window: %d messages per iteration\n", o.window);
        bench_header("p2p_bw", "bytes MB_per_s iterations", &o);
    }

    for (int k = 0; k < o.nsizes; k++) {
        long size = o.sizes[k];
        if (o.validate)
            validate(rank, sbuf, rbuf, size);
        struct ctx c = {rank, o.window, sbuf, rbuf, reqs};
        int iters;
        double elapsed = bench_measure(&o, size, run_window, &c, MPI_COMM_WORLD, &iters);
        if (rank == 0) {
            double bytes = (double)size * o.window * iters;
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
