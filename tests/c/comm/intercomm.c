/* Intercommunicators: MPI_Intercomm_create between the two halves of the world (peer
 * communicator MPI_COMM_WORLD, leaders not rank 0 of the world on one side), traffic
 * both ways naming ranks of the remote group, remote size/group, test_inter, compare,
 * dup and free, MPI_Intercomm_merge (both orders of `high`: comm/intercomm_merge), MPI_Comm_split and
 * MPI_Comm_create on an intercommunicator, and bad arguments. Needs 2 or more ranks. */
#include "mtest.h"

static int group_is(MPI_Group g, int n, const int *world_ranks)
{
    MPI_Group w;
    int s, ok = 1;
    MTEST_CALL(MPI_Comm_group(MPI_COMM_WORLD, &w));
    MTEST_CALL(MPI_Group_size(g, &s));
    if (s != n) {
        ok = 0;
    }
    for (int i = 0; ok && i < n; i++) {
        int out;
        MTEST_CALL(MPI_Group_translate_ranks(g, 1, &i, w, &out));
        if (out != world_ranks[i]) {
            ok = 0;
        }
    }
    MTEST_CALL(MPI_Group_free(&w));
    return ok;
}

/* Every local rank i sends (tag 1) to remote rank i % rsize and receives from every
 * remote rank j with j % lsize == i. */
