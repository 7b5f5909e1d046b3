/*
 * mtest-abi: oxmpi-header (MPICH 4.0.2's mpi.h lacks what it calls)
 * MPI-4.1's error classes and error-code calls:
 *  - every error class of MPI-4.1 is its own class for MPI_Error_class, and
 *    MPI_Error_string names it;
 *  - an invalid error handler argument is MPI_ERR_ERRHANDLER;
 *  - MPI_Remove_error_string / MPI_Remove_error_code / MPI_Remove_error_class undo
 *    MPI_Add_error_*: a class keeps while it has codes, a code or class while it has a
 *    string (removing it earlier is erroneous, and mpi4py expects an error), removed values are no longer
 *    valid, predefined ones cannot be removed, MPI_LASTUSEDCODE does not go down.
 * Strict: MPICH 4.0.2 has neither MPI_ERR_ERRHANDLER nor MPI_Remove_error_*.
 */
#include "mtest.h"

#include <string.h>

#define CLASS(c) {c, #c}

static const struct {
    int value;
    const char *name;
} classes[] = {
    CLASS(MPI_SUCCESS),          CLASS(MPI_ERR_BUFFER),
    CLASS(MPI_ERR_COUNT),        CLASS(MPI_ERR_TYPE),
    CLASS(MPI_ERR_TAG),          CLASS(MPI_ERR_COMM),
    CLASS(MPI_ERR_RANK),         CLASS(MPI_ERR_REQUEST),
    CLASS(MPI_ERR_ROOT),         CLASS(MPI_ERR_GROUP),
    CLASS(MPI_ERR_OP),           CLASS(MPI_ERR_TOPOLOGY),
    CLASS(MPI_ERR_DIMS),         CLASS(MPI_ERR_ARG),
    CLASS(MPI_ERR_UNKNOWN),      CLASS(MPI_ERR_TRUNCATE),
    CLASS(MPI_ERR_OTHER),        CLASS(MPI_ERR_INTERN),
    CLASS(MPI_ERR_IN_STATUS),    CLASS(MPI_ERR_PENDING),
    CLASS(MPI_ERR_KEYVAL),       CLASS(MPI_ERR_NO_MEM),
    CLASS(MPI_ERR_BASE),         CLASS(MPI_ERR_INFO_KEY),
    CLASS(MPI_ERR_INFO_VALUE),   CLASS(MPI_ERR_INFO_NOKEY),
    CLASS(MPI_ERR_SPAWN),        CLASS(MPI_ERR_PORT),
    CLASS(MPI_ERR_SERVICE),      CLASS(MPI_ERR_NAME),
    CLASS(MPI_ERR_WIN),          CLASS(MPI_ERR_SIZE),
    CLASS(MPI_ERR_DISP),         CLASS(MPI_ERR_INFO),
    CLASS(MPI_ERR_LOCKTYPE),     CLASS(MPI_ERR_ASSERT),
    CLASS(MPI_ERR_RMA_CONFLICT), CLASS(MPI_ERR_RMA_SYNC),
    CLASS(MPI_ERR_RMA_RANGE),    CLASS(MPI_ERR_RMA_ATTACH),
    CLASS(MPI_ERR_RMA_SHARED),   CLASS(MPI_ERR_RMA_FLAVOR),
    CLASS(MPI_ERR_FILE),         CLASS(MPI_ERR_NOT_SAME),
    CLASS(MPI_ERR_AMODE),        CLASS(MPI_ERR_UNSUPPORTED_DATAREP),
    CLASS(MPI_ERR_UNSUPPORTED_OPERATION), CLASS(MPI_ERR_NO_SUCH_FILE),
    CLASS(MPI_ERR_FILE_EXISTS),  CLASS(MPI_ERR_BAD_FILE),
    CLASS(MPI_ERR_ACCESS),       CLASS(MPI_ERR_NO_SPACE),
    CLASS(MPI_ERR_QUOTA),        CLASS(MPI_ERR_READ_ONLY),
    CLASS(MPI_ERR_FILE_IN_USE),  CLASS(MPI_ERR_DUP_DATAREP),
    CLASS(MPI_ERR_CONVERSION),   CLASS(MPI_ERR_IO),
    CLASS(MPI_ERR_SESSION),      CLASS(MPI_ERR_PROC_ABORTED),
    CLASS(MPI_ERR_VALUE_TOO_LARGE), CLASS(MPI_ERR_ERRHANDLER),
    CLASS(MPI_T_ERR_MEMORY),     CLASS(MPI_T_ERR_NOT_INITIALIZED),
    CLASS(MPI_T_ERR_CANNOT_INIT), CLASS(MPI_T_ERR_INVALID_INDEX),
    CLASS(MPI_T_ERR_INVALID_ITEM), CLASS(MPI_T_ERR_INVALID_HANDLE),
    CLASS(MPI_T_ERR_OUT_OF_HANDLES), CLASS(MPI_T_ERR_OUT_OF_SESSIONS),
    CLASS(MPI_T_ERR_INVALID_SESSION), CLASS(MPI_T_ERR_CVAR_SET_NOT_NOW),
    CLASS(MPI_T_ERR_CVAR_SET_NEVER), CLASS(MPI_T_ERR_PVAR_NO_STARTSTOP),
    CLASS(MPI_T_ERR_PVAR_NO_WRITE), CLASS(MPI_T_ERR_PVAR_NO_ATOMIC),
    CLASS(MPI_T_ERR_INVALID_NAME), CLASS(MPI_T_ERR_INVALID),
    CLASS(MPI_T_ERR_NOT_SUPPORTED), CLASS(MPI_T_ERR_NOT_ACCESSIBLE),
};

