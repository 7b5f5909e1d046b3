/*
 * MPI_Comm_accept / MPI_Comm_connect between two separately started jobs (run by the
 * script tests/c/dpm/two_jobs): `two_jobs server FILE` opens a port and writes its name
 * to FILE, then accepts; `two_jobs client FILE` waits for FILE, connects with its rank 0
 * as root. Messages cross the intercommunicator both ways between every pair, a 1 MiB
 * message goes from each server rank to client rank 0, an intercommunicator allreduce
 * and a merge run, and both sides disconnect. Each job's rank 0 prints " No Errors".
 */
#include "mtest.h"
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc != 3)
        MTEST_ABORT("usage: two_jobs server|client FILE");
    int server = strcmp(argv[1], "server") == 0;
    char port[MPI_MAX_PORT_NAME] = "";
    MPI_Comm inter;
    if (server) {
        if (rank == 0) {
            MTEST_CALL(MPI_Open_port(MPI_INFO_NULL, port));
            char tmp[4096];
            snprintf(tmp, sizeof tmp, "%s.tmp", argv[2]);
            FILE *f = fopen(tmp, "w");
            if (!f)
                MTEST_ABORT("cannot write %s", tmp);
            fprintf(f, "%s\n", port);
            fclose(f);
            rename(tmp, argv[2]);
        }
        MTEST_CALL(MPI_Comm_accept(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter));
        if (rank == 0)
            MTEST_CALL(MPI_Close_port(port));
    } else {
        if (rank == 0) {
            FILE *f = NULL;
            for (int t = 0; t < 1200 && !(f = fopen(argv[2], "r")); t++)
                mtest_sleep_ms(50);
            if (!f || !fgets(port, sizeof port, f))
                MTEST_ABORT("no port name in %s", argv[2]);
            fclose(f);
            port[strcspn(port, "\n")] = 0;
        }
        MTEST_CALL(MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter));
    }
    int rsize;
    MTEST_CALL(MPI_Comm_remote_size(inter, &rsize));
    for (int r = 0; r < rsize; r++) {
        int v = (server ? 1000 : 2000) + rank, got = -1;
        MTEST_CALL(MPI_Sendrecv(&v, 1, MPI_INT, r, 1, &got, 1, MPI_INT, r, 1, inter,
                                MPI_STATUS_IGNORE));
        MTEST_EQ("value from the other job", (server ? 2000 : 1000) + r, got);
    }
    size_t big = 1 << 20;
    char *b = mtest_malloc(big);
    if (server) {
        mtest_fill(b, big, 7 + rank);
        MTEST_CALL(MPI_Send(b, (int)big, MPI_CHAR, 0, 2, inter));
    } else if (rank == 0) {
        for (int r = 0; r < rsize; r++) {
            MTEST_CALL(MPI_Recv(b, (int)big, MPI_CHAR, r, 2, inter, MPI_STATUS_IGNORE));
            mtest_verify(b, big, 7 + r, "1 MiB from a server rank");
        }
    }
    free(b);
    int one = 1, sum = 0;
    MTEST_CALL(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, inter));
    MTEST_EQ("allreduce over the other job", rsize, sum);
    MPI_Comm merged;
    MTEST_CALL(MPI_Intercomm_merge(inter, !server, &merged));
    int msize;
    MPI_Comm_size(merged, &msize);
    MTEST_EQ("merged size", size + rsize, msize);
    MTEST_CALL(MPI_Comm_free(&merged));
    MTEST_CALL(MPI_Comm_disconnect(&inter));
    return mtest_finalize();
}
