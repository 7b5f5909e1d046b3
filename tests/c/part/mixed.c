/* Partitioned communication with different partition counts on the two sides (MPI 4.1
 * section 4.2.2: only the type signatures of the whole buffers must match).  Each rank sends
 * to the next one in a ring; for every shape the receiver polls MPI_Parrived and checks a
 * partition's data as soon as it reports arrival, including receive partitions whose bytes
 * span several send partitions and send partitions that span several receive partitions, with
 * boundaries that do not line up.  Each shape is started several times. */
#include "mtest.h"

#define TOTAL 120
#define ROUNDS 4

struct shape {
    int sparts, scount, rparts, rcount;
};

static const struct shape shapes[] = {
    {12, 10, 5, 24}, {3, 40, 8, 15}, {1, 120, 120, 1}, {120, 1, 1, 120}, {5, 24, 12, 10},
    {8, 15, 3, 40},
};

static double value(int src, int shape, int round, int k)
{
    return src * 1e6 + shape * 1e4 + round * 1e3 + k + 0.25;
}

int main(int argc, char **argv)
{
    int rank, size;
    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int to = (rank + 1) % size, from = (rank + size - 1) % size;
    double sbuf[TOTAL], rbuf[TOTAL];
    for (int s = 0; s < (int)(sizeof shapes / sizeof shapes[0]); s++) {
        const struct shape *sh = &shapes[s];
        MPI_Request reqs[2];
        MTEST_CALL(MPI_Precv_init(rbuf, sh->rparts, sh->rcount, MPI_DOUBLE, from, s,
                                  MPI_COMM_WORLD, MPI_INFO_NULL, &reqs[1]));
        MTEST_CALL(MPI_Psend_init(sbuf, sh->sparts, sh->scount, MPI_DOUBLE, to, s, MPI_COMM_WORLD,
                                  MPI_INFO_NULL, &reqs[0]));
        for (int round = 0; round < ROUNDS; round++) {
            for (int k = 0; k < TOTAL; k++) {
                sbuf[k] = value(rank, s, round, k);
                rbuf[k] = -1;
            }
            MTEST_CALL(MPI_Startall(2, reqs));
            /* Ready from the last partition down, polling the receive side in between. */
            int *seen = calloc((size_t)sh->rparts, sizeof(int)), left = sh->rparts;
            int next = sh->sparts - 1;
            while (left > 0 || next >= 0) {
                if (next >= 0) {
                    MTEST_CALL(MPI_Pready(next, reqs[0]));
                    next--;
                }
                for (int p = 0; p < sh->rparts; p++) {
                    int flag = 0;
                    if (seen[p]) {
                        continue;
                    }
                    MTEST_CALL(MPI_Parrived(reqs[1], p, &flag));
                    if (!flag) {
                        continue;
                    }
                    for (int k = p * sh->rcount; k < (p + 1) * sh->rcount; k++) {
                        MTEST_CHECK(rbuf[k] == value(from, s, round, k),
                                    "shape %d round %d partition %d element %d: expected %g got %g",
                                    s, round, p, k, value(from, s, round, k), rbuf[k]);
                    }
                    seen[p] = 1;
                    left--;
                }
            }
            free(seen);
            MPI_Status sts[2];
            MTEST_CALL(MPI_Waitall(2, reqs, sts));
            MTEST_STATUS(&sts[1], from, s, MPI_DOUBLE, TOTAL);
        }
        MTEST_CALL(MPI_Request_free(&reqs[0]));
        MTEST_CALL(MPI_Request_free(&reqs[1]));
    }
    return mtest_finalize();
}
