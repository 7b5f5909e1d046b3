/*
 * Point-to-point traffic on communicators that carry the MPI-4 assertions
 * (MPI_Comm_dup_with_info; section 7.4.4): none, mpi_assert_no_any_source +
 * mpi_assert_no_any_tag, those with mpi_assert_exact_length, and all four with
 * mpi_assert_allow_overtaking.
 * Every rank sends every rank (itself included) NM messages with tags 0-3 (the size
 * depends on the tag only, so every receive gets exactly the length it names: tag 3
 * is an 80 KB rendezvous message), first to receives posted before the sends (phase A),
 * then to receives posted after the messages arrived (phase B; blocking receives from
 * half the sources, after an MPI_Probe with the source and tag).
 * Checked: data, status source/tag/count; without allow_overtaking the k-th receive
 * posted for a (source, tag) gets the k-th message sent with it (non-overtaking); with it,
 * each (source, tag) delivers each of its messages once. Finally MPI_Comm_set_info lifts
 * the wildcard assertions and MPI_ANY_SOURCE / MPI_ANY_TAG receives work on the same
 * communicator.
 */
#include "mtest.h"

#define NM 24
#define BIG 20000 /* ints */

static int mtag(int i)
{
    return i % 8 == 7 ? 3 : i % 3;
}

static int tcount(int tag)
{
    static const int c[4] = {1, 8, 3, BIG};
    return c[tag];
}

static int value(int src, int dst, int i, int k)
{
    return src * 1000003 + dst * 7919 + i * 97 + k;
}

static MPI_Comm asserted(int variant)
{
    MPI_Info info;
    MPI_Comm c;
    MTEST_CALL(MPI_Info_create(&info));
    if (variant >= 1) {
        MTEST_CALL(MPI_Info_set(info, "mpi_assert_no_any_source", "true"));
        MTEST_CALL(MPI_Info_set(info, "mpi_assert_no_any_tag", "true"));
    }
    if (variant >= 2) {
        MTEST_CALL(MPI_Info_set(info, "mpi_assert_exact_length", "true"));
    }
    if (variant >= 3) {
        MTEST_CALL(MPI_Info_set(info, "mpi_assert_allow_overtaking", "true"));
    }
    MTEST_CALL(MPI_Comm_dup_with_info(MPI_COMM_WORLD, info, &c));
    MTEST_CALL(MPI_Info_free(&info));
    return c;
}

/* The receive order: by tag from 3 down to 0, messages of a tag in send order. */
static int order(int j)
{
    int n = 0;
    for (int t = 3; t >= 0; t--) {
        for (int i = 0; i < NM; i++) {
            if (mtag(i) == t && n++ == j) {
                return i;
            }
        }
    }
    return -1;
}

static void send_all(MPI_Comm c, int rank, int size, int **out, MPI_Request *reqs)
{
    for (int p = 0; p < size; p++) {
        for (int i = 0; i < NM; i++) {
            int n = tcount(mtag(i)), *b = out[p * NM + i];
            for (int k = 0; k < n; k++) {
                b[k] = value(rank, p, i, k);
            }
            MTEST_CALL(MPI_Isend(b, n, MPI_INT, p, mtag(i), c, &reqs[p * NM + i]));
        }
    }
}

/* Receive j from src (posted as the order() of j) got the message its status and data say;
 * seen[src] collects them for the overtaking variant. */
static void check(int variant, int rank, int src, int j, const int *b, const MPI_Status *st,
                  unsigned *seen, const char *phase)
{
    int want = order(j), tag = mtag(want), n = tcount(tag), count = -1;
    MTEST_STATUS(st, src, tag, MPI_INT, n);
    MTEST_CALL(MPI_Get_count(st, MPI_INT, &count));
    MTEST_EQ("MPI_Get_count", n, count);
    /* which message of (src, tag) arrived, by its first element */
    int got = (b[0] - value(src, rank, 0, 0)) / 97;
    if (got < 0 || got >= NM || mtag(got) != tag) {
        mtest_fail_at(__FILE__, __LINE__, "%s variant %d: receive %d from %d got a message of another tag (%d)",
                   phase, variant, j, src, b[0]);
        return;
    }
    if (variant < 3 && got != want) {
        mtest_fail_at(__FILE__, __LINE__, "%s variant %d: receive %d from %d (tag %d) got message %d, not %d "
                   "(non-overtaking)", phase, variant, j, src, tag, got, want);
    }
    if (seen[src] & (1u << got)) {
        mtest_fail_at(__FILE__, __LINE__, "%s variant %d: message %d from %d delivered twice", phase, variant, got, src);
    }
    seen[src] |= 1u << got;
    for (int k = 0; k < n; k++) {
        if (b[k] != value(src, rank, got, k)) {
            mtest_fail_at(__FILE__, __LINE__, "%s variant %d: message %d from %d, element %d: %d", phase, variant, got,
                       src, k, b[k]);
            break;
        }
    }
}

