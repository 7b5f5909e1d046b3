/*
 * MPI_Bcast from every root, for zero, small, medium and large (rendezvous-sized,
 * scatter+allgather) messages, on MPI_COMM_WORLD and on a communicator with the ranks in
 * reverse order; a non-contiguous datatype (holes must stay untouched); guard areas.
 */
#include "mtest.h"
#include "common.h"

static void run(MPI_Comm comm, const char *name)
{
    int r, n;
    MTEST_CALL(MPI_Comm_rank(comm, &r));
    MTEST_CALL(MPI_Comm_size(comm, &n));
    static const int counts[] = {0, 1, 7, 1000, 5000, 70000};
    for (int root = 0; root < n; root++) {
        for (size_t k = 0; k < sizeof counts / sizeof counts[0]; k++) {
            int cnt = counts[k], seed = root * 31 + (int)k;
            gbuf b = gbuf_new((size_t)cnt, -1);
            if (r == root) {
                for (int i = 0; i < cnt; i++) b.p[i] = cval(seed, root, i);
            }
            MTEST_CALL(MPI_Bcast(b.p, cnt, MPI_INT, root, comm));
            char what[96];
            snprintf(what, sizeof what, "%s root %d count %d", name, root, cnt);
            CHECK_INTS(what, b.p, cnt, cval(seed, root, i));
            gbuf_guards(b, what);
            gbuf_free(&b);
        }
        /* A vector type: 3 blocks of 2 ints with stride 4; the holes keep their value. */
        MPI_Datatype vec;
        MTEST_CALL(MPI_Type_vector(3, 2, 4, MPI_INT, &vec));
        MTEST_CALL(MPI_Type_commit(&vec));
        int ext = 10, elems = 5; /* extent of vec is 10 ints */
        gbuf b = gbuf_new((size_t)(ext * elems), -7);
        if (r == root) {
            for (int i = 0; i < ext * elems; i++) b.p[i] = (i % ext) % 4 < 2 ? cval(root, 9, i) : -7;
        }
        MTEST_CALL(MPI_Bcast(b.p, elems, vec, root, comm));
        char what[96];
        snprintf(what, sizeof what, "%s vector type root %d", name, root);
        CHECK_INTS(what, b.p, ext * elems, (i % ext) % 4 < 2 && (i % ext) < 10 ? cval(root, 9, (int)i) : -7);
        gbuf_guards(b, what);
        gbuf_free(&b);
        MTEST_CALL(MPI_Type_free(&vec));
    }
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    run(MPI_COMM_WORLD, "world");
    MPI_Comm rev = reversed_world();
    run(rev, "reversed");
    MTEST_CALL(MPI_Comm_free(&rev));
    return mtest_finalize();
}
