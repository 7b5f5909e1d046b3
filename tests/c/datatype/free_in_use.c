/*
 * Freeing a datatype while communication uses it is safe (MPI-4.1 section 5.1.10: the
 * operation completes normally):
 *   - MPI_Isend with a struct type, then MPI_Type_free, then the receiver receives;
 *   - MPI_Irecv with a vector type, the type freed before the message arrives;
 *   - persistent send and receive requests whose types are freed after MPI_Send_init /
 *     MPI_Recv_init, started several times;
 *   - new types created meanwhile (which may reuse the freed handles' slots) do not disturb
 *     the pending operations;
 *   - a type built from a freed component type keeps working.
 * Rank r exchanges with r^1 (itself when r^1 does not exist).
 */
#include "mtest.h"

#include <stddef.h>

#define N 200
#define ROUNDS 4

struct item {
    double x;
    char tag;
    int n;
};

static MPI_Datatype make_item(void)
{
    MPI_Datatype t, r;
    int bl[3] = {1, 1, 1};
    MPI_Aint d[3] = {offsetof(struct item, x), offsetof(struct item, tag), offsetof(struct item, n)};
    MPI_Datatype ty[3] = {MPI_DOUBLE, MPI_CHAR, MPI_INT};
    MTEST_CALL(MPI_Type_create_struct(3, bl, d, ty, &t));
    MTEST_CALL(MPI_Type_create_resized(t, 0, sizeof(struct item), &r));
    MTEST_CALL(MPI_Type_free(&t)); /* r was built from t: stays valid */
    MTEST_CALL(MPI_Type_commit(&r));
    return r;
}

/* Creates and frees some unrelated types (to recycle table slots). */
static void churn(MPI_Datatype keep[3])
{
    for (int i = 0; i < 3; i++) {
        MTEST_CALL(MPI_Type_contiguous(i + 1, MPI_SHORT, &keep[i]));
        MTEST_CALL(MPI_Type_commit(&keep[i]));
    }
}

static void unchurn(MPI_Datatype keep[3])
{
    for (int i = 0; i < 3; i++) {
        MTEST_CALL(MPI_Type_free(&keep[i]));
    }
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int me = mtest_rank();
    int peer = (me ^ 1) < mtest_size() ? (me ^ 1) : me;
    static struct item s[N], r[N];
    static int vs[2 * N], vr[2 * N];
    MPI_Datatype keep[3];
    MPI_Status st;

    /* Isend, free, receive. */
    for (int i = 0; i < N; i++) {
        s[i].x = me + i * 0.5;
        s[i].tag = (char)('a' + i % 26);
        s[i].n = me * 1000 + i;
    }
    memset(r, 0, sizeof r);
    MPI_Datatype item = make_item(), vec;
    MPI_Request sreq, rreq;
    MTEST_CALL(MPI_Isend(s, N, item, peer, 1, MPI_COMM_WORLD, &sreq));
    MTEST_CALL(MPI_Type_free(&item));
    churn(keep);
    item = make_item();
    MTEST_CALL(MPI_Recv(r, N, item, peer, 1, MPI_COMM_WORLD, &st));
    MTEST_CALL(MPI_Wait(&sreq, MPI_STATUS_IGNORE));
    for (int i = 0; i < N; i++) {
        if (r[i].x != peer + i * 0.5 || r[i].tag != 'a' + i % 26 || r[i].n != peer * 1000 + i) {
            MTEST_CHECK(0, "Isend with a freed type: item %d wrong", i);
            break;
        }
    }
    unchurn(keep);

    /* Irecv with a vector type freed before the message arrives. */
    MTEST_CALL(MPI_Type_vector(N, 1, 2, MPI_INT, &vec));
    MTEST_CALL(MPI_Type_commit(&vec));
    for (int i = 0; i < 2 * N; i++) {
        vs[i] = me * 100000 + i;
        vr[i] = -1;
    }
    MTEST_CALL(MPI_Irecv(vr, 1, vec, peer, 2, MPI_COMM_WORLD, &rreq));
    MTEST_CALL(MPI_Type_free(&vec));
    churn(keep);
    /* Make sure both receives are posted before the sends. */
    int token = 0, token_in = 0;
    MTEST_CALL(MPI_Sendrecv(&token, 1, MPI_INT, peer, 3, &token_in, 1, MPI_INT, peer, 3,
                            MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    MTEST_CALL(MPI_Send(vs, N, MPI_INT, peer, 2, MPI_COMM_WORLD));
    MTEST_CALL(MPI_Wait(&rreq, &st));
    for (int i = 0; i < 2 * N; i++) {
        int want = i % 2 ? -1 : peer * 100000 + i / 2;
        if (vr[i] != want) {
            MTEST_CHECK(0, "Irecv with a freed type: element %d is %d, expected %d", i, vr[i], want);
            break;
        }
    }
    unchurn(keep);

    /* Persistent requests whose types are freed, started ROUNDS times. */
    MPI_Datatype ps = make_item(), pr;
    MTEST_CALL(MPI_Type_vector(N, 1, 2, MPI_INT, &pr));
    MTEST_CALL(MPI_Type_commit(&pr));
    MPI_Request preq[2];
    MTEST_CALL(MPI_Recv_init(vr, 1, pr, peer, 4, MPI_COMM_WORLD, &preq[0]));
    MTEST_CALL(MPI_Send_init(s, N, ps, peer, 5, MPI_COMM_WORLD, &preq[1]));
    MTEST_CALL(MPI_Type_free(&ps));
    MTEST_CALL(MPI_Type_free(&pr));
    for (int round = 0; round < ROUNDS; round++) {
        churn(keep);
        for (int i = 0; i < 2 * N; i++) {
            vr[i] = -1;
        }
        for (int i = 0; i < N; i++) {
            s[i].n = me * 1000 + i + round;
        }
        memset(r, 0, sizeof r);
        item = make_item();
        MTEST_CALL(MPI_Startall(2, preq));
        MTEST_CALL(MPI_Sendrecv(vs, N, MPI_INT, peer, 4, r, N, item, peer, 5, MPI_COMM_WORLD, &st));
        MTEST_CALL(MPI_Waitall(2, preq, MPI_STATUSES_IGNORE));
        MTEST_CALL(MPI_Type_free(&item));
        for (int i = 0; i < 2 * N; i++) {
            int want = i % 2 ? -1 : peer * 100000 + i / 2;
            if (vr[i] != want) {
                MTEST_CHECK(0, "round %d: persistent receive element %d is %d", round, i, vr[i]);
                break;
            }
        }
        for (int i = 0; i < N; i++) {
            if (r[i].n != peer * 1000 + i + round || r[i].tag != 'a' + i % 26) {
                MTEST_CHECK(0, "round %d: persistent send item %d wrong", round, i);
                break;
            }
        }
        unchurn(keep);
    }
    MTEST_CALL(MPI_Request_free(&preq[0]));
    MTEST_CALL(MPI_Request_free(&preq[1]));
    return mtest_finalize();
}
