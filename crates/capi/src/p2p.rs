//! Point-to-point entry points: blocking and nonblocking sends in all four modes,
//! receives, completion calls, probe, cancel and persistent requests (the
//! buffered-send buffers are in [`crate::p2p_mpi4`]), each with its large-count `_c`
//! twin ([`count_fns!`](crate::count_fns)).

use crate::convert::{
    self, buf, comm, request, request_handle, status_ptr, write_status, STATUS_IGNORE,
};
use crate::count::CountWidth;
use crate::export::Target;
use crate::handles::{self, MPI_Comm, MPI_Datatype, MPI_Request, MPI_Status};
use crate::plain::buf_bytes;
use crate::{count_fns, mpi_fn};
use oxmpi_core::device::{ReqId, DONE_SEND};
use oxmpi_core::p2p::{self, Completion, Mode};
use oxmpi_core::p2p_short::{self, ShortRecv};
use oxmpi_core::{Error, ErrorClass, Result, UNDEFINED};
use std::ffi::c_void;
use std::os::raw::c_int;

type Ptr = *const c_void;
type MutPtr = *mut c_void;

unsafe fn send_mode(
    b: Ptr,
    n: impl CountWidth,
    dt: MPI_Datatype,
    dest: c_int,
    tag: c_int,
    c: MPI_Comm,
    mode: Mode,
) -> Result<()> {
    // SAFETY: the caller's buffer is valid per the MPI contract.
    unsafe { p2p::send(buf(b, n, dt)?, dest, tag, comm(c)?, mode) }
}

unsafe fn isend_mode(
    b: Ptr,
    n: impl CountWidth,
    dt: MPI_Datatype,
    dest: c_int,
    tag: c_int,
    c: MPI_Comm,
    mode: Mode,
    req: *mut MPI_Request,
) -> Result<()> {
    let req = convert::out(req, "request")?;
    // SAFETY: the caller's buffer stays valid until completion (MPI contract).
    let id = unsafe { p2p::isend(buf(b, n, dt)?, dest, tag, comm(c)?, mode)? };
    // SAFETY: req checked non-null; the caller provides writable storage.
    unsafe { *req = request_handle(id) };
    Ok(())
}

unsafe fn init_mode(
    b: Ptr,
    n: impl CountWidth,
    dt: MPI_Datatype,
    dest: c_int,
    tag: c_int,
    c: MPI_Comm,
    mode: Mode,
    req: *mut MPI_Request,
) -> Result<()> {
    let req = convert::out(req, "request")?;
    // SAFETY: as for isend, for every start.
    let id = unsafe { p2p::send_init(buf(b, n, dt)?, dest, tag, comm(c)?, mode)? };
    // SAFETY: req checked non-null.
    unsafe { *req = request_handle(id) };
    Ok(())
}

