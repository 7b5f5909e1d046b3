/*
 * User attributes on windows: MPI_Win_create_keyval with a delete callback,
 * MPI_Win_set_attr / get_attr / delete_attr, replacement (the old value's delete
 * callback runs), MPI_Win_free deleting what is still cached (callback with the
 * window's handle and the key), MPI_Win_free_keyval.
 */
#include "mtest.h"

static int deleted = 0;
static void *last_value = NULL;
static int last_key = MPI_KEYVAL_INVALID;
static MPI_Win last_win = MPI_WIN_NULL;

static int on_delete(MPI_Win win, int key, void *value, void *extra)
{
    deleted++;
    last_value = value;
    last_key = key;
    last_win = win;
    MTEST_CHECK(extra == (void *)&deleted, "extra_state %p", extra);
    return MPI_SUCCESS;
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int *base, a = 1, b = 2, c = 3;
    MPI_Win win;
    MTEST_CALL(MPI_Win_allocate(sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
    int key;
    MTEST_CALL(MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, on_delete, &key, &deleted));
    void *v = NULL;
    int flag = -1;
    MTEST_CALL(MPI_Win_get_attr(win, key, &v, &flag));
    MTEST_EQ("flag before set", 0, flag);
    MTEST_CALL(MPI_Win_set_attr(win, key, &a));
    MTEST_CALL(MPI_Win_get_attr(win, key, &v, &flag));
    MTEST_EQ("flag after set", 1, flag);
    MTEST_CHECK(v == &a, "value %p, expected %p", v, (void *)&a);
    MTEST_CALL(MPI_Win_set_attr(win, key, &b));
    MTEST_EQ("delete on replace", 1, deleted);
    MTEST_CHECK(last_value == &a, "replaced value %p", last_value);
    MTEST_CALL(MPI_Win_delete_attr(win, key));
    MTEST_EQ("delete_attr", 2, deleted);
    MTEST_CHECK(last_value == &b, "deleted value %p", last_value);
    MTEST_CALL(MPI_Win_get_attr(win, key, &v, &flag));
    MTEST_EQ("flag after delete", 0, flag);
    MTEST_CALL(MPI_Win_set_attr(win, key, &c));
    MPI_Win copy = win;
    MTEST_CALL(MPI_Win_free_keyval(&key));
    MTEST_EQ("freed keyval", MPI_KEYVAL_INVALID, key);
    MTEST_CALL(MPI_Win_free(&win));
    MTEST_EQ("delete on free", 3, deleted);
    MTEST_CHECK(last_value == &c, "value deleted by free %p", last_value);
    MTEST_CHECK(last_win == copy, "delete callback got window %#x, expected %#x", (unsigned)last_win, (unsigned)copy);
    MTEST_CHECK(last_key != MPI_KEYVAL_INVALID, "delete callback got no key");
    return mtest_finalize();
}
