/*
 * The asynchronous progress thread (oxmpi's OXMPI_ASYNC_PROGRESS=1, set by the manifest):
 * a large Isend/Irecv pair and an Iallreduce complete while the application computes
 * without calling MPI. The computing ranks watch their receive buffers with plain loads
 * (no MPI call) until the data is there, for at most 60 s, then complete the requests.
 * Without a progress thread nothing need move the transfers, so the watching is done
 * only when MTEST_ASYNC_REQUIRED is set (the manifest sets it, with MPICH's
 * MPIR_CVAR_ASYNC_PROGRESS=1 too). With MT_FUNNELED set the program asks for
 * MPI_THREAD_FUNNELED and the Iallreduce uses a user-defined sum, which the progress
 * thread runs (internal to the library, it may call at any level).
 *
 * mtest-ldflags: -pthread
 */
#include "mtest.h"

#define BIGN (1 << 20) /* ints: 4 MiB, a rendezvous transfer */

/* Waits, without calling MPI, until *p == want; true if it got there. */
static int watch(volatile int *p, int want)
{
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        if (*p == want) return 1;
        /* "Computation": a little arithmetic, then a short pause to share the CPUs. */
        volatile double x = 0;
        for (int i = 0; i < 20000; i++) x += i * 0.5;
        mtest_sleep_ms(1);
        clock_gettime(CLOCK_MONOTONIC, &t);
        if (t.tv_sec - t0.tv_sec > 60) return 0;
    }
}

/* The user-defined sum of MT_FUNNELED. */
static void user_sum(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    for (int i = 0; i < *len; i++) ((int *)inout)[i] += ((int *)in)[i];
}

int main(int argc, char **argv)
{
    int funneled = getenv("MT_FUNNELED") != NULL;
    MPI_Op op = MPI_SUM;
    if (funneled) {
        int provided = -1;
        mtest_write_pidfile();
        if (MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) return 1;
        MTEST_CALL(MPI_Comm_rank(MPI_COMM_WORLD, &mtest.rank));
        MTEST_CALL(MPI_Comm_size(MPI_COMM_WORLD, &mtest.size));
        mtest_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        mtest_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
        MTEST_CHECK(provided >= MPI_THREAD_FUNNELED, "provided %d", provided);
        MTEST_CALL(MPI_Op_create(user_sum, 1, &op));
    } else {
        mtest_init(&argc, &argv);
    }
    int rank = mtest.rank, size = mtest.size;
    int required = getenv("MTEST_ASYNC_REQUIRED") != NULL;
    int *big = mtest_malloc(BIGN * sizeof(int));
    MPI_Request r[2];
    int nreq = 0;

    /* Rank 0 sends 4 MiB to the last rank. */
    if (size > 1 && rank == 0) {
        for (int i = 0; i < BIGN; i++) big[i] = i ^ 0x5a5a;
        MTEST_CALL(MPI_Isend(big, BIGN, MPI_INT, size - 1, 1, MPI_COMM_WORLD, &r[nreq++]));
    } else if (size > 1 && rank == size - 1) {
        for (int i = 0; i < BIGN; i++) big[i] = -1;
        MTEST_CALL(MPI_Irecv(big, BIGN, MPI_INT, 0, 1, MPI_COMM_WORLD, &r[nreq++]));
    }
    int in[4] = {rank + 1, 1, rank, 7}, out[4] = {0, 0, 0, 0};
    MTEST_CALL(MPI_Iallreduce(in, out, 4, MPI_INT, op, MPI_COMM_WORLD, &r[nreq++]));

    if (required) {
        int ok = 1;
        if (size > 1 && rank == size - 1) {
            ok &= watch(&big[BIGN - 1], (BIGN - 1) ^ 0x5a5a);
        }
        ok &= watch(&out[3], 7 * size) && watch(&out[0], size * (size + 1) / 2);
        MTEST_CHECK(ok, "the transfers did not complete while the rank computed without calling MPI");
    }
    MTEST_CALL(MPI_Waitall(nreq, r, MPI_STATUSES_IGNORE));
    MTEST_EQ("iallreduce[0]", size * (size + 1) / 2, out[0]);
    MTEST_EQ("iallreduce[1]", size, out[1]);
    MTEST_EQ("iallreduce[2]", size * (size - 1) / 2, out[2]);
    MTEST_EQ("iallreduce[3]", 7 * size, out[3]);
    if (size > 1 && rank == size - 1) {
        for (int i = 0; i < BIGN; i++)
            if (big[i] != (i ^ 0x5a5a)) {
                MTEST_CHECK(0, "big[%d] = %d", i, big[i]);
                break;
            }
    }
    free(big);
    if (funneled) MTEST_CALL(MPI_Op_free(&op));
    return mtest_finalize();
}
