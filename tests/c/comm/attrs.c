/* Attribute caching on communicators: keys with user copy/delete callbacks called at
 * the right moments (dup, free, replace, delete) with the right arguments, the
 * predefined callbacks (MPI_COMM_NULL_COPY_FN, MPI_COMM_DUP_FN, MPI_NULL_COPY_FN,
 * MPI_DUP_FN, MPI_NULL_DELETE_FN), the MPI-1 names, a key freed while still in use,
 * callback errors propagated, the predefined attributes of MPI_COMM_WORLD, and bad keys. */
#include "mtest.h"

#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

static int copies, deletes;
static MPI_Comm last_comm;
static int last_key;
static void *last_extra, *last_value;
static int fail_copy, fail_delete;

static int copy_fn(MPI_Comm old, int key, void *extra, void *in, void *out, int *flag)
{
    copies++;
    last_comm = old;
    last_key = key;
    last_extra = extra;
    last_value = in;
    if (fail_copy) {
        return MPI_ERR_OTHER;
    }
    *(void **)out = (char *)in + 1;
    *flag = 1;
    return MPI_SUCCESS;
}

static int nocopy_fn(MPI_Comm old, int key, void *extra, void *in, void *out, int *flag)
{
    (void)old, (void)key, (void)extra, (void)in, (void)out;
    copies++;
    *flag = 0;
    return MPI_SUCCESS;
}

static int delete_fn(MPI_Comm comm, int key, void *value, void *extra)
{
    deletes++;
    last_comm = comm;
    last_key = key;
    last_value = value;
    last_extra = extra;
    return fail_delete ? MPI_ERR_OTHER : MPI_SUCCESS;
}

static char extra_state[4];
static char values[16];

