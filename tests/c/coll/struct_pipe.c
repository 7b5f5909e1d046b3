/*
 * Data-movement collectives on non-contiguous datatypes whose blocks are moved piece
 * by piece (packed as each piece is sent, unpacked as it arrives): element counts
 * whose packed sizes lie one element either side of the piece sizes of the transports
 * (32 KiB first shared-memory pieces, the 64 KiB eager limits and copy pieces, 256 KiB
 * pieces), so pieces end inside elements; two struct types, {int; double} (12 packed
 * bytes in 16) and {char; double} (9 packed bytes in 16, so pieces and blocks start at
 * odd packed offsets); MPI_IN_PLACE forms; the v-variants with per-pair counts and
 * displacements that leave gaps between the blocks, which must not be written.
 * Blocking and nonblocking. Run over shared memory, over TCP (OXMPI_NETMOD=tcp, small
 * OXMPI_TCP_CHUNK_BYTES) and with small shared-memory pieces (see the manifest).
 */
#include "mtest.h"
#include "struct_shapes.h"

enum op {
    BCAST,
    ALLGATHER,
    ALLGATHER_IP,
    ALLTOALL,
    ALLTOALL_IP,
    GATHER_IP,
    SCATTER_IP,
    GATHERV,
    SCATTERV,
    ALLGATHERV,
    ALLGATHERV_IP,
    ALLTOALLV,
    NOPS
};
static const char *names[NOPS] = {
    "Bcast",      "Allgather", "Allgather(in place)", "Alltoall", "Alltoall(in place)",
    "Gather(in place)", "Scatter(in place)", "Gatherv", "Scatterv", "Allgatherv",
    "Allgatherv(in place)", "Alltoallv"};

/* Elements in the block `from` sends to `to` for base count n (v-variants vary it). */
static int cnt(int n, int from, int to, int p)
{
    return n + 7 * ((from + 2 * to) % p);
}

/* A receive (or send) side of p blocks of counts c[j] with a gap of 3 elements before
 * each block and after the last: displacements in d, elements spanned returned. */
static int spread(const int *c, int *d, int p)
{
    int at = 3;
    for (int j = 0; j < p; j++) {
        d[j] = at;
        at += c[j] + 3;
    }
    return at;
}

/* The image of a buffer of `total` elements whose block j (d[j], c[j] elements) holds
 * what `from(j)` sends to `to(j)`; everything else is `hole`. */
static void image(const struct shape *s, unsigned char *buf, int total, const int *c,
                  const int *d, int p, int seed, int single_from, int single_to,
                  unsigned char hole)
{
    memset(buf, hole, (size_t)total * s->extent);
    for (int j = 0; j < p; j++) {
        int from = single_from >= 0 ? single_from : j, to = single_to >= 0 ? single_to : j;
        shape_fill(s, buf + (size_t)d[j] * s->extent, (size_t)c[j], seed, from, to, hole);
    }
}

static void compare(const struct shape *s, const unsigned char *got, const unsigned char *want,
                    int total, const char *what, int n)
{
    size_t len = (size_t)total * s->extent;
    for (size_t i = 0; i < len; i++)
        if (got[i] != want[i]) {
            MTEST_CHECK(0, "%s %s (n %d): byte %zu of %zu (element %zu): got 0x%02x, want 0x%02x",
                        what, s->name, n, i, len, i / s->extent, got[i], want[i]);
            return;
        }
}

