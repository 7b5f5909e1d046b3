/*
 * mtest.h - small helper library for the oxmpi C conformance programs.
 *
 * Every program includes this header FIRST (it sets feature-test macros before any system
 * header).  It uses only MPI-1.2 point-to-point and environment functions, so the suite can
 * check an implementation that has nothing else yet: no collectives, no communicator
 * creation.
 *
 * Conventions
 *   - mtest_init() writes the pid to the file named by $MTEST_PIDFILE (if set), calls
 *     MPI_Init, and installs MPI_ERRORS_RETURN on MPI_COMM_WORLD and MPI_COMM_SELF, so that
 *     every failing call is reported with file and line by MTEST_CALL instead of aborting
 *     inside the library.  The error handler that was installed before is remembered in
 *     mtest_initial_errhandler.
 *   - MTEST_CALL(call) aborts the job on any error; MTEST_CHECK / MTEST_EQ record a failed
 *     check ("rank R: file:line: what: expected X got Y") and go on.
 *   - return mtest_finalize(); sums the failures of all ranks on rank 0, which prints
 *     exactly " No Errors" when there were none, then calls MPI_Finalize.  The exit status
 *     is 0 only when every rank passed.
 *
 * Reserved traffic: mtest_barrier() and mtest_finalize() exchange messages on
 * MPI_COMM_WORLD with tag MTEST_TAG (32767, the smallest MPI_TAG_UB the standard allows).
 * Programs never use that tag.  Rank 0 always sends first in both protocols, so non-zero
 * ranks never send mtest traffic before rank 0 has finished its own test part: rank 0 may
 * post MPI_ANY_SOURCE + MPI_ANY_TAG receives freely.  Other ranks must not have a receive
 * with both wildcards pending while rank 0 could already be in mtest_barrier/finalize.
 */
#ifndef MTEST_H
#define MTEST_H

#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include <mpi.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* MPI_Errhandler_set/get are MPI-1 functions (removed from the standard in MPI-3.0).  oxmpi
 * implements MPI-1.2 and exports them; MPICH 4 declares them; Open MPI 4 exports them from
 * libmpi but its header turns every use into a compile error unless built with MPI-1
 * compatibility.  Declare them ourselves in that case. */
#if defined(OPEN_MPI) && defined(OMPI_OMIT_MPI1_COMPAT_DECLS) && OMPI_OMIT_MPI1_COMPAT_DECLS
#undef MPI_Errhandler_set
#undef MPI_Errhandler_get
int MPI_Errhandler_set(MPI_Comm comm, MPI_Errhandler errhandler);
int MPI_Errhandler_get(MPI_Comm comm, MPI_Errhandler *errhandler);
#endif

/* GCC >= 11 checks array parameters: MPICH's header declares `MPI_Status array_of_statuses[]`
 * and defines MPI_STATUSES_IGNORE as (MPI_Status *)1, so every correct use of
 * MPI_STATUSES_IGNORE in MPI_Waitall & co. draws a -Wstringop-overflow false positive. */
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 11
#pragma GCC diagnostic ignored "-Wstringop-overflow"
#endif

#define MTEST_TAG 32767
#define MTEST_MAX_PRINTED 20

static struct {
    int rank;
    int size;
    int errors;
    int printed;
    MPI_Errhandler initial_errhandler;
} mtest = {-1, 0, 0, 0, MPI_ERRHANDLER_NULL};

#define mtest_initial_errhandler (mtest.initial_errhandler)

static inline void mtest_vreport(const char *file, int line, const char *fmt, va_list ap)
{
    char msg[1024];
    vsnprintf(msg, sizeof msg, fmt, ap);
    fprintf(stderr, "rank %d: %s:%d: %s\n", mtest.rank, file, line, msg);
    fflush(stderr);
}

/* Record one failed check (printing only the first MTEST_MAX_PRINTED per rank). */
static inline void mtest_fail_at(const char *file, int line, const char *fmt, ...)
{
    mtest.errors++;
    if (mtest.printed < MTEST_MAX_PRINTED) {
        va_list ap;
        va_start(ap, fmt);
        mtest_vreport(file, line, fmt, ap);
        va_end(ap);
        if (++mtest.printed == MTEST_MAX_PRINTED) {
            fprintf(stderr, "rank %d: (further errors not printed)\n", mtest.rank);
        }
    }
}

