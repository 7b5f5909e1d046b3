/*
 * Every predefined reduction operation on every C datatype the standard allows it for
 * (MPI 4.1 section 6.9.2): MPI_Allreduce across the communicator and MPI_Reduce_local,
 * each checked against a reference computed here in the C type's own arithmetic.
 * Values are small integers so that every result is exact and no integer overflows.
 * MINLOC/MAXLOC values tie across ranks, so the lower-index rule is exercised.
 */
#include "mtest.h"
#include "common.h"
#include <complex.h>
#include <stdbool.h>

#define CNT 6
static int r, n;

static const MPI_Op OPS[10] = {MPI_MAX, MPI_MIN, MPI_SUM, MPI_PROD, MPI_LAND,
                               MPI_LOR, MPI_LXOR, MPI_BAND, MPI_BOR, MPI_BXOR};
static const char *OPNAME[10] = {"MAX", "MIN", "SUM", "PROD", "LAND",
                                 "LOR", "LXOR", "BAND", "BOR", "BXOR"};

/* Contribution of rank k, element i, for operation o. */
static long long ival(int o, int k, int i, int is_signed)
{
    switch (o) {
    case 0:
    case 1: return (k * 7 + i * 3) % 11 - (is_signed ? 5 : 0);
    case 2: return (k * 3 + i) % 5;
    case 3: return (k + i) % 4 == 0 ? 2 : 1;
    case 4:
    case 5:
    case 6: return (k + i) % 3;
    default: return (k * 37 + i * 11) & 0x7f;
    }
}

#define APPLY_INT(o, a, b)                                                                            \
    ((o) == 0 ? ((a) > (b) ? (a) : (b))                                                           \
   : (o) == 1 ? ((a) < (b) ? (a) : (b))                                                           \
   : (o) == 2 ? (a) + (b)                                                                         \
   : (o) == 3 ? (a) * (b)                                                                         \
   : (o) == 4 ? ((a) && (b))                                                                      \
   : (o) == 5 ? ((a) || (b))                                                                      \
   : (o) == 6 ? (!(a) != !(b))                                                                    \
   : (o) == 7 ? ((a) & (b))                                                                       \
   : (o) == 8 ? ((a) | (b))                                                                       \
              : ((a) ^ (b)))

/* The same for floating types, which have only MAX, MIN, SUM, PROD. */
#define APPLY_FLOAT(o, a, b)                                                                      \
    ((o) == 0 ? ((a) > (b) ? (a) : (b))                                                           \
   : (o) == 1 ? ((a) < (b) ? (a) : (b))                                                           \
   : (o) == 2 ? (a) + (b)                                                                         \
              : (a) * (b))

/* Runs op index o (in OPS) on type MT of C type T for ranks first..last. */
#define CHECK_RESULT(TNAME, o, got, ref, where)                                                   \
    for (int i = 0; i < CNT; i++) {                                                               \
        if ((got)[i] != (ref)[i]) {                                                               \
            mtest_fail_at(__FILE__, __LINE__, "%s %s on %s: element %d: expected %lld got %lld",  \
                          where, OPNAME[o], TNAME, i, (long long)(ref)[i], (long long)(got)[i]);  \
            break;                                                                                \
        }                                                                                         \
    }

