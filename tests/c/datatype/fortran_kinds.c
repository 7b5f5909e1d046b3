/*
 * Fortran kinds from C: MPI_Type_match_size, MPI_Type_create_f90_integer/real/complex
 * (Fortran's SELECTED_INT_KIND / SELECTED_REAL_KIND on x86-64) and MPI-4.1's
 * MPI_Type_get_value_index.
 *  - match_size gives MPI_REAL4/8/16, MPI_INTEGER1/2/4/8, MPI_COMPLEX8/16/32 and
 *    MPI_ERR_ARG for a size or class without a type;
 *  - an f90 type has the selected size, decodes as MPI_COMBINER_F90_* with its
 *    arguments, is the same handle when asked again, and works in point-to-point and
 *    in MPI_Allreduce;
 *  - get_value_index gives the predefined pair types (which decode as
 *    MPI_COMBINER_NAMED), MPI_DATATYPE_NULL otherwise; MPI_COMBINER_VALUE_INDEX is 20.
 * Passes on MPICH 4.0.2 except what the OXMPI blocks check (MPICH lacks
 * MPI_Type_get_value_index and lets an f90 type be freed).
 */
#include "mtest.h"

#include <stdint.h>

static void match_size(void)
{
    static const struct {
        int cls, size;
        MPI_Datatype want;
    } rows[] = {
        {MPI_TYPECLASS_REAL, 4, MPI_REAL4},        {MPI_TYPECLASS_REAL, 8, MPI_REAL8},
        {MPI_TYPECLASS_REAL, 16, MPI_REAL16},      {MPI_TYPECLASS_INTEGER, 1, MPI_INTEGER1},
        {MPI_TYPECLASS_INTEGER, 2, MPI_INTEGER2},  {MPI_TYPECLASS_INTEGER, 4, MPI_INTEGER4},
        {MPI_TYPECLASS_INTEGER, 8, MPI_INTEGER8},  {MPI_TYPECLASS_COMPLEX, 8, MPI_COMPLEX8},
        {MPI_TYPECLASS_COMPLEX, 16, MPI_COMPLEX16}, {MPI_TYPECLASS_COMPLEX, 32, MPI_COMPLEX32},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        MPI_Datatype t = MPI_DATATYPE_NULL;
        MTEST_CALL(MPI_Type_match_size(rows[i].cls, rows[i].size, &t));
        MTEST_CHECK(t == rows[i].want, "match_size(%d, %d) gave 0x%x", rows[i].cls,
                    rows[i].size, (unsigned)t);
    }
    MPI_Datatype t;
    MTEST_EXPECT_CLASS(MPI_ERR_ARG, MPI_Type_match_size(MPI_TYPECLASS_REAL, 3, &t));
    MTEST_EXPECT_CLASS(MPI_ERR_ARG, MPI_Type_match_size(MPI_TYPECLASS_COMPLEX, 12, &t));
    MTEST_EXPECT_CLASS(MPI_ERR_ARG, MPI_Type_match_size(7, 4, &t));
}

static void decodes_as(MPI_Datatype t, int combiner, int ni, int i0, int i1, int size,
                       const char *what)
{
    int gi = -1, ga = -1, gd = -1, comb = -1, sz = -1, ints[2] = {-1, -1};
    MTEST_CALL(MPI_Type_get_envelope(t, &gi, &ga, &gd, &comb));
    MTEST_CHECK(comb == combiner && gi == ni && ga == 0 && gd == 0,
                "%s: envelope (%d,%d,%d) combiner %d", what, gi, ga, gd, comb);
    MTEST_CALL(MPI_Type_get_contents(t, 2, 0, 0, ints, NULL, NULL));
    MTEST_CHECK(ints[0] == i0 && (ni < 2 || ints[1] == i1), "%s: contents %d %d", what, ints[0],
                ints[1]);
    MTEST_CALL(MPI_Type_size(t, &sz));
    MTEST_EQ("size of the f90 type", size, sz);
}

