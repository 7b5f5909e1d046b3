/*
 * Errors of MPI_Start, MPI_Cancel and MPI_Request_free on a request go to the error
 * handler of the request's communicator (MPI-4.1 section 9.3): here a duplicate of
 * MPI_COMM_WORLD with a counting handler, while MPI_COMM_SELF and MPI_COMM_WORLD keep
 * handlers that must never run.  MPI_Start of an active persistent request fails with
 * MPI_ERR_REQUEST; after the failure the request is still usable and completes with
 * the right data.
 */
#include "mtest.h"

static int self_calls, world_calls, dup_calls, dup_last_class;
static MPI_Comm dupc, dup_last_comm;

static void on_self(MPI_Comm *c, int *code, ...) { (void)c; (void)code; self_calls++; }
static void on_world(MPI_Comm *c, int *code, ...) { (void)c; (void)code; world_calls++; }
static void on_dup(MPI_Comm *c, int *code, ...)
{
    dup_calls++;
    dup_last_comm = *c;
    MPI_Error_class(*code, &dup_last_class);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    MPI_Errhandler hs, hw, hd;
    MTEST_CALL(MPI_Comm_create_errhandler(on_self, &hs));
    MTEST_CALL(MPI_Comm_create_errhandler(on_world, &hw));
    MTEST_CALL(MPI_Comm_create_errhandler(on_dup, &hd));
    MTEST_CALL(MPI_Comm_dup(MPI_COMM_WORLD, &dupc));
    MTEST_CALL(MPI_Comm_set_errhandler(MPI_COMM_SELF, hs));
    MTEST_CALL(MPI_Comm_set_errhandler(MPI_COMM_WORLD, hw));
    MTEST_CALL(MPI_Comm_set_errhandler(dupc, hd));

    int me = mtest_rank(), out = 0, in = -1;
    MPI_Request r[2];
    MTEST_CALL(MPI_Recv_init(&in, 1, MPI_INT, me, 7, dupc, &r[0]));
    MTEST_CALL(MPI_Send_init(&out, 1, MPI_INT, me, 7, dupc, &r[1]));
    for (int round = 0; round < 3; round++) {
        out = 100 + round;
        in = -1;
        MTEST_CALL(MPI_Start(&r[0]));
        dup_calls = 0;
        int rc = MPI_Start(&r[0]); /* already active */
        MTEST_EQ("class of MPI_Start on an active request", MPI_ERR_REQUEST, mtest_errclass(rc));
        MTEST_EQ("handler runs of the request's communicator", 1, dup_calls);
        MTEST_EQ("class the handler saw", MPI_ERR_REQUEST, dup_last_class);
        if (dup_calls == 1) {
            int cmp = MPI_UNEQUAL;
            MTEST_CALL(MPI_Comm_compare(dup_last_comm, dupc, &cmp));
            MTEST_EQ("communicator the handler got", MPI_IDENT, cmp);
        }
        MTEST_CALL(MPI_Start(&r[1]));
        MTEST_CALL(MPI_Waitall(2, r, MPI_STATUSES_IGNORE));
        MTEST_EQ("received value", 100 + round, in);
    }
    MTEST_CALL(MPI_Request_free(&r[0]));
    MTEST_CALL(MPI_Request_free(&r[1]));
    MTEST_EQ("MPI_Request_free sets MPI_REQUEST_NULL", 1, r[0] == MPI_REQUEST_NULL && r[1] == MPI_REQUEST_NULL);
    MTEST_EQ("handler runs of MPI_COMM_SELF", 0, self_calls);
    MTEST_EQ("handler runs of MPI_COMM_WORLD", 0, world_calls);

    MTEST_CALL(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    MTEST_CALL(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MTEST_CALL(MPI_Comm_free(&dupc));
    MTEST_CALL(MPI_Errhandler_free(&hs));
    MTEST_CALL(MPI_Errhandler_free(&hw));
    MTEST_CALL(MPI_Errhandler_free(&hd));
    return mtest_finalize();
}
