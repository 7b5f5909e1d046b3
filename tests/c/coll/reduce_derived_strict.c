/*
 * Predefined operations on derived datatypes made of one predefined type (an oxmpi
 * extension: the standard only requires predefined datatypes, and MPICH rejects these):
 * MPI_SUM on a vector of ints (holes untouched), MPI_MAXLOC on a contiguous type of
 * MPI_DOUBLE_INT pairs; a datatype mixing two basic types is refused with MPI_ERR_OP.
 */
#include "mtest.h"
#include "common.h"

static int r, n;

static int ival(int seed, int rank, int i)
{
    return cval(seed, rank, i) % 1000 - 300;
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    r = mtest_rank();
    n = mtest_size();

    MPI_Datatype vec;
    MTEST_CALL(MPI_Type_vector(4, 1, 2, MPI_INT, &vec));
    MTEST_CALL(MPI_Type_commit(&vec));
    int cnt = 3, len = 3 * 7 + 1, seed = 88; /* extent of vec is 7 ints */
    gbuf s = gbuf_new((size_t)len, 0), d = gbuf_new((size_t)len, -2);
    for (int i = 0; i < len; i++) s.p[i] = ival(seed, r, i);
    for (int root = 0; root < n; root++) {
        for (int i = 0; i < len; i++) d.p[i] = -2;
        MTEST_CALL(MPI_Reduce(s.p, d.p, cnt, vec, MPI_SUM, root, MPI_COMM_WORLD));
        if (r == root) {
            for (int i = 0; i < cnt * 7; i++) {
                long long e = -2;
                if ((i % 7) % 2 == 0) {
                    e = 0;
                    for (int k = 0; k < n; k++) e += ival(seed, k, i);
                }
                MTEST_EQ("MPI_Reduce of a vector type", e, d.p[i]);
            }
        }
    }
    gbuf_guards(d, "vector type");
    gbuf_free(&s);
    gbuf_free(&d);
    MTEST_CALL(MPI_Type_free(&vec));

    struct { double v; int i; } ps[4], pd[4];
    MPI_Datatype pairs;
    MTEST_CALL(MPI_Type_contiguous(2, MPI_DOUBLE_INT, &pairs));
    MTEST_CALL(MPI_Type_commit(&pairs));
    for (int e = 0; e < 4; e++) ps[e].v = (double)((r + e) % 3), ps[e].i = r;
    MTEST_CALL(MPI_Allreduce(ps, pd, 2, pairs, MPI_MAXLOC, MPI_COMM_WORLD));
    for (int e = 0; e < 4; e++) {
        int best = 0;
        for (int k = 1; k < n; k++)
            if ((k + e) % 3 > (best + e) % 3) best = k;
        MTEST_EQ("MAXLOC index on pairs", best, pd[e].i);
        MTEST_EQ("MAXLOC value on pairs", (best + e) % 3, (int)pd[e].v);
    }
    MTEST_CALL(MPI_Type_free(&pairs));

    MPI_Datatype mixed, types[2] = {MPI_INT, MPI_DOUBLE};
    int bl[2] = {1, 1};
    MPI_Aint disp[2] = {0, 8};
    MTEST_CALL(MPI_Type_create_struct(2, bl, disp, types, &mixed));
    MTEST_CALL(MPI_Type_commit(&mixed));
    char buf[32], out[32];
    memset(buf, 0, sizeof buf);
    MTEST_EXPECT_CLASS(MPI_ERR_OP, MPI_Allreduce(buf, out, 1, mixed, MPI_SUM, MPI_COMM_WORLD));
    MTEST_CALL(MPI_Type_free(&mixed));
    return mtest_finalize();
}