static void f90_types(void)
{
    MPI_Datatype i9, i9b, i2, i18, r, r2, rq, c;
    MTEST_CALL(MPI_Type_create_f90_integer(9, &i9));
    decodes_as(i9, MPI_COMBINER_F90_INTEGER, 1, 9, 0, 4, "integer(9)");
    MTEST_CALL(MPI_Type_create_f90_integer(9, &i9b));
    MTEST_CHECK(i9 == i9b, "MPI_Type_create_f90_integer(9) twice gave two handles");
    MTEST_CALL(MPI_Type_create_f90_integer(2, &i2));
    decodes_as(i2, MPI_COMBINER_F90_INTEGER, 1, 2, 0, 1, "integer(2)");
    MTEST_CALL(MPI_Type_create_f90_integer(18, &i18));
    decodes_as(i18, MPI_COMBINER_F90_INTEGER, 1, 18, 0, 8, "integer(18)");

    MTEST_CALL(MPI_Type_create_f90_real(6, 30, &r));
    decodes_as(r, MPI_COMBINER_F90_REAL, 2, 6, 30, 4, "real(6,30)");
    MTEST_CALL(MPI_Type_create_f90_real(15, MPI_UNDEFINED, &r2));
    decodes_as(r2, MPI_COMBINER_F90_REAL, 2, 15, MPI_UNDEFINED, 8, "real(15)");
    MTEST_CALL(MPI_Type_create_f90_real(MPI_UNDEFINED, 300, &rq));
    decodes_as(rq, MPI_COMBINER_F90_REAL, 2, MPI_UNDEFINED, 300, 8, "real(range 300)");
    MTEST_CALL(MPI_Type_create_f90_complex(6, MPI_UNDEFINED, &c));
    decodes_as(c, MPI_COMBINER_F90_COMPLEX, 2, 6, MPI_UNDEFINED, 8, "complex(6)");

    /* No such kind: an error (MPICH 4.0.2 says MPI_ERR_OTHER). */
    MPI_Datatype bad;
    MTEST_EXPECT_CLASS2(MPI_ERR_ARG, MPI_ERR_OTHER, MPI_Type_create_f90_integer(19, &bad));
    MTEST_EXPECT_CLASS2(MPI_ERR_ARG, MPI_ERR_OTHER,
                        MPI_Type_create_f90_real(40, MPI_UNDEFINED, &bad));

    /* They communicate and reduce as the selected types: a sum of int32 and doubles. */
    int32_t mine[2] = {mtest_rank() + 1, 10}, sum[2] = {0, 0};
    MTEST_CALL(MPI_Allreduce(mine, sum, 2, i9, MPI_SUM, MPI_COMM_WORLD));
    int n = mtest_size();
    MTEST_EQ("integer(9) sum [0]", n * (n + 1) / 2, sum[0]);
    MTEST_EQ("integer(9) sum [1]", 10 * n, sum[1]);
    double d = 0.5, dsum = 0;
    MTEST_CALL(MPI_Allreduce(&d, &dsum, 1, r2, MPI_SUM, MPI_COMM_WORLD));
    MTEST_CHECK(dsum == 0.5 * n, "real(15) sum %g", dsum);
    if (n > 1) {
        int64_t v[3] = {-1, -1, -1};
        MPI_Status st;
        if (mtest_rank() == 0) {
            int64_t out[3] = {INT64_MAX, -7, 42};
            MTEST_CALL(MPI_Send(out, 3, i18, 1, 3, MPI_COMM_WORLD));
        } else if (mtest_rank() == 1) {
            MTEST_CALL(MPI_Recv(v, 3, i18, 0, 3, MPI_COMM_WORLD, &st));
            MTEST_CHECK(v[0] == INT64_MAX && v[1] == -7 && v[2] == 42, "integer(18) received");
            int cnt = 0;
            MTEST_CALL(MPI_Get_count(&st, i18, &cnt));
            MTEST_EQ("count of integer(18)", 3, cnt);
        }
    }
#ifdef OXMPI
    /* They are predefined: freeing one is an error, and it stays usable. */
    MPI_Datatype copy = i9;
    MTEST_EXPECT_CLASS(MPI_ERR_TYPE, MPI_Type_free(&copy));
    int sz = 0;
    MTEST_CALL(MPI_Type_size(i9, &sz));
    MTEST_EQ("size after the refused free", 4, sz);
#endif
}

