/*
 * Attributes cached on datatypes: MPI_Type_create_keyval with copy and delete callbacks,
 * MPI_Type_set_attr / get_attr / delete_attr, copying on MPI_Type_dup (MPI_TYPE_DUP_FN and
 * a user copy function that declines), delete callbacks on replacement, deletion and
 * MPI_Type_free (with the datatype handle passed to them), attributes on predefined types,
 * and MPI_Type_free_keyval while values are still cached.
 */
#include "mtest.h"

static int deleted[8], copied;
static MPI_Datatype last_deleted_type;

static int count_delete(MPI_Datatype t, int keyval, void *val, void *extra)
{
    (void)keyval;
    (void)extra;
    long v = (long)(intptr_t)val;
    if (v >= 0 && v < 8) {
        deleted[v]++;
    }
    last_deleted_type = t;
    return MPI_SUCCESS;
}

static int copy_plus_one(MPI_Datatype t, int keyval, void *extra, void *in, void *out, int *flag)
{
    (void)t;
    (void)keyval;
    MTEST_CHECK(extra == (void *)&copied, "copy callback got the wrong extra_state");
    copied++;
    *(void **)out = (void *)((intptr_t)in + 1);
    *flag = 1;
    return MPI_SUCCESS;
}

static int copy_decline(MPI_Datatype t, int keyval, void *extra, void *in, void *out, int *flag)
{
    (void)t;
    (void)keyval;
    (void)extra;
    (void)in;
    (void)out;
    *flag = 0;
    return MPI_SUCCESS;
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int k1, k2, k3, flag;
    void *val;
    MPI_Datatype t, d;

    MTEST_CALL(MPI_Type_create_keyval(copy_plus_one, count_delete, &k1, &copied));
    MTEST_CALL(MPI_Type_create_keyval(copy_decline, count_delete, &k2, NULL));
    MTEST_CALL(MPI_Type_create_keyval(MPI_TYPE_DUP_FN, MPI_TYPE_NULL_DELETE_FN, &k3, NULL));

    MTEST_CALL(MPI_Type_contiguous(4, MPI_INT, &t));
    MTEST_CALL(MPI_Type_get_attr(t, k1, &val, &flag));
    MTEST_EQ("flag before set", 0, flag);
    MTEST_CALL(MPI_Type_set_attr(t, k1, (void *)(intptr_t)1));
    MTEST_CALL(MPI_Type_set_attr(t, k2, (void *)(intptr_t)2));
    MTEST_CALL(MPI_Type_set_attr(t, k3, (void *)(intptr_t)77));
    MTEST_CALL(MPI_Type_get_attr(t, k1, &val, &flag));
    MTEST_CHECK(flag == 1 && val == (void *)(intptr_t)1, "get_attr k1: flag %d value %p", flag, val);

    /* Replacing a value runs the delete callback of the old one. */
    MTEST_CALL(MPI_Type_set_attr(t, k2, (void *)(intptr_t)3));
    MTEST_EQ("delete callback on replacement", 1, deleted[2]);

    /* Dup: k1 copied (+1), k2 declined, k3 copied as is. */
    MTEST_CALL(MPI_Type_dup(t, &d));
    MTEST_EQ("copy callback calls", 1, copied);
    MTEST_CALL(MPI_Type_get_attr(d, k1, &val, &flag));
    MTEST_CHECK(flag == 1 && val == (void *)(intptr_t)2, "dup k1: flag %d value %p", flag, val);
    MTEST_CALL(MPI_Type_get_attr(d, k2, &val, &flag));
    MTEST_EQ("dup k2 flag", 0, flag);
    MTEST_CALL(MPI_Type_get_attr(d, k3, &val, &flag));
    MTEST_CHECK(flag == 1 && val == (void *)(intptr_t)77, "dup k3: flag %d value %p", flag, val);

    /* Delete explicitly. */
    MTEST_CALL(MPI_Type_delete_attr(t, k1));
    MTEST_EQ("delete callback for k1 value 1", 1, deleted[1]);
    MTEST_CALL(MPI_Type_get_attr(t, k1, &val, &flag));
    MTEST_EQ("flag after delete", 0, flag);

    /* Freeing the key keeps the cached values (and their callbacks) alive. */
    MTEST_CALL(MPI_Type_free_keyval(&k1));
    MTEST_CHECK(k1 == MPI_KEYVAL_INVALID, "free_keyval did not reset the key");

    /* Freeing the types runs the delete callbacks of what is cached on them. */
    MPI_Datatype dh = d;
    MTEST_CALL(MPI_Type_free(&d));
    MTEST_EQ("delete callback for the dup's k1 value 2", 1, deleted[2] - 1);
    MTEST_CHECK(last_deleted_type == dh, "delete callback got another datatype handle");
    MTEST_CALL(MPI_Type_free(&t));
    MTEST_EQ("delete callback for k2 value 3", 1, deleted[3]);

    /* Predefined types carry attributes too. */
    MTEST_CALL(MPI_Type_set_attr(MPI_DOUBLE, k2, (void *)(intptr_t)5));
    MTEST_CALL(MPI_Type_get_attr(MPI_DOUBLE, k2, &val, &flag));
    MTEST_CHECK(flag == 1 && val == (void *)(intptr_t)5, "attribute on MPI_DOUBLE");
    MTEST_CALL(MPI_Type_delete_attr(MPI_DOUBLE, k2));
    MTEST_EQ("delete callback for MPI_DOUBLE's value", 1, deleted[5]);

    /* A datatype key is not a communicator key. */
    MTEST_EXPECT_CLASS(MPI_ERR_KEYVAL, MPI_Comm_set_attr(MPI_COMM_WORLD, k2, NULL));

    MTEST_CALL(MPI_Type_free_keyval(&k2));
    MTEST_CALL(MPI_Type_free_keyval(&k3));
    return mtest_finalize();
}
