/*
 * Collectives on an intercommunicator made of the even and the odd ranks of
 * MPI_COMM_WORLD: Barrier, Bcast, Reduce, Allreduce, Gather(v), Scatter(v), Allgather(v),
 * Alltoall, Reduce_scatter_block, with every root in both groups (MPI_ROOT,
 * MPI_PROC_NULL, remote rank), and the calls not defined on intercommunicators.
 */
#include "mtest.h"
#include "common.h"

static int color, lr, ln, rn;

/* Value element i of local rank k of group g contributes in test `seed`. */
static int gv(int seed, int g, int k, int i)
{
    return cval(seed * 2 + g, k, i) % 10000;
}

static int root_arg(int g, int rr)
{
    if (color == g) return lr == rr ? MPI_ROOT : MPI_PROC_NULL;
    return rr;
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int r = mtest_rank(), n = mtest_size();
    if (n < 2) return mtest_skip("needs 2 ranks");
    color = r % 2;
    MPI_Comm half, ic;
    MTEST_CALL(MPI_Comm_split(MPI_COMM_WORLD, color, r, &half));
    MTEST_CALL(MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, 1 - color, 77, &ic));
    MTEST_CALL(MPI_Comm_set_errhandler(ic, MPI_ERRORS_RETURN));
    MTEST_CALL(MPI_Comm_rank(ic, &lr));
    MTEST_CALL(MPI_Comm_size(ic, &ln));
    MTEST_CALL(MPI_Comm_remote_size(ic, &rn));
    int other = 1 - color;
    int big = 3000;
    int *s = mtest_malloc(sizeof(int) * big * 8), *d = mtest_malloc(sizeof(int) * big * 8);
    int *counts = mtest_malloc(sizeof(int) * 16), *displs = mtest_malloc(sizeof(int) * 16);

    for (int it = 0; it < 3; it++) MTEST_CALL(MPI_Barrier(ic));

    for (int g = 0; g < 2; g++) {
        int gsize = g == color ? ln : rn;
        for (int rr = 0; rr < gsize; rr++) {
            int root = root_arg(g, rr), seed = 10 + g * 16 + rr;
            char what[64];
            /* Bcast */
            for (int cnt = 5; cnt <= big; cnt += big - 5) {
                snprintf(what, sizeof what, "Bcast group %d root %d count %d", g, rr, cnt);
                for (int i = 0; i < cnt; i++) d[i] = root == MPI_ROOT ? gv(seed, g, rr, i) : -1;
                MTEST_CALL(MPI_Bcast(d, cnt, MPI_INT, root, ic));
                if (color != g) CHECK_INTS(what, d, cnt, gv(seed, g, rr, (int)i));
            }
            /* Reduce: the other group's sum arrives at the root. */
            snprintf(what, sizeof what, "Reduce group %d root %d", g, rr);
            for (int i = 0; i < 4; i++) s[i] = gv(seed, color, lr, i), d[i] = -1;
            MTEST_CALL(MPI_Reduce(s, d, 4, MPI_INT, MPI_SUM, root, ic));
            if (root == MPI_ROOT) {
                for (int i = 0; i < 4; i++) {
                    int e = 0;
                    for (int k = 0; k < rn; k++) e += gv(seed, other, k, i);
                    MTEST_EQ(what, e, d[i]);
                }
            }
            /* Gather / Scatter */
            snprintf(what, sizeof what, "Gather group %d root %d", g, rr);
            for (int i = 0; i < 3; i++) s[i] = gv(seed + 1, color, lr, i);
            for (int i = 0; i < 3 * rn; i++) d[i] = -1;
            MTEST_CALL(MPI_Gather(s, 3, MPI_INT, d, 3, MPI_INT, root, ic));
            if (root == MPI_ROOT) CHECK_INTS(what, d, 3 * rn, gv(seed + 1, other, (int)i / 3, (int)i % 3));
            snprintf(what, sizeof what, "Scatter group %d root %d", g, rr);
            for (int i = 0; i < 2 * rn; i++) s[i] = gv(seed + 2, color, i / 2, i % 2);
            d[0] = d[1] = -1;
            MTEST_CALL(MPI_Scatter(s, 2, MPI_INT, d, 2, MPI_INT, root, ic));
            if (color != g) CHECK_INTS(what, d, 2, gv(seed + 2, g, lr, (int)i));
            /* Gatherv / Scatterv: remote rank k has k % 3 elements, blocks reversed. */
            int at = 0;
            for (int k = rn - 1; k >= 0; k--) counts[k] = k % 3, displs[k] = at, at += counts[k] + 1;
            snprintf(what, sizeof what, "Gatherv group %d root %d", g, rr);
            for (int i = 0; i < lr % 3; i++) s[i] = gv(seed + 3, color, lr, i);
            for (int i = 0; i < at; i++) d[i] = -1;
            MTEST_CALL(MPI_Gatherv(s, lr % 3, MPI_INT, d, counts, displs, MPI_INT, root, ic));
            if (root == MPI_ROOT)
                for (int k = 0; k < rn; k++) CHECK_INTS(what, d + displs[k], counts[k], gv(seed + 3, other, k, (int)i));
            snprintf(what, sizeof what, "Scatterv group %d root %d", g, rr);
            for (int k = 0; k < rn; k++)
                for (int i = 0; i < counts[k]; i++) s[displs[k] + i] = gv(seed + 4, color, k, i);
            d[0] = d[1] = -1;
            MTEST_CALL(MPI_Scatterv(s, counts, displs, MPI_INT, d, lr % 3, MPI_INT, root, ic));
            if (color != g) CHECK_INTS(what, d, lr % 3, gv(seed + 4, g, lr, (int)i));
        }
    }
    /* Allreduce: each group gets the other's sum. */
    for (int cnt = 4; cnt <= big; cnt += big - 4) {
        for (int i = 0; i < cnt; i++) s[i] = gv(90, color, lr, i), d[i] = -1;
        MTEST_CALL(MPI_Allreduce(s, d, cnt, MPI_INT, MPI_SUM, ic));
        for (int i = 0; i < cnt; i++) {
            int e = 0;
            for (int k = 0; k < rn; k++) e += gv(90, other, k, i);
            if (d[i] != e) { mtest_fail_at(__FILE__, __LINE__, "Allreduce count %d element %d: expected %d got %d", cnt, i, e, d[i]); break; }
        }
    }
    /* Allgather and Allgatherv */
    for (int i = 0; i < 2; i++) s[i] = gv(91, color, lr, i);
    MTEST_CALL(MPI_Allgather(s, 2, MPI_INT, d, 2, MPI_INT, ic));
    CHECK_INTS("Allgather", d, 2 * rn, gv(91, other, (int)i / 2, (int)i % 2));
    int at = 0;
    for (int k = rn - 1; k >= 0; k--) counts[k] = (k + 1) % 3, displs[k] = at, at += counts[k];
    for (int i = 0; i < (lr + 1) % 3; i++) s[i] = gv(92, color, lr, i);
    MTEST_CALL(MPI_Allgatherv(s, (lr + 1) % 3, MPI_INT, d, counts, displs, MPI_INT, ic));
    for (int k = 0; k < rn; k++) CHECK_INTS("Allgatherv", d + displs[k], counts[k], gv(92, other, k, (int)i));
    /* Alltoall: block j goes to remote rank j. */
    for (int j = 0; j < rn; j++)
        for (int i = 0; i < 2; i++) s[j * 2 + i] = gv(93, color, lr * 16 + j, i);
    MTEST_CALL(MPI_Alltoall(s, 2, MPI_INT, d, 2, MPI_INT, ic));
    CHECK_INTS("Alltoall", d, 2 * rn, gv(93, other, ((int)i / 2) * 16 + lr, (int)i % 2));
    /* Reduce_scatter_block: vectors of ln * rc elements, rc chosen so both groups agree. */
    int rc = 2 * rn, total = ln * rc;
    for (int i = 0; i < total; i++) s[i] = gv(94, color, lr, i);
    MTEST_CALL(MPI_Reduce_scatter_block(s, d, rc, MPI_INT, MPI_SUM, ic));
    for (int i = 0; i < rc; i++) {
        int e = 0;
        for (int k = 0; k < rn; k++) e += gv(94, other, k, lr * rc + i);
        MTEST_EQ("Reduce_scatter_block", e, d[i]);
    }
    /* Not defined on intercommunicators. */
    int x = 1, y;
    MTEST_EXPECT_CLASS(MPI_ERR_COMM, MPI_Scan(&x, &y, 1, MPI_INT, MPI_SUM, ic));
    MTEST_EXPECT_CLASS(MPI_ERR_COMM, MPI_Exscan(&x, &y, 1, MPI_INT, MPI_SUM, ic));

    free(s); free(d); free(counts); free(displs);
    MTEST_CALL(MPI_Comm_free(&ic));
    MTEST_CALL(MPI_Comm_free(&half));
    return mtest_finalize();
}