static void run(const struct shape *s, enum op op, int nb, int n, int root, int seed)
{
    MPI_Comm w = MPI_COMM_WORLD;
    int r = mtest_rank(), p = mtest_size();
    MPI_Datatype t = s->type;
    int sc[64], sd[64], rc[64], rd[64], st, rt;
    int v = op >= GATHERV;
    /* Send side: what this rank sends to each rank; receive side: what it gets. */
    for (int j = 0; j < p; j++) {
        sc[j] = v ? cnt(n, r, j, p) : n;
        rc[j] = v ? cnt(n, j, r, p) : n;
    }
    if (op == GATHERV || op == ALLGATHERV || op == ALLGATHERV_IP)
        for (int j = 0; j < p; j++)
            rc[j] = cnt(n, j, 0, p); /* every rank sends one block, to all */
    if (op == SCATTERV)
        for (int j = 0; j < p; j++)
            sc[j] = cnt(n, root, j, p);
    if (v) {
        st = spread(sc, sd, p);
        rt = spread(rc, rd, p);
    } else {
        for (int j = 0; j < p; j++)
            sd[j] = rd[j] = j * n;
        st = rt = n * p;
    }
    size_t ext = s->extent;
    unsigned char *sb = mtest_malloc((size_t)st * ext + 1), *rb = mtest_malloc((size_t)rt * ext + 1);
    unsigned char *want = mtest_malloc((size_t)rt * ext + 1);
    const char *what = names[op];
    int my = cnt(n, r, 0, p); /* this rank's block in the gathering v-variants */
    switch (op) {
    case BCAST:
        if (r == root)
            shape_fill(s, sb, (size_t)n, seed, root, 0, SEND_HOLE);
        else
            memset(sb, RECV_HOLE, (size_t)n * ext);
        BLOCKING_OR_NOT(nb, MPI_Bcast(sb, n, t, root, w), MPI_Ibcast(sb, n, t, root, w, &req_));
        if (r != root)
            shape_check(s, sb, (size_t)n, seed, root, 0, what);
        break;
    case ALLGATHER:
    case ALLGATHER_IP:
    case ALLGATHERV:
    case ALLGATHERV_IP: {
        int ip = op == ALLGATHER_IP || op == ALLGATHERV_IP, mine = v ? my : n;
        const void *from = sb;
        MPI_Datatype ft = t;
        image(s, want, rt, rc, rd, p, seed, -1, 0, RECV_HOLE);
        memset(rb, RECV_HOLE, (size_t)rt * ext);
        if (ip) {
            /* Only this rank's block is there before the call. */
            memcpy(rb + (size_t)rd[r] * ext, want + (size_t)rd[r] * ext, (size_t)rc[r] * ext);
            from = MPI_IN_PLACE;
            mine = 0;
            ft = MPI_DATATYPE_NULL;
        } else {
            shape_fill(s, sb, (size_t)mine, seed, r, 0, SEND_HOLE);
        }
        if (v)
            BLOCKING_OR_NOT(nb, MPI_Allgatherv(from, mine, ft, rb, rc, rd, t, w),
                            MPI_Iallgatherv(from, mine, ft, rb, rc, rd, t, w, &req_));
        else
            BLOCKING_OR_NOT(nb, MPI_Allgather(from, mine, ft, rb, n, t, w),
                            MPI_Iallgather(from, mine, ft, rb, n, t, w, &req_));
        compare(s, rb, want, rt, what, n);
        break;
    }
    case ALLTOALL:
    case ALLTOALL_IP:
        image(s, sb, st, sc, sd, p, seed, r, -1, SEND_HOLE);
        image(s, want, rt, rc, rd, p, seed, -1, r, RECV_HOLE);
        if (op == ALLTOALL) {
            memset(rb, RECV_HOLE, (size_t)rt * ext);
            BLOCKING_OR_NOT(nb, MPI_Alltoall(sb, n, t, rb, n, t, w),
                            MPI_Ialltoall(sb, n, t, rb, n, t, w, &req_));
        } else {
            /* The blocks to send are in the receive buffer, holes as received ones. */
            image(s, rb, rt, rc, rd, p, seed, r, -1, RECV_HOLE);
            BLOCKING_OR_NOT(nb, MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, rb, n, t, w),
                            MPI_Ialltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, rb, n, t, w, &req_));
        }
        compare(s, rb, want, rt, what, n);
        break;
    case GATHER_IP:
        if (r == root) {
            image(s, want, rt, rc, rd, p, seed, -1, root, RECV_HOLE);
            memset(rb, RECV_HOLE, (size_t)rt * ext);
            memcpy(rb + (size_t)rd[r] * ext, want + (size_t)rd[r] * ext, (size_t)n * ext);
            BLOCKING_OR_NOT(nb, MPI_Gather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, rb, n, t, root, w),
                            MPI_Igather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, rb, n, t, root, w,
                                        &req_));
            compare(s, rb, want, rt, what, n);
        } else {
            shape_fill(s, sb, (size_t)n, seed, r, root, SEND_HOLE);
            BLOCKING_OR_NOT(nb, MPI_Gather(sb, n, t, NULL, 0, MPI_DATATYPE_NULL, root, w),
                            MPI_Igather(sb, n, t, NULL, 0, MPI_DATATYPE_NULL, root, w, &req_));
        }
        break;
    case SCATTER_IP:
        if (r == root) {
            image(s, sb, st, sc, sd, p, seed, root, -1, SEND_HOLE);
            memcpy(want, sb, (size_t)st * ext);
            BLOCKING_OR_NOT(nb, MPI_Scatter(sb, n, t, MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, root, w),
                            MPI_Iscatter(sb, n, t, MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, root, w,
                                         &req_));
            compare(s, sb, want, st, "Scatter(in place): the root's send buffer changed", n);
        } else {
            memset(rb, RECV_HOLE, (size_t)n * ext);
            BLOCKING_OR_NOT(nb, MPI_Scatter(NULL, 0, MPI_DATATYPE_NULL, rb, n, t, root, w),
                            MPI_Iscatter(NULL, 0, MPI_DATATYPE_NULL, rb, n, t, root, w, &req_));
            shape_check(s, rb, (size_t)n, seed, root, r, what);
        }
        break;
    case GATHERV:
        shape_fill(s, sb, (size_t)my, seed, r, 0, SEND_HOLE);
        memset(rb, RECV_HOLE, (size_t)rt * ext);
        BLOCKING_OR_NOT(nb, MPI_Gatherv(sb, my, t, rb, rc, rd, t, root, w),
                        MPI_Igatherv(sb, my, t, rb, rc, rd, t, root, w, &req_));
        if (r == root) {
            image(s, want, rt, rc, rd, p, seed, -1, 0, RECV_HOLE);
            compare(s, rb, want, rt, what, n);
        }
        break;
    case SCATTERV:
        if (r == root)
            image(s, sb, st, sc, sd, p, seed, root, -1, SEND_HOLE);
        {
            int mine = cnt(n, root, r, p);
            memset(rb, RECV_HOLE, (size_t)mine * ext);
            BLOCKING_OR_NOT(nb, MPI_Scatterv(sb, sc, sd, t, rb, mine, t, root, w),
                            MPI_Iscatterv(sb, sc, sd, t, rb, mine, t, root, w, &req_));
            shape_check(s, rb, (size_t)mine, seed, root, r, what);
        }
        break;
    case ALLTOALLV:
        image(s, sb, st, sc, sd, p, seed, r, -1, SEND_HOLE);
        image(s, want, rt, rc, rd, p, seed, -1, r, RECV_HOLE);
        memset(rb, RECV_HOLE, (size_t)rt * ext);
        BLOCKING_OR_NOT(nb, MPI_Alltoallv(sb, sc, sd, t, rb, rc, rd, t, w),
                        MPI_Ialltoallv(sb, sc, sd, t, rb, rc, rd, t, w, &req_));
        compare(s, rb, want, rt, what, n);
        break;
    default:
        break;
    }
    free(sb);
    free(rb);
    free(want);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int p = mtest_size();
    if (p > 64)
        return mtest_skip("at most 64 ranks");
    struct shape shapes[2];
    struct elem_id {
        int i;
        double d;
    };
    struct elem_cd {
        char c;
        double d;
    };
    MPI_Aint d_id[2] = {offsetof(struct elem_id, i), offsetof(struct elem_id, d)};
    MPI_Aint d_cd[2] = {offsetof(struct elem_cd, c), offsetof(struct elem_cd, d)};
    MPI_Datatype t_id[2] = {MPI_INT, MPI_DOUBLE}, t_cd[2] = {MPI_CHAR, MPI_DOUBLE};
    int z_id[2] = {sizeof(int), sizeof(double)}, z_cd[2] = {1, sizeof(double)};
    shape_struct(&shapes[0], "struct{int,double}", 2, d_id, t_id, z_id, sizeof(struct elem_id));
    shape_struct(&shapes[1], "struct{char,double}", 2, d_cd, t_cd, z_cd, sizeof(struct elem_cd));
    /* Packed block sizes one element either side of 32 KiB, 64 KiB and 256 KiB. */
    static const int counts[2][7] = {{1, 2730, 2731, 5461, 5462, 21845, 21846},
                                     {1, 3640, 3641, 7281, 7282, 29127, 29128}};
    int seed = 1;
    for (int k = 0; k < 2; k++)
        for (int c = 0; c < 7; c++)
            for (int op = 0; op < NOPS; op++)
                for (int nb = 0; nb < 2; nb++) {
                    int n = counts[k][c];
                    /* Everyone-to-everyone calls at the largest counts: one of the
                     * two forms, to bound the run time. */
                    if (c >= 5 && op != BCAST && nb != (c & 1))
                        continue;
                    run(&shapes[k], (enum op)op, nb, n, seed % p, seed);
                    seed++;
                }
    MTEST_CALL(MPI_Type_free(&shapes[0].type));
    MTEST_CALL(MPI_Type_free(&shapes[1].type));
    return mtest_finalize();
}
