/*
 * oxmpi-strict invalid-argument checks (listed apart in the manifest; expected to fail on
 * MPICH and/or Open MPI).  Each returns the right error class under MPI_ERRORS_RETURN with
 * no other effect; then the program goes on communicating.  Observed elsewhere:
 *   MPI_Bsend / MPI_Ibsend with no buffer attached      Open MPI 4.1.4: MPI_SUCCESS
 *   MPI_Bsend larger than the attached buffer, then     Open MPI 4.1.4: MPI_ERR_BUFFER, but
 *     a buffered message that fits to the same peer       that message is never delivered
 *   MPI_Buffer_attach while a buffer is attached        Open MPI 4.1.4: code -30, no class
 *   MPI_Start on an active persistent request           Open MPI 4.1.4: MPI_SUCCESS
 *   MPI_Pack_size with count -1                         Open MPI 4.1.4: MPI_SUCCESS
 *   MPI_Probe / MPI_Iprobe on MPI_COMM_NULL             Open MPI 4.1.4: aborts (fatal handler)
 *   MPI_Get_count with a NULL count pointer             Open MPI 4.1.4: segfault
 *   MPI_Error_class / MPI_Error_string of code -7       MPICH 4.0.2: MPI_SUCCESS
 *   handles that name no object (MPICH-ABI values;      MPICH 4.0.2: hangs or segfaults;
 *     request, communicator, datatype)                    not run with Open MPI (pointers)
 *   NULL request / flag / count pointers, NULL request array with count > 0
 * Which handler runs for an error on MPI_COMM_NULL is itself unsettled (MPI-1: the one on
 * MPI_COMM_WORLD; MPI-4: MPI_COMM_SELF's); mtest sets MPI_ERRORS_RETURN on both.
 */
#include "mtest.h"

#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
#pragma GCC diagnostic ignored "-Wnonnull"

