/*
 * Completion calls on empty lists (count 0): valid with NULL request, index and status
 * arrays, since nothing is read or written (MPI-4.1 section 3.7.5).  MPI_Waitall /
 * MPI_Testall succeed (flag true), MPI_Waitsome / MPI_Testsome give outcount
 * MPI_UNDEFINED, MPI_Waitany / MPI_Testany give index MPI_UNDEFINED (flag true) and the
 * empty status.
 */
#include "mtest.h"

int main(int argc, char **argv)
{
    int flag, idx, outcount;
    MPI_Status st;

    mtest_init(&argc, &argv);

    MTEST_CALL(MPI_Waitall(0, NULL, NULL));
    MTEST_CALL(MPI_Waitall(0, NULL, MPI_STATUSES_IGNORE));

    flag = -1;
    MTEST_CALL(MPI_Testall(0, NULL, &flag, NULL));
    MTEST_EQ("MPI_Testall(0) flag", 1, flag);
    flag = -1;
    MTEST_CALL(MPI_Testall(0, NULL, &flag, MPI_STATUSES_IGNORE));
    MTEST_EQ("MPI_Testall(0, MPI_STATUSES_IGNORE) flag", 1, flag);

    outcount = -1;
    MTEST_CALL(MPI_Waitsome(0, NULL, &outcount, NULL, NULL));
    MTEST_EQ("MPI_Waitsome(0) outcount", MPI_UNDEFINED, outcount);
    outcount = -1;
    MTEST_CALL(MPI_Testsome(0, NULL, &outcount, NULL, NULL));
    MTEST_EQ("MPI_Testsome(0) outcount", MPI_UNDEFINED, outcount);
    outcount = -1;
    MTEST_CALL(MPI_Testsome(0, NULL, &outcount, NULL, MPI_STATUSES_IGNORE));
    MTEST_EQ("MPI_Testsome(0, MPI_STATUSES_IGNORE) outcount", MPI_UNDEFINED, outcount);

    idx = -1;
    st.MPI_SOURCE = st.MPI_TAG = 77;
    MTEST_CALL(MPI_Waitany(0, NULL, &idx, &st));
    MTEST_EQ("MPI_Waitany(0) index", MPI_UNDEFINED, idx);
    MTEST_EMPTY_STATUS(&st);
    idx = -1;
    MTEST_CALL(MPI_Waitany(0, NULL, &idx, MPI_STATUS_IGNORE));
    MTEST_EQ("MPI_Waitany(0, MPI_STATUS_IGNORE) index", MPI_UNDEFINED, idx);

    idx = -1;
    flag = -1;
    st.MPI_SOURCE = st.MPI_TAG = 77;
    MTEST_CALL(MPI_Testany(0, NULL, &idx, &flag, &st));
    MTEST_EQ("MPI_Testany(0) index", MPI_UNDEFINED, idx);
    MTEST_EQ("MPI_Testany(0) flag", 1, flag);
    MTEST_EMPTY_STATUS(&st);

    /* A negative count is still an error. */
    MTEST_EXPECT_CLASS2(MPI_ERR_COUNT, MPI_ERR_ARG, MPI_Waitall(-1, NULL, NULL));

    return mtest_finalize();
}
