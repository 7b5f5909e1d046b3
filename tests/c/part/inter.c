/* Partitioned communication on an intercommunicator: the even and the odd ranks of
 * MPI_COMM_WORLD form two groups; rank i of each group sends to rank i of the other (when it
 * exists) with 3 partitions and receives with 2, three starts; ranks ask for the remote rank,
 * and the receive status names it. */
#include "mtest.h"

#define N 36

int main(int argc, char **argv)
{
    int rank, size;
    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size < 2) {
        MTEST_ABORT("needs at least 2 processes");
    }
    MPI_Comm local, inter;
    MTEST_CALL(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &local));
    MTEST_CALL(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, rank % 2 ? 0 : 1, 12, &inter));
    int lrank, rsize;
    MPI_Comm_rank(inter, &lrank);
    MPI_Comm_remote_size(inter, &rsize);
    if (lrank < rsize) {
        int sbuf[N], rbuf[N];
        MPI_Request reqs[2];
        MTEST_CALL(MPI_Psend_init(sbuf, 3, N / 3, MPI_INT, lrank, 4, inter, MPI_INFO_NULL,
                                  &reqs[0]));
        MTEST_CALL(MPI_Precv_init(rbuf, 2, N / 2, MPI_INT, lrank, 4, inter, MPI_INFO_NULL,
                                  &reqs[1]));
        for (int round = 0; round < 3; round++) {
            for (int k = 0; k < N; k++) {
                sbuf[k] = rank * 1000 + round * 100 + k;
                rbuf[k] = -1;
            }
            MTEST_CALL(MPI_Startall(2, reqs));
            MTEST_CALL(MPI_Pready_range(0, 2, reqs[0]));
            MPI_Status st[2];
            MTEST_CALL(MPI_Waitall(2, reqs, st));
            MTEST_STATUS(&st[1], lrank, 4, MPI_INT, N);
            int peer = rank % 2 ? rank - 1 : rank + 1; /* world rank of remote rank lrank */
            for (int k = 0; k < N; k++) {
                MTEST_EQ("received element", peer * 1000 + round * 100 + k, rbuf[k]);
            }
        }
        MTEST_CALL(MPI_Request_free(&reqs[0]));
        MTEST_CALL(MPI_Request_free(&reqs[1]));
    }
    MTEST_CALL(MPI_Comm_free(&inter));
    MTEST_CALL(MPI_Comm_free(&local));
    return mtest_finalize();
}
