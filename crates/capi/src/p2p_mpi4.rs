//! Point-to-point entry points of MPI-4.0 and 4.1: `MPI_Isendrecv`,
//! `MPI_Isendrecv_replace`, `MPI_Request_get_status` and its `_all`, `_any` and
//! `_some` forms (statuses read without freeing the requests), and the status field
//! accessors `MPI_Status_get/set_source/tag/error`; the buffered-send buffers of the
//! process and of communicators (`MPI_Buffer_attach detach flush iflush`,
//! `MPI_Comm_attach_buffer detach_buffer flush_buffer iflush_buffer`,
//! `MPI_Session_attach_buffer detach_buffer flush_buffer iflush_buffer`,
//! `MPI_BUFFER_AUTOMATIC`).
//!
//! The rules are the engine's (`oxmpi_core::p2p_mpi4`); outcomes are written with the
//! writers the completion calls on generalized requests use (`crate::grequest`).

use crate::convert::{self, buf, comm, request, request_handle, status_ptr, STATUS_IGNORE};
use crate::count::CountWidth;
use crate::export::Target;
use crate::grequest::{any_done, deliver, error_of, report_all, some_done};
use crate::handles::{MPI_Comm, MPI_Datatype, MPI_Request, MPI_Session, MPI_Status};
use crate::p2p::{read_requests, statuses_ptr};
use crate::session::{session, target as session_target};
use crate::{count_fns, mpi_fn};
use oxmpi_core::grequest::Outcome;
use oxmpi_core::p2p_mpi4::{self, Attached, Scope};
use oxmpi_core::{Error, ErrorClass, Result, UNDEFINED};
use std::ffi::c_void;
use std::os::raw::c_int;

type Ptr = *const c_void;
type MutPtr = *mut c_void;

count_fns! { MPI_Isendrecv / PMPI_Isendrecv, MPI_Isendrecv_c / PMPI_Isendrecv_c (sb: Ptr, sn: Count, sdt: MPI_Datatype, dest: c_int, stag: c_int,
        rb: MutPtr, rn: Count, rdt: MPI_Datatype, src: c_int, rtag: c_int, c: MPI_Comm, r: *mut MPI_Request) target(convert::target(c)) {
    let r = convert::out(r, "request")?;
    // SAFETY: both buffers hold their counts of elements and stay valid until the request
    // completes (MPI_Isendrecv's contract); `buf` refused MPI_IN_PLACE.
    let id = unsafe { p2p_mpi4::isendrecv(buf(sb, sn, sdt)?, dest, stag, buf(rb, rn, rdt)?, src, rtag, comm(c)?)? };
    // SAFETY: r checked non-null; the caller provides a writable handle.
    unsafe { *r = request_handle(id) };
    Ok(())
}}

count_fns! { MPI_Isendrecv_replace / PMPI_Isendrecv_replace, MPI_Isendrecv_replace_c / PMPI_Isendrecv_replace_c (b: MutPtr, n: Count, dt: MPI_Datatype, dest: c_int, stag: c_int,
        src: c_int, rtag: c_int, c: MPI_Comm, r: *mut MPI_Request) target(convert::target(c)) {
    let r = convert::out(r, "request")?;
    // SAFETY: the buffer holds `n` elements of `dt` and stays valid until the request
    // completes (MPI_Isendrecv_replace's contract); `buf` refused MPI_IN_PLACE.
    let id = unsafe { p2p_mpi4::isendrecv_replace(buf(b, n, dt)?, dest, stag, src, rtag, comm(c)?)? };
    // SAFETY: r checked non-null; the caller provides a writable handle.
    unsafe { *r = request_handle(id) };
    Ok(())
}}

mpi_fn! { MPI_Request_get_status / PMPI_Request_get_status (r: MPI_Request, flag: *mut c_int, st: *mut MPI_Status) target(Target::None) {
    let flag = convert::out(flag, "flag")?;
    let st = status_ptr(st)?;
    let o = match request(r)? {
        None => Some(Outcome::empty()),
        Some(id) => p2p_mpi4::request_outcome(id)?,
    };
    // SAFETY: flag checked non-null; st is a status or MPI_STATUS_IGNORE.
    unsafe { *flag = o.is_some() as c_int };
    let Some(o) = o else {
        return Ok(());
    };
    // SAFETY: st is a status or MPI_STATUS_IGNORE (checked above).
    unsafe { deliver(st, &o, None) };
    // A failed request reports its error, as MPI_Test would (and MPICH does).
    error_of(o)
}}

