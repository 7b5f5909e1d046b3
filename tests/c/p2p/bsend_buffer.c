/*
 * Buffered mode accounting.  A buffer of exactly sum(MPI_Pack_size(n_i) + MPI_BSEND_OVERHEAD)
 * holds all of a set of messages at once, with nothing received yet (the standard's sizing
 * rule); the user buffers are overwritten right after each MPI_Bsend / MPI_Ibsend;
 * MPI_Buffer_detach waits until the messages are delivered and returns the attached address
 * and size (after it returns the buffer is scribbled over: the receiver must still get the
 * right data); the buffer can be attached again.  (A message larger than the attached buffer
 * is checked in p2p/badargs_strict: Open MPI 4.1 breaks the connection after that error.)
 * Rank 2k sends to 2k+1; a lone last rank sends to itself.
 */
#include "mtest.h"

static const int sizes[] = {0, 10, 1000, 40000, 100, 200000, 3, 65536};
#define NMSG ((int)(sizeof sizes / sizeof sizes[0]))
#define TAG_GO 99

static int buffer_size_for_all(void)
{
    int total = 0;
    for (int i = 0; i < NMSG; i++) {
        int ps = 0;
        MTEST_CALL(MPI_Pack_size(sizes[i], MPI_BYTE, MPI_COMM_WORLD, &ps));
        total += ps + MPI_BSEND_OVERHEAD;
    }
    return total;
}

/* Round 2 frees its MPI_Ibsend requests: the program cannot know when each send buffer may be
 * reused, so every message has its own buffer, kept until the attached buffer is detached. */
static unsigned char *kept[NMSG];

static void free_kept(void)
{
    for (int i = 0; i < NMSG; i++) {
        free(kept[i]);
        kept[i] = NULL;
    }
}

/* round: 0 = MPI_Bsend, 1 = MPI_Ibsend + MPI_Wait, 2 = MPI_Ibsend + MPI_Request_free */
static void sender(int dest, int round, char *bbuf, int bsize)
{
    unsigned char *msg = mtest_malloc((size_t)sizes[NMSG - 1] + 200000);
    MPI_Request reqs[NMSG];
    MTEST_CALL(MPI_Buffer_attach(bbuf, bsize));
    for (int i = 0; i < NMSG; i++) {
        if (round == 2) {
            kept[i] = mtest_malloc((size_t)sizes[i]);
            mtest_fill(kept[i], (size_t)sizes[i], (uint64_t)(round * 100 + i));
            MTEST_CALL(MPI_Ibsend(kept[i], sizes[i], MPI_BYTE, dest, i, MPI_COMM_WORLD, &reqs[i]));
            MTEST_CALL(MPI_Request_free(&reqs[i]));
            MTEST_CHECK(reqs[i] == MPI_REQUEST_NULL, "MPI_Request_free did not null the handle");
            continue;
        }
        mtest_fill(msg, (size_t)sizes[i], (uint64_t)(round * 100 + i));
        if (round == 0) {
            MTEST_CALL(MPI_Bsend(msg, sizes[i], MPI_BYTE, dest, i, MPI_COMM_WORLD));
        } else {
            MTEST_CALL(MPI_Ibsend(msg, sizes[i], MPI_BYTE, dest, i, MPI_COMM_WORLD, &reqs[i]));
            /* an Ibsend completes locally: once waited for, the buffer may be reused */
            MTEST_CALL(MPI_Wait(&reqs[i], MPI_STATUS_IGNORE));
        }
        memset(msg, 0xA5, (size_t)sizes[i]); /* the data now lives in the attached buffer */
    }
    /* only now may the receiver start receiving */
    int go = round;
    if (dest != mtest_rank()) {
        MTEST_CALL(MPI_Send(&go, 1, MPI_INT, dest, TAG_GO, MPI_COMM_WORLD));
    }
    void *addr = NULL;
    int dsize = -1;
    if (dest == mtest_rank()) {
        free(msg);
        return; /* self: the caller receives first, then detaches */
    }
    MTEST_CALL(MPI_Buffer_detach(&addr, &dsize));
    MTEST_CHECK(addr == bbuf, "MPI_Buffer_detach returned %p, attached %p", addr, (void *)bbuf);
    MTEST_EQ("MPI_Buffer_detach size", bsize, dsize);
    /* every message has left the buffer: overwriting it must not affect what is received */
    memset(bbuf, 0xEE, (size_t)bsize);
    free(msg);
    free_kept();
}

static void receiver(int src, int round)
{
    unsigned char *in = mtest_malloc((size_t)sizes[NMSG - 1] + 200000);
    MPI_Status st;
    if (src != mtest_rank()) {
        int go = -1;
        MTEST_CALL(MPI_Recv(&go, 1, MPI_INT, src, TAG_GO, MPI_COMM_WORLD, &st));
        MTEST_EQ("go message", round, go);
    }
    for (int i = 0; i < NMSG; i++) {
        MTEST_CALL(MPI_Recv(in, sizes[i], MPI_BYTE, src, i, MPI_COMM_WORLD, &st));
        MTEST_STATUS(&st, src, i, MPI_BYTE, sizes[i]);
        char what[64];
        snprintf(what, sizeof what, "round %d buffered message %d (%d bytes)", round, i, sizes[i]);
        mtest_verify(in, (size_t)sizes[i], (uint64_t)(round * 100 + i), what);
    }
    free(in);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int rank = mtest_rank(), size = mtest_size();
    int partner = (rank ^ 1) < size ? (rank ^ 1) : rank;
    int bsize = buffer_size_for_all();
    char *bbuf = mtest_malloc((size_t)bsize);

    for (int round = 0; round < 3; round++) {
        if (partner == rank) {
            sender(rank, round, bbuf, bsize);
            receiver(rank, round);
            void *addr = NULL;
            int dsize = -1;
            MTEST_CALL(MPI_Buffer_detach(&addr, &dsize));
            MTEST_CHECK(addr == bbuf, "MPI_Buffer_detach returned %p, attached %p", addr, (void *)bbuf);
            MTEST_EQ("MPI_Buffer_detach size", bsize, dsize);
            free_kept();
        } else if (rank % 2 == 0) {
            sender(partner, round, bbuf, bsize);
        } else {
            receiver(partner, round);
        }
    }

    free(bbuf);
    return mtest_finalize();
}
