/* oxmpi's point-to-point performance variables, with exact values: in one session
 * started around a known exchange (blocking, nonblocking and persistent sends to the
 * right neighbour, a send to itself), p2p_messages_sent/bytes_sent/messages_received/
 * bytes_received bound to MPI_COMM_WORLD count exactly those messages, by peer; traffic
 * while stopped counts nothing; readreset returns the value and zeroes it; write sets
 * it; reset zeroes it; a second session keeps its own values; a handle bound to
 * MPI_COMM_SELF has one element. Queue lengths follow a posted receive and an
 * unexpected message; the blocked-time timer grows across a wait that blocks.
 * On other implementations (other variable names) only the skip is reported. */
#include "mpit_util.h"

enum { SENT_MSGS, SENT_BYTES, RECV_MSGS, RECV_BYTES, NVARS };
static const char *names[NVARS] = {"p2p_messages_sent", "p2p_bytes_sent",
                                   "p2p_messages_received", "p2p_bytes_received"};

static void read_all(MPI_T_pvar_session s, MPI_T_pvar_handle *h, unsigned long long *v[NVARS])
{
    for (int k = 0; k < NVARS; k++) {
        T_CALL(MPI_T_pvar_read(s, h[k], v[k]));
    }
}

static void expect(const char *when, unsigned long long *v[NVARS], unsigned long long *want[NVARS],
                   int n)
{
    for (int k = 0; k < NVARS; k++) {
        for (int r = 0; r < n; r++) {
            MTEST_CHECK(v[k][r] == want[k][r], "%s: %s[%d] = %llu, expected %llu", when, names[k],
                        r, v[k][r], want[k][r]);
        }
    }
}

/* The exchange: 3 nonblocking sends of 10, 20, 30 bytes and a persistent send of 5 bytes
 * to the right neighbour (received by a blocking receive each), and a Sendrecv of 7 bytes
 * with itself. */
static void exchange(int rank, int n)
{
    int right = (rank + 1) % n, left = (rank + n - 1) % n;
    char out[64], in[4][64], self_in[8];
    MPI_Request req[4];
    memset(out, rank, sizeof out);
    for (int k = 0; k < 3; k++) {
        MTEST_CALL(MPI_Irecv(in[k], 64, MPI_BYTE, left, 10 + k, MPI_COMM_WORLD, &req[k]));
    }
    for (int k = 0; k < 3; k++) {
        MTEST_CALL(MPI_Send(out, 10 * (k + 1), MPI_BYTE, right, 10 + k, MPI_COMM_WORLD));
    }
    MTEST_CALL(MPI_Waitall(3, req, MPI_STATUSES_IGNORE));
    MPI_Request p;
    MTEST_CALL(MPI_Send_init(out, 5, MPI_BYTE, right, 20, MPI_COMM_WORLD, &p));
    MTEST_CALL(MPI_Irecv(in[3], 64, MPI_BYTE, left, 20, MPI_COMM_WORLD, &req[3]));
    MTEST_CALL(MPI_Start(&p));
    MTEST_CALL(MPI_Wait(&p, MPI_STATUS_IGNORE));
    MTEST_CALL(MPI_Wait(&req[3], MPI_STATUS_IGNORE));
    MTEST_CALL(MPI_Request_free(&p));
    MTEST_CALL(MPI_Sendrecv(out, 7, MPI_BYTE, rank, 30, self_in, 8, MPI_BYTE, rank, 30,
                            MPI_COMM_WORLD, MPI_STATUS_IGNORE));
}

