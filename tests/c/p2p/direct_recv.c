/*
 * Blocking receives from one local peer take the peer's next eager packet straight from
 * shared memory when nothing posted or stored comes before it.  This program checks that
 * the shortcut never breaks MPI's matching rules: each case below sets up something that
 * must win over a blocking receive (an earlier wildcard or same-source receive, stored
 * messages with other tags, a message on another communicator at the head of the ring, a
 * rendezvous message, a synchronous send), and checks the data and status every receive
 * gets.  Ranks work in pairs (even sender, odd receiver); an unpaired last rank runs the
 * cases against itself, where nothing is direct.
 */
#include "mtest.h"

#define T_GO 100
#define BIG 50000 /* ints: above every eager limit */

static int peer, me, sender;

/* Receiver side: one int with `tag` from `src` on `comm`, checked. */
static void recv_int(MPI_Comm comm, int src, int tag, int want, int want_tag)
{
    int v = -1;
    MPI_Status st;
    MTEST_CALL(MPI_Recv(&v, 1, MPI_INT, src, tag, comm, &st));
    MTEST_EQ("received value", want, v);
    MTEST_EQ("status.MPI_TAG", want_tag, st.MPI_TAG);
    MTEST_EQ("status.MPI_SOURCE", src == MPI_ANY_SOURCE ? peer : src, st.MPI_SOURCE);
}

static void send_int(MPI_Comm comm, int v, int tag)
{
    MTEST_CALL(MPI_Send(&v, 1, MPI_INT, peer, tag, comm));
}

