//! Point-to-point additions of MPI-4.0 and 4.1 over the engine: requests made of other
//! requests (`MPI_Isendrecv`, `MPI_Isendrecv_replace`); the status of requests read
//! without freeing them, for one request or an array (`MPI_Request_get_status` and its
//! `_all`, `_any`, `_some` forms); and the buffered-send buffers beyond the one the
//! device keeps for the process: buffers attached to a communicator, automatic
//! buffering (`MPI_BUFFER_AUTOMATIC`), buffers attached to sessions, and flushing
//! them (`MPI_Buffer_flush`, `MPI_Comm_flush_buffer`, `MPI_Session_flush_buffer` and
//! their nonblocking forms).
//!
//! A compound request is a device request that the device leaves incomplete (a
//! "generalized" device request: the MPI layer completes it and gives it its status)
//! plus the requests of its parts. The completion calls of [`crate::p2p`] call
//! [`advance`] before they look at requests: once every part is complete, the parts
//! are finished and the compound request completes with the receive's status. The
//! same call reclaims the copies of buffered messages that have left and completes
//! flush requests. With nothing of this pending, `advance` costs a few length checks.
//!
//! A buffered send uses the buffer of its communicator if one is attached, else the
//! buffer of the session the communicator was derived from, else the process's
//! (MPI 4.1 section 3.6). A buffered send on a communicator or session buffer copies
//! the message there (the same accounting as the process buffer: `MPI_BSEND_OVERHEAD` per
//! message); with automatic buffering (attached to the communicator or the process)
//! the copy is a heap allocation of its own. Such a copy that can leave at once
//! (`Device::send_now`) is released at once; otherwise its send request is kept here
//! until complete. The process buffer the program attaches with `MPI_Buffer_attach`
//! stays the device's pool (`crate::p2p::bsend_copy`).

use crate::comm::{CommId, NO_COMM};
use crate::device::bsend::BsendPool;
use crate::device::{Finish, Layout, ReqId, SendArgs, Status};
use crate::error::{err, Error, ErrorClass, Result};
use crate::grequest::{self, Outcome};
use crate::p2p::{self, Buf, Mode};
use crate::runtime::{self, Runtime};
use crate::session::SessionId;

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

/// The compound requests, buffered copies and flushes still pending, and the
/// buffers attached beyond the device's (a field of the runtime).
#[derive(Default)]
pub struct State {
    compounds: Vec<Compound>,
    /// Buffers attached to communicators and sessions (few: a linear search).
    buffers: Vec<OwnedBuffer>,
    /// How many of `buffers` belong to sessions: zero spares buffered sends the
    /// lookup of their communicator's session.
    session_buffers: usize,
    /// `MPI_Buffer_attach(MPI_BUFFER_AUTOMATIC, ..)` is in force.
    process_automatic: bool,
    /// Copies of buffered messages still being sent, in the order they started.
    in_flight: Vec<InFlight>,
    /// Pending `MPI_Buffer_iflush` / `MPI_Comm_iflush_buffer` requests.
    flushes: Vec<Flush>,
    /// Number of the last buffered copy started.
    seq: u64,
    /// Entries added to the three lists since [`advance`] last counted them: zero
    /// means nothing is pending, which is all the completion calls check.
    work: usize,
    /// The partitioned requests (`crate::partitioned`), moved forward by [`advance`].
    pub(crate) part: crate::partitioned::Table,
}

impl State {
    /// True while `MPI_BUFFER_AUTOMATIC` is the buffer of the process.
    pub fn automatic_process_buffer(&self) -> bool {
        self.process_automatic
    }

    #[inline(always)]
    fn idle(&self) -> bool {
        self.work == 0
    }
}

/// Completes every compound request whose parts are all complete, reclaims the
/// buffered copies that have left, completes the flushes they end, and moves the
/// partitioned requests forward.
#[inline(always)]
pub(crate) fn advance(rt: &mut Runtime) {
    if !rt.p2p4.idle() {
        advance_pending(rt);
    }
    crate::partitioned::advance(rt);
}

