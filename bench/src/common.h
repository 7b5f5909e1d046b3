/*
 * common.h - shared option parsing, buffers and timing helpers for the
 * oxmpi benchmark programs (header-only; each program is one .c file).
 *
 * Methodology (after the OSU micro-benchmarks): for every message size a
 * number of untimed warm-up iterations runs first, then the timed
 * iterations; messages larger than LARGE_SIZE use the (smaller) "large"
 * iteration counts. With a time budget (-t) the timed iteration count is
 * lowered so that one size takes roughly that long, judged from the
 * warm-up; every rank agrees on the same count.
 *
 * Output: lines starting with '#' are comments/headers; every other line
 * is whitespace-separated values whose columns the "# columns:" line names
 * (numbers; vector.c starts each line with a keyword naming its kind).
 */
#ifndef OXMPI_BENCH_COMMON_H
#define OXMPI_BENCH_COMMON_H

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define LARGE_SIZE 8192
#define MAX_SIZES 64
#define MAX_BLOCKS 64

struct bench_opts {
    long min_size, max_size;  /* -m [MIN:]MAX */
    long sizes[MAX_SIZES];    /* -s LIST overrides -m */
    int nsizes;
    int iters, warmup;        /* -i, -x : sizes <= LARGE_SIZE */
    int iters_large, warmup_large; /* -I, -X : sizes > LARGE_SIZE */
    double budget;            /* -t seconds per size, 0 = unlimited */
    int window;               /* -w (bandwidth programs) */
    int validate;             /* -c : check received data once per size */
    int timing_blocks;        /* -r : timed iterations split in blocks, fastest reported */
    const char *mode;         /* -k (program-specific variant) */
    long blocks[MAX_SIZES];   /* -b LIST (vector block sizes) */
    int nblocks;
    const char *positional;   /* first non-option argument */
};

static inline int bench_rank(void)
{
    int r;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    return r;
}

static inline void bench_die(const char *fmt, const char *arg)
{
    if (bench_rank() == 0) {
        fprintf(stderr, "error: ");
        fprintf(stderr, fmt, arg);
        fprintf(stderr, "\n");
    }
    MPI_Abort(MPI_COMM_WORLD, 2);
    exit(2);
}

static inline long bench_parse_size(const char *s)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (end == s || v < 0)
        bench_die("bad size '%s'", s);
    if (*end == 'k' || *end == 'K') { v <<= 10; end++; }
    else if (*end == 'm' || *end == 'M') { v <<= 20; end++; }
    if (*end != '\0')
        bench_die("bad size '%s'", s);
    return v;
}

static inline int bench_parse_list(const char *s, long *out)
{
    char buf[1024];
    int n = 0;
    if (strlen(s) >= sizeof buf)
        bench_die("list too long: '%s'", s);
    strcpy(buf, s);
    for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
        if (n == MAX_SIZES)
            bench_die("too many entries in '%s'", s);
        out[n++] = bench_parse_size(tok);
    }
    if (n == 0)
        bench_die("empty list '%s'", s);
    return n;
}

static inline int bench_parse_int(const char *s)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (end == s || *end != '\0' || v < 0 || v > 1000000000)
        bench_die("bad count '%s'", s);
    return (int)v;
}

/* Expands -m into 0 (if MIN is 0), then powers of two from max(MIN,1) to MAX. */
static inline void bench_expand_sizes(struct bench_opts *o)
{
    if (o->nsizes > 0)
        return;
    if (o->min_size == 0)
        o->sizes[o->nsizes++] = 0;
    long s = 1;
    while (s < o->min_size)
        s <<= 1;
    for (; s <= o->max_size && o->nsizes < MAX_SIZES; s <<= 1)
        o->sizes[o->nsizes++] = s;
}

static inline void bench_usage(const char *prog, const char *extra)
{
    if (bench_rank() != 0)
        return;
    fprintf(stderr,
            "usage: %s %s[-m [MIN:]MAX] [-s SIZE,SIZE..] [-i ITERS] [-x WARMUP]\n"
            "          [-I LARGE_ITERS] [-X LARGE_WARMUP] [-t SECONDS] [-r BLOCKS] [-w WINDOW] [-c]\n"
            "  sizes accept K/M suffixes; 'large' means > %d bytes;\n"
            "  -t caps the time per size (timed iterations lowered after warm-up);\n"
            "  -r splits the timed iterations into BLOCKS equal blocks and reports the\n"
            "     fastest block (the one whose slowest rank was fastest); default 1;\n"
            "  -c validates received data once per size (outside the timing)\n",
            prog, extra, LARGE_SIZE);
}

