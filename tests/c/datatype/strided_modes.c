/*
 * Large non-contiguous messages in every situation the device treats on its own path:
 * a rank sending to itself, a message that arrives before its receive is posted (and is
 * probed first), MPI_ANY_SOURCE, synchronous, buffered and ready mode, persistent
 * requests, an irregular indexed type (uneven blocks, some far larger than others), and a
 * receive too small for the message (MPI_ERR_TRUNCATE with the fitting prefix delivered
 * and nothing written past the buffer).  Each message is a few MiB so that it goes by
 * rendezvous; every data byte and every hole byte is checked.
 */
#include "mtest.h"

#define HOLE 0xee
#define TOTAL (3 * 1024 * 1024 + 4096)

static int me;

/* An irregular indexed type of about TOTAL bytes: block i has (i % 7) * 700 + 8 bytes,
 * blocks separated by holes of (i % 3) * 40 + 8 bytes. */
static MPI_Datatype irregular(size_t *data, size_t *span)
{
    int n = 0;
    size_t d = 0, pos = 0;
    while (d < TOTAL) {
        size_t len = (size_t)(n % 7) * 700 + 8;
        d += len;
        pos += len + (size_t)(n % 3) * 40 + 8;
        n++;
    }
    int *bl = mtest_malloc(sizeof(int) * (size_t)n);
    int *disp = mtest_malloc(sizeof(int) * (size_t)n);
    pos = 0;
    d = 0;
    for (int i = 0; i < n; i++) {
        bl[i] = (i % 7) * 700 + 8;
        disp[i] = (int)pos;
        d += (size_t)bl[i];
        pos += (size_t)bl[i] + (size_t)(i % 3) * 40 + 8;
    }
    MPI_Datatype t;
    MTEST_CALL(MPI_Type_indexed(n, bl, disp, MPI_BYTE, &t));
    MTEST_CALL(MPI_Type_commit(&t));
    free(bl);
    free(disp);
    *data = d;
    *span = pos;
    return t;
}

/* A vector of 64-byte or 4 KiB blocks (stride twice the block) holding `total` bytes. */
static MPI_Datatype strided(size_t total, int block)
{
    MPI_Datatype t;
    MTEST_CALL(MPI_Type_vector((int)(total / (size_t)block), block, 2 * block, MPI_BYTE, &t));
    MTEST_CALL(MPI_Type_commit(&t));
    return t;
}

/* The packed bytes of `count` elements of `t` at `buf`, via MPI_Pack (the reference). */
static unsigned char *packed(const void *buf, int count, MPI_Datatype t, int *len)
{
    MTEST_CALL(MPI_Pack_size(count, t, MPI_COMM_SELF, len));
    unsigned char *p = mtest_malloc((size_t)*len + 1);
    int pos = 0;
    MTEST_CALL(MPI_Pack(buf, count, t, p, *len, &pos, MPI_COMM_SELF));
    *len = pos;
    return p;
}

/* A send buffer of `span` bytes with a pattern in every byte. */
static unsigned char *pattern(size_t span, uint64_t seed)
{
    unsigned char *b = mtest_malloc(span);
    mtest_fill(b, span, seed);
    return b;
}

/* Checks that `rbuf` (span bytes, filled with HOLE before) holds the packed message
 * `want` (first `n` bytes of it) in layout `t`, and HOLE everywhere else; with `lenient`,
 * data bytes may also be left untouched (what a truncated receive may do). */
static void check_layout_as(const unsigned char *rbuf, size_t span, MPI_Datatype t, int count,
                            const unsigned char *want, int n, const char *what, int lenient)
{
    unsigned char *ref = mtest_malloc(span);
    memset(ref, HOLE, span);
    int pos = 0;
    MTEST_CALL(MPI_Unpack(want, n, &pos, ref, count, t, MPI_COMM_SELF));
    if (memcmp(ref, rbuf, span) != 0) {
        size_t i = 0;
        while (i < span && (ref[i] == rbuf[i] || (lenient && rbuf[i] == HOLE))) {
            i++;
        }
        if (i < span) {
            MTEST_CHECK(0, "%s: byte %zu is 0x%02x, expected 0x%02x", what, i, rbuf[i], ref[i]);
        }
    }
    free(ref);
}

static void check_layout(const unsigned char *rbuf, size_t span, MPI_Datatype t, int count,
                         const unsigned char *want, int n, const char *what)
{
    check_layout_as(rbuf, span, t, count, want, n, what, 0);
}

