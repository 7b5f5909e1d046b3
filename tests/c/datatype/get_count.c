/*
 * MPI_Get_count and MPI_Get_elements(_x) with derived types: a message that ends inside an
 * element gives MPI_UNDEFINED from MPI_Get_count while MPI_Get_elements counts the basic
 * elements received (pair types count two); MPI_Probe's status works the same; a message
 * ending inside a basic element gives MPI_UNDEFINED from both; zero-size types; and
 * MPI_Status_set_elements makes MPI_Get_elements return the value set.
 * Messages go from rank 0 to the last rank (to itself on one rank).
 */
#include "mtest.h"

#include <stddef.h>

static int me, peer_to;

static void count_is(MPI_Status *st, MPI_Datatype t, int want, const char *what)
{
    int n = -12345;
    MTEST_CALL(MPI_Get_count(st, t, &n));
    MTEST_CHECK(n == want, "%s: MPI_Get_count expected %d got %d", what, want, n);
}

static void elements_are(MPI_Status *st, MPI_Datatype t, int want, const char *what)
{
    int n = -12345;
    MPI_Count nx = -12345;
    MTEST_CALL(MPI_Get_elements(st, t, &n));
    MTEST_CHECK(n == want, "%s: MPI_Get_elements expected %d got %d", what, want, n);
    MTEST_CALL(MPI_Get_elements_x(st, t, &nx));
    MTEST_CHECK(nx == want, "%s: MPI_Get_elements_x expected %d got %lld", what, want,
                (long long)nx);
}