static void *get(MPI_Comm c, int key, int *flag)
{
    void *v = NULL;
    MTEST_CALL(MPI_Comm_get_attr(c, key, &v, flag));
    return v;
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int size = mtest_size(), flag;
    MPI_Comm base, d1, d2;
    MTEST_CALL(MPI_Comm_dup(MPI_COMM_WORLD, &base));

    int kuser, knull, kdup, knocopy;
    MTEST_CALL(MPI_Comm_create_keyval(copy_fn, delete_fn, &kuser, extra_state));
    MTEST_CALL(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &knull, NULL));
    MTEST_CALL(MPI_Comm_create_keyval(MPI_COMM_DUP_FN, delete_fn, &kdup, extra_state + 1));
    MTEST_CALL(MPI_Comm_create_keyval(nocopy_fn, MPI_COMM_NULL_DELETE_FN, &knocopy, NULL));
    MTEST_CHECK(kuser != MPI_KEYVAL_INVALID, "MPI_Comm_create_keyval gave MPI_KEYVAL_INVALID");

    /* nothing cached yet */
    get(base, kuser, &flag);
    MTEST_EQ("flag before set", 0, flag);

    MTEST_CALL(MPI_Comm_set_attr(base, kuser, &values[0]));
    MTEST_CALL(MPI_Comm_set_attr(base, knull, &values[5]));
    MTEST_CALL(MPI_Comm_set_attr(base, kdup, &values[8]));
    MTEST_CALL(MPI_Comm_set_attr(base, knocopy, &values[9]));
    MTEST_EQ("no callback on first set", 0, deletes);
    void *v = get(base, kuser, &flag);
    MTEST_EQ("flag after set", 1, flag);
    MTEST_CHECK(v == &values[0], "get returned %p, expected %p", v, (void *)&values[0]);

    /* dup: copy callbacks run with the old communicator and the cached value */
    copies = 0;
    MTEST_CALL(MPI_Comm_dup(base, &d1));
    MTEST_EQ("copy callbacks run by dup (user + nocopy)", 2, copies);
    v = get(d1, kuser, &flag);
    MTEST_EQ("user-copied attribute present", 1, flag);
    MTEST_CHECK(v == &values[1], "user copy gave %p, expected %p", v, (void *)&values[1]);
    get(d1, knull, &flag);
    MTEST_EQ("MPI_COMM_NULL_COPY_FN attribute not copied", 0, flag);
    v = get(d1, kdup, &flag);
    MTEST_EQ("MPI_COMM_DUP_FN attribute copied", 1, flag);
    MTEST_CHECK(v == &values[8], "MPI_COMM_DUP_FN gave %p, expected %p", v, (void *)&values[8]);
    get(d1, knocopy, &flag);
    MTEST_EQ("copy callback with flag 0: not copied", 0, flag);
    /* The original keeps its values. */
    v = get(base, kuser, &flag);
    MTEST_CHECK(flag && v == &values[0], "original value changed by dup");

    /* a copy of the copy: the callback sees d1 and its value */
    fail_copy = 0;
    copies = 0;
    MTEST_CALL(MPI_Comm_dup(d1, &d2));
    MTEST_CHECK(last_comm == d1, "copy callback got the wrong old communicator");
    MTEST_EQ("copy callback key", kuser, last_key);
    MTEST_CHECK(last_extra == extra_state, "copy callback got the wrong extra_state");
    MTEST_CHECK(last_value == &values[1], "copy callback got the wrong value");
    v = get(d2, kuser, &flag);
    MTEST_CHECK(flag && v == &values[2], "second-generation copy has %p", v);

    /* replace: the delete callback runs for the old value */
    deletes = 0;
    MTEST_CALL(MPI_Comm_set_attr(d2, kuser, &values[7]));
    MTEST_EQ("delete callback on replace", 1, deletes);
    MTEST_CHECK(last_comm == d2 && last_key == kuser && last_value == &values[2] && last_extra == extra_state,
                "delete callback on replace got wrong arguments");
    v = get(d2, kuser, &flag);
    MTEST_CHECK(flag && v == &values[7], "replaced value is %p", v);

    /* delete_attr: callback once; deleting again is harmless and calls nothing */
    deletes = 0;
    MTEST_CALL(MPI_Comm_delete_attr(d2, kuser));
    MTEST_EQ("delete callback on delete_attr", 1, deletes);
    MTEST_CHECK(last_value == &values[7], "delete_attr callback value");
    get(d2, kuser, &flag);
    MTEST_EQ("flag after delete_attr", 0, flag);
    MTEST_CALL(MPI_Comm_delete_attr(d2, kuser));
    MTEST_EQ("no callback deleting an absent attribute", 1, deletes);

    /* free: delete callbacks for every remaining attribute (kdup on d2) */
    deletes = 0;
    MPI_Comm d2_handle = d2;
    MTEST_CALL(MPI_Comm_free(&d2));
    MTEST_EQ("delete callbacks on free of d2", 1, deletes);
    MTEST_CHECK(last_comm == d2_handle, "delete callback on free got another communicator");
    MTEST_CHECK(last_value == &values[8] && last_extra == extra_state + 1, "free: wrong value or extra_state");

    /* a key freed while in use: handle invalidated, value and callbacks survive */
    int kcopy = kuser;
    MTEST_CALL(MPI_Comm_free_keyval(&kuser));
    MTEST_EQ("free_keyval resets the handle", MPI_KEYVAL_INVALID, kuser);
    deletes = 0;
    MTEST_CALL(MPI_Comm_free(&d1)); /* has kuser (values[1]) and kdup */
    MTEST_EQ("delete callbacks after the key was freed", 2, deletes);
    (void)kcopy;

    /* callback errors propagate */
    int kfail;
    MTEST_CALL(MPI_Comm_create_keyval(copy_fn, delete_fn, &kfail, NULL));
    MTEST_CALL(MPI_Comm_set_attr(base, kfail, &values[3]));
    fail_copy = 1;
    MTEST_EXPECT_CLASS(MPI_ERR_OTHER, MPI_Comm_dup(base, &d1));
    fail_copy = 0;
    fail_delete = 1;
    MTEST_EXPECT_CLASS(MPI_ERR_OTHER, MPI_Comm_delete_attr(base, kfail));
    MTEST_EXPECT_CLASS(MPI_ERR_OTHER, MPI_Comm_set_attr(base, kfail, &values[4]));
    fail_delete = 0;
    MTEST_CALL(MPI_Comm_delete_attr(base, kfail));
    MTEST_CALL(MPI_Comm_free_keyval(&kfail));

    /* MPI-1 names and predefined MPI-1 callbacks */
    int k1, k2;
    MTEST_CALL(MPI_Keyval_create(MPI_DUP_FN, MPI_NULL_DELETE_FN, &k1, NULL));
    MTEST_CALL(MPI_Keyval_create(MPI_NULL_COPY_FN, delete_fn, &k2, NULL));
    MTEST_CALL(MPI_Attr_put(base, k1, &values[10]));
    MTEST_CALL(MPI_Attr_put(base, k2, &values[11]));
    MTEST_CALL(MPI_Comm_dup(base, &d1));
    MTEST_CALL(MPI_Attr_get(d1, k1, &v, &flag));
    MTEST_CHECK(flag && v == &values[10], "MPI_DUP_FN via MPI_Attr_get");
    MTEST_CALL(MPI_Attr_get(d1, k2, &v, &flag));
    MTEST_EQ("MPI_NULL_COPY_FN not copied", 0, flag);
    deletes = 0;
    MTEST_CALL(MPI_Attr_delete(base, k2));
    MTEST_EQ("MPI_Attr_delete ran the callback", 1, deletes);
    MTEST_CALL(MPI_Comm_free(&d1));
    MTEST_CALL(MPI_Keyval_free(&k1));
    MTEST_CALL(MPI_Keyval_free(&k2));
    MTEST_EQ("MPI_Keyval_free resets the handle", MPI_KEYVAL_INVALID, k1);

    /* predefined attributes */
    int *ip = NULL;
    MTEST_CALL(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ip, &flag));
    MTEST_CHECK(flag && ip && *ip >= 32767, "MPI_TAG_UB missing or below 32767");
    MTEST_CALL(MPI_Attr_get(MPI_COMM_WORLD, MPI_TAG_UB, &ip, &flag));
    MTEST_CHECK(flag && ip && *ip >= 32767, "MPI_TAG_UB via MPI_Attr_get");
    MTEST_CALL(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_HOST, &ip, &flag));
    MTEST_CHECK(flag && ip && (*ip == MPI_PROC_NULL || (*ip >= 0 && *ip < size)), "MPI_HOST");
    MTEST_CALL(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_IO, &ip, &flag));
    MTEST_CHECK(flag && ip && (*ip == MPI_ANY_SOURCE || *ip == MPI_PROC_NULL || (*ip >= 0 && *ip < size)), "MPI_IO");
    MTEST_CALL(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_WTIME_IS_GLOBAL, &ip, &flag));
    MTEST_CHECK(!flag || (ip && (*ip == 0 || *ip == 1)), "MPI_WTIME_IS_GLOBAL");
    MTEST_CALL(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &ip, &flag));
    MTEST_CHECK(!flag || (ip && *ip >= size), "MPI_UNIVERSE_SIZE below the world size");
    MTEST_CALL(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &ip, &flag));
    MTEST_CHECK(!flag || (ip && *ip >= 0), "MPI_APPNUM negative");
    int dummy = 5;
    MTEST_EXPECT_CLASS(MPI_ERR_KEYVAL, MPI_Comm_set_attr(MPI_COMM_WORLD, MPI_TAG_UB, &dummy));
    MTEST_EXPECT_CLASS(MPI_ERR_KEYVAL, MPI_Comm_delete_attr(MPI_COMM_WORLD, MPI_TAG_UB));
    MTEST_CALL(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ip, &flag));
    MTEST_CHECK(flag && *ip >= 32767, "MPI_TAG_UB changed by a refused set");

    /* bad keys */
    MTEST_EXPECT_CLASS(MPI_ERR_KEYVAL, MPI_Comm_get_attr(base, MPI_KEYVAL_INVALID, &v, &flag));
    MTEST_EXPECT_CLASS(MPI_ERR_KEYVAL, MPI_Comm_set_attr(base, MPI_KEYVAL_INVALID, &dummy));
    int inval = MPI_KEYVAL_INVALID;
    MTEST_EXPECT_CLASS(MPI_ERR_KEYVAL, MPI_Comm_free_keyval(&inval));
    MTEST_EXPECT_CLASS(MPI_ERR_COMM, MPI_Comm_set_attr(MPI_COMM_NULL, knull, &dummy));

    deletes = 0;
    MTEST_CALL(MPI_Comm_free(&base)); /* kuser (key freed), knull, kdup, knocopy remain */
    MTEST_EQ("delete callbacks when base is freed (kuser and kdup)", 2, deletes);
    MTEST_CALL(MPI_Comm_free_keyval(&knull));
    MTEST_CALL(MPI_Comm_free_keyval(&kdup));
    MTEST_CALL(MPI_Comm_free_keyval(&knocopy));
    return mtest_finalize();
}
