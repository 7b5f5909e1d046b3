/*
 * MPI_Gather, MPI_Gatherv, MPI_Scatter, MPI_Scatterv from every root: zero and non-zero
 * counts, MPI_IN_PLACE at the root, v-variants with zero counts and displacements in
 * reverse rank order with gaps (which must stay untouched), different send and receive
 * datatypes with the same signature, a non-root passing NULL and MPI_DATATYPE_NULL for
 * its insignificant arguments.
 */
#include "mtest.h"
#include "common.h"

static int r, n;

static void gather(MPI_Comm comm, int root, int cnt, int in_place)
{
    int seed = 100 + root * 7 + cnt;
    char what[96];
    snprintf(what, sizeof what, "MPI_Gather root %d count %d%s", root, cnt, in_place ? " in place" : "");
    gbuf s = gbuf_new((size_t)cnt, 0);
    for (int i = 0; i < cnt; i++) s.p[i] = cval(seed, r, i);
    if (r == root) {
        gbuf g = gbuf_new((size_t)(cnt * n), -1);
        if (in_place) {
            for (int i = 0; i < cnt; i++) g.p[r * cnt + i] = cval(seed, r, i);
            MTEST_CALL(MPI_Gather(MPI_IN_PLACE, cnt, MPI_INT, g.p, cnt, MPI_INT, root, comm));
        } else {
            MTEST_CALL(MPI_Gather(s.p, cnt, MPI_INT, g.p, cnt, MPI_INT, root, comm));
        }
        CHECK_INTS(what, g.p, cnt * n, cval(seed, (int)i / cnt, (int)i % cnt));
        gbuf_guards(g, what);
        gbuf_free(&g);
    } else {
        MTEST_CALL(MPI_Gather(s.p, cnt, MPI_INT, NULL, 0, MPI_DATATYPE_NULL, root, comm));
    }
    gbuf_free(&s);
}

/* Block layout of the v-variants: rank i has cnt(i) elements at displs[i]; blocks are in
 * reverse rank order with one-element gaps. */
static int vcount(int root, int i)
{
    return (i * 3 + root) % 4 == 1 ? 0 : (i * 5 + root) % 7 + 1;
}

static int vlayout(int root, int *counts, int *displs)
{
    int at = 1;
    for (int i = n - 1; i >= 0; i--) {
        counts[i] = vcount(root, i);
        displs[i] = at;
        at += counts[i] + 1;
    }
    return at;
}

static void gatherv(MPI_Comm comm, int root, int in_place)
{
    int seed = 300 + root;
    int mine = vcount(root, r);
    char what[96];
    snprintf(what, sizeof what, "MPI_Gatherv root %d%s", root, in_place ? " in place" : "");
    gbuf s = gbuf_new((size_t)mine, 0);
    for (int i = 0; i < mine; i++) s.p[i] = cval(seed, r, i);
    if (r == root) {
        int *counts = mtest_malloc(sizeof(int) * n), *displs = mtest_malloc(sizeof(int) * n);
        int total = vlayout(root, counts, displs);
        gbuf g = gbuf_new((size_t)total, -3);
        if (in_place) {
            for (int i = 0; i < mine; i++) g.p[displs[r] + i] = cval(seed, r, i);
            MTEST_CALL(MPI_Gatherv(MPI_IN_PLACE, mine, MPI_INT, g.p, counts, displs, MPI_INT, root, comm));
        } else {
            MTEST_CALL(MPI_Gatherv(s.p, mine, MPI_INT, g.p, counts, displs, MPI_INT, root, comm));
        }
        for (int k = 0; k < n; k++) {
            CHECK_INTS(what, g.p + displs[k], counts[k], cval(seed, k, (int)i));
            MTEST_EQ("gap before a block", -3, g.p[displs[k] - 1]);
        }
        MTEST_EQ("gap at the end", -3, g.p[total - 1]);
        gbuf_guards(g, what);
        gbuf_free(&g);
        free(counts);
        free(displs);
    } else {
        MTEST_CALL(MPI_Gatherv(s.p, mine, MPI_INT, NULL, NULL, NULL, MPI_DATATYPE_NULL, root, comm));
    }
    gbuf_free(&s);
}

static void scatter(MPI_Comm comm, int root, int cnt, int in_place)
{
    int seed = 500 + root * 3 + cnt;
    char what[96];
    snprintf(what, sizeof what, "MPI_Scatter root %d count %d%s", root, cnt, in_place ? " in place" : "");
    gbuf d = gbuf_new((size_t)cnt, -1);
    if (r == root) {
        gbuf s = gbuf_new((size_t)(cnt * n), 0);
        for (int i = 0; i < cnt * n; i++) s.p[i] = cval(seed, i / cnt, i % cnt);
        if (in_place) {
            MTEST_CALL(MPI_Scatter(s.p, cnt, MPI_INT, MPI_IN_PLACE, cnt, MPI_INT, root, comm));
            CHECK_INTS(what, s.p, cnt * n, cval(seed, (int)i / cnt, (int)i % cnt));
        } else {
            MTEST_CALL(MPI_Scatter(s.p, cnt, MPI_INT, d.p, cnt, MPI_INT, root, comm));
            CHECK_INTS(what, d.p, cnt, cval(seed, r, (int)i));
        }
        gbuf_guards(s, what);
        gbuf_free(&s);
    } else {
        MTEST_CALL(MPI_Scatter(NULL, 0, MPI_DATATYPE_NULL, d.p, cnt, MPI_INT, root, comm));
        CHECK_INTS(what, d.p, cnt, cval(seed, r, (int)i));
    }
    gbuf_guards(d, what);
    gbuf_free(&d);
}