int main(int argc, char **argv)
{
    int provided;
    mtest_init(&argc, &argv);
    int rank = mtest_rank(), n = mtest_size();
    T_CALL(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
    int idx[NVARS];
    for (int k = 0; k < NVARS; k++) {
        idx[k] = mpit_pvar(names[k], MPI_T_PVAR_CLASS_COUNTER);
    }
    if (idx[0] < 0) {
        MTEST_CHECK(!mpit_is_oxmpi(), "oxmpi lacks %s", names[0]);
        if (rank == 0) {
            printf("(skipped: no oxmpi performance variables)\n");
        }
        T_CALL(MPI_T_finalize());
        return mtest_finalize();
    }

    MPI_T_pvar_session s, s2;
    MPI_T_pvar_handle h[NVARS], h2;
    unsigned long long *v[NVARS], *want[NVARS];
    T_CALL(MPI_T_pvar_session_create(&s));
    T_CALL(MPI_T_pvar_session_create(&s2));
    MPI_Comm world = MPI_COMM_WORLD;
    for (int k = 0; k < NVARS; k++) {
        int count = -1;
        T_CALL(MPI_T_pvar_handle_alloc(s, idx[k], &world, &h[k], &count));
        MTEST_EQ("count of a handle bound to MPI_COMM_WORLD", n, count);
        v[k] = calloc((size_t)n, sizeof **v);
        want[k] = calloc((size_t)n, sizeof **want);
    }
    int count2 = -1;
    T_CALL(MPI_T_pvar_handle_alloc(s2, idx[SENT_MSGS], &world, &h2, &count2));
    MPI_Comm self = MPI_COMM_SELF;
    MPI_T_pvar_handle hself;
    int cself = -1;
    T_CALL(MPI_T_pvar_handle_alloc(s2, idx[SENT_BYTES], &self, &hself, &cself));
    MTEST_EQ("count of a handle bound to MPI_COMM_SELF", 1, cself);

    /* Not started: a fresh handle reads 0 and traffic counts nothing. */
    read_all(s, h, v);
    expect("fresh handles", v, want, n);

    T_CALL(MPI_T_pvar_start(s, MPI_T_PVAR_ALL_HANDLES));
    T_CALL(MPI_T_pvar_start(s2, MPI_T_PVAR_ALL_HANDLES));
    exchange(rank, n);
    T_CALL(MPI_T_pvar_stop(s, MPI_T_PVAR_ALL_HANDLES));

    int right = (rank + 1) % n, left = (rank + n - 1) % n;
    want[SENT_MSGS][right] += 4;
    want[SENT_BYTES][right] += 65;
    want[RECV_MSGS][left] += 4;
    want[RECV_BYTES][left] += 65;
    want[SENT_MSGS][rank] += 1;
    want[SENT_BYTES][rank] += 7;
    want[RECV_MSGS][rank] += 1;
    want[RECV_BYTES][rank] += 7;
    read_all(s, h, v);
    expect("after the exchange", v, want, n);

    /* Stopped: more traffic counts nothing in s, but in s2 (still started). */
    mtest_barrier();
    exchange(rank, n);
    read_all(s, h, v);
    expect("stopped", v, want, n);
    unsigned long long *v2 = calloc((size_t)n, sizeof *v2), selfbytes = 0;
    T_CALL(MPI_T_pvar_read(s2, h2, v2));
    MTEST_CHECK(v2[right] >= 8, "second session: %llu messages to the right", v2[right]);
    T_CALL(MPI_T_pvar_read(s2, hself, &selfbytes));
    /* Two exchanges: 7 bytes to itself each (and 65 more when it is its own neighbour). */
    MTEST_EQ("bytes sent to itself (MPI_COMM_SELF handle)", n == 1 ? 144 : 14, selfbytes);

    /* readreset, write, reset. */
    T_CALL(MPI_T_pvar_readreset(s, h[SENT_BYTES], v[SENT_BYTES]));
    MTEST_EQ("readreset value", (long long)want[SENT_BYTES][right], v[SENT_BYTES][right]);
    T_CALL(MPI_T_pvar_read(s, h[SENT_BYTES], v[SENT_BYTES]));
    MTEST_EQ("after readreset", 0, v[SENT_BYTES][right]);
    for (int r = 0; r < n; r++) {
        want[SENT_MSGS][r] = 1000 + (unsigned long long)r;
    }
    T_CALL(MPI_T_pvar_write(s, h[SENT_MSGS], want[SENT_MSGS]));
    T_CALL(MPI_T_pvar_read(s, h[SENT_MSGS], v[SENT_MSGS]));
    MTEST_EQ("written value", 1000 + right, v[SENT_MSGS][right]);
    T_CALL(MPI_T_pvar_start(s, h[SENT_MSGS]));
    MTEST_CALL(MPI_Send(NULL, 0, MPI_BYTE, rank, 40, MPI_COMM_WORLD));
    MTEST_CALL(MPI_Recv(NULL, 0, MPI_BYTE, rank, 40, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    T_CALL(MPI_T_pvar_read(s, h[SENT_MSGS], v[SENT_MSGS]));
    MTEST_EQ("written value plus one send", 1001 + rank, v[SENT_MSGS][rank]);
    T_CALL(MPI_T_pvar_reset(s, MPI_T_PVAR_ALL_HANDLES));
    read_all(s, h, v);
    for (int k = 0; k < NVARS; k++) {
        memset(want[k], 0, sizeof **want * (size_t)n);
    }
    expect("after reset", v, want, n);

    /* Queue lengths (continuous, read-only). */
    int iu = mpit_pvar("p2p_unexpected_queue_length", MPI_T_PVAR_CLASS_LEVEL);
    int ip = mpit_pvar("p2p_posted_queue_length", MPI_T_PVAR_CLASS_LEVEL);
    MPI_T_pvar_handle hu, hp;
    int c;
    T_CALL(MPI_T_pvar_handle_alloc(s, iu, NULL, &hu, &c));
    MTEST_EQ("unexpected-queue count", 1, c);
    T_CALL(MPI_T_pvar_handle_alloc(s, ip, NULL, &hp, &c));
    unsigned long long qu = 99, qp = 99;
    T_CALL(MPI_T_pvar_read(s, hu, &qu));
    T_CALL(MPI_T_pvar_read(s, hp, &qp));
    MTEST_EQ("unexpected queue, idle", 0, qu);
    MTEST_EQ("posted queue, idle", 0, qp);
    int x = 5, y = 0, flag = 0;
    MPI_Request r;
    MTEST_CALL(MPI_Irecv(&y, 1, MPI_INT, rank, 50, MPI_COMM_WORLD, &r));
    MTEST_CALL(MPI_Send(&x, 1, MPI_INT, rank, 51, MPI_COMM_WORLD));
    while (!flag) {
        MTEST_CALL(MPI_Iprobe(rank, 51, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));
    }
    T_CALL(MPI_T_pvar_read(s, hu, &qu));
    T_CALL(MPI_T_pvar_read(s, hp, &qp));
    MTEST_EQ("unexpected queue with one message", 1, qu);
    MTEST_EQ("posted queue with one receive", 1, qp);
    T_EXPECT(MPI_T_ERR_PVAR_NO_STARTSTOP, MPI_T_pvar_start(s, hu));
    T_EXPECT(MPI_T_ERR_PVAR_NO_WRITE, MPI_T_pvar_reset(s, hp));
    MTEST_CALL(MPI_Send(&x, 1, MPI_INT, rank, 50, MPI_COMM_WORLD));
    MTEST_CALL(MPI_Wait(&r, MPI_STATUS_IGNORE));
    MTEST_CALL(MPI_Recv(&y, 1, MPI_INT, rank, 51, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    T_CALL(MPI_T_pvar_read(s, hu, &qu));
    T_CALL(MPI_T_pvar_read(s, hp, &qp));
    MTEST_EQ("unexpected queue, drained", 0, qu);
    MTEST_EQ("posted queue, drained", 0, qp);

    /* Blocked time: a receive that waits for a message sent later. */
    int it = mpit_pvar("wait_blocked_time", MPI_T_PVAR_CLASS_TIMER);
    MPI_T_pvar_handle ht;
    double t0 = -1, t1 = -1;
    T_CALL(MPI_T_pvar_handle_alloc(s, it, NULL, &ht, &c));
    T_CALL(MPI_T_pvar_read(s, ht, &t0));
    MTEST_CHECK(t0 == 0.0, "fresh timer %g", t0);
    T_CALL(MPI_T_pvar_start(s, ht));
    if (n >= 2 && rank < 2) {
        if (rank == 1) {
            mtest_sleep_ms(50);
            MTEST_CALL(MPI_Send(&x, 1, MPI_INT, 0, 60, MPI_COMM_WORLD));
        } else {
            MTEST_CALL(MPI_Recv(&y, 1, MPI_INT, 1, 60, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        }
    }
    T_CALL(MPI_T_pvar_stop(s, ht));
    T_CALL(MPI_T_pvar_read(s, ht, &t1));
    if (n >= 2 && rank == 0) {
        MTEST_CHECK(t1 > 0.01 && t1 < 60, "blocked %g s in a receive that waited 50 ms", t1);
    }
    MTEST_CHECK(t1 >= 0, "timer %g", t1);

    T_CALL(MPI_T_pvar_session_free(&s));
    T_CALL(MPI_T_pvar_session_free(&s2));
    T_CALL(MPI_T_finalize());
    for (int k = 0; k < NVARS; k++) {
        free(v[k]);
        free(want[k]);
    }
    free(v2);
    return mtest_finalize();
}
