//! Fortran kinds: the predefined datatype of a type class and size
//! (`MPI_Type_match_size`) and the datatypes of Fortran's `SELECTED_INT_KIND` /
//! `SELECTED_REAL_KIND` (`MPI_Type_create_f90_integer/real/complex`), for data shared
//! with Fortran code or described by precision rather than by Rust type.

use super::DatatypeRef;
use crate::error::{Error, Result};
use oxmpi_core::types;
use oxmpi_datatype::fortran::{self, F90};
use oxmpi_datatype::mpich::UNDEFINED;

pub use oxmpi_datatype::fortran::TypeClass;

/// `MPI_Type_match_size`: the predefined datatype of `class` whose elements are `size`
/// bytes (`MPI_REAL4`, `MPI_INTEGER8`, `MPI_COMPLEX16`, ...).
///
/// ```
/// use oxmpi::datatype::{match_size, TypeClass};
/// let d = match_size(TypeClass::Real, 8).unwrap();
/// assert_eq!(d.engine_size(), 8);
/// assert!(match_size(TypeClass::Integer, 3).is_err());
/// ```
pub fn match_size(class: TypeClass, size: usize) -> Result<DatatypeRef> {
    let size = i64::try_from(size).unwrap_or(i64::MAX);
    fortran::match_size(class, size)
        .map(DatatypeRef::predefined)
        .map_err(|e| Error::from_core("match_size", types::engine_error(e)))
}

fn f90(method: &'static str, params: F90) -> Result<DatatypeRef> {
    let id = types::f90(params).map_err(|e| Error::from_core(method, e))?;
    let size = types::info(id)
        .map_err(|e| Error::from_core(method, e))?
        .size;
    // SAFETY: the engine commits the types of MPI_Type_create_f90_* and never frees them
    // (freeing one is refused), and `size` is its size; its lower bound is 0 and its
    // extent its size (a predefined type's layout).
    Ok(unsafe { DatatypeRef::from_raw(id, size) })
}

fn param(v: Option<u32>) -> i64 {
    v.map_or(i64::from(UNDEFINED), i64::from)
}

/// `MPI_Type_create_f90_integer`: the datatype of Fortran's `INTEGER(SELECTED_INT_KIND(r))`,
/// the smallest integer with at least `r` decimal digits. Needs MPI initialized.
pub fn f90_integer(r: u32) -> Result<DatatypeRef> {
    f90("f90_integer", F90::Integer { r: r.into() })
}

/// `MPI_Type_create_f90_real`: the datatype of Fortran's `REAL(SELECTED_REAL_KIND(p, r))`
/// for at least `p` decimal digits of precision and a decimal exponent range of `r`
/// (`None`: no requirement; not both). Needs MPI initialized.
pub fn f90_real(p: Option<u32>, r: Option<u32>) -> Result<DatatypeRef> {
    f90(
        "f90_real",
        F90::Real {
            p: param(p),
            r: param(r),
        },
    )
}

/// `MPI_Type_create_f90_complex`: the complex datatype of the kind [`f90_real`] selects.
pub fn f90_complex(p: Option<u32>, r: Option<u32>) -> Result<DatatypeRef> {
    f90(
        "f90_complex",
        F90::Complex {
            p: param(p),
            r: param(r),
        },
    )
}
