/*
 * MPI 4.1 MPI_Win_shared_query on windows made by MPI_Win_create and MPI_Win_allocate:
 * the caller's own segment comes back (base, size, disp_unit), every other rank's segment
 * that the caller cannot load/store reads as size 0 and a NULL base, and MPI_PROC_NULL
 * names the lowest rank with memory. (Strict: MPICH 4.0.2 refuses with
 * MPI_ERR_RMA_FLAVOR, the MPI 4.0 rule.)
 */
#include "mtest.h"

static void check(MPI_Win win, int r, int n, void *mine, MPI_Aint mysize, int myunit)
{
    for (int k = 0; k < n; k++) {
        MPI_Aint size = -1;
        int unit = -1;
        void *p = (void *)&size;
        MTEST_CALL(MPI_Win_shared_query(win, k, &size, &unit, &p));
        if (k == r) {
            MTEST_CHECK(p == mine, "rank %d: own segment base %p, expected %p", r, p, mine);
            MTEST_EQ("own size", (long)mysize, (long)size);
            MTEST_EQ("own disp_unit", myunit, unit);
        } else {
            MTEST_EQ("other rank's size", 0L, (long)size);
            MTEST_CHECK(p == NULL, "rank %d: rank %d's base %p, expected NULL", r, k, p);
        }
    }
    MPI_Aint size = -1;
    int unit = -1;
    void *p = (void *)&size;
    MTEST_CALL(MPI_Win_shared_query(win, MPI_PROC_NULL, &size, &unit, &p));
    /* Every rank has memory, so MPI_PROC_NULL means rank 0. */
    if (r == 0) {
        MTEST_CHECK(p == mine, "PROC_NULL base %p, expected %p", p, mine);
        MTEST_EQ("PROC_NULL size", (long)mysize, (long)size);
    } else {
        MTEST_EQ("PROC_NULL size", 0L, (long)size);
        MTEST_CHECK(p == NULL, "PROC_NULL base %p, expected NULL", p);
    }
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int r = mtest_rank(), n = mtest_size();
    MPI_Win win;

    int buf[6];
    MTEST_CALL(MPI_Win_create(buf, sizeof buf, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    MTEST_CALL(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    check(win, r, n, buf, sizeof buf, sizeof(int));
    MTEST_EXPECT_CLASS(MPI_ERR_RANK, MPI_Win_shared_query(win, n, &(MPI_Aint){0}, &(int){0}, &(void *){NULL}));
    MTEST_CALL(MPI_Win_free(&win));

    double *mem;
    MTEST_CALL(MPI_Win_allocate(5 * sizeof(double), sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    MTEST_CALL(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    check(win, r, n, mem, 5 * sizeof(double), sizeof(double));
    MTEST_CALL(MPI_Win_free(&win));

    return mtest_finalize();
}