/* The receiver tells the sender it has posted what must come first. */
static void go(void)
{
    if (sender) {
        int x;
        MTEST_CALL(MPI_Recv(&x, 1, MPI_INT, peer, T_GO, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    } else {
        send_int(MPI_COMM_WORLD, 0, T_GO);
    }
}

/* An earlier wildcard receive gets the first message; the blocking one the second. */
static void earlier_wildcard(void)
{
    if (sender) {
        go();
        send_int(MPI_COMM_WORLD, 1, 5);
        send_int(MPI_COMM_WORLD, 2, 5);
        send_int(MPI_COMM_WORLD, 3, 6);
        send_int(MPI_COMM_WORLD, 4, 6);
    } else {
        int a = -1, b = -1;
        MPI_Request r[2];
        MPI_Status st[2];
        MTEST_CALL(MPI_Irecv(&a, 1, MPI_INT, MPI_ANY_SOURCE, 5, MPI_COMM_WORLD, &r[0]));
        MTEST_CALL(MPI_Irecv(&b, 1, MPI_INT, peer, 6, MPI_COMM_WORLD, &r[1]));
        go();
        recv_int(MPI_COMM_WORLD, peer, 5, 2, 5);
        recv_int(MPI_COMM_WORLD, peer, 6, 4, 6);
        MTEST_CALL(MPI_Waitall(2, r, st));
        MTEST_EQ("wildcard receive value", 1, a);
        MTEST_EQ("same-source receive value", 3, b);
        MTEST_EQ("same-source receive tag", 6, st[1].MPI_TAG);
    }
}

/* Messages stored before the receive: tags picked out of order, then the rest in order. */
static void stored_first(void)
{
    if (sender) {
        send_int(MPI_COMM_WORLD, 11, 1);
        send_int(MPI_COMM_WORLD, 22, 2);
        send_int(MPI_COMM_WORLD, 33, 1);
        send_int(MPI_COMM_WORLD, 44, 3);
        send_int(MPI_COMM_WORLD, 0, T_GO);
    } else {
        /* The go message queues behind the four others, which get stored meanwhile. */
        recv_int(MPI_COMM_WORLD, peer, T_GO, 0, T_GO);
        recv_int(MPI_COMM_WORLD, peer, 2, 22, 2);
        recv_int(MPI_COMM_WORLD, peer, 1, 11, 1);
        recv_int(MPI_COMM_WORLD, peer, MPI_ANY_TAG, 33, 1);
        recv_int(MPI_COMM_WORLD, peer, MPI_ANY_TAG, 44, 3);
    }
}

/* A message on another communicator at the head of the ring must not block or be taken. */
static void other_comm_first(MPI_Comm dup)
{
    if (sender) {
        go();
        send_int(dup, 7, 0);
        send_int(MPI_COMM_WORLD, 8, 0);
    } else {
        go();
        recv_int(MPI_COMM_WORLD, peer, 0, 8, 0);
        recv_int(dup, peer, 0, 7, 0);
    }
}

/* Eager and rendezvous messages alternate; the receiver waits in MPI_Recv before each. */
static void mixed_sizes(void)
{
    static const int counts[] = {0, 1, 2, 16, 255, 1024, 4096, BIG, 3, BIG, 0, 7};
    int n = (int)(sizeof(counts) / sizeof(counts[0]));
    int *buf = mtest_malloc(sizeof(int) * BIG);
    for (int rep = 0; rep < 3; rep++) {
        for (int i = 0; i < n; i++) {
            int c = counts[i];
            uint64_t seed = (uint64_t)(rep * 100 + i + 1);
            if (sender) {
                mtest_fill(buf, sizeof(int) * (size_t)c, seed);
                MTEST_CALL(MPI_Send(buf, c, MPI_INT, peer, 9, MPI_COMM_WORLD));
            } else {
                MPI_Status st;
                memset(buf, 0, sizeof(int) * BIG);
                MTEST_CALL(MPI_Recv(buf, BIG, MPI_INT, peer, 9, MPI_COMM_WORLD, &st));
                MTEST_STATUS(&st, peer, 9, MPI_INT, c);
                mtest_verify(buf, sizeof(int) * (size_t)c, seed, "mixed-size message");
            }
        }
    }
    free(buf);
}

/* A synchronous send completes once a direct receive took it. */
static void synchronous(void)
{
    for (int i = 0; i < 20; i++) {
        if (sender) {
            int x;
            MTEST_CALL(MPI_Recv(&x, 1, MPI_INT, peer, 12, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            MTEST_CALL(MPI_Ssend(&i, 1, MPI_INT, peer, 13, MPI_COMM_WORLD));
        } else {
            send_int(MPI_COMM_WORLD, i, 12);
            recv_int(MPI_COMM_WORLD, peer, 13, i, 13);
        }
    }
}

/* A receive too small: MPI_ERR_TRUNCATE with the envelope, and traffic goes on. */
static void truncated(void)
{
    int v[4] = {1, 2, 3, 4};
    if (sender) {
        go();
        MTEST_CALL(MPI_Send(v, 4, MPI_INT, peer, 14, MPI_COMM_WORLD));
        send_int(MPI_COMM_WORLD, 5, 14);
    } else {
        int got[2] = {0, 0};
        MPI_Status st;
        mtest_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        go();
        MTEST_EXPECT_CLASS(MPI_ERR_TRUNCATE,
                           MPI_Recv(got, 2, MPI_INT, peer, 14, MPI_COMM_WORLD, &st));
        MTEST_EQ("truncated status.MPI_SOURCE", peer, st.MPI_SOURCE);
        MTEST_EQ("truncated status.MPI_TAG", 14, st.MPI_TAG);
        MTEST_EQ("truncated first element", 1, got[0]);
        MTEST_EQ("truncated second element", 2, got[1]);
        mtest_set_errhandler(MPI_COMM_WORLD, mtest_initial_errhandler);
        recv_int(MPI_COMM_WORLD, peer, 14, 5, 14);
    }
}

/* A pair of ranks, or one rank talking to itself (peer == me, both roles in turn). */
static void run_pair(MPI_Comm dup)
{
    earlier_wildcard();
    stored_first();
    other_comm_first(dup);
    mixed_sizes();
    synchronous();
    truncated();
}

/* Alone: self messages never take the direct path but must follow the same rules. */
static void run_self(void)
{
    int v[3] = {0, 0, 0};
    MPI_Request r[3];
    MPI_Status st;
    MTEST_CALL(MPI_Irecv(&v[0], 1, MPI_INT, MPI_ANY_SOURCE, 5, MPI_COMM_WORLD, &r[0]));
    for (int i = 1; i <= 3; i++) {
        MTEST_CALL(MPI_Isend(&i, 1, MPI_INT, me, 5, MPI_COMM_WORLD, &r[1]));
        MTEST_CALL(MPI_Wait(&r[1], MPI_STATUS_IGNORE));
    }
    MTEST_CALL(MPI_Wait(&r[0], MPI_STATUS_IGNORE));
    MTEST_EQ("self wildcard receive", 1, v[0]);
    MTEST_CALL(MPI_Recv(&v[1], 1, MPI_INT, me, 5, MPI_COMM_WORLD, &st));
    MTEST_CALL(MPI_Recv(&v[2], 1, MPI_INT, me, 5, MPI_COMM_WORLD, &st));
    MTEST_EQ("self second", 2, v[1]);
    MTEST_EQ("self third", 3, v[2]);
    (void)r[2];
}

int main(int argc, char **argv)
{
    int size;
    MPI_Comm dup;
    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MTEST_CALL(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    if (me % 2 == 0 && me + 1 < size) {
        peer = me + 1;
        sender = 1;
        run_pair(dup);
    } else if (me % 2 == 1) {
        peer = me - 1;
        sender = 0;
        run_pair(dup);
    } else {
        run_self();
    }
    MTEST_CALL(MPI_Comm_free(&dup));
    return mtest_finalize();
}
