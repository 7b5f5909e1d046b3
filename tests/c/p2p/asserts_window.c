/*
 * A window of nonblocking receives on communicators carrying the MPI-4 assertions
 * (none; mpi_assert_no_any_source + no_any_tag; those with exact_length; all four with
 * allow_overtaking), posted while the messages wait in the transport: rank 0 posts
 * one receive per source, the other ranks then send W messages each (tags 0 and 1,
 * the count depends on the tag only, so every receive names the exact length), and
 * rank 0 posts the other receives only after the messages had time to arrive
 * (receives that may take a source's next packet directly, ahead of the one posted
 * first where allow_overtaking permits it). A blocking receive after the window and a
 * second window posted before the sends use the same communicator.
 * Checked: data, status source/tag/count and MPI_Get_count; every message arrives
 * exactly once; without allow_overtaking the k-th receive of a (source, tag) gets the
 * k-th message sent with it.
 */
#include "mtest.h"

#define W 64

static int tcount(int tag)
{
    return tag == 0 ? 1 : 3;
}

static int mtag(int i)
{
    return (i % 5) % 2;
}

static int value(int src, int i, int k)
{
    return src * 100003 + i * 101 + k;
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

/* Receive i from src (posted for mtag(i)) got a message of its tag, once; in send order
 * per (src, tag) unless overtaking is allowed. */
static void check(int variant, int src, int i, const int *b, const MPI_Status *st,
                  unsigned char *seen, const char *phase)
{
    int tag = mtag(i), n = tcount(tag), count = -1;
    MTEST_STATUS(st, src, tag, MPI_INT, n);
    MTEST_CALL(MPI_Get_count(st, MPI_INT, &count));
    MTEST_EQ("MPI_Get_count", n, count);
    int got = (b[0] - value(src, 0, 0)) / 101;
    if (got < 0 || got >= W || mtag(got) != tag) {
        mtest_fail_at(__FILE__, __LINE__, "%s variant %d: receive %d from %d got %d", phase,
                      variant, i, src, b[0]);
        return;
    }
    if (variant < 3 && got != i) {
        mtest_fail_at(__FILE__, __LINE__,
                      "%s variant %d: receive %d from %d got message %d (non-overtaking)",
                      phase, variant, i, src, got);
    }
    if (seen[got]) {
        mtest_fail_at(__FILE__, __LINE__, "%s variant %d: message %d from %d delivered twice",
                      phase, variant, got, src);
    }
    seen[got] = 1;
    for (int k = 0; k < n; k++) {
        if (b[k] != value(src, got, k)) {
            mtest_fail_at(__FILE__, __LINE__, "%s variant %d: message %d from %d element %d: %d",
                          phase, variant, got, src, k, b[k]);
            break;
        }
    }
}

static void send_window(MPI_Comm c, int rank, int (*out)[3], MPI_Request *reqs)
{
    for (int i = 0; i < W; i++) {
        for (int k = 0; k < 3; k++) {
            out[i][k] = value(rank, i, k);
        }
        MTEST_CALL(MPI_Isend(out[i], tcount(mtag(i)), MPI_INT, 0, mtag(i), c, &reqs[i]));
    }
    MTEST_CALL(MPI_Waitall(W, reqs, MPI_STATUSES_IGNORE));
}

static void window(int variant, int rank, int size, int (*out)[3], int (*in)[3],
                   MPI_Request *reqs, MPI_Status *st, unsigned char *seen)
{
    MPI_Comm c = asserted(variant);
    int total = (size - 1) * W;
    for (int pass = 0; pass < 2; pass++) {
        /* pass 0: all but the first receive per source posted after the messages wait;
         * pass 1: every receive posted before the sends */
        if (rank == 0) {
            for (int s = 1; s < size; s++) {
                int lim = pass == 0 ? 1 : W;
                for (int i = 0; i < lim; i++) {
                    MTEST_CALL(MPI_Irecv(in[(s - 1) * W + i], tcount(mtag(i)), MPI_INT, s,
                                         mtag(i), c, &reqs[(s - 1) * W + i]));
                }
            }
            MTEST_CALL(MPI_Barrier(c));
            if (pass == 0) {
                /* no MPI call (no progress) while the messages arrive */
                double t0 = MPI_Wtime();
                while (MPI_Wtime() - t0 < 0.1) {
                }
                for (int s = 1; s < size; s++) {
                    for (int i = 1; i < W; i++) {
                        MTEST_CALL(MPI_Irecv(in[(s - 1) * W + i], tcount(mtag(i)), MPI_INT, s,
                                             mtag(i), c, &reqs[(s - 1) * W + i]));
                    }
                }
            }
            MTEST_CALL(MPI_Waitall(total, reqs, st));
            for (int s = 1; s < size; s++) {
                memset(seen, 0, W);
                for (int i = 0; i < W; i++) {
                    check(variant, s, i, in[(s - 1) * W + i], &st[(s - 1) * W + i], seen,
                          pass == 0 ? "late receives" : "early receives");
                }
            }
        } else {
            MTEST_CALL(MPI_Barrier(c));
            send_window(c, rank, out, reqs);
        }
        MTEST_CALL(MPI_Barrier(c));
    }
    /* a blocking receive from each source after the windows */
    if (rank == 0) {
        for (int s = 1; s < size; s++) {
            int b[3] = {-1, -1, -1};
            MPI_Status bs;
            MTEST_CALL(MPI_Recv(b, 3, MPI_INT, s, 1, c, &bs));
            MTEST_STATUS(&bs, s, 1, MPI_INT, 3);
            MTEST_EQ("blocking receive", value(s, 7, 2), b[2]);
        }
    } else {
        int b[3] = {value(rank, 7, 0), value(rank, 7, 1), value(rank, 7, 2)};
        MTEST_CALL(MPI_Send(b, 3, MPI_INT, 0, 1, c));
    }
    MTEST_CALL(MPI_Comm_free(&c));
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int rank = mtest_rank(), size = mtest_size();
    int n = size > 1 ? (size - 1) * W : W;
    int(*out)[3] = malloc(sizeof(int[3]) * W), (*in)[3] = malloc(sizeof(int[3]) * (size_t)n);
    MPI_Request *reqs = malloc(sizeof(MPI_Request) * (size_t)n);
    MPI_Status *st = malloc(sizeof(MPI_Status) * (size_t)n);
    unsigned char *seen = malloc(W);
    MTEST_CHECK(out && in && reqs && st && seen, "out of memory");
    if (size > 1) {
        for (int variant = 0; variant < 4; variant++) {
            window(variant, rank, size, out, in, reqs, st, seen);
        }
    }
    free(out);
    free(in);
    free(reqs);
    free(st);
    free(seen);
    return mtest_finalize();
}
