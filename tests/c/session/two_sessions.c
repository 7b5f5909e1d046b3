/*
 * Two sessions open at once, without MPI_Init: each makes its own communicator over
 * mpi://WORLD (different string tags), traffic on both interleaves without mixing,
 * their groups are identical, and the second keeps working after the first ends.
 */
#include "stest.h"

int main(void)
{
    mtest_write_pidfile();
    MPI_Session a = stest_session(), b = stest_session();
    MTEST_CHECK(a != b, "two sessions with the same handle %#x", (unsigned)a);
    MPI_Comm ca = stest_world_comm(a, "org.oxmpi.test.two.a");
    MPI_Comm cb = stest_world_comm(b, "org.oxmpi.test.two.b");
    int rank, size;
    MTEST_CALL(MPI_Comm_rank(ca, &rank));
    MTEST_CALL(MPI_Comm_size(ca, &size));
    mtest.rank = rank;
    mtest.size = size;
    int result = -1;
    MTEST_CALL(MPI_Comm_compare(ca, cb, &result));
    MTEST_EQ("compare(ca, cb)", MPI_CONGRUENT, result);

    MPI_Group ga, gb;
    MTEST_CALL(MPI_Group_from_session_pset(a, "mpi://WORLD", &ga));
    MTEST_CALL(MPI_Group_from_session_pset(b, "mpi://WORLD", &gb));
    MTEST_CALL(MPI_Group_compare(ga, gb, &result));
    MTEST_EQ("compare of the WORLD groups", MPI_IDENT, result);
    MTEST_CALL(MPI_Group_free(&ga));
    MTEST_CALL(MPI_Group_free(&gb));

    /* The same tag on both communicators: each receive gets its own communicator's
     * message, whichever arrives first. */
    int to = (rank + 1) % size, from = (rank + size - 1) % size;
    int va = 1000 + rank, vb = 2000 + rank, ra = -1, rb = -1;
    MPI_Request rq[4];
    MTEST_CALL(MPI_Irecv(&rb, 1, MPI_INT, from, 5, cb, &rq[0]));
    MTEST_CALL(MPI_Irecv(&ra, 1, MPI_INT, from, 5, ca, &rq[1]));
    MTEST_CALL(MPI_Isend(&va, 1, MPI_INT, to, 5, ca, &rq[2]));
    MTEST_CALL(MPI_Isend(&vb, 1, MPI_INT, to, 5, cb, &rq[3]));
    MTEST_CALL(MPI_Waitall(4, rq, MPI_STATUSES_IGNORE));
    MTEST_EQ("message on a", 1000 + from, ra);
    MTEST_EQ("message on b", 2000 + from, rb);

    /* End session a; b goes on. */
    MTEST_CALL(MPI_Comm_free(&ca));
    MTEST_CALL(MPI_Session_finalize(&a));
    MTEST_EQ("handle after MPI_Session_finalize", MPI_SESSION_NULL, a);
    int sum = -1;
    MTEST_CALL(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, cb));
    MTEST_EQ("sum over b after a ended", size * (size - 1) / 2, sum);
    return stest_finish(cb, b);
}
