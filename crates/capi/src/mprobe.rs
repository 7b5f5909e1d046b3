//! Matched probe entry points: `MPI_Mprobe`, `MPI_Improbe`, `MPI_Mrecv`, `MPI_Imrecv`,
//! `MPI_Mrecv_c`, `MPI_Imrecv_c`, and the `MPI_Message` handles they trade
//! (`0xa8000000 | index` for a matched message, MPICH's `MPI_MESSAGE_NULL` and
//! `MPI_MESSAGE_NO_PROC`). `MPI_Message_c2f`/`f2c` are casts in `mpi.h`, as in MPICH.
//!
//! A message handle that names no waiting message (`MPI_MESSAGE_NULL`, a stale one
//! after its receive, or any other value) is refused with `MPI_ERR_REQUEST`, as Open
//! MPI does and MPICH does for its message requests (the standard has no class of its
//! own for messages). The receive's errors go to the handler of the message's
//! communicator.

use crate::convert::{self, comm, request_handle, status_ptr, write_status};
use crate::export::Target;
use crate::handles::{
    self, MPI_Comm, MPI_Count, MPI_Datatype, MPI_Message, MPI_Request, MPI_Status,
    MPI_MESSAGE_NO_PROC, MPI_MESSAGE_NULL,
};
use crate::mpi_fn;
use oxmpi_core::mprobe::{self, Message, RecvBuf};
use oxmpi_core::{Error, ErrorClass, Result};
use std::ffi::c_void;
use std::os::raw::c_int;

type MutPtr = *mut c_void;

/// The handle of a message a probe returned.
fn message_handle(m: Message) -> MPI_Message {
    match m {
        Message::NoProc => MPI_MESSAGE_NO_PROC,
        Message::Matched(id) => handles::message_handle(id),
    }
}

/// The message a handle names.
fn message(h: MPI_Message) -> Result<Message> {
    if h == MPI_MESSAGE_NO_PROC {
        return Ok(Message::NoProc);
    }
    if let Some(id) = handles::message_index(h) {
        return Ok(Message::Matched(id));
    }
    let what = if h == MPI_MESSAGE_NULL {
        "MPI_MESSAGE_NULL".to_string()
    } else {
        format!("{h:#x}")
    };
    Err(Error::new(
        ErrorClass::Request,
        format!("invalid message handle {what} (not returned by MPI_Mprobe or MPI_Improbe)"),
    ))
}

/// The error handler target of a matched receive: the message's communicator.
///
/// # Safety
/// `m` must be null or point to a readable `MPI_Message`.
unsafe fn message_target(m: *mut MPI_Message) -> Target {
    if m.is_null() {
        return Target::None;
    }
    // SAFETY: m is non-null and points to the caller's message handle.
    let h = unsafe { *m };
    match message(h).ok().and_then(mprobe::message_comm) {
        Some(c) => Target::Comm(c),
        None => Target::None,
    }
}

mpi_fn! { MPI_Mprobe / PMPI_Mprobe (src: c_int, tag: c_int, c: MPI_Comm, m: *mut MPI_Message, st: *mut MPI_Status) target(convert::target(c)) {
    let m = convert::out(m, "message")?;
    let st = status_ptr(st)?;
    let (msg, s) = mprobe::mprobe(src, tag, comm(c)?)?;
    // SAFETY: m checked non-null; st a status or MPI_STATUS_IGNORE.
    unsafe {
        *m = message_handle(msg);
        write_status(st, &s, false);
    }
    Ok(())
}}

mpi_fn! { MPI_Improbe / PMPI_Improbe (src: c_int, tag: c_int, c: MPI_Comm, flag: *mut c_int, m: *mut MPI_Message, st: *mut MPI_Status) target(convert::target(c)) {
    let flag = convert::out(flag, "flag")?;
    let m = convert::out(m, "message")?;
    let st = status_ptr(st)?;
    let found = mprobe::improbe(src, tag, comm(c)?)?;
    // SAFETY: flag and m checked non-null; st a status or MPI_STATUS_IGNORE.
    unsafe {
        *flag = found.is_some() as c_int;
        if let Some((msg, s)) = found {
            *m = message_handle(msg);
            write_status(st, &s, false);
        }
    }
    Ok(())
}}

