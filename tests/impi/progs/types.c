#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
/* Every predefined MPI-1 type (and MPI_LONG_LONG_INT, MPI_SIGNED_CHAR), the pair types
   and two derived types, exchanged between every pair of ranks, so that ranks of
   different IMPI clients convert through external32 (IMPI 1.2.2) and ranks of one
   client stay native. Values are chosen to fit external32's sizes (MPI_LONG is 4
   bytes there) and to show byte order. Also MPI_ANY_SOURCE receives, MPI_Get_count in
   native elements, persistent and buffered sends, MPI_Sendrecv_replace. */
#define N 5
struct rec { char c; double d; int i[3]; long l; short s; };
static int errs = 0;
#define CHECK(cond, ...) do { if (!(cond)) { errs++; if (errs < 20) { printf(__VA_ARGS__); printf("\n"); } } } while (0)

/* Fills n elements of kind k for sender s (seed), or checks them. */
static void fill(int k, void *buf, int s) {
    for (int i = 0; i < N; i++) {
        long v = (long)s * 1000 + i * 7 + 1;
        switch (k) {
        case 0: ((char *)buf)[i] = (char)('a' + (s + i) % 26); break;
        case 1: ((short *)buf)[i] = (short)(-v * 3); break;
        case 2: ((int *)buf)[i] = (int)(-v * 100003); break;
        case 3: ((long *)buf)[i] = -v * 200003; break;
        case 4: ((unsigned char *)buf)[i] = (unsigned char)(200 + s + i); break;
        case 5: ((unsigned short *)buf)[i] = (unsigned short)(60000 + s + i); break;
        case 6: ((unsigned *)buf)[i] = 4000000000u + (unsigned)v; break;
        case 7: ((unsigned long *)buf)[i] = 4000000000ul + (unsigned long)v; break;
        case 8: ((float *)buf)[i] = (float)v / 8.0f + 0.5f; break;
        case 9: ((double *)buf)[i] = (double)v / 3.0 - 1e10; break;
        case 10: ((long double *)buf)[i] = (long double)v / 3.0L + 1e100L; break;
        case 11: ((unsigned char *)buf)[i] = (unsigned char)(s * 31 + i); break; /* MPI_BYTE */
        case 12: ((long long *)buf)[i] = -(long long)v * 12345678901LL; break;
        case 13: ((signed char *)buf)[i] = (signed char)(-100 + s + i); break;
        }
    }
}
static const char *names[] = {"MPI_CHAR", "MPI_SHORT", "MPI_INT", "MPI_LONG", "MPI_UNSIGNED_CHAR",
    "MPI_UNSIGNED_SHORT", "MPI_UNSIGNED", "MPI_UNSIGNED_LONG", "MPI_FLOAT", "MPI_DOUBLE",
    "MPI_LONG_DOUBLE", "MPI_BYTE", "MPI_LONG_LONG_INT", "MPI_SIGNED_CHAR"};
static size_t sizes[] = {1, 2, 4, sizeof(long), 1, 2, 4, sizeof(long), 4, 8, sizeof(long double), 1, 8, 1};

