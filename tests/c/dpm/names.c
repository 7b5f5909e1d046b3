/*
 * Name publishing inside one job: a name published by one rank is found by every rank
 * (MPI_Lookup_name gives back the port string unchanged), a name nobody published is
 * MPI_ERR_NAME, unpublishing a name that is not published is MPI_ERR_SERVICE, and after
 * MPI_Unpublish_name the name is gone for every rank. Two ranks publish at once under
 * different names. Service names carry rank 0's pid so that runs sharing a name server
 * do not meet.
 */
#include "mtest.h"
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int pid = (int)getpid();
    MTEST_CALL(MPI_Bcast(&pid, 1, MPI_INT, 0, MPI_COMM_WORLD));

    char svc0[64], svcl[64], missing[64], port[MPI_MAX_PORT_NAME];
    snprintf(svc0, sizeof svc0, "oxmpi-names-%d-first", pid);
    snprintf(svcl, sizeof svcl, "oxmpi-names-%d-last", pid);
    snprintf(missing, sizeof missing, "oxmpi-names-%d-nobody", pid);

    MTEST_EXPECT_CLASS(MPI_ERR_NAME, MPI_Lookup_name(missing, MPI_INFO_NULL, port));
    MTEST_EXPECT_CLASS(MPI_ERR_SERVICE,
                       MPI_Unpublish_name(missing, MPI_INFO_NULL, "tag#0$port#1$"));
    MTEST_CALL(MPI_Barrier(MPI_COMM_WORLD));

    const char *port0 = "tag#0$description#127.0.0.1$port#40001$";
    const char *portl = "127.0.0.1:40002";
    if (rank == 0)
        MTEST_CALL(MPI_Publish_name(svc0, MPI_INFO_NULL, port0));
    if (rank == size - 1) {
        MPI_Info info;
        MTEST_CALL(MPI_Info_create(&info));
        MTEST_CALL(MPI_Publish_name(svcl, info, portl));
        MTEST_CALL(MPI_Info_free(&info));
    }
    MTEST_CALL(MPI_Barrier(MPI_COMM_WORLD));

    memset(port, 'x', sizeof port);
    MTEST_CALL(MPI_Lookup_name(svc0, MPI_INFO_NULL, port));
    MTEST_CHECK(strcmp(port, port0) == 0, "looked up %s: got \"%s\", expected \"%s\"", svc0,
                port, port0);
    memset(port, 'x', sizeof port);
    MTEST_CALL(MPI_Lookup_name(svcl, MPI_INFO_NULL, port));
    MTEST_CHECK(strcmp(port, portl) == 0, "looked up %s: got \"%s\", expected \"%s\"", svcl,
                port, portl);
    MTEST_CALL(MPI_Barrier(MPI_COMM_WORLD));

    if (rank == 0)
        MTEST_CALL(MPI_Unpublish_name(svc0, MPI_INFO_NULL, port0));
    if (rank == size - 1)
        MTEST_CALL(MPI_Unpublish_name(svcl, MPI_INFO_NULL, portl));
    MTEST_CALL(MPI_Barrier(MPI_COMM_WORLD));

    MTEST_EXPECT_CLASS(MPI_ERR_NAME, MPI_Lookup_name(svc0, MPI_INFO_NULL, port));
    MTEST_EXPECT_CLASS(MPI_ERR_NAME, MPI_Lookup_name(svcl, MPI_INFO_NULL, port));
    MTEST_CALL(MPI_Barrier(MPI_COMM_WORLD));
    /* Unpublished names can be published again. */
    if (rank == 0) {
        MTEST_CALL(MPI_Publish_name(svc0, MPI_INFO_NULL, portl));
        MTEST_CALL(MPI_Lookup_name(svc0, MPI_INFO_NULL, port));
        MTEST_CHECK(strcmp(port, portl) == 0, "looked up %s again: got \"%s\"", svc0, port);
        MTEST_CALL(MPI_Unpublish_name(svc0, MPI_INFO_NULL, portl));
    }
    return mtest_finalize();
}
