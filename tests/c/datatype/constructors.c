/*
 * Every datatype constructor against hand-computed layouts: size, lower and upper bound,
 * extent, true lower bound and true extent (MPI_Type_size / get_extent / get_true_extent and
 * their _x forms), including negative and unordered displacements, struct alignment padding,
 * MPI_LB / MPI_UB markers, resized types, subarray and darray, the pair types; then
 * MPI_Type_get_envelope / get_contents, MPI_Type_dup, names, and commit/free of every type.
 * Runs on any number of ranks (each checks the same things locally).
 */
#include "mtest.h"

#include <stddef.h>

static void check_layout_at(int line, MPI_Datatype t, const char *name, long long size, long long lb,
                            long long extent, long long true_lb, long long true_extent)
{
    int s = -1;
    MPI_Aint l = -1, e = -1, tl = -1, te = -1;
    MPI_Count sx = -1, lx = -1, ex = -1, tlx = -1, tex = -1;
    MTEST_CALL(MPI_Type_size(t, &s));
    MTEST_CALL(MPI_Type_get_extent(t, &l, &e));
    MTEST_CALL(MPI_Type_get_true_extent(t, &tl, &te));
    MTEST_CALL(MPI_Type_size_x(t, &sx));
    MTEST_CALL(MPI_Type_get_extent_x(t, &lx, &ex));
    MTEST_CALL(MPI_Type_get_true_extent_x(t, &tlx, &tex));
    if (s != size || l != lb || e != extent || tl != true_lb || te != true_extent) {
        mtest_fail_at(__FILE__, line,
                      "%s: size/lb/extent/true_lb/true_extent expected %lld/%lld/%lld/%lld/%lld got "
                      "%d/%ld/%ld/%ld/%ld",
                      name, size, lb, extent, true_lb, true_extent, s, (long)l, (long)e, (long)tl,
                      (long)te);
    }
    if (sx != s || lx != l || ex != e || tlx != tl || tex != te) {
        mtest_fail_at(__FILE__, line, "%s: the _x queries disagree with the plain ones", name);
    }
}
#define CHECK_LAYOUT(t, size, lb, ext, tlb, text) \
    check_layout_at(__LINE__, t, #t, size, lb, ext, tlb, text)

static void commit_free(MPI_Datatype *t)
{
    MTEST_CALL(MPI_Type_commit(t));
    MTEST_CALL(MPI_Type_free(t));
    MTEST_CHECK(*t == MPI_DATATYPE_NULL, "MPI_Type_free did not set the handle to MPI_DATATYPE_NULL");
}

static void basic_constructors(void)
{
    MPI_Datatype contig, vec, vneg, hvec, idx, idxneg, hidx, iblk, hblk;

    MTEST_CALL(MPI_Type_contiguous(3, MPI_INT, &contig));
    CHECK_LAYOUT(contig, 12, 0, 12, 0, 12);

    /* 3 blocks of 2 ints, block starts 4 ints apart. */
    MTEST_CALL(MPI_Type_vector(3, 2, 4, MPI_INT, &vec));
    CHECK_LAYOUT(vec, 24, 0, 40, 0, 40);

    /* Negative stride: ints at 0, -8, -16. */
    MTEST_CALL(MPI_Type_vector(3, 1, -2, MPI_INT, &vneg));
    CHECK_LAYOUT(vneg, 12, -16, 20, -16, 20);

    /* 2 blocks of 3 doubles, 100 bytes apart. */
    MTEST_CALL(MPI_Type_create_hvector(2, 3, 100, MPI_DOUBLE, &hvec));
    CHECK_LAYOUT(hvec, 48, 0, 124, 0, 124);

    /* Unordered displacements: 3 ints at 16, 1 int at 0. */
    int bl1[2] = {3, 1}, d1[2] = {4, 0};
    MTEST_CALL(MPI_Type_indexed(2, bl1, d1, MPI_INT, &idx));
    CHECK_LAYOUT(idx, 16, 0, 28, 0, 28);

    /* Negative displacement: ints at -12..-4 and 20..28. */
    int bl2[2] = {2, 2}, d2[2] = {-3, 5};
    MTEST_CALL(MPI_Type_indexed(2, bl2, d2, MPI_INT, &idxneg));
    CHECK_LAYOUT(idxneg, 16, -12, 40, -12, 40);

    int bl3[2] = {1, 1};
    MPI_Aint d3[2] = {16, -8};
    MTEST_CALL(MPI_Type_create_hindexed(2, bl3, d3, MPI_DOUBLE, &hidx));
    CHECK_LAYOUT(hidx, 16, -8, 32, -8, 32);

    int d4[3] = {5, 1, 3};
    MTEST_CALL(MPI_Type_create_indexed_block(3, 2, d4, MPI_SHORT, &iblk));
    CHECK_LAYOUT(iblk, 12, 2, 12, 2, 12);

    MPI_Aint d5[2] = {0, 24};
    MTEST_CALL(MPI_Type_create_hindexed_block(2, 1, d5, MPI_INT, &hblk));
    CHECK_LAYOUT(hblk, 8, 0, 28, 0, 28);

    /* Zero-count types are empty. */
    MPI_Datatype empty;
    MTEST_CALL(MPI_Type_contiguous(0, MPI_INT, &empty));
    CHECK_LAYOUT(empty, 0, 0, 0, 0, 0);

    commit_free(&contig);
    commit_free(&vec);
    commit_free(&vneg);
    commit_free(&hvec);
    commit_free(&idx);
    commit_free(&idxneg);
    commit_free(&hidx);
    commit_free(&iblk);
    commit_free(&hblk);
    commit_free(&empty);
}

struct cd {
    char c;
    double d;
};
struct dc {
    double d;
    char c;
};
struct ic {
    int i;
    char c;
};
struct sld {
    short s;
    long double ld;
};

static void structs(void)
{
    MPI_Datatype t_cd, t_dc, t_ic, t_sld, t_chars, t_nested;
    int bl[2] = {1, 1};

    MPI_Aint d_cd[2] = {offsetof(struct cd, c), offsetof(struct cd, d)};
    MPI_Datatype ty_cd[2] = {MPI_CHAR, MPI_DOUBLE};
    MTEST_CALL(MPI_Type_create_struct(2, bl, d_cd, ty_cd, &t_cd));
    CHECK_LAYOUT(t_cd, 9, 0, (long long)sizeof(struct cd), 0, 16);

    MPI_Aint d_dc[2] = {offsetof(struct dc, d), offsetof(struct dc, c)};
    MPI_Datatype ty_dc[2] = {MPI_DOUBLE, MPI_CHAR};
    MTEST_CALL(MPI_Type_create_struct(2, bl, d_dc, ty_dc, &t_dc));
    CHECK_LAYOUT(t_dc, 9, 0, (long long)sizeof(struct dc), 0, 9);

    MPI_Aint d_ic[2] = {offsetof(struct ic, i), offsetof(struct ic, c)};
    MPI_Datatype ty_ic[2] = {MPI_INT, MPI_CHAR};
    MTEST_CALL(MPI_Type_create_struct(2, bl, d_ic, ty_ic, &t_ic));
    CHECK_LAYOUT(t_ic, 5, 0, (long long)sizeof(struct ic), 0, 5);

    MPI_Aint d_sld[2] = {offsetof(struct sld, s), offsetof(struct sld, ld)};
    MPI_Datatype ty_sld[2] = {MPI_SHORT, MPI_LONG_DOUBLE};
    MTEST_CALL(MPI_Type_create_struct(2, bl, d_sld, ty_sld, &t_sld));
    CHECK_LAYOUT(t_sld, 18, 0, (long long)sizeof(struct sld), 0, 32);

    /* Three chars: no padding. */
    int bl3[1] = {3};
    MPI_Aint d3[1] = {0};
    MPI_Datatype ty3[1] = {MPI_CHAR};
    MTEST_CALL(MPI_Type_create_struct(1, bl3, d3, ty3, &t_chars));
    CHECK_LAYOUT(t_chars, 3, 0, 3, 0, 3);

    /* Two struct cd's at 0 and 100, then a char at 99 (unordered): the struct's extent is
     * rounded up to the alignment of double. */
    int bln[3] = {1, 1, 1};
    MPI_Aint dn[3] = {0, 100, 99};
    MPI_Datatype tyn[3] = {t_cd, t_cd, MPI_CHAR};
    MTEST_CALL(MPI_Type_create_struct(3, bln, dn, tyn, &t_nested));
    CHECK_LAYOUT(t_nested, 19, 0, 120, 0, 116);

    commit_free(&t_cd);
    commit_free(&t_dc);
    commit_free(&t_ic);
    commit_free(&t_sld);
    commit_free(&t_chars);
    commit_free(&t_nested);
}

static void markers_and_resized(void)
{
    MPI_Datatype r, r2, lbub, lbub2;

    MTEST_CALL(MPI_Type_create_resized(MPI_INT, -2, 10, &r));
    CHECK_LAYOUT(r, 4, -2, 10, 0, 4);
    MTEST_CALL(MPI_Type_contiguous(2, r, &r2));
    CHECK_LAYOUT(r2, 8, -2, 20, 0, 14);

    /* MPI_LB / MPI_UB markers in a struct set explicit bounds. */
    int bl[3] = {1, 1, 1};
    MPI_Aint d[3] = {-4, 0, 20};
    MPI_Datatype ty[3] = {MPI_LB, MPI_INT, MPI_UB};
    MTEST_CALL(MPI_Type_create_struct(3, bl, d, ty, &lbub));
    CHECK_LAYOUT(lbub, 4, -4, 24, 0, 4);
    /* Markers are sticky: a vector of them steps by the marked extent. */
    MTEST_CALL(MPI_Type_vector(2, 1, 1, lbub, &lbub2));
    CHECK_LAYOUT(lbub2, 8, -4, 48, 0, 28);

    commit_free(&r);
    commit_free(&r2);
    commit_free(&lbub);
    commit_free(&lbub2);
}

static void arrays(void)
{
    MPI_Datatype sub_c, sub_f, da1, da2;
    int sizes[2] = {4, 5}, subsizes[2] = {2, 3}, starts[2] = {1, 1};

    MTEST_CALL(MPI_Type_create_subarray(2, sizes, subsizes, starts, MPI_ORDER_C, MPI_INT, &sub_c));
    CHECK_LAYOUT(sub_c, 24, 0, 80, 24, 32);
    MTEST_CALL(
        MPI_Type_create_subarray(2, sizes, subsizes, starts, MPI_ORDER_FORTRAN, MPI_INT, &sub_f));
    CHECK_LAYOUT(sub_f, 24, 0, 80, 20, 40);

    /* 8 ints block-distributed over 4 processes: process 1 owns elements 2 and 3. */
    int g1[1] = {8}, dist1[1] = {MPI_DISTRIBUTE_BLOCK}, darg1[1] = {MPI_DISTRIBUTE_DFLT_DARG},
        p1[1] = {4};
    MTEST_CALL(MPI_Type_create_darray(4, 1, 1, g1, dist1, darg1, p1, MPI_ORDER_C, MPI_INT, &da1));
    CHECK_LAYOUT(da1, 8, 0, 32, 8, 8);

    /* A 4x6 array, cyclic(1) rows and cyclic(2) columns on a 2x2 grid; process 3 is grid
     * position (1,1): rows 1 and 3, columns 2 and 3. */
    int g2[2] = {4, 6}, dist2[2] = {MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_CYCLIC},
        darg2[2] = {1, 2}, p2[2] = {2, 2};
    MTEST_CALL(MPI_Type_create_darray(4, 3, 2, g2, dist2, darg2, p2, MPI_ORDER_C, MPI_INT, &da2));
    CHECK_LAYOUT(da2, 16, 0, 96, 32, 56);

    commit_free(&sub_c);
    commit_free(&sub_f);
    commit_free(&da1);
    commit_free(&da2);
}

static void predefined(void)
{
    CHECK_LAYOUT(MPI_INT, 4, 0, 4, 0, 4);
    CHECK_LAYOUT(MPI_DOUBLE, 8, 0, 8, 0, 8);
    CHECK_LAYOUT(MPI_CHAR, 1, 0, 1, 0, 1);
    CHECK_LAYOUT(MPI_2INT, 8, 0, 8, 0, 8);
    CHECK_LAYOUT(MPI_FLOAT_INT, 8, 0, 8, 0, 8);
    CHECK_LAYOUT(MPI_DOUBLE_INT, 12, 0, 16, 0, 12);
    CHECK_LAYOUT(MPI_LONG_INT, 12, 0, 16, 0, 12);
    CHECK_LAYOUT(MPI_SHORT_INT, 6, 0, 8, 0, 8);
    CHECK_LAYOUT(MPI_LONG_DOUBLE_INT, 20, 0, 32, 0, 20);

    /* MPI_Type_commit of a predefined type is allowed and changes nothing. */
    MPI_Datatype t = MPI_INT;
    MTEST_CALL(MPI_Type_commit(&t));
    MTEST_CHECK(t == MPI_INT, "MPI_Type_commit changed a predefined handle");
}

static void decoding(void)
{
    int ni, na, nd, comb;
    MTEST_CALL(MPI_Type_get_envelope(MPI_INT, &ni, &na, &nd, &comb));
    MTEST_EQ("combiner of MPI_INT", MPI_COMBINER_NAMED, comb);

    MPI_Datatype vec, con, dup;
    MTEST_CALL(MPI_Type_vector(3, 2, 4, MPI_INT, &vec));
    MTEST_CALL(MPI_Type_get_envelope(vec, &ni, &na, &nd, &comb));
    MTEST_EQ("vector combiner", MPI_COMBINER_VECTOR, comb);
    MTEST_EQ("vector num_integers", 3, ni);
    MTEST_EQ("vector num_addresses", 0, na);
    MTEST_EQ("vector num_datatypes", 1, nd);
    int ints[8];
    MPI_Aint addrs[8];
    MPI_Datatype tys[8];
    MTEST_CALL(MPI_Type_get_contents(vec, 8, 8, 8, ints, addrs, tys));
    MTEST_EQ("vector count", 3, ints[0]);
    MTEST_EQ("vector blocklength", 2, ints[1]);
    MTEST_EQ("vector stride", 4, ints[2]);
    MTEST_CHECK(tys[0] == MPI_INT, "vector contents: oldtype is not MPI_INT");

    /* A derived component comes back as a datatype the caller frees. */
    MTEST_CALL(MPI_Type_contiguous(5, vec, &con));
    MTEST_CALL(MPI_Type_get_envelope(con, &ni, &na, &nd, &comb));
    MTEST_EQ("contiguous combiner", MPI_COMBINER_CONTIGUOUS, comb);
    MTEST_CALL(MPI_Type_get_contents(con, 1, 0, 1, ints, addrs, tys));
    MTEST_EQ("contiguous count", 5, ints[0]);
    MTEST_CALL(MPI_Type_get_envelope(tys[0], &ni, &na, &nd, &comb));
    MTEST_EQ("component combiner", MPI_COMBINER_VECTOR, comb);
    CHECK_LAYOUT(tys[0], 24, 0, 40, 0, 40);
    MTEST_CALL(MPI_Type_free(&tys[0]));

    /* Struct contents: integers are count then blocklengths; addresses the displacements. */
    int bl[2] = {1, 3};
    MPI_Aint d[2] = {8, 0};
    MPI_Datatype ty[2] = {MPI_DOUBLE, MPI_SHORT};
    MPI_Datatype st;
    MTEST_CALL(MPI_Type_create_struct(2, bl, d, ty, &st));
    MTEST_CALL(MPI_Type_get_envelope(st, &ni, &na, &nd, &comb));
    MTEST_EQ("struct combiner", MPI_COMBINER_STRUCT, comb);
    MTEST_CHECK(ni == 3 && na == 2 && nd == 2, "struct envelope %d %d %d", ni, na, nd);
    MTEST_CALL(MPI_Type_get_contents(st, 3, 2, 2, ints, addrs, tys));
    MTEST_CHECK(ints[0] == 2 && ints[1] == 1 && ints[2] == 3, "struct integers %d %d %d", ints[0],
                ints[1], ints[2]);
    MTEST_CHECK(addrs[0] == 8 && addrs[1] == 0, "struct addresses %ld %ld", (long)addrs[0],
                (long)addrs[1]);
    MTEST_CHECK(tys[0] == MPI_DOUBLE && tys[1] == MPI_SHORT, "struct types");

    /* Resized: two addresses. */
    MPI_Datatype rs;
    MTEST_CALL(MPI_Type_create_resized(MPI_INT, -8, 32, &rs));
    MTEST_CALL(MPI_Type_get_envelope(rs, &ni, &na, &nd, &comb));
    MTEST_EQ("resized combiner", MPI_COMBINER_RESIZED, comb);
    MTEST_CALL(MPI_Type_get_contents(rs, 0, 2, 1, ints, addrs, tys));
    MTEST_CHECK(addrs[0] == -8 && addrs[1] == 32, "resized addresses");

    /* Dup: same layout, combiner DUP, commit state kept. */
    MTEST_CALL(MPI_Type_commit(&vec));
    MTEST_CALL(MPI_Type_dup(vec, &dup));
    CHECK_LAYOUT(dup, 24, 0, 40, 0, 40);
    MTEST_CALL(MPI_Type_get_envelope(dup, &ni, &na, &nd, &comb));
    MTEST_EQ("dup combiner", MPI_COMBINER_DUP, comb);
    /* The dup is committed: usable for communication at once. */
    int src[12], dst[12];
    for (int i = 0; i < 12; i++) {
        src[i] = i + 1;
        dst[i] = 0;
    }
    MTEST_CALL(MPI_Sendrecv(src, 1, dup, 0, 1, dst, 6, MPI_INT, 0, 1, MPI_COMM_SELF,
                            MPI_STATUS_IGNORE));
    int want[6] = {1, 2, 5, 6, 9, 10};
    for (int i = 0; i < 6; i++) {
        MTEST_EQ("dup-typed message element", want[i], dst[i]);
    }

    MTEST_CALL(MPI_Type_free(&vec));
    MTEST_CALL(MPI_Type_free(&con));
    MTEST_CALL(MPI_Type_free(&st));
    MTEST_CALL(MPI_Type_free(&rs));
    MTEST_CALL(MPI_Type_free(&dup));
}

static void names(void)
{
    char name[MPI_MAX_OBJECT_NAME];
    int len = -1;
    MTEST_CALL(MPI_Type_get_name(MPI_INT, name, &len));
    MTEST_CHECK(strcmp(name, "MPI_INT") == 0 && len == 7, "name of MPI_INT is '%s' (%d)", name, len);
    MTEST_CALL(MPI_Type_get_name(MPI_DOUBLE_INT, name, &len));
    MTEST_CHECK(strcmp(name, "MPI_DOUBLE_INT") == 0, "name of MPI_DOUBLE_INT is '%s'", name);

    MPI_Datatype t;
    MTEST_CALL(MPI_Type_contiguous(2, MPI_INT, &t));
    MTEST_CALL(MPI_Type_get_name(t, name, &len));
    MTEST_CHECK(len == 0 && name[0] == 0, "a new type has name '%s' (%d)", name, len);
    MTEST_CALL(MPI_Type_set_name(t, "pair of ints"));
    MTEST_CALL(MPI_Type_get_name(t, name, &len));
    MTEST_CHECK(strcmp(name, "pair of ints") == 0 && len == 12, "name is '%s' (%d)", name, len);
    MTEST_CALL(MPI_Type_free(&t));
}

static void addresses(void)
{
    double a[4];
    MPI_Aint p0, p3;
    MTEST_CALL(MPI_Get_address(&a[0], &p0));
    MTEST_CALL(MPI_Get_address(&a[3], &p3));
    MTEST_EQ("MPI_Get_address difference", 24, (long long)MPI_Aint_diff(p3, p0));
    MTEST_EQ("MPI_Aint_add", (long long)p3, (long long)MPI_Aint_add(p0, 24));
    MTEST_CHECK(p0 == (MPI_Aint)(uintptr_t)&a[0], "MPI_Get_address is not the address");
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    basic_constructors();
    structs();
    markers_and_resized();
    arrays();
    predefined();
    decoding();
    names();
    addresses();
    return mtest_finalize();
}
