/*
 * The (operation, predefined type) pairs outside the standard's table that MPICH and
 * Open MPI both accept, and so oxmpi too (docs/errors.md, "Operations beyond the
 * standard's table"): every MAX/MIN/SUM/PROD/LAND/LOR/LXOR/BAND/BOR/BXOR on MPI_CHAR and
 * MPI_CHARACTER (C signed char arithmetic, sums and products wrap), and LAND/LOR/LXOR on
 * MPI_INTEGER1/2/8, MPI_AINT, MPI_OFFSET and MPI_COUNT. Each pair runs through
 * MPI_Reduce_local and MPI_Allreduce and the values are checked; pairs both
 * implementations reject stay rejected with MPI_ERR_OP.
 *
 * MPI_CHARACTER's MAX/MIN get only values 0..127: Open MPI orders it as unsigned char,
 * MPICH (and oxmpi) as signed char.
 */
#include "mtest.h"

#define N 6

typedef struct {
    MPI_Datatype ty;
    const char *name;
    int size;     /* bytes per element */
    int nonneg;   /* values 0..127 only for MAX/MIN */
} tinfo;

typedef struct {
    MPI_Op op;
    const char *name;
} oinfo;

static const oinfo all_ops[] = {
    {MPI_MAX, "MPI_MAX"},   {MPI_MIN, "MPI_MIN"},   {MPI_SUM, "MPI_SUM"},   {MPI_PROD, "MPI_PROD"},
    {MPI_LAND, "MPI_LAND"}, {MPI_LOR, "MPI_LOR"},   {MPI_LXOR, "MPI_LXOR"}, {MPI_BAND, "MPI_BAND"},
    {MPI_BOR, "MPI_BOR"},   {MPI_BXOR, "MPI_BXOR"},
};

/* Element i of rank r: small signed values with zeros among them. */
static long long val(int r, int i, int nonneg)
{
    static const int v[] = {0, 3, -7, 100, -128, 1, 0, 127, -1, 42, 0, -99, 5};
    int x = v[(r * 5 + i * 3) % 13];
    if ((r + i) % 4 == 0) {
        x = 0;
    }
    return nonneg ? (x < 0 ? -x - (x == -128) : x) : x;
}

/* Wraps x to the element size as a signed value (what the C types hold). */
static long long wrap(long long x, int size)
{
    switch (size) {
    case 1:
        return (signed char)x;
    case 2:
        return (short)x;
    case 4:
        return (int)x;
    default:
        return x;
    }
}

static long long apply(MPI_Op op, long long a, long long b, int size)
{
    if (op == MPI_MAX) return a > b ? a : b;
    if (op == MPI_MIN) return a < b ? a : b;
    if (op == MPI_SUM) return wrap((long long)((unsigned long long)a + (unsigned long long)b), size);
    if (op == MPI_PROD) return wrap((long long)((unsigned long long)a * (unsigned long long)b), size);
    if (op == MPI_LAND) return (a != 0) && (b != 0);
    if (op == MPI_LOR) return (a != 0) || (b != 0);
    if (op == MPI_LXOR) return (a != 0) != (b != 0);
    if (op == MPI_BAND) return a & b;
    if (op == MPI_BOR) return a | b;
    return a ^ b;
}

static void put(void *buf, int i, int size, long long x)
{
    char *p = (char *)buf + (size_t)i * (size_t)size;
    signed char c = (signed char)x;
    short s = (short)x;
    switch (size) {
    case 1:
        memcpy(p, &c, 1);
        break;
    case 2:
        memcpy(p, &s, 2);
        break;
    default:
        memcpy(p, &x, 8);
        break;
    }
}

static long long get(const void *buf, int i, int size)
{
    const char *p = (const char *)buf + (size_t)i * (size_t)size;
    signed char c;
    short s;
    long long x;
    switch (size) {
    case 1:
        memcpy(&c, p, 1);
        return c;
    case 2:
        memcpy(&s, p, 2);
        return s;
    default:
        memcpy(&x, p, 8);
        return x;
    }
}

