/*
 * mtest-abi: oxmpi-header (MPICH 4.0.2's mpi.h lacks what it calls)
 * The optional Fortran types of MPI-4.1 that MPICH 4.0.2 lacks: MPI_LOGICAL1/2/4/8/16,
 * MPI_REAL2 (IEEE binary16) and MPI_COMPLEX4 (two binary16).
 *  - sizes, extents, names, MPI_Type_match_size;
 *  - point-to-point (rank 0 to the last rank), MPI_Pack/MPI_Unpack, external32 sizes and
 *    byte order;
 *  - reductions the standard's table allows: MPI_LAND/LOR/LXOR on the logicals,
 *    MPI_MAX/MIN/SUM/PROD on MPI_REAL2, MPI_SUM/PROD on MPI_COMPLEX4; and MPI_ERR_OP for
 *    an operation it does not allow.
 * Strict: MPICH 4.0.2 has none of these types.
 */
#include "mtest.h"

#include <stdint.h>
#include <string.h>

/* binary16 bits of small integers (exact), and back. */
static uint16_t half_of(int v)
{
    if (v == 0) {
        return 0;
    }
    uint16_t sign = v < 0 ? 0x8000 : 0;
    unsigned a = (unsigned)(v < 0 ? -v : v);
    int e = 0;
    while ((a >> e) > 1) {
        e++;
    }
    unsigned man = (a << (10 - e)) & 0x3ff; /* exact for |v| < 2048 */
    return (uint16_t)(sign | (unsigned)((e + 15) << 10) | man);
}

static int int_of_half(uint16_t h)
{
    if ((h & 0x7fff) == 0) {
        return 0;
    }
    int e = ((h >> 10) & 0x1f) - 15;
    int v = (int)((0x400 | (h & 0x3ff)) >> (10 - e));
    return (h & 0x8000) ? -v : v;
}

static const struct {
    MPI_Datatype t;
    const char *name;
    int size;
} types[] = {
    {MPI_LOGICAL1, "MPI_LOGICAL1", 1}, {MPI_LOGICAL2, "MPI_LOGICAL2", 2},
    {MPI_LOGICAL4, "MPI_LOGICAL4", 4}, {MPI_LOGICAL8, "MPI_LOGICAL8", 8},
    {MPI_LOGICAL16, "MPI_LOGICAL16", 16}, {MPI_REAL2, "MPI_REAL2", 2},
    {MPI_COMPLEX4, "MPI_COMPLEX4", 4},
};
#define NTYPES ((int)(sizeof types / sizeof types[0]))

static void layout(void)
{
    for (int i = 0; i < NTYPES; i++) {
        int size = -1, len = 0;
        MPI_Aint lb = -1, ext = -1;
        MPI_Aint esize = -1;
        char name[MPI_MAX_OBJECT_NAME];
        MTEST_CALL(MPI_Type_size(types[i].t, &size));
        MTEST_CALL(MPI_Type_get_extent(types[i].t, &lb, &ext));
        MTEST_CHECK(size == types[i].size && lb == 0 && ext == types[i].size,
                    "%s: size %d lb %ld extent %ld", types[i].name, size, (long)lb, (long)ext);
        MTEST_CALL(MPI_Type_get_name(types[i].t, name, &len));
        MTEST_CHECK(strcmp(name, types[i].name) == 0, "name \"%s\", expected %s", name,
                    types[i].name);
        MTEST_CALL(MPI_Pack_external_size("external32", 3, types[i].t, &esize));
        MTEST_CHECK(esize == 3 * types[i].size, "%s: external32 size %ld", types[i].name,
                    (long)esize);
        int ni, na, nd, comb;
        MTEST_CALL(MPI_Type_get_envelope(types[i].t, &ni, &na, &nd, &comb));
        MTEST_EQ("combiner of a predefined type", MPI_COMBINER_NAMED, comb);
    }
    MPI_Datatype t;
    MTEST_CALL(MPI_Type_match_size(MPI_TYPECLASS_REAL, 2, &t));
    MTEST_CHECK(t == MPI_REAL2, "match_size(REAL, 2) is not MPI_REAL2");
    MTEST_CALL(MPI_Type_match_size(MPI_TYPECLASS_COMPLEX, 4, &t));
    MTEST_CHECK(t == MPI_COMPLEX4, "match_size(COMPLEX, 4) is not MPI_COMPLEX4");
}