/* Parses argv; defaults must be set by the caller beforehand. */
static inline void bench_parse(int argc, char **argv, struct bench_opts *o, const char *extra_usage)
{
    int c;
    opterr = 0;
    while ((c = getopt(argc, argv, "m:s:i:x:I:X:t:w:k:b:r:ch")) != -1) {
        switch (c) {
        case 'm': {
            const char *colon = strchr(optarg, ':');
            if (colon) {
                char minbuf[64];
                size_t len = (size_t)(colon - optarg);
                if (len >= sizeof minbuf)
                    bench_die("bad range '%s'", optarg);
                memcpy(minbuf, optarg, len);
                minbuf[len] = '\0';
                o->min_size = bench_parse_size(minbuf);
                o->max_size = bench_parse_size(colon + 1);
            } else {
                o->max_size = bench_parse_size(optarg);
            }
            if (o->min_size > o->max_size)
                bench_die("empty range '%s'", optarg);
            break;
        }
        case 's': o->nsizes = bench_parse_list(optarg, o->sizes); break;
        case 'b': o->nblocks = bench_parse_list(optarg, o->blocks); break;
        case 'i': o->iters = bench_parse_int(optarg); break;
        case 'x': o->warmup = bench_parse_int(optarg); break;
        case 'I': o->iters_large = bench_parse_int(optarg); break;
        case 'X': o->warmup_large = bench_parse_int(optarg); break;
        case 'w': o->window = bench_parse_int(optarg); break;
        case 't': o->budget = atof(optarg); break;
        case 'k': o->mode = optarg; break;
        case 'c': o->validate = 1; break;
        case 'r': o->timing_blocks = bench_parse_int(optarg); break;
        case 'h': bench_usage(argv[0], extra_usage); MPI_Finalize(); exit(0);
        default:
            bench_usage(argv[0], extra_usage);
            MPI_Abort(MPI_COMM_WORLD, 2);
            exit(2);
        }
    }
    if (optind < argc)
        o->positional = argv[optind];
    if (o->iters < 1 || o->iters_large < 1)
        bench_die("%s", "iteration counts must be >= 1");
    if (o->timing_blocks < 1 || o->timing_blocks > MAX_BLOCKS)
        bench_die("%s", "blocks (-r) must be between 1 and 64");
    if (o->window < 1)
        bench_die("%s", "window must be >= 1");
    bench_expand_sizes(o);
}

static inline void bench_default_opts(struct bench_opts *o)
{
    memset(o, 0, sizeof *o);
    o->min_size = 0;
    o->max_size = 4L << 20;
    o->iters = 10000;
    o->warmup = 1000;
    o->iters_large = 1000;
    o->warmup_large = 100;
    o->window = 64;
    o->timing_blocks = 1;
}

static inline int bench_iters(const struct bench_opts *o, long size)
{
    return size > LARGE_SIZE ? o->iters_large : o->iters;
}

static inline int bench_warmup(const struct bench_opts *o, long size)
{
    return size > LARGE_SIZE ? o->warmup_large : o->warmup;
}

/*
 * A measured loop: runs n iterations of the benchmark's kernel and returns
 * the time this rank measured for them (0 on ranks that take no part).
 */
typedef double (*bench_loop_fn)(void *ctx, long size, int n);

/*
 * Collective over comm: warm-up, then the timed iterations of one size.
 * Without a budget: bench_warmup() then bench_iters() iterations. With a
 * budget (-t) the warm-up runs in doubling chunks (1, 2, 4, ...) and stops
 * early once it has used a quarter of the budget; the last chunk's cost per
 * iteration (slowest rank; first-contact costs are in the early chunks)
 * then caps the timed iterations to the budget, so that a pathologically
 * slow library still finishes.
 * With -r BLOCKS the timed iterations run as BLOCKS equal blocks, each
 * started after a barrier; the block whose slowest rank was fastest is
 * reported (all ranks agree on it), which filters out blocks disturbed by
 * other load on a shared machine. Returns this rank's time for the
 * reported iterations; *iters_out gets their count.
 */
static inline double bench_measure(const struct bench_opts *o, long size, bench_loop_fn fn,
                                   void *ctx, MPI_Comm comm, int *iters_out)
{
    int warm = bench_warmup(o, size), iters = bench_iters(o, size);
    MPI_Barrier(comm);
    if (o->budget > 0.0) {
        double spent = 0.0, per = 0.0;
        int done = 0;
        for (int chunk = 1; done < warm; chunk *= 2) {
            int n = chunk < warm - done ? chunk : warm - done;
            double mine = fn(ctx, size, n), worst;
            MPI_Allreduce(&mine, &worst, 1, MPI_DOUBLE, MPI_MAX, comm);
            done += n;
            spent += worst;
            per = worst / n;
            if (spent >= o->budget * 0.25)
                break;
        }
        if (per > 0.0 && o->budget / per < (double)iters)
            iters = o->budget / per < 1.0 ? 1 : (int)(o->budget / per);
    } else if (warm > 0) {
        fn(ctx, size, warm);
    }
    int blocks = o->timing_blocks < iters ? o->timing_blocks : iters;
    int per = iters / blocks;
    double mine[MAX_BLOCKS], worst[MAX_BLOCKS];
    for (int b = 0; b < blocks; b++) {
        MPI_Barrier(comm);
        mine[b] = fn(ctx, size, per);
    }
    MPI_Allreduce(mine, worst, blocks, MPI_DOUBLE, MPI_MAX, comm);
    int best = 0;
    for (int b = 1; b < blocks; b++)
        if (worst[b] < worst[best])
            best = b;
    *iters_out = per;
    return mine[best];
}