mpi_fn! { MPI_Request_get_status_any / PMPI_Request_get_status_any (n: c_int, rs: *const MPI_Request, index: *mut c_int, flag: *mut c_int, st: *mut MPI_Status) target(Target::None) {
    let rs = rs as *mut MPI_Request;
    // SAFETY: rs holds n handles (MPI contract); only read.
    let ids = unsafe { read_requests(n, rs)? };
    let index = convert::out(index, "index")?;
    let flag = convert::out(flag, "flag")?;
    let st = status_ptr(st)?;
    let (f, which) = p2p_mpi4::get_status_any(&ids)?;
    // SAFETY: index and flag checked non-null; st a status or ignore; `any_done` writes no
    // handle, as the outcomes are not freed.
    unsafe {
        *flag = f as c_int;
        if !f {
            *index = UNDEFINED;
            return Ok(());
        }
        any_done(rs, index, st, which)
    }
}}

mpi_fn! { MPI_Request_get_status_all / PMPI_Request_get_status_all (n: c_int, rs: *const MPI_Request, flag: *mut c_int, st: *mut MPI_Status) target(Target::None) {
    let rs = rs as *mut MPI_Request;
    // SAFETY: rs holds n handles (MPI contract); only read.
    let ids = unsafe { read_requests(n, rs)? };
    let flag = convert::out(flag, "flag")?;
    let st = statuses_ptr(n, st)?;
    let Some(done) = p2p_mpi4::get_status_all(&ids)? else {
        // SAFETY: flag checked non-null.
        unsafe { *flag = 0 };
        return Ok(());
    };
    // SAFETY: flag checked; st holds n statuses or is MPI_STATUSES_IGNORE; no handle is
    // written, as the outcomes are not freed.
    unsafe {
        *flag = 1;
        report_all("MPI_Request_get_status_all", rs, st, &done)
    }
}}

mpi_fn! { MPI_Request_get_status_some / PMPI_Request_get_status_some (n: c_int, rs: *const MPI_Request, outcount: *mut c_int, indices: *mut c_int, st: *mut MPI_Status) target(Target::None) {
    let rs = rs as *mut MPI_Request;
    // SAFETY: rs holds n handles (MPI contract); only read.
    let ids = unsafe { read_requests(n, rs)? };
    let outcount = convert::out(outcount, "outcount")?;
    if n > 0 {
        convert::out(indices, "array of indices")?;
    }
    let st = statuses_ptr(n, st)?;
    let done = p2p_mpi4::get_status_some(&ids)?;
    // SAFETY: outcount checked; indices and st hold n entries (or st is ignore); no handle
    // is written, as the outcomes are not freed.
    unsafe { some_done("MPI_Request_get_status_some", rs, outcount, indices, st, done) }
}}

// ----- status fields (MPI 4.1) -----------------------------------------------------------------

/// A status argument that must be a real status (not null, not `MPI_STATUS_IGNORE`).
fn real_status(st: *mut MPI_Status) -> Result<*mut MPI_Status> {
    if st.is_null() || st as usize == STATUS_IGNORE {
        return Err(Error::new(
            ErrorClass::Arg,
            "status must be a status, not null or MPI_STATUS_IGNORE",
        ));
    }
    Ok(st)
}

/// Reads one field of a status into `out`.
///
/// # Safety
/// `st` is null, `MPI_STATUS_IGNORE` or a readable status; `out` null or writable.
unsafe fn get_field(
    st: *mut MPI_Status,
    out: *mut c_int,
    what: &str,
    f: fn(&MPI_Status) -> c_int,
) -> Result<()> {
    let st = real_status(st)?;
    let out = convert::out(out, what)?;
    // SAFETY: both checked above; readable / writable per the contract.
    unsafe { *out = f(&*st) };
    Ok(())
}

/// Sets one field of a status.
///
/// # Safety
/// `st` is null, `MPI_STATUS_IGNORE` or a writable status.
unsafe fn set_field(st: *mut MPI_Status, f: impl FnOnce(&mut MPI_Status)) -> Result<()> {
    let st = real_status(st)?;
    // SAFETY: checked above; writable per the contract.
    f(unsafe { &mut *st });
    Ok(())
}

