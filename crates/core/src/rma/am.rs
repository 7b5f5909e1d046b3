//! The active-message transport of windows whose members span nodes (or of every
//! window, with `OXMPI_RMA_TRANSPORT=am`): each operation is a message on the point-to-
//! point context of the window's private communicator, carried out by the target when
//! its progress engine runs ([`progress`], called from `runtime::progress_all`), and
//! answered with a reply that completes the operation at the origin.
//!
//! A request carries the target's pieces as (offset, length) pairs, already flattened
//! by the origin along the target datatype, so the target needs none of the origin's
//! datatypes; accumulates name the predefined element type and operation by their
//! portable indices. The target handles one request at a time, in arrival order (the
//! device keeps each pair's messages in order), so every accumulate is atomic and
//! ordered with respect to all others on the window. Every operation is answered:
//! flush, unlock, fence and complete wait for the answers of what they cover, so an
//! operation is complete at the target when they return. Passive-target locks are kept
//! by the target (a shared count, an exclusive holder and a queue of waiting requests,
//! granted in order); post and complete of general active target synchronisation are
//! messages counted by the receiver.
//!
//! On a dynamic window only the target knows the regions attached to it, so an
//! operation waits for its answer there and a displacement outside them fails in the
//! call itself (request-based forms: at the next completion call of the window).
//!
//! A target serves requests only inside MPI calls that progress (any blocking or
//! testing call, a blocking receive or a barrier included), or from a progress thread
//! where one runs; a target busy computing delays its origins until its next MPI call.

use super::{Part, Win};
use crate::coll::op::{Op, Reducer};
use crate::device::matching::{Spec, ANY_SOURCE};
use crate::device::{ReqId, SendArgs, SendMode};
use crate::error::{err, Error, ErrorClass, Result};
use crate::runtime::{self, Runtime};
use crate::types::TypeInfo;
use oxmpi_coll::ops::PredefinedOp;
use oxmpi_datatype::Predefined;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

/// Tag of requests (origin to target); replies use tags from 1 up.
const REQ_TAG: i32 = 0;
/// Reply tags cycle through 1..=TAG_SPAN.
const TAG_SPAN: u32 = 1 << 29;
/// Room for an error text in a reply.
const ERR_ROOM: usize = 512;
/// Added to a reply tag for the data of a direct put or get (above every reply tag).
const DATA_TAG: i32 = 1 << 30;
/// Puts and gets of at least this many bytes between a contiguous origin buffer and
/// the target travel directly (see [`direct`]).
const DIRECT_MIN: usize = 64 * 1024;

/// Kinds of request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum Kind {
    Put = 1,
    Get = 2,
    Acc = 3,
    GetAcc = 4,
    Cas = 5,
    LockShared = 6,
    LockExcl = 7,
    Unlock = 8,
    Post = 9,
    Complete = 10,
    /// A put whose data follows in a message of its own on the reply tag plus
    /// [`DATA_TAG`], sent from the origin buffer and received into the window.
    PutDirect = 11,
    /// A get whose data comes back in a message of its own on the reply tag plus
    /// [`DATA_TAG`], sent from the window and received into the origin buffer.
    GetDirect = 12,
}

impl Kind {
    fn from_u8(v: u8) -> Option<Kind> {
        use Kind::*;
        [
            Put, Get, Acc, GetAcc, Cas, LockShared, LockExcl, Unlock, Post, Complete, PutDirect,
            GetDirect,
        ]
        .into_iter()
        .find(|k| *k as u8 == v)
    }
}

/// What the origin does with a reply.
pub(crate) enum Deliver {
    /// An acknowledgement.
    Ack,
    /// A lock grant.
    Grant,
    /// Data to unpack into the program's buffer.
    Unpack { info: TypeInfo, addr: usize },
}

struct Pending {
    t: usize,
    req: ReqId,
    buf: Vec<u8>,
    deliver: Deliver,
    /// The request of `MPI_Rput` ... completed with this operation.
    user: Option<ReqId>,
    /// The data leg of a direct put (a send from the origin buffer) or get (a receive
    /// into it), until it completes.
    leg: Option<ReqId>,
}

