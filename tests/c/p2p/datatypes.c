/*
 * Every predefined C datatype sent and received with its matching C type (MPI_PACKED with
 * data made by MPI_Pack and read back with MPI_Unpack): values checked
 * element by element (so padding bytes of long double and of the pair types are ignored),
 * MPI_Get_count for the type, MPI_Pack_size sanity for each type, and MPI_Get_count giving
 * MPI_UNDEFINED when the byte count is not a multiple of the type size.
 * Pairs: rank r exchanges with r^1 (or itself when r^1 does not exist).
 */
#include "mtest.h"

#include <complex.h>
#include <stdbool.h>
#include <wchar.h>

static const int counts[] = {0, 1, 37, 1000};
#define NCOUNTS ((int)(sizeof counts / sizeof counts[0]))

static int peer;

/* Post the receive, send, wait: safe with any peer (including itself). */
static void exchange(const void *sbuf, void *rbuf, int count, MPI_Datatype type, int tag,
                     const char *name)
{
    MPI_Request req;
    MPI_Status st;
    MTEST_CALL(MPI_Irecv(rbuf, count, type, peer, tag, MPI_COMM_WORLD, &req));
    MTEST_CALL(MPI_Send((void *)sbuf, count, type, peer, tag, MPI_COMM_WORLD));
    MTEST_CALL(MPI_Wait(&req, &st));
    int n = -1;
    MTEST_CALL(MPI_Get_count(&st, type, &n));
    MTEST_CHECK(n == count, "%s: MPI_Get_count expected %d got %d", name, count, n);
    MTEST_CHECK(st.MPI_SOURCE == peer && st.MPI_TAG == tag, "%s: status source %d tag %d", name,
                st.MPI_SOURCE, st.MPI_TAG);
}

static void pack_size_check(MPI_Datatype type, size_t datasize, const char *name)
{
    int prev = -1;
    for (int c = 0; c < NCOUNTS; c++) {
        int ps = -1;
        MTEST_CALL(MPI_Pack_size(counts[c], type, MPI_COMM_WORLD, &ps));
        long long need = (long long)counts[c] * (long long)datasize;
        MTEST_CHECK(ps >= need, "MPI_Pack_size(%d, %s) = %d < %lld", counts[c], name, ps, need);
        MTEST_CHECK(ps <= 2 * need + 1024, "MPI_Pack_size(%d, %s) = %d, implausibly large", counts[c],
                    name, ps);
        MTEST_CHECK(ps >= prev, "MPI_Pack_size(%s) decreased with count: %d then %d", name, prev, ps);
        prev = ps;
    }
}

/* Value of element i for a type; `k` varies the pattern between types and counts. */
#define VAL(i, k) ((long long)(((i) * 37 + (k) * 11) % 113) - 56)

