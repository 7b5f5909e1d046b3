/*
 * Large-count collectives (MPI 4.1, the _c functions): every collective in its blocking,
 * nonblocking (MPI_I*_c) and persistent (MPI_*_init_c) form, with MPI_Count counts and
 * MPI_Aint displacement arrays, moving real data that each rank checks; a user operation
 * made with MPI_Op_create_c (its function receives an MPI_Count length) in MPI_Reduce_c,
 * MPI_Allreduce_c, MPI_Reduce_scatter_block_c, MPI_Reduce_scatter_c, MPI_Exscan_c (each in
 * the three forms) and MPI_Reduce_local_c. Neighbourhood collectives: nbc/ccount.
 * MPICH 4.0.2's MPI_Iscatter_c and MPI_Scatter_init_c fail at 3 or more ranks ("Invalid
 * communicator" from MPI_Wait): under another implementation's mpi.h (no OXMPI macro) those
 * two are left out.
 */
#include "mtest.h"
#include <string.h>

static int r, n;
static MPI_Op user; /* made with MPI_Op_create_c */

/* Runs one collective in form `mode`: 0 blocking, 1 nonblocking, 2 persistent (started
 * twice, so the second start must move the same data again). */
#define RUN(Name, name, ...)                                                                     \
    do {                                                                                         \
        MPI_Request rq_;                                                                         \
        if (mode == 0) {                                                                         \
            MTEST_CALL(MPI_##Name##_c(__VA_ARGS__));                                             \
        } else if (mode == 1) {                                                                  \
            MTEST_CALL(MPI_I##name##_c(__VA_ARGS__, &rq_));                                      \
            MTEST_CALL(MPI_Wait(&rq_, MPI_STATUS_IGNORE));                                       \
        } else {                                                                                 \
            MTEST_CALL(MPI_##Name##_init_c(__VA_ARGS__, MPI_INFO_NULL, &rq_));                   \
            for (int k_ = 0; k_ < 2; k_++) {                                                     \
                MTEST_CALL(MPI_Start(&rq_));                                                     \
                MTEST_CALL(MPI_Wait(&rq_, MPI_STATUS_IGNORE));                                   \
            }                                                                                    \
            MTEST_CALL(MPI_Request_free(&rq_));                                                  \
        }                                                                                        \
    } while (0)

static MPI_Count user_len_seen;

/* A commutative sum of ints with the large-count signature. */
static void csum(void *in, void *inout, MPI_Count *len, MPI_Datatype *dt)
{
    const int *a = in;
    int *b = inout;
    if (*dt != MPI_INT) {
        return;
    }
    if (*len > user_len_seen) {
        user_len_seen = *len;
    }
    for (MPI_Count i = 0; i < *len; i++) {
        b[i] += a[i];
    }
}

static int val(int from, int to, int k)
{
    return from * 1000 + to * 10 + k;
}

static void rooted(int mode, int root)
{
    int buf[5], sb[8], rb[64];
    MPI_Count rc[16];
    MPI_Aint dp[16];

    /* MPI_Bcast_c */
    for (int i = 0; i < 5; i++) {
        buf[i] = r == root ? val(root, 0, i) + mode : -1;
    }
    RUN(Bcast, bcast, buf, (MPI_Count)5, MPI_INT, root, MPI_COMM_WORLD);
    for (int i = 0; i < 5; i++) {
        MTEST_EQ("Bcast_c", val(root, 0, i) + mode, buf[i]);
    }

    /* MPI_Gather_c: 3 ints from each rank */
    for (int i = 0; i < 3; i++) {
        sb[i] = val(r, root, i);
    }
    memset(rb, -1, sizeof rb);
    RUN(Gather, gather, sb, (MPI_Count)3, MPI_INT, rb, (MPI_Count)3, MPI_INT, root, MPI_COMM_WORLD);
    if (r == root) {
        for (int p = 0; p < n; p++) {
            for (int i = 0; i < 3; i++) {
                MTEST_EQ("Gather_c", val(p, root, i), rb[3 * p + i]);
            }
        }
    }

    /* MPI_Gatherv_c: rank p sends p+1 ints, placed in reverse rank order with a gap */
    for (int i = 0; i < r + 1; i++) {
        sb[i] = val(r, root, i);
    }
    {
        MPI_Aint at = 0;
        for (int p = n - 1; p >= 0; p--) {
            rc[p] = p + 1;
            dp[p] = at;
            at += p + 2;
        }
    }
    memset(rb, -1, sizeof rb);
    RUN(Gatherv, gatherv, sb, (MPI_Count)(r + 1), MPI_INT, rb, rc, dp, MPI_INT, root, MPI_COMM_WORLD);
    if (r == root) {
        for (int p = 0; p < n; p++) {
            for (int i = 0; i < p + 1; i++) {
                MTEST_EQ("Gatherv_c", val(p, root, i), rb[dp[p] + i]);
            }
            MTEST_EQ("Gatherv_c gap", -1, rb[dp[p] + p + 1]);
        }
    }

    /* MPI_Scatter_c: 2 ints to each rank */
    for (int p = 0; p < n; p++) {
        for (int i = 0; i < 2; i++) {
            rb[2 * p + i] = val(root, p, i);
        }
    }
    memset(sb, -1, sizeof sb);
#if !defined(OXMPI)
    if (mode != 0) {
        for (int i = 0; i < 2; i++) {
            sb[i] = val(root, r, i);
        }
    } else
#endif
    RUN(Scatter, scatter, rb, (MPI_Count)2, MPI_INT, sb, (MPI_Count)2, MPI_INT, root, MPI_COMM_WORLD);
    for (int i = 0; i < 2; i++) {
        MTEST_EQ("Scatter_c", val(root, r, i), sb[i]);
    }

    /* MPI_Scatterv_c: rank p receives p+1 ints from the layout of the Gatherv_c above */
    for (int p = 0; p < n; p++) {
        for (int i = 0; i < p + 1; i++) {
            rb[dp[p] + i] = val(root, p, i);
        }
    }
    memset(sb, -1, sizeof sb);
    RUN(Scatterv, scatterv, rb, rc, dp, MPI_INT, sb, (MPI_Count)(r + 1), MPI_INT, root, MPI_COMM_WORLD);
    for (int i = 0; i < r + 1; i++) {
        MTEST_EQ("Scatterv_c", val(root, r, i), sb[i]);
    }

    /* MPI_Reduce_c with MPI_SUM and with the user operation */
    int in[4], out[4];
    for (int i = 0; i < 4; i++) {
        in[i] = r + i;
    }
    memset(out, -1, sizeof out);
    RUN(Reduce, reduce, in, out, (MPI_Count)4, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD);
    if (r == root) {
        for (int i = 0; i < 4; i++) {
            MTEST_EQ("Reduce_c", n * (n - 1) / 2 + n * i, out[i]);
        }
    }
    memset(out, -1, sizeof out);
    RUN(Reduce, reduce, in, out, (MPI_Count)4, MPI_INT, user, root, MPI_COMM_WORLD);
    if (r == root) {
        for (int i = 0; i < 4; i++) {
            MTEST_EQ("Reduce_c (user op)", n * (n - 1) / 2 + n * i, out[i]);
        }
    }
}

static void unrooted(int mode)
{
    int sb[64], rb[64];
    MPI_Count sc[16], rc[16];
    MPI_Aint sd[16], rd[16];
    MPI_Datatype ts[16];

    /* MPI_Allgather_c */
    for (int i = 0; i < 2; i++) {
        sb[i] = val(r, 0, i);
    }
    memset(rb, -1, sizeof rb);
    RUN(Allgather, allgather, sb, (MPI_Count)2, MPI_INT, rb, (MPI_Count)2, MPI_INT, MPI_COMM_WORLD);
    for (int p = 0; p < n; p++) {
        for (int i = 0; i < 2; i++) {
            MTEST_EQ("Allgather_c", val(p, 0, i), rb[2 * p + i]);
        }
    }

    /* MPI_Allgatherv_c: rank p contributes p+1 ints at displacement 2*p*(p+1)/2 + p */
    {
        MPI_Aint at = 0;
        for (int p = 0; p < n; p++) {
            rc[p] = p + 1;
            rd[p] = at;
            at += p + 2;
        }
    }
    for (int i = 0; i < r + 1; i++) {
        sb[i] = val(r, 1, i);
    }
    memset(rb, -1, sizeof rb);
    RUN(Allgatherv, allgatherv, sb, (MPI_Count)(r + 1), MPI_INT, rb, rc, rd, MPI_INT, MPI_COMM_WORLD);
    for (int p = 0; p < n; p++) {
        for (int i = 0; i < p + 1; i++) {
            MTEST_EQ("Allgatherv_c", val(p, 1, i), rb[rd[p] + i]);
        }
        MTEST_EQ("Allgatherv_c gap", -1, rb[rd[p] + p + 1]);
    }

    /* MPI_Alltoall_c: 2 ints per peer */
    for (int p = 0; p < n; p++) {
        for (int i = 0; i < 2; i++) {
            sb[2 * p + i] = val(r, p, i);
        }
    }
    memset(rb, -1, sizeof rb);
    RUN(Alltoall, alltoall, sb, (MPI_Count)2, MPI_INT, rb, (MPI_Count)2, MPI_INT, MPI_COMM_WORLD);
    for (int p = 0; p < n; p++) {
        for (int i = 0; i < 2; i++) {
            MTEST_EQ("Alltoall_c", val(p, r, i), rb[2 * p + i]);
        }
    }

    /* MPI_Alltoallv_c: p+1 ints to rank p; r+1 ints from every rank */
    {
        MPI_Aint s = 0, q = 0;
        for (int p = 0; p < n; p++) {
            sc[p] = p + 1;
            sd[p] = s;
            s += p + 1;
            rc[p] = r + 1;
            rd[p] = q;
            q += r + 2;
        }
    }
    for (int p = 0; p < n; p++) {
        for (int i = 0; i < p + 1; i++) {
            sb[sd[p] + i] = val(r, p, i);
        }
    }
    memset(rb, -1, sizeof rb);
    RUN(Alltoallv, alltoallv, sb, sc, sd, MPI_INT, rb, rc, rd, MPI_INT, MPI_COMM_WORLD);
    for (int p = 0; p < n; p++) {
        for (int i = 0; i < r + 1; i++) {
            MTEST_EQ("Alltoallv_c", val(p, r, i), rb[rd[p] + i]);
        }
        MTEST_EQ("Alltoallv_c gap", -1, rb[rd[p] + r + 1]);
    }

    /* MPI_Alltoallw_c: the same exchange with byte displacements */
    for (int p = 0; p < n; p++) {
        sd[p] *= (MPI_Aint)sizeof(int);
        rd[p] *= (MPI_Aint)sizeof(int);
        ts[p] = MPI_INT;
    }
    memset(rb, -1, sizeof rb);
    RUN(Alltoallw, alltoallw, sb, sc, sd, ts, rb, rc, rd, ts, MPI_COMM_WORLD);
    for (int p = 0; p < n; p++) {
        for (int i = 0; i < r + 1; i++) {
            MTEST_EQ("Alltoallw_c", val(p, r, i), rb[rd[p] / (MPI_Aint)sizeof(int) + i]);
        }
    }

    /* MPI_Allreduce_c with MPI_SUM and with the user operation */
    for (int i = 0; i < 3; i++) {
        sb[i] = r * 2 + i;
    }
    memset(rb, -1, sizeof rb);
    RUN(Allreduce, allreduce, sb, rb, (MPI_Count)3, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    for (int i = 0; i < 3; i++) {
        MTEST_EQ("Allreduce_c", n * (n - 1) + n * i, rb[i]);
    }
    user_len_seen = 0;
    memset(rb, -1, sizeof rb);
    RUN(Allreduce, allreduce, sb, rb, (MPI_Count)3, MPI_INT, user, MPI_COMM_WORLD);
    for (int i = 0; i < 3; i++) {
        MTEST_EQ("Allreduce_c (user op)", n * (n - 1) + n * i, rb[i]);
    }
    /* not every rank need apply the operation, but each that does gets all 3 elements */
    MTEST_CHECK(user_len_seen == 0 || user_len_seen == 3, "user function length %ld",
                (long)user_len_seen);

    /* MPI_Reduce_scatter_block_c: 2 ints per rank */
    for (int i = 0; i < 2 * n; i++) {
        sb[i] = r + i;
    }
    memset(rb, -1, sizeof rb);
    RUN(Reduce_scatter_block, reduce_scatter_block, sb, rb, (MPI_Count)2, MPI_INT, user, MPI_COMM_WORLD);
    for (int i = 0; i < 2; i++) {
        MTEST_EQ("Reduce_scatter_block_c", n * (n - 1) / 2 + n * (2 * r + i), rb[i]);
    }

    /* MPI_Reduce_scatter_c: rank p receives p+1 ints */
    {
        int tot = 0;
        for (int p = 0; p < n; p++) {
            rc[p] = p + 1;
            tot += p + 1;
        }
        for (int i = 0; i < tot; i++) {
            sb[i] = r + i;
        }
        int first = r * (r + 1) / 2;
        memset(rb, -1, sizeof rb);
        RUN(Reduce_scatter, reduce_scatter, sb, rb, rc, MPI_INT, user, MPI_COMM_WORLD);
        for (int i = 0; i < r + 1; i++) {
            MTEST_EQ("Reduce_scatter_c", n * (n - 1) / 2 + n * (first + i), rb[i]);
        }
    }

    /* MPI_Scan_c and MPI_Exscan_c */
    for (int i = 0; i < 2; i++) {
        sb[i] = r + 1 + i;
    }
    memset(rb, -1, sizeof rb);
    RUN(Scan, scan, sb, rb, (MPI_Count)2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    for (int i = 0; i < 2; i++) {
        MTEST_EQ("Scan_c", (r + 1) * (r + 2) / 2 + (r + 1) * i, rb[i]);
    }
    memset(rb, -1, sizeof rb);
    RUN(Exscan, exscan, sb, rb, (MPI_Count)2, MPI_INT, user, MPI_COMM_WORLD);
    if (r > 0) {
        for (int i = 0; i < 2; i++) {
            MTEST_EQ("Exscan_c", r * (r + 1) / 2 + r * i, rb[i]);
        }
    }
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    r = mtest_rank();
    n = mtest_size();
    if (n > 16) {
        MTEST_ABORT("at most 16 ranks");
    }

    MTEST_CALL(MPI_Op_create_c(csum, 1, &user));

    for (int mode = 0; mode < 3; mode++) {
        for (int root = 0; root < n; root++) {
            rooted(mode, root);
        }
        unrooted(mode);
    }

    /* MPI_Reduce_local_c with a predefined and with the user operation */
    {
        int a[6], b[6];
        for (int i = 0; i < 6; i++) {
            a[i] = i;
            b[i] = 10 * i;
        }
        MTEST_CALL(MPI_Reduce_local_c(a, b, (MPI_Count)6, MPI_INT, MPI_SUM));
        user_len_seen = 0;
        MTEST_CALL(MPI_Reduce_local_c(a, b, (MPI_Count)6, MPI_INT, user));
        for (int i = 0; i < 6; i++) {
            MTEST_EQ("Reduce_local_c", 12 * i, b[i]);
        }
        MTEST_EQ("Reduce_local_c user length", 6, user_len_seen);
    }

    MTEST_CALL(MPI_Op_free(&user));
    return mtest_finalize();
}