count_fns! { MPI_Send / PMPI_Send, MPI_Send_c / PMPI_Send_c (b: Ptr, n: Count, dt: MPI_Datatype, dest: c_int, tag: c_int, c: MPI_Comm) target(convert::target(c)) {
    if let (Some(len), Some(id)) = (buf_bytes(b, n.get(), dt), handles::comm_index(c)) {
        // SAFETY: `b` holds `len` bytes (`n` elements of `dt`, MPI_Send's contract), only
        // read before the call returns.
        if unsafe { p2p_short::send(b.cast(), len, dest, tag, id) } {
            return Ok(());
        }
    }
    // SAFETY: `b` holds `n` elements of `dt` (MPI_Send's contract) and is only read, before the
    // call returns; `buf` checked the datatype and MPI_IN_PLACE.
    unsafe { send_mode(b, n, dt, dest, tag, c, Mode::Standard) }
}}
count_fns! { MPI_Bsend / PMPI_Bsend, MPI_Bsend_c / PMPI_Bsend_c (b: Ptr, n: Count, dt: MPI_Datatype, dest: c_int, tag: c_int, c: MPI_Comm) target(convert::target(c)) {
    // SAFETY: `b` holds `n` elements of `dt` (MPI_Bsend's contract) and is only read, before
    // the call returns; `buf` checked the datatype and MPI_IN_PLACE.
    unsafe { send_mode(b, n, dt, dest, tag, c, Mode::Buffered) }
}}
count_fns! { MPI_Ssend / PMPI_Ssend, MPI_Ssend_c / PMPI_Ssend_c (b: Ptr, n: Count, dt: MPI_Datatype, dest: c_int, tag: c_int, c: MPI_Comm) target(convert::target(c)) {
    // SAFETY: `b` holds `n` elements of `dt` (MPI_Ssend's contract) and is only read, before
    // the call returns; `buf` checked the datatype and MPI_IN_PLACE.
    unsafe { send_mode(b, n, dt, dest, tag, c, Mode::Synchronous) }
}}
count_fns! { MPI_Rsend / PMPI_Rsend, MPI_Rsend_c / PMPI_Rsend_c (b: Ptr, n: Count, dt: MPI_Datatype, dest: c_int, tag: c_int, c: MPI_Comm) target(convert::target(c)) {
    // SAFETY: `b` holds `n` elements of `dt` (MPI_Rsend's contract) and is only read, before
    // the call returns; `buf` checked the datatype and MPI_IN_PLACE.
    unsafe { send_mode(b, n, dt, dest, tag, c, Mode::Ready) }
}}
count_fns! { MPI_Isend / PMPI_Isend, MPI_Isend_c / PMPI_Isend_c (b: Ptr, n: Count, dt: MPI_Datatype, dest: c_int, tag: c_int, c: MPI_Comm, r: *mut MPI_Request) target(convert::target(c)) {
    if let (Some(len), Some(id), false) = (buf_bytes(b, n.get(), dt), handles::comm_index(c), r.is_null()) {
        // SAFETY: `b` holds `len` bytes (`n` elements of `dt`, MPI_Isend's contract); a
        // message that left was copied before the call returns.
        if unsafe { p2p_short::send(b.cast(), len, dest, tag, id) } {
            // SAFETY: `r` is non-null and points to a writable MPI_Request (MPI contract).
            unsafe { *r = request_handle(DONE_SEND) };
            return Ok(());
        }
    }
    // SAFETY: `b` holds `n` elements of `dt` and stays unmodified until the request completes,
    // and `r` points to a writable MPI_Request (MPI_Isend's contract; `isend_mode` refuses
    // NULL).
    unsafe { isend_mode(b, n, dt, dest, tag, c, Mode::Standard, r) }
}}
count_fns! { MPI_Ibsend / PMPI_Ibsend, MPI_Ibsend_c / PMPI_Ibsend_c (b: Ptr, n: Count, dt: MPI_Datatype, dest: c_int, tag: c_int, c: MPI_Comm, r: *mut MPI_Request) target(convert::target(c)) {
    // SAFETY: `b` holds `n` elements of `dt` and stays unmodified until the request completes,
    // and `r` points to a writable MPI_Request (MPI_Ibsend's contract; `isend_mode` refuses
    // NULL).
    unsafe { isend_mode(b, n, dt, dest, tag, c, Mode::Buffered, r) }
}}
count_fns! { MPI_Issend / PMPI_Issend, MPI_Issend_c / PMPI_Issend_c (b: Ptr, n: Count, dt: MPI_Datatype, dest: c_int, tag: c_int, c: MPI_Comm, r: *mut MPI_Request) target(convert::target(c)) {
    // SAFETY: `b` holds `n` elements of `dt` and stays unmodified until the request completes,
    // and `r` points to a writable MPI_Request (MPI_Issend's contract; `isend_mode` refuses
    // NULL).
    unsafe { isend_mode(b, n, dt, dest, tag, c, Mode::Synchronous, r) }
}}
count_fns! { MPI_Irsend / PMPI_Irsend, MPI_Irsend_c / PMPI_Irsend_c (b: Ptr, n: Count, dt: MPI_Datatype, dest: c_int, tag: c_int, c: MPI_Comm, r: *mut MPI_Request) target(convert::target(c)) {
    // SAFETY: `b` holds `n` elements of `dt` and stays unmodified until the request completes,
    // and `r` points to a writable MPI_Request (MPI_Irsend's contract; `isend_mode` refuses
    // NULL).
    unsafe { isend_mode(b, n, dt, dest, tag, c, Mode::Ready, r) }
}}
count_fns! { MPI_Send_init / PMPI_Send_init, MPI_Send_init_c / PMPI_Send_init_c (b: Ptr, n: Count, dt: MPI_Datatype, dest: c_int, tag: c_int, c: MPI_Comm, r: *mut MPI_Request) target(convert::target(c)) {
    // SAFETY: `b` holds `n` elements of `dt` and stays valid while the persistent request
    // exists, and `r` points to a writable MPI_Request (MPI_Send_init's contract; `init_mode`
    // refuses NULL).
    unsafe { init_mode(b, n, dt, dest, tag, c, Mode::Standard, r) }
}}
count_fns! { MPI_Bsend_init / PMPI_Bsend_init, MPI_Bsend_init_c / PMPI_Bsend_init_c (b: Ptr, n: Count, dt: MPI_Datatype, dest: c_int, tag: c_int, c: MPI_Comm, r: *mut MPI_Request) target(convert::target(c)) {
    // SAFETY: `b` holds `n` elements of `dt` and stays valid while the persistent request
    // exists, and `r` points to a writable MPI_Request (MPI_Bsend_init's contract; `init_mode`
    // refuses NULL).
    unsafe { init_mode(b, n, dt, dest, tag, c, Mode::Buffered, r) }
}}
count_fns! { MPI_Ssend_init / PMPI_Ssend_init, MPI_Ssend_init_c / PMPI_Ssend_init_c (b: Ptr, n: Count, dt: MPI_Datatype, dest: c_int, tag: c_int, c: MPI_Comm, r: *mut MPI_Request) target(convert::target(c)) {
    // SAFETY: `b` holds `n` elements of `dt` and stays valid while the persistent request
    // exists, and `r` points to a writable MPI_Request (MPI_Ssend_init's contract; `init_mode`
    // refuses NULL).
    unsafe { init_mode(b, n, dt, dest, tag, c, Mode::Synchronous, r) }
}}
count_fns! { MPI_Rsend_init / PMPI_Rsend_init, MPI_Rsend_init_c / PMPI_Rsend_init_c (b: Ptr, n: Count, dt: MPI_Datatype, dest: c_int, tag: c_int, c: MPI_Comm, r: *mut MPI_Request) target(convert::target(c)) {
    // SAFETY: `b` holds `n` elements of `dt` and stays valid while the persistent request
    // exists, and `r` points to a writable MPI_Request (MPI_Rsend_init's contract; `init_mode`
    // refuses NULL).
    unsafe { init_mode(b, n, dt, dest, tag, c, Mode::Ready, r) }
}}

