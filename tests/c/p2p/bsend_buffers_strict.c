/*
 * mtest-abi: oxmpi-header (MPICH 4.0.2's mpi.h lacks what it calls)
 * Buffered-send buffers of MPI 4.1 (section 3.6): a buffer attached to a communicator
 * serves the buffered sends on that communicator (and only those) before the buffer of
 * the process; its space is accounted as the process buffer's (MPI_BSEND_OVERHEAD per
 * message), so a full buffer gives MPI_ERR_BUFFER; MPI_BUFFER_AUTOMATIC, attached to
 * the process or to a communicator, buffers any amount; MPI_Comm_flush_buffer /
 * MPI_Buffer_flush wait until the messages buffered so far have left, and their
 * nonblocking forms return a request that completes then; MPI_Comm_detach_buffer and
 * MPI_Buffer_detach hand back the buffer (MPI_BUFFER_AUTOMATIC and size 0 for
 * automatic buffering); persistent buffered sends use the communicator's buffer;
 * attaching twice, detaching nothing, MPI_COMM_NULL and NULL arguments fail with the
 * right class; a buffer left attached through MPI_Finalize has its messages delivered.
 *
 * Messages of LARGE bytes (above every eager limit) to self stay in the buffer until
 * the matching receive is posted, which makes the buffer's occupancy deterministic.
 *
 * Strict: MPICH 4.0.2 and Open MPI 4.1 do not have these MPI-4.1 functions.
 */
#include "mtest.h"

#define LARGE (256 * 1024)

static void comm_buffer(void)
{
    MPI_Comm c;
    MTEST_CALL(MPI_Comm_dup(MPI_COMM_SELF, &c));
    MTEST_CALL(MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN));
    int size = LARGE + MPI_BSEND_OVERHEAD;
    char *space = mtest_malloc((size_t)size);
    char *a = mtest_malloc(LARGE), *b = mtest_malloc(LARGE);
    mtest_fill(a, LARGE, 11);
    MTEST_CALL(MPI_Comm_attach_buffer(c, space, size));
    MTEST_EXPECT_CLASS(MPI_ERR_BUFFER, MPI_Comm_attach_buffer(c, space, size));

    /* one large message fills the buffer; a second does not fit */
    MTEST_CALL(MPI_Bsend(a, LARGE, MPI_BYTE, 0, 1, c));
    MTEST_EXPECT_CLASS(MPI_ERR_BUFFER, MPI_Bsend(a, LARGE, MPI_BYTE, 0, 2, c));
    /* the communicator's buffer serves only its own communicator: MPI_COMM_SELF has none */
    int x = 5;
    MTEST_EXPECT_CLASS(MPI_ERR_BUFFER, MPI_Bsend(&x, 1, MPI_INT, 0, 3, MPI_COMM_SELF));

    MPI_Request fr;
    int flag = -1;
    MTEST_CALL(MPI_Comm_iflush_buffer(c, &fr));
    MTEST_CALL(MPI_Test(&fr, &flag, MPI_STATUS_IGNORE));
    MTEST_EQ("flush request before the receive", 0, flag);
    MPI_Status st;
    MTEST_CALL(MPI_Recv(b, LARGE, MPI_BYTE, 0, 1, c, &st));
    MTEST_STATUS(&st, 0, 1, MPI_BYTE, LARGE);
    mtest_verify(b, LARGE, 11, "message through the communicator's buffer");
    MTEST_CALL(MPI_Wait(&fr, &st));
    MTEST_EQ("flush request after MPI_Wait", MPI_REQUEST_NULL, fr);
    MTEST_EMPTY_STATUS(&st);

    /* room again; small messages, then a blocking flush (nothing pending: returns) */
    for (int i = 0; i < 3; i++) {
        MTEST_CALL(MPI_Bsend(&i, 1, MPI_INT, 0, 10 + i, c));
    }
    for (int i = 0; i < 3; i++) {
        int v = -1;
        MTEST_CALL(MPI_Recv(&v, 1, MPI_INT, 0, 10 + i, c, MPI_STATUS_IGNORE));
        MTEST_EQ("small buffered message", i, v);
    }
    MTEST_CALL(MPI_Comm_flush_buffer(c));

    /* a persistent buffered send uses the communicator's buffer too */
    MPI_Request pr;
    MTEST_CALL(MPI_Bsend_init(a, LARGE, MPI_BYTE, 0, 20, c, &pr));
    MTEST_CALL(MPI_Start(&pr));
    MTEST_CALL(MPI_Wait(&pr, MPI_STATUS_IGNORE));
    MTEST_EXPECT_CLASS(MPI_ERR_BUFFER, MPI_Bsend(a, LARGE, MPI_BYTE, 0, 21, c));
    memset(b, 0, LARGE);
    MTEST_CALL(MPI_Recv(b, LARGE, MPI_BYTE, 0, 20, c, MPI_STATUS_IGNORE));
    mtest_verify(b, LARGE, 11, "message of the persistent buffered send");
    MTEST_CALL(MPI_Request_free(&pr));

    /* detach waits for the messages and hands the buffer back */
    void *got = NULL;
    int got_size = -1;
    MTEST_CALL(MPI_Bsend(a, LARGE, MPI_BYTE, 0, 30, c));
    MPI_Request rr;
    MTEST_CALL(MPI_Irecv(b, LARGE, MPI_BYTE, 0, 30, c, &rr));
    MTEST_CALL(MPI_Comm_detach_buffer(c, &got, &got_size));
    MTEST_CHECK(got == space, "MPI_Comm_detach_buffer returned %p, attached %p", got,
                (void *)space);
    MTEST_EQ("size from MPI_Comm_detach_buffer", size, got_size);
    MTEST_CALL(MPI_Wait(&rr, MPI_STATUS_IGNORE));
    MTEST_EXPECT_CLASS(MPI_ERR_BUFFER, MPI_Comm_detach_buffer(c, &got, &got_size));
    MTEST_EXPECT_CLASS(MPI_ERR_BUFFER, MPI_Bsend(&x, 1, MPI_INT, 0, 31, c));

    /* automatic buffering on the communicator: any number of large messages */
    MTEST_CALL(MPI_Comm_attach_buffer(c, MPI_BUFFER_AUTOMATIC, 0));
    for (int i = 0; i < 4; i++) {
        MTEST_CALL(MPI_Bsend(a, LARGE, MPI_BYTE, 0, 40 + i, c));
    }
    MTEST_CALL(MPI_Comm_iflush_buffer(c, &fr));
    for (int i = 3; i >= 0; i--) {
        memset(b, 0, LARGE);
        MTEST_CALL(MPI_Recv(b, LARGE, MPI_BYTE, 0, 40 + i, c, MPI_STATUS_IGNORE));
        mtest_verify(b, LARGE, 11, "message through automatic buffering");
    }
    MTEST_CALL(MPI_Wait(&fr, MPI_STATUS_IGNORE));
    MTEST_CALL(MPI_Comm_detach_buffer(c, &got, &got_size));
    MTEST_CHECK(got == MPI_BUFFER_AUTOMATIC, "detach of automatic buffering returned %p", got);
    MTEST_EQ("size of automatic buffering", 0, got_size);

    MTEST_CALL(MPI_Comm_free(&c));
    free(space);
    free(a);
    free(b);
}

