/*
 * Zero-byte messages: every send mode (standard, buffered, synchronous, ready; blocking and
 * nonblocking) with count 0, several datatypes, a NULL buffer; received into a larger
 * buffer that must stay untouched; MPI_Get_count 0 for any type; probing an empty message;
 * order among empty and non-empty messages with MPI_ANY_TAG; MPI_Sendrecv of nothing.
 * Rank 2k sends to 2k+1 (a lone last rank to itself), then the roles swap.
 */
#include "mtest.h"

#define TAG_READY 50

static void recv_empty(int src, int tag, MPI_Datatype type, const char *what)
{
    double buf[8]; /* room for 8 elements of any type used here */
    MPI_Status st;
    memset(buf, 0x5A, sizeof buf);
    MTEST_CALL(MPI_Recv(buf, 8, type, src, tag, MPI_COMM_WORLD, &st));
    MTEST_STATUS(&st, src, tag, type, 0);
    int n = -1;
    MTEST_CALL(MPI_Get_count(&st, MPI_BYTE, &n));
    MTEST_CHECK(n == 0, "%s: MPI_Get_count(MPI_BYTE) %d", what, n);
    mtest_verify_const(buf, sizeof buf, 0x5A, what);
}

static void run(int peer, int sending)
{
    MPI_Request r;
    int dummy = 1;
    if (sending) {
        MTEST_CALL(MPI_Send(&dummy, 0, MPI_INT, peer, 1, MPI_COMM_WORLD));
        MTEST_CALL(MPI_Send(&dummy, 0, MPI_DOUBLE, peer, 2, MPI_COMM_WORLD));
        MTEST_CALL(MPI_Send(NULL, 0, MPI_BYTE, peer, 3, MPI_COMM_WORLD));
        MTEST_CALL(MPI_Bsend(&dummy, 0, MPI_INT, peer, 4, MPI_COMM_WORLD));
        MTEST_CALL(MPI_Ssend(&dummy, 0, MPI_INT, peer, 5, MPI_COMM_WORLD));
        MTEST_CALL(MPI_Isend(&dummy, 0, MPI_INT, peer, 6, MPI_COMM_WORLD, &r));
        MTEST_CALL(MPI_Wait(&r, MPI_STATUS_IGNORE));
        MTEST_CALL(MPI_Issend(NULL, 0, MPI_INT, peer, 7, MPI_COMM_WORLD, &r));
        MTEST_CALL(MPI_Wait(&r, MPI_STATUS_IGNORE));
        MTEST_CALL(MPI_Ibsend(&dummy, 0, MPI_INT, peer, 8, MPI_COMM_WORLD, &r));
        MTEST_CALL(MPI_Wait(&r, MPI_STATUS_IGNORE));
        /* ready mode: wait until the receiver says its receive is posted */
        MTEST_CALL(MPI_Recv(&dummy, 1, MPI_INT, peer, TAG_READY, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        MTEST_CALL(MPI_Rsend(&dummy, 0, MPI_INT, peer, 9, MPI_COMM_WORLD));
        MTEST_CALL(MPI_Recv(&dummy, 1, MPI_INT, peer, TAG_READY, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        MTEST_CALL(MPI_Irsend(&dummy, 0, MPI_INT, peer, 10, MPI_COMM_WORLD, &r));
        MTEST_CALL(MPI_Wait(&r, MPI_STATUS_IGNORE));
        /* order among empty and non-empty messages */
        int v = 77;
        MTEST_CALL(MPI_Send(&dummy, 0, MPI_INT, peer, 11, MPI_COMM_WORLD));
        MTEST_CALL(MPI_Send(&v, 1, MPI_INT, peer, 11, MPI_COMM_WORLD));
        MTEST_CALL(MPI_Send(&dummy, 0, MPI_INT, peer, 12, MPI_COMM_WORLD));
        MTEST_CALL(MPI_Send(&dummy, 0, MPI_INT, peer, 11, MPI_COMM_WORLD));
    } else {
        recv_empty(peer, 1, MPI_INT, "empty MPI_Send of MPI_INT");
        recv_empty(peer, 2, MPI_DOUBLE, "empty MPI_Send of MPI_DOUBLE");
        recv_empty(peer, 3, MPI_BYTE, "empty MPI_Send with a NULL buffer");
        recv_empty(peer, 4, MPI_INT, "empty MPI_Bsend");
        MPI_Status st;
        MTEST_CALL(MPI_Probe(peer, 5, MPI_COMM_WORLD, &st));
        MTEST_STATUS(&st, peer, 5, MPI_INT, 0);
        recv_empty(peer, 5, MPI_INT, "empty MPI_Ssend");
        recv_empty(peer, 6, MPI_INT, "empty MPI_Isend");
        recv_empty(peer, 7, MPI_INT, "empty MPI_Issend");
        recv_empty(peer, 8, MPI_INT, "empty MPI_Ibsend");
        int buf[4] = {3, 3, 3, 3};
        MTEST_CALL(MPI_Irecv(buf, 4, MPI_INT, peer, 9, MPI_COMM_WORLD, &r));
        MTEST_CALL(MPI_Send(&dummy, 1, MPI_INT, peer, TAG_READY, MPI_COMM_WORLD));
        MTEST_CALL(MPI_Wait(&r, &st));
        MTEST_STATUS(&st, peer, 9, MPI_INT, 0);
        MTEST_CALL(MPI_Irecv(NULL, 0, MPI_INT, peer, 10, MPI_COMM_WORLD, &r));
        MTEST_CALL(MPI_Send(&dummy, 1, MPI_INT, peer, TAG_READY, MPI_COMM_WORLD));
        MTEST_CALL(MPI_Wait(&r, &st));
        MTEST_STATUS(&st, peer, 10, MPI_INT, 0);
        MTEST_EQ("buffer after an empty ready-mode message", 3, buf[0]);
        /* tags 11 (empty), 11 (77), 12 (empty), 11 (empty) received with ANY_TAG / 11 */
        int v = -1;
        MTEST_CALL(MPI_Recv(&v, 1, MPI_INT, peer, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
        MTEST_STATUS(&st, peer, 11, MPI_INT, 0);
        MTEST_EQ("buffer after an empty message", -1, v);
        MTEST_CALL(MPI_Recv(&v, 1, MPI_INT, peer, 11, MPI_COMM_WORLD, &st));
        MTEST_STATUS(&st, peer, 11, MPI_INT, 1);
        MTEST_EQ("non-empty message between empty ones", 77, v);
        MTEST_CALL(MPI_Recv(&v, 1, MPI_INT, peer, 11, MPI_COMM_WORLD, &st));
        MTEST_STATUS(&st, peer, 11, MPI_INT, 0);
        MTEST_CALL(MPI_Recv(&v, 1, MPI_INT, peer, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
        MTEST_STATUS(&st, peer, 12, MPI_INT, 0);
    }
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int rank = mtest_rank(), size = mtest_size();
    int partner = (rank ^ 1) < size ? (rank ^ 1) : rank;
    int bsize = 2 * MPI_BSEND_OVERHEAD + 64;
    char *bbuf = mtest_malloc((size_t)bsize);
    MTEST_CALL(MPI_Buffer_attach(bbuf, bsize));

    if (partner == rank) {
        /* alone: post everything through nonblocking self-messages */
        MPI_Request r[3];
        int dummy = 0, in[4] = {9, 9, 9, 9};
        MPI_Status st;
        MTEST_CALL(MPI_Isend(&dummy, 0, MPI_INT, rank, 1, MPI_COMM_WORLD, &r[0]));
        MTEST_CALL(MPI_Issend(NULL, 0, MPI_INT, rank, 2, MPI_COMM_WORLD, &r[1]));
        MTEST_CALL(MPI_Ibsend(&dummy, 0, MPI_INT, rank, 3, MPI_COMM_WORLD, &r[2]));
        for (int t = 3; t >= 1; t--) {
            MTEST_CALL(MPI_Recv(in, 4, MPI_INT, rank, t, MPI_COMM_WORLD, &st));
            MTEST_STATUS(&st, rank, t, MPI_INT, 0);
        }
        MTEST_CALL(MPI_Waitall(3, r, MPI_STATUSES_IGNORE));
        MTEST_EQ("buffer after empty self-messages", 9, in[0]);
        MTEST_CALL(MPI_Sendrecv(&dummy, 0, MPI_INT, rank, 4, in, 4, MPI_INT, rank, 4, MPI_COMM_WORLD, &st));
        MTEST_STATUS(&st, rank, 4, MPI_INT, 0);
    } else {
        run(partner, rank % 2 == 0);
        run(partner, rank % 2 == 1);
        int in[2] = {8, 8}, dummy = 0;
        MPI_Status st;
        MTEST_CALL(MPI_Sendrecv(&dummy, 0, MPI_INT, partner, 4, in, 2, MPI_INT, partner, 4, MPI_COMM_WORLD, &st));
        MTEST_STATUS(&st, partner, 4, MPI_INT, 0);
        MTEST_EQ("buffer after an empty MPI_Sendrecv", 8, in[0]);
    }
    void *addr;
    MTEST_CALL(MPI_Buffer_detach(&addr, &bsize));
    free(bbuf);
    return mtest_finalize();
}
