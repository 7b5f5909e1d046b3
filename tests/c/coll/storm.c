/*
 * A storm of several hundred collectives of every kind, back to back, with kinds, roots,
 * counts and communicators (MPI_COMM_WORLD, a duplicate, a reversed one) drawn from one
 * seeded generator that every rank runs identically; every result is checked.
 */
#include "mtest.h"
#include "common.h"

#define ROUNDS 400
#define MAXC 600

static int v(int it, int rank, int i)
{
    return cval(it, rank, i) % 1000;
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int n = mtest_size();
    MPI_Comm comms[3];
    comms[0] = MPI_COMM_WORLD;
    MTEST_CALL(MPI_Comm_dup(MPI_COMM_WORLD, &comms[1]));
    comms[2] = reversed_world();
    int *s = mtest_malloc(sizeof(int) * MAXC * n), *d = mtest_malloc(sizeof(int) * MAXC * n);
    int *counts = mtest_malloc(sizeof(int) * n), *displs = mtest_malloc(sizeof(int) * n);
    mtest_rng rng = mtest_rng_new(12345);
    for (int it = 0; it < ROUNDS; it++) {
        MPI_Comm c = comms[mtest_rng_below(&rng, 3)];
        int r;
        MTEST_CALL(MPI_Comm_rank(c, &r));
        int kind = (int)mtest_rng_below(&rng, 10);
        int root = (int)mtest_rng_below(&rng, n);
        int cnt = (int)mtest_rng_below(&rng, 8) == 0 ? (int)mtest_rng_below(&rng, MAXC) : (int)mtest_rng_below(&rng, 4);
        for (int i = 0; i < cnt * n; i++) s[i] = v(it, r, i), d[i] = -1;
        char what[64];
        snprintf(what, sizeof what, "round %d kind %d count %d root %d", it, kind, cnt, root);
        switch (kind) {
        case 0:
            MTEST_CALL(MPI_Barrier(c));
            break;
        case 1:
            MTEST_CALL(MPI_Bcast(r == root ? s : d, cnt, MPI_INT, root, c));
            if (r != root) CHECK_INTS(what, d, cnt, v(it, root, (int)i));
            break;
        case 2:
            MTEST_CALL(MPI_Allreduce(s, d, cnt, MPI_INT, MPI_SUM, c));
            for (int i = 0; i < cnt; i++) {
                int e = 0;
                for (int k = 0; k < n; k++) e += v(it, k, i);
                if (d[i] != e) { mtest_fail_at(__FILE__, __LINE__, "%s: element %d", what, i); break; }
            }
            break;
        case 3:
            MTEST_CALL(MPI_Reduce(s, d, cnt, MPI_INT, MPI_MAX, root, c));
            if (r == root) {
                for (int i = 0; i < cnt; i++) {
                    int e = 0;
                    for (int k = 0; k < n; k++) e = v(it, k, i) > e ? v(it, k, i) : e;
                    if (d[i] != e) { mtest_fail_at(__FILE__, __LINE__, "%s: element %d", what, i); break; }
                }
            }
            break;
        case 4:
            MTEST_CALL(MPI_Gather(s, cnt, MPI_INT, d, cnt, MPI_INT, root, c));
            if (r == root) CHECK_INTS(what, d, cnt * n, v(it, (int)i / cnt, (int)i % cnt));
            break;
        case 5:
            MTEST_CALL(MPI_Scatter(s, cnt, MPI_INT, d, cnt, MPI_INT, root, c));
            CHECK_INTS(what, d, cnt, v(it, root, r * cnt + (int)i));
            break;
        case 6:
            MTEST_CALL(MPI_Allgather(s, cnt, MPI_INT, d, cnt, MPI_INT, c));
            CHECK_INTS(what, d, cnt * n, v(it, (int)i / cnt, (int)i % cnt));
            break;
        case 7:
            MTEST_CALL(MPI_Alltoall(s, cnt, MPI_INT, d, cnt, MPI_INT, c));
            CHECK_INTS(what, d, cnt * n, v(it, (int)i / cnt, r * cnt + (int)i % cnt));
            break;
        case 8: {
            int at = 0;
            for (int k = 0; k < n; k++) counts[k] = (k + it) % 3 ? cnt : 0;
            for (int k = n - 1; k >= 0; k--) displs[k] = at, at += counts[k];
            MTEST_CALL(MPI_Allgatherv(s, counts[r], MPI_INT, d, counts, displs, MPI_INT, c));
            for (int k = 0; k < n; k++) CHECK_INTS(what, d + displs[k], counts[k], v(it, k, (int)i));
            break;
        }
        default:
            MTEST_CALL(MPI_Scan(s, d, cnt, MPI_INT, MPI_SUM, c));
            for (int i = 0; i < cnt; i++) {
                int e = 0;
                for (int k = 0; k <= r; k++) e += v(it, k, i);
                if (d[i] != e) { mtest_fail_at(__FILE__, __LINE__, "%s: element %d", what, i); break; }
            }
            break;
        }
    }
    free(s); free(d); free(counts); free(displs);
    MTEST_CALL(MPI_Comm_free(&comms[1]));
    MTEST_CALL(MPI_Comm_free(&comms[2]));
    return mtest_finalize();
}
