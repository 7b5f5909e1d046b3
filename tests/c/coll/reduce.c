/*
 * MPI_Reduce to every root and MPI_Allreduce: zero to large counts (binomial, recursive
 * doubling, Rabenseifner, ring), MPI_SUM on MPI_INT and MPI_MAX on MPI_DOUBLE, MPI_IN_PLACE,
 * a non-root passing NULL as its receive buffer.
 */
#include "mtest.h"
#include "common.h"

static int r, n;

static int ival(int seed, int rank, int i)
{
    return cval(seed, rank, i) % 1000 - 300;
}

static double dval(int seed, int rank, int i)
{
    return (double)(cval(seed, rank, i) % 100000) / 8.0 - 3000.0;
}

static long long isum(int seed, int i)
{
    long long s = 0;
    for (int k = 0; k < n; k++) s += ival(seed, k, i);
    return s;
}

static double dmax(int seed, int i)
{
    double m = dval(seed, 0, i);
    for (int k = 1; k < n; k++) m = dval(seed, k, i) > m ? dval(seed, k, i) : m;
    return m;
}

static void reduce_int(MPI_Comm comm, int root, int cnt, int in_place)
{
    int seed = 20 + cnt + root;
    char what[96];
    snprintf(what, sizeof what, "MPI_Reduce SUM root %d count %d%s", root, cnt, in_place ? " in place" : "");
    gbuf s = gbuf_new((size_t)cnt, 0);
    for (int i = 0; i < cnt; i++) s.p[i] = ival(seed, r, i);
    if (r == root) {
        gbuf d = gbuf_new((size_t)cnt, -1);
        if (in_place) {
            memcpy(d.p, s.p, sizeof(int) * cnt);
            MTEST_CALL(MPI_Reduce(MPI_IN_PLACE, d.p, cnt, MPI_INT, MPI_SUM, root, comm));
        } else {
            MTEST_CALL(MPI_Reduce(s.p, d.p, cnt, MPI_INT, MPI_SUM, root, comm));
        }
        CHECK_INTS(what, d.p, cnt, isum(seed, (int)i));
        gbuf_guards(d, what);
        gbuf_free(&d);
    } else {
        MTEST_CALL(MPI_Reduce(s.p, NULL, cnt, MPI_INT, MPI_SUM, root, comm));
    }
    CHECK_INTS("send buffer unchanged", s.p, cnt, ival(seed, r, (int)i));
    gbuf_free(&s);
}

static void allreduce_int(MPI_Comm comm, int cnt, int in_place)
{
    int seed = 40 + cnt;
    char what[96];
    snprintf(what, sizeof what, "MPI_Allreduce SUM count %d%s", cnt, in_place ? " in place" : "");
    gbuf s = gbuf_new((size_t)cnt, 0);
    for (int i = 0; i < cnt; i++) s.p[i] = ival(seed, r, i);
    gbuf d = gbuf_new((size_t)cnt, -1);
    if (in_place) {
        memcpy(d.p, s.p, sizeof(int) * cnt);
        MTEST_CALL(MPI_Allreduce(MPI_IN_PLACE, d.p, cnt, MPI_INT, MPI_SUM, comm));
    } else {
        MTEST_CALL(MPI_Allreduce(s.p, d.p, cnt, MPI_INT, MPI_SUM, comm));
    }
    CHECK_INTS(what, d.p, cnt, isum(seed, (int)i));
    CHECK_INTS("send buffer unchanged", s.p, cnt, ival(seed, r, (int)i));
    gbuf_guards(d, what);
    gbuf_guards(s, what);
    gbuf_free(&d);
    gbuf_free(&s);
}

static void max_double(MPI_Comm comm, int root, int cnt, int all)
{
    int seed = 60 + cnt + root;
    char what[96];
    snprintf(what, sizeof what, "%s MAX double root %d count %d", all ? "MPI_Allreduce" : "MPI_Reduce", root, cnt);
    double *s = mtest_malloc(sizeof(double) * (cnt + 1)), *d = mtest_malloc(sizeof(double) * (cnt + 1));
    for (int i = 0; i < cnt; i++) s[i] = dval(seed, r, i), d[i] = -1.0;
    if (all) {
        MTEST_CALL(MPI_Allreduce(s, d, cnt, MPI_DOUBLE, MPI_MAX, comm));
    } else {
        MTEST_CALL(MPI_Reduce(s, d, cnt, MPI_DOUBLE, MPI_MAX, root, comm));
    }
    if (all || r == root) {
        for (int i = 0; i < cnt; i++) {
            if (d[i] != dmax(seed, i)) {
                mtest_fail_at(__FILE__, __LINE__, "%s: element %d: expected %g got %g", what, i, dmax(seed, i), d[i]);
                break;
            }
        }
    }
    free(s);
    free(d);
}

static void run(MPI_Comm comm)
{
    MTEST_CALL(MPI_Comm_rank(comm, &r));
    MTEST_CALL(MPI_Comm_size(comm, &n));
    static const int counts[] = {0, 1, 2, 7, 300, 1000, 70000};
    for (size_t k = 0; k < sizeof counts / sizeof counts[0]; k++) {
        int cnt = counts[k];
        for (int root = 0; root < n; root++) {
            if (cnt > 1000 && root > 1 && root != n - 1) continue;
            reduce_int(comm, root, cnt, 0);
            reduce_int(comm, root, cnt, 1);
            max_double(comm, root, cnt, 0);
        }
        allreduce_int(comm, cnt, 0);
        allreduce_int(comm, cnt, 1);
        max_double(comm, 0, cnt, 1);
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
