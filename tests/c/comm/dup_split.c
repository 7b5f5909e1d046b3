/* Communicator construction: MPI_Comm_dup (traffic on a duplicate never matches the
 * parent), MPI_Comm_split (MPI_UNDEFINED, keys, ties), MPI_Comm_create (one group and
 * disjoint groups), MPI_Comm_create_group, MPI_Comm_compare results, names, inherited
 * error handlers and MPI_Comm_free. */
#include "mtest.h"

/* Each member sends its rank to the next one and receives from the previous one. */
static void ring_check(MPI_Comm c, const char *what)
{
    int r, n, got = -1;
    MTEST_CALL(MPI_Comm_rank(c, &r));
    MTEST_CALL(MPI_Comm_size(c, &n));
    MPI_Status st;
    MTEST_CALL(MPI_Sendrecv(&r, 1, MPI_INT, (r + 1) % n, 11, &got, 1, MPI_INT, (r + n - 1) % n, 11, c, &st));
    MTEST_EQ(what, (r + n - 1) % n, got);
    MTEST_EQ("ring status source", (r + n - 1) % n, st.MPI_SOURCE);
}

static int group_compare_of(MPI_Comm c, MPI_Group g)
{
    MPI_Group cg;
    int res = -1;
    MTEST_CALL(MPI_Comm_group(c, &cg));
    MTEST_CALL(MPI_Group_compare(cg, g, &res));
    MTEST_CALL(MPI_Group_free(&cg));
    return res;
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int rank = mtest_rank(), size = mtest_size();
    int res, r, n;

    /* --- dup --- */
    MPI_Comm dup, dup2;
    MTEST_CALL(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    MTEST_CALL(MPI_Comm_compare(dup, MPI_COMM_WORLD, &res));
    MTEST_EQ("compare(dup, world)", MPI_CONGRUENT, res);
    MTEST_CALL(MPI_Comm_compare(dup, dup, &res));
    MTEST_EQ("compare(dup, dup)", MPI_IDENT, res);
    MTEST_CALL(MPI_Comm_dup(dup, &dup2));
    MTEST_CALL(MPI_Comm_compare(dup2, MPI_COMM_WORLD, &res));
    MTEST_EQ("compare(dup of dup, world)", MPI_CONGRUENT, res);
    MTEST_CALL(MPI_Comm_rank(dup, &r));
    MTEST_CALL(MPI_Comm_size(dup, &n));
    MTEST_EQ("rank in dup", rank, r);
    MTEST_EQ("size of dup", size, n);
    int flag = -1;
    MTEST_CALL(MPI_Comm_test_inter(dup, &flag));
    MTEST_EQ("dup is not an intercommunicator", 0, flag);

    /* Messages with the same source and tag on world, dup and dup2 stay apart: the
     * receiver takes them in the opposite order of sending. */
    if (size >= 2) {
        if (rank == 0) {
            int a = 100, b = 200, c = 300;
            MPI_Request rq[3];
            MTEST_CALL(MPI_Isend(&a, 1, MPI_INT, 1, 5, MPI_COMM_WORLD, &rq[0]));
            MTEST_CALL(MPI_Isend(&b, 1, MPI_INT, 1, 5, dup, &rq[1]));
            MTEST_CALL(MPI_Isend(&c, 1, MPI_INT, 1, 5, dup2, &rq[2]));
            MTEST_CALL(MPI_Waitall(3, rq, MPI_STATUSES_IGNORE));
        } else if (rank == 1) {
            int x = -1;
            MPI_Status st;
            MTEST_CALL(MPI_Recv(&x, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, dup2, &st));
            MTEST_EQ("message on dup2", 300, x);
            MTEST_CALL(MPI_Recv(&x, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, dup, &st));
            MTEST_EQ("message on dup", 200, x);
            MTEST_CALL(MPI_Recv(&x, 1, MPI_INT, 0, 5, MPI_COMM_WORLD, &st));
            MTEST_EQ("message on world", 100, x);
        }
    }
    ring_check(dup, "ring on dup");

    /* --- names --- */
    char name[MPI_MAX_OBJECT_NAME];
    int len = -1;
    MTEST_CALL(MPI_Comm_get_name(MPI_COMM_WORLD, name, &len));
    MTEST_CHECK(strcmp(name, "MPI_COMM_WORLD") == 0, "name of MPI_COMM_WORLD is '%s'", name);
    MTEST_EQ("length of the world's name", 14, len);
    MTEST_CALL(MPI_Comm_get_name(dup, name, &len));
    MTEST_EQ("length of an unnamed communicator's name", 0, len);
    MTEST_CALL(MPI_Comm_set_name(dup, "my duplicate"));
    MTEST_CALL(MPI_Comm_get_name(dup, name, &len));
    MTEST_CHECK(strcmp(name, "my duplicate") == 0, "name set is '%s'", name);
    MTEST_EQ("length of the name set", 12, len);
    MTEST_CALL(MPI_Comm_free(&dup2));
    MTEST_CALL(MPI_Comm_dup(dup, &dup2));
    MTEST_CALL(MPI_Comm_get_name(dup2, name, &len));
    MTEST_EQ("a duplicate does not copy the name", 0, len);

    /* --- split --- */
    MPI_Comm sp;
    int color = rank % 3;
    MTEST_CALL(MPI_Comm_split(MPI_COMM_WORLD, color, -rank, &sp));
    MTEST_CALL(MPI_Comm_size(sp, &n));
    MTEST_CALL(MPI_Comm_rank(sp, &r));
    int members = 0, above = 0;
    for (int i = 0; i < size; i++) {
        if (i % 3 == color) {
            members++;
            if (i > rank) {
                above++;
            }
        }
    }
    MTEST_EQ("split size", members, n);
    MTEST_EQ("split rank ordered by descending key", above, r);
    ring_check(sp, "ring on split");
    MTEST_CALL(MPI_Comm_free(&sp));
    MTEST_CHECK(sp == MPI_COMM_NULL, "MPI_Comm_free did not set MPI_COMM_NULL");

    /* Ties keep the old order; MPI_UNDEFINED gives MPI_COMM_NULL. */
    MTEST_CALL(MPI_Comm_split(MPI_COMM_WORLD, rank == size - 1 ? MPI_UNDEFINED : 7, 0, &sp));
    if (rank == size - 1) {
        MTEST_CHECK(sp == MPI_COMM_NULL, "MPI_UNDEFINED colour did not give MPI_COMM_NULL");
    } else {
        MTEST_CALL(MPI_Comm_rank(sp, &r));
        MTEST_CALL(MPI_Comm_size(sp, &n));
        MTEST_EQ("split with equal keys keeps ranks", rank, r);
        MTEST_EQ("split size without the last rank", size - 1, n);
        ring_check(sp, "ring on split without last");
        MTEST_CALL(MPI_Comm_free(&sp));
    }

    /* compare: reversed order is SIMILAR, same order CONGRUENT, other groups UNEQUAL */
    MTEST_CALL(MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &sp));
    MTEST_CALL(MPI_Comm_compare(sp, MPI_COMM_WORLD, &res));
    MTEST_EQ("compare(reversed split, world)", size > 1 ? MPI_SIMILAR : MPI_CONGRUENT, res);
    MTEST_CALL(MPI_Comm_free(&sp));
    MTEST_CALL(MPI_Comm_split(MPI_COMM_WORLD, 0, rank, &sp));
    MTEST_CALL(MPI_Comm_compare(sp, MPI_COMM_WORLD, &res));
    MTEST_EQ("compare(identical split, world)", MPI_CONGRUENT, res);
    MTEST_CALL(MPI_Comm_free(&sp));
    MTEST_CALL(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &sp));
    MTEST_CALL(MPI_Comm_compare(sp, MPI_COMM_WORLD, &res));
    MTEST_EQ("compare(half, world)", size > 1 ? MPI_UNEQUAL : MPI_CONGRUENT, res);
    MTEST_CALL(MPI_Comm_compare(sp, MPI_COMM_SELF, &res));
    MTEST_EQ("compare(half, self)", size > 2 ? MPI_UNEQUAL : MPI_CONGRUENT, res);
    MTEST_CALL(MPI_Comm_free(&sp));

    /* --- create --- */
    MPI_Group world, evens, odds;
    MTEST_CALL(MPI_Comm_group(MPI_COMM_WORLD, &world));
    int ev[1][3] = {{0, size - 1, 2}};
    MTEST_CALL(MPI_Group_range_incl(world, 1, ev, &evens));
    MTEST_CALL(MPI_Group_difference(world, evens, &odds));
    MPI_Comm ce;
    MTEST_CALL(MPI_Comm_create(MPI_COMM_WORLD, evens, &ce));
    if (rank % 2 == 0) {
        MTEST_CHECK(ce != MPI_COMM_NULL, "even rank got MPI_COMM_NULL from MPI_Comm_create");
        if (ce != MPI_COMM_NULL) {
            MTEST_EQ("group of created comm", MPI_IDENT, group_compare_of(ce, evens));
            MTEST_CALL(MPI_Comm_rank(ce, &r));
            MTEST_EQ("rank in evens comm", rank / 2, r);
            ring_check(ce, "ring on evens");
            MTEST_CALL(MPI_Comm_free(&ce));
        }
    } else {
        MTEST_CHECK(ce == MPI_COMM_NULL, "odd rank got a communicator from MPI_Comm_create(evens)");
    }
    /* Disjoint groups at different processes (MPI-2.2). */
    MTEST_CALL(MPI_Comm_create(MPI_COMM_WORLD, rank % 2 ? odds : evens, &ce));
    MTEST_CHECK(ce != MPI_COMM_NULL, "MPI_Comm_create with disjoint groups gave MPI_COMM_NULL");
    if (ce != MPI_COMM_NULL) {
        MTEST_EQ("group of created comm (disjoint)", MPI_IDENT, group_compare_of(ce, rank % 2 ? odds : evens));
        ring_check(ce, "ring on disjoint create");
        MTEST_CALL(MPI_Comm_free(&ce));
    }
    MTEST_CALL(MPI_Comm_create(MPI_COMM_WORLD, MPI_GROUP_EMPTY, &ce));
    MTEST_CHECK(ce == MPI_COMM_NULL, "MPI_Comm_create(MPI_GROUP_EMPTY) gave a communicator");

    /* --- create_group: only the odd ranks take part --- */
    if (rank % 2 == 1) {
        MTEST_CALL(MPI_Comm_create_group(MPI_COMM_WORLD, odds, 42, &ce));
        MTEST_CHECK(ce != MPI_COMM_NULL, "MPI_Comm_create_group gave MPI_COMM_NULL to a member");
        MTEST_EQ("group of create_group comm", MPI_IDENT, group_compare_of(ce, odds));
        ring_check(ce, "ring on create_group");
        MTEST_CALL(MPI_Comm_free(&ce));
    }
    /* ... while the even ranks build theirs from the duplicate. */
    if (rank % 2 == 0) {
        MTEST_CALL(MPI_Comm_create_group(dup, evens, 0, &ce));
        ring_check(ce, "ring on create_group of evens");
        MTEST_CALL(MPI_Comm_free(&ce));
    }

    /* --- error handlers are inherited --- */
    MPI_Comm child;
    MTEST_CALL(MPI_Comm_split(MPI_COMM_WORLD, 0, rank, &child));
    int x = 0;
    MTEST_EXPECT_CLASS(MPI_ERR_RANK, MPI_Send(&x, 1, MPI_INT, size, 0, child));
    MTEST_CALL(MPI_Comm_free(&child));

    /* --- bad arguments --- */
    MPI_Comm w = MPI_COMM_WORLD;
    MTEST_EXPECT_CLASS(MPI_ERR_COMM, MPI_Comm_free(&w));
    MTEST_EXPECT_CLASS(MPI_ERR_COMM, MPI_Comm_dup(MPI_COMM_NULL, &child));
    MPI_Comm stale = dup2;
    MTEST_CALL(MPI_Comm_free(&dup2));
    MTEST_EXPECT_CLASS(MPI_ERR_COMM, MPI_Comm_size(stale, &n));
    MTEST_CALL(MPI_Group_free(&evens));
    MTEST_CALL(MPI_Group_free(&odds));
    MTEST_CALL(MPI_Group_free(&world));
    MTEST_CALL(MPI_Comm_free(&dup));
    return mtest_finalize();
}
