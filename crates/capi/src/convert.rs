//! Translation between C handles/structs and engine values: communicators, datatypes
//! and requests by handle, `MPI_Status` in MPICH's layout, and the output-pointer
//! checks every entry point shares.

use crate::handles::{self, DatatypeRef, MPI_Comm, MPI_Datatype, MPI_Request, MPI_Status};
use oxmpi_core::comm::CommId;
use oxmpi_core::device::{ReqId, Status};
use oxmpi_core::p2p::Buf;
use oxmpi_core::types::TypeId;
use oxmpi_core::{Error, ErrorClass, Result};
use std::os::raw::{c_char, c_int};

/// `MPI_STATUS_IGNORE` / `MPI_STATUSES_IGNORE` as MPICH defines them.
pub const STATUS_IGNORE: usize = 1;

#[inline]
pub fn comm(h: MPI_Comm) -> Result<CommId> {
    handles::comm_index(h).ok_or_else(|| bad_comm(h))
}

// The error paths of the handle conversions stay out of line, so that the conversions
// of every call need no stack frame.
#[cold]
#[inline(never)]
fn bad_comm(h: MPI_Comm) -> Error {
    if h == handles::MPI_COMM_NULL {
        Error::new(ErrorClass::Comm, "invalid communicator MPI_COMM_NULL")
    } else {
        Error::new(
            ErrorClass::Comm,
            format!("invalid communicator handle {h:#x}"),
        )
    }
}

/// A communicator argument that must name a live communicator even where the call
/// has no other use for it (`MPI_Pack`'s, say): the handle check of [`comm`] plus a
/// look-up in the engine's table, so a freed communicator is refused.
pub fn live_comm(h: MPI_Comm) -> Result<CommId> {
    let id = comm(h)?;
    oxmpi_core::p2p::comm_size(id)?;
    Ok(id)
}

/// Error-handler target for a communicator argument (falls back to "no object" when
/// the handle is not a communicator).
pub fn target(h: MPI_Comm) -> crate::export::Target {
    match handles::comm_index(h) {
        Some(c) => crate::export::Target::Comm(c),
        None => crate::export::Target::None,
    }
}

#[inline]
pub fn datatype(h: MPI_Datatype) -> Result<TypeId> {
    match handles::datatype_from_handle(h) {
        Some(DatatypeRef::Predefined(p)) => Ok(p as TypeId),
        Some(DatatypeRef::Created(i)) => Ok(i),
        None => Err(bad_datatype(h)),
    }
}

#[cold]
#[inline(never)]
fn bad_datatype(h: MPI_Datatype) -> Error {
    if h == handles::MPI_DATATYPE_NULL {
        Error::new(ErrorClass::Type, "invalid datatype MPI_DATATYPE_NULL")
    } else {
        Error::new(ErrorClass::Type, format!("invalid datatype handle {h:#x}"))
    }
}

/// Refuses `MPI_IN_PLACE` as a buffer argument: only some collective buffers accept
/// it (and their bindings test for it before they get here). Used as an address it
/// would be dereferenced.
#[inline]
pub fn not_in_place(ptr: *const std::ffi::c_void, what: &str) -> Result<()> {
    if std::ptr::eq(ptr, handles::MPI_IN_PLACE) {
        return Err(in_place_refused(what));
    }
    Ok(())
}

#[cold]
#[inline(never)]
fn in_place_refused(what: &str) -> Error {
    Error::new(
        ErrorClass::Buffer,
        format!("MPI_IN_PLACE is not a valid {what} here"),
    )
}

/// A (buffer, count, datatype) argument, the count `int` or `MPI_Count`.
#[inline]
pub fn buf(
    ptr: *const std::ffi::c_void,
    count: impl crate::count::CountWidth,
    dt: MPI_Datatype,
) -> Result<Buf> {
    not_in_place(ptr, "buffer")?;
    Ok(Buf {
        addr: ptr as usize,
        count: count.get(),
        ty: datatype(dt)?,
    })
}

/// A request handle: Ok(None) for `MPI_REQUEST_NULL`.
#[inline]
pub fn request(h: MPI_Request) -> Result<Option<ReqId>> {
    if h == handles::MPI_REQUEST_NULL {
        return Ok(None);
    }
    handles::request_index(h)
        .map(Some)
        .ok_or_else(|| bad_request(h))
}

