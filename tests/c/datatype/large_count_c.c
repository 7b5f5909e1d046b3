/*
 * The MPI-4 large-count (`_c`) forms of the datatype, status and packing calls:
 *  - counts beyond INT_MAX in a status: MPI_Get_count / MPI_Get_elements give
 *    MPI_UNDEFINED, their _c and _x forms the real count (MPI_Status_set_elements_c);
 *  - sizes beyond INT_MAX: MPI_Type_size gives MPI_UNDEFINED, MPI_Type_size_c the size;
 *  - decoding: a type made by an MPI-2 constructor decodes with MPI_Type_get_envelope_c /
 *    MPI_Type_get_contents_c as with the int forms (no large counts); a type made by a
 *    _c constructor returns its counts and displacements as large counts;
 *  - MPI_Pack_c / MPI_Unpack_c / MPI_Pack_size_c and the external32 _c forms round-trip;
 *  - MPI_Get_count_c of a received message.
 */
#include "mtest.h"

#include <limits.h>
#include <string.h>

/* MPI_Status_set_elements_c is MPI-4.0; MPICH 4.0.2 lacks it (its _x twin does the same). */
#ifdef OXMPI
#define SET_ELEMENTS_C MPI_Status_set_elements_c
#else
#define SET_ELEMENTS_C MPI_Status_set_elements_x
#endif

static void envelope_c_is(MPI_Datatype t, MPI_Count ni, MPI_Count na, MPI_Count nl,
                          MPI_Count nd, int combiner, const char *what)
{
    MPI_Count gi = -1, ga = -1, gl = -1, gd = -1;
    int comb = -1;
    MTEST_CALL(MPI_Type_get_envelope_c(t, &gi, &ga, &gl, &gd, &comb));
    MTEST_CHECK(gi == ni && ga == na && gl == nl && gd == nd && comb == combiner,
                "%s: envelope_c (%lld,%lld,%lld,%lld,%d), expected (%lld,%lld,%lld,%lld,%d)",
                what, (long long)gi, (long long)ga, (long long)gl, (long long)gd, comb,
                (long long)ni, (long long)na, (long long)nl, (long long)nd, combiner);
}

/* Decodes `t` with MPI_Type_get_contents_c and compares the large counts and integers. */
static void large_contents_are(MPI_Datatype t, int ni, const int *ints, int nl,
                               const MPI_Count *large, const char *what)
{
    int gi[16];
    MPI_Aint ga[16];
    MPI_Count gl[16];
    MPI_Datatype gd[4];
    MTEST_CALL(MPI_Type_get_contents_c(t, 16, 16, 16, 4, gi, ga, gl, gd));
    for (int i = 0; i < ni; i++) {
        MTEST_CHECK(gi[i] == ints[i], "%s: integers[%d] = %d, expected %d", what, i, gi[i],
                    ints[i]);
    }
    for (int i = 0; i < nl; i++) {
        MTEST_CHECK(gl[i] == large[i], "%s: large_counts[%d] = %lld, expected %lld", what, i,
                    (long long)gl[i], (long long)large[i]);
    }
    MTEST_CHECK(gd[0] == MPI_INT, "%s: datatypes[0] is not MPI_INT", what);
}

