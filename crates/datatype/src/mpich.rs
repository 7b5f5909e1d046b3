//! Values of MPICH 4.0.2's `mpi.h` constants that this crate's enums map to (the
//! MPICH ABI oxmpi exports). Only plain numbers; the C header is written elsewhere.

/// `MPI_ORDER_C`.
pub const ORDER_C: i32 = 56;
/// `MPI_ORDER_FORTRAN`.
pub const ORDER_FORTRAN: i32 = 57;
/// `MPI_DISTRIBUTE_BLOCK`.
pub const DISTRIBUTE_BLOCK: i32 = 121;
/// `MPI_DISTRIBUTE_CYCLIC`.
pub const DISTRIBUTE_CYCLIC: i32 = 122;
/// `MPI_DISTRIBUTE_NONE`.
pub const DISTRIBUTE_NONE: i32 = 123;
/// `MPI_DISTRIBUTE_DFLT_DARG`.
pub const DISTRIBUTE_DFLT_DARG: i32 = -49767;
