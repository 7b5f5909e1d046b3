/*
 * mpio.h -- the MPI-IO part of oxmpi's C interface. Everything (MPI_File,
 * MPI_Offset, the MPI_File_* functions and the MPI_MODE_* / MPI_SEEK_*
 * constants) is declared in mpi.h; this file exists for programs that
 * include <mpio.h> directly.
 */
#ifndef OXMPI_MPIO_H
#define OXMPI_MPIO_H
#include "mpi.h"
#endif
