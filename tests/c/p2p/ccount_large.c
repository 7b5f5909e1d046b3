/*
 * More than 2^31 elements in one message (MPI 4.1 large counts): MPI_Send_c / MPI_Recv_c of
 * 2^31 + 8 MPI_BYTEs from rank 0 to rank 1, the status read with MPI_Get_count_c,
 * MPI_Get_elements_c and MPI_Get_elements_x (exact) and with MPI_Get_count and
 * MPI_Get_elements (MPI_UNDEFINED: the count does not fit in an int); then MPI_Bcast_c of
 * the same 2^31 + 8 bytes back from rank 1. About 2 GiB per rank; runs at 2 ranks only.
 */
#include "mtest.h"
#include <stdint.h>
#include <string.h>

static unsigned char pat(size_t i, unsigned salt)
{
    return (unsigned char)((i * 131u) ^ (i >> 23) ^ salt);
}

/* Checks every 4093rd byte and the last 4096 (a full check would take long on a loaded
 * machine; the sampled positions cover every 2^12-byte stretch). */
static void verify(const char *what, const unsigned char *b, size_t len, unsigned salt)
{
    int bad = 0;
    for (size_t i = 0; i < len && bad < 5; i += 4093) {
        if (b[i] != pat(i, salt)) {
            MTEST_CHECK(0, "%s: byte %zu is %u, expected %u", what, i, b[i], pat(i, salt));
            bad++;
        }
    }
    for (size_t i = len - 4096; i < len && bad < 5; i++) {
        if (b[i] != pat(i, salt)) {
            MTEST_CHECK(0, "%s: byte %zu is %u, expected %u", what, i, b[i], pat(i, salt));
            bad++;
        }
    }
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int r = mtest_rank();
    if (mtest_size() != 2) {
        MTEST_ABORT("run at 2 ranks");
    }
    const MPI_Count count = ((MPI_Count)1 << 31) + 8;
    const size_t len = (size_t)count;
    unsigned char *b = mtest_malloc(len);

    if (r == 0) {
        for (size_t i = 0; i < len; i++) {
            b[i] = pat(i, 1);
        }
        MTEST_CALL(MPI_Send_c(b, count, MPI_BYTE, 1, 5, MPI_COMM_WORLD));
    } else {
        MPI_Status st;
        memset(b, 0, len);
        MTEST_CALL(MPI_Recv_c(b, count, MPI_BYTE, 0, 5, MPI_COMM_WORLD, &st));
        verify("MPI_Recv_c", b, len, 1);
        MPI_Count c = -1;
        int ci = 0;
        MTEST_CALL(MPI_Get_count_c(&st, MPI_BYTE, &c));
        MTEST_EQ("MPI_Get_count_c", count, c);
        c = -1;
        MTEST_CALL(MPI_Get_elements_c(&st, MPI_BYTE, &c));
        MTEST_EQ("MPI_Get_elements_c", count, c);
        c = -1;
        MTEST_CALL(MPI_Get_elements_x(&st, MPI_BYTE, &c));
        MTEST_EQ("MPI_Get_elements_x", count, c);
        MTEST_CALL(MPI_Get_count(&st, MPI_BYTE, &ci));
        MTEST_EQ("MPI_Get_count beyond INT_MAX", MPI_UNDEFINED, ci);
        ci = 0;
        MTEST_CALL(MPI_Get_elements(&st, MPI_BYTE, &ci));
        MTEST_EQ("MPI_Get_elements beyond INT_MAX", MPI_UNDEFINED, ci);
        /* Half as many 2-byte elements do fit in an int */
        MTEST_CALL(MPI_Get_count(&st, MPI_SHORT, &ci));
        MTEST_EQ("MPI_Get_count of shorts", (int)(count / 2), ci);
        for (size_t i = 0; i < len; i++) {
            b[i] = pat(i, 2);
        }
    }

    /* A collective with a count above 2^31 */
    if (r == 0) {
        memset(b, 0, len);
    }
    MTEST_CALL(MPI_Bcast_c(b, count, MPI_BYTE, 1, MPI_COMM_WORLD));
    verify("MPI_Bcast_c", b, len, 2);

    free(b);
    return mtest_finalize();
}
