/*
 * Multi-MiB strided messages with content checks: vectors of 4 KiB blocks and of 64-byte
 * blocks (stride twice the block), 1, 4 and 16 MiB of data, sent vector -> vector,
 * vector -> contiguous, contiguous -> vector and 64-byte-block vector -> 4 KiB-block vector
 * (same signature, different shapes), blocking and nonblocking.  Every data byte is checked
 * against the sender's pattern and every hole byte of the receive buffer must be untouched.
 * Rank 0 sends to rank 1 and rank 1 sends the data back the other way; other ranks idle.
 * Run it with OXMPI_SHM_NO_CMA=1 as well, to cover the rendezvous path without
 * process_vm_readv.
 */
#include "mtest.h"

#define MIB (1024 * 1024)
#define HOLE 0xee

static int me;

/* A vector of `total` bytes of doubles in blocks of `block` bytes, stride 2*block. */
static MPI_Datatype strided(size_t total, size_t block)
{
    MPI_Datatype t;
    int nblocks = (int)(total / block);
    int bl = (int)(block / sizeof(double));
    MTEST_CALL(MPI_Type_vector(nblocks, bl, 2 * bl, MPI_DOUBLE, &t));
    MTEST_CALL(MPI_Type_commit(&t));
    return t;
}

/* Byte k of the message (in packed order) lives at this offset of a buffer strided with
 * `block` (0 for contiguous). */
static size_t where(size_t k, size_t block)
{
    return block ? (k / block) * 2 * block + k % block : k;
}

/* Fills the data bytes of a buffer laid out with `block` with the message pattern `seed`,
 * and the holes with HOLE. */
static void fill(unsigned char *buf, size_t total, size_t block, uint64_t seed)
{
    static unsigned char *msg;
    static size_t msg_len;
    if (msg_len < total) {
        free(msg);
        msg = mtest_malloc(total);
        msg_len = total;
    }
    mtest_fill(msg, total, seed);
    if (!block) {
        memcpy(buf, msg, total);
        return;
    }
    memset(buf, HOLE, 2 * total);
    for (size_t k = 0; k < total; k += block) {
        memcpy(buf + where(k, block), msg + k, block);
    }
}

/* Checks a received buffer laid out with `block` against the pattern `seed`. */
static void check(const unsigned char *buf, size_t total, size_t block, uint64_t seed,
                  const char *what)
{
    unsigned char *want = mtest_malloc(block ? 2 * total : total);
    fill(want, total, block, seed);
    size_t len = block ? 2 * total : total;
    if (memcmp(buf, want, len) != 0) {
        size_t i = 0;
        while (buf[i] == want[i]) {
            i++;
        }
        int in_hole = block && (i / block) % 2 == 1;
        MTEST_CHECK(0, "%s: byte %zu (%s) is 0x%02x, expected 0x%02x", what, i,
                    in_hole ? "a hole" : "data", buf[i], want[i]);
    }
    free(want);
}

/* One transfer from `src` to `dst` of `total` bytes: sender layout `sblock`, receiver
 * layout `rblock` (0 = contiguous doubles). */
static void transfer(int src, int dst, size_t total, size_t sblock, size_t rblock, int nonblocking,
                     int tag)
{
    char what[160];
    snprintf(what, sizeof what, "%d -> %d, %zu MiB, %s%zu -> %s%zu%s", src, dst, total / MIB,
             sblock ? "blocks of " : "contiguous", sblock, rblock ? "blocks of " : "contiguous",
             rblock, nonblocking ? " (nonblocking)" : "");
    uint64_t seed = total + sblock * 7 + rblock * 13 + (uint64_t)tag;
    if (me == src) {
        unsigned char *buf = mtest_malloc(sblock ? 2 * total : total);
        fill(buf, total, sblock, seed);
        MPI_Datatype t = sblock ? strided(total, sblock) : MPI_DOUBLE;
        int count = sblock ? 1 : (int)(total / sizeof(double));
        if (nonblocking) {
            MPI_Request r;
            MTEST_CALL(MPI_Isend(buf, count, t, dst, tag, MPI_COMM_WORLD, &r));
            MTEST_CALL(MPI_Wait(&r, MPI_STATUS_IGNORE));
        } else {
            MTEST_CALL(MPI_Send(buf, count, t, dst, tag, MPI_COMM_WORLD));
        }
        if (sblock) {
            MTEST_CALL(MPI_Type_free(&t));
        }
        free(buf);
    } else if (me == dst) {
        size_t len = rblock ? 2 * total : total;
        unsigned char *buf = mtest_malloc(len);
        memset(buf, HOLE, len);
        MPI_Datatype t = rblock ? strided(total, rblock) : MPI_DOUBLE;
        int count = rblock ? 1 : (int)(total / sizeof(double));
        MPI_Status st;
        if (nonblocking) {
            MPI_Request r;
            MTEST_CALL(MPI_Irecv(buf, count, t, src, tag, MPI_COMM_WORLD, &r));
            MTEST_CALL(MPI_Wait(&r, &st));
        } else {
            MTEST_CALL(MPI_Recv(buf, count, t, src, tag, MPI_COMM_WORLD, &st));
        }
        MTEST_STATUS(&st, src, tag, t, count);
        check(buf, total, rblock, seed, what);
        if (rblock) {
            MTEST_CALL(MPI_Type_free(&t));
        }
        free(buf);
    }
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    me = mtest_rank();
    if (mtest_size() < 2) {
        return mtest_skip("needs 2 ranks");
    }
    static const size_t totals[] = {1 * MIB, 4 * MIB, 16 * MIB};
    static const size_t blocks[] = {4096, 64};
    int tag = 0;
    for (size_t i = 0; i < sizeof totals / sizeof totals[0]; i++) {
        for (size_t j = 0; j < sizeof blocks / sizeof blocks[0]; j++) {
            size_t total = totals[i], b = blocks[j];
            for (int dir = 0; dir < 2; dir++) {
                int src = dir, dst = 1 - dir;
                transfer(src, dst, total, b, b, 0, ++tag);
                transfer(src, dst, total, b, 0, 1, ++tag);
                transfer(src, dst, total, 0, b, 0, ++tag);
            }
        }
        /* Different shapes with the same signature. */
        transfer(0, 1, totals[i], 64, 4096, 1, ++tag);
        transfer(1, 0, totals[i], 4096, 64, 0, ++tag);
    }
    return mtest_finalize();
}
