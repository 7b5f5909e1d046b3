/* Neighbourhood collectives (MPI 4.1 section 8.6): MPI_Neighbor_allgather(v) and
 * MPI_Neighbor_alltoall(v,w) (checks in neighbor_util.h) on
 *   - 2-D Cartesian grids from MPI_Dims_create, open and periodic in the dimensions of
 *     extent 3 or more, a duplicate and a Cart_sub row of the open grid; 1-D open lines
 *     and rings of 3 or more: block order per dimension -1 then +1 neighbour,
 *     MPI_PROC_NULL blocks untouched (periodic dimensions of extent 1 or 2, where MPICH
 *     4.0.2 delivers the wrong blocks, are in neighbor_strict.c);
 *   - a graph (ring plus opposite node plus a self loop at node 0, each neighbour once;
 *     repeated edges are in neighbor_strict.c) in MPI_Graph_neighbors order;
 *   - distributed graphs with asymmetric adjacency (in-neighbours differ from
 *     out-neighbours, zero degrees, self loops), made with
 *     MPI_Dist_graph_create_adjacent and MPI_Dist_graph_create (MPI_Neighbor_alltoallw on
 *     them, which MPICH 4.0.2 gets wrong, is in neighbor_strict.c);
 * with contiguous and derived datatypes, and the argument errors (no topology, null
 * communicator, negative counts, null and uncommitted datatypes); the communicator
 * keeps working after them; neighbourhood calls interleaved with Allreduce and Bcast on
 * one communicator without synchronisation; 1 MiB blocks (rendezvous), contiguous and
 * strided. */
#include "mtest.h"
#include "neighbor_util.h"

static void cart_tests(int size)
{
    int dims[2] = {0, 0};
    MTEST_CALL(MPI_Dims_create(size, 2, dims));
    int open[2] = {0, 0}, wide[2] = {dims[0] >= 3, dims[1] >= 3};
    MPI_Comm cart;
    MTEST_CALL(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, open, 0, &cart));
    run_all(cart, "open grid");
    {
        /* a duplicate keeps the topology; a sub-grid (the rows) has its own */
        MPI_Comm dup, rows;
        int keep[2] = {0, 1};
        MTEST_CALL(MPI_Comm_dup(cart, &dup));
        run_all(dup, "duplicate of the open grid");
        MTEST_CALL(MPI_Comm_free(&dup));
        MTEST_CALL(MPI_Cart_sub(cart, keep, &rows));
        run_all(rows, "row of the open grid");
        MTEST_CALL(MPI_Comm_free(&rows));
    }
    MTEST_CALL(MPI_Comm_free(&cart));
    MTEST_CALL(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, wide, 0, &cart));
    run_all(cart, "grid periodic where extent >= 3");
    MTEST_CALL(MPI_Comm_free(&cart));

    int line[1] = {size}, per[1] = {0};
    MTEST_CALL(MPI_Cart_create(MPI_COMM_WORLD, 1, line, per, 0, &cart));
    run_all(cart, "line");
    MTEST_CALL(MPI_Comm_free(&cart));
    if (size >= 3) {
        per[0] = 1;
        MTEST_CALL(MPI_Cart_create(MPI_COMM_WORLD, 1, line, per, 0, &cart));
        run_all(cart, "ring");
        MTEST_CALL(MPI_Comm_free(&cart));
    }
}

