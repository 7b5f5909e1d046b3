/*
 * Invalid arguments under MPI_ERRORS_RETURN: each call returns the right error class and has
 * no other effect, and the program keeps communicating afterwards (a ring exchange and a
 * pairwise exchange at the end prove it).  Only checks that MPICH 4.0.2 and Open MPI 4.1.4
 * both pass are here; the rest are in p2p/badargs_strict.
 * Covered: destination/source out of range (== size, -5, MPI_ANY_SOURCE as destination),
 * tags (negative, MPI_ANY_TAG on a send, > MPI_TAG_UB), negative counts, MPI_COMM_NULL,
 * MPI_DATATYPE_NULL, NULL buffer with a non-zero count, MPI_REQUEST_NULL where a request
 * is needed, MPI_Start on a nonpersistent request, negative array counts, receive buffer
 * too small, bad arguments to MPI_Pack_size / MPI_Get_count / MPI_Comm_size / MPI_Comm_rank /
 * MPI_Buffer_attach / MPI_Errhandler_set / MPI_Get_processor_name.
 * Ambiguity: the standard leaves the class for a negative array count open; MPICH says
 * MPI_ERR_COUNT, oxmpi may say MPI_ERR_ARG; both are accepted.  A negative buffer size in
 * MPI_Buffer_attach: MPICH MPI_ERR_BUFFER, Open MPI MPI_ERR_ARG; both accepted.
 */
#include "mtest.h"

#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

