/*
 * Collective state of a reused context id: communicators freed and created again many
 * times (duplicates sharing their parent's group, splits, duplicates of MPI_COMM_SELF
 * at some ranks only, so that a context id comes back to communicators with different
 * histories at different ranks), each running nonblocking and blocking collectives
 * interleaved, every result checked. A collective sequence (or fast-path state) that
 * survived the free would make the members of the new communicator disagree on their
 * tags and hang or mix data.
 */
#include "mtest.h"

#define CYCLES (size <= 2 ? 300 : 60)

/* Runs `n` collectives on `c`, nonblocking and blocking ones interleaved, and checks them. */
static void exercise(MPI_Comm c, int n, int salt)
{
    int rank, size;
    MTEST_CALL(MPI_Comm_rank(c, &rank));
    MTEST_CALL(MPI_Comm_size(c, &size));
    for (int k = 0; k < n; k++) {
        int v = rank + salt + k, sum = -1, isum = -1, b = (rank == 0) ? salt * 7 + k : -1;
        int mx = -1;
        MPI_Request r[3];
        MTEST_CALL(MPI_Iallreduce(&v, &isum, 1, MPI_INT, MPI_SUM, c, &r[0]));
        MTEST_CALL(MPI_Ibcast(&b, 1, MPI_INT, 0, c, &r[1]));
        MTEST_CALL(MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, c));
        MTEST_CALL(MPI_Ibarrier(c, &r[2]));
        MTEST_CALL(MPI_Allreduce(&v, &mx, 1, MPI_INT, MPI_MAX, c));
        MTEST_CALL(MPI_Waitall(3, r, MPI_STATUSES_IGNORE));
        int want = size * (size - 1) / 2 + size * (salt + k);
        MTEST_EQ("iallreduce", want, isum);
        MTEST_EQ("allreduce", want, sum);
        MTEST_EQ("ibcast", salt * 7 + k, b);
        MTEST_EQ("allreduce max", size - 1 + salt + k, mx);
    }
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int rank = mtest_rank(), size = mtest_size();
    MPI_Comm half;
    MTEST_CALL(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half));
    for (int i = 0; i < CYCLES; i++) {
        MPI_Comm a, s, b;
        /* A duplicate shares its parent's group; a different number of calls each cycle. */
        MTEST_CALL(MPI_Comm_dup(MPI_COMM_WORLD, &a));
        exercise(a, 1 + i % 3, i);
        MTEST_CALL(MPI_Comm_free(&a));
        /* Some ranks use the freed context for a communicator of their own meanwhile. */
        if ((rank + i) % 2) {
            MTEST_CALL(MPI_Comm_dup(MPI_COMM_SELF, &s));
            exercise(s, 1 + i % 2, i);
            MTEST_CALL(MPI_Comm_free(&s));
        }
        /* The context may come back to a duplicate of the same parent, or to a split. */
        if (i % 3 == 2) {
            MTEST_CALL(MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &b));
        } else if (i % 3 == 1) {
            MTEST_CALL(MPI_Comm_dup(half, &b));
        } else {
            MTEST_CALL(MPI_Comm_dup(MPI_COMM_WORLD, &b));
        }
        exercise(b, 2, i + 1);
        /* A nonblocking collective on the parent overlapping the free of the child. */
        int one = 1, n = -1;
        MPI_Request r;
        MTEST_CALL(MPI_Iallreduce(&one, &n, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r));
        MTEST_CALL(MPI_Comm_free(&b));
        MTEST_CALL(MPI_Wait(&r, MPI_STATUS_IGNORE));
        MTEST_EQ("iallreduce on the parent", size, n);
    }
    MTEST_CALL(MPI_Comm_free(&half));
    return mtest_finalize();
}