static void error_tests(int size)
{
    int s[8] = {0}, r[64], cnts[MAXN], displs[MAXN];
    MPI_Aint ad[MAXN];
    MPI_Datatype ty[MAXN];
    for (int i = 0; i < MAXN; i++) {
        cnts[i] = 1;
        displs[i] = i;
        ad[i] = (MPI_Aint)(sizeof(int) * (size_t)i);
        ty[i] = MPI_INT;
    }
    MTEST_EXPECT_CLASS(MPI_ERR_COMM,
                       MPI_Neighbor_alltoall(s, 1, MPI_INT, r, 1, MPI_INT, MPI_COMM_NULL));

    int dims[1] = {size}, per[1] = {0};
    MPI_Comm line;
    MTEST_CALL(MPI_Cart_create(MPI_COMM_WORLD, 1, dims, per, 0, &line));
    MTEST_EXPECT_CLASS(MPI_ERR_COUNT, MPI_Neighbor_allgather(s, -1, MPI_INT, r, 1, MPI_INT, line));
    MTEST_EXPECT_CLASS(MPI_ERR_COUNT, MPI_Neighbor_alltoall(s, 1, MPI_INT, r, -2, MPI_INT, line));
    cnts[1] = -1;
    MTEST_EXPECT_CLASS(MPI_ERR_COUNT,
                       MPI_Neighbor_allgatherv(s, 1, MPI_INT, r, cnts, displs, MPI_INT, line));
    MTEST_EXPECT_CLASS(MPI_ERR_COUNT, MPI_Neighbor_alltoallv(s, cnts, displs, MPI_INT, r, cnts,
                                                             displs, MPI_INT, line));
    MTEST_EXPECT_CLASS(MPI_ERR_COUNT,
                       MPI_Neighbor_alltoallw(s, cnts, ad, ty, r, cnts, ad, ty, line));
    cnts[1] = 1;
    MTEST_EXPECT_CLASS(MPI_ERR_TYPE,
                       MPI_Neighbor_allgather(s, 1, MPI_DATATYPE_NULL, r, 1, MPI_INT, line));
    ty[1] = MPI_DATATYPE_NULL;
    MTEST_EXPECT_CLASS(MPI_ERR_TYPE, MPI_Neighbor_alltoallw(s, cnts, ad, ty, r, cnts, ad, ty, line));
    ty[1] = MPI_INT;
    MPI_Datatype unc;
    MTEST_CALL(MPI_Type_contiguous(2, MPI_INT, &unc));
    MTEST_EXPECT_CLASS(MPI_ERR_TYPE, MPI_Neighbor_alltoall(s, 1, unc, r, 1, unc, line));
    MTEST_CALL(MPI_Type_free(&unc));
    /* the communicator still works after the failed calls */
    int me = mtest_rank(), got[2] = {SENT, SENT};
    MTEST_CALL(MPI_Neighbor_allgather(&me, 1, MPI_INT, got, 1, MPI_INT, line));
    MTEST_EQ("line: from the -1 neighbour", me > 0 ? me - 1 : SENT, got[0]);
    MTEST_EQ("line: from the +1 neighbour", me < size - 1 ? me + 1 : SENT, got[1]);
    MTEST_CALL(MPI_Comm_free(&line));
}

/* Neighbourhood calls interleaved with other collectives on the same communicator, with
 * no synchronisation between rounds: each round's messages must match only their own
 * call. */
static void interleave(int size)
{
    int dims[2] = {0, 0}, per[2] = {0, 1};
    MPI_Comm c;
    MTEST_CALL(MPI_Dims_create(size, 2, dims));
    per[1] = dims[1] >= 3;
    MTEST_CALL(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, per, 0, &c));
    nbrs_t n;
    get_nbrs(c, &n);
    int me = rank_in(c);
    for (int round = 0; round < 20; round++) {
        int sb[4], rb[4], sum = -1, root = round % size, b = me == root ? round : -1;
        for (int k = 0; k < 4; k++) {
            sb[k] = val(me, code_send(&n, k), round);
            rb[k] = SENT;
        }
        MTEST_CALL(MPI_Neighbor_alltoall(sb, 1, MPI_INT, rb, 1, MPI_INT, c));
        MTEST_CALL(MPI_Allreduce(&me, &sum, 1, MPI_INT, MPI_SUM, c));
        MTEST_CALL(MPI_Bcast(&b, 1, MPI_INT, root, c));
        for (int i = 0; i < 4; i++) {
            int want = n.src[i] == MPI_PROC_NULL ? SENT : val(n.src[i], code_recv(&n, me, i), round);
            MTEST_CHECK(rb[i] == want, "interleaved round %d: block %d = %d, expected %d", round, i,
                        rb[i], want);
        }
        MTEST_EQ("interleaved allreduce", size * (size - 1) / 2, sum);
        MTEST_EQ("interleaved bcast", round, b);
        int g[4] = {SENT, SENT, SENT, SENT}, v = round * 100 + me;
        MTEST_CALL(MPI_Neighbor_allgather(&v, 1, MPI_INT, g, 1, MPI_INT, c));
        for (int i = 0; i < 4; i++) {
            int want = n.src[i] == MPI_PROC_NULL ? SENT : round * 100 + n.src[i];
            MTEST_CHECK(g[i] == want, "interleaved round %d: allgather block %d = %d", round, i,
                        g[i]);
        }
    }
    MTEST_CALL(MPI_Comm_free(&c));
}