static void process_automatic(void)
{
    char *a = mtest_malloc(LARGE), *b = mtest_malloc(LARGE);
    mtest_fill(a, LARGE, 5);
    MTEST_CALL(MPI_Buffer_attach(MPI_BUFFER_AUTOMATIC, 0));
    MTEST_EXPECT_CLASS(MPI_ERR_BUFFER, MPI_Buffer_attach(a, 100));
    for (int i = 0; i < 3; i++) {
        MTEST_CALL(MPI_Bsend(a, LARGE, MPI_BYTE, 0, 50 + i, MPI_COMM_SELF));
    }
    MPI_Request fr;
    int flag = -1;
    MTEST_CALL(MPI_Buffer_iflush(&fr));
    MTEST_CALL(MPI_Test(&fr, &flag, MPI_STATUS_IGNORE));
    MTEST_EQ("process flush request before the receives", 0, flag);
    for (int i = 0; i < 3; i++) {
        memset(b, 0, LARGE);
        MTEST_CALL(MPI_Recv(b, LARGE, MPI_BYTE, 0, 50 + i, MPI_COMM_SELF, MPI_STATUS_IGNORE));
        mtest_verify(b, LARGE, 5, "message through the process's automatic buffering");
    }
    MTEST_CALL(MPI_Wait(&fr, MPI_STATUS_IGNORE));
    MTEST_CALL(MPI_Buffer_flush());
    void *got = NULL;
    int got_size = -1;
    MTEST_CALL(MPI_Buffer_detach(&got, &got_size));
    MTEST_CHECK(got == MPI_BUFFER_AUTOMATIC, "MPI_Buffer_detach returned %p", got);
    MTEST_EQ("size of the process's automatic buffering", 0, got_size);
    free(a);
    free(b);
}

static void process_buffer_flush(void)
{
    int size = LARGE + MPI_BSEND_OVERHEAD;
    char *space = mtest_malloc((size_t)size);
    char *a = mtest_malloc(LARGE), *b = mtest_malloc(LARGE);
    mtest_fill(a, LARGE, 6);
    MTEST_CALL(MPI_Buffer_flush()); /* nothing attached: nothing to wait for */
    MTEST_CALL(MPI_Buffer_attach(space, size));
    MTEST_CALL(MPI_Bsend(a, LARGE, MPI_BYTE, 0, 60, MPI_COMM_SELF));
    MPI_Request fr, rr;
    MTEST_CALL(MPI_Buffer_iflush(&fr));
    MTEST_CALL(MPI_Irecv(b, LARGE, MPI_BYTE, 0, 60, MPI_COMM_SELF, &rr));
    MTEST_CALL(MPI_Wait(&fr, MPI_STATUS_IGNORE));
    MTEST_CALL(MPI_Wait(&rr, MPI_STATUS_IGNORE));
    mtest_verify(b, LARGE, 6, "message through the process buffer");
    MTEST_CALL(MPI_Buffer_flush());
    void *got = NULL;
    int got_size = -1;
    MTEST_CALL(MPI_Buffer_detach(&got, &got_size));
    MTEST_CHECK(got == space, "MPI_Buffer_detach returned %p, attached %p", got, (void *)space);
    MTEST_EQ("size from MPI_Buffer_detach", size, got_size);
    free(space);
    free(a);
    free(b);
}