static void every_class(void)
{
    int n = (int)(sizeof classes / sizeof classes[0]);
    for (int i = 0; i < n; i++) {
        int cls = -1, len = -1;
        char text[MPI_MAX_ERROR_STRING];
        MTEST_CALL(MPI_Error_class(classes[i].value, &cls));
        MTEST_CHECK(cls == classes[i].value, "%s: MPI_Error_class gave %d", classes[i].name, cls);
        MTEST_CALL(MPI_Error_string(classes[i].value, text, &len));
        MTEST_CHECK(len > 0 && (int)strlen(text) == len, "%s: string length %d", classes[i].name,
                    len);
        if (classes[i].value != MPI_SUCCESS) {
            MTEST_CHECK(strstr(text, classes[i].name) != NULL, "%s: MPI_Error_string says \"%s\"",
                        classes[i].name, text);
        }
        MTEST_CHECK(classes[i].value <= MPI_ERR_LASTCODE, "%s above MPI_ERR_LASTCODE",
                    classes[i].name);
        /* Distinct values (MPI_SUCCESS aside). */
        for (int j = 0; j < i; j++) {
            MTEST_CHECK(classes[i].value != classes[j].value, "%s and %s share the value %d",
                        classes[i].name, classes[j].name, classes[i].value);
        }
    }
}

static void invalid_errhandler(void)
{
    int rc = MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRHANDLER_NULL);
    MTEST_EQ("class of MPI_Comm_set_errhandler(MPI_ERRHANDLER_NULL)", MPI_ERR_ERRHANDLER,
             mtest_errclass(rc));
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    MTEST_CALL(MPI_Error_string(rc, text, &len));
    MTEST_CHECK(strstr(text, "MPI_Comm_set_errhandler") != NULL &&
                    strstr(text, "MPI_ERR_ERRHANDLER") != NULL &&
                    strstr(text, "MPI_ERRHANDLER_NULL") != NULL,
                "message \"%s\" should name the call, class and value", text);
    MPI_Errhandler eh = MPI_ERRHANDLER_NULL;
    MTEST_EXPECT_CLASS(MPI_ERR_ERRHANDLER, MPI_Errhandler_free(&eh));
}

static void removal(void)
{
    int cls, code, got, len, flag;
    char text[MPI_MAX_ERROR_STRING];
    int *last = NULL;
    MTEST_CALL(MPI_Add_error_class(&cls));
    MTEST_CALL(MPI_Add_error_code(cls, &code));
    MTEST_CALL(MPI_Add_error_string(code, "pump failure"));
    MTEST_CALL(MPI_Add_error_string(cls, "hardware"));
    MTEST_CALL(MPI_Error_string(code, text, &len));
    MTEST_CHECK(strcmp(text, "pump failure") == 0, "code string \"%s\"", text);

    /* A code or class with a string keeps it until the string is removed. */
    MTEST_EXPECT_CLASS(MPI_ERR_ARG, MPI_Remove_error_code(code));
    MTEST_CALL(MPI_Remove_error_string(code));
    MTEST_CALL(MPI_Error_string(code, text, &len));
    MTEST_CHECK(len == 0 && text[0] == 0, "string after removal \"%s\"", text);

    /* The class has a code: it stays. */
    MTEST_EXPECT_CLASS(MPI_ERR_ARG, MPI_Remove_error_class(cls));
    MTEST_CALL(MPI_Error_class(code, &got));
    MTEST_EQ("class of the added code", cls, got);

    MTEST_CALL(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &last, &flag));
    int last_before = *last;
    MTEST_CALL(MPI_Remove_error_code(code));
    MTEST_EXPECT_CLASS(MPI_ERR_ARG, MPI_Error_class(code, &got));
    MTEST_EXPECT_CLASS(MPI_ERR_ARG, MPI_Remove_error_code(code));
    MTEST_EXPECT_CLASS(MPI_ERR_ARG, MPI_Add_error_string(code, "again"));

    MTEST_EXPECT_CLASS(MPI_ERR_ARG, MPI_Remove_error_class(cls));
    MTEST_CALL(MPI_Remove_error_string(cls));
    MTEST_CALL(MPI_Remove_error_class(cls));
    MTEST_EXPECT_CLASS(MPI_ERR_ARG, MPI_Error_class(cls, &got));
    MTEST_EXPECT_CLASS(MPI_ERR_ARG, MPI_Add_error_code(cls, &got));
    MTEST_EXPECT_CLASS(MPI_ERR_ARG, MPI_Remove_error_class(cls));
    MTEST_CALL(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &last, &flag));
    MTEST_EQ("MPI_LASTUSEDCODE after removals", last_before, *last);

    /* A new class is a new value. */
    int cls2;
    MTEST_CALL(MPI_Add_error_class(&cls2));
    MTEST_CHECK(cls2 != cls && cls2 != code, "removed value %d handed out again", cls2);
    MTEST_CALL(MPI_Remove_error_class(cls2));

    /* Predefined classes cannot be removed. */
    MTEST_EXPECT_CLASS(MPI_ERR_ARG, MPI_Remove_error_class(MPI_ERR_RANK));
    MTEST_EXPECT_CLASS(MPI_ERR_ARG, MPI_Remove_error_code(MPI_ERR_RANK));
    MTEST_EXPECT_CLASS(MPI_ERR_ARG, MPI_Remove_error_string(MPI_ERR_RANK));
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    every_class();
    invalid_errhandler();
    removal();
    return mtest_finalize();
}
