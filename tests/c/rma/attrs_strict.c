/*
 * Window attributes, names, groups and error handlers: MPI_WIN_BASE, MPI_WIN_SIZE,
 * MPI_WIN_DISP_UNIT, MPI_WIN_CREATE_FLAVOR, MPI_WIN_MODEL for each flavor;
 * MPI_Win_set_name / get_name; MPI_Win_get_group; the default handler
 * MPI_ERRORS_ARE_FATAL, a user handler called with the window and the code.
 *
 * MPICH 4.0.2 fails: on ranks above 0, MPI_WIN_BASE of an MPI_Win_allocate window is
 * not the base address the call returned.
 */
#include "mtest.h"
#include <string.h>

static MPI_Win seen_win = MPI_WIN_NULL;
static int seen_code = 0, calls = 0;

static void handler(MPI_Win *w, int *code, ...)
{
    seen_win = *w;
    seen_code = *code;
    calls++;
}

static void check(MPI_Win win, void *base, MPI_Aint size, int unit, int flavor)
{
    void *v;
    int flag = 0;
    MTEST_CALL(MPI_Win_get_attr(win, MPI_WIN_BASE, &v, &flag));
    MTEST_EQ("base flag", 1, flag);
    MTEST_CHECK(v == base, "flavor %d: MPI_WIN_BASE %p, expected %p", flavor, v, base);
    MTEST_CALL(MPI_Win_get_attr(win, MPI_WIN_SIZE, &v, &flag));
    MTEST_EQ("size flag", 1, flag);
    MTEST_EQ("MPI_WIN_SIZE", (long)size, (long)*(MPI_Aint *)v);
    MTEST_CALL(MPI_Win_get_attr(win, MPI_WIN_DISP_UNIT, &v, &flag));
    MTEST_EQ("MPI_WIN_DISP_UNIT", unit, *(int *)v);
    MTEST_CALL(MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &v, &flag));
    MTEST_EQ("MPI_WIN_CREATE_FLAVOR", flavor, *(int *)v);
    MTEST_CALL(MPI_Win_get_attr(win, MPI_WIN_MODEL, &v, &flag));
    MTEST_EQ("MPI_WIN_MODEL", MPI_WIN_UNIFIED, *(int *)v);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int r = mtest_rank(), n = mtest_size();
    char buf[64];
    MPI_Win win;
    MTEST_CALL(MPI_Win_create(buf, 10 + r, 2, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    check(win, buf, 10 + r, 2, MPI_WIN_FLAVOR_CREATE);

    MPI_Errhandler eh;
    MTEST_CALL(MPI_Win_get_errhandler(win, &eh));
    MTEST_CHECK(eh == MPI_ERRORS_ARE_FATAL, "default window handler is not MPI_ERRORS_ARE_FATAL");
    MTEST_CALL(MPI_Errhandler_free(&eh));

    char name[MPI_MAX_OBJECT_NAME];
    int len = -1;
    MTEST_CALL(MPI_Win_get_name(win, name, &len));
    MTEST_EQ("default name length", 0, len);
    MTEST_CALL(MPI_Win_set_name(win, "halo window"));
    MTEST_CALL(MPI_Win_get_name(win, name, &len));
    MTEST_CHECK(strcmp(name, "halo window") == 0 && len == 11, "name '%s' (%d)", name, len);

    MPI_Group g, wg;
    int cmp;
    MTEST_CALL(MPI_Win_get_group(win, &g));
    MTEST_CALL(MPI_Comm_group(MPI_COMM_WORLD, &wg));
    MTEST_CALL(MPI_Group_compare(g, wg, &cmp));
    MTEST_EQ("window group", MPI_IDENT, cmp);
    MTEST_CALL(MPI_Group_free(&g));
    MTEST_CALL(MPI_Group_free(&wg));

    MTEST_CALL(MPI_Win_create_errhandler(handler, &eh));
    MTEST_CALL(MPI_Win_set_errhandler(win, eh));
    MTEST_CALL(MPI_Errhandler_free(&eh));
    int rc = MPI_Put(buf, 1, MPI_CHAR, n, 0, 1, MPI_CHAR, win);
    MTEST_EQ("handler calls", 1, calls);
    MTEST_CHECK(seen_win == win, "handler got window %#x, expected %#x", (unsigned)seen_win, (unsigned)win);
    MTEST_EQ("handler code", rc, seen_code);
    MTEST_EQ("class of bad rank", MPI_ERR_RANK, mtest_errclass(rc));
    MTEST_CALL(MPI_Win_call_errhandler(win, MPI_ERR_OTHER));
    MTEST_EQ("handler calls", 2, calls);
    MTEST_EQ("handler code", MPI_ERR_OTHER, seen_code);
    MTEST_CALL(MPI_Win_free(&win));

    int *a;
    MTEST_CALL(MPI_Win_allocate(8 * (r + 1), 4, MPI_INFO_NULL, MPI_COMM_WORLD, &a, &win));
    check(win, a, 8 * (r + 1), 4, MPI_WIN_FLAVOR_ALLOCATE);
    MTEST_CALL(MPI_Win_free(&win));
    MTEST_CALL(MPI_Win_allocate_shared(8, 8, MPI_INFO_NULL, MPI_COMM_SELF, &a, &win));
    check(win, a, 8, 8, MPI_WIN_FLAVOR_SHARED);
    MTEST_CALL(MPI_Win_free(&win));
    return mtest_finalize();
}
