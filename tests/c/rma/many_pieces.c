/*
 * Puts and gets whose datatypes have more pieces than one system call's I/O vector
 * holds (over 1024), on windows from MPI_Win_create (memory the program owns, reached
 * in another process with process_vm_readv/writev) and from MPI_Win_allocate: origin
 * and target types with different strides, so that pieces split on both sides; a
 * contiguous origin against a many-piece target; and a many-piece origin against a
 * contiguous target. Each rank works on its right neighbour's window; values are
 * checked on the target after a put and on the origin after a get.
 */
#include "mtest.h"

#define M 1500     /* pieces of each vector type */
#define WIN (4 * M + 8) /* ints in a window */

static int value(int rank, int i) { return rank * 100000 + i; }

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int r = mtest_rank(), n = mtest_size();
    int right = (r + 1) % n, left = (r + n - 1) % n;

    /* Origin: every third int (pieces of 4 bytes); target: 2 of every 4 ints, so one
       origin piece never spans a target piece but target pieces take two origin ones. */
    MPI_Datatype ovec, tvec, cont;
    MTEST_CALL(MPI_Type_vector(2 * M, 1, 3, MPI_INT, &ovec));
    MTEST_CALL(MPI_Type_vector(M, 2, 4, MPI_INT, &tvec));
    MTEST_CALL(MPI_Type_contiguous(2 * M, MPI_INT, &cont));
    MTEST_CALL(MPI_Type_commit(&ovec));
    MTEST_CALL(MPI_Type_commit(&tvec));
    MTEST_CALL(MPI_Type_commit(&cont));
    /* Where the k-th int of each type lies. */
    static int opos[2 * M], tpos[2 * M];
    for (int k = 0; k < 2 * M; k++) {
        opos[k] = 3 * k;
        tpos[k] = 4 * (k / 2) + k % 2;
    }
    static int own[WIN], src[6 * M], got[6 * M];
    int *mem;
    for (int flavor = 0; flavor < 2; flavor++) {
        MPI_Win win;
        if (flavor == 0) {
            mem = own;
            MTEST_CALL(MPI_Win_create(own, sizeof own, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
        } else {
            MTEST_CALL(MPI_Win_allocate(sizeof own, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
        }
        MTEST_CALL(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
        /* shape 0: vector -> vector; 1: contiguous -> vector; 2: vector -> contiguous */
        for (int shape = 0; shape < 3; shape++) {
            MPI_Datatype ot = shape == 1 ? cont : ovec, tt = shape == 2 ? cont : tvec;
            const int *op = opos, *tp = tpos;
            static int ident[2 * M];
            for (int k = 0; k < 2 * M; k++)
                ident[k] = k;
            if (shape == 1)
                op = ident;
            if (shape == 2)
                tp = ident;
            for (int i = 0; i < 6 * M; i++) {
                src[i] = value(r, i);
                got[i] = -1;
            }
            MTEST_CALL(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, r, 0, win));
            for (int i = 0; i < WIN; i++)
                mem[i] = -7;
            MTEST_CALL(MPI_Win_unlock(r, win));
            MTEST_CALL(MPI_Barrier(MPI_COMM_WORLD));

            MTEST_CALL(MPI_Win_lock_all(0, win));
            MTEST_CALL(MPI_Put(src, 1, ot, right, 3, 1, tt, win));
            MTEST_CALL(MPI_Win_unlock_all(win));
            MTEST_CALL(MPI_Barrier(MPI_COMM_WORLD));
            MTEST_CALL(MPI_Win_lock(MPI_LOCK_SHARED, r, 0, win));
            int bad = 0;
            for (int k = 0; k < 2 * M && bad < 5; k++) {
                int j = 3 + tp[k], want = value(left, op[k]);
                if (mem[j] != want) {
                    bad++;
                    MTEST_CHECK(0, "put shape %d flavor %d: target int %d is %d, expected %d", shape, flavor, j, mem[j], want);
                }
            }
            MTEST_CHECK(mem[2] == -7 && mem[3 + tp[2 * M - 1] + 1] == -7,
                        "put shape %d flavor %d wrote outside the target type", shape, flavor);
            MTEST_CALL(MPI_Win_unlock(r, win));
            MTEST_CALL(MPI_Barrier(MPI_COMM_WORLD));

            /* Get it back the same way: the origin's ints at the origin type's places. */
            MTEST_CALL(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win));
            MTEST_CALL(MPI_Get(got, 1, ot, right, 3, 1, tt, win));
            MTEST_CALL(MPI_Win_unlock(right, win));
            for (int k = 0; k < 2 * M && bad < 5; k++) {
                int want = value(r, op[k]);
                if (got[op[k]] != want) {
                    bad++;
                    MTEST_CHECK(0, "get shape %d flavor %d: origin int %d is %d, expected %d", shape, flavor, op[k], got[op[k]], want);
                }
            }
            MTEST_CHECK(got[op[2 * M - 1] + 1] == -1, "get shape %d flavor %d wrote outside the origin type", shape, flavor);
            MTEST_CALL(MPI_Barrier(MPI_COMM_WORLD));
        }
        MTEST_CALL(MPI_Win_free(&win));
    }
    MTEST_CALL(MPI_Type_free(&ovec));
    MTEST_CALL(MPI_Type_free(&tvec));
    MTEST_CALL(MPI_Type_free(&cont));
    return mtest_finalize();
}