impl Pending {
    /// The origin (or result) buffer is still in use: the operation is not complete
    /// locally (`MPI_Win_flush_local`). A put or accumulate packed its data when issued.
    fn origin_busy(&self) -> bool {
        self.leg.is_some() || matches!(self.deliver, Deliver::Unpack { .. })
    }
}

/// Target pieces as addresses in this process: (address, length).
type Pieces = Vec<(usize, usize)>;

/// A direct put's data arriving at the target: the request is answered, and the next
/// one handled, once it is in.
struct Landing {
    src: usize,
    tag: i32,
    req: ReqId,
    /// Where the data is received when the window's pieces are not one: scattered
    /// from here (or dropped, with `result` an error).
    scratch: Option<(Vec<u8>, Pieces)>,
    result: Result<()>,
}

struct Incoming {
    src: usize,
    req: ReqId,
    buf: Vec<u8>,
}

/// Passive-target lock state of this member.
#[derive(Default)]
struct Locks {
    excl: bool,
    shared: u32,
    /// Waiting requests: (origin, exclusive, reply tag).
    queue: VecDeque<(usize, bool, i32)>,
}

impl Locks {
    fn grantable(&self, excl: bool) -> bool {
        !self.excl && (!excl || self.shared == 0)
    }
    fn take(&mut self, excl: bool) {
        if excl {
            self.excl = true;
        } else {
            self.shared += 1;
        }
    }
}

/// A window's message state: its origin side (operations awaiting replies) and its
/// target side (requests being received, locks, PSCW counts).
pub(crate) struct Am {
    ctx: u32,
    me: usize,
    /// World ranks of the members.
    world: Vec<u32>,
    seq: u32,
    pending: Vec<Pending>,
    /// The first failure a target reported, for the next completion call.
    remote_error: Option<Error>,
    incoming: VecDeque<Incoming>,
    landing: Option<Landing>,
    locks: Locks,
    /// Attached regions of a dynamic window: (address, length).
    pub(crate) regions: Vec<(usize, usize)>,
    /// `MPI_Win_post` messages received from each target.
    pub(crate) posts: Vec<u32>,
    /// `MPI_Win_complete` messages received from each origin.
    pub(crate) completes: Vec<u32>,
    /// This member's memory, its size, and whether displacements are addresses.
    base: usize,
    size: usize,
    dynamic: bool,
}

impl Am {
    pub(crate) fn new(ctx: u32, me: usize, world: Vec<u32>, own: Part, dynamic: bool) -> Am {
        let n = world.len();
        Am {
            ctx,
            me,
            world,
            seq: 0,
            pending: Vec::new(),
            remote_error: None,
            incoming: VecDeque::new(),
            landing: None,
            locks: Locks::default(),
            regions: Vec::new(),
            posts: vec![0; n],
            completes: vec![0; n],
            base: own.addr,
            size: own.size,
            dynamic,
        }
    }

    fn send(&self, rt: &mut Runtime, to: usize, tag: i32, data: Vec<u8>) {
        let id = rt.device.isend_staged(
            SendArgs {
                dest: self.world[to],
                ctx: self.ctx,
                src_rank: self.me as i32,
                tag,
                buf: std::ptr::null(),
                len: 0,
                mode: SendMode::Standard,
            },
            data,
        );
        rt.device.free_request(id);
    }

    fn next_tag(&mut self) -> i32 {
        self.seq = self.seq % TAG_SPAN + 1;
        self.seq as i32
    }
}

/// Windows on the message transport, served by [`progress`].
static SERVED: Mutex<Vec<Arc<Win>>> = Mutex::new(Vec::new());
/// How many windows [`SERVED`] holds (read without its lock on every progress round).
static COUNT: AtomicUsize = AtomicUsize::new(0);

fn served() -> MutexGuard<'static, Vec<Arc<Win>>> {
    SERVED.lock().unwrap_or_else(|p| p.into_inner())
}

pub(crate) fn serve(w: Arc<Win>) {
    let mut s = served();
    s.push(w);
    COUNT.store(s.len(), Ordering::Release);
}

