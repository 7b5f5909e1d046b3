/*
 * Error codes and their texts: MPI_Error_class maps every predefined class (including the
 * tool interface's MPI_T_ERR_* codes) to itself and every code a failing call returns to
 * the call's class; MPI_Error_string is non-empty, NUL-terminated and fits
 * MPI_MAX_ERROR_STRING; an invalid code is an error (MPI_ERR_ARG); and MPI_ERR_IN_STATUS
 * with per-request MPI_ERROR fields from MPI_Waitall / MPI_Testall / MPI_Waitsome /
 * MPI_Testsome when one receive is truncated (the others report MPI_SUCCESS, or
 * MPI_ERR_PENDING and stay active, as the standard allows and MPICH does).
 *
 * oxmpi-only checks (skipped elsewhere): the text of a code names the call, the argument
 * and the value; an invalid code is MPI_ERR_ARG (MPICH 4.0.2 accepts it).
 */
#include "mtest.h"

static int is_oxmpi(void)
{
    char v[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    MPI_Get_library_version(v, &len);
    return strncmp(v, "oxmpi", 5) == 0;
}

static void text_of(int code, char *s, const char *what)
{
    int len = -1;
    memset(s, 0x7f, MPI_MAX_ERROR_STRING);
    int rc = MPI_Error_string(code, s, &len);
    MTEST_CHECK(rc == MPI_SUCCESS, "MPI_Error_string(%s) failed with %d", what, rc);
    if (rc != MPI_SUCCESS) {
        s[0] = 0;
        return;
    }
    MTEST_CHECK(len > 0 && len < MPI_MAX_ERROR_STRING, "MPI_Error_string(%s): length %d", what, len);
    if (len >= 0 && len < MPI_MAX_ERROR_STRING) {
        MTEST_EQ("NUL after the error string", 0, s[len]);
    }
}

static void expect_text(int code, const char *need, const char *what)
{
    char s[MPI_MAX_ERROR_STRING];
    text_of(code, s, what);
    MTEST_CHECK(strstr(s, need) != NULL, "%s: error string \"%s\" does not contain \"%s\"", what, s, need);
}

/* Posts on MPI_COMM_SELF: 0) receive of 1 int that gets 2 (truncated), 1) receive of 2 ints
 * that gets 2, 2) and 3) the matching sends. */
static void post(MPI_Request req[4], int *small, int *big, const int *out)
{
    MTEST_CALL(MPI_Irecv(small, 1, MPI_INT, 0, 10, MPI_COMM_SELF, &req[0]));
    MTEST_CALL(MPI_Irecv(big, 2, MPI_INT, 0, 11, MPI_COMM_SELF, &req[1]));
    MTEST_CALL(MPI_Isend(out, 2, MPI_INT, 0, 10, MPI_COMM_SELF, &req[2]));
    MTEST_CALL(MPI_Isend(out, 2, MPI_INT, 0, 11, MPI_COMM_SELF, &req[3]));
}

/* Checks the statuses of a call that returned MPI_ERR_IN_STATUS; returns the number of
 * requests left pending (MPI_ERR_PENDING). */
static int check_in_status(const char *call, int rc, MPI_Status st[4], const int index[4], int n)
{
    int pending = 0;
    MTEST_EQ(call, MPI_ERR_IN_STATUS, mtest_errclass(rc));
    for (int k = 0; k < n; k++) {
        int i = index ? index[k] : k;
        int expect = i == 0 ? MPI_ERR_TRUNCATE : MPI_SUCCESS;
        int got = st[k].MPI_ERROR == MPI_SUCCESS ? MPI_SUCCESS : mtest_errclass(st[k].MPI_ERROR);
        if (!index && i != 0 && got == MPI_ERR_PENDING) {
            pending++;
            continue;
        }
        MTEST_CHECK(got == expect, "%s: request %d: MPI_ERROR class %d, expected %d", call, i, got, expect);
    }
    return pending;
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int size = mtest_size();
    int oxmpi = is_oxmpi();
    char s[MPI_MAX_ERROR_STRING];

    /* every predefined class, 1 .. MPI_ERR_LASTCODE's predefined part */
    static const int classes[] = {
        MPI_ERR_BUFFER, MPI_ERR_COUNT, MPI_ERR_TYPE, MPI_ERR_TAG, MPI_ERR_COMM, MPI_ERR_RANK,
        MPI_ERR_ROOT, MPI_ERR_GROUP, MPI_ERR_OP, MPI_ERR_TOPOLOGY, MPI_ERR_DIMS, MPI_ERR_ARG,
        MPI_ERR_UNKNOWN, MPI_ERR_TRUNCATE, MPI_ERR_OTHER, MPI_ERR_INTERN, MPI_ERR_IN_STATUS,
        MPI_ERR_PENDING, MPI_ERR_REQUEST, MPI_ERR_ACCESS, MPI_ERR_AMODE, MPI_ERR_BAD_FILE,
        MPI_ERR_CONVERSION, MPI_ERR_DUP_DATAREP, MPI_ERR_FILE_EXISTS, MPI_ERR_FILE_IN_USE,
        MPI_ERR_FILE, MPI_ERR_INFO, MPI_ERR_INFO_KEY, MPI_ERR_INFO_VALUE, MPI_ERR_INFO_NOKEY,
        MPI_ERR_IO, MPI_ERR_NAME, MPI_ERR_NO_MEM, MPI_ERR_NOT_SAME, MPI_ERR_NO_SPACE,
        MPI_ERR_NO_SUCH_FILE, MPI_ERR_PORT, MPI_ERR_QUOTA, MPI_ERR_READ_ONLY, MPI_ERR_SERVICE,
        MPI_ERR_SPAWN, MPI_ERR_UNSUPPORTED_DATAREP, MPI_ERR_UNSUPPORTED_OPERATION, MPI_ERR_WIN,
        MPI_ERR_BASE, MPI_ERR_LOCKTYPE, MPI_ERR_KEYVAL, MPI_ERR_RMA_CONFLICT, MPI_ERR_RMA_SYNC,
        MPI_ERR_SIZE, MPI_ERR_DISP, MPI_ERR_ASSERT, MPI_ERR_RMA_RANGE, MPI_ERR_RMA_ATTACH,
        MPI_ERR_RMA_SHARED, MPI_ERR_RMA_FLAVOR, MPI_T_ERR_MEMORY, MPI_T_ERR_NOT_INITIALIZED,
        MPI_T_ERR_CANNOT_INIT, MPI_T_ERR_INVALID_INDEX, MPI_T_ERR_INVALID_ITEM,
        MPI_T_ERR_INVALID_HANDLE, MPI_T_ERR_OUT_OF_HANDLES, MPI_T_ERR_OUT_OF_SESSIONS,
        MPI_T_ERR_INVALID_SESSION, MPI_T_ERR_CVAR_SET_NOT_NOW, MPI_T_ERR_CVAR_SET_NEVER,
        MPI_T_ERR_PVAR_NO_STARTSTOP, MPI_T_ERR_PVAR_NO_WRITE, MPI_T_ERR_PVAR_NO_ATOMIC,
        MPI_T_ERR_INVALID_NAME, MPI_T_ERR_INVALID,
    };
    for (size_t i = 0; i < sizeof classes / sizeof classes[0]; i++) {
        char what[32];
        snprintf(what, sizeof what, "class %d", classes[i]);
        MTEST_EQ(what, classes[i], mtest_errclass(classes[i]));
        text_of(classes[i], s, what);
        for (size_t j = 0; j < i; j++) {
            MTEST_CHECK(classes[i] != classes[j], "classes %zu and %zu are both %d", i, j, classes[i]);
        }
    }

    /* an invalid code is an error of MPI_Error_class / MPI_Error_string */
    int cls = 0, len = 0;
    if (oxmpi) {
        MTEST_EXPECT_CLASS(MPI_ERR_ARG, MPI_Error_class(-12345, &cls));
        MTEST_EXPECT_CLASS(MPI_ERR_ARG, MPI_Error_string(-12345, s, &len));
    }

    /* codes returned by failing calls */
    int x = 1;
    int rc = MPI_Send(&x, 1, MPI_INT, size + 6, 0, MPI_COMM_WORLD);
    MTEST_EQ("class of MPI_Send to rank size+6", MPI_ERR_RANK, mtest_errclass(rc));
    if (oxmpi) {
        char rank_text[16];
        snprintf(rank_text, sizeof rank_text, "%d", size + 6);
        expect_text(rc, "MPI_Send", "MPI_Send to an invalid rank");
        expect_text(rc, rank_text, "MPI_Send to an invalid rank");
    }
    rc = MPI_Recv(&x, -3, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MTEST_EQ("class of MPI_Recv with count -3", MPI_ERR_COUNT, mtest_errclass(rc));
    if (oxmpi) {
        expect_text(rc, "MPI_Recv", "MPI_Recv with count -3");
        expect_text(rc, "-3", "MPI_Recv with count -3");
    }
    rc = MPI_Send(&x, 1, MPI_DATATYPE_NULL, 0, 0, MPI_COMM_WORLD);
    MTEST_EQ("class of MPI_Send with MPI_DATATYPE_NULL", MPI_ERR_TYPE, mtest_errclass(rc));
    if (oxmpi) {
        expect_text(rc, "MPI_DATATYPE_NULL", "MPI_Send with MPI_DATATYPE_NULL");
    }

    /* MPI_ERR_IN_STATUS from the multiple-completion calls: request 0 is truncated */
    int small, big[2], out[2] = {5, 6};
    MPI_Request req[4];
    MPI_Status st[4];
    int index[4], outcount, flag;

    post(req, &small, big, out);
    for (int i = 0; i < 4; i++) {
        st[i].MPI_ERROR = -1;
    }
    rc = MPI_Waitall(4, req, st);
    if (check_in_status("MPI_Waitall", rc, st, NULL, 4) > 0) {
        MTEST_CALL(MPI_Waitall(4, req, MPI_STATUSES_IGNORE));
    }
    MTEST_EQ("truncated receive got the first int", 5, small);
    MTEST_EQ("intact receive", 6, big[1]);
    for (int i = 0; i < 4; i++) {
        MTEST_CHECK(req[i] == MPI_REQUEST_NULL, "request %d still active after MPI_Waitall", i);
    }

    post(req, &small, big, out);
    flag = 0;
    rc = MPI_SUCCESS;
    for (int tries = 0; !flag && tries < 1000000; tries++) {
        rc = MPI_Testall(4, req, &flag, st);
    }
    MTEST_CHECK(flag, "MPI_Testall never completed");
    if (check_in_status("MPI_Testall", rc, st, NULL, 4) > 0) {
        MTEST_CALL(MPI_Waitall(4, req, MPI_STATUSES_IGNORE));
    }

    post(req, &small, big, out);
    int done = 0, got_error = 0;
    while (done < 4) {
        rc = MPI_Waitsome(4, req, &outcount, index, st);
        if (outcount == MPI_UNDEFINED) {
            break;
        }
        int has_truncated = 0;
        for (int k = 0; k < outcount; k++) {
            has_truncated |= index[k] == 0;
        }
        if (has_truncated) {
            got_error = 1;
            check_in_status("MPI_Waitsome", rc, st, index, outcount);
        } else {
            MTEST_EQ("MPI_Waitsome without the truncated request", MPI_SUCCESS, rc);
        }
        done += outcount;
    }
    MTEST_CHECK(got_error && done == 4, "MPI_Waitsome: %d completions, truncation reported %d", done, got_error);

    post(req, &small, big, out);
    done = 0;
    got_error = 0;
    for (int tries = 0; done < 4 && tries < 1000000; tries++) {
        rc = MPI_Testsome(4, req, &outcount, index, st);
        if (outcount == MPI_UNDEFINED) {
            break;
        }
        int has_truncated = 0;
        for (int k = 0; k < outcount; k++) {
            has_truncated |= index[k] == 0;
        }
        if (has_truncated) {
            got_error = 1;
            check_in_status("MPI_Testsome", rc, st, index, outcount);
        }
        done += outcount;
    }
    MTEST_CHECK(got_error && done == 4, "MPI_Testsome: %d completions, truncation reported %d", done, got_error);

    /* single-completion calls return the class itself */
    post(req, &small, big, out);
    rc = MPI_Wait(&req[0], MPI_STATUS_IGNORE);
    MTEST_EQ("MPI_Wait on the truncated receive", MPI_ERR_TRUNCATE, mtest_errclass(rc));
    MTEST_CALL(MPI_Waitall(3, req + 1, MPI_STATUSES_IGNORE));
    return mtest_finalize();
}
