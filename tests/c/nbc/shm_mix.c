/*
 * Small nonblocking and persistent collectives mixed with blocking ones and with
 * point-to-point traffic on a communicator that already ran blocking collectives (so
 * oxmpi runs them on its shared-memory path): several outstanding at once, completed
 * in other orders than started, a persistent all-reduce started before a blocking
 * all-reduce and waited after it, and a start followed by a message the peer receives
 * before it starts its part. Every result is checked, every round.
 */
#include "mtest.h"

#define ROUNDS 200

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int r = mtest_rank(), n = mtest_size();
    MPI_Comm w;
    MTEST_CALL(MPI_Comm_dup(MPI_COMM_WORLD, &w));
    MTEST_CALL(MPI_Barrier(w));
    long pin = 0, pout = 0;
    MPI_Request pers;
    MTEST_CALL(MPI_Allreduce_init(&pin, &pout, 1, MPI_LONG, MPI_SUM, w, MPI_INFO_NULL, &pers));
    int *ata_in = mtest_malloc(sizeof(int) * n), *ata_out = mtest_malloc(sizeof(int) * n);
    int *gat = mtest_malloc(sizeof(int) * n), *scat = mtest_malloc(sizeof(int) * n);
    for (int k = 0; k < ROUNDS; k++) {
        int root = k % n;
        long mine = r + k, ar = -1, blk = -1, sc = -1, ex = -1, red = -1;
        int bc = r == root ? k * 3 : -1, sg = -1;
        for (int j = 0; j < n; j++) {
            ata_in[j] = 1000 * r + j + k;
            ata_out[j] = -1;
            gat[j] = -1;
            scat[j] = r == root ? 7 * j + k : -1;
        }
        pin = 2 * r + k;
        MPI_Request q[9];
        MTEST_CALL(MPI_Start(&pers));
        MTEST_CALL(MPI_Iallreduce(&mine, &ar, 1, MPI_LONG, MPI_SUM, w, &q[0]));
        MTEST_CALL(MPI_Ibcast(&bc, 1, MPI_INT, root, w, &q[1]));
        MTEST_CALL(MPI_Ialltoall(ata_in, 1, MPI_INT, ata_out, 1, MPI_INT, w, &q[2]));
        /* A blocking collective while nonblocking ones are outstanding. */
        MTEST_CALL(MPI_Allreduce(&mine, &blk, 1, MPI_LONG, MPI_MAX, w));
        MTEST_CALL(MPI_Iscan(&mine, &sc, 1, MPI_LONG, MPI_SUM, w, &q[3]));
        MTEST_CALL(MPI_Iexscan(&mine, &ex, 1, MPI_LONG, MPI_SUM, w, &q[4]));
        MTEST_CALL(MPI_Ireduce(&mine, &red, 1, MPI_LONG, MPI_MIN, root, w, &q[5]));
        MTEST_CALL(MPI_Igather(&ata_in[0], 1, MPI_INT, gat, 1, MPI_INT, root, w, &q[6]));
        MTEST_CALL(MPI_Iscatter(scat, 1, MPI_INT, &sg, 1, MPI_INT, root, w, &q[7]));
        MTEST_CALL(MPI_Ibarrier(w, &q[8]));
        /* A ring message after the starts: each rank receives it before its own
         * collectives can have completed. */
        if (n > 1) {
            int out = r + k, in = -1;
            MTEST_CALL(MPI_Sendrecv(&out, 1, MPI_INT, (r + 1) % n, 5, &in, 1, MPI_INT,
                                    (r + n - 1) % n, 5, w, MPI_STATUS_IGNORE));
            MTEST_EQ("ring message", (r + n - 1) % n + k, in);
        }
        if (k % 2) {
            for (int i = 8; i >= 0; i--)
                MTEST_CALL(MPI_Wait(&q[i], MPI_STATUS_IGNORE));
        } else {
            MTEST_CALL(MPI_Waitall(9, q, MPI_STATUSES_IGNORE));
        }
        MTEST_CALL(MPI_Wait(&pers, MPI_STATUS_IGNORE));
        long sum = (long)n * (n - 1) / 2 + (long)n * k;
        MTEST_EQ("persistent allreduce", (long)n * (n - 1) + (long)n * k, pout);
        MTEST_EQ("iallreduce", sum, ar);
        MTEST_EQ("blocking allreduce (max)", (long)n - 1 + k, blk);
        MTEST_EQ("ibcast", k * 3, bc);
        for (int j = 0; j < n; j++)
            MTEST_EQ("ialltoall block", 1000 * j + r + k, ata_out[j]);
        MTEST_EQ("iscan", (long)r * (r + 1) / 2 + (long)(r + 1) * k, sc);
        if (r > 0)
            MTEST_EQ("iexscan", (long)r * (r - 1) / 2 + (long)r * k, ex);
        if (r == root) {
            MTEST_EQ("ireduce (min)", (long)k, red);
            for (int j = 0; j < n; j++)
                MTEST_EQ("igather block", 1000 * j + k, gat[j]);
        }
        MTEST_EQ("iscatter", 7 * r + k, sg);
    }
    MTEST_CALL(MPI_Request_free(&pers));
    MTEST_CALL(MPI_Comm_free(&w));
    free(ata_in);
    free(ata_out);
    free(gat);
    free(scat);
    return mtest_finalize();
}