fn advance_pending(rt: &mut Runtime) {
    reclaim(rt);
    advance_compounds(rt);
    advance_flushes(rt);
    let st = &mut rt.p2p4;
    st.work = st.compounds.len() + st.in_flight.len() + st.flushes.len();
}

fn advance_compounds(rt: &mut Runtime) {
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
    rt.p2p4.work += 1;
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
    let (tmp, sb) = unsafe { p2p::replace_staging(&b, dest, comm)? };
    // SAFETY: `sb` describes `tmp`, which the compound request keeps until it is done;
    // `b` per the contract.
    unsafe { start_pair(sb, dest, stag, b, src, rtag, comm, Some(tmp)) }
}

// ----- buffered-send buffers beyond the process pool ------------------------------------------

/// Where a buffered message is copied when not into the device's process pool.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Space {
    /// The buffer attached to this communicator.
    Comm(CommId),
    /// The buffer attached to this session.
    Session(SessionId),
    /// A heap copy of its own (`MPI_BUFFER_AUTOMATIC` attached to the process).
    ProcessAutomatic,
}

/// A buffer attached to a communicator or a session.
struct OwnedBuffer {
    /// `Space::Comm` or `Space::Session`.
    owner: Space,
    /// `None`: `MPI_BUFFER_AUTOMATIC`.
    pool: Option<BsendPool>,
}

/// A buffered copy still being sent.
struct InFlight {
    req: ReqId,
    space: Space,
    seq: u64,
    /// Where the copy lives: a region of the communicator's pool, or its own vector
    /// (dropped when the send is done).
    hold: Hold,
}

enum Hold {
    Region(usize),
    Heap(#[allow(dead_code)] Vec<u8>),
}

/// A nonblocking flush: completes once no copy of `what` numbered up to `upto` is in
/// flight (for the device's pool, once the pool is empty).
struct Flush {
    parent: ReqId,
    what: Scope,
    upto: u64,
}

/// The buffer a flush or a detach is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// The buffer of the process (`MPI_Buffer_*`).
    Process,
    /// The buffer of a communicator (`MPI_Comm_*_buffer`).
    Comm(CommId),
    /// The buffer of a session (`MPI_Session_*_buffer`).
    Session(SessionId),
}

impl Scope {
    /// The space of the buffer attached to a communicator or session.
    fn space(self) -> Space {
        match self {
            Scope::Process => Space::ProcessAutomatic,
            Scope::Comm(c) => Space::Comm(c),
            Scope::Session(s) => Space::Session(s),
        }
    }
}

/// What a buffer attach or detach hands over.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Attached {
    /// The program's memory: address and size in bytes.
    Buffer(*mut u8, usize),
    /// `MPI_BUFFER_AUTOMATIC`.
    Automatic,
}

/// Where a buffered send on `comm` puts its copy, when not in the device's process
/// pool: the communicator's own buffer, else the buffer of its session, else
/// automatic buffering of the process.
#[inline]
pub(crate) fn buffer_for(rt: &Runtime, comm: CommId) -> Option<Space> {
    let st = &rt.p2p4;
    if st.buffers.is_empty() {
        return st.process_automatic.then_some(Space::ProcessAutomatic);
    }
    let has = |space: Space| st.buffers.iter().any(|b| b.owner == space);
    if has(Space::Comm(comm)) {
        return Some(Space::Comm(comm));
    }
    if st.session_buffers > 0 {
        if let Some(s) = rt.comms.get(comm).ok().and_then(|c| c.session) {
            if has(Space::Session(s)) {
                return Some(Space::Session(s));
            }
        }
    }
    st.process_automatic.then_some(Space::ProcessAutomatic)
}

