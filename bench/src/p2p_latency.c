/*
 * p2p_latency.c - ping-pong latency between ranks 0 and 1 (OSU osu_latency
 * methodology): rank 0 sends, rank 1 receives and sends back; the reported
 * figure is half the average round-trip time, in microseconds, measured on
 * rank 0 with MPI_Wtime. Blocking MPI_Send / MPI_Recv of MPI_CHAR.
 * Ranks other than 0 and 1 (if any) stay idle.
 */
#include "common.h"

struct ctx {
    int rank;
    unsigned char *sbuf, *rbuf;
};

static double pingpong(void *arg, long size, int n)
{
    const struct ctx *c = arg;
    int rank = c->rank;
    unsigned char *sbuf = c->sbuf, *rbuf = c->rbuf;
    double t0 = MPI_Wtime();
    for (int i = 0; i < n; i++) {
        if (rank == 0) {
            MPI_Send(sbuf, (int)size, MPI_CHAR, 1, 1, MPI_COMM_WORLD);
            MPI_Recv(rbuf, (int)size, MPI_CHAR, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else if (rank == 1) {
            MPI_Recv(rbuf, (int)size, MPI_CHAR, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(sbuf, (int)size, MPI_CHAR, 0, 1, MPI_COMM_WORLD);
        }
    }
    return rank < 2 ? MPI_Wtime() - t0 : 0.0;
}

static void validate(int rank, unsigned char *sbuf, unsigned char *rbuf, long size)
{
    long at;
    if (rank == 0) {
        bench_fill(sbuf, (size_t)size, (unsigned)size);
        MPI_Send(sbuf, (int)size, MPI_CHAR, 1, 2, MPI_COMM_WORLD);
        memset(rbuf, 0, (size_t)size);
        MPI_Recv(rbuf, (int)size, MPI_CHAR, 1, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if ((at = bench_check(rbuf, (size_t)size, (unsigned)size + 1)) >= 0)
            bench_fail_validation("latency reply", size, at);
    } else if (rank == 1) {
        memset(rbuf, 0, (size_t)size);
        MPI_Recv(rbuf, (int)size, MPI_CHAR, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if ((at = bench_check(rbuf, (size_t)size, (unsigned)size)) >= 0)
            bench_fail_validation("latency ping", size, at);
        bench_fill(sbuf, (size_t)size, (unsigned)size + 1);
        MPI_Send(sbuf, (int)size, MPI_CHAR, 0, 2, MPI_COMM_WORLD);
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
    bench_parse(argc, argv, &o, "");
    if (nranks < 2)
        bench_die("%s", "p2p_latency needs at least 2 ranks");

    long maxsz = 0;
    for (int k = 0; k < o.nsizes; k++)
        if (o.sizes[k] > maxsz)
            maxsz = o.sizes[k];
    unsigned char *sbuf = bench_alloc((size_t)maxsz), *rbuf = bench_alloc((size_t)maxsz);

    if (rank == 0)
        bench_header("p2p_latency", "bytes latency_us iterations", &o);

    for (int k = 0; k < o.nsizes; k++) {
        long size = o.sizes[k];
        if (o.validate)
            validate(rank, sbuf, rbuf, size);
        struct ctx c = {rank, sbuf, rbuf};
        int iters;
        double elapsed = bench_measure(&o, size, pingpong, &c, MPI_COMM_WORLD, &iters);
        if (rank == 0) {
            printf("%ld %.3f %d\n", size, elapsed * 1e6 / (2.0 * iters), iters);
            fflush(stdout);
        }
    }
    free(sbuf);
    free(rbuf);
    MPI_Finalize();
    return 0;
}
