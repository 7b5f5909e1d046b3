/*
 * MPI_PROC_NULL as source and destination: every send mode and every receive completes at
 * once; a receive returns source MPI_PROC_NULL, tag MPI_ANY_TAG, count 0 and leaves the
 * buffer untouched; MPI_Probe returns the same at once and MPI_Iprobe says true; MPI_Sendrecv
 * with one side MPI_PROC_NULL (an end-off shift along the ranks) still does the other side.
 * (Source and tag of the status of a nonblocking or persistent receive from MPI_PROC_NULL
 * completed by MPI_Wait / MPI_Test are checked in p2p/semantics_strict.)
 */
#include "mtest.h"

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int rank = mtest_rank(), size = mtest_size();
    int buf[4] = {1, 2, 3, 4}, in[4];
    MPI_Status st;
    MPI_Request r;
    int flag;

    /* sends of every mode: complete at once, nothing to receive anywhere */
    MTEST_CALL(MPI_Send(buf, 4, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD));
    MTEST_CALL(MPI_Ssend(buf, 4, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD));
    MTEST_CALL(MPI_Rsend(buf, 4, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD));
    int bsize = 0;
    MTEST_CALL(MPI_Pack_size(4, MPI_INT, MPI_COMM_WORLD, &bsize));
    bsize += MPI_BSEND_OVERHEAD;
    char *bbuf = mtest_malloc((size_t)bsize);
    MTEST_CALL(MPI_Buffer_attach(bbuf, bsize));
    MTEST_CALL(MPI_Bsend(buf, 4, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD));
    MTEST_CALL(MPI_Ibsend(buf, 4, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &r));
    MTEST_CALL(MPI_Wait(&r, MPI_STATUS_IGNORE));
    void *addr;
    MTEST_CALL(MPI_Buffer_detach(&addr, &bsize));
    free(bbuf);
    MTEST_CALL(MPI_Isend(buf, 4, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &r));
    MTEST_CALL(MPI_Wait(&r, MPI_STATUS_IGNORE));
    MTEST_CALL(MPI_Issend(buf, 4, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &r));
    flag = 0;
    while (!flag) {
        MTEST_CALL(MPI_Test(&r, &flag, MPI_STATUS_IGNORE));
    }
    MTEST_CALL(MPI_Irsend(buf, 4, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &r));
    MTEST_CALL(MPI_Wait(&r, MPI_STATUS_IGNORE));

    /* receives */
    for (int i = 0; i < 4; i++) {
        in[i] = -9;
    }
    MTEST_CALL(MPI_Recv(in, 4, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &st));
    MTEST_PROC_NULL_STATUS(&st);
    MTEST_CALL(MPI_Recv(in, 4, MPI_INT, MPI_PROC_NULL, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
    MTEST_PROC_NULL_STATUS(&st);
    /* MPI_Irecv + MPI_Wait / MPI_Test: only the count here; MPICH 4.0.2 leaves source and tag
     * at 0, so those are checked in p2p/semantics_strict */
    int cnt = -1;
    MTEST_CALL(MPI_Irecv(in, 4, MPI_INT, MPI_PROC_NULL, 7, MPI_COMM_WORLD, &r));
    MTEST_CALL(MPI_Wait(&r, &st));
    MTEST_CALL(MPI_Get_count(&st, MPI_INT, &cnt));
    MTEST_EQ("count of MPI_Irecv from MPI_PROC_NULL", 0, cnt);
    MTEST_CALL(MPI_Irecv(in, 4, MPI_INT, MPI_PROC_NULL, 7, MPI_COMM_WORLD, &r));
    flag = 0;
    while (!flag) {
        MTEST_CALL(MPI_Test(&r, &flag, &st));
    }
    cnt = -1;
    MTEST_CALL(MPI_Get_count(&st, MPI_INT, &cnt));
    MTEST_EQ("count of MPI_Irecv from MPI_PROC_NULL", 0, cnt);
    int cancelled = -1;
    MTEST_CALL(MPI_Test_cancelled(&st, &cancelled));
    MTEST_EQ("MPI_Test_cancelled for a receive from MPI_PROC_NULL", 0, cancelled);
    for (int i = 0; i < 4; i++) {
        MTEST_EQ("buffer of a receive from MPI_PROC_NULL", -9, in[i]);
    }

    /* probes */
    MTEST_CALL(MPI_Probe(MPI_PROC_NULL, 3, MPI_COMM_WORLD, &st));
    MTEST_PROC_NULL_STATUS(&st);
    flag = 0;
    MTEST_CALL(MPI_Iprobe(MPI_PROC_NULL, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st));
    MTEST_EQ("MPI_Iprobe(MPI_PROC_NULL) flag", 1, flag != 0);
    MTEST_PROC_NULL_STATUS(&st);

    /* sendrecv: both sides null */
    MTEST_CALL(MPI_Sendrecv(buf, 4, MPI_INT, MPI_PROC_NULL, 1, in, 4, MPI_INT, MPI_PROC_NULL, 1,
                            MPI_COMM_WORLD, &st));
    MTEST_PROC_NULL_STATUS(&st);
    MTEST_CALL(MPI_Sendrecv_replace(in, 4, MPI_INT, MPI_PROC_NULL, 1, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &st));
    MTEST_PROC_NULL_STATUS(&st);
    MTEST_EQ("buffer of MPI_Sendrecv_replace with MPI_PROC_NULL", -9, in[0]);

    /* end-off shift: rank r sends to r+1 (MPI_PROC_NULL past the end), receives from r-1 */
    int right = rank + 1 < size ? rank + 1 : MPI_PROC_NULL;
    int left = rank > 0 ? rank - 1 : MPI_PROC_NULL;
    int v = rank * 10, got = -5;
    MTEST_CALL(MPI_Sendrecv(&v, 1, MPI_INT, right, 9, &got, 1, MPI_INT, left, 9, MPI_COMM_WORLD, &st));
    if (left == MPI_PROC_NULL) {
        MTEST_PROC_NULL_STATUS(&st);
        MTEST_EQ("end-off shift: first rank's buffer", -5, got);
    } else {
        MTEST_STATUS(&st, left, 9, MPI_INT, 1);
        MTEST_EQ("end-off shift value", left * 10, got);
    }
    /* and back with MPI_Sendrecv_replace */
    got = rank * 10 + 1;
    MTEST_CALL(MPI_Sendrecv_replace(&got, 1, MPI_INT, left, 8, right, 8, MPI_COMM_WORLD, &st));
    if (right == MPI_PROC_NULL) {
        MTEST_PROC_NULL_STATUS(&st);
        MTEST_EQ("end-off shift back: last rank's buffer", rank * 10 + 1, got);
    } else {
        MTEST_STATUS(&st, right, 8, MPI_INT, 1);
        MTEST_EQ("end-off shift back value", right * 10 + 1, got);
    }

    /* waitall / waitany on requests with MPI_PROC_NULL peers */
    MPI_Request rr[2];
    MPI_Status sts[2];
    MTEST_CALL(MPI_Irecv(in, 4, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &rr[0]));
    MTEST_CALL(MPI_Isend(buf, 4, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &rr[1]));
    MTEST_CALL(MPI_Waitall(2, rr, sts));
    MTEST_PROC_NULL_STATUS(&sts[0]);
    int idx = -1;
    MTEST_CALL(MPI_Irecv(in, 4, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &rr[0]));
    rr[1] = MPI_REQUEST_NULL;
    MTEST_CALL(MPI_Waitany(2, rr, &idx, &st));
    MTEST_EQ("MPI_Waitany index for a receive from MPI_PROC_NULL", 0, idx);
    MTEST_PROC_NULL_STATUS(&st);
    return mtest_finalize();
}