/* Page-aligned buffer, touched so that page faults are not timed. */
static inline void *bench_alloc(size_t bytes)
{
    void *p = NULL;
    if (bytes == 0)
        bytes = 1;
    if (posix_memalign(&p, 4096, bytes) != 0 || p == NULL)
        bench_die("%s", "out of memory");
    memset(p, 0, bytes);
    return p;
}

static inline void bench_fill(unsigned char *buf, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        buf[i] = (unsigned char)((i * 131u + seed * 17u + 7u) & 0xffu);
}

/* Returns the index of the first wrong byte, or -1. */
static inline long bench_check(const unsigned char *buf, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        if (buf[i] != (unsigned char)((i * 131u + seed * 17u + 7u) & 0xffu))
            return (long)i;
    return -1;
}

static inline void bench_fail_validation(const char *what, long size, long at)
{
    fprintf(stderr, "rank %d: VALIDATION FAILED: %s size %ld: wrong byte at offset %ld\n",
            bench_rank(), what, size, at);
    MPI_Abort(MPI_COMM_WORLD, 3);
}

/* The index of the positional argument (the operation) in names[0..n), or dies naming
 * the choices (`usage`). */
static inline int bench_find_op(const struct bench_opts *o, const char *const *names, int n,
                                const char *usage)
{
    if (o->positional == NULL)
        bench_die("missing OP (%s)", usage);
    for (int i = 0; i < n; i++)
        if (strcmp(o->positional, names[i]) == 0)
            return i;
    bench_die("unknown collective '%s'", o->positional);
    return -1;
}

/*
 * For the collective programs: combines each rank's mean time per call (us) over
 * MPI_COMM_WORLD and prints "size avg min max iterations" on rank 0, where avg is the
 * mean over ranks (OSU's "Avg Latency").
 */
static inline void bench_report_mean(double mean, long size, int iters)
{
    int nranks;
    double mn, mx, sum;
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    MPI_Reduce(&mean, &mn, 1, MPI_DOUBLE, MPI_MIN, 0, MPI_COMM_WORLD);
    MPI_Reduce(&mean, &mx, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(&mean, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    if (bench_rank() == 0) {
        printf("%ld %.3f %.3f %.3f %d\n", size, sum / nranks, mn, mx, iters);
        fflush(stdout);
    }
}

/* For the collective programs: one call of the program's operation on `size` bytes,
 * and the check of one call's result (-c). */
typedef void (*bench_coll_fn)(const void *ctx, long size);

struct bench_coll {
    bench_coll_fn call;
    const void *ctx;
};

/* A bench_loop_fn over a struct bench_coll: n calls, each timed alone and followed by an
 * untimed barrier, so that calls do not pipeline. */
static inline double bench_coll_timed(void *arg, long size, int n)
{
    const struct bench_coll *b = arg;
    double total = 0.0;
    for (int i = 0; i < n; i++) {
        double t0 = MPI_Wtime();
        b->call(b->ctx, size);
        total += MPI_Wtime() - t0;
        MPI_Barrier(MPI_COMM_WORLD);
    }
    return total;
}

/* MPI_Init, this rank and the job size, and the default options of a collective program. */
static inline void bench_coll_init(int *argc, char ***argv, struct bench_opts *o, int *rank,
                                   int *nranks)
{
    MPI_Init(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, rank);
    MPI_Comm_size(MPI_COMM_WORLD, nranks);
    bench_default_opts(o);
}

static inline void bench_header(const char *name, const char *columns, const struct bench_opts *o)
{
    int size, ver, sub;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Get_version(&ver, &sub); /* MPI-1.2: the only version query every library has */
    printf("# benchmark: %s\n# ranks: %d\n# mpi-version: %d.%d\n", name, size, ver, sub);
    printf("# iterations: %d (warm-up %d), large (> %d B): %d (warm-up %d), budget %.3g s/size\n",
           o->iters, o->warmup, LARGE_SIZE, o->iters_large, o->warmup_large, o->budget);
    printf("# timing: %s\n", o->timing_blocks > 1 ? "fastest of the equal blocks of timed iterations (-r)"
                                           : "all timed iterations (OSU style)");
    if (o->timing_blocks > 1)
        printf("# blocks: %d\n", o->timing_blocks);
    printf("# columns: %s\n", columns);
    fflush(stdout);
}

/* The collective programs' sizes: for each, the check (with -c), then the measured calls,
 * reported as bench_report_mean does. */
static inline void bench_coll_sizes(const struct bench_opts *o, bench_coll_fn call,
                                    bench_coll_fn validate, const void *ctx)
{
    struct bench_coll b = {call, ctx};
    for (int k = 0; k < o->nsizes; k++) {
        long size = o->sizes[k];
        if (o->validate)
            validate(ctx, size);
        int iters;
        double mean = bench_measure(o, size, bench_coll_timed, &b, MPI_COMM_WORLD, &iters) * 1e6 /
                      iters;
        bench_report_mean(mean, size, iters);
    }
}

#endif