static void scatterv(MPI_Comm comm, int root, int in_place)
{
    int seed = 700 + root;
    int mine = vcount(root, r);
    char what[96];
    snprintf(what, sizeof what, "MPI_Scatterv root %d%s", root, in_place ? " in place" : "");
    gbuf d = gbuf_new((size_t)mine, -1);
    if (r == root) {
        int *counts = mtest_malloc(sizeof(int) * n), *displs = mtest_malloc(sizeof(int) * n);
        int total = vlayout(root, counts, displs);
        gbuf s = gbuf_new((size_t)total, -3);
        for (int k = 0; k < n; k++)
            for (int i = 0; i < counts[k]; i++) s.p[displs[k] + i] = cval(seed, k, i);
        if (in_place) {
            MTEST_CALL(MPI_Scatterv(s.p, counts, displs, MPI_INT, MPI_IN_PLACE, mine, MPI_INT, root, comm));
            CHECK_INTS(what, s.p + displs[r], mine, cval(seed, r, (int)i));
        } else {
            MTEST_CALL(MPI_Scatterv(s.p, counts, displs, MPI_INT, d.p, mine, MPI_INT, root, comm));
            CHECK_INTS(what, d.p, mine, cval(seed, r, (int)i));
        }
        gbuf_guards(s, what);
        gbuf_free(&s);
        free(counts);
        free(displs);
    } else {
        MTEST_CALL(MPI_Scatterv(NULL, NULL, NULL, MPI_DATATYPE_NULL, d.p, mine, MPI_INT, root, comm));
        CHECK_INTS(what, d.p, mine, cval(seed, r, (int)i));
    }
    gbuf_guards(d, what);
    gbuf_free(&d);
}

/* Gather ints, received as pairs (a contiguous type of 2 ints), and scatter a vector type. */
static void typed(MPI_Comm comm, int root)
{
    MPI_Datatype pair, vec;
    MTEST_CALL(MPI_Type_contiguous(2, MPI_INT, &pair));
    MTEST_CALL(MPI_Type_commit(&pair));
    MTEST_CALL(MPI_Type_vector(2, 1, 3, MPI_INT, &vec)); /* ints 0 and 3, extent 4 ints */
    MTEST_CALL(MPI_Type_commit(&vec));
    int seed = 900 + root, s[4];
    for (int i = 0; i < 4; i++) s[i] = cval(seed, r, i);
    gbuf g = gbuf_new((size_t)(4 * n), -1);
    MTEST_CALL(MPI_Gather(s, 4, MPI_INT, g.p, 2, pair, root, comm));
    if (r == root) {
        CHECK_INTS("MPI_Gather ints as pairs", g.p, 4 * n, cval(seed, (int)i / 4, (int)i % 4));
    }
    gbuf_guards(g, "MPI_Gather ints as pairs");
    /* Scatter: root sends 2 vec elements (4 ints) to each rank, received as 4 ints. */
    gbuf src = gbuf_new((size_t)(8 * n), -2);
    if (r == root)
        for (int i = 0; i < 8 * n; i++) src.p[i] = cval(seed + 1, i, 0);
    int d[4] = {0, 0, 0, 0};
    MTEST_CALL(MPI_Scatter(src.p, 2, vec, d, 4, MPI_INT, root, comm));
    /* element e of vec at int offset 4e holds ints 4e and 4e+3 */
    for (int k = 0; k < 4; k++) {
        int e = 2 * r + k / 2, off = 4 * e + (k % 2) * 3;
        MTEST_EQ("MPI_Scatter of a vector type", cval(seed + 1, off, 0), d[k]);
    }
    gbuf_free(&g);
    gbuf_free(&src);
    MTEST_CALL(MPI_Type_free(&pair));
    MTEST_CALL(MPI_Type_free(&vec));
}

static void run(MPI_Comm comm)
{
    MTEST_CALL(MPI_Comm_rank(comm, &r));
    MTEST_CALL(MPI_Comm_size(comm, &n));
    static const int counts[] = {0, 1, 5, 3000};
    for (int root = 0; root < n; root++) {
        for (size_t k = 0; k < sizeof counts / sizeof counts[0]; k++) {
            gather(comm, root, counts[k], 0);
            gather(comm, root, counts[k], 1);
            scatter(comm, root, counts[k], 0);
            scatter(comm, root, counts[k], 1);
        }
        gatherv(comm, root, 0);
        gatherv(comm, root, 1);
        scatterv(comm, root, 0);
        scatterv(comm, root, 1);
        typed(comm, root);
    }
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    run(MPI_COMM_WORLD);
    MPI_Comm rev = reversed_world();
    run(rev);
    MTEST_CALL(MPI_Comm_free(&rev));
    return mtest_finalize();
}
