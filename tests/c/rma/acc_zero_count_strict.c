/*
 * Zero-count accumulates combine nothing, so the operation need not be defined for the
 * datatype: MPI_Get_accumulate and MPI_Accumulate of zero MPI_BYTEs with MPI_SUM succeed and
 * leave the target alone (mpi4py's testGetAccumulate starts with this call). With data,
 * MPI_SUM on MPI_BYTE stays MPI_ERR_OP (MPI 4.1 section 6.9.2; checked on oxmpi only).
 * (Strict: under MPICH 4.0.2 at 2 ranks the MPI_REPLACE step read unexpected data; not
 * investigated yet.)
 */
#include "mtest.h"

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int r = mtest_rank(), n = mtest_size();
    unsigned char *base;
    MPI_Win win;
    MTEST_CALL(MPI_Win_allocate(4, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
    MTEST_CALL(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    for (int i = 0; i < 4; i++)
        base[i] = (unsigned char)(10 + i);
    unsigned char o[4] = {1, 2, 3, 4}, res[4] = {99, 99, 99, 99};
    int t = (r + 1) % n;

    MTEST_CALL(MPI_Win_fence(0, win));
    MTEST_CALL(MPI_Get_accumulate(o, 0, MPI_BYTE, res, 0, MPI_BYTE, t, 0, 0, MPI_BYTE, MPI_SUM, win));
    MTEST_CALL(MPI_Accumulate(o, 0, MPI_BYTE, t, 0, 0, MPI_BYTE, MPI_SUM, win));
    MTEST_CALL(MPI_Get_accumulate(o, 0, MPI_BYTE, res, 0, MPI_BYTE, t, 0, 0, MPI_BYTE, MPI_PROD, win));
    MTEST_CALL(MPI_Win_fence(0, win));
    for (int i = 0; i < 4; i++) {
        MTEST_EQ("target byte", 10 + i, base[i]);
        MTEST_EQ("result byte", 99, res[i]);
    }

    /* Data with a defined operation still moves (after every rank has checked its own). */
    MTEST_CALL(MPI_Barrier(MPI_COMM_WORLD));
    MTEST_CALL(MPI_Get_accumulate(o, 4, MPI_BYTE, res, 4, MPI_BYTE, t, 0, 4, MPI_BYTE, MPI_REPLACE, win));
    MTEST_CALL(MPI_Win_fence(0, win));
    for (int i = 0; i < 4; i++) {
        MTEST_EQ("old byte", 10 + i, res[i]);
        MTEST_EQ("replaced byte", 1 + i, base[i]);
    }
#ifdef OXMPI
    MTEST_EXPECT_CLASS(MPI_ERR_OP, MPI_Get_accumulate(o, 4, MPI_BYTE, res, 4, MPI_BYTE, t, 0, 4, MPI_BYTE, MPI_SUM, win));
    MTEST_EXPECT_CLASS(MPI_ERR_OP, MPI_Accumulate(o, 4, MPI_BYTE, t, 0, 4, MPI_BYTE, MPI_SUM, win));
#endif
    MTEST_CALL(MPI_Win_fence(0, win));
    MTEST_CALL(MPI_Win_free(&win));
    return mtest_finalize();
}
