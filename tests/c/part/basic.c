/* Partitioned communication (MPI 4.1 chapter 4), basic: every rank sends to the next one in a
 * ring and receives from the previous one (itself on one rank) with MPI_Psend_init /
 * MPI_Precv_init, and starts the same pair of requests many times.  Each round readies the
 * partitions in another order (ascending loop, descending loop, MPI_Pready_range halves,
 * MPI_Pready_list in a shuffled order, odd then even), polls MPI_Parrived on every receive
 * partition and checks each partition's data as soon as it has arrived, then completes the
 * requests with a different completion call (Wait, Waitall, Test, Request_get_status, Waitany,
 * Waitsome, Testany, Testsome).  The receive status names the source, the tag and
 * the whole count. */
#include "mtest.h"

#define PARTS 8
#define COUNT 64
#define ROUNDS 20
#define TAG 7

static int value(int src, int round, int k)
{
    return src * 1000000 + round * 10000 + k;
}

static void ready_all(MPI_Request sreq, int round)
{
    int list[PARTS];
    switch (round % 5) {
    case 0:
        for (int p = 0; p < PARTS; p++) {
            MTEST_CALL(MPI_Pready(p, sreq));
        }
        break;
    case 1:
        for (int p = PARTS - 1; p >= 0; p--) {
            MTEST_CALL(MPI_Pready(p, sreq));
        }
        break;
    case 2:
        MTEST_CALL(MPI_Pready_range(PARTS / 2, PARTS - 1, sreq));
        MTEST_CALL(MPI_Pready_range(0, PARTS / 2 - 1, sreq));
        break;
    case 3: {
        mtest_rng r = mtest_rng_new(1234 + round);
        for (int p = 0; p < PARTS; p++) {
            list[p] = p;
        }
        for (int p = PARTS - 1; p > 0; p--) {
            int q = (int)mtest_rng_below(&r, (uint64_t)p + 1), t = list[p];
            list[p] = list[q];
            list[q] = t;
        }
        MTEST_CALL(MPI_Pready_list(PARTS, list, sreq));
        break;
    }
    default: {
        int n = 0;
        for (int p = 1; p < PARTS; p += 2) {
            list[n++] = p;
        }
        MTEST_CALL(MPI_Pready_list(n, list, sreq));
        for (int p = 0; p < PARTS; p += 2) {
            MTEST_CALL(MPI_Pready(p, sreq));
        }
    }
    }
}

/* Completes both requests with the completion call of this round; returns the receive's
 * status. */
static void complete(MPI_Request reqs[2], int round, MPI_Status *rst)
{
    MPI_Status sts[2];
    int flag = 0, idx = -1, out = 0, idxs[2];
    switch (round % 9) {
    case 0:
        MTEST_CALL(MPI_Wait(&reqs[0], MPI_STATUS_IGNORE));
        MTEST_CALL(MPI_Wait(&reqs[1], rst));
        break;
    case 1:
        MTEST_CALL(MPI_Waitall(2, reqs, sts));
        *rst = sts[1];
        break;
    case 2:
        while (!flag) {
            MTEST_CALL(MPI_Test(&reqs[1], &flag, rst));
        }
        MTEST_CALL(MPI_Wait(&reqs[0], MPI_STATUS_IGNORE));
        break;
    case 3: {
        /* (MPI_Testall: testall_strict.c; MPICH 4.0.2's Testall fails on partitioned
         * requests.) */
        int f0 = 0, f1 = 0;
        while (!(f0 && f1)) {
            MTEST_CALL(MPI_Request_get_status(reqs[0], &f0, MPI_STATUS_IGNORE));
            MTEST_CALL(MPI_Request_get_status(reqs[1], &f1, MPI_STATUS_IGNORE));
        }
        MTEST_CALL(MPI_Wait(&reqs[0], MPI_STATUS_IGNORE));
        MTEST_CALL(MPI_Wait(&reqs[1], rst));
        break;
    }
    case 4:
        for (int n = 0; n < 2; n++) {
            MPI_Status st;
            MTEST_CALL(MPI_Waitany(2, reqs, &idx, &st));
            if (idx == 1) {
                *rst = st;
            }
        }
        MTEST_CALL(MPI_Waitany(2, reqs, &idx, MPI_STATUS_IGNORE));
        MTEST_EQ("Waitany on inactive requests: index", MPI_UNDEFINED, idx);
        break;
    case 5: {
        int done = 0;
        while (done < 2) {
            MTEST_CALL(MPI_Waitsome(2, reqs, &out, idxs, sts));
            for (int i = 0; i < out; i++) {
                if (idxs[i] == 1) {
                    *rst = sts[i];
                }
            }
            done += out;
        }
        break;
    }
    case 6: {
        int done = 0;
        while (done < 2) {
            MPI_Status st;
            MTEST_CALL(MPI_Testany(2, reqs, &idx, &flag, &st));
            if (flag && idx != MPI_UNDEFINED) {
                if (idx == 1) {
                    *rst = st;
                }
                done++;
            }
        }
        break;
    }
    case 7: {
        int done = 0;
        while (done < 2) {
            MTEST_CALL(MPI_Testsome(2, reqs, &out, idxs, sts));
            for (int i = 0; i < out; i++) {
                if (idxs[i] == 1) {
                    *rst = sts[i];
                }
            }
            done += out;
        }
        break;
    }
    default:
        while (!flag) {
            MTEST_CALL(MPI_Request_get_status(reqs[1], &flag, rst));
        }
        MTEST_CALL(MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE));
    }
}

