/*
 * MPI_Win_allocate_shared: MPI_Win_shared_query gives every rank's segment, the
 * segments are contiguous in rank order (no alloc_shared_noncontig), ranks with size 0
 * are allowed, and direct loads and stores by other ranks are seen after MPI_Win_sync
 * and a barrier (the unified model).
 */
#include "mtest.h"

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int r = mtest_rank(), n = mtest_size();
    MPI_Comm node;
    MTEST_CALL(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
    int nr, nn;
    MTEST_CALL(MPI_Comm_rank(node, &nr));
    MTEST_CALL(MPI_Comm_size(node, &nn));
    (void)r;
    (void)n;
    /* Rank k has k + 1 doubles, except rank 1 which has none. */
    MPI_Aint count = nr == 1 ? 0 : nr + 1;
    double *mine;
    MPI_Win win;
    MTEST_CALL(MPI_Win_allocate_shared(count * (MPI_Aint)sizeof(double), sizeof(double), MPI_INFO_NULL, node, &mine, &win));
    MTEST_CALL(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    double *first = NULL;
    for (int k = 0; k < nn; k++) {
        MPI_Aint size;
        int unit;
        double *p;
        MTEST_CALL(MPI_Win_shared_query(win, k, &size, &unit, &p));
        MTEST_EQ("disp_unit", (int)sizeof(double), unit);
        MTEST_EQ("size", (long)((k == 1 ? 0 : k + 1) * sizeof(double)), (long)size);
        if (k == 0)
            first = p;
        else if (k != 1) {
            /* Contiguous: rank k starts after ranks 0..k-1. */
            long before = 0;
            for (int j = 0; j < k; j++)
                before += j == 1 ? 0 : j + 1;
            MTEST_CHECK(p == first + before, "rank %d's segment at %p, expected %p", k, (void *)p, (void *)(first + before));
        }
        if (k == nr && count > 0)
            MTEST_CHECK(p == mine, "query of my own rank gives %p, allocate gave %p", (void *)p, (void *)mine);
    }
    MPI_Aint size;
    int unit;
    double *p;
    MTEST_CALL(MPI_Win_shared_query(win, MPI_PROC_NULL, &size, &unit, &p));
    MTEST_CHECK(p == first, "MPI_PROC_NULL query gives %p, rank 0's is %p", (void *)p, (void *)first);

    /* Each rank writes its own part by plain stores; everyone reads everything. */
    MTEST_CALL(MPI_Win_lock_all(MPI_MODE_NOCHECK, win));
    for (int i = 0; i < count; i++)
        mine[i] = nr * 100.0 + i;
    MTEST_CALL(MPI_Win_sync(win));
    MTEST_CALL(MPI_Barrier(node));
    MTEST_CALL(MPI_Win_sync(win));
    long at = 0;
    for (int k = 0; k < nn; k++) {
        int c = k == 1 ? 0 : k + 1;
        for (int i = 0; i < c; i++)
            MTEST_EQ("direct load", k * 100.0 + i, first[at + i]);
        at += c;
    }
    /* Now the ranks store into their right neighbour's part directly. */
    MTEST_CALL(MPI_Barrier(node));
    int right = (nr + 1) % nn;
    double *rp;
    MTEST_CALL(MPI_Win_shared_query(win, right, &size, &unit, &rp));
    for (int i = 0; i < (int)(size / (MPI_Aint)sizeof(double)); i++)
        rp[i] = -(nr * 100.0 + i);
    MTEST_CALL(MPI_Win_sync(win));
    MTEST_CALL(MPI_Barrier(node));
    MTEST_CALL(MPI_Win_sync(win));
    int left = (nr + nn - 1) % nn;
    for (int i = 0; i < count; i++)
        MTEST_EQ("neighbour's store", -(left * 100.0 + i), mine[i]);
    MTEST_CALL(MPI_Win_unlock_all(win));
    MTEST_CALL(MPI_Win_free(&win));
    MTEST_CALL(MPI_Comm_free(&node));
    return mtest_finalize();
}