count_fns! { MPI_Recv / PMPI_Recv, MPI_Recv_c / PMPI_Recv_c (b: MutPtr, n: Count, dt: MPI_Datatype, src: c_int, tag: c_int, c: MPI_Comm, st: *mut MPI_Status) target(convert::target(c)) {
    let st = status_ptr(st)?;
    let s = match (buf_bytes(b.cast_const(), n.get(), dt), handles::comm_index(c)) {
        // SAFETY: the caller's buffer holds `cap` bytes (`n` elements of `dt`, MPI contract).
        (Some(cap), Some(id)) => match unsafe { p2p_short::recv(b.cast(), cap, src, tag, id) } {
            ShortRecv::Took(s) => s,
            // SAFETY: `a` describes the caller's buffer, valid for the call (MPI contract).
            ShortRecv::Wait(a, from) => unsafe { p2p::recv_wait_direct(a, from, id)? },
            // SAFETY: as above.
            ShortRecv::Declined => unsafe { p2p::recv(buf(b, n, dt)?, src, tag, comm(c)?)? },
        },
        // SAFETY: the caller's buffer holds n elements (MPI contract).
        _ => unsafe { p2p::recv(buf(b, n, dt)?, src, tag, comm(c)?)? },
    };
    // SAFETY: st is a valid status pointer or MPI_STATUS_IGNORE.
    unsafe { write_status(st, &s, false) };
    convert::status_error(&s)
}}

count_fns! { MPI_Irecv / PMPI_Irecv, MPI_Irecv_c / PMPI_Irecv_c (b: MutPtr, n: Count, dt: MPI_Datatype, src: c_int, tag: c_int, c: MPI_Comm, r: *mut MPI_Request) target(convert::target(c)) {
    let r = convert::out(r, "request")?;
    let short = match (buf_bytes(b.cast_const(), n.get(), dt), handles::comm_index(c)) {
        // SAFETY: the buffer holds `cap` bytes and stays valid until completion (MPI contract).
        (Some(cap), Some(id)) => unsafe { p2p_short::irecv(b.cast(), cap, src, tag, id) },
        _ => None,
    };
    let id = match short {
        Some(id) => id,
        // SAFETY: the buffer stays valid until completion (MPI contract).
        None => unsafe { p2p::irecv(buf(b, n, dt)?, src, tag, comm(c)?)? },
    };
    // SAFETY: r checked non-null.
    unsafe { *r = request_handle(id) };
    Ok(())
}}

count_fns! { MPI_Recv_init / PMPI_Recv_init, MPI_Recv_init_c / PMPI_Recv_init_c (b: MutPtr, n: Count, dt: MPI_Datatype, src: c_int, tag: c_int, c: MPI_Comm, r: *mut MPI_Request) target(convert::target(c)) {
    let r = convert::out(r, "request")?;
    // SAFETY: as for irecv, for every start.
    let id = unsafe { p2p::recv_init(buf(b, n, dt)?, src, tag, comm(c)?)? };
    // SAFETY: r checked non-null.
    unsafe { *r = request_handle(id) };
    Ok(())
}}

count_fns! { MPI_Sendrecv / PMPI_Sendrecv, MPI_Sendrecv_c / PMPI_Sendrecv_c (sb: Ptr, sn: Count, sdt: MPI_Datatype, dest: c_int, stag: c_int,
        rb: MutPtr, rn: Count, rdt: MPI_Datatype, src: c_int, rtag: c_int, c: MPI_Comm, st: *mut MPI_Status) target(convert::target(c)) {
    let st = status_ptr(st)?;
    // SAFETY: both buffers are valid per the MPI contract.
    let s = unsafe { p2p::sendrecv(buf(sb, sn, sdt)?, dest, stag, buf(rb, rn, rdt)?, src, rtag, comm(c)?)? };
    // SAFETY: st valid or ignore.
    unsafe { write_status(st, &s, false) };
    convert::status_error(&s)
}}

