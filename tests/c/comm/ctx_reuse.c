/* Context ids: thousands of create/free cycles (dup, split, create) at any size; many
 * communicators alive at once, each with its own traffic; and a communicator freed while
 * a receive on it is still pending (the receive completes normally and traffic on the
 * communicators created afterwards never matches it). */
#include "mtest.h"

/* Thousands of cycles where ranks have cores of their own; fewer when oversubscribed
 * (each cycle is a collective), which still reuses the freed context every time. */
#define CYCLES (size <= 2 ? 3000 : 400)
#define LIVE 64

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int rank = mtest_rank(), size = mtest_size();
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;

    /* dup/free cycles, with traffic on every 100th duplicate */
    for (int i = 0; i < CYCLES; i++) {
        MPI_Comm c;
        MTEST_CALL(MPI_Comm_dup(MPI_COMM_WORLD, &c));
        if (i % 100 == 0) {
            int got = -1;
            MTEST_CALL(MPI_Sendrecv(&i, 1, MPI_INT, next, 0, &got, 1, MPI_INT, prev, 0, c, MPI_STATUS_IGNORE));
            MTEST_EQ("value on a recycled duplicate", i, got);
        }
        MTEST_CALL(MPI_Comm_free(&c));
    }

    /* split/free cycles with changing colours */
    for (int i = 0; i < CYCLES / 4; i++) {
        MPI_Comm c;
        int color = (rank + i) % 3 == 0 ? MPI_UNDEFINED : (rank + i) % 2;
        MTEST_CALL(MPI_Comm_split(MPI_COMM_WORLD, color, rank, &c));
        if (c != MPI_COMM_NULL) {
            MTEST_CALL(MPI_Comm_free(&c));
        }
    }

    /* many at once; messages posted on all of them before any is received */
    MPI_Comm live[LIVE];
    for (int i = 0; i < LIVE; i++) {
        MTEST_CALL(MPI_Comm_dup(i % 2 ? MPI_COMM_WORLD : (i ? live[i - 1] : MPI_COMM_WORLD), &live[i]));
    }
    int sendv[LIVE], recvv[LIVE];
    MPI_Request rq[2 * LIVE];
    for (int i = 0; i < LIVE; i++) {
        sendv[i] = 1000 * rank + i;
        recvv[i] = -1;
        MTEST_CALL(MPI_Isend(&sendv[i], 1, MPI_INT, next, 3, live[i], &rq[i]));
    }
    for (int i = LIVE - 1; i >= 0; i--) {
        MTEST_CALL(MPI_Irecv(&recvv[i], 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, live[i], &rq[LIVE + i]));
    }
    MTEST_CALL(MPI_Waitall(2 * LIVE, rq, MPI_STATUSES_IGNORE));
    for (int i = 0; i < LIVE; i++) {
        if (recvv[i] != 1000 * prev + i) {
            MTEST_CHECK(0, "communicator %d delivered %d, expected %d", i, recvv[i], 1000 * prev + i);
        }
    }
    for (int i = 0; i < LIVE; i += 2) {
        MTEST_CALL(MPI_Comm_free(&live[i]));
    }
    for (int i = 1; i < LIVE; i += 2) {
        MTEST_CALL(MPI_Comm_free(&live[i]));
    }

    /* Free while a receive is pending: the receive still gets its message, and a new
     * communicator (which may not reuse the context yet) keeps its own traffic. */
    if (size >= 2) {
        for (int round = 0; round < 50; round++) {
            MPI_Comm d, d2;
            MTEST_CALL(MPI_Comm_dup(MPI_COMM_WORLD, &d));
            int old = -1, fresh = -1, v1 = 1 + round, v2 = 1000 + round;
            MPI_Request r = MPI_REQUEST_NULL, s = MPI_REQUEST_NULL;
            if (rank == 1) {
                MTEST_CALL(MPI_Irecv(&old, 1, MPI_INT, 0, 9, d, &r));
            } else if (rank == 0) {
                MTEST_CALL(MPI_Isend(&v1, 1, MPI_INT, 1, 9, d, &s));
            }
            MTEST_CALL(MPI_Comm_free(&d));
            MTEST_CALL(MPI_Comm_dup(MPI_COMM_WORLD, &d2));
            if (rank == 0) {
                MTEST_CALL(MPI_Send(&v2, 1, MPI_INT, 1, 9, d2));
                MTEST_CALL(MPI_Wait(&s, MPI_STATUS_IGNORE));
            } else if (rank == 1) {
                MTEST_CALL(MPI_Recv(&fresh, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, d2, MPI_STATUS_IGNORE));
                MTEST_CALL(MPI_Wait(&r, MPI_STATUS_IGNORE));
                MTEST_EQ("message on the new communicator", v2, fresh);
                MTEST_EQ("message on the freed communicator", v1, old);
            }
            MTEST_CALL(MPI_Comm_free(&d2));
        }
    }
    return mtest_finalize();
}
