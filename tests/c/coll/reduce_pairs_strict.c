/*
 * MPI_Reduce on two-member communicators, the shape the pipelined shared-memory
 * reduction serves (pieces copied by the non-root while the root folds them): both
 * roots, separate and in-place buffers, sizes around the piece and slot boundaries,
 * a non-commutative user operation (2x2 matrix product, proving x0 op x1 order), a
 * commutative user operation, a non-contiguous datatype, an element larger than a
 * piece, and back-to-back calls with alternating roots interleaved with large
 * MPI_Bcast and MPI_Allreduce (the staging areas are reused without barriers).
 * With more than two ranks, MPI_COMM_WORLD is split into pairs (an odd rank out idles).
 */
#include "mtest.h"
#include "common.h"

static int r;

typedef struct {
    unsigned a, b, c, d;
} mat;

static MPI_Datatype mat_t;

static mat mul(mat x, mat y)
{
    mat z = {x.a * y.a + x.b * y.c, x.a * y.b + x.b * y.d, x.c * y.a + x.d * y.c, x.c * y.b + x.d * y.d};
    return z;
}

static mat mval(int rank, int i, int seed)
{
    mat m = {(unsigned)((rank + i + seed) % 5 + 1), (unsigned)(seed % 3), (unsigned)(rank % 2),
             (unsigned)(i % 3 + 1)};
    return m;
}

static void matmul_fn(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    mat *x = in, *y = inout;
    for (int i = 0; i < *len; i++) y[i] = mul(x[i], y[i]);
}

static void maxabs_fn(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    int *x = in, *y = inout;
    for (int i = 0; i < *len; i++) {
        int ax = x[i] < 0 ? -x[i] : x[i], ay = y[i] < 0 ? -y[i] : y[i];
        y[i] = ax > ay ? ax : ay;
    }
}

/* MPI_SUM on ints, separate buffers or in place, guard words checked. */
static void sum_ints(MPI_Comm pair, int me, int root, int cnt, int in_place, int seed)
{
    char what[128];
    snprintf(what, sizeof what, "MPI_Reduce SUM root %d count %d%s", root, cnt, in_place ? " in place" : "");
    gbuf s = gbuf_new((size_t)cnt, 0), d = gbuf_new((size_t)cnt, -1);
    for (int i = 0; i < cnt; i++) s.p[i] = cval(seed, me, i);
    if (me == root && in_place) {
        memcpy(d.p, s.p, sizeof(int) * (size_t)cnt);
        MTEST_CALL(MPI_Reduce(MPI_IN_PLACE, d.p, cnt, MPI_INT, MPI_SUM, root, pair));
    } else {
        MTEST_CALL(MPI_Reduce(s.p, me == root ? d.p : NULL, cnt, MPI_INT, MPI_SUM, root, pair));
    }
    if (me == root) {
        CHECK_INTS(what, d.p, cnt, (int)((unsigned)cval(seed, 0, (int)i) + (unsigned)cval(seed, 1, (int)i)));
    } else {
        CHECK_INTS(what, d.p, cnt, -1);
    }
    CHECK_INTS(what, s.p, cnt, cval(seed, me, (int)i));
    gbuf_guards(s, what);
    gbuf_guards(d, what);
    gbuf_free(&s);
    gbuf_free(&d);
}

