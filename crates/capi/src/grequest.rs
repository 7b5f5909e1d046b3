//! Generalized requests: `MPI_Grequest_start`, `MPI_Grequest_complete`, and what the
//! completion calls do with them.
//!
//! The engine tracks only whether such a request is complete
//! (`oxmpi_core::grequest`); this module keeps each one's C callbacks and calls them,
//! with no lock held, as the standard orders:
//! - a wait/test call that completes the request calls `query_fn` to make its status,
//!   then `free_fn`; a non-zero code from either becomes the call's error (the code
//!   itself for single-completion calls, `MPI_ERR_IN_STATUS` with the code in
//!   `MPI_ERROR` for the all/some forms);
//! - `MPI_Request_get_status` calls only `query_fn`;
//! - `MPI_Cancel` calls `cancel_fn(extra_state, complete)`;
//! - `MPI_Request_free` calls `free_fn` at once when the request is complete, else
//!   `MPI_Grequest_complete` calls it later.
//!
//! The point-to-point completion bindings hand requests to this module when
//! [`is_generalized`] / [`involved`] say so; both are one atomic load while no
//! generalized request exists, so ordinary requests pay nothing.

use crate::convert::{self, request, request_handle, write_status, STATUS_IGNORE};
use crate::errors::passthrough;
use crate::export::Target;
use crate::handles::{self, MPI_Request, MPI_Status};
use crate::mpi_fn;
use oxmpi_core::device::{ReqId, Status};
use oxmpi_core::p2p::{self, Completion};
use oxmpi_core::{grequest as core_greq, Error, ErrorClass, Result, UNDEFINED};
use std::collections::HashMap;
use std::ffi::c_void;
use std::os::raw::c_int;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard};

/// `MPI_Grequest_query_function`.
pub type QueryFn = unsafe extern "C" fn(*mut c_void, *mut MPI_Status) -> c_int;
/// `MPI_Grequest_free_function`.
pub type FreeFn = unsafe extern "C" fn(*mut c_void) -> c_int;
/// `MPI_Grequest_cancel_function`.
pub type CancelFn = unsafe extern "C" fn(*mut c_void, c_int) -> c_int;

#[derive(Clone, Copy)]
struct Callbacks {
    query: QueryFn,
    free: FreeFn,
    cancel: CancelFn,
    extra: usize,
}

static TABLE: Mutex<Option<HashMap<ReqId, Callbacks>>> = Mutex::new(None);
/// Number of generalized requests alive (the fast-path check).
static LIVE: AtomicUsize = AtomicUsize::new(0);

fn table() -> MutexGuard<'static, Option<HashMap<ReqId, Callbacks>>> {
    TABLE.lock().unwrap_or_else(|p| p.into_inner())
}

fn lookup(id: ReqId) -> Option<Callbacks> {
    table().as_ref().and_then(|t| t.get(&id).copied())
}

fn forget(id: ReqId) -> Option<Callbacks> {
    let cb = table().as_mut().and_then(|t| t.remove(&id));
    if cb.is_some() {
        LIVE.fetch_sub(1, Ordering::Relaxed);
    }
    cb
}

/// True when `id` is a generalized request made here.
pub fn is_generalized(id: ReqId) -> bool {
    LIVE.load(Ordering::Relaxed) > 0 && lookup(id).is_some()
}

/// True when any of `ids` is a generalized request.
pub fn involved(ids: &[Option<ReqId>]) -> bool {
    if LIVE.load(Ordering::Relaxed) == 0 {
        return false;
    }
    let t = table();
    let Some(t) = t.as_ref() else {
        return false;
    };
    ids.iter().flatten().any(|id| t.contains_key(id))
}

// ----- callbacks --------------------------------------------------------------------------

/// The status a query function starts from: the empty status.
fn empty_status() -> MPI_Status {
    MPI_Status::new(handles::MPI_ANY_SOURCE, handles::MPI_ANY_TAG, 0, 0)
}

/// How a completed request ended, in C terms.
struct Outcome {
    status: MPI_Status,
    /// 0, or the error code (class for engine-reported errors) of the request.
    code: c_int,
    /// The error to raise for single-completion calls.
    error: Option<Error>,
    /// The request handle becomes `MPI_REQUEST_NULL`.
    freed: bool,
}