#[cold]
#[inline(never)]
fn bad_request(h: MPI_Request) -> Error {
    Error::new(
        ErrorClass::Request,
        format!("invalid request handle {h:#x}"),
    )
}

#[inline]
pub fn request_handle(id: ReqId) -> MPI_Request {
    handles::request_handle(id)
}

/// Writes `s` to a status pointer unless it is `MPI_STATUS_IGNORE`. The `MPI_ERROR`
/// field is written only when `with_error` (multiple-completion calls).
///
/// # Safety
/// `p` must be `MPI_STATUS_IGNORE` or point to a writable `MPI_Status`.
pub unsafe fn write_status(p: *mut MPI_Status, s: &Status, with_error: bool) {
    if p.is_null() || p as usize == STATUS_IGNORE {
        return;
    }
    // SAFETY: per the contract p points to a writable status.
    let st = unsafe { &mut *p };
    st.MPI_SOURCE = s.source;
    st.MPI_TAG = s.tag;
    // The standard's empty status (a null or inactive request) carries MPI_SUCCESS in
    // its error field even from the single-completion calls, as MPICH's does; no
    // received message has MPI_ANY_SOURCE as its source.
    if with_error || s.source == handles::MPI_ANY_SOURCE {
        st.MPI_ERROR = ErrorClass::from(s.error) as i32;
    }
    set_count(st, s.bytes, s.cancelled);
}

/// Stores a byte count and the cancelled flag the way MPICH's status does.
pub fn set_count(st: &mut MPI_Status, bytes: u64, cancelled: bool) {
    st.count_lo = bytes as u32 as i32;
    st.count_hi_and_cancelled = (((bytes >> 32) as i32) << 1) | cancelled as i32;
}

/// The byte count stored in a status.
pub fn get_count(st: &MPI_Status) -> u64 {
    (st.count_lo as u32 as u64) | (((st.count_hi_and_cancelled as u32 >> 1) as u64) << 32)
}

pub fn is_cancelled(st: &MPI_Status) -> bool {
    st.count_hi_and_cancelled & 1 != 0
}

/// Checks a required output pointer.
pub fn out<T>(p: *mut T, what: &str) -> Result<*mut T> {
    if p.is_null() {
        return Err(Error::new(
            ErrorClass::Arg,
            format!("null pointer for {what}"),
        ));
    }
    Ok(p)
}

/// Writes an object name for the `MPI_*_get_name` calls: at most `max` bytes of `s` (cut at a
/// character boundary), NUL-terminated, and its length.
pub fn write_name(
    s: &str,
    max: usize,
    name: *mut c_char,
    len: *mut c_int,
    what: &str,
) -> Result<()> {
    let name = out(name, what)?;
    let len = out(len, "resultlen")?;
    let mut n = s.len().min(max);
    while !s.is_char_boundary(n) {
        n -= 1;
    }
    // SAFETY: the caller's buffer holds MPI_MAX_OBJECT_NAME (> max) bytes (MPI contract); both
    // pointers were checked for NULL above.
    unsafe {
        std::ptr::copy_nonoverlapping(s.as_ptr(), name as *mut u8, n);
        *name.add(n) = 0;
        *len = n as c_int;
    }
    Ok(())
}

/// Checks a required status pointer (a real status or `MPI_STATUS_IGNORE`).
pub fn status_ptr(p: *mut MPI_Status) -> Result<*mut MPI_Status> {
    out(p, "status (use MPI_STATUS_IGNORE to ignore it)")
}

/// A truncation error for a completed receive.
pub fn truncation(s: &Status) -> Error {
    Error::new(
        ErrorClass::Truncate,
        format!(
            "message from rank {} with tag {} is longer than the receive buffer ({} bytes received)",
            s.source, s.tag, s.bytes
        ),
    )
}

/// Turns a completed status with an error into the error the call reports.
pub fn status_error(s: &Status) -> Result<()> {
    match ErrorClass::from(s.error) {
        ErrorClass::Success => Ok(()),
        ErrorClass::Truncate => Err(truncation(s)),
        c => Err(Error::new(c, "operation failed")),
    }
}
