/*
 * Persistent reductions started many times, on a communicator that already ran blocking
 * collectives (so oxmpi plans them once on its shared-memory path, with the fold fixed
 * at initialisation): several in flight at once (MPI_Startall, completed in reverse or
 * by MPI_Test loops), interleaved with blocking and nonblocking collectives on the same
 * communicator and with persistent ones on a second and a split communicator; sums,
 * extrema, products and bitwise operations on several types, MPI_IN_PLACE,
 * Reduce/Scan/Exscan, and a non-commutative user operation on a derived type (2x2
 * matrix products, the general path). Every result is checked on every round.
 */
#include "mtest.h"

#define ROUNDS 120
#define MOD 1000003L

/* inout = in * inout for 2x2 matrices (row-major longs), modulo MOD: associative, not
 * commutative, so the result must be M0 * M1 * ... in rank order. */
static void matmul(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    long *a = in, *b = inout;
    for (int i = 0; i < *len; i++, a += 4, b += 4) {
        long c[4] = {(a[0] * b[0] + a[1] * b[2]) % MOD, (a[0] * b[1] + a[1] * b[3]) % MOD,
                     (a[2] * b[0] + a[3] * b[2]) % MOD, (a[2] * b[1] + a[3] * b[3]) % MOD};
        for (int j = 0; j < 4; j++) b[j] = c[j];
    }
}

