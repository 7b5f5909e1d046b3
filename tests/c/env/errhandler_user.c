/*
 * User error handlers: MPI_Comm_create_errhandler / MPI_Comm_set_errhandler /
 * MPI_Comm_get_errhandler / MPI_Errhandler_free and the MPI-1 MPI_Errhandler_create.
 * A handler receives the communicator the error happened on and the error code the call
 * returns; the call returns after the handler does; the handler may call MPI itself;
 * new communicators inherit the handler (MPI_Comm_dup); freeing the handle does not
 * detach the handler from communicators that use it; MPI_Comm_call_errhandler invokes it
 * with the code given; errors of calls without a communicator go to MPI_COMM_SELF's
 * handler (MPI-4; MPI-3 implementations such as MPICH 4.0.2 use MPI_COMM_WORLD's, which is
 * accepted elsewhere than on oxmpi).
 */
#include "mtest.h"

static int is_oxmpi(void)
{
    char v[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    MPI_Get_library_version(v, &len);
    return strncmp(v, "oxmpi", 5) == 0;
}

#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

static int calls;
static MPI_Comm last_comm = MPI_COMM_NULL;
static int last_code = -1;
static int class_inside = -1;
static int rank_inside = -1;

static void handler(MPI_Comm *comm, int *code, ...)
{
    calls++;
    last_comm = *comm;
    last_code = *code;
    /* MPI calls are allowed inside a handler */
    MPI_Error_class(*code, &class_inside);
    MPI_Comm_rank(*comm, &rank_inside);
}

static int other_calls;
static void other_handler(MPI_Comm *comm, int *code, ...)
{
    (void)comm;
    (void)code;
    other_calls++;
}

static void expect_call(const char *what, int rc, MPI_Comm comm, int cls, int before)
{
    MTEST_CHECK(rc != MPI_SUCCESS, "%s: the call succeeded", what);
    MTEST_CHECK(calls == before + 1, "%s: handler called %d times, expected 1", what, calls - before);
    MTEST_CHECK(last_comm == comm, "%s: handler got communicator %#x, expected %#x", what,
                (unsigned)last_comm, (unsigned)comm);
    MTEST_CHECK(last_code == rc, "%s: handler got code %d, call returned %d", what, last_code, rc);
    MTEST_CHECK(class_inside == cls, "%s: class of the code %d, expected %d", what, class_inside, cls);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int rank = mtest_rank(), size = mtest_size();
    int x = 7, before, rc;
    MPI_Errhandler eh = MPI_ERRHANDLER_NULL, got = MPI_ERRHANDLER_NULL;

    MTEST_CALL(MPI_Comm_create_errhandler(handler, &eh));
    MTEST_CHECK(eh != MPI_ERRHANDLER_NULL, "MPI_Comm_create_errhandler gave MPI_ERRHANDLER_NULL");
    MTEST_CALL(MPI_Comm_set_errhandler(MPI_COMM_WORLD, eh));
    MTEST_CALL(MPI_Comm_get_errhandler(MPI_COMM_WORLD, &got));
    MTEST_CHECK(got == eh, "MPI_Comm_get_errhandler: %#x, set %#x", (unsigned)got, (unsigned)eh);
    MTEST_CALL(MPI_Errhandler_free(&got));
    MTEST_CHECK(got == MPI_ERRHANDLER_NULL, "MPI_Errhandler_free did not reset the handle");

    /* an invalid rank: the handler sees MPI_COMM_WORLD and the code the call returns */
    before = calls;
    rc = MPI_Send(&x, 1, MPI_INT, size, 0, MPI_COMM_WORLD);
    expect_call("MPI_Send to rank == size", rc, MPI_COMM_WORLD, MPI_ERR_RANK, before);
    MTEST_EQ("MPI_Comm_rank inside the handler", rank, rank_inside);
    before = calls;
    rc = MPI_Recv(&x, -1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    expect_call("MPI_Recv with count -1", rc, MPI_COMM_WORLD, MPI_ERR_COUNT, before);

    /* MPI_Comm_call_errhandler passes the code through and returns MPI_SUCCESS */
    before = calls;
    rc = MPI_Comm_call_errhandler(MPI_COMM_WORLD, MPI_ERR_OTHER);
    MTEST_EQ("MPI_Comm_call_errhandler return", MPI_SUCCESS, rc);
    MTEST_EQ("handler calls after MPI_Comm_call_errhandler", before + 1, calls);
    MTEST_EQ("code given to MPI_Comm_call_errhandler", MPI_ERR_OTHER, last_code);

    /* a duplicate inherits the handler and reports itself as the communicator */
    MPI_Comm dup = MPI_COMM_NULL;
    MTEST_CALL(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    MTEST_CALL(MPI_Comm_get_errhandler(dup, &got));
    MTEST_CHECK(got == eh, "handler of MPI_Comm_dup(WORLD): %#x, expected %#x", (unsigned)got, (unsigned)eh);
    MTEST_CALL(MPI_Errhandler_free(&got));
    before = calls;
    rc = MPI_Send(&x, 1, MPI_INT, 0, -5, dup);
    expect_call("MPI_Send with tag -5 on the duplicate", rc, dup, MPI_ERR_TAG, before);

    /* freeing the handle leaves the handler in place on the communicators using it */
    MTEST_CALL(MPI_Errhandler_free(&eh));
    MTEST_CHECK(eh == MPI_ERRHANDLER_NULL, "MPI_Errhandler_free did not reset the handle");
    before = calls;
    rc = MPI_Send(&x, 1, MPI_INT, -7, 0, MPI_COMM_WORLD);
    expect_call("MPI_Send to rank -7 after MPI_Errhandler_free", rc, MPI_COMM_WORLD, MPI_ERR_RANK, before);
    before = calls;
    rc = MPI_Send(&x, 1, MPI_INT, -7, 0, dup);
    expect_call("MPI_Send to rank -7 on the duplicate", rc, dup, MPI_ERR_RANK, before);

    /* replacing the handler on one communicator does not touch the other */
    MPI_Errhandler eh2 = MPI_ERRHANDLER_NULL;
    MTEST_CALL(MPI_Errhandler_create(other_handler, &eh2)); /* MPI-1 name */
    MTEST_CALL(MPI_Errhandler_set(dup, eh2));
    MTEST_CALL(MPI_Errhandler_free(&eh2));
    before = calls;
    rc = MPI_Send(&x, 1, MPI_INT, size, 0, dup);
    MTEST_CHECK(rc != MPI_SUCCESS, "MPI_Send to rank == size on dup succeeded");
    MTEST_EQ("other handler calls", 1, other_calls);
    MTEST_EQ("first handler untouched by an error on dup", before, calls);
    MTEST_CALL(MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN));
    MTEST_CALL(MPI_Comm_free(&dup));

    /* errors of calls that have no communicator go to MPI_COMM_SELF's handler */
    MPI_Errhandler self_eh = MPI_ERRHANDLER_NULL;
    MTEST_CALL(MPI_Comm_create_errhandler(handler, &self_eh));
    MTEST_CALL(MPI_Comm_set_errhandler(MPI_COMM_SELF, self_eh));
    MTEST_CALL(MPI_Errhandler_free(&self_eh));
    before = calls;
    MPI_Request null_req = MPI_REQUEST_NULL;
    rc = MPI_Request_free(&null_req);
    expect_call("MPI_Request_free(MPI_REQUEST_NULL)", rc,
                is_oxmpi() || last_comm != MPI_COMM_WORLD ? MPI_COMM_SELF : MPI_COMM_WORLD, MPI_ERR_REQUEST,
                before);
    MTEST_CALL(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));

    /* predefined handlers may be freed after MPI_Comm_get_errhandler returned them */
    MTEST_CALL(MPI_Comm_get_errhandler(MPI_COMM_SELF, &got));
    MTEST_CHECK(got == MPI_ERRORS_RETURN, "handler of SELF: %#x", (unsigned)got);
    MTEST_CALL(MPI_Errhandler_free(&got));
    MTEST_CHECK(got == MPI_ERRHANDLER_NULL, "MPI_Errhandler_free(predefined) did not reset the handle");

    /* communication still works */
    if (size > 1) {
        int right = (rank + 1) % size, left = (rank + size - 1) % size, in = -1;
        MTEST_CALL(MPI_Sendrecv(&rank, 1, MPI_INT, right, 1, &in, 1, MPI_INT, left, 1, MPI_COMM_WORLD,
                                MPI_STATUS_IGNORE));
        MTEST_EQ("ring value", left, in);
    }
    MTEST_CALL(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    return mtest_finalize();
}
