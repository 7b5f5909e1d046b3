/*
 * The standard's particle-struct examples (MPI-4.1 section 5.1.14) in C:
 *   struct Partstruct { int type; double d[6]; char b[7]; } particle[1000];
 * Rank 0 sends to the last rank (itself on one rank):
 *   1. the whole array with the struct type (displacements from MPI_Get_address, extent
 *      set with MPI_Type_create_resized);
 *   2. only the particles of type 0, preceded by their number, as one MPI_BOTTOM message:
 *      a struct of (the count's absolute address, an indexed type of the particles);
 *   3. the same with runs of consecutive type-0 particles as one block each;
 *   4. the first two coordinates of every particle with an hvector of MPI_DOUBLE;
 *   5. the same with a pair of doubles resized to the extent of a particle, count 1000.
 * The receiver checks every value and that nothing else changed.
 */
#include "mtest.h"

#define NP 1000

struct Partstruct {
    int type;
    double d[6];
    char b[7];
};

static struct Partstruct particle[NP], got[NP];

static int type_of(int i)
{
    return (i / 5 + (i % 11 == 0)) % 3; /* runs of 5 and some isolated particles */
}

static void make(struct Partstruct *p, int seed)
{
    memset(p, 0x33, sizeof(struct Partstruct) * NP);
    for (int i = 0; i < NP; i++) {
        p[i].type = type_of(i);
        for (int k = 0; k < 6; k++) {
            p[i].d[k] = seed * 1.0e6 + i * 10.0 + k;
        }
        for (int k = 0; k < 7; k++) {
            p[i].b[k] = (char)('a' + (i + k) % 26);
        }
    }
}

static int same(const struct Partstruct *x, const struct Partstruct *y)
{
    return x->type == y->type && memcmp(x->d, y->d, sizeof x->d) == 0 &&
           memcmp(x->b, y->b, sizeof x->b) == 0;
}

static void clear_got(void)
{
    memset(got, 0, sizeof got);
    for (int i = 0; i < NP; i++) {
        got[i].type = -1;
    }
}

