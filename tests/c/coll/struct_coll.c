/*
 * Collectives on non-contiguous datatypes, blocking and nonblocking: MPI_Bcast, Gather,
 * Scatter, Allgather, Alltoall and MPI_Ibcast, Igather, Iscatter, Iallgather, Ialltoall
 * with
 *   - a struct {int; double} (MPI_Type_create_struct, resized to extent 16: 12 data
 *     bytes and 4 bytes of padding per element), and
 *   - a vector of 3 doubles at a stride of 2 doubles, resized to extent 48 (24 data
 *     bytes per element, holes between and after the doubles),
 * for element counts whose packed sizes cross the library's thresholds (the small-message
 * slots, eager messages, rendezvous, the large staging areas and beyond 1 MiB).
 * Every data byte is checked; holes and padding of receive buffers must keep their value.
 */
#include "mtest.h"
#include "struct_shapes.h"

static void make_shapes(struct shape *st, struct shape *vec)
{
    struct elem {
        int i;
        double d;
    };
    MPI_Aint disp[2] = {offsetof(struct elem, i), offsetof(struct elem, d)};
    MPI_Datatype types[2] = {MPI_INT, MPI_DOUBLE};
    int sizes[2] = {sizeof(int), sizeof(double)};
    shape_struct(st, "struct{int,double}", 2, disp, types, sizes, sizeof(struct elem));

    MPI_Datatype tmp;
    MTEST_CALL(MPI_Type_vector(3, 1, 2, MPI_DOUBLE, &tmp));
    MTEST_CALL(MPI_Type_create_resized(tmp, 0, 48, &vec->type));
    MTEST_CALL(MPI_Type_free(&tmp));
    MTEST_CALL(MPI_Type_commit(&vec->type));
    vec->name = "vector(3,1,2,double)";
    vec->extent = 48;
    memset(vec->data, 0, sizeof vec->data);
    for (int k = 0; k < 3; k++)
        memset(vec->data + 16 * k, 1, 8);
}

/* n elements of the block `from` sends to `to`. */
static void fill(const struct shape *s, unsigned char *buf, size_t n, int seed, int from, int to)
{
    shape_fill(s, buf, n, seed, from, to, SEND_HOLE);
}

enum op { BCAST, GATHER, SCATTER, ALLGATHER, ALLTOALL, NOPS };
static const char *names[2][NOPS] = {
    {"MPI_Bcast", "MPI_Gather", "MPI_Scatter", "MPI_Allgather", "MPI_Alltoall"},
    {"MPI_Ibcast", "MPI_Igather", "MPI_Iscatter", "MPI_Iallgather", "MPI_Ialltoall"}};

