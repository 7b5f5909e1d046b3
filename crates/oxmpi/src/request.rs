//! Nonblocking operations whose buffers the borrow checker protects.
//!
//! An immediate operation borrows its buffer for the lifetime `'a` of a [`Scope`] and
//! returns a [`Request`] that cannot leave the scope. A request is finished by
//! [`Request::wait`], a successful [`Request::test`], or the helpers [`wait_all`],
//! [`wait_any`] and [`test_any`].
//!
//! # What happens to unfinished requests
//!
//! The engine may write a receive buffer (or read a send buffer) until the operation
//! completes, so no buffer may be released before then. This crate's policy:
//!
//! - dropping an unfinished [`Request`] **waits** for it to complete (errors are ignored;
//!   call `wait` to see them), like the blocking call would have;
//! - a request kept from dropping (`std::mem::forget`) is still known to its
//!   [`LocalScope`], which waits for it when the scope ends, before the borrowed buffers
//!   can be released;
//! - requests in the [`StaticScope`] borrow `'static` buffers, so nothing can dangle.
//!
//! Waiting can block forever when the matching operation is never posted (as the blocking
//! call would); it never lets the engine touch freed memory.
//!
//! ```no_run
//! use oxmpi::traits::*;
//!
//! let universe = oxmpi::initialize()?;
//! let world = universe.world();
//! let next = world.process_at_rank((world.rank() + 1) % world.size());
//! let prev = world.process_at_rank((world.rank() + world.size() - 1) % world.size());
//! let out = [world.rank(); 4];
//! let mut got = [0i32; 4];
//! oxmpi::request::scope(|scope| -> oxmpi::Result<()> {
//!     let r = prev.immediate_receive_into(scope, &mut got)?;
//!     let s = next.immediate_send(scope, &out)?;
//!     s.wait()?;
//!     r.wait()?;
//!     Ok(())
//! })?;
//! assert!(got.iter().all(|&x| x == prev.rank()));
//! # Ok::<(), oxmpi::Error>(())
//! ```

use crate::error::{engine, Error, Result};
use crate::point_to_point::Status;
use crate::raw::{status_problem, Fixup};
use oxmpi_core::device::ReqId;
use oxmpi_core::p2p;
use std::cell::{Cell, RefCell};
use std::marker::PhantomData;

mod persistent;
pub use persistent::{start_all, PersistentRequest};

use sealed::Entry;

mod sealed {
    use super::{Fixup, ReqId};

    /// A request the scope must finish if its owner never does.
    #[derive(Clone, Copy, Debug)]
    pub struct Entry {
        pub(crate) id: ReqId,
        pub(crate) fixup: Fixup,
    }

    /// The bookkeeping a scope does for the requests in it.
    pub trait Registry {
        /// Records a live request.
        fn register(&self, e: Entry);
        /// Forgets a request that has been finished.
        fn unregister(&self, id: ReqId);
    }
}

/// Where requests live: a [`LocalScope`] (buffers borrowed for `'a`) or the
/// [`StaticScope`] (buffers borrowed for `'static`). Sealed: only this crate implements it.
pub trait Scope<'a>: sealed::Registry + Copy {}

/// The scope of requests on `'static` buffers; they need no bookkeeping.
#[derive(Clone, Copy, Debug, Default)]
pub struct StaticScope;

impl sealed::Registry for StaticScope {
    fn register(&self, _: Entry) {}
    fn unregister(&self, _: ReqId) {}
}

impl Scope<'static> for StaticScope {}

/// A scope for requests on buffers borrowed for `'a`; made by [`scope`].
///
/// When it ends it waits for every request made in it that was never finished (see the
/// module documentation).
#[derive(Debug)]
pub struct LocalScope<'a> {
    live: RefCell<Vec<Entry>>,
    // Invariant in 'a, so the scope's lifetime cannot be shortened to fit a buffer.
    _invariant: PhantomData<Cell<&'a ()>>,
}

impl sealed::Registry for &LocalScope<'_> {
    fn register(&self, e: Entry) {
        self.live.borrow_mut().push(e);
    }
    fn unregister(&self, id: ReqId) {
        let mut live = self.live.borrow_mut();
        if let Some(i) = live.iter().rposition(|e| e.id == id) {
            live.swap_remove(i);
        }
    }
}