/// `MPI_Mrecv` and `MPI_Mrecv_c`.
///
/// # Safety
/// `b` holds `n` elements of `dt`; `m` is null or points to a writable handle; `st` is
/// a status or `MPI_STATUS_IGNORE`.
unsafe fn mrecv(
    b: MutPtr,
    n: i64,
    dt: MPI_Datatype,
    m: *mut MPI_Message,
    st: *mut MPI_Status,
) -> Result<()> {
    let m = convert::out(m, "message")?;
    let st = status_ptr(st)?;
    convert::not_in_place(b, "buffer")?;
    // SAFETY: m checked non-null.
    let msg = message(unsafe { *m })?;
    let rb = RecvBuf {
        addr: b as usize,
        count: n,
        ty: convert::datatype(dt)?,
    };
    // Once received, the message no longer names its communicator: a truncation is
    // reported to the handler it had.
    let owner = mprobe::message_comm(msg);
    // SAFETY: the buffer holds n elements of dt (the caller's contract).
    let s = unsafe { mprobe::mrecv(rb, msg)? };
    // SAFETY: m checked; st a status or ignore.
    unsafe {
        *m = MPI_MESSAGE_NULL;
        write_status(st, &s, false);
    }
    convert::status_error(&s).map_err(|e| match owner {
        Some(c) => e.on_comm(c),
        None => e,
    })
}

/// `MPI_Imrecv` and `MPI_Imrecv_c`.
///
/// # Safety
/// `b` holds `n` elements of `dt` until the request completes; `m` and `r` are null or
/// point to writable handles.
unsafe fn imrecv(
    b: MutPtr,
    n: i64,
    dt: MPI_Datatype,
    m: *mut MPI_Message,
    r: *mut MPI_Request,
) -> Result<()> {
    let m = convert::out(m, "message")?;
    let r = convert::out(r, "request")?;
    convert::not_in_place(b, "buffer")?;
    // SAFETY: m checked non-null.
    let msg = message(unsafe { *m })?;
    let rb = RecvBuf {
        addr: b as usize,
        count: n,
        ty: convert::datatype(dt)?,
    };
    // SAFETY: the buffer stays valid until the request completes (the caller's contract).
    let id = unsafe { mprobe::imrecv(rb, msg)? };
    // SAFETY: m and r checked non-null.
    unsafe {
        *m = MPI_MESSAGE_NULL;
        *r = request_handle(id);
    }
    Ok(())
}

mpi_fn! { MPI_Mrecv / PMPI_Mrecv (b: MutPtr, n: c_int, dt: MPI_Datatype, m: *mut MPI_Message, st: *mut MPI_Status) target(lazy
    // SAFETY: `m` is NULL or the address of the caller's message handle, all that is read.
    unsafe { message_target(m) }
) {
    // SAFETY: MPI_Mrecv's contract: `b` holds `n` elements of `dt`, `m` and `st` as checked.
    unsafe { mrecv(b, n as i64, dt, m, st) }
}}

mpi_fn! { MPI_Mrecv_c / PMPI_Mrecv_c (b: MutPtr, n: MPI_Count, dt: MPI_Datatype, m: *mut MPI_Message, st: *mut MPI_Status) target(lazy
    // SAFETY: `m` is NULL or the address of the caller's message handle, all that is read.
    unsafe { message_target(m) }
) {
    // SAFETY: MPI_Mrecv_c's contract: `b` holds `n` elements of `dt`, `m` and `st` as checked.
    unsafe { mrecv(b, n as i64, dt, m, st) }
}}

mpi_fn! { MPI_Imrecv / PMPI_Imrecv (b: MutPtr, n: c_int, dt: MPI_Datatype, m: *mut MPI_Message, r: *mut MPI_Request) target(lazy
    // SAFETY: `m` is NULL or the address of the caller's message handle, all that is read.
    unsafe { message_target(m) }
) {
    // SAFETY: MPI_Imrecv's contract: `b` holds `n` elements of `dt` until completion.
    unsafe { imrecv(b, n as i64, dt, m, r) }
}}

mpi_fn! { MPI_Imrecv_c / PMPI_Imrecv_c (b: MutPtr, n: MPI_Count, dt: MPI_Datatype, m: *mut MPI_Message, r: *mut MPI_Request) target(lazy
    // SAFETY: `m` is NULL or the address of the caller's message handle, all that is read.
    unsafe { message_target(m) }
) {
    // SAFETY: MPI_Imrecv_c's contract: `b` holds `n` elements of `dt` until completion.
    unsafe { imrecv(b, n as i64, dt, m, r) }
}}
