/*
 * The null handles MPI_COMM_NULL, MPI_DATATYPE_NULL and MPI_WIN_NULL are predefined objects
 * with predefined names: MPI_Comm_get_name, MPI_Type_get_name and MPI_Win_get_name return
 * those names (as Open MPI does; mpi4py relies on it. Strict: MPICH 4.0.2 refuses). Setting a name on
 * a null handle stays an error.
 */
#include "mtest.h"
#include <string.h>

static void expect_name(const char *what, const char *expected, const char *got, int len)
{
    MTEST_CHECK(strcmp(expected, got) == 0, "%s: expected \"%s\" got \"%s\"", what, expected, got);
    MTEST_EQ(what, (int)strlen(expected), len);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    char name[MPI_MAX_OBJECT_NAME];
    int len = -1;

    MTEST_CALL(MPI_Comm_get_name(MPI_COMM_NULL, name, &len));
    expect_name("MPI_COMM_NULL", "MPI_COMM_NULL", name, len);
    MTEST_CALL(MPI_Type_get_name(MPI_DATATYPE_NULL, name, &len));
    expect_name("MPI_DATATYPE_NULL", "MPI_DATATYPE_NULL", name, len);
    MTEST_CALL(MPI_Win_get_name(MPI_WIN_NULL, name, &len));
    expect_name("MPI_WIN_NULL", "MPI_WIN_NULL", name, len);

    /* Real objects keep their names. */
    MTEST_CALL(MPI_Comm_get_name(MPI_COMM_WORLD, name, &len));
    expect_name("MPI_COMM_WORLD", "MPI_COMM_WORLD", name, len);
    MTEST_CALL(MPI_Type_get_name(MPI_INT, name, &len));
    expect_name("MPI_INT", "MPI_INT", name, len);

    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MTEST_EXPECT_CLASS(MPI_ERR_COMM, MPI_Comm_set_name(MPI_COMM_NULL, "x"));
    MTEST_EXPECT_CLASS(MPI_ERR_TYPE, MPI_Type_set_name(MPI_DATATYPE_NULL, "x"));

    return mtest_finalize();
}