impl<'a> Scope<'a> for &LocalScope<'a> {}

impl Drop for LocalScope<'_> {
    fn drop(&mut self) {
        for e in self.live.get_mut().drain(..) {
            // A forgotten request: its buffers are still borrowed (they outlive the
            // scope), so wait for it before they can be released.
            let _ = p2p::wait(e.id);
            // SAFETY: the request is complete (or the engine is gone), and its buffer,
            // borrowed for the scope's lifetime, is still alive and unused.
            unsafe { e.fixup.apply() };
        }
    }
}

/// Runs `f` with a scope for immediate operations on buffers that outlive this call.
/// Requests still unfinished when `f` returns are waited for (see the module docs).
pub fn scope<'a, F, R>(f: F) -> R
where
    F: FnOnce(&LocalScope<'a>) -> R,
{
    let s = LocalScope {
        live: RefCell::new(Vec::new()),
        _invariant: PhantomData,
    };
    f(&s)
}

/// Builds the error for a completed request's status.
fn completion_result(
    method: &'static str,
    s: &oxmpi_core::device::Status,
    fixup: &Fixup,
) -> Result<Status> {
    match status_problem(s, fixup.capacity) {
        None => Ok(Status::from_core(*s)),
        Some((class, detail)) => Err(Error::new(method, class, detail)),
    }
}

/// An unfinished nonblocking operation on buffers borrowed for `'a`.
///
/// Finish it with [`wait`](Request::wait) or [`test`](Request::test); dropping it
/// unfinished waits for it.
#[must_use = "dropping a request waits for it to complete"]
#[derive(Debug)]
pub struct Request<'a, S: Scope<'a> = StaticScope> {
    id: ReqId,
    scope: S,
    fixup: Fixup,
    method: &'static str,
    _life: PhantomData<Cell<&'a ()>>,
}

impl<'a, S: Scope<'a>> Request<'a, S> {
    /// Takes ownership of engine request `id`, started by `method` on buffers borrowed for
    /// `'a`.
    pub(crate) fn new(id: ReqId, scope: S, fixup: Fixup, method: &'static str) -> Self {
        scope.register(Entry { id, fixup });
        Request {
            id,
            scope,
            fixup,
            method,
            _life: PhantomData,
        }
    }

    /// Ends this value's duty: repairs the buffer, leaves the scope, skips `Drop`.
    fn settle(self) {
        // SAFETY: the engine has finished with the request (it completed, or the engine
        // reported it unknown), and the buffer is borrowed for 'a, so alive.
        unsafe { self.fixup.apply() };
        self.scope.unregister(self.id);
        std::mem::forget(self);
    }

    /// Blocks until the operation completes (`MPI_Wait`) and returns its status.
    ///
    /// A receive of a message longer than its buffer fails with class
    /// `MPI_ERR_TRUNCATE` (the buffer then holds the part that fitted).
    pub fn wait(self) -> Result<Status> {
        let method = self.method;
        let fixup = self.fixup;
        let r = p2p::wait(self.id);
        self.settle();
        let c = r.map_err(engine("wait"))?;
        completion_result(method, &c.status, &fixup)
    }

    /// Checks whether the operation has completed (`MPI_Test`): `Ok(Ok(status))` when
    /// it has (the request is finished), `Ok(Err(self))` when not.
    pub fn test(self) -> Result<std::result::Result<Status, Self>> {
        match p2p::test(self.id) {
            Ok(None) => Ok(Err(self)),
            Ok(Some(c)) => {
                let (method, fixup) = (self.method, self.fixup);
                self.settle();
                completion_result(method, &c.status, &fixup).map(Ok)
            }
            Err(e) => {
                self.settle();
                Err(Error::from_core("test", e))
            }
        }
    }

    /// The status of the operation if it has completed, without finishing the request
    /// (`MPI_Request_get_status`): `Ok(None)` while it is under way. The request must
    /// still be finished with [`wait`](Request::wait) or [`test`](Request::test); a
    /// truncated receive fails here as it will there.
    pub fn get_status(&self) -> Result<Option<Status>> {
        match oxmpi_core::p2p_mpi4::request_outcome(self.id).map_err(engine("get_status"))? {
            None => Ok(None),
            Some(o) => completion_result(self.method, &o.status, &self.fixup).map(Some),
        }
    }

    /// Asks for the operation to be cancelled (`MPI_Cancel`). The request must still be
    /// finished; its status then tells whether the cancel succeeded
    /// ([`Status::is_cancelled`]) or the operation completed normally.
    pub fn cancel(&self) -> Result<()> {
        p2p::cancel(self.id).map_err(engine("cancel"))
    }
}

