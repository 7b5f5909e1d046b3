/*
 * mtest-abi: oxmpi-header (MPICH 4.0.2's mpi.h lacks MPI_Comm_attach_buffer_c)
 *
 * Large-count calls given bad arguments, and the 32-bit forms given what only the _c forms
 * can hold: negative MPI_Count counts (MPI_ERR_COUNT) in point-to-point, collective and
 * MPI_Reduce_local_c calls, an MPI_Count count whose size in bytes no buffer can have
 * (MPI_ERR_COUNT), MPI_Aint displacements beyond any address (MPI_ERR_ARG), each message
 * naming the call and the argument; a buffer of more than INT_MAX bytes attached with
 * MPI_Buffer_attach_c, which MPI_Buffer_detach cannot report (MPI_ERR_VALUE_TOO_LARGE, the
 * buffer stays attached) and MPI_Buffer_detach_c can; MPI_Comm_attach_buffer_c and
 * MPI_Comm_detach_buffer_c with a buffered send through them.
 * Strict: MPICH 4.0.2 lacks the MPI-4.1 communicator buffers and checks no _c counts this way.
 */
#include "mtest.h"
#include <string.h>

/* An error that must have class `cls` and a message naming `call` and `arg`. */
#define EXPECT(cls, call, name, arg)                                                             \
    do {                                                                                         \
        int rc_ = (call);                                                                        \
        MTEST_EQ(name " class", (cls), mtest_errclass(rc_));                                     \
        if (rc_ != MPI_SUCCESS) {                                                                \
            char msg_[MPI_MAX_ERROR_STRING];                                                     \
            int len_ = 0;                                                                        \
            MPI_Error_string(rc_, msg_, &len_);                                                  \
            MTEST_CHECK(strstr(msg_, name) != NULL, "message of %s lacks the call: %s", name,   \
                        msg_);                                                                   \
            MTEST_CHECK(strstr(msg_, arg) != NULL, "message of %s lacks '%s': %s", name, arg,   \
                        msg_);                                                                   \
        }                                                                                        \
    } while (0)

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int r = mtest_rank(), n = mtest_size();
    int to = (r + 1) % n, from = (r + n - 1) % n;
    int buf[8] = {0}, out[8] = {0};
    MPI_Request rq;
    const MPI_Count huge = (MPI_Count)1 << 62;

    /* negative counts */
    EXPECT(MPI_ERR_COUNT, MPI_Send_c(buf, -1, MPI_INT, to, 0, MPI_COMM_WORLD), "MPI_Send_c",
           "count");
    EXPECT(MPI_ERR_COUNT, MPI_Recv_c(buf, -5, MPI_INT, from, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
           "MPI_Recv_c", "count");
    EXPECT(MPI_ERR_COUNT, MPI_Isend_c(buf, -2, MPI_INT, to, 0, MPI_COMM_WORLD, &rq),
           "MPI_Isend_c", "count");
    EXPECT(MPI_ERR_COUNT, MPI_Bcast_c(buf, -1, MPI_INT, 0, MPI_COMM_WORLD), "MPI_Bcast_c",
           "count");
    EXPECT(MPI_ERR_COUNT, MPI_Allreduce_c(buf, out, -3, MPI_INT, MPI_SUM, MPI_COMM_WORLD),
           "MPI_Allreduce_c", "count");
    EXPECT(MPI_ERR_COUNT, MPI_Reduce_local_c(buf, out, -1, MPI_INT, MPI_SUM),
           "MPI_Reduce_local_c", "count");
    {
        MPI_Count c[64];
        MPI_Aint d[64];
        for (int i = 0; i < n; i++) {
            c[i] = 1;
            d[i] = i;
        }
        c[n - 1] = -7;
        EXPECT(MPI_ERR_COUNT,
               MPI_Alltoallv_c(buf, c, d, MPI_INT, out, c, d, MPI_INT, MPI_COMM_WORLD),
               "MPI_Alltoallv_c", "counts");
        /* a displacement that times the extent is beyond any address */
        c[n - 1] = 1;
        d[n - 1] = huge;
        EXPECT(MPI_ERR_ARG,
               MPI_Allgatherv_c(buf, 1, MPI_INT, out, c, d, MPI_INT, MPI_COMM_WORLD),
               "MPI_Allgatherv_c", "displs");
    }

    /* a count whose size in bytes overflows: refused before any memory is touched */
    EXPECT(MPI_ERR_COUNT, MPI_Send_c(buf, huge, MPI_INT, to, 0, MPI_COMM_WORLD), "MPI_Send_c",
           "too large");

    /* a buffer of more than INT_MAX bytes (never used, so a small allocation stands in) */
    {
        void *small = mtest_malloc(64), *back = NULL;
        const MPI_Count big = ((MPI_Count)1 << 31) + 64;
        int isize = -1;
        MPI_Count csize = -1;
        MTEST_CALL(MPI_Buffer_attach_c(small, big));
        EXPECT(MPI_ERR_VALUE_TOO_LARGE, MPI_Buffer_detach(&back, &isize), "MPI_Buffer_detach",
               "size");
        MTEST_CALL(MPI_Buffer_detach_c(&back, &csize));
        MTEST_CHECK(back == small, "MPI_Buffer_detach_c returned another address");
        MTEST_EQ("MPI_Buffer_detach_c size", big, csize);
        EXPECT(MPI_ERR_ARG, MPI_Buffer_attach_c(small, -1), "MPI_Buffer_attach_c", "size");
        free(small);
    }

    /* a communicator's buffer, attached and detached with the _c forms */
    {
        MPI_Count size = 8 * (MPI_Count)sizeof(int) + MPI_BSEND_OVERHEAD, csize = -1;
        void *att = mtest_malloc((size_t)size), *back = NULL;
        MPI_Status st;
        MTEST_CALL(MPI_Comm_attach_buffer_c(MPI_COMM_WORLD, att, size));
        for (int i = 0; i < 8; i++) {
            buf[i] = r * 10 + i;
        }
        MTEST_CALL(MPI_Bsend_c(buf, 8, MPI_INT, to, 3, MPI_COMM_WORLD));
        MTEST_CALL(MPI_Recv_c(out, 8, MPI_INT, from, 3, MPI_COMM_WORLD, &st));
        for (int i = 0; i < 8; i++) {
            MTEST_EQ("buffered through the communicator's buffer", from * 10 + i, out[i]);
        }
        MTEST_CALL(MPI_Comm_detach_buffer_c(MPI_COMM_WORLD, &back, &csize));
        MTEST_CHECK(back == att, "MPI_Comm_detach_buffer_c returned another address");
        MTEST_EQ("MPI_Comm_detach_buffer_c size", size, csize);
        free(att);
    }

    return mtest_finalize();
}
