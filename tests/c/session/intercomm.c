/*
 * MPI_Intercomm_create_from_groups without MPI_Init: the even and the odd members of
 * mpi://WORLD form two groups joined by an intercommunicator (leaders: the first of
 * each); sizes, point-to-point across and a merge. Before that, each group makes a
 * communicator of its own with the same string tag at the same time.
 */
#include "stest.h"

int main(void)
{
    mtest_write_pidfile();
    MPI_Session s = stest_session();
    MPI_Comm c = stest_world_comm(s, "org.oxmpi.test.inter.all");
    int rank, size;
    MTEST_CALL(MPI_Comm_rank(c, &rank));
    MTEST_CALL(MPI_Comm_size(c, &size));
    mtest.rank = rank;
    mtest.size = size;
    if (size < 2) {
        return stest_finish(c, s);
    }
    MPI_Group world, even, odd;
    MTEST_CALL(MPI_Group_from_session_pset(s, "mpi://WORLD", &world));
    int range[1][3] = {{0, size - 1, 2}};
    MTEST_CALL(MPI_Group_range_incl(world, 1, range, &even));
    MTEST_CALL(MPI_Group_range_excl(world, 1, range, &odd));
    int mine = rank % 2;
    /* Disjoint groups may use the same string tag at the same time. */
    MPI_Comm half = MPI_COMM_NULL;
    MTEST_CALL(MPI_Comm_create_from_group(mine ? odd : even, "org.oxmpi.test.half", MPI_INFO_NULL,
                                          MPI_ERRORS_RETURN, &half));
    int hsize = -1, hsum = -1;
    MTEST_CALL(MPI_Comm_size(half, &hsize));
    MTEST_EQ("half size", mine ? size / 2 : size - size / 2, hsize);
    MTEST_CALL(MPI_Allreduce(&mine, &hsum, 1, MPI_INT, MPI_SUM, half));
    MTEST_EQ("sum of parities in a half", mine ? hsize : 0, hsum);
    MTEST_CALL(MPI_Comm_free(&half));
    MPI_Comm inter = MPI_COMM_NULL;
    MTEST_CALL(MPI_Intercomm_create_from_groups(mine ? odd : even, 0, mine ? even : odd, 0,
                                                "org.oxmpi.test.inter", MPI_INFO_NULL,
                                                MPI_ERRORS_RETURN, &inter));
    int flag = 0, lsize = -1, rsize = -1, lrank = -1;
    MTEST_CALL(MPI_Comm_test_inter(inter, &flag));
    MTEST_EQ("is an intercommunicator", 1, flag);
    MTEST_CALL(MPI_Comm_size(inter, &lsize));
    MTEST_CALL(MPI_Comm_remote_size(inter, &rsize));
    MTEST_CALL(MPI_Comm_rank(inter, &lrank));
    int nodd = size / 2, neven = size - nodd;
    MTEST_EQ("local size", mine ? nodd : neven, lsize);
    MTEST_EQ("remote size", mine ? neven : nodd, rsize);
    MTEST_EQ("local rank", rank / 2, lrank);
    /* Each member of the smaller (odd) side exchanges with its partner. */
    if (lrank < nodd) {
        int v = 100 + rank, got = -1;
        MTEST_CALL(MPI_Sendrecv(&v, 1, MPI_INT, lrank, 1, &got, 1, MPI_INT, lrank, 1, inter,
                                MPI_STATUS_IGNORE));
        MTEST_EQ("partner's value", 100 + (mine ? rank - 1 : rank + 1), got);
    }
    MPI_Comm merged;
    MTEST_CALL(MPI_Intercomm_merge(inter, mine, &merged));
    int mrank = -1, sum = -1;
    MTEST_CALL(MPI_Comm_rank(merged, &mrank));
    MTEST_EQ("rank in the merge (evens first)", mine ? neven + rank / 2 : rank / 2, mrank);
    MTEST_CALL(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, merged));
    MTEST_EQ("sum over the merge", size * (size - 1) / 2, sum);
    MTEST_CALL(MPI_Comm_free(&merged));
    MTEST_CALL(MPI_Comm_disconnect(&inter));
    MTEST_EQ("handle after disconnect", MPI_COMM_NULL, inter);
    MTEST_CALL(MPI_Group_free(&world));
    MTEST_CALL(MPI_Group_free(&even));
    MTEST_CALL(MPI_Group_free(&odd));
    return stest_finish(c, s);
}
