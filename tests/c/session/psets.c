/*
 * Sessions without MPI_Init: the process sets and their info, groups from them, a
 * communicator from the mpi://WORLD group used for point-to-point and a collective,
 * the session's info. MPI_Initialized stays false throughout.
 */
#include "stest.h"

int main(void)
{
    mtest_write_pidfile();
    int flag = 1;
    MTEST_CALL(MPI_Initialized(&flag));
    MTEST_EQ("MPI_Initialized before", 0, flag);

    MPI_Info hints;
    MTEST_CALL(MPI_Info_create(&hints));
    MTEST_CALL(MPI_Info_set(hints, "thread_level", "MPI_THREAD_FUNNELED"));
    MPI_Session s = MPI_SESSION_NULL;
    MTEST_CALL(MPI_Session_init(hints, MPI_ERRORS_RETURN, &s));
    MTEST_CALL(MPI_Info_free(&hints));
    MTEST_CHECK(s != MPI_SESSION_NULL, "MPI_Session_init gave MPI_SESSION_NULL");
    MTEST_CALL(MPI_Initialized(&flag));
    MTEST_EQ("MPI_Initialized with a session", 0, flag);
    MTEST_CALL(MPI_Finalized(&flag));
    MTEST_EQ("MPI_Finalized with a session", 0, flag);

    /* The session's info names the thread level provided. */
    MPI_Info used;
    MTEST_CALL(MPI_Session_get_info(s, &used));
    char val[MPI_MAX_INFO_VAL];
    MTEST_CALL(MPI_Info_get(used, "thread_level", MPI_MAX_INFO_VAL - 1, val, &flag));
    MTEST_CHECK(flag, "session info has no thread_level");
    if (flag) {
        MTEST_CHECK(strncmp(val, "MPI_THREAD_", 11) == 0, "thread_level is %s", val);
    }
    MTEST_CALL(MPI_Info_free(&used));

    /* The process sets: WORLD and SELF must be there. */
    int n = 0, seen_world = 0, seen_self = 0, world_size = -1;
    MTEST_CALL(MPI_Session_get_num_psets(s, MPI_INFO_NULL, &n));
    MTEST_CHECK(n >= 2, "only %d process sets", n);
    for (int i = 0; i < n; i++) {
        int len = 0;
        MTEST_CALL(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, i, &len, NULL));
        char name[MPI_MAX_PSET_NAME_LEN];
        int cap = MPI_MAX_PSET_NAME_LEN;
        MTEST_CALL(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, i, &cap, name));
        MTEST_EQ("pset_len of a length query (with the NUL)", (int)strlen(name) + 1, len);
        MPI_Info pi;
        MTEST_CALL(MPI_Session_get_pset_info(s, name, &pi));
        MTEST_CALL(MPI_Info_get(pi, "mpi_size", MPI_MAX_INFO_VAL - 1, val, &flag));
        MTEST_CHECK(flag, "pset %s has no mpi_size", name);
        int size = flag ? atoi(val) : -1;
        MTEST_CALL(MPI_Info_free(&pi));
        MPI_Group g;
        int gsize = -1, grank = -1;
        MTEST_CALL(MPI_Group_from_session_pset(s, name, &g));
        MTEST_CALL(MPI_Group_size(g, &gsize));
        MTEST_CALL(MPI_Group_rank(g, &grank));
        MTEST_EQ("group size = mpi_size", size, gsize);
        MTEST_CHECK(grank >= 0 && grank < gsize, "rank %d in pset %s of size %d", grank, name, gsize);
        if (strcmp(name, "mpi://WORLD") == 0) {
            seen_world = 1;
            world_size = gsize;
        } else if (strcmp(name, "mpi://SELF") == 0) {
            seen_self = 1;
            MTEST_EQ("mpi://SELF size", 1, gsize);
            MTEST_EQ("rank in mpi://SELF", 0, grank);
        }
        MTEST_CALL(MPI_Group_free(&g));
    }
    MTEST_CHECK(seen_world && seen_self, "mpi://WORLD (%d) or mpi://SELF (%d) missing",
                seen_world, seen_self);

    /* A truncated name: pset_len bytes including the NUL. */
    char shortname[5];
    int cap = 5;
    MTEST_CALL(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, 0, &cap, shortname));
    MTEST_CHECK(strlen(shortname) == 4 && strncmp(shortname, "mpi:", 4) == 0,
                "truncated name %s", shortname);

    /* A communicator from the WORLD group: ranks as in the group, a ring, a reduction. */
    MPI_Comm c = stest_world_comm(s, "org.oxmpi.test.psets");
    int rank = -1, size = -1;
    MTEST_CALL(MPI_Comm_rank(c, &rank));
    MTEST_CALL(MPI_Comm_size(c, &size));
    MTEST_EQ("comm size", world_size, size);
    mtest.rank = rank;
    mtest.size = size;
    int right = (rank + 1) % size, left = (rank + size - 1) % size, got = -1;
    MTEST_CALL(MPI_Sendrecv(&rank, 1, MPI_INT, right, 7, &got, 1, MPI_INT, left, 7, c,
                            MPI_STATUS_IGNORE));
    MTEST_EQ("ring value", left, got);
    int sum = -1;
    MTEST_CALL(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, c));
    MTEST_EQ("sum of ranks", size * (size - 1) / 2, sum);
    return stest_finish(c, s);
}
