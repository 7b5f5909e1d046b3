/*
 * MPI_Comm_get_parent is MPI_COMM_NULL in a process mpiexec started; MPI_Comm_disconnect
 * of a communicator with no pending traffic frees it (both sides of an exchange that has
 * completed) and sets the handle to MPI_COMM_NULL; bad input.
 */
#include "mtest.h"

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int rank = mtest_rank(), size = mtest_size();
    MPI_Comm parent = MPI_COMM_WORLD;
    MTEST_CALL(MPI_Comm_get_parent(&parent));
    MTEST_EQ("parent", MPI_COMM_NULL, parent);

    MPI_Comm c;
    MTEST_CALL(MPI_Comm_dup(MPI_COMM_WORLD, &c));
    int to = (rank + 1) % size, from = (rank + size - 1) % size, got = -1;
    MTEST_CALL(MPI_Sendrecv(&rank, 1, MPI_INT, to, 2, &got, 1, MPI_INT, from, 2, c, MPI_STATUS_IGNORE));
    MTEST_EQ("ring value", from, got);
    MTEST_CALL(MPI_Comm_disconnect(&c));
    MTEST_EQ("handle after disconnect", MPI_COMM_NULL, c);

    /* Bad input. */
    MTEST_EXPECT_CLASS(MPI_ERR_ARG, MPI_Comm_get_parent(NULL));
    MTEST_EXPECT_CLASS(MPI_ERR_ARG, MPI_Comm_disconnect(NULL));
    MPI_Comm null = MPI_COMM_NULL;
    MTEST_EXPECT_CLASS(MPI_ERR_COMM, MPI_Comm_disconnect(&null));
    return mtest_finalize();
}
