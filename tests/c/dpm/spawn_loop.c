/*
 * Many spawns in a row: 12 times, the parents spawn one child, exchange a message with
 * it and disconnect. Nothing may pile up: after the loop (and a moment for the departed
 * children's connections to close) the parents hold no more file descriptors than after
 * the first round (sockets of ports and of connections to children are closed).
 */
#include "mtest.h"
#include <dirent.h>
#include <stdlib.h>

static int open_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    if (!d)
        return -1;
    int n = 0;
    while (readdir(d))
        n++;
    closedir(d);
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
        if (i == 0) {
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
    MTEST_CHECK(now <= base, "open descriptors grew from %d to %d over the spawns", base, now);
    return mtest_finalize();
}
