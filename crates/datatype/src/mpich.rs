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
/// `MPI_UNDEFINED` (an unconstrained precision or range of `MPI_Type_create_f90_real`).
pub const UNDEFINED: i32 = -32766;
/// `MPI_TYPECLASS_REAL`.
pub const TYPECLASS_REAL: i32 = 1;
/// `MPI_TYPECLASS_INTEGER`.
pub const TYPECLASS_INTEGER: i32 = 2;
/// `MPI_TYPECLASS_COMPLEX`.
pub const TYPECLASS_COMPLEX: i32 = 3;
