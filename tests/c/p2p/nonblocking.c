/*
 * Nonblocking basics: MPI_Isend / MPI_Irecv with MPI_Wait and MPI_Test; receives posted
 * before and after the matching send; 64 outstanding requests each way completed in reverse
 * order; MPI_Test loops; MPI_Wait / MPI_Test on MPI_REQUEST_NULL (empty status);
 * MPI_Request_free on an active send (the message is still delivered) and on an active
 * receive (it still consumes exactly one message, in order); request handles set to
 * MPI_REQUEST_NULL on completion.  Rank 2k pairs with 2k+1; a lone last rank with itself.
 */
#include "mtest.h"

#define NREQ 64

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int rank = mtest_rank(), size = mtest_size();
    int partner = (rank ^ 1) < size ? (rank ^ 1) : rank;
    MPI_Status st;
    MPI_Request req;
    int flag;

    /* 1. MPI_Wait / MPI_Test on MPI_REQUEST_NULL */
    req = MPI_REQUEST_NULL;
    st.MPI_SOURCE = st.MPI_TAG = 12345;
    MTEST_CALL(MPI_Wait(&req, &st));
    MTEST_EMPTY_STATUS(&st);
    flag = 0;
    st.MPI_SOURCE = st.MPI_TAG = 12345;
    MTEST_CALL(MPI_Test(&req, &flag, &st));
    MTEST_EQ("MPI_Test(MPI_REQUEST_NULL) flag", 1, flag != 0);
    MTEST_EMPTY_STATUS(&st);
    MTEST_CALL(MPI_Wait(&req, MPI_STATUS_IGNORE));

    /* 2. many outstanding requests: receives first, sends, then complete in reverse order */
    {
        int out[NREQ], in[NREQ];
        MPI_Request rr[NREQ], sr[NREQ];
        for (int i = 0; i < NREQ; i++) {
            in[i] = -1;
            out[i] = rank * 1000 + i;
            MTEST_CALL(MPI_Irecv(&in[i], 1, MPI_INT, partner, i, MPI_COMM_WORLD, &rr[i]));
        }
        for (int i = 0; i < NREQ; i++) {
            MTEST_CALL(MPI_Isend(&out[i], 1, MPI_INT, partner, i, MPI_COMM_WORLD, &sr[i]));
        }
        for (int i = NREQ - 1; i >= 0; i--) {
            MTEST_CALL(MPI_Wait(&rr[i], &st));
            MTEST_STATUS(&st, partner, i, MPI_INT, 1);
            MTEST_EQ("value of outstanding receive", partner * 1000 + i, in[i]);
            MTEST_CHECK(rr[i] == MPI_REQUEST_NULL, "receive request %d not nulled by MPI_Wait", i);
            flag = 0;
            while (!flag) {
                MTEST_CALL(MPI_Test(&sr[i], &flag, MPI_STATUS_IGNORE));
            }
            MTEST_CHECK(sr[i] == MPI_REQUEST_NULL, "send request %d not nulled by MPI_Test", i);
        }
    }

    /* 3. receive posted after the send (unexpected), tag order reversed, MPI_Test loop */
    {
        double out[3] = {rank + 0.25, rank + 0.5, rank + 0.75}, in[3] = {0, 0, 0};
        MPI_Request sr[3];
        for (int i = 0; i < 3; i++) {
            MTEST_CALL(MPI_Isend(&out[i], 1, MPI_DOUBLE, partner, 100 + i, MPI_COMM_WORLD, &sr[i]));
        }
        for (int i = 2; i >= 0; i--) {
            MTEST_CALL(MPI_Irecv(&in[i], 1, MPI_DOUBLE, partner, 100 + i, MPI_COMM_WORLD, &req));
            flag = 0;
            while (!flag) {
                MTEST_CALL(MPI_Test(&req, &flag, &st));
            }
            MTEST_STATUS(&st, partner, 100 + i, MPI_DOUBLE, 1);
            MTEST_CHECK(in[i] == out[i] - rank + partner, "double %d: got %g", i, in[i]);
            /* a completed request is MPI_REQUEST_NULL; testing it again gives an empty status */
            MTEST_CHECK(req == MPI_REQUEST_NULL, "request not nulled after MPI_Test flag=true");
            MTEST_CALL(MPI_Test(&req, &flag, &st));
            MTEST_EMPTY_STATUS(&st);
        }
        for (int i = 0; i < 3; i++) {
            MTEST_CALL(MPI_Wait(&sr[i], &st));
        }
    }

    /* 4. MPI_Request_free on an active send: the message is still delivered.  The partner
     * answers after receiving, so the sender knows when it may touch the buffer again. */
    {
        unsigned char *big = mtest_malloc(200000), *in = mtest_malloc(200000);
        int ack = 0, ack_in = -1;
        mtest_fill(big, 200000, (uint64_t)rank + 40);
        MTEST_CALL(MPI_Isend(big, 200000, MPI_BYTE, partner, 200, MPI_COMM_WORLD, &req));
        MTEST_CALL(MPI_Request_free(&req));
        MTEST_CHECK(req == MPI_REQUEST_NULL, "MPI_Request_free did not set MPI_REQUEST_NULL");
        MTEST_CALL(MPI_Recv(in, 200000, MPI_BYTE, partner, 200, MPI_COMM_WORLD, &st));
        MTEST_STATUS(&st, partner, 200, MPI_BYTE, 200000);
        mtest_verify(in, 200000, (uint64_t)partner + 40, "message of a freed send request");
        MTEST_CALL(MPI_Sendrecv(&ack, 1, MPI_INT, partner, 201, &ack_in, 1, MPI_INT, partner, 201,
                                MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        free(big);
        free(in);
    }

    /* 5. MPI_Request_free on an active receive: it matches the first message; a following
     * receive gets the second one.  (Its buffer is not looked at: the program cannot know
     * when the freed receive finished writing it.) */
    {
        int b = -1, v1 = 1, v2 = 2;
        MPI_Request sr[2];
        static int freed_buf;
        MTEST_CALL(MPI_Irecv(&freed_buf, 1, MPI_INT, partner, 300, MPI_COMM_WORLD, &req));
        MTEST_CALL(MPI_Request_free(&req));
        MTEST_CHECK(req == MPI_REQUEST_NULL, "MPI_Request_free did not set MPI_REQUEST_NULL");
        MTEST_CALL(MPI_Isend(&v1, 1, MPI_INT, partner, 300, MPI_COMM_WORLD, &sr[0]));
        MTEST_CALL(MPI_Isend(&v2, 1, MPI_INT, partner, 300, MPI_COMM_WORLD, &sr[1]));
        MTEST_CALL(MPI_Recv(&b, 1, MPI_INT, partner, 300, MPI_COMM_WORLD, &st));
        MTEST_EQ("message after the one taken by a freed receive", 2, b);
        MTEST_CALL(MPI_Waitall(2, sr, MPI_STATUSES_IGNORE));
    }

    return mtest_finalize();
}
