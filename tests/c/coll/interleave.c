/*
 * Collectives on several communicators interleaved (MPI_COMM_WORLD, a duplicate of it,
 * MPI_COMM_SELF, a communicator with the ranks reversed), and wildcard receives
 * (MPI_ANY_SOURCE, MPI_ANY_TAG) posted across collectives on the same communicator:
 * they must receive the user message sent afterwards, never collective traffic.
 */
#include "mtest.h"
#include "common.h"

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int r = mtest_rank(), n = mtest_size();
    MPI_Comm dup, rev = reversed_world();
    MTEST_CALL(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    MTEST_CALL(MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN));
    int rr;
    MTEST_CALL(MPI_Comm_rank(rev, &rr));

    /* Wildcard receives on WORLD and on the duplicate, open during the collectives. */
    int got_w = -1, got_d = -1;
    MPI_Request rq[2];
    MTEST_CALL(MPI_Irecv(&got_w, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &rq[0]));
    MTEST_CALL(MPI_Irecv(&got_d, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, dup, &rq[1]));

    for (int it = 0; it < 50; it++) {
        int root = it % n;
        long long a = r + it, b = -1, c = -1;
        MTEST_CALL(MPI_Allreduce(&a, &b, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD));
        int v[3] = {0, 0, 0};
        if (r == root) v[0] = it, v[1] = 2 * it, v[2] = 3 * it;
        MTEST_CALL(MPI_Bcast(v, 3, MPI_INT, root, dup));
        MTEST_CALL(MPI_Barrier(MPI_COMM_SELF));
        MTEST_CALL(MPI_Allreduce(&a, &c, 1, MPI_LONG_LONG, MPI_MAX, MPI_COMM_SELF));
        long long e = 0;
        for (int k = 0; k < n; k++) e += k + it;
        MTEST_EQ("allreduce on MPI_COMM_WORLD", e, b);
        MTEST_EQ("allreduce on MPI_COMM_SELF", a, c);
        MTEST_EQ("bcast on the duplicate", 3 * it, v[2]);
        int g[64];
        MTEST_CALL(MPI_Allgather(&rr, 1, MPI_INT, g, 1, MPI_INT, rev));
        for (int k = 0; k < n; k++) MTEST_EQ("allgather on the reversed communicator", k, g[k]);
        long long red = -1;
        MTEST_CALL(MPI_Reduce(&a, &red, 1, MPI_LONG_LONG, MPI_SUM, (root + 1) % n, dup));
        if (r == (root + 1) % n) MTEST_EQ("reduce on the duplicate", e, red);
        /* Nobody sends a user message before everyone has left this loop, so the
         * wildcard receives must still be open here. */
        int flag = 1;
        MTEST_CALL(MPI_Request_get_status(rq[0], &flag, MPI_STATUS_IGNORE));
        MTEST_EQ("wildcard receive on MPI_COMM_WORLD still pending after collectives", 0, flag);
        MTEST_CALL(MPI_Request_get_status(rq[1], &flag, MPI_STATUS_IGNORE));
        MTEST_EQ("wildcard receive on the duplicate still pending after collectives", 0, flag);
        MTEST_CALL(MPI_Barrier(MPI_COMM_WORLD));
    }

    /* Now the user messages: from the left neighbour with tag 7 (world) and 8 (dup). */
    int mine = 1000 + r;
    MTEST_CALL(MPI_Send(&mine, 1, MPI_INT, (r + 1) % n, 7, MPI_COMM_WORLD));
    MTEST_CALL(MPI_Send(&mine, 1, MPI_INT, (r + 1) % n, 8, dup));
    MPI_Status st[2];
    MTEST_CALL(MPI_Waitall(2, rq, st));
    int left = (r + n - 1) % n;
    MTEST_STATUS(&st[0], left, 7, MPI_INT, 1);
    MTEST_STATUS(&st[1], left, 8, MPI_INT, 1);
    MTEST_EQ("wildcard receive got the user message (world)", 1000 + left, got_w);
    MTEST_EQ("wildcard receive got the user message (dup)", 1000 + left, got_d);
    /* No rank may go on to mtest_finalize's traffic while a wildcard receive is open. */
    MTEST_CALL(MPI_Barrier(MPI_COMM_WORLD));

    MTEST_CALL(MPI_Comm_free(&dup));
    MTEST_CALL(MPI_Comm_free(&rev));
    return mtest_finalize();
}
