/*
 * MPI_Ibarrier polled with MPI_Test, then blocking MPI_Bcast (MPI_ROOT / MPI_PROC_NULL /
 * root 0) on an intercommunicator from MPI_Intercomm_create inside one job: the
 * handshake mpi4py.futures runs, here with the lower half of MPI_COMM_WORLD as the
 * root's group. Needs at least 2 ranks.
 */
#include "mtest.h"

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int rank = mtest_rank(), size = mtest_size();
    int low = rank < size / 2 ? 1 : 0;
    MPI_Comm half, inter;
    MTEST_CALL(MPI_Comm_split(MPI_COMM_WORLD, low, rank, &half));
    int hrank;
    MTEST_CALL(MPI_Comm_rank(half, &hrank));
    int rleader = low ? size / 2 : 0;
    MTEST_CALL(MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, rleader, 3, &inter));
    for (int round = 0; round < 5; round++) {
        MPI_Request req;
        int done = 0;
        MTEST_CALL(MPI_Ibarrier(inter, &req));
        while (!done)
            MTEST_CALL(MPI_Test(&req, &done, MPI_STATUS_IGNORE));
        int root = low ? (hrank == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
        long long count = low && hrank == 0 ? 30 + round : 0;
        MTEST_CALL(MPI_Bcast(&count, 1, MPI_LONG_LONG, root, inter));
        char buf[64];
        for (int i = 0; i < 64; i++)
            buf[i] = low && hrank == 0 ? (char)(i + round) : 0;
        MTEST_CALL(MPI_Bcast(buf, (int)count, MPI_CHAR, root, inter));
        if (!low) {
            MTEST_EQ("count", 30 + round, (int)count);
            for (int i = 0; i < 30 + round; i++)
                MTEST_EQ("payload byte", i + round, buf[i]);
        }
    }
    MTEST_CALL(MPI_Comm_free(&inter));
    MTEST_CALL(MPI_Comm_free(&half));
    return mtest_finalize();
}
