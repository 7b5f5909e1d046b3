/*
 * Every point-to-point call with derived datatypes: MPI_Send / Bsend / Ssend / Rsend, their
 * nonblocking and persistent forms, MPI_Sendrecv and MPI_Sendrecv_replace, with
 *   - a struct with holes (staged through packing),
 *   - contiguous derived types whose data does not start at the buffer address (a struct
 *     whose only block is at displacement 8, and a resized type with a negative lower bound),
 *   - MPI_BOTTOM with absolute addresses on both sides,
 *   - sender and receiver using different types with the same type signature,
 *   - a receive buffer too small for the message: MPI_ERR_TRUNCATE, the elements that fit
 *     (including part of an element) are written and nothing else.
 * Rank r exchanges with r^1 (with itself when r^1 does not exist).
 */
#include "mtest.h"

#include <stddef.h>

#define N 64

static int me, peer;

struct rec {
    int id;
    char pad1[4];
    double x;
    short s[3];
    char pad2[2];
    float f;
};

static MPI_Datatype t_rec;   /* id, x, s[3], f: holes at pad1, pad2 */
static MPI_Datatype t_off;   /* 4 ints at displacement 8: contiguous but not at the base */
static MPI_Datatype t_neg;   /* MPI_INT resized to lb -4, extent 4 */
static MPI_Datatype t_ivec;  /* every other int of 2*N ints */
static MPI_Datatype t_flat;  /* the same signature as t_rec: int, double, 3 short, float */

static void make_types(void)
{
    int bl[4] = {1, 1, 3, 1};
    MPI_Aint d[4] = {offsetof(struct rec, id), offsetof(struct rec, x), offsetof(struct rec, s),
                     offsetof(struct rec, f)};
    MPI_Datatype ty[4] = {MPI_INT, MPI_DOUBLE, MPI_SHORT, MPI_FLOAT};
    MPI_Datatype tmp;
    MTEST_CALL(MPI_Type_create_struct(4, bl, d, ty, &tmp));
    MTEST_CALL(MPI_Type_create_resized(tmp, 0, sizeof(struct rec), &t_rec));
    MTEST_CALL(MPI_Type_free(&tmp));
    MTEST_CALL(MPI_Type_commit(&t_rec));

    int bl1[1] = {4};
    MPI_Aint d1[1] = {8};
    MPI_Datatype ty1[1] = {MPI_INT};
    MTEST_CALL(MPI_Type_create_struct(1, bl1, d1, ty1, &t_off));
    MTEST_CALL(MPI_Type_commit(&t_off));

    MTEST_CALL(MPI_Type_create_resized(MPI_INT, -4, 4, &t_neg));
    MTEST_CALL(MPI_Type_commit(&t_neg));

    MTEST_CALL(MPI_Type_vector(N, 1, 2, MPI_INT, &t_ivec));
    MTEST_CALL(MPI_Type_commit(&t_ivec));

    /* Packed back to back: int at 0, double at 4, shorts at 12, float at 18 (size 22). */
    MPI_Aint d2[4] = {0, 4, 12, 18};
    MTEST_CALL(MPI_Type_create_struct(4, bl, d2, ty, &tmp));
    MTEST_CALL(MPI_Type_create_resized(tmp, 0, 22, &t_flat));
    MTEST_CALL(MPI_Type_free(&tmp));
    MTEST_CALL(MPI_Type_commit(&t_flat));
}

static void fill_recs(struct rec *r, int n, int seed)
{
    memset(r, 0x5a, sizeof(struct rec) * (size_t)n); /* holes hold 0x5a */
    for (int i = 0; i < n; i++) {
        r[i].id = seed * 1000 + i;
        r[i].x = seed + i * 0.5;
        r[i].s[0] = (short)(i + 1);
        r[i].s[1] = (short)(i + 2);
        r[i].s[2] = (short)(-i);
        r[i].f = (float)(i * 0.25);
    }
}

static int rec_ok(const struct rec *r, int i, int seed)
{
    return r->id == seed * 1000 + i && r->x == seed + i * 0.5 && r->s[0] == (short)(i + 1) &&
           r->s[1] == (short)(i + 2) && r->s[2] == (short)(-i) && r->f == (float)(i * 0.25);
}

