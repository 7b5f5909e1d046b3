/*
 * Non-overtaking order with wildcards.
 * Phase 1 (one sender at a time, deterministic): rank 0 posts NMSG nonblocking receives
 * cycling through (source, tag), (ANY_SOURCE, ANY_TAG), (source, ANY_TAG) and
 * (ANY_SOURCE, tag); half before the sender starts, half after.  With one sender the
 * matching is fully determined by MPI's ordering rules (a message matches the earliest
 * posted matching receive; a receive the earliest matching message) whatever the timing, so
 * rank 0 computes which message each receive must get and checks it.  Some messages are
 * 80 KB so eager and rendezvous messages overtake nothing.
 * Phase 2 (all ranks send at once): rank 0 receives with blocking receives in the same four
 * envelope kinds; for each message, no earlier message from the same source that matched the
 * receive may still be unreceived.
 * At size 1 rank 0 is its own sender.
 */
#include "mtest.h"

#define NMSG 60
#define BIG 20000 /* ints */
#define TAG_GO 90
#define M2 40

static int mtag(int i)
{
    return (i * 5 + i / 7) % 4;
}

static int mcount(int i)
{
    return i % 10 == 3 ? BIG : 1 + i % 4;
}

/* Phase 1 plan: receive j's tag (or MPI_ANY_TAG) and the message it must get. */
static void plan(int *rtag, int *expect)
{
    int un[NMSG], nun = NMSG;
    for (int i = 0; i < NMSG; i++) {
        un[i] = i;
    }
    for (int j = 0; j < NMSG; j++) {
        int kind = j % 4;
        int t = (kind == 1 || kind == 2) ? MPI_ANY_TAG : mtag(un[(j * 7) % nun]);
        rtag[j] = t;
        for (int k = 0; k < nun; k++) {
            if (t == MPI_ANY_TAG || mtag(un[k]) == t) {
                expect[j] = un[k];
                memmove(&un[k], &un[k + 1], (size_t)(nun - k - 1) * sizeof(int));
                nun--;
                break;
            }
        }
    }
}

