/*
 * mtest-abi: oxmpi-header (MPICH 4.0.2's mpi.h lacks what it calls)
 * MPI_Get_hw_resource_info (MPI-4.1): a new info object describing the hardware the
 * calling process runs on, which the program frees. oxmpi gives the hardware level it
 * knows (mpi_hw_resource_type = mpi_shared_memory) and the CPU set of the process
 * (oxmpi_ncpus, oxmpi_cpus); each call returns a new object.
 * Strict: MPICH 4.0.2 lacks the function.
 */
#include "mtest.h"

#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    MPI_Info a = MPI_INFO_NULL, b = MPI_INFO_NULL;
    MTEST_CALL(MPI_Get_hw_resource_info(&a));
    MTEST_CHECK(a != MPI_INFO_NULL, "MPI_Get_hw_resource_info gave MPI_INFO_NULL");
    MTEST_CALL(MPI_Get_hw_resource_info(&b));
    MTEST_CHECK(a != b, "two calls gave the same info object");

    char value[MPI_MAX_INFO_VAL + 1];
    int len = MPI_MAX_INFO_VAL, flag = 0;
    MTEST_CALL(MPI_Info_get_string(a, "mpi_hw_resource_type", &len, value, &flag));
    MTEST_CHECK(flag && strcmp(value, "mpi_shared_memory") == 0, "mpi_hw_resource_type \"%s\"",
                flag ? value : "(unset)");
    len = MPI_MAX_INFO_VAL;
    MTEST_CALL(MPI_Info_get_string(a, "oxmpi_ncpus", &len, value, &flag));
    int ncpus = flag ? atoi(value) : 0;
    MTEST_CHECK(ncpus >= 1, "oxmpi_ncpus \"%s\"", flag ? value : "(unset)");
    len = MPI_MAX_INFO_VAL;
    MTEST_CALL(MPI_Info_get_string(a, "oxmpi_cpus", &len, value, &flag));
    MTEST_CHECK(flag && len > 1, "oxmpi_cpus unset or empty");
    int nkeys = 0;
    MTEST_CALL(MPI_Info_get_nkeys(b, &nkeys));
    MTEST_EQ("keys of the second object", 3, nkeys);

    MTEST_CALL(MPI_Info_free(&a));
    MTEST_CALL(MPI_Info_free(&b));
    MTEST_CHECK(a == MPI_INFO_NULL && b == MPI_INFO_NULL, "MPI_Info_free did not reset");
    MTEST_EXPECT_CLASS(MPI_ERR_ARG, MPI_Get_hw_resource_info(NULL));
    return mtest_finalize();
}
