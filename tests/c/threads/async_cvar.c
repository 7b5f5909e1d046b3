/*
 * The asynchronous progress thread through the MPI_T control variable
 * OXMPI_ASYNC_PROGRESS (oxmpi's; other implementations: skipped).
 *  - Written 1 before MPI_Init: MPI_Init starts the thread (a thread named
 *    oxmpi-progress appears), the variable reads 1, and a rendezvous-sized exchange
 *    and an MPI_Iallreduce give the right data with it running.
 *  - Written 0 while MPI runs: the thread ends (and is joined), the variable reads 0,
 *    and communication still works. Written 1 again: a thread starts again; a second
 *    write of 1 starts no second one. A value other than 0/1: MPI_T_ERR_INVALID.
 *  - After MPI_Finalize no thread is left and a write fails with
 *    MPI_T_ERR_CVAR_SET_NEVER.
 * The program calls from its main thread only: MPI_THREAD_SINGLE works with the thread
 * (it is internal to the library).
 */
#include "../mpit/mpit_util.h"
#include "progress_threads.h"

#include <stdlib.h>

#define BIG (1 << 20)

static int read_int(MPI_T_cvar_handle h)
{
    int v = -1;
    T_CALL(MPI_T_cvar_read(h, &v));
    return v;
}

static void write_int(MPI_T_cvar_handle h, int v)
{
    T_CALL(MPI_T_cvar_write(h, &v));
}

/* A ring exchange of BIG bytes (rendezvous on every transport) and an MPI_Iallreduce,
 * both with the rank's computation in between, and their results checked. */
static void communicate(const char *when)
{
    int rank = mtest_rank(), size = mtest_size();
    int to = (rank + 1) % size, from = (rank + size - 1) % size;
    char *out = malloc(BIG), *in = malloc(BIG);
    for (int i = 0; i < BIG; i++) {
        out[i] = (char)(rank + i);
        in[i] = -1;
    }
    MPI_Request r[3];
    int sum = -1;
    MTEST_CALL(MPI_Irecv(in, BIG, MPI_CHAR, from, 7, MPI_COMM_WORLD, &r[0]));
    MTEST_CALL(MPI_Isend(out, BIG, MPI_CHAR, to, 7, MPI_COMM_WORLD, &r[1]));
    MTEST_CALL(MPI_Iallreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r[2]));
    mtest_sleep_ms(20);
    MTEST_CALL(MPI_Waitall(3, r, MPI_STATUSES_IGNORE));
    int bad = 0;
    for (int i = 0; i < BIG; i++) {
        bad += in[i] != (char)(from + i);
    }
    MTEST_CHECK(bad == 0, "%s: %d bytes of the ring exchange wrong", when, bad);
    MTEST_CHECK(sum == size * (size - 1) / 2, "%s: Iallreduce sum %d", when, sum);
    free(out);
    free(in);
}

int main(int argc, char **argv)
{
    int provided, count = 0;
    T_CALL(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
    int index = mpit_cvar("OXMPI_ASYNC_PROGRESS");
    if (index < 0) {
        mtest_init(&argc, &argv);
        MTEST_CHECK(!mpit_is_oxmpi(), "oxmpi lacks OXMPI_ASYNC_PROGRESS");
        if (mtest_rank() == 0) {
            printf("(skipped: no oxmpi control variables)\n");
        }
        T_CALL(MPI_T_finalize());
        return mtest_finalize();
    }
    MPI_T_cvar_handle h;
    T_CALL(MPI_T_cvar_handle_alloc(index, NULL, &h, &count));
    MTEST_EQ("OXMPI_ASYNC_PROGRESS count", 1, count);
    MTEST_EQ("progress threads before MPI_Init", 0, progress_threads());
    write_int(h, 1);
    MTEST_EQ("read before MPI_Init", 1, read_int(h));

    mtest_init(&argc, &argv);
    MTEST_EQ("progress threads after MPI_Init", 1, progress_threads_settled(1));
    MTEST_EQ("read after MPI_Init", 1, read_int(h));
    communicate("thread started by MPI_Init");

    write_int(h, 0);
    MTEST_EQ("progress threads after writing 0", 0, progress_threads_settled(0));
    MTEST_EQ("read after writing 0", 0, read_int(h));
    communicate("thread stopped");

    write_int(h, 1);
    MTEST_EQ("progress threads after writing 1 again", 1, progress_threads_settled(1));
    write_int(h, 1);
    mtest_sleep_ms(50);
    MTEST_EQ("progress threads after writing 1 twice", 1, progress_threads());
    MTEST_EQ("read after writing 1", 1, read_int(h));
    int two = 2;
    T_EXPECT(MPI_T_ERR_INVALID, MPI_T_cvar_write(h, &two));
    MTEST_EQ("read after a refused write", 1, read_int(h));
    communicate("thread started again");

    /* Stop and start on a barrier between, several times: the next thread never runs
     * beside the one ending. */
    for (int k = 0; k < 3; k++) {
        write_int(h, 0);
        MTEST_CALL(MPI_Barrier(MPI_COMM_WORLD));
        write_int(h, 1);
    }
    MTEST_EQ("progress threads after stop/start rounds", 1, progress_threads_settled(1));
    communicate("after stop/start rounds");

    int rc = mtest_finalize();
    /* After the summary: a failure here fails the exit status. */
    int one = 1, left = progress_threads(), wrc = MPI_T_cvar_write(h, &one);
    if (left != 0 || wrc != MPI_T_ERR_CVAR_SET_NEVER) {
        fprintf(stderr, "after MPI_Finalize: %d progress threads, write returned %d\n", left,
                wrc);
        rc = 1;
    }
    if (MPI_T_cvar_handle_free(&h) != MPI_SUCCESS || MPI_T_finalize() != MPI_SUCCESS) {
        rc = 1;
    }
    return rc;
}
