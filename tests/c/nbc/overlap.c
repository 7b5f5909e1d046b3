/*
 * Several nonblocking collectives outstanding on one communicator (and on a duplicate)
 * complete in any order: reversed MPI_Wait order, MPI_Waitany, MPI_Testsome loops;
 * they overlap with point-to-point traffic (the collectives progress while a rank is
 * blocked in MPI_Recv or MPI_Ssend, and point-to-point messages progress while a rank
 * waits for a collective); a collective with a user-defined operation completes while
 * one rank sits in a blocking receive that the others only satisfy after their own
 * collective completed; and some ranks complete a nonblocking broadcast after a
 * blocking barrier, others before it.
 */
#include "mtest.h"

#define K 6

static void first_fn(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    int *a = in, *b = inout;
    for (int i = 0; i < *len; i++) b[i] = a[i];
}

static void check_round(int round, int r, int n, int *red, int *bc, int *ag)
{
    MTEST_EQ("Iallreduce result", n * (n - 1) / 2 + n * round, red[0]);
    MTEST_EQ("Ibcast result", 1000 + round, bc[0]);
    for (int i = 0; i < n; i++) MTEST_EQ("Iallgather block", i * 10 + round, ag[i]);
    (void)r;
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int r = mtest_rank(), n = mtest_size();
    MPI_Comm w = MPI_COMM_WORLD, d;
    MTEST_CALL(MPI_Comm_dup(w, &d));
    int *ag = mtest_malloc(sizeof(int) * n * K);
    int in[K], red[K], bc[K];
    MPI_Request rq[3 * K];

    for (int mode = 0; mode < 3; mode++) {
        for (int k = 0; k < K; k++) {
            MPI_Comm c = k % 2 ? d : w;
            in[k] = r + k;
            bc[k] = r == k % n ? 1000 + k : -1;
            int mine = r * 10 + k;
            MTEST_CALL(MPI_Iallreduce(&in[k], &red[k], 1, MPI_INT, MPI_SUM, c, &rq[3 * k]));
            MTEST_CALL(MPI_Ibcast(&bc[k], 1, MPI_INT, k % n, c, &rq[3 * k + 1]));
            MTEST_CALL(MPI_Iallgather(&mine, 1, MPI_INT, ag + n * k, 1, MPI_INT, c,
                                      &rq[3 * k + 2]));
        }
        if (mode == 0) {
            /* Reverse order. */
            for (int i = 3 * K - 1; i >= 0; i--) MTEST_CALL(MPI_Wait(&rq[i], MPI_STATUS_IGNORE));
        } else if (mode == 1) {
            for (int left = 3 * K; left > 0; left--) {
                int idx;
                MTEST_CALL(MPI_Waitany(3 * K, rq, &idx, MPI_STATUS_IGNORE));
                MTEST_CHECK(idx >= 0 && idx < 3 * K, "Waitany index %d", idx);
            }
        } else {
            int done = 0, idx[3 * K];
            while (done < 3 * K) {
                int out;
                MTEST_CALL(MPI_Testsome(3 * K, rq, &out, idx, MPI_STATUSES_IGNORE));
                if (out != MPI_UNDEFINED) done += out;
            }
        }
        for (int k = 0; k < K; k++) check_round(k, r, n, &red[k], &bc[k], ag + n * k);
    }

    if (n >= 2) {
        /* Point-to-point across a pending collective: every rank starts an Iallreduce,
         * then a ring of messages (Irecv + Ssend) runs, then the collective completes. */
        int x = r, y = -1, tok = -1, next = (r + 1) % n, prev = (r + n - 1) % n;
        MPI_Request c, rr;
        MTEST_CALL(MPI_Iallreduce(&x, &y, 1, MPI_INT, MPI_SUM, w, &c));
        MTEST_CALL(MPI_Irecv(&tok, 1, MPI_INT, prev, 7, w, &rr));
        MTEST_CALL(MPI_Ssend(&r, 1, MPI_INT, next, 7, w));
        MTEST_CALL(MPI_Wait(&rr, MPI_STATUS_IGNORE));
        MTEST_EQ("ring token", prev, tok);
        MTEST_CALL(MPI_Wait(&c, MPI_STATUS_IGNORE));
        MTEST_EQ("Iallreduce across p2p", n * (n - 1) / 2, y);

        /* The collective must progress while rank 0 is blocked in MPI_Recv: the others
         * send to rank 0 only after their collective completed. A user operation makes
         * the reduction's local steps run outside the library's lock. */
        MPI_Op op;
        MTEST_CALL(MPI_Op_create(first_fn, 0, &op));
        int v[4] = {r, r + 1, r + 2, r + 3}, out[4];
        MTEST_CALL(MPI_Iallreduce(v, out, 4, MPI_INT, op, w, &c));
        if (r == 0) {
            for (int i = 1; i < n; i++) {
                int got = -1;
                MTEST_CALL(MPI_Recv(&got, 1, MPI_INT, i, 8, w, MPI_STATUS_IGNORE));
                MTEST_EQ("message sent after the collective", i, got);
            }
            MTEST_CALL(MPI_Wait(&c, MPI_STATUS_IGNORE));
        } else {
            MTEST_CALL(MPI_Wait(&c, MPI_STATUS_IGNORE));
            MTEST_CALL(MPI_Send(&r, 1, MPI_INT, 0, 8, w));
        }
        for (int i = 0; i < 4; i++) MTEST_EQ("user-op Iallreduce", i, out[i]);
        MTEST_CALL(MPI_Op_free(&op));

        /* Large Ibcast (rendezvous-sized) while rank 0 receives point-to-point. */
        int big = 1 << 18;
        char *buf = mtest_malloc(big);
        if (r == 0) mtest_fill(buf, big, 77);
        MTEST_CALL(MPI_Ibcast(buf, big, MPI_CHAR, 0, w, &c));
        if (r == 0) {
            for (int i = 1; i < n; i++) {
                int got;
                MTEST_CALL(MPI_Recv(&got, 1, MPI_INT, MPI_ANY_SOURCE, 9, w, MPI_STATUS_IGNORE));
            }
        } else {
            MTEST_CALL(MPI_Send(&r, 1, MPI_INT, 0, 9, w));
        }
        MTEST_CALL(MPI_Wait(&c, MPI_STATUS_IGNORE));
        mtest_verify(buf, big, 77, "large Ibcast");

        /* Completion order differs from start order: even ranks (the ones that forward
         * the data in a binomial tree from rank 0) enter a blocking barrier (the
         * shared-memory path where there is one) while the Ibcast they started still has
         * to forward data to odd ranks, which wait for it before their barrier. */
        if (r != 0) memset(buf, 0, big);
        MTEST_CALL(MPI_Ibcast(buf, big, MPI_CHAR, 0, w, &c));
        if (r % 2 == 0) {
            MTEST_CALL(MPI_Barrier(w));
            MTEST_CALL(MPI_Wait(&c, MPI_STATUS_IGNORE));
        } else {
            MTEST_CALL(MPI_Wait(&c, MPI_STATUS_IGNORE));
            MTEST_CALL(MPI_Barrier(w));
        }
        mtest_verify(buf, big, 77, "Ibcast completed around a barrier");
        free(buf);
    }
    free(ag);
    MTEST_CALL(MPI_Comm_free(&d));
    return mtest_finalize();
}
