/*
 * pscw.c on a window of MPI_Win_allocate.
 *
 * MPICH 4.0.2 fails: puts in a post/start epoch on an MPI_Win_allocate window land in
 * the wrong rank's memory.
 */
#define PSCW_FLAVOR MPI_WIN_FLAVOR_ALLOCATE
#include "pscw.c"
