/*
 * The edges of the small-message short path (a standard send or a receive of a predefined
 * contiguous type to or from a named local rank goes straight to or from the shared-memory
 * ring): each case mixes calls the short path takes with calls it leaves to the general
 * path and checks that MPI's ordering and matching rules still hold.
 *   1. order: a rendezvous Isend, then a stream of small Send/Isend, some of which find the
 *      ring full and are queued; the receiver, which starts late, gets them in send order.
 *   2. wildcards: an MPI_ANY_SOURCE / MPI_ANY_TAG receive posted before a named receive
 *      gets the first message; blocking receives alternating named and wildcard sources
 *      over a stream of messages get them in order.
 *   3. truncation: a short-path receive (blocking and nonblocking) of a longer message
 *      fails with MPI_ERR_TRUNCATE, with the status of what arrived.
 *   4. declined calls: MPI_PROC_NULL, a bad rank, tag and datatype fail or complete as
 *      the general path says.
 * Ranks work in pairs (even sender, odd receiver); an unpaired last rank runs the cases
 * against itself where it can.
 */
#include "mtest.h"

#define T_GO 100
#define T_ORDER 1
#define T_WILD 2
#define T_TRUNC 3
#define BIG 50000 /* ints: above every eager limit */
#define STREAM 3000

static int peer, me, sender;
/* A duplicate of MPI_COMM_WORLD: the wildcard receives see no mtest traffic. */
static MPI_Comm comm;

static void go(void)
{
    int x = 0;
    if (sender) {
        MTEST_CALL(MPI_Recv(&x, 1, MPI_INT, peer, T_GO, comm, MPI_STATUS_IGNORE));
    } else {
        MTEST_CALL(MPI_Send(&x, 1, MPI_INT, peer, T_GO, comm));
    }
}

static void order_case(void)
{
    int *big = mtest_malloc(BIG * sizeof(int));
    if (sender) {
        MPI_Request rbig, *reqs = mtest_malloc(STREAM * sizeof(MPI_Request));
        int *vals = mtest_malloc(STREAM * sizeof(int));
        for (int i = 0; i < BIG; i++) big[i] = i ^ 0x5a5a;
        MTEST_CALL(MPI_Isend(big, BIG, MPI_INT, peer, T_ORDER, comm, &rbig));
        int n = 0;
        for (int i = 0; i < STREAM; i++) {
            vals[i] = i;
            if (i % 3 == 0) {
                /* A blocking send may wait here for ring space; the receiver drains. */
                MTEST_CALL(MPI_Send(&vals[i], 1, MPI_INT, peer, T_ORDER, comm));
            } else {
                MTEST_CALL(MPI_Isend(&vals[i], 1, MPI_INT, peer, T_ORDER, comm, &reqs[n++]));
            }
        }
        MTEST_CALL(MPI_Wait(&rbig, MPI_STATUS_IGNORE));
        MTEST_CALL(MPI_Waitall(n, reqs, MPI_STATUSES_IGNORE));
        free(reqs);
        free(vals);
    } else {
        mtest_sleep_ms(100); /* let the ring fill and sends queue behind the rendezvous */
        MPI_Status st;
        MTEST_CALL(MPI_Recv(big, BIG, MPI_INT, peer, T_ORDER, comm, &st));
        int bad = 0;
        for (int i = 0; i < BIG; i++) bad += big[i] != (i ^ 0x5a5a);
        MTEST_EQ("rendezvous message corrupt elements", 0, bad);
        int v[8];
        MPI_Request r[8];
        for (int i = 0; i < STREAM;) {
            if ((i / 8) % 2 == 0 && i + 8 <= STREAM) {
                for (int k = 0; k < 8; k++)
                    MTEST_CALL(MPI_Irecv(&v[k], 1, MPI_INT, peer, T_ORDER, comm, &r[k]));
                MTEST_CALL(MPI_Waitall(8, r, MPI_STATUSES_IGNORE));
                for (int k = 0; k < 8; k++) MTEST_EQ("stream value (Irecv)", i + k, v[k]);
                i += 8;
            } else {
                MTEST_CALL(MPI_Recv(&v[0], 1, MPI_INT, peer, T_ORDER, comm, &st));
                MTEST_EQ("stream value (Recv)", i, v[0]);
                MTEST_EQ("stream status.MPI_SOURCE", peer, st.MPI_SOURCE);
                i++;
            }
        }
    }
    free(big);
}

