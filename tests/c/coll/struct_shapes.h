/*
 * struct_shapes.h - non-contiguous element shapes and byte patterns shared by the
 * collective tests on derived datatypes (struct_coll, struct_pipe). Include after mtest.h.
 */
#ifndef COLL_STRUCT_SHAPES_H
#define COLL_STRUCT_SHAPES_H

#include <stddef.h>

#define SEND_HOLE 0xA5
#define RECV_HOLE 0x5A

/* A committed datatype whose elements are `extent` bytes apart, and which of an
 * element's bytes its type map covers. */
struct shape {
    const char *name;
    MPI_Datatype type;
    size_t extent;
    unsigned char data[48]; /* 1 where one element's byte is part of the type map */
};

/* The byte at index i of the block `from` sends to `to` in a test identified by seed. */
static inline unsigned char pat(int seed, int from, int to, size_t i)
{
    return (unsigned char)(((unsigned)seed * 131u + (unsigned)from * 7919u + (unsigned)to * 104729u +
                            (unsigned)i * 2654435761u) >> 13);
}

/* n elements of the block `from` sends to `to`, holes set to `hole`. */
static inline void shape_fill(const struct shape *s, unsigned char *buf, size_t n, int seed,
                              int from, int to, unsigned char hole)
{
    for (size_t i = 0; i < n * s->extent; i++)
        buf[i] = s->data[i % s->extent] ? pat(seed, from, to, i) : hole;
}

/* Checks n received elements of that block (holes must still be RECV_HOLE). */
#define shape_check(s, buf, n, seed, from, to, what)                                              \
    shape_check_at(__FILE__, __LINE__, s, buf, n, seed, from, to, what)
static inline void shape_check_at(const char *file, int line, const struct shape *s,
                                  const unsigned char *buf, size_t n, int seed, int from, int to,
                                  const char *what)
{
    for (size_t i = 0; i < n * s->extent; i++) {
        unsigned char want = s->data[i % s->extent] ? pat(seed, from, to, i) : RECV_HOLE;
        if (buf[i] != want) {
            mtest_fail_at(file, line,
                          "%s %s: block from %d to %d, byte %zu of %zu: got 0x%02x, want 0x%02x",
                          what, s->name, from, to, i, n * s->extent, buf[i], want);
            return;
        }
    }
}

/* A struct of nfields scalars of `types` (sizes in `sizes`) at byte offsets `disp`,
 * resized to `extent` and committed. */
static inline void shape_struct(struct shape *s, const char *name, int nfields, const MPI_Aint *disp,
                                const MPI_Datatype *types, const int *sizes, size_t extent)
{
    MPI_Datatype tmp;
    int bl[8];
    for (int k = 0; k < nfields; k++)
        bl[k] = 1;
    MTEST_CALL(MPI_Type_create_struct(nfields, bl, disp, types, &tmp));
    MTEST_CALL(MPI_Type_create_resized(tmp, 0, (MPI_Aint)extent, &s->type));
    MTEST_CALL(MPI_Type_free(&tmp));
    MTEST_CALL(MPI_Type_commit(&s->type));
    s->name = name;
    s->extent = extent;
    memset(s->data, 0, sizeof s->data);
    for (int k = 0; k < nfields; k++)
        memset(s->data + disp[k], 1, (size_t)sizes[k]);
}

/* The blocking call, or the nonblocking one (which names its request `&req_`) followed
 * by MPI_Wait. */
#define BLOCKING_OR_NOT(nb, blocking, nonblocking)                                                \
    do {                                                                                          \
        MPI_Request req_ = MPI_REQUEST_NULL;                                                      \
        if (nb) {                                                                                 \
            MTEST_CALL(nonblocking);                                                              \
            MTEST_CALL(MPI_Wait(&req_, MPI_STATUS_IGNORE));                                       \
        } else {                                                                                  \
            MTEST_CALL(blocking);                                                                 \
        }                                                                                         \
    } while (0)

#endif