count_fns! { MPI_Sendrecv_replace / PMPI_Sendrecv_replace, MPI_Sendrecv_replace_c / PMPI_Sendrecv_replace_c (b: MutPtr, n: Count, dt: MPI_Datatype, dest: c_int, stag: c_int,
        src: c_int, rtag: c_int, c: MPI_Comm, st: *mut MPI_Status) target(convert::target(c)) {
    let st = status_ptr(st)?;
    // SAFETY: the buffer is valid per the MPI contract.
    let s = unsafe { p2p::sendrecv_replace(buf(b, n, dt)?, dest, stag, src, rtag, comm(c)?)? };
    // SAFETY: st valid or ignore.
    unsafe { write_status(st, &s, false) };
    convert::status_error(&s)
}}

/// The error handler target of a request (its communicator).
///
/// # Safety
/// `r` must be null (gives `Target::None`) or point to a readable `MPI_Request`.
unsafe fn req_target(r: *mut MPI_Request) -> Target {
    if r.is_null() {
        return Target::None;
    }
    // SAFETY: r is non-null and points to the caller's request handle.
    let h = unsafe { *r };
    match request(h).ok().flatten().and_then(p2p::request_comm) {
        Some(c) => Target::Comm(c),
        None => Target::None,
    }
}

/// The error of completed request `id` (reported to its communicator's handler).
#[inline]
fn request_error(id: ReqId, c: &Completion) -> Result<()> {
    convert::status_error(&c.status).map_err(|e| on_request(e, id, c))
}

/// `e`, to be reported to the handler of the communicator of request `id`, which
/// finished as `c`.
#[cold]
#[inline(never)]
fn on_request(e: Error, id: ReqId, c: &Completion) -> Error {
    match p2p::failed_comm(id, &c.status) {
        Some(comm) => e.on_comm(comm),
        None => e,
    }
}

/// Applies a completion to the caller's handle: freed requests become MPI_REQUEST_NULL.
unsafe fn settle(r: *mut MPI_Request, c: &Completion) {
    if c.freed {
        // SAFETY: r points to the caller's handle (checked by the callers).
        unsafe { *r = crate::handles::MPI_REQUEST_NULL };
    }
}

mpi_fn! { MPI_Wait / PMPI_Wait (r: *mut MPI_Request, st: *mut MPI_Status) target(lazy
    // SAFETY: `r` is NULL or the address of the C caller's request handle (MPI contract),
    // which is all `req_target` reads.
    unsafe { req_target(r) }
) {
    let r = convert::out(r, "request")?;
    let st = status_ptr(st)?;
    // SAFETY: r checked non-null.
    let Some(id) = request(unsafe { *r })? else {
        // SAFETY: st valid or ignore.
        unsafe { write_status(st, &oxmpi_core::device::Status::EMPTY, false) };
        return Ok(());
    };
    if crate::grequest::is_generalized(id) {
        // SAFETY: r and st checked above.
        return unsafe { crate::grequest::wait(r, id, st) };
    }
    let c = p2p::wait(id)?;
    // SAFETY: r and st checked above.
    unsafe {
        settle(r, &c);
        write_status(st, &c.status, false);
    }
    request_error(id, &c)
}}

mpi_fn! { MPI_Test / PMPI_Test (r: *mut MPI_Request, flag: *mut c_int, st: *mut MPI_Status) target(lazy
    // SAFETY: `r` is NULL or the address of the C caller's request handle (MPI contract),
    // which is all `req_target` reads.
    unsafe { req_target(r) }
) {
    let r = convert::out(r, "request")?;
    let flag = convert::out(flag, "flag")?;
    let st = status_ptr(st)?;
    // SAFETY: r checked non-null.
    let Some(id) = request(unsafe { *r })? else {
        // SAFETY: flag and st checked.
        unsafe {
            *flag = 1;
            write_status(st, &oxmpi_core::device::Status::EMPTY, false);
        }
        return Ok(());
    };
    if crate::grequest::is_generalized(id) {
        // SAFETY: r, flag and st checked above.
        return unsafe { crate::grequest::test(r, id, flag, st) };
    }
    match p2p::test(id)? {
        Some(c) => {
            // SAFETY: pointers checked above.
            unsafe {
                *flag = 1;
                settle(r, &c);
                write_status(st, &c.status, false);
            }
            request_error(id, &c)
        }
        None => {
            // SAFETY: flag checked.
            unsafe { *flag = 0 };
            Ok(())
        }
    }
}}

