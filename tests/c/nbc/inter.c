/*
 * Nonblocking collectives on an intercommunicator (the two halves of MPI_COMM_WORLD,
 * even and odd ranks): MPI_Ibarrier, MPI_Ibcast, MPI_Ireduce (MPI_ROOT /
 * MPI_PROC_NULL / the remote root), MPI_Iallreduce, MPI_Igather, MPI_Iscatter,
 * MPI_Iallgather, MPI_Ialltoall, MPI_Ireduce_scatter_block, all outstanding at once,
 * and the persistent MPI_Allreduce_init started repeatedly.
 */
#include "mtest.h"

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int r = mtest_rank(), n = mtest_size();
    if (n < 2) return mtest_skip("needs 2 ranks");
    MPI_Comm half, ic;
    int color = r % 2;
    MTEST_CALL(MPI_Comm_split(MPI_COMM_WORLD, color, r, &half));
    MTEST_CALL(MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, 1 - color, 77, &ic));
    int lr, ln, rn;
    MTEST_CALL(MPI_Comm_rank(ic, &lr));
    MTEST_CALL(MPI_Comm_size(ic, &ln));
    MTEST_CALL(MPI_Comm_remote_size(ic, &rn));
    /* Group 0 (even ranks) holds the roots; its local rank 0 is the root. */
    int root = color == 0 ? (lr == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;

    MPI_Request rq[9];
    int bc = color == 0 ? 4242 : -1;
    int one = lr + 1, red = -1, ar = -1;
    int *gat = mtest_malloc(sizeof(int) * (rn + ln)), *scat_src = mtest_malloc(sizeof(int) * rn);
    int sc = -1;
    int *ag = mtest_malloc(sizeof(int) * rn), *ata_s = mtest_malloc(sizeof(int) * rn);
    int *ata_r = mtest_malloc(sizeof(int) * rn), *rsb_s = mtest_malloc(sizeof(int) * ln);
    int rsb = -1;
    for (int i = 0; i < rn; i++) {
        scat_src[i] = 500 + i;
        ata_s[i] = 100 * color + 10 * lr + i;
    }
    for (int i = 0; i < ln; i++) rsb_s[i] = lr + i;
    int mine = 1000 * color + lr;
    MTEST_CALL(MPI_Ibarrier(ic, &rq[0]));
    MTEST_CALL(MPI_Ibcast(&bc, 1, MPI_INT, root, ic, &rq[1]));
    MTEST_CALL(MPI_Ireduce(&one, &red, 1, MPI_INT, MPI_SUM, root, ic, &rq[2]));
    MTEST_CALL(MPI_Iallreduce(&one, &ar, 1, MPI_INT, MPI_SUM, ic, &rq[3]));
    MTEST_CALL(MPI_Igather(&mine, 1, MPI_INT, gat, 1, MPI_INT, root, ic, &rq[4]));
    MTEST_CALL(MPI_Iscatter(scat_src, 1, MPI_INT, &sc, 1, MPI_INT, root, ic, &rq[5]));
    MTEST_CALL(MPI_Iallgather(&mine, 1, MPI_INT, ag, 1, MPI_INT, ic, &rq[6]));
    MTEST_CALL(MPI_Ialltoall(ata_s, 1, MPI_INT, ata_r, 1, MPI_INT, ic, &rq[7]));
    /* Each group's vectors (one block per member of the other group) are reduced and
     * scattered over the other group; with groups of equal size only. */
    int *rs_in = mtest_malloc(sizeof(int) * rn);
    for (int i = 0; i < rn; i++) rs_in[i] = lr + i;
    int nreq = 8;
    if (ln == rn)
        MTEST_CALL(MPI_Ireduce_scatter_block(rs_in, &rsb, 1, MPI_INT, MPI_SUM, ic, &rq[nreq++]));
    MTEST_CALL(MPI_Waitall(nreq, rq, MPI_STATUSES_IGNORE));

    int rsum = rn * (rn + 1) / 2; /* sum of (remote local rank + 1) */
    if (color == 1) {
        MTEST_EQ("Ibcast from the remote root", 4242, bc);
        MTEST_EQ("Iscatter from the remote root", 500 + lr, sc);
    }
    if (root == MPI_ROOT) {
        MTEST_EQ("Ireduce at the root", rsum, red);
        for (int i = 0; i < rn; i++) MTEST_EQ("Igather at the root", 1000 + i, gat[i]);
    }
    MTEST_EQ("Iallreduce (the remote group's sum)", rsum, ar);
    for (int i = 0; i < rn; i++) {
        MTEST_EQ("Iallgather", 1000 * (1 - color) + i, ag[i]);
        MTEST_EQ("Ialltoall", 100 * (1 - color) + 10 * i + lr, ata_r[i]);
    }
    /* Reduce_scatter_block: the remote group's sum of (their lr + i), block lr. */
    if (ln == rn) MTEST_EQ("Ireduce_scatter_block", rn * (rn - 1) / 2 + rn * lr, rsb);

    /* Persistent on the intercommunicator. */
    MPI_Request p;
    int pin, pout;
    MTEST_CALL(MPI_Allreduce_init(&pin, &pout, 1, MPI_INT, MPI_SUM, ic, MPI_INFO_NULL, &p));
    for (int round = 0; round < 10; round++) {
        pin = lr + round;
        MTEST_CALL(MPI_Start(&p));
        MTEST_CALL(MPI_Wait(&p, MPI_STATUS_IGNORE));
        MTEST_EQ("Allreduce_init on an intercommunicator", rn * (rn - 1) / 2 + rn * round, pout);
    }
    MTEST_CALL(MPI_Request_free(&p));
    free(gat); free(scat_src); free(ag); free(ata_s); free(ata_r); free(rsb_s); free(rs_in);
    MTEST_CALL(MPI_Comm_free(&ic));
    MTEST_CALL(MPI_Comm_free(&half));
    return mtest_finalize();
}
