/*
 * Large-count point-to-point calls (MPI 4.1, the _c functions) with real data around a
 * ring (each rank sends to rank+1 and receives from rank-1; at one rank to itself):
 * MPI_Send_c MPI_Bsend_c MPI_Ssend_c MPI_Rsend_c, MPI_Isend_c MPI_Ibsend_c MPI_Issend_c
 * MPI_Irsend_c, MPI_Recv_c MPI_Irecv_c, the persistent MPI_Send_init_c MPI_Bsend_init_c
 * MPI_Ssend_init_c MPI_Rsend_init_c MPI_Recv_init_c, MPI_Sendrecv_c
 * MPI_Sendrecv_replace_c MPI_Isendrecv_c MPI_Isendrecv_replace_c, MPI_Buffer_attach_c and
 * MPI_Buffer_detach_c; received counts read with MPI_Get_count_c and MPI_Get_count.
 */
#include "mtest.h"
#include <string.h>

#define N 37

static int r, n, to, from;

static void fill(int *b, int tag, int who)
{
    for (int i = 0; i < N; i++) {
        b[i] = who * 100000 + tag * 100 + i;
    }
}

static void check(const char *what, const int *b, int tag, int who, const MPI_Status *st)
{
    for (int i = 0; i < N; i++) {
        MTEST_EQ(what, who * 100000 + tag * 100 + i, b[i]);
    }
    if (st) {
        MPI_Count c = -1;
        int ci = -1;
        MTEST_EQ("MPI_SOURCE", who, st->MPI_SOURCE);
        MTEST_EQ("MPI_TAG", tag, st->MPI_TAG);
        MTEST_CALL(MPI_Get_count_c(st, MPI_INT, &c));
        MTEST_EQ("MPI_Get_count_c", N, c);
        MTEST_CALL(MPI_Get_count(st, MPI_INT, &ci));
        MTEST_EQ("MPI_Get_count", N, ci);
    }
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    r = mtest_rank();
    n = mtest_size();
    to = (r + 1) % n;
    from = (r + n - 1) % n;

    int sb[N], rb[N];
    MPI_Status st;
    MPI_Request rq[2];
    const MPI_Count cnt = N;

    /* Blocking sends in every mode, each matched by a receive posted first */
    for (int mode = 0; mode < 4; mode++) {
        int tag = 1 + mode;
        fill(sb, tag, r);
        memset(rb, -1, sizeof rb);
        MTEST_CALL(MPI_Irecv_c(rb, cnt, MPI_INT, from, tag, MPI_COMM_WORLD, &rq[0]));
        mtest_barrier(); /* every receive is posted: MPI_Rsend_c may go */
        if (mode == 1) {
            MPI_Count size = N * (MPI_Count)sizeof(int) + MPI_BSEND_OVERHEAD;
            void *att = mtest_malloc((size_t)size);
            MTEST_CALL(MPI_Buffer_attach_c(att, size));
            MTEST_CALL(MPI_Bsend_c(sb, cnt, MPI_INT, to, tag, MPI_COMM_WORLD));
            void *back = NULL;
            MPI_Count back_size = -1;
            MTEST_CALL(MPI_Wait(&rq[0], &st));
            MTEST_CALL(MPI_Buffer_detach_c(&back, &back_size));
            MTEST_CHECK(back == att, "MPI_Buffer_detach_c returned another address");
            MTEST_EQ("MPI_Buffer_detach_c size", size, back_size);
            free(att);
        } else {
            if (mode == 0) {
                MTEST_CALL(MPI_Send_c(sb, cnt, MPI_INT, to, tag, MPI_COMM_WORLD));
            } else if (mode == 2) {
                MTEST_CALL(MPI_Ssend_c(sb, cnt, MPI_INT, to, tag, MPI_COMM_WORLD));
            } else {
                MTEST_CALL(MPI_Rsend_c(sb, cnt, MPI_INT, to, tag, MPI_COMM_WORLD));
            }
            MTEST_CALL(MPI_Wait(&rq[0], &st));
        }
        check("blocking send", rb, tag, from, &st);
        mtest_barrier();
    }

    /* MPI_Recv_c against nonblocking sends in every mode */
    for (int mode = 0; mode < 4; mode++) {
        int tag = 11 + mode;
        void *att = NULL;
        MPI_Count size = N * (MPI_Count)sizeof(int) + MPI_BSEND_OVERHEAD;
        fill(sb, tag, r);
        memset(rb, -1, sizeof rb);
        if (mode == 3) {
            /* ready mode: the receive must be posted first */
            MTEST_CALL(MPI_Irecv_c(rb, cnt, MPI_INT, from, tag, MPI_COMM_WORLD, &rq[1]));
            mtest_barrier();
            MTEST_CALL(MPI_Irsend_c(sb, cnt, MPI_INT, to, tag, MPI_COMM_WORLD, &rq[0]));
            MTEST_CALL(MPI_Wait(&rq[1], &st));
        } else {
            if (mode == 0) {
                MTEST_CALL(MPI_Isend_c(sb, cnt, MPI_INT, to, tag, MPI_COMM_WORLD, &rq[0]));
            } else if (mode == 1) {
                att = mtest_malloc((size_t)size);
                MTEST_CALL(MPI_Buffer_attach_c(att, size));
                MTEST_CALL(MPI_Ibsend_c(sb, cnt, MPI_INT, to, tag, MPI_COMM_WORLD, &rq[0]));
            } else {
                MTEST_CALL(MPI_Issend_c(sb, cnt, MPI_INT, to, tag, MPI_COMM_WORLD, &rq[0]));
            }
            MTEST_CALL(MPI_Recv_c(rb, cnt, MPI_INT, from, tag, MPI_COMM_WORLD, &st));
        }
        MTEST_CALL(MPI_Wait(&rq[0], MPI_STATUS_IGNORE));
        check("nonblocking send", rb, tag, from, &st);
        if (att) {
            void *back;
            MPI_Count back_size;
            MTEST_CALL(MPI_Buffer_detach_c(&back, &back_size));
            free(att);
        }
        mtest_barrier();
    }

    /* Persistent requests in every mode with MPI_Recv_init_c, each started twice */
    for (int mode = 0; mode < 4; mode++) {
        int tag = 21 + mode;
        void *att = NULL;
        MPI_Count size = N * (MPI_Count)sizeof(int) + MPI_BSEND_OVERHEAD;
        if (mode == 1) {
            att = mtest_malloc((size_t)size);
            MTEST_CALL(MPI_Buffer_attach_c(att, size));
        }
        MTEST_CALL(MPI_Recv_init_c(rb, cnt, MPI_INT, from, tag, MPI_COMM_WORLD, &rq[1]));
        if (mode == 0) {
            MTEST_CALL(MPI_Send_init_c(sb, cnt, MPI_INT, to, tag, MPI_COMM_WORLD, &rq[0]));
        } else if (mode == 1) {
            MTEST_CALL(MPI_Bsend_init_c(sb, cnt, MPI_INT, to, tag, MPI_COMM_WORLD, &rq[0]));
        } else if (mode == 2) {
            MTEST_CALL(MPI_Ssend_init_c(sb, cnt, MPI_INT, to, tag, MPI_COMM_WORLD, &rq[0]));
        } else {
            MTEST_CALL(MPI_Rsend_init_c(sb, cnt, MPI_INT, to, tag, MPI_COMM_WORLD, &rq[0]));
        }
        for (int round = 0; round < 2; round++) {
            fill(sb, tag + 50 * round, r);
            memset(rb, -1, sizeof rb);
            MTEST_CALL(MPI_Start(&rq[1]));
            mtest_barrier();
            MTEST_CALL(MPI_Start(&rq[0]));
            MTEST_CALL(MPI_Wait(&rq[1], &st));
            MTEST_CALL(MPI_Wait(&rq[0], MPI_STATUS_IGNORE));
            /* the data carry tag + 50 * round; the message tag is `tag` */
            for (int i = 0; i < N; i++) {
                MTEST_EQ("persistent", from * 100000 + (tag + 50 * round) * 100 + i, rb[i]);
            }
            MTEST_EQ("persistent MPI_TAG", tag, st.MPI_TAG);
            mtest_barrier();
        }
        MTEST_CALL(MPI_Request_free(&rq[0]));
        MTEST_CALL(MPI_Request_free(&rq[1]));
        if (att) {
            void *back;
            MPI_Count back_size;
            MTEST_CALL(MPI_Buffer_detach_c(&back, &back_size));
            free(att);
        }
    }

    /* MPI_Sendrecv_c and MPI_Isendrecv_c */
    fill(sb, 31, r);
    memset(rb, -1, sizeof rb);
    MTEST_CALL(MPI_Sendrecv_c(sb, cnt, MPI_INT, to, 31, rb, cnt, MPI_INT, from, 31, MPI_COMM_WORLD,
                              &st));
    check("MPI_Sendrecv_c", rb, 31, from, &st);
    fill(sb, 32, r);
    memset(rb, -1, sizeof rb);
    MTEST_CALL(MPI_Isendrecv_c(sb, cnt, MPI_INT, to, 32, rb, cnt, MPI_INT, from, 32,
                               MPI_COMM_WORLD, &rq[0]));
    MTEST_CALL(MPI_Wait(&rq[0], &st));
    /* (MPICH 4.0.2 leaves the status of MPI_Isendrecv(_replace)_c unset: p2p/isendrecv_strict
     * checks it for the int forms) */
    check("MPI_Isendrecv_c", rb, 32, from, NULL);

    /* MPI_Sendrecv_replace_c and MPI_Isendrecv_replace_c */
    fill(rb, 33, r);
    MTEST_CALL(MPI_Sendrecv_replace_c(rb, cnt, MPI_INT, to, 33, from, 33, MPI_COMM_WORLD, &st));
    check("MPI_Sendrecv_replace_c", rb, 33, from, &st);
    fill(rb, 34, r);
    MTEST_CALL(MPI_Isendrecv_replace_c(rb, cnt, MPI_INT, to, 34, from, 34, MPI_COMM_WORLD, &rq[0]));
    MTEST_CALL(MPI_Wait(&rq[0], &st));
    check("MPI_Isendrecv_replace_c", rb, 34, from, NULL);

    return mtest_finalize();
}
