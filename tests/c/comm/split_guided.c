/*
 * MPI_Comm_split_type with MPI_COMM_TYPE_HW_GUIDED and MPI 4.1's
 * MPI_COMM_TYPE_RESOURCE_GUIDED: the info key mpi_hw_resource_type names the resource;
 * "mpi_shared_memory" gives the same groups as MPI_COMM_TYPE_SHARED, no key or an unknown
 * resource gives MPI_COMM_NULL, and a rank passing MPI_UNDEFINED gets MPI_COMM_NULL.
 * mtest-abi: oxmpi-header (MPICH 4.0.2's mpi.h lacks MPI_COMM_TYPE_RESOURCE_GUIDED)
 */
#include "mtest.h"

static void check(int type)
{
    int r = mtest_rank(), n = mtest_size();
    MPI_Comm out, shared;
    MTEST_CALL(MPI_Comm_split_type(MPI_COMM_WORLD, type, 0, MPI_INFO_NULL, &out));
    MTEST_CHECK(out == MPI_COMM_NULL, "type %d without info gave a communicator", type);
    MPI_Info info;
    MTEST_CALL(MPI_Info_create(&info));
    MTEST_CALL(MPI_Comm_split_type(MPI_COMM_WORLD, type, 0, info, &out));
    MTEST_CHECK(out == MPI_COMM_NULL, "type %d without the key gave a communicator", type);
    MTEST_CALL(MPI_Info_set(info, "mpi_hw_resource_type", "no-such-resource"));
    MTEST_CALL(MPI_Comm_split_type(MPI_COMM_WORLD, type, 0, info, &out));
    MTEST_CHECK(out == MPI_COMM_NULL, "type %d with an unknown resource gave a communicator", type);

    MTEST_CALL(MPI_Info_set(info, "mpi_hw_resource_type", "mpi_shared_memory"));
    MTEST_CALL(MPI_Comm_split_type(MPI_COMM_WORLD, type, n - r, info, &out));
    MTEST_CALL(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, n - r, MPI_INFO_NULL, &shared));
    MTEST_CHECK(out != MPI_COMM_NULL, "type %d with mpi_shared_memory gave MPI_COMM_NULL", type);
    if (out != MPI_COMM_NULL) {
        int cmp;
        MTEST_CALL(MPI_Comm_compare(out, shared, &cmp));
        MTEST_EQ("compare with the shared split", MPI_CONGRUENT, cmp);
        MTEST_CALL(MPI_Comm_free(&out));
    }
    MTEST_CALL(MPI_Comm_free(&shared));

    /* Only rank 0 asks; the others pass MPI_UNDEFINED. */
    MTEST_CALL(MPI_Comm_split_type(MPI_COMM_WORLD, r == 0 ? type : MPI_UNDEFINED, 0, info, &out));
    if (r == 0) {
        int s = -1;
        MTEST_CHECK(out != MPI_COMM_NULL, "rank 0 got MPI_COMM_NULL");
        MTEST_CALL(MPI_Comm_size(out, &s));
        MTEST_EQ("size of rank 0's split", 1, s);
        MTEST_CALL(MPI_Comm_free(&out));
    } else {
        MTEST_CHECK(out == MPI_COMM_NULL, "MPI_UNDEFINED gave a communicator");
    }
    MTEST_CALL(MPI_Info_free(&info));
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    check(MPI_COMM_TYPE_HW_GUIDED);
    check(MPI_COMM_TYPE_RESOURCE_GUIDED);
    return mtest_finalize();
}
