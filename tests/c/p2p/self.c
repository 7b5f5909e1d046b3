/*
 * Messages to oneself, on MPI_COMM_WORLD (own rank) and on MPI_COMM_SELF: MPI_Isend +
 * MPI_Recv and MPI_Irecv + MPI_Send from 0 bytes to 16 MiB, MPI_Sendrecv and
 * MPI_Sendrecv_replace to self, MPI_Bsend + MPI_Recv, MPI_Issend + MPI_Recv, MPI_Rsend into
 * a posted MPI_Irecv, probing one's own message, and order among many self-messages.
 * (16 MiB on MPI_COMM_WORLD only, to keep 8 oversubscribed ranks quick.)
 * Every rank does this independently.
 */
#include "mtest.h"

static const int sizes[] = {0, 1, 1024, 16384, 65536, 1 << 20, 16 << 20};
#define NSIZES ((int)(sizeof sizes / sizeof sizes[0]))

static void self_tests(MPI_Comm comm, int me, unsigned char *a, unsigned char *b, int nsizes)
{
    MPI_Request r;
    MPI_Status st;
    for (int s = 0; s < nsizes; s++) {
        int n = sizes[s];
        char what[80];
        /* Isend first, then a blocking receive */
        mtest_fill(a, (size_t)n, (uint64_t)n + 1);
        memset(b, 0, (size_t)n);
        MTEST_CALL(MPI_Isend(a, n, MPI_BYTE, me, 1, comm, &r));
        MTEST_CALL(MPI_Recv(b, n, MPI_BYTE, me, 1, comm, &st));
        MTEST_CALL(MPI_Wait(&r, MPI_STATUS_IGNORE));
        MTEST_STATUS(&st, me, 1, MPI_BYTE, n);
        snprintf(what, sizeof what, "MPI_Isend+MPI_Recv to self, %d bytes", n);
        mtest_verify(b, (size_t)n, (uint64_t)n + 1, what);

        /* receive posted first, then a blocking standard send */
        mtest_fill(a, (size_t)n, (uint64_t)n + 2);
        memset(b, 0, (size_t)n);
        /* both wildcards only on MPI_COMM_SELF: on MPI_COMM_WORLD such a receive could take
         * mtest's own traffic from a rank that is already finishing (see mtest.h) */
        MTEST_CALL(MPI_Irecv(b, n, MPI_BYTE, MPI_ANY_SOURCE,
                             comm == MPI_COMM_WORLD ? 2 : MPI_ANY_TAG, comm, &r));
        MTEST_CALL(MPI_Send(a, n, MPI_BYTE, me, 2, comm));
        MTEST_CALL(MPI_Wait(&r, &st));
        MTEST_STATUS(&st, me, 2, MPI_BYTE, n);
        snprintf(what, sizeof what, "MPI_Irecv+MPI_Send to self, %d bytes", n);
        mtest_verify(b, (size_t)n, (uint64_t)n + 2, what);

        /* synchronous: cannot complete before the receive, which comes after */
        mtest_fill(a, (size_t)n, (uint64_t)n + 3);
        MTEST_CALL(MPI_Issend(a, n, MPI_BYTE, me, 3, comm, &r));
        MTEST_CALL(MPI_Recv(b, n, MPI_BYTE, me, 3, comm, &st));
        MTEST_CALL(MPI_Wait(&r, MPI_STATUS_IGNORE));
        snprintf(what, sizeof what, "MPI_Issend+MPI_Recv to self, %d bytes", n);
        mtest_verify(b, (size_t)n, (uint64_t)n + 3, what);

        /* sendrecv to self */
        mtest_fill(a, (size_t)n, (uint64_t)n + 4);
        MTEST_CALL(MPI_Sendrecv(a, n, MPI_BYTE, me, 4, b, n, MPI_BYTE, me, 4, comm, &st));
        MTEST_STATUS(&st, me, 4, MPI_BYTE, n);
        snprintf(what, sizeof what, "MPI_Sendrecv to self, %d bytes", n);
        mtest_verify(b, (size_t)n, (uint64_t)n + 4, what);

        /* sendrecv_replace to self */
        mtest_fill(b, (size_t)n, (uint64_t)n + 5);
        MTEST_CALL(MPI_Sendrecv_replace(b, n, MPI_BYTE, me, 5, me, 5, comm, &st));
        MTEST_STATUS(&st, me, 5, MPI_BYTE, n);
        snprintf(what, sizeof what, "MPI_Sendrecv_replace to self, %d bytes", n);
        mtest_verify(b, (size_t)n, (uint64_t)n + 5, what);
    }

    /* buffered and ready mode, probe */
    {
        int bsize = 0;
        unsigned char small[1000];
        MTEST_CALL(MPI_Pack_size(1000, MPI_BYTE, comm, &bsize));
        bsize += MPI_BSEND_OVERHEAD;
        char *bbuf = mtest_malloc((size_t)bsize);
        MTEST_CALL(MPI_Buffer_attach(bbuf, bsize));
        mtest_fill(a, 1000, 6);
        MTEST_CALL(MPI_Bsend(a, 1000, MPI_BYTE, me, 6, comm));
        MTEST_CALL(MPI_Probe(me, 6, comm, &st));
        MTEST_STATUS(&st, me, 6, MPI_BYTE, 1000);
        MTEST_CALL(MPI_Recv(small, 1000, MPI_BYTE, me, 6, comm, &st));
        mtest_verify(small, 1000, 6, "MPI_Bsend to self");
        void *addr;
        MTEST_CALL(MPI_Buffer_detach(&addr, &bsize));
        free(bbuf);

        MTEST_CALL(MPI_Irecv(small, 1000, MPI_BYTE, me, 7, comm, &r));
        mtest_fill(a, 1000, 7);
        MTEST_CALL(MPI_Rsend(a, 1000, MPI_BYTE, me, 7, comm));
        MTEST_CALL(MPI_Wait(&r, &st));
        mtest_verify(small, 1000, 7, "MPI_Rsend to self");
    }

    /* order: 20 messages, tags 0..3; received per tag in reverse tag order */
    {
        int vals[20], in = -1;
        MPI_Request rr[20];
        for (int i = 0; i < 20; i++) {
            vals[i] = i;
            MTEST_CALL(MPI_Isend(&vals[i], 1, MPI_INT, me, 10 + i % 4, comm, &rr[i]));
        }
        for (int t = 3; t >= 0; t--) {
            for (int i = t; i < 20; i += 4) {
                MTEST_CALL(MPI_Recv(&in, 1, MPI_INT, me, 10 + t, comm, &st));
                MTEST_EQ("self message order within a tag", i, in);
            }
        }
        MTEST_CALL(MPI_Waitall(20, rr, MPI_STATUSES_IGNORE));
    }
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    unsigned char *a = mtest_malloc((size_t)sizes[NSIZES - 1]);
    unsigned char *b = mtest_malloc((size_t)sizes[NSIZES - 1]);
    self_tests(MPI_COMM_WORLD, mtest_rank(), a, b, NSIZES);
    self_tests(MPI_COMM_SELF, 0, a, b, NSIZES - 1); /* up to 1 MiB */
    free(a);
    free(b);
    return mtest_finalize();
}
