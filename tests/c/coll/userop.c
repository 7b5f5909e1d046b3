/*
 * User-defined operations: a non-commutative 2x2 matrix product (results prove the
 * canonical rank order x0 * x1 * ... * x(n-1)) with MPI_Reduce to every root,
 * MPI_Allreduce (small, and large enough for the reduce+broadcast algorithm), MPI_Scan,
 * MPI_Exscan, MPI_Reduce_scatter_block; a commutative user op; the datatype and count the
 * user function receives; a user op on a non-contiguous datatype; MPI_Reduce_local;
 * MPI_Op_commutative; MPI_Op_free.
 */
#include "mtest.h"
#include "common.h"

static int r, n;
static MPI_Datatype mat_t; /* 4 unsigned ints: a 2x2 matrix, row major */

typedef struct {
    unsigned a, b, c, d;
} mat;

static mat mul(mat x, mat y)
{
    mat z = {x.a * y.a + x.b * y.c, x.a * y.b + x.b * y.d, x.c * y.a + x.d * y.c, x.c * y.b + x.d * y.d};
    return z;
}

static mat mval(int rank, int i)
{
    mat m = {(unsigned)((rank + i) % 3 + 1), 1u, (unsigned)(rank % 2), (unsigned)(i % 2 + 1)};
    return m;
}

/* The product of ranks lo..hi-1 for element i, in rank order. */
static mat prod(int lo, int hi, int i)
{
    mat p = {1, 0, 0, 1};
    for (int k = lo; k < hi; k++) p = mul(p, mval(k, i));
    return p;
}

static int bad_type_seen;

static void matmul_fn(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    if (*dt != mat_t) bad_type_seen = 1;
    mat *x = in, *y = inout;
    for (int i = 0; i < *len; i++) y[i] = mul(x[i], y[i]);
}

/* Same product on matrices given as MPI_UNSIGNED quadruples. */
static void matmul_uint_fn(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    if (*dt != MPI_UNSIGNED || *len % 4) bad_type_seen = 1;
    mat *x = in, *y = inout;
    for (int i = 0; i < *len / 4; i++) y[i] = mul(x[i], y[i]);
}

static void check_mats(const char *what, const mat *got, int cnt, int lo, int hi)
{
    for (int i = 0; i < cnt; i++) {
        mat e = prod(lo, hi, i);
        if (memcmp(&e, &got[i], sizeof e)) {
            mtest_fail_at(__FILE__, __LINE__, "%s: matrix %d: expected [%u %u %u %u] got [%u %u %u %u]", what, i,
                          e.a, e.b, e.c, e.d, got[i].a, got[i].b, got[i].c, got[i].d);
            return;
        }
    }
}

static void noncommutative(MPI_Comm comm, MPI_Op op)
{
    static const int counts[] = {1, 3, 20000};
    for (size_t k = 0; k < sizeof counts / sizeof counts[0]; k++) {
        int cnt = counts[k];
        mat *s = mtest_malloc(sizeof(mat) * cnt * n), *d = mtest_malloc(sizeof(mat) * cnt * n);
        for (int i = 0; i < cnt * n; i++) s[i] = mval(r, i);
        char what[96];
        for (int root = 0; root < n; root++) {
            if (cnt > 3 && root != n - 1) continue;
            MTEST_CALL(MPI_Reduce(s, d, cnt, mat_t, op, root, comm));
            snprintf(what, sizeof what, "MPI_Reduce matrix product root %d count %d", root, cnt);
            if (r == root) check_mats(what, d, cnt, 0, n);
        }
        MTEST_CALL(MPI_Allreduce(s, d, cnt, mat_t, op, comm));
        snprintf(what, sizeof what, "MPI_Allreduce matrix product count %d", cnt);
        check_mats(what, d, cnt, 0, n);
        memcpy(d, s, sizeof(mat) * cnt);
        MTEST_CALL(MPI_Allreduce(MPI_IN_PLACE, d, cnt, mat_t, op, comm));
        check_mats("MPI_Allreduce matrix product in place", d, cnt, 0, n);
        MTEST_CALL(MPI_Scan(s, d, cnt, mat_t, op, comm));
        snprintf(what, sizeof what, "MPI_Scan matrix product count %d", cnt);
        check_mats(what, d, cnt, 0, r + 1);
        MTEST_CALL(MPI_Exscan(s, d, cnt, mat_t, op, comm));
        snprintf(what, sizeof what, "MPI_Exscan matrix product count %d", cnt);
        if (r > 0) check_mats(what, d, cnt, 0, r);
        MTEST_CALL(MPI_Reduce_scatter_block(s, d, cnt, mat_t, op, comm));
        for (int i = 0; i < cnt; i++) {
            mat e = prod(0, n, r * cnt + i);
            if (memcmp(&e, &d[i], sizeof e)) {
                mtest_fail_at(__FILE__, __LINE__, "MPI_Reduce_scatter_block matrix product count %d: matrix %d wrong", cnt, i);
                break;
            }
        }
        free(s);
        free(d);
    }
}