static void external32(void)
{
    uint16_t h[2] = {half_of(3), half_of(-2)};
    unsigned char out[8];
    MPI_Aint pos = 0;
    MTEST_CALL(MPI_Pack_external("external32", h, 1, MPI_COMPLEX4, out, sizeof out, &pos));
    MTEST_EQ("external32 bytes of one MPI_COMPLEX4", 4, (int)pos);
    /* Big-endian binary16: 3 = 0x4200, -2 = 0xc000. */
    MTEST_CHECK(out[0] == 0x42 && out[1] == 0x00 && out[2] == 0xc0 && out[3] == 0x00,
                "external32 MPI_COMPLEX4 bytes %02x %02x %02x %02x", out[0], out[1], out[2],
                out[3]);
    uint64_t l8 = 1, back = 0;
    pos = 0;
    MTEST_CALL(MPI_Pack_external("external32", &l8, 1, MPI_LOGICAL8, out, sizeof out, &pos));
    MTEST_CHECK(out[7] == 1 && out[0] == 0, "external32 MPI_LOGICAL8 is not big-endian");
    pos = 0;
    MTEST_CALL(MPI_Unpack_external("external32", out, 8, &pos, &back, 1, MPI_LOGICAL8));
    MTEST_CHECK(back == 1, "MPI_LOGICAL8 external32 round trip gave %llu",
                (unsigned long long)back);
}

static void p2p_and_pack(void)
{
    int me = mtest_rank(), last = mtest_size() - 1;
    for (int i = 0; i < NTYPES; i++) {
        unsigned char src[4 * 16], dst[4 * 16], packed[4 * 16];
        int n = 4, bytes = n * types[i].size;
        for (int k = 0; k < bytes; k++) {
            src[k] = (unsigned char)(k * 7 + i);
            dst[k] = 0xee;
        }
        MPI_Request r = MPI_REQUEST_NULL;
        if (me == last) {
            MTEST_CALL(MPI_Irecv(dst, n, types[i].t, 0, 9, MPI_COMM_WORLD, &r));
        }
        if (me == 0) {
            MTEST_CALL(MPI_Send(src, n, types[i].t, last, 9, MPI_COMM_WORLD));
        }
        if (me == last) {
            MPI_Status st;
            int cnt = -1;
            MTEST_CALL(MPI_Wait(&r, &st));
            MTEST_CALL(MPI_Get_count(&st, types[i].t, &cnt));
            MTEST_CHECK(cnt == n, "%s: received count %d", types[i].name, cnt);
            MTEST_CHECK(memcmp(src, dst, (size_t)bytes) == 0, "%s: data differs", types[i].name);
        }
        int pos = 0;
        MTEST_CALL(MPI_Pack(src, n, types[i].t, packed, sizeof packed, &pos, MPI_COMM_WORLD));
        MTEST_EQ("packed bytes", bytes, pos);
        memset(dst, 0, sizeof dst);
        pos = 0;
        MTEST_CALL(MPI_Unpack(packed, bytes, &pos, dst, n, types[i].t, MPI_COMM_WORLD));
        MTEST_CHECK(memcmp(src, dst, (size_t)bytes) == 0, "%s: unpacked data differs",
                    types[i].name);
    }
}

