/*
 * Failure test: the last rank takes an exclusive lock on rank 0's window memory and
 * kills itself with SIGKILL while the others wait for that lock. Expected: the job ends
 * with a non-zero status within seconds, no process remains, and no window segment is
 * left in /dev/shm (it was unlinked once every rank had mapped it).
 */
#include "mtest.h"

#include <signal.h>

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int r = mtest_rank(), n = mtest_size(), *base;
    MPI_Win win;
    MTEST_CALL(MPI_Win_allocate(sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
    if (r == n - 1)
        MTEST_CALL(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
    mtest_barrier();
    if (r == n - 1) {
        mtest_sleep_ms(300);
        fprintf(stderr, "rank %d: raising SIGKILL\n", r);
        raise(SIGKILL);
        return 1;
    }
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
    fprintf(stderr, "rank %d: got the lock its holder never released\n", r);
    return 1;
}