/* Sending to oneself, irregular type on both sides and vector -> irregular. */
static void self_send(void)
{
    size_t data, span;
    MPI_Datatype irr = irregular(&data, &span);
    unsigned char *s = pattern(span, 11);
    unsigned char *r = mtest_malloc(span);
    memset(r, HOLE, span);
    MPI_Request req;
    MPI_Status st;
    MTEST_CALL(MPI_Isend(s, 1, irr, me, 5, MPI_COMM_WORLD, &req));
    MTEST_CALL(MPI_Recv(r, 1, irr, me, 5, MPI_COMM_WORLD, &st));
    MTEST_CALL(MPI_Wait(&req, MPI_STATUS_IGNORE));
    MTEST_STATUS(&st, me, 5, irr, 1);
    int n;
    unsigned char *want = packed(s, 1, irr, &n);
    check_layout(r, span, irr, 1, want, n, "self send, irregular");
    /* A contiguous message of the same size into the irregular layout. */
    memset(r, HOLE, span);
    MTEST_CALL(MPI_Isend(want, n, MPI_BYTE, me, 6, MPI_COMM_WORLD, &req));
    MTEST_CALL(MPI_Recv(r, 1, irr, me, 6, MPI_COMM_WORLD, &st));
    MTEST_CALL(MPI_Wait(&req, MPI_STATUS_IGNORE));
    check_layout(r, span, irr, 1, want, n, "self send, contiguous -> irregular");
    free(want);
    free(s);
    free(r);
    MTEST_CALL(MPI_Type_free(&irr));
}