/* The non-commutative matrix product: the root must get x0 * x1 at both roots. */
static void matrix_product(MPI_Comm pair, int me, MPI_Op op, int root, int cnt, int in_place)
{
    int seed = cnt % 11 + root;
    mat *s = mtest_malloc(sizeof(mat) * (size_t)cnt), *d = mtest_malloc(sizeof(mat) * (size_t)cnt);
    for (int i = 0; i < cnt; i++) s[i] = mval(me, i, seed);
    if (me == root && in_place) {
        memcpy(d, s, sizeof(mat) * (size_t)cnt);
        MTEST_CALL(MPI_Reduce(MPI_IN_PLACE, d, cnt, mat_t, op, root, pair));
    } else {
        MTEST_CALL(MPI_Reduce(s, d, cnt, mat_t, op, root, pair));
    }
    if (me == root) {
        for (int i = 0; i < cnt; i++) {
            mat e = mul(mval(0, i, seed), mval(1, i, seed));
            if (memcmp(&e, &d[i], sizeof e)) {
                mtest_fail_at(__FILE__, __LINE__,
                              "matrix product root %d count %d%s: element %d is {%u %u %u %u}, expected {%u %u %u %u}",
                              root, cnt, in_place ? " in place" : "", i, d[i].a, d[i].b, d[i].c, d[i].d, e.a,
                              e.b, e.c, e.d);
                break;
            }
        }
    }
    free(s);
    free(d);
}

/* MPI_SUM on a vector of ints (every other int; holes keep their value). */
static void sum_vector(MPI_Comm pair, int me, int root, int cnt)
{
    MPI_Datatype vec;
    MTEST_CALL(MPI_Type_vector(2, 1, 2, MPI_INT, &vec)); /* ints 0 and 2, extent 3 ints */
    MTEST_CALL(MPI_Type_commit(&vec));
    size_t len = (size_t)cnt * 3;
    gbuf s = gbuf_new(len, 7), d = gbuf_new(len, -5);
    for (size_t i = 0; i < len; i++) s.p[i] = cval(31, me, (int)i);
    MTEST_CALL(MPI_Reduce(s.p, d.p, cnt, vec, MPI_SUM, root, pair));
    if (me == root) {
        for (size_t i = 0; i < len; i++) {
            int want = i % 3 == 1 ? -5 : (int)((unsigned)cval(31, 0, (int)i) + (unsigned)cval(31, 1, (int)i));
            if (d.p[i] != want) {
                mtest_fail_at(__FILE__, __LINE__, "vector SUM root %d count %d: int %zu is %d, expected %d", root,
                              cnt, i, d.p[i], want);
                break;
            }
        }
    }
    gbuf_guards(d, "vector SUM");
    gbuf_free(&s);
    gbuf_free(&d);
    MTEST_CALL(MPI_Type_free(&vec));
}

/* One element of 40000 bytes (more than a piece of the staging area). */
static void big_elements(MPI_Comm pair, int me, int root)
{
    MPI_Datatype big;
    const int ints = 10000, cnt = 3;
    MTEST_CALL(MPI_Type_contiguous(ints, MPI_INT, &big));
    MTEST_CALL(MPI_Type_commit(&big));
    gbuf s = gbuf_new((size_t)ints * cnt, 0), d = gbuf_new((size_t)ints * cnt, -1);
    for (int i = 0; i < ints * cnt; i++) s.p[i] = cval(41, me, i);
    MTEST_CALL(MPI_Reduce(s.p, d.p, cnt, big, MPI_SUM, root, pair));
    if (me == root) {
        CHECK_INTS("40000-byte elements", d.p, ints * cnt,
                   (int)((unsigned)cval(41, 0, (int)i) + (unsigned)cval(41, 1, (int)i)));
    }
    gbuf_free(&s);
    gbuf_free(&d);
    MTEST_CALL(MPI_Type_free(&big));
}

