/*
 * Repeated small collectives (barrier, allreduce, reduce, bcast) with the same arguments
 * run the plan made for the first of them again.  This program checks that such a repeat never uses what it must not:
 * new data in the same buffers, another operation or buffer on the same communicator,
 * barriers between reductions, a communicator freed and replaced by one with the same
 * handle value but other members, a freed communicator used again (MPI_ERR_COMM), and a
 * user operation and a derived datatype (never reused) in between.
 */
#include "mtest.h"

static void sum_op(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    for (int i = 0; i < *len; i++) {
        ((int *)inout)[i] += ((int *)in)[i];
    }
}

/* Sum over the ranks of `comm` of (world rank + k). */
static int expected_sum(MPI_Comm comm, int k)
{
    int n, me, world, total = 0;
    MPI_Comm_size(comm, &n);
    MPI_Comm_rank(comm, &me);
    MPI_Comm_rank(MPI_COMM_WORLD, &world);
    int *all = mtest_malloc(sizeof(int) * (size_t)n);
    MTEST_CALL(MPI_Allgather(&world, 1, MPI_INT, all, 1, MPI_INT, comm));
    for (int i = 0; i < n; i++) {
        total += all[i] + k;
    }
    free(all);
    return total;
}

static void same_buffers(MPI_Comm comm, int rounds)
{
    int world, size;
    int in[3], out[3];
    MPI_Comm_rank(MPI_COMM_WORLD, &world);
    MPI_Comm_size(comm, &size);
    for (int k = 0; k < rounds; k++) {
        int want = expected_sum(comm, k);
        in[0] = world + k;
        in[1] = -(world + k);
        in[2] = k;
        MTEST_CALL(MPI_Allreduce(in, out, 3, MPI_INT, MPI_SUM, comm));
        MTEST_EQ("sum", want, out[0]);
        MTEST_EQ("negated sum", -want, out[1]);
        MTEST_EQ("constant sum", k * size, out[2]);
        MTEST_CALL(MPI_Barrier(comm));
        MTEST_CALL(MPI_Allreduce(in, out, 3, MPI_INT, MPI_MAX, comm));
        MTEST_EQ("max of constants", k, out[2]);
        /* In place on the same receive buffer. */
        out[0] = world + k;
        MTEST_CALL(MPI_Allreduce(MPI_IN_PLACE, out, 1, MPI_INT, MPI_SUM, comm));
        MTEST_EQ("in-place sum", want, out[0]);
        /* Rooted calls: the same buffers with the root moving every other round. */
        for (int rep = 0; rep < 2; rep++) {
            int root = (k / 2) % size, me;
            MPI_Comm_rank(comm, &me);
            out[0] = -1;
            MTEST_CALL(MPI_Reduce(in, out, 1, MPI_INT, MPI_SUM, root, comm));
            if (me == root) {
                MTEST_EQ("reduce sum at the root", want, out[0]);
            }
            out[1] = me == root ? 1000 * k + rep : -1;
            MTEST_CALL(MPI_Bcast(&out[1], 1, MPI_INT, root, comm));
            MTEST_EQ("broadcast value", 1000 * k + rep, out[1]);
        }
    }
}

static void user_op_and_type(MPI_Comm comm)
{
    int world, in[2], out[2];
    MPI_Op op;
    MPI_Datatype pair;
    MPI_Comm_rank(MPI_COMM_WORLD, &world);
    int want = expected_sum(comm, 1);
    MTEST_CALL(MPI_Op_create(sum_op, 1, &op));
    MTEST_CALL(MPI_Type_contiguous(2, MPI_INT, &pair));
    MTEST_CALL(MPI_Type_commit(&pair));
    for (int k = 0; k < 3; k++) {
        in[0] = world + 1;
        in[1] = 2 * (world + 1);
        MTEST_CALL(MPI_Allreduce(in, out, 2, MPI_INT, op, comm));
        MTEST_EQ("user op sum", want, out[0]);
        MTEST_CALL(MPI_Allreduce(in, out, 1, pair, MPI_SUM, comm));
        MTEST_EQ("pair type sum", 2 * want, out[1]);
    }
    MTEST_CALL(MPI_Type_free(&pair));
    MTEST_CALL(MPI_Op_free(&op));
}

int main(int argc, char **argv)
{
    int world, size;
    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &world);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    same_buffers(MPI_COMM_WORLD, 20);
    user_op_and_type(MPI_COMM_WORLD);
    same_buffers(MPI_COMM_WORLD, 3);

    /* A communicator freed and replaced: the handle value may come back with other
     * members, and the repeat must not run on the old one. */
    for (int round = 0; round < 4; round++) {
        MPI_Comm c, stale;
        int color = round % 2 == 0 ? 0 : world % 2;
        MTEST_CALL(MPI_Comm_split(MPI_COMM_WORLD, color, world, &c));
        same_buffers(c, 3);
        stale = c;
        MTEST_CALL(MPI_Comm_free(&c));
        if (round == 3) {
            int in = 1, out = 0;
            MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
            MTEST_EXPECT_CLASS(MPI_ERR_COMM, MPI_Allreduce(&in, &out, 1, MPI_INT, MPI_SUM, stale));
            MTEST_EXPECT_CLASS(MPI_ERR_COMM, MPI_Barrier(stale));
            MPI_Comm_set_errhandler(MPI_COMM_WORLD, mtest_initial_errhandler);
        }
    }
    same_buffers(MPI_COMM_WORLD, 3);
    return mtest_finalize();
}
