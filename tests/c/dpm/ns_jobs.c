/*
 * Name publishing between separately started jobs through oxmpi-nameserver (run by the
 * script tests/c/dpm/nameserver, which starts the server and the jobs):
 *   ns_jobs server SERVICE   rank 0 checks that SERVICE is not published yet
 *                            (MPI_ERR_NAME), opens a port and publishes it under SERVICE
 *                            (a second publish is MPI_ERR_NAME); the job accepts one
 *                            connection, exchanges messages with the client job,
 *                            then rank 0 unpublishes SERVICE (again: MPI_ERR_SERVICE).
 *   ns_jobs client SERVICE   rank 0 looks SERVICE up until it is published, the job
 *                            connects and exchanges messages with the server job.
 *   ns_jobs missing SERVICE  a lookup of SERVICE is MPI_ERR_NAME (an unpublished name,
 *                            or a name server that cannot be reached).
 * Each job's rank 0 prints " No Errors".
 */
#include "mtest.h"
#include <stdlib.h>
#include <string.h>

/* Each side's rank 0 broadcasts a greeting to the other job, and an allgather over the
 * intercommunicator gives every rank the other job's rank numbers. */
static void exchange(MPI_Comm inter, int server, int rank)
{
    int rsize;
    MTEST_CALL(MPI_Comm_remote_size(inter, &rsize));
    char mine[32], theirs[32] = "", want[32];
    snprintf(mine, sizeof mine, "hello from %s", server ? "server" : "client");
    snprintf(want, sizeof want, "hello from %s", server ? "client" : "server");
    for (int from_server = 1; from_server >= 0; from_server--) {
        int sending = from_server == server;
        int root = sending ? (rank == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
        MTEST_CALL(MPI_Bcast(sending ? mine : theirs, 32, MPI_CHAR, root, inter));
    }
    MTEST_CHECK(strcmp(theirs, want) == 0, "got \"%s\", expected \"%s\"", theirs, want);
    int v = (server ? 1000 : 2000) + rank;
    int *got = mtest_malloc(sizeof(int) * (size_t)rsize);
    MTEST_CALL(MPI_Allgather(&v, 1, MPI_INT, got, 1, MPI_INT, inter));
    for (int r = 0; r < rsize; r++)
        MTEST_EQ("value from the other job", (server ? 2000 : 1000) + r, got[r]);
    free(got);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (argc != 3)
        MTEST_ABORT("usage: ns_jobs server|client|missing SERVICE");
    const char *mode = argv[1], *svc = argv[2];
    char port[MPI_MAX_PORT_NAME] = "";
    MPI_Comm inter;
    if (strcmp(mode, "server") == 0) {
        if (rank == 0) {
            MTEST_EXPECT_CLASS(MPI_ERR_NAME, MPI_Lookup_name(svc, MPI_INFO_NULL, port));
            MTEST_CALL(MPI_Open_port(MPI_INFO_NULL, port));
            MTEST_CALL(MPI_Publish_name(svc, MPI_INFO_NULL, port));
            MTEST_EXPECT_CLASS(MPI_ERR_NAME, MPI_Publish_name(svc, MPI_INFO_NULL, port));
        }
        MTEST_CALL(MPI_Comm_accept(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter));
        exchange(inter, 1, rank);
        if (rank == 0) {
            MTEST_CALL(MPI_Unpublish_name(svc, MPI_INFO_NULL, port));
            MTEST_EXPECT_CLASS(MPI_ERR_SERVICE, MPI_Unpublish_name(svc, MPI_INFO_NULL, port));
            MTEST_CALL(MPI_Close_port(port));
        }
        MTEST_CALL(MPI_Comm_disconnect(&inter));
    } else if (strcmp(mode, "client") == 0) {
        if (rank == 0) {
            int rc = MPI_ERR_NAME;
            for (int t = 0; t < 1200 && rc != MPI_SUCCESS; t++) {
                rc = MPI_Lookup_name(svc, MPI_INFO_NULL, port);
                if (rc != MPI_SUCCESS) {
                    MTEST_EQ("class of a lookup before the publish", MPI_ERR_NAME,
                             mtest_errclass(rc));
                    mtest_sleep_ms(50);
                }
            }
            if (rc != MPI_SUCCESS)
                MTEST_ABORT("%s was never published", svc);
        }
        MTEST_CALL(MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter));
        exchange(inter, 0, rank);
        MTEST_CALL(MPI_Comm_disconnect(&inter));
    } else if (strcmp(mode, "missing") == 0) {
        if (rank == 0)
            MTEST_EXPECT_CLASS(MPI_ERR_NAME, MPI_Lookup_name(svc, MPI_INFO_NULL, port));
    } else {
        MTEST_ABORT("unknown mode %s", mode);
    }
    return mtest_finalize();
}
