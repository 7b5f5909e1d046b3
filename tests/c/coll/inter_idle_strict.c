/*
 * inter_idle.c with the insignificant arguments MPICH 4.0.2 or Open MPI 4.1.4 still
 * check (see there): MPI_OP_NULL at the idle members of MPI_Reduce, a NULL sendbuf at
 * its root, MPI_DATATYPE_NULL wherever no datatype is significant.
 */
#define IDLE_STRICT 1
#include "inter_idle.c"
