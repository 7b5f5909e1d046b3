/* Matching of partitioned requests (MPI 4.1 section 4.2.2): by source, tag and communicator,
 * in the order the requests are first started, on a ring of ranks.  Two sends with the same
 * tag (A then B, told apart by their data) match the two receives with that tag in their
 * start order; a receive for tag 2 started before the receive for tag 1, while the sender
 * started tag 1 first, still gets the right data (the setup for tag 1 waits meanwhile); a
 * send and receive on a duplicate communicator with the same tag do not mix with those on
 * MPI_COMM_WORLD; ordinary point-to-point messages with the same tags on the same
 * communicators are not disturbed.  Every match is kept over three starts. */
#include "mtest.h"

#define N 24

static void fill(int *b, int who, int round)
{
    for (int k = 0; k < N; k++) {
        b[k] = who * 1000 + round * 100 + k;
    }
}

static void check(const int *b, int who, int round, const char *what)
{
    for (int k = 0; k < N; k++) {
        if (b[k] != who * 1000 + round * 100 + k) {
            MTEST_CHECK(0, "%s, round %d, element %d: expected %d got %d", what, round, k,
                        who * 1000 + round * 100 + k, b[k]);
            return;
        }
    }
}

int main(int argc, char **argv)
{
    int rank, size;
    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int to = (rank + 1) % size, from = (rank + size - 1) % size;
    MPI_Comm dup;
    MTEST_CALL(MPI_Comm_dup(MPI_COMM_WORLD, &dup));

    int sa[N], sb[N], s1[N], s2[N], sd[N], ra[N], rb[N], r1[N], r2[N], rd[N];
    int p2p_out = 0, p2p_in = -1;
    MPI_Request send[5], recv[5];
    MTEST_CALL(MPI_Psend_init(sa, 4, N / 4, MPI_INT, to, 5, MPI_COMM_WORLD, MPI_INFO_NULL, &send[0]));
    MTEST_CALL(MPI_Psend_init(sb, 3, N / 3, MPI_INT, to, 5, MPI_COMM_WORLD, MPI_INFO_NULL, &send[1]));
    MTEST_CALL(MPI_Psend_init(s1, 2, N / 2, MPI_INT, to, 1, MPI_COMM_WORLD, MPI_INFO_NULL, &send[2]));
    MTEST_CALL(MPI_Psend_init(s2, 6, N / 6, MPI_INT, to, 2, MPI_COMM_WORLD, MPI_INFO_NULL, &send[3]));
    MTEST_CALL(MPI_Psend_init(sd, 1, N, MPI_INT, to, 5, dup, MPI_INFO_NULL, &send[4]));
    /* Receives: A, B (tag 5 in start order), tag 2 before tag 1, the duplicate's. */
    MTEST_CALL(MPI_Precv_init(ra, 2, N / 2, MPI_INT, from, 5, MPI_COMM_WORLD, MPI_INFO_NULL, &recv[0]));
    MTEST_CALL(MPI_Precv_init(rb, 8, N / 8, MPI_INT, from, 5, MPI_COMM_WORLD, MPI_INFO_NULL, &recv[1]));
    MTEST_CALL(MPI_Precv_init(r2, 1, N, MPI_INT, from, 2, MPI_COMM_WORLD, MPI_INFO_NULL, &recv[2]));
    MTEST_CALL(MPI_Precv_init(r1, 3, N / 3, MPI_INT, from, 1, MPI_COMM_WORLD, MPI_INFO_NULL, &recv[3]));
    MTEST_CALL(MPI_Precv_init(rd, 4, N / 4, MPI_INT, from, 5, dup, MPI_INFO_NULL, &recv[4]));
    for (int round = 0; round < 3; round++) {
        fill(sa, 10 * rank + 1, round);
        fill(sb, 10 * rank + 2, round);
        fill(s1, 10 * rank + 3, round);
        fill(s2, 10 * rank + 4, round);
        fill(sd, 10 * rank + 5, round);
        MPI_Request p2p[2];
        MTEST_CALL(MPI_Irecv(&p2p_in, 1, MPI_INT, from, 5, MPI_COMM_WORLD, &p2p[0]));
        /* The duplicate's receive first, then the world's in their order. */
        MTEST_CALL(MPI_Start(&recv[4]));
        MTEST_CALL(MPI_Start(&recv[2]));
        MTEST_CALL(MPI_Startall(2, recv));
        MTEST_CALL(MPI_Start(&recv[3]));
        p2p_out = rank * 7 + round;
        MTEST_CALL(MPI_Isend(&p2p_out, 1, MPI_INT, to, 5, MPI_COMM_WORLD, &p2p[1]));
        /* Sends: A, B, tag 1, tag 2, the duplicate's; readied from the last request. */
        MTEST_CALL(MPI_Startall(5, send));
        for (int i = 4; i >= 0; i--) {
            int n = i == 0 ? 4 : i == 1 ? 3 : i == 2 ? 2 : i == 3 ? 6 : 1;
            MTEST_CALL(MPI_Pready_range(0, n - 1, send[i]));
        }
        MPI_Status st[5];
        MTEST_CALL(MPI_Waitall(5, recv, st));
        MTEST_CALL(MPI_Waitall(5, send, MPI_STATUSES_IGNORE));
        MTEST_CALL(MPI_Waitall(2, p2p, MPI_STATUSES_IGNORE));
        check(ra, 10 * from + 1, round, "first tag-5 receive (send A)");
        check(rb, 10 * from + 2, round, "second tag-5 receive (send B)");
        check(r1, 10 * from + 3, round, "tag-1 receive");
        check(r2, 10 * from + 4, round, "tag-2 receive");
        check(rd, 10 * from + 5, round, "receive on the duplicate");
        MTEST_EQ("point-to-point message with tag 5", from * 7 + round, p2p_in);
        MTEST_STATUS(&st[2], from, 2, MPI_INT, N);
        MTEST_STATUS(&st[3], from, 1, MPI_INT, N);
    }
    for (int i = 0; i < 5; i++) {
        MTEST_CALL(MPI_Request_free(&send[i]));
        MTEST_CALL(MPI_Request_free(&recv[i]));
    }
    MTEST_CALL(MPI_Comm_free(&dup));
    return mtest_finalize();
}
