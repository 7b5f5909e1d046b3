/*
 * Sessions next to the world model: MPI_Init first, then a session. The process sets
 * match the world model's communicators (mpi://WORLD = MPI_COMM_WORLD's group,
 * mpi://SELF = MPI_COMM_SELF's, mpix://SHARED where listed = the MPI_COMM_TYPE_SHARED
 * split), a communicator from the WORLD group is congruent with MPI_COMM_WORLD, and
 * traffic on both does not mix. The session ends before MPI_Finalize.
 */
#include "stest.h"

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int rank = mtest_rank(), size = mtest_size(), result = -1, flag = 0;
    MPI_Session s = stest_session();
    MTEST_CALL(MPI_Initialized(&flag));
    MTEST_EQ("MPI_Initialized", 1, flag);

    MPI_Group pg, wg;
    MTEST_CALL(MPI_Group_from_session_pset(s, "mpi://WORLD", &pg));
    MTEST_CALL(MPI_Comm_group(MPI_COMM_WORLD, &wg));
    MTEST_CALL(MPI_Group_compare(pg, wg, &result));
    MTEST_EQ("mpi://WORLD vs MPI_COMM_WORLD's group", MPI_IDENT, result);
    MTEST_CALL(MPI_Group_free(&wg));
    MTEST_CALL(MPI_Group_free(&pg));
    MTEST_CALL(MPI_Group_from_session_pset(s, "mpi://SELF", &pg));
    MTEST_CALL(MPI_Comm_group(MPI_COMM_SELF, &wg));
    MTEST_CALL(MPI_Group_compare(pg, wg, &result));
    MTEST_EQ("mpi://SELF vs MPI_COMM_SELF's group", MPI_IDENT, result);
    MTEST_CALL(MPI_Group_free(&wg));
    MTEST_CALL(MPI_Group_free(&pg));
    if (stest_has_pset(s, "mpix://SHARED")) {
        MPI_Comm node;
        MTEST_CALL(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
        MTEST_CALL(MPI_Group_from_session_pset(s, "mpix://SHARED", &pg));
        MTEST_CALL(MPI_Comm_group(node, &wg));
        MTEST_CALL(MPI_Group_compare(pg, wg, &result));
        MTEST_EQ("mpix://SHARED vs the shared split", MPI_IDENT, result);
        MTEST_CALL(MPI_Group_free(&wg));
        MTEST_CALL(MPI_Group_free(&pg));
        MTEST_CALL(MPI_Comm_free(&node));
    }

    MPI_Comm c = stest_world_comm(s, "org.oxmpi.test.with_world");
    MTEST_CALL(MPI_Comm_compare(c, MPI_COMM_WORLD, &result));
    MTEST_EQ("compare(session comm, MPI_COMM_WORLD)", MPI_CONGRUENT, result);
    /* Same tag and peers on both communicators. */
    int to = (rank + 1) % size, from = (rank + size - 1) % size;
    int vw = 10 * rank, vs = 10 * rank + 1, rw = -1, rs = -1;
    MPI_Request rq[4];
    MTEST_CALL(MPI_Irecv(&rs, 1, MPI_INT, from, 3, c, &rq[0]));
    MTEST_CALL(MPI_Irecv(&rw, 1, MPI_INT, from, 3, MPI_COMM_WORLD, &rq[1]));
    MTEST_CALL(MPI_Isend(&vw, 1, MPI_INT, to, 3, MPI_COMM_WORLD, &rq[2]));
    MTEST_CALL(MPI_Isend(&vs, 1, MPI_INT, to, 3, c, &rq[3]));
    MTEST_CALL(MPI_Waitall(4, rq, MPI_STATUSES_IGNORE));
    MTEST_EQ("world message", 10 * from, rw);
    MTEST_EQ("session message", 10 * from + 1, rs);
    /* A communicator derived from MPI_COMM_WORLD after the session's one exists gets a
     * context of its own. */
    MPI_Comm d;
    MTEST_CALL(MPI_Comm_dup(MPI_COMM_WORLD, &d));
    int sum = -1;
    MTEST_CALL(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, c));
    MTEST_EQ("sum over the session comm", size * (size - 1) / 2, sum);
    MTEST_CALL(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, d));
    MTEST_EQ("sum over the dup", size * (size - 1) / 2, sum);
    MTEST_CALL(MPI_Comm_free(&d));
    MTEST_CALL(MPI_Comm_free(&c));
    MTEST_CALL(MPI_Session_finalize(&s));
    return mtest_finalize();
}
