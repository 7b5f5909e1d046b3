/*
 * Random traffic: every sender (ranks >= 1; rank 0 itself at size 1) sends a deterministic
 * random sequence of messages to rank 0: sizes from 0 bytes to 1 MiB (most small, some
 * around eager limits, some large), tags 0..20, at most WINDOW outstanding at a time.
 * Rank 0 receives everything with MPI_ANY_SOURCE / MPI_ANY_TAG (alternating MPI_Recv and
 * MPI_Irecv + MPI_Wait), replays each sender's generator, and checks that each message is
 * that sender's next one: tag, size and every byte.  Seeded, so failures reproduce.
 */
#include "mtest.h"

#define MAXBYTES (1 << 20)
#define WINDOW 6

typedef struct {
    int bytes, tag;
} msgspec;

static msgspec next_spec(mtest_rng *r)
{
    msgspec m;
    uint64_t cls = mtest_rng_below(r, 100);
    if (cls < 55) {
        m.bytes = (int)mtest_rng_below(r, 1025); /* 0 .. 1 KiB */
    } else if (cls < 85) {
        m.bytes = 1024 + (int)mtest_rng_below(r, 64 * 1024); /* around eager thresholds */
    } else {
        m.bytes = (int)mtest_rng_below(r, MAXBYTES + 1); /* up to 1 MiB */
    }
    m.tag = (int)mtest_rng_below(r, 21);
    return m;
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int rank = mtest_rank(), size = mtest_size();
    int first = size > 1 ? 1 : 0;
    int nsenders = size - first;
    int M = 240 / nsenders > 30 ? 240 / nsenders : 30;

    MPI_Request sreq[WINDOW];
    unsigned char *sbuf[WINDOW];
    for (int w = 0; w < WINDOW; w++) {
        sreq[w] = MPI_REQUEST_NULL;
        sbuf[w] = NULL;
    }
    mtest_rng gen = mtest_rng_new((uint64_t)rank + 1);
    int sent = 0;
    int sender = rank >= first;

    if (rank != 0 && sender) {
        for (int i = 0; i < M; i++) {
            int w = i % WINDOW;
            MTEST_CALL(MPI_Wait(&sreq[w], MPI_STATUS_IGNORE));
            free(sbuf[w]);
            msgspec m = next_spec(&gen);
            sbuf[w] = mtest_malloc((size_t)m.bytes);
            mtest_fill(sbuf[w], (size_t)m.bytes, (uint64_t)rank * 100000 + (uint64_t)i);
            MTEST_CALL(MPI_Isend(sbuf[w], m.bytes, MPI_BYTE, 0, m.tag, MPI_COMM_WORLD, &sreq[w]));
        }
        MTEST_CALL(MPI_Waitall(WINDOW, sreq, MPI_STATUSES_IGNORE));
    } else if (rank == 0) {
        unsigned char *in = mtest_malloc(MAXBYTES);
        mtest_rng *replay = mtest_malloc(sizeof(mtest_rng) * (size_t)size);
        int *count = mtest_malloc(sizeof(int) * (size_t)size);
        for (int s = 0; s < size; s++) {
            replay[s] = mtest_rng_new((uint64_t)s + 1);
            count[s] = 0;
        }
        int total = M * nsenders;
        for (int k = 0; k < total; k++) {
            /* at size 1 rank 0 feeds itself, keeping up to WINDOW messages ahead */
            while (sender && sent < M && sent < k + WINDOW) {
                int w = sent % WINDOW;
                MTEST_CALL(MPI_Wait(&sreq[w], MPI_STATUS_IGNORE));
                free(sbuf[w]);
                msgspec m = next_spec(&gen);
                sbuf[w] = mtest_malloc((size_t)m.bytes);
                mtest_fill(sbuf[w], (size_t)m.bytes, (uint64_t)sent);
                MTEST_CALL(MPI_Isend(sbuf[w], m.bytes, MPI_BYTE, 0, m.tag, MPI_COMM_WORLD, &sreq[w]));
                sent++;
            }
            MPI_Status st;
            if (k % 2 == 0) {
                MTEST_CALL(MPI_Recv(in, MAXBYTES, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
            } else {
                MPI_Request r;
                MTEST_CALL(MPI_Irecv(in, MAXBYTES, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &r));
                MTEST_CALL(MPI_Wait(&r, &st));
            }
            int s = st.MPI_SOURCE;
            if (s < first || s >= size || count[s] >= M) {
                MTEST_ABORT("message from unexpected source %d", s);
            }
            int i = count[s]++;
            msgspec m = next_spec(&replay[s]);
            int n = -1;
            MTEST_CALL(MPI_Get_count(&st, MPI_BYTE, &n));
            if (n != m.bytes || st.MPI_TAG != m.tag) {
                MTEST_CHECK(0, "message %d from %d: expected %d bytes tag %d, got %d bytes tag %d", i, s,
                            m.bytes, m.tag, n, st.MPI_TAG);
                continue;
            }
            char what[80];
            snprintf(what, sizeof what, "message %d from rank %d (%d bytes)", i, s, n);
            mtest_verify(in, (size_t)n, (uint64_t)s * 100000 + (uint64_t)i, what);
        }
        MTEST_CALL(MPI_Waitall(WINDOW, sreq, MPI_STATUSES_IGNORE));
        free(in);
        free(replay);
        free(count);
    }
    for (int w = 0; w < WINDOW; w++) {
        free(sbuf[w]);
    }
    return mtest_finalize();
}