static void exchange(MPI_Comm ic, int salt, const char *what)
{
    int lr, ls, rs;
    MTEST_CALL(MPI_Comm_rank(ic, &lr));
    MTEST_CALL(MPI_Comm_size(ic, &ls));
    MTEST_CALL(MPI_Comm_remote_size(ic, &rs));
    int v = salt * 1000 + lr;
    MPI_Request s;
    MTEST_CALL(MPI_Isend(&v, 1, MPI_INT, lr % rs, 1, ic, &s));
    for (int j = 0; j < rs; j++) {
        if (j % ls != lr) {
            continue;
        }
        int got = -1;
        MPI_Status st;
        MTEST_CALL(MPI_Recv(&got, 1, MPI_INT, j, 1, ic, &st));
        if (got != salt * 1000 + j || st.MPI_SOURCE != j) {
            MTEST_CHECK(0, "%s: from remote %d got %d (source %d)", what, j, got, st.MPI_SOURCE);
        }
    }
    MTEST_CALL(MPI_Wait(&s, MPI_STATUS_IGNORE));
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int rank = mtest_rank(), size = mtest_size();
    if (size < 2) {
        return mtest_skip("needs at least 2 processes");
    }
    /* low half: world ranks 0..h-1, high half: h..size-1; leaders are the last rank of
     * the low half and the first of the high half. */
    int h = size / 2;
    int low = rank < h;
    MPI_Comm local, ic;
    MTEST_CALL(MPI_Comm_split(MPI_COMM_WORLD, low, rank, &local));
    int local_leader = low ? h - 1 : 0;
    int remote_leader = low ? h : h - 1;
    MTEST_CALL(MPI_Intercomm_create(local, local_leader, MPI_COMM_WORLD, remote_leader, 77, &ic));

    int flag = -1, ls, rs, lr;
    MTEST_CALL(MPI_Comm_test_inter(ic, &flag));
    MTEST_EQ("test_inter", 1, flag);
    MTEST_CALL(MPI_Comm_size(ic, &ls));
    MTEST_CALL(MPI_Comm_remote_size(ic, &rs));
    MTEST_CALL(MPI_Comm_rank(ic, &lr));
    MTEST_EQ("local size", low ? h : size - h, ls);
    MTEST_EQ("remote size", low ? size - h : h, rs);
    MTEST_EQ("local rank", low ? rank : rank - h, lr);

    int *lw = mtest_malloc(sizeof(int) * (size_t)size), *rw = mtest_malloc(sizeof(int) * (size_t)size);
    for (int i = 0; i < ls; i++) {
        lw[i] = low ? i : h + i;
    }
    for (int i = 0; i < rs; i++) {
        rw[i] = low ? h + i : i;
    }
    MPI_Group g;
    MTEST_CALL(MPI_Comm_remote_group(ic, &g));
    MTEST_CHECK(group_is(g, rs, rw), "remote group has the wrong members");
    MTEST_CALL(MPI_Group_free(&g));
    MTEST_CALL(MPI_Comm_group(ic, &g));
    MTEST_CHECK(group_is(g, ls, lw), "local group has the wrong members");
    MTEST_CALL(MPI_Group_free(&g));

    exchange(ic, 1, "intercomm traffic");

    /* The same tag on the local communicator and on MPI_COMM_WORLD stays apart. */
    MPI_Comm icd;
    MTEST_CALL(MPI_Comm_dup(ic, &icd));
    int res = -1;
    MTEST_CALL(MPI_Comm_compare(ic, icd, &res));
    MTEST_EQ("compare(intercomm, dup)", MPI_CONGRUENT, res);
    MTEST_CALL(MPI_Comm_compare(ic, local, &res));
    MTEST_EQ("compare(intercomm, intracomm)", MPI_UNEQUAL, res);
    MTEST_CALL(MPI_Comm_test_inter(icd, &flag));
    MTEST_EQ("dup of an intercomm is inter", 1, flag);
    exchange(icd, 2, "traffic on the dup");
    exchange(ic, 3, "traffic on the original after dup");

    /* merge: the low half says high=0, the high half high=1 -> low half first */
    MPI_Comm m1;
    MTEST_CALL(MPI_Intercomm_merge(ic, !low, &m1));
    int mr, ms;
    MTEST_CALL(MPI_Comm_rank(m1, &mr));
    MTEST_CALL(MPI_Comm_size(m1, &ms));
    MTEST_EQ("merged size", size, ms);
    MTEST_EQ("merged rank (low first)", rank, mr);
    MTEST_CALL(MPI_Comm_test_inter(m1, &flag));
    MTEST_EQ("merged is intra", 0, flag);
    MTEST_CALL(MPI_Comm_compare(m1, MPI_COMM_WORLD, &res));
    MTEST_EQ("compare(merge low-first, world)", MPI_CONGRUENT, res);
    MTEST_CALL(MPI_Comm_free(&m1));
    MTEST_CALL(MPI_Comm_free(&icd));

    /* split on the intercommunicator: colour = local rank parity; a colour present
     * on only one side gives MPI_COMM_NULL. */
    MPI_Comm isp;
    MTEST_CALL(MPI_Comm_split(ic, lr % 2, -lr, &isp));
    int mine = 0, theirs = 0;
    for (int i = 0; i < ls; i++) {
        mine += i % 2 == lr % 2;
    }
    for (int i = 0; i < rs; i++) {
        theirs += i % 2 == lr % 2;
    }
    if (theirs == 0) {
        MTEST_CHECK(isp == MPI_COMM_NULL, "split of an intercomm with no remote partner gave a communicator");
    } else {
        MTEST_CHECK(isp != MPI_COMM_NULL, "split of an intercomm gave MPI_COMM_NULL");
        if (isp != MPI_COMM_NULL) {
            int a, b, c;
            MTEST_CALL(MPI_Comm_size(isp, &a));
            MTEST_CALL(MPI_Comm_remote_size(isp, &b));
            MTEST_CALL(MPI_Comm_rank(isp, &c));
            MTEST_EQ("split intercomm local size", mine, a);
            MTEST_EQ("split intercomm remote size", theirs, b);
            int above = 0;
            for (int i = lr + 1; i < ls; i++) {
                above += i % 2 == lr % 2;
            }
            MTEST_EQ("split intercomm rank (descending keys)", above, c);
            exchange(isp, 5, "traffic on the split intercomm");
            MTEST_CALL(MPI_Comm_free(&isp));
        }
    }

    /* create on the intercommunicator: each side keeps its local rank 0 only */
    MPI_Group lg, first;
    int zero = 0;
    MTEST_CALL(MPI_Comm_group(ic, &lg));
    MTEST_CALL(MPI_Group_incl(lg, 1, &zero, &first));
    MPI_Comm icc;
    MTEST_CALL(MPI_Comm_create(ic, first, &icc));
    if (lr == 0) {
        MTEST_CHECK(icc != MPI_COMM_NULL, "leader got MPI_COMM_NULL from MPI_Comm_create on an intercomm");
        if (icc != MPI_COMM_NULL) {
            int a, b;
            MTEST_CALL(MPI_Comm_size(icc, &a));
            MTEST_CALL(MPI_Comm_remote_size(icc, &b));
            MTEST_EQ("created intercomm local size", 1, a);
            MTEST_EQ("created intercomm remote size", 1, b);
            exchange(icc, 6, "traffic on the created intercomm");
            MTEST_CALL(MPI_Comm_free(&icc));
        }
    } else {
        MTEST_CHECK(icc == MPI_COMM_NULL, "non-member got a communicator from MPI_Comm_create on an intercomm");
    }
    MTEST_CALL(MPI_Group_free(&first));
    MTEST_CALL(MPI_Group_free(&lg));

    /* bad arguments */
    MPI_Comm bad;
    MTEST_EXPECT_CLASS(MPI_ERR_RANK, MPI_Intercomm_create(local, ls, MPI_COMM_WORLD, remote_leader, 78, &bad));
    MTEST_EXPECT_CLASS(MPI_ERR_COMM, MPI_Intercomm_create(ic, 0, MPI_COMM_WORLD, remote_leader, 79, &bad));
    /* the remote leader is the caller itself: the two groups would overlap */
    MTEST_EXPECT_CLASS(MPI_ERR_RANK, MPI_Intercomm_create(MPI_COMM_SELF, 0, MPI_COMM_WORLD, rank, 80, &bad));

    MTEST_CALL(MPI_Comm_free(&ic));
    MTEST_CALL(MPI_Comm_free(&local));
    free(lw);
    free(rw);
    return mtest_finalize();
}
