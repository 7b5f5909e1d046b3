//! Persistent requests (`MPI_Send_init`, `MPI_Recv_init`, `MPI_Start`): an operation set
//! up once and started any number of times on the same buffer.
//!
//! The request owns the exclusive borrow of its buffer and lends it back between runs
//! ([`PersistentRequest::buffer_mut`]), so a sender can refill the data and a receiver
//! can read what arrived. Each start hands the engine a freshly derived pointer to the
//! buffer, so the engine never holds a pointer across the user's access. The arguments
//! are checked by the engine when the request is made, as `MPI_Send_init` checks them.

use super::sealed::Entry;
use super::{completion_result, Scope, StaticScope};
use crate::datatype::{Buffer, BufferMut};
use crate::error::{engine, Error, ErrorClass, Result};
use crate::point_to_point::{SendMode, Status, Tag};
use crate::raw::{recv_buf, send_buf, Fixup};
use crate::topology::Rank;
use oxmpi_core::comm::CommId;
use oxmpi_core::device::ReqId;
use oxmpi_core::p2p;
use std::cell::Cell;
use std::marker::PhantomData;

/// The fixed arguments of a persistent operation.
#[derive(Clone, Copy, Debug)]
struct Plan {
    /// Destination of a send, source of a receive.
    peer: Rank,
    tag: Tag,
    comm: CommId,
    /// `Some` for a send.
    mode: Option<SendMode>,
}

/// Starts one run of the operation on `buf`.
///
/// # Safety
/// `buf` must not be used until the returned request completes.
type Starter<B> = unsafe fn(&mut B, &Plan) -> Result<(ReqId, Fixup)>;

unsafe fn start_send<B: Buffer + ?Sized>(buf: &mut B, p: &Plan) -> Result<(ReqId, Fixup)> {
    const M: &str = "start";
    let b = send_buf(M, &*buf)?;
    let mode = p.mode.unwrap_or(SendMode::Standard);
    // SAFETY: per this function's contract the buffer stays untouched until completion.
    let id = unsafe { p2p::isend(b, p.peer, p.tag, p.comm, mode.to_core()) }.map_err(engine(M))?;
    Ok((id, Fixup::none()))
}

unsafe fn start_recv<B: BufferMut + ?Sized>(buf: &mut B, p: &Plan) -> Result<(ReqId, Fixup)> {
    const M: &str = "start";
    let r = recv_buf(M, buf)?;
    // SAFETY: per this function's contract the buffer stays untouched until completion.
    let id = unsafe { p2p::irecv(r.buf, p.peer, p.tag, p.comm) }.map_err(engine(M))?;
    Ok((id, r.fixup))
}

/// A persistent send or receive on a buffer borrowed (exclusively) for `'a`.
///
/// [`start`](PersistentRequest::start) begins a run, [`wait`](PersistentRequest::wait)
/// or [`test`](PersistentRequest::test) completes it; in between the buffer is the
/// engine's, otherwise [`buffer_mut`](PersistentRequest::buffer_mut) lends it out.
/// Dropping the request waits for an active run.
#[must_use = "a persistent request does nothing until started"]
pub struct PersistentRequest<'a, B: ?Sized, S: Scope<'a> = StaticScope> {
    buf: &'a mut B,
    plan: Plan,
    starter: Starter<B>,
    scope: S,
    active: Option<(ReqId, Fixup)>,
    _life: PhantomData<Cell<&'a ()>>,
}

impl<'a, B: ?Sized, S: Scope<'a>> std::fmt::Debug for PersistentRequest<'a, B, S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PersistentRequest")
            .field("plan", &self.plan)
            .field("active", &self.active.is_some())
            .finish_non_exhaustive()
    }
}

impl<'a, B: Buffer + ?Sized, S: Scope<'a>> PersistentRequest<'a, B, S> {
    /// A persistent send (checked by the engine's `MPI_Send_init`).
    pub(crate) fn new_send(
        buf: &'a mut B,
        dest: Rank,
        tag: Tag,
        comm: CommId,
        mode: SendMode,
        scope: S,
    ) -> Result<Self> {
        const M: &str = "send_init";
        let b = send_buf(M, &*buf)?;
        // SAFETY: the probe request is never started and is freed at once, so the engine
        // never touches the buffer through it.
        let probe =
            unsafe { p2p::send_init(b, dest, tag, comm, mode.to_core()) }.map_err(engine(M))?;
        p2p::request_free(probe).map_err(engine(M))?;
        Ok(PersistentRequest {
            buf,
            plan: Plan {
                peer: dest,
                tag,
                comm,
                mode: Some(mode),
            },
            starter: start_send::<B>,
            scope,
            active: None,
            _life: PhantomData,
        })
    }
}