int main(int argc, char **argv) {
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Datatype types[] = {MPI_CHAR, MPI_SHORT, MPI_INT, MPI_LONG, MPI_UNSIGNED_CHAR,
        MPI_UNSIGNED_SHORT, MPI_UNSIGNED, MPI_UNSIGNED_LONG, MPI_FLOAT, MPI_DOUBLE,
        MPI_LONG_DOUBLE, MPI_BYTE, MPI_LONG_LONG_INT, MPI_SIGNED_CHAR};
    int nt = sizeof(types) / sizeof(types[0]);
    unsigned char sb[N * 16], rb[N * 16], want[N * 16];
    for (int d = 1; d < size; d++) {
        int to = (rank + d) % size, from = (rank - d + size) % size;
        for (int k = 0; k < nt; k++) {
            memset(sb, 0, sizeof sb); memset(rb, 0, sizeof rb); memset(want, 0, sizeof want);
            fill(k, sb, rank);
            fill(k, want, from);
            MPI_Status st;
            /* Alternate named and wildcard sources. */
            MPI_Sendrecv(sb, N, types[k], to, k, rb, N, types[k], (k % 2) ? MPI_ANY_SOURCE : from, k,
                         MPI_COMM_WORLD, &st);
            int cnt = -1;
            MPI_Get_count(&st, types[k], &cnt);
            CHECK(cnt == N && st.MPI_SOURCE == from, "rank %d: %s from %d: count %d source %d", rank, names[k], from, cnt, st.MPI_SOURCE);
            size_t cmp = k == 10 ? 10 : sizes[k]; /* x87 long double: 10 value bytes of 16 */
            for (int i = 0; i < N; i++)
                if (memcmp(rb + i * sizes[k], want + i * sizes[k], cmp)) {
                    CHECK(0, "rank %d: %s from %d: element %d differs", rank, names[k], from, i);
                    break;
                }
        }
        /* Pair types. */
        struct { float v; int i; } fi[N], fir[N];
        struct { double v; int i; } di[N], dir[N];
        struct { long v; int i; } li[N], lir[N];
        struct { short v; int i; } si[N], sir[N];
        int ii[2 * N], iir[2 * N];
        for (int i = 0; i < N; i++) {
            fi[i].v = rank + i * 0.25f; fi[i].i = -rank - i;
            di[i].v = rank * 1e-5 + i; di[i].i = rank * 10 + i;
            li[i].v = -rank * 100000L - i; li[i].i = i;
            si[i].v = (short)(-rank - i); si[i].i = 70000 + rank;
            ii[2 * i] = rank; ii[2 * i + 1] = -i;
        }
        MPI_Sendrecv(fi, N, MPI_FLOAT_INT, to, 100, fir, N, MPI_FLOAT_INT, from, 100, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Sendrecv(di, N, MPI_DOUBLE_INT, to, 101, dir, N, MPI_DOUBLE_INT, from, 101, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Sendrecv(li, N, MPI_LONG_INT, to, 102, lir, N, MPI_LONG_INT, from, 102, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Sendrecv(si, N, MPI_SHORT_INT, to, 103, sir, N, MPI_SHORT_INT, from, 103, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Sendrecv(ii, N, MPI_2INT, to, 104, iir, N, MPI_2INT, from, 104, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (int i = 0; i < N; i++) {
            CHECK(fir[i].v == from + i * 0.25f && fir[i].i == -from - i, "rank %d: MPI_FLOAT_INT %d", rank, i);
            CHECK(dir[i].v == from * 1e-5 + i && dir[i].i == from * 10 + i, "rank %d: MPI_DOUBLE_INT %d", rank, i);
            CHECK(lir[i].v == -from * 100000L - i && lir[i].i == i, "rank %d: MPI_LONG_INT %d", rank, i);
            CHECK(sir[i].v == (short)(-from - i) && sir[i].i == 70000 + from, "rank %d: MPI_SHORT_INT %d", rank, i);
            CHECK(iir[2 * i] == from && iir[2 * i + 1] == -i, "rank %d: MPI_2INT %d", rank, i);
        }
        long rep[N];
        for (int i = 0; i < N; i++) rep[i] = -(long)rank * 11 - i;
        MPI_Sendrecv_replace(rep, N, MPI_LONG, to, 105, from, 105, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (int i = 0; i < N; i++) CHECK(rep[i] == -(long)from * 11 - i, "rank %d: MPI_Sendrecv_replace MPI_LONG %d", rank, i);
        /* A derived struct type and a strided vector, long enough to span packets. */
        MPI_Datatype rt, vt;
        int bl[5] = {1, 1, 3, 1, 1};
        MPI_Aint disp[5];
        struct rec r0;
        MPI_Aint base;
        MPI_Get_address(&r0, &base);
        MPI_Get_address(&r0.c, &disp[0]); MPI_Get_address(&r0.d, &disp[1]);
        MPI_Get_address(&r0.i, &disp[2]); MPI_Get_address(&r0.l, &disp[3]);
        MPI_Get_address(&r0.s, &disp[4]);
        for (int j = 0; j < 5; j++) disp[j] -= base;
        MPI_Datatype ft[5] = {MPI_CHAR, MPI_DOUBLE, MPI_INT, MPI_LONG, MPI_SHORT};
        MPI_Type_create_struct(5, bl, disp, ft, &rt);
        MPI_Type_commit(&rt);
        MPI_Type_vector(3000, 1, 2, MPI_INT, &vt);
        MPI_Type_commit(&vt);
        int nrec = 2000;
        struct rec *rs = calloc(nrec, sizeof *rs), *rr = calloc(nrec, sizeof *rr);
        int *vs = malloc(6000 * sizeof(int)), *vr = malloc(6000 * sizeof(int));
        for (int i = 0; i < nrec; i++) {
            rs[i].c = (char)(rank + i); rs[i].d = rank + i / 7.0; rs[i].l = -(long)rank * 3 - i;
            rs[i].i[0] = i; rs[i].i[1] = -i; rs[i].i[2] = rank; rs[i].s = (short)(i - rank);
        }
        for (int i = 0; i < 6000; i++) { vs[i] = rank * 100000 + i; vr[i] = -1; }
        MPI_Request q[2];
        MPI_Irecv(rr, nrec, rt, from, 200, MPI_COMM_WORLD, &q[0]);
        MPI_Irecv(vr, 1, vt, MPI_ANY_SOURCE, 201, MPI_COMM_WORLD, &q[1]);
        MPI_Ssend(rs, nrec, rt, to, 200, MPI_COMM_WORLD);
        MPI_Send(vs, 1, vt, to, 201, MPI_COMM_WORLD);
        MPI_Status sts[2];
        MPI_Waitall(2, q, sts);
        int c1 = -1, c2 = -1;
        MPI_Get_count(&sts[0], rt, &c1);
        MPI_Get_count(&sts[1], vt, &c2);
        CHECK(c1 == nrec && c2 == 1, "rank %d: derived counts %d %d", rank, c1, c2);
        for (int i = 0; i < nrec; i++) {
            if (rr[i].c != (char)(from + i) || rr[i].d != from + i / 7.0 || rr[i].l != -(long)from * 3 - i
                || rr[i].i[0] != i || rr[i].i[1] != -i || rr[i].i[2] != from || rr[i].s != (short)(i - from)) {
                CHECK(0, "rank %d: struct element %d from %d", rank, i, from);
                break;
            }
        }
        for (int i = 0; i < 6000; i++) {
            int w = (i % 2) ? -1 : from * 100000 + i;
            if (vr[i] != w) { CHECK(0, "rank %d: vector element %d = %d (want %d)", rank, i, vr[i], w); break; }
        }
        /* Persistent and buffered sends of MPI_LONG. */
        long ls[N], lr[N];
        for (int i = 0; i < N; i++) ls[i] = -(long)rank * 7 - i;
        MPI_Request ps, pr;
        MPI_Send_init(ls, N, MPI_LONG, to, 300, MPI_COMM_WORLD, &ps);
        MPI_Recv_init(lr, N, MPI_LONG, from, 300, MPI_COMM_WORLD, &pr);
        for (int it = 0; it < 2; it++) {
            memset(lr, 0, sizeof lr);
            MPI_Start(&pr); MPI_Start(&ps);
            MPI_Wait(&ps, MPI_STATUS_IGNORE);
            MPI_Status s3;
            MPI_Wait(&pr, &s3);
            int c3; MPI_Get_count(&s3, MPI_LONG, &c3);
            CHECK(c3 == N, "rank %d: persistent count %d", rank, c3);
            for (int i = 0; i < N; i++) CHECK(lr[i] == -(long)from * 7 - i, "rank %d: persistent MPI_LONG %d", rank, i);
        }
        MPI_Request_free(&ps); MPI_Request_free(&pr);
        int bsz = 1024 + MPI_BSEND_OVERHEAD;
        void *bb = malloc(bsz);
        MPI_Buffer_attach(bb, bsz);
        memset(lr, 0, sizeof lr);
        MPI_Irecv(lr, N, MPI_LONG, from, 301, MPI_COMM_WORLD, &pr);
        MPI_Bsend(ls, N, MPI_LONG, to, 301, MPI_COMM_WORLD);
        MPI_Wait(&pr, MPI_STATUS_IGNORE);
        for (int i = 0; i < N; i++) CHECK(lr[i] == -(long)from * 7 - i, "rank %d: buffered MPI_LONG %d", rank, i);
        MPI_Buffer_detach(&bb, &bsz);
        free(bb);
        MPI_Type_free(&rt); MPI_Type_free(&vt);
        free(rs); free(rr); free(vs); free(vr);
    }
    int tot = 0;
    MPI_Allreduce(&errs, &tot, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) { if (tot == 0) printf(" No Errors\n"); else printf(" Found %d errors\n", tot); }
    MPI_Finalize();
    return 0;
}
