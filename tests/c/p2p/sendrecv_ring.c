/*
 * MPI_Sendrecv and MPI_Sendrecv_replace around rings: for every shift k = 1..size-1 (and
 * the self ring at size 1) each rank sends to rank+k and receives from rank-k at several
 * sizes, with specific and wildcard source/tag on the receive side and different send and
 * receive tags; MPI_Sendrecv_replace must send the old contents and leave the new ones.
 */
#include "mtest.h"

static const int counts[] = {0, 1, 1000, 100000};
#define NCOUNTS ((int)(sizeof counts / sizeof counts[0]))

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int rank = mtest_rank(), size = mtest_size();
    int maxc = counts[NCOUNTS - 1];
    int *out = mtest_malloc(sizeof(int) * (size_t)maxc), *in = mtest_malloc(sizeof(int) * (size_t)maxc);
    MPI_Status st;

    for (int k = (size > 1 ? 1 : 0); k < (size > 1 ? size : 1); k++) {
        int right = (rank + k) % size, left = (rank - k + size) % size;
        for (int c = 0; c < NCOUNTS; c++) {
            int n = counts[c];
            for (int i = 0; i < n; i++) {
                out[i] = rank * 1000000 + i + k;
                in[i] = -1;
            }
            int stag = 10 + k, rtag = 10 + k;
            int src = left;
            if (c == 1) {
                src = MPI_ANY_SOURCE;
            } else if (c == 2) {
                rtag = MPI_ANY_TAG;
            }
            MTEST_CALL(MPI_Sendrecv(out, n, MPI_INT, right, stag, in, n, MPI_INT, src, rtag, MPI_COMM_WORLD, &st));
            MTEST_STATUS(&st, left, 10 + k, MPI_INT, n);
            for (int i = 0; i < n; i++) {
                if (in[i] != left * 1000000 + i + k) {
                    MTEST_CHECK(0, "MPI_Sendrecv shift %d count %d: element %d expected %d got %d", k, n, i,
                                left * 1000000 + i + k, in[i]);
                    break;
                }
            }

            /* replace: send the buffer, receive into the same buffer; send tag != recv tag */
            for (int i = 0; i < n; i++) {
                in[i] = rank * 1000000 - i - k;
            }
            MTEST_CALL(MPI_Sendrecv_replace(in, n, MPI_INT, left, 500 + rank, right,
                                            c == 3 ? MPI_ANY_TAG : 500 + right, MPI_COMM_WORLD, &st));
            MTEST_STATUS(&st, right, 500 + right, MPI_INT, n);
            for (int i = 0; i < n; i++) {
                if (in[i] != right * 1000000 - i - k) {
                    MTEST_CHECK(0, "MPI_Sendrecv_replace shift %d count %d: element %d expected %d got %d", k,
                                n, i, right * 1000000 - i - k, in[i]);
                    break;
                }
            }
        }
        /* doubles, smaller receive count than buffer, MPI_STATUS_IGNORE */
        double dout[3] = {rank + 0.5, k * 2.0, -1.0}, din[5] = {0, 0, 0, 0, 7.0};
        MTEST_CALL(MPI_Sendrecv(dout, 3, MPI_DOUBLE, right, 1, din, 5, MPI_DOUBLE, left, 1, MPI_COMM_WORLD,
                                MPI_STATUS_IGNORE));
        MTEST_CHECK(din[0] == left + 0.5 && din[1] == k * 2.0 && din[2] == -1.0 && din[3] == 0 && din[4] == 7.0,
                    "MPI_Sendrecv of doubles shift %d: %g %g %g %g %g", k, din[0], din[1], din[2], din[3],
                    din[4]);
        MTEST_CALL(MPI_Sendrecv_replace(dout, 3, MPI_DOUBLE, left, 2, right, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        MTEST_CHECK(dout[0] == right + 0.5, "MPI_Sendrecv_replace of doubles shift %d: %g", k, dout[0]);
    }
    free(out);
    free(in);
    return mtest_finalize();
}