#define TEST_TYPE(ctype, mpitype, expr_of_i, datasize)                                            \
    do {                                                                                          \
        pack_size_check(mpitype, datasize, #mpitype);                                            \
        for (int c = 0; c < NCOUNTS; c++) {                                                      \
            int n_ = counts[c];                                                                   \
            ctype *s_ = mtest_malloc(sizeof(ctype) * (size_t)(n_ + 1));                           \
            ctype *r_ = mtest_malloc(sizeof(ctype) * (size_t)(n_ + 1));                           \
            memset(r_, 0, sizeof(ctype) * (size_t)(n_ + 1));                                      \
            for (int i = 0; i < n_; i++) {                                                        \
                s_[i] = (ctype)(expr_of_i);                                                       \
            }                                                                                     \
            exchange(s_, r_, n_, mpitype, tagbase++, #mpitype);                                   \
            for (int i = 0; i < n_; i++) {                                                        \
                if (!(r_[i] == (ctype)(expr_of_i))) {                                             \
                    MTEST_CHECK(0, "%s count %d: element %d wrong", #mpitype, n_, i);            \
                    break;                                                                        \
                }                                                                                 \
            }                                                                                     \
            free(s_);                                                                             \
            free(r_);                                                                             \
        }                                                                                         \
    } while (0)

#define TEST_PAIR(vtype, mpitype, datasize)                                                       \
    do {                                                                                          \
        struct {                                                                                  \
            vtype v;                                                                              \
            int i;                                                                                \
        } * s_, *r_;                                                                              \
        pack_size_check(mpitype, datasize, #mpitype);                                            \
        for (int c = 0; c < NCOUNTS; c++) {                                                      \
            int n_ = counts[c];                                                                   \
            s_ = mtest_malloc(sizeof(*s_) * (size_t)(n_ + 1));                                    \
            r_ = mtest_malloc(sizeof(*r_) * (size_t)(n_ + 1));                                    \
            memset(r_, 0, sizeof(*r_) * (size_t)(n_ + 1));                                        \
            for (int i = 0; i < n_; i++) {                                                        \
                s_[i].v = (vtype)VAL(i, c);                                                       \
                s_[i].i = i * 3 - 7;                                                              \
            }                                                                                     \
            exchange(s_, r_, n_, mpitype, tagbase++, #mpitype);                                   \
            for (int i = 0; i < n_; i++) {                                                        \
                if (r_[i].v != (vtype)VAL(i, c) || r_[i].i != i * 3 - 7) {                        \
                    MTEST_CHECK(0, "%s count %d: element %d wrong", #mpitype, n_, i);            \
                    break;                                                                        \
                }                                                                                 \
            }                                                                                     \
            free(s_);                                                                             \
            free(r_);                                                                             \
        }                                                                                         \
    } while (0)

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int rank = mtest_rank(), size = mtest_size();
    int tagbase = 0;
    peer = (rank ^ 1) < size ? (rank ^ 1) : rank;

    /* MPI-1 basic types */
    TEST_TYPE(char, MPI_CHAR, 'A' + (i + c) % 26, 1);
    TEST_TYPE(short, MPI_SHORT, VAL(i, c) * 300, sizeof(short));
    TEST_TYPE(int, MPI_INT, VAL(i, c) * 1000003, sizeof(int));
    TEST_TYPE(long, MPI_LONG, VAL(i, c) * 100000000007LL, sizeof(long));
    TEST_TYPE(unsigned char, MPI_UNSIGNED_CHAR, (i * 7 + c) & 0xff, 1);
    TEST_TYPE(unsigned short, MPI_UNSIGNED_SHORT, (i * 7001u + (unsigned)c) & 0xffff,
              sizeof(unsigned short));
    TEST_TYPE(unsigned, MPI_UNSIGNED, 4000000000u - (unsigned)i * 977u, sizeof(unsigned));
    TEST_TYPE(unsigned long, MPI_UNSIGNED_LONG, 0xF000000000000000ul / 2 + (unsigned long)i * 0x100000001ul,
              sizeof(unsigned long));
    TEST_TYPE(float, MPI_FLOAT, VAL(i, c) * 0.125f, sizeof(float));
    TEST_TYPE(double, MPI_DOUBLE, VAL(i, c) * 1e-300 + i, sizeof(double));
    TEST_TYPE(long double, MPI_LONG_DOUBLE, (long double)VAL(i, c) / 3.0L, sizeof(long double));
    TEST_TYPE(unsigned char, MPI_BYTE, (i * 131 + c) & 0xff, 1);
    /* MPI_PACKED: data made by MPI_Pack, sent and received as MPI_PACKED, then unpacked */
    pack_size_check(MPI_PACKED, 1, "MPI_PACKED");
    for (int c = 0; c < NCOUNTS; c++) {
        int n = counts[c], psize = 0, pos = 0, upos = 0;
        MTEST_CALL(MPI_Pack_size(n, MPI_INT, MPI_COMM_WORLD, &psize));
        int *vals = mtest_malloc(sizeof(int) * (size_t)(n + 1)), *back = mtest_malloc(sizeof(int) * (size_t)(n + 1));
        char *packed = mtest_malloc((size_t)psize + 1), *rpacked = mtest_malloc((size_t)psize + 1);
        for (int i = 0; i < n; i++) {
            vals[i] = (int)VAL(i, c) * 77;
            back[i] = 0;
        }
        MTEST_CALL(MPI_Pack(vals, n, MPI_INT, packed, psize, &pos, MPI_COMM_WORLD));
        exchange(packed, rpacked, pos, MPI_PACKED, tagbase++, "MPI_PACKED");
        MTEST_CALL(MPI_Unpack(rpacked, pos, &upos, back, n, MPI_INT, MPI_COMM_WORLD));
        MTEST_EQ("bytes unpacked from an MPI_PACKED message", pos, upos);
        for (int i = 0; i < n; i++) {
            if (back[i] != (int)VAL(i, c) * 77) {
                MTEST_CHECK(0, "MPI_PACKED count %d: element %d wrong", n, i);
                break;
            }
        }
        free(vals);
        free(back);
        free(packed);
        free(rpacked);
    }
    TEST_TYPE(long long, MPI_LONG_LONG_INT, VAL(i, c) * 1000000000000007LL, sizeof(long long));

    /* MPI-1 pair types (the MINLOC/MAXLOC types) */
    TEST_PAIR(float, MPI_FLOAT_INT, sizeof(float) + sizeof(int));
    TEST_PAIR(double, MPI_DOUBLE_INT, sizeof(double) + sizeof(int));
    TEST_PAIR(long, MPI_LONG_INT, sizeof(long) + sizeof(int));
    TEST_PAIR(int, MPI_2INT, 2 * sizeof(int));
    TEST_PAIR(short, MPI_SHORT_INT, sizeof(short) + sizeof(int));
    TEST_PAIR(long double, MPI_LONG_DOUBLE_INT, sizeof(long double) + sizeof(int));

    /* C types added by MPI-2, MPI-2.2 and MPI-3 */
    TEST_TYPE(signed char, MPI_SIGNED_CHAR, VAL(i, c), 1);
    TEST_TYPE(unsigned long long, MPI_UNSIGNED_LONG_LONG, 0xFFFFFFFFFFFFFFFFull - (unsigned long long)i * 3,
              sizeof(unsigned long long));
    TEST_TYPE(long long, MPI_LONG_LONG, VAL(i, c) * -1000000000000007LL, sizeof(long long));
    TEST_TYPE(wchar_t, MPI_WCHAR, L'a' + (i % 26), sizeof(wchar_t));
    TEST_TYPE(int8_t, MPI_INT8_T, VAL(i, c), 1);
    TEST_TYPE(int16_t, MPI_INT16_T, VAL(i, c) * 250, 2);
    TEST_TYPE(int32_t, MPI_INT32_T, VAL(i, c) * 12345678, 4);
    TEST_TYPE(int64_t, MPI_INT64_T, VAL(i, c) * 123456789012345LL, 8);
    TEST_TYPE(uint8_t, MPI_UINT8_T, (i + c) & 0xff, 1);
    TEST_TYPE(uint16_t, MPI_UINT16_T, (i * 257 + c) & 0xffff, 2);
    TEST_TYPE(uint32_t, MPI_UINT32_T, 0xDEADBEEFu ^ (uint32_t)i, 4);
    TEST_TYPE(uint64_t, MPI_UINT64_T, 0xDEADBEEFCAFEF00Dull ^ (uint64_t)i, 8);
    TEST_TYPE(bool, MPI_C_BOOL, (i % 3) == 0, sizeof(bool));
    TEST_TYPE(MPI_Aint, MPI_AINT, (MPI_Aint)VAL(i, c) * 4096, sizeof(MPI_Aint));
    TEST_TYPE(MPI_Offset, MPI_OFFSET, (MPI_Offset)VAL(i, c) * 1000000007LL, sizeof(MPI_Offset));
    TEST_TYPE(MPI_Count, MPI_COUNT, (MPI_Count)VAL(i, c) * 99999999999LL, sizeof(MPI_Count));
    TEST_TYPE(float _Complex, MPI_C_FLOAT_COMPLEX, VAL(i, c) + 0.5f * I * (float)i, sizeof(float _Complex));
    TEST_TYPE(float _Complex, MPI_C_COMPLEX, VAL(i, c) - 0.25f * I * (float)i, sizeof(float _Complex));
    TEST_TYPE(double _Complex, MPI_C_DOUBLE_COMPLEX, VAL(i, c) * 1e100 + 2.0 * I * (double)i,
              sizeof(double _Complex));
    TEST_TYPE(long double _Complex, MPI_C_LONG_DOUBLE_COMPLEX, (long double)VAL(i, c) / 7.0L + 1.0L * I * (long double)i,
              sizeof(long double _Complex));

    /* MPI_Get_count with a byte count that is not a multiple of the type size: probe the
     * message (the status has no datatype yet), ask for ints, get MPI_UNDEFINED. */
    {
        unsigned char bytes[8];
        mtest_fill(bytes, sizeof bytes, 5);
        int lens[2] = {7, 8};
        for (int k = 0; k < 2; k++) {
            MPI_Request req;
            MPI_Status st;
            int n = -1;
            MTEST_CALL(MPI_Isend(bytes, lens[k], MPI_BYTE, peer, 900 + k, MPI_COMM_WORLD, &req));
            MTEST_CALL(MPI_Probe(peer, 900 + k, MPI_COMM_WORLD, &st));
            MTEST_CALL(MPI_Get_count(&st, MPI_BYTE, &n));
            MTEST_EQ("MPI_Get_count(MPI_BYTE) after probe", lens[k], n);
            MTEST_CALL(MPI_Get_count(&st, MPI_INT, &n));
            MTEST_EQ("MPI_Get_count(MPI_INT) after probe", lens[k] == 7 ? MPI_UNDEFINED : 2, n);
            MTEST_CALL(MPI_Get_count(&st, MPI_SHORT, &n));
            MTEST_EQ("MPI_Get_count(MPI_SHORT) after probe", lens[k] == 7 ? MPI_UNDEFINED : 4, n);
            MTEST_CALL(MPI_Get_count(&st, MPI_DOUBLE, &n));
            MTEST_EQ("MPI_Get_count(MPI_DOUBLE) after probe", lens[k] == 7 ? MPI_UNDEFINED : 1, n);
            unsigned char in[8] = {0};
            MTEST_CALL(MPI_Recv(in, 8, MPI_BYTE, peer, 900 + k, MPI_COMM_WORLD, &st));
            MTEST_STATUS(&st, peer, 900 + k, MPI_BYTE, lens[k]);
            mtest_verify(in, (size_t)lens[k], 5, "probed bytes");
            MTEST_CALL(MPI_Wait(&req, MPI_STATUS_IGNORE));
        }
    }

    return mtest_finalize();
}