/* One message: sent by rank 0 (sbuf, scount, stype), received by the last rank. */
static int xfer(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                MPI_Datatype rtype, int tag, MPI_Status *st)
{
    MPI_Request r = MPI_REQUEST_NULL;
    int recv = me == peer_to || mtest_size() == 1;
    if (recv) {
        MTEST_CALL(MPI_Irecv(rbuf, rcount, rtype, 0, tag, MPI_COMM_WORLD, &r));
    }
    if (me == 0) {
        MTEST_CALL(MPI_Send(sbuf, scount, stype, peer_to, tag, MPI_COMM_WORLD));
    }
    if (recv) {
        MTEST_CALL(MPI_Wait(&r, st));
    }
    return recv;
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    me = mtest_rank();
    peer_to = mtest_size() - 1;
    MPI_Status st;

    /* 7 ints received as pairs of ints. */
    MPI_Datatype pair;
    MTEST_CALL(MPI_Type_contiguous(2, MPI_INT, &pair));
    MTEST_CALL(MPI_Type_commit(&pair));
    int src[16], dst[16];
    for (int i = 0; i < 16; i++) {
        src[i] = 100 + i;
        dst[i] = -1;
    }
    if (xfer(src, 7, MPI_INT, dst, 4, pair, 1, &st)) {
        count_is(&st, pair, MPI_UNDEFINED, "7 ints as pairs");
        elements_are(&st, pair, 7, "7 ints as pairs");
        count_is(&st, MPI_INT, 7, "7 ints as ints");
        for (int i = 0; i < 7; i++) {
            MTEST_EQ("received int", 100 + i, dst[i]);
        }
        MTEST_EQ("int past the message", -1, dst[7]);
    }

    /* struct {int; double; double} (20 data bytes); the sender's struct {int; double} has
     * the same signature as a prefix of it. */
    struct idd {
        int i;
        double a, b;
    } rs[3], sidd[3];
    struct id {
        int i;
        double a;
    } ss[1] = {{1, 1.5}};
    MPI_Datatype t_idd, t_id, t_mix;
    {
        int bl[3] = {1, 1, 1};
        MPI_Aint d[3] = {offsetof(struct idd, i), offsetof(struct idd, a), offsetof(struct idd, b)};
        MPI_Datatype ty[3] = {MPI_INT, MPI_DOUBLE, MPI_DOUBLE};
        MTEST_CALL(MPI_Type_create_struct(3, bl, d, ty, &t_idd));
        MTEST_CALL(MPI_Type_commit(&t_idd));
        MPI_Aint d2[2] = {offsetof(struct id, i), offsetof(struct id, a)};
        MTEST_CALL(MPI_Type_create_struct(2, bl, d2, ty, &t_id));
        MTEST_CALL(MPI_Type_commit(&t_id));
        /* Two whole idd elements then the int and first double of a third. */
        int bl2[2] = {2, 1};
        MPI_Aint d3[2] = {0, 2 * sizeof(struct idd)};
        MPI_Datatype ty2[2] = {t_idd, t_id};
        MTEST_CALL(MPI_Type_create_struct(2, bl2, d3, ty2, &t_mix));
        MTEST_CALL(MPI_Type_commit(&t_mix));
    }
    memset(rs, 0, sizeof rs);
    if (xfer(ss, 1, t_id, rs, 3, t_idd, 2, &st)) {
        count_is(&st, t_idd, MPI_UNDEFINED, "int+double into struct idd");
        elements_are(&st, t_idd, 2, "int+double into struct idd");
        MTEST_CHECK(rs[0].i == 1 && rs[0].a == 1.5 && rs[0].b == 0.0, "partial struct contents");
    }
    for (int k = 0; k < 3; k++) {
        sidd[k].i = k + 10;
        sidd[k].a = k + 0.5;
        sidd[k].b = k + 0.75;
    }
    memset(rs, 0, sizeof rs);
    if (xfer(sidd, 1, t_mix, rs, 3, t_idd, 3, &st)) {
        count_is(&st, t_idd, MPI_UNDEFINED, "2.67 elements of struct idd");
        elements_are(&st, t_idd, 8, "2.67 elements of struct idd");
        elements_are(&st, t_mix, 8, "2.67 elements of struct idd, as the sender's type");
        count_is(&st, t_mix, 1, "2.67 elements of struct idd, as the sender's type");
        MTEST_CHECK(rs[1].i == 11 && rs[1].b == 1.75, "second struct element");
        MTEST_CHECK(rs[2].i == 12 && rs[2].a == 2.5 && rs[2].b == 0.0, "partial third element");
    }

    /* Pair types count two basic elements each. */
    struct {
        double v;
        int i;
    } di[3], dr[5];
    for (int k = 0; k < 3; k++) {
        di[k].v = k * 0.25;
        di[k].i = k;
    }
    if (xfer(di, 3, MPI_DOUBLE_INT, dr, 5, MPI_DOUBLE_INT, 4, &st)) {
        count_is(&st, MPI_DOUBLE_INT, 3, "3 MPI_DOUBLE_INT");
        elements_are(&st, MPI_DOUBLE_INT, 6, "3 MPI_DOUBLE_INT");
        MTEST_CHECK(dr[2].v == 0.5 && dr[2].i == 2, "third pair");
    }

    /* MPI_Probe's status gives the same answers. */
    MPI_Request sreq = MPI_REQUEST_NULL;
    if (me == 0) {
        MTEST_CALL(MPI_Isend(src, 5, MPI_INT, peer_to, 5, MPI_COMM_WORLD, &sreq));
    }
    if (me == peer_to) {
        MTEST_CALL(MPI_Probe(0, 5, MPI_COMM_WORLD, &st));
        count_is(&st, pair, MPI_UNDEFINED, "probe: 5 ints as pairs");
        elements_are(&st, pair, 5, "probe: 5 ints as pairs");
        MTEST_CALL(MPI_Recv(dst, 5, MPI_INT, 0, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    }
    MTEST_CALL(MPI_Wait(&sreq, MPI_STATUS_IGNORE));

    /* A message ending inside a basic element: 6 bytes as ints. */
    unsigned char bytes[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    if (xfer(bytes, 6, MPI_BYTE, dst, 8, MPI_BYTE, 6, &st)) {
        count_is(&st, MPI_INT, MPI_UNDEFINED, "6 bytes as ints");
        elements_are(&st, MPI_INT, MPI_UNDEFINED, "6 bytes as ints");
        count_is(&st, MPI_SHORT, 3, "6 bytes as shorts");
    }

    /* Zero bytes: 0 of anything, also of a type of size zero. */
    MPI_Datatype none;
    MTEST_CALL(MPI_Type_contiguous(0, MPI_INT, &none));
    MTEST_CALL(MPI_Type_commit(&none));
    if (xfer(src, 0, MPI_INT, dst, 0, MPI_INT, 7, &st)) {
        count_is(&st, none, 0, "0 bytes of an empty type");
        elements_are(&st, none, 0, "0 bytes of an empty type");
        count_is(&st, t_idd, 0, "0 bytes of a struct");
    }

    /* MPI_Status_set_elements: MPI_Get_elements then returns the count set (MPI-4.1
     * section 13.3).  MPICH 4.0.2 stores count * size instead (the count of whole
     * datatype elements), so this part runs only on oxmpi's header. */
#ifdef OXMPI
    MPI_Status s2;
    memset(&s2, 0, sizeof s2);
    MTEST_CALL(MPI_Status_set_elements(&s2, t_idd, 4));
    elements_are(&s2, t_idd, 4, "set_elements(4) on struct idd");
    count_is(&s2, t_idd, MPI_UNDEFINED, "set_elements(4) on struct idd");
    MTEST_CALL(MPI_Status_set_elements(&s2, t_idd, 6));
    count_is(&s2, t_idd, 2, "set_elements(6) on struct idd");
    count_is(&s2, MPI_BYTE, 40, "set_elements(6) on struct idd, in bytes");
    MTEST_CALL(MPI_Status_set_elements_x(&s2, MPI_DOUBLE, 3));
    count_is(&s2, MPI_DOUBLE, 3, "set_elements_x(3) on MPI_DOUBLE");
#endif

    MTEST_CALL(MPI_Type_free(&pair));
    MTEST_CALL(MPI_Type_free(&t_idd));
    MTEST_CALL(MPI_Type_free(&t_id));
    MTEST_CALL(MPI_Type_free(&t_mix));
    MTEST_CALL(MPI_Type_free(&none));
    return mtest_finalize();
}
