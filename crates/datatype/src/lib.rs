//! MPI datatypes as plain data, with no I/O and no global state.
//!
//! This crate owns the vocabulary every other layer uses to describe a buffer:
//! the predefined (named) MPI types ([`Predefined`]), the primitive element kinds they
//! are made of ([`Primitive`]), and (as the crate grows) derived type constructors,
//! committed pack programs that pack and unpack at any byte offset, and the
//! "external32" representation. Object tables and handles live in `oxmpi-core`; this
//! crate only knows values.

pub mod predefined;

pub use predefined::{Category, Predefined, Primitive};
