/*
 * MPI_Comm_spawn across hosts (tests/net/run, network namespaces as hosts).
 *
 *   spawn_hosts NCHILD USIZE [HOST]
 *
 * The parents (MPI_COMM_WORLD, root 0) check MPI_UNIVERSE_SIZE == USIZE, spawn NCHILD
 * copies of this program (with the info key host=HOST when given) and exchange messages
 * with them over the intercommunicator: every child sends its rank and the identity of
 * its network namespace, parent 0 answers each with a value the child checks, and an
 * intercommunicator allreduce follows. Without HOST the children must be on at least two
 * hosts (NCHILD >= 2); with HOST all of them must be in one namespace, not parent 0's.
 */
#include "mtest.h"
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NSLEN 64

static void my_netns(char *buf)
{
    memset(buf, 0, NSLEN);
    if (readlink("/proc/self/ns/net", buf, NSLEN - 1) < 0)
        strcpy(buf, "unknown");
}

static int child(MPI_Comm parent)
{
    int rank, psize;
    char ns[NSLEN];
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MTEST_CALL(MPI_Comm_remote_size(parent, &psize));
    my_netns(ns);
    MTEST_CALL(MPI_Send(&rank, 1, MPI_INT, 0, 1, parent));
    MTEST_CALL(MPI_Send(ns, NSLEN, MPI_CHAR, 0, 2, parent));
    int answer = -1;
    MTEST_CALL(MPI_Recv(&answer, 1, MPI_INT, 0, 3, parent, MPI_STATUS_IGNORE));
    MTEST_EQ("answer from parent 0", 1000 + rank, answer);
    int one = 1, sum = 0;
    MTEST_CALL(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, parent));
    MTEST_EQ("allreduce over the parents", psize, sum);
    MTEST_CALL(MPI_Comm_disconnect(&parent));
    int errors = mtest.errors;
    if (errors)
        fprintf(stderr, "child %d: %d errors\n", rank, errors);
    return errors;
}

int main(int argc, char **argv)
{
    MPI_Comm parent, inter;
    mtest_init(&argc, &argv);
    MPI_Comm_get_parent(&parent);
    if (parent != MPI_COMM_NULL) {
        int errs = child(parent);
        MPI_Finalize();
        return errs ? 1 : 0;
    }
    MTEST_CHECK(argc >= 3, "usage: spawn_hosts NCHILD USIZE [HOST]");
    if (argc < 3)
        return mtest_finalize();
    int nchild = atoi(argv[1]), usize = atoi(argv[2]);
    const char *host = argc > 3 ? argv[3] : NULL;
    int rank, size, flag, *attr;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MTEST_CALL(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &attr, &flag));
    MTEST_CHECK(flag && *attr == usize, "MPI_UNIVERSE_SIZE %d (flag %d), expected %d",
                flag ? *attr : -1, flag, usize);

    MPI_Info info = MPI_INFO_NULL;
    if (host) {
        MPI_Info_create(&info);
        MPI_Info_set(info, "host", host);
    }
    int errcodes[16];
    MTEST_CALL(MPI_Comm_spawn(argv[0], MPI_ARGV_NULL, nchild, info, 0, MPI_COMM_WORLD, &inter,
                              errcodes));
    if (info != MPI_INFO_NULL)
        MPI_Info_free(&info);
    if (rank == 0)
        for (int i = 0; i < nchild; i++)
            MTEST_EQ("error code", MPI_SUCCESS, errcodes[i]);
    int rsize;
    MTEST_CALL(MPI_Comm_remote_size(inter, &rsize));
    MTEST_EQ("children", nchild, rsize);

    if (rank == 0) {
        char mine[NSLEN], ns[NSLEN], first[NSLEN] = "";
        int hosts = 0, same_as_me = 0;
        my_netns(mine);
        for (int i = 0; i < nchild; i++) {
            int who = -1;
            MPI_Status st;
            MTEST_CALL(MPI_Recv(&who, 1, MPI_INT, MPI_ANY_SOURCE, 1, inter, &st));
            MTEST_EQ("child's rank is its source", st.MPI_SOURCE, who);
            MTEST_CALL(MPI_Recv(ns, NSLEN, MPI_CHAR, st.MPI_SOURCE, 2, inter, MPI_STATUS_IGNORE));
            if (strcmp(ns, mine) == 0)
                same_as_me++;
            if (first[0] == 0) {
                strcpy(first, ns);
                hosts = 1;
            } else if (strcmp(ns, first) != 0) {
                hosts = 2;
            }
            int answer = 1000 + who;
            MTEST_CALL(MPI_Send(&answer, 1, MPI_INT, st.MPI_SOURCE, 3, inter));
        }
        if (host) {
            MTEST_EQ("hosts of the children (host info key)", 1, hosts);
            MTEST_EQ("children in parent 0's namespace", 0, same_as_me);
        } else if (nchild >= 2) {
            MTEST_EQ("hosts of the children (round-robin)", 2, hosts);
        }
    }
    int mine = 1, sum = 0;
    MTEST_CALL(MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, inter));
    MTEST_EQ("allreduce over the children", nchild, sum);
    MTEST_CALL(MPI_Comm_disconnect(&inter));
    return mtest_finalize();
}
