/*
 * Persistent requests: MPI_Send_init, MPI_Bsend_init, MPI_Ssend_init, MPI_Rsend_init,
 * MPI_Recv_init with MPI_Start / MPI_Startall, each request reused ITERS times with new
 * buffer contents every time; completed persistent requests stay allocated (inactive) until
 * MPI_Request_free; zero counts; MPI_PROC_NULL.  Pairs 2k <-> 2k+1 exchange both ways at
 * once (a lone last rank talks to itself).
 */
#include "mtest.h"

#define ITERS 30
#define N 257
enum { K_SEND, K_BSEND, K_SSEND, K_RSEND, NKINDS };
static const char *kind_names[NKINDS] = {"MPI_Send_init", "MPI_Bsend_init", "MPI_Ssend_init",
                                         "MPI_Rsend_init"};

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int rank = mtest_rank(), size = mtest_size();
    int partner = (rank ^ 1) < size ? (rank ^ 1) : rank;
    int out[N], in[N];
    MPI_Status sts[3];

    int bsize = 0;
    MTEST_CALL(MPI_Pack_size(N, MPI_INT, MPI_COMM_WORLD, &bsize));
    bsize = 2 * (bsize + MPI_BSEND_OVERHEAD);
    char *bbuf = mtest_malloc((size_t)bsize);
    MTEST_CALL(MPI_Buffer_attach(bbuf, bsize));

    for (int kind = 0; kind < NKINDS; kind++) {
        /* Open MPI 4.1.4 delivers zeros from the second start of a persistent buffered send
         * to self above its eager size; that case is in p2p/semantics_strict. */
        int n = (kind == K_BSEND && partner == rank) ? 4 : N;
        MPI_Request reqs[3]; /* 0: receive, 1: send, 2: "ready" receive for ready mode */
        int ready_in = -1, ready_out = 0;
        MTEST_CALL(MPI_Recv_init(in, n, MPI_INT, partner, kind, MPI_COMM_WORLD, &reqs[0]));
        switch (kind) {
        case K_SEND:
            MTEST_CALL(MPI_Send_init(out, n, MPI_INT, partner, kind, MPI_COMM_WORLD, &reqs[1]));
            break;
        case K_BSEND:
            MTEST_CALL(MPI_Bsend_init(out, n, MPI_INT, partner, kind, MPI_COMM_WORLD, &reqs[1]));
            break;
        case K_SSEND:
            MTEST_CALL(MPI_Ssend_init(out, n, MPI_INT, partner, kind, MPI_COMM_WORLD, &reqs[1]));
            break;
        case K_RSEND:
            MTEST_CALL(MPI_Rsend_init(out, n, MPI_INT, partner, kind, MPI_COMM_WORLD, &reqs[1]));
            break;
        }
        MTEST_CALL(MPI_Recv_init(&ready_in, 1, MPI_INT, partner, 100, MPI_COMM_WORLD, &reqs[2]));

        for (int it = 0; it < ITERS; it++) {
            for (int i = 0; i < n; i++) {
                out[i] = rank * 100000 + it * 1000 + i + kind;
                in[i] = -1;
            }
            if (kind == K_RSEND) {
                /* ready mode: the partner's receive must be active before the send starts */
                MTEST_CALL(MPI_Startall(1, &reqs[2]));
                MTEST_CALL(MPI_Start(&reqs[0]));
                MTEST_CALL(MPI_Send(&ready_out, 1, MPI_INT, partner, 100, MPI_COMM_WORLD));
                MTEST_CALL(MPI_Wait(&reqs[2], MPI_STATUS_IGNORE));
                MTEST_CALL(MPI_Start(&reqs[1]));
            } else if (it % 2 == 0) {
                MTEST_CALL(MPI_Startall(2, reqs));
            } else {
                MTEST_CALL(MPI_Start(&reqs[1]));
                MTEST_CALL(MPI_Start(&reqs[0]));
            }
            if (it % 3 == 0) {
                MTEST_CALL(MPI_Waitall(2, reqs, sts));
            } else {
                int flag = 0;
                while (!flag) {
                    MTEST_CALL(MPI_Testall(2, reqs, &flag, sts));
                }
            }
            MTEST_STATUS(&sts[0], partner, kind, MPI_INT, n);
            for (int i = 0; i < n; i++) {
                if (in[i] != partner * 100000 + it * 1000 + i + kind) {
                    MTEST_CHECK(0, "%s iteration %d element %d: expected %d got %d", kind_names[kind], it,
                                i, partner * 100000 + it * 1000 + i + kind, in[i]);
                    break;
                }
            }
            MTEST_CHECK(reqs[0] != MPI_REQUEST_NULL && reqs[1] != MPI_REQUEST_NULL,
                        "%s: a persistent request was nulled on completion", kind_names[kind]);
        }
        /* inactive persistent requests: waiting returns at once with an empty status */
        MTEST_CALL(MPI_Wait(&reqs[0], &sts[0]));
        MTEST_EMPTY_STATUS(&sts[0]);
        for (int i = 0; i < 3; i++) {
            MTEST_CALL(MPI_Request_free(&reqs[i]));
            MTEST_CHECK(reqs[i] == MPI_REQUEST_NULL, "MPI_Request_free did not null request %d", i);
        }
    }

    /* zero count and MPI_PROC_NULL */
    {
        MPI_Request r[4];
        int dummy = 5;
        MTEST_CALL(MPI_Recv_init(&dummy, 0, MPI_INT, partner, 200, MPI_COMM_WORLD, &r[0]));
        MTEST_CALL(MPI_Send_init(&dummy, 0, MPI_INT, partner, 200, MPI_COMM_WORLD, &r[1]));
        MTEST_CALL(MPI_Recv_init(&dummy, 1, MPI_INT, MPI_PROC_NULL, 201, MPI_COMM_WORLD, &r[2]));
        MTEST_CALL(MPI_Send_init(&dummy, 1, MPI_INT, MPI_PROC_NULL, 201, MPI_COMM_WORLD, &r[3]));
        for (int it = 0; it < 10; it++) {
            MPI_Status s4[4];
            MTEST_CALL(MPI_Startall(4, r));
            MTEST_CALL(MPI_Waitall(4, r, s4));
            MTEST_STATUS(&s4[0], partner, 200, MPI_INT, 0);
            /* (source MPI_PROC_NULL / tag MPI_ANY_TAG of this status: p2p/semantics_strict) */
            int c = -1;
            MTEST_CALL(MPI_Get_count(&s4[2], MPI_INT, &c));
            MTEST_EQ("count of a persistent receive from MPI_PROC_NULL", 0, c);
            MTEST_EQ("buffer of a receive from MPI_PROC_NULL", 5, dummy);
        }
        for (int i = 0; i < 4; i++) {
            MTEST_CALL(MPI_Request_free(&r[i]));
        }
    }

    void *addr;
    MTEST_CALL(MPI_Buffer_detach(&addr, &bsize));
    free(bbuf);
    return mtest_finalize();
}
