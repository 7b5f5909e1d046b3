/*
 * Error handlers and attribute keys live while they are in use (MPI-4.1 sections 7.7.2,
 * 7.7.4 and 9.3): freeing the handle makes the program's copy MPI_ERRHANDLER_NULL /
 * MPI_KEYVAL_INVALID, while the object lives until its last use.
 *
 * - An error handler freed while set on a communicator keeps working there and on its
 *   duplicates, and freeing those communicators afterwards succeeds (no spurious error:
 *   MPI_COMM_SELF and MPI_COMM_WORLD are MPI_ERRORS_ARE_FATAL here).
 *   MPI_Comm_get_errhandler returns a new reference that outlives the communicator.
 * - An attribute key freed while values are cached with it: the values can still be
 *   read and deleted through a copy of the key (the delete callback runs), a duplicate
 *   still runs its copy callback, and freeing the objects runs the delete callbacks.
 *   For communicator and datatype keys.
 */
#include "mtest.h"

static int handled;
static void count(MPI_Comm *c, int *code, ...) { (void)c; (void)code; handled++; }

static int copies, deletes;
static int last_deleted;

static int comm_copy(MPI_Comm c, int k, void *extra, void *in, void *out, int *flag)
{
    (void)c; (void)k; (void)extra;
    copies++;
    *(void **)out = (void *)((intptr_t)in + 1);
    *flag = 1;
    return MPI_SUCCESS;
}
static int comm_delete(MPI_Comm c, int k, void *val, void *extra)
{
    (void)c; (void)k; (void)extra;
    deletes++;
    last_deleted = (int)(intptr_t)val;
    return MPI_SUCCESS;
}
static int type_copy(MPI_Datatype t, int k, void *extra, void *in, void *out, int *flag)
{
    (void)t; (void)k; (void)extra;
    copies++;
    *(void **)out = (void *)((intptr_t)in + 1);
    *flag = 1;
    return MPI_SUCCESS;
}
static int type_delete(MPI_Datatype t, int k, void *val, void *extra)
{
    (void)t; (void)k; (void)extra;
    deletes++;
    last_deleted = (int)(intptr_t)val;
    return MPI_SUCCESS;
}

/* An error on `c`: a send to a rank that does not exist. */
static int provoke(MPI_Comm c)
{
    int size, x = 0;
    MTEST_CALL(MPI_Comm_size(c, &size));
    return MPI_Send(&x, 1, MPI_INT, size, 0, c);
}

static void errhandlers(void)
{
    MPI_Comm c, d, e;
    MPI_Errhandler eh, got;
    int rc;

    MTEST_CALL(MPI_Comm_create_errhandler(count, &eh));
    MTEST_CALL(MPI_Comm_dup(MPI_COMM_WORLD, &c));
    MTEST_CALL(MPI_Comm_set_errhandler(c, eh));
    MTEST_CALL(MPI_Errhandler_free(&eh));
    MTEST_CHECK(eh == MPI_ERRHANDLER_NULL, "MPI_Errhandler_free did not set MPI_ERRHANDLER_NULL");

    handled = 0;
    rc = provoke(c);
    MTEST_EQ("class of the error on c", MPI_ERR_RANK, mtest_errclass(rc));
    MTEST_EQ("freed handler still set on c ran", 1, handled);

    /* A duplicate inherits the handler; the parent goes first. */
    MTEST_CALL(MPI_Comm_dup(c, &d));
    MTEST_CALL(MPI_Comm_free(&c));
    handled = 0;
    provoke(d);
    MTEST_EQ("inherited handler on the duplicate ran", 1, handled);

    /* A reference taken from the communicator outlives it. */
    MTEST_CALL(MPI_Comm_get_errhandler(d, &got));
    MTEST_CALL(MPI_Comm_free(&d));
    MTEST_CALL(MPI_Comm_dup(MPI_COMM_WORLD, &e));
    MTEST_CALL(MPI_Comm_set_errhandler(e, got));
    MTEST_CALL(MPI_Errhandler_free(&got));
    handled = 0;
    provoke(e);
    MTEST_EQ("handler from MPI_Comm_get_errhandler ran", 1, handled);
    MTEST_CALL(MPI_Comm_free(&e));
}