pub(crate) fn unserve(w: &Win) {
    let mut s = served();
    s.retain(|x| !std::ptr::eq(&**x, w));
    COUNT.store(s.len(), Ordering::Release);
}

fn lock(w: &Win) -> MutexGuard<'_, Am> {
    w.am.as_ref()
        .expect("message-transport window")
        .lock()
        .unwrap_or_else(|p| p.into_inner())
}

// ----- wire format ---------------------------------------------------------------------

fn put_u64(v: &mut Vec<u8>, x: u64) {
    v.extend_from_slice(&x.to_le_bytes());
}

struct Cursor<'a> {
    b: &'a [u8],
    at: usize,
    /// The bytes of the target pieces read so far (see `target_pieces`).
    total: usize,
}

impl Cursor<'_> {
    fn take(&mut self, n: usize) -> Result<&[u8]> {
        let end = self.at.checked_add(n).filter(|&e| e <= self.b.len());
        let Some(end) = end else {
            return err(ErrorClass::Intern, "malformed one-sided request message");
        };
        let s = &self.b[self.at..end];
        self.at = end;
        Ok(s)
    }
    fn u8(&mut self) -> Result<u8> {
        Ok(self.take(1)?[0])
    }
    fn u64(&mut self) -> Result<u64> {
        Ok(u64::from_le_bytes(
            self.take(8)?.try_into().expect("8 bytes"),
        ))
    }
}

/// A data operation as the origin sends it.
pub(crate) struct DataOp<'a> {
    pub kind: Kind,
    /// Pieces at the target: (offset from the window base, or address for dynamic
    /// windows; length).
    pub pieces: Vec<(u64, u64)>,
    /// Operation and element type of accumulates (`PredefinedOp`, `Predefined` indices).
    pub op: u8,
    pub basic: u8,
    /// Origin data (for compare-and-swap: new value, then compare value).
    pub data: &'a [u8],
    /// For [`Kind::PutDirect`] and [`Kind::GetDirect`]: the contiguous origin buffer.
    pub direct: usize,
}

/// Whether a put or get of `n` bytes between the origin buffer of `info` and the
/// target travels directly: large enough that the copies into and out of the request
/// and reply messages matter, and one contiguous piece at the origin.
pub(crate) fn direct(info: &TypeInfo, n: usize) -> bool {
    n >= DIRECT_MIN && info.contiguous
}

fn encode(tag: i32, d: &DataOp) -> Vec<u8> {
    let mut v = Vec::with_capacity(24 + d.pieces.len() * 16 + d.data.len());
    v.push(d.kind as u8);
    put_u64(&mut v, tag as u64);
    v.push(d.op);
    v.push(d.basic);
    put_u64(&mut v, d.pieces.len() as u64);
    for &(o, l) in &d.pieces {
        put_u64(&mut v, o);
        put_u64(&mut v, l);
    }
    v.extend_from_slice(d.data);
    v
}

/// The portable indices of an operation and a predefined type.
pub(crate) fn op_index(p: PredefinedOp) -> u8 {
    PredefinedOp::ALL.iter().position(|x| *x == p).unwrap_or(0) as u8
}

pub(crate) fn type_index(p: Predefined) -> u8 {
    p as usize as u8
}

// ----- origin side ---------------------------------------------------------------------