/* A fatal problem: print and abort the whole job. */
static inline void mtest_abort_at(const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    mtest_vreport(file, line, fmt, ap);
    va_end(ap);
    MPI_Abort(MPI_COMM_WORLD, 1);
    exit(1); /* MPI_Abort should not return */
}

static inline const char *mtest_errstr(int code)
{
    static char buf[MPI_MAX_ERROR_STRING + 64];
    int len = 0;
    if (MPI_Error_string(code, buf, &len) != MPI_SUCCESS) {
        snprintf(buf, sizeof buf, "(MPI_Error_string failed for code %d)", code);
    }
    return buf;
}

static inline int mtest_errclass(int code)
{
    int cls = -1;
    if (MPI_Error_class(code, &cls) != MPI_SUCCESS) {
        return -1;
    }
    return cls;
}

#define MTEST_CHECK(cond, ...)                                                                    \
    do {                                                                                          \
        if (!(cond)) {                                                                            \
            mtest_fail_at(__FILE__, __LINE__, __VA_ARGS__);                                       \
        }                                                                                         \
    } while (0)

/* Compare two integer values: "what: expected E got G". */
#define MTEST_EQ(what, expected, got)                                                             \
    do {                                                                                          \
        long long mtest_e_ = (long long)(expected), mtest_g_ = (long long)(got);                  \
        if (mtest_e_ != mtest_g_) {                                                               \
            mtest_fail_at(__FILE__, __LINE__, "%s: expected %lld got %lld", (what), mtest_e_,     \
                          mtest_g_);                                                              \
        }                                                                                         \
    } while (0)

/* Call an MPI function that must succeed; abort the job with file/line and the error
 * string otherwise. */
