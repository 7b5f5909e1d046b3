//! The MPI C library: `MPI_*` and `PMPI_*` entry points with MPICH's ABI.
