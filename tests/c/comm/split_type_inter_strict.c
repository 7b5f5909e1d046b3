/*
 * MPI_Comm_split_type on an intercommunicator (allowed since MPI-4.0; made of the even
 * and the odd ranks of MPI_COMM_WORLD): like MPI_Comm_split with the node as the
 * colour, the processes of a node in both groups make a new intercommunicator, ranked
 * by key; MPI_UNDEFINED gives MPI_COMM_NULL, and so does a node whose processes of the
 * other group all passed MPI_UNDEFINED. Run with MTEST_ONE_NODE=1 (every process on
 * one node). Observed elsewhere:
 *   MPICH 4.0.2:    hangs when a process passes MPI_UNDEFINED; crashes at 5 processes
 *   Open MPI 4.1.4: segmentation fault
 */
#include "mtest.h"

static void check_inter(MPI_Comm nc, int want_local, int want_remote, int want_rank, const char *what)
{
    int flag = 0, n = -1, rn = -1, r = -1;
    MTEST_CHECK(nc != MPI_COMM_NULL, "%s: MPI_COMM_NULL", what);
    if (nc == MPI_COMM_NULL) return;
    MTEST_CALL(MPI_Comm_test_inter(nc, &flag));
    MTEST_CHECK(flag, "%s: not an intercommunicator", what);
    if (!flag) return;
    MTEST_CALL(MPI_Comm_size(nc, &n));
    MTEST_CALL(MPI_Comm_remote_size(nc, &rn));
    MTEST_CALL(MPI_Comm_rank(nc, &r));
    MTEST_EQ(what, want_local, n);
    MTEST_EQ(what, want_remote, rn);
    if (want_rank >= 0) MTEST_EQ(what, want_rank, r);
    /* Traffic between the groups: each member gets the number of remote members. */
    int one = 1, sum = -1;
    MTEST_CALL(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, nc));
    MTEST_EQ(what, rn, sum);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int r = mtest_rank(), n = mtest_size();
    if (n < 2) return mtest_skip("needs 2 ranks");
    if (!mtest_env_flag("MTEST_ONE_NODE")) return mtest_skip("needs MTEST_ONE_NODE=1");
    int color = r % 2, lr, ln, rn;
    MPI_Comm half, ic, nc;
    MTEST_CALL(MPI_Comm_split(MPI_COMM_WORLD, color, r, &half));
    MTEST_CALL(MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, 1 - color, 33, &ic));
    MTEST_CALL(MPI_Comm_set_errhandler(ic, MPI_ERRORS_RETURN));
    MTEST_CALL(MPI_Comm_rank(ic, &lr));
    MTEST_CALL(MPI_Comm_size(ic, &ln));
    MTEST_CALL(MPI_Comm_remote_size(ic, &rn));

    /* Everyone on the node, keys reversing the local order. */
    MTEST_CALL(MPI_Comm_split_type(ic, MPI_COMM_TYPE_SHARED, ln - lr, MPI_INFO_NULL, &nc));
    check_inter(nc, ln, rn, ln - 1 - lr, "shared split of the intercommunicator");
    if (nc != MPI_COMM_NULL) {
        /* The result splits again into the same groups. */
        MPI_Comm again;
        int res = -1;
        MTEST_CALL(MPI_Comm_split_type(nc, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &again));
        check_inter(again, ln, rn, -1, "shared split of the split");
        if (again != MPI_COMM_NULL) {
            MTEST_CALL(MPI_Comm_compare(nc, again, &res));
            MTEST_CHECK(res == MPI_CONGRUENT || res == MPI_SIMILAR, "compare: %d", res);
            MTEST_CALL(MPI_Comm_free(&again));
        }
        MTEST_CALL(MPI_Comm_free(&nc));
    }

    /* Local rank 0 of each group passes MPI_UNDEFINED. */
    MTEST_CALL(MPI_Comm_split_type(ic, lr == 0 ? MPI_UNDEFINED : MPI_COMM_TYPE_SHARED, lr, MPI_INFO_NULL, &nc));
    if (lr == 0 || rn == 1) {
        MTEST_CHECK(nc == MPI_COMM_NULL, "%s gave a communicator",
                    lr == 0 ? "MPI_UNDEFINED" : "a split with no remote process");
        if (nc != MPI_COMM_NULL) MTEST_CALL(MPI_Comm_free(&nc));
    } else {
        check_inter(nc, ln - 1, rn - 1, lr - 1, "split with MPI_UNDEFINED at local rank 0");
        if (nc != MPI_COMM_NULL) MTEST_CALL(MPI_Comm_free(&nc));
    }

    /* A whole group passes MPI_UNDEFINED: nobody gets a communicator. */
    MTEST_CALL(MPI_Comm_split_type(ic, color ? MPI_UNDEFINED : MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &nc));
    MTEST_CHECK(nc == MPI_COMM_NULL, "split with the odd group undefined gave a communicator");
    if (nc != MPI_COMM_NULL) MTEST_CALL(MPI_Comm_free(&nc));

    MTEST_CALL(MPI_Comm_free(&ic));
    MTEST_CALL(MPI_Comm_free(&half));
    return mtest_finalize();
}