/// Sends a data operation to target `t`; the reply carries `reply_len` data bytes and
/// goes to `deliver`. `user`: an `MPI_R...` request to complete with it.
pub(crate) fn issue(
    w: &Win,
    t: usize,
    d: &DataOp,
    reply_len: usize,
    deliver: Deliver,
    user: bool,
) -> Result<Option<ReqId>> {
    let greq = runtime::with(|rt| {
        let mut a = lock(w);
        let tag = a.next_tag();
        let msg = encode(tag, d);
        let greq = user.then(|| rt.device.generalized_request());
        post_reply(rt, &mut a, t, tag, reply_len, deliver, greq);
        a.send(rt, t, REQ_TAG, msg);
        let n: u64 = d.pieces.iter().map(|p| p.1).sum();
        let leg = match d.kind {
            Kind::PutDirect => Some(rt.device.isend(SendArgs {
                dest: a.world[t],
                ctx: a.ctx,
                src_rank: a.me as i32,
                tag: tag + DATA_TAG,
                buf: d.direct as *const u8,
                len: n as usize,
                mode: SendMode::Standard,
            })),
            Kind::GetDirect => Some(rt.device.irecv(crate::device::RecvArgs {
                spec: Spec {
                    ctx: a.ctx,
                    src: t as i32,
                    tag: tag + DATA_TAG,
                },
                buf: d.direct as *mut u8,
                cap: n as usize,
            })),
            _ => None,
        };
        a.pending.last_mut().expect("just posted").leg = leg;
        Ok(greq)
    })?;
    if a_dynamic(w) && !user {
        // Only the target knows its attached regions: the call waits for its answer,
        // so that a displacement outside them fails here (MPI_ERR_RMA_RANGE).
        wait_replies(w, Some(&[t]))?;
    }
    Ok(greq)
}

fn a_dynamic(w: &Win) -> bool {
    w.flavor() == super::Flavor::Dynamic
}

fn post_reply(
    rt: &mut Runtime,
    a: &mut Am,
    t: usize,
    tag: i32,
    reply_len: usize,
    deliver: Deliver,
    user: Option<ReqId>,
) {
    let mut buf = vec![0u8; 1 + reply_len.max(ERR_ROOM)];
    let req = rt.device.irecv(crate::device::RecvArgs {
        spec: Spec {
            ctx: a.ctx,
            src: t as i32,
            tag,
        },
        buf: buf.as_mut_ptr(),
        cap: buf.len(),
    });
    a.pending.push(Pending {
        t,
        req,
        buf,
        deliver,
        user,
        leg: None,
    });
}

/// Sends a control request (lock, unlock, post, complete) to `t`, with a reply
/// awaited as `deliver` (none for post and complete).
fn control(rt: &mut Runtime, a: &mut Am, t: usize, kind: Kind, deliver: Option<Deliver>) {
    let tag = if deliver.is_some() { a.next_tag() } else { 0 };
    let mut v = vec![kind as u8];
    put_u64(&mut v, tag as u64);
    if let Some(d) = deliver {
        post_reply(rt, a, t, tag, 0, d, None);
    }
    a.send(rt, t, REQ_TAG, v);
}

