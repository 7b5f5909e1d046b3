/*
 * MPI_LASTUSEDCODE: an attribute of MPI_COMM_WORLD, never below MPI_ERR_LASTCODE, and at
 * least every class and code added with MPI_Add_error_class / MPI_Add_error_code (it
 * follows them as they are added).
 */
#include "mtest.h"

static int last_used(void)
{
    int *v = NULL, flag = 0;
    MTEST_CALL(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &v, &flag));
    MTEST_CHECK(flag, "MPI_LASTUSEDCODE is not set on MPI_COMM_WORLD");
    return flag && v ? *v : -1;
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int first = last_used();
    MTEST_CHECK(first >= MPI_ERR_LASTCODE, "MPI_LASTUSEDCODE %d below MPI_ERR_LASTCODE %d", first,
                MPI_ERR_LASTCODE);
    int cls, code;
    MTEST_CALL(MPI_Add_error_class(&cls));
    int after_class = last_used();
    MTEST_CHECK(after_class >= cls, "MPI_LASTUSEDCODE %d below the added class %d", after_class, cls);
    MTEST_CALL(MPI_Add_error_code(cls, &code));
    int after_code = last_used();
    MTEST_CHECK(after_code >= code, "MPI_LASTUSEDCODE %d below the added code %d", after_code, code);
    MTEST_CHECK(after_code >= after_class, "MPI_LASTUSEDCODE went down: %d then %d", after_class,
                after_code);
    return mtest_finalize();
}
