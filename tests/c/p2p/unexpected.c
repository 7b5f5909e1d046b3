/*
 * Thousands of unexpected messages.  Every sender (ranks >= 1; rank 0 itself at size 1)
 * starts K messages to rank 0 (K = 5000 at size 1 and 2, at least 1000 per sender above)
 * before rank 0 posts a single receive for them; rank 0 learns they were all sent from a
 * "done" message, then receives them: from each sender in turn with a specific source,
 * then with MPI_ANY_SOURCE, checking per-source order and contents.  Every 500th message is
 * 100 KB (an unexpected rendezvous message).  Round A uses MPI_Isend, round B MPI_Bsend
 * (with a buffer sized for all of them), so no round relies on the library buffering
 * standard-mode sends.
 */
#include "mtest.h"

#define TAG_DATA 1
#define TAG_DONE 2
#define BIGBYTES 100000

static int is_big(int i)
{
    return i % 500 == 499;
}

static int msg_bytes(int i)
{
    return is_big(i) ? BIGBYTES : 2 * (int)sizeof(int);
}

static void fill_msg(int *buf, int src, int round, int i)
{
    buf[0] = src;
    buf[1] = round * 1000000 + i;
    if (is_big(i)) {
        mtest_fill(buf + 2, BIGBYTES - 2 * sizeof(int), (uint64_t)(src * 7 + i));
    }
}

static void check_msg(const int *buf, const MPI_Status *st, int src, int round, int i)
{
    if (buf[0] != src || buf[1] != round * 1000000 + i) {
        MTEST_CHECK(0, "round %d from %d: expected message %d, got (%d, %d)", round, src, i, buf[0],
                    buf[1] - round * 1000000);
        return;
    }
    int n = -1;
    MTEST_CALL(MPI_Get_count(st, MPI_BYTE, &n));
    MTEST_EQ("size of an unexpected message", msg_bytes(i), n);
    if (is_big(i)) {
        mtest_verify(buf + 2, BIGBYTES - 2 * sizeof(int), (uint64_t)(src * 7 + i), "large unexpected message");
    }
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int rank = mtest_rank(), size = mtest_size();
    int nsend = size > 1 ? size - 1 : 1;
    int K = size <= 2 ? 5000 : (5000 / nsend > 1000 ? 5000 / nsend : 1000);
    int first = size > 1 ? 1 : 0;
    int am_sender = rank >= first;

    /* buffer for round B: every message of this sender at once */
    int bsize = 0;
    if (am_sender) {
        int small = 0, big = 0;
        MTEST_CALL(MPI_Pack_size(2 * (int)sizeof(int), MPI_BYTE, MPI_COMM_WORLD, &small));
        MTEST_CALL(MPI_Pack_size(BIGBYTES, MPI_BYTE, MPI_COMM_WORLD, &big));
        for (int i = 0; i < K; i++) {
            bsize += (is_big(i) ? big : small) + MPI_BSEND_OVERHEAD;
        }
    }
    char *bbuf = am_sender ? mtest_malloc((size_t)bsize) : NULL;
    int *in = mtest_malloc(BIGBYTES);

    for (int round = 0; round < 2; round++) {
        MPI_Request *reqs = NULL;
        int **bufs = NULL;
        if (am_sender) {
            reqs = mtest_malloc(sizeof(MPI_Request) * (size_t)K);
            bufs = mtest_malloc(sizeof(int *) * (size_t)K);
            if (round == 1) {
                MTEST_CALL(MPI_Buffer_attach(bbuf, bsize));
            }
            int *tmp = mtest_malloc(BIGBYTES);
            for (int i = 0; i < K; i++) {
                if (round == 0) {
                    bufs[i] = mtest_malloc((size_t)msg_bytes(i));
                    fill_msg(bufs[i], rank, round, i);
                    MTEST_CALL(MPI_Isend(bufs[i], msg_bytes(i), MPI_BYTE, 0, TAG_DATA, MPI_COMM_WORLD, &reqs[i]));
                } else {
                    fill_msg(tmp, rank, round, i);
                    MTEST_CALL(MPI_Bsend(tmp, msg_bytes(i), MPI_BYTE, 0, TAG_DATA, MPI_COMM_WORLD));
                }
            }
            free(tmp);
            if (rank != 0) {
                int done = K;
                MTEST_CALL(MPI_Send(&done, 1, MPI_INT, 0, TAG_DONE, MPI_COMM_WORLD));
            }
        }
        if (rank == 0) {
            /* all messages are sent (possibly still in flight) before any receive is posted */
            for (int s = 1; s < size; s++) {
                int done = -1;
                MTEST_CALL(MPI_Recv(&done, 1, MPI_INT, s, TAG_DONE, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
                MTEST_EQ("message count announced by a sender", K, done);
            }
            int *next = mtest_malloc(sizeof(int) * (size_t)size);
            for (int s = 0; s < size; s++) {
                next[s] = 0;
            }
            MPI_Status st;
            /* first half of each sender's messages with a specific source */
            for (int s = first; s < size; s++) {
                for (; next[s] < K / 2; next[s]++) {
                    MTEST_CALL(MPI_Recv(in, BIGBYTES, MPI_BYTE, s, TAG_DATA, MPI_COMM_WORLD, &st));
                    MTEST_EQ("status.MPI_SOURCE", s, st.MPI_SOURCE);
                    check_msg(in, &st, s, round, next[s]);
                }
            }
            /* the rest with MPI_ANY_SOURCE: per-source order must hold */
            int left = (K - K / 2) * (size - first);
            for (int k = 0; k < left; k++) {
                MTEST_CALL(MPI_Recv(in, BIGBYTES, MPI_BYTE, MPI_ANY_SOURCE, TAG_DATA, MPI_COMM_WORLD, &st));
                int s = st.MPI_SOURCE;
                if (s < first || s >= size || next[s] >= K) {
                    MTEST_ABORT("round %d: unexpected message from source %d", round, s);
                }
                check_msg(in, &st, s, round, next[s]);
                next[s]++;
            }
            free(next);
        }
        if (am_sender) {
            if (round == 0) {
                MTEST_CALL(MPI_Waitall(K, reqs, MPI_STATUSES_IGNORE));
                for (int i = 0; i < K; i++) {
                    free(bufs[i]);
                }
            } else {
                void *addr;
                int dsize;
                MTEST_CALL(MPI_Buffer_detach(&addr, &dsize));
                MTEST_CHECK(addr == bbuf && dsize == bsize, "MPI_Buffer_detach returned %p/%d", addr, dsize);
            }
            free(reqs);
            free(bufs);
        }
        mtest_barrier();
    }
    free(bbuf);
    free(in);
    return mtest_finalize();
}
