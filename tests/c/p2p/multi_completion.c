/*
 * MPI_Waitany, MPI_Testany, MPI_Waitall, MPI_Testall, MPI_Waitsome, MPI_Testsome with
 * MPI_REQUEST_NULL and inactive persistent requests mixed in, with count 0, and with every
 * entry null (index / outcount MPI_UNDEFINED, empty statuses).  The completion order is
 * controlled: the client (rank 2k) asks the server (rank 2k+1) for one message at a time,
 * so exactly the expected request can complete.  A lone last rank serves itself with
 * MPI_Isend to self.
 */
#include "mtest.h"

#define TAG_CTRL 1000
static int server = -1, self_mode = 0;
static MPI_Request self_sends[256];
static int self_vals[256], nself = 0;

static int value_for(int tag)
{
    return tag * 7 + 1;
}

/* Make the message with tag `tag` (and value value_for(tag)) arrive at the client. */
static void ask(int tag)
{
    if (self_mode) {
        self_vals[nself] = value_for(tag);
        MTEST_CALL(MPI_Isend(&self_vals[nself], 1, MPI_INT, mtest_rank(), tag, MPI_COMM_WORLD,
                             &self_sends[nself]));
        nself++;
    } else {
        MTEST_CALL(MPI_Send(&tag, 1, MPI_INT, server, TAG_CTRL, MPI_COMM_WORLD));
    }
}

