/*
 * MPI_Alltoall, MPI_Alltoallv and MPI_Alltoallw: zero, small (Bruck), medium (linear) and
 * large (pairwise) blocks, MPI_IN_PLACE for all three, v-variant blocks with zero counts
 * and displacements in reverse order with gaps that stay untouched, per-peer datatypes
 * and byte displacements for Alltoallw.
 */
#include "mtest.h"
#include "common.h"

static int r, n;

/* Element k of the block that rank `from` sends to rank `to`. */
static int aval(int seed, int from, int to, int k)
{
    return cval(seed, from * 64 + to, k);
}

static void alltoall(MPI_Comm comm, int cnt, int in_place)
{
    int seed = 3 + cnt;
    char what[96];
    snprintf(what, sizeof what, "MPI_Alltoall count %d%s", cnt, in_place ? " in place" : "");
    gbuf s = gbuf_new((size_t)(cnt * n), 0);
    for (int i = 0; i < cnt * n; i++) s.p[i] = aval(seed, r, i / cnt, i % cnt);
    gbuf d = gbuf_new((size_t)(cnt * n), -1);
    if (in_place) {
        MTEST_CALL(MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, s.p, cnt, MPI_INT, comm));
        CHECK_INTS(what, s.p, cnt * n, aval(seed, (int)i / cnt, r, (int)i % cnt));
    } else {
        MTEST_CALL(MPI_Alltoall(s.p, cnt, MPI_INT, d.p, cnt, MPI_INT, comm));
        CHECK_INTS(what, d.p, cnt * n, aval(seed, (int)i / cnt, r, (int)i % cnt));
    }
    gbuf_guards(s, what);
    gbuf_guards(d, what);
    gbuf_free(&s);
    gbuf_free(&d);
}

/* Elements rank `from` sends to rank `to` in the v/w tests (symmetric in from/to for the
 * in-place variants, which require it). */
static int vcount(int salt, int from, int to)
{
    int x = (from + to) * 3 + salt;
    return x % 4 == 0 ? 0 : x % 5 + 1;
}

/* Blocks in reverse peer order with one-element gaps; returns the total length. */
static int layout(int salt, int me, int sending, int scale, int *counts, int *displs)
{
    int at = 1;
    for (int j = n - 1; j >= 0; j--) {
        counts[j] = scale * (sending ? vcount(salt, me, j) : vcount(salt, j, me));
        displs[j] = at;
        at += counts[j] + 1;
    }
    return at;
}

static void alltoallv(MPI_Comm comm, int salt, int scale, int in_place)
{
    int seed = 60 + salt;
    char what[96];
    snprintf(what, sizeof what, "MPI_Alltoallv salt %d scale %d%s", salt, scale, in_place ? " in place" : "");
    int *sc = mtest_malloc(sizeof(int) * n), *sd = mtest_malloc(sizeof(int) * n);
    int *rc = mtest_malloc(sizeof(int) * n), *rd = mtest_malloc(sizeof(int) * n);
    int slen = layout(salt, r, 1, scale, sc, sd);
    int rlen = layout(salt, r, 0, scale, rc, rd);
    gbuf s = gbuf_new((size_t)slen, -4);
    for (int j = 0; j < n; j++)
        for (int k = 0; k < sc[j]; k++) s.p[sd[j] + k] = aval(seed, r, j, k);
    gbuf d = gbuf_new((size_t)rlen, -4);
    gbuf *out = &d;
    if (in_place) {
        /* In place the receive layout holds the outgoing data (counts are symmetric). */
        for (int j = 0; j < n; j++)
            for (int k = 0; k < rc[j]; k++) d.p[rd[j] + k] = aval(seed, r, j, k);
        MTEST_CALL(MPI_Alltoallv(MPI_IN_PLACE, NULL, NULL, MPI_DATATYPE_NULL, d.p, rc, rd, MPI_INT, comm));
    } else {
        MTEST_CALL(MPI_Alltoallv(s.p, sc, sd, MPI_INT, d.p, rc, rd, MPI_INT, comm));
    }
    for (int j = 0; j < n; j++) {
        CHECK_INTS(what, out->p + rd[j], rc[j], aval(seed, j, r, (int)i));
        MTEST_EQ("gap before a block", -4, out->p[rd[j] - 1]);
    }
    gbuf_guards(s, what);
    gbuf_guards(d, what);
    gbuf_free(&s);
    gbuf_free(&d);
    free(sc);
    free(sd);
    free(rc);
    free(rd);
}