static void wild_case(void)
{
    if (sender) {
        go();
        for (int i = 0; i < 2; i++)
            MTEST_CALL(MPI_Send(&i, 1, MPI_INT, peer, T_WILD + i, comm));
        for (int i = 0; i < 200; i++) MTEST_CALL(MPI_Send(&i, 1, MPI_INT, peer, T_WILD, comm));
    } else {
        int a = -1, b = -1;
        MPI_Request r;
        MPI_Status st;
        MTEST_CALL(MPI_Irecv(&a, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &r));
        go();
        MTEST_CALL(MPI_Recv(&b, 1, MPI_INT, peer, T_WILD + 1, comm, &st));
        MTEST_EQ("named receive value", 1, b);
        MTEST_CALL(MPI_Wait(&r, &st));
        MTEST_EQ("wildcard receive value", 0, a);
        MTEST_EQ("wildcard status.MPI_TAG", T_WILD, st.MPI_TAG);
        MTEST_EQ("wildcard status.MPI_SOURCE", peer, st.MPI_SOURCE);
        for (int i = 0; i < 200; i++) {
            int v = -1;
            int src = (i % 3 == 1) ? MPI_ANY_SOURCE : peer;
            int tag = (i % 5 == 2) ? MPI_ANY_TAG : T_WILD;
            if (i % 7 == 3) {
                MTEST_CALL(MPI_Irecv(&v, 1, MPI_INT, src, tag, comm, &r));
                MTEST_CALL(MPI_Wait(&r, &st));
            } else {
                MTEST_CALL(MPI_Recv(&v, 1, MPI_INT, src, tag, comm, &st));
            }
            MTEST_EQ("mixed stream value", i, v);
            MTEST_EQ("mixed stream status.MPI_SOURCE", peer, st.MPI_SOURCE);
            MTEST_EQ("mixed stream status.MPI_TAG", T_WILD, st.MPI_TAG);
        }
    }
}

static void trunc_case(void)
{
    int two[2] = {7, 8};
    if (sender) {
        go();
        MTEST_CALL(MPI_Send(two, 2, MPI_INT, peer, T_TRUNC, comm));
        MTEST_CALL(MPI_Send(two, 2, MPI_INT, peer, T_TRUNC, comm));
    } else {
        int one[2] = {-1, -1};
        MPI_Status st;
        MPI_Request r;
        go();
        MTEST_EXPECT_CLASS(MPI_ERR_TRUNCATE,
                           MPI_Recv(one, 1, MPI_INT, peer, T_TRUNC, comm, &st));
        MTEST_EQ("truncated Recv status.MPI_SOURCE", peer, st.MPI_SOURCE);
        MTEST_EQ("truncated Recv status.MPI_TAG", T_TRUNC, st.MPI_TAG);
        MTEST_EQ("truncated Recv wrote past the buffer", -1, one[1]);
        one[0] = -1;
        MTEST_CALL(MPI_Irecv(one, 1, MPI_INT, peer, T_TRUNC, comm, &r));
        MTEST_EXPECT_CLASS(MPI_ERR_TRUNCATE, MPI_Wait(&r, &st));
        MTEST_EQ("truncated Irecv wrote past the buffer", -1, one[1]);
    }
}

static void declined_case(int size)
{
    int v = 5;
    MPI_Status st;
    MPI_Request r;
    MTEST_CALL(MPI_Send(&v, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD));
    MTEST_CALL(MPI_Recv(&v, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &st));
    MTEST_PROC_NULL_STATUS(&st);
    MTEST_EQ("buffer after receive from MPI_PROC_NULL", 5, v);
    MTEST_CALL(MPI_Isend(&v, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &r));
    MTEST_CALL(MPI_Wait(&r, MPI_STATUS_IGNORE));
    MTEST_EXPECT_CLASS(MPI_ERR_RANK, MPI_Send(&v, 1, MPI_INT, size, 0, MPI_COMM_WORLD));
    MTEST_EXPECT_CLASS(MPI_ERR_RANK, MPI_Recv(&v, 1, MPI_INT, size, 0, MPI_COMM_WORLD, &st));
    MTEST_EXPECT_CLASS(MPI_ERR_TAG, MPI_Send(&v, 1, MPI_INT, me, -5, MPI_COMM_WORLD));
    MTEST_EXPECT_CLASS(MPI_ERR_TAG, MPI_Irecv(&v, 1, MPI_INT, me, -5, MPI_COMM_WORLD, &r));
    MTEST_EXPECT_CLASS(MPI_ERR_COUNT, MPI_Send(&v, -1, MPI_INT, me, 0, MPI_COMM_WORLD));
    MTEST_EXPECT_CLASS(MPI_ERR_TYPE, MPI_Send(&v, 1, MPI_DATATYPE_NULL, me, 0, MPI_COMM_WORLD));
    MTEST_EXPECT_CLASS(MPI_ERR_COMM, MPI_Send(&v, 1, MPI_INT, me, 0, MPI_COMM_NULL));
}

int main(int argc, char **argv)
{
    int size;
    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    sender = me % 2 == 0;
    peer = sender ? me + 1 : me - 1;
    declined_case(size);
    MTEST_CALL(MPI_Comm_dup(MPI_COMM_WORLD, &comm));
    if (peer < size) {
        order_case();
        wild_case();
        trunc_case();
    }
    MTEST_CALL(MPI_Comm_free(&comm));
    return mtest_finalize();
}