/* Blocks of 1 MiB (past every eager threshold) on an open line, contiguous and through a
 * strided receive type. */
static void large_blocks(int size)
{
    enum { N = 256 * 1024 };
    int dims[1] = {size}, per[1] = {0}, me = mtest_rank();
    MPI_Comm line;
    MTEST_CALL(MPI_Cart_create(MPI_COMM_WORLD, 1, dims, per, 0, &line));
    int *sb = mtest_malloc(sizeof(int) * 2 * N), *rb = mtest_malloc(sizeof(int) * 4 * N);
    for (int k = 0; k < 2; k++) {
        for (int j = 0; j < N; j++) sb[k * N + j] = me * 7 + k + j * 3;
    }
    for (int j = 0; j < 2 * N; j++) rb[j] = SENT;
    MTEST_CALL(MPI_Neighbor_alltoall(sb, N, MPI_INT, rb, N, MPI_INT, line));
    int nb[2] = {me - 1, me + 1}, bad = 0;
    for (int i = 0; i < 2; i++) {
        int ok = nb[i] >= 0 && nb[i] < size;
        for (int j = 0; j < N; j++) {
            /* block i came from the neighbour's block i^1 */
            int want = ok ? nb[i] * 7 + (i ^ 1) + j * 3 : SENT;
            bad += rb[i * N + j] != want;
        }
    }
    MTEST_EQ("1 MiB alltoall blocks: wrong ints", 0, bad);
    MPI_Datatype every_other, spaced;
    MTEST_CALL(MPI_Type_vector(N, 1, 2, MPI_INT, &every_other));
    MTEST_CALL(MPI_Type_create_resized(every_other, 0, (MPI_Aint)sizeof(int) * 2 * N, &spaced));
    MTEST_CALL(MPI_Type_commit(&spaced));
    for (int j = 0; j < 4 * N; j++) rb[j] = SENT;
    MTEST_CALL(MPI_Neighbor_allgather(sb, N, MPI_INT, rb, 1, spaced, line));
    bad = 0;
    for (int i = 0; i < 2; i++) {
        int ok = nb[i] >= 0 && nb[i] < size;
        for (int j = 0; j < 2 * N; j++) {
            int want = ok && j % 2 == 0 ? nb[i] * 7 + (j / 2) * 3 : SENT;
            bad += rb[i * 2 * N + j] != want;
        }
    }
    MTEST_EQ("1 MiB strided allgather blocks: wrong ints", 0, bad);
    MTEST_CALL(MPI_Type_free(&spaced));
    MTEST_CALL(MPI_Type_free(&every_other));
    free(sb);
    free(rb);
    MTEST_CALL(MPI_Comm_free(&line));
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int rank = mtest_rank(), size = mtest_size();
    if (size > 16) {
        return mtest_skip("at most 16 processes");
    }
    cart_tests(size);
    graph_tests(size, 0);
    skip_alltoallw = 1; /* see neighbor_strict.c */
    dist_graph_tests(size, rank, 0);
    skip_alltoallw = 0;
    interleave(size);
    large_blocks(size);
    error_tests(size);
    return mtest_finalize();
}
