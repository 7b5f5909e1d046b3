/*
 * Rooted collectives on an intercommunicator where the members of the root's group
 * other than the root pass MPI_PROC_NULL together with arguments the standard makes
 * insignificant for them, as mpi4py does (count 0, MPI_BYTE with the call's operation,
 * NULL buffers and arrays): Bcast, Gather, Gatherv, Scatter, Scatterv and Reduce must
 * succeed there, and the root and the other group get their data. The other group
 * passes NULL for its receive side of Reduce. Every group takes the root's role in turn.
 *
 * inter_idle_strict.c compiles this file with IDLE_STRICT set: MPI_DATATYPE_NULL is
 * passed wherever no datatype is significant and the idle members pass MPI_OP_NULL to
 * MPI_Reduce (Open MPI 4.1.4 fails with MPI_ERR_TYPE, and MPI_ERR_OP), and the root
 * passes NULL as its insignificant sendbuf (MPICH 4.0.2: "Null buffer pointer").
 */
#ifndef IDLE_STRICT
#define IDLE_STRICT 0
#endif
/* The datatype passed where none is significant. */
#define NOTYPE (IDLE_STRICT ? MPI_DATATYPE_NULL : MPI_BYTE)
#include "mtest.h"
#include "common.h"

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int r = mtest_rank(), n = mtest_size();
    if (n < 2) return mtest_skip("needs 2 ranks");
    int color = r % 2, lr, ln, rn;
    MPI_Comm half, ic;
    MTEST_CALL(MPI_Comm_split(MPI_COMM_WORLD, color, r, &half));
    MTEST_CALL(MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, 1 - color, 91, &ic));
    MTEST_CALL(MPI_Comm_set_errhandler(ic, MPI_ERRORS_RETURN));
    MTEST_CALL(MPI_Comm_rank(ic, &lr));
    MTEST_CALL(MPI_Comm_size(ic, &ln));
    MTEST_CALL(MPI_Comm_remote_size(ic, &rn));
    enum { C = 3 };
    int *s = mtest_malloc(sizeof(int) * C * 8), *d = mtest_malloc(sizeof(int) * C * 8);
    int counts[8], displs[8];
    char what[96];

    for (int g = 0; g < 2; g++) {
        int gsize = g == color ? ln : rn;
        for (int rr = 0; rr < gsize; rr++) {
            int in_root_group = color == g, is_root = in_root_group && lr == rr;
            int idle = in_root_group && !is_root;
            int root = in_root_group ? (is_root ? MPI_ROOT : MPI_PROC_NULL) : rr;
            int seed = 100 + g * 8 + rr;
            /* The size of the group that is not the root's. */
            int others = in_root_group ? rn : ln;

            /* Bcast */
            snprintf(what, sizeof what, "Bcast group %d root %d", g, rr);
            for (int i = 0; i < C; i++) d[i] = is_root ? cval(seed, 0, i) : -1;
            if (idle) {
                MTEST_CALL(MPI_Bcast(NULL, 0, NOTYPE, root, ic));
            } else {
                MTEST_CALL(MPI_Bcast(d, C, MPI_INT, root, ic));
            }
            if (!in_root_group) CHECK_INTS(what, d, C, cval(seed, 0, (int)i));

            /* Reduce: the other group's sum arrives at the root. */
            snprintf(what, sizeof what, "Reduce group %d root %d", g, rr);
            for (int i = 0; i < C; i++) s[i] = cval(seed, lr, i) % 1000, d[i] = -1;
            if (idle) {
                MTEST_CALL(MPI_Reduce(NULL, NULL, 0, NOTYPE, IDLE_STRICT ? MPI_OP_NULL : MPI_SUM, root, ic));
            } else if (is_root) {
                MTEST_CALL(MPI_Reduce(IDLE_STRICT ? NULL : s, d, C, MPI_INT, MPI_SUM, root, ic));
                for (int i = 0; i < C; i++) {
                    int want = 0;
                    for (int k = 0; k < others; k++) want += cval(seed, k, i) % 1000;
                    MTEST_EQ(what, want, d[i]);
                }
            } else {
                MTEST_CALL(MPI_Reduce(s, NULL, C, MPI_INT, MPI_SUM, root, ic));
            }

            /* Gather and Gatherv: one block per member of the other group at the root. */
            for (int v = 0; v < 2; v++) {
                snprintf(what, sizeof what, "Gather%s group %d root %d", v ? "v" : "", g, rr);
                for (int i = 0; i < C; i++) s[i] = cval(seed + v, lr, i);
                for (int i = 0; i < C * others; i++) d[i] = -1;
                for (int k = 0; k < others; k++) counts[k] = C, displs[k] = (others - 1 - k) * C;
                if (idle && v) {
                    MTEST_CALL(MPI_Gatherv(NULL, 0, NOTYPE, NULL, NULL, NULL, NOTYPE, root, ic));
                } else if (idle) {
                    MTEST_CALL(MPI_Gather(NULL, 0, NOTYPE, NULL, 0, NOTYPE, root, ic));
                } else if (is_root && v) {
                    MTEST_CALL(MPI_Gatherv(NULL, 0, NOTYPE, d, counts, displs, MPI_INT, root, ic));
                } else if (is_root) {
                    MTEST_CALL(MPI_Gather(NULL, 0, NOTYPE, d, C, MPI_INT, root, ic));
                } else if (v) {
                    MTEST_CALL(MPI_Gatherv(s, C, MPI_INT, NULL, NULL, NULL, NOTYPE, root, ic));
                } else {
                    MTEST_CALL(MPI_Gather(s, C, MPI_INT, NULL, 0, NOTYPE, root, ic));
                }
                if (is_root) {
                    for (int k = 0; k < others; k++) {
                        int at = v ? (others - 1 - k) * C : k * C;
                        CHECK_INTS(what, d + at, C, cval(seed + v, k, (int)i));
                    }
                }
            }

            /* Scatter and Scatterv: the root's blocks go to the other group. */
            for (int v = 0; v < 2; v++) {
                snprintf(what, sizeof what, "Scatter%s group %d root %d", v ? "v" : "", g, rr);
                for (int k = 0; k < others; k++) counts[k] = C, displs[k] = (others - 1 - k) * C;
                for (int i = 0; i < C * others; i++) {
                    int k = v ? others - 1 - i / C : i / C;
                    s[i] = cval(seed + 7 + v, k, i % C);
                }
                for (int i = 0; i < C; i++) d[i] = -1;
                if (idle && v) {
                    MTEST_CALL(MPI_Scatterv(NULL, NULL, NULL, NOTYPE, NULL, 0, NOTYPE, root, ic));
                } else if (idle) {
                    MTEST_CALL(MPI_Scatter(NULL, 0, NOTYPE, NULL, 0, NOTYPE, root, ic));
                } else if (is_root && v) {
                    MTEST_CALL(MPI_Scatterv(s, counts, displs, MPI_INT, NULL, 0, NOTYPE, root, ic));
                } else if (is_root) {
                    MTEST_CALL(MPI_Scatter(s, C, MPI_INT, NULL, 0, NOTYPE, root, ic));
                } else if (v) {
                    MTEST_CALL(MPI_Scatterv(NULL, NULL, NULL, NOTYPE, d, C, MPI_INT, root, ic));
                } else {
                    MTEST_CALL(MPI_Scatter(NULL, 0, NOTYPE, d, C, MPI_INT, root, ic));
                }
                if (!in_root_group) CHECK_INTS(what, d, C, cval(seed + 7 + v, lr, (int)i));
            }
        }
    }
    /* The intercommunicator still works. */
    int one = 1, sum = 0;
    MTEST_CALL(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, ic));
    MTEST_EQ("MPI_Allreduce on the intercommunicator (remote group size)", rn, sum);
    free(s);
    free(d);
    MTEST_CALL(MPI_Comm_free(&ic));
    MTEST_CALL(MPI_Comm_free(&half));
    return mtest_finalize();
}