/* Alltoallw: to even peers ints as MPI_INT, to odd peers as pairs (contiguous 2 ints);
 * receives the mirror image; byte displacements in reverse order. */
static void alltoallw(MPI_Comm comm, int salt, int in_place)
{
    int seed = 90 + salt;
    char what[96];
    snprintf(what, sizeof what, "MPI_Alltoallw salt %d%s", salt, in_place ? " in place" : "");
    MPI_Datatype pair;
    MTEST_CALL(MPI_Type_contiguous(2, MPI_INT, &pair));
    MTEST_CALL(MPI_Type_commit(&pair));
    int *sc = mtest_malloc(sizeof(int) * n), *sd = mtest_malloc(sizeof(int) * n);
    int *rc = mtest_malloc(sizeof(int) * n), *rd = mtest_malloc(sizeof(int) * n);
    MPI_Datatype *st = mtest_malloc(sizeof(MPI_Datatype) * n), *rt = mtest_malloc(sizeof(MPI_Datatype) * n);
    int *sints = mtest_malloc(sizeof(int) * n), *rints = mtest_malloc(sizeof(int) * n);
    int sat = 1, rat = 1;
    for (int j = n - 1; j >= 0; j--) {
        sints[j] = 2 * vcount(salt, r, j);
        rints[j] = 2 * vcount(salt, j, r);
        /* the sender chooses by the receiver's parity, the receiver by its own */
        st[j] = (j % 2) ? pair : MPI_INT;
        sc[j] = (j % 2) ? sints[j] / 2 : sints[j];
        rt[j] = (r % 2) ? MPI_INT : pair;
        rc[j] = (r % 2) ? rints[j] : rints[j] / 2;
        sd[j] = sat * (int)sizeof(int);
        rd[j] = rat * (int)sizeof(int);
        sat += sints[j] + 1;
        rat += rints[j] + 1;
    }
    gbuf s = gbuf_new((size_t)sat, -6);
    gbuf d = gbuf_new((size_t)rat, -6);
    for (int j = 0; j < n; j++)
        for (int k = 0; k < sints[j]; k++) s.p[sd[j] / 4 + k] = aval(seed, r, j, k);
    if (in_place) {
        for (int j = 0; j < n; j++)
            for (int k = 0; k < rints[j]; k++) d.p[rd[j] / 4 + k] = aval(seed, r, j, k);
        MTEST_CALL(MPI_Alltoallw(MPI_IN_PLACE, NULL, NULL, NULL, d.p, rc, rd, rt, comm));
    } else {
        MTEST_CALL(MPI_Alltoallw(s.p, sc, sd, st, d.p, rc, rd, rt, comm));
    }
    for (int j = 0; j < n; j++) {
        CHECK_INTS(what, d.p + rd[j] / 4, rints[j], aval(seed, j, r, (int)i));
        MTEST_EQ("gap before a block", -6, d.p[rd[j] / 4 - 1]);
    }
    gbuf_guards(s, what);
    gbuf_guards(d, what);
    gbuf_free(&s);
    gbuf_free(&d);
    free(sc); free(sd); free(rc); free(rd); free(st); free(rt); free(sints); free(rints);
    MTEST_CALL(MPI_Type_free(&pair));
}

static void run(MPI_Comm comm)
{
    MTEST_CALL(MPI_Comm_rank(comm, &r));
    MTEST_CALL(MPI_Comm_size(comm, &n));
    static const int counts[] = {0, 1, 3, 100, 10000};
    for (size_t k = 0; k < sizeof counts / sizeof counts[0]; k++) {
        alltoall(comm, counts[k], 0);
        alltoall(comm, counts[k], 1);
    }
    for (int salt = 0; salt < 3; salt++) {
        alltoallv(comm, salt, 1, 0);
        alltoallv(comm, salt, 1, 1);
        alltoallv(comm, salt, 3000, 0);
        alltoallv(comm, salt, 3000, 1);
        alltoallw(comm, salt, 0);
        alltoallw(comm, salt, 1);
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