/* Receive side check: n records with `seed`, holes untouched (0xa5 from the clear). */
static void check_recs(const struct rec *r, int n, int cap, int seed, const char *what)
{
    int bad = 0;
    for (int i = 0; i < n && !bad; i++) {
        if (!rec_ok(&r[i], i, seed)) {
            MTEST_CHECK(0, "%s: record %d wrong", what, i);
            bad = 1;
        }
        const unsigned char *p = (const unsigned char *)&r[i];
        for (size_t k = offsetof(struct rec, pad1); k < offsetof(struct rec, x); k++) {
            if (p[k] != 0xa5) {
                MTEST_CHECK(0, "%s: hole byte written in record %d", what, i);
                bad = 1;
                break;
            }
        }
    }
    mtest_verify_const(r + n, sizeof(struct rec) * (size_t)(cap - n), 0xa5, what);
}

typedef enum { STD, BUF, SYN, RDY, ISTD, IBUF, ISYN, IRDY, PSTD, PSYN } how_t;
static const char *how_name[] = {"Send", "Bsend", "Ssend", "Rsend", "Isend", "Ibsend",
                                 "Issend", "Irsend", "Send_init", "Ssend_init"};

/* Sends (buf, count, type) to the peer with a send mode while the peer's receive of
 * (rbuf, rcount, rtype) is already posted (so ready mode is correct). */