impl<'a, S: Scope<'a>> Drop for Request<'a, S> {
    fn drop(&mut self) {
        let _ = p2p::wait(self.id);
        // SAFETY: the request is complete (or unknown to the engine) and the buffer is
        // borrowed for 'a.
        unsafe { self.fixup.apply() };
        self.scope.unregister(self.id);
    }
}

/// Waits for every request (`MPI_Waitall`), leaving `requests` empty; returns the
/// statuses in order.
///
/// All requests are finished even when one fails; the error then names the first failed
/// request's index (e.g. a truncated receive).
pub fn wait_all<'a, S: Scope<'a>>(requests: &mut Vec<Request<'a, S>>) -> Result<Vec<Status>> {
    const M: &str = "wait_all";
    let ids: Vec<Option<ReqId>> = requests.iter().map(|r| Some(r.id)).collect();
    let r = p2p::waitall(&ids);
    let fixups: Vec<Fixup> = requests.iter().map(|r| r.fixup).collect();
    for req in requests.drain(..) {
        req.settle();
    }
    let done = r.map_err(engine(M))?;
    let mut out = Vec::with_capacity(done.len());
    for (i, (c, fixup)) in done.iter().zip(&fixups).enumerate() {
        let s = c
            .map(|c| c.status)
            .unwrap_or(oxmpi_core::device::Status::EMPTY);
        if let Some((class, detail)) = status_problem(&s, fixup.capacity) {
            return Err(Error::new(M, class, format_args!("request {i}: {detail}")));
        }
        out.push(Status::from_core(s));
    }
    Ok(out)
}

/// Waits for one of the requests to complete (`MPI_Waitany`), removes it from
/// `requests` and returns its index (before removal) and status. `None` when `requests`
/// is empty.
pub fn wait_any<'a, S: Scope<'a>>(
    requests: &mut Vec<Request<'a, S>>,
) -> Result<Option<(usize, Status)>> {
    if requests.is_empty() {
        return Ok(None);
    }
    let ids: Vec<Option<ReqId>> = requests.iter().map(|r| Some(r.id)).collect();
    match p2p::waitany(&ids).map_err(engine("wait_any"))? {
        Some((i, c)) => finish_at(requests, i, &c.status, "wait_any").map(Some),
        None => Ok(None),
    }
}

/// Checks whether any of the requests has completed (`MPI_Testany`); if one has, removes
/// it from `requests` and returns its index (before removal) and status. `None` when
/// none has (or `requests` is empty).
pub fn test_any<'a, S: Scope<'a>>(
    requests: &mut Vec<Request<'a, S>>,
) -> Result<Option<(usize, Status)>> {
    if requests.is_empty() {
        return Ok(None);
    }
    let ids: Vec<Option<ReqId>> = requests.iter().map(|r| Some(r.id)).collect();
    match p2p::testany(&ids).map_err(engine("test_any"))? {
        (true, Some((i, c))) => finish_at(requests, i, &c.status, "test_any").map(Some),
        _ => Ok(None),
    }
}

fn finish_at<'a, S: Scope<'a>>(
    requests: &mut Vec<Request<'a, S>>,
    i: usize,
    s: &oxmpi_core::device::Status,
    method: &'static str,
) -> Result<(usize, Status)> {
    let req = requests.remove(i);
    let fixup = req.fixup;
    req.settle();
    match status_problem(s, fixup.capacity) {
        None => Ok((i, Status::from_core(*s))),
        Some((class, detail)) => Err(Error::new(
            method,
            class,
            format_args!("request {i}: {detail}"),
        )),
    }
}
