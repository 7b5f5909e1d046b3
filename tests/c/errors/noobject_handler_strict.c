/*
 * Errors that belong to no valid object: a group or datatype call, MPI_COMM_NULL, a
 * freed communicator, MPI_Reduce_local, a request array call.  MPI-4 sends them to
 * MPI_COMM_SELF's handler; programs written for MPI-1 to 3 set their handler on
 * MPI_COMM_WORLD and expect it to apply (MPICH and Open MPI do so).  oxmpi uses the
 * handler the program set on MPI_COMM_SELF, else the one it set on MPI_COMM_WORLD, else
 * MPI_ERRORS_ARE_FATAL (docs/errors.md).
 *
 * Phase 1: only MPI_COMM_WORLD has a handler (MPI_ERRORS_RETURN): the calls return
 * their class instead of aborting.  Phase 2: a counting handler on MPI_COMM_WORLD runs
 * for each, given MPI_COMM_WORLD.  Phase 3: a handler set on MPI_COMM_SELF takes over,
 * given MPI_COMM_SELF, while MPI_COMM_WORLD's is MPI_ERRORS_ARE_FATAL.
 */
#include "mtest.h"

static int calls;
static MPI_Comm last_comm;
static int last_code;

static void count(MPI_Comm *c, int *code, ...)
{
    calls++;
    last_comm = *c;
    last_code = *code;
}

static MPI_Comm freed;

/* Makes each no-object error in turn; returns the number made. */
static int make_errors(MPI_Comm expected, int counting)
{
    int n = 0, v = 0, rc;
    int in[2] = {1, 2}, out[2];
#define ONE(cls, cls2, call)                                                                      \
    do {                                                                                          \
        calls = 0;                                                                                \
        rc = (call);                                                                              \
        n++;                                                                                      \
        MTEST_CHECK(mtest_errclass(rc) == (cls) || mtest_errclass(rc) == (cls2),                  \
                    "%s: expected class %s got %d (%s)", #call, #cls, mtest_errclass(rc),         \
                    mtest_errstr(rc));                                                            \
        if (counting) {                                                                           \
            MTEST_CHECK(calls == 1, "%s: handler ran %d times", #call, calls);                    \
            if (calls == 1) {                                                                     \
                int r_ = MPI_UNEQUAL;                                                             \
                MTEST_CALL(MPI_Comm_compare(last_comm, expected, &r_));                           \
                MTEST_CHECK(r_ == MPI_IDENT, "%s: handler given the wrong communicator", #call);  \
                MTEST_EQ("code given to the handler", rc, last_code);                             \
            }                                                                                     \
        }                                                                                         \
    } while (0)
    ONE(MPI_ERR_GROUP, MPI_ERR_GROUP, MPI_Group_size(MPI_GROUP_NULL, &v));
    ONE(MPI_ERR_TYPE, MPI_ERR_TYPE, MPI_Type_size(MPI_DATATYPE_NULL, &v));
    ONE(MPI_ERR_COMM, MPI_ERR_COMM, MPI_Comm_size(MPI_COMM_NULL, &v));
    ONE(MPI_ERR_COMM, MPI_ERR_COMM, MPI_Comm_rank(freed, &v));
    ONE(MPI_ERR_OP, MPI_ERR_OP, MPI_Reduce_local(in, out, 2, MPI_INT, MPI_OP_NULL));
    ONE(MPI_ERR_COUNT, MPI_ERR_ARG, MPI_Waitall(-1, NULL, MPI_STATUSES_IGNORE));
#undef ONE
    return n;
}

int main(int argc, char **argv)
{
    MPI_Errhandler eh;

    /* No handler on MPI_COMM_SELF, ever, until phase 3. */
    mtest_init_plain(&argc, &argv);
    MTEST_CALL(MPI_Comm_dup(MPI_COMM_WORLD, &freed));
    MTEST_CALL(MPI_Comm_free(&freed));
    MTEST_CHECK(freed == MPI_COMM_NULL, "MPI_Comm_free did not set MPI_COMM_NULL");
    /* A stale handle: a duplicate freed through a copy of its handle. */
    {
        MPI_Comm c, copy;
        MTEST_CALL(MPI_Comm_dup(MPI_COMM_WORLD, &c));
        copy = c;
        MTEST_CALL(MPI_Comm_free(&c));
        freed = copy;
    }

    /* Phase 1. */
    MTEST_CALL(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    make_errors(MPI_COMM_WORLD, 0);

    /* Phase 2. */
    MTEST_CALL(MPI_Comm_create_errhandler(count, &eh));
    MTEST_CALL(MPI_Comm_set_errhandler(MPI_COMM_WORLD, eh));
    make_errors(MPI_COMM_WORLD, 1);

    /* Phase 3. */
    MTEST_CALL(MPI_Comm_set_errhandler(MPI_COMM_SELF, eh));
    MTEST_CALL(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
    make_errors(MPI_COMM_SELF, 1);

    MTEST_CALL(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MTEST_CALL(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    MTEST_CALL(MPI_Errhandler_free(&eh));
    return mtest_finalize();
}
