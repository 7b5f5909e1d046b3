/* Group algebra: sizes and ranks, union/intersection/difference ordering rules,
 * incl/excl, range triplets (negative strides too), translate_ranks, compare, the
 * empty group, and bad arguments (MPI_ERR_RANK / MPI_ERR_ARG / MPI_ERR_GROUP). */
#include "mtest.h"

static void check_members(MPI_Group world, MPI_Group g, int n, const int *expect, const char *what)
{
    int size = -1;
    MTEST_CALL(MPI_Group_size(g, &size));
    MTEST_EQ(what, n, size);
    if (size != n) {
        return;
    }
    int *idx = mtest_malloc(sizeof(int) * (size_t)(n ? n : 1));
    int *out = mtest_malloc(sizeof(int) * (size_t)(n ? n : 1));
    for (int i = 0; i < n; i++) {
        idx[i] = i;
    }
    MTEST_CALL(MPI_Group_translate_ranks(g, n, idx, world, out));
    for (int i = 0; i < n; i++) {
        if (out[i] != expect[i]) {
            MTEST_CHECK(0, "%s: member %d is world rank %d, expected %d", what, i, out[i], expect[i]);
        }
    }
    free(idx);
    free(out);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int rank = mtest_rank(), size = mtest_size();
    MPI_Group world, g, h, u, x, d;
    MTEST_CALL(MPI_Comm_group(MPI_COMM_WORLD, &world));

    int r = -1, s = -1;
    MTEST_CALL(MPI_Group_size(world, &s));
    MTEST_CALL(MPI_Group_rank(world, &r));
    MTEST_EQ("world group size", size, s);
    MTEST_EQ("world group rank", rank, r);

    /* reverse order: incl with descending ranks */
    int *rev = mtest_malloc(sizeof(int) * (size_t)size);
    for (int i = 0; i < size; i++) {
        rev[i] = size - 1 - i;
    }
    MTEST_CALL(MPI_Group_incl(world, size, rev, &g));
    check_members(world, g, size, rev, "incl reversed");
    MTEST_CALL(MPI_Group_rank(g, &r));
    MTEST_EQ("rank in reversed group", size - 1 - rank, r);
    int cmp = -1;
    MTEST_CALL(MPI_Group_compare(world, g, &cmp));
    MTEST_EQ("compare world vs reversed", size > 1 ? MPI_SIMILAR : MPI_IDENT, cmp);
    MTEST_CALL(MPI_Group_compare(world, world, &cmp));
    MTEST_EQ("compare world vs world", MPI_IDENT, cmp);

    /* range with a negative stride gives the same reversed group */
    int range_rev[1][3] = {{size - 1, 0, -1}};
    MTEST_CALL(MPI_Group_range_incl(world, 1, range_rev, &h));
    MTEST_CALL(MPI_Group_compare(g, h, &cmp));
    MTEST_EQ("range (n-1,0,-1) vs incl reversed", MPI_IDENT, cmp);
    MTEST_CALL(MPI_Group_free(&h));
    MTEST_CHECK(h == MPI_GROUP_NULL, "MPI_Group_free did not set MPI_GROUP_NULL");

    /* evens and odds by range triplets */
    int evens[1][3] = {{0, size - 1, 2}};
    MPI_Group ev, od;
    MTEST_CALL(MPI_Group_range_incl(world, 1, evens, &ev));
    MTEST_CALL(MPI_Group_range_excl(world, 1, evens, &od));
    int nev = (size + 1) / 2, nod = size / 2;
    int *e = mtest_malloc(sizeof(int) * (size_t)size), *o = mtest_malloc(sizeof(int) * (size_t)size);
    for (int i = 0; i < nev; i++) {
        e[i] = 2 * i;
    }
    for (int i = 0; i < nod; i++) {
        o[i] = 2 * i + 1;
    }
    check_members(world, ev, nev, e, "range_incl evens");
    check_members(world, od, nod, o, "range_excl evens = odds");
    MTEST_CALL(MPI_Group_rank(ev, &r));
    MTEST_EQ("rank in evens", rank % 2 == 0 ? rank / 2 : MPI_UNDEFINED, r);

    /* union keeps the first group's order, then the second's new members */
    MTEST_CALL(MPI_Group_union(od, ev, &u));
    int *uo = mtest_malloc(sizeof(int) * (size_t)size);
    for (int i = 0; i < nod; i++) {
        uo[i] = o[i];
    }
    for (int i = 0; i < nev; i++) {
        uo[nod + i] = e[i];
    }
    check_members(world, u, size, uo, "union odds+evens");
    MTEST_CALL(MPI_Group_compare(u, world, &cmp));
    MTEST_EQ("compare union vs world", size > 1 ? MPI_SIMILAR : MPI_IDENT, cmp);

    /* intersection is in the first group's order */
    MTEST_CALL(MPI_Group_intersection(g, ev, &x));
    int *xe = mtest_malloc(sizeof(int) * (size_t)size);
    int nx = 0;
    for (int i = size - 1; i >= 0; i--) {
        if (i % 2 == 0) {
            xe[nx++] = i;
        }
    }
    check_members(world, x, nx, xe, "intersection reversed & evens");
    MTEST_CALL(MPI_Group_free(&x));
    MTEST_CALL(MPI_Group_intersection(ev, od, &x));
    MTEST_CALL(MPI_Group_compare(x, MPI_GROUP_EMPTY, &cmp));
    MTEST_EQ("evens & odds is empty", MPI_IDENT, cmp);
    MTEST_CALL(MPI_Group_size(x, &s));
    MTEST_EQ("size of empty intersection", 0, s);
    MTEST_CALL(MPI_Group_free(&x));

    /* difference */
    MTEST_CALL(MPI_Group_difference(world, od, &d));
    check_members(world, d, nev, e, "world minus odds");
    MTEST_CALL(MPI_Group_free(&d));
    MTEST_CALL(MPI_Group_difference(od, world, &d));
    MTEST_CALL(MPI_Group_size(d, &s));
    MTEST_EQ("odds minus world", 0, s);
    MTEST_CALL(MPI_Group_free(&d));

    /* excl */
    int first = 0;
    MTEST_CALL(MPI_Group_excl(world, 1, &first, &d));
    MTEST_CALL(MPI_Group_size(d, &s));
    MTEST_EQ("excl rank 0", size - 1, s);
    MTEST_CALL(MPI_Group_rank(d, &r));
    MTEST_EQ("rank after excl 0", rank == 0 ? MPI_UNDEFINED : rank - 1, r);
    MTEST_CALL(MPI_Group_free(&d));

    /* translate_ranks: PROC_NULL stays, absent gives UNDEFINED */
    int in[3] = {0, MPI_PROC_NULL, size - 1}, out[3] = {-7, -7, -7};
    MTEST_CALL(MPI_Group_translate_ranks(world, 3, in, ev, out));
    MTEST_EQ("translate 0 -> evens", 0, out[0]);
    MTEST_EQ("translate PROC_NULL", MPI_PROC_NULL, out[1]);
    MTEST_EQ("translate last -> evens", (size - 1) % 2 == 0 ? (size - 1) / 2 : MPI_UNDEFINED, out[2]);

    /* several triplets, one of them a single rank */
    if (size >= 4) {
        int tr[2][3] = {{3, 3, 1}, {2, 0, -2}};
        int expect[3] = {3, 2, 0};
        MTEST_CALL(MPI_Group_range_incl(world, 2, tr, &h));
        check_members(world, h, 3, expect, "range_incl {3,3,1},{2,0,-2}");
        MTEST_CALL(MPI_Group_free(&h));
        MTEST_CALL(MPI_Group_range_excl(world, 2, tr, &h));
        MTEST_CALL(MPI_Group_size(h, &s));
        MTEST_EQ("range_excl size", size - 3, s);
        MTEST_CALL(MPI_Group_free(&h));
    }

    /* the empty group */
    MTEST_CALL(MPI_Group_size(MPI_GROUP_EMPTY, &s));
    MTEST_EQ("size of MPI_GROUP_EMPTY", 0, s);
    MTEST_CALL(MPI_Group_rank(MPI_GROUP_EMPTY, &r));
    MTEST_EQ("rank in MPI_GROUP_EMPTY", MPI_UNDEFINED, r);
    MTEST_CALL(MPI_Group_incl(world, 0, NULL, &h));
    MTEST_CALL(MPI_Group_size(h, &s));
    MTEST_EQ("incl of no ranks", 0, s);
    MTEST_CALL(MPI_Group_free(&h));
    MTEST_CALL(MPI_Group_union(MPI_GROUP_EMPTY, world, &h));
    MTEST_CALL(MPI_Group_compare(h, world, &cmp));
    MTEST_EQ("empty + world", MPI_IDENT, cmp);
    MTEST_CALL(MPI_Group_free(&h));

    /* bad arguments */
    int bad1[2] = {0, size};
    MTEST_EXPECT_CLASS(MPI_ERR_RANK, MPI_Group_incl(world, 2, bad1, &h));
    int bad2[1] = {-1};
    MTEST_EXPECT_CLASS(MPI_ERR_RANK, MPI_Group_excl(world, 1, bad2, &h));
    MTEST_EXPECT_CLASS(MPI_ERR_ARG, MPI_Group_incl(world, -1, bad2, &h));
    int zero_stride[1][3] = {{0, 0, 0}};
    MTEST_EXPECT_CLASS(MPI_ERR_ARG, MPI_Group_range_incl(world, 1, zero_stride, &h));
    {
        int oob[1][3] = {{0, size, 1}};
        int rc = MPI_Group_range_incl(world, 1, oob, &h);
        int cls = mtest_errclass(rc);
        MTEST_CHECK(rc != MPI_SUCCESS && (cls == MPI_ERR_RANK || cls == MPI_ERR_ARG),
                    "range past the group: expected MPI_ERR_RANK or MPI_ERR_ARG, got %d", cls);
    }
    MTEST_EXPECT_CLASS(MPI_ERR_GROUP, MPI_Group_size(MPI_GROUP_NULL, &s));
    MPI_Group null = MPI_GROUP_NULL;
    MTEST_EXPECT_CLASS(MPI_ERR_GROUP, MPI_Group_free(&null));
    MTEST_EXPECT_CLASS(MPI_ERR_RANK, MPI_Group_translate_ranks(world, 1, bad1 + 1, ev, out));

    /* a freed handle is invalid */
    MPI_Group gone;
    MTEST_CALL(MPI_Group_incl(world, 1, &first, &gone));
    MPI_Group copy = gone;
    MTEST_CALL(MPI_Group_free(&gone));
    (void)copy;

    MTEST_CALL(MPI_Group_free(&u));
    MTEST_CALL(MPI_Group_free(&ev));
    MTEST_CALL(MPI_Group_free(&od));
    MTEST_CALL(MPI_Group_free(&g));
    MTEST_CALL(MPI_Group_free(&world));
    free(rev);
    free(e);
    free(o);
    free(uo);
    free(xe);
    return mtest_finalize();
}