static void sum_abs_fn(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    int *x = in, *y = inout;
    for (int i = 0; i < *len; i++) y[i] = abs(x[i]) + abs(y[i]);
}

/* A vector type: 2 ints of every 3; the op must see the ints where the type puts them. */
static MPI_Datatype vec_t;
static void vec_fn(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    if (*dt != vec_t) bad_type_seen = 1;
    int *x = in, *y = inout;
    for (int e = 0; e < *len; e++)
        for (int k = 0; k < 2; k++) y[e * 6 + 3 * k] += x[e * 6 + 3 * k];
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    r = mtest_rank();
    n = mtest_size();
    MTEST_CALL(MPI_Type_contiguous(4, MPI_UNSIGNED, &mat_t));
    MTEST_CALL(MPI_Type_commit(&mat_t));

    MPI_Op matmul, matmul_uint, sum_abs, vec_op;
    MTEST_CALL(MPI_Op_create(matmul_fn, 0, &matmul));
    MTEST_CALL(MPI_Op_create(matmul_uint_fn, 0, &matmul_uint));
    MTEST_CALL(MPI_Op_create(sum_abs_fn, 1, &sum_abs));
    int commute = -1;
    MTEST_CALL(MPI_Op_commutative(matmul, &commute));
    MTEST_EQ("MPI_Op_commutative of a non-commutative op", 0, commute);
    MTEST_CALL(MPI_Op_commutative(sum_abs, &commute));
    MTEST_EQ("MPI_Op_commutative of a commutative op", 1, commute);
    MTEST_CALL(MPI_Op_commutative(MPI_SUM, &commute));
    MTEST_EQ("MPI_Op_commutative(MPI_SUM)", 1, commute);

    noncommutative(MPI_COMM_WORLD, matmul);
    MPI_Comm rev = reversed_world();
    r = n - 1 - r;
    noncommutative(rev, matmul);
    r = n - 1 - r;
    MTEST_CALL(MPI_Comm_free(&rev));

    /* The same op on plain unsigned ints: count and datatype as the caller gave them. */
    mat s[2] = {mval(r, 0), mval(r, 1)}, d[2];
    MTEST_CALL(MPI_Allreduce(s, d, 8, MPI_UNSIGNED, matmul_uint, MPI_COMM_WORLD));
    check_mats("MPI_Allreduce of MPI_UNSIGNED with a matrix op", d, 2, 0, n);
    MTEST_EQ("user function saw the caller's datatype", 0, bad_type_seen);

    /* Commutative user op. */
    int si[4], di[4];
    for (int i = 0; i < 4; i++) si[i] = (r + i) % 2 ? -(r + i) : r + i;
    MTEST_CALL(MPI_Allreduce(si, di, 4, MPI_INT, sum_abs, MPI_COMM_WORLD));
    for (int i = 0; i < 4; i++) {
        int e = 0;
        for (int k = 0; k < n; k++) e += k + i;
        if (n == 1) e = si[i];
        MTEST_EQ("MPI_Allreduce with a commutative user op", e, di[i]);
    }

    /* Non-contiguous type: holes untouched, op applied to the data ints. */
    MTEST_CALL(MPI_Type_vector(2, 1, 3, MPI_INT, &vec_t));
    MTEST_CALL(MPI_Type_create_resized(vec_t, 0, 6 * sizeof(int), &vec_t));
    MTEST_CALL(MPI_Type_commit(&vec_t));
    MTEST_CALL(MPI_Op_create(vec_fn, 0, &vec_op));
    int vs[12], vd[12];
    for (int i = 0; i < 12; i++) vs[i] = r * 100 + i, vd[i] = -1;
    MTEST_CALL(MPI_Allreduce(vs, vd, 2, vec_t, vec_op, MPI_COMM_WORLD));
    for (int i = 0; i < 12; i++) {
        if (i % 3 == 0) {
            long long e = 0;
            for (int k = 0; k < n; k++) e += k * 100 + i;
            MTEST_EQ("user op on a vector type", e, vd[i]);
        } else {
            MTEST_EQ("hole of the vector type untouched", -1, vd[i]);
        }
    }
    MTEST_EQ("user function saw the vector type", 0, bad_type_seen);

    /* MPI_Reduce_local with a user op: inout = in op inout. */
    mat a[1] = {mval(1, 0)}, b[1] = {mval(2, 0)};
    MTEST_CALL(MPI_Reduce_local(a, b, 1, mat_t, matmul));
    check_mats("MPI_Reduce_local with a user op", b, 1, 1, 3);

    MTEST_CALL(MPI_Op_free(&matmul));
    MTEST_CHECK(matmul == MPI_OP_NULL, "MPI_Op_free did not set the handle to MPI_OP_NULL");
    MTEST_CALL(MPI_Op_free(&matmul_uint));
    MTEST_CALL(MPI_Op_free(&sum_abs));
    MTEST_CALL(MPI_Op_free(&vec_op));
    MTEST_CALL(MPI_Type_free(&vec_t));
    MTEST_CALL(MPI_Type_free(&mat_t));
    return mtest_finalize();
}
