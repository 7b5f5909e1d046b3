/*
 * MPI_Comm_idup of an intercommunicator (the two halves of the world): both groups
 * agree on the context; after the wait the duplicate is congruent, has the same remote
 * group, carries traffic both ways and intercommunicator collectives. Two idups on the
 * intercommunicator outstanding together with one on a local communicator, started in
 * different orders in the two groups. MPI_Intercomm_create while idups (of the world and
 * of MPI_COMM_SELF) are in progress and hold context slots: it tries again rather than
 * failing or taking a slot they agree on. Needs 2 or more ranks.
 */
#include "mtest.h"

static void check_inter(MPI_Comm ic, MPI_Comm d, int salt)
{
    int cmp, lr, ls, rs, rrs;
    MTEST_CALL(MPI_Comm_compare(ic, d, &cmp));
    MTEST_EQ("compare with the parent", MPI_CONGRUENT, cmp);
    MTEST_CALL(MPI_Comm_rank(d, &lr));
    MTEST_CALL(MPI_Comm_size(d, &ls));
    MTEST_CALL(MPI_Comm_remote_size(ic, &rs));
    MTEST_CALL(MPI_Comm_remote_size(d, &rrs));
    MTEST_EQ("remote size", rs, rrs);
    /* Allreduce on an intercommunicator gives the sum over the remote group. */
    int sum = 0;
    MTEST_CALL(MPI_Allreduce(&lr, &sum, 1, MPI_INT, MPI_SUM, d));
    MTEST_EQ("intercommunicator allreduce", rs * (rs - 1) / 2, sum);
    /* Local rank 0 of each group swaps a value with remote rank 0. */
    if (lr == 0) {
        int v = salt, got = -1;
        MTEST_CALL(MPI_Sendrecv(&v, 1, MPI_INT, 0, 4, &got, 1, MPI_INT, 0, 4, d,
                                MPI_STATUS_IGNORE));
        MTEST_EQ("value from the remote leader", salt, got);
    }
    (void)ls;
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int rank, size;
    MTEST_CALL(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MTEST_CALL(MPI_Comm_size(MPI_COMM_WORLD, &size));
    if (size < 2) {
        MTEST_ABORT("needs 2 or more ranks");
    }
    int low = rank < size / 2;
    MPI_Comm local, ic;
    MTEST_CALL(MPI_Comm_split(MPI_COMM_WORLD, low, rank, &local));
    MTEST_CALL(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, low ? size / 2 : 0, 11, &ic));

    MPI_Comm d;
    MPI_Request r;
    MTEST_CALL(MPI_Comm_idup(ic, &d, &r));
    MTEST_CALL(MPI_Wait(&r, MPI_STATUS_IGNORE));
    check_inter(ic, d, 1);

    /* Two on the intercommunicator and one on the local communicator, in different
     * orders in the two groups. */
    MPI_Comm a, b, l;
    MPI_Request q[3];
    if (low) {
        MTEST_CALL(MPI_Comm_idup(local, &l, &q[2]));
        MTEST_CALL(MPI_Comm_idup(ic, &a, &q[0]));
        MTEST_CALL(MPI_Comm_idup(d, &b, &q[1]));
    } else {
        MTEST_CALL(MPI_Comm_idup(d, &b, &q[1]));
        MTEST_CALL(MPI_Comm_idup(ic, &a, &q[0]));
        MTEST_CALL(MPI_Comm_idup(local, &l, &q[2]));
    }
    MTEST_CALL(MPI_Waitall(3, q, MPI_STATUSES_IGNORE));
    check_inter(ic, a, 2);
    check_inter(d, b, 3);
    check_inter(a, b, 4);
    int cmp;
    MTEST_CALL(MPI_Comm_compare(local, l, &cmp));
    MTEST_EQ("local duplicate", MPI_CONGRUENT, cmp);
    int lsum = 0, lr, ls;
    MTEST_CALL(MPI_Comm_rank(l, &lr));
    MTEST_CALL(MPI_Comm_size(l, &ls));
    MTEST_CALL(MPI_Allreduce(&lr, &lsum, 1, MPI_INT, MPI_SUM, l));
    MTEST_EQ("local allreduce", ls * (ls - 1) / 2, lsum);

    for (int i = 0; i < 10; i++) {
        MPI_Comm w, s, ic2;
        MPI_Request wq[2];
        MTEST_CALL(MPI_Comm_idup(MPI_COMM_WORLD, &w, &wq[0]));
        MTEST_CALL(MPI_Comm_idup(MPI_COMM_SELF, &s, &wq[1]));
        MTEST_CALL(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, low ? size / 2 : 0, 20 + i,
                                        &ic2));
        MTEST_CALL(MPI_Waitall(2, wq, MPI_STATUSES_IGNORE));
        check_inter(ic, ic2, 5 + i);
        int wsum = 0, ssum = -1;
        MTEST_CALL(MPI_Allreduce(&rank, &wsum, 1, MPI_INT, MPI_SUM, w));
        MTEST_EQ("allreduce on the world's duplicate", size * (size - 1) / 2, wsum);
        MTEST_CALL(MPI_Allreduce(&rank, &ssum, 1, MPI_INT, MPI_SUM, s));
        MTEST_EQ("allreduce on MPI_COMM_SELF's duplicate", rank, ssum);
        MTEST_CALL(MPI_Comm_free(&ic2));
        MTEST_CALL(MPI_Comm_free(&s));
        MTEST_CALL(MPI_Comm_free(&w));
    }

    MTEST_CALL(MPI_Comm_free(&a));
    MTEST_CALL(MPI_Comm_free(&b));
    MTEST_CALL(MPI_Comm_free(&l));
    MTEST_CALL(MPI_Comm_free(&d));
    MTEST_CALL(MPI_Comm_free(&ic));
    MTEST_CALL(MPI_Comm_free(&local));
    return mtest_finalize();
}