int main(int argc, char **argv)
{
    int rank, size;
    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int to = (rank + 1) % size, from = (rank + size - 1) % size;
    int *sbuf = mtest_malloc(sizeof(int) * PARTS * COUNT);
    int *rbuf = mtest_malloc(sizeof(int) * PARTS * COUNT);
    MPI_Request reqs[2];
    MTEST_CALL(MPI_Psend_init(sbuf, PARTS, COUNT, MPI_INT, to, TAG, MPI_COMM_WORLD, MPI_INFO_NULL,
                              &reqs[0]));
    MTEST_CALL(MPI_Precv_init(rbuf, PARTS, COUNT, MPI_INT, from, TAG, MPI_COMM_WORLD,
                              MPI_INFO_NULL, &reqs[1]));
    MPI_Request keep[2] = {reqs[0], reqs[1]};
    for (int round = 0; round < ROUNDS; round++) {
        for (int k = 0; k < PARTS * COUNT; k++) {
            sbuf[k] = value(rank, round, k);
            rbuf[k] = -1;
        }
        reqs[0] = keep[0];
        reqs[1] = keep[1];
        if (round % 2) {
            MTEST_CALL(MPI_Startall(2, reqs));
        } else {
            MTEST_CALL(MPI_Start(&reqs[1]));
            MTEST_CALL(MPI_Start(&reqs[0]));
        }
        ready_all(reqs[0], round);
        int seen[PARTS] = {0}, left = PARTS;
        while (left > 0) {
            for (int p = 0; p < PARTS; p++) {
                int flag = 0;
                if (seen[p]) {
                    continue;
                }
                MTEST_CALL(MPI_Parrived(reqs[1], p, &flag));
                if (flag) {
                    for (int k = p * COUNT; k < (p + 1) * COUNT; k++) {
                        MTEST_CHECK(rbuf[k] == value(from, round, k),
                                    "round %d partition %d element %d: expected %d got %d",
                                    round, p, k, value(from, round, k), rbuf[k]);
                    }
                    seen[p] = 1;
                    left--;
                }
            }
        }
        MPI_Status st;
        complete(reqs, round, &st);
        MTEST_STATUS(&st, from, TAG, MPI_INT, PARTS * COUNT);
        for (int k = 0; k < PARTS * COUNT; k++) {
            MTEST_CHECK(rbuf[k] == value(from, round, k), "round %d element %d: expected %d got %d",
                        round, k, value(from, round, k), rbuf[k]);
        }
    }
    MTEST_CALL(MPI_Request_free(&keep[0]));
    MTEST_CALL(MPI_Request_free(&keep[1]));
    MTEST_CHECK(keep[0] == MPI_REQUEST_NULL && keep[1] == MPI_REQUEST_NULL,
                "MPI_Request_free did not set the handles to MPI_REQUEST_NULL");
    free(sbuf);
    free(rbuf);
    return mtest_finalize();
}
