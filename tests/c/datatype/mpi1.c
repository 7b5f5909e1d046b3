/*
 * The MPI-1 datatype interface (removed from the standard in MPI-3.0; oxmpi implements
 * MPI-1.2 and keeps it): MPI_Address, MPI_Type_extent / lb / ub, MPI_Type_hvector,
 * MPI_Type_hindexed and MPI_Type_struct with MPI_LB / MPI_UB markers, used for real
 * messages, plus the MPI-1.1 MPI_Get_elements example (a type of 2 floats receiving
 * messages of 2 and 3 floats).  MPICH 4's header no longer declares these functions, so
 * built against another header the program only reports " No Errors".
 * Rank 0 sends to the last rank (itself on one rank).
 */
#include "mtest.h"

#ifdef OXMPI
static void move(void *sbuf, int sc, MPI_Datatype st, void *rbuf, int rc, MPI_Datatype rt, int tag,
                 MPI_Status *status)
{
    int me = mtest_rank(), last = mtest_size() - 1;
    MPI_Request r = MPI_REQUEST_NULL;
    if (me == last) {
        MTEST_CALL(MPI_Irecv(rbuf, rc, rt, 0, tag, MPI_COMM_WORLD, &r));
    }
    if (me == 0) {
        MTEST_CALL(MPI_Send(sbuf, sc, st, last, tag, MPI_COMM_WORLD));
    }
    MTEST_CALL(MPI_Wait(&r, status));
}

static void mpi1(void)
{
    int recv = mtest_rank() == mtest_size() - 1;
    MPI_Status st;
    MPI_Aint a0, a1, e, lb, ub;
    double d[10];

    MTEST_CALL(MPI_Address(&d[0], &a0));
    MTEST_CALL(MPI_Address(&d[7], &a1));
    MTEST_EQ("MPI_Address difference", 56, (long long)(a1 - a0));

    /* A struct with explicit bounds: an int at 4 in a 16-byte element starting at -4. */
    int bl[3] = {1, 1, 1};
    MPI_Aint disp[3] = {-4, 4, 12};
    MPI_Datatype ty[3] = {MPI_LB, MPI_INT, MPI_UB}, marked, hv, hi;
    MTEST_CALL(MPI_Type_struct(3, bl, disp, ty, &marked));
    MTEST_CALL(MPI_Type_extent(marked, &e));
    MTEST_CALL(MPI_Type_lb(marked, &lb));
    MTEST_CALL(MPI_Type_ub(marked, &ub));
    MTEST_CHECK(e == 16 && lb == -4 && ub == 12, "marked struct: extent %ld lb %ld ub %ld", (long)e,
                (long)lb, (long)ub);
    MTEST_CALL(MPI_Type_commit(&marked));
    /* Three elements: ints at 4, 20, 36 bytes, i.e. int indices 1, 5, 9. */
    int s[12], r[12];
    for (int i = 0; i < 12; i++) {
        s[i] = i * 11;
        r[i] = -1;
    }
    move(s, 3, marked, r, 3, marked, 1, &st);
    if (recv) {
        for (int i = 0; i < 12; i++) {
            int want = (i % 4 == 1 && i < 12) ? i * 11 : -1;
            MTEST_EQ("marked struct message", want, r[i]);
        }
    }

    /* hvector (stride in bytes) and hindexed (byte displacements). */
    MTEST_CALL(MPI_Type_hvector(3, 1, 16, MPI_DOUBLE, &hv));
    MTEST_CALL(MPI_Type_extent(hv, &e));
    MTEST_EQ("MPI_Type_hvector extent", 40, (long long)e);
    int hbl[2] = {2, 1};
    MPI_Aint hd[2] = {24, 0};
    MTEST_CALL(MPI_Type_hindexed(2, hbl, hd, MPI_DOUBLE, &hi));
    MTEST_CALL(MPI_Type_lb(hi, &lb));
    MTEST_CALL(MPI_Type_ub(hi, &ub));
    MTEST_CHECK(lb == 0 && ub == 40, "MPI_Type_hindexed lb %ld ub %ld", (long)lb, (long)ub);
    MTEST_CALL(MPI_Type_commit(&hv));
    MTEST_CALL(MPI_Type_commit(&hi));
    for (int i = 0; i < 10; i++) {
        d[i] = i + 0.5;
    }
    double out[3] = {0, 0, 0};
    move(d, 1, hv, out, 3, MPI_DOUBLE, 2, &st);
    if (recv) {
        MTEST_CHECK(out[0] == 0.5 && out[1] == 2.5 && out[2] == 4.5, "hvector message");
    }
    move(d, 1, hi, out, 3, MPI_DOUBLE, 3, &st);
    if (recv) {
        MTEST_CHECK(out[0] == 3.5 && out[1] == 4.5 && out[2] == 0.5, "hindexed message");
    }

    /* The MPI-1.1 MPI_Get_elements example. */
    MPI_Datatype type2;
    float f[3] = {1, 2, 3}, g[4];
    int count, elements;
    MTEST_CALL(MPI_Type_contiguous(2, MPI_FLOAT, &type2));
    MTEST_CALL(MPI_Type_commit(&type2));
    move(f, 2, MPI_FLOAT, g, 2, type2, 4, &st);
    if (recv) {
        MTEST_CALL(MPI_Get_count(&st, type2, &count));
        MTEST_CALL(MPI_Get_elements(&st, type2, &elements));
        MTEST_CHECK(count == 1 && elements == 2, "2 floats: count %d elements %d", count, elements);
    }
    move(f, 3, MPI_FLOAT, g, 2, type2, 5, &st);
    if (recv) {
        MTEST_CALL(MPI_Get_count(&st, type2, &count));
        MTEST_CALL(MPI_Get_elements(&st, type2, &elements));
        MTEST_CHECK(count == MPI_UNDEFINED && elements == 3, "3 floats: count %d elements %d", count,
                    elements);
    }
    MTEST_CALL(MPI_Type_free(&marked));
    MTEST_CALL(MPI_Type_free(&hv));
    MTEST_CALL(MPI_Type_free(&hi));
    MTEST_CALL(MPI_Type_free(&type2));
}
#endif

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
#ifdef OXMPI
    mpi1();
#endif
    return mtest_finalize();
}
