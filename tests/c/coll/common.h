/*
 * common.h - helpers shared by the collective conformance programs (tests/c/coll).
 * Include after mtest.h.
 */
#ifndef COLL_COMMON_H
#define COLL_COMMON_H

/* The value element i of rank r contributes in a test identified by seed. */
static inline int cval(int seed, int r, int i)
{
    return (int)((unsigned)seed * 2654435761u + (unsigned)r * 40503u + (unsigned)i * 97u) & 0x3fffffff;
}

/* A buffer of n ints plus 4 guard ints on each side, all set to `fill`. */
typedef struct {
    int *base;
    int *p;
    size_t n;
} gbuf;

#define GUARD 4
#define GUARD_VAL ((int)0x5a5a5a5a)

static inline gbuf gbuf_new(size_t n, int fill)
{
    gbuf g;
    g.n = n;
    g.base = (int *)mtest_malloc((n + 2 * GUARD) * sizeof(int));
    for (size_t i = 0; i < n + 2 * GUARD; i++) {
        g.base[i] = GUARD_VAL;
    }
    g.p = g.base + GUARD;
    for (size_t i = 0; i < n; i++) {
        g.p[i] = fill;
    }
    return g;
}

#define gbuf_guards(g, what) gbuf_guards_at(__FILE__, __LINE__, &(g), what)
static inline void gbuf_guards_at(const char *file, int line, const gbuf *g, const char *what)
{
    for (size_t i = 0; i < GUARD; i++) {
        if (g->base[i] != GUARD_VAL || g->p[g->n + i] != GUARD_VAL) {
            mtest_fail_at(file, line, "%s: guard area overwritten", what);
            return;
        }
    }
}

static inline void gbuf_free(gbuf *g)
{
    free(g->base);
    g->base = g->p = NULL;
}

/* Compare n ints with the expected values exp(i); one failure line per call. */
#define CHECK_INTS(what, got, n, expr)                                                            \
    do {                                                                                          \
        for (size_t i_ = 0; i_ < (size_t)(n); i_++) {                                             \
            size_t i = i_;                                                                        \
            long long e_ = (long long)(expr), g_ = (long long)(got)[i_];                          \
            if (e_ != g_) {                                                                       \
                mtest_fail_at(__FILE__, __LINE__, "%s: element %zu: expected %lld got %lld",      \
                              (what), i_, e_, g_);                                                \
                break;                                                                            \
            }                                                                                     \
            (void)i;                                                                              \
        }                                                                                         \
    } while (0)

/* A communicator with the ranks of MPI_COMM_WORLD in reverse order. */
static inline MPI_Comm reversed_world(void)
{
    MPI_Comm c;
    MTEST_CALL(MPI_Comm_split(MPI_COMM_WORLD, 0, mtest_size() - mtest_rank(), &c));
    MTEST_CALL(MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN));
    return c;
}

#endif