/// Reads `n` request handles.
pub(crate) unsafe fn read_requests(n: c_int, rs: *mut MPI_Request) -> Result<Vec<Option<ReqId>>> {
    let mut ids = vec![None; n.max(0) as usize];
    // SAFETY: forwarded contract.
    unsafe { read_requests_into(n, rs, &mut ids)? };
    Ok(ids)
}

/// Reads the `n` handles of `rs` into `ids` (at least `n` long once `n` is checked).
unsafe fn read_requests_into(
    n: c_int,
    rs: *mut MPI_Request,
    ids: &mut [Option<ReqId>],
) -> Result<()> {
    if n < 0 {
        return Err(Error::new(ErrorClass::Count, format!("invalid count {n}")));
    }
    if n > 0 && rs.is_null() {
        return Err(Error::new(ErrorClass::Arg, "null array of requests"));
    }
    for (i, id) in ids[..n as usize].iter_mut().enumerate() {
        // SAFETY: the array holds n handles (MPI contract).
        *id = request(unsafe { *rs.add(i) })?;
    }
    Ok(())
}

/// The status array of a call on `n` requests: with none, nothing is written and a
/// null array is valid.
#[inline(always)]
pub(crate) fn statuses_ptr(n: c_int, st: *mut MPI_Status) -> Result<*mut MPI_Status> {
    if !st.is_null() || n == 0 {
        return Ok(st);
    }
    convert::out(
        st,
        "array of statuses (use MPI_STATUSES_IGNORE to ignore them)",
    )
}

/// Status slot `i` of an array, or the ignore marker.
///
/// # Safety
/// `st` must be null, `MPI_STATUSES_IGNORE` (both returned as they are), or an array of
/// more than `i` statuses.
pub(crate) unsafe fn nth(st: *mut MPI_Status, i: usize) -> *mut MPI_Status {
    if st.is_null() || st as usize == STATUS_IGNORE {
        st
    } else {
        // SAFETY: not the ignore marker, so an array of more than `i` statuses (this function's
        // contract).
        unsafe { st.add(i) }
    }
}

mpi_fn! { MPI_Waitany / PMPI_Waitany (n: c_int, rs: *mut MPI_Request, index: *mut c_int, st: *mut MPI_Status) target(Target::None) {
    // SAFETY: rs holds n handles.
    let ids = unsafe { read_requests(n, rs)? };
    let index = convert::out(index, "index")?;
    let st = status_ptr(st)?;
    if crate::grequest::involved(&ids) {
        // SAFETY: pointers checked; rs holds n handles.
        return unsafe { crate::grequest::waitany(rs, &ids, index, st) };
    }
    match p2p::waitany(&ids)? {
        None => {
            // SAFETY: pointers checked.
            unsafe {
                *index = UNDEFINED;
                write_status(st, &oxmpi_core::device::Status::EMPTY, false);
            }
            Ok(())
        }
        Some((i, c)) => {
            // SAFETY: i < n; pointers checked.
            unsafe {
                *index = i as c_int;
                settle(rs.add(i), &c);
                write_status(st, &c.status, false);
            }
            request_error(ids[i].expect("a finished request"), &c)
        }
    }
}}

mpi_fn! { MPI_Testany / PMPI_Testany (n: c_int, rs: *mut MPI_Request, index: *mut c_int, flag: *mut c_int, st: *mut MPI_Status) target(Target::None) {
    // SAFETY: rs holds n handles.
    let ids = unsafe { read_requests(n, rs)? };
    let index = convert::out(index, "index")?;
    let flag = convert::out(flag, "flag")?;
    let st = status_ptr(st)?;
    if crate::grequest::involved(&ids) {
        // SAFETY: pointers checked; rs holds n handles.
        return unsafe { crate::grequest::testany(rs, &ids, index, flag, st) };
    }
    let (f, which) = p2p::testany(&ids)?;
    // SAFETY: pointers checked; i < n.
    unsafe {
        *flag = f as c_int;
        *index = UNDEFINED;
        match which {
            Some((i, c)) => {
                *index = i as c_int;
                settle(rs.add(i), &c);
                write_status(st, &c.status, false);
                return request_error(ids[i].expect("a finished request"), &c);
            }
            None if f => write_status(st, &oxmpi_core::device::Status::EMPTY, false),
            None => {}
        }
    }
    Ok(())
}}

/// Writes the results of a wait/test-all; true when any request failed (the caller
/// reports `MPI_ERR_IN_STATUS`: [`all_failed`]).
unsafe fn report_all(
    rs: *mut MPI_Request,
    st: *mut MPI_Status,
    done: &[Option<Completion>],
) -> bool {
    if st as usize == STATUS_IGNORE {
        // One pass: settle the handles and note any failure.
        let mut failed = false;
        for (i, c) in done.iter().enumerate() {
            if let Some(c) = c {
                failed |= c.status.error != ErrorClass::Success;
                // SAFETY: i < n (MPI contract).
                unsafe { settle(rs.add(i), c) };
            }
        }
        failed
    } else {
        // The MPI_ERROR fields are written only when some request failed.
        let failed = done
            .iter()
            .flatten()
            .any(|c| c.status.error != ErrorClass::Success);
        // SAFETY: st holds n statuses (MPI contract).
        unsafe { write_all(rs, st, done, failed) };
        failed
    }
}

