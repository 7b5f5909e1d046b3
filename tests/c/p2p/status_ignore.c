/*
 * MPI_STATUS_IGNORE and MPI_STATUSES_IGNORE everywhere a status may be ignored: MPI_Recv,
 * MPI_Sendrecv, MPI_Sendrecv_replace, MPI_Probe, MPI_Iprobe, MPI_Wait, MPI_Test,
 * MPI_Waitany, MPI_Testany, MPI_Waitall, MPI_Testall, MPI_Waitsome, MPI_Testsome, for
 * receives from a partner, from self and from MPI_PROC_NULL, and for a truncated receive
 * (the error is still returned).  The data, indices and flags must be right.
 * Pairs 2k <-> 2k+1 (a lone last rank with itself).
 */
#include "mtest.h"

#define SI MPI_STATUS_IGNORE
#define SSI MPI_STATUSES_IGNORE

/* Both ranks of the pair have finished their last completion call: only then may the next
 * message go out, so exactly one request can complete in each step. */
static void sync_pair(int p)
{
    int a = 0, b = 0;
    MTEST_CALL(MPI_Sendrecv(&a, 1, MPI_INT, p, 99, &b, 1, MPI_INT, p, 99, MPI_COMM_WORLD, SI));
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int rank = mtest_rank(), size = mtest_size();
    int p = (rank ^ 1) < size ? (rank ^ 1) : rank;
    int out[8], in[8], flag, idx, outc, ind[4];
    MPI_Request r, rs[4];
    for (int i = 0; i < 8; i++) {
        out[i] = rank * 100 + i;
    }

    /* MPI_Recv / MPI_Wait / MPI_Test */
    MTEST_CALL(MPI_Isend(out, 1, MPI_INT, p, 1, MPI_COMM_WORLD, &r));
    MTEST_CALL(MPI_Recv(in, 1, MPI_INT, p, 1, MPI_COMM_WORLD, SI));
    MTEST_EQ("MPI_Recv with MPI_STATUS_IGNORE", p * 100, in[0]);
    MTEST_CALL(MPI_Wait(&r, SI));
    MTEST_CALL(MPI_Irecv(in, 1, MPI_INT, p, 2, MPI_COMM_WORLD, &r));
    MTEST_CALL(MPI_Send(out + 1, 1, MPI_INT, p, 2, MPI_COMM_WORLD));
    flag = 0;
    while (!flag) {
        MTEST_CALL(MPI_Test(&r, &flag, SI));
    }
    MTEST_EQ("MPI_Test with MPI_STATUS_IGNORE", p * 100 + 1, in[0]);

    /* probes */
    MTEST_CALL(MPI_Isend(out + 2, 1, MPI_INT, p, 3, MPI_COMM_WORLD, &r));
    MTEST_CALL(MPI_Probe(p, 3, MPI_COMM_WORLD, SI));
    flag = 0;
    while (!flag) {
        MTEST_CALL(MPI_Iprobe(p, 3, MPI_COMM_WORLD, &flag, SI));
    }
    MTEST_CALL(MPI_Recv(in, 1, MPI_INT, p, 3, MPI_COMM_WORLD, SI));
    MTEST_EQ("receive after probes with MPI_STATUS_IGNORE", p * 100 + 2, in[0]);
    MTEST_CALL(MPI_Wait(&r, SI));

    /* sendrecv, sendrecv_replace */
    MTEST_CALL(MPI_Sendrecv(out + 3, 1, MPI_INT, p, 4, in, 1, MPI_INT, p, 4, MPI_COMM_WORLD, SI));
    MTEST_EQ("MPI_Sendrecv with MPI_STATUS_IGNORE", p * 100 + 3, in[0]);
    in[0] = rank;
    MTEST_CALL(MPI_Sendrecv_replace(in, 1, MPI_INT, p, 5, p, 5, MPI_COMM_WORLD, SI));
    MTEST_EQ("MPI_Sendrecv_replace with MPI_STATUS_IGNORE", p, in[0]);

    /* waitany / testany */
    for (int i = 0; i < 4; i++) {
        in[i] = -1;
        MTEST_CALL(MPI_Irecv(&in[i], 1, MPI_INT, p, 10 + i, MPI_COMM_WORLD, &rs[i]));
    }
    MTEST_CALL(MPI_Send(out + 6, 1, MPI_INT, p, 12, MPI_COMM_WORLD));
    MTEST_CALL(MPI_Waitany(4, rs, &idx, SI));
    MTEST_EQ("MPI_Waitany index with MPI_STATUS_IGNORE", 2, idx);
    MTEST_EQ("MPI_Waitany value", p * 100 + 6, in[2]);
    sync_pair(p);
    MTEST_CALL(MPI_Send(out + 7, 1, MPI_INT, p, 10, MPI_COMM_WORLD));
    flag = 0;
    while (!flag) {
        MTEST_CALL(MPI_Testany(4, rs, &idx, &flag, SI));
    }
    MTEST_EQ("MPI_Testany index with MPI_STATUS_IGNORE", 0, idx);
    MTEST_EQ("MPI_Testany value", p * 100 + 7, in[0]);
    sync_pair(p);
    /* waitsome / testsome on the two left (1 and 3) */
    MTEST_CALL(MPI_Send(out + 4, 1, MPI_INT, p, 13, MPI_COMM_WORLD));
    MTEST_CALL(MPI_Waitsome(4, rs, &outc, ind, SSI));
    MTEST_CHECK(outc == 1 && ind[0] == 3, "MPI_Waitsome with MPI_STATUSES_IGNORE: outcount %d index %d", outc,
                ind[0]);
    sync_pair(p);
    MTEST_CALL(MPI_Send(out + 5, 1, MPI_INT, p, 11, MPI_COMM_WORLD));
    outc = 0;
    while (outc == 0) {
        MTEST_CALL(MPI_Testsome(4, rs, &outc, ind, SSI));
    }
    MTEST_CHECK(outc == 1 && ind[0] == 1, "MPI_Testsome with MPI_STATUSES_IGNORE: outcount %d index %d", outc,
                ind[0]);
    MTEST_CHECK(in[1] == p * 100 + 5 && in[3] == p * 100 + 4, "values %d %d", in[1], in[3]);
    MTEST_CALL(MPI_Waitsome(4, rs, &outc, ind, SSI));
    MTEST_EQ("MPI_Waitsome outcount with only null requests", MPI_UNDEFINED, outc);

    /* waitall / testall, with MPI_PROC_NULL and self mixed in */
    int selfval = 4242, selfin = -1;
    MTEST_CALL(MPI_Irecv(&in[0], 1, MPI_INT, p, 20, MPI_COMM_WORLD, &rs[0]));
    MTEST_CALL(MPI_Irecv(&in[1], 1, MPI_INT, MPI_PROC_NULL, 20, MPI_COMM_WORLD, &rs[1]));
    MTEST_CALL(MPI_Irecv(&selfin, 1, MPI_INT, rank, 21, MPI_COMM_WORLD, &rs[2]));
    MTEST_CALL(MPI_Isend(&selfval, 1, MPI_INT, rank, 21, MPI_COMM_WORLD, &rs[3]));
    MTEST_CALL(MPI_Send(out, 1, MPI_INT, p, 20, MPI_COMM_WORLD));
    MTEST_CALL(MPI_Waitall(4, rs, SSI));
    MTEST_CHECK(in[0] == p * 100 && selfin == 4242, "MPI_Waitall with MPI_STATUSES_IGNORE: %d %d", in[0], selfin);
    MTEST_CALL(MPI_Irecv(&in[0], 1, MPI_INT, p, 22, MPI_COMM_WORLD, &rs[0]));
    MTEST_CALL(MPI_Send(out + 1, 1, MPI_INT, p, 22, MPI_COMM_WORLD));
    flag = 0;
    while (!flag) {
        MTEST_CALL(MPI_Testall(1, rs, &flag, SSI));
    }
    MTEST_EQ("MPI_Testall with MPI_STATUSES_IGNORE", p * 100 + 1, in[0]);

    /* errors are still returned when the status is ignored */
    int big[6] = {1, 2, 3, 4, 5, 6};
    MTEST_CALL(MPI_Isend(big, 6, MPI_INT, p, 30, MPI_COMM_WORLD, &r));
    MTEST_EXPECT_CLASS(MPI_ERR_TRUNCATE, MPI_Recv(in, 2, MPI_INT, p, 30, MPI_COMM_WORLD, SI));
    MTEST_CALL(MPI_Wait(&r, SI));
    MTEST_CALL(MPI_Recv(in, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, SI));

    return mtest_finalize();
}
