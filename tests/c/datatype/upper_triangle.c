/*
 * The standard's indexed-type example (MPI-4.1 section 5.1.14), in C's row-major order:
 * the upper triangular part (diagonal included) of a 100x100 matrix described with
 * MPI_Type_indexed — row i starts at i*N + i and holds N - i elements.  Rank 0 sends it to
 * the last rank (itself on one rank), which receives it (a) with the same type into a
 * matrix, whose lower part must stay untouched, and (b) as N(N+1)/2 contiguous doubles
 * (same signature), which must be the rows of the triangle one after the other.  Finally
 * the matrix is sent back with MPI_Sendrecv_replace into the triangle of a second matrix.
 */
#include "mtest.h"

#define N 100

static double a[N][N], b[N][N], flat[N * (N + 1) / 2];

static double value(int i, int j)
{
    return i * 1000.0 + j + 0.5;
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int me = mtest_rank(), last = mtest_size() - 1;
    int disp[N], blocklen[N];
    MPI_Datatype upper;
    MPI_Status st;

    for (int i = 0; i < N; i++) {
        disp[i] = i * N + i;
        blocklen[i] = N - i;
    }
    MTEST_CALL(MPI_Type_indexed(N, blocklen, disp, MPI_DOUBLE, &upper));
    MTEST_CALL(MPI_Type_commit(&upper));
    int size;
    MPI_Aint lb, extent;
    MTEST_CALL(MPI_Type_size(upper, &size));
    MTEST_CALL(MPI_Type_get_extent(upper, &lb, &extent));
    MTEST_EQ("size of the triangle type", (long long)sizeof(double) * N * (N + 1) / 2, size);
    MTEST_EQ("lb of the triangle type", 0, lb);
    MTEST_EQ("extent of the triangle type", (long long)sizeof(double) * N * N, extent);

    for (int i = 0; i < N; i++) {
        for (int j = 0; j < N; j++) {
            a[i][j] = value(i, j);
            b[i][j] = -1.0;
        }
    }
    for (int pass = 0; pass < 2; pass++) {
        MPI_Request r = MPI_REQUEST_NULL;
        if (me == last) {
            if (pass == 0) {
                MTEST_CALL(MPI_Irecv(b, 1, upper, 0, pass, MPI_COMM_WORLD, &r));
            } else {
                MTEST_CALL(MPI_Irecv(flat, N * (N + 1) / 2, MPI_DOUBLE, 0, pass, MPI_COMM_WORLD, &r));
            }
        }
        if (me == 0) {
            MTEST_CALL(MPI_Send(a, 1, upper, last, pass, MPI_COMM_WORLD));
        }
        if (me == last) {
            MTEST_CALL(MPI_Wait(&r, &st));
            if (pass == 0) {
                MTEST_STATUS(&st, 0, pass, upper, 1);
                int bad = 0;
                for (int i = 0; i < N && bad < 5; i++) {
                    for (int j = 0; j < N && bad < 5; j++) {
                        double want = j >= i ? value(i, j) : -1.0;
                        if (b[i][j] != want) {
                            MTEST_CHECK(0, "b[%d][%d] = %g, expected %g", i, j, b[i][j], want);
                            bad++;
                        }
                    }
                }
            } else {
                MTEST_STATUS(&st, 0, pass, MPI_DOUBLE, N * (N + 1) / 2);
                int k = 0, bad = 0;
                for (int i = 0; i < N; i++) {
                    for (int j = i; j < N; j++, k++) {
                        if (flat[k] != value(i, j) && bad++ < 5) {
                            MTEST_CHECK(0, "flat[%d] = %g, expected a[%d][%d]", k, flat[k], i, j);
                        }
                    }
                }
            }
        }
    }

    /* Replace the triangle of a matrix in place: rank 0 and the last rank swap triangles
     * (on one rank, a matrix swaps with itself). */
    for (int i = 0; i < N; i++) {
        for (int j = 0; j < N; j++) {
            b[i][j] = me * 1.0e6 + value(i, j);
        }
    }
    if (me == 0 || me == last) {
        int other = me == 0 ? last : 0;
        MTEST_CALL(MPI_Sendrecv_replace(b, 1, upper, other, 7, other, 7, MPI_COMM_WORLD, &st));
        int bad = 0;
        for (int i = 0; i < N; i++) {
            for (int j = 0; j < N; j++) {
                double want = (j >= i ? other : me) * 1.0e6 + value(i, j);
                if (b[i][j] != want && bad++ < 5) {
                    MTEST_CHECK(0, "after Sendrecv_replace b[%d][%d] = %g, expected %g", i, j, b[i][j],
                                want);
                }
            }
        }
    }
    MTEST_CALL(MPI_Type_free(&upper));
    return mtest_finalize();
}
