/*
 * Collectives whose send and receive buffers are both MPI_BOTTOM, with the data located
 * by absolute addresses inside the datatypes (distinct arrays, so nothing is aliased):
 * MPI_Alltoallw, MPI_Alltoallv, MPI_Allgatherv, MPI_Gatherv, MPI_Scatterv. The aliasing
 * check must compare the memory the datatypes describe, not the two MPI_BOTTOMs.
 */
#include "mtest.h"
#include "common.h"

/* One int at address `a`, extent one int: element k of it at a + k * sizeof(int). */
static MPI_Datatype int_at(const void *a)
{
    MPI_Aint addr;
    MPI_Datatype t, r;
    int one = 1;
    MTEST_CALL(MPI_Get_address(a, &addr));
    MTEST_CALL(MPI_Type_create_hindexed(1, &one, &addr, MPI_INT, &t));
    MTEST_CALL(MPI_Type_create_resized(t, addr, (MPI_Aint)sizeof(int), &r));
    MTEST_CALL(MPI_Type_commit(&r));
    MTEST_CALL(MPI_Type_free(&t));
    return r;
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int rank = mtest_rank(), n = mtest_size();
    int *s = mtest_malloc(sizeof(int) * (size_t)n), *d = mtest_malloc(sizeof(int) * (size_t)n);
    int *counts = mtest_malloc(sizeof(int) * (size_t)n), *displs = mtest_malloc(sizeof(int) * (size_t)n);
    int *zeros = mtest_malloc(sizeof(int) * (size_t)n);
    MPI_Datatype *st = mtest_malloc(sizeof(MPI_Datatype) * (size_t)n);
    MPI_Datatype *rt = mtest_malloc(sizeof(MPI_Datatype) * (size_t)n);
    char what[64];

    /* MPI_Alltoallw: a pair of types per peer, each naming one int by address. */
    for (int i = 0; i < n; i++) {
        s[i] = cval(1, rank, i);
        d[i] = -1;
        st[i] = int_at(&s[i]);
        rt[i] = int_at(&d[i]);
        counts[i] = 1;
        zeros[i] = 0;
    }
    MTEST_CALL(MPI_Alltoallw(MPI_BOTTOM, counts, zeros, st, MPI_BOTTOM, counts, zeros, rt, MPI_COMM_WORLD));
    CHECK_INTS("MPI_Alltoallw from MPI_BOTTOM to MPI_BOTTOM", d, n, cval(1, (int)i, rank));
    for (int i = 0; i < n; i++) {
        MTEST_CALL(MPI_Type_free(&st[i]));
        MTEST_CALL(MPI_Type_free(&rt[i]));
    }

    /* The v-variants: one type per side whose element 0 is the first int of the array. */
    MPI_Datatype sa = int_at(s), da = int_at(d);
    for (int i = 0; i < n; i++) {
        s[i] = cval(2, rank, i);
        d[i] = -1;
        displs[i] = i;
    }
    MTEST_CALL(MPI_Alltoallv(MPI_BOTTOM, counts, displs, sa, MPI_BOTTOM, counts, displs, da, MPI_COMM_WORLD));
    CHECK_INTS("MPI_Alltoallv from MPI_BOTTOM to MPI_BOTTOM", d, n, cval(2, (int)i, rank));

    for (int i = 0; i < n; i++) d[i] = -1;
    s[0] = cval(3, rank, 0);
    MTEST_CALL(MPI_Allgatherv(MPI_BOTTOM, 1, sa, MPI_BOTTOM, counts, displs, da, MPI_COMM_WORLD));
    CHECK_INTS("MPI_Allgatherv from MPI_BOTTOM to MPI_BOTTOM", d, n, cval(3, (int)i, 0));

    for (int root = 0; root < n; root += n > 2 ? n - 1 : 1) {
        snprintf(what, sizeof what, "MPI_Gatherv to MPI_BOTTOM at root %d", root);
        for (int i = 0; i < n; i++) d[i] = -1;
        s[0] = cval(4 + root, rank, 0);
        MTEST_CALL(MPI_Gatherv(MPI_BOTTOM, 1, sa, MPI_BOTTOM, counts, displs, da, root, MPI_COMM_WORLD));
        if (rank == root) CHECK_INTS(what, d, n, cval(4 + root, (int)i, 0));

        snprintf(what, sizeof what, "MPI_Scatterv from MPI_BOTTOM at root %d", root);
        for (int i = 0; i < n; i++) s[i] = cval(9 + root, rank, i), d[i] = -1;
        MTEST_CALL(MPI_Scatterv(MPI_BOTTOM, counts, displs, sa, MPI_BOTTOM, 1, da, root, MPI_COMM_WORLD));
        CHECK_INTS(what, d, 1, cval(9 + root, root, rank));
        CHECK_INTS(what, d + 1, n - 1, -1);
    }
    MTEST_CALL(MPI_Type_free(&sa));
    MTEST_CALL(MPI_Type_free(&da));
    free(s);
    free(d);
    free(counts);
    free(displs);
    free(zeros);
    free(st);
    free(rt);
    return mtest_finalize();
}
