/* MPI_Intercomm_merge with both orders of `high`, and with equal `high` on both sides
 * (then either order is allowed, but every process must see the same one), on
 * intercommunicators between the two halves of the world, with traffic on each
 * merged communicator. Needs 2 or more ranks. */
#include "mtest.h"

static MPI_Comm make_intercomm(MPI_Comm *local, int tag)
{
    int rank = mtest_rank(), size = mtest_size(), h = size / 2, low = rank < h;
    MPI_Comm ic;
    MTEST_CALL(MPI_Comm_split(MPI_COMM_WORLD, low, rank, local));
    MTEST_CALL(MPI_Intercomm_create(*local, 0, MPI_COMM_WORLD, low ? h : 0, tag, &ic));
    return ic;
}

static void ring(MPI_Comm c, const char *what)
{
    int r, n, got = -1;
    MTEST_CALL(MPI_Comm_rank(c, &r));
    MTEST_CALL(MPI_Comm_size(c, &n));
    MTEST_CALL(MPI_Sendrecv(&r, 1, MPI_INT, (r + 1) % n, 4, &got, 1, MPI_INT, (r + n - 1) % n, 4, c,
                            MPI_STATUS_IGNORE));
    MTEST_EQ(what, (r + n - 1) % n, got);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int rank = mtest_rank(), size = mtest_size();
    if (size < 2) {
        return mtest_skip("needs at least 2 processes");
    }
    int h = size / 2, low = rank < h, r, n;
    MPI_Comm local, ic, m;

    /* low half high=0: it comes first */
    ic = make_intercomm(&local, 1);
    MTEST_CALL(MPI_Intercomm_merge(ic, !low, &m));
    MTEST_CALL(MPI_Comm_rank(m, &r));
    MTEST_CALL(MPI_Comm_size(m, &n));
    MTEST_EQ("merged size", size, n);
    MTEST_EQ("merged rank, low half first", rank, r);
    ring(m, "ring on merge (low first)");
    MTEST_CALL(MPI_Comm_free(&m));
    MTEST_CALL(MPI_Comm_free(&ic));
    MTEST_CALL(MPI_Comm_free(&local));

    /* high half high=0: it comes first */
    ic = make_intercomm(&local, 2);
    MTEST_CALL(MPI_Intercomm_merge(ic, low, &m));
    MTEST_CALL(MPI_Comm_rank(m, &r));
    MTEST_EQ("merged rank, high half first", low ? (size - h) + rank : rank - h, r);
    ring(m, "ring on merge (high first)");
    MTEST_CALL(MPI_Comm_free(&m));
    MTEST_CALL(MPI_Comm_free(&ic));
    MTEST_CALL(MPI_Comm_free(&local));

    /* equal high: some consistent order, each half contiguous and in its own order */
    ic = make_intercomm(&local, 3);
    MTEST_CALL(MPI_Intercomm_merge(ic, 1, &m));
    MTEST_CALL(MPI_Comm_rank(m, &r));
    int all[2] = {r, rank}, lr;
    MTEST_CALL(MPI_Comm_rank(local, &lr));
    /* rank 0 of the merged communicator tells everyone which half came first */
    int first_low = -1;
    if (r == 0) {
        first_low = low;
        for (int i = 1; i < size; i++) {
            MTEST_CALL(MPI_Send(&first_low, 1, MPI_INT, i, 5, m));
        }
    } else {
        MTEST_CALL(MPI_Recv(&first_low, 1, MPI_INT, 0, 5, m, MPI_STATUS_IGNORE));
    }
    int expect = (low == first_low) ? lr : (first_low ? h : size - h) + lr;
    MTEST_EQ("merged rank with equal high", expect, all[0]);
    ring(m, "ring on merge (equal high)");
    MTEST_CALL(MPI_Comm_free(&m));
    MTEST_CALL(MPI_Comm_free(&ic));
    MTEST_CALL(MPI_Comm_free(&local));
    return mtest_finalize();
}
