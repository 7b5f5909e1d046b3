/*
 * MPI_Comm_set_errhandler on the communicator of an MPI_Comm_idup that has not completed
 * yet (mpi4py's Comm.Idup does this right after the call; MPICH and Open MPI accept it):
 * the handler set then is the one the completed duplicate has, a second set before
 * completion replaces the first, and errors on the duplicate go to it with the
 * duplicate as the communicator. Rank 0 sets the handlers before rank 1 even starts
 * its idup, so the duplicate cannot be complete there.
 */
#include "mtest.h"

static int calls;
static MPI_Comm seen;
static int seen_class;

static void count_errors(MPI_Comm *c, int *code, ...)
{
    calls++;
    seen = *c;
    MPI_Error_class(*code, &seen_class);
}

int main(int argc, char **argv)
{
    int rank, size;
    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    MPI_Errhandler mine;
    MTEST_CALL(MPI_Comm_create_errhandler(count_errors, &mine));

    MPI_Comm d;
    MPI_Request r;
    int token = 0;
    if (rank == 1) {
        MTEST_CALL(MPI_Recv(&token, 1, MPI_INT, 0, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        MTEST_EQ("token from rank 0", 42, token);
    }
    MTEST_CALL(MPI_Comm_idup(MPI_COMM_WORLD, &d, &r));
    /* First MPI_ERRORS_RETURN, then the user handler: the second replaces the first. */
    MTEST_CALL(MPI_Comm_set_errhandler(d, MPI_ERRORS_RETURN));
    MTEST_CALL(MPI_Comm_set_errhandler(d, mine));
    /* The program's handle goes; the pending duplicate keeps its own reference. */
    MTEST_CALL(MPI_Errhandler_free(&mine));
    if (rank == 0 && size > 1) {
        token = 42;
        MTEST_CALL(MPI_Send(&token, 1, MPI_INT, 1, 5, MPI_COMM_WORLD));
    }
    MTEST_CALL(MPI_Wait(&r, MPI_STATUS_IGNORE));

    int sum = 0;
    MTEST_CALL(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, d));
    MTEST_EQ("allreduce of ranks on the duplicate", size * (size - 1) / 2, sum);

    /* The duplicate reports to the user handler, naming itself. */
    int v = 1;
    int rc = MPI_Send(&v, 1, MPI_INT, size + 3, 0, d);
    MTEST_EQ("class of a send to rank size+3", MPI_ERR_RANK, mtest_errclass(rc));
    MTEST_EQ("user handler calls", 1, calls);
    MTEST_EQ("class seen by the handler", MPI_ERR_RANK, seen_class);
    int cmp;
    MTEST_CALL(MPI_Comm_compare(seen, d, &cmp));
    MTEST_EQ("communicator given to the handler", MPI_IDENT, cmp);

    /* A predefined handler set while pending: the completed duplicate returns errors
     * to the caller and MPI_Comm_get_errhandler gives that handler back. */
    MPI_Comm e;
    MTEST_CALL(MPI_Comm_idup(d, &e, &r));
    MTEST_CALL(MPI_Comm_set_errhandler(e, MPI_ERRORS_RETURN));
    MTEST_CALL(MPI_Wait(&r, MPI_STATUS_IGNORE));
    MPI_Errhandler got;
    MTEST_CALL(MPI_Comm_get_errhandler(e, &got));
    MTEST_CHECK(got == MPI_ERRORS_RETURN, "handler of the second duplicate is not MPI_ERRORS_RETURN");
    MTEST_CALL(MPI_Errhandler_free(&got));
    rc = MPI_Send(&v, 1, MPI_INT, -7, 0, e);
    MTEST_EQ("class of a send to rank -7", MPI_ERR_RANK, mtest_errclass(rc));
    MTEST_EQ("user handler calls after the second duplicate", 1, calls);

    MTEST_CALL(MPI_Comm_free(&e));
    MTEST_CALL(MPI_Comm_free(&d));
    return mtest_finalize();
}