static void status_counts(void)
{
    MPI_Status st;
    memset(&st, 0, sizeof st);
    int n = 0;
    MPI_Count c = 0;

    /* 3e9 bytes: beyond int for MPI_BYTE. */
    const MPI_Count big = 3000000000LL;
    MTEST_CALL(SET_ELEMENTS_C(&st, MPI_BYTE, big));
    MTEST_CALL(MPI_Get_count(&st, MPI_BYTE, &n));
    MTEST_EQ("MPI_Get_count of 3e9 bytes", MPI_UNDEFINED, n);
    MTEST_CALL(MPI_Get_elements(&st, MPI_BYTE, &n));
    MTEST_EQ("MPI_Get_elements of 3e9 bytes", MPI_UNDEFINED, n);
    MTEST_CALL(MPI_Get_count_c(&st, MPI_BYTE, &c));
    MTEST_CHECK(c == big, "MPI_Get_count_c: %lld", (long long)c);
    MTEST_CALL(MPI_Get_elements_c(&st, MPI_BYTE, &c));
    MTEST_CHECK(c == big, "MPI_Get_elements_c: %lld", (long long)c);
    MTEST_CALL(MPI_Get_elements_x(&st, MPI_BYTE, &c));
    MTEST_CHECK(c == big, "MPI_Get_elements_x: %lld", (long long)c);
    /* The same bytes as ints: 7.5e8 ints fit in an int. */
    MTEST_CALL(MPI_Get_count(&st, MPI_INT, &n));
    MTEST_EQ("MPI_Get_count of 3e9 bytes as ints", 750000000, n);

    /* 2^31 ints: the count itself is one past INT_MAX. */
    MTEST_CALL(SET_ELEMENTS_C(&st, MPI_INT, (MPI_Count)INT_MAX + 1));
    MTEST_CALL(MPI_Get_count(&st, MPI_INT, &n));
    MTEST_EQ("MPI_Get_count of 2^31 ints", MPI_UNDEFINED, n);
    MTEST_CALL(MPI_Get_count_c(&st, MPI_INT, &c));
    MTEST_CHECK(c == (MPI_Count)INT_MAX + 1, "MPI_Get_count_c of 2^31 ints: %lld",
                (long long)c);
    MTEST_CALL(MPI_Get_count_c(&st, MPI_BYTE, &c));
    MTEST_CHECK(c == ((MPI_Count)INT_MAX + 1) * 4, "MPI_Get_count_c as bytes: %lld",
                (long long)c);

    /* MPI_Status_set_elements_x sets the same status. */
    MTEST_CALL(MPI_Status_set_elements_x(&st, MPI_DOUBLE, 5));
    MTEST_CALL(MPI_Get_count_c(&st, MPI_DOUBLE, &c));
    MTEST_CHECK(c == 5, "MPI_Get_count_c after set_elements_x: %lld", (long long)c);

    /* Bad input. */
    MTEST_EXPECT_CLASS(MPI_ERR_COUNT, SET_ELEMENTS_C(&st, MPI_INT, -1));
    MTEST_EXPECT_CLASS(MPI_ERR_TYPE, MPI_Get_count_c(&st, MPI_DATATYPE_NULL, &c));
    MTEST_EXPECT_CLASS(MPI_ERR_ARG, MPI_Get_count_c(&st, MPI_INT, NULL));
}

static void sizes(void)
{
    MPI_Datatype t;
    const MPI_Count big = 3000000000LL;
    MTEST_CALL(MPI_Type_contiguous_c(big, MPI_BYTE, &t));
    int n = 0;
    MPI_Count c = 0, lb = -1, ext = 0;
    MTEST_CALL(MPI_Type_size(t, &n));
    MTEST_EQ("MPI_Type_size of 3e9 bytes", MPI_UNDEFINED, n);
    MTEST_CALL(MPI_Type_size_c(t, &c));
    MTEST_CHECK(c == big, "MPI_Type_size_c: %lld", (long long)c);
    MTEST_CALL(MPI_Type_get_extent_c(t, &lb, &ext));
    MTEST_CHECK(lb == 0 && ext == big, "MPI_Type_get_extent_c: lb %lld extent %lld",
                (long long)lb, (long long)ext);
    MTEST_CALL(MPI_Type_get_true_extent_c(t, &lb, &ext));
    MTEST_CHECK(lb == 0 && ext == big, "MPI_Type_get_true_extent_c: lb %lld extent %lld",
                (long long)lb, (long long)ext);
    MTEST_CALL(MPI_Type_free(&t));
}