/* Reduces, broadcasts and allreduces back to back, roots alternating, no barriers. */
static void back_to_back(MPI_Comm pair, int me)
{
    const int cnt = 100000;
    gbuf s = gbuf_new(cnt, 0), d = gbuf_new(cnt, 0);
    for (int round = 0; round < 12; round++) {
        int root = round % 2;
        for (int i = 0; i < cnt; i++) s.p[i] = cval(round, me, i);
        MTEST_CALL(MPI_Reduce(s.p, d.p, cnt, MPI_INT, MPI_SUM, root, pair));
        if (me == root) {
            CHECK_INTS("back-to-back reduce", d.p, cnt,
                       (int)((unsigned)cval(round, 0, (int)i) + (unsigned)cval(round, 1, (int)i)));
        }
        if (round % 3 == 0) {
            for (int i = 0; i < cnt; i++) d.p[i] = me == root ? cval(round + 50, 0, i) : 0;
            MTEST_CALL(MPI_Bcast(d.p, cnt, MPI_INT, root, pair));
            CHECK_INTS("back-to-back bcast", d.p, cnt, cval(round + 50, 0, (int)i));
        } else if (round % 3 == 1) {
            MTEST_CALL(MPI_Allreduce(s.p, d.p, cnt, MPI_INT, MPI_SUM, pair));
            CHECK_INTS("back-to-back allreduce", d.p, cnt,
                       (int)((unsigned)cval(round, 0, (int)i) + (unsigned)cval(round, 1, (int)i)));
        }
    }
    gbuf_free(&s);
    gbuf_free(&d);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    r = mtest_rank();
    int n = mtest_size();
    MPI_Comm pair;
    int color = (n % 2 == 1 && r == n - 1) ? MPI_UNDEFINED : r / 2;
    /* Reverse order inside each pair: world rank 2k+1 is pair rank 0. */
    MTEST_CALL(MPI_Comm_split(MPI_COMM_WORLD, color, -r, &pair));
    if (pair != MPI_COMM_NULL) {
        int me;
        MTEST_CALL(MPI_Comm_rank(pair, &me));
        MTEST_CALL(MPI_Type_contiguous(4, MPI_UNSIGNED, &mat_t));
        MTEST_CALL(MPI_Type_commit(&mat_t));
        MPI_Op matmul, maxabs;
        MTEST_CALL(MPI_Op_create(matmul_fn, 0, &matmul));
        MTEST_CALL(MPI_Op_create(maxabs_fn, 1, &maxabs));
        /* Ints: below and above a 2 KiB slot, one piece of 32 KiB and around it, many
         * pieces, 1 MiB and beyond (where the point-to-point algorithms take over). */
        static const int counts[] = {1, 512, 513, 8191, 8192, 8193, 40000, 262144, 300001};
        for (size_t k = 0; k < sizeof counts / sizeof counts[0]; k++) {
            for (int root = 0; root < 2; root++) {
                sum_ints(pair, me, root, counts[k], 0, (int)k);
                sum_ints(pair, me, root, counts[k], 1, (int)k + 100);
            }
        }
        static const int mats[] = {100, 2049, 5000, 70001};
        for (size_t k = 0; k < sizeof mats / sizeof mats[0]; k++) {
            for (int root = 0; root < 2; root++) {
                matrix_product(pair, me, matmul, root, mats[k], 0);
                matrix_product(pair, me, matmul, root, mats[k], 1);
            }
        }
        for (int root = 0; root < 2; root++) {
            const int cnt = 30000;
            gbuf s = gbuf_new(cnt, 0), d = gbuf_new(cnt, 0);
            for (int i = 0; i < cnt; i++) s.p[i] = cval(9, me, i) - (1 << 29);
            MTEST_CALL(MPI_Reduce(s.p, d.p, cnt, MPI_INT, maxabs, root, pair));
            if (me == root) {
                for (int i = 0; i < cnt; i++) {
                    int a = cval(9, 0, i) - (1 << 29), b = cval(9, 1, i) - (1 << 29);
                    a = a < 0 ? -a : a;
                    b = b < 0 ? -b : b;
                    if (d.p[i] != (a > b ? a : b)) {
                        mtest_fail_at(__FILE__, __LINE__, "commutative user op root %d: element %d", root, i);
                        break;
                    }
                }
            }
            gbuf_free(&s);
            gbuf_free(&d);
            sum_vector(pair, me, root, 20000);
            big_elements(pair, me, root);
        }
        back_to_back(pair, me);
        MTEST_CALL(MPI_Op_free(&matmul));
        MTEST_CALL(MPI_Op_free(&maxabs));
        MTEST_CALL(MPI_Type_free(&mat_t));
        MTEST_CALL(MPI_Comm_free(&pair));
    }
    return mtest_finalize();
}