static void exchange(how_t how, const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                     int rcount, MPI_Datatype rtype, int tag, MPI_Status *st)
{
    MPI_Request rr, sr;
    int token = 0, token_in = 0;
    MTEST_CALL(MPI_Irecv(rbuf, rcount, rtype, peer, tag, MPI_COMM_WORLD, &rr));
    /* The peer's receive is posted once its token arrives. */
    MTEST_CALL(MPI_Sendrecv(&token, 1, MPI_INT, peer, 9000 + tag, &token_in, 1, MPI_INT, peer,
                            9000 + tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    void *s = (void *)sbuf;
    switch (how) {
    case STD: MTEST_CALL(MPI_Send(s, scount, stype, peer, tag, MPI_COMM_WORLD)); break;
    case BUF: MTEST_CALL(MPI_Bsend(s, scount, stype, peer, tag, MPI_COMM_WORLD)); break;
    case SYN: MTEST_CALL(MPI_Ssend(s, scount, stype, peer, tag, MPI_COMM_WORLD)); break;
    case RDY: MTEST_CALL(MPI_Rsend(s, scount, stype, peer, tag, MPI_COMM_WORLD)); break;
    case ISTD: MTEST_CALL(MPI_Isend(s, scount, stype, peer, tag, MPI_COMM_WORLD, &sr)); break;
    case IBUF: MTEST_CALL(MPI_Ibsend(s, scount, stype, peer, tag, MPI_COMM_WORLD, &sr)); break;
    case ISYN: MTEST_CALL(MPI_Issend(s, scount, stype, peer, tag, MPI_COMM_WORLD, &sr)); break;
    case IRDY: MTEST_CALL(MPI_Irsend(s, scount, stype, peer, tag, MPI_COMM_WORLD, &sr)); break;
    case PSTD: MTEST_CALL(MPI_Send_init(s, scount, stype, peer, tag, MPI_COMM_WORLD, &sr)); break;
    case PSYN: MTEST_CALL(MPI_Ssend_init(s, scount, stype, peer, tag, MPI_COMM_WORLD, &sr)); break;
    }
    if (how == PSTD || how == PSYN) {
        MTEST_CALL(MPI_Start(&sr));
        MTEST_CALL(MPI_Wait(&sr, MPI_STATUS_IGNORE));
        MTEST_CALL(MPI_Request_free(&sr));
    } else if (how >= ISTD) {
        MTEST_CALL(MPI_Wait(&sr, MPI_STATUS_IGNORE));
    }
    MTEST_CALL(MPI_Wait(&rr, st));
}

static void all_modes(void)
{
    struct rec s[N], r[N + 2];
    MPI_Status st;
    for (int how = STD; how <= PSYN; how++) {
        for (int k = 0; k < 2; k++) {
            int count = k == 0 ? 1 : N;
            fill_recs(s, N, me + 1);
            memset(r, 0xa5, sizeof r);
            exchange((how_t)how, s, count, t_rec, r, N + 2, t_rec, how * 2 + k, &st);
            check_recs(r, count, N + 2, peer + 1, how_name[how]);
            MTEST_STATUS(&st, peer, how * 2 + k, t_rec, count);
        }
    }
}

static void offsets(void)
{
    /* t_off: the 4 ints at displacement 8 of each buffer. */
    int s[8], r[8];
    MPI_Status st;
    for (int i = 0; i < 8; i++) {
        s[i] = (me + 1) * 100 + i;
        r[i] = -1;
    }
    exchange(STD, s, 1, t_off, r, 1, t_off, 40, &st);
    for (int i = 0; i < 8; i++) {
        int want = (i >= 2 && i < 6) ? (peer + 1) * 100 + i : -1;
        MTEST_EQ("struct at displacement 8: int", want, r[i]);
    }
    MTEST_STATUS(&st, peer, 40, t_off, 1);

    /* t_off on one side only: the receiver gets the 4 ints contiguously. */
    for (int i = 0; i < 8; i++) {
        r[i] = -1;
    }
    exchange(ISYN, s, 1, t_off, r, 4, MPI_INT, 41, &st);
    for (int i = 0; i < 8; i++) {
        int want = i < 4 ? (peer + 1) * 100 + i + 2 : -1;
        MTEST_EQ("struct at displacement 8 into ints", want, r[i]);
    }

    /* t_neg: lb -4, extent 4, so 3 elements at base are ints 0..2 (the lb does not move data). */
    for (int i = 0; i < 8; i++) {
        r[i] = -1;
    }
    exchange(PSTD, s + 1, 3, t_neg, r + 1, 3, t_neg, 42, &st);
    for (int i = 0; i < 8; i++) {
        int want = (i >= 1 && i < 4) ? (peer + 1) * 100 + i : -1;
        MTEST_EQ("resized negative lb: int", want, r[i]);
    }
}

static void bottom(void)
{
    /* Absolute addresses: a struct of (int a[3] here, double d there). */
    int a[3], ra[3] = {-1, -1, -1};
    double d, rd = -1;
    MPI_Datatype sty, rty;
    int bl[2] = {3, 1};
    MPI_Aint disp[2];
    MPI_Datatype ty[2] = {MPI_INT, MPI_DOUBLE};
    MPI_Status st;
    a[0] = me;
    a[1] = me + 10;
    a[2] = me + 20;
    d = me + 0.5;
    MTEST_CALL(MPI_Get_address(a, &disp[0]));
    MTEST_CALL(MPI_Get_address(&d, &disp[1]));
    MTEST_CALL(MPI_Type_create_struct(2, bl, disp, ty, &sty));
    MTEST_CALL(MPI_Type_commit(&sty));
    MTEST_CALL(MPI_Get_address(ra, &disp[0]));
    MTEST_CALL(MPI_Get_address(&rd, &disp[1]));
    MTEST_CALL(MPI_Type_create_struct(2, bl, disp, ty, &rty));
    MTEST_CALL(MPI_Type_commit(&rty));
    exchange(STD, MPI_BOTTOM, 1, sty, MPI_BOTTOM, 1, rty, 50, &st);
    MTEST_CHECK(ra[0] == peer && ra[1] == peer + 10 && ra[2] == peer + 20 && rd == peer + 0.5,
                "MPI_BOTTOM exchange: got %d %d %d %g", ra[0], ra[1], ra[2], rd);
    MTEST_STATUS(&st, peer, 50, rty, 1);

    /* MPI_BOTTOM on the send side only, received into a contiguous struct-like layout. */
    struct {
        int a[3];
        double d;
    } flat;
    memset(&flat, 0, sizeof flat);
    MPI_Datatype fty;
    MPI_Aint fd[2] = {0, offsetof(__typeof__(flat), d)};
    MTEST_CALL(MPI_Type_create_struct(2, bl, fd, ty, &fty));
    MTEST_CALL(MPI_Type_commit(&fty));
    exchange(IRDY, MPI_BOTTOM, 1, sty, &flat, 1, fty, 51, &st);
    MTEST_CHECK(flat.a[0] == peer && flat.a[2] == peer + 20 && flat.d == peer + 0.5,
                "MPI_BOTTOM send into a struct");
    MTEST_CALL(MPI_Type_free(&sty));
    MTEST_CALL(MPI_Type_free(&rty));
    MTEST_CALL(MPI_Type_free(&fty));
}

static void different_types(void)
{
    struct rec s[N], r[N];
    unsigned char flat[22 * N];
    MPI_Status st;
    /* struct with holes -> packed struct of the same signature -> back. */
    fill_recs(s, N, me + 1);
    memset(flat, 0, sizeof flat);
    exchange(ISTD, s, N, t_rec, flat, N, t_flat, 60, &st);
    MTEST_STATUS(&st, peer, 60, t_flat, N);
    int id;
    memcpy(&id, flat + 22 * 5, sizeof id);
    MTEST_EQ("flat record 5 id", (peer + 1) * 1000 + 5, id);
    /* Send the flat form back to the peer, received as records: the original values. */
    memset(r, 0xa5, sizeof r);
    exchange(SYN, flat, N, t_flat, r, N, t_rec, 61, &st);
    check_recs(r, N, N, me + 1, "records through the flat form and back");

    /* Every other int (vector) into a contiguous array, and contiguous into the vector. */
    int sv[2 * N], rv[2 * N];
    for (int i = 0; i < 2 * N; i++) {
        sv[i] = me * 10000 + i;
        rv[i] = -1;
    }
    exchange(STD, sv, 1, t_ivec, rv, N, MPI_INT, 62, &st);
    for (int i = 0; i < N; i++) {
        if (rv[i] != peer * 10000 + 2 * i) {
            MTEST_CHECK(0, "vector into ints: element %d is %d", i, rv[i]);
            break;
        }
    }
    for (int i = 0; i < 2 * N; i++) {
        rv[i] = -1;
    }
    exchange(STD, sv, N, MPI_INT, rv, 1, t_ivec, 63, &st);
    for (int i = 0; i < 2 * N; i++) {
        int want = i % 2 ? -1 : peer * 10000 + i / 2;
        if (rv[i] != want) {
            MTEST_CHECK(0, "ints into vector: element %d is %d, expected %d", i, rv[i], want);
            break;
        }
    }
    MTEST_STATUS(&st, peer, 63, t_ivec, 1);
}

static void sendrecv_calls(void)
{
    struct rec s[N], r[N];
    MPI_Status st;
    fill_recs(s, N, me + 1);
    memset(r, 0xa5, sizeof r);
    MTEST_CALL(MPI_Sendrecv(s, N, t_rec, peer, 70, r, N, t_rec, peer, 70, MPI_COMM_WORLD, &st));
    check_recs(r, N, N, peer + 1, "MPI_Sendrecv");
    MTEST_STATUS(&st, peer, 70, t_rec, N);

    /* Sendrecv_replace with a type with holes: the holes keep their bytes. */
    fill_recs(s, N, me + 1);
    for (int i = 0; i < N; i++) {
        memset(s[i].pad1, 0xa5, sizeof s[i].pad1);
        memset(s[i].pad2, 0xa5, sizeof s[i].pad2);
    }
    MTEST_CALL(MPI_Sendrecv_replace(s, N, t_rec, peer, 71, peer, 71, MPI_COMM_WORLD, &st));
    check_recs(s, N, N, peer + 1, "MPI_Sendrecv_replace");
    MTEST_STATUS(&st, peer, 71, t_rec, N);

    /* Sendrecv_replace with a vector: the odd ints stay. */
    int v[2 * N];
    for (int i = 0; i < 2 * N; i++) {
        v[i] = me * 10000 + i;
    }
    MTEST_CALL(MPI_Sendrecv_replace(v, 1, t_ivec, peer, 72, peer, 72, MPI_COMM_WORLD, &st));
    for (int i = 0; i < 2 * N; i++) {
        int want = i % 2 ? me * 10000 + i : peer * 10000 + i;
        if (v[i] != want) {
            MTEST_CHECK(0, "Sendrecv_replace vector: element %d is %d, expected %d", i, v[i], want);
            break;
        }
    }
}

static void truncation(void)
{
    struct rec s[N], r[N];
    MPI_Request rr;
    MPI_Status st;
    int token = 0, token_in = 0, rc;
    fill_recs(s, N, me + 1);
    memset(r, 0xa5, sizeof r);
    /* 10 records arrive; the receive has room for 3: MPI_ERR_TRUNCATE. */
    MTEST_CALL(MPI_Irecv(r, 3, t_rec, peer, 80, MPI_COMM_WORLD, &rr));
    MTEST_CALL(MPI_Sendrecv(&token, 1, MPI_INT, peer, 9080, &token_in, 1, MPI_INT, peer, 9080,
                            MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    MTEST_CALL(MPI_Send(s, 10, t_rec, peer, 80, MPI_COMM_WORLD));
    rc = MPI_Wait(&rr, &st);
    MTEST_CHECK(rc != MPI_SUCCESS && mtest_errclass(rc) == MPI_ERR_TRUNCATE,
                "truncated receive: expected MPI_ERR_TRUNCATE got %d", rc);
    /* What lands in the 3 records is not specified; nothing may land past them. */
    mtest_verify_const(r + 3, sizeof(struct rec) * (N - 3), 0xa5, "past a truncated receive");

    /* A message of 2.5 records (as its signature prefix): the half record is written. */
    int n_basic = 0;
    MPI_Datatype half;
    int bl[2] = {1, 1};
    MPI_Aint d[2] = {offsetof(struct rec, id), offsetof(struct rec, x)};
    MPI_Datatype ty[2] = {MPI_INT, MPI_DOUBLE};
    MTEST_CALL(MPI_Type_create_struct(2, bl, d, ty, &half));
    MTEST_CALL(MPI_Type_commit(&half));
    int bl2[2] = {2, 1};
    MPI_Aint d2[2] = {0, 2 * sizeof(struct rec)};
    MPI_Datatype ty2[2] = {t_rec, half}, two_and_half;
    MTEST_CALL(MPI_Type_create_struct(2, bl2, d2, ty2, &two_and_half));
    MTEST_CALL(MPI_Type_commit(&two_and_half));
    memset(r, 0xa5, sizeof r);
    exchange(STD, s, 1, two_and_half, r, N, t_rec, 81, &st);
    int cnt = -5;
    MTEST_CALL(MPI_Get_count(&st, t_rec, &cnt));
    MTEST_EQ("Get_count of 2.5 records", MPI_UNDEFINED, cnt);
    MTEST_CALL(MPI_Get_elements(&st, t_rec, &n_basic));
    MTEST_EQ("Get_elements of 2.5 records", 2 * 6 + 2, n_basic);
    MTEST_CHECK(rec_ok(&r[1], 1, peer + 1), "record 1 of 2.5");
    MTEST_CHECK(r[2].id == (peer + 1) * 1000 + 2 && r[2].x == peer + 1 + 1.0,
                "the half record's int and double");
    mtest_verify_const(&r[2].s, sizeof(struct rec) - offsetof(struct rec, s), 0xa5,
                       "rest of the half record");
    MTEST_CALL(MPI_Type_free(&half));
    MTEST_CALL(MPI_Type_free(&two_and_half));
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    me = mtest_rank();
    peer = (me ^ 1) < mtest_size() ? (me ^ 1) : me;
    make_types();
    int bsize = 2 * (N * (int)sizeof(struct rec) + MPI_BSEND_OVERHEAD) + 1024;
    void *bbuf = mtest_malloc((size_t)bsize);
    MTEST_CALL(MPI_Buffer_attach(bbuf, bsize));

    all_modes();
    offsets();
    bottom();
    different_types();
    sendrecv_calls();
    truncation();

    MTEST_CALL(MPI_Buffer_detach(&bbuf, &bsize));
    free(bbuf);
    MTEST_CALL(MPI_Type_free(&t_rec));
    MTEST_CALL(MPI_Type_free(&t_off));
    MTEST_CALL(MPI_Type_free(&t_neg));
    MTEST_CALL(MPI_Type_free(&t_ivec));
    MTEST_CALL(MPI_Type_free(&t_flat));
    return mtest_finalize();
}