static void comm_keys(void)
{
    MPI_Comm c, d;
    int key, saved, flag;
    void *v;

    MTEST_CALL(MPI_Comm_create_keyval(comm_copy, comm_delete, &key, NULL));
    MTEST_CALL(MPI_Comm_dup(MPI_COMM_WORLD, &c));
    MTEST_CALL(MPI_Comm_set_attr(c, key, (void *)(intptr_t)10));
    saved = key;
    MTEST_CALL(MPI_Comm_free_keyval(&key));
    MTEST_CHECK(key == MPI_KEYVAL_INVALID, "MPI_Comm_free_keyval did not set MPI_KEYVAL_INVALID");

    flag = 0;
    MTEST_CALL(MPI_Comm_get_attr(c, saved, &v, &flag));
    MTEST_CHECK(flag && (intptr_t)v == 10, "value of the freed key: flag %d value %ld", flag,
                (long)(intptr_t)v);

    copies = deletes = 0;
    MTEST_CALL(MPI_Comm_dup(c, &d));
    MTEST_EQ("copy callbacks of the freed key on MPI_Comm_dup", 1, copies);
    flag = 0;
    MTEST_CALL(MPI_Comm_get_attr(d, saved, &v, &flag));
    MTEST_CHECK(flag && (intptr_t)v == 11, "copied value: flag %d value %ld", flag,
                (long)(intptr_t)v);

    MTEST_CALL(MPI_Comm_delete_attr(c, saved));
    MTEST_EQ("delete callbacks of MPI_Comm_delete_attr", 1, deletes);
    MTEST_EQ("deleted value", 10, last_deleted);
    flag = 1;
    MTEST_CALL(MPI_Comm_get_attr(c, saved, &v, &flag));
    MTEST_EQ("value left after delete", 0, flag);

    MTEST_CALL(MPI_Comm_free(&d));
    MTEST_EQ("delete callbacks after MPI_Comm_free", 2, deletes);
    MTEST_EQ("value deleted by MPI_Comm_free", 11, last_deleted);
    MTEST_CALL(MPI_Comm_free(&c));
    MTEST_EQ("no more delete callbacks", 2, deletes);
}

static void type_keys(void)
{
    MPI_Datatype t, u;
    int key, saved, flag;
    void *v;

    MTEST_CALL(MPI_Type_create_keyval(type_copy, type_delete, &key, NULL));
    MTEST_CALL(MPI_Type_contiguous(2, MPI_INT, &t));
    MTEST_CALL(MPI_Type_set_attr(t, key, (void *)(intptr_t)20));
    saved = key;
    MTEST_CALL(MPI_Type_free_keyval(&key));
    MTEST_CHECK(key == MPI_KEYVAL_INVALID, "MPI_Type_free_keyval did not set MPI_KEYVAL_INVALID");

    flag = 0;
    MTEST_CALL(MPI_Type_get_attr(t, saved, &v, &flag));
    MTEST_CHECK(flag && (intptr_t)v == 20, "value of the freed type key: flag %d value %ld", flag,
                (long)(intptr_t)v);

    copies = deletes = 0;
    MTEST_CALL(MPI_Type_dup(t, &u));
    MTEST_EQ("copy callbacks of the freed key on MPI_Type_dup", 1, copies);

    MTEST_CALL(MPI_Type_delete_attr(t, saved));
    MTEST_EQ("delete callbacks of MPI_Type_delete_attr", 1, deletes);
    MTEST_EQ("deleted value", 20, last_deleted);

    MTEST_CALL(MPI_Type_free(&u));
    MTEST_EQ("delete callbacks after MPI_Type_free", 2, deletes);
    MTEST_EQ("value deleted by MPI_Type_free", 21, last_deleted);
    MTEST_CALL(MPI_Type_free(&t));
    MTEST_EQ("no more delete callbacks", 2, deletes);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    /* Any spurious error inside the library ends the job. */
    MTEST_CALL(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL));
    MTEST_CALL(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));

    errhandlers();
    comm_keys();
    type_keys();

    MTEST_CALL(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MTEST_CALL(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    return mtest_finalize();
}
