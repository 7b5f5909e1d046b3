//! Generalized requests (`MPI_Grequest_start` / `MPI_Grequest_complete`): requests
//! whose operation the program carries out itself and whose completion it announces,
//! and the rules by which the completion calls treat them.
//!
//! The device tracks only whether such a request is complete, so that every completion
//! call (wait, test and their any/all/some forms) treats it like any other request.
//! This module keeps each request's callbacks ([`GrequestHooks`], which the binding
//! implements: the C library calls the program's C functions) and calls them, with no
//! lock held, as the standard orders:
//! - a wait/test call that completes the request calls `query` to make its status, then
//!   `free`; an error from either becomes the request's error (the call's error for
//!   single-completion calls, `MPI_ERR_IN_STATUS` with the code in the status for the
//!   all/some forms — the binding writes those);
//! - `MPI_Request_get_status` calls only `query`;
//! - `MPI_Cancel` calls `cancel(complete)`;
//! - `MPI_Request_free` calls `free` at once when the request is complete, else
//!   `MPI_Grequest_complete` calls it later.
//!
//! A generalized request belongs to no communicator ([`NO_COMM`]): its errors go to the
//! handler of no object (`errhandler::handler_for`).
//!
//! The bindings hand completion calls to the `*_mixed` functions here only when
//! [`is_generalized`] / [`involved`] say so; both are one atomic load while no
//! generalized request exists, so ordinary requests pay nothing.

use crate::comm::{CommId, NO_COMM};
use crate::device::{ReqId, Status};
use crate::error::{err, Error, ErrorClass, Result};
use crate::p2p::{self, Completion};
use crate::runtime;
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

/// The callbacks of one generalized request. An `Err` is the request's error; a binding
/// that must hand the program its own code back makes it with `Error::from_callback`.
pub trait GrequestHooks: Send + Sync {
    /// `query_fn`: fills `status`, which starts as the empty status.
    fn query(&self, status: &mut Status) -> Result<()>;
    /// `free_fn`: runs once, after the last `query`.
    fn free(&self) -> Result<()>;
    /// `cancel_fn`: `complete` says whether `MPI_Grequest_complete` was called.
    fn cancel(&self, complete: bool) -> Result<()>;
}

type Table = HashMap<ReqId, Arc<dyn GrequestHooks>>;

static TABLE: Mutex<Option<Table>> = Mutex::new(None);
/// Number of generalized requests alive (the fast-path check).
static LIVE: AtomicUsize = AtomicUsize::new(0);

fn table() -> MutexGuard<'static, Option<Table>> {
    TABLE.lock().unwrap_or_else(|p| p.into_inner())
}

fn lookup(id: ReqId) -> Option<Arc<dyn GrequestHooks>> {
    table().as_ref().and_then(|t| t.get(&id).cloned())
}

fn forget(id: ReqId) -> Option<Arc<dyn GrequestHooks>> {
    let h = table().as_mut().and_then(|t| t.remove(&id));
    if h.is_some() {
        LIVE.fetch_sub(1, Ordering::Relaxed);
    }
    h
}

fn vanished() -> Error {
    Error::new(ErrorClass::Request, "generalized request vanished")
}

/// True when `id` is a generalized request.
#[inline]
pub fn is_generalized(id: ReqId) -> bool {
    LIVE.load(Ordering::Relaxed) > 0 && lookup(id).is_some()
}

/// True when any of `ids` is a generalized request.
#[inline]
pub fn involved(ids: &[Option<ReqId>]) -> bool {
    LIVE.load(Ordering::Relaxed) > 0 && involved_slow(ids)
}

#[cold]
fn involved_slow(ids: &[Option<ReqId>]) -> bool {
    let t = table();
    let Some(t) = t.as_ref() else {
        return false;
    };
    ids.iter().flatten().any(|id| t.contains_key(id))
}

