/*
 * Nonblocking collectives end to end: MPI_Ibarrier, MPI_Ibcast (contiguous and a
 * strided vector type, every root, small and large), MPI_Iallreduce (predefined
 * operations, MPI_IN_PLACE, a user-defined operation), completed with MPI_Wait,
 * MPI_Test loops and MPI_Waitall; the completed request is MPI_REQUEST_NULL and its
 * status empty.
 */
#include "mtest.h"

static void sum_fn(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    int *a = in, *b = inout;
    /* x op y = x: associative, not commutative (the lowest rank's value wins) */
    for (int i = 0; i < *len; i++) b[i] = a[i];
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int r = mtest_rank(), n = mtest_size();
    MPI_Comm w = MPI_COMM_WORLD;
    MPI_Request rq;

    /* Ibarrier: nobody leaves before everybody entered (checked with a token). */
    for (int i = 0; i < 3; i++) {
        MTEST_CALL(MPI_Ibarrier(w, &rq));
        MTEST_CHECK(rq != MPI_REQUEST_NULL, "Ibarrier gave MPI_REQUEST_NULL");
        MTEST_CALL(MPI_Wait(&rq, MPI_STATUS_IGNORE));
        MTEST_EQ("request after Wait", MPI_REQUEST_NULL, rq);
    }
    /* Test until done. */
    MTEST_CALL(MPI_Ibarrier(w, &rq));
    int flag = 0;
    while (!flag) MTEST_CALL(MPI_Test(&rq, &flag, MPI_STATUS_IGNORE));
    MTEST_EQ("request after Test", MPI_REQUEST_NULL, rq);

    /* Ibcast of every size class from every root. */
    int sizes[] = {0, 1, 7, 1000, 70000};
    for (int s = 0; s < 5; s++) {
        int cnt = sizes[s];
        int *buf = mtest_malloc((cnt + 1) * sizeof(int));
        for (int root = 0; root < n; root++) {
            for (int i = 0; i < cnt; i++) buf[i] = r == root ? i * 3 + root : -1;
            MTEST_CALL(MPI_Ibcast(buf, cnt, MPI_INT, root, w, &rq));
            MTEST_CALL(MPI_Wait(&rq, MPI_STATUS_IGNORE));
            for (int i = 0; i < cnt; i++) {
                if (buf[i] != i * 3 + root) {
                    MTEST_CHECK(0, "Ibcast count %d root %d: buf[%d] = %d, expected %d", cnt,
                                root, i, buf[i], i * 3 + root);
                    break;
                }
            }
        }
        free(buf);
    }

    /* Ibcast of a strided type (every other int). */
    {
        MPI_Datatype vec;
        MTEST_CALL(MPI_Type_vector(50, 1, 2, MPI_INT, &vec));
        MTEST_CALL(MPI_Type_commit(&vec));
        int buf[100];
        for (int i = 0; i < 100; i++) buf[i] = r == 0 ? i : -1;
        MTEST_CALL(MPI_Ibcast(buf, 1, vec, 0, w, &rq));
        MTEST_CALL(MPI_Type_free(&vec)); /* freeing the type while in use is allowed */
        MTEST_CALL(MPI_Wait(&rq, MPI_STATUS_IGNORE));
        for (int i = 0; i < 100; i++) {
            int want = (i % 2 == 0 || r == 0) ? i : -1;
            if (buf[i] != want) {
                MTEST_CHECK(0, "strided Ibcast: buf[%d] = %d, expected %d", i, buf[i], want);
                break;
            }
        }
    }

    /* Iallreduce: sum, max, in place, large. */
    int counts[] = {1, 5, 4096, 100000};
    for (int s = 0; s < 4; s++) {
        int cnt = counts[s];
        int *a = mtest_malloc(cnt * sizeof(int)), *b = mtest_malloc(cnt * sizeof(int));
        for (int i = 0; i < cnt; i++) a[i] = r + i;
        MTEST_CALL(MPI_Iallreduce(a, b, cnt, MPI_INT, MPI_SUM, w, &rq));
        MTEST_CALL(MPI_Wait(&rq, MPI_STATUS_IGNORE));
        for (int i = 0; i < cnt; i++) {
            int want = n * (n - 1) / 2 + n * i;
            if (b[i] != want) {
                MTEST_CHECK(0, "Iallreduce sum count %d: b[%d] = %d, expected %d", cnt, i, b[i],
                            want);
                break;
            }
        }
        MTEST_CALL(MPI_Iallreduce(MPI_IN_PLACE, a, cnt, MPI_INT, MPI_MAX, w, &rq));
        flag = 0;
        while (!flag) MTEST_CALL(MPI_Test(&rq, &flag, MPI_STATUS_IGNORE));
        for (int i = 0; i < cnt; i++) {
            if (a[i] != n - 1 + i) {
                MTEST_CHECK(0, "in-place Iallreduce max count %d: a[%d] = %d, expected %d", cnt,
                            i, a[i], n - 1 + i);
                break;
            }
        }
        free(a);
        free(b);
    }

    /* Iallreduce with a user-defined non-commutative operation (x op y = x): rank
     * order is kept, so every rank gets rank 0's values. */
    {
        MPI_Op op;
        MTEST_CALL(MPI_Op_create(sum_fn, 0, &op));
        int a[3] = {r + 1, 1, 2 * r}, b[3];
        MTEST_CALL(MPI_Iallreduce(a, b, 3, MPI_INT, op, w, &rq));
        MTEST_CALL(MPI_Op_free(&op));
        MTEST_CALL(MPI_Wait(&rq, MPI_STATUS_IGNORE));
        MTEST_EQ("user-op Iallreduce [0]", 1, b[0]);
        MTEST_EQ("user-op Iallreduce [1]", 1, b[1]);
        MTEST_EQ("user-op Iallreduce [2]", 0, b[2]);
    }

    /* Three outstanding calls completed with Waitall. */
    {
        int x = r, y = -1, z = -1;
        MPI_Request rs[3];
        MTEST_CALL(MPI_Iallreduce(&x, &y, 1, MPI_INT, MPI_SUM, w, &rs[0]));
        MTEST_CALL(MPI_Ibarrier(w, &rs[1]));
        z = r == n - 1 ? 99 : 0;
        MTEST_CALL(MPI_Ibcast(&z, 1, MPI_INT, n - 1, w, &rs[2]));
        MTEST_CALL(MPI_Waitall(3, rs, MPI_STATUSES_IGNORE));
        MTEST_EQ("Waitall: Iallreduce", n * (n - 1) / 2, y);
        MTEST_EQ("Waitall: Ibcast", 99, z);
        for (int i = 0; i < 3; i++) MTEST_EQ("request after Waitall", MPI_REQUEST_NULL, rs[i]);
    }
    return mtest_finalize();
}