/// The `MPI_ERR_IN_STATUS` of a wait/test-all over `ids` that finished as `done`.
#[cold]
#[inline(never)]
fn all_failed(ids: &[Option<ReqId>], done: &[Option<Completion>]) -> Error {
    in_status(
        ids.iter()
            .zip(done)
            .filter_map(|(id, c)| Some((*id)?).zip(c.as_ref())),
    )
}

/// `MPI_ERR_IN_STATUS`, reported to the handler of the communicator of the first
/// failed request among `done`.
#[cold]
#[inline(never)]
fn in_status<'a>(done: impl IntoIterator<Item = (ReqId, &'a Completion)>) -> Error {
    let e = Error::new(
        ErrorClass::InStatus,
        "one or more requests failed; see the MPI_ERROR field of their statuses",
    );
    match done
        .into_iter()
        .find(|(_, c)| c.status.error != ErrorClass::Success)
        .and_then(|(id, c)| p2p::failed_comm(id, &c.status))
    {
        Some(comm) => e.on_comm(comm),
        None => e,
    }
}

/// Settles the handles of completed requests and writes every status (the `MPI_ERROR`
/// fields only when some request `failed`).
///
/// # Safety
/// `rs` and `st` hold `done.len()` entries.
unsafe fn write_all(
    rs: *mut MPI_Request,
    st: *mut MPI_Status,
    done: &[Option<Completion>],
    failed: bool,
) {
    for (i, c) in done.iter().enumerate() {
        let s = c
            .map(|c| c.status)
            .unwrap_or(oxmpi_core::device::Status::EMPTY);
        // SAFETY: i < n for both arrays (MPI contract).
        unsafe {
            if let Some(c) = c {
                settle(rs.add(i), c);
            }
            write_status(st.add(i), &s, failed);
        }
    }
}

/// `MPI_Waitall` on `n` handles with the working arrays in `ids` and `done`, each at
/// least `n` long (or empty, for `n` < 0, which `read_requests_into` refuses).
///
/// # Safety
/// `rs` holds `n` handles and `st` `n` statuses (or is `MPI_STATUSES_IGNORE`).
unsafe fn waitall_in(
    n: c_int,
    rs: *mut MPI_Request,
    st: *mut MPI_Status,
    ids: &mut [Option<ReqId>],
    done: &mut [Option<Completion>],
) -> Result<()> {
    // SAFETY: rs holds n handles.
    unsafe { read_requests_into(n, rs, ids)? };
    let ids = &ids[..n as usize];
    let st = statuses_ptr(n, st)?;
    if crate::grequest::involved(ids) {
        // SAFETY: arrays of n entries.
        return unsafe { crate::grequest::waitall(rs, ids, st) };
    }
    let done = &mut done[..ids.len()];
    p2p::waitall_into(ids, done)?;
    // SAFETY: arrays of n entries.
    if unsafe { report_all(rs, st, done) } {
        return Err(all_failed(ids, done));
    }
    Ok(())
}

/// [`waitall_in`] with arrays of `N` entries on the stack (`n` <= `N`).
///
/// # Safety
/// As for [`waitall_in`].
unsafe fn waitall_on_stack<const N: usize>(
    n: c_int,
    rs: *mut MPI_Request,
    st: *mut MPI_Status,
) -> Result<()> {
    let (mut ids, mut done) = ([None; N], [None; N]);
    // SAFETY: per the contract.
    unsafe { waitall_in(n, rs, st, &mut ids, &mut done) }
}

mpi_fn! { MPI_Waitall / PMPI_Waitall (n: c_int, rs: *mut MPI_Request, st: *mut MPI_Status) target(Target::None) {
    // Short arrays (the common case) stay off the heap, and the shortest touch only
    // the stack they need.
    // SAFETY (all three): rs holds n handles and st n statuses (MPI contract).
    match n {
        // SAFETY: `rs` holds `n` handles and `st` `n` statuses or is MPI_STATUSES_IGNORE
        // (MPI_Waitall's contract); the stack arrays hold 4 >= `n` entries.
        0..=4 => unsafe { waitall_on_stack::<4>(n, rs, st) },
        // SAFETY: as in the arm above, with 16 >= `n` entries on the stack.
        5..=16 => unsafe { waitall_on_stack::<16>(n, rs, st) },
        // A window of nonblocking operations (64 is the usual) stays off the heap too.
        // SAFETY: as in the first arm, with 64 >= `n` entries on the stack.
        17..=64 => unsafe { waitall_on_stack::<64>(n, rs, st) },
        _ => {
            let len = n.max(0) as usize;
            let (mut ids, mut done) = (vec![None; len], vec![None; len]);
            // SAFETY: as in the first arm, with `n` entries on the heap (`n` < 0 is refused
            // inside, before any read).
            unsafe { waitall_in(n, rs, st, &mut ids, &mut done) }
        }
    }
}}

