/* Partitioned communication of large partitions (rendezvous, and over TCP in the manifest's
 * OXMPI_NETMOD=tcp runs): 4 send partitions of 1 MiB each to 2 receive partitions, readied
 * from the last one, started three times; the last receive partition is checked as soon as
 * MPI_Parrived reports it. */
#include "mtest.h"

#define SPARTS 4
#define SCOUNT (128 * 1024) /* doubles: 1 MiB */
#define RPARTS 2
#define ROUNDS 3

int main(int argc, char **argv)
{
    int rank, size;
    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int to = (rank + 1) % size, from = (rank + size - 1) % size;
    size_t total = (size_t)SPARTS * SCOUNT;
    double *sbuf = mtest_malloc(total * sizeof(double));
    double *rbuf = mtest_malloc(total * sizeof(double));
    MPI_Request reqs[2];
    MTEST_CALL(MPI_Psend_init(sbuf, SPARTS, SCOUNT, MPI_DOUBLE, to, 3, MPI_COMM_WORLD,
                              MPI_INFO_NULL, &reqs[0]));
    MTEST_CALL(MPI_Precv_init(rbuf, RPARTS, (MPI_Count)(total / RPARTS), MPI_DOUBLE, from, 3,
                              MPI_COMM_WORLD, MPI_INFO_NULL, &reqs[1]));
    for (int round = 0; round < ROUNDS; round++) {
        for (size_t k = 0; k < total; k++) {
            sbuf[k] = (double)(rank * 10 + round) * 1e7 + (double)k;
        }
        memset(rbuf, 0, total * sizeof(double));
        MTEST_CALL(MPI_Startall(2, reqs));
        for (int p = SPARTS - 1; p >= 0; p--) {
            MTEST_CALL(MPI_Pready(p, reqs[0]));
        }
        int flag = 0;
        while (!flag) {
            MTEST_CALL(MPI_Parrived(reqs[1], RPARTS - 1, &flag));
        }
        for (size_t k = total / RPARTS; k < total; k++) {
            double want = (double)(from * 10 + round) * 1e7 + (double)k;
            if (rbuf[k] != want) {
                MTEST_CHECK(0, "round %d element %zu of the last partition: expected %g got %g",
                            round, k, want, rbuf[k]);
                break;
            }
        }
        MPI_Status sts[2];
        MTEST_CALL(MPI_Waitall(2, reqs, sts));
        MTEST_STATUS(&sts[1], from, 3, MPI_DOUBLE, (int)total);
        for (size_t k = 0; k < total; k++) {
            double want = (double)(from * 10 + round) * 1e7 + (double)k;
            if (rbuf[k] != want) {
                MTEST_CHECK(0, "round %d element %zu: expected %g got %g", round, k, want, rbuf[k]);
                break;
            }
        }
    }
    MTEST_CALL(MPI_Request_free(&reqs[0]));
    MTEST_CALL(MPI_Request_free(&reqs[1]));
    free(sbuf);
    free(rbuf);
    return mtest_finalize();
}
