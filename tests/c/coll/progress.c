/*
 * Collectives keep point-to-point traffic moving and wake sleeping ranks:
 * - a synchronous send (and a large rendezvous send) that can only complete once the
 *   receiver, already inside a collective, matches it;
 * - ranks arriving late (after a sleep) at barriers, broadcasts, reductions and
 *   gathers, so the others wait long enough to go to sleep and must be woken.
 * Run with and without the shared-memory fast path (OXMPI_COLL_SHM=0).
 */
#include "mtest.h"
#include "common.h"

#define BIG (1 << 20)

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int r = mtest_rank(), n = mtest_size();
    if (n < 2) return mtest_skip("needs 2 ranks");
    MPI_Comm w = MPI_COMM_WORLD;

    /* Rank 1's Ssend to rank 0 completes only when rank 0, in the barrier, matches it. */
    int v = 0;
    char *big = mtest_malloc(BIG);
    if (r == 0) {
        MPI_Request rq[2];
        MTEST_CALL(MPI_Irecv(&v, 1, MPI_INT, 1, 5, w, &rq[0]));
        MTEST_CALL(MPI_Irecv(big, BIG, MPI_CHAR, 1, 6, w, &rq[1]));
        MTEST_CALL(MPI_Barrier(w));
        MTEST_CALL(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
        MTEST_EQ("value sent with MPI_Ssend across a barrier", 42, v);
        MTEST_EQ("large message across a barrier", 7, big[BIG - 1]);
    } else if (r == 1) {
        v = 42;
        memset(big, 7, BIG);
        MTEST_CALL(MPI_Ssend(&v, 1, MPI_INT, 0, 5, w));
        MTEST_CALL(MPI_Send(big, BIG, MPI_CHAR, 0, 6, w));
        MTEST_CALL(MPI_Barrier(w));
    } else {
        MTEST_CALL(MPI_Barrier(w));
    }
    free(big);

    /* Late arrivals: rank (round % n) sleeps before each collective. */
    for (int round = 0; round < 3 * n; round++) {
        int late = round % n;
        if (r == late) mtest_sleep_ms(30);
        int root = (round + 1) % n;
        switch (round % 5) {
        case 0:
            MTEST_CALL(MPI_Barrier(w));
            break;
        case 1: {
            int b = r == root ? round : -1;
            MTEST_CALL(MPI_Bcast(&b, 1, MPI_INT, root, w));
            MTEST_EQ("late bcast", round, b);
            break;
        }
        case 2: {
            int s = r + round, t = -1;
            MTEST_CALL(MPI_Reduce(&s, &t, 1, MPI_INT, MPI_SUM, root, w));
            if (r == root) MTEST_EQ("late reduce", n * round + n * (n - 1) / 2, t);
            break;
        }
        case 3: {
            int s = r, g[64];
            MTEST_CALL(MPI_Gather(&s, 1, MPI_INT, g, 1, MPI_INT, root, w));
            if (r == root)
                for (int k = 0; k < n; k++) MTEST_EQ("late gather", k, g[k]);
            break;
        }
        default: {
            long s = r, t = -1;
            MTEST_CALL(MPI_Allreduce(&s, &t, 1, MPI_LONG, MPI_MAX, w));
            MTEST_EQ("late allreduce", n - 1, t);
            break;
        }
        }
    }
    return mtest_finalize();
}
