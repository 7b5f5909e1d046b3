/* MPI_Testall on partitioned requests: each rank sends to the next one in a ring and
 * receives from the previous one; MPI_Testall polls both requests until they complete (flag
 * false while a partition is missing, never an error), over five starts of the same requests.
 *
 * Strict: MPICH 4.0.2's MPI_Testall returns MPI_ERR_IN_STATUS (MPI_ERR_PENDING for the
 * pending partitioned request, and even for completed ones). */
#include "mtest.h"

#define PARTS 4
#define COUNT 100

int main(int argc, char **argv)
{
    int rank, size;
    int sbuf[PARTS * COUNT], rbuf[PARTS * COUNT];
    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int to = (rank + 1) % size, from = (rank + size - 1) % size;
    MPI_Request reqs[2];
    MTEST_CALL(MPI_Psend_init(sbuf, PARTS, COUNT, MPI_INT, to, 1, MPI_COMM_WORLD, MPI_INFO_NULL,
                              &reqs[0]));
    MTEST_CALL(MPI_Precv_init(rbuf, 2, 2 * COUNT, MPI_INT, from, 1, MPI_COMM_WORLD,
                              MPI_INFO_NULL, &reqs[1]));
    for (int round = 0; round < 5; round++) {
        for (int k = 0; k < PARTS * COUNT; k++) {
            sbuf[k] = rank * 100000 + round * 1000 + k;
            rbuf[k] = -1;
        }
        MTEST_CALL(MPI_Startall(2, reqs));
        int flag = 0;
        MPI_Status sts[2];
        for (int p = 0; p < PARTS; p++) {
            MTEST_CALL(MPI_Testall(2, reqs, &flag, sts));
            MTEST_EQ("MPI_Testall before the last partition is ready: flag", 0, flag);
            MTEST_CALL(MPI_Pready(p, reqs[0]));
        }
        while (!flag) {
            MTEST_CALL(MPI_Testall(2, reqs, &flag, sts));
        }
        MTEST_STATUS(&sts[1], from, 1, MPI_INT, PARTS * COUNT);
        for (int k = 0; k < PARTS * COUNT; k++) {
            MTEST_EQ("received element", from * 100000 + round * 1000 + k, rbuf[k]);
        }
    }
    MTEST_CALL(MPI_Request_free(&reqs[0]));
    MTEST_CALL(MPI_Request_free(&reqs[1]));
    return mtest_finalize();
}
