/*
 * p2p_bw.c - unidirectional windowed bandwidth between ranks 0 and 1 (OSU
 * osu_bw methodology): per iteration rank 0 posts a window of MPI_Isend
 * (default 64) and waits for all, rank 1 posts the matching MPI_Irecv,
 * waits for all and answers with a 4-byte acknowledgement. Bandwidth is
 * bytes moved / elapsed time on rank 0, in MB/s (1 MB = 10^6 bytes).
 * Ranks other than 0 and 1 (if any) stay idle.
 *
 * -k ASSERTS runs the window on a duplicate of MPI_COMM_WORLD made with
 * MPI_Comm_dup_with_info, whose info sets the MPI-4 communicator assertions
 * named in the comma list ASSERTS to "true": no_any_source, no_any_tag,
 * exact_length, allow_overtaking (each may carry the mpi_assert_ prefix);
 * "noany" stands for no_any_source,no_any_tag and "all" for all four. The
 * kernel uses no wildcard and receives exactly what is sent, so every
 * assertion holds; comparing a run with and without shows what an
 * implementation gains from them.
 */
#include "common.h"

struct ctx {
    MPI_Comm comm;
    int rank, window;
    unsigned char *sbuf, *rbuf;
    MPI_Request *reqs;
};

static double run_window(void *arg, long size, int n)
{
    const struct ctx *c = arg;
    MPI_Comm comm = c->comm;
    int rank = c->rank, window = c->window;
    unsigned char *sbuf = c->sbuf, *rbuf = c->rbuf;
    MPI_Request *reqs = c->reqs;
    double t0 = MPI_Wtime();
    for (int i = 0; i < n; i++) {
        if (rank == 0) {
            for (int j = 0; j < window; j++)
                MPI_Isend(sbuf, (int)size, MPI_CHAR, 1, 100, comm, &reqs[j]);
            MPI_Waitall(window, reqs, MPI_STATUSES_IGNORE);
            MPI_Recv(rbuf, 4, MPI_CHAR, 1, 101, comm, MPI_STATUS_IGNORE);
        } else if (rank == 1) {
            for (int j = 0; j < window; j++)
                MPI_Irecv(rbuf, (int)size, MPI_CHAR, 0, 100, comm, &reqs[j]);
            MPI_Waitall(window, reqs, MPI_STATUSES_IGNORE);
            MPI_Send(sbuf, 4, MPI_CHAR, 0, 101, comm);
        }
    }
    return rank < 2 ? MPI_Wtime() - t0 : 0.0;
}

/* The communicator the window runs on: MPI_COMM_WORLD, or (-k) a duplicate
 * carrying the assertions listed in `list`. */
static MPI_Comm asserted_comm(const char *list)
{
    static const char *const keys[] = {"no_any_source", "no_any_tag", "exact_length",
                                       "allow_overtaking"};
    char buf[256], key[64];
    MPI_Info info;
    MPI_Comm comm;
    if (list == NULL)
        return MPI_COMM_WORLD;
    if (strlen(list) >= sizeof buf)
        bench_die("assertion list too long: '%s'", list);
    strcpy(buf, list);
    MPI_Info_create(&info);
    for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
        const char *name = strncmp(tok, "mpi_assert_", 11) == 0 ? tok + 11 : tok;
        int first = -1, last = -1;
        if (strcmp(name, "noany") == 0) {
            first = 0;
            last = 1;
        } else if (strcmp(name, "all") == 0) {
            first = 0;
            last = 3;
        } else {
            for (int i = 0; i < 4; i++)
                if (strcmp(name, keys[i]) == 0)
                    first = last = i;
        }
        if (first < 0)
            bench_die("unknown assertion '%s' (no_any_source, no_any_tag, exact_length, "
                      "allow_overtaking, noany, all)", tok);
        for (int i = first; i <= last; i++) {
            snprintf(key, sizeof key, "mpi_assert_%s", keys[i]);
            MPI_Info_set(info, key, "true");
        }
    }
    MPI_Comm_dup_with_info(MPI_COMM_WORLD, info, &comm);
    MPI_Info_free(&info);
    return comm;
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
    bench_parse(argc, argv, &o, "[-k ASSERTIONS] ");
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

    MPI_Comm comm = asserted_comm(o.mode);
    if (rank == 0) {
        printf("# window: %d messages per iteration\n", o.window);
        if (o.mode)
            printf("# communicator assertions: %s\n", o.mode);
        bench_header("p2p_bw", "bytes MB_per_s iterations", &o);
    }

    for (int k = 0; k < o.nsizes; k++) {
        long size = o.sizes[k];
        if (o.validate)
            validate(rank, sbuf, rbuf, size);
        struct ctx c = {comm, rank, o.window, sbuf, rbuf, reqs};
        int iters;
        double elapsed = bench_measure(&o, size, run_window, &c, comm, &iters);
        if (rank == 0) {
            double bytes = (double)size * o.window * iters;
            printf("%ld %.2f %d\n", size, bytes / elapsed / 1e6, iters);
            fflush(stdout);
        }
    }
    if (comm != MPI_COMM_WORLD)
        MPI_Comm_free(&comm);
    free(reqs);
    free(sbuf);
    free(rbuf);
    MPI_Finalize();
    return 0;
}
