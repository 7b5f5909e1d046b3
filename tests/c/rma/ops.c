/*
 * Every predefined operation in MPI_Accumulate from every rank into every rank (fence
 * epochs): MPI_SUM, MPI_PROD, MPI_MAX, MPI_MIN, MPI_LAND, MPI_LOR, MPI_LXOR, MPI_BAND,
 * MPI_BOR, MPI_BXOR on int, MPI_SUM and MPI_MAX on double, MPI_MAXLOC / MPI_MINLOC on
 * MPI_2INT, MPI_REPLACE; MPI_Get_accumulate with MPI_NO_OP and MPI_SUM.
 */
#include "mtest.h"

enum { SUM, PROD, MAX, MIN, LAND, LOR, LXOR, BAND, BOR, BXOR, NOPS };

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int r = mtest_rank(), n = mtest_size();
    MPI_Op ops[NOPS] = {MPI_SUM, MPI_PROD, MPI_MAX, MPI_MIN, MPI_LAND, MPI_LOR, MPI_LXOR, MPI_BAND, MPI_BOR, MPI_BXOR};
    int init[NOPS] = {0, 1, -1000, 1000, 1, 0, 0, ~0, 0, 0};
    struct {
        int ints[NOPS];
        double d[2];
        int loc[4];
        int rep;
    } *w;
    MPI_Win win;
    MTEST_CALL(MPI_Win_allocate(sizeof *w, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &w, &win));
    MTEST_CALL(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    for (int k = 0; k < NOPS; k++)
        w->ints[k] = init[k];
    w->d[0] = 0.5;
    w->d[1] = -1e9;
    w->loc[0] = -1; w->loc[1] = -1; w->loc[2] = 1 << 30; w->loc[3] = -1;
    w->rep = -1;
    MTEST_CALL(MPI_Win_fence(0, win));
    /* My contributions: value v = r + 1 (bit r for the bitwise ones). */
    int v = r + 1;
    int mine[NOPS] = {v, (r % 3) + 1, v * 7 % 11, v * 5 % 13, r != 1, r == n - 1, 1, ~(1 << (r % 31)), 1 << (r % 31), 1 << (r % 31)};
    double dv[2] = {0.25 * v, (double)(v * 3 % 7)};
    int lv[4] = {v % 3, r, v % 3, r};
    for (int t = 0; t < n; t++) {
        for (int k = 0; k < NOPS; k++)
            MTEST_CALL(MPI_Accumulate(&mine[k], 1, MPI_INT, t, (MPI_Aint)(k * sizeof(int)), 1, MPI_INT, ops[k], win));
        MTEST_CALL(MPI_Accumulate(&dv[0], 1, MPI_DOUBLE, t, (MPI_Aint)((char *)&w->d[0] - (char *)w), 1, MPI_DOUBLE, MPI_SUM, win));
        MTEST_CALL(MPI_Accumulate(&dv[1], 1, MPI_DOUBLE, t, (MPI_Aint)((char *)&w->d[1] - (char *)w), 1, MPI_DOUBLE, MPI_MAX, win));
        MTEST_CALL(MPI_Accumulate(&lv[0], 1, MPI_2INT, t, (MPI_Aint)((char *)&w->loc[0] - (char *)w), 1, MPI_2INT, MPI_MAXLOC, win));
        MTEST_CALL(MPI_Accumulate(&lv[2], 1, MPI_2INT, t, (MPI_Aint)((char *)&w->loc[2] - (char *)w), 1, MPI_2INT, MPI_MINLOC, win));
        if (t == r)
            MTEST_CALL(MPI_Accumulate(&r, 1, MPI_INT, t, (MPI_Aint)((char *)&w->rep - (char *)w), 1, MPI_INT, MPI_REPLACE, win));
    }
    MTEST_CALL(MPI_Win_fence(0, win));
    int e[NOPS] = {0, 1, -1000, 1000, 1, 0, 0, ~0, 0, 0};
    double esum = 0.5, emax = -1e9;
    int emaxv = -1, emaxr = -1, eminv = 1 << 30, eminr = -1;
    for (int q = 0; q < n; q++) {
        int u = q + 1;
        e[SUM] += u;
        e[PROD] *= (q % 3) + 1;
        if (u * 7 % 11 > e[MAX]) e[MAX] = u * 7 % 11;
        if (u * 5 % 13 < e[MIN]) e[MIN] = u * 5 % 13;
        e[LAND] = e[LAND] && (q != 1);
        e[LOR] = e[LOR] || (q == n - 1);
        e[LXOR] = !e[LXOR] != !1;
        e[BAND] &= ~(1 << (q % 31));
        e[BOR] |= 1 << (q % 31);
        e[BXOR] ^= 1 << (q % 31);
        esum += 0.25 * u;
        if (u * 3 % 7 > emax) emax = u * 3 % 7;
        if (u % 3 > emaxv) { emaxv = u % 3; emaxr = q; }
        if (u % 3 < eminv) { eminv = u % 3; eminr = q; }
    }
    const char *names[NOPS] = {"MPI_SUM", "MPI_PROD", "MPI_MAX", "MPI_MIN", "MPI_LAND", "MPI_LOR", "MPI_LXOR", "MPI_BAND", "MPI_BOR", "MPI_BXOR"};
    for (int k = 0; k < NOPS; k++)
        MTEST_CHECK(w->ints[k] == e[k], "%s: got %d, expected %d", names[k], w->ints[k], e[k]);
    MTEST_EQ("double MPI_SUM", esum, w->d[0]);
    MTEST_EQ("double MPI_MAX", emax, w->d[1]);
    MTEST_EQ("MPI_MAXLOC value", emaxv, w->loc[0]);
    MTEST_EQ("MPI_MAXLOC index", emaxr, w->loc[1]);
    MTEST_EQ("MPI_MINLOC value", eminv, w->loc[2]);
    MTEST_EQ("MPI_MINLOC index", eminr, w->loc[3]);
    MTEST_EQ("MPI_REPLACE", r, w->rep);

    /* Get_accumulate: MPI_NO_OP reads, MPI_SUM returns the value before the sum. */
    int right = (r + 1) % n, got = -5, before = -5, two[2] = {10, 20}, back[2];
    MTEST_CALL(MPI_Get_accumulate(NULL, 0, MPI_INT, &got, 1, MPI_INT, right, 0, 1, MPI_INT, MPI_NO_OP, win));
    MTEST_CALL(MPI_Win_fence(0, win));
    MTEST_EQ("MPI_NO_OP fetch", e[SUM], got);
    if (r == 0)
        MTEST_CALL(MPI_Get_accumulate(two, 2, MPI_INT, back, 2, MPI_INT, right, 0, 2, MPI_INT, MPI_SUM, win));
    MTEST_CALL(MPI_Win_fence(0, win));
    if (r == 0) {
        MTEST_EQ("fetched sum", e[SUM], back[0]);
        MTEST_EQ("fetched prod", e[PROD], back[1]);
    }
    if (r == (n == 1 ? 0 : 1)) {
        MTEST_EQ("summed", e[SUM] + 10, w->ints[0]);
        MTEST_EQ("summed", e[PROD] + 20, w->ints[1]);
    }
    (void)before;
    MTEST_CALL(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
    MTEST_CALL(MPI_Win_free(&win));
    return mtest_finalize();
}
