/*
 * Every collective on communicators of every size from 1 to the world size, made with
 * MPI_Comm_split in reverse rank order and freed again (so context ids are reused by
 * communicators with other members), with every root.
 */
#include "mtest.h"
#include "common.h"

static void battery(MPI_Comm c, int k)
{
    int r, n;
    MTEST_CALL(MPI_Comm_rank(c, &r));
    MTEST_CALL(MPI_Comm_size(c, &n));
    MTEST_EQ("size of the split communicator", k, n);
    int s[4 * 16], d[4 * 16], e[4];
    char what[64];
    for (int i = 0; i < 4 * n; i++) s[i] = cval(k, r, i) % 1000;
    for (int root = 0; root < n; root++) {
        snprintf(what, sizeof what, "size %d root %d", n, root);
        int b[4];
        for (int i = 0; i < 4; i++) b[i] = r == root ? s[i] : -1;
        MTEST_CALL(MPI_Bcast(b, 4, MPI_INT, root, c));
        CHECK_INTS(what, b, 4, cval(k, root, (int)i) % 1000);
        MTEST_CALL(MPI_Reduce(s, d, 4, MPI_INT, MPI_SUM, root, c));
        for (int i = 0; i < 4; i++) {
            e[i] = 0;
            for (int q = 0; q < n; q++) e[i] += cval(k, q, i) % 1000;
        }
        if (r == root) CHECK_INTS(what, d, 4, e[i]);
        MTEST_CALL(MPI_Gather(s, 2, MPI_INT, d, 2, MPI_INT, root, c));
        if (r == root) CHECK_INTS(what, d, 2 * n, cval(k, (int)i / 2, (int)i % 2) % 1000);
        MTEST_CALL(MPI_Scatter(s, 2, MPI_INT, d, 2, MPI_INT, root, c));
        CHECK_INTS(what, d, 2, cval(k, root, 2 * r + (int)i) % 1000);
    }
    MTEST_CALL(MPI_Allreduce(s, d, 4, MPI_INT, MPI_SUM, c));
    CHECK_INTS("allreduce", d, 4, e[i]);
    MTEST_CALL(MPI_Allgather(s, 2, MPI_INT, d, 2, MPI_INT, c));
    CHECK_INTS("allgather", d, 2 * n, cval(k, (int)i / 2, (int)i % 2) % 1000);
    MTEST_CALL(MPI_Alltoall(s, 2, MPI_INT, d, 2, MPI_INT, c));
    CHECK_INTS("alltoall", d, 2 * n, cval(k, (int)i / 2, 2 * r + (int)i % 2) % 1000);
    MTEST_CALL(MPI_Scan(s, d, 1, MPI_INT, MPI_SUM, c));
    int pre = 0;
    for (int q = 0; q <= r; q++) pre += cval(k, q, 0) % 1000;
    MTEST_EQ("scan", pre, d[0]);
    MTEST_CALL(MPI_Exscan(s, d, 1, MPI_INT, MPI_SUM, c));
    if (r > 0) MTEST_EQ("exscan", pre - s[0], d[0]);
    MTEST_CALL(MPI_Reduce_scatter_block(s, d, 2, MPI_INT, MPI_SUM, c));
    for (int i = 0; i < 2; i++) {
        int t = 0;
        for (int q = 0; q < n; q++) t += cval(k, q, 2 * r + i) % 1000;
        MTEST_EQ("reduce_scatter_block", t, d[i]);
    }
    MTEST_CALL(MPI_Barrier(c));
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int r = mtest_rank(), n = mtest_size();
    if (n > 16) return mtest_skip("at most 16 ranks");
    for (int round = 0; round < 2; round++) {
        for (int k = 1; k <= n; k++) {
            /* round 0: the first k ranks; round 1: the last k ranks */
            int in = round == 0 ? r < k : r >= n - k;
            MPI_Comm c;
            MTEST_CALL(MPI_Comm_split(MPI_COMM_WORLD, in ? 0 : MPI_UNDEFINED, n - r, &c));
            if (in) {
                MTEST_CALL(MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN));
                battery(c, k);
                MTEST_CALL(MPI_Comm_free(&c));
            } else {
                MTEST_CHECK(c == MPI_COMM_NULL, "MPI_Comm_split with MPI_UNDEFINED gave a communicator");
            }
        }
    }
    return mtest_finalize();
}
