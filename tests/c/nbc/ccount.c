/*
 * Large-count neighbourhood collectives (MPI 4.1): MPI_Neighbor_allgather(v)_c and
 * MPI_Neighbor_alltoall(v,w)_c in their blocking, nonblocking (MPI_Ineighbor_*_c) and
 * persistent (MPI_Neighbor_*_init_c) forms, on a periodic ring (a one-dimensional
 * Cartesian topology: neighbour 0 is rank-1, neighbour 1 is rank+1; what a rank sends to
 * its neighbour in one direction arrives in that neighbour's slot for the other). At
 * one and two ranks both neighbours are the same process; there the two blocks it sends
 * have the same size and either may land in either slot (MPICH 4.0.2's nonblocking
 * forms order them differently from its blocking ones).
 */
#include "mtest.h"
#include <string.h>

#define RUN(Name, name, ...)                                                                     \
    do {                                                                                         \
        MPI_Request rq_;                                                                         \
        if (mode == 0) {                                                                         \
            MTEST_CALL(MPI_##Name##_c(__VA_ARGS__));                                             \
        } else if (mode == 1) {                                                                  \
            MTEST_CALL(MPI_I##name##_c(__VA_ARGS__, &rq_));                                      \
            MTEST_CALL(MPI_Wait(&rq_, MPI_STATUS_IGNORE));                                       \
        } else {                                                                                 \
            MTEST_CALL(MPI_##Name##_init_c(__VA_ARGS__, MPI_INFO_NULL, &rq_));                   \
            for (int k_ = 0; k_ < 2; k_++) {                                                     \
                MTEST_CALL(MPI_Start(&rq_));                                                     \
                MTEST_CALL(MPI_Wait(&rq_, MPI_STATUS_IGNORE));                                   \
            }                                                                                    \
            MTEST_CALL(MPI_Request_free(&rq_));                                                  \
        }                                                                                        \
    } while (0)

static int val(int from, int slot, int k)
{
    return from * 1000 + slot * 10 + k;
}

static int distinct;

/* Element i of the block received in slot k from neighbour `from`. */
#define BLOCK(what, from, k, i, got, mode)                                                       \
    do {                                                                                         \
        int e_ = val((from), 1 - (k), (i)) + (mode), g_ = (got);                                 \
        if (!distinct && g_ == val((from), (k), (i)) + (mode)) {                                 \
            e_ = g_;                                                                             \
        }                                                                                        \
        MTEST_EQ(what, e_, g_);                                                                  \
    } while (0)

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int n = mtest_size();
    int dims[1] = {n}, periods[1] = {1};
    MPI_Comm ring;
    MTEST_CALL(MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &ring));
    MTEST_CALL(MPI_Comm_set_errhandler(ring, MPI_ERRORS_RETURN));
    int r, nbr[2];
    MTEST_CALL(MPI_Comm_rank(ring, &r));
    MTEST_CALL(MPI_Cart_shift(ring, 0, 1, &nbr[0], &nbr[1]));
    distinct = nbr[0] != nbr[1];

    int sb[16], rb[16];
    MPI_Count sc[2] = {2, 3}, rc[2];
    if (!distinct) {
        sc[1] = 2;
    }
    MPI_Aint sd[2], rd[2];
    MPI_Datatype ts[2] = {MPI_INT, MPI_INT};

    for (int mode = 0; mode < 3; mode++) {
        /* MPI_Neighbor_allgather_c: the same 2 ints to both neighbours */
        for (int i = 0; i < 2; i++) {
            sb[i] = val(r, 0, i) + mode;
        }
        memset(rb, -1, sizeof rb);
        RUN(Neighbor_allgather, neighbor_allgather, sb, (MPI_Count)2, MPI_INT, rb, (MPI_Count)2,
            MPI_INT, ring);
        for (int k = 0; k < 2; k++) {
            for (int i = 0; i < 2; i++) {
                MTEST_EQ("Neighbor_allgather_c", val(nbr[k], 0, i) + mode, rb[2 * k + i]);
            }
        }

        /* MPI_Neighbor_allgatherv_c: blocks stored in reverse order with a gap */
        rc[0] = rc[1] = 2;
        rd[0] = 3;
        rd[1] = 0;
        memset(rb, -1, sizeof rb);
        RUN(Neighbor_allgatherv, neighbor_allgatherv, sb, (MPI_Count)2, MPI_INT, rb, rc, rd,
            MPI_INT, ring);
        for (int k = 0; k < 2; k++) {
            for (int i = 0; i < 2; i++) {
                MTEST_EQ("Neighbor_allgatherv_c", val(nbr[k], 0, i) + mode, rb[rd[k] + i]);
            }
        }
        MTEST_EQ("Neighbor_allgatherv_c gap", -1, rb[2]);

        /* MPI_Neighbor_alltoall_c: block k goes to neighbour k */
        for (int k = 0; k < 2; k++) {
            for (int i = 0; i < 2; i++) {
                sb[2 * k + i] = val(r, k, i) + mode;
            }
        }
        memset(rb, -1, sizeof rb);
        RUN(Neighbor_alltoall, neighbor_alltoall, sb, (MPI_Count)2, MPI_INT, rb, (MPI_Count)2,
            MPI_INT, ring);
        for (int k = 0; k < 2; k++) {
            for (int i = 0; i < 2; i++) {
                BLOCK("Neighbor_alltoall_c", nbr[k], k, i, rb[2 * k + i], mode);
            }
        }

        /* MPI_Neighbor_alltoallv_c: 2 ints to the left, 3 to the right, so 3 arrive from
         * the left and 2 from the right */
        sd[0] = 5;
        sd[1] = 0;
        for (int k = 0; k < 2; k++) {
            for (int i = 0; i < sc[k]; i++) {
                sb[sd[k] + i] = val(r, k, i) + mode;
            }
        }
        rc[0] = sc[1];
        rc[1] = sc[0];
        rd[0] = 0;
        rd[1] = 4;
        memset(rb, -1, sizeof rb);
        RUN(Neighbor_alltoallv, neighbor_alltoallv, sb, sc, sd, MPI_INT, rb, rc, rd, MPI_INT, ring);
        for (int k = 0; k < 2; k++) {
            for (int i = 0; i < rc[k]; i++) {
                BLOCK("Neighbor_alltoallv_c", nbr[k], k, i, rb[rd[k] + i], mode);
            }
        }
        MTEST_EQ("Neighbor_alltoallv_c gap", -1, rb[3]);

        /* MPI_Neighbor_alltoallw_c: the same with byte displacements */
        MPI_Aint sdb[2] = {sd[0] * (MPI_Aint)sizeof(int), sd[1] * (MPI_Aint)sizeof(int)};
        MPI_Aint rdb[2] = {rd[0] * (MPI_Aint)sizeof(int), rd[1] * (MPI_Aint)sizeof(int)};
        memset(rb, -1, sizeof rb);
        RUN(Neighbor_alltoallw, neighbor_alltoallw, sb, sc, sdb, ts, rb, rc, rdb, ts, ring);
        for (int k = 0; k < 2; k++) {
            for (int i = 0; i < rc[k]; i++) {
                BLOCK("Neighbor_alltoallw_c", nbr[k], k, i, rb[rd[k] + i], mode);
            }
        }
    }

    MTEST_CALL(MPI_Comm_free(&ring));
    return mtest_finalize();
}
