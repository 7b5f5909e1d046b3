/*
 * Erroneous collective calls that oxmpi reports but MPICH and Open MPI do not all catch:
 * an operation invalid for the datatype at ranks that never apply it, a negative count,
 * MPI_IN_PLACE where this rank may not use it, receive buffers overlapping the send
 * buffer partially (also blocks of MPI_Alltoallw at MPI_BOTTOM), a root whose own send
 * and receive block sizes differ (MPI_Gather, MPI_Scatter), sizes that disagree in
 * MPI_Allgather.
 */
#include "mtest.h"
#include "common.h"

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int r = mtest_rank(), n = mtest_size();
    MPI_Comm w = MPI_COMM_WORLD;
    int a[64], b[64];
    for (int i = 0; i < 64; i++) a[i] = i;

    /* MPI_IN_PLACE at non-roots (every rank calls with a non-existent root's view). */
    if (n > 1) {
        MTEST_EXPECT_CLASS(MPI_ERR_BUFFER, MPI_Reduce(MPI_IN_PLACE, b, 1, MPI_INT, MPI_SUM, r == 0 ? 1 : 0, w));
    }
    /* The one-block buffer of MPI_Gather (send) and MPI_Scatter (receive) may be
     * MPI_IN_PLACE only at the root. */
    if (n > 1) {
        MTEST_EXPECT_CLASS(MPI_ERR_BUFFER, MPI_Gather(MPI_IN_PLACE, 1, MPI_INT, b, 1, MPI_INT, r == 0 ? 1 : 0, w));
        MTEST_EXPECT_CLASS(MPI_ERR_BUFFER, MPI_Scatter(a, 1, MPI_INT, MPI_IN_PLACE, 1, MPI_INT, r == 0 ? 1 : 0, w));
    }
    /* Every rank its own root: the root's own block differs in size (2 ints against 3),
     * and the root's buffers are the same array. */
    MTEST_EXPECT_CLASS(MPI_ERR_TRUNCATE, MPI_Gather(a, 2, MPI_INT, b, 3, MPI_INT, r, w));
    MTEST_EXPECT_CLASS(MPI_ERR_TRUNCATE, MPI_Scatter(a, 3, MPI_INT, b, 2, MPI_INT, r, w));
    {
        int d[64];
        MTEST_EXPECT_CLASS(MPI_ERR_BUFFER, MPI_Gather(d, 1, MPI_INT, d, 1, MPI_INT, r, w));
        MTEST_EXPECT_CLASS(MPI_ERR_BUFFER, MPI_Scatter(d, 1, MPI_INT, d, 1, MPI_INT, r, w));
    }
    /* MPICH checks the operation only where it is applied, and crashes on negative
     * counts in MPI_Allreduce. */
    double x[2] = {1, 2}, y[2];
    MTEST_EXPECT_CLASS(MPI_ERR_OP, MPI_Reduce(x, y, 2, MPI_DOUBLE, MPI_LXOR, 0, w));
    MTEST_EXPECT_CLASS(MPI_ERR_COUNT, MPI_Allreduce(a, b, -2, MPI_INT, MPI_SUM, w));
    /* MPICH crashes on a negative recvcount here. */
    MTEST_EXPECT_CLASS(MPI_ERR_COUNT, MPI_Reduce_scatter_block(a, b, -1, MPI_INT, MPI_SUM, w));
    /* Open MPI does not check these for aliasing. */
    int c[64];
    MTEST_EXPECT_CLASS(MPI_ERR_BUFFER, MPI_Alltoall(c, 1, MPI_INT, c, 1, MPI_INT, w));
    MTEST_EXPECT_CLASS(MPI_ERR_BUFFER, MPI_Allgather(c, 1, MPI_INT, c, 1, MPI_INT, w));
    /* Partial overlap of send and receive buffers. */
    MTEST_EXPECT_CLASS(MPI_ERR_BUFFER, MPI_Allreduce(a, a + 1, 4, MPI_INT, MPI_SUM, w));
    /* The v and w variants compare the blocks, not the buffer addresses: one array with
     * disjoint send and receive blocks is fine; blocks named by absolute addresses at
     * MPI_BOTTOM that meet are aliased. */
    {
        int buf[128], cnt[64], sd[64], rd[64], zero[64];
        MPI_Datatype ts[64], t;
        MPI_Aint at;
        int one = 1;
        for (int i = 0; i < n; i++) {
            cnt[i] = 1, sd[i] = n + i, rd[i] = i, zero[i] = 0;
            buf[n + i] = r * 100 + i, buf[i] = -1;
        }
        MTEST_CALL(MPI_Alltoallv(buf, cnt, sd, MPI_INT, buf, cnt, rd, MPI_INT, w));
        for (int i = 0; i < n; i++) MTEST_EQ("MPI_Alltoallv within one array", i * 100 + r, buf[i]);
        MTEST_CALL(MPI_Get_address(&buf[0], &at));
        MTEST_CALL(MPI_Type_create_hindexed(1, &one, &at, MPI_INT, &t));
        MTEST_CALL(MPI_Type_commit(&t));
        for (int i = 0; i < n; i++) ts[i] = t;
        MTEST_EXPECT_CLASS(MPI_ERR_BUFFER, MPI_Alltoallw(MPI_BOTTOM, cnt, zero, ts, MPI_BOTTOM, cnt, zero, ts, w));
        MTEST_CALL(MPI_Type_free(&t));
    }
    /* The root's own block: 2 ints sent, 3 expected. */
    MTEST_EXPECT_CLASS(MPI_ERR_TRUNCATE, MPI_Allgather(a, 2, MPI_INT, b, 3, MPI_INT, w));
    MTEST_EXPECT_CLASS(MPI_ERR_TRUNCATE, MPI_Alltoall(a, 2, MPI_INT, b, 1, MPI_INT, w));

    int s = r, t = -1;
    MTEST_CALL(MPI_Allreduce(&s, &t, 1, MPI_INT, MPI_MAX, w));
    MTEST_EQ("allreduce after the errors", n - 1, t);
    return mtest_finalize();
}
