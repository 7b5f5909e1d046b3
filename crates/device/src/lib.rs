//! The lower layers of the oxmpi engine: everything that moves bytes between the
//! processes of a job, and nothing that knows an MPI object.
//!
//! Bottom up:
//! - [`sys`]: the Linux system calls no crate covers safely — futex waits and wakes on
//!   shared memory, shared-memory segments, cross-memory attach (`process_vm_readv`).
//! - [`transport`]: moving packets between world ranks — the self loop, shared memory
//!   (a ring per ordered pair of ranks on a node) and TCP (between nodes, or everywhere
//!   with `OXMPI_NETMOD=tcp`).
//! - [`device`]: the abstract device interface — requests, the matching engine, the
//!   eager / rendezvous / synchronous / cancel protocols, progress and the buffered-send
//!   pool.
//!
//! The device speaks world ranks, context ids, tags, byte ranges and pack programs
//! (the `oxmpi-datatype` crate's [`oxmpi_datatype::Datatype`]); it knows no
//! communicator, group, datatype handle, error handler or MPI error class. Its tunables
//! arrive as a plain [`device::DeviceConfig`] that the MPI layer fills. A failure that
//! ends the job (a lost TCP connection, a corrupt packet) comes out of
//! [`device::Device::progress`] as a [`device::DeviceError`]; the device never decides
//! by itself how the process ends.

pub mod device;
pub mod sys;
pub mod transport;