#define MTEST_CALL(call)                                                                          \
    do {                                                                                          \
        int mtest_rc_ = (call);                                                                   \
        if (mtest_rc_ != MPI_SUCCESS) {                                                           \
            mtest_abort_at(__FILE__, __LINE__, "%s failed: %s", #call, mtest_errstr(mtest_rc_));  \
        }                                                                                         \
    } while (0)

/* An MPI call that must fail with error class `cls` (under MPI_ERRORS_RETURN).  Evaluates to
 * nothing; records a failure with the call text otherwise. */
#define MTEST_EXPECT_CLASS(cls, call)                                                             \
    do {                                                                                          \
        int mtest_rc_ = (call);                                                                   \
        if (mtest_rc_ == MPI_SUCCESS) {                                                           \
            mtest_fail_at(__FILE__, __LINE__, "%s: expected error class %s got MPI_SUCCESS",      \
                          #call, #cls);                                                           \
        } else if (mtest_errclass(mtest_rc_) != (cls)) {                                          \
            mtest_fail_at(__FILE__, __LINE__, "%s: expected error class %s (%d) got %d (%s)",     \
                          #call, #cls, (int)(cls), mtest_errclass(mtest_rc_),                     \
                          mtest_errstr(mtest_rc_));                                               \
        }                                                                                         \
    } while (0)

/* Like MTEST_EXPECT_CLASS where the standard allows either of two classes. */
#define MTEST_EXPECT_CLASS2(cls1, cls2, call)                                                     \
    do {                                                                                          \
        int mtest_rc_ = (call);                                                                   \
        if (mtest_rc_ == MPI_SUCCESS) {                                                           \
            mtest_fail_at(__FILE__, __LINE__, "%s: expected error class %s or %s got MPI_SUCCESS", \
                          #call, #cls1, #cls2);                                                   \
        } else if (mtest_errclass(mtest_rc_) != (cls1) && mtest_errclass(mtest_rc_) != (cls2)) {  \
            mtest_fail_at(__FILE__, __LINE__, "%s: expected error class %s or %s got %d (%s)",    \
                          #call, #cls1, #cls2, mtest_errclass(mtest_rc_), mtest_errstr(mtest_rc_)); \
        }                                                                                         \
    } while (0)

#define MTEST_ABORT(...) mtest_abort_at(__FILE__, __LINE__, __VA_ARGS__)

/* Status checks: source, tag, and element count for a datatype. */
#define MTEST_STATUS(st, src, tag, type, count)                                                   \
    do {                                                                                          \
        int mtest_cnt_ = -12345;                                                                  \
        MTEST_EQ("status.MPI_SOURCE", (src), (st)->MPI_SOURCE);                                   \
        MTEST_EQ("status.MPI_TAG", (tag), (st)->MPI_TAG);                                         \
        MTEST_CALL(MPI_Get_count((st), (type), &mtest_cnt_));                                     \
        MTEST_EQ("MPI_Get_count", (count), mtest_cnt_);                                           \
    } while (0)

/* An empty status: source MPI_ANY_SOURCE, tag MPI_ANY_TAG, count 0, not cancelled. */
#define MTEST_EMPTY_STATUS(st)                                                                    \
    do {                                                                                          \
        int mtest_flag_ = -1;                                                                     \
        MTEST_STATUS((st), MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_BYTE, 0);                             \
        MTEST_CALL(MPI_Test_cancelled((st), &mtest_flag_));                                       \
        MTEST_EQ("MPI_Test_cancelled on empty status", 0, mtest_flag_);                           \
    } while (0)

/* The status of a communication with MPI_PROC_NULL. */
#define MTEST_PROC_NULL_STATUS(st)                                                                \
    MTEST_STATUS((st), MPI_PROC_NULL, MPI_ANY_TAG, MPI_BYTE, 0)

/* ---- deterministic data ------------------------------------------------------------------ */

/* xorshift64* generator; never seeded with 0. */
typedef struct {
    uint64_t s;
} mtest_rng;

static inline mtest_rng mtest_rng_new(uint64_t seed)
{
    mtest_rng r;
    r.s = seed * 0x9E3779B97F4A7C15ull + 0x2545F4914F6CDD1Dull;
    if (r.s == 0) {
        r.s = 1;
    }
    return r;
}

static inline uint64_t mtest_rng_next(mtest_rng *r)
{
    r->s ^= r->s >> 12;
    r->s ^= r->s << 25;
    r->s ^= r->s >> 27;
    return r->s * 0x2545F4914F6CDD1Dull;
}

/* Uniform in [0, n). */
static inline uint64_t mtest_rng_below(mtest_rng *r, uint64_t n)
{
    return n ? mtest_rng_next(r) % n : 0;
}

/* The pattern for `seed`: 64-bit word w of it is a hash of (seed, w), in the machine's byte
 * order, so shifted, repeated or swapped blocks are detected and filling is fast. */
static inline uint64_t mtest_pattern_word(uint64_t seed, uint64_t w)
{
    uint64_t x = seed * 0x9E3779B97F4A7C15ull ^ (w + 0x632BE59BD9B4E019ull) * 0xC2B2AE3D27D4EB4Full;
    x ^= x >> 31;
    x *= 0x94D049BB133111EBull;
    x ^= x >> 29;
    return x;
}

static inline unsigned char mtest_pattern_byte(uint64_t seed, size_t i)
{
    uint64_t x = mtest_pattern_word(seed, i / 8);
    unsigned char b[8];
    memcpy(b, &x, 8);
    return b[i % 8];
}

static inline void mtest_fill(void *buf, size_t n, uint64_t seed)
{
    unsigned char *p = (unsigned char *)buf;
    size_t words = n / 8;
    for (size_t w = 0; w < words; w++) {
        uint64_t x = mtest_pattern_word(seed, w);
        memcpy(p + 8 * w, &x, 8);
    }
    for (size_t i = 8 * words; i < n; i++) {
        p[i] = mtest_pattern_byte(seed, i);
    }
}

/* Check a filled buffer; records one failure naming the first bad byte.  Returns the number
 * of wrong bytes. */
#define mtest_verify(buf, n, seed, what) mtest_verify_at(__FILE__, __LINE__, buf, n, seed, what)
static inline size_t mtest_verify_at(const char *file, int line, const void *buf, size_t n,
                                     uint64_t seed, const char *what)
{
    const unsigned char *p = (const unsigned char *)buf;
    size_t bad = 0, first = 0;
    size_t words = n / 8;
    for (size_t w = 0; w < words; w++) {
        uint64_t x = mtest_pattern_word(seed, w), y;
        memcpy(&y, p + 8 * w, 8);
        if (x != y) {
            for (size_t k = 0; k < 8; k++) {
                if (p[8 * w + k] != mtest_pattern_byte(seed, 8 * w + k) && bad++ == 0) {
                    first = 8 * w + k;
                }
            }
        }
    }
    for (size_t i = 8 * words; i < n; i++) {
        if (p[i] != mtest_pattern_byte(seed, i) && bad++ == 0) {
            first = i;
        }
    }
    if (bad) {
        mtest_fail_at(file, line, "%s: %zu of %zu bytes wrong, first at byte %zu: expected %u got %u",
                      what, bad, n, first, (unsigned)mtest_pattern_byte(seed, first),
                      (unsigned)p[first]);
    }
    return bad;
}

/* Check that n bytes all equal `value` (guard areas, untouched buffers). */
#define mtest_verify_const(buf, n, value, what)                                                   \
    mtest_verify_const_at(__FILE__, __LINE__, buf, n, value, what)
static inline size_t mtest_verify_const_at(const char *file, int line, const void *buf, size_t n,
                                           unsigned char value, const char *what)
{
    const unsigned char *p = (const unsigned char *)buf;
    size_t bad = 0, first = 0;
    for (size_t i = 0; i < n; i++) {
        if (p[i] != value) {
            if (bad++ == 0) {
                first = i;
            }
        }
    }
    if (bad) {
        mtest_fail_at(file, line, "%s: %zu of %zu bytes changed, first at byte %zu: expected %u got %u",
                      what, bad, n, first, (unsigned)value, (unsigned)p[first]);
    }
    return bad;
}

static inline void *mtest_malloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) {
        MTEST_ABORT("malloc(%zu) failed", n);
    }
    return p;
}

static inline void mtest_sleep_ms(int ms)
{
    struct timespec ts;
    ts.tv_sec = ms / 1000;
    ts.tv_nsec = (long)(ms % 1000) * 1000000L;
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

/* Environment flag: set and not "0". */
static inline int mtest_env_flag(const char *name)
{
    const char *v = getenv(name);
    return v && *v && strcmp(v, "0") != 0;
}

/* MPI_TAG_UB of MPI_COMM_WORLD (MPI_Attr_get is MPI-1; deprecated since MPI-2). */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
static inline int mtest_tag_ub(void)
{
    int *value = NULL, flag = 0;
    MTEST_CALL(MPI_Attr_get(MPI_COMM_WORLD, MPI_TAG_UB, &value, &flag));
    if (!flag || !value) {
        MTEST_ABORT("MPI_Attr_get(MPI_TAG_UB): attribute not set");
    }
    return *value;
}

static inline void mtest_set_errhandler(MPI_Comm comm, MPI_Errhandler eh)
{
    MTEST_CALL(MPI_Errhandler_set(comm, eh));
}

static inline MPI_Errhandler mtest_get_errhandler(MPI_Comm comm)
{
    MPI_Errhandler eh = MPI_ERRHANDLER_NULL;
    MTEST_CALL(MPI_Errhandler_get(comm, &eh));
    return eh;
}
#pragma GCC diagnostic pop

/* ---- start-up and shut-down -------------------------------------------------------------- */

/* Append this process's pid to $MTEST_PIDFILE (used by the runner's failure mode to check
 * that no process of a job outlives it).  One write() with O_APPEND, so lines never mix. */
static inline void mtest_write_pidfile(void)
{
    const char *path = getenv("MTEST_PIDFILE");
    if (!path || !*path) {
        return;
    }
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT, 0644);
    if (fd < 0) {
        fprintf(stderr, "mtest: cannot open MTEST_PIDFILE %s: %s\n", path, strerror(errno));
        return;
    }
    char line[32];
    int n = snprintf(line, sizeof line, "%ld\n", (long)getpid());
    if (write(fd, line, (size_t)n) != n) {
        fprintf(stderr, "mtest: cannot write MTEST_PIDFILE %s\n", path);
    }
    close(fd);
}

/* Initialise MPI without touching the error handlers. */
static inline void mtest_init_plain(int *argc, char ***argv)
{
    mtest_write_pidfile();
    int rc = MPI_Init(argc, argv);
    if (rc != MPI_SUCCESS) {
        fprintf(stderr, "MPI_Init failed with code %d\n", rc);
        exit(1);
    }
    MTEST_CALL(MPI_Comm_rank(MPI_COMM_WORLD, &mtest.rank));
    MTEST_CALL(MPI_Comm_size(MPI_COMM_WORLD, &mtest.size));
}

static inline void mtest_init(int *argc, char ***argv)
{
    mtest_init_plain(argc, argv);
    mtest.initial_errhandler = mtest_get_errhandler(MPI_COMM_WORLD);
    mtest_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    mtest_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
}

static inline int mtest_rank(void)
{
    return mtest.rank;
}

static inline int mtest_size(void)
{
    return mtest.size;
}

/* A barrier over MPI_COMM_WORLD built from point-to-point messages (rank 0 sends first). */
static inline void mtest_barrier(void)
{
    int token = 0;
    if (mtest.size == 1) {
        return;
    }
    if (mtest.rank == 0) {
        for (int r = 1; r < mtest.size; r++) {
            MTEST_CALL(MPI_Send(&token, 1, MPI_INT, r, MTEST_TAG, MPI_COMM_WORLD));
        }
        for (int r = 1; r < mtest.size; r++) {
            MTEST_CALL(MPI_Recv(&token, 1, MPI_INT, r, MTEST_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        }
        for (int r = 1; r < mtest.size; r++) {
            MTEST_CALL(MPI_Send(&token, 1, MPI_INT, r, MTEST_TAG, MPI_COMM_WORLD));
        }
    } else {
        MTEST_CALL(MPI_Recv(&token, 1, MPI_INT, 0, MTEST_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        MTEST_CALL(MPI_Send(&token, 1, MPI_INT, 0, MTEST_TAG, MPI_COMM_WORLD));
        MTEST_CALL(MPI_Recv(&token, 1, MPI_INT, 0, MTEST_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    }
}

/* Sum the failures of all ranks at rank 0, print the verdict, finalize.  Returns the exit
 * status for main(). */
static inline int mtest_finalize(void)
{
    int total = mtest.errors;
    if (mtest.size > 1) {
        if (mtest.rank == 0) {
            int go = 1;
            for (int r = 1; r < mtest.size; r++) {
                MTEST_CALL(MPI_Send(&go, 1, MPI_INT, r, MTEST_TAG, MPI_COMM_WORLD));
            }
            for (int r = 1; r < mtest.size; r++) {
                int e = 0;
                MTEST_CALL(MPI_Recv(&e, 1, MPI_INT, r, MTEST_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
                total += e;
            }
        } else {
            int go = 0;
            MTEST_CALL(MPI_Recv(&go, 1, MPI_INT, 0, MTEST_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            MTEST_CALL(MPI_Send(&mtest.errors, 1, MPI_INT, 0, MTEST_TAG, MPI_COMM_WORLD));
        }
    }
    if (mtest.rank == 0) {
        if (total == 0) {
            printf(" No Errors\n");
        } else {
            printf(" Found %d errors\n", total);
        }
        fflush(stdout);
    }
    MTEST_CALL(MPI_Finalize());
    return mtest.errors ? 1 : (mtest.rank == 0 && total ? 1 : 0);
}

/* For a program that spawns copies of itself: mtest_init, then the parent
 * intercommunicator (MPI_COMM_NULL in the job the test started). */
static inline MPI_Comm mtest_init_spawned(int *argc, char ***argv)
{
    mtest_init(argc, argv);
    MPI_Comm parent = MPI_COMM_NULL;
    MTEST_CALL(MPI_Comm_get_parent(&parent));
    return parent;
}

/* A spawned child's end: finalize, and exit status 1 when one of its checks failed (its
 * failures are reported on stderr after the printf-style `who`, since no " No Errors"
 * line speaks for it). */
static inline int mtest_child_finalize(const char *who, ...)
{
    int errors = mtest.errors;
    if (errors) {
        va_list ap;
        va_start(ap, who);
        vfprintf(stderr, who, ap);
        va_end(ap);
        fprintf(stderr, ": %d error(s)\n", errors);
    }
    MPI_Finalize();
    return errors ? 1 : 0;
}

/* Print " No Errors" for a program that has nothing to do at this size and finish. */
static inline int mtest_skip(const char *why)
{
    if (mtest.rank == 0) {
        fprintf(stderr, "skipped: %s\n", why);
    }
    return mtest_finalize();
}

#endif /* MTEST_H */
