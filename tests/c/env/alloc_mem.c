/*
 * MPI_Alloc_mem / MPI_Free_mem: blocks of several sizes (0 included) are usable, distinct
 * and serve as message buffers; an info argument is accepted; a negative size is
 * MPI_ERR_ARG (or MPI_ERR_SIZE); the program goes on after the errors.
 *
 * oxmpi-only checks (skipped elsewhere): an impossible size (2^62 bytes) is MPI_ERR_NO_MEM
 * (MPICH 4.0.2 reports success); MPI_Free_mem of an address MPI_Alloc_mem did not
 * return, or of one already freed, is MPI_ERR_BASE instead of heap corruption; an invalid
 * info handle is MPI_ERR_INFO.
 */
#include "mtest.h"

static int is_oxmpi(void)
{
    char v[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    MPI_Get_library_version(v, &len);
    return strncmp(v, "oxmpi", 5) == 0;
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int rank = mtest_rank(), size = mtest_size();
    int oxmpi = is_oxmpi();
    static const MPI_Aint sizes[] = {0, 1, 7, 4096, 1 << 20};
    enum { N = sizeof sizes / sizeof sizes[0] };
    void *blocks[N];

    for (int i = 0; i < N; i++) {
        blocks[i] = NULL;
        MTEST_CALL(MPI_Alloc_mem(sizes[i], MPI_INFO_NULL, &blocks[i]));
        MTEST_CHECK(blocks[i] != NULL || sizes[i] == 0, "MPI_Alloc_mem(%ld) gave NULL", (long)sizes[i]);
        if (sizes[i] > 0) {
            mtest_fill(blocks[i], (size_t)sizes[i], (uint64_t)i + 1);
        }
    }
    for (int i = 0; i < N; i++) {
        if (sizes[i] > 0) {
            mtest_verify(blocks[i], (size_t)sizes[i], (uint64_t)i + 1, "MPI_Alloc_mem block");
        }
    }

    /* with an info object */
    MPI_Info info;
    void *hinted = NULL;
    MTEST_CALL(MPI_Info_create(&info));
    MTEST_CALL(MPI_Info_set(info, "alloc_shared_noncontig", "true"));
    MTEST_CALL(MPI_Alloc_mem(100, info, &hinted));
    memset(hinted, 3, 100);
    MTEST_CALL(MPI_Free_mem(hinted));
    MTEST_CALL(MPI_Info_free(&info));

    /* as message buffers: a ring through blocks of 1 MiB */
    if (size > 1) {
        void *in = NULL;
        MTEST_CALL(MPI_Alloc_mem(1 << 20, MPI_INFO_NULL, &in));
        int right = (rank + 1) % size, left = (rank + size - 1) % size;
        mtest_fill(blocks[N - 1], 1 << 20, 100 + (uint64_t)rank);
        MTEST_CALL(MPI_Sendrecv(blocks[N - 1], 1 << 20, MPI_BYTE, right, 2, in, 1 << 20, MPI_BYTE, left, 2,
                                MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        mtest_verify(in, 1 << 20, 100 + (uint64_t)left, "message received into MPI_Alloc_mem memory");
        MTEST_CALL(MPI_Free_mem(in));
    }
    for (int i = 0; i < N; i++) {
        MTEST_CALL(MPI_Free_mem(blocks[i]));
    }

    /* errors */
    void *p = NULL;
    MTEST_EXPECT_CLASS2(MPI_ERR_ARG, MPI_ERR_SIZE, MPI_Alloc_mem(-1, MPI_INFO_NULL, &p));
    if (oxmpi) {
        MTEST_EXPECT_CLASS(MPI_ERR_NO_MEM, MPI_Alloc_mem((MPI_Aint)1 << 62, MPI_INFO_NULL, &p));
        int on_stack = 0;
        MTEST_EXPECT_CLASS(MPI_ERR_BASE, MPI_Free_mem(&on_stack));
        MTEST_CALL(MPI_Alloc_mem(16, MPI_INFO_NULL, &p));
        MTEST_CALL(MPI_Free_mem(p));
        MTEST_EXPECT_CLASS(MPI_ERR_BASE, MPI_Free_mem(p));
        MTEST_EXPECT_CLASS(MPI_ERR_INFO, MPI_Alloc_mem(16, (MPI_Info)0x1c0000ff, &p));
    }
    /* still usable after the errors */
    MTEST_CALL(MPI_Alloc_mem(64, MPI_INFO_NULL, &p));
    MTEST_CALL(MPI_Free_mem(p));
    return mtest_finalize();
}