/// Copies a buffered-mode message (`args`, packed from `layout` when the buffer is not
/// contiguous) into `space` and sends the copy.
pub(crate) fn bsend_elsewhere(
    rt: &mut Runtime,
    space: Space,
    args: SendArgs,
    layout: Option<&Layout>,
    comm: CommId,
) -> Result<()> {
    let len = args.len;
    let (dst, hold) = match region(rt, space, len)? {
        Some(off) => (
            pool_of(rt, space).expect("a region was taken").addr(off),
            Hold::Region(off),
        ),
        None => {
            let mut v = vec![0u8; len];
            (v.as_mut_ptr(), Hold::Heap(v))
        }
    };
    match layout {
        // SAFETY: `dst` has room for `len` bytes (a region of that size, or a vector of
        // that length) and does not overlap the user buffer, which holds the layout's
        // elements.
        Some(l) => unsafe {
            l.pack_at(0, std::slice::from_raw_parts_mut(dst, len));
        },
        // SAFETY: the user buffer holds `len` bytes (validated count and type); `dst` has
        // room for them and is memory of its own.
        None if len > 0 => unsafe { std::ptr::copy_nonoverlapping(args.buf, dst, len) },
        None => {}
    }
    let mut a = args;
    a.buf = dst;
    if rt.device.send_now(&a) {
        // Gone already: the copy is free again.
        release(rt, space, hold);
        return Ok(());
    }
    let req = rt.device.isend_request(a);
    if let Some(r) = rt.device.request_mut(req) {
        r.owner = comm;
    }
    rt.p2p4.seq += 1;
    let seq = rt.p2p4.seq;
    rt.p2p4.work += 1;
    rt.p2p4.in_flight.push(InFlight {
        req,
        space,
        seq,
        hold,
    });
    Ok(())
}

fn pool_of(rt: &mut Runtime, space: Space) -> Option<&mut BsendPool> {
    rt.p2p4
        .buffers
        .iter_mut()
        .find(|b| b.owner == space)
        .and_then(|b| b.pool.as_mut())
}

/// A region of `len` bytes in the pool of `space` (after reclaiming what has left, if
/// the pool is full); `None` for automatic buffering.
fn region(rt: &mut Runtime, space: Space, len: usize) -> Result<Option<usize>> {
    let Some(pool) = pool_of(rt, space) else {
        return Ok(None);
    };
    if let Some(off) = pool.alloc(len) {
        return Ok(Some(off));
    }
    // Earlier buffered messages may have left meanwhile.
    runtime::progress(&mut rt.device);
    reclaim(rt);
    match pool_of(rt, space).and_then(|p| p.alloc(len)) {
        Some(off) => Ok(Some(off)),
        None => err(
            ErrorClass::Buffer,
            format!(
                "the buffer attached to {} is too small for a buffered send of {len} bytes (plus MPI_BSEND_OVERHEAD) with the messages still pending",
                space_name(space)
            ),
        ),
    }
}

fn release(rt: &mut Runtime, space: Space, hold: Hold) {
    if let Hold::Region(off) = hold {
        if let Some(pool) = pool_of(rt, space) {
            pool.free(off);
        }
    }
}

/// Finishes the sends of buffered copies that are complete and frees their copies.
fn reclaim(rt: &mut Runtime) {
    let mut i = 0;
    while i < rt.p2p4.in_flight.len() {
        let req = rt.p2p4.in_flight[i].req;
        if matches!(rt.device.finish_if_complete(req), Finish::NotComplete) {
            i += 1;
            continue;
        }
        // In order: flushes compare sequence numbers.
        let f = rt.p2p4.in_flight.remove(i);
        release(rt, f.space, f.hold);
    }
}

/// True while a copy of `what` numbered up to `upto` is still being sent.
fn pending(rt: &Runtime, what: Scope, upto: u64) -> bool {
    match what {
        Scope::Process => {
            rt.device.bsend.busy()
                || rt
                    .p2p4
                    .in_flight
                    .iter()
                    .any(|f| f.space == Space::ProcessAutomatic && f.seq <= upto)
        }
        Scope::Comm(_) | Scope::Session(_) => rt
            .p2p4
            .in_flight
            .iter()
            .any(|f| f.space == what.space() && f.seq <= upto),
    }
}