#define E(cls, call) MTEST_EXPECT_CLASS(cls, call)

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int rank = mtest_rank(), size = mtest_size();
    int partner = (rank ^ 1) < size ? (rank ^ 1) : rank;
    int buf[4] = {0, 0, 0, 0}, n = -1, flag;
    MPI_Status st;

    /* buffered mode without / beyond the attached buffer */
    E(MPI_ERR_BUFFER, MPI_Bsend(buf, 1, MPI_INT, partner, 0, MPI_COMM_WORLD));
    {
        MPI_Request r = MPI_REQUEST_NULL;
        E(MPI_ERR_BUFFER, MPI_Ibsend(buf, 1, MPI_INT, partner, 0, MPI_COMM_WORLD, &r));
    }
    {
        int small = 0;
        MTEST_CALL(MPI_Pack_size(100, MPI_BYTE, MPI_COMM_WORLD, &small));
        small += MPI_BSEND_OVERHEAD;
        char *bbuf = mtest_malloc((size_t)small);
        unsigned char *msg = mtest_malloc(100000), in[100];
        mtest_fill(msg, 100000, 77);
        MTEST_CALL(MPI_Buffer_attach(bbuf, small));
        char other[200];
        E(MPI_ERR_BUFFER, MPI_Buffer_attach(other, 200));
        E(MPI_ERR_BUFFER, MPI_Bsend(msg, 100000, MPI_BYTE, partner, 50, MPI_COMM_WORLD));
        /* a message that fits still goes through, to the same peer */
        MPI_Request r;
        MTEST_CALL(MPI_Irecv(in, 100, MPI_BYTE, partner, 51, MPI_COMM_WORLD, &r));
        MTEST_CALL(MPI_Bsend(msg, 100, MPI_BYTE, partner, 51, MPI_COMM_WORLD));
        MTEST_CALL(MPI_Wait(&r, &st));
        MTEST_STATUS(&st, partner, 51, MPI_BYTE, 100);
        mtest_verify(in, 100, 77, "buffered message after a failed MPI_Bsend");
        void *addr = NULL;
        int dsize = -1;
        MTEST_CALL(MPI_Buffer_detach(&addr, &dsize));
        MTEST_CHECK(addr == bbuf && dsize == small, "MPI_Buffer_detach returned %p/%d", addr, dsize);
        free(bbuf);
        free(msg);
    }

    /* MPI_Start on an active persistent request */
    {
        MPI_Request pr;
        int in = -1, out = 9;
        MTEST_CALL(MPI_Recv_init(&in, 1, MPI_INT, rank, 78, MPI_COMM_WORLD, &pr));
        MTEST_CALL(MPI_Start(&pr));
        E(MPI_ERR_REQUEST, MPI_Start(&pr));
        MTEST_CALL(MPI_Send(&out, 1, MPI_INT, rank, 78, MPI_COMM_WORLD));
        MTEST_CALL(MPI_Wait(&pr, &st));
        MTEST_EQ("persistent receive after a failed second MPI_Start", 9, in);
        MTEST_CALL(MPI_Request_free(&pr));
    }

    E(MPI_ERR_COUNT, MPI_Pack_size(-1, MPI_INT, MPI_COMM_WORLD, &n));
    E(MPI_ERR_COMM, MPI_Probe(0, 0, MPI_COMM_NULL, &st));
    E(MPI_ERR_COMM, MPI_Iprobe(0, 0, MPI_COMM_NULL, &flag, &st));
    E(MPI_ERR_ARG, MPI_Error_class(-7, &n));
    char es[MPI_MAX_ERROR_STRING];
    E(MPI_ERR_ARG, MPI_Error_string(-7, es, &n));

    /* NULL output pointers */
    st.MPI_SOURCE = 0;
    E(MPI_ERR_ARG, MPI_Get_count(&st, MPI_INT, NULL));
    E(MPI_ERR_ARG, MPI_Iprobe(MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, NULL, &st));
    E(MPI_ERR_ARG, MPI_Isend(buf, 1, MPI_INT, rank, 0, MPI_COMM_WORLD, NULL));
    E(MPI_ERR_ARG, MPI_Irecv(buf, 1, MPI_INT, rank, 0, MPI_COMM_WORLD, NULL));
    E(MPI_ERR_ARG, MPI_Comm_size(MPI_COMM_WORLD, NULL));
    {
        int idx;
        MTEST_EXPECT_CLASS2(MPI_ERR_ARG, MPI_ERR_REQUEST, MPI_Waitall(2, NULL, MPI_STATUSES_IGNORE));
        MTEST_EXPECT_CLASS2(MPI_ERR_ARG, MPI_ERR_REQUEST, MPI_Waitany(2, NULL, &idx, &st));
    }

#ifndef OPEN_MPI
    /* handles that name no object, with MPICH-ABI kind bits */
    {
        MPI_Request g = (MPI_Request)0x2c123456;
        E(MPI_ERR_REQUEST, MPI_Wait(&g, &st));
        g = (MPI_Request)0xac000123;
        E(MPI_ERR_REQUEST, MPI_Test(&g, &flag, &st));
        MPI_Comm gc = (MPI_Comm)0x84000123;
        E(MPI_ERR_COMM, MPI_Send(buf, 1, MPI_INT, 0, 0, gc));
        E(MPI_ERR_COMM, MPI_Comm_size(gc, &n));
        MPI_Datatype gt = (MPI_Datatype)0x8c000123;
        E(MPI_ERR_TYPE, MPI_Send(buf, 1, gt, rank, 0, MPI_COMM_WORLD));
        E(MPI_ERR_TYPE, MPI_Recv(buf, 1, gt, rank, 0, MPI_COMM_WORLD, &st));
    }
#endif

    /* still communicating */
    {
        unsigned char *a = mtest_malloc(100000), *b = mtest_malloc(100000);
        MPI_Request q[2];
        MPI_Status sts[2];
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