static void reductions(void)
{
    int me = mtest_rank(), n = mtest_size();

    /* Logicals: element 0 true only on rank 0, element 1 true everywhere, element 2 never. */
    {
        uint8_t l1[3] = {(uint8_t)(me == 0), 1, 0}, r1[3];
        uint16_t l2[3] = {(uint16_t)(me == 0), 1, 0}, r2[3];
        uint64_t l8[3] = {(uint64_t)(me == 0), 1, 0}, r8[3];
        MTEST_CALL(MPI_Allreduce(l1, r1, 3, MPI_LOGICAL1, MPI_LAND, MPI_COMM_WORLD));
        MTEST_CHECK(r1[0] == (n == 1) && r1[1] == 1 && r1[2] == 0, "LOGICAL1 LAND %d %d %d",
                    r1[0], r1[1], r1[2]);
        MTEST_CALL(MPI_Allreduce(l2, r2, 3, MPI_LOGICAL2, MPI_LOR, MPI_COMM_WORLD));
        MTEST_CHECK(r2[0] == 1 && r2[1] == 1 && r2[2] == 0, "LOGICAL2 LOR %d %d %d", r2[0],
                    r2[1], r2[2]);
        MTEST_CALL(MPI_Allreduce(l8, r8, 3, MPI_LOGICAL8, MPI_LXOR, MPI_COMM_WORLD));
        MTEST_CHECK(r8[0] == 1 && r8[1] == (uint64_t)(n % 2) && r8[2] == 0,
                    "LOGICAL8 LXOR %llu %llu %llu", (unsigned long long)r8[0],
                    (unsigned long long)r8[1], (unsigned long long)r8[2]);
        int32_t l4 = me == 0, r4 = -1;
        MTEST_CALL(MPI_Allreduce(&l4, &r4, 1, MPI_LOGICAL4, MPI_LOR, MPI_COMM_WORLD));
        MTEST_EQ("LOGICAL4 LOR", 1, r4);
        unsigned char l16[16] = {0}, r16[16];
        l16[15] = 1; /* true in its last byte only */
        MTEST_CALL(MPI_Allreduce(l16, r16, 1, MPI_LOGICAL16, MPI_LAND, MPI_COMM_WORLD));
        int ones = 0;
        for (int k = 0; k < 16; k++) {
            ones += r16[k];
        }
        MTEST_EQ("LOGICAL16 LAND is one true value", 1, ones);
    }

    /* REAL2: rank r contributes r + 1 (and -(r + 1)). */
    {
        uint16_t v[2] = {half_of(me + 1), half_of(-(me + 1))}, r[2];
        MTEST_CALL(MPI_Allreduce(v, r, 2, MPI_REAL2, MPI_SUM, MPI_COMM_WORLD));
        MTEST_EQ("REAL2 SUM", n * (n + 1) / 2, int_of_half(r[0]));
        MTEST_EQ("REAL2 SUM of negatives", -n * (n + 1) / 2, int_of_half(r[1]));
        MTEST_CALL(MPI_Allreduce(v, r, 2, MPI_REAL2, MPI_MAX, MPI_COMM_WORLD));
        MTEST_EQ("REAL2 MAX", n, int_of_half(r[0]));
        MTEST_EQ("REAL2 MAX of negatives", -1, int_of_half(r[1]));
        MTEST_CALL(MPI_Allreduce(v, r, 1, MPI_REAL2, MPI_PROD, MPI_COMM_WORLD));
        int fact = 1;
        for (int k = 2; k <= n; k++) {
            fact *= k;
        }
        if (fact < 2048) {
            MTEST_EQ("REAL2 PROD", fact, int_of_half(r[0]));
        }
    }

    /* COMPLEX4: (1 + i) on every rank; the product of n of them is (1+i)^n. */
    {
        uint16_t c[2] = {half_of(1), half_of(1)}, s[2];
        MTEST_CALL(MPI_Allreduce(c, s, 1, MPI_COMPLEX4, MPI_SUM, MPI_COMM_WORLD));
        MTEST_CHECK(int_of_half(s[0]) == n && int_of_half(s[1]) == n, "COMPLEX4 SUM %d%+di",
                    int_of_half(s[0]), int_of_half(s[1]));
        MTEST_CALL(MPI_Allreduce(c, s, 1, MPI_COMPLEX4, MPI_PROD, MPI_COMM_WORLD));
        int re = 1, im = 0;
        for (int k = 0; k < n; k++) {
            int t = re - im;
            im = re + im;
            re = t;
        }
        MTEST_CHECK(int_of_half(s[0]) == re && int_of_half(s[1]) == im,
                    "COMPLEX4 PROD %d%+di, expected %d%+di", int_of_half(s[0]),
                    int_of_half(s[1]), re, im);
    }

    /* Operations outside the table. */
    uint8_t b = 1, rb;
    uint16_t h = 0, rh;
    MTEST_EXPECT_CLASS(MPI_ERR_OP, MPI_Allreduce(&b, &rb, 1, MPI_LOGICAL1, MPI_SUM, MPI_COMM_WORLD));
    MTEST_EXPECT_CLASS(MPI_ERR_OP, MPI_Allreduce(&h, &rh, 1, MPI_REAL2, MPI_BAND, MPI_COMM_WORLD));
    MTEST_EXPECT_CLASS(MPI_ERR_OP,
                       MPI_Allreduce(&h, &rh, 1, MPI_COMPLEX4, MPI_MAX, MPI_COMM_WORLD));
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    layout();
    external32();
    p2p_and_pack();
    reductions();
    return mtest_finalize();
}
