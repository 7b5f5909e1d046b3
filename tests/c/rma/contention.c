/*
 * Accumulates from every rank on one location, under contention: MPI_Fetch_and_op
 * (MPI_SUM on long long, then on double), MPI_Accumulate (MPI_SUM on int, MPI_MAX on
 * int, MPI_SUM on float) and MPI_Get_accumulate (MPI_PROD on unsigned, through a
 * vector target type) on locations of rank 0's window, which all ranks hit at once.
 * The old values MPI_Fetch_and_op returns on the long long counter must be every value
 * from 0 to n*ITERS-1 exactly once (each increment saw a distinct state), and the final
 * values are exact.
 */
#include "mtest.h"
#include <stddef.h>

#define ITERS 200

struct cell {
    long long counter;
    double dsum;
    int isum, imax;
    float fsum;
    unsigned prod[3]; /* prod[0] and prod[2] through the vector type */
};

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int r = mtest_rank(), n = mtest_size();
    struct cell *c;
    MPI_Win win;
    MTEST_CALL(MPI_Win_allocate(r == 0 ? sizeof *c : 0, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &c, &win));
    MTEST_CALL(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    if (r == 0) {
        memset(c, 0, sizeof *c);
        c->prod[0] = c->prod[2] = 1;
    }
    MPI_Datatype ends;
    MTEST_CALL(MPI_Type_vector(2, 1, 2, MPI_UNSIGNED, &ends));
    MTEST_CALL(MPI_Type_commit(&ends));
    MTEST_CALL(MPI_Barrier(MPI_COMM_WORLD));

    long long one = 1, *olds = mtest_malloc(ITERS * sizeof *olds);
    double done = 1.0, dold;
    int two = 2;
    float half = 0.5f;
    unsigned three[2] = {3, 3}, pold[2];
    MTEST_CALL(MPI_Win_lock_all(0, win));
    for (int i = 0; i < ITERS; i++) {
        int mx = r * ITERS + i;
        MTEST_CALL(MPI_Fetch_and_op(&one, &olds[i], MPI_LONG_LONG, 0, offsetof(struct cell, counter), MPI_SUM, win));
        MTEST_CALL(MPI_Fetch_and_op(&done, &dold, MPI_DOUBLE, 0, offsetof(struct cell, dsum), MPI_SUM, win));
        MTEST_CALL(MPI_Accumulate(&two, 1, MPI_INT, 0, offsetof(struct cell, isum), 1, MPI_INT, MPI_SUM, win));
        MTEST_CALL(MPI_Accumulate(&mx, 1, MPI_INT, 0, offsetof(struct cell, imax), 1, MPI_INT, MPI_MAX, win));
        MTEST_CALL(MPI_Accumulate(&half, 1, MPI_FLOAT, 0, offsetof(struct cell, fsum), 1, MPI_FLOAT, MPI_SUM, win));
        if (i < 4) /* 3^(4n) stays exact in 32 bits for n <= 2; wraps identically otherwise */
            MTEST_CALL(MPI_Get_accumulate(three, 2, MPI_UNSIGNED, pold, 2, MPI_UNSIGNED, 0, offsetof(struct cell, prod), 1, ends, MPI_PROD, win));
        MTEST_CALL(MPI_Win_flush(0, win));
        MTEST_CHECK(dold >= 0.0 && dold < (double)n * ITERS && dold == (double)(long long)dold, "double counter read %g", dold);
    }
    MTEST_CALL(MPI_Win_unlock_all(win));

    /* Every old value of the counter exactly once. */
    long long *all = r == 0 ? mtest_malloc((size_t)n * ITERS * sizeof *all) : NULL;
    MTEST_CALL(MPI_Gather(olds, ITERS, MPI_LONG_LONG, all, ITERS, MPI_LONG_LONG, 0, MPI_COMM_WORLD));
    if (r == 0) {
        long long total = (long long)n * ITERS;
        char *seen = calloc((size_t)total, 1);
        for (long long k = 0; k < total; k++) {
            if (all[k] < 0 || all[k] >= total) {
                MTEST_CHECK(0, "fetch_and_op returned %lld, outside 0..%lld", all[k], total - 1);
            } else {
                MTEST_CHECK(!seen[all[k]], "fetch_and_op returned %lld twice", all[k]);
                seen[all[k]] = 1;
            }
        }
        free(seen);
        free(all);
        MTEST_CALL(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
        unsigned p = 1;
        for (int k = 0; k < 4 * n; k++)
            p *= 3u;
        MTEST_EQ("long long counter", total, c->counter);
        MTEST_CHECK(c->dsum == (double)total, "double sum %g, expected %lld", c->dsum, total);
        MTEST_EQ("int sum", 2 * total, c->isum);
        MTEST_EQ("int max", (n - 1) * ITERS + ITERS - 1, c->imax);
        MTEST_CHECK(c->fsum == 0.5f * (float)total, "float sum %g, expected %g", c->fsum, 0.5 * total);
        MTEST_EQ("product, first end", p, c->prod[0]);
        MTEST_EQ("product, untouched middle", 0, c->prod[1]);
        MTEST_EQ("product, second end", p, c->prod[2]);
        MTEST_CALL(MPI_Win_unlock(0, win));
    }
    free(olds);
    MTEST_CALL(MPI_Type_free(&ends));
    MTEST_CALL(MPI_Win_free(&win));
    return mtest_finalize();
}
