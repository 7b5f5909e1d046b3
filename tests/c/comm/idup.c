/*
 * MPI_Comm_idup and MPI_Comm_idup_with_info: the duplicate is congruent with its parent
 * and usable (collective and point-to-point) after the request completes, on a context
 * of its own; several idups outstanding at once on one communicator and on several,
 * started in different orders at different ranks; overlap with MPI_Ibarrier and
 * point-to-point traffic; attributes copied by their callbacks; the hints of
 * _with_info; the parent's error handler inherited, no name inherited.
 */
#include "mtest.h"

static int copies;

static int copy_plus_one(MPI_Comm old, int key, void *extra, void *in, void *out, int *flag)
{
    (void)old;
    (void)key;
    (void)extra;
    copies++;
    *(void **)out = (void *)((char *)in + 1);
    *flag = 1;
    return MPI_SUCCESS;
}

/* The new communicator works: an allreduce of ranks, a ring exchange, and a message sent
 * on it is not seen on `parent` (their contexts differ). */
static void check_usable(MPI_Comm parent, MPI_Comm c, int salt)
{
    int rank, size, cmp, sum = 0;
    MTEST_CALL(MPI_Comm_compare(parent, c, &cmp));
    MTEST_EQ("compare with the parent", MPI_CONGRUENT, cmp);
    MTEST_CALL(MPI_Comm_rank(c, &rank));
    MTEST_CALL(MPI_Comm_size(c, &size));
    MTEST_CALL(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, c));
    MTEST_EQ("allreduce of ranks", size * (size - 1) / 2, sum);
    int v = salt * 100 + rank, got = -1;
    MTEST_CALL(MPI_Sendrecv(&v, 1, MPI_INT, (rank + 1) % size, 7, &got, 1, MPI_INT,
                            (rank + size - 1) % size, 7, c, MPI_STATUS_IGNORE));
    MTEST_EQ("ring value", salt * 100 + (rank + size - 1) % size, got);
    /* A message to self on the duplicate is not visible on the parent. */
    MPI_Request r;
    MTEST_CALL(MPI_Isend(&v, 1, MPI_INT, rank, 9, c, &r));
    int flag = 0;
    while (!flag) {
        MTEST_CALL(MPI_Iprobe(rank, 9, c, &flag, MPI_STATUS_IGNORE));
    }
    MTEST_CALL(MPI_Iprobe(rank, 9, parent, &flag, MPI_STATUS_IGNORE));
    MTEST_CHECK(!flag, "a message sent on the duplicate matched on its parent");
    MTEST_CALL(MPI_Recv(&got, 1, MPI_INT, rank, 9, c, MPI_STATUS_IGNORE));
    MTEST_CALL(MPI_Wait(&r, MPI_STATUS_IGNORE));
    MTEST_EQ("self message", v, got);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int rank, size;
    MTEST_CALL(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MTEST_CALL(MPI_Comm_size(MPI_COMM_WORLD, &size));

    /* One idup, waited for. */
    MPI_Comm d;
    MPI_Request r;
    MTEST_CALL(MPI_Comm_idup(MPI_COMM_WORLD, &d, &r));
    MTEST_CALL(MPI_Wait(&r, MPI_STATUS_IGNORE));
    MTEST_CHECK(r == MPI_REQUEST_NULL, "request not freed by MPI_Wait");
    check_usable(MPI_COMM_WORLD, d, 1);

    /* Three outstanding on one communicator, completed by MPI_Waitall. */
    MPI_Comm m[3];
    MPI_Request rs[3];
    for (int i = 0; i < 3; i++) {
        MTEST_CALL(MPI_Comm_idup(d, &m[i], &rs[i]));
    }
    MTEST_CALL(MPI_Waitall(3, rs, MPI_STATUSES_IGNORE));
    for (int i = 0; i < 3; i++) {
        check_usable(d, m[i], 2 + i);
    }
    for (int i = 0; i < 3; i++) {
        for (int j = 0; j < i; j++) {
            check_usable(m[j], m[i], 10 + i);
        }
    }
    for (int i = 0; i < 3; i++) {
        MTEST_CALL(MPI_Comm_free(&m[i]));
    }

    /* Several communicators, idups started in different orders at different ranks. */
    MPI_Comm parents[3], kids[3];
    MTEST_CALL(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &parents[0]));
    MTEST_CALL(MPI_Comm_dup(MPI_COMM_WORLD, &parents[1]));
    MTEST_CALL(MPI_Comm_split(MPI_COMM_WORLD, rank < size / 2, size - rank, &parents[2]));
    for (int k = 0; k < 3; k++) {
        int i = rank % 2 ? 2 - k : k;
        MTEST_CALL(MPI_Comm_idup(parents[i], &kids[i], &rs[i]));
    }
    /* Complete them in yet another order, with tests in between. */
    for (int k = 0; k < 3; k++) {
        int i = (k + rank) % 3, done = 0;
        while (!done) {
            MTEST_CALL(MPI_Test(&rs[i], &done, MPI_STATUS_IGNORE));
        }
    }
    for (int i = 0; i < 3; i++) {
        check_usable(parents[i], kids[i], 20 + i);
        MTEST_CALL(MPI_Comm_free(&kids[i]));
        MTEST_CALL(MPI_Comm_free(&parents[i]));
    }

    /* Overlap with an Ibarrier and point-to-point traffic on the parent. */
    {
        MPI_Request q[4];
        MPI_Comm e;
        int out = rank, in = -1;
        MTEST_CALL(MPI_Irecv(&in, 1, MPI_INT, (rank + size - 1) % size, 3, d, &q[0]));
        MTEST_CALL(MPI_Ibarrier(d, &q[1]));
        MTEST_CALL(MPI_Comm_idup(d, &e, &q[2]));
        MTEST_CALL(MPI_Isend(&out, 1, MPI_INT, (rank + 1) % size, 3, d, &q[3]));
        MTEST_CALL(MPI_Waitall(4, q, MPI_STATUSES_IGNORE));
        MTEST_EQ("message overlapping the idup", (rank + size - 1) % size, in);
        check_usable(d, e, 30);
        MTEST_CALL(MPI_Comm_free(&e));
    }

    /* Attributes: copied by the callbacks at completion; MPI_COMM_NULL_COPY_FN ones not.
     * The error handler is inherited, the name is not. */
    {
        int kcopy, knull, flag;
        void *v;
        MTEST_CALL(MPI_Comm_create_keyval(copy_plus_one, MPI_COMM_NULL_DELETE_FN, &kcopy, NULL));
        MTEST_CALL(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &knull,
                                          NULL));
        MTEST_CALL(MPI_Comm_set_attr(d, kcopy, (void *)(char *)40));
        MTEST_CALL(MPI_Comm_set_attr(d, knull, (void *)(char *)50));
        MTEST_CALL(MPI_Comm_set_name(d, "parent"));
        MTEST_CALL(MPI_Comm_set_errhandler(d, MPI_ERRORS_RETURN));
        MPI_Comm e;
        copies = 0;
        MTEST_CALL(MPI_Comm_idup(d, &e, &r));
        MTEST_CALL(MPI_Wait(&r, MPI_STATUS_IGNORE));
        MTEST_EQ("copy callbacks run", 1, copies);
        MTEST_CALL(MPI_Comm_get_attr(e, kcopy, &v, &flag));
        MTEST_CHECK(flag && v == (void *)(char *)41, "copied attribute: flag %d value %p", flag,
                    v);
        MTEST_CALL(MPI_Comm_get_attr(e, knull, &v, &flag));
        MTEST_CHECK(!flag, "an MPI_COMM_NULL_COPY_FN attribute was copied");
        MPI_Errhandler eh;
        MTEST_CALL(MPI_Comm_get_errhandler(e, &eh));
        MTEST_CHECK(eh == MPI_ERRORS_RETURN, "the duplicate did not inherit the error handler");
        MTEST_CALL(MPI_Errhandler_free(&eh));
        char name[MPI_MAX_OBJECT_NAME];
        int len = -1;
        MTEST_CALL(MPI_Comm_get_name(e, name, &len));
        MTEST_CHECK(strcmp(name, "parent") != 0, "the duplicate inherited the name");
        MTEST_CALL(MPI_Comm_free(&e));
        MTEST_CALL(MPI_Comm_free_keyval(&kcopy));
        MTEST_CALL(MPI_Comm_free_keyval(&knull));
    }

    /* _with_info: the hints of the info argument. */
    {
        MPI_Info info;
        MPI_Comm e;
        MTEST_CALL(MPI_Info_create(&info));
        MTEST_CALL(MPI_Info_set(info, "mpi_assert_no_any_tag", "true"));
        MTEST_CALL(MPI_Comm_idup_with_info(d, info, &e, &r));
        MTEST_CALL(MPI_Info_free(&info));
        MTEST_CALL(MPI_Wait(&r, MPI_STATUS_IGNORE));
        MPI_Info used;
        char val[MPI_MAX_INFO_VAL + 1];
        int flag = 0;
        MTEST_CALL(MPI_Comm_get_info(e, &used));
        MTEST_CALL(MPI_Info_get(used, "mpi_assert_no_any_tag", MPI_MAX_INFO_VAL, val, &flag));
        MTEST_CHECK(flag && strcmp(val, "true") == 0,
                    "mpi_assert_no_any_tag of the duplicate: flag %d value %s", flag,
                    flag ? val : "");
        MTEST_CALL(MPI_Info_free(&used));
        check_usable(d, e, 40);
        MTEST_CALL(MPI_Comm_free(&e));
    }

    /* Many outstanding at once, on a communicator freed before they complete is not
     * allowed, so free after. */
    {
        enum { N = 12 };
        MPI_Comm many[N];
        MPI_Request mr[N];
        for (int i = 0; i < N; i++) {
            MTEST_CALL(MPI_Comm_idup(i % 2 ? d : MPI_COMM_WORLD, &many[i], &mr[i]));
        }
        MTEST_CALL(MPI_Waitall(N, mr, MPI_STATUSES_IGNORE));
        for (int i = 0; i < N; i++) {
            int sum = 0;
            MTEST_CALL(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, many[i]));
            MTEST_EQ("allreduce on one of many", size * (size - 1) / 2, sum);
        }
        for (int i = 0; i < N; i++) {
            MTEST_CALL(MPI_Comm_free(&many[i]));
        }
    }

    MTEST_CALL(MPI_Comm_free(&d));
    return mtest_finalize();
}
