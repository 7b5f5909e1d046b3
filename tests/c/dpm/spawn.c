/*
 * MPI_Comm_spawn: the parents (the whole MPI_COMM_WORLD, root 0) start NCHILD copies of
 * this program (default 2) with one argument. Checked in the parents: the error codes,
 * the intercommunicator's groups, point-to-point both ways between every child and
 * parent rank 0, an intercommunicator broadcast and allreduce, MPI_Intercomm_merge and
 * MPI_Comm_disconnect. Checked in the children: MPI_Comm_get_parent, their own
 * MPI_COMM_WORLD, argv, MPI_APPNUM and MPI_UNIVERSE_SIZE, the same traffic, and that the
 * parent is MPI_COMM_NULL after the disconnect. A child that finds an error prints it
 * and exits with status 1, which fails the parents' job.
 */
#include "mtest.h"
#include <stdlib.h>
#include <string.h>

static int child(MPI_Comm parent, int argc, char **argv)
{
    int rank, size, psize, flag, *attr;
    MPI_Status st;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MTEST_CALL(MPI_Comm_test_inter(parent, &flag));
    MTEST_EQ("parent is an intercommunicator", 1, flag);
    MTEST_CALL(MPI_Comm_remote_size(parent, &psize));
    int prank;
    MTEST_CALL(MPI_Comm_rank(parent, &prank));
    MTEST_EQ("rank in the parent intercommunicator", rank, prank);
    MTEST_CHECK(argc == 2 && strcmp(argv[1], "child-arg") == 0, "argv[1] is not child-arg");
    MTEST_CALL(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &attr, &flag));
    MTEST_CHECK(flag && *attr == 0, "MPI_APPNUM is not 0 (flag %d)", flag);
    MTEST_CALL(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &attr, &flag));
    MTEST_CHECK(!flag || *attr >= size, "MPI_UNIVERSE_SIZE %d below the world size", *attr);

    int msg[3];
    MTEST_CALL(MPI_Recv(msg, 3, MPI_INT, 0, 1, parent, &st));
    MTEST_EQ("source", 0, st.MPI_SOURCE);
    MTEST_EQ("children counted by the parent", size, msg[0]);
    MTEST_EQ("parents", psize, msg[1]);
    int back[2] = {rank, msg[2] + rank};
    MTEST_CALL(MPI_Send(back, 2, MPI_INT, 0, 2, parent));

    int v = 0;
    MTEST_CALL(MPI_Bcast(&v, 1, MPI_INT, 0, parent));
    MTEST_EQ("broadcast from the parents", 777, v);
    int mine = rank + 1, sum = 0;
    MTEST_CALL(MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, parent));
    MTEST_EQ("allreduce over the parents", psize * 100 + psize * (psize - 1) / 2, sum);

    MPI_Comm merged;
    MTEST_CALL(MPI_Intercomm_merge(parent, 1, &merged));
    int mrank, msize, one = 1, n = 0;
    MPI_Comm_rank(merged, &mrank);
    MPI_Comm_size(merged, &msize);
    MTEST_EQ("merged size", psize + size, msize);
    MTEST_EQ("merged rank (children high)", psize + rank, mrank);
    MTEST_CALL(MPI_Allreduce(&one, &n, 1, MPI_INT, MPI_SUM, merged));
    MTEST_EQ("allreduce over the merged communicator", psize + size, n);
    MTEST_CALL(MPI_Comm_free(&merged));

    MTEST_CALL(MPI_Comm_disconnect(&parent));
    MTEST_CHECK(parent == MPI_COMM_NULL, "disconnect did not set the handle to MPI_COMM_NULL");
    MPI_Comm again;
    MTEST_CALL(MPI_Comm_get_parent(&again));
    MTEST_CHECK(again == MPI_COMM_NULL, "MPI_Comm_get_parent after the disconnect is not NULL");
    return mtest_child_finalize("child %d", rank);
}

int main(int argc, char **argv)
{
    MPI_Comm parent = mtest_init_spawned(&argc, &argv);
    if (parent != MPI_COMM_NULL)
        return child(parent, argc, argv);

    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *e = getenv("NCHILD");
    int nchild = e ? atoi(e) : 2;
    char *args[] = {"child-arg", NULL};
    int errcodes[16];
    for (int i = 0; i < 16; i++)
        errcodes[i] = -1;
    MPI_Comm inter;
    MTEST_CALL(MPI_Comm_spawn(argv[0], args, nchild, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter,
                              errcodes));
    if (rank == 0)
        for (int i = 0; i < nchild; i++)
            MTEST_EQ("error code of a child", MPI_SUCCESS, errcodes[i]);
    int flag, rsize, lsize;
    MTEST_CALL(MPI_Comm_test_inter(inter, &flag));
    MTEST_EQ("an intercommunicator", 1, flag);
    MTEST_CALL(MPI_Comm_remote_size(inter, &rsize));
    MTEST_EQ("children", nchild, rsize);
    MTEST_CALL(MPI_Comm_size(inter, &lsize));
    MTEST_EQ("local group", size, lsize);

    if (rank == 0) {
        for (int c = 0; c < nchild; c++) {
            int msg[3] = {nchild, size, 1000 * (c + 1)};
            MTEST_CALL(MPI_Send(msg, 3, MPI_INT, c, 1, inter));
        }
        for (int c = 0; c < nchild; c++) {
            int back[2];
            MPI_Status st;
            MTEST_CALL(MPI_Recv(back, 2, MPI_INT, MPI_ANY_SOURCE, 2, inter, &st));
            MTEST_EQ("child's rank", st.MPI_SOURCE, back[0]);
            MTEST_EQ("child's answer", 1000 * (back[0] + 1) + back[0], back[1]);
        }
    }
    int v = 777;
    MTEST_CALL(MPI_Bcast(&v, 1, MPI_INT, rank == 0 ? MPI_ROOT : MPI_PROC_NULL, inter));
    int mine = 100 + rank, sum = 0;
    MTEST_CALL(MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, inter));
    MTEST_EQ("allreduce over the children", nchild * (nchild + 1) / 2, sum);

    MPI_Comm merged;
    MTEST_CALL(MPI_Intercomm_merge(inter, 0, &merged));
    int mrank, msize, one = 1, n = 0;
    MPI_Comm_rank(merged, &mrank);
    MPI_Comm_size(merged, &msize);
    MTEST_EQ("merged size", size + nchild, msize);
    MTEST_EQ("merged rank (parents low)", rank, mrank);
    MTEST_CALL(MPI_Allreduce(&one, &n, 1, MPI_INT, MPI_SUM, merged));
    MTEST_EQ("allreduce over the merged communicator", size + nchild, n);
    MTEST_CALL(MPI_Comm_free(&merged));
    MTEST_CALL(MPI_Comm_disconnect(&inter));
    return mtest_finalize();
}
