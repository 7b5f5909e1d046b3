//! Point-to-point additions of MPI-4.0 and 4.1 over the engine: requests made of other
//! requests (`MPI_Isendrecv`, `MPI_Isendrecv_replace`), and the status of requests
//! read without freeing them, for one request or an array
//! (`MPI_Request_get_status` and its `_all`, `_any`, `_some` forms).
//!
//! A compound request is a device request that the device leaves incomplete (a
//! "generalized" device request: the MPI layer completes it and gives it its status)
//! plus the requests of its parts. The completion calls of [`crate::p2p`] call
//! [`advance`] before they look at requests: once every part is complete, the parts
//! are finished and the compound request completes with the receive's status. With
//! no compound request pending, `advance` is one length check.

use crate::comm::{CommId, NO_COMM};
use crate::device::{Finish, ReqId, Status};
use crate::error::Result;
use crate::grequest::{self, Outcome};
use crate::p2p::{self, Buf, Mode};
use crate::runtime::{self, Runtime};

/// A request made of a send and a receive.
struct Compound {
    /// The request the program holds.
    parent: ReqId,
    send: ReqId,
    recv: ReqId,
    /// The copy that `MPI_Isendrecv_replace` sends from, kept until the send is done
    /// (a heap buffer: moving the vector does not move the bytes the send reads).
    _staging: Option<Vec<u8>>,
}

/// The compound requests still pending (a field of the runtime).
#[derive(Default)]
pub struct State {
    compounds: Vec<Compound>,
}

/// Completes every compound request whose parts are all complete.
#[inline(always)]
pub(crate) fn advance(rt: &mut Runtime) {
    if !rt.p2p4.compounds.is_empty() {
        advance_pending(rt);
    }
}

fn advance_pending(rt: &mut Runtime) {
    let mut i = 0;
    while i < rt.p2p4.compounds.len() {
        let c = &rt.p2p4.compounds[i];
        let done = |id: ReqId| rt.device.request(id).is_none_or(|r| r.is_complete());
        if !(done(c.send) && done(c.recv)) {
            i += 1;
            continue;
        }
        let c = rt.p2p4.compounds.swap_remove(i);
        let _ = rt.device.finish_if_complete(c.send);
        let status = match rt.device.finish_if_complete(c.recv) {
            Finish::Done { status, .. } => status,
            Finish::NotComplete | Finish::Inactive => Status::EMPTY,
        };
        // Released here when the program freed it meanwhile (nobody reads its status).
        if let Ok(false) = rt.device.grequest_complete(c.parent) {
            rt.device.mark_done(c.parent, status);
        }
    }
}

/// `MPI_Cancel` of a compound request: cancels its parts (true when `id` is one). The
/// request completes when both parts have; its status says cancelled when the receive
/// was.
pub(crate) fn cancel_parts(rt: &mut Runtime, id: ReqId) -> bool {
    let Some(c) = rt.p2p4.compounds.iter().find(|c| c.parent == id) else {
        return false;
    };
    let (s, r) = (c.send, c.recv);
    rt.device.cancel(s);
    rt.device.cancel(r);
    true
}

/// A pending request for the program, completed by [`advance`] once `send` and `recv`
/// are.
fn compose(
    rt: &mut Runtime,
    send: ReqId,
    recv: ReqId,
    comm: CommId,
    staging: Option<Vec<u8>>,
) -> ReqId {
    let parent = rt.device.generalized_request();
    if let Some(r) = rt.device.request_mut(parent) {
        r.owner = comm;
    }
    rt.p2p4.compounds.push(Compound {
        parent,
        send,
        recv,
        _staging: staging,
    });
    advance(rt);
    parent
}

/// Posts the receive, starts the send, and makes the request that stands for both.
///
/// # Safety
/// As for [`isendrecv`].
#[allow(clippy::too_many_arguments)]
unsafe fn start_pair(
    sb: Buf,
    dest: i32,
    stag: i32,
    rb: Buf,
    src: i32,
    rtag: i32,
    comm: CommId,
    staging: Option<Vec<u8>>,
) -> Result<ReqId> {
    // SAFETY: forwarded contract.
    let r = unsafe { p2p::irecv(rb, src, rtag, comm)? };
    // SAFETY: forwarded contract.
    let s = match unsafe { p2p::isend(sb, dest, stag, comm, Mode::Standard) } {
        Ok(s) => s,
        Err(e) => {
            let _ = p2p::cancel(r);
            let _ = p2p::wait(r);
            return Err(e);
        }
    };
    runtime::with(|rt| Ok(compose(rt, s, r, comm, staging)))
}

/// `MPI_Isendrecv`: a request that completes when both the send and the receive have;
/// its status is the receive's.
///
/// # Safety
/// Both buffers must hold their counts of elements, must not overlap, and must stay
/// valid until the request completes.
#[allow(clippy::too_many_arguments)]
pub unsafe fn isendrecv(
    sb: Buf,
    dest: i32,
    stag: i32,
    rb: Buf,
    src: i32,
    rtag: i32,
    comm: CommId,
) -> Result<ReqId> {
    // SAFETY: forwarded contract.
    unsafe { start_pair(sb, dest, stag, rb, src, rtag, comm, None) }
}