/* 0 -> 1 in the given send mode, layouts `st` -> `rt` (buffers of `sspan`/`rspan`). */
static void pair(const char *what, MPI_Datatype st_, size_t sspan, MPI_Datatype rt_,
                 size_t rspan, int mode, int tag)
{
    if (me == 0) {
        unsigned char *s = pattern(sspan, (uint64_t)tag);
        MPI_Request req;
        switch (mode) {
        case 0:
            MTEST_CALL(MPI_Send(s, 1, st_, 1, tag, MPI_COMM_WORLD));
            break;
        case 1:
            MTEST_CALL(MPI_Ssend(s, 1, st_, 1, tag, MPI_COMM_WORLD));
            break;
        case 2: {
            int size;
            MTEST_CALL(MPI_Pack_size(1, st_, MPI_COMM_WORLD, &size));
            size += MPI_BSEND_OVERHEAD;
            void *pool = mtest_malloc((size_t)size);
            MTEST_CALL(MPI_Buffer_attach(pool, size));
            MTEST_CALL(MPI_Bsend(s, 1, st_, 1, tag, MPI_COMM_WORLD));
            /* The message left with the attached copy: the user buffer may change. */
            memset(s, 0, sspan);
            MTEST_CALL(MPI_Buffer_detach(&pool, &size));
            free(pool);
            break;
        }
        case 3:
            MTEST_CALL(MPI_Barrier(MPI_COMM_WORLD)); /* the receive is posted */
            MTEST_CALL(MPI_Rsend(s, 1, st_, 1, tag, MPI_COMM_WORLD));
            break;
        case 4:
            /* Sent before the receive is posted; the receiver probes it first. */
            MTEST_CALL(MPI_Isend(s, 1, st_, 1, tag, MPI_COMM_WORLD, &req));
            MTEST_CALL(MPI_Barrier(MPI_COMM_WORLD));
            MTEST_CALL(MPI_Wait(&req, MPI_STATUS_IGNORE));
            break;
        case 5: {
            /* Persistent send, started twice. */
            MTEST_CALL(MPI_Send_init(s, 1, st_, 1, tag, MPI_COMM_WORLD, &req));
            for (int k = 0; k < 2; k++) {
                MTEST_CALL(MPI_Start(&req));
                MTEST_CALL(MPI_Wait(&req, MPI_STATUS_IGNORE));
            }
            MTEST_CALL(MPI_Request_free(&req));
            break;
        }
        }
        free(s);
    } else if (me == 1) {
        unsigned char *ref = pattern(sspan, (uint64_t)tag);
        int n;
        unsigned char *want = packed(ref, 1, st_, &n);
        unsigned char *r = mtest_malloc(rspan);
        memset(r, HOLE, rspan);
        MPI_Status st;
        MPI_Request req;
        if (mode == 3) {
            MTEST_CALL(MPI_Irecv(r, 1, rt_, 0, tag, MPI_COMM_WORLD, &req));
            MTEST_CALL(MPI_Barrier(MPI_COMM_WORLD));
            MTEST_CALL(MPI_Wait(&req, &st));
        } else if (mode == 4) {
            MTEST_CALL(MPI_Barrier(MPI_COMM_WORLD));
            MTEST_CALL(MPI_Probe(MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, &st));
            MTEST_STATUS(&st, 0, tag, rt_, 1);
            MTEST_CALL(MPI_Recv(r, 1, rt_, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
        } else if (mode == 5) {
            MTEST_CALL(MPI_Recv_init(r, 1, rt_, 0, tag, MPI_COMM_WORLD, &req));
            for (int k = 0; k < 2; k++) {
                memset(r, HOLE, rspan);
                MTEST_CALL(MPI_Start(&req));
                MTEST_CALL(MPI_Wait(&req, &st));
                if (k == 0) {
                    check_layout(r, rspan, rt_, 1, want, n, what);
                }
            }
            MTEST_CALL(MPI_Request_free(&req));
        } else {
            MTEST_CALL(MPI_Recv(r, 1, rt_, MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, &st));
        }
        MTEST_STATUS(&st, 0, tag, rt_, 1);
        check_layout(r, rspan, rt_, 1, want, n, what);
        free(want);
        free(ref);
        free(r);
    } else if (mode == 3 || mode == 4) {
        MTEST_CALL(MPI_Barrier(MPI_COMM_WORLD));
    }
}

/* A receive buffer smaller than the message: MPI_ERR_TRUNCATE, nothing outside the
 * type's data changes, and the data bytes hold the message's prefix or are untouched
 * (oxmpi delivers the prefix; the standard does not require it). */
static void truncated(MPI_Datatype st_, size_t sspan, int block, int tag)
{
    size_t rtotal = TOTAL / 2 / (size_t)block * (size_t)block;
    MPI_Datatype rt_ = strided(rtotal, block);
    size_t rspan = 2 * rtotal + 4096; /* room past the type's span, which must stay HOLE */
    if (me == 0) {
        unsigned char *s = pattern(sspan, (uint64_t)tag);
        MTEST_CALL(MPI_Send(s, 1, st_, 1, tag, MPI_COMM_WORLD));
        free(s);
    } else if (me == 1) {
        unsigned char *ref = pattern(sspan, (uint64_t)tag);
        int n;
        unsigned char *want = packed(ref, 1, st_, &n);
        unsigned char *r = mtest_malloc(rspan);
        memset(r, HOLE, rspan);
        MPI_Status st;
        MTEST_CALL(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
        int rc = MPI_Recv(r, 1, rt_, 0, tag, MPI_COMM_WORLD, &st);
        MTEST_CALL(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
        int cls;
        MPI_Error_class(rc, &cls);
        MTEST_CHECK(cls == MPI_ERR_TRUNCATE, "truncated strided receive: error class %d", cls);
        check_layout_as(r, rspan, rt_, 1, want, (int)rtotal, "truncated strided receive", 1);
        free(want);
        free(ref);
        free(r);
    }
    MTEST_CALL(MPI_Type_free(&rt_));
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    me = mtest_rank();
    self_send();
    if (mtest_size() >= 2) {
        size_t data, ispan;
        MPI_Datatype irr = irregular(&data, &ispan);
        MPI_Datatype vbig = strided(data, 4);
        MPI_Datatype v64 = strided(TOTAL, 64), v4k = strided(TOTAL, 4096);
        const char *names[] = {"standard", "synchronous", "buffered", "ready", "unexpected",
                               "persistent"};
        int tag = 100;
        for (int mode = 0; mode < 6; mode++) {
            char what[120];
            snprintf(what, sizeof what, "%s, 4 KiB blocks -> 64-byte blocks", names[mode]);
            pair(what, v4k, 2 * TOTAL, v64, 2 * TOTAL, mode, ++tag);
            snprintf(what, sizeof what, "%s, 64-byte blocks -> 4 KiB blocks", names[mode]);
            pair(what, v64, 2 * TOTAL, v4k, 2 * TOTAL, mode, ++tag);
            snprintf(what, sizeof what, "%s, irregular -> 4-byte blocks", names[mode]);
            pair(what, irr, ispan, vbig, 2 * data, mode, ++tag);
        }
        truncated(v4k, 2 * TOTAL, 4096, ++tag);
        truncated(v64, 2 * TOTAL, 64, ++tag);
        truncated(irr, ispan, 4096, ++tag);
        MTEST_CALL(MPI_Type_free(&irr));
        MTEST_CALL(MPI_Type_free(&vbig));
        MTEST_CALL(MPI_Type_free(&v64));
        MTEST_CALL(MPI_Type_free(&v4k));
    }
    return mtest_finalize();
}