/// `MPI_Grequest_start`: a new pending generalized request with `hooks`.
pub fn start(hooks: Arc<dyn GrequestHooks>) -> Result<ReqId> {
    let id = runtime::with(|rt| {
        let id = rt.device.generalized_request();
        if let Some(r) = rt.device.request_mut(id) {
            r.owner = NO_COMM;
        }
        Ok(id)
    })?;
    table().get_or_insert_with(HashMap::new).insert(id, hooks);
    LIVE.fetch_add(1, Ordering::Relaxed);
    Ok(id)
}

/// `MPI_Grequest_complete`. When the program freed the request before
/// (`MPI_Request_free`), this call releases it and runs its free callback.
pub fn complete(id: ReqId) -> Result<()> {
    if !is_generalized(id) {
        return err(
            ErrorClass::Request,
            "the request is not a generalized request (made by MPI_Grequest_start)",
        );
    }
    let released = runtime::with(|rt| match rt.device.request(id) {
        None => err(ErrorClass::Request, format!("invalid request (index {id})")),
        Some(r) if !r.is_generalized() => err(
            ErrorClass::Request,
            "the request is not a generalized request (made by MPI_Grequest_start)",
        ),
        Some(r) if r.is_complete() => err(
            ErrorClass::Request,
            "MPI_Grequest_complete was already called for this generalized request",
        ),
        Some(_) => rt.device.grequest_complete(id).map_err(|_| {
            Error::new(
                ErrorClass::Request,
                "cannot complete the generalized request",
            )
        }),
    })?;
    if !released {
        return Ok(());
    }
    match forget(id) {
        Some(h) => h.free(),
        None => Ok(()),
    }
}

/// True when the generalized request `id` exists and has been completed.
fn is_complete(id: ReqId) -> Result<bool> {
    runtime::with(|rt| match rt.device.request(id) {
        Some(r) => Ok(r.is_complete()),
        None => err(ErrorClass::Request, format!("invalid request (index {id})")),
    })
}

/// `MPI_Request_free` on generalized request `id`: `free` runs now if the request is
/// complete, else when `MPI_Grequest_complete` is called.
pub fn request_free(id: ReqId) -> Result<()> {
    let complete = is_complete(id)?;
    p2p::request_free(id)?;
    if !complete {
        return Ok(());
    }
    match forget(id) {
        Some(h) => h.free(),
        None => Ok(()),
    }
}

/// `MPI_Cancel` on generalized request `id`: calls `cancel(complete)`.
pub fn cancel(id: ReqId) -> Result<()> {
    let complete = is_complete(id)?;
    lookup(id).ok_or_else(vanished)?.cancel(complete)
}

/// How a finished request ended, generalized or not.
#[derive(Debug)]
pub struct Outcome {
    /// Its status (for a generalized request, what `query` made of it).
    pub status: Status,
    /// The error of a callback of a generalized request (`query` first, then `free`);
    /// an ordinary request's error is `status.error`.
    pub error: Option<Error>,
    /// The request no longer exists (the handle becomes `MPI_REQUEST_NULL`).
    pub freed: bool,
    /// The communicator whose handler reports its error ([`NO_COMM`]: none, as for a
    /// generalized request or a request that succeeded).
    pub comm: CommId,
}

impl Outcome {
    /// True when the request failed.
    pub fn failed(&self) -> bool {
        self.error.is_some() || self.status.error != ErrorClass::Success
    }

    /// The empty outcome (a null or inactive request).
    pub fn empty() -> Outcome {
        Outcome {
            status: Status::EMPTY,
            error: None,
            freed: false,
            comm: NO_COMM,
        }
    }
}

/// Calls `query` (and `free` when `release`): the status and the first error.
fn conclude(h: &dyn GrequestHooks, release: bool) -> Outcome {
    let mut status = Status::EMPTY;
    let q = h.query(&mut status).err();
    let f = if release { h.free().err() } else { None };
    Outcome {
        status,
        error: q.or(f),
        freed: release,
        comm: NO_COMM,
    }
}