/// Calls `query_fn` (and `free_fn` when `release`): the status and the first
/// non-zero code they return.
fn conclude(cb: Callbacks, release: bool) -> Outcome {
    let mut status = empty_status();
    // SAFETY: user callbacks with the standard's signatures, called with the extra
    // state given to MPI_Grequest_start and a valid status; no lock is held.
    let q = unsafe { (cb.query)(cb.extra as *mut c_void, &mut status) };
    let f = if release {
        // SAFETY: as above; free_fn runs once, after query_fn.
        unsafe { (cb.free)(cb.extra as *mut c_void) }
    } else {
        0
    };
    let (code, error) = if q != 0 {
        (
            q,
            Some(passthrough(
                q,
                "the query function of the generalized request",
            )),
        )
    } else if f != 0 {
        (
            f,
            Some(passthrough(
                f,
                "the free function of the generalized request",
            )),
        )
    } else {
        (0, None)
    };
    Outcome {
        status,
        code,
        error,
        freed: release,
    }
}

/// The outcome of request `id` (generalized or not) that the engine reports finished.
fn outcome(id: Option<ReqId>, c: Option<&Completion>) -> Outcome {
    if let Some(cb) = id.and_then(forget) {
        return conclude(cb, true);
    }
    let s = c.map(|c| c.status).unwrap_or(Status::EMPTY);
    let mut status = empty_status();
    // SAFETY: a valid local status.
    unsafe { write_status(&mut status, &s, false) };
    let error = convert::status_error(&s).err();
    Outcome {
        status,
        code: if error.is_some() {
            ErrorClass::from(s.error) as c_int
        } else {
            0
        },
        error,
        freed: c.is_some_and(|c| c.freed),
    }
}

/// Writes an outcome's status to `dst` (unless ignored); `MPI_ERROR` only when
/// `with_error`.
///
/// # Safety
/// `dst` is `MPI_STATUS_IGNORE` or points to a writable status.
unsafe fn deliver(dst: *mut MPI_Status, o: &Outcome, with_error: bool) {
    if dst.is_null() || dst as usize == STATUS_IGNORE {
        return;
    }
    // SAFETY: per the contract.
    let d = unsafe { &mut *dst };
    let keep = d.MPI_ERROR;
    *d = o.status;
    d.MPI_ERROR = if with_error { o.code } else { keep };
}

/// # Safety
/// `r` points to the caller's handle.
unsafe fn settle(r: *mut MPI_Request, o: &Outcome) {
    if o.freed {
        // SAFETY: per the contract.
        unsafe { *r = handles::MPI_REQUEST_NULL };
    }
}

fn nth(st: *mut MPI_Status, i: usize) -> *mut MPI_Status {
    if st as usize == STATUS_IGNORE {
        st
    } else {
        // SAFETY: callers pass arrays of the request count (MPI contract).
        unsafe { st.add(i) }
    }
}

fn in_status() -> Error {
    Error::new(
        ErrorClass::InStatus,
        "one or more requests failed; see the MPI_ERROR field of their statuses",
    )
}

// ----- completion calls involving generalized requests -------------------------------------

/// `MPI_Wait` on generalized request `id`.
///
/// # Safety
/// `r` points to the handle; `st` is a status or `MPI_STATUS_IGNORE`.
pub unsafe fn wait(r: *mut MPI_Request, id: ReqId, st: *mut MPI_Status) -> Result<()> {
    let c = p2p::wait(id)?;
    let o = outcome(Some(id), Some(&c));
    // SAFETY: per the contract.
    unsafe {
        settle(r, &o);
        deliver(st, &o, false);
    }
    o.error.map_or(Ok(()), Err)
}

/// `MPI_Test` on generalized request `id`.
///
/// # Safety
/// As for [`wait`]; `flag` is writable.
pub unsafe fn test(
    r: *mut MPI_Request,
    id: ReqId,
    flag: *mut c_int,
    st: *mut MPI_Status,
) -> Result<()> {
    let Some(c) = p2p::test(id)? else {
        // SAFETY: flag checked by the caller.
        unsafe { *flag = 0 };
        return Ok(());
    };
    let o = outcome(Some(id), Some(&c));
    // SAFETY: per the contract.
    unsafe {
        *flag = 1;
        settle(r, &o);
        deliver(st, &o, false);
    }
    o.error.map_or(Ok(()), Err)
}

/// `MPI_Waitany` / `MPI_Testany` result handling: `done` is what the engine returned.
///
/// # Safety
/// `rs` holds `ids.len()` handles; `index` writable; `st` a status or ignore.
unsafe fn any_done(
    rs: *mut MPI_Request,
    ids: &[Option<ReqId>],
    index: *mut c_int,
    st: *mut MPI_Status,
    done: Option<(usize, Completion)>,
) -> Result<()> {
    let Some((i, c)) = done else {
        // SAFETY: per the contract.
        unsafe {
            *index = UNDEFINED;
            deliver(st, &outcome(None, None), false);
        }
        return Ok(());
    };
    let o = outcome(ids[i], Some(&c));
    // SAFETY: i < n; per the contract.
    unsafe {
        *index = i as c_int;
        settle(rs.add(i), &o);
        deliver(st, &o, false);
    }
    o.error.map_or(Ok(()), Err)
}

