/*
 * mtest-abi: oxmpi-header (MPICH 4.0.2's mpi.h lacks what it calls)
 * Session buffers of MPI 4.1 (section 3.6): a buffer attached to a session serves the
 * buffered sends on the communicators derived from that session (made from its groups,
 * and their duplicates) that have no buffer of their own; a communicator's own buffer
 * wins over the session's. MPI_Session_flush_buffer / MPI_Session_iflush_buffer wait for
 * the messages buffered so far; MPI_Session_detach_buffer (and its _c form) hand back
 * the same address and size, or MPI_BUFFER_AUTOMATIC and 0. Attaching twice, detaching
 * nothing, an invalid session, a negative size and NULL arguments fail with the right
 * class. A buffered ring over mpi://WORLD checks delivery between processes.
 *
 * Messages of LARGE bytes (above every eager limit) to self stay in the buffer until the
 * matching receive is posted, which makes the buffer's occupancy deterministic.
 */
#include "stest.h"

#define LARGE (256 * 1024)

static MPI_Comm self_comm(MPI_Session s)
{
    MPI_Group g = MPI_GROUP_NULL;
    MPI_Comm c = MPI_COMM_NULL;
    MTEST_CALL(MPI_Group_from_session_pset(s, "mpi://SELF", &g));
    MTEST_CALL(MPI_Comm_create_from_group(g, "sbuf-self", MPI_INFO_NULL, MPI_ERRORS_RETURN, &c));
    MTEST_CALL(MPI_Group_free(&g));
    return c;
}

