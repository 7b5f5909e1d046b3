/*
 * Name publishing, oxmpi's promises beyond the standard: a null service or port name is
 * MPI_ERR_ARG, a port name of MPI_MAX_PORT_NAME bytes or more is MPI_ERR_ARG (MPICH
 * 4.0.2 accepts it), and publishing a name that is published already is MPI_ERR_NAME
 * (the standard leaves that case to the implementation; MPICH's class).
 */
#include "mtest.h"
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    char port[MPI_MAX_PORT_NAME];
    MTEST_EXPECT_CLASS(MPI_ERR_ARG, MPI_Publish_name(NULL, MPI_INFO_NULL, "p"));
    MTEST_EXPECT_CLASS(MPI_ERR_ARG, MPI_Publish_name("s", MPI_INFO_NULL, NULL));
    MTEST_EXPECT_CLASS(MPI_ERR_ARG, MPI_Lookup_name(NULL, MPI_INFO_NULL, port));
    MTEST_EXPECT_CLASS(MPI_ERR_ARG, MPI_Lookup_name("s", MPI_INFO_NULL, NULL));
    char *long_port = mtest_malloc(MPI_MAX_PORT_NAME + 1);
    memset(long_port, 'p', MPI_MAX_PORT_NAME);
    long_port[MPI_MAX_PORT_NAME] = 0;
    MTEST_EXPECT_CLASS(MPI_ERR_ARG, MPI_Publish_name("s", MPI_INFO_NULL, long_port));
    free(long_port);

    char svc[64];
    snprintf(svc, sizeof svc, "oxmpi-names-strict-%d-%d", (int)getpid(), rank);
    MTEST_CALL(MPI_Publish_name(svc, MPI_INFO_NULL, "first"));
    MTEST_EXPECT_CLASS(MPI_ERR_NAME, MPI_Publish_name(svc, MPI_INFO_NULL, "second"));
    MTEST_CALL(MPI_Lookup_name(svc, MPI_INFO_NULL, port));
    MTEST_CHECK(strcmp(port, "first") == 0, "looked up %s: got \"%s\"", svc, port);
    MTEST_CALL(MPI_Unpublish_name(svc, MPI_INFO_NULL, "first"));
    return mtest_finalize();
}
