//! Matched probe and matched receive (`MPI_Mprobe`, `MPI_Improbe`, `MPI_Mrecv`,
//! `MPI_Imrecv` and their large-count forms) over the device: argument checks, the
//! communicator a message belongs to, and `MPI_PROC_NULL`'s message.
//!
//! A matched probe takes the message out of the device's unexpected queue (see the
//! device's `protocol/mprobe.rs`), so that only the matched receive that names it can
//! get it, whatever other threads receive or probe meanwhile. The mpi_assert hints of
//! the communicator apply as to `MPI_Probe`.

use crate::comm::{CommId, NO_COMM};
use crate::device::matching::Spec;
use crate::device::{Direction, Layout, MsgId, RecvArgs, ReqId, Status};
use crate::error::{err, Error, ErrorClass, Result};
use crate::p2p::{self, Completion};
use crate::runtime::{self, Runtime};
use crate::types::TypeId;

/// A message handle as the matched probes return it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Message {
    /// `MPI_MESSAGE_NO_PROC`: the probe named `MPI_PROC_NULL`; its receive completes at
    /// once with the status of a receive from `MPI_PROC_NULL`.
    NoProc,
    /// A message taken out of the queue, waiting for its receive.
    Matched(MsgId),
}

/// The receive buffer of a matched receive: `count` elements of type `ty` at `addr`
/// (a 64-bit count, for the large-count forms).
#[derive(Clone, Copy, Debug)]
pub struct RecvBuf {
    pub addr: usize,
    pub count: i64,
    pub ty: TypeId,
}

/// Takes the earliest message `spec` accepts, for communicator `comm`.
fn take(rt: &mut Runtime, spec: Spec, comm: CommId) -> Result<Option<(Message, Status)>> {
    match rt.device.mprobe(spec, comm) {
        Ok(found) => Ok(found.map(|(id, st)| (Message::Matched(id), st))),
        Err(_) => err(
            ErrorClass::Other,
            format!(
                "too many matched messages waiting for their receive ({})",
                crate::device::MAX_MESSAGES
            ),
        ),
    }
}

/// `MPI_Improbe`: Some when a message matched (it is then the caller's to receive).
pub fn improbe(src: i32, tag: i32, comm: CommId) -> Result<Option<(Message, Status)>> {
    runtime::with(|rt| {
        let Some(spec) = p2p::probe_spec(rt, src, tag, comm)? else {
            return Ok(Some((Message::NoProc, Status::proc_null())));
        };
        runtime::progress_all(rt);
        take(rt, spec, comm)
    })
}

/// `MPI_Mprobe`: waits for a message and takes it.
pub fn mprobe(src: i32, tag: i32, comm: CommId) -> Result<(Message, Status)> {
    let spec = runtime::with(|rt| p2p::probe_spec(rt, src, tag, comm))?;
    let Some(spec) = spec else {
        return Ok((Message::NoProc, Status::proc_null()));
    };
    runtime::block_on(|rt| take(rt, spec, comm))
}

/// The communicator of matched message `msg` (its receive's errors go to that
/// communicator's handler); None for `MPI_MESSAGE_NO_PROC` or a message that is not
/// waiting for its receive.
pub fn message_comm(msg: Message) -> Option<CommId> {
    let Message::Matched(id) = msg else {
        return None;
    };
    runtime::with(|rt| Ok(rt.device.message_owner(id)))
        .ok()
        .flatten()
}

#[cold]
#[inline(never)]
fn no_message<T>(id: MsgId) -> Result<T> {
    err(
        ErrorClass::Request,
        format!(
            "invalid message (index {id}): not a message returned by MPI_Mprobe or MPI_Improbe, or one already received"
        ),
    )
}

/// Checks the buffer and describes it for the device: the receive's arguments (the
/// source and tag are the message's) and, when the elements are not one run of
/// memory, their layout.
fn plan(rt: &Runtime, b: &RecvBuf) -> Result<(RecvArgs, Option<Layout>)> {
    let t = rt.types.for_comm(b.ty)?;
    if b.count < 0 {
        return err(
            ErrorClass::Count,
            format!("invalid count {} (must be >= 0)", b.count),
        );
    }
    let count = usize::try_from(b.count).map_err(|_| too_large(b.count))?;
    if b.addr == 0 && count > 0 && t.size > 0 && t.predefined.is_some() {
        return err(
            ErrorClass::Buffer,
            format!("null buffer with count {count} of a non-empty datatype"),
        );
    }
    let cap = count
        .checked_mul(t.size)
        .ok_or_else(|| too_large(b.count))?;
    let direct = if t.contiguous {
        Some(b.addr)
    } else {
        t.contiguous_block(count)
            .map(|(disp, _)| b.addr.wrapping_add(disp as usize))
    };
    let layout = (direct.is_none() && cap > 0).then(|| Layout {
        base: b.addr,
        count,
        size: t.size,
        ty: t.datatype().clone(),
        skip: 0,
    });
    let args = RecvArgs {
        spec: Spec {
            ctx: 0,
            src: crate::ANY_SOURCE,
            tag: crate::ANY_TAG,
        },
        buf: direct.unwrap_or(b.addr) as *mut u8,
        cap,
    };
    Ok((args, layout))
}

#[cold]
fn too_large(count: i64) -> Error {
    Error::new(
        ErrorClass::Count,
        format!("receive of {count} elements is too large"),
    )
}

/// Starts the receive of `msg` into `b`.
fn start(rt: &mut Runtime, b: &RecvBuf, msg: Message) -> Result<ReqId> {
    let (args, layout) = plan(rt, b)?;
    let Message::Matched(msg) = msg else {
        let id = rt
            .device
            .complete_request(Status::proc_null(), Direction::Recv);
        p2p::set_owner(rt, id, NO_COMM);
        return Ok(id);
    };
    let Some(comm) = rt.device.message_owner(msg) else {
        return no_message(msg);
    };
    let id = match rt.device.mrecv(msg, args, layout) {
        Ok(id) => id,
        Err(_) => return no_message(msg),
    };
    p2p::set_owner(rt, id, comm);
    Ok(id)
}

/// `MPI_Imrecv`: the request of the receive of `msg` (the message is the request's
/// from now on: the caller's handle becomes `MPI_MESSAGE_NULL`).
///
/// # Safety
/// The buffer must hold `count` elements of the datatype and stay valid until the
/// request completes.
pub unsafe fn imrecv(b: RecvBuf, msg: Message) -> Result<ReqId> {
    runtime::with(|rt| start(rt, &b, msg))
}

/// `MPI_Mrecv`.
///
/// # Safety
/// The buffer must hold `count` elements of the datatype.
pub unsafe fn mrecv(b: RecvBuf, msg: Message) -> Result<Status> {
    // A message that is here already (eager, or pulled at once) completes under the
    // lock that started its receive.
    let started = runtime::with(|rt| {
        let id = start(rt, &b, msg)?;
        Ok(match p2p::try_finish(rt, id) {
            Some(c) => Err(c),
            None => Ok(id),
        })
    })?;
    match started {
        Err(Completion { status, .. }) => Ok(status),
        Ok(id) => runtime::block_on(|rt| Ok(p2p::try_finish(rt, id))).map(|c: Completion| c.status),
    }
}
