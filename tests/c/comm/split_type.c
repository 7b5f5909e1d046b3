/* MPI_Comm_split_type: MPI_COMM_TYPE_SHARED groups the processes of one node (all of them
 * when the job runs on one node, which the launcher here does), ordered by key;
 * MPI_UNDEFINED gives MPI_COMM_NULL; the shared communicator works for traffic. */
#include "mtest.h"

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int rank = mtest_rank(), size = mtest_size(), n, r;
    MPI_Comm node;
    MTEST_CALL(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, size - rank, MPI_INFO_NULL, &node));
    MTEST_CALL(MPI_Comm_size(node, &n));
    MTEST_CALL(MPI_Comm_rank(node, &r));
    if (mtest_env_flag("MTEST_ONE_NODE")) {
        MTEST_EQ("processes on this node", size, n);
        MTEST_EQ("rank on the node (reversed keys)", size - 1 - rank, r);
    }
    MTEST_CHECK(n >= 1 && n <= size, "node communicator of %d processes", n);
    {
        int got = -1;
        MTEST_CALL(MPI_Sendrecv(&r, 1, MPI_INT, (r + 1) % n, 0, &got, 1, MPI_INT, (r + n - 1) % n, 0, node,
                                MPI_STATUS_IGNORE));
        MTEST_EQ("ring on the node communicator", (r + n - 1) % n, got);
    }
    /* Splitting the node communicator again gives the same group. */
    MPI_Comm again;
    int res;
    MTEST_CALL(MPI_Comm_split_type(node, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &again));
    MTEST_CALL(MPI_Comm_compare(node, again, &res));
    MTEST_EQ("split of a node communicator", MPI_CONGRUENT, res);
    MTEST_CALL(MPI_Comm_free(&again));
    MTEST_CALL(MPI_Comm_free(&node));

    MTEST_CALL(MPI_Comm_split_type(MPI_COMM_WORLD, rank % 2 ? MPI_UNDEFINED : MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL,
                                   &node));
    if (rank % 2) {
        MTEST_CHECK(node == MPI_COMM_NULL, "MPI_UNDEFINED split type gave a communicator");
    } else {
        MTEST_CHECK(node != MPI_COMM_NULL, "MPI_COMM_TYPE_SHARED gave MPI_COMM_NULL");
        if (mtest_env_flag("MTEST_ONE_NODE")) {
            MTEST_CALL(MPI_Comm_size(node, &n));
            MTEST_EQ("even processes on the node", (size + 1) / 2, n);
        }
        MTEST_CALL(MPI_Comm_free(&node));
    }
    return mtest_finalize();
}
