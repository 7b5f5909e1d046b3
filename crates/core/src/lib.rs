//! The oxmpi MPI engine shared by the C library and the Rust API.
//!
//! Layers, bottom up: [`sys`] (system calls), [`transport`] (moving packets between
//! ranks: self and shared memory), [`device`] (requests, matching, protocols,
//! progress), then the MPI objects — [`comm`] (groups, communicators), [`types`]
//! (datatypes) — and the MPI operations built on them ([`p2p`]). [`runtime`] owns the
//! process-wide state; [`bootstrap`] starts a process under PMI.

pub mod attr;
pub mod bootstrap;
pub mod coll;
pub mod comm;
pub mod commops;
pub mod config;
pub mod context;
pub mod device;
pub mod errhandler;
pub mod error;
pub mod grequest;
pub mod group;
pub mod info;
mod internal_coll;
pub mod p2p;
pub mod placement;
pub mod runtime;
mod state_lock;
pub mod sys;
pub mod topo;
pub mod transport;
pub mod types;
pub mod user_errors;

pub use error::{Error, ErrorClass, Result};

/// `MPI_PROC_NULL`.
pub const PROC_NULL: i32 = -1;
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
/// The MPI standard version the library reports (`MPI_Get_version`).
pub const MPI_VERSION: (i32, i32) = (3, 1);
/// oxmpi's version.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
