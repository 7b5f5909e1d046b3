/*
 * Bad datatype arguments return the right error class (under MPI_ERRORS_RETURN) and the
 * program goes on communicating afterwards:
 *   - an uncommitted type in MPI_Send / MPI_Recv / MPI_Isend / MPI_Pack: MPI_ERR_TYPE;
 *   - MPI_DATATYPE_NULL as a message type, an old type, or to commit: MPI_ERR_TYPE;
 *   - MPI_LB / MPI_UB as a message type: MPI_ERR_TYPE (oxmpi only: MPICH sends 0 bytes);
 *   - negative counts and negative block lengths: MPI_ERR_COUNT (as MPICH reports them);
 *   - bad subarray arguments: MPI_ERR_ARG (oxmpi only: MPICH 4.0.2 does not check them);
 *     a darray rank out of range: MPI_ERR_RANK;
 *   - freeing a predefined type, or a handle already freed: MPI_ERR_TYPE;
 *   - MPI_Type_get_contents of a predefined type: MPI_ERR_TYPE (erroneous by the standard);
 *   - a pack buffer too small: MPI_ERR_TRUNCATE (see also pack.c).
 * Communication calls go to MPI_PROC_NULL (arguments are checked all the same).
 * Each rank checks locally; then every rank exchanges a derived-type message with r^1.
 */
#include "mtest.h"

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int me = mtest_rank();
    int peer = (me ^ 1) < mtest_size() ? (me ^ 1) : me;
    int buf[16] = {0}, bl[2] = {1, -1}, disp[2] = {0, 4};
    MPI_Aint adisp[2] = {0, 16};
    MPI_Datatype t, t2, vec;
    MPI_Request req;

    MTEST_CALL(MPI_Type_vector(2, 1, 2, MPI_INT, &vec));

    /* Uncommitted. */
    MTEST_EXPECT_CLASS(MPI_ERR_TYPE, MPI_Send(buf, 1, vec, MPI_PROC_NULL, 1, MPI_COMM_SELF));
    MTEST_EXPECT_CLASS(MPI_ERR_TYPE, MPI_Recv(buf, 1, vec, MPI_PROC_NULL, 1, MPI_COMM_SELF, MPI_STATUS_IGNORE));
    MTEST_EXPECT_CLASS(MPI_ERR_TYPE, MPI_Isend(buf, 1, vec, MPI_PROC_NULL, 1, MPI_COMM_SELF, &req));
    {
        char out[64];
        int pos = 0;
        MTEST_EXPECT_CLASS(MPI_ERR_TYPE, MPI_Pack(buf, 1, vec, out, sizeof out, &pos, MPI_COMM_SELF));
    }

    /* MPI_DATATYPE_NULL. */
    MTEST_EXPECT_CLASS(MPI_ERR_TYPE, MPI_Send(buf, 1, MPI_DATATYPE_NULL, MPI_PROC_NULL, 1, MPI_COMM_SELF));
    MTEST_EXPECT_CLASS(MPI_ERR_TYPE, MPI_Type_contiguous(2, MPI_DATATYPE_NULL, &t));
    t = MPI_DATATYPE_NULL;
    MTEST_EXPECT_CLASS(MPI_ERR_TYPE, MPI_Type_commit(&t));
    {
        int size;
        MTEST_EXPECT_CLASS(MPI_ERR_TYPE, MPI_Type_size(MPI_DATATYPE_NULL, &size));
    }

    /* Markers are not message types. */
#ifdef OXMPI
    MTEST_EXPECT_CLASS(MPI_ERR_TYPE, MPI_Send(buf, 1, MPI_UB, MPI_PROC_NULL, 1, MPI_COMM_SELF));
