/*
 * Small standard and ready nonblocking sends that may complete when they start (the
 * library can write an eager message straight into its transport and hand back a
 * request that is already complete): every MPI_Isend and MPI_Irsend still returns a
 * non-null handle;
 * MPI_Request_get_status reports it complete without freeing it; MPI_Waitsome,
 * MPI_Testany and MPI_Waitall over arrays holding several such handles, null handles
 * and pending receives complete each entry once, report each index once and null every
 * handle; MPI_Request_free on one leaves the message delivered; MPI_Cancel on a send
 * whose message was already received fails (MPI_Test_cancelled false).  The receiver
 * checks every payload and status.  Rank 2k pairs with 2k+1; a lone last rank with itself.
 */
#include "mtest.h"

#define NMSG 16

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int rank = mtest_rank(), size = mtest_size();
    int partner = (rank ^ 1) < size ? (rank ^ 1) : rank;
    int out[NMSG], in[NMSG];
    MPI_Request sr[NMSG], rr[NMSG];
    MPI_Status st, sts[2 * NMSG];
    int flag, idx, outcount, indices[2 * NMSG];

    /* 1. sends first (their messages wait as unexpected ones), receives after */
    for (int i = 0; i < NMSG; i++) {
        out[i] = rank * 100 + i;
        in[i] = -1;
        MTEST_CALL(MPI_Isend(&out[i], 1, MPI_INT, partner, i, MPI_COMM_WORLD, &sr[i]));
        MTEST_CHECK(sr[i] != MPI_REQUEST_NULL, "send %d: MPI_Isend returned MPI_REQUEST_NULL", i);
    }
    for (int i = 0; i < NMSG; i++)
        MTEST_CALL(MPI_Irecv(&in[i], 1, MPI_INT, partner, i, MPI_COMM_WORLD, &rr[i]));

    /* get_status on a send: eventually complete, and the handle stays valid */
    flag = 0;
    while (!flag)
        MTEST_CALL(MPI_Request_get_status(sr[1], &flag, MPI_STATUS_IGNORE));
    MTEST_CHECK(sr[1] != MPI_REQUEST_NULL, "MPI_Request_get_status freed the request");

    /* free one send: its message still arrives (checked through in[3] below) */
    MTEST_CALL(MPI_Request_free(&sr[3]));
    MTEST_CHECK(sr[3] == MPI_REQUEST_NULL, "MPI_Request_free did not null the handle");

    /* Waitsome over sends, nulls and receives: every index reported once */
    {
        MPI_Request all[2 * NMSG];
        int seen[2 * NMSG] = {0}, left = 0, done = 0;
        for (int i = 0; i < NMSG; i++) {
            all[i] = sr[i];
            all[NMSG + i] = rr[i];
        }
        for (int i = 0; i < 2 * NMSG; i++)
            left += all[i] != MPI_REQUEST_NULL;
        while (done < left) {
            MTEST_CALL(MPI_Waitsome(2 * NMSG, all, &outcount, indices, sts));
            MTEST_CHECK(outcount > 0 && outcount != MPI_UNDEFINED, "Waitsome outcount %d",
                        outcount);
            for (int k = 0; k < outcount; k++) {
                int j = indices[k];
                MTEST_CHECK(j >= 0 && j < 2 * NMSG && !seen[j], "index %d reported twice", j);
                seen[j] = 1;
                MTEST_CHECK(all[j] == MPI_REQUEST_NULL, "entry %d not nulled", j);
                if (j >= NMSG) {
                    int i = j - NMSG;
                    MTEST_STATUS(&sts[k], partner, i, MPI_INT, 1);
                }
            }
            done += outcount;
        }
        MTEST_CALL(MPI_Waitsome(2 * NMSG, all, &outcount, indices, sts));
        MTEST_EQ("Waitsome outcount with only null handles", MPI_UNDEFINED, outcount);
    }
    for (int i = 0; i < NMSG; i++)
        MTEST_EQ("payload", partner * 100 + i, in[i]);

    /* 2. Testany and Waitall over arrays with several sends (every receive is posted
     * before the sends are waited for: no reliance on buffering) */
    {
        MPI_Request a[4], late[3];
        int v[4] = {rank, rank + 1, rank + 2, rank + 3}, w[4] = {-1, -1, -1, -1};
        MTEST_CALL(MPI_Irecv(&w[1], 1, MPI_INT, partner, 51, MPI_COMM_WORLD, &late[0]));
        MTEST_CALL(MPI_Irecv(&w[2], 1, MPI_INT, partner, 52, MPI_COMM_WORLD, &late[1]));
        MTEST_CALL(MPI_Irecv(&w[3], 1, MPI_INT, partner, 53, MPI_COMM_WORLD, &late[2]));
        MTEST_CALL(MPI_Irecv(&w[0], 1, MPI_INT, partner, 50, MPI_COMM_WORLD, &a[0]));
        MTEST_CALL(MPI_Isend(&v[0], 1, MPI_INT, partner, 50, MPI_COMM_WORLD, &a[1]));
        MTEST_CALL(MPI_Isend(&v[1], 1, MPI_INT, partner, 51, MPI_COMM_WORLD, &a[2]));
        a[3] = MPI_REQUEST_NULL;
        int got = 0, seen[4] = {0};
        while (got < 3) {
            MTEST_CALL(MPI_Testany(4, a, &idx, &flag, &st));
            if (flag && idx != MPI_UNDEFINED) {
                MTEST_CHECK(idx >= 0 && idx < 3 && !seen[idx], "Testany index %d", idx);
                seen[idx] = 1;
                MTEST_CHECK(a[idx] == MPI_REQUEST_NULL, "Testany did not null entry %d", idx);
                if (idx == 0)
                    MTEST_STATUS(&st, partner, 50, MPI_INT, 1);
                got++;
            }
        }
        MTEST_CALL(MPI_Testany(4, a, &idx, &flag, &st));
        MTEST_EQ("Testany on null handles: flag", 1, flag != 0);
        MTEST_EQ("Testany on null handles: index", MPI_UNDEFINED, idx);
        MTEST_EQ("Testany payload", partner, w[0]);
        a[0] = late[0];
        MTEST_CALL(MPI_Isend(&v[2], 1, MPI_INT, partner, 52, MPI_COMM_WORLD, &a[1]));
        MTEST_CALL(MPI_Isend(&v[3], 1, MPI_INT, partner, 53, MPI_COMM_WORLD, &a[2]));
        MTEST_CALL(MPI_Waitall(4, a, sts));
        for (int i = 0; i < 4; i++)
            MTEST_CHECK(a[i] == MPI_REQUEST_NULL, "Waitall did not null entry %d", i);
        MTEST_STATUS(&sts[0], partner, 51, MPI_INT, 1);
        MTEST_CALL(MPI_Waitall(2, &late[1], sts));
        MTEST_STATUS(&sts[0], partner, 52, MPI_INT, 1);
        MTEST_STATUS(&sts[1], partner, 53, MPI_INT, 1);
        for (int i = 1; i < 4; i++)
            MTEST_EQ("Waitall payload", partner + i, w[i]);
    }

    /* 3. ready mode, with the receive known to be posted (the barrier orders it) */
    {
        int v = rank + 3, x = -1;
        MPI_Request r, s;
        MTEST_CALL(MPI_Irecv(&x, 1, MPI_INT, partner, 70, MPI_COMM_WORLD, &r));
        mtest_barrier();
        MTEST_CALL(MPI_Irsend(&v, 1, MPI_INT, partner, 70, MPI_COMM_WORLD, &s));
        MTEST_CHECK(s != MPI_REQUEST_NULL, "MPI_Irsend returned MPI_REQUEST_NULL");
        MTEST_CALL(MPI_Wait(&s, MPI_STATUS_IGNORE));
        MTEST_CALL(MPI_Wait(&r, &st));
        MTEST_STATUS(&st, partner, 70, MPI_INT, 1);
        MTEST_EQ("ready-mode payload", partner + 3, x);
    }

    /* 4. cancel a send whose message the partner has received: the cancel fails */
    {
        int v = rank + 7, x = -1, cancelled = -1;
        MPI_Request s;
        MTEST_CALL(MPI_Isend(&v, 1, MPI_INT, partner, 60, MPI_COMM_WORLD, &s));
        MTEST_CALL(MPI_Recv(&x, 1, MPI_INT, partner, 60, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        MTEST_EQ("cancel-phase payload", partner + 7, x);
        mtest_barrier();
        MTEST_CALL(MPI_Cancel(&s));
        MTEST_CALL(MPI_Wait(&s, &st));
        MTEST_CALL(MPI_Test_cancelled(&st, &cancelled));
        MTEST_EQ("MPI_Test_cancelled on a received send", 0, cancelled);
        MTEST_CHECK(s == MPI_REQUEST_NULL, "cancelled send not nulled by MPI_Wait");
    }
    return mtest_finalize();
}
