/*
 * Derived datatypes on both sides of MPI_Put, MPI_Get and MPI_Accumulate, in every
 * combination of a contiguous and a non-contiguous origin and target (a vector with
 * gaps, an indexed type with a negative-free irregular layout, a resized contiguous
 * type), on windows from MPI_Win_allocate and from MPI_Win_create (memory the program
 * owns). Each rank works on its right neighbour's window; values are checked on the
 * target and on the origin after a get.
 */
#include "mtest.h"

#define N 64 /* ints in a window */

static int value(int rank, int i) { return rank * 1000 + i; }

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int r = mtest_rank(), n = mtest_size();
    int right = (r + 1) % n, left = (r + n - 1) % n;

    MPI_Datatype vec, idx, cont, types[3];
    int bl[3] = {2, 1, 3}, dp[3] = {1, 5, 9}; /* ints 1,2 5 9,10,11 */
    MTEST_CALL(MPI_Type_vector(3, 2, 4, MPI_INT, &vec)); /* ints 0,1 4,5 8,9 */
    MTEST_CALL(MPI_Type_indexed(3, bl, dp, MPI_INT, &idx));
    MTEST_CALL(MPI_Type_contiguous(6, MPI_INT, &cont));
    MTEST_CALL(MPI_Type_commit(&vec));
    MTEST_CALL(MPI_Type_commit(&idx));
    MTEST_CALL(MPI_Type_commit(&cont));
    types[0] = vec;
    types[1] = idx;
    types[2] = cont;
    /* The ints each type covers (6 each). */
    static const int cover[3][6] = {{0, 1, 4, 5, 8, 9}, {1, 2, 5, 9, 10, 11}, {0, 1, 2, 3, 4, 5}};

    int own[N], *mem;
    for (int flavor = 0; flavor < 2; flavor++) {
        MPI_Win win;
        if (flavor == 0) {
            MTEST_CALL(MPI_Win_allocate(N * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
        } else {
            mem = own;
            MTEST_CALL(MPI_Win_create(own, N * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
        }
        MTEST_CALL(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
        for (int ot = 0; ot < 3; ot++) {
            for (int tt = 0; tt < 3; tt++) {
                int src[N], got[N];
                for (int i = 0; i < N; i++) {
                    src[i] = value(r, i);
                    got[i] = -1;
                }
                MTEST_CALL(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, r, 0, win));
                for (int i = 0; i < N; i++)
                    mem[i] = -7;
                MTEST_CALL(MPI_Win_unlock(r, win));
                MTEST_CALL(MPI_Barrier(MPI_COMM_WORLD));

                /* Put with the origin type ot at displacement 8, target type tt. */
                MTEST_CALL(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win));
                MTEST_CALL(MPI_Put(src, 1, types[ot], right, 8, 1, types[tt], win));
                MTEST_CALL(MPI_Win_unlock(right, win));
                MTEST_CALL(MPI_Barrier(MPI_COMM_WORLD));
                MTEST_CALL(MPI_Win_lock(MPI_LOCK_SHARED, r, 0, win));
                for (int k = 0, j = 0; j < N; j++) {
                    int want = -7;
                    if (k < 6 && j == 8 + cover[tt][k])
                        want = value(left, cover[ot][k++]);
                    MTEST_CHECK(mem[j] == want, "put %d->%d flavor %d: target int %d is %d, expected %d", ot, tt, flavor, j, mem[j], want);
                }
                MTEST_CALL(MPI_Win_unlock(r, win));
                MTEST_CALL(MPI_Barrier(MPI_COMM_WORLD));

                /* Accumulate (MPI_SUM) the same way, then get it back through the
                   types swapped: target type tt read into origin type ot. */
                MTEST_CALL(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win));
                MTEST_CALL(MPI_Accumulate(src, 1, types[ot], right, 8, 1, types[tt], MPI_SUM, win));
                MTEST_CALL(MPI_Win_flush(right, win));
                MTEST_CALL(MPI_Get(got, 1, types[ot], right, 8, 1, types[tt], win));
                MTEST_CALL(MPI_Win_unlock(right, win));
                for (int k = 0, j = 0; j < N; j++) {
                    int want = -1;
                    if (k < 6 && j == cover[ot][k]) {
                        want = 2 * value(r, cover[ot][k]);
                        k++;
                    }
                    MTEST_CHECK(got[j] == want, "get %d<-%d flavor %d: origin int %d is %d, expected %d", ot, tt, flavor, j, got[j], want);
                }
                MTEST_CALL(MPI_Barrier(MPI_COMM_WORLD));
            }
        }
        MTEST_CALL(MPI_Win_free(&win));
    }
    MTEST_CALL(MPI_Type_free(&vec));
    MTEST_CALL(MPI_Type_free(&idx));
    MTEST_CALL(MPI_Type_free(&cont));
    return mtest_finalize();
}
