/*
 * oxmpi-strict semantic checks (listed apart in the manifest): correct-program behaviour the
 * standard requires but that MPICH 4.0.2 or Open MPI 4.1.4 get wrong, so the main programs
 * leave them out.
 *  - A receive from MPI_PROC_NULL reports source MPI_PROC_NULL, tag MPI_ANY_TAG, count 0
 *    also when it is nonblocking (MPI_Irecv + MPI_Wait / MPI_Test) or persistent.
 *    MPICH 4.0.2: source and tag 0 (MPI_Wait/MPI_Test), MPI_ANY_SOURCE (persistent).
 *  - A truncated receive of a large message (64 KiB, 1 MiB into 1000 bytes; to a partner and
 *    to self) returns MPI_ERR_TRUNCATE and writes nothing past the receive count.
 *    Open MPI 4.1.4: writes past the buffer (heap corruption, crash).
 *  - A persistent buffered send to self of 1028 bytes delivers the current buffer contents
 *    on every start.  Open MPI 4.1.4: zeros from the second start on.
 */
#include "mtest.h"

#define GUARD 64

static void truncated_large(int partner)
{
    int rank = mtest_rank();
    const int sizes[2] = {65536, 1 << 20};
    unsigned char *out = mtest_malloc(1 << 20), *in = mtest_malloc(1000 + GUARD);
    for (int k = 0; k < 2; k++) {
        int n = sizes[k];
        for (int how = 0; how < 2; how++) {
            MPI_Request sr, rr;
            MPI_Status st;
            int rc;
            mtest_fill(out, (size_t)n, 5);
            memset(in, 0x66, 1000 + GUARD);
            MTEST_CALL(MPI_Isend(out, n, MPI_BYTE, partner, 10 + how, MPI_COMM_WORLD, &sr));
            if (how == 0) {
                rc = MPI_Recv(in, 1000, MPI_BYTE, partner, 10, MPI_COMM_WORLD, &st);
            } else {
                MTEST_CALL(MPI_Irecv(in, 1000, MPI_BYTE, partner, 11, MPI_COMM_WORLD, &rr));
                rc = MPI_Wait(&rr, &st);
            }
            MTEST_CHECK(rc != MPI_SUCCESS && mtest_errclass(rc) == MPI_ERR_TRUNCATE,
                        "%s of %d bytes into 1000: expected MPI_ERR_TRUNCATE got class %d",
                        how ? "MPI_Irecv+MPI_Wait" : "MPI_Recv", n, rc == MPI_SUCCESS ? 0 : mtest_errclass(rc));
            mtest_verify_const(in + 1000, GUARD, 0x66, "bytes past a truncated large receive");
            MTEST_CALL(MPI_Wait(&sr, MPI_STATUS_IGNORE));
        }
    }
    (void)rank;
    free(out);
    free(in);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int rank = mtest_rank(), size = mtest_size();
    int partner = (rank ^ 1) < size ? (rank ^ 1) : rank;
    MPI_Request r;
    MPI_Status st;
    int in[4] = {-9, -9, -9, -9}, flag;

    /* MPI_PROC_NULL statuses */
    MTEST_CALL(MPI_Irecv(in, 4, MPI_INT, MPI_PROC_NULL, 7, MPI_COMM_WORLD, &r));
    MTEST_CALL(MPI_Wait(&r, &st));
    MTEST_PROC_NULL_STATUS(&st);
    MTEST_CALL(MPI_Irecv(in, 4, MPI_INT, MPI_PROC_NULL, 7, MPI_COMM_WORLD, &r));
    flag = 0;
    while (!flag) {
        MTEST_CALL(MPI_Test(&r, &flag, &st));
    }
    MTEST_PROC_NULL_STATUS(&st);
    MTEST_CALL(MPI_Recv_init(in, 4, MPI_INT, MPI_PROC_NULL, 7, MPI_COMM_WORLD, &r));
    for (int it = 0; it < 3; it++) {
        MTEST_CALL(MPI_Start(&r));
        MTEST_CALL(MPI_Wait(&r, &st));
        MTEST_PROC_NULL_STATUS(&st);
    }
    MTEST_CALL(MPI_Request_free(&r));
    MTEST_EQ("buffer of receives from MPI_PROC_NULL", -9, in[0]);

    /* truncated large messages: to the partner when there is one, and to self */
    if (partner != rank) {
        truncated_large(partner);
    }
    truncated_large(rank);

    /* persistent buffered send to self, restarted with new contents */
    {
        enum { N = 257 };
        int out[N], got[N];
        MPI_Request pr[2];
        int bsize = 0;
        MTEST_CALL(MPI_Pack_size(N, MPI_INT, MPI_COMM_WORLD, &bsize));
        bsize = 2 * (bsize + MPI_BSEND_OVERHEAD);
        char *bbuf = mtest_malloc((size_t)bsize);
        MTEST_CALL(MPI_Buffer_attach(bbuf, bsize));
        MTEST_CALL(MPI_Recv_init(got, N, MPI_INT, rank, 20, MPI_COMM_WORLD, &pr[0]));
        MTEST_CALL(MPI_Bsend_init(out, N, MPI_INT, rank, 20, MPI_COMM_WORLD, &pr[1]));
        for (int it = 0; it < 4; it++) {
            for (int i = 0; i < N; i++) {
                out[i] = it * 1000 + i + 1;
                got[i] = -1;
            }
            MTEST_CALL(MPI_Startall(2, pr));
            MTEST_CALL(MPI_Waitall(2, pr, MPI_STATUSES_IGNORE));
            for (int i = 0; i < N; i++) {
                if (got[i] != it * 1000 + i + 1) {
                    MTEST_CHECK(0, "persistent MPI_Bsend_init to self, start %d: element %d expected %d got %d",
                                it, i, it * 1000 + i + 1, got[i]);
                    break;
                }
            }
        }
        MTEST_CALL(MPI_Request_free(&pr[0]));
        MTEST_CALL(MPI_Request_free(&pr[1]));
        void *addr;
        MTEST_CALL(MPI_Buffer_detach(&addr, &bsize));
        free(bbuf);
    }
    return mtest_finalize();
}