static void send_phase1(int dest, int *msgs[NMSG], MPI_Request *reqs)
{
    for (int i = 0; i < NMSG; i++) {
        MTEST_CALL(MPI_Isend(msgs[i], mcount(i), MPI_INT, dest, mtag(i), MPI_COMM_WORLD, &reqs[i]));
    }
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int rank = mtest_rank(), size = mtest_size();
    int *msgs[NMSG];
    MPI_Request sreqs[NMSG];
    for (int i = 0; i < NMSG; i++) {
        msgs[i] = mtest_malloc(sizeof(int) * (size_t)mcount(i));
        for (int k = 0; k < mcount(i); k++) {
            msgs[i][k] = rank * 1000000 + i * 1000 + k % 1000;
        }
    }

    /* ---- phase 1 ---- */
    if (rank == 0) {
        int rtag[NMSG], expect[NMSG];
        int *bufs[NMSG];
        MPI_Request rreqs[NMSG];
        MPI_Status sts[NMSG];
        plan(rtag, expect);
        for (int j = 0; j < NMSG; j++) {
            bufs[j] = mtest_malloc(sizeof(int) * BIG);
        }
        for (int s = (size > 1 ? 1 : 0); s < size; s++) {
            for (int j = 0; j < NMSG; j++) {
                int kind = j % 4;
                int src = (kind == 0 || kind == 2) ? s : MPI_ANY_SOURCE;
                bufs[j][0] = -1;
                MTEST_CALL(MPI_Irecv(bufs[j], BIG, MPI_INT, src, rtag[j], MPI_COMM_WORLD, &rreqs[j]));
                if (j == NMSG / 2) {
                    if (s == 0) {
                        send_phase1(0, msgs, sreqs);
                    } else {
                        int go = 1;
                        MTEST_CALL(MPI_Send(&go, 1, MPI_INT, s, TAG_GO, MPI_COMM_WORLD));
                    }
                }
            }
            MTEST_CALL(MPI_Waitall(NMSG, rreqs, sts));
            for (int j = 0; j < NMSG; j++) {
                int i = expect[j];
                int got = bufs[j][0] - s * 1000000;
                if (got != i * 1000) {
                    MTEST_CHECK(0, "phase 1 sender %d: receive %d (tag %d) got message %d, expected %d", s,
                                j, rtag[j], got / 1000, i);
                    continue;
                }
                MTEST_STATUS(&sts[j], s, mtag(i), MPI_INT, mcount(i));
                if (mcount(i) == BIG) {
                    MTEST_EQ("last element of a large message", s * 1000000 + i * 1000 + (BIG - 1) % 1000,
                             bufs[j][BIG - 1]);
                }
            }
            if (s == 0) {
                MTEST_CALL(MPI_Waitall(NMSG, sreqs, MPI_STATUSES_IGNORE));
            }
        }
        for (int j = 0; j < NMSG; j++) {
            free(bufs[j]);
        }
    } else {
        int go = 0;
        MTEST_CALL(MPI_Recv(&go, 1, MPI_INT, 0, TAG_GO, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        send_phase1(0, msgs, sreqs);
        MTEST_CALL(MPI_Waitall(NMSG, sreqs, MPI_STATUSES_IGNORE));
    }

    /* ---- phase 2: everyone (rank 0 too) sends M2 messages at once.  Rank 0 starts it
     * when phase 1 is over, so no phase-2 message can meet a phase-1 wildcard receive. ---- */
    if (rank == 0) {
        int go = 2;
        for (int s = 1; s < size; s++) {
            MTEST_CALL(MPI_Send(&go, 1, MPI_INT, s, TAG_GO, MPI_COMM_WORLD));
        }
    } else {
        int go = 0;
        MTEST_CALL(MPI_Recv(&go, 1, MPI_INT, 0, TAG_GO, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        MTEST_EQ("phase 2 go message", 2, go);
    }
    int out2[M2];
    MPI_Request s2[M2];
    for (int i = 0; i < M2; i++) {
        out2[i] = rank * 1000 + i;
        MTEST_CALL(MPI_Isend(&out2[i], 1, MPI_INT, 0, 100 + (rank + i) % 3, MPI_COMM_WORLD, &s2[i]));
    }
    if (rank == 0) {
        int total = M2 * size;
        char *done = mtest_malloc((size_t)total);
        memset(done, 0, (size_t)total);
        for (int k = 0; k < total; k++) {
            /* pick an unreceived message to aim at, and an envelope that matches it */
            int aim = -1;
            for (int q = 0; q < total; q++) {
                int idx = (q + k * 17) % total;
                if (!done[idx]) {
                    aim = idx;
                    break;
                }
            }
            int asrc = aim / M2, atag = 100 + (asrc + aim % M2) % 3;
            int kind = k % 4;
            int src = (kind == 0 || kind == 2) ? asrc : MPI_ANY_SOURCE;
            int tag = (kind == 0 || kind == 3) ? atag : MPI_ANY_TAG;
            int v = -1;
            MPI_Status st;
            MTEST_CALL(MPI_Recv(&v, 1, MPI_INT, src, tag, MPI_COMM_WORLD, &st));
            int from = st.MPI_SOURCE, i = v - from * 1000;
            if (from < 0 || from >= size || i < 0 || i >= M2 || v / 1000 != from) {
                MTEST_ABORT("phase 2: value %d from source %d", v, from);
            }
            MTEST_EQ("phase 2 status.MPI_TAG vs message", 100 + (from + i) % 3, st.MPI_TAG);
            MTEST_CHECK(!done[from * M2 + i], "phase 2: message %d from %d received twice", i, from);
            for (int h = 0; h < i; h++) {
                int htag = 100 + (from + h) % 3;
                if (!done[from * M2 + h] && (tag == MPI_ANY_TAG || htag == tag)) {
                    MTEST_CHECK(0, "phase 2: receive (src %d, tag %d) got message %d from %d, but its "
                                   "earlier message %d also matched",
                                src, tag, i, from, h);
                    break;
                }
            }
            done[from * M2 + i] = 1;
        }
        free(done);
    }
    MTEST_CALL(MPI_Waitall(M2, s2, MPI_STATUSES_IGNORE));
    for (int i = 0; i < NMSG; i++) {
        free(msgs[i]);
    }
    return mtest_finalize();
}
