/*
 * Large messages around and far above typical eager/rendezvous thresholds: 1 KiB, 16 KiB,
 * 64 KiB, 256 KiB, 1 MiB (each also minus and plus one byte) and 16 MiB, between pairs
 * 2k <-> 2k+1 (a lone last rank with itself): both directions at once with nonblocking
 * calls, then one direction at a time with blocking calls, at an odd buffer offset so no
 * copy path can assume alignment.  Every byte is checked, and the bytes after the message
 * in the receive buffer must be untouched.  The manifest also runs this with
 * OXMPI_SHM_NO_CMA=1 (oxmpi's pipelined copy path instead of process_vm_readv), and with
 * OXMPI_SHM_STREAM_STORES=nt (pieces written with non-temporal stores).
 * MTEST_LARGE=1 adds messages of more than 2 GiB (600 Mi MPI_INTs) and of INT_MAX bytes
 * between ranks 0 and 1 (needs about 10 GiB of memory).
 */
#include "mtest.h"

static const int sizes[] = {1023,   1024,    1025,    16383,   16384,     16385,       65535,   65536,
                            65537,  262144,  1048575, 1048576, 1048577, 16 << 20};
#define NSIZES ((int)(sizeof sizes / sizeof sizes[0]))
#define GUARD 64
#define OFFSET 3

static void exchange_both(int partner, int n, unsigned char *s, unsigned char *r, uint64_t tagseed)
{
    int rank = mtest_rank();
    MPI_Request reqs[2];
    MPI_Status sts[2];
    mtest_fill(s, (size_t)n, tagseed * 64 + (uint64_t)rank);
    memset(r, 0xC3, (size_t)n + GUARD);
    MTEST_CALL(MPI_Irecv(r, n, MPI_BYTE, partner, 1, MPI_COMM_WORLD, &reqs[0]));
    MTEST_CALL(MPI_Isend(s, n, MPI_BYTE, partner, 1, MPI_COMM_WORLD, &reqs[1]));
    MTEST_CALL(MPI_Waitall(2, reqs, sts));
    MTEST_STATUS(&sts[0], partner, 1, MPI_BYTE, n);
    char what[64];
    snprintf(what, sizeof what, "%d-byte message (both directions)", n);
    mtest_verify(r, (size_t)n, tagseed * 64 + (uint64_t)partner, what);
    mtest_verify_const(r + n, GUARD, 0xC3, "bytes after a large message");
}

static void one_way(int from, int to, int n, unsigned char *s, unsigned char *r, uint64_t tagseed)
{
    int rank = mtest_rank();
    if (rank == from) {
        mtest_fill(s, (size_t)n, tagseed * 64 + 63);
        MTEST_CALL(MPI_Send(s, n, MPI_BYTE, to, 2, MPI_COMM_WORLD));
    } else if (rank == to) {
        MPI_Status st;
        memset(r, 0xC3, (size_t)n + GUARD);
        MTEST_CALL(MPI_Recv(r, n + GUARD, MPI_BYTE, from, 2, MPI_COMM_WORLD, &st));
        MTEST_STATUS(&st, from, 2, MPI_BYTE, n);
        char what[64];
        snprintf(what, sizeof what, "%d-byte message (blocking)", n);
        mtest_verify(r, (size_t)n, tagseed * 64 + 63, what);
        mtest_verify_const(r + n, GUARD, 0xC3, "bytes after a large message");
    }
}

static void huge(int rank)
{
    /* > 2 GiB as MPI_INT elements, then INT_MAX bytes */
    size_t nint = (size_t)600 << 20;
    if (rank > 1) {
        return;
    }
    int *buf = mtest_malloc(nint * sizeof(int));
    MPI_Status st;
    if (rank == 0) {
        mtest_fill(buf, nint * sizeof(int), 4242);
        MTEST_CALL(MPI_Send(buf, (int)nint, MPI_INT, 1, 3, MPI_COMM_WORLD));
        mtest_fill(buf, (size_t)INT_MAX, 4343);
        MTEST_CALL(MPI_Send(buf, INT_MAX, MPI_BYTE, 1, 4, MPI_COMM_WORLD));
    } else {
        memset(buf, 0, nint * sizeof(int));
        MTEST_CALL(MPI_Recv(buf, (int)nint, MPI_INT, 0, 3, MPI_COMM_WORLD, &st));
        MTEST_STATUS(&st, 0, 3, MPI_INT, (long long)nint);
        mtest_verify(buf, nint * sizeof(int), 4242, "2.4 GiB message");
        MTEST_CALL(MPI_Recv(buf, INT_MAX, MPI_BYTE, 0, 4, MPI_COMM_WORLD, &st));
        MTEST_STATUS(&st, 0, 4, MPI_BYTE, INT_MAX);
        mtest_verify(buf, (size_t)INT_MAX, 4343, "INT_MAX-byte message");
    }
    free(buf);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int rank = mtest_rank(), size = mtest_size();
    int partner = (rank ^ 1) < size ? (rank ^ 1) : rank;
    size_t max = (size_t)sizes[NSIZES - 1];
    unsigned char *sraw = mtest_malloc(max + OFFSET), *rraw = mtest_malloc(max + GUARD + OFFSET);
    unsigned char *s = sraw + OFFSET, *r = rraw + OFFSET;

    for (int k = 0; k < NSIZES; k++) {
        exchange_both(partner, sizes[k], s, r, (uint64_t)k);
    }
    for (int k = 0; k < NSIZES; k++) {
        if (partner == rank) {
            /* alone: a blocking send to self could wait forever; use the nonblocking path */
            exchange_both(rank, sizes[k], s, r, (uint64_t)k + 100);
        } else {
            int lo = rank < partner ? rank : partner, hi = lo + 1;
            one_way(lo, hi, sizes[k], s, r, (uint64_t)k + 100);
            one_way(hi, lo, sizes[k], s, r, (uint64_t)k + 200);
        }
    }
    free(sraw);
    free(rraw);

    if (mtest_env_flag("MTEST_LARGE") && size >= 2) {
        huge(rank);
    }
    return mtest_finalize();
}
