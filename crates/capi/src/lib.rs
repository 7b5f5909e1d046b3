//! The MPI C library (`libmpi.so.12`): `MPI_*` and `PMPI_*` entry points with MPICH's
//! ABI, as thin bindings over the oxmpi engine. Each module binds one area; none
//! implements MPI semantics itself (that is the engine's job).

#![allow(non_snake_case, non_camel_case_types, non_upper_case_globals)]
// The bindings mirror MPI's C signatures, many of which take more than seven arguments.
#![allow(clippy::too_many_arguments)]

pub mod abi;
pub mod attr;
pub mod coll;
pub mod comm;
pub mod comm_idup;
pub mod comm_info;
pub mod convert;
pub mod count;
pub mod datatype;
pub mod dpm;
pub mod env;
pub mod errhandler;
pub mod errors;
pub mod export;
pub mod fortran;
pub mod fortran_cdesc;
pub mod grequest;
pub mod group;
pub(crate) mod handles;
pub mod info;
pub mod mem;
pub mod mpit;
pub mod mprobe;
pub(crate) mod nbc;
pub mod neighbor;
pub mod op;
pub mod p2p;
pub mod p2p_mpi4;
pub mod pack;
pub mod partitioned;
pub mod plain;
pub mod session;
pub mod status;
pub mod topo;
pub mod type_attr;
pub mod win;