fn advance_flushes(rt: &mut Runtime) {
    let mut i = 0;
    while i < rt.p2p4.flushes.len() {
        let f = &rt.p2p4.flushes[i];
        if pending(rt, f.what, f.upto) {
            i += 1;
            continue;
        }
        let f = rt.p2p4.flushes.swap_remove(i);
        if let Ok(false) = rt.device.grequest_complete(f.parent) {
            rt.device.mark_done(f.parent, Status::EMPTY);
        }
    }
}

/// True when no buffered copy kept here is still being sent (`MPI_Finalize` waits
/// for it).
pub(crate) fn drained(rt: &mut Runtime) -> bool {
    advance(rt);
    rt.p2p4.in_flight.is_empty()
}

fn check_scope(rt: &Runtime, what: Scope) -> Result<()> {
    match what {
        Scope::Comm(c) => rt.comms.get(c).map(|_| ()),
        // The session table has a lock of its own, never held while taking the runtime's.
        Scope::Session(s) => crate::session::check(s),
        Scope::Process => Ok(()),
    }
}

fn attached(rt: &Runtime, what: Scope) -> bool {
    match what {
        Scope::Process => rt.device.bsend.is_attached() || rt.p2p4.process_automatic,
        _ => rt.p2p4.buffers.iter().any(|b| b.owner == what.space()),
    }
}

fn scope_name(what: Scope) -> String {
    space_name(what.space())
}

fn space_name(space: Space) -> String {
    match space {
        Space::ProcessAutomatic => "the process".into(),
        Space::Comm(_) => "the communicator".into(),
        Space::Session(s) => format!("session {s}"),
    }
}

/// `MPI_Buffer_attach`, `MPI_Comm_attach_buffer` and `MPI_Session_attach_buffer`. A
/// user buffer of `size` bytes, or `MPI_BUFFER_AUTOMATIC`; one buffer per process, per
/// communicator and per session.
pub fn buffer_attach(what: Scope, buffer: Attached) -> Result<()> {
    if let (Scope::Process, Attached::Buffer(addr, size)) = (what, buffer) {
        return crate::p2p::buffer_attach(addr, size);
    }
    runtime::with(|rt| {
        check_scope(rt, what)?;
        if attached(rt, what) {
            return err(
                ErrorClass::Buffer,
                format!("a buffer is already attached to {}", scope_name(what)),
            );
        }
        match (what, buffer) {
            (Scope::Process, _) => rt.p2p4.process_automatic = true,
            (_, Attached::Automatic) => add_buffer(rt, what, None),
            (_, Attached::Buffer(addr, size)) => {
                if addr.is_null() && size > 0 {
                    return err(ErrorClass::Buffer, format!("null buffer of size {size}"));
                }
                let mut pool = BsendPool::default();
                pool.attach(addr, size);
                add_buffer(rt, what, Some(pool));
            }
        }
        Ok(())
    })
}

fn add_buffer(rt: &mut Runtime, what: Scope, pool: Option<BsendPool>) {
    if let Scope::Session(_) = what {
        rt.p2p4.session_buffers += 1;
    }
    rt.p2p4.buffers.push(OwnedBuffer {
        owner: what.space(),
        pool,
    });
}

/// Takes the buffer of a communicator or session out of the list.
fn remove_buffer(rt: &mut Runtime, what: Scope) -> Option<OwnedBuffer> {
    let i = rt
        .p2p4
        .buffers
        .iter()
        .position(|b| b.owner == what.space())?;
    if let Scope::Session(_) = what {
        rt.p2p4.session_buffers -= 1;
    }
    Some(rt.p2p4.buffers.swap_remove(i))
}

