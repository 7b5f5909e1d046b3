/*
 * Error classes, codes and strings added by the program: MPI_Add_error_class,
 * MPI_Add_error_code (on added and on predefined classes), MPI_Add_error_string (set and
 * replace; empty string before one is set), MPI_Error_class / MPI_Error_string on the new
 * values, the same values on every rank when added in the same order, a user error handler
 * receiving an added code from MPI_Comm_call_errhandler, and the errors for strings on
 * predefined codes, codes of unknown classes and over-long strings.
 *
 * oxmpi-only checks (MPICH 4.0.2 accepts these or garbles the text): the string of a code
 * added to a predefined class, and the three error cases.
 */
#include "mtest.h"

static int is_oxmpi(void)
{
    char v[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    MPI_Get_library_version(v, &len);
    return strncmp(v, "oxmpi", 5) == 0;
}

static int seen_code = -1;
static void handler(MPI_Comm *comm, int *code, ...)
{
    (void)comm;
    seen_code = *code;
}

static void check_string(int code, const char *expect, const char *what)
{
    char s[MPI_MAX_ERROR_STRING];
    int len = -1;
    memset(s, 'x', sizeof s);
    MTEST_CALL(MPI_Error_string(code, s, &len));
    MTEST_EQ("MPI_Error_string length", (long long)strlen(expect), len);
    MTEST_CHECK(strcmp(s, expect) == 0, "%s: MPI_Error_string gave \"%s\", expected \"%s\"", what, s, expect);
}

static int class_of(int code)
{
    int c = -1;
    MTEST_CALL(MPI_Error_class(code, &c));
    return c;
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int rank = mtest_rank(), size = mtest_size();
    int oxmpi = is_oxmpi();
    int c1, c2, k1, k2, k3;

    MTEST_CALL(MPI_Add_error_class(&c1));
    MTEST_CALL(MPI_Add_error_class(&c2));
    MTEST_CHECK(c1 > MPI_ERR_LASTCODE || c1 > MPI_T_ERR_NOT_SUPPORTED,
                "added class %d collides with the predefined range", c1);
    MTEST_CHECK(c1 != c2, "two added classes are equal (%d)", c1);
    MTEST_EQ("MPI_Error_class(added class)", c1, class_of(c1));
    MTEST_EQ("MPI_Error_class(second added class)", c2, class_of(c2));
    check_string(c1, "", "added class without a string");

    MTEST_CALL(MPI_Add_error_code(c1, &k1));
    MTEST_CALL(MPI_Add_error_code(c1, &k2));
    MTEST_CALL(MPI_Add_error_code(MPI_ERR_IO, &k3));
    MTEST_CHECK(k1 != k2 && k1 != c1 && k1 != c2 && k2 != c1 && k3 != k1 && k3 != k2,
                "added codes are not distinct: %d %d %d (classes %d %d)", k1, k2, k3, c1, c2);
    MTEST_EQ("class of code 1", c1, class_of(k1));
    MTEST_EQ("class of code 2", c1, class_of(k2));
    MTEST_EQ("class of a code of MPI_ERR_IO", MPI_ERR_IO, class_of(k3));
    check_string(k1, "", "added code without a string");

    MTEST_CALL(MPI_Add_error_string(c1, "widget class"));
    MTEST_CALL(MPI_Add_error_string(k1, "the widget jammed"));
    MTEST_CALL(MPI_Add_error_string(k3, "disk full of widgets"));
    check_string(c1, "widget class", "class string");
    check_string(k1, "the widget jammed", "code string");
    if (oxmpi) {
        check_string(k3, "disk full of widgets", "code of a predefined class");
    }
    check_string(k2, "", "code whose string was never set");
    MTEST_CALL(MPI_Add_error_string(k1, "the widget jammed again"));
    check_string(k1, "the widget jammed again", "replaced string");

    /* the longest allowed string round-trips */
    char longest[MPI_MAX_ERROR_STRING];
    memset(longest, 'w', sizeof longest - 1);
    longest[sizeof longest - 1] = 0;
    MTEST_CALL(MPI_Add_error_string(k2, longest));
    check_string(k2, longest, "string of MPI_MAX_ERROR_STRING - 1 characters");

    /* same order on every rank: same values */
    int mine[5] = {c1, c2, k1, k2, k3}, theirs[5];
    if (rank == 0) {
        for (int r = 1; r < size; r++) {
            MTEST_CALL(MPI_Send(mine, 5, MPI_INT, r, 1, MPI_COMM_WORLD));
        }
    } else {
        MTEST_CALL(MPI_Recv(theirs, 5, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        for (int i = 0; i < 5; i++) {
            MTEST_EQ("added value equal to rank 0's", theirs[i], mine[i]);
        }
    }

    /* a user handler receives an added code unchanged */
    MPI_Errhandler eh;
    MTEST_CALL(MPI_Comm_create_errhandler(handler, &eh));
    MTEST_CALL(MPI_Comm_set_errhandler(MPI_COMM_WORLD, eh));
    MTEST_CALL(MPI_Comm_call_errhandler(MPI_COMM_WORLD, k1));
    MTEST_EQ("code seen by the handler", k1, seen_code);
    MTEST_CALL(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MTEST_CALL(MPI_Errhandler_free(&eh));

    /* errors */
    if (oxmpi) {
        MTEST_EXPECT_CLASS(MPI_ERR_ARG, MPI_Add_error_string(MPI_ERR_RANK, "not mine"));
        MTEST_EXPECT_CLASS(MPI_ERR_ARG, MPI_Add_error_code(c2 + 1000, &k2));
        char too_long[MPI_MAX_ERROR_STRING + 1];
        memset(too_long, 'z', sizeof too_long - 1);
        too_long[sizeof too_long - 1] = 0;
        MTEST_EXPECT_CLASS(MPI_ERR_ARG, MPI_Add_error_string(k1, too_long));
        check_string(k1, "the widget jammed again", "string after a rejected replacement");
    }

    /* predefined codes keep their own strings */
    char s[MPI_MAX_ERROR_STRING];
    int len;
    MTEST_CALL(MPI_Error_string(MPI_ERR_RANK, s, &len));
    MTEST_CHECK(len > 0, "MPI_Error_string(MPI_ERR_RANK) is empty");
    return mtest_finalize();
}
