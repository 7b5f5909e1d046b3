/*
 * The error of a request is reported to the error handler of the request's
 * communicator, also by the multiple-completion calls (MPI-4.1 sections 3.7.5 and 9.3):
 * MPI_Waitall / Testall / Waitsome / Testsome raise MPI_ERR_IN_STATUS, and Waitany /
 * Testany / Wait / Test the request's own class, on the handler of the communicator the
 * failing request was started on, not on MPI_COMM_SELF's or MPI_COMM_WORLD's.
 *
 * Each rank receives a 4-int message into a 1-int buffer (MPI_ERR_TRUNCATE) on a
 * duplicate of MPI_COMM_WORLD, with messages to itself.  Counting handlers on
 * MPI_COMM_SELF and MPI_COMM_WORLD must never run; the handler set on the duplicate must
 * run once per failing call, with the duplicate and the returned code.  Finally the
 * duplicate gets MPI_ERRORS_RETURN while MPI_COMM_SELF and MPI_COMM_WORLD are
 * MPI_ERRORS_ARE_FATAL: a truncated receive in MPI_Waitall must return, not abort.
 */
#include "mtest.h"

static MPI_Comm dupc;
static int self_calls, world_calls, dup_calls, dup_last_code;
static MPI_Comm dup_last_comm;

static void on_self(MPI_Comm *c, int *code, ...) { (void)c; (void)code; self_calls++; }
static void on_world(MPI_Comm *c, int *code, ...) { (void)c; (void)code; world_calls++; }
static void on_dup(MPI_Comm *c, int *code, ...)
{
    dup_calls++;
    dup_last_comm = *c;
    dup_last_code = *code;
}

/* Two receives from self on `dupc`: [0] truncated (4 ints into 1), [1] fine. */
static int big[4], small[1], fine[1], fine_in[1];
static MPI_Request sreq[2];

static void post(MPI_Request rreq[2])
{
    int me = mtest_rank();
    big[0] = 1; big[1] = 2; big[2] = 3; big[3] = 4;
    fine[0] = 5;
    MTEST_CALL(MPI_Isend(big, 4, MPI_INT, me, 1, dupc, &sreq[0]));
    MTEST_CALL(MPI_Isend(fine, 1, MPI_INT, me, 2, dupc, &sreq[1]));
    MTEST_CALL(MPI_Irecv(small, 1, MPI_INT, me, 1, dupc, &rreq[0]));
    fine_in[0] = 0;
    MTEST_CALL(MPI_Irecv(fine_in, 1, MPI_INT, me, 2, dupc, &rreq[1]));
}

static void finish_sends(void)
{
    MTEST_CALL(MPI_Waitall(2, sreq, MPI_STATUSES_IGNORE));
}

/* The handler on `dupc` ran exactly once (since the last reset) with class `cls`. */
static void expect_dup_handler(const char *call, int rc, int cls)
{
    MTEST_CHECK(mtest_errclass(rc) == cls, "%s: expected class %d got %d (%s)", call, cls,
                mtest_errclass(rc), mtest_errstr(rc));
    MTEST_CHECK(dup_calls == 1, "%s: handler of the request's communicator ran %d times", call,
                dup_calls);
    if (dup_calls == 1) {
        int r = MPI_UNEQUAL;
        MTEST_CALL(MPI_Comm_compare(dup_last_comm, dupc, &r));
        MTEST_EQ("communicator given to the handler is the request's (MPI_IDENT)", MPI_IDENT, r);
        MTEST_EQ("code given to the handler", rc, dup_last_code);
    }
    MTEST_CHECK(self_calls == 0 && world_calls == 0,
                "%s: MPI_COMM_SELF's handler ran %d times, MPI_COMM_WORLD's %d times", call,
                self_calls, world_calls);
    dup_calls = self_calls = world_calls = 0;
}