/// `MPI_Isendrecv_replace`: the message to send is copied (packed) first, so the
/// receive may land in the buffer at once.
///
/// # Safety
/// The buffer must hold `count` elements of the datatype and stay valid until the
/// request completes.
pub unsafe fn isendrecv_replace(
    b: Buf,
    dest: i32,
    stag: i32,
    src: i32,
    rtag: i32,
    comm: CommId,
) -> Result<ReqId> {
    // SAFETY: forwarded contract.
    let (tmp, sb) = unsafe { p2p::replace_staging(&b)? };
    // SAFETY: `sb` describes `tmp`, which the compound request keeps until it is done;
    // `b` per the contract.
    unsafe { start_pair(sb, dest, stag, b, src, rtag, comm, Some(tmp)) }
}

// ----- status without freeing ------------------------------------------------------------

/// The status of request `id` if it is complete, read under the lock without freeing
/// it; an inactive persistent request reports the empty status.
fn peek(rt: &Runtime, id: ReqId) -> Option<Status> {
    let r = rt.device.request(id)?;
    if r.is_inactive() {
        return Some(Status::EMPTY);
    }
    r.is_complete().then(|| *r.status())
}

fn outcome_of(id: ReqId, status: Status) -> Outcome {
    let comm = if status.error != crate::device::Outcome::Success {
        p2p::request_comm(id).unwrap_or(NO_COMM)
    } else {
        NO_COMM
    };
    Outcome {
        status,
        error: None,
        freed: false,
        comm,
    }
}

/// `MPI_Request_get_status` on one request (not a null handle): `None` while it is
/// not complete. A generalized request's status comes from its query function.
pub fn request_outcome(id: ReqId) -> Result<Option<Outcome>> {
    if grequest::is_generalized(id) {
        return grequest::get_status(id);
    }
    Ok(p2p::request_status(id)?.map(|s| outcome_of(id, s)))
}

/// Checks every handle, runs progress once, and says which entries are active
/// (neither null nor an inactive persistent request).
fn survey(ids: &[Option<ReqId>]) -> Result<Vec<bool>> {
    runtime::with(|rt| {
        let mut active = Vec::with_capacity(ids.len());
        for id in ids {
            active.push(match id {
                None => false,
                Some(i) => match rt.device.request(*i) {
                    None => return p2p::invalid_request(*i),
                    Some(r) => !r.is_inactive(),
                },
            });
        }
        runtime::progress(&mut rt.device);
        advance(rt);
        Ok(active)
    })
}

/// Whether active request `id` is complete (a generalized one: `MPI_Grequest_complete`
/// was called), without running progress again.
fn complete(id: ReqId) -> Result<bool> {
    runtime::with(|rt| Ok(peek(rt, id).is_some()))
}

/// The outcome of complete request `id` (its query function for a generalized one).
fn outcome_now(id: ReqId) -> Result<Outcome> {
    if grequest::is_generalized(id) {
        return Ok(grequest::get_status(id)?.unwrap_or_else(Outcome::empty));
    }
    let s = runtime::with(|rt| Ok(peek(rt, id).unwrap_or(Status::EMPTY)))?;
    Ok(outcome_of(id, s))
}

/// `MPI_Request_get_status_any`: (flag, the index and outcome of a complete active
/// request). With no active request: flag true and no index.
pub fn get_status_any(ids: &[Option<ReqId>]) -> Result<(bool, Option<(usize, Outcome)>)> {
    let active = survey(ids)?;
    if !active.contains(&true) {
        return Ok((true, None));
    }
    for (i, id) in ids.iter().enumerate() {
        if let (true, Some(id)) = (active[i], *id) {
            if complete(id)? {
                return Ok((true, Some((i, outcome_now(id)?))));
            }
        }
    }
    Ok((false, None))
}

/// `MPI_Request_get_status_all`: every outcome (`None` for null and inactive entries,
/// which report the empty status) when all active requests are complete, else `None`.
pub fn get_status_all(ids: &[Option<ReqId>]) -> Result<Option<Vec<Option<Outcome>>>> {
    let active = survey(ids)?;
    for (i, id) in ids.iter().enumerate() {
        if let (true, Some(id)) = (active[i], *id) {
            if !complete(id)? {
                return Ok(None);
            }
        }
    }
    let mut out = Vec::with_capacity(ids.len());
    for (i, id) in ids.iter().enumerate() {
        out.push(match (active[i], *id) {
            (true, Some(id)) => Some(outcome_now(id)?),
            _ => None,
        });
    }
    Ok(Some(out))
}

/// `MPI_Request_get_status_some`: the indices and outcomes of the complete active
/// requests (possibly none); `None` when no request is active.
pub fn get_status_some(ids: &[Option<ReqId>]) -> Result<Option<Vec<(usize, Outcome)>>> {
    let active = survey(ids)?;
    if !active.contains(&true) {
        return Ok(None);
    }
    let mut out = Vec::new();
    for (i, id) in ids.iter().enumerate() {
        if let (true, Some(id)) = (active[i], *id) {
            if complete(id)? {
                out.push((i, outcome_now(id)?));
            }
        }
    }
    Ok(Some(out))
}
