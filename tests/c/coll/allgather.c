/*
 * MPI_Allgather and MPI_Allgatherv: zero, small and large blocks (recursive doubling,
 * Bruck, ring), MPI_IN_PLACE, v-variant blocks with zero counts in reverse rank order with
 * gaps that stay untouched, a non-contiguous receive datatype.
 */
#include "mtest.h"
#include "common.h"

static int r, n;

static void allgather(MPI_Comm comm, int cnt, int in_place)
{
    int seed = 11 + cnt;
    char what[96];
    snprintf(what, sizeof what, "MPI_Allgather count %d%s", cnt, in_place ? " in place" : "");
    gbuf s = gbuf_new((size_t)cnt, 0);
    for (int i = 0; i < cnt; i++) s.p[i] = cval(seed, r, i);
    gbuf g = gbuf_new((size_t)(cnt * n), -1);
    if (in_place) {
        for (int i = 0; i < cnt; i++) g.p[r * cnt + i] = cval(seed, r, i);
        MTEST_CALL(MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, g.p, cnt, MPI_INT, comm));
    } else {
        MTEST_CALL(MPI_Allgather(s.p, cnt, MPI_INT, g.p, cnt, MPI_INT, comm));
    }
    CHECK_INTS(what, g.p, cnt * n, cval(seed, (int)i / cnt, (int)i % cnt));
    gbuf_guards(g, what);
    gbuf_guards(s, what);
    gbuf_free(&g);
    gbuf_free(&s);
}

static int vcount(int salt, int i)
{
    return (i + salt) % 3 == 0 ? 0 : (i * 7 + salt) % 11 + 1;
}

static void allgatherv(MPI_Comm comm, int salt, int scale, int in_place)
{
    int seed = 40 + salt;
    char what[96];
    snprintf(what, sizeof what, "MPI_Allgatherv salt %d scale %d%s", salt, scale, in_place ? " in place" : "");
    int *counts = mtest_malloc(sizeof(int) * n), *displs = mtest_malloc(sizeof(int) * n);
    int at = 2;
    for (int i = n - 1; i >= 0; i--) {
        counts[i] = vcount(salt, i) * scale;
        displs[i] = at;
        at += counts[i] + 2;
    }
    gbuf g = gbuf_new((size_t)at, -5);
    int mine = counts[r];
    gbuf s = gbuf_new((size_t)mine, 0);
    for (int i = 0; i < mine; i++) s.p[i] = cval(seed, r, i);
    if (in_place) {
        for (int i = 0; i < mine; i++) g.p[displs[r] + i] = cval(seed, r, i);
        MTEST_CALL(MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, g.p, counts, displs, MPI_INT, comm));
    } else {
        MTEST_CALL(MPI_Allgatherv(s.p, mine, MPI_INT, g.p, counts, displs, MPI_INT, comm));
    }
    for (int k = 0; k < n; k++) {
        CHECK_INTS(what, g.p + displs[k], counts[k], cval(seed, k, (int)i));
        MTEST_EQ("gap before a block", -5, g.p[displs[k] - 1]);
        MTEST_EQ("gap before a block", -5, g.p[displs[k] - 2]);
    }
    gbuf_guards(g, what);
    gbuf_free(&g);
    gbuf_free(&s);
    free(counts);
    free(displs);
}

/* Receive into every other int: a resized type of one int with extent 2 ints. */
static void strided(MPI_Comm comm)
{
    MPI_Datatype two;
    MTEST_CALL(MPI_Type_create_resized(MPI_INT, 0, 2 * sizeof(int), &two));
    MTEST_CALL(MPI_Type_commit(&two));
    int cnt = 3, seed = 77;
    int s[3];
    for (int i = 0; i < cnt; i++) s[i] = cval(seed, r, i);
    gbuf g = gbuf_new((size_t)(2 * cnt * n), -9);
    MTEST_CALL(MPI_Allgather(s, cnt, MPI_INT, g.p, cnt, two, comm));
    CHECK_INTS("MPI_Allgather into a strided type", g.p, 2 * cnt * n,
               i % 2 ? -9 : cval(seed, (int)(i / 2) / cnt, (int)(i / 2) % cnt));
    gbuf_guards(g, "strided");
    gbuf_free(&g);
    MTEST_CALL(MPI_Type_free(&two));
}

static void run(MPI_Comm comm)
{
    MTEST_CALL(MPI_Comm_rank(comm, &r));
    MTEST_CALL(MPI_Comm_size(comm, &n));
    static const int counts[] = {0, 1, 3, 1000, 20000};
    for (size_t k = 0; k < sizeof counts / sizeof counts[0]; k++) {
        allgather(comm, counts[k], 0);
        allgather(comm, counts[k], 1);
    }
    for (int salt = 0; salt < 3; salt++) {
        allgatherv(comm, salt, 1, 0);
        allgatherv(comm, salt, 1, 1);
        allgatherv(comm, salt, 2000, 0);
        allgatherv(comm, salt, 2000, 1);
    }
    strided(comm);
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
