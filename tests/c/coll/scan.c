/*
 * MPI_Scan and MPI_Exscan (prefix reductions, rank 0's Exscan result left alone),
 * MPI_Reduce_scatter_block and MPI_Reduce_scatter (zero counts, sizes for the recursive
 * halving and ring algorithms), all with and without MPI_IN_PLACE.
 */
#include "mtest.h"
#include "common.h"

static int r, n;

static int ival(int seed, int rank, int i)
{
    return cval(seed, rank, i) % 2000 - 1000;
}

/* Sum over ranks lo..hi-1 of element i. */
static long long range_sum(int seed, int lo, int hi, int i)
{
    long long s = 0;
    for (int k = lo; k < hi; k++) s += ival(seed, k, i);
    return s;
}

static void scan(MPI_Comm comm, int cnt, int exclusive, int in_place)
{
    int seed = 5 + cnt + exclusive;
    char what[96];
    snprintf(what, sizeof what, "%s count %d%s", exclusive ? "MPI_Exscan" : "MPI_Scan", cnt, in_place ? " in place" : "");
    gbuf s = gbuf_new((size_t)cnt, 0), d = gbuf_new((size_t)cnt, -1);
    for (int i = 0; i < cnt; i++) s.p[i] = ival(seed, r, i);
    if (in_place) memcpy(d.p, s.p, sizeof(int) * cnt);
    const void *sb = in_place ? MPI_IN_PLACE : (const void *)s.p;
    if (exclusive) {
        MTEST_CALL(MPI_Exscan(sb, d.p, cnt, MPI_INT, MPI_SUM, comm));
        if (r > 0) CHECK_INTS(what, d.p, cnt, range_sum(seed, 0, r, (int)i));
        else if (!in_place) CHECK_INTS("rank 0's Exscan buffer untouched", d.p, cnt, -1);
    } else {
        MTEST_CALL(MPI_Scan(sb, d.p, cnt, MPI_INT, MPI_SUM, comm));
        CHECK_INTS(what, d.p, cnt, range_sum(seed, 0, r + 1, (int)i));
    }
    gbuf_guards(d, what);
    gbuf_free(&s);
    gbuf_free(&d);
}

static void rs_block(MPI_Comm comm, int cnt, int in_place)
{
    int seed = 31 + cnt;
    char what[96];
    snprintf(what, sizeof what, "MPI_Reduce_scatter_block count %d%s", cnt, in_place ? " in place" : "");
    gbuf s = gbuf_new((size_t)(cnt * n), 0);
    for (int i = 0; i < cnt * n; i++) s.p[i] = ival(seed, r, i);
    if (in_place) {
        MTEST_CALL(MPI_Reduce_scatter_block(MPI_IN_PLACE, s.p, cnt, MPI_INT, MPI_SUM, comm));
        CHECK_INTS(what, s.p, cnt, range_sum(seed, 0, n, r * cnt + (int)i));
        gbuf_guards(s, what);
    } else {
        gbuf d = gbuf_new((size_t)cnt, -1);
        MTEST_CALL(MPI_Reduce_scatter_block(s.p, d.p, cnt, MPI_INT, MPI_SUM, comm));
        CHECK_INTS(what, d.p, cnt, range_sum(seed, 0, n, r * cnt + (int)i));
        gbuf_guards(d, what);
        gbuf_free(&d);
    }
    gbuf_free(&s);
}

static void rs(MPI_Comm comm, int scale, int in_place)
{
    int seed = 51 + scale;
    char what[96];
    snprintf(what, sizeof what, "MPI_Reduce_scatter scale %d%s", scale, in_place ? " in place" : "");
    int *counts = mtest_malloc(sizeof(int) * n);
    int total = 0, before = 0;
    for (int k = 0; k < n; k++) {
        counts[k] = (k % 3 == 1) ? 0 : scale * (k % 4 + 1);
        if (k < r) before += counts[k];
        total += counts[k];
    }
    gbuf s = gbuf_new((size_t)total, 0);
    for (int i = 0; i < total; i++) s.p[i] = ival(seed, r, i);
    if (in_place) {
        MTEST_CALL(MPI_Reduce_scatter(MPI_IN_PLACE, s.p, counts, MPI_INT, MPI_SUM, comm));
        CHECK_INTS(what, s.p, counts[r], range_sum(seed, 0, n, before + (int)i));
        gbuf_guards(s, what);
    } else {
        gbuf d = gbuf_new((size_t)counts[r], -1);
        MTEST_CALL(MPI_Reduce_scatter(s.p, d.p, counts, MPI_INT, MPI_SUM, comm));
        CHECK_INTS(what, d.p, counts[r], range_sum(seed, 0, n, before + (int)i));
        gbuf_guards(d, what);
        gbuf_free(&d);
    }
    gbuf_free(&s);
    free(counts);
}

static void run(MPI_Comm comm)
{
    MTEST_CALL(MPI_Comm_rank(comm, &r));
    MTEST_CALL(MPI_Comm_size(comm, &n));
    static const int counts[] = {0, 1, 5, 1000, 40000};
    for (size_t k = 0; k < sizeof counts / sizeof counts[0]; k++) {
        for (int ip = 0; ip < 2; ip++) {
            scan(comm, counts[k], 0, ip);
            scan(comm, counts[k], 1, ip);
            rs_block(comm, counts[k], ip);
        }
    }
    static const int scales[] = {1, 7, 20000};
    for (size_t k = 0; k < sizeof scales / sizeof scales[0]; k++) {
        rs(comm, scales[k], 0);
        rs(comm, scales[k], 1);
    }
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    run(MPI_COMM_WORLD);
    MPI_Comm rev = reversed_world();
    run(rev);
    MTEST_CALL(MPI_Comm_free(&rev));
    return mtest_finalize();
}
