//! Reduction operations and collective-communication schedules for oxmpi, as plain data
//! with no I/O: the kernels of every predefined `MPI_Op` on every type it applies to
//! ([`ops`]), and for each collective algorithm a schedule of sends, receives and local
//! reductions ([`schedule`]) that the core executes over its point-to-point device,
//! chosen by one decision table ([`decision`]).

pub mod decision;
pub mod ops;
pub mod schedule;

pub use ops::{
    check_collective_op, check_op, is_extension, op_valid, reduce_local, reduce_packed,
    reduce_packed_into, reduction_primitive, FlatKernel, Layout, OpError, PredefinedOp,
};
