//! The safe Rust API of oxmpi, an implementation of the Message Passing Interface.
//!
//! The shapes follow the `mpi` crate (rsmpi) that Rust MPI users know, with two
//! differences: every fallible call returns a [`Result`] (rsmpi panics), and an
//! unfinished nonblocking request is waited for rather than panicking (see [`request`]).
//! The crate calls the oxmpi engine directly, with no C in between.
//!
//! ```no_run
//! use oxmpi::traits::*;
//!
//! fn main() -> Result<(), oxmpi::Error> {
//!     let universe = oxmpi::initialize()?;
//!     let world = universe.world();
//!     let (rank, size) = (world.rank(), world.size());
//!     if rank == 0 {
//!         for _ in 1..size {
//!             let (greeting, status) = world.any_process().receive_vec::<u8>()?;
//!             println!("{} (from rank {})", String::from_utf8_lossy(&greeting), status.source_rank());
//!         }
//!     } else {
//!         let text = format!("hello from rank {rank} of {size}");
//!         world.process_at_rank(0).send(text.as_bytes())?;
//!     }
//!     Ok(())
//!     // `universe` is dropped here: MPI is finalized.
//! }
//! ```
//!
//! Run it with the launcher: `mpiexec -n 4 target/release/examples/hello`.
//!
//! # Map of the crate
//!
//! - [`environment`]: [`initialize`], the [`Universe`](environment::Universe), time and
//!   versions;
//! - [`topology`]: communicators (duplicates, splits, subgroups, intercommunicators,
//!   Cartesian grids), groups and processes;
//! - [`datatype`]: [`Equivalence`](datatype::Equivalence) (and `#[derive(Equivalence)]`),
//!   buffers, datatypes made at run time and views through them;
//! - [`point_to_point`]: sends, receives, probes, [`Status`](point_to_point::Status);
//! - [`collective`]: barrier, broadcast, gather, scatter, all-to-all, reductions and
//!   scans, with predefined and user [`Operation`](collective::Operation)s;
//! - [`request`]: nonblocking operations in scopes, persistent requests;
//! - [`partitioned`]: MPI-4 partitioned sends and receives (partitions marked ready one
//!   by one, read as they arrive);
//! - [`buffer`]: the attached buffer of buffered-mode sends;
//! - [`attribute`]: typed attributes cached on communicators;
//! - [`info`]: [`Info`](info::Info) objects (key-value hints, `MPI_INFO_ENV`);
//! - [`session`]: MPI-4 [`Session`](session::Session)s, process sets, communicators
//!   from groups (a library's own MPI, next to the world model or without it);
//! - [`tools`]: the tool information interface (`MPI_T`): control and performance
//!   variables;
//! - [`window`]: one-sided communication: [`Window`](window::Window)s and their
//!   epochs (fence, lock, lock-all) as scopes;
//! - [`error`]: the [`Error`] type.
//!
//! `use oxmpi::traits::*;` brings the traits whose methods the examples call.

#![warn(missing_docs)]

pub mod attribute;
pub mod buffer;
pub mod collective;
pub mod datatype;
pub mod environment;
pub mod error;
pub mod info;
pub mod partitioned;
pub mod point_to_point;
mod raw;
pub mod request;
pub mod session;
pub mod tools;
pub mod topology;
pub mod window;

pub use environment::{
    initialize, initialize_with_threading, is_finalized, is_initialized, library_version,
    processor_name, time, time_resolution, version, Threading,
};
pub use error::{Error, ErrorClass, Result};
/// `#[derive(Equivalence)]`: makes a struct of `Equivalence` fields sendable (crate
/// `oxmpi-derive`; see [`datatype`]).
pub use oxmpi_derive::Equivalence;

/// `MPI_ANY_SOURCE`: the source rank of a receive that accepts any sender.
pub const ANY_SOURCE: topology::Rank = oxmpi_core::ANY_SOURCE;
/// `MPI_ANY_TAG`: the tag of a receive that accepts any tag.
pub const ANY_TAG: point_to_point::Tag = oxmpi_core::ANY_TAG;
/// `MPI_PROC_NULL`: the rank of the null process (communication with it does nothing).
pub const PROC_NULL: topology::Rank = oxmpi_core::PROC_NULL;
/// `MPI_UNDEFINED`: what [`Status::count`](point_to_point::Status::count) gives when the
/// message is not a whole number of values.
pub const UNDEFINED: i32 = oxmpi_core::UNDEFINED;
/// `MPI_ROOT`: the root argument the root of a rooted collective on an
/// intercommunicator passes (see [`collective`]).
pub const ROOT: topology::Rank = oxmpi_core::ROOT;
/// `MPI_TAG_UB`: the largest tag.
pub const TAG_UB: point_to_point::Tag = oxmpi_core::TAG_UB;

/// The traits to import for calling methods: `use oxmpi::traits::*;`.
pub mod traits {
    pub use crate::attribute::Attributes;
    pub use crate::collective::{
        CommunicatorCollectives, Operation, PartitionedBuffer, PartitionedBufferMut, Root,
    };
    pub use crate::datatype::{AsDatatype, Buffer, BufferMut, Equivalence};
    pub use crate::point_to_point::{Destination, Source};
    pub use crate::request::Scope;
    pub use crate::topology::{AsCommId, Communicator};
    pub use oxmpi_derive::Equivalence;
}