#define GEN_REAL(FN, T, MT, SIGNED, FIRST_OP, LAST_OP, APPLY)                                            \
    static void FN(void)                                                                          \
    {                                                                                             \
        for (int o = FIRST_OP; o <= LAST_OP; o++) {                                               \
            T s[CNT], d[CNT], ref[CNT], in[CNT], io[CNT], ref2[CNT];                              \
            for (int i = 0; i < CNT; i++) {                                                       \
                s[i] = (T)ival(o, r, i, SIGNED);                                                  \
                d[i] = (T)77;                                                                     \
                ref[i] = (T)ival(o, 0, i, SIGNED);                                                \
                for (int k = 1; k < n; k++) ref[i] = (T)APPLY(o, ref[i], (T)ival(o, k, i, SIGNED)); \
                in[i] = (T)ival(o, r + 1, i, SIGNED);                                             \
                io[i] = (T)ival(o, r + 2, i, SIGNED);                                             \
                ref2[i] = (T)APPLY(o, in[i], io[i]);                                              \
            }                                                                                     \
            MTEST_CALL(MPI_Allreduce(s, d, CNT, MT, OPS[o], MPI_COMM_WORLD));                     \
            CHECK_RESULT(#MT, o, d, ref, "MPI_Allreduce");                                        \
            MTEST_CALL(MPI_Reduce_local(in, io, CNT, MT, OPS[o]));                                \
            CHECK_RESULT(#MT, o, io, ref2, "MPI_Reduce_local");                                   \
        }                                                                                         \
    }

typedef signed char schar;
typedef unsigned char uchar;
typedef unsigned short ushort;
typedef unsigned long ulong;
typedef long long llong;
typedef unsigned long long ullong;
typedef long double ldouble;

/* C integers: all ten operations. */
GEN_REAL(t_schar, schar, MPI_SIGNED_CHAR, 1, 0, 9, APPLY_INT)
GEN_REAL(t_uchar, uchar, MPI_UNSIGNED_CHAR, 0, 0, 9, APPLY_INT)
GEN_REAL(t_short, short, MPI_SHORT, 1, 0, 9, APPLY_INT)
GEN_REAL(t_ushort, ushort, MPI_UNSIGNED_SHORT, 0, 0, 9, APPLY_INT)
GEN_REAL(t_int, int, MPI_INT, 1, 0, 9, APPLY_INT)
GEN_REAL(t_unsigned, unsigned, MPI_UNSIGNED, 0, 0, 9, APPLY_INT)
GEN_REAL(t_long, long, MPI_LONG, 1, 0, 9, APPLY_INT)
GEN_REAL(t_ulong, ulong, MPI_UNSIGNED_LONG, 0, 0, 9, APPLY_INT)
GEN_REAL(t_llong, llong, MPI_LONG_LONG, 1, 0, 9, APPLY_INT)
GEN_REAL(t_llong_int, llong, MPI_LONG_LONG_INT, 1, 0, 9, APPLY_INT)
GEN_REAL(t_ullong, ullong, MPI_UNSIGNED_LONG_LONG, 0, 0, 9, APPLY_INT)
GEN_REAL(t_i8, int8_t, MPI_INT8_T, 1, 0, 9, APPLY_INT)
GEN_REAL(t_i16, int16_t, MPI_INT16_T, 1, 0, 9, APPLY_INT)
GEN_REAL(t_i32, int32_t, MPI_INT32_T, 1, 0, 9, APPLY_INT)
GEN_REAL(t_i64, int64_t, MPI_INT64_T, 1, 0, 9, APPLY_INT)
GEN_REAL(t_u8, uint8_t, MPI_UINT8_T, 0, 0, 9, APPLY_INT)
GEN_REAL(t_u16, uint16_t, MPI_UINT16_T, 0, 0, 9, APPLY_INT)
GEN_REAL(t_u32, uint32_t, MPI_UINT32_T, 0, 0, 9, APPLY_INT)
GEN_REAL(t_u64, uint64_t, MPI_UINT64_T, 0, 0, 9, APPLY_INT)
/* Floating point: MAX, MIN, SUM, PROD. */
GEN_REAL(t_float, float, MPI_FLOAT, 1, 0, 3, APPLY_FLOAT)
GEN_REAL(t_double, double, MPI_DOUBLE, 1, 0, 3, APPLY_FLOAT)
GEN_REAL(t_ldouble, ldouble, MPI_LONG_DOUBLE, 1, 0, 3, APPLY_FLOAT)
/* Logical: LAND, LOR, LXOR. */
GEN_REAL(t_bool, bool, MPI_C_BOOL, 0, 4, 6, APPLY_INT)
/* Byte: BAND, BOR, BXOR. */
GEN_REAL(t_byte, uchar, MPI_BYTE, 0, 7, 9, APPLY_INT)
/* Multi-language integer types: the arithmetic and bitwise operations. */
GEN_REAL(t_aint, MPI_Aint, MPI_AINT, 1, 0, 3, APPLY_INT)
GEN_REAL(t_offset, MPI_Offset, MPI_OFFSET, 1, 0, 3, APPLY_INT)
GEN_REAL(t_count, MPI_Count, MPI_COUNT, 1, 0, 3, APPLY_INT)

/* Complex: SUM and PROD. */
#define GEN_COMPLEX(FN, T, MT)                                                                    \
    static void FN(void)                                                                          \
    {                                                                                             \
        for (int o = 2; o <= 3; o++) {                                                            \
            T s[CNT], d[CNT], ref[CNT], in[CNT], io[CNT], ref2[CNT];                              \
            for (int i = 0; i < CNT; i++) {                                                       \
                for (int k = 0; k < n + 3; k++) {                                                 \
                    T z = o == 2 ? (T)((k + i) % 3) + (T)((2 * k + i) % 3) * I                    \
                                 : (T)1 + (T)((k + i) % 2) * I;                                   \
                    if (k == r) s[i] = z;                                                         \
                    if (k == 0) ref[i] = z;                                                       \
                    else if (k < n) ref[i] = o == 2 ? ref[i] + z : ref[i] * z;                    \
                    if (k == r + 1) in[i] = z;                                                    \
                    if (k == r + 2) io[i] = z;                                                    \
                }                                                                                 \
                ref2[i] = o == 2 ? in[i] + io[i] : in[i] * io[i];                                 \
                d[i] = 0;                                                                         \
            }                                                                                     \
            MTEST_CALL(MPI_Allreduce(s, d, CNT, MT, OPS[o], MPI_COMM_WORLD));                     \
            MTEST_CALL(MPI_Reduce_local(in, io, CNT, MT, OPS[o]));                                \
            for (int i = 0; i < CNT; i++) {                                                       \
                if (d[i] != ref[i] || io[i] != ref2[i]) {                                         \
                    mtest_fail_at(__FILE__, __LINE__, "%s on %s: element %d wrong", OPNAME[o],    \
                                  #MT, i);                                                        \
                    break;                                                                        \
                }                                                                                 \
            }                                                                                     \
        }                                                                                         \
    }

GEN_COMPLEX(t_cfloat, float _Complex, MPI_C_FLOAT_COMPLEX)
GEN_COMPLEX(t_cdouble, double _Complex, MPI_C_DOUBLE_COMPLEX)
GEN_COMPLEX(t_cldouble, long double _Complex, MPI_C_LONG_DOUBLE_COMPLEX)
GEN_COMPLEX(t_ccomplex, float _Complex, MPI_C_COMPLEX)

/* MINLOC / MAXLOC on the pair types; ties resolved to the lower index. */
#define GEN_PAIR(FN, T, MT)                                                                       \
    static void FN(void)                                                                          \
    {                                                                                             \
        struct p { T v; int i; };                                                                 \
        MPI_Op ops[2] = {MPI_MINLOC, MPI_MAXLOC};                                                 \
        for (int o = 0; o < 2; o++) {                                                             \
            struct p s[CNT], d[CNT], ref[CNT], in[CNT], io[CNT], ref2[CNT];                       \
            memset(s, 0, sizeof s); memset(d, 0, sizeof d); memset(ref, 0, sizeof ref);           \
            memset(in, 0, sizeof in); memset(io, 0, sizeof io); memset(ref2, 0, sizeof ref2);     \
            for (int e = 0; e < CNT; e++) {                                                       \
                for (int k = 0; k < n + 3; k++) {                                                 \
                    struct p x;                                                                   \
                    memset(&x, 0, sizeof x);                                                      \
                    x.v = (T)((k * 5 + e) % 4);                                                   \
                    x.i = ((k * 5) % 7) * 10 + e;                                                 \
                    if (k == r) s[e] = x;                                                         \
                    if (k == r + 1) in[e] = x;                                                    \
                    if (k == r + 2) io[e] = x;                                                    \
                    if (k >= n) continue;                                                         \
                    if (k == 0) { ref[e] = x; continue; }                                         \
                    int better = o == 0 ? x.v < ref[e].v : x.v > ref[e].v;                        \
                    if (better || (x.v == ref[e].v && x.i < ref[e].i)) ref[e] = x;                \
                }                                                                                 \
                int better = o == 0 ? in[e].v < io[e].v : in[e].v > io[e].v;                      \
                ref2[e] = (better || (in[e].v == io[e].v && in[e].i < io[e].i)) ? in[e] : io[e];  \
            }                                                                                     \
            MTEST_CALL(MPI_Allreduce(s, d, CNT, MT, ops[o], MPI_COMM_WORLD));                     \
            MTEST_CALL(MPI_Reduce_local(in, io, CNT, MT, ops[o]));                                \
            for (int e = 0; e < CNT; e++) {                                                       \
                if (d[e].v != ref[e].v || d[e].i != ref[e].i) {                                   \
                    mtest_fail_at(__FILE__, __LINE__, "%s on %s: element %d: expected (%g,%d) got (%g,%d)", \
                                  o ? "MAXLOC" : "MINLOC", #MT, e, (double)ref[e].v, ref[e].i,    \
                                  (double)d[e].v, d[e].i);                                        \
                    break;                                                                        \
                }                                                                                 \
                if (io[e].v != ref2[e].v || io[e].i != ref2[e].i) {                               \
                    mtest_fail_at(__FILE__, __LINE__, "MPI_Reduce_local %s on %s: element %d wrong", \
                                  o ? "MAXLOC" : "MINLOC", #MT, e);                               \
                    break;                                                                        \
                }                                                                                 \
            }                                                                                     \
        }                                                                                         \
    }

GEN_PAIR(t_float_int, float, MPI_FLOAT_INT)
GEN_PAIR(t_double_int, double, MPI_DOUBLE_INT)
GEN_PAIR(t_long_int, long, MPI_LONG_INT)
GEN_PAIR(t_2int, int, MPI_2INT)
GEN_PAIR(t_short_int, short, MPI_SHORT_INT)
GEN_PAIR(t_ldouble_int, long double, MPI_LONG_DOUBLE_INT)

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    r = mtest_rank();
    n = mtest_size();
    void (*tests[])(void) = {
        t_schar, t_uchar, t_short, t_ushort, t_int, t_unsigned, t_long, t_ulong, t_llong,
        t_llong_int, t_ullong, t_i8, t_i16, t_i32, t_i64, t_u8, t_u16, t_u32, t_u64, t_float,
        t_double, t_ldouble, t_bool, t_byte, t_aint, t_offset, t_count, t_cfloat, t_cdouble,
        t_cldouble, t_ccomplex, t_float_int, t_double_int, t_long_int, t_2int, t_short_int,
        t_ldouble_int,
    };
    for (size_t k = 0; k < sizeof tests / sizeof tests[0]; k++) tests[k]();
    return mtest_finalize();
}