mpi_fn! { MPI_Status_get_source / PMPI_Status_get_source (st: *mut MPI_Status, v: *mut c_int) target(Target::None) {
    // SAFETY: `st` is the caller's status and `v` its int (MPI contract); both checked.
    unsafe { get_field(st, v, "source", |s| s.MPI_SOURCE) }
}}
mpi_fn! { MPI_Status_get_tag / PMPI_Status_get_tag (st: *mut MPI_Status, v: *mut c_int) target(Target::None) {
    // SAFETY: `st` is the caller's status and `v` its int (MPI contract); both checked.
    unsafe { get_field(st, v, "tag", |s| s.MPI_TAG) }
}}
mpi_fn! { MPI_Status_get_error / PMPI_Status_get_error (st: *mut MPI_Status, v: *mut c_int) target(Target::None) {
    // SAFETY: `st` is the caller's status and `v` its int (MPI contract); both checked.
    unsafe { get_field(st, v, "error", |s| s.MPI_ERROR) }
}}
mpi_fn! { MPI_Status_set_source / PMPI_Status_set_source (st: *mut MPI_Status, v: c_int) target(Target::None) {
    // SAFETY: `st` is the caller's writable status (MPI contract); checked.
    unsafe { set_field(st, |s| s.MPI_SOURCE = v) }
}}
mpi_fn! { MPI_Status_set_tag / PMPI_Status_set_tag (st: *mut MPI_Status, v: c_int) target(Target::None) {
    // SAFETY: `st` is the caller's writable status (MPI contract); checked.
    unsafe { set_field(st, |s| s.MPI_TAG = v) }
}}
mpi_fn! { MPI_Status_set_error / PMPI_Status_set_error (st: *mut MPI_Status, v: c_int) target(Target::None) {
    // SAFETY: `st` is the caller's writable status (MPI contract); checked.
    unsafe { set_field(st, |s| s.MPI_ERROR = v) }
}}

// ----- buffered-send buffers (MPI 4.1 section 3.6) -----------------------------------------------

/// `MPI_BUFFER_AUTOMATIC`: `(void *)-2` in `mpi.h` (MPICH 4.0.2 has no such constant;
/// the value is no address a buffer can have and differs from `MPI_BOTTOM` (0) and
/// `MPI_IN_PLACE` (-1)).
pub const BUFFER_AUTOMATIC: usize = usize::MAX - 1;

/// The buffer an attach call hands over.
fn attach_arg(b: MutPtr, size: impl CountWidth) -> Result<Attached> {
    if b as usize == BUFFER_AUTOMATIC {
        return Ok(Attached::Automatic);
    }
    let size = size.get();
    if size < 0 {
        return Err(Error::new(
            ErrorClass::Arg,
            format!("invalid buffer size {size}"),
        ));
    }
    Ok(Attached::Buffer(b as *mut u8, size as usize))
}

/// Stores what a detach call hands back through its `void *` (the address of the
/// program's pointer) and size arguments.
///
/// # Safety
/// `bp` and `size` are null (refused) or writable.
unsafe fn detach_out<T: CountWidth>(bp: MutPtr, size: *mut T, what: Scope) -> Result<()> {
    let bp = convert::out(bp as *mut *mut c_void, "buffer address")?;
    let size = convert::out(size, "size")?;
    let (p, n) = match p2p_mpi4::buffer_detach(what)? {
        Attached::Buffer(p, n) => match T::from_count(n as i64, "size of the attached buffer") {
            Ok(n) => (p as *mut c_void, n),
            Err(e) => {
                // An int cannot report the size: the buffer stays attached, and the
                // program may detach it with the _c form.
                p2p_mpi4::buffer_attach(what, Attached::Buffer(p, n))?;
                return Err(e);
            }
        },
        Attached::Automatic => (BUFFER_AUTOMATIC as *mut c_void, T::from_count(0, "size")?),
    };
    // SAFETY: both pointers checked non-null; writable per the contract (MPI passes the
    // address of a pointer as void*).
    unsafe {
        *bp = p;
        *size = n;
    }
    Ok(())
}

/// Writes the request of a nonblocking flush.
///
/// # Safety
/// `r` is null (refused) or writable.
unsafe fn iflush_out(r: *mut MPI_Request, what: Scope) -> Result<()> {
    let r = convert::out(r, "request")?;
    let id = p2p_mpi4::buffer_iflush(what)?;
    // SAFETY: checked non-null; writable per the contract.
    unsafe { *r = request_handle(id) };
    Ok(())
}