/// `MPI_Buffer_detach`, `MPI_Comm_detach_buffer` and `MPI_Session_detach_buffer`:
/// waits until every message buffered there has left, then hands the buffer back.
pub fn buffer_detach(what: Scope) -> Result<Attached> {
    runtime::with(|rt| {
        check_scope(rt, what)?;
        if !attached(rt, what) {
            return err(
                ErrorClass::Buffer,
                format!("no buffer is attached to {}", scope_name(what)),
            );
        }
        Ok(())
    })?;
    runtime::block_on(|rt| {
        advance(rt);
        if pending(rt, what, u64::MAX) {
            return Ok(None);
        }
        Ok(Some(match what {
            Scope::Process if rt.p2p4.process_automatic => {
                rt.p2p4.process_automatic = false;
                Attached::Automatic
            }
            Scope::Process => {
                let (p, n) = rt.device.bsend.detach();
                Attached::Buffer(p, n)
            }
            Scope::Comm(_) | Scope::Session(_) => {
                let b = remove_buffer(rt, what).ok_or_else(|| {
                    Error::new(ErrorClass::Buffer, "the buffer was detached meanwhile")
                })?;
                match b.pool {
                    Some(mut pool) => {
                        let (p, n) = pool.detach();
                        Attached::Buffer(p, n)
                    }
                    None => Attached::Automatic,
                }
            }
        }))
    })
}

/// `MPI_Buffer_flush`, `MPI_Comm_flush_buffer` and `MPI_Session_flush_buffer`: waits until every message
/// buffered there so far has left. With no buffer attached there is nothing to wait for.
pub fn buffer_flush(what: Scope) -> Result<()> {
    let upto = runtime::with(|rt| {
        check_scope(rt, what)?;
        Ok(rt.p2p4.seq)
    })?;
    runtime::block_on(|rt| {
        advance(rt);
        Ok((!pending(rt, what, upto)).then_some(()))
    })
}

/// `MPI_Buffer_iflush`, `MPI_Comm_iflush_buffer` and `MPI_Session_iflush_buffer`: a
/// request that completes (with
/// the empty status) once every message buffered there so far has left. For the
/// process buffer the program attached itself, whose messages the device sends
/// without telling them apart, that is once the buffer is empty.
pub fn buffer_iflush(what: Scope) -> Result<ReqId> {
    runtime::with(|rt| {
        check_scope(rt, what)?;
        let parent = rt.device.generalized_request();
        if let Some(r) = rt.device.request_mut(parent) {
            r.owner = match what {
                Scope::Comm(c) => c,
                Scope::Process | Scope::Session(_) => NO_COMM,
            };
            r.direction = crate::device::Direction::Send;
        }
        let upto = rt.p2p4.seq;
        rt.p2p4.work += 1;
        rt.p2p4.flushes.push(Flush { parent, what, upto });
        advance(rt);
        Ok(parent)
    })
}

/// Forgets the buffer attached to communicator `comm`, which is being freed (its
/// messages still in flight are sent and reclaimed as usual).
pub(crate) fn comm_freed(rt: &mut Runtime, comm: CommId) {
    forget(rt, Scope::Comm(comm));
}

/// `MPI_Session_finalize` of session `s`: true once the messages buffered in its
/// buffer have left; the buffer is then forgotten (the program's memory is its own
/// again, as after a detach).
pub(crate) fn session_buffer_drained(rt: &mut Runtime, s: SessionId) -> bool {
    advance(rt);
    if pending(rt, Scope::Session(s), u64::MAX) {
        return false;
    }
    forget(rt, Scope::Session(s));
    true
}

fn forget(rt: &mut Runtime, what: Scope) {
    let _ = remove_buffer(rt, what);
    for f in rt.p2p4.in_flight.iter_mut() {
        if f.space == what.space() {
            // Its pool is gone: nothing to give the region back to.
            f.hold = Hold::Heap(Vec::new());
        }
    }
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
