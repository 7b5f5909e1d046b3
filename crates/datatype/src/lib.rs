//! MPI datatypes as plain data, with no I/O and no global state.
//!
//! This crate owns the vocabulary every other layer uses to describe a buffer:
//! the predefined (named) MPI types ([`Predefined`]), the primitive element kinds they
//! are made of ([`Primitive`]), the derived type constructors ([`Datatype`]), committed
//! pack programs that pack and unpack at any byte offset ([`pack`], [`unpack`],
//! [`Datatype::blocks`]), type decoding ([`Datatype::envelope`],
//! [`Datatype::contents`]) and the "external32" representation ([`pack_external`]).
//! Object tables and handles live in `oxmpi-core`; this crate only knows values.
//!
//! ```
//! use oxmpi_datatype::{pack, unpack, Datatype, Predefined};
//!
//! // Every other int of an array of 8.
//! let int = Datatype::from(Predefined::Int);
//! let strided = Datatype::vector(4, 1, 2, &int).unwrap();
//! strided.commit();
//! let src: Vec<i32> = (0..8).collect();
//! let mut packed = [0u8; 16];
//! // SAFETY: the type map (4 ints, stride 8 bytes) lies inside `src`.
//! let n = unsafe { pack(&strided, src.as_ptr().cast(), 1, 0, &mut packed) };
//! assert_eq!(n, 16);
//! let mut dst = [0i32; 8];
//! // SAFETY: as above, for `dst`.
//! unsafe { unpack(&strided, dst.as_mut_ptr().cast(), 1, 0, &packed) };
//! assert_eq!(dst, [0, 0, 2, 0, 4, 0, 6, 0]);
//! ```

#[cfg(not(target_pointer_width = "64"))]
compile_error!("oxmpi-datatype assumes 64-bit addresses (MPI_Aint = i64)");

mod blockcopy;
mod blocks;
mod constructors;
mod datatype;
mod distributed;
mod elements;
mod envelope;
mod error;
mod external32;
pub mod fortran;
mod layout;
pub mod mpich;
mod pack;
pub mod predefined;
mod program;
mod signature;
mod typemap;

pub use blockcopy::{copy_large, copy_streamed};
pub use blocks::BlockIter;
pub use datatype::{Datatype, Distribution, Order};
pub use envelope::{Combiner, Contents, Envelope};
pub use error::{Error, ErrorClass, Result};
pub use external32::{external32_is_native, pack_external, pack_external_size, unpack_external};
pub use layout::MAX_DEPTH;
pub use pack::{pack, pack_size, unpack};
pub use predefined::{Category, Predefined, Primitive};
pub use signature::Signature;