static void decoding(void)
{
    MPI_Datatype t;

    /* An MPI-2 constructor: no large counts, the integers as with the int form. */
    MTEST_CALL(MPI_Type_vector(3, 2, 5, MPI_INT, &t));
    envelope_c_is(t, 3, 0, 0, 1, MPI_COMBINER_VECTOR, "vector");
    {
        const int ints[3] = {3, 2, 5};
        large_contents_are(t, 3, ints, 0, NULL, "vector");
    }
    MTEST_CALL(MPI_Type_free(&t));

    /* The _c constructors: counts and displacements come back as large counts. */
    MTEST_CALL(MPI_Type_contiguous_c(5, MPI_INT, &t));
    envelope_c_is(t, 0, 0, 1, 1, MPI_COMBINER_CONTIGUOUS, "contiguous_c");
    {
        const MPI_Count large[1] = {5};
        large_contents_are(t, 0, NULL, 1, large, "contiguous_c");
        /* The int forms cannot describe it (MPICH 4.0.2 says MPI_ERR_OTHER). */
        int ni, na, nd, comb, ints[4];
        MPI_Aint addrs[4];
        MPI_Datatype tys[2];
        MTEST_EXPECT_CLASS2(MPI_ERR_TYPE, MPI_ERR_OTHER,
                            MPI_Type_get_envelope(t, &ni, &na, &nd, &comb));
        MTEST_EXPECT_CLASS2(MPI_ERR_TYPE, MPI_ERR_OTHER,
                            MPI_Type_get_contents(t, 4, 4, 2, ints, addrs, tys));
    }
    MTEST_CALL(MPI_Type_free(&t));

    MTEST_CALL(MPI_Type_vector_c(3, 2, 5, MPI_INT, &t));
    envelope_c_is(t, 0, 0, 3, 1, MPI_COMBINER_VECTOR, "vector_c");
    {
        const MPI_Count large[3] = {3, 2, 5};
        large_contents_are(t, 0, NULL, 3, large, "vector_c");
    }
    MTEST_CALL(MPI_Type_free(&t));

    MTEST_CALL(MPI_Type_create_hvector_c(2, 1, 40, MPI_INT, &t));
    envelope_c_is(t, 0, 0, 3, 1, MPI_COMBINER_HVECTOR, "hvector_c");
    {
        const MPI_Count large[3] = {2, 1, 40};
        large_contents_are(t, 0, NULL, 3, large, "hvector_c");
    }
    MTEST_CALL(MPI_Type_free(&t));

    {
        const MPI_Count bls[2] = {1, 3}, disps[2] = {0, 8};
        MTEST_CALL(MPI_Type_create_hindexed_c(2, bls, disps, MPI_INT, &t));
        envelope_c_is(t, 0, 0, 5, 1, MPI_COMBINER_HINDEXED, "hindexed_c");
        const MPI_Count large[5] = {2, 1, 3, 0, 8};
        large_contents_are(t, 0, NULL, 5, large, "hindexed_c");
        MTEST_CALL(MPI_Type_free(&t));

        MTEST_CALL(MPI_Type_indexed_c(2, bls, disps, MPI_INT, &t));
        envelope_c_is(t, 0, 0, 5, 1, MPI_COMBINER_INDEXED, "indexed_c");
        large_contents_are(t, 0, NULL, 5, large, "indexed_c");
        MTEST_CALL(MPI_Type_free(&t));

        MTEST_CALL(MPI_Type_create_indexed_block_c(2, 4, disps, MPI_INT, &t));
        envelope_c_is(t, 0, 0, 4, 1, MPI_COMBINER_INDEXED_BLOCK, "indexed_block_c");
        const MPI_Count block[4] = {2, 4, 0, 8};
        large_contents_are(t, 0, NULL, 4, block, "indexed_block_c");
        MTEST_CALL(MPI_Type_free(&t));

        MTEST_CALL(MPI_Type_create_hindexed_block_c(2, 4, disps, MPI_INT, &t));
        envelope_c_is(t, 0, 0, 4, 1, MPI_COMBINER_HINDEXED_BLOCK, "hindexed_block_c");
        large_contents_are(t, 0, NULL, 4, block, "hindexed_block_c");
        MTEST_CALL(MPI_Type_free(&t));

        const MPI_Datatype tys[2] = {MPI_INT, MPI_INT};
        MTEST_CALL(MPI_Type_create_struct_c(2, bls, disps, tys, &t));
        envelope_c_is(t, 0, 0, 5, 2, MPI_COMBINER_STRUCT, "struct_c");
        large_contents_are(t, 0, NULL, 5, large, "struct_c");
        MTEST_CALL(MPI_Type_free(&t));
    }

    MTEST_CALL(MPI_Type_create_resized_c(MPI_INT, -4, 16, &t));
    envelope_c_is(t, 0, 0, 2, 1, MPI_COMBINER_RESIZED, "resized_c");
    {
        const MPI_Count large[2] = {-4, 16};
        large_contents_are(t, 0, NULL, 2, large, "resized_c");
    }
    MTEST_CALL(MPI_Type_free(&t));

    {
        const MPI_Count sizes[2] = {4, 6}, subs[2] = {2, 3}, starts[2] = {1, 2};
        MTEST_CALL(MPI_Type_create_subarray_c(2, sizes, subs, starts, MPI_ORDER_C, MPI_INT, &t));
        envelope_c_is(t, 2, 0, 6, 1, MPI_COMBINER_SUBARRAY, "subarray_c");
        const int ints[2] = {2, MPI_ORDER_C};
        const MPI_Count large[6] = {4, 6, 2, 3, 1, 2};
        large_contents_are(t, 2, ints, 6, large, "subarray_c");
        int sz = 0;
        MTEST_CALL(MPI_Type_size(t, &sz));
        MTEST_EQ("subarray_c size", 6 * (int)sizeof(int), sz);
        MTEST_CALL(MPI_Type_free(&t));
    }

    {
        const MPI_Count gsizes[1] = {10};
        const int distribs[1] = {MPI_DISTRIBUTE_BLOCK}, dargs[1] = {MPI_DISTRIBUTE_DFLT_DARG},
                  psizes[1] = {2};
        MTEST_CALL(MPI_Type_create_darray_c(2, 1, 1, gsizes, distribs, dargs, psizes,
                                            MPI_ORDER_C, MPI_INT, &t));
        envelope_c_is(t, 7, 0, 1, 1, MPI_COMBINER_DARRAY, "darray_c");
        const int ints[7] = {2, 1, 1, MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_DFLT_DARG, 2,
                             MPI_ORDER_C};
        const MPI_Count large[1] = {10};
        large_contents_are(t, 7, ints, 1, large, "darray_c");
        MTEST_CALL(MPI_Type_free(&t));
    }

    /* Too small an array for the large counts. */
    MTEST_CALL(MPI_Type_vector_c(3, 2, 5, MPI_INT, &t));
    {
        MPI_Count gl[2];
        MPI_Datatype gd[1];
        /* MPICH 4.0.2 says MPI_ERR_OTHER. */
        MTEST_EXPECT_CLASS2(MPI_ERR_ARG, MPI_ERR_OTHER,
                            MPI_Type_get_contents_c(t, 0, 0, 2, 1, NULL, NULL, gl, gd));
    }
    MTEST_CALL(MPI_Type_free(&t));
    MTEST_EXPECT_CLASS(MPI_ERR_TYPE, MPI_Type_get_contents_c(MPI_INT, 0, 0, 0, 0, NULL, NULL,
                                                            NULL, NULL));
}