mpi_fn! { MPI_Testall / PMPI_Testall (n: c_int, rs: *mut MPI_Request, flag: *mut c_int, st: *mut MPI_Status) target(Target::None) {
    // SAFETY: rs holds n handles.
    let ids = unsafe { read_requests(n, rs)? };
    let flag = convert::out(flag, "flag")?;
    let st = statuses_ptr(n, st)?;
    if crate::grequest::involved(&ids) {
        // SAFETY: flag checked; arrays of n entries.
        return unsafe { crate::grequest::testall(rs, &ids, flag, st) };
    }
    match p2p::testall(&ids)? {
        Some(done) => {
            // SAFETY: flag checked.
            unsafe { *flag = 1 };
            // SAFETY: arrays of n entries.
            if unsafe { report_all(rs, st, &done) } {
                return Err(all_failed(&ids, &done));
            }
            Ok(())
        }
        None => {
            // SAFETY: flag checked.
            unsafe { *flag = 0 };
            Ok(())
        }
    }
}}

/// Writes the results of a wait/test-some.
unsafe fn report_some(
    rs: *mut MPI_Request,
    ids: &[Option<ReqId>],
    outcount: *mut c_int,
    indices: *mut c_int,
    st: *mut MPI_Status,
    done: Option<Vec<(usize, Completion)>>,
) -> Result<()> {
    let Some(done) = done else {
        // SAFETY: outcount checked by the caller.
        unsafe { *outcount = UNDEFINED };
        return Ok(());
    };
    let failed = done
        .iter()
        .any(|(_, c)| c.status.error != ErrorClass::Success);
    // SAFETY: outcount checked; indices/statuses hold n entries and done.len() <= n.
    unsafe {
        *outcount = done.len() as c_int;
        for (k, (i, c)) in done.iter().enumerate() {
            *indices.add(k) = *i as c_int;
            settle(rs.add(*i), c);
            write_status(nth(st, k), &c.status, failed);
        }
    }
    if failed {
        return Err(in_status(
            done.iter().filter_map(|(i, c)| Some((ids[*i]?, c))),
        ));
    }
    Ok(())
}

mpi_fn! { MPI_Waitsome / PMPI_Waitsome (n: c_int, rs: *mut MPI_Request, outcount: *mut c_int, indices: *mut c_int, st: *mut MPI_Status) target(Target::None) {
    // SAFETY: rs holds n handles.
    let ids = unsafe { read_requests(n, rs)? };
    let outcount = convert::out(outcount, "outcount")?;
    if n > 0 {
        convert::out(indices, "array of indices")?;
    }
    let st = statuses_ptr(n, st)?;
    if crate::grequest::involved(&ids) {
        // SAFETY: arrays of n entries.
        return unsafe { crate::grequest::waitsome(rs, &ids, outcount, indices, st) };
    }
    let done = p2p::waitsome(&ids)?;
    // SAFETY: arrays of n entries.
    unsafe { report_some(rs, &ids, outcount, indices, st, done) }
}}

mpi_fn! { MPI_Testsome / PMPI_Testsome (n: c_int, rs: *mut MPI_Request, outcount: *mut c_int, indices: *mut c_int, st: *mut MPI_Status) target(Target::None) {
    // SAFETY: rs holds n handles.
    let ids = unsafe { read_requests(n, rs)? };
    let outcount = convert::out(outcount, "outcount")?;
    if n > 0 {
        convert::out(indices, "array of indices")?;
    }
    let st = statuses_ptr(n, st)?;
    if crate::grequest::involved(&ids) {
        // SAFETY: arrays of n entries.
        return unsafe { crate::grequest::testsome(rs, &ids, outcount, indices, st) };
    }
    let done = p2p::testsome(&ids)?;
    // SAFETY: arrays of n entries.
    unsafe { report_some(rs, &ids, outcount, indices, st, done) }
}}

mpi_fn! { MPI_Request_free / PMPI_Request_free (r: *mut MPI_Request) target(lazy
    // SAFETY: `r` is NULL or the address of the C caller's request handle (MPI contract),
    // which is all `req_target` reads.
    unsafe { req_target(r) }
) {
    let r = convert::out(r, "request")?;
    // SAFETY: r checked non-null.
    let Some(id) = request(unsafe { *r })? else {
        return Err(Error::new(ErrorClass::Request, "cannot free MPI_REQUEST_NULL"));
    };
    if crate::grequest::is_generalized(id) {
        crate::grequest::request_free(id)?;
    } else {
        p2p::request_free(id)?;
    }
    // SAFETY: r checked.
    unsafe { *r = crate::handles::MPI_REQUEST_NULL };
    Ok(())
}}

