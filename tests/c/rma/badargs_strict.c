/*
 * Erroneous RMA calls under MPI_ERRORS_RETURN on the window: each fails with the right
 * class and writes nothing outside the window. Target rank out of range, negative or
 * too large displacement, count past the window, operation outside an epoch, a user
 * operation or a mismatched datatype in an accumulate, an operation undefined on the
 * type, bad lock type and assertion, unlock without a lock, MPI_Win_free with a lock
 * held, MPI_Win_shared_query on a window not made shared, a null or freed window;
 * attaching overlapping memory, detaching what is not attached, reaching past or
 * outside attached memory of a dynamic window, attaching to a window of another flavor,
 * locking a window made with the no_locks hint.
 */
#include "mtest.h"

static void user_op(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)in; (void)inout; (void)len; (void)dt;
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int r = mtest_rank(), n = mtest_size();
    int *base;
    MPI_Win win;
    MTEST_CALL(MPI_Win_allocate(4 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
    MTEST_CALL(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    for (int i = 0; i < 4; i++)
        base[i] = 7;
    int buf[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    double d = 1.5;

    /* Outside any epoch. */
    MTEST_EXPECT_CLASS(MPI_ERR_RMA_SYNC, MPI_Put(buf, 1, MPI_INT, 0, 0, 1, MPI_INT, win));
    MTEST_EXPECT_CLASS(MPI_ERR_RMA_SYNC, MPI_Win_unlock(0, win));
    MTEST_EXPECT_CLASS(MPI_ERR_RMA_SYNC, MPI_Win_unlock_all(win));
    MTEST_EXPECT_CLASS(MPI_ERR_RMA_SYNC, MPI_Win_flush(0, win));

    MTEST_CALL(MPI_Win_fence(0, win));
    MTEST_EXPECT_CLASS(MPI_ERR_RANK, MPI_Put(buf, 1, MPI_INT, n, 0, 1, MPI_INT, win));
    MTEST_EXPECT_CLASS(MPI_ERR_RANK, MPI_Get(buf, 1, MPI_INT, -3, 0, 1, MPI_INT, win));
    MTEST_EXPECT_CLASS2(MPI_ERR_DISP, MPI_ERR_RMA_RANGE, MPI_Put(buf, 1, MPI_INT, 0, -1, 1, MPI_INT, win));
    MTEST_EXPECT_CLASS(MPI_ERR_RMA_RANGE, MPI_Put(buf, 1, MPI_INT, 0, 4, 1, MPI_INT, win));
    MTEST_EXPECT_CLASS(MPI_ERR_RMA_RANGE, MPI_Put(buf, 5, MPI_INT, 0, 0, 5, MPI_INT, win));
    MTEST_EXPECT_CLASS(MPI_ERR_RMA_RANGE, MPI_Accumulate(buf, 2, MPI_INT, 0, 3, 2, MPI_INT, MPI_SUM, win));
    MTEST_EXPECT_CLASS(MPI_ERR_COUNT, MPI_Put(buf, -1, MPI_INT, 0, 0, -1, MPI_INT, win));
    MTEST_EXPECT_CLASS(MPI_ERR_TYPE, MPI_Put(buf, 1, MPI_DATATYPE_NULL, 0, 0, 1, MPI_INT, win));
    MTEST_EXPECT_CLASS(MPI_ERR_OP, MPI_Accumulate(&d, 1, MPI_DOUBLE, 0, 0, 1, MPI_DOUBLE, MPI_BAND, win));
    MTEST_EXPECT_CLASS(MPI_ERR_OP, MPI_Accumulate(buf, 1, MPI_INT, 0, 0, 1, MPI_INT, MPI_OP_NULL, win));
    MPI_Op uop;
    MTEST_CALL(MPI_Op_create(user_op, 1, &uop));
    MTEST_EXPECT_CLASS(MPI_ERR_OP, MPI_Accumulate(buf, 1, MPI_INT, 0, 0, 1, MPI_INT, uop, win));
    MTEST_CALL(MPI_Op_free(&uop));
    MTEST_EXPECT_CLASS2(MPI_ERR_TYPE, MPI_ERR_ARG, MPI_Accumulate(&d, 1, MPI_FLOAT, 0, 0, 1, MPI_INT, MPI_SUM, win));
    MTEST_EXPECT_CLASS(MPI_ERR_ASSERT, MPI_Win_fence(1, win));
    MTEST_CALL(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
    MTEST_CALL(MPI_Barrier(MPI_COMM_WORLD));
    for (int i = 0; i < 4; i++)
        MTEST_EQ("window untouched", 7, base[i]);

    MTEST_EXPECT_CLASS(MPI_ERR_LOCKTYPE, MPI_Win_lock(12345, 0, 0, win));
    MTEST_EXPECT_CLASS(MPI_ERR_ASSERT, MPI_Win_lock(MPI_LOCK_SHARED, 0, MPI_MODE_NOPUT, win));
    MTEST_EXPECT_CLASS(MPI_ERR_RANK, MPI_Win_lock(MPI_LOCK_SHARED, n, 0, win));
    MTEST_CALL(MPI_Win_lock(MPI_LOCK_SHARED, r, 0, win));
    MTEST_EXPECT_CLASS(MPI_ERR_RMA_SYNC, MPI_Win_lock(MPI_LOCK_SHARED, r, 0, win));
    MTEST_EXPECT_CLASS(MPI_ERR_RMA_SYNC, MPI_Win_free(&win));
    MTEST_CHECK(win != MPI_WIN_NULL, "a failed MPI_Win_free reset the handle");
    MTEST_CALL(MPI_Win_unlock(r, win));

    MTEST_CALL(MPI_Win_free(&win));
    MTEST_EXPECT_CLASS(MPI_ERR_WIN, MPI_Win_fence(0, MPI_WIN_NULL));
    MTEST_EXPECT_CLASS(MPI_ERR_WIN, MPI_Put(buf, 1, MPI_INT, 0, 0, 1, MPI_INT, MPI_WIN_NULL));

    /* Dynamic windows: only attached memory is reachable. */
    MTEST_CALL(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    MTEST_CALL(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    /* MPI 4.1 allows MPI_Win_shared_query on every flavor but dynamic. */
    MPI_Aint qsize;
    int qunit;
    void *qbase;
    MTEST_EXPECT_CLASS(MPI_ERR_RMA_FLAVOR, MPI_Win_shared_query(win, 0, &qsize, &qunit, &qbase));
    void *p;
    int att[4] = {0, 0, 0, 0};
    MPI_Aint addr;
    MTEST_CALL(MPI_Get_address(att, &addr));
    MTEST_CALL(MPI_Win_attach(win, att, sizeof att));
    MTEST_EXPECT_CLASS(MPI_ERR_RMA_ATTACH, MPI_Win_attach(win, &att[1], sizeof(int)));
    MTEST_EXPECT_CLASS(MPI_ERR_RMA_ATTACH, MPI_Win_detach(win, &att[2]));
    MTEST_CALL(MPI_Win_lock(MPI_LOCK_SHARED, r, 0, win));
    MTEST_EXPECT_CLASS(MPI_ERR_RMA_RANGE, MPI_Put(buf, 2, MPI_INT, r, addr + 3 * sizeof(int), 2, MPI_INT, win));
    MTEST_CALL(MPI_Put(buf, 1, MPI_INT, r, addr + 3 * sizeof(int), 1, MPI_INT, win));
    MTEST_CALL(MPI_Win_unlock(r, win));
    MTEST_EQ("attached put", 1, att[3]);
    MTEST_CALL(MPI_Win_detach(win, att));
    MTEST_CALL(MPI_Win_lock(MPI_LOCK_SHARED, r, 0, win));
    MTEST_EXPECT_CLASS(MPI_ERR_RMA_RANGE, MPI_Put(buf, 1, MPI_INT, r, addr, 1, MPI_INT, win));
    MTEST_CALL(MPI_Win_unlock(r, win));
    MTEST_CALL(MPI_Win_free(&win));
    MTEST_CALL(MPI_Win_allocate(8, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &p, &win));
    MTEST_CALL(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    MTEST_EXPECT_CLASS(MPI_ERR_RMA_FLAVOR, MPI_Win_attach(win, att, sizeof att));
    MTEST_CALL(MPI_Win_free(&win));

    /* No locks on a window made with no_locks=true. */
    MPI_Info nl;
    MTEST_CALL(MPI_Info_create(&nl));
    MTEST_CALL(MPI_Info_set(nl, "no_locks", "true"));
    MTEST_CALL(MPI_Win_allocate(8, 1, nl, MPI_COMM_WORLD, &p, &win));
    MTEST_CALL(MPI_Info_free(&nl));
    MTEST_CALL(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    MTEST_EXPECT_CLASS(MPI_ERR_RMA_SYNC, MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
    MTEST_EXPECT_CLASS(MPI_ERR_RMA_SYNC, MPI_Win_lock_all(0, win));
    MTEST_CALL(MPI_Win_free(&win));

    /* Bad creation arguments. */
    MPI_Win w2;
    MTEST_EXPECT_CLASS(MPI_ERR_DISP, MPI_Win_allocate(8, 0, MPI_INFO_NULL, MPI_COMM_WORLD, &p, &w2));
    MTEST_EXPECT_CLASS2(MPI_ERR_SIZE, MPI_ERR_ARG, MPI_Win_allocate(-8, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &p, &w2));
    MTEST_EXPECT_CLASS(MPI_ERR_COMM, MPI_Win_create(buf, 8, 1, MPI_INFO_NULL, MPI_COMM_NULL, &w2));
    return mtest_finalize();
}
