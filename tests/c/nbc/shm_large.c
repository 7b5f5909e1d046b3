/*
 * Nonblocking and persistent collectives larger than one shared-memory slot (oxmpi
 * moves them through its staging areas in pieces when the node is oversubscribed or
 * OXMPI_COLL_SHM_LARGE_MAX is set) on two communicators that already ran blocking
 * collectives: several outstanding at once on both, a blocking large all-reduce and
 * ring messages between the starts and the waits, completion in changing orders
 * (reverse waits, Waitall, Testsome loops). Sizes from a few slots to several staging
 * pieces (up to 1 MiB per rank at 2 ranks); sums, maxima, bitwise and MINLOC reductions
 * on int, long long, double and MPI_DOUBLE_INT (whose extent has a gap), a broadcast of a
 * strided vector type, and all-to-alls of int blocks. Every value is checked every round.
 */
#include "mtest.h"

#define ROUNDS 6
#define NREQ 8

typedef struct {
    double v;
    int i;
} dint;

static void wait_all(int k, MPI_Request *q, int m)
{
    switch (k % 3) {
    case 0:
        for (int i = m - 1; i >= 0; i--)
            MTEST_CALL(MPI_Wait(&q[i], MPI_STATUS_IGNORE));
        break;
    case 1:
        MTEST_CALL(MPI_Waitall(m, q, MPI_STATUSES_IGNORE));
        break;
    default: {
        int left = m;
        while (left > 0) {
            int idx[NREQ + 2], got = 0;
            MTEST_CALL(MPI_Testsome(m, q, &got, idx, MPI_STATUSES_IGNORE));
            if (got == MPI_UNDEFINED)
                break;
            left -= got;
        }
    }
    }
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int r = mtest_rank(), n = mtest_size();
    MPI_Comm a, b;
    MTEST_CALL(MPI_Comm_dup(MPI_COMM_WORLD, &a));
    MTEST_CALL(MPI_Comm_dup(MPI_COMM_WORLD, &b));
    MTEST_CALL(MPI_Barrier(a));
    MTEST_CALL(MPI_Barrier(b));
    /* Per-rank vectors: about 1 MiB of doubles at 2 ranks, less at more (8 ranks
     * oversubscribe the machine). */
    int big = n <= 2 ? 131072 : n <= 4 ? 40000 : 20000;
    int mid = 1500; /* a few slots */
    int blk = n <= 2 ? 20000 : 700; /* all-to-all block (ints, at least 300) */
    double *dsend = mtest_malloc(sizeof(double) * big), *dsum = mtest_malloc(sizeof(double) * big);
    double *pin = mtest_malloc(sizeof(double) * big), *pout = mtest_malloc(sizeof(double) * big);
    double *bsum = mtest_malloc(sizeof(double) * mid);
    int *imax = mtest_malloc(sizeof(int) * mid), *isend = mtest_malloc(sizeof(int) * mid);
    long long *land = mtest_malloc(sizeof(long long) * mid), *lsend = mtest_malloc(sizeof(long long) * mid);
    dint *loc = mtest_malloc(sizeof(dint) * mid), *lmin = mtest_malloc(sizeof(dint) * mid);
    int *ata_in = mtest_malloc(sizeof(int) * blk * n), *ata_out = mtest_malloc(sizeof(int) * blk * n);
    int *ata_ip = mtest_malloc(sizeof(int) * 300 * n);
    /* Broadcast of every other int of 2 * mid ints. */
    int *bc = mtest_malloc(sizeof(int) * 2 * mid);
    MPI_Datatype strided;
    MTEST_CALL(MPI_Type_vector(mid, 1, 2, MPI_INT, &strided));
    MTEST_CALL(MPI_Type_commit(&strided));
    MPI_Request pers;
    MTEST_CALL(MPI_Allreduce_init(pin, pout, big, MPI_DOUBLE, MPI_SUM, b, MPI_INFO_NULL, &pers));

    for (int k = 0; k < ROUNDS; k++) {
        int root = (k + 1) % n;
        for (int i = 0; i < big; i++) {
            dsend[i] = r + i % 97 + k;
            dsum[i] = -1;
            pin[i] = 2 * r + i % 13;
            pout[i] = -1;
        }
        for (int i = 0; i < mid; i++) {
            bsum[i] = -1;
            isend[i] = (r * 7 + i + k) % 101;
            imax[i] = -1;
            lsend[i] = ~(1LL << ((r + i) % 60));
            land[i] = 0;
            loc[i].v = (double)((r + i + k) % n);
            loc[i].i = r;
            lmin[i].v = -1;
            lmin[i].i = -1;
            bc[2 * i] = r == root ? 5 * i + k : -1;
            bc[2 * i + 1] = -2;
        }
        for (int j = 0; j < n; j++)
            for (int i = 0; i < blk; i++) {
                ata_in[j * blk + i] = 100000 * r + 1000 * j + i % 1000 + k;
                ata_out[j * blk + i] = -1;
            }
        MPI_Request q[NREQ];
        MTEST_CALL(MPI_Start(&pers));
        MTEST_CALL(MPI_Iallreduce(dsend, dsum, big, MPI_DOUBLE, MPI_SUM, a, &q[0]));
        MTEST_CALL(MPI_Ibcast(bc, 1, strided, root, a, &q[1]));
        MTEST_CALL(MPI_Iallreduce(isend, imax, mid, MPI_INT, MPI_MAX, b, &q[2]));
        MTEST_CALL(MPI_Ialltoall(ata_in, blk, MPI_INT, ata_out, blk, MPI_INT, a, &q[3]));
        MTEST_CALL(MPI_Iallreduce(lsend, land, mid, MPI_LONG_LONG, MPI_BAND, a, &q[4]));
        /* A blocking large collective while nonblocking ones are outstanding on both
         * communicators. */
        MTEST_CALL(MPI_Allreduce(dsend, bsum, mid, MPI_DOUBLE, MPI_SUM, b));
        MTEST_CALL(MPI_Iallreduce(loc, lmin, mid, MPI_DOUBLE_INT, MPI_MINLOC, b, &q[5]));
        if (n > 1) {
            int out = r + k, in = -1;
            MTEST_CALL(MPI_Sendrecv(&out, 1, MPI_INT, (r + 1) % n, 5, &in, 1, MPI_INT,
                                    (r + n - 1) % n, 5, a, MPI_STATUS_IGNORE));
            MTEST_EQ("ring message", (r + n - 1) % n + k, in);
        }
        /* In place, on the second communicator. */
        for (int j = 0; j < n; j++)
            for (int i = 0; i < 300; i++)
                ata_ip[j * 300 + i] = 10 * r + j;
        MTEST_CALL(MPI_Ialltoall(MPI_IN_PLACE, 0, MPI_INT, ata_ip, 300, MPI_INT, b, &q[6]));
        MTEST_CALL(MPI_Ibarrier(a, &q[7]));
        wait_all(k, q, NREQ);
        MTEST_CALL(MPI_Wait(&pers, MPI_STATUS_IGNORE));

        int errs = 0;
        for (int i = 0; i < big && errs < 5; i++) {
            double want = (double)n * (n - 1) / 2 + (double)n * (i % 97 + k);
            if (dsum[i] != want) {
                MTEST_EQ("iallreduce double sum", want, dsum[i]);
                errs++;
            }
            want = (double)n * (n - 1) + (double)n * (i % 13);
            if (pout[i] != want) {
                MTEST_EQ("persistent allreduce", want, pout[i]);
                errs++;
            }
        }
        for (int i = 0; i < mid && errs < 5; i++) {
            double ws = (double)n * (n - 1) / 2 + (double)n * (i % 97 + k);
            int wm = -1;
            long long wa = ~0LL;
            dint wl = {1e300, -1};
            for (int s = 0; s < n; s++) {
                int v = (s * 7 + i + k) % 101;
                wm = v > wm ? v : wm;
                wa &= ~(1LL << ((s + i) % 60));
                double lv = (double)((s + i + k) % n);
                if (lv < wl.v) {
                    wl.v = lv;
                    wl.i = s;
                }
            }
            int bad = bsum[i] != ws || imax[i] != wm || land[i] != wa || lmin[i].v != wl.v ||
                      lmin[i].i != wl.i || bc[2 * i] != 5 * i + k || bc[2 * i + 1] != -2;
            if (bad) {
                MTEST_EQ("blocking allreduce", ws, bsum[i]);
                MTEST_EQ("iallreduce int max", wm, imax[i]);
                MTEST_EQ("iallreduce long long band", wa, land[i]);
                MTEST_EQ("iallreduce minloc value", wl.v, lmin[i].v);
                MTEST_EQ("iallreduce minloc index", wl.i, lmin[i].i);
                MTEST_EQ("ibcast strided element", 5 * i + k, bc[2 * i]);
                MTEST_EQ("ibcast gap untouched", -2, bc[2 * i + 1]);
                errs++;
            }
        }
        for (int j = 0; j < n && errs < 5; j++) {
            for (int i = 0; i < blk; i++) {
                int want = 100000 * j + 1000 * r + i % 1000 + k;
                if (ata_out[j * blk + i] != want) {
                    MTEST_EQ("ialltoall element", want, ata_out[j * blk + i]);
                    errs++;
                    break;
                }
            }
            for (int i = 0; i < 300; i++) {
                if (ata_ip[j * 300 + i] != 10 * j + r) {
                    MTEST_EQ("in-place ialltoall element", 10 * j + r, ata_ip[j * 300 + i]);
                    errs++;
                    break;
                }
            }
        }
    }
    MTEST_CALL(MPI_Request_free(&pers));
    MTEST_CALL(MPI_Type_free(&strided));
    MTEST_CALL(MPI_Comm_free(&a));
    MTEST_CALL(MPI_Comm_free(&b));
    free(dsend);
    free(dsum);
    free(pin);
    free(pout);
    free(bsum);
    free(imax);
    free(isend);
    free(land);
    free(lsend);
    free(loc);
    free(lmin);
    free(ata_in);
    free(ata_out);
    free(ata_ip);
    free(bc);
    return mtest_finalize();
}
