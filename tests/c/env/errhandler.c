/*
 * Error handlers and error codes: MPI_Errhandler_get / MPI_Errhandler_set (MPI-1 names),
 * the default MPI_ERRORS_ARE_FATAL on MPI_COMM_WORLD, MPI_ERRORS_RETURN making calls return
 * codes, MPI_Error_class / MPI_Error_string on every MPI-1 error class and on codes returned
 * by failing calls, and communication still working after an error.
 */
#include "mtest.h"

#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

static const struct {
    int cls;
    const char *name;
} classes[] = {
    {MPI_ERR_BUFFER, "MPI_ERR_BUFFER"},       {MPI_ERR_COUNT, "MPI_ERR_COUNT"},
    {MPI_ERR_TYPE, "MPI_ERR_TYPE"},           {MPI_ERR_TAG, "MPI_ERR_TAG"},
    {MPI_ERR_COMM, "MPI_ERR_COMM"},           {MPI_ERR_RANK, "MPI_ERR_RANK"},
    {MPI_ERR_REQUEST, "MPI_ERR_REQUEST"},     {MPI_ERR_ROOT, "MPI_ERR_ROOT"},
    {MPI_ERR_GROUP, "MPI_ERR_GROUP"},         {MPI_ERR_OP, "MPI_ERR_OP"},
    {MPI_ERR_TOPOLOGY, "MPI_ERR_TOPOLOGY"},   {MPI_ERR_DIMS, "MPI_ERR_DIMS"},
    {MPI_ERR_ARG, "MPI_ERR_ARG"},             {MPI_ERR_UNKNOWN, "MPI_ERR_UNKNOWN"},
    {MPI_ERR_TRUNCATE, "MPI_ERR_TRUNCATE"},   {MPI_ERR_OTHER, "MPI_ERR_OTHER"},
    {MPI_ERR_INTERN, "MPI_ERR_INTERN"},       {MPI_ERR_IN_STATUS, "MPI_ERR_IN_STATUS"},
    {MPI_ERR_PENDING, "MPI_ERR_PENDING"},
};
#define NCLASSES ((int)(sizeof classes / sizeof classes[0]))

