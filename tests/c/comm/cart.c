/* Cartesian topologies: MPI_Dims_create on the standard's cases, MPI_Cart_create and
 * every query (Topo_test, Cartdim_get, Cart_get, Cart_rank, Cart_coords), shifts at
 * periodic and open edges, a 2-D halo exchange on a periodic grid, Cart_sub (keeping no
 * dimension: comm/comm_strict), Cart_map, grids smaller than the group, dup keeping the
 * topology, and bad arguments. */
#include "mtest.h"

static void dims_case(int nnodes, int ndims, const int *in, const int *expect)
{
    int d[8];
    memcpy(d, in, sizeof(int) * (size_t)ndims);
    MTEST_CALL(MPI_Dims_create(nnodes, ndims, d));
    for (int i = 0; i < ndims; i++) {
        if (d[i] != expect[i]) {
            MTEST_CHECK(0, "MPI_Dims_create(%d, %d): dims[%d] = %d, expected %d", nnodes, ndims, i, d[i], expect[i]);
        }
    }
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int rank = mtest_rank(), size = mtest_size();

    /* MPI_Dims_create: the standard's examples and more */
    dims_case(6, 2, (int[]){0, 0}, (int[]){3, 2});
    dims_case(7, 2, (int[]){0, 0}, (int[]){7, 1});
    dims_case(6, 3, (int[]){0, 3, 0}, (int[]){2, 3, 1});
    dims_case(12, 3, (int[]){0, 0, 0}, (int[]){3, 2, 2});
    dims_case(16, 2, (int[]){0, 0}, (int[]){4, 4});
    dims_case(24, 3, (int[]){0, 0, 0}, (int[]){4, 3, 2});
    dims_case(1, 2, (int[]){0, 0}, (int[]){1, 1});
    dims_case(8, 2, (int[]){2, 0}, (int[]){2, 4});
    dims_case(4, 2, (int[]){2, 2}, (int[]){2, 2});
    int bad3[3] = {0, 3, 0};
    MTEST_EXPECT_CLASS(MPI_ERR_DIMS, MPI_Dims_create(7, 3, bad3));
    int neg[2] = {-1, 0};
    MTEST_EXPECT_CLASS(MPI_ERR_DIMS, MPI_Dims_create(4, 2, neg));

    /* a 2-D grid over all processes, periodic in dimension 0 only */
    int dims[2] = {0, 0}, periods[2] = {1, 0};
    MTEST_CALL(MPI_Dims_create(size, 2, dims));
    MTEST_EQ("dims product", size, dims[0] * dims[1]);
    MTEST_CHECK(dims[0] >= dims[1], "dims not non-increasing: %d %d", dims[0], dims[1]);
    MPI_Comm cart;
    MTEST_CALL(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart));
    int status = -1, nd = -1, r;
    MTEST_CALL(MPI_Topo_test(cart, &status));
    MTEST_EQ("Topo_test of a Cartesian communicator", MPI_CART, status);
    MTEST_CALL(MPI_Topo_test(MPI_COMM_WORLD, &status));
    MTEST_EQ("Topo_test of MPI_COMM_WORLD", MPI_UNDEFINED, status);
    MTEST_CALL(MPI_Cartdim_get(cart, &nd));
    MTEST_EQ("Cartdim_get", 2, nd);
    MTEST_CALL(MPI_Comm_rank(cart, &r));
    MTEST_EQ("rank kept in the grid", rank, r);
    int gd[2], gp[2], gc[2];
    MTEST_CALL(MPI_Cart_get(cart, 2, gd, gp, gc));
    MTEST_EQ("Cart_get dims[0]", dims[0], gd[0]);
    MTEST_EQ("Cart_get dims[1]", dims[1], gd[1]);
    MTEST_EQ("Cart_get periods[0]", 1, gp[0]);
    MTEST_EQ("Cart_get periods[1]", 0, gp[1]);
    MTEST_EQ("Cart_get coords[0] (row-major)", rank / dims[1], gc[0]);
    MTEST_EQ("Cart_get coords[1] (row-major)", rank % dims[1], gc[1]);

    /* rank <-> coordinates for every process, and wrapping in the periodic dimension */
    for (int q = 0; q < size; q++) {
        int c[2], back = -1;
        MTEST_CALL(MPI_Cart_coords(cart, q, 2, c));
        MTEST_CALL(MPI_Cart_rank(cart, c, &back));
        if (back != q || c[0] != q / dims[1] || c[1] != q % dims[1]) {
            MTEST_CHECK(0, "rank %d -> (%d,%d) -> %d", q, c[0], c[1], back);
        }
    }
    int wrap[2] = {-1, 0}, w = -1;
    MTEST_CALL(MPI_Cart_rank(cart, wrap, &w));
    MTEST_EQ("Cart_rank wraps the periodic dimension", (dims[0] - 1) * dims[1], w);
    wrap[0] = dims[0];
    MTEST_CALL(MPI_Cart_rank(cart, wrap, &w));
    MTEST_EQ("Cart_rank wraps past the end", 0, w);

    /* shifts */
    int src, dst;
    MTEST_CALL(MPI_Cart_shift(cart, 0, 1, &src, &dst));
    MTEST_EQ("shift dim 0 (periodic) source", ((gc[0] - 1 + dims[0]) % dims[0]) * dims[1] + gc[1], src);
    MTEST_EQ("shift dim 0 (periodic) dest", ((gc[0] + 1) % dims[0]) * dims[1] + gc[1], dst);
    MTEST_CALL(MPI_Cart_shift(cart, 1, 1, &src, &dst));
    MTEST_EQ("shift dim 1 (open) source", gc[1] == 0 ? MPI_PROC_NULL : rank - 1, src);
    MTEST_EQ("shift dim 1 (open) dest", gc[1] == dims[1] - 1 ? MPI_PROC_NULL : rank + 1, dst);
    MTEST_CALL(MPI_Cart_shift(cart, 1, -2, &src, &dst));
    MTEST_EQ("shift dim 1 by -2 source", gc[1] + 2 < dims[1] ? rank + 2 : MPI_PROC_NULL, src);
    MTEST_EQ("shift dim 1 by -2 dest", gc[1] - 2 >= 0 ? rank - 2 : MPI_PROC_NULL, dst);
    MTEST_CALL(MPI_Cart_shift(cart, 0, 0, &src, &dst));
    MTEST_EQ("shift by 0 source", rank, src);
    MTEST_EQ("shift by 0 dest", rank, dst);

    /* 2-D halo exchange on a fully periodic grid */
    MPI_Comm torus;
    int tp[2] = {1, 1};
    MTEST_CALL(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, tp, 1, &torus));
    int tr;
    MTEST_CALL(MPI_Comm_rank(torus, &tr));
    for (int dim = 0; dim < 2; dim++) {
        int lo, hi, from_lo = -1, from_hi = -1;
        MTEST_CALL(MPI_Cart_shift(torus, dim, 1, &lo, &hi));
        MTEST_CALL(MPI_Sendrecv(&tr, 1, MPI_INT, hi, dim, &from_lo, 1, MPI_INT, lo, dim, torus, MPI_STATUS_IGNORE));
        MTEST_CALL(MPI_Sendrecv(&tr, 1, MPI_INT, lo, 10 + dim, &from_hi, 1, MPI_INT, hi, 10 + dim, torus,
                                MPI_STATUS_IGNORE));
        MTEST_EQ("halo from the lower neighbour", lo, from_lo);
        MTEST_EQ("halo from the upper neighbour", hi, from_hi);
    }
    MTEST_CALL(MPI_Comm_free(&torus));

    /* sub-grids: rows keep dimension 1 */
    MPI_Comm row;
    int keep[2] = {0, 1};
    MTEST_CALL(MPI_Cart_sub(cart, keep, &row));
    int rs, rr;
    MTEST_CALL(MPI_Comm_size(row, &rs));
    MTEST_CALL(MPI_Comm_rank(row, &rr));
    MTEST_EQ("row size", dims[1], rs);
    MTEST_EQ("rank in row", gc[1], rr);
    MTEST_CALL(MPI_Cartdim_get(row, &nd));
    MTEST_EQ("row dimensions", 1, nd);
    int rd, rp, rc;
    MTEST_CALL(MPI_Cart_get(row, 1, &rd, &rp, &rc));
    MTEST_EQ("row extent", dims[1], rd);
    MTEST_EQ("row periodicity", 0, rp);
    {
        int sum = -1, mine = rank;
        /* sum of world ranks along the row, by a ring of messages */
        int acc = mine, tmp;
        for (int step = 1; step < rs; step++) {
            MTEST_CALL(MPI_Sendrecv(&mine, 1, MPI_INT, (rr + step) % rs, 7, &tmp, 1, MPI_INT, (rr - step + rs) % rs, 7,
                                    row, MPI_STATUS_IGNORE));
            acc += tmp;
        }
        sum = 0;
        for (int j = 0; j < dims[1]; j++) {
            sum += gc[0] * dims[1] + j;
        }
        MTEST_EQ("row members", sum, acc);
    }
    MTEST_CALL(MPI_Comm_free(&row));

    /* dup keeps the topology */
    MPI_Comm cd;
    MTEST_CALL(MPI_Comm_dup(cart, &cd));
    MTEST_CALL(MPI_Topo_test(cd, &status));
    MTEST_EQ("Topo_test of a dup of a Cartesian communicator", MPI_CART, status);
    MTEST_CALL(MPI_Comm_free(&cd));

    /* a 1-D grid smaller than the group */
    int n1 = size > 1 ? size - 1 : 1, p1 = 0;
    MPI_Comm small;
    MTEST_CALL(MPI_Cart_create(MPI_COMM_WORLD, 1, &n1, &p1, 0, &small));
    if (rank < n1) {
        MTEST_CHECK(small != MPI_COMM_NULL, "rank %d left out of a %d-process grid", rank, n1);
        MTEST_CALL(MPI_Comm_free(&small));
    } else {
        MTEST_CHECK(small == MPI_COMM_NULL, "rank %d got a grid of %d processes", rank, n1);
    }
    int nr;
    MTEST_CALL(MPI_Cart_map(MPI_COMM_WORLD, 1, &n1, &p1, &nr));
    MTEST_EQ("Cart_map", rank < n1 ? rank : MPI_UNDEFINED, nr);

    /* bad arguments */
    int big[2] = {size, 2};
    MPI_Comm bad;
    {
        int rc2 = MPI_Cart_create(MPI_COMM_WORLD, 2, big, periods, 0, &bad);
        int cls = mtest_errclass(rc2);
        MTEST_CHECK(rc2 != MPI_SUCCESS && (cls == MPI_ERR_ARG || cls == MPI_ERR_TOPOLOGY || cls == MPI_ERR_DIMS),
                    "a grid larger than the group: class %d", cls);
    }
    int c2[2];
    MTEST_EXPECT_CLASS(MPI_ERR_TOPOLOGY, MPI_Cart_coords(MPI_COMM_WORLD, 0, 2, c2));
    MTEST_EXPECT_CLASS(MPI_ERR_TOPOLOGY, MPI_Cartdim_get(MPI_COMM_WORLD, &nd));
    MTEST_EXPECT_CLASS(MPI_ERR_RANK, MPI_Cart_coords(cart, size, 2, c2));
    MTEST_EXPECT_CLASS(MPI_ERR_ARG, MPI_Cart_shift(cart, 2, 1, &src, &dst));
    int out_of_grid[2] = {0, dims[1]};
    MTEST_EXPECT_CLASS(MPI_ERR_ARG, MPI_Cart_rank(cart, out_of_grid, &r));
    MTEST_EXPECT_CLASS(MPI_ERR_ARG, MPI_Cart_create(MPI_COMM_WORLD, -1, dims, periods, 0, &bad));

    MTEST_CALL(MPI_Comm_free(&cart));
    return mtest_finalize();
}
