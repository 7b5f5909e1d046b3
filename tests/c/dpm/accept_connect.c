/*
 * MPI_Open_port / MPI_Comm_accept / MPI_Comm_connect with name publishing, inside one
 * job split in two halves (at least 2 ranks): the low half's rank 0 opens a port and
 * publishes it under a service name; the high half looks the name up and connects. The
 * intercommunicator has the two halves as groups; messages go both ways between every
 * pair of leaders and members, a remote-group allreduce runs, and both sides disconnect.
 * The port is then unpublished and closed, and a second accept/connect over a new port
 * with the roles' roots at other ranks (the last rank of each half) works too.
 */
#include "mtest.h"
#include <string.h>
#include <unistd.h>

static void exchange(MPI_Comm inter, int low, int lsize, int rsize)
{
    int rank;
    MPI_Comm_rank(inter, &rank);
    int sz;
    MTEST_CALL(MPI_Comm_remote_size(inter, &sz));
    MTEST_EQ("remote size", rsize, sz);
    MTEST_CALL(MPI_Comm_size(inter, &sz));
    MTEST_EQ("local size", lsize, sz);
    /* Each rank sends its rank to every remote rank and receives from every one. */
    for (int r = 0; r < rsize; r++) {
        int v = (low ? 1000 : 2000) + rank;
        MPI_Request q;
        MTEST_CALL(MPI_Isend(&v, 1, MPI_INT, r, 7, inter, &q));
        int got;
        MPI_Status st;
        MTEST_CALL(MPI_Recv(&got, 1, MPI_INT, r, 7, inter, &st));
        MTEST_EQ("value from the other group", (low ? 2000 : 1000) + r, got);
        MTEST_CALL(MPI_Wait(&q, MPI_STATUS_IGNORE));
    }
    int one = low ? 1 : 10, sum = 0;
    MTEST_CALL(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, inter));
    MTEST_EQ("allreduce of the other group", rsize * (low ? 10 : 1), sum);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size < 2) {
        if (rank == 0)
            printf("needs 2 ranks\n");
        return mtest_finalize();
    }
    int half = size / 2, low = rank < half;
    MPI_Comm mine;
    MTEST_CALL(MPI_Comm_split(MPI_COMM_WORLD, low, rank, &mine));
    int lsize = low ? half : size - half, rsize = low ? size - half : half;
    int pid = (int)getpid();
    MTEST_CALL(MPI_Bcast(&pid, 1, MPI_INT, 0, MPI_COMM_WORLD));
    char svc[64], port[MPI_MAX_PORT_NAME] = "";
    snprintf(svc, sizeof svc, "oxmpi-dpm-accept-%d", pid);

    MPI_Comm inter;
    if (low) {
        if (rank == 0) {
            MTEST_CALL(MPI_Open_port(MPI_INFO_NULL, port));
            MTEST_CHECK(strlen(port) > 0 && strlen(port) < MPI_MAX_PORT_NAME, "bad port name");
            MTEST_CALL(MPI_Publish_name(svc, MPI_INFO_NULL, port));
        }
        MTEST_CALL(MPI_Barrier(MPI_COMM_WORLD));
        MTEST_CALL(MPI_Comm_accept(port, MPI_INFO_NULL, 0, mine, &inter));
    } else {
        MTEST_CALL(MPI_Barrier(MPI_COMM_WORLD));
        if (rank == half)
            MTEST_CALL(MPI_Lookup_name(svc, MPI_INFO_NULL, port));
        MTEST_CALL(MPI_Comm_connect(port, MPI_INFO_NULL, 0, mine, &inter));
    }
    exchange(inter, low, lsize, rsize);
    MTEST_CALL(MPI_Comm_disconnect(&inter));
    MTEST_CHECK(inter == MPI_COMM_NULL, "disconnect left a handle");
    if (rank == 0) {
        MTEST_CALL(MPI_Unpublish_name(svc, MPI_INFO_NULL, port));
        MTEST_CALL(MPI_Close_port(port));
    }

    /* Again, with the last rank of each half as root; the port travels by message. */
    int lroot = lsize - 1;
    if (low) {
        if (rank == half - 1) {
            MTEST_CALL(MPI_Open_port(MPI_INFO_NULL, port));
            MTEST_CALL(MPI_Send(port, MPI_MAX_PORT_NAME, MPI_CHAR, size - 1, 8, MPI_COMM_WORLD));
        }
        MTEST_CALL(MPI_Comm_accept(port, MPI_INFO_NULL, lroot, mine, &inter));
        if (rank == half - 1)
            MTEST_CALL(MPI_Close_port(port));
    } else {
        if (rank == size - 1)
            MTEST_CALL(MPI_Recv(port, MPI_MAX_PORT_NAME, MPI_CHAR, half - 1, 8, MPI_COMM_WORLD,
                                MPI_STATUS_IGNORE));
        MTEST_CALL(MPI_Comm_connect(port, MPI_INFO_NULL, lroot, mine, &inter));
    }
    exchange(inter, low, lsize, rsize);
    MTEST_CALL(MPI_Comm_disconnect(&inter));
    MTEST_CALL(MPI_Comm_free(&mine));
    return mtest_finalize();
}
