/*
 * MPI_Comm_join: ranks pair up (0-1, 2-3, ...; an odd last rank sits out). The even rank
 * listens on a loopback TCP socket and sends its port to the odd one, which connects;
 * both call MPI_Comm_join on their ends. The result is an intercommunicator of one
 * process each way; messages (small and 1 MiB) cross it both ways, and it is
 * disconnected. The socket stays the program's, open and usable, after the join.
 */
#include "mtest.h"
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int partner = rank ^ 1;
    if (partner < size) {
        int fd = -1;
        if (rank % 2 == 0) {
            int l = socket(AF_INET, SOCK_STREAM, 0);
            struct sockaddr_in a = {0};
            a.sin_family = AF_INET;
            a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
            MTEST_CHECK(bind(l, (struct sockaddr *)&a, sizeof a) == 0, "bind failed");
            MTEST_CHECK(listen(l, 1) == 0, "listen failed");
            socklen_t n = sizeof a;
            getsockname(l, (struct sockaddr *)&a, &n);
            int port = ntohs(a.sin_port);
            MTEST_CALL(MPI_Send(&port, 1, MPI_INT, partner, 1, MPI_COMM_WORLD));
            fd = accept(l, NULL, NULL);
            close(l);
        } else {
            int port;
            MTEST_CALL(MPI_Recv(&port, 1, MPI_INT, partner, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            fd = socket(AF_INET, SOCK_STREAM, 0);
            struct sockaddr_in a = {0};
            a.sin_family = AF_INET;
            a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
            a.sin_port = htons(port);
            MTEST_CHECK(connect(fd, (struct sockaddr *)&a, sizeof a) == 0, "connect failed");
        }
        MTEST_CHECK(fd >= 0, "no socket");
        MPI_Comm inter;
        MTEST_CALL(MPI_Comm_join(fd, &inter));
        int flag, rs;
        MTEST_CALL(MPI_Comm_test_inter(inter, &flag));
        MTEST_EQ("an intercommunicator", 1, flag);
        MTEST_CALL(MPI_Comm_remote_size(inter, &rs));
        MTEST_EQ("remote size", 1, rs);
        int v = rank, got = -1;
        MTEST_CALL(MPI_Sendrecv(&v, 1, MPI_INT, 0, 2, &got, 1, MPI_INT, 0, 2, inter,
                                MPI_STATUS_IGNORE));
        MTEST_EQ("partner's rank", partner, got);
        size_t big = 1 << 20;
        char *sb = mtest_malloc(big), *rb = mtest_malloc(big);
        mtest_fill(sb, big, 100 + rank);
        MTEST_CALL(MPI_Sendrecv(sb, (int)big, MPI_CHAR, 0, 3, rb, (int)big, MPI_CHAR, 0, 3, inter,
                                MPI_STATUS_IGNORE));
        mtest_verify(rb, big, 100 + partner, "message over the joined intercommunicator");
        free(sb);
        free(rb);
        MTEST_CALL(MPI_Comm_disconnect(&inter));
        /* The socket is still the program's. */
        char c = 'x', d = 0;
        MTEST_CHECK(write(fd, &c, 1) == 1, "the socket is not writable after the join");
        MTEST_CHECK(read(fd, &d, 1) == 1 && d == 'x', "the socket is not readable after the join");
        close(fd);
    }
    return mtest_finalize();
}