/// `MPI_Waitany` with generalized requests among `ids`.
///
/// # Safety
/// As for [`any_done`].
pub unsafe fn waitany(
    rs: *mut MPI_Request,
    ids: &[Option<ReqId>],
    index: *mut c_int,
    st: *mut MPI_Status,
) -> Result<()> {
    let done = p2p::waitany(ids)?;
    // SAFETY: forwarded contract.
    unsafe { any_done(rs, ids, index, st, done) }
}

/// `MPI_Testany` with generalized requests among `ids`.
///
/// # Safety
/// As for [`any_done`]; `flag` writable.
pub unsafe fn testany(
    rs: *mut MPI_Request,
    ids: &[Option<ReqId>],
    index: *mut c_int,
    flag: *mut c_int,
    st: *mut MPI_Status,
) -> Result<()> {
    let (f, which) = p2p::testany(ids)?;
    // SAFETY: per the contract.
    unsafe {
        *flag = f as c_int;
        if !f {
            *index = UNDEFINED;
            return Ok(());
        }
        any_done(rs, ids, index, st, which)
    }
}

/// Writes every outcome of an all/some call; `MPI_ERR_IN_STATUS` when any failed.
///
/// # Safety
/// `rs` holds the handles named by `slots`' indices; `st` is an array of at least
/// `outcomes.len()` statuses or ignore.
unsafe fn report(
    rs: *mut MPI_Request,
    st: *mut MPI_Status,
    outcomes: &[(usize, Outcome)],
) -> Result<()> {
    let failed = outcomes.iter().any(|(_, o)| o.code != 0);
    for (k, (i, o)) in outcomes.iter().enumerate() {
        // SAFETY: per the contract.
        unsafe {
            settle(rs.add(*i), o);
            deliver(nth(st, k), o, failed);
        }
    }
    if failed {
        return Err(in_status());
    }
    Ok(())
}

/// `MPI_Waitall` with generalized requests among `ids`.
///
/// # Safety
/// `rs` and `st` (unless ignore) hold `ids.len()` entries.
pub unsafe fn waitall(
    rs: *mut MPI_Request,
    ids: &[Option<ReqId>],
    st: *mut MPI_Status,
) -> Result<()> {
    let done = p2p::waitall(ids)?;
    let outcomes: Vec<(usize, Outcome)> = done
        .iter()
        .enumerate()
        .map(|(i, c)| (i, outcome(c.and(ids[i]), c.as_ref())))
        .collect();
    // SAFETY: forwarded contract.
    unsafe { report(rs, st, &outcomes) }
}

/// `MPI_Testall` with generalized requests among `ids`.
///
/// # Safety
/// As for [`waitall`]; `flag` writable.
pub unsafe fn testall(
    rs: *mut MPI_Request,
    ids: &[Option<ReqId>],
    flag: *mut c_int,
    st: *mut MPI_Status,
) -> Result<()> {
    let Some(done) = p2p::testall(ids)? else {
        // SAFETY: per the contract.
        unsafe { *flag = 0 };
        return Ok(());
    };
    // SAFETY: per the contract.
    unsafe { *flag = 1 };
    let outcomes: Vec<(usize, Outcome)> = done
        .iter()
        .enumerate()
        .map(|(i, c)| (i, outcome(c.and(ids[i]), c.as_ref())))
        .collect();
    // SAFETY: forwarded contract.
    unsafe { report(rs, st, &outcomes) }
}

/// Writes the result of a wait/test-some.
///
/// # Safety
/// `outcount` writable; `indices` and `st` (unless ignore) hold `ids.len()` entries.
unsafe fn some_done(
    rs: *mut MPI_Request,
    ids: &[Option<ReqId>],
    outcount: *mut c_int,
    indices: *mut c_int,
    st: *mut MPI_Status,
    done: Option<Vec<(usize, Completion)>>,
) -> Result<()> {
    let Some(done) = done else {
        // SAFETY: per the contract.
        unsafe { *outcount = UNDEFINED };
        return Ok(());
    };
    let outcomes: Vec<(usize, Outcome)> = done
        .iter()
        .map(|(i, c)| (*i, outcome(ids[*i], Some(c))))
        .collect();
    // SAFETY: per the contract; done.len() <= ids.len().
    unsafe {
        *outcount = outcomes.len() as c_int;
        for (k, (i, _)) in outcomes.iter().enumerate() {
            *indices.add(k) = *i as c_int;
        }
        report(rs, st, &outcomes)
    }
}

/// `MPI_Waitsome` with generalized requests among `ids`.
///
/// # Safety
/// As for [`some_done`].
pub unsafe fn waitsome(
    rs: *mut MPI_Request,
    ids: &[Option<ReqId>],
    outcount: *mut c_int,
    indices: *mut c_int,
    st: *mut MPI_Status,
) -> Result<()> {
    let done = p2p::waitsome(ids)?;
    // SAFETY: forwarded contract.
    unsafe { some_done(rs, ids, outcount, indices, st, done) }
}

