/*
 * ABI-mode guard (run first by tests/c/run --abi): proves that a binary built with another
 * implementation's mpicc (MPICH's) is really running on oxmpi's libmpi, not on the library it
 * was built against.  It passes only if
 *   - dlsym(RTLD_DEFAULT, "OXMPI_Library_marker") finds the symbol only oxmpi exports, and
 *   - dladdr() places that symbol and the MPI_Send / MPI_Init the process resolves in the
 *     same shared object,
 * and it prints that object's path and MPI_Get_library_version.  A ring exchange checks that
 * basic communication works through the ABI.
 * mtest-ldflags: -ldl
 */
#define _GNU_SOURCE
#include "mtest.h"

#include <dlfcn.h>

static const char *object_of(const char *sym, void **addr)
{
    Dl_info info;
    *addr = dlsym(RTLD_DEFAULT, sym);
    if (!*addr || !dladdr(*addr, &info) || !info.dli_fname) {
        return NULL;
    }
    return info.dli_fname;
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int rank = mtest_rank(), size = mtest_size();
    void *marker = NULL, *send = NULL, *init = NULL;
    const char *marker_obj = object_of("OXMPI_Library_marker", &marker);
    const char *send_obj = object_of("MPI_Send", &send);
    const char *init_obj = object_of("MPI_Init", &init);

    char version[MPI_MAX_LIBRARY_VERSION_STRING + 1];
    int len = 0;
    version[0] = 0;
    MTEST_CALL(MPI_Get_library_version(version, &len));
    if (rank == 0) {
        fprintf(stderr, "MPI_Send from: %s\nMPI_Get_library_version: %.200s\n",
                send_obj ? send_obj : "(not found)", version);
    }

    MTEST_CHECK(marker != NULL, "OXMPI_Library_marker not found: the MPI library loaded is not oxmpi "
                                "(MPI_Send comes from %s)",
                send_obj ? send_obj : "(unknown)");
    if (marker) {
        MTEST_CHECK(marker_obj && send_obj && strcmp(marker_obj, send_obj) == 0,
                    "OXMPI_Library_marker is in %s but MPI_Send in %s", marker_obj ? marker_obj : "?",
                    send_obj ? send_obj : "?");
        MTEST_CHECK(marker_obj && init_obj && strcmp(marker_obj, init_obj) == 0,
                    "OXMPI_Library_marker is in %s but MPI_Init in %s", marker_obj ? marker_obj : "?",
                    init_obj ? init_obj : "?");
    }

    if (size > 1) {
        int right = (rank + 1) % size, left = (rank + size - 1) % size, in = -1;
        MPI_Status st;
        MTEST_CALL(MPI_Sendrecv(&rank, 1, MPI_INT, right, 1, &in, 1, MPI_INT, left, 1, MPI_COMM_WORLD, &st));
        MTEST_STATUS(&st, left, 1, MPI_INT, 1);
        MTEST_EQ("ring value", left, in);
    }
    return mtest_finalize();
}