count_fns! { MPI_Buffer_attach / PMPI_Buffer_attach, MPI_Buffer_attach_c / PMPI_Buffer_attach_c (b: MutPtr, size: Count) target(Target::None) {
    p2p_mpi4::buffer_attach(Scope::Process, attach_arg(b, size)?)
}}

count_fns! { MPI_Buffer_detach / PMPI_Buffer_detach, MPI_Buffer_detach_c / PMPI_Buffer_detach_c (b: MutPtr, size: *mut Count) target(Target::None) {
    // SAFETY: `b` is the address of the caller's pointer and `size` its int (MPI contract);
    // `detach_out` refuses NULL.
    unsafe { detach_out(b, size, Scope::Process) }
}}

mpi_fn! { MPI_Buffer_flush / PMPI_Buffer_flush () target(Target::None) {
    p2p_mpi4::buffer_flush(Scope::Process)
}}

mpi_fn! { MPI_Buffer_iflush / PMPI_Buffer_iflush (r: *mut MPI_Request) target(Target::None) {
    // SAFETY: `r` is the caller's writable request handle (MPI contract); NULL is refused.
    unsafe { iflush_out(r, Scope::Process) }
}}

count_fns! { MPI_Comm_attach_buffer / PMPI_Comm_attach_buffer, MPI_Comm_attach_buffer_c / PMPI_Comm_attach_buffer_c (c: MPI_Comm, b: MutPtr, size: Count) target(convert::target(c)) {
    let id = comm(c)?;
    p2p_mpi4::buffer_attach(Scope::Comm(id), attach_arg(b, size)?)
}}

count_fns! { MPI_Comm_detach_buffer / PMPI_Comm_detach_buffer, MPI_Comm_detach_buffer_c / PMPI_Comm_detach_buffer_c (c: MPI_Comm, b: MutPtr, size: *mut Count) target(convert::target(c)) {
    let id = comm(c)?;
    // SAFETY: `b` is the address of the caller's pointer and `size` its int (MPI contract);
    // `detach_out` refuses NULL.
    unsafe { detach_out(b, size, Scope::Comm(id)) }
}}

mpi_fn! { MPI_Comm_flush_buffer / PMPI_Comm_flush_buffer (c: MPI_Comm) target(convert::target(c)) {
    p2p_mpi4::buffer_flush(Scope::Comm(comm(c)?))
}}

mpi_fn! { MPI_Comm_iflush_buffer / PMPI_Comm_iflush_buffer (c: MPI_Comm, r: *mut MPI_Request) target(convert::target(c)) {
    let id = comm(c)?;
    // SAFETY: `r` is the caller's writable request handle (MPI contract); NULL is refused.
    unsafe { iflush_out(r, Scope::Comm(id)) }
}}

count_fns! { MPI_Session_attach_buffer / PMPI_Session_attach_buffer, MPI_Session_attach_buffer_c / PMPI_Session_attach_buffer_c (s: MPI_Session, b: MutPtr, size: Count) target(session_target(s)) {
    let id = session(s)?;
    p2p_mpi4::buffer_attach(Scope::Session(id), attach_arg(b, size)?)
}}

count_fns! { MPI_Session_detach_buffer / PMPI_Session_detach_buffer, MPI_Session_detach_buffer_c / PMPI_Session_detach_buffer_c (s: MPI_Session, b: MutPtr, size: *mut Count) target(session_target(s)) {
    let id = session(s)?;
    // SAFETY: `b` is the address of the caller's pointer and `size` its int (MPI contract);
    // `detach_out` refuses NULL.
    unsafe { detach_out(b, size, Scope::Session(id)) }
}}

mpi_fn! { MPI_Session_flush_buffer / PMPI_Session_flush_buffer (s: MPI_Session) target(session_target(s)) {
    p2p_mpi4::buffer_flush(Scope::Session(session(s)?))
}}

mpi_fn! { MPI_Session_iflush_buffer / PMPI_Session_iflush_buffer (s: MPI_Session, r: *mut MPI_Request) target(session_target(s)) {
    let id = session(s)?;
    // SAFETY: `r` is the caller's writable request handle (MPI contract); NULL is refused.
    unsafe { iflush_out(r, Scope::Session(id)) }
}}