/* One call of `op` (nonblocking when nb) with n elements per block, root `root`. */
static void run(const struct shape *s, enum op op, int nb, int n, int root, int seed)
{
    int r, p;
    MPI_Comm w = MPI_COMM_WORLD;
    MTEST_CALL(MPI_Comm_rank(w, &r));
    MTEST_CALL(MPI_Comm_size(w, &p));
    size_t blk = (size_t)n * s->extent, all = blk * (size_t)p;
    unsigned char *sb = mtest_malloc(all ? all : 1), *rb = mtest_malloc(all ? all : 1);
    MPI_Datatype t = s->type;
    const char *what = names[nb][op];
    memset(rb, RECV_HOLE, all);
    switch (op) {
    case BCAST:
        if (r == root)
            fill(s, sb, (size_t)n, seed, root, 0);
        else
            memset(sb, RECV_HOLE, blk);
        BLOCKING_OR_NOT(nb, MPI_Bcast(sb, n, t, root, w), MPI_Ibcast(sb, n, t, root, w, &req_));
        break;
    case GATHER:
        fill(s, sb, (size_t)n, seed, r, root);
        BLOCKING_OR_NOT(nb, MPI_Gather(sb, n, t, rb, n, t, root, w),
                        MPI_Igather(sb, n, t, rb, n, t, root, w, &req_));
        break;
    case SCATTER:
        if (r == root)
            for (int j = 0; j < p; j++)
                fill(s, sb + (size_t)j * blk, (size_t)n, seed, root, j);
        BLOCKING_OR_NOT(nb, MPI_Scatter(sb, n, t, rb, n, t, root, w),
                        MPI_Iscatter(sb, n, t, rb, n, t, root, w, &req_));
        break;
    case ALLGATHER:
        fill(s, sb, (size_t)n, seed, r, 0);
        BLOCKING_OR_NOT(nb, MPI_Allgather(sb, n, t, rb, n, t, w),
                        MPI_Iallgather(sb, n, t, rb, n, t, w, &req_));
        break;
    case ALLTOALL:
        for (int j = 0; j < p; j++)
            fill(s, sb + (size_t)j * blk, (size_t)n, seed, r, j);
        BLOCKING_OR_NOT(nb, MPI_Alltoall(sb, n, t, rb, n, t, w),
                        MPI_Ialltoall(sb, n, t, rb, n, t, w, &req_));
        break;
    default:
        break;
    }
    switch (op) {
    case BCAST:
        if (r != root)
            shape_check(s, sb, (size_t)n, seed, root, 0, what);
        break;
    case GATHER:
        if (r == root)
            for (int j = 0; j < p; j++)
                shape_check(s, rb + (size_t)j * blk, (size_t)n, seed, j, root, what);
        break;
    case SCATTER:
        shape_check(s, rb, (size_t)n, seed, root, r, what);
        break;
    case ALLGATHER:
        for (int j = 0; j < p; j++)
            shape_check(s, rb + (size_t)j * blk, (size_t)n, seed, j, 0, what);
        break;
    case ALLTOALL:
        for (int j = 0; j < p; j++)
            shape_check(s, rb + (size_t)j * blk, (size_t)n, seed, j, r, what);
        break;
    default:
        break;
    }
    free(sb);
    free(rb);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int p;
    MTEST_CALL(MPI_Comm_size(MPI_COMM_WORLD, &p));
    struct shape shapes[2];
    make_shapes(&shapes[0], &shapes[1]);
    /* Packed bytes per block (struct: 12 per element): 12 B, 1.2 KiB (slots), 36 KiB
     * (eager), 240 KiB (rendezvous, staging areas), 1.2 MiB (beyond them). */
    static const int counts[] = {1, 100, 3000, 20000, 100000};
    int seed = 1;
    for (int k = 0; k < 2; k++) {
        const struct shape *s = &shapes[k];
        for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++) {
            int n = counts[c];
            if (k == 1 && n > 20000)
                continue; /* the vector's elements are twice as large */
            for (int op = 0; op < NOPS; op++) {
                /* Everyone-to-everyone calls move p times the data per rank: keep them
                 * below a few MiB. */
                if ((op == ALLGATHER || op == ALLTOALL) && (size_t)n * (size_t)p > 200000)
                    continue;
                for (int nb = 0; nb < 2; nb++) {
                    int root = (seed % p);
                    run(s, (enum op)op, nb, n, root, seed++);
                }
            }
        }
    }
    /* Several nonblocking calls outstanding at once, completed in reverse order. */
    {
        int r;
        MTEST_CALL(MPI_Comm_rank(MPI_COMM_WORLD, &r));
        const struct shape *s = &shapes[0];
        int n = 20000;
        size_t blk = (size_t)n * s->extent;
        unsigned char *b[3];
        MPI_Request req[3];
        for (int i = 0; i < 3; i++) {
            b[i] = mtest_malloc(blk);
            if (r == i % p)
                shape_fill(s, b[i], (size_t)n, 900 + i, i % p, 0, SEND_HOLE);
            else
                memset(b[i], RECV_HOLE, blk);
            MTEST_CALL(MPI_Ibcast(b[i], n, s->type, i % p, MPI_COMM_WORLD, &req[i]));
        }
        for (int i = 2; i >= 0; i--)
            MTEST_CALL(MPI_Wait(&req[i], MPI_STATUS_IGNORE));
        for (int i = 0; i < 3; i++) {
            if (r != i % p)
                shape_check(s, b[i], (size_t)n, 900 + i, i % p, 0, "overlapping MPI_Ibcast");
            free(b[i]);
        }
    }
    MTEST_CALL(MPI_Type_free(&shapes[0].type));
    MTEST_CALL(MPI_Type_free(&shapes[1].type));
    return mtest_finalize();
}
