/*
 * Windows whose members span two nodes: before MPI_Init each rank sets OXMPI_NODE_ID
 * from the launcher's PMI_RANK/PMI_SIZE (the first half on one node, the rest on
 * another), so windows over MPI_COMM_WORLD take the message transport with TCP
 * between the halves. Checks: put/get with a derived target type across nodes under
 * fence, exclusive-lock accumulates and fetch-and-op counters, compare-and-swap,
 * post/start/complete/wait, MPI_Rget, a target waiting in MPI_Barrier, a range error
 * answered in the call, and MPI_Win_allocate_shared refused with MPI_ERR_RMA_SHARED.
 * oxmpi-only: the node id is oxmpi's tunable.
 */
#include "mtest.h"

int main(int argc, char **argv)
{
    const char *pr = getenv("PMI_RANK"), *ps = getenv("PMI_SIZE");
    if (pr && ps)
        setenv("OXMPI_NODE_ID", atoi(pr) < (atoi(ps) + 1) / 2 ? "mtest-node-a" : "mtest-node-b", 1);
    mtest_init(&argc, &argv);
    int r = mtest_rank(), n = mtest_size();
    int half = (n + 1) / 2;
    int peer = n > 1 ? (r + half) % n : 0; /* on the other node when n > 1 */

    int *base;
    MPI_Win win;
    MTEST_CALL(MPI_Win_allocate(8 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
    MTEST_CALL(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    for (int i = 0; i < 8; i++)
        base[i] = -1;
    MPI_Datatype odd;
    MTEST_CALL(MPI_Type_vector(4, 1, 2, MPI_INT, &odd));
    MTEST_CALL(MPI_Type_commit(&odd));

    /* Fence: everyone puts 4 values into the odd slots of its right neighbour. */
    int right = (r + 1) % n, left = (r + n - 1) % n;
    int v[4] = {r * 10, r * 10 + 1, r * 10 + 2, r * 10 + 3}, got[4];
    MTEST_CALL(MPI_Win_fence(0, win));
    MTEST_CALL(MPI_Put(v, 4, MPI_INT, right, 1, 1, odd, win));
    MTEST_CALL(MPI_Win_fence(0, win));
    for (int i = 0; i < 4; i++)
        MTEST_EQ("odd slot after fence", left * 10 + i, base[2 * i + 1]);
    MTEST_CALL(MPI_Get(got, 4, MPI_INT, peer, 1, 1, odd, win));
    MTEST_CALL(MPI_Win_fence(0, win));
    int pl = (peer + n - 1) % n;
    for (int i = 0; i < 4; i++)
        MTEST_EQ("get across nodes", pl * 10 + i, got[i]);
    base[0] = 0;
    base[2] = 0;
    base[4] = 0;
    MTEST_CALL(MPI_Win_fence(0, win));

    /* Passive target: accumulates and a counter at rank 0, CAS at the last rank. */
    int one = 1, old;
    for (int i = 0; i < 20; i++) {
        MTEST_CALL(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
        MTEST_CALL(MPI_Accumulate(&one, 1, MPI_INT, 0, 0, 1, MPI_INT, MPI_SUM, win));
        MTEST_CALL(MPI_Win_unlock(0, win));
        MTEST_CALL(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
        MTEST_CALL(MPI_Fetch_and_op(&one, &old, MPI_INT, 0, 2, MPI_SUM, win));
        MTEST_CALL(MPI_Win_unlock(0, win));
    }
    int mine = r + 1, zero = 0, prev = -5;
    MTEST_CALL(MPI_Win_lock(MPI_LOCK_SHARED, n - 1, 0, win));
    MTEST_CALL(MPI_Compare_and_swap(&mine, &zero, &prev, MPI_INT, n - 1, 4, win));
    MTEST_CALL(MPI_Win_unlock(n - 1, win));
    /* A range error is answered in the call and writes nothing. */
    MTEST_CALL(MPI_Win_lock(MPI_LOCK_SHARED, peer, 0, win));
    MTEST_EXPECT_CLASS(MPI_ERR_RMA_RANGE, MPI_Put(v, 4, MPI_INT, peer, 6, 4, MPI_INT, win));
    MPI_Request q;
    int rg = -9;
    MTEST_CALL(MPI_Rget(&rg, 1, MPI_INT, peer, 3, 1, MPI_INT, win, &q));
    MTEST_CALL(MPI_Wait(&q, MPI_STATUS_IGNORE));
    MTEST_EQ("MPI_Rget across nodes", (((peer + n - 1) % n) * 10 + 1), rg);
    MTEST_CALL(MPI_Win_unlock(peer, win));
    MTEST_CALL(MPI_Barrier(MPI_COMM_WORLD));
    if (r == 0) {
        MTEST_EQ("accumulated count", 20 * n, base[0]);
        MTEST_EQ("fetch-and-op count", 20 * n, base[2]);
    }
    int won = prev == 0, winners;
    MTEST_CALL(MPI_Allreduce(&won, &winners, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    MTEST_EQ("compare-and-swap winners", 1, winners);

    /* PSCW between the two nodes: rank r exposes to, and accesses, its peer. */
    if (n > 1 && r != peer && (peer + half) % n == r) {
        MPI_Group world, g;
        MTEST_CALL(MPI_Comm_group(MPI_COMM_WORLD, &world));
        MTEST_CALL(MPI_Group_incl(world, 1, &peer, &g));
        MTEST_CALL(MPI_Win_post(g, 0, win));
        MTEST_CALL(MPI_Win_start(g, 0, win));
        int x = 500 + r;
        MTEST_CALL(MPI_Put(&x, 1, MPI_INT, peer, 5, 1, MPI_INT, win));
        MTEST_CALL(MPI_Win_complete(win));
        MTEST_CALL(MPI_Win_wait(win));
        MTEST_EQ("PSCW put from the other node", 500 + peer, base[5]);
        MTEST_CALL(MPI_Group_free(&g));
        MTEST_CALL(MPI_Group_free(&world));
    }
    MTEST_CALL(MPI_Type_free(&odd));
    MTEST_CALL(MPI_Win_free(&win));

    /* Shared memory across nodes is refused. */
    if (n > 1) {
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        int *sb = NULL;
        MPI_Win sw = MPI_WIN_NULL;
        MTEST_EXPECT_CLASS(MPI_ERR_RMA_SHARED, MPI_Win_allocate_shared(16, 4, MPI_INFO_NULL, MPI_COMM_WORLD, &sb, &sw));
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    }
    return mtest_finalize();
}