/// The outcome of request `id` that the engine reports finished with `c`.
fn outcome(id: Option<ReqId>, c: &Completion) -> Outcome {
    if let Some(h) = id.and_then(forget) {
        return conclude(&*h, true);
    }
    let comm = match id {
        Some(id) if c.status.error != ErrorClass::Success => {
            p2p::failed_comm(id, &c.status).unwrap_or(NO_COMM)
        }
        _ => NO_COMM,
    };
    Outcome {
        status: c.status,
        error: None,
        freed: c.freed,
        comm,
    }
}

/// `MPI_Wait` on generalized request `id`.
pub fn wait(id: ReqId) -> Result<Outcome> {
    let c = p2p::wait(id)?;
    Ok(outcome(Some(id), &c))
}

/// `MPI_Test` on generalized request `id`.
pub fn test(id: ReqId) -> Result<Option<Outcome>> {
    Ok(p2p::test(id)?.map(|c| outcome(Some(id), &c)))
}

/// `MPI_Waitany` on a list with generalized requests: the index and outcome of the
/// request that finished, `None` when no request is active.
pub fn waitany(ids: &[Option<ReqId>]) -> Result<Option<(usize, Outcome)>> {
    Ok(p2p::waitany(ids)?.map(|(i, c)| (i, outcome(ids[i], &c))))
}

/// `MPI_Testany` on a list with generalized requests: the flag, and the index and
/// outcome of a request that finished.
pub fn testany(ids: &[Option<ReqId>]) -> Result<(bool, Option<(usize, Outcome)>)> {
    let (f, which) = p2p::testany(ids)?;
    Ok((f, which.map(|(i, c)| (i, outcome(ids[i], &c)))))
}

fn all_outcomes(ids: &[Option<ReqId>], done: &[Option<Completion>]) -> Vec<Option<Outcome>> {
    done.iter()
        .zip(ids)
        .map(|(c, id)| c.as_ref().map(|c| outcome(*id, c)))
        .collect()
}

/// `MPI_Waitall` on a list with generalized requests: every request's outcome
/// (`None` for null handles).
pub fn waitall(ids: &[Option<ReqId>]) -> Result<Vec<Option<Outcome>>> {
    let done = p2p::waitall(ids)?;
    Ok(all_outcomes(ids, &done))
}

/// `MPI_Testall` on a list with generalized requests: `None` unless all are complete.
pub fn testall(ids: &[Option<ReqId>]) -> Result<Option<Vec<Option<Outcome>>>> {
    Ok(p2p::testall(ids)?.map(|done| all_outcomes(ids, &done)))
}

fn some_outcomes(
    ids: &[Option<ReqId>],
    done: Option<Vec<(usize, Completion)>>,
) -> Option<Vec<(usize, Outcome)>> {
    done.map(|d| d.iter().map(|(i, c)| (*i, outcome(ids[*i], c))).collect())
}

/// `MPI_Waitsome` on a list with generalized requests: `None` when no request is
/// active.
pub fn waitsome(ids: &[Option<ReqId>]) -> Result<Option<Vec<(usize, Outcome)>>> {
    Ok(some_outcomes(ids, p2p::waitsome(ids)?))
}

/// `MPI_Testsome` on a list with generalized requests.
pub fn testsome(ids: &[Option<ReqId>]) -> Result<Option<Vec<(usize, Outcome)>>> {
    Ok(some_outcomes(ids, p2p::testsome(ids)?))
}

/// `MPI_Request_get_status` on generalized request `id`: `None` while it is not
/// complete; else the outcome of `query` (the request stays).
pub fn get_status(id: ReqId) -> Result<Option<Outcome>> {
    if p2p::request_status(id)?.is_none() {
        return Ok(None);
    }
    let h = lookup(id).ok_or_else(vanished)?;
    Ok(Some(conclude(&*h, false)))
}