/// `MPI_Testsome` with generalized requests among `ids`.
///
/// # Safety
/// As for [`some_done`].
pub unsafe fn testsome(
    rs: *mut MPI_Request,
    ids: &[Option<ReqId>],
    outcount: *mut c_int,
    indices: *mut c_int,
    st: *mut MPI_Status,
) -> Result<()> {
    let done = p2p::testsome(ids)?;
    // SAFETY: forwarded contract.
    unsafe { some_done(rs, ids, outcount, indices, st, done) }
}

/// `MPI_Request_get_status` on generalized request `id`: calls only `query_fn`.
///
/// # Safety
/// `flag` writable; `st` a status or ignore.
pub unsafe fn get_status(id: ReqId, flag: *mut c_int, st: *mut MPI_Status) -> Result<()> {
    let done = p2p::request_status(id)?.is_some();
    // SAFETY: flag checked by the caller.
    unsafe { *flag = done as c_int };
    if !done {
        return Ok(());
    }
    let cb = lookup(id)
        .ok_or_else(|| Error::new(ErrorClass::Request, "generalized request vanished"))?;
    let o = conclude(cb, false);
    // SAFETY: per the contract.
    unsafe { deliver(st, &o, false) };
    o.error.map_or(Ok(()), Err)
}

/// `MPI_Request_free` on generalized request `id`.
pub fn request_free(id: ReqId) -> Result<()> {
    let complete = core_greq::is_complete(id)?;
    p2p::request_free(id)?;
    if !complete {
        // MPI_Grequest_complete will release it and call free_fn.
        return Ok(());
    }
    let Some(cb) = forget(id) else {
        return Ok(());
    };
    // SAFETY: the user's free callback with its extra state; no lock held.
    let rc = unsafe { (cb.free)(cb.extra as *mut c_void) };
    if rc != 0 {
        return Err(passthrough(
            rc,
            "the free function of the generalized request",
        ));
    }
    Ok(())
}

/// `MPI_Cancel` on generalized request `id`: calls `cancel_fn(extra_state, complete)`.
pub fn cancel(id: ReqId) -> Result<()> {
    let complete = core_greq::is_complete(id)?;
    let cb = lookup(id)
        .ok_or_else(|| Error::new(ErrorClass::Request, "generalized request vanished"))?;
    // SAFETY: the user's cancel callback with its extra state; no lock held.
    let rc = unsafe { (cb.cancel)(cb.extra as *mut c_void, complete as c_int) };
    if rc != 0 {
        return Err(passthrough(
            rc,
            "the cancel function of the generalized request",
        ));
    }
    Ok(())
}

// ----- entry points -----------------------------------------------------------------------------

mpi_fn! { MPI_Grequest_start / PMPI_Grequest_start (query: Option<QueryFn>, free: Option<FreeFn>, cancel: Option<CancelFn>,
        extra: *mut c_void, r: *mut MPI_Request) target(Target::None) {
    let r = convert::out(r, "request")?;
    let missing = |what: &str| Error::new(ErrorClass::Arg, format!("null {what} function"));
    let cb = Callbacks {
        query: query.ok_or_else(|| missing("query"))?,
        free: free.ok_or_else(|| missing("free"))?,
        cancel: cancel.ok_or_else(|| missing("cancel"))?,
        extra: extra as usize,
    };
    let id = core_greq::start()?;
    table().get_or_insert_with(HashMap::new).insert(id, cb);
    LIVE.fetch_add(1, Ordering::Relaxed);
    // SAFETY: checked non-null.
    unsafe { *r = request_handle(id) };
    Ok(())
}}

mpi_fn! { MPI_Grequest_complete / PMPI_Grequest_complete (r: MPI_Request) target(Target::None) {
    let Some(id) = request(r)? else {
        return Err(Error::new(ErrorClass::Request, "cannot complete MPI_REQUEST_NULL"));
    };
    if !is_generalized(id) {
        return Err(Error::new(
            ErrorClass::Request,
            format!("request {r:#x} is not a generalized request (made by MPI_Grequest_start)"),
        ));
    }
    if !core_greq::complete(id)? {
        return Ok(());
    }
    // Freed with MPI_Request_free before: this call releases it.
    let Some(cb) = forget(id) else {
        return Ok(());
    };
    // SAFETY: the user's free callback with its extra state; no lock held.
    let rc = unsafe { (cb.free)(cb.extra as *mut c_void) };
    if rc != 0 {
        return Err(passthrough(rc, "the free function of the generalized request"));
    }
    Ok(())
}}
