/*
 * oxmpi-strict (may fail on MPICH and Open MPI; listed apart in the manifest):
 * "If a communication is marked for cancellation, then a completion call for that
 * communication is guaranteed to return, irrespective of the activities of other processes"
 * (MPI_Cancel, MPI-1.1 section 3.8 and every later version).  Hence an MPI_Issend whose
 * receive is never posted, once cancelled, must complete locally; and as a synchronous send
 * cannot complete without a matching receive, it must report cancelled.  The same holds for
 * a 1 MiB MPI_Issend.  The receiver then never sees the message.
 * Observed: MPICH 4.0.2 and Open MPI 4.1.4 block in MPI_Wait (the run times out).
 * Rank 2k sends to 2k+1; a lone last rank to itself.
 */
#include "mtest.h"

#define TAG_DATA 10
#define TAG_OUTCOME 11

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int rank = mtest_rank(), size = mtest_size();
    int partner = (rank ^ 1) < size ? (rank ^ 1) : rank;
    const int sizes[2] = {8, 1 << 20};
    unsigned char *buf = mtest_malloc(1 << 20);

    for (int s = 0; s < 2; s++) {
        int n = sizes[s];
        if (partner == rank || rank % 2 == 0) {
            MPI_Request req;
            MPI_Status st;
            int cancelled = -1;
            mtest_fill(buf, (size_t)n, 1);
            MTEST_CALL(MPI_Issend(buf, n, MPI_BYTE, partner, TAG_DATA, MPI_COMM_WORLD, &req));
            MTEST_CALL(MPI_Cancel(&req));
            MTEST_CALL(MPI_Wait(&req, &st)); /* must return: nobody will receive */
            MTEST_CALL(MPI_Test_cancelled(&st, &cancelled));
            MTEST_CHECK(cancelled, "unmatched MPI_Issend of %d bytes completed without being cancelled", n);
            cancelled = cancelled ? 1 : 0;
            if (partner != rank) {
                MTEST_CALL(MPI_Send(&cancelled, 1, MPI_INT, partner, TAG_OUTCOME, MPI_COMM_WORLD));
            } else {
                int flag = -1;
                MTEST_CALL(MPI_Iprobe(rank, TAG_DATA, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));
                MTEST_CHECK(!flag, "cancelled MPI_Issend of %d bytes to self is receivable", n);
            }
        }
        if (partner != rank && rank % 2 == 1) {
            MPI_Status st;
            int outcome = -1, flag = -1;
            /* no receive or probe that could match the data until the sender has finished */
            MTEST_CALL(MPI_Recv(&outcome, 1, MPI_INT, partner, TAG_OUTCOME, MPI_COMM_WORLD, &st));
            MTEST_EQ("sender's MPI_Test_cancelled", 1, outcome);
            MTEST_CALL(MPI_Iprobe(partner, TAG_DATA, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));
            MTEST_CHECK(!flag, "cancelled MPI_Issend of %d bytes arrived after all", n);
        }
    }
    free(buf);
    return mtest_finalize();
}