int main(int argc, char **argv)
{
    MPI_Errhandler eh_self, eh_world, eh_dup;
    MPI_Request r[2];
    MPI_Status st[2];
    int rc, flag, idx, outcount, indices[2];

    mtest_init(&argc, &argv);
    MTEST_CALL(MPI_Comm_dup(MPI_COMM_WORLD, &dupc));
    MTEST_CALL(MPI_Comm_create_errhandler(on_self, &eh_self));
    MTEST_CALL(MPI_Comm_create_errhandler(on_world, &eh_world));
    MTEST_CALL(MPI_Comm_create_errhandler(on_dup, &eh_dup));
    MTEST_CALL(MPI_Comm_set_errhandler(MPI_COMM_SELF, eh_self));
    MTEST_CALL(MPI_Comm_set_errhandler(MPI_COMM_WORLD, eh_world));
    MTEST_CALL(MPI_Comm_set_errhandler(dupc, eh_dup));

    /* MPI_Waitall: MPI_ERR_IN_STATUS, the truncated receive's status says why. */
    post(r);
    st[0].MPI_ERROR = st[1].MPI_ERROR = -1;
    rc = MPI_Waitall(2, r, st);
    expect_dup_handler("MPI_Waitall", rc, MPI_ERR_IN_STATUS);
    MTEST_EQ("MPI_Waitall: class of status[0].MPI_ERROR", MPI_ERR_TRUNCATE,
             mtest_errclass(st[0].MPI_ERROR));
    MTEST_EQ("MPI_Waitall: status[1].MPI_ERROR", MPI_SUCCESS, st[1].MPI_ERROR);
    MTEST_EQ("MPI_Waitall: fine message", 5, fine_in[0]);
    finish_sends();

    /* MPI_Testall. */
    post(r);
    flag = 0;
    do {
        rc = MPI_Testall(2, r, &flag, st);
    } while (rc == MPI_SUCCESS && !flag);
    expect_dup_handler("MPI_Testall", rc, MPI_ERR_IN_STATUS);
    MTEST_EQ("MPI_Testall: class of status[0].MPI_ERROR", MPI_ERR_TRUNCATE,
             mtest_errclass(st[0].MPI_ERROR));
    finish_sends();

    /* MPI_Waitsome / MPI_Testsome: exactly one of the calls reports the truncation. */
    for (int pass = 0; pass < 2; pass++) {
        const char *call = pass ? "MPI_Testsome" : "MPI_Waitsome";
        int failures = 0, got_trunc = 0;
        post(r);
        for (;;) {
            outcount = 0;
            rc = pass ? MPI_Testsome(2, r, &outcount, indices, st)
                      : MPI_Waitsome(2, r, &outcount, indices, st);
            if (outcount == MPI_UNDEFINED) {
                break;
            }
            if (rc != MPI_SUCCESS) {
                failures++;
                expect_dup_handler(call, rc, MPI_ERR_IN_STATUS);
                for (int k = 0; k < outcount; k++) {
                    if (indices[k] == 0) {
                        got_trunc = mtest_errclass(st[k].MPI_ERROR) == MPI_ERR_TRUNCATE;
                    }
                }
            }
        }
        MTEST_CHECK(failures == 1 && got_trunc, "%s: %d failing calls, truncation reported %d",
                    call, failures, got_trunc);
        finish_sends();
    }

    /* MPI_Waitany / MPI_Testany: the failing request's own class. */
    for (int pass = 0; pass < 2; pass++) {
        const char *call = pass ? "MPI_Testany" : "MPI_Waitany";
        int failures = 0;
        post(r);
        for (;;) {
            flag = 1;
            idx = -5;
            rc = pass ? MPI_Testany(2, r, &idx, &flag, &st[0]) : MPI_Waitany(2, r, &idx, &st[0]);
            if (rc == MPI_SUCCESS && flag && idx == MPI_UNDEFINED) {
                break;
            }
            if (rc != MPI_SUCCESS) {
                failures++;
                MTEST_EQ("index of the failing request", 0, idx);
                expect_dup_handler(call, rc, MPI_ERR_TRUNCATE);
            }
        }
        MTEST_EQ("failing calls", 1, failures);
        finish_sends();
    }

    /* MPI_Wait and MPI_Test. */
    post(r);
    rc = MPI_Wait(&r[0], &st[0]);
    expect_dup_handler("MPI_Wait", rc, MPI_ERR_TRUNCATE);
    MTEST_CALL(MPI_Wait(&r[1], MPI_STATUS_IGNORE));
    finish_sends();
    post(r);
    flag = 0;
    do {
        rc = MPI_Test(&r[0], &flag, &st[0]);
    } while (rc == MPI_SUCCESS && !flag);
    expect_dup_handler("MPI_Test", rc, MPI_ERR_TRUNCATE);
    MTEST_CALL(MPI_Wait(&r[1], MPI_STATUS_IGNORE));
    finish_sends();

    /* MPI_ERRORS_RETURN on the communicator, fatal everywhere else: the call returns. */
    MTEST_CALL(MPI_Comm_set_errhandler(dupc, MPI_ERRORS_RETURN));
    MTEST_CALL(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL));
    MTEST_CALL(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
    post(r);
    rc = MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
    MTEST_EQ("MPI_Waitall under MPI_ERRORS_RETURN: class", MPI_ERR_IN_STATUS, mtest_errclass(rc));
    finish_sends();
    MTEST_CALL(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MTEST_CALL(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));

    MTEST_CALL(MPI_Errhandler_free(&eh_self));
    MTEST_CALL(MPI_Errhandler_free(&eh_world));
    MTEST_CALL(MPI_Errhandler_free(&eh_dup));
    MTEST_CALL(MPI_Comm_free(&dupc));
    return mtest_finalize();
}