/* Rank 0 sends (sbuf, scount, stype); the last rank receives (rbuf, rcount, rtype). */
static void move(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                 MPI_Datatype rtype, int tag, MPI_Status *st)
{
    int me = mtest_rank(), last = mtest_size() - 1;
    MPI_Request r = MPI_REQUEST_NULL;
    if (me == last) {
        MTEST_CALL(MPI_Irecv(rbuf, rcount, rtype, 0, tag, MPI_COMM_WORLD, &r));
    }
    if (me == 0) {
        MTEST_CALL(MPI_Send(sbuf, scount, stype, last, tag, MPI_COMM_WORLD));
    }
    MTEST_CALL(MPI_Wait(&r, st));
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int me = mtest_rank(), last = mtest_size() - 1;
    int recv = me == last;
    MPI_Status st;
    make(particle, 1);

    /* The particle type. */
    MPI_Datatype Particlestruct, Particletype;
    MPI_Datatype type[3] = {MPI_INT, MPI_DOUBLE, MPI_CHAR};
    int blocklen[3] = {1, 6, 7};
    MPI_Aint disp[3], base, sizeofentry, lb;
    MTEST_CALL(MPI_Get_address(particle, &disp[0]));
    MTEST_CALL(MPI_Get_address(particle[0].d, &disp[1]));
    MTEST_CALL(MPI_Get_address(particle[0].b, &disp[2]));
    base = disp[0];
    for (int i = 0; i < 3; i++) {
        disp[i] = MPI_Aint_diff(disp[i], base);
    }
    MTEST_CALL(MPI_Type_create_struct(3, blocklen, disp, type, &Particlestruct));
    MTEST_CALL(MPI_Get_address(particle + 1, &sizeofentry));
    sizeofentry = MPI_Aint_diff(sizeofentry, base);
    MTEST_EQ("sizeofentry", (long long)sizeof(struct Partstruct), sizeofentry);
    MTEST_CALL(MPI_Type_create_resized(Particlestruct, 0, sizeofentry, &Particletype));
    MTEST_CALL(MPI_Type_commit(&Particletype));

    /* 1. The whole array. */
    clear_got();
    move(particle, NP, Particletype, got, NP, Particletype, 1, &st);
    if (recv) {
        MTEST_STATUS(&st, 0, 1, Particletype, NP);
        for (int i = 0; i < NP; i++) {
            if (!same(&got[i], &particle[i])) {
                MTEST_CHECK(0, "1: particle %d differs", i);
                break;
            }
        }
    }

    /* 2. Type-0 particles one block each, preceded by their count, from MPI_BOTTOM. */
    int zdisp[NP], zblock[NP], j = 0, nzero = 0;
    for (int i = 0; i < NP; i++) {
        if (particle[i].type == 0) {
            zdisp[j] = i;
            zblock[j] = 1;
            j++;
        }
    }
    nzero = j;
    MPI_Datatype Zparticles, Ztype;
    MTEST_CALL(MPI_Type_indexed(j, zblock, zdisp, Particletype, &Zparticles));
    int zzblock[2] = {1, 1};
    MPI_Aint zzdisp[2];
    MPI_Datatype zztype[2] = {MPI_INT, Zparticles};
    MTEST_CALL(MPI_Get_address(&j, &zzdisp[0]));
    MTEST_CALL(MPI_Get_address(particle, &zzdisp[1]));
    MTEST_CALL(MPI_Type_create_struct(2, zzblock, zzdisp, zztype, &Ztype));
    MTEST_CALL(MPI_Type_commit(&Ztype));

    /* The receiver takes a count and up to NP particles, all at absolute addresses. */
    int rcount = -1;
    MPI_Datatype Rtype;
    MPI_Aint rdisp[2];
    int rblock[2] = {1, NP};
    MPI_Datatype rtype[2] = {MPI_INT, Particletype};
    MTEST_CALL(MPI_Get_address(&rcount, &rdisp[0]));
    MTEST_CALL(MPI_Get_address(got, &rdisp[1]));
    MTEST_CALL(MPI_Type_create_struct(2, rblock, rdisp, rtype, &Rtype));
    MTEST_CALL(MPI_Type_commit(&Rtype));

    for (int variant = 2; variant <= 3; variant++) {
        if (variant == 3) {
            /* Runs of consecutive type-0 particles as one block. */
            MTEST_CALL(MPI_Type_free(&Ztype));
            MTEST_CALL(MPI_Type_free(&Zparticles));
            j = 0;
            for (int i = 0; i < NP;) {
                if (particle[i].type != 0) {
                    i++;
                    continue;
                }
                int k = i + 1;
                while (k < NP && particle[k].type == 0) {
                    k++;
                }
                zdisp[j] = i;
                zblock[j] = k - i;
                j++;
                i = k;
            }
            MTEST_CHECK(j < nzero, "3: the particle types have no runs (%d blocks)", j);
            MTEST_CALL(MPI_Type_indexed(j, zblock, zdisp, Particletype, &Zparticles));
            zztype[1] = Zparticles;
            MTEST_CALL(MPI_Type_create_struct(2, zzblock, zzdisp, zztype, &Ztype));
            MTEST_CALL(MPI_Type_commit(&Ztype));
        }
        clear_got();
        rcount = -1;
        int sent_count = j; /* the count goes out as the value of j */
        move(MPI_BOTTOM, 1, Ztype, MPI_BOTTOM, 1, Rtype, variant, &st);
        if (recv) {
            MTEST_EQ("type-0 count", sent_count, rcount);
            int elements = -1;
            MTEST_CALL(MPI_Get_elements(&st, Rtype, &elements));
            MTEST_EQ("basic elements (1 + 14 per particle)", 1 + 14 * nzero, elements);
            int k = 0;
            for (int i = 0; i < NP; i++) {
                if (particle[i].type == 0) {
                    if (!same(&got[k], &particle[i])) {
                        MTEST_CHECK(0, "%d: type-0 particle %d (index %d) differs", variant, k, i);
                        break;
                    }
                    k++;
                }
            }
            MTEST_CHECK(got[nzero].type == -1, "%d: a particle past the type-0 ones was written",
                        variant);
        }
        (void)sent_count;
    }
    /* In variant 2 j was the number of particles; in 3 the number of runs.  Both sent j. */

    /* 4. The first two coordinates of every particle: hvector of doubles. */
    MPI_Datatype Allpairs;
    MTEST_CALL(MPI_Type_get_extent(Particletype, &lb, &sizeofentry));
    MTEST_CALL(MPI_Type_create_hvector(NP, 2, sizeofentry, MPI_DOUBLE, &Allpairs));
    MTEST_CALL(MPI_Type_commit(&Allpairs));
    static double pairs[2 * NP];
    memset(pairs, 0, sizeof pairs);
    move(particle[0].d, 1, Allpairs, pairs, 2 * NP, MPI_DOUBLE, 4, &st);
    if (recv) {
        for (int i = 0; i < NP; i++) {
            if (pairs[2 * i] != particle[i].d[0] || pairs[2 * i + 1] != particle[i].d[1]) {
                MTEST_CHECK(0, "4: pair %d differs", i);
                break;
            }
        }
    }

    /* 5. The same with a resized pair, count NP, received into the particles' slots. */
    MPI_Datatype Twodouble, Onepair;
    MTEST_CALL(MPI_Type_contiguous(2, MPI_DOUBLE, &Twodouble));
    MTEST_CALL(MPI_Type_create_resized(Twodouble, 0, sizeofentry, &Onepair));
    MTEST_CALL(MPI_Type_commit(&Onepair));
    clear_got();
    move(particle[0].d, NP, Onepair, got[0].d, NP, Onepair, 5, &st);
    if (recv) {
        MTEST_STATUS(&st, 0, 5, Onepair, NP);
        for (int i = 0; i < NP; i++) {
            if (got[i].d[0] != particle[i].d[0] || got[i].d[1] != particle[i].d[1] ||
                got[i].d[2] != 0.0 || got[i].type != -1) {
                MTEST_CHECK(0, "5: particle %d wrong", i);
                break;
            }
        }
    }

    MTEST_CALL(MPI_Type_free(&Particlestruct));
    MTEST_CALL(MPI_Type_free(&Particletype));
    MTEST_CALL(MPI_Type_free(&Zparticles));
    MTEST_CALL(MPI_Type_free(&Ztype));
    MTEST_CALL(MPI_Type_free(&Rtype));
    MTEST_CALL(MPI_Type_free(&Allpairs));
    MTEST_CALL(MPI_Type_free(&Twodouble));
    MTEST_CALL(MPI_Type_free(&Onepair));
    return mtest_finalize();
}
