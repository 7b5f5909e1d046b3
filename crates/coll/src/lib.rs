//! Reduction operations and collective-communication schedules for oxmpi, as plain data
//! with no I/O: the kernels of every predefined `MPI_Op` on every type it applies to,
//! and for each collective algorithm a schedule of sends, receives and local
//! reductions that the core executes over its point-to-point device.