static void exchange(int variant, int rank, int size, int **out, int **in, MPI_Request *sreq,
                     MPI_Request *rreq, MPI_Status *st, unsigned *seen)
{
    MPI_Comm c = asserted(variant);
    int total = size * NM;

    /* phase A: receives posted before the sends */
    memset(seen, 0, sizeof(unsigned) * (size_t)size);
    for (int s = 0; s < size; s++) {
        for (int j = 0; j < NM; j++) {
            int i = order(j);
            MTEST_CALL(MPI_Irecv(in[s * NM + j], tcount(mtag(i)), MPI_INT, s, mtag(i), c,
                                 &rreq[s * NM + j]));
        }
    }
    MTEST_CALL(MPI_Barrier(c));
    send_all(c, rank, size, out, sreq);
    MTEST_CALL(MPI_Waitall(total, rreq, st));
    for (int s = 0; s < size; s++) {
        for (int j = 0; j < NM; j++) {
            check(variant, rank, s, j, in[s * NM + j], &st[s * NM + j], seen, "posted");
        }
    }
    MTEST_CALL(MPI_Waitall(total, sreq, MPI_STATUSES_IGNORE));
    MTEST_CALL(MPI_Barrier(c));

    /* phase B: the messages arrive first */
    memset(seen, 0, sizeof(unsigned) * (size_t)size);
    send_all(c, rank, size, out, sreq);
    MTEST_CALL(MPI_Barrier(c));
    for (int s = 0; s < size; s++) {
        if (s % 2 == 0) {
            MPI_Status ps;
            MTEST_CALL(MPI_Probe(s, mtag(order(0)), c, &ps));
            MTEST_STATUS(&ps, s, mtag(order(0)), MPI_INT, tcount(mtag(order(0))));
            for (int j = 0; j < NM; j++) {
                int i = order(j);
                MTEST_CALL(MPI_Recv(in[s * NM + j], tcount(mtag(i)), MPI_INT, s, mtag(i), c,
                                    &st[s * NM + j]));
                rreq[s * NM + j] = MPI_REQUEST_NULL;
            }
        } else {
            for (int j = 0; j < NM; j++) {
                int i = order(j);
                MTEST_CALL(MPI_Irecv(in[s * NM + j], tcount(mtag(i)), MPI_INT, s, mtag(i), c,
                                     &rreq[s * NM + j]));
            }
        }
    }
    for (int s = 1; s < size; s += 2) {
        MTEST_CALL(MPI_Waitall(NM, &rreq[s * NM], &st[s * NM]));
    }
    for (int s = 0; s < size; s++) {
        for (int j = 0; j < NM; j++) {
            check(variant, rank, s, j, in[s * NM + j], &st[s * NM + j], seen, "unexpected");
        }
    }
    MTEST_CALL(MPI_Waitall(total, sreq, MPI_STATUSES_IGNORE));

    if (variant >= 1) {
        /* lifting the wildcard assertions allows MPI_ANY_SOURCE / MPI_ANY_TAG again */
        MPI_Info info;
        MTEST_CALL(MPI_Info_create(&info));
        MTEST_CALL(MPI_Info_set(info, "mpi_assert_no_any_source", "false"));
        MTEST_CALL(MPI_Info_set(info, "mpi_assert_no_any_tag", "false"));
        MTEST_CALL(MPI_Comm_set_info(c, info));
        MTEST_CALL(MPI_Info_free(&info));
        int right = (rank + 1) % size, left = (rank + size - 1) % size, x = rank + 5, y = -1;
        MPI_Status ws;
        MTEST_CALL(MPI_Sendrecv(&x, 1, MPI_INT, right, 4, &y, 1, MPI_INT, MPI_ANY_SOURCE,
                                MPI_ANY_TAG, c, &ws));
        MTEST_STATUS(&ws, left, 4, MPI_INT, 1);
        MTEST_EQ("wildcard receive after lifting the assertions", left + 5, y);
    }
    MTEST_CALL(MPI_Comm_free(&c));
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int rank = mtest_rank(), size = mtest_size(), total = size * NM;
    int **out = malloc(sizeof(int *) * (size_t)total), **in = malloc(sizeof(int *) * (size_t)total);
    MPI_Request *sreq = malloc(sizeof(MPI_Request) * (size_t)total);
    MPI_Request *rreq = malloc(sizeof(MPI_Request) * (size_t)total);
    MPI_Status *st = malloc(sizeof(MPI_Status) * (size_t)total);
    unsigned *seen = malloc(sizeof(unsigned) * (size_t)size);
    MTEST_CHECK(out && in && sreq && rreq && st && seen, "out of memory");
    for (int k = 0; k < total; k++) {
        out[k] = malloc(sizeof(int) * BIG);
        in[k] = malloc(sizeof(int) * BIG);
        MTEST_CHECK(out[k] && in[k], "out of memory");
    }
    for (int variant = 0; variant < 4; variant++) {
        exchange(variant, rank, size, out, in, sreq, rreq, st, seen);
    }
    for (int k = 0; k < total; k++) {
        free(out[k]);
        free(in[k]);
    }
    free(out);
    free(in);
    free(sreq);
    free(rreq);
    free(st);
    free(seen);
    return mtest_finalize();
}
