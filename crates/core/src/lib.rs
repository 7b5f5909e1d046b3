//! The oxmpi MPI engine shared by the C library and the Rust API.
//!
//! This crate holds the MPI objects — [`comm`] (groups, communicators), [`types`]
//! (datatypes), attributes, topologies, collectives ([`coll`]) — and the MPI
//! operations built on them ([`p2p`]), over the `oxmpi-device` crate (system calls,
//! transports, the point-to-point device), re-exported here as [`sys`], [`transport`]
//! and [`device`]. [`runtime`] owns the process-wide state and builds the device from
//! the [`config`]; [`bootstrap`] starts a process under PMI.

mod async_progress;
pub mod attr;
pub mod bootstrap;
pub mod coll;
pub mod comm;
pub mod commops;
pub mod config;
pub mod context;
pub mod dpm;
pub mod errhandler;
pub mod error;
pub mod grequest;
pub mod group;
pub mod idup;
pub mod impi_attr;
mod impi_wire;
pub mod info;
mod internal_coll;
pub mod launcher;
pub mod mpit;
pub mod mprobe;
pub mod namepub;
pub mod p2p;
pub mod p2p_mpi4;
pub mod p2p_short;
pub mod partitioned;
pub mod placement;
pub mod port;
pub mod rma;
pub mod runtime;
pub mod session;
mod state_lock;
mod sync;
pub mod threads;
pub mod topo;
pub mod tunables;
pub mod types;
pub mod user_errors;
mod vg;

pub use error::{Error, ErrorClass, Result};
pub use oxmpi_device::{device, sys, transport};

/// `MPI_PROC_NULL`.
pub const PROC_NULL: i32 = device::matching::PROC_NULL;
/// `MPI_ANY_SOURCE`.
pub const ANY_SOURCE: i32 = device::matching::ANY_SOURCE;
/// `MPI_ANY_TAG`.
pub const ANY_TAG: i32 = device::matching::ANY_TAG;
/// `MPI_ROOT`.
pub const ROOT: i32 = -3;
/// `MPI_UNDEFINED`.
pub const UNDEFINED: i32 = -32766;
/// Largest tag value (`MPI_TAG_UB`).
pub const TAG_UB: i32 = i32::MAX;
/// The MPI standard version the library reports (`MPI_Get_version`, `MPI_VERSION` in
/// `mpi.h`): MPI-4.1, whose functions oxmpi provides except MPI-IO (README, "MPI version").
pub const MPI_VERSION: (i32, i32) = (4, 1);
/// oxmpi's version.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
