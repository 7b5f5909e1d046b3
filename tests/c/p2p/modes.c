/*
 * The four send modes, blocking and nonblocking: MPI_Send, MPI_Bsend, MPI_Ssend, MPI_Rsend,
 * MPI_Isend, MPI_Ibsend, MPI_Issend, MPI_Irsend, each at sizes from 0 bytes to 256 KiB, to a
 * partner (rank r ^ 1, or itself when that rank does not exist).  Every receive is posted and
 * announced to the sender before the data is sent, so ready mode is correct, and every mode
 * is exercised both ways in the pair at the same time.
 */
#include "mtest.h"

enum { M_SEND, M_BSEND, M_SSEND, M_RSEND, M_ISEND, M_IBSEND, M_ISSEND, M_IRSEND, NMODES };
static const char *mode_names[NMODES] = {"MPI_Send",  "MPI_Bsend",  "MPI_Ssend",  "MPI_Rsend",
                                         "MPI_Isend", "MPI_Ibsend", "MPI_Issend", "MPI_Irsend"};
static const int sizes[] = {0, 1, 4, 1000, 16384, 65537, 262144};
#define NSIZES ((int)(sizeof sizes / sizeof sizes[0]))
#define TAG_READY 1
#define TAG_DATA 2

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int rank = mtest_rank(), size = mtest_size();
    int partner = (rank ^ 1) < size ? (rank ^ 1) : rank;
    int maxbytes = sizes[NSIZES - 1];

    /* Room for one buffered message at a time (MPI_Bsend) plus one MPI_Ibsend. */
    int packsize = 0;
    MTEST_CALL(MPI_Pack_size(maxbytes, MPI_BYTE, MPI_COMM_WORLD, &packsize));
    int bufsize = 2 * (packsize + MPI_BSEND_OVERHEAD);
    char *bbuf = mtest_malloc((size_t)bufsize);
    MTEST_CALL(MPI_Buffer_attach(bbuf, bufsize));

    unsigned char *sbuf = mtest_malloc((size_t)maxbytes);
    unsigned char *rbuf = mtest_malloc((size_t)maxbytes + 64);

    for (int m = 0; m < NMODES; m++) {
        for (int s = 0; s < NSIZES; s++) {
            int n = sizes[s];
            uint64_t seed_out = (uint64_t)(rank * 1000 + m * 10 + s);
            uint64_t seed_in = (uint64_t)(partner * 1000 + m * 10 + s);
            mtest_fill(sbuf, (size_t)n, seed_out);
            memset(rbuf, 0xEE, (size_t)maxbytes + 64);

            MPI_Request rreq, ready_req, sreq = MPI_REQUEST_NULL;
            MPI_Status st;
            int dummy = 0, ready = -1;
            /* post the data receive, then tell the partner */
            MTEST_CALL(MPI_Irecv(rbuf, maxbytes + 64, MPI_BYTE, partner, TAG_DATA, MPI_COMM_WORLD, &rreq));
            MTEST_CALL(MPI_Irecv(&ready, 1, MPI_INT, partner, TAG_READY, MPI_COMM_WORLD, &ready_req));
            MTEST_CALL(MPI_Send(&dummy, 1, MPI_INT, partner, TAG_READY, MPI_COMM_WORLD));
            MTEST_CALL(MPI_Wait(&ready_req, MPI_STATUS_IGNORE));

            switch (m) {
            case M_SEND:
                MTEST_CALL(MPI_Send(sbuf, n, MPI_BYTE, partner, TAG_DATA, MPI_COMM_WORLD));
                break;
            case M_BSEND:
                MTEST_CALL(MPI_Bsend(sbuf, n, MPI_BYTE, partner, TAG_DATA, MPI_COMM_WORLD));
                /* buffered: the user buffer may be reused at once */
                memset(sbuf, 0x55, (size_t)n);
                break;
            case M_SSEND:
                MTEST_CALL(MPI_Ssend(sbuf, n, MPI_BYTE, partner, TAG_DATA, MPI_COMM_WORLD));
                break;
            case M_RSEND:
                MTEST_CALL(MPI_Rsend(sbuf, n, MPI_BYTE, partner, TAG_DATA, MPI_COMM_WORLD));
                break;
            case M_ISEND:
                MTEST_CALL(MPI_Isend(sbuf, n, MPI_BYTE, partner, TAG_DATA, MPI_COMM_WORLD, &sreq));
                break;
            case M_IBSEND:
                MTEST_CALL(MPI_Ibsend(sbuf, n, MPI_BYTE, partner, TAG_DATA, MPI_COMM_WORLD, &sreq));
                break;
            case M_ISSEND:
                MTEST_CALL(MPI_Issend(sbuf, n, MPI_BYTE, partner, TAG_DATA, MPI_COMM_WORLD, &sreq));
                break;
            case M_IRSEND:
                MTEST_CALL(MPI_Irsend(sbuf, n, MPI_BYTE, partner, TAG_DATA, MPI_COMM_WORLD, &sreq));
                break;
            }
            MTEST_CALL(MPI_Wait(&rreq, &st));
            if (sreq != MPI_REQUEST_NULL) {
                MPI_Status sst;
                MTEST_CALL(MPI_Wait(&sreq, &sst));
                MTEST_CHECK(sreq == MPI_REQUEST_NULL, "%s: request not MPI_REQUEST_NULL after MPI_Wait",
                            mode_names[m]);
                int cancelled = -1;
                MTEST_CALL(MPI_Test_cancelled(&sst, &cancelled));
                MTEST_EQ("MPI_Test_cancelled on a completed send", 0, cancelled);
            }
            int cnt = -1;
            MTEST_CALL(MPI_Get_count(&st, MPI_BYTE, &cnt));
            MTEST_CHECK(cnt == n && st.MPI_SOURCE == partner && st.MPI_TAG == TAG_DATA,
                        "%s %d bytes: status count %d source %d tag %d", mode_names[m], n, cnt,
                        st.MPI_SOURCE, st.MPI_TAG);
            char what[64];
            snprintf(what, sizeof what, "%s %d bytes", mode_names[m], n);
            mtest_verify(rbuf, (size_t)n, seed_in, what);
            mtest_verify_const(rbuf + n, 64, 0xEE, "receive buffer past the message");
        }
    }

    void *addr = NULL;
    int dsize = -1;
    MTEST_CALL(MPI_Buffer_detach(&addr, &dsize));
    MTEST_CHECK(addr == bbuf, "MPI_Buffer_detach returned %p, attached %p", addr, (void *)bbuf);
    MTEST_EQ("MPI_Buffer_detach size", bufsize, dsize);
    free(bbuf);
    free(sbuf);
    free(rbuf);
    return mtest_finalize();
}