static void packing(void)
{
    MPI_Datatype vec;
    MTEST_CALL(MPI_Type_vector_c(4, 1, 2, MPI_INT, &vec));
    MTEST_CALL(MPI_Type_commit(&vec));
    int src[8], dst[8];
    for (int i = 0; i < 8; i++) {
        src[i] = 10 + i;
        dst[i] = -1;
    }
    MPI_Count size = 0, pos = 0;
    char buf[64];
    MTEST_CALL(MPI_Pack_size_c(2, vec, MPI_COMM_WORLD, &size));
    MTEST_CHECK(size >= 8 * (MPI_Count)sizeof(int), "MPI_Pack_size_c: %lld", (long long)size);
    MTEST_CALL(MPI_Pack_c(src, 1, vec, buf, (MPI_Count)sizeof buf, &pos, MPI_COMM_WORLD));
    MTEST_CHECK(pos == 4 * (MPI_Count)sizeof(int), "MPI_Pack_c position %lld", (long long)pos);
    MTEST_CALL(MPI_Pack_c(src + 1, 1, vec, buf, (MPI_Count)sizeof buf, &pos, MPI_COMM_WORLD));
    MTEST_CHECK(pos == 8 * (MPI_Count)sizeof(int), "MPI_Pack_c position %lld", (long long)pos);
    pos = 0;
    MTEST_CALL(MPI_Unpack_c(buf, (MPI_Count)sizeof buf, &pos, dst, 2, MPI_INT, MPI_COMM_WORLD));
    MTEST_EQ("unpacked [0]", 10, dst[0]);
    MTEST_EQ("unpacked [1]", 12, dst[1]);

    /* external32: big-endian ints. */
    MPI_Count esize = 0, epos = 0;
    unsigned char ext[64];
    MTEST_CALL(MPI_Pack_external_size_c("external32", 1, vec, &esize));
    MTEST_CHECK(esize == 16, "MPI_Pack_external_size_c: %lld", (long long)esize);
    MTEST_CALL(MPI_Pack_external_c("external32", src, 1, vec, ext, (MPI_Count)sizeof ext, &epos));
    MTEST_CHECK(epos == 16, "MPI_Pack_external_c position %lld", (long long)epos);
    MTEST_CHECK(ext[0] == 0 && ext[3] == 10 && ext[7] == 12, "external32 bytes %d %d %d",
                ext[0], ext[3], ext[7]);
    for (int i = 0; i < 8; i++) {
        dst[i] = -1;
    }
    epos = 0;
    MTEST_CALL(MPI_Unpack_external_c("external32", ext, 16, &epos, dst, 1, vec));
    MTEST_CHECK(epos == 16, "MPI_Unpack_external_c position %lld", (long long)epos);
    MTEST_CHECK(dst[0] == 10 && dst[1] == -1 && dst[2] == 12 && dst[6] == 16,
                "MPI_Unpack_external_c data %d %d %d %d", dst[0], dst[1], dst[2], dst[6]);
    MTEST_CALL(MPI_Type_free(&vec));
}

static void received(void)
{
    int me = mtest_rank(), last = mtest_size() - 1;
    int data[7] = {1, 2, 3, 4, 5, 6, 7}, in[8];
    MPI_Request r = MPI_REQUEST_NULL;
    MPI_Status st;
    if (me == last) {
        MTEST_CALL(MPI_Irecv(in, 8, MPI_INT, 0, 5, MPI_COMM_WORLD, &r));
    }
    if (me == 0) {
        MTEST_CALL(MPI_Send(data, 7, MPI_INT, last, 5, MPI_COMM_WORLD));
    }
    if (me == last) {
        MPI_Count c = -1;
        MTEST_CALL(MPI_Wait(&r, &st));
        MTEST_CALL(MPI_Get_count_c(&st, MPI_INT, &c));
        MTEST_CHECK(c == 7, "MPI_Get_count_c of a received message: %lld", (long long)c);
        MTEST_CALL(MPI_Get_count_c(&st, MPI_DOUBLE, &c));
        MTEST_CHECK(c == MPI_UNDEFINED, "MPI_Get_count_c of 28 bytes as doubles: %lld",
                    (long long)c);
    }
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    status_counts();
    sizes();
    decoding();
    packing();
    received();
    return mtest_finalize();
}