#endif

    /* Negative counts and block lengths. */
    MTEST_EXPECT_CLASS(MPI_ERR_COUNT, MPI_Type_contiguous(-1, MPI_INT, &t));
    MTEST_EXPECT_CLASS(MPI_ERR_COUNT, MPI_Type_vector(-2, 1, 1, MPI_INT, &t));
    MTEST_EXPECT_CLASS(MPI_ERR_COUNT, MPI_Type_vector(2, -1, 1, MPI_INT, &t));
    MTEST_EXPECT_CLASS(MPI_ERR_COUNT, MPI_Type_create_hvector(2, -1, 8, MPI_INT, &t));
    MTEST_EXPECT_CLASS(MPI_ERR_COUNT, MPI_Type_indexed(2, bl, disp, MPI_INT, &t));
    MTEST_EXPECT_CLASS(MPI_ERR_COUNT, MPI_Type_create_hindexed(2, bl, adisp, MPI_INT, &t));
    MTEST_EXPECT_CLASS(MPI_ERR_COUNT, MPI_Type_indexed(-1, bl, disp, MPI_INT, &t));
    MTEST_EXPECT_CLASS(MPI_ERR_COUNT, MPI_Type_create_indexed_block(2, -3, disp, MPI_INT, &t));
    {
        MPI_Datatype tys[2] = {MPI_INT, MPI_DOUBLE};
        MTEST_EXPECT_CLASS(MPI_ERR_COUNT, MPI_Type_create_struct(2, bl, adisp, tys, &t));
        MTEST_EXPECT_CLASS(MPI_ERR_COUNT, MPI_Type_create_struct(-1, bl, adisp, tys, &t));
        tys[1] = MPI_DATATYPE_NULL;
        int ok_bl[2] = {1, 1};
        MTEST_EXPECT_CLASS(MPI_ERR_TYPE, MPI_Type_create_struct(2, ok_bl, adisp, tys, &t));
    }
    MTEST_EXPECT_CLASS(MPI_ERR_COUNT, MPI_Send(buf, -1, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_SELF));

    /* Subarray and darray. */
    {
        int sizes[2] = {4, 4}, subs[2] = {2, 5}, starts[2] = {0, 0};
#ifdef OXMPI
        MTEST_EXPECT_CLASS(MPI_ERR_ARG,
                           MPI_Type_create_subarray(2, sizes, subs, starts, MPI_ORDER_C, MPI_INT, &t));
        subs[1] = 2;
        starts[0] = 3;
        MTEST_EXPECT_CLASS(MPI_ERR_ARG,
                           MPI_Type_create_subarray(2, sizes, subs, starts, MPI_ORDER_C, MPI_INT, &t));
#endif
        starts[0] = 0;
        subs[1] = 2;
        MTEST_EXPECT_CLASS(MPI_ERR_ARG,
                           MPI_Type_create_subarray(2, sizes, subs, starts, 12345, MPI_INT, &t));
        int g[1] = {8}, d[1] = {MPI_DISTRIBUTE_BLOCK}, a[1] = {MPI_DISTRIBUTE_DFLT_DARG}, p[1] = {4};
        MTEST_EXPECT_CLASS(MPI_ERR_RANK,
                           MPI_Type_create_darray(4, 4, 1, g, d, a, p, MPI_ORDER_C, MPI_INT, &t));
    }

    /* Freeing a predefined type, or a handle twice. */
    t = MPI_INT;
    MTEST_EXPECT_CLASS(MPI_ERR_TYPE, MPI_Type_free(&t));
    MTEST_CHECK(t == MPI_INT, "a failed MPI_Type_free changed the handle");
    MTEST_CALL(MPI_Type_contiguous(3, MPI_INT, &t));
    t2 = t;
    MTEST_CALL(MPI_Type_free(&t));
    MTEST_EXPECT_CLASS(MPI_ERR_TYPE, MPI_Type_free(&t));  /* MPI_DATATYPE_NULL now */
#ifdef OXMPI
    /* A stale handle (MPICH does not detect it). */
    MTEST_EXPECT_CLASS(MPI_ERR_TYPE, MPI_Type_free(&t2));
#endif
    (void)t2;

    /* Decoding a predefined type is erroneous. */
    {
        int ints[4];
        MPI_Aint addrs[4];
        MPI_Datatype tys[4];
        MTEST_EXPECT_CLASS(MPI_ERR_TYPE, MPI_Type_get_contents(MPI_INT, 4, 4, 4, ints, addrs, tys));
    }

#ifdef OXMPI
    /* Pack buffer too small (MPICH 4.0.2 does not check, see pack.c). */
    {
        char out[8];
        int pos = 0;
        MTEST_EXPECT_CLASS(MPI_ERR_TRUNCATE, MPI_Pack(buf, 3, MPI_INT, out, 8, &pos, MPI_COMM_SELF));
    }
#endif

    /* The program goes on: a derived-type exchange with the peer. */
    MTEST_CALL(MPI_Type_commit(&vec));
    int s[4] = {me, -1, me + 100, -1}, r[4] = {-7, -7, -7, -7};
    MTEST_CALL(MPI_Sendrecv(s, 1, vec, peer, 5, r, 1, vec, peer, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    MTEST_CHECK(r[0] == peer && r[1] == -7 && r[2] == peer + 100 && r[3] == -7,
                "exchange after the errors: %d %d %d %d", r[0], r[1], r[2], r[3]);
    MTEST_CALL(MPI_Type_free(&vec));
    return mtest_finalize();
}