static void serve(int client)
{
    for (;;) {
        int tag = -1;
        MTEST_CALL(MPI_Recv(&tag, 1, MPI_INT, client, TAG_CTRL, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        if (tag < 0) {
            return;
        }
        int v = value_for(tag);
        MTEST_CALL(MPI_Send(&v, 1, MPI_INT, client, tag, MPI_COMM_WORLD));
    }
}

static void check_all_null(MPI_Request *reqs, int n, const char *what)
{
    MPI_Status st, sts[8];
    int idx = -7, flag = -7, outcount = -7, indices[8];
    MTEST_CHECK(n <= 8, "too many");
    MTEST_CALL(MPI_Waitany(n, reqs, &idx, &st));
    MTEST_CHECK(idx == MPI_UNDEFINED, "%s: MPI_Waitany index %d, expected MPI_UNDEFINED", what, idx);
    MTEST_EMPTY_STATUS(&st);
    MTEST_CALL(MPI_Testany(n, reqs, &idx, &flag, &st));
    MTEST_CHECK(flag && idx == MPI_UNDEFINED, "%s: MPI_Testany flag %d index %d", what, flag, idx);
    MTEST_EMPTY_STATUS(&st);
    MTEST_CALL(MPI_Waitsome(n, reqs, &outcount, indices, sts));
    MTEST_CHECK(outcount == MPI_UNDEFINED, "%s: MPI_Waitsome outcount %d", what, outcount);
    outcount = -7;
    MTEST_CALL(MPI_Testsome(n, reqs, &outcount, indices, sts));
    MTEST_CHECK(outcount == MPI_UNDEFINED, "%s: MPI_Testsome outcount %d", what, outcount);
    for (int i = 0; i < n; i++) {
        sts[i].MPI_SOURCE = sts[i].MPI_TAG = 4242;
    }
    MTEST_CALL(MPI_Waitall(n, reqs, sts));
    for (int i = 0; i < n; i++) {
        MTEST_EMPTY_STATUS(&sts[i]);
    }
    for (int i = 0; i < n; i++) {
        sts[i].MPI_SOURCE = sts[i].MPI_TAG = 4242;
    }
    flag = 0;
    MTEST_CALL(MPI_Testall(n, reqs, &flag, sts));
    MTEST_CHECK(flag, "%s: MPI_Testall flag false", what);
    for (int i = 0; i < n; i++) {
        MTEST_EMPTY_STATUS(&sts[i]);
    }
    MTEST_CALL(MPI_Waitall(n, reqs, MPI_STATUSES_IGNORE));
    MTEST_CALL(MPI_Waitany(n, reqs, &idx, MPI_STATUS_IGNORE));
    MTEST_CALL(MPI_Testall(n, reqs, &flag, MPI_STATUSES_IGNORE));
}

static void client(void)
{
    int me = mtest_rank();
    int src = self_mode ? me : server;
    MPI_Request reqs[8];
    MPI_Status st, sts[8];
    int vals[8], idx, flag, outcount, indices[8];

    /* A. everything null, and count 0 */
    for (int i = 0; i < 8; i++) {
        reqs[i] = MPI_REQUEST_NULL;
    }
    check_all_null(reqs, 6, "six null requests");
    check_all_null(reqs, 0, "count 0");

    /* B. [null, R10, null, R11, R12, null]: one completion at a time */
    const int tagB[6] = {-1, 10, -1, 11, 12, -1};
    for (int i = 0; i < 6; i++) {
        vals[i] = -1;
        reqs[i] = MPI_REQUEST_NULL;
        if (tagB[i] >= 0) {
            MTEST_CALL(MPI_Irecv(&vals[i], 1, MPI_INT, src, tagB[i], MPI_COMM_WORLD, &reqs[i]));
        }
    }
    ask(11);
    MTEST_CALL(MPI_Waitany(6, reqs, &idx, &st));
    MTEST_EQ("MPI_Waitany index", 3, idx);
    MTEST_STATUS(&st, src, 11, MPI_INT, 1);
    MTEST_EQ("value received by MPI_Waitany", value_for(11), vals[3]);
    MTEST_CHECK(reqs[3] == MPI_REQUEST_NULL, "MPI_Waitany did not null the completed request");
    ask(12);
    flag = 0;
    while (!flag) {
        MTEST_CALL(MPI_Testany(6, reqs, &idx, &flag, &st));
    }
    MTEST_EQ("MPI_Testany index", 4, idx);
    MTEST_STATUS(&st, src, 12, MPI_INT, 1);
    MTEST_CHECK(reqs[4] == MPI_REQUEST_NULL, "MPI_Testany did not null the completed request");
    /* R10 is active and cannot complete: Testany says flag false, index MPI_UNDEFINED */
    for (int k = 0; k < 5; k++) {
        idx = -7;
        flag = -7;
        MTEST_CALL(MPI_Testany(6, reqs, &idx, &flag, &st));
        MTEST_CHECK(!flag && idx == MPI_UNDEFINED, "MPI_Testany with nothing complete: flag %d index %d",
                    flag, idx);
        outcount = -7;
        MTEST_CALL(MPI_Testsome(6, reqs, &outcount, indices, sts));
        MTEST_EQ("MPI_Testsome outcount with nothing complete", 0, outcount);
    }
    MTEST_CHECK(reqs[1] != MPI_REQUEST_NULL, "an incomplete request was nulled");
    ask(10);
    MTEST_CALL(MPI_Waitsome(6, reqs, &outcount, indices, sts));
    MTEST_EQ("MPI_Waitsome outcount", 1, outcount);
    MTEST_EQ("MPI_Waitsome indices[0]", 1, indices[0]);
    MTEST_STATUS(&sts[0], src, 10, MPI_INT, 1);
    MTEST_EQ("value received by MPI_Waitsome", value_for(10), vals[1]);
    check_all_null(reqs, 6, "after B");

    /* C. MPI_Testall stays false (and leaves the requests alone) until all are complete */
    for (int i = 0; i < 3; i++) {
        vals[i] = -1;
        MTEST_CALL(MPI_Irecv(&vals[i], 1, MPI_INT, src, 20 + i, MPI_COMM_WORLD, &reqs[i]));
    }
    flag = -7;
    MTEST_CALL(MPI_Testall(3, reqs, &flag, sts));
    MTEST_EQ("MPI_Testall flag with nothing sent", 0, flag);
    ask(20);
    ask(21);
    for (int k = 0; k < 20; k++) {
        MTEST_CALL(MPI_Testall(3, reqs, &flag, sts));
        MTEST_EQ("MPI_Testall flag with one request incomplete", 0, flag);
    }
    for (int i = 0; i < 3; i++) {
        MTEST_CHECK(reqs[i] != MPI_REQUEST_NULL, "MPI_Testall returning false nulled request %d", i);
    }
    ask(22);
    flag = 0;
    while (!flag) {
        MTEST_CALL(MPI_Testall(3, reqs, &flag, sts));
    }
    for (int i = 0; i < 3; i++) {
        MTEST_STATUS(&sts[i], src, 20 + i, MPI_INT, 1);
        MTEST_EQ("value received by MPI_Testall", value_for(20 + i), vals[i]);
        MTEST_CHECK(reqs[i] == MPI_REQUEST_NULL, "MPI_Testall did not null request %d", i);
    }

    /* D. MPI_Waitall with a null entry: its status is empty */
    for (int i = 0; i < 5; i++) {
        vals[i] = -1;
        reqs[i] = MPI_REQUEST_NULL;
        if (i != 2) {
            MTEST_CALL(MPI_Irecv(&vals[i], 1, MPI_INT, src, 30 + i, MPI_COMM_WORLD, &reqs[i]));
        }
    }
    for (int i = 4; i >= 0; i--) {
        if (i != 2) {
            ask(30 + i);
        }
    }
    MTEST_CALL(MPI_Waitall(5, reqs, sts));
    for (int i = 0; i < 5; i++) {
        if (i == 2) {
            MTEST_EMPTY_STATUS(&sts[i]);
        } else {
            MTEST_STATUS(&sts[i], src, 30 + i, MPI_INT, 1);
            MTEST_EQ("value received by MPI_Waitall", value_for(30 + i), vals[i]);
        }
        MTEST_CHECK(reqs[i] == MPI_REQUEST_NULL, "MPI_Waitall did not null request %d", i);
    }

    /* E. MPI_Waitsome / MPI_Testsome until everything is collected, each index exactly once */
    for (int pass = 0; pass < 2; pass++) {
        int seen[6] = {0}, got = 0;
        for (int i = 0; i < 6; i++) {
            vals[i] = -1;
            MTEST_CALL(MPI_Irecv(&vals[i], 1, MPI_INT, src, 40 + i, MPI_COMM_WORLD, &reqs[i]));
        }
        for (int i = 0; i < 6; i++) {
            ask(40 + (i * 5) % 6);
        }
        for (;;) {
            if (pass == 0) {
                MTEST_CALL(MPI_Waitsome(6, reqs, &outcount, indices, sts));
            } else {
                MTEST_CALL(MPI_Testsome(6, reqs, &outcount, indices, MPI_STATUSES_IGNORE));
            }
            if (outcount == MPI_UNDEFINED) {
                break;
            }
            MTEST_CHECK(outcount >= 0 && outcount <= 6, "MPI_%ssome outcount %d", pass ? "Test" : "Wait",
                        outcount);
            if (outcount < 0 || outcount > 6) {
                break;
            }
            for (int k = 0; k < outcount; k++) {
                int j = indices[k];
                MTEST_CHECK(j >= 0 && j < 6 && !seen[j], "MPI_%ssome index %d repeated or out of range",
                            pass ? "Test" : "Wait", j);
                if (j >= 0 && j < 6) {
                    seen[j]++;
                    got++;
                    MTEST_EQ("value received by MPI_Waitsome/Testsome", value_for(40 + j), vals[j]);
                    if (pass == 0) {
                        MTEST_STATUS(&sts[k], src, 40 + j, MPI_INT, 1);
                    }
                }
            }
        }
        MTEST_EQ("requests completed by MPI_Waitsome/Testsome", 6, got);
    }

    /* F. inactive persistent requests count as null; a completed persistent request stays
     * allocated and inactive */
    {
        MPI_Request pr[3] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL};
        int pv = -1;
        MTEST_CALL(MPI_Recv_init(&pv, 1, MPI_INT, src, 50, MPI_COMM_WORLD, &pr[1]));
        check_all_null(pr, 3, "null + inactive persistent");
        MTEST_CHECK(pr[1] != MPI_REQUEST_NULL, "an inactive persistent request was nulled");
        MTEST_CALL(MPI_Start(&pr[1]));
        ask(50);
        MTEST_CALL(MPI_Waitany(3, pr, &idx, &st));
        MTEST_EQ("MPI_Waitany index (persistent)", 1, idx);
        MTEST_STATUS(&st, src, 50, MPI_INT, 1);
        MTEST_EQ("value received by a persistent receive", value_for(50), pv);
        MTEST_CHECK(pr[1] != MPI_REQUEST_NULL, "a completed persistent request was nulled");
        check_all_null(pr, 3, "null + persistent after completion");
        MTEST_CALL(MPI_Request_free(&pr[1]));
        MTEST_CHECK(pr[1] == MPI_REQUEST_NULL, "MPI_Request_free did not null a persistent request");
    }

    if (self_mode) {
        MTEST_CALL(MPI_Waitall(nself, self_sends, MPI_STATUSES_IGNORE));
    } else {
        int stop = -1;
        MTEST_CALL(MPI_Send(&stop, 1, MPI_INT, server, TAG_CTRL, MPI_COMM_WORLD));
    }
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int rank = mtest_rank(), size = mtest_size();
    int partner = (rank ^ 1) < size ? (rank ^ 1) : rank;
    if (partner == rank) {
        self_mode = 1;
        client();
    } else if (rank % 2 == 0) {
        server = partner;
        client();
    } else {
        serve(partner);
    }
    return mtest_finalize();
}