impl<'a, B: BufferMut + ?Sized, S: Scope<'a>> PersistentRequest<'a, B, S> {
    /// A persistent receive (checked by the engine's `MPI_Recv_init`).
    pub(crate) fn new_receive(
        buf: &'a mut B,
        src: Rank,
        tag: Tag,
        comm: CommId,
        scope: S,
    ) -> Result<Self> {
        const M: &str = "receive_init";
        let r = recv_buf(M, buf)?;
        // SAFETY: the probe request is never started and is freed at once.
        let probe = unsafe { p2p::recv_init(r.buf, src, tag, comm) }.map_err(engine(M))?;
        p2p::request_free(probe).map_err(engine(M))?;
        Ok(PersistentRequest {
            buf,
            plan: Plan {
                peer: src,
                tag,
                comm,
                mode: None,
            },
            starter: start_recv::<B>,
            scope,
            active: None,
            _life: PhantomData,
        })
    }
}

impl<'a, B: ?Sized, S: Scope<'a>> PersistentRequest<'a, B, S> {
    /// True while a run is in progress (started and not yet completed).
    pub fn is_active(&self) -> bool {
        self.active.is_some()
    }

    /// The buffer, between runs; `None` while a run is active.
    pub fn buffer(&self) -> Option<&B> {
        match self.active {
            None => Some(&*self.buf),
            Some(_) => None,
        }
    }

    /// The buffer for reading and writing, between runs; `None` while a run is active.
    pub fn buffer_mut(&mut self) -> Option<&mut B> {
        match self.active {
            None => Some(&mut *self.buf),
            Some(_) => None,
        }
    }

    /// Starts a run (`MPI_Start`). Fails with class `MPI_ERR_REQUEST` when one is
    /// already active.
    pub fn start(&mut self) -> Result<()> {
        if self.active.is_some() {
            return Err(Error::new(
                "start",
                ErrorClass::Request,
                "the persistent request is already active (complete it with wait or test first)",
            ));
        }
        // SAFETY: the buffer is exclusively borrowed by `self` and not lent out again
        // (`buffer`/`buffer_mut` refuse) until the run completes.
        let (id, fixup) = unsafe { (self.starter)(self.buf, &self.plan)? };
        self.scope.register(Entry { id, fixup });
        self.active = Some((id, fixup));
        Ok(())
    }

    /// Blocks until the active run completes (`MPI_Wait`); the request is then
    /// inactive and can be started again. Without an active run, returns the empty
    /// status at once.
    pub fn wait(&mut self) -> Result<Status> {
        let Some((id, fixup)) = self.active.take() else {
            return Ok(Status::from_core(oxmpi_core::device::Status::EMPTY));
        };
        let r = p2p::wait(id);
        // SAFETY: the run is complete (or unknown to the engine); the buffer is alive.
        unsafe { fixup.apply() };
        self.scope.unregister(id);
        let c = r.map_err(engine("wait"))?;
        completion_result("wait", &c.status, &fixup)
    }

    /// Checks whether the active run has completed (`MPI_Test`): `Some(status)` when it
    /// has (or no run is active), `None` while it is still in progress.
    pub fn test(&mut self) -> Result<Option<Status>> {
        let Some((id, fixup)) = self.active else {
            return Ok(Some(Status::from_core(oxmpi_core::device::Status::EMPTY)));
        };
        match p2p::test(id) {
            Ok(None) => Ok(None),
            Ok(Some(c)) => {
                self.active = None;
                // SAFETY: the run is complete; the buffer is alive.
                unsafe { fixup.apply() };
                self.scope.unregister(id);
                completion_result("test", &c.status, &fixup).map(Some)
            }
            Err(e) => {
                self.active = None;
                // SAFETY: the engine no longer knows the request; the buffer is alive.
                unsafe { fixup.apply() };
                self.scope.unregister(id);
                Err(Error::from_core("test", e))
            }
        }
    }

    /// Asks for the active run to be cancelled (`MPI_Cancel`); it must still be
    /// completed with `wait` or `test`. Does nothing without an active run.
    pub fn cancel(&self) -> Result<()> {
        match self.active {
            Some((id, _)) => p2p::cancel(id).map_err(engine("cancel")),
            None => Ok(()),
        }
    }
}

/// Starts every request in order (`MPI_Startall`), stopping at the first that fails.
pub fn start_all<'a, B: ?Sized, S: Scope<'a>>(
    requests: &mut [PersistentRequest<'a, B, S>],
) -> Result<()> {
    for r in requests {
        r.start()?;
    }
    Ok(())
}

impl<'a, B: ?Sized, S: Scope<'a>> Drop for PersistentRequest<'a, B, S> {
    fn drop(&mut self) {
        if let Some((id, fixup)) = self.active.take() {
            let _ = p2p::wait(id);
            // SAFETY: the run is complete (or unknown to the engine); the buffer is alive.
            unsafe { fixup.apply() };
            self.scope.unregister(id);
        }
    }
}