static void value_index(void)
{
#ifdef OXMPI
    static const struct {
        MPI_Datatype value, index, pair;
    } rows[] = {
        {MPI_FLOAT, MPI_INT, MPI_FLOAT_INT},
        {MPI_DOUBLE, MPI_INT, MPI_DOUBLE_INT},
        {MPI_LONG, MPI_INT, MPI_LONG_INT},
        {MPI_SHORT, MPI_INT, MPI_SHORT_INT},
        {MPI_INT, MPI_INT, MPI_2INT},
        {MPI_LONG_DOUBLE, MPI_INT, MPI_LONG_DOUBLE_INT},
        {MPI_REAL, MPI_REAL, MPI_2REAL},
        {MPI_DOUBLE_PRECISION, MPI_DOUBLE_PRECISION, MPI_2DOUBLE_PRECISION},
        {MPI_INTEGER, MPI_INTEGER, MPI_2INTEGER},
        {MPI_INT, MPI_DOUBLE, MPI_DATATYPE_NULL},
        {MPI_CHAR, MPI_INT, MPI_DATATYPE_NULL},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        MPI_Datatype got = MPI_BYTE;
        MTEST_CALL(MPI_Type_get_value_index(rows[i].value, rows[i].index, &got));
        MTEST_CHECK(got == rows[i].pair, "value_index row %d gave 0x%x", (int)i, (unsigned)got);
        if (got == MPI_DATATYPE_NULL)
            continue;
        /* The pairs returned are the named types: they decode as MPI_COMBINER_NAMED, not
         * MPI_COMBINER_VALUE_INDEX (kept for value-index types that are not named), and
         * have no contents. */
        int ni = -1, na = -1, nd = -1, comb = -1;
        MTEST_CALL(MPI_Type_get_envelope(got, &ni, &na, &nd, &comb));
        MTEST_CHECK(comb == MPI_COMBINER_NAMED && ni == 0 && na == 0 && nd == 0,
                    "value_index row %d: envelope %d %d %d combiner %d", (int)i, ni, na, nd, comb);
        MPI_Count ci = -1, ca = -1, cc = -1, cd = -1;
        MTEST_CALL(MPI_Type_get_envelope_c(got, &ci, &ca, &cc, &cd, &comb));
        MTEST_CHECK(comb == MPI_COMBINER_NAMED && ci == 0 && ca == 0 && cc == 0 && cd == 0,
                    "value_index row %d: envelope_c combiner %d", (int)i, comb);
        int iv[1];
        MPI_Aint av[1];
        MPI_Datatype dv[1];
        MTEST_EXPECT_CLASS(MPI_ERR_TYPE, MPI_Type_get_contents(got, 0, 0, 0, iv, av, dv));
    }
    /* MPICH's value (mpi.h of 4.1 and later), distinct from every other combiner. */
    MTEST_EQ("MPI_COMBINER_VALUE_INDEX", 20, MPI_COMBINER_VALUE_INDEX);
    static const int others[] = {
        MPI_COMBINER_NAMED,        MPI_COMBINER_DUP,           MPI_COMBINER_CONTIGUOUS,
        MPI_COMBINER_VECTOR,       MPI_COMBINER_HVECTOR,       MPI_COMBINER_INDEXED,
        MPI_COMBINER_HINDEXED,     MPI_COMBINER_INDEXED_BLOCK, MPI_COMBINER_HINDEXED_BLOCK,
        MPI_COMBINER_STRUCT,       MPI_COMBINER_SUBARRAY,      MPI_COMBINER_DARRAY,
        MPI_COMBINER_F90_REAL,     MPI_COMBINER_F90_COMPLEX,   MPI_COMBINER_F90_INTEGER,
        MPI_COMBINER_RESIZED};
    for (size_t i = 0; i < sizeof others / sizeof others[0]; i++)
        MTEST_CHECK(others[i] != MPI_COMBINER_VALUE_INDEX, "combiner %d repeats VALUE_INDEX",
                    others[i]);
    MPI_Datatype got;
    MTEST_EXPECT_CLASS(MPI_ERR_TYPE, MPI_Type_get_value_index(MPI_DATATYPE_NULL, MPI_INT, &got));
    MTEST_EXPECT_CLASS(MPI_ERR_ARG, MPI_Type_get_value_index(MPI_DOUBLE, MPI_INT, NULL));
#endif
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    match_size();
    f90_types();
    value_index();
    return mtest_finalize();
}