int main(int argc, char **argv)
{
    /* The world model runs too, only so that MPI_COMM_SELF's MPI_ERRORS_RETURN receives the
     * errors of calls on invalid sessions (which belong to no session). */
    mtest_init(&argc, &argv);
    MPI_Session s = stest_session();
    MPI_Comm world = stest_world_comm(s, "sbuf-world");
    MPI_Comm cs = self_comm(s), cd = MPI_COMM_NULL;
    MTEST_CALL(MPI_Comm_dup(cs, &cd));
    int rank = 0, size = 1;
    MTEST_CALL(MPI_Comm_rank(world, &rank));
    MTEST_CALL(MPI_Comm_size(world, &size));

    int bytes = LARGE + MPI_BSEND_OVERHEAD;
    char *space = mtest_malloc((size_t)bytes), *cspace = mtest_malloc((size_t)bytes);
    char *a = mtest_malloc(LARGE), *b = mtest_malloc(LARGE);
    mtest_fill(a, LARGE, 7);

    /* no buffer anywhere: a buffered send has nowhere to go */
    int x = 3;
    MTEST_EXPECT_CLASS(MPI_ERR_BUFFER, MPI_Bsend(&x, 1, MPI_INT, 0, 1, cs));

    MTEST_CALL(MPI_Session_attach_buffer(s, space, bytes));
    MTEST_EXPECT_CLASS(MPI_ERR_BUFFER, MPI_Session_attach_buffer(s, space, bytes));
    MTEST_EXPECT_CLASS(MPI_ERR_BUFFER, MPI_Session_attach_buffer(s, MPI_BUFFER_AUTOMATIC, 0));

    /* one large message fills the session buffer; the duplicate shares it */
    MTEST_CALL(MPI_Bsend(a, LARGE, MPI_BYTE, 0, 1, cs));
    MTEST_EXPECT_CLASS(MPI_ERR_BUFFER, MPI_Bsend(a, LARGE, MPI_BYTE, 0, 2, cs));
    MTEST_EXPECT_CLASS(MPI_ERR_BUFFER, MPI_Bsend(a, LARGE, MPI_BYTE, 0, 2, cd));

    /* precedence: the duplicate's own buffer wins over the full session buffer */
    MTEST_CALL(MPI_Comm_attach_buffer(cd, cspace, bytes));
    MTEST_CALL(MPI_Bsend(a, LARGE, MPI_BYTE, 0, 3, cd));
    MTEST_EXPECT_CLASS(MPI_ERR_BUFFER, MPI_Bsend(a, LARGE, MPI_BYTE, 0, 4, cd));

    MPI_Request fr = MPI_REQUEST_NULL;
    int flag = -1;
    MTEST_CALL(MPI_Session_iflush_buffer(s, &fr));
    MTEST_CALL(MPI_Test(&fr, &flag, MPI_STATUS_IGNORE));
    MTEST_EQ("session flush request before the receive", 0, flag);
    MPI_Status st;
    MTEST_CALL(MPI_Recv(b, LARGE, MPI_BYTE, 0, 1, cs, &st));
    MTEST_STATUS(&st, 0, 1, MPI_BYTE, LARGE);
    mtest_verify(b, LARGE, 7, "message through the session buffer");
    MTEST_CALL(MPI_Wait(&fr, &st));
    MTEST_EQ("flush request after MPI_Wait", MPI_REQUEST_NULL, fr);
    MTEST_EMPTY_STATUS(&st);
    memset(b, 0, LARGE);
    MTEST_CALL(MPI_Recv(b, LARGE, MPI_BYTE, 0, 3, cd, &st));
    MTEST_STATUS(&st, 0, 3, MPI_BYTE, LARGE);
    mtest_verify(b, LARGE, 7, "message through the communicator's buffer");
    MTEST_CALL(MPI_Comm_flush_buffer(cd));

    /* room again in the session buffer; a blocking flush waits for a receive elsewhere */
    MTEST_CALL(MPI_Bsend(a, LARGE, MPI_BYTE, 0, 5, cs));
    MPI_Request rr;
    memset(b, 0, LARGE);
    MTEST_CALL(MPI_Irecv(b, LARGE, MPI_BYTE, 0, 5, cs, &rr));
    MTEST_CALL(MPI_Session_flush_buffer(s));
    MTEST_CALL(MPI_Wait(&rr, MPI_STATUS_IGNORE));
    mtest_verify(b, LARGE, 7, "message flushed from the session buffer");

    /* a buffered ring over mpi://WORLD through the session buffer */
    int right = (rank + 1) % size, left = (rank + size - 1) % size, v = -1, mine = 100 + rank;
    MTEST_CALL(MPI_Bsend(&mine, 1, MPI_INT, right, 9, world));
    MTEST_CALL(MPI_Recv(&v, 1, MPI_INT, left, 9, world, &st));
    MTEST_EQ("value from the left neighbour", 100 + left, v);
    MTEST_EQ("source of the ring message", left, st.MPI_SOURCE);
    MTEST_CALL(MPI_Session_flush_buffer(s));

    /* detach hands back the same buffer; then nothing is attached */
    void *got = NULL;
    int got_size = -1;
    MTEST_CALL(MPI_Session_detach_buffer(s, &got, &got_size));
    MTEST_EQ("detached address is the attached one", 1, got == (void *)space);
    MTEST_EQ("detached size", bytes, got_size);
    MTEST_EXPECT_CLASS(MPI_ERR_BUFFER, MPI_Session_detach_buffer(s, &got, &got_size));
    MTEST_EXPECT_CLASS(MPI_ERR_BUFFER, MPI_Bsend(a, LARGE, MPI_BYTE, 0, 6, cs));
    MTEST_CALL(MPI_Comm_detach_buffer(cd, &got, &got_size));
    MTEST_EQ("communicator buffer address", 1, got == (void *)cspace);

    /* the large-count forms */
    MPI_Count csize = -1;
    MTEST_CALL(MPI_Session_attach_buffer_c(s, space, (MPI_Count)bytes));
    MTEST_CALL(MPI_Bsend(&x, 1, MPI_INT, 0, 7, cd));
    MTEST_CALL(MPI_Recv(&v, 1, MPI_INT, 0, 7, cd, MPI_STATUS_IGNORE));
    MTEST_EQ("small message through the session buffer (_c attach)", 3, v);
    MTEST_CALL(MPI_Session_detach_buffer_c(s, &got, &csize));
    MTEST_EQ("detached address (_c)", 1, got == (void *)space);
    MTEST_EQ("detached size (_c)", (MPI_Count)bytes, csize);

    /* automatic buffering: any amount; detach gives MPI_BUFFER_AUTOMATIC and 0 */
    MTEST_CALL(MPI_Session_attach_buffer(s, MPI_BUFFER_AUTOMATIC, 0));
    MTEST_CALL(MPI_Bsend(a, LARGE, MPI_BYTE, 0, 11, cs));
    MTEST_CALL(MPI_Bsend(a, LARGE, MPI_BYTE, 0, 12, cs));
    MTEST_CALL(MPI_Session_iflush_buffer(s, &fr));
    for (int t = 11; t <= 12; t++) {
        memset(b, 0, LARGE);
        MTEST_CALL(MPI_Recv(b, LARGE, MPI_BYTE, 0, t, cs, MPI_STATUS_IGNORE));
        mtest_verify(b, LARGE, 7, "message through automatic session buffering");
    }
    MTEST_CALL(MPI_Wait(&fr, MPI_STATUS_IGNORE));
    MTEST_CALL(MPI_Session_detach_buffer(s, &got, &got_size));
    MTEST_EQ("automatic buffer handed back", 1, got == MPI_BUFFER_AUTOMATIC);
    MTEST_EQ("automatic buffer size", 0, got_size);

    /* bad input */
    MTEST_EXPECT_CLASS(MPI_ERR_SESSION, MPI_Session_attach_buffer(MPI_SESSION_NULL, space, bytes));
    MTEST_EXPECT_CLASS(MPI_ERR_SESSION, MPI_Session_detach_buffer(MPI_SESSION_NULL, &got, &got_size));
    MTEST_EXPECT_CLASS(MPI_ERR_SESSION, MPI_Session_flush_buffer(MPI_SESSION_NULL));
    MTEST_EXPECT_CLASS(MPI_ERR_SESSION, MPI_Session_iflush_buffer(MPI_SESSION_NULL, &fr));
    MTEST_EXPECT_CLASS(MPI_ERR_SESSION, MPI_Session_attach_buffer_c(MPI_SESSION_NULL, space, 8));
    MTEST_EXPECT_CLASS(MPI_ERR_ARG, MPI_Session_attach_buffer(s, space, -1));
    MTEST_EXPECT_CLASS(MPI_ERR_ARG, MPI_Session_iflush_buffer(s, NULL));
    MTEST_CALL(MPI_Session_attach_buffer(s, space, bytes));
    MTEST_EXPECT_CLASS(MPI_ERR_ARG, MPI_Session_detach_buffer(s, NULL, &got_size));
    MTEST_EXPECT_CLASS(MPI_ERR_ARG, MPI_Session_detach_buffer(s, &got, NULL));
    /* still attached after the refused detaches; MPI_Session_finalize detaches it */

    MTEST_CALL(MPI_Comm_free(&cs));
    MTEST_CALL(MPI_Comm_free(&cd));
    int rc = stest_finish(world, s);
    MTEST_CALL(MPI_Finalize());
    free(space);
    free(cspace);
    free(a);
    free(b);
    return rc;
}
