//! Status helpers that are not about datatypes: `MPI_Status_set_cancelled` (for
//! generalized requests' query functions) and the conversions between the C status
//! and its Fortran views (`MPI_Status_c2f f2c c2f08 f082c f2f08`).
//!
//! `MPI_Status_set_elements(_x)` and `MPI_Get_elements(_x)` need the datatype
//! machinery and live in [`crate::datatype`].

use crate::abi;
use crate::convert::{self, STATUS_IGNORE};
use crate::export::Target;
use crate::handles::{MPI_F08_status, MPI_Fint, MPI_Status};
use crate::mpi_fn;
use oxmpi_core::{Error, ErrorClass, Result};
use std::os::raw::c_int;

/// A status argument that must be a real status (not null, not `MPI_STATUS_IGNORE`).
fn real<T>(p: *mut T, what: &str) -> Result<*mut T> {
    if p.is_null() || p as usize == STATUS_IGNORE {
        return Err(Error::new(
            ErrorClass::Arg,
            format!("{what} must be a status, not null or MPI_STATUS_IGNORE"),
        ));
    }
    Ok(p)
}

/// A Fortran status argument: not null, not `MPI_F_STATUS(ES)_IGNORE` /
/// `MPI_F08_STATUS(ES)_IGNORE`.
fn real_fortran<T>(p: *mut T, what: &str) -> Result<*mut T> {
    let ignores = [
        abi::MPI_F_STATUS_IGNORE.0,
        abi::MPI_F_STATUSES_IGNORE.0,
        abi::MPI_F08_STATUS_IGNORE.0,
        abi::MPI_F08_STATUSES_IGNORE.0,
    ];
    if p.is_null() || ignores.contains(&(p as *const std::ffi::c_void)) {
        return Err(Error::new(
            ErrorClass::Arg,
            format!("{what} must be a status, not null or an ignore marker"),
        ));
    }
    Ok(p)
}

mpi_fn! { MPI_Status_set_cancelled / PMPI_Status_set_cancelled (st: *mut MPI_Status, flag: c_int) target(Target::None) {
    let st = real(st, "status")?;
    // SAFETY: st points to a status (checked above).
    unsafe { (*st).set_cancelled(flag != 0) };
    Ok(())
}}

/// Copies the five fields between two layouts that hold them in the same order.
///
/// # Safety
/// `from` must point to 5 readable ints and `to` to 5 writable ints.
unsafe fn copy5(from: *const c_int, to: *mut c_int) {
    // SAFETY: per the contract; the regions may even be the same.
    unsafe { std::ptr::copy(from, to, 5) };
}

// The Fortran INTEGER status is MPI_F_STATUS_SIZE = 5 INTEGERs: the C status word
// for word (MPI_F_SOURCE = 2, MPI_F_TAG = 3, MPI_F_ERROR = 4, as in MPICH).
const _: () = assert!(std::mem::size_of::<MPI_Status>() == 5 * std::mem::size_of::<MPI_Fint>());
const _: () = assert!(std::mem::size_of::<MPI_F08_status>() == 5 * std::mem::size_of::<MPI_Fint>());

mpi_fn! { MPI_Status_c2f / PMPI_Status_c2f (c: *const MPI_Status, f: *mut MPI_Fint) target(Target::None) {
    let c = real(c as *mut MPI_Status, "c_status")?;
    let f = convert::out(f, "f_status")?;
    // SAFETY: both checked; a status is five ints and f holds MPI_F_STATUS_SIZE.
    unsafe { copy5(c as *const c_int, f) };
    Ok(())
}}

mpi_fn! { MPI_Status_f2c / PMPI_Status_f2c (f: *const MPI_Fint, c: *mut MPI_Status) target(Target::None) {
    let f = real_fortran(f as *mut MPI_Fint, "f_status")?;
    let c = real(c, "c_status")?;
    // SAFETY: both checked; f holds MPI_F_STATUS_SIZE ints.
    unsafe { copy5(f, c as *mut c_int) };
    Ok(())
}}

mpi_fn! { MPI_Status_c2f08 / PMPI_Status_c2f08 (c: *const MPI_Status, f: *mut MPI_F08_status) target(Target::None) {
    let c = real(c as *mut MPI_Status, "c_status")?;
    let f = convert::out(f, "f08_status")?;
    // SAFETY: both checked; both are five ints.
    unsafe { copy5(c as *const c_int, f as *mut c_int) };
    Ok(())
}}

mpi_fn! { MPI_Status_f082c / PMPI_Status_f082c (f: *const MPI_F08_status, c: *mut MPI_Status) target(Target::None) {
    let f = real_fortran(f as *mut MPI_F08_status, "f08_status")?;
    let c = real(c, "c_status")?;
    // SAFETY: both checked; both are five ints.
    unsafe { copy5(f as *const c_int, c as *mut c_int) };
    Ok(())
}}

mpi_fn! { MPI_Status_f2f08 / PMPI_Status_f2f08 (f: *const MPI_Fint, f08: *mut MPI_F08_status) target(Target::None) {
    let f = real_fortran(f as *mut MPI_Fint, "f_status")?;
    let f08 = convert::out(f08, "f08_status")?;
    // SAFETY: both checked; both are five ints.
    unsafe { copy5(f, f08 as *mut c_int) };
    Ok(())
}}

mpi_fn! { MPI_Status_f082f / PMPI_Status_f082f (f08: *const MPI_F08_status, f: *mut MPI_Fint) target(Target::None) {
    let f08 = real_fortran(f08 as *mut MPI_F08_status, "f08_status")?;
    let f = convert::out(f, "f_status")?;
    // SAFETY: both checked; both are five ints.
    unsafe { copy5(f08 as *const c_int, f) };
    Ok(())
}}