mpi_fn! { MPI_Cancel / PMPI_Cancel (r: *mut MPI_Request) target(lazy
    // SAFETY: `r` is NULL or the address of the C caller's request handle (MPI contract),
    // which is all `req_target` reads.
    unsafe { req_target(r) }
) {
    let r = convert::out(r, "request")?;
    // SAFETY: r checked non-null.
    let Some(id) = request(unsafe { *r })? else {
        return Err(Error::new(ErrorClass::Request, "cannot cancel MPI_REQUEST_NULL"));
    };
    if crate::grequest::is_generalized(id) {
        return crate::grequest::cancel(id);
    }
    p2p::cancel(id)
}}

mpi_fn! { MPI_Test_cancelled / PMPI_Test_cancelled (st: *const MPI_Status, flag: *mut c_int) target(Target::None) {
    let flag = convert::out(flag, "flag")?;
    if st.is_null() || st as usize == STATUS_IGNORE {
        return Err(Error::new(ErrorClass::Arg, "status must be a real status, not null or MPI_STATUS_IGNORE"));
    }
    // SAFETY: st points to a status (checked above), flag non-null.
    unsafe { *flag = convert::is_cancelled(&*st) as c_int };
    Ok(())
}}

mpi_fn! { MPI_Start / PMPI_Start (r: *mut MPI_Request) target(lazy
    // SAFETY: `r` is NULL or the address of the C caller's request handle (MPI contract),
    // which is all `req_target` reads.
    unsafe { req_target(r) }
) {
    let r = convert::out(r, "request")?;
    // SAFETY: r checked non-null.
    let Some(id) = request(unsafe { *r })? else {
        return Err(Error::new(ErrorClass::Request, "cannot start MPI_REQUEST_NULL"));
    };
    p2p::start(id)
}}

mpi_fn! { MPI_Startall / PMPI_Startall (n: c_int, rs: *mut MPI_Request) target(Target::None) {
    // SAFETY: rs holds n handles.
    let ids = unsafe { read_requests(n, rs)? };
    let ids: Vec<ReqId> = ids
        .into_iter()
        .map(|i| i.ok_or_else(|| Error::new(ErrorClass::Request, "cannot start MPI_REQUEST_NULL")))
        .collect::<Result<_>>()?;
    p2p::startall(&ids)
}}

mpi_fn! { MPI_Iprobe / PMPI_Iprobe (src: c_int, tag: c_int, c: MPI_Comm, flag: *mut c_int, st: *mut MPI_Status) target(convert::target(c)) {
    let flag = convert::out(flag, "flag")?;
    let st = status_ptr(st)?;
    let s = p2p::iprobe(src, tag, comm(c)?)?;
    // SAFETY: pointers checked.
    unsafe {
        *flag = s.is_some() as c_int;
        if let Some(s) = s {
            write_status(st, &s, false);
        }
    }
    Ok(())
}}

mpi_fn! { MPI_Probe / PMPI_Probe (src: c_int, tag: c_int, c: MPI_Comm, st: *mut MPI_Status) target(convert::target(c)) {
    let st = status_ptr(st)?;
    let s = p2p::probe(src, tag, comm(c)?)?;
    // SAFETY: st checked.
    unsafe { write_status(st, &s, false) };
    Ok(())
}}

mpi_fn! { MPI_Get_count / PMPI_Get_count (st: *const MPI_Status, dt: MPI_Datatype, count: *mut c_int) target(Target::None) {
    let count = convert::out(count, "count")?;
    if st.is_null() || st as usize == STATUS_IGNORE {
        return Err(Error::new(ErrorClass::Arg, "status must be a real status, not null or MPI_STATUS_IGNORE"));
    }
    let ty = convert::datatype(dt)?;
    // SAFETY: st points to a status (checked).
    let bytes = convert::get_count(unsafe { &*st });
    // Whole elements of the type; MPI_UNDEFINED for a partial last element.
    let n = oxmpi_core::types::count_in(ty, bytes)?
        .and_then(|n| c_int::try_from(n).ok())
        .unwrap_or(UNDEFINED);
    // SAFETY: count checked.
    unsafe { *count = n };
    Ok(())
}}

mpi_fn! { MPI_Pack_size / PMPI_Pack_size (n: c_int, dt: MPI_Datatype, c: MPI_Comm, size: *mut c_int) target(convert::target(c)) {
    let size = convert::out(size, "size")?;
    convert::live_comm(c)?;
    let bytes = p2p::pack_size(n, convert::datatype(dt)?)?;
    if bytes > i32::MAX as usize {
        return Err(Error::new(ErrorClass::Count, format!("packed size {bytes} does not fit in an int")));
    }
    // SAFETY: size checked.
    unsafe { *size = bytes as c_int };
    Ok(())
}}
