/*
 * Many spawns in a row: 12 times, the parents spawn one child, exchange a message with
 * it and disconnect. Nothing may pile up: after the loop (and a moment for the departed
 * children's connections to close) the parents hold no more TCP sockets than after
 * the second round (sockets of ports and of connections to children are closed).
 */
#include "mtest.h"
#include <dirent.h>
#include <sys/socket.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Open TCP sockets of this process (listeners, ports, connections). */
static int open_fds(void)
{
    int n = 0;
    for (int fd = 0; fd < 4096; fd++) {
        struct sockaddr_storage ss;
        socklen_t l = sizeof ss;
        if (getsockname(fd, (struct sockaddr *)&ss, &l) == 0 && ss.ss_family == AF_INET)
            n++;
    }
    return n;
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    MPI_Comm parent;
    MTEST_CALL(MPI_Comm_get_parent(&parent));
    if (parent != MPI_COMM_NULL) {
        int v;
        MTEST_CALL(MPI_Recv(&v, 1, MPI_INT, 0, 3, parent, MPI_STATUS_IGNORE));
        v += 1;
        MTEST_CALL(MPI_Send(&v, 1, MPI_INT, 0, 4, parent));
        MTEST_CALL(MPI_Comm_disconnect(&parent));
        int errors = mtest.errors;
        MPI_Finalize();
        return errors ? 1 : 0;
    }
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int base = -1;
    for (int i = 0; i < 12; i++) {
        MPI_Comm kid;
        MTEST_CALL(MPI_Comm_spawn(argv[0], MPI_ARGV_NULL, 1, MPI_INFO_NULL, 0, MPI_COMM_WORLD,
                                  &kid, MPI_ERRCODES_IGNORE));
        if (rank == 0) {
            int v = i;
            MTEST_CALL(MPI_Send(&v, 1, MPI_INT, 0, 3, kid));
            MTEST_CALL(MPI_Recv(&v, 1, MPI_INT, 0, 4, kid, MPI_STATUS_IGNORE));
            MTEST_EQ("child's answer", i + 1, v);
        }
        MTEST_CALL(MPI_Comm_disconnect(&kid));
        /* Counted after the second round: some descriptors open on first use. */
        if (i == 1) {
            mtest_sleep_ms(500);
            int flag;
            MPI_Iprobe(MPI_ANY_SOURCE, 12345, MPI_COMM_SELF, &flag, MPI_STATUS_IGNORE);
            base = open_fds();
        }
    }
    /* Connections to the last children close once they have exited: let progress see it. */
    int now = open_fds();
    for (int t = 0; t < 200 && now > base; t++) {
        int flag;
        MPI_Iprobe(MPI_ANY_SOURCE, 12345, MPI_COMM_SELF, &flag, MPI_STATUS_IGNORE);
        mtest_sleep_ms(50);
        now = open_fds();
    }
    MTEST_CHECK(now <= base, "open TCP sockets grew from %d to %d over the spawns", base, now);
    if (now > base) {
        DIR *d = opendir("/proc/self/fd");
        struct dirent *e;
        while (d && (e = readdir(d))) {
            char p[300], t[300];
            snprintf(p, sizeof p, "/proc/self/fd/%s", e->d_name);
            ssize_t n = readlink(p, t, sizeof t - 1);
            t[n > 0 ? n : 0] = 0;
            fprintf(stderr, "  fd %s -> %s\n", e->d_name, t);
        }
        if (d)
            closedir(d);
    }
    return mtest_finalize();
}