#define E(cls, call) MTEST_EXPECT_CLASS(cls, call)

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int rank = mtest_rank(), size = mtest_size();
    int ub = mtest_tag_ub();
    int buf[4] = {0, 0, 0, 0}, buf2[4], n = -1, flag, idx, outc, ind[2];
    MPI_Request r = MPI_REQUEST_NULL, rs[2];
    MPI_Status st, sts[2];
    const int bad_ranks[3] = {size, -5, MPI_ANY_SOURCE};

    MTEST_CHECK(ub >= 32767, "MPI_TAG_UB %d < 32767", ub);

    /* ---- sends ---- */
    for (int k = 0; k < 3; k++) {
        int d = bad_ranks[k];
        E(MPI_ERR_RANK, MPI_Send(buf, 1, MPI_INT, d, 0, MPI_COMM_WORLD));
        E(MPI_ERR_RANK, MPI_Ssend(buf, 1, MPI_INT, d, 0, MPI_COMM_WORLD));
        E(MPI_ERR_RANK, MPI_Rsend(buf, 1, MPI_INT, d, 0, MPI_COMM_WORLD));
        E(MPI_ERR_RANK, MPI_Isend(buf, 1, MPI_INT, d, 0, MPI_COMM_WORLD, &r));
        E(MPI_ERR_RANK, MPI_Issend(buf, 1, MPI_INT, d, 0, MPI_COMM_WORLD, &r));
        E(MPI_ERR_RANK, MPI_Irsend(buf, 1, MPI_INT, d, 0, MPI_COMM_WORLD, &r));
        E(MPI_ERR_RANK, MPI_Send_init(buf, 1, MPI_INT, d, 0, MPI_COMM_WORLD, &r));
        E(MPI_ERR_RANK, MPI_Ssend_init(buf, 1, MPI_INT, d, 0, MPI_COMM_WORLD, &r));
        E(MPI_ERR_RANK, MPI_Rsend_init(buf, 1, MPI_INT, d, 0, MPI_COMM_WORLD, &r));
    }
    E(MPI_ERR_TAG, MPI_Send(buf, 1, MPI_INT, rank, -1, MPI_COMM_WORLD));
    E(MPI_ERR_TAG, MPI_Send(buf, 1, MPI_INT, rank, MPI_ANY_TAG, MPI_COMM_WORLD));
    E(MPI_ERR_TAG, MPI_Isend(buf, 1, MPI_INT, rank, -1, MPI_COMM_WORLD, &r));
    E(MPI_ERR_TAG, MPI_Ssend_init(buf, 1, MPI_INT, rank, -1, MPI_COMM_WORLD, &r));
    if (ub < INT_MAX) {
        E(MPI_ERR_TAG, MPI_Send(buf, 1, MPI_INT, rank, ub + 1, MPI_COMM_WORLD));
        E(MPI_ERR_TAG, MPI_Irecv(buf, 1, MPI_INT, rank, ub + 1, MPI_COMM_WORLD, &r));
    }
    E(MPI_ERR_COUNT, MPI_Send(buf, -1, MPI_INT, rank, 0, MPI_COMM_WORLD));
    E(MPI_ERR_COUNT, MPI_Isend(buf, -1, MPI_INT, rank, 0, MPI_COMM_WORLD, &r));
    E(MPI_ERR_COUNT, MPI_Rsend_init(buf, -1, MPI_INT, rank, 0, MPI_COMM_WORLD, &r));
    E(MPI_ERR_COMM, MPI_Send(buf, 1, MPI_INT, 0, 0, MPI_COMM_NULL));
    E(MPI_ERR_COMM, MPI_Isend(buf, 1, MPI_INT, 0, 0, MPI_COMM_NULL, &r));
    E(MPI_ERR_COMM, MPI_Ssend(buf, 1, MPI_INT, 0, 0, MPI_COMM_NULL));
    E(MPI_ERR_COMM, MPI_Bsend(buf, 1, MPI_INT, 0, 0, MPI_COMM_NULL));
    E(MPI_ERR_COMM, MPI_Rsend(buf, 1, MPI_INT, 0, 0, MPI_COMM_NULL));
    E(MPI_ERR_COMM, MPI_Send_init(buf, 1, MPI_INT, 0, 0, MPI_COMM_NULL, &r));
    E(MPI_ERR_COMM, MPI_Bsend_init(buf, 1, MPI_INT, 0, 0, MPI_COMM_NULL, &r));
    E(MPI_ERR_TYPE, MPI_Send(buf, 1, MPI_DATATYPE_NULL, rank, 0, MPI_COMM_WORLD));
    E(MPI_ERR_TYPE, MPI_Isend(buf, 1, MPI_DATATYPE_NULL, rank, 0, MPI_COMM_WORLD, &r));
    E(MPI_ERR_BUFFER, MPI_Send(NULL, 1, MPI_INT, rank, 0, MPI_COMM_WORLD));
    E(MPI_ERR_BUFFER, MPI_Isend(NULL, 1, MPI_INT, rank, 0, MPI_COMM_WORLD, &r));

    /* ---- receives and probes ---- */
    for (int k = 0; k < 2; k++) {
        int s = bad_ranks[k];
        E(MPI_ERR_RANK, MPI_Recv(buf, 1, MPI_INT, s, 0, MPI_COMM_WORLD, &st));
        E(MPI_ERR_RANK, MPI_Irecv(buf, 1, MPI_INT, s, 0, MPI_COMM_WORLD, &r));
        E(MPI_ERR_RANK, MPI_Recv_init(buf, 1, MPI_INT, s, 0, MPI_COMM_WORLD, &r));
        E(MPI_ERR_RANK, MPI_Probe(s, 0, MPI_COMM_WORLD, &st));
        E(MPI_ERR_RANK, MPI_Iprobe(s, 0, MPI_COMM_WORLD, &flag, &st));
    }
    E(MPI_ERR_TAG, MPI_Recv(buf, 1, MPI_INT, rank, -5, MPI_COMM_WORLD, &st));
    E(MPI_ERR_TAG, MPI_Irecv(buf, 1, MPI_INT, rank, -5, MPI_COMM_WORLD, &r));
    E(MPI_ERR_TAG, MPI_Probe(rank, -5, MPI_COMM_WORLD, &st));
    E(MPI_ERR_TAG, MPI_Iprobe(rank, -5, MPI_COMM_WORLD, &flag, &st));
    E(MPI_ERR_COUNT, MPI_Recv(buf, -1, MPI_INT, rank, 0, MPI_COMM_WORLD, &st));
    E(MPI_ERR_COUNT, MPI_Irecv(buf, -1, MPI_INT, rank, 0, MPI_COMM_WORLD, &r));
    E(MPI_ERR_COMM, MPI_Recv(buf, 1, MPI_INT, 0, 0, MPI_COMM_NULL, &st));
    E(MPI_ERR_COMM, MPI_Irecv(buf, 1, MPI_INT, 0, 0, MPI_COMM_NULL, &r));
    E(MPI_ERR_COMM, MPI_Recv_init(buf, 1, MPI_INT, 0, 0, MPI_COMM_NULL, &r));
    E(MPI_ERR_TYPE, MPI_Recv(buf, 1, MPI_DATATYPE_NULL, rank, 0, MPI_COMM_WORLD, &st));
    E(MPI_ERR_TYPE, MPI_Irecv(buf, 1, MPI_DATATYPE_NULL, rank, 0, MPI_COMM_WORLD, &r));
    E(MPI_ERR_BUFFER, MPI_Recv(NULL, 1, MPI_INT, rank, 0, MPI_COMM_WORLD, &st));
    E(MPI_ERR_BUFFER, MPI_Irecv(NULL, 1, MPI_INT, rank, 0, MPI_COMM_WORLD, &r));
    E(MPI_ERR_RANK, MPI_Sendrecv(buf, 1, MPI_INT, size, 0, buf2, 1, MPI_INT, rank, 0, MPI_COMM_WORLD, &st));
    E(MPI_ERR_RANK, MPI_Sendrecv(buf, 1, MPI_INT, rank, 0, buf2, 1, MPI_INT, size, 0, MPI_COMM_WORLD, &st));
    E(MPI_ERR_TAG, MPI_Sendrecv_replace(buf, 1, MPI_INT, rank, -1, rank, 0, MPI_COMM_WORLD, &st));
    E(MPI_ERR_COMM, MPI_Sendrecv(buf, 1, MPI_INT, 0, 0, buf2, 1, MPI_INT, 0, 0, MPI_COMM_NULL, &st));
    E(MPI_ERR_COMM, MPI_Sendrecv_replace(buf, 1, MPI_INT, 0, 0, 0, 0, MPI_COMM_NULL, &st));

    /* ---- requests ---- */
    r = MPI_REQUEST_NULL;
    E(MPI_ERR_REQUEST, MPI_Start(&r));
    rs[0] = rs[1] = MPI_REQUEST_NULL;
    E(MPI_ERR_REQUEST, MPI_Startall(2, rs));
    E(MPI_ERR_REQUEST, MPI_Request_free(&r));
    E(MPI_ERR_REQUEST, MPI_Cancel(&r));
    MTEST_EXPECT_CLASS2(MPI_ERR_ARG, MPI_ERR_COUNT, MPI_Waitall(-1, rs, sts));
    MTEST_EXPECT_CLASS2(MPI_ERR_ARG, MPI_ERR_COUNT, MPI_Waitany(-1, rs, &idx, &st));
    MTEST_EXPECT_CLASS2(MPI_ERR_ARG, MPI_ERR_COUNT, MPI_Testall(-1, rs, &flag, sts));
    MTEST_EXPECT_CLASS2(MPI_ERR_ARG, MPI_ERR_COUNT, MPI_Testany(-1, rs, &idx, &flag, &st));
    MTEST_EXPECT_CLASS2(MPI_ERR_ARG, MPI_ERR_COUNT, MPI_Waitsome(-1, rs, &outc, ind, sts));
    MTEST_EXPECT_CLASS2(MPI_ERR_ARG, MPI_ERR_COUNT, MPI_Testsome(-1, rs, &outc, ind, sts));
    {
        /* MPI_Start on a nonpersistent request: an error, and the request is unaffected */
        MPI_Request nr;
        int in = -1, out = 31;
        MTEST_CALL(MPI_Irecv(&in, 1, MPI_INT, rank, 77, MPI_COMM_WORLD, &nr));
        E(MPI_ERR_REQUEST, MPI_Start(&nr));
        MTEST_CALL(MPI_Send(&out, 1, MPI_INT, rank, 77, MPI_COMM_WORLD));
        MTEST_CALL(MPI_Wait(&nr, &st));
        MTEST_STATUS(&st, rank, 77, MPI_INT, 1);
        MTEST_EQ("receive after a failed MPI_Start on it", 31, in);
    }

    /* ---- receive buffer too small ---- */
    {
        int big[8] = {1, 2, 3, 4, 5, 6, 7, 8}, small[4] = {0, 0, 0, 0};
        MPI_Request sr;
        MTEST_CALL(MPI_Isend(big, 8, MPI_INT, rank, 78, MPI_COMM_WORLD, &sr));
        E(MPI_ERR_TRUNCATE, MPI_Recv(small, 2, MPI_INT, rank, 78, MPI_COMM_WORLD, &st));
        MTEST_EQ("element past the receive count", 0, small[2]);
        MTEST_CALL(MPI_Wait(&sr, MPI_STATUS_IGNORE));
    }

    /* ---- other functions ---- */
    st.MPI_SOURCE = 0;
    E(MPI_ERR_TYPE, MPI_Get_count(&st, MPI_DATATYPE_NULL, &n));
    E(MPI_ERR_COMM, MPI_Comm_size(MPI_COMM_NULL, &n));
    E(MPI_ERR_COMM, MPI_Comm_rank(MPI_COMM_NULL, &n));
    E(MPI_ERR_TYPE, MPI_Pack_size(1, MPI_DATATYPE_NULL, MPI_COMM_WORLD, &n));
    E(MPI_ERR_COMM, MPI_Pack_size(1, MPI_INT, MPI_COMM_NULL, &n));
    char b2[100];
    MTEST_EXPECT_CLASS2(MPI_ERR_BUFFER, MPI_ERR_ARG, MPI_Buffer_attach(b2, -1));
    E(MPI_ERR_COMM, MPI_Errhandler_set(MPI_COMM_NULL, MPI_ERRORS_RETURN));
    /* MPI-4.1's MPI_ERR_ERRHANDLER (79 in oxmpi; MPICH 4.0.2 has no such class and says
     * MPI_ERR_ARG). */
