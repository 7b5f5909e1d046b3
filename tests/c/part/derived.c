/* Partitioned communication with derived datatypes: a strided send type to a contiguous
 * receive, a contiguous send to a strided receive type whose elements straddle the send
 * partitions' boundaries, and derived types on both sides (a resized type to a vector), each
 * with different partition counts on the two sides, started three times.  Buffers are filled
 * and checked through MPI_Unpack/MPI_Pack of the expected packed stream; the gaps of the
 * receive buffer must stay untouched. */
#include "mtest.h"

#define TOTAL 60 /* doubles in the type signature of each transfer */
#define ROUNDS 3

struct side {
    MPI_Datatype type;
    int parts, count;
    int span; /* doubles of memory the buffer spans */
};

static double value(int src, int c, int round, int k)
{
    return src * 1e5 + c * 1e3 + round * 100 + k + 0.5;
}

static void run(int c, struct side s, struct side r, int to, int from, int rank)
{
    double *sbuf = mtest_malloc(sizeof(double) * (size_t)s.span);
    double *rbuf = mtest_malloc(sizeof(double) * (size_t)r.span);
    double packed[TOTAL], got[TOTAL];
    MPI_Request reqs[2];
    MTEST_CALL(MPI_Psend_init(sbuf, s.parts, s.count, s.type, to, 100 + c, MPI_COMM_WORLD,
                              MPI_INFO_NULL, &reqs[0]));
    MTEST_CALL(MPI_Precv_init(rbuf, r.parts, r.count, r.type, from, 100 + c, MPI_COMM_WORLD,
                              MPI_INFO_NULL, &reqs[1]));
    for (int round = 0; round < ROUNDS; round++) {
        int pos = 0;
        for (int k = 0; k < TOTAL; k++) {
            packed[k] = value(rank, c, round, k);
        }
        for (int k = 0; k < s.span; k++) {
            sbuf[k] = -2;
        }
        for (int k = 0; k < r.span; k++) {
            rbuf[k] = -3;
        }
        MTEST_CALL(MPI_Unpack(packed, sizeof packed, &pos, sbuf, s.parts * s.count, s.type,
                              MPI_COMM_WORLD));
        MTEST_CALL(MPI_Startall(2, reqs));
        for (int p = 0; p < s.parts; p += 2) {
            MTEST_CALL(MPI_Pready(p, reqs[0]));
        }
        for (int p = 1; p < s.parts; p += 2) {
            MTEST_CALL(MPI_Pready(p, reqs[0]));
        }
        MPI_Status sts[2];
        MTEST_CALL(MPI_Waitall(2, reqs, sts));
        MTEST_STATUS(&sts[1], from, 100 + c, r.type, r.parts * r.count);
        pos = 0;
        MTEST_CALL(MPI_Pack(rbuf, r.parts * r.count, r.type, got, sizeof got, &pos,
                            MPI_COMM_WORLD));
        for (int k = 0; k < TOTAL; k++) {
            MTEST_CHECK(got[k] == value(from, c, round, k),
                        "case %d round %d packed element %d: expected %g got %g", c, round, k,
                        value(from, c, round, k), got[k]);
        }
        /* The receive buffer's gaps: count the bytes left at -3; with the data that must be
         * span - TOTAL doubles. */
        int untouched = 0;
        for (int k = 0; k < r.span; k++) {
            untouched += rbuf[k] == -3;
        }
        MTEST_EQ("doubles of the receive buffer outside the type map", r.span - TOTAL, untouched);
    }
    MTEST_CALL(MPI_Request_free(&reqs[0]));
    MTEST_CALL(MPI_Request_free(&reqs[1]));
    free(sbuf);
    free(rbuf);
}

int main(int argc, char **argv)
{
    int rank, size;
    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int to = (rank + 1) % size, from = (rank + size - 1) % size;

    MPI_Datatype vec4, vec3, pair, pair_resized;
    MTEST_CALL(MPI_Type_vector(4, 1, 2, MPI_DOUBLE, &vec4)); /* 4 doubles, extent 7 */
    MTEST_CALL(MPI_Type_vector(3, 1, 2, MPI_DOUBLE, &vec3)); /* 3 doubles, extent 5 */
    MTEST_CALL(MPI_Type_contiguous(2, MPI_DOUBLE, &pair));
    MTEST_CALL(MPI_Type_create_resized(pair, 0, 3 * sizeof(double), &pair_resized));
    MTEST_CALL(MPI_Type_commit(&vec4));
    MTEST_CALL(MPI_Type_commit(&vec3));
    MTEST_CALL(MPI_Type_commit(&pair_resized));

    /* 15 elements of vec4 in 5 partitions -> 60 doubles in 4 partitions. */
    struct side s0 = {vec4, 5, 3, 15 * 7}, r0 = {MPI_DOUBLE, 4, 15, 60};
    run(0, s0, r0, to, from, rank);
    /* 60 doubles in 6 partitions of 10 -> 20 vec3 elements in 4 partitions of 5 (a receive
     * element straddles each send boundary). */
    struct side s1 = {MPI_DOUBLE, 6, 10, 60}, r1 = {vec3, 4, 5, 20 * 5};
    run(1, s1, r1, to, from, rank);
    /* 30 resized pairs in 5 partitions -> 20 vec3 in 2 partitions. */
    struct side s2 = {pair_resized, 5, 6, 30 * 3}, r2 = {vec3, 2, 10, 20 * 5};
    run(2, s2, r2, to, from, rank);
    /* The types may be freed while the requests exist: freed here after the runs. */
    MTEST_CALL(MPI_Type_free(&vec4));
    MTEST_CALL(MPI_Type_free(&vec3));
    MTEST_CALL(MPI_Type_free(&pair));
    MTEST_CALL(MPI_Type_free(&pair_resized));
    return mtest_finalize();
}