static void check_string(int code, const char *what)
{
    char s[MPI_MAX_ERROR_STRING + 16];
    memset(s, 0x7f, sizeof s);
    int len = -1;
    int rc = MPI_Error_string(code, s, &len);
    MTEST_CHECK(rc == MPI_SUCCESS, "MPI_Error_string(%s) returned %d", what, rc);
    if (rc != MPI_SUCCESS) {
        return;
    }
    MTEST_CHECK(len >= 0 && len < MPI_MAX_ERROR_STRING, "MPI_Error_string(%s) resultlen %d", what, len);
    if (len >= 0 && len < MPI_MAX_ERROR_STRING) {
        MTEST_EQ("MPI_Error_string NUL terminator", 0, s[len]);
        MTEST_EQ("strlen(error string) vs resultlen", len, (long long)strlen(s));
        if (code != MPI_SUCCESS) {
            MTEST_CHECK(len > 0, "MPI_Error_string(%s) is empty", what);
        }
    }
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int rank = mtest_rank(), size = mtest_size();
    MPI_Errhandler eh;

    /* default handler on MPI_COMM_WORLD, as seen before mtest_init replaced it */
    MTEST_CHECK(mtest_initial_errhandler == MPI_ERRORS_ARE_FATAL,
                "default error handler of MPI_COMM_WORLD is not MPI_ERRORS_ARE_FATAL");

    /* get returns what set installed, on WORLD and SELF */
    MTEST_CALL(MPI_Errhandler_get(MPI_COMM_WORLD, &eh));
    MTEST_CHECK(eh == MPI_ERRORS_RETURN, "MPI_Errhandler_get(WORLD) after set(ERRORS_RETURN)");
    MTEST_CALL(MPI_Errhandler_get(MPI_COMM_SELF, &eh));
    MTEST_CHECK(eh == MPI_ERRORS_RETURN, "MPI_Errhandler_get(SELF) after set(ERRORS_RETURN)");
    MTEST_CALL(MPI_Errhandler_set(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
    MTEST_CALL(MPI_Errhandler_get(MPI_COMM_WORLD, &eh));
    MTEST_CHECK(eh == MPI_ERRORS_ARE_FATAL, "MPI_Errhandler_get(WORLD) after set(ERRORS_ARE_FATAL)");
    MTEST_CALL(MPI_Errhandler_set(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MTEST_CALL(MPI_Errhandler_get(MPI_COMM_WORLD, &eh));
    MTEST_CHECK(eh == MPI_ERRORS_RETURN, "MPI_Errhandler_get(WORLD) after setting it back");

    /* every MPI-1 error class: its own class, within (MPI_SUCCESS, MPI_ERR_LASTCODE], distinct,
     * with a non-empty string */
    MTEST_EQ("MPI_SUCCESS", 0, MPI_SUCCESS);
    for (int i = 0; i < NCLASSES; i++) {
        int c = -1;
        MTEST_CHECK(classes[i].cls > MPI_SUCCESS && classes[i].cls <= MPI_ERR_LASTCODE,
                    "%s = %d not in (MPI_SUCCESS, MPI_ERR_LASTCODE]", classes[i].name, classes[i].cls);
        MTEST_CALL(MPI_Error_class(classes[i].cls, &c));
        MTEST_CHECK(c == classes[i].cls, "MPI_Error_class(%s): expected %d got %d", classes[i].name,
                    classes[i].cls, c);
        for (int j = 0; j < i; j++) {
            MTEST_CHECK(classes[i].cls != classes[j].cls, "%s == %s", classes[i].name, classes[j].name);
        }
        check_string(classes[i].cls, classes[i].name);
    }
    int c = -1;
    MTEST_CALL(MPI_Error_class(MPI_SUCCESS, &c));
    MTEST_EQ("MPI_Error_class(MPI_SUCCESS)", MPI_SUCCESS, c);
    check_string(MPI_SUCCESS, "MPI_SUCCESS");

    /* a real error under MPI_ERRORS_RETURN: its code maps to the right class and string */
    int x = 1;
    int rc = MPI_Send(&x, 1, MPI_INT, size, 0, MPI_COMM_WORLD);
    MTEST_CHECK(rc != MPI_SUCCESS, "MPI_Send to rank %d (== size) succeeded", size);
    if (rc != MPI_SUCCESS) {
        MTEST_EQ("MPI_Error_class of MPI_Send to rank == size", MPI_ERR_RANK, mtest_errclass(rc));
        check_string(rc, "code from MPI_Send to an invalid rank");
    }
    rc = MPI_Send(&x, -1, MPI_INT, 0, 0, MPI_COMM_WORLD);
    MTEST_CHECK(rc != MPI_SUCCESS, "MPI_Send with count -1 succeeded");
    if (rc != MPI_SUCCESS) {
        MTEST_EQ("MPI_Error_class of MPI_Send with count -1", MPI_ERR_COUNT, mtest_errclass(rc));
        check_string(rc, "code from MPI_Send with count -1");
    }
    /* the handler on MPI_COMM_SELF governs calls on MPI_COMM_SELF */
    rc = MPI_Send(&x, 1, MPI_INT, 1, 0, MPI_COMM_SELF);
    MTEST_CHECK(rc != MPI_SUCCESS, "MPI_Send to rank 1 of MPI_COMM_SELF succeeded");
    if (rc != MPI_SUCCESS) {
        MTEST_EQ("MPI_Error_class of MPI_Send to rank 1 of SELF", MPI_ERR_RANK, mtest_errclass(rc));
    }

    /* communication still works: a ring exchange */
    if (size > 1) {
        int right = (rank + 1) % size, left = (rank + size - 1) % size, in = -1;
        MPI_Status st;
        MTEST_CALL(MPI_Sendrecv(&rank, 1, MPI_INT, right, 3, &in, 1, MPI_INT, left, 3, MPI_COMM_WORLD, &st));
        MTEST_EQ("value from the left neighbour after errors", left, in);
        MTEST_STATUS(&st, left, 3, MPI_INT, 1);
    }
    return mtest_finalize();
}