#ifndef MPI_ERR_ERRHANDLER
#define MPI_ERR_ERRHANDLER 79
#endif
    MTEST_EXPECT_CLASS2(MPI_ERR_ERRHANDLER, MPI_ERR_ARG,
                        MPI_Errhandler_set(MPI_COMM_WORLD, MPI_ERRHANDLER_NULL));
    E(MPI_ERR_ARG, MPI_Get_processor_name(NULL, &n));
    MPI_Errhandler eh = mtest_get_errhandler(MPI_COMM_WORLD);
    MTEST_CHECK(eh == MPI_ERRORS_RETURN, "error handler changed by failed calls");

    /* ---- still communicating ---- */
    if (size > 1) {
        int right = (rank + 1) % size, left = (rank + size - 1) % size, in = -1;
        MTEST_CALL(MPI_Sendrecv(&rank, 1, MPI_INT, right, 5, &in, 1, MPI_INT, left, 5, MPI_COMM_WORLD, &st));
        MTEST_STATUS(&st, left, 5, MPI_INT, 1);
        MTEST_EQ("ring value after bad calls", left, in);
    }
    {
        int partner = (rank ^ 1) < size ? (rank ^ 1) : rank;
        unsigned char *a = mtest_malloc(100000), *b = mtest_malloc(100000);
        MPI_Request q[2];
        mtest_fill(a, 100000, (uint64_t)rank);
        MTEST_CALL(MPI_Irecv(b, 100000, MPI_BYTE, partner, 6, MPI_COMM_WORLD, &q[0]));
        MTEST_CALL(MPI_Isend(a, 100000, MPI_BYTE, partner, 6, MPI_COMM_WORLD, &q[1]));
        MTEST_CALL(MPI_Waitall(2, q, sts));
        MTEST_STATUS(&sts[0], partner, 6, MPI_BYTE, 100000);
        mtest_verify(b, 100000, (uint64_t)partner, "exchange after bad calls");
        free(a);
        free(b);
    }
    return mtest_finalize();
}