/* A buffered ring exchange on a communicator with its own buffer, at any size. */
static void ring(void)
{
    int rank = mtest_rank(), size = mtest_size();
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    MPI_Comm c;
    MTEST_CALL(MPI_Comm_dup(MPI_COMM_WORLD, &c));
    MTEST_CALL(MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN));
    int bytes = 4 * (1000 * (int)sizeof(int) + MPI_BSEND_OVERHEAD);
    char *space = mtest_malloc((size_t)bytes);
    MTEST_CALL(MPI_Comm_attach_buffer(c, space, bytes));
    int out[4][1000], in[1000];
    for (int k = 0; k < 4; k++) {
        for (int i = 0; i < 1000; i++) {
            out[k][i] = rank * 100000 + k * 1000 + i;
        }
        MTEST_CALL(MPI_Bsend(out[k], 1000, MPI_INT, right, k, c));
    }
    for (int k = 0; k < 4; k++) {
        MPI_Status st;
        MTEST_CALL(MPI_Recv(in, 1000, MPI_INT, left, k, c, &st));
        MTEST_STATUS(&st, left, k, MPI_INT, 1000);
        MTEST_EQ("first element of a ring message", left * 100000 + k * 1000, in[0]);
        MTEST_EQ("last element of a ring message", left * 100000 + k * 1000 + 999, in[999]);
    }
    MTEST_CALL(MPI_Comm_flush_buffer(c));
    void *got;
    int got_size;
    MTEST_CALL(MPI_Comm_detach_buffer(c, &got, &got_size));
    MTEST_CALL(MPI_Comm_free(&c));
    free(space);
}

static void bad_arguments(void)
{
    char space[512];
    void *got;
    int got_size;
    MPI_Request r;
    MTEST_EXPECT_CLASS(MPI_ERR_COMM, MPI_Comm_attach_buffer(MPI_COMM_NULL, space, 512));
    MTEST_EXPECT_CLASS(MPI_ERR_COMM, MPI_Comm_detach_buffer(MPI_COMM_NULL, &got, &got_size));
    MTEST_EXPECT_CLASS(MPI_ERR_COMM, MPI_Comm_flush_buffer(MPI_COMM_NULL));
    MTEST_EXPECT_CLASS(MPI_ERR_COMM, MPI_Comm_iflush_buffer(MPI_COMM_NULL, &r));
    MTEST_EXPECT_CLASS(MPI_ERR_ARG, MPI_Comm_attach_buffer(MPI_COMM_SELF, space, -1));
    MTEST_EXPECT_CLASS(MPI_ERR_BUFFER, MPI_Comm_detach_buffer(MPI_COMM_SELF, &got, &got_size));
    MTEST_EXPECT_CLASS(MPI_ERR_BUFFER, MPI_Buffer_detach(&got, &got_size));
    MTEST_EXPECT_CLASS(MPI_ERR_ARG, MPI_Buffer_iflush(NULL));
    MTEST_EXPECT_CLASS(MPI_ERR_ARG, MPI_Comm_iflush_buffer(MPI_COMM_SELF, NULL));
    MTEST_CALL(MPI_Comm_attach_buffer(MPI_COMM_SELF, space, 512));
    MTEST_EXPECT_CLASS(MPI_ERR_ARG, MPI_Comm_detach_buffer(MPI_COMM_SELF, &got, NULL));
    MTEST_CALL(MPI_Comm_detach_buffer(MPI_COMM_SELF, &got, &got_size));
    MTEST_EQ("size of MPI_COMM_SELF's buffer", 512, got_size);
}

/* Automatic buffering left attached through MPI_Finalize, with a large message still
 * in flight to another rank: MPI_Finalize completes it (the receiver checks the data). */
static void left_attached(void)
{
    int rank = mtest_rank(), size = mtest_size();
    if (size < 2 || rank > 1) {
        return;
    }
    char *a = mtest_malloc(LARGE);
    if (rank == 0) {
        mtest_fill(a, LARGE, 9);
        MTEST_CALL(MPI_Buffer_attach(MPI_BUFFER_AUTOMATIC, 0));
        MTEST_CALL(MPI_Bsend(a, LARGE, MPI_BYTE, 1, 90, MPI_COMM_WORLD));
        /* overwriting the user buffer is fine: the message was copied */
        memset(a, 0, LARGE);
    } else {
        mtest_sleep_ms(50);
        MTEST_CALL(MPI_Recv(a, LARGE, MPI_BYTE, 0, 90, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        mtest_verify(a, LARGE, 9, "message buffered automatically before MPI_Finalize");
    }
    free(a);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    comm_buffer();
    process_automatic();
    process_buffer_flush();
    ring();
    bad_arguments();
    left_attached();
    return mtest_finalize();
}