static void check_pair(const tinfo *t, const oinfo *o, int rank, int size)
{
    int mm = o->op == MPI_MAX || o->op == MPI_MIN;
    int nonneg = t->nonneg && mm;
    char a[8 * N], b[8 * N], out[8 * N];
    char what[128];

    /* MPI_Reduce_local: inout = in op inout, rank 1's values into rank 0's. */
    for (int i = 0; i < N; i++) {
        put(a, i, t->size, val(1, i, nonneg));
        put(b, i, t->size, val(0, i, nonneg));
    }
    snprintf(what, sizeof what, "MPI_Reduce_local %s on %s", o->name, t->name);
    int e = MPI_Reduce_local(a, b, N, t->ty, o->op);
    MTEST_CHECK(e == MPI_SUCCESS, "%s failed: %s", what, mtest_errstr(e));
    if (e == MPI_SUCCESS) {
        for (int i = 0; i < N; i++) {
            long long want = apply(o->op, val(1, i, nonneg), val(0, i, nonneg), t->size);
            MTEST_CHECK(get(b, i, t->size) == want, "%s element %d: got %lld, expected %lld", what, i,
                        get(b, i, t->size), want);
        }
    }

    /* MPI_Allreduce over every rank. */
    for (int i = 0; i < N; i++) {
        put(a, i, t->size, val(rank, i, nonneg));
        put(out, i, t->size, -3);
    }
    snprintf(what, sizeof what, "MPI_Allreduce %s on %s", o->name, t->name);
    e = MPI_Allreduce(a, out, N, t->ty, o->op, MPI_COMM_WORLD);
    MTEST_CHECK(e == MPI_SUCCESS, "%s failed: %s", what, mtest_errstr(e));
    if (e == MPI_SUCCESS) {
        for (int i = 0; i < N; i++) {
            /* One process: its values unchanged (no operation is applied). */
            long long want = val(0, i, nonneg);
            for (int r = 1; r < size; r++) {
                want = apply(o->op, val(r, i, nonneg), want, t->size);
            }
            MTEST_CHECK(get(out, i, t->size) == want, "%s element %d: got %lld, expected %lld", what, i,
                        get(out, i, t->size), want);
        }
    }
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int rank = mtest_rank(), size = mtest_size();

    const tinfo text[] = {
        {MPI_CHAR, "MPI_CHAR", 1, 0},
        {MPI_CHARACTER, "MPI_CHARACTER", 1, 1},
    };
    for (int t = 0; t < 2; t++) {
        for (int o = 0; o < (int)(sizeof all_ops / sizeof *all_ops); o++) {
            check_pair(&text[t], &all_ops[o], rank, size);
        }
    }

    MTEST_EQ("sizeof(MPI_Aint)", 8, (int)sizeof(MPI_Aint));
    MTEST_EQ("sizeof(MPI_Offset)", 8, (int)sizeof(MPI_Offset));
    MTEST_EQ("sizeof(MPI_Count)", 8, (int)sizeof(MPI_Count));
    const tinfo ints[] = {
        {MPI_INTEGER1, "MPI_INTEGER1", 1, 0}, {MPI_INTEGER2, "MPI_INTEGER2", 2, 0},
        {MPI_INTEGER8, "MPI_INTEGER8", 8, 0}, {MPI_AINT, "MPI_AINT", 8, 0},
        {MPI_OFFSET, "MPI_OFFSET", 8, 0},     {MPI_COUNT, "MPI_COUNT", 8, 0},
    };
    for (int t = 0; t < 6; t++) {
        for (int o = 4; o < 7; o++) { /* LAND, LOR, LXOR */
            check_pair(&ints[t], &all_ops[o], rank, size);
        }
    }

    /* Pairs neither implementation accepts stay errors. */
    int x[2] = {1, 2}, y[2] = {3, 4};
    float f[2] = {1, 2}, g[2] = {3, 4};
    MTEST_EXPECT_CLASS(MPI_ERR_OP, MPI_Reduce_local(x, y, 2, MPI_WCHAR, MPI_SUM));
    MTEST_EXPECT_CLASS(MPI_ERR_OP, MPI_Reduce_local(x, y, 2, MPI_PACKED, MPI_BAND));
    MTEST_EXPECT_CLASS(MPI_ERR_OP, MPI_Reduce_local(f, g, 2, MPI_FLOAT, MPI_BOR));
    MTEST_EXPECT_CLASS(MPI_ERR_OP, MPI_Reduce_local(x, y, 2, MPI_CHAR, MPI_MAXLOC));
    MTEST_EXPECT_CLASS(MPI_ERR_OP, MPI_Allreduce(x, y, 2, MPI_WCHAR, MPI_MAX, MPI_COMM_WORLD));
    MTEST_EQ("MPI_INT untouched by the refused calls", 3, y[0]);
    return mtest_finalize();
}
