/*
 * The standard's matrix-transpose examples (MPI-4.1 section 5.1.14) in C: a column of a
 * row-major 100x100 matrix is MPI_Type_vector(100, 1, 100); the transpose is
 *   (a) MPI_Type_create_hvector(100, 1, sizeof(double), column): one element = the whole
 *       matrix column by column, and
 *   (b) the column resized to extent sizeof(double), sent with count 100.
 * Rank 0 sends a matrix with each form and the last rank (itself on one rank) receives
 * 100*100 contiguous doubles, which must be the transpose.  Also: receiving with the
 * transpose type (the receiver transposes), and the transpose of a transpose is the matrix.
 */
#include "mtest.h"

#define N 100

static double a[N][N], b[N][N];

static double value(int i, int j)
{
    return i * 1000.0 + j;
}

static void check_transposed(const char *what)
{
    int bad = 0;
    for (int i = 0; i < N; i++) {
        for (int j = 0; j < N; j++) {
            if (b[i][j] != value(j, i) && bad++ < 5) {
                MTEST_CHECK(0, "%s: b[%d][%d] = %g, expected a[%d][%d] = %g", what, i, j, b[i][j], j,
                            i, value(j, i));
            }
        }
    }
}

/* rank 0 sends (buf, scount, stype); the last rank receives (b, rcount, rtype). */
static void move(void *sbuf, int scount, MPI_Datatype stype, int rcount, MPI_Datatype rtype, int tag)
{
    int me = mtest_rank(), last = mtest_size() - 1;
    MPI_Request r = MPI_REQUEST_NULL;
    if (me == last) {
        for (int i = 0; i < N; i++) {
            for (int j = 0; j < N; j++) {
                b[i][j] = -1.0;
            }
        }
        MTEST_CALL(MPI_Irecv(b, rcount, rtype, 0, tag, MPI_COMM_WORLD, &r));
    }
    if (me == 0) {
        MTEST_CALL(MPI_Send(sbuf, scount, stype, last, tag, MPI_COMM_WORLD));
    }
    MTEST_CALL(MPI_Wait(&r, MPI_STATUS_IGNORE));
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int me = mtest_rank(), last = mtest_size() - 1;
    MPI_Datatype column, xpose, column1;

    for (int i = 0; i < N; i++) {
        for (int j = 0; j < N; j++) {
            a[i][j] = value(i, j);
        }
    }
    MTEST_CALL(MPI_Type_vector(N, 1, N, MPI_DOUBLE, &column));
    MTEST_CALL(MPI_Type_create_hvector(N, 1, sizeof(double), column, &xpose));
    MTEST_CALL(MPI_Type_commit(&xpose));
    MTEST_CALL(MPI_Type_create_resized(column, 0, sizeof(double), &column1));
    MTEST_CALL(MPI_Type_commit(&column1));

    MPI_Aint lb, extent;
    MTEST_CALL(MPI_Type_get_extent(xpose, &lb, &extent));
    MTEST_EQ("extent of the transpose type", (long long)sizeof(double) * ((N - 1) * N + N), extent);

    move(a, 1, xpose, N * N, MPI_DOUBLE, 1);
    if (me == last) {
        check_transposed("hvector of columns");
    }
    move(a, N, column1, N * N, MPI_DOUBLE, 2);
    if (me == last) {
        check_transposed("resized column, count 100");
    }
    /* The receiver transposes: contiguous in, transpose type out. */
    move(a, N * N, MPI_DOUBLE, 1, xpose, 3);
    if (me == last) {
        check_transposed("received with the transpose type");
    }
    move(a, N * N, MPI_DOUBLE, N, column1, 4);
    if (me == last) {
        check_transposed("received with resized columns");
    }
    /* Transposing on both sides gives the matrix back. */
    move(a, 1, xpose, 1, xpose, 5);
    if (me == last) {
        int bad = 0;
        for (int i = 0; i < N; i++) {
            for (int j = 0; j < N; j++) {
                if (b[i][j] != value(i, j) && bad++ < 5) {
                    MTEST_CHECK(0, "double transpose: b[%d][%d] = %g", i, j, b[i][j]);
                }
            }
        }
    }
    MTEST_CALL(MPI_Type_free(&column));
    MTEST_CALL(MPI_Type_free(&xpose));
    MTEST_CALL(MPI_Type_free(&column1));
    return mtest_finalize();
}