/// Waits until no reply from a target in `targets` (all when `None`) is outstanding,
/// then reports the first failure a target returned.
pub(crate) fn wait_replies(w: &Win, targets: Option<&[usize]>) -> Result<()> {
    let covered = |a: &Am| {
        !a.pending
            .iter()
            .any(|p| targets.is_none_or(|ts| ts.contains(&p.t)))
    };
    runtime::block_on(|_| Ok(covered(&lock(w)).then_some(())))?;
    match lock(w).remote_error.take() {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// Waits until the origin buffers of the operations to `targets` (all when `None`)
/// may be reused: the data of puts and accumulates has left them (packed when issued,
/// or the direct send done), and the replies of gets and fetching operations are in.
pub(crate) fn wait_local(w: &Win, targets: Option<&[usize]>) -> Result<()> {
    runtime::block_on(|rt| {
        let mut a = lock(w);
        reap(rt, &mut a);
        let busy = a
            .pending
            .iter()
            .any(|p| p.origin_busy() && targets.is_none_or(|ts| ts.contains(&p.t)));
        Ok((!busy).then_some(()))
    })?;
    match lock(w).remote_error.take() {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// Takes a passive-target lock at each of `targets` and waits for the grants.
pub(crate) fn lock_targets(w: &Win, targets: &[usize], excl: bool) -> Result<()> {
    runtime::with(|rt| {
        let mut a = lock(w);
        let kind = if excl {
            Kind::LockExcl
        } else {
            Kind::LockShared
        };
        for &t in targets {
            control(rt, &mut a, t, kind, Some(Deliver::Grant));
        }
        Ok(())
    })?;
    wait_replies(w, Some(targets))
}

/// Waits for every operation to `targets`, then releases their locks.
pub(crate) fn unlock_targets(w: &Win, targets: &[usize], excl: bool) -> Result<()> {
    let first = wait_replies(w, Some(targets));
    runtime::with(|rt| {
        let mut a = lock(w);
        for &t in targets {
            let mut v = vec![Kind::Unlock as u8];
            let tag = a.next_tag();
            put_u64(&mut v, tag as u64);
            v.push(excl as u8);
            post_reply(rt, &mut a, t, tag, 0, Deliver::Ack, None);
            a.send(rt, t, REQ_TAG, v);
        }
        Ok(())
    })?;
    let second = wait_replies(w, Some(targets));
    first.and(second)
}

/// Sends `MPI_Win_post` (`post`) or `MPI_Win_complete` messages to `ranks`.
pub(crate) fn notify(w: &Win, ranks: &[usize], post: bool) -> Result<()> {
    runtime::with(|rt| {
        let mut a = lock(w);
        let kind = if post { Kind::Post } else { Kind::Complete };
        for &r in ranks {
            control(rt, &mut a, r, kind, None);
        }
        Ok(())
    })
}

/// Blocks (`block`) or checks once until `ready` holds on the message state.
pub(crate) fn wait_for(w: &Win, block: bool, mut ready: impl FnMut(&Am) -> bool) -> Result<bool> {
    if block {
        runtime::block_on(|_| Ok(ready(&lock(w)).then_some(())))?;
        return Ok(true);
    }
    runtime::with(|rt| Ok(runtime::progress_all(rt)))?;
    Ok(ready(&lock(w)))
}

// ----- the progress hook ---------------------------------------------------------------

/// Serves the requests that arrived for windows on the message transport and completes
/// the operations whose replies arrived; true if anything happened.
pub fn progress(rt: &mut Runtime) -> bool {
    if COUNT.load(Ordering::Acquire) == 0 {
        return false;
    }
    // The list stays locked through the round (lock order: the list, then a
    // window's state; nothing that holds a window's state takes the list).
    let wins = served();
    let mut did = false;
    for w in wins.iter() {
        let mut a = lock(w);
        did |= receive(rt, &mut a);
        did |= reap(rt, &mut a);
    }
    did
}

/// Target side: starts receiving every request waiting, then handles those complete,
/// in order.
fn receive(rt: &mut Runtime, a: &mut Am) -> bool {
    let mut did = false;
    while let Some(st) = rt.device.probe(Spec {
        ctx: a.ctx,
        src: ANY_SOURCE,
        tag: REQ_TAG,
    }) {
        let mut buf = vec![0u8; st.bytes as usize];
        let req = rt.device.irecv(crate::device::RecvArgs {
            spec: Spec {
                ctx: a.ctx,
                src: st.source,
                tag: REQ_TAG,
            },
            buf: if buf.is_empty() {
                std::ptr::NonNull::<u8>::dangling().as_ptr()
            } else {
                buf.as_mut_ptr()
            },
            cap: buf.len(),
        });
        a.incoming.push_back(Incoming {
            src: st.source as usize,
            req,
            buf,
        });
        did = true;
    }
    loop {
        // Requests are handled in order: none while a direct put's data is arriving.
        if let Some(l) = &a.landing {
            if !rt.device.request(l.req).is_some_and(|r| r.is_complete()) {
                break;
            }
            let l = a.landing.take().expect("checked");
            rt.device.finish(l.req);
            if let (Ok(()), Some((data, pieces))) = (&l.result, &l.scratch) {
                scatter(pieces, data);
            }
            reply(rt, a, l.src, l.tag, l.result.map(|()| Vec::new()));
            did = true;
        }
        let ready = a
            .incoming
            .front()
            .is_some_and(|i| rt.device.request(i.req).is_some_and(|r| r.is_complete()));
        if !ready {
            break;
        }
        let i = a.incoming.pop_front().expect("checked");
        rt.device.finish(i.req);
        handle(rt, a, i.src, &i.buf);
        did = true;
    }
    did
}

/// Writes `data` into the window's `pieces` (address, length), in order.
fn scatter(pieces: &[(usize, usize)], data: &[u8]) {
    let mut pos = 0;
    for &(at, len) in pieces {
        // SAFETY: `Am::address` checked `at..at + len` against this member's window
        // memory (or an attached region), which lives as long as the window; `data`
        // holds the pieces' total (the callers size it so).
        unsafe { std::ptr::copy_nonoverlapping(data[pos..].as_ptr(), at as *mut u8, len) };
        pos += len;
    }
}

/// Reads the window's `pieces` (address, length) into `out`, in order.
fn gather(pieces: &[(usize, usize)], out: &mut Vec<u8>) {
    for &(at, len) in pieces {
        // SAFETY: as in `scatter`.
        out.extend_from_slice(unsafe { std::slice::from_raw_parts(at as *const u8, len) });
    }
}

fn reply(rt: &mut Runtime, a: &Am, to: usize, tag: i32, r: Result<Vec<u8>>) {
    let v = match r {
        Ok(mut d) => {
            d.insert(0, 0);
            d
        }
        Err(e) => {
            let mut v = vec![1u8];
            let m = &e.message;
            let mut end = m.len().min(ERR_ROOM);
            while !m.is_char_boundary(end) {
                end -= 1;
            }
            v.extend_from_slice(&m.as_bytes()[..end]);
            v
        }
    };
    a.send(rt, to, tag, v);
}

/// Carries out one request from member `src`.
fn handle(rt: &mut Runtime, a: &mut Am, src: usize, msg: &[u8]) {
    let mut c = Cursor {
        b: msg,
        at: 0,
        total: 0,
    };
    let (Ok(kind), Ok(tag)) = (c.u8(), c.u64()) else {
        return;
    };
    let tag = tag as i32;
    let Some(kind) = Kind::from_u8(kind) else {
        return;
    };
    match kind {
        Kind::LockShared | Kind::LockExcl => {
            let excl = kind == Kind::LockExcl;
            if a.locks.queue.is_empty() && a.locks.grantable(excl) {
                a.locks.take(excl);
                reply(rt, a, src, tag, Ok(Vec::new()));
            } else {
                a.locks.queue.push_back((src, excl, tag));
            }
        }
        Kind::Unlock => {
            let excl = c.u8().unwrap_or(0) != 0;
            if excl {
                a.locks.excl = false;
            } else {
                a.locks.shared = a.locks.shared.saturating_sub(1);
            }
            reply(rt, a, src, tag, Ok(Vec::new()));
            while let Some(&(o, x, tg)) = a.locks.queue.front() {
                if !a.locks.grantable(x) {
                    break;
                }
                a.locks.queue.pop_front();
                a.locks.take(x);
                reply(rt, a, o, tg, Ok(Vec::new()));
            }
        }
        Kind::Post => a.posts[src] = a.posts[src].wrapping_add(1),
        Kind::Complete => a.completes[src] = a.completes[src].wrapping_add(1),
        Kind::PutDirect => land(rt, a, src, tag, &mut c),
        Kind::GetDirect => {
            let r = target_pieces(a, &mut c);
            let (data_tag, to) = (tag + DATA_TAG, a.world[src]);
            let args = |buf: *const u8, len| SendArgs {
                dest: to,
                ctx: a.ctx,
                src_rank: a.me as i32,
                tag: data_tag,
                buf,
                len,
                mode: SendMode::Standard,
            };
            // The data leg always goes (empty after a failure): the origin waits for it.
            let id = match &r {
                Ok((p, total)) if p.len() == 1 => {
                    rt.device.isend(args(p[0].0 as *const u8, *total))
                }
                Ok((p, total)) => {
                    let mut v = Vec::with_capacity(*total);
                    gather(p, &mut v);
                    rt.device.isend_staged(args(std::ptr::null(), 0), v)
                }
                Err(_) => rt
                    .device
                    .isend_staged(args(std::ptr::null(), 0), Vec::new()),
            };
            rt.device.free_request(id);
            reply(rt, a, src, tag, r.map(|_| Vec::new()));
        }
        _ => {
            let r = data_op(rt, a, kind, &mut c);
            reply(rt, a, src, tag, r);
        }
    }
}

/// Starts receiving a direct put's data: into the window when its pieces are one,
/// else into a scratch buffer (also after a failure: the data comes anyway).
fn land(rt: &mut Runtime, a: &mut Am, src: usize, tag: i32, c: &mut Cursor) {
    let (result, pieces, total) = match target_pieces(a, c) {
        Ok((p, total)) => (Ok(()), p, total),
        Err(e) => (Err(e), Vec::new(), c.total),
    };
    let (buf, scratch) = match (&result, pieces.as_slice()) {
        (Ok(()), &[(at, _)]) => (at as *mut u8, None),
        _ => {
            let mut v = vec![0u8; total];
            (v.as_mut_ptr(), Some((v, pieces)))
        }
    };
    let req = rt.device.irecv(crate::device::RecvArgs {
        spec: Spec {
            ctx: a.ctx,
            src: src as i32,
            tag: tag + DATA_TAG,
        },
        buf: if total == 0 {
            std::ptr::NonNull::<u8>::dangling().as_ptr()
        } else {
            buf
        },
        cap: total,
    });
    a.landing = Some(Landing {
        src,
        tag,
        req,
        scratch,
        result,
    });
}

/// Reads a request's operation header and target pieces: the pieces as addresses here
/// (checked against the window) and their total length; `c.total` holds the total
/// even when a piece fails the check.
fn target_pieces(a: &Am, c: &mut Cursor) -> Result<(Pieces, usize)> {
    let _op = c.u8()?;
    let _basic = c.u8()?;
    let n = c.u64()? as usize;
    let mut raw = Vec::with_capacity(n.min(1 << 20));
    for _ in 0..n {
        let off = c.u64()? as usize;
        let len = c.u64()? as usize;
        raw.push((off, len));
        c.total = c.total.saturating_add(len);
    }
    let mut pieces = Vec::with_capacity(raw.len());
    for (off, len) in raw {
        pieces.push((a.address(off, len)?, len));
    }
    Ok((pieces, c.total))
}

/// A put, get, accumulate or compare-and-swap at this member; the data to return.
fn data_op(rt: &Runtime, a: &Am, kind: Kind, c: &mut Cursor) -> Result<Vec<u8>> {
    let op = c.b.get(c.at).copied().unwrap_or(0);
    let basic = c.b.get(c.at + 1).copied().unwrap_or(0);
    let (pieces, total) = target_pieces(a, c)?;
    let data = &c.b[c.at..];
    let read = |out: &mut Vec<u8>| gather(&pieces, out);
    let write = |src: &[u8]| scatter(&pieces, src);
    let short = || {
        err::<()>(
            ErrorClass::Intern,
            "malformed one-sided request message (data length)",
        )
    };
    match kind {
        Kind::Put => {
            if data.len() != total {
                short()?;
            }
            write(data);
            Ok(Vec::new())
        }
        Kind::Get => {
            let mut v = Vec::with_capacity(total);
            read(&mut v);
            Ok(v)
        }
        Kind::Acc | Kind::GetAcc => {
            let p = PredefinedOp::ALL.get(op as usize).copied();
            let b = Predefined::from_index(basic as usize);
            let (Some(p), Some(b)) = (p, b) else {
                return err(ErrorClass::Intern, "malformed one-sided accumulate message");
            };
            let mut cur = Vec::with_capacity(total);
            read(&mut cur);
            let old = if kind == Kind::GetAcc {
                cur.clone()
            } else {
                Vec::new()
            };
            match p {
                PredefinedOp::NoOp => {}
                PredefinedOp::Replace => {
                    if data.len() != total {
                        short()?;
                    }
                    write(data);
                }
                _ => {
                    if data.len() != total {
                        short()?;
                    }
                    let ty = b as usize as crate::types::TypeId;
                    let info = rt.types.get(ty)?;
                    let red = Reducer::new(&Op::Predefined(p), ty, info)?;
                    red.apply(data, &mut cur)?;
                    write(&cur);
                }
            }
            Ok(old)
        }
        Kind::Cas => {
            if data.len() != 2 * total {
                short()?;
            }
            let mut cur = Vec::with_capacity(total);
            read(&mut cur);
            if cur == data[total..] {
                write(&data[..total]);
            }
            Ok(cur)
        }
        _ => Ok(Vec::new()),
    }
}

impl Am {
    /// The address in this process of `len` bytes at offset (or, for dynamic windows,
    /// address) `off`, checked against the window memory.
    fn address(&self, off: usize, len: usize) -> Result<usize> {
        let end = off.checked_add(len);
        if self.dynamic {
            if let Some(end) = end {
                if len == 0 || self.regions.iter().any(|&(a, l)| off >= a && end <= a + l) {
                    return Ok(off);
                }
            }
            return err(
                ErrorClass::RmaRange,
                format!(
                    "{len} bytes at address {off:#x} of target rank {} lie in no region it attached to the dynamic window",
                    self.me
                ),
            );
        }
        match end {
            Some(e) if e <= self.size => Ok(self.base + off),
            _ => err(
                ErrorClass::RmaRange,
                format!(
                    "{len} bytes at offset {off} pass the end of target rank {}'s window of {} bytes",
                    self.me, self.size
                ),
            ),
        }
    }
}

/// Origin side: completes the operations whose replies arrived.
fn reap(rt: &mut Runtime, a: &mut Am) -> bool {
    let mut did = false;
    let mut i = 0;
    while i < a.pending.len() {
        if let Some(l) = a.pending[i].leg {
            if rt.device.request(l).is_some_and(|r| r.is_complete()) {
                rt.device.finish(l);
                a.pending[i].leg = None;
                did = true;
            }
        }
        let req = a.pending[i].req;
        if a.pending[i].leg.is_some() || !rt.device.request(req).is_some_and(|r| r.is_complete()) {
            i += 1;
            continue;
        }
        let p = a.pending.remove(i);
        let st = rt.device.finish(req);
        let got = (st.bytes as usize).min(p.buf.len());
        let body = &p.buf[..got];
        if body.first() == Some(&1) {
            if a.remote_error.is_none() {
                let m = String::from_utf8_lossy(&body[1..]).into_owned();
                a.remote_error = Some(Error::new(ErrorClass::RmaRange, m));
            }
        } else if let Deliver::Unpack { info, addr } = &p.deliver {
            let data = body.get(1..).unwrap_or_default();
            if !data.is_empty() {
                // SAFETY: the program passed a buffer for these elements and keeps it
                // until the operation completes (MPI's contract for origin and result
                // buffers); `data` is the reply.
                unsafe { info.unpack(*addr as *mut u8, data) };
            }
        }
        if let Some(u) = p.user {
            // Releases it too when the program freed it already.
            let _ = rt.device.grequest_complete(u);
        }
        did = true;
    }
    did
}

/// `MPI_Win_attach` / `MPI_Win_detach` on a dynamic window of this transport.
pub(crate) fn attach(w: &Win, base: usize, size: usize) -> Result<()> {
    let mut a = lock(w);
    if let Some(&(b, l)) = a
        .regions
        .iter()
        .find(|&&(b, l)| base < b + l && b < base + size)
    {
        return err(
            ErrorClass::RmaAttach,
            format!("{size} bytes at {base:#x} overlap the attached region of {l} bytes at {b:#x}"),
        );
    }
    if a.regions.len() >= super::MAX_REGIONS {
        return err(
            ErrorClass::RmaAttach,
            format!(
                "this process already has {} regions attached to the window, the most a window takes",
                super::MAX_REGIONS
            ),
        );
    }
    a.regions.push((base, size));
    Ok(())
}

pub(crate) fn detach(w: &Win, base: usize) -> Result<()> {
    let mut a = lock(w);
    match a.regions.iter().position(|&(b, _)| b == base) {
        Some(i) => {
            a.regions.swap_remove(i);
            Ok(())
        }
        None => err(
            ErrorClass::RmaAttach,
            format!("no region is attached to the window at {base:#x}"),
        ),
    }
}