static void mat_of(int r, int k, long *m)
{
    m[0] = r + 1;
    m[1] = k % 7;
    m[2] = (r * 3 + k) % 5;
    m[3] = 1;
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int r = mtest_rank(), n = mtest_size();
    MPI_Comm w, half;
    MTEST_CALL(MPI_Comm_dup(MPI_COMM_WORLD, &w));
    MTEST_CALL(MPI_Comm_split(MPI_COMM_WORLD, r % 2, r, &half));
    int hr, hn;
    MPI_Comm_rank(half, &hr);
    MPI_Comm_size(half, &hn);
    /* Blocking calls first: they set up the communicators' shared-memory path. */
    MTEST_CALL(MPI_Barrier(w));
    MTEST_CALL(MPI_Barrier(half));

    double din = 0, dout = 0;
    int imax[5], ibuf[5];
    long lin_place[3];
    float fin = 0, fout = 0;
    long long bin = 0, bout = 0;
    long rin = 0, red_out = 0, scan_out = 0, ex_out = -1, hsum = 0, hin = 0;
    long min[4], mout[4];
    MPI_Op mat;
    MTEST_CALL(MPI_Op_create(matmul, 0, &mat));
    MPI_Datatype m2;
    MTEST_CALL(MPI_Type_contiguous(4, MPI_LONG, &m2));
    MTEST_CALL(MPI_Type_commit(&m2));

    int root = n - 1;
    enum { SUM_D, MAX_I, INPLACE_L, PROD_F, BAND_LL, RED, SCAN, EXSCAN, USER,
           HALF, NREQ };
    MPI_Request p[NREQ];
    MTEST_CALL(MPI_Allreduce_init(&din, &dout, 1, MPI_DOUBLE, MPI_SUM, w, MPI_INFO_NULL, &p[SUM_D]));
    MTEST_CALL(MPI_Allreduce_init(imax, ibuf, 5, MPI_INT, MPI_MAX, w, MPI_INFO_NULL, &p[MAX_I]));
    MTEST_CALL(MPI_Allreduce_init(MPI_IN_PLACE, lin_place, 3, MPI_LONG, MPI_SUM, w, MPI_INFO_NULL,
                                  &p[INPLACE_L]));
    MTEST_CALL(MPI_Allreduce_init(&fin, &fout, 1, MPI_FLOAT, MPI_PROD, w, MPI_INFO_NULL, &p[PROD_F]));
    MTEST_CALL(MPI_Allreduce_init(&bin, &bout, 1, MPI_LONG_LONG, MPI_BAND, w, MPI_INFO_NULL,
                                  &p[BAND_LL]));
    MTEST_CALL(MPI_Reduce_init(&rin, &red_out, 1, MPI_LONG, MPI_SUM, root, w, MPI_INFO_NULL, &p[RED]));
    MTEST_CALL(MPI_Scan_init(&hin, &scan_out, 1, MPI_LONG, MPI_SUM, w, MPI_INFO_NULL, &p[SCAN]));
    MTEST_CALL(MPI_Exscan_init(&hin, &ex_out, 1, MPI_LONG, MPI_SUM, w, MPI_INFO_NULL, &p[EXSCAN]));
    MTEST_CALL(MPI_Allreduce_init(min, mout, 1, m2, mat, w, MPI_INFO_NULL, &p[USER]));
    MTEST_CALL(MPI_Allreduce_init(&hin, &hsum, 1, MPI_LONG, MPI_SUM, half, MPI_INFO_NULL, &p[HALF]));

    for (int k = 0; k < ROUNDS; k++) {
        din = r + 1 + k;
        rin = r + 1 + k;
        for (int j = 0; j < 5; j++) imax[j] = (r * 7 + j * 3 + k) % 11;
        for (int j = 0; j < 3; j++) lin_place[j] = r * (j + 1) + k;
        fin = (r % 3) + 1;
        bin = ~(1LL << (r % 60));
        hin = r + k;
        mat_of(r, k, min);
        ex_out = -1;
        int mode = k % 4;
        if (mode == 0) {
            /* Everything in flight at once, completed in reverse. */
            MTEST_CALL(MPI_Startall(NREQ, p));
            for (int j = NREQ - 1; j >= 0; j--) MTEST_CALL(MPI_Wait(&p[j], MPI_STATUS_IGNORE));
        } else if (mode == 1) {
            /* Started one by one, blocking and nonblocking calls in between. */
            long b = 0, nb = 0, bb = r;
            MPI_Request q;
            MTEST_CALL(MPI_Start(&p[SUM_D]));
            MTEST_CALL(MPI_Allreduce(&bb, &b, 1, MPI_LONG, MPI_SUM, w));
            MTEST_CALL(MPI_Iallreduce(&bb, &nb, 1, MPI_LONG, MPI_MAX, w, &q));
            MTEST_CALL(MPI_Startall(NREQ - 1, &p[1]));
            MTEST_CALL(MPI_Bcast(&bb, 1, MPI_LONG, 0, half));
            MTEST_CALL(MPI_Wait(&q, MPI_STATUS_IGNORE));
            MTEST_CALL(MPI_Waitall(NREQ, p, MPI_STATUSES_IGNORE));
            MTEST_EQ("blocking sum", (long)n * (n - 1) / 2, b);
            MTEST_EQ("nonblocking max", (long)(n - 1), nb);
        } else if (mode == 2) {
            /* Completed by testing. */
            MTEST_CALL(MPI_Startall(NREQ, p));
            int flags[NREQ] = {0}, left = NREQ;
            while (left > 0)
                for (int j = 0; j < NREQ; j++)
                    if (!flags[j]) {
                        MTEST_CALL(MPI_Test(&p[j], &flags[j], MPI_STATUS_IGNORE));
                        left -= flags[j];
                    }
        } else {
            /* One at a time, each waited at once. */
            for (int j = 0; j < NREQ; j++) {
                MTEST_CALL(MPI_Start(&p[j]));
                MTEST_CALL(MPI_Wait(&p[j], MPI_STATUS_IGNORE));
            }
        }
        MTEST_EQ("double sum", (long)n * (n + 1) / 2 + (long)n * k, (long)dout);
        MTEST_EQ("double sum exact", 1, dout == (double)((long)n * (n + 1) / 2 + (long)n * k));
        if (r == root) MTEST_EQ("reduce", (long)n * (n + 1) / 2 + (long)n * k, red_out);
        for (int j = 0; j < 5; j++) {
            int m = -1;
            for (int q = 0; q < n; q++) {
                int v = (q * 7 + j * 3 + k) % 11;
                if (v > m) m = v;
            }
            MTEST_EQ("max", m, ibuf[j]);
        }
        for (int j = 0; j < 3; j++)
            MTEST_EQ("in place", (long)(j + 1) * n * (n - 1) / 2 + (long)n * k, lin_place[j]);
        float fp = 1;
        for (int q = 0; q < n; q++) fp *= (q % 3) + 1;
        MTEST_EQ("prod", (long)fp, (long)fout);
        long long band = ~0LL;
        for (int q = 0; q < n; q++) band &= ~(1LL << (q % 60));
        MTEST_EQ("band", 1, bout == band);
        MTEST_EQ("scan", (long)r * (r + 1) / 2 + (long)(r + 1) * k, scan_out);
        if (r > 0) MTEST_EQ("exscan", (long)(r - 1) * r / 2 + (long)r * k, ex_out);
        long acc[4] = {1, 0, 0, 1}, m[4], tmp[4];
        for (int q = 0; q < n; q++) {
            mat_of(q, k, m);
            tmp[0] = (acc[0] * m[0] + acc[1] * m[2]) % MOD;
            tmp[1] = (acc[0] * m[1] + acc[1] * m[3]) % MOD;
            tmp[2] = (acc[2] * m[0] + acc[3] * m[2]) % MOD;
            tmp[3] = (acc[2] * m[1] + acc[3] * m[3]) % MOD;
            memcpy(acc, tmp, sizeof acc);
        }
        for (int j = 0; j < 4; j++) MTEST_EQ("user op (rank order)", acc[j], mout[j]);
        long hs = 0;
        for (int q = r % 2; q < n; q += 2) hs += q + k;
        MTEST_EQ("split communicator", hs, hsum);
        (void)hr;
        (void)hn;
    }
    for (int j = 0; j < NREQ; j++) MTEST_CALL(MPI_Request_free(&p[j]));
    MTEST_CALL(MPI_Op_free(&mat));
    MTEST_CALL(MPI_Type_free(&m2));
    MTEST_CALL(MPI_Comm_free(&half));
    MTEST_CALL(MPI_Comm_free(&w));
    return mtest_finalize();
}
