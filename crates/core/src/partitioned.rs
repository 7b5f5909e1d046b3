//! MPI-4 partitioned communication (`MPI_Psend_init`, `MPI_Precv_init`, `MPI_Pready*`,
//! `MPI_Parrived`) over the device's point-to-point requests.
//!
//! The request the program holds is a persistent device request that this module
//! starts (`Device::start_pending`) and ends (`Device::mark_done`), so every completion
//! call of [`crate::p2p`] handles it; [`advance`] (called by `p2p_mpi4::advance`, from
//! the completion calls and `runtime::progress_all`) moves the operations forward.
//!
//! Every message travels in the communicator's collective context (`ctx + 1`) with a
//! negative tag, which no collective and no program receive can match:
//!
//! - at its first start a send announces itself to the receiver with a setup message
//!   (tag [`SETUP_TAG`]: the program's tag, the sender's partition count and bytes per
//!   partition, and the base of the data tags it will use). A receive at its first
//!   start takes the next announcement from its source with its tag, in the order the
//!   receives were first started (setups that arrive for other receives wait in a
//!   stash); later starts of both sides reuse the match;
//! - each sender partition is one message with its own data tag, sent as soon as
//!   `MPI_Pready` marks it (eager or rendezvous as the device decides; a derived type
//!   is packed by the device from the partition's elements). The receiver posts one
//!   receive per sender partition at the byte offset of that partition in its buffer
//!   (through a staging copy unpacked on arrival when its type is not contiguous), so
//!   the two sides may use different partition counts; a receiver partition has
//!   arrived when every sender partition overlapping its bytes has.
//!
//! The data tags of one operation are distinct from those of every other operation
//! between the same pair that is still live, and partition `j` of start `n + 1` cannot
//! overtake partition `j` of start `n` (same tag, non-overtaking order).

use crate::comm::CommId;
use crate::device::matching::Spec;
use crate::device::{Device, Direction, Finish, Layout, Outcome, Persistent, RecvArgs, ReqId};
use crate::device::{SendArgs, SendMode, Status};
use crate::error::{err, Error, ErrorClass, Result};
use crate::runtime::{self, Runtime};
use crate::types::{TypeId, TypeInfo};
use crate::{ANY_SOURCE, ANY_TAG, PROC_NULL, TAG_UB};
use std::ptr::NonNull;

/// Tag of the setup message a send sends at its first start.
pub const SETUP_TAG: i32 = -2;
/// Data tags are `-3 - k` for `k` in `0..DATA_TAGS`.
const DATA_TAGS: u32 = (i32::MAX as u32) - 2;
/// Bytes of a setup message.
const SETUP_LEN: usize = 24;

/// What a setup message says.
#[derive(Clone, Copy, Debug)]
struct Setup {
    ctx: u32,
    /// The sender's rank in the communicator.
    src: i32,
    tag: i32,
    /// The first data tag (as `k` in `-3 - k`).
    data: u32,
    parts: usize,
    part_bytes: usize,
}

impl Setup {
    fn encode(&self) -> [u8; SETUP_LEN] {
        let mut b = [0u8; SETUP_LEN];
        b[0..4].copy_from_slice(&self.tag.to_le_bytes());
        b[4..8].copy_from_slice(&self.data.to_le_bytes());
        b[8..16].copy_from_slice(&(self.parts as u64).to_le_bytes());
        b[16..24].copy_from_slice(&(self.part_bytes as u64).to_le_bytes());
        b
    }

    fn decode(ctx: u32, src: i32, b: &[u8; SETUP_LEN]) -> Setup {
        let word = |r: std::ops::Range<usize>| {
            let mut w = [0u8; 8];
            w[..r.len()].copy_from_slice(&b[r]);
            u64::from_le_bytes(w)
        };
        Setup {
            ctx,
            src,
            tag: word(0..4) as u32 as i32,
            data: word(4..8) as u32,
            parts: word(8..16) as usize,
            part_bytes: word(16..24) as usize,
        }
    }
}

/// The data tag of partition `j` of an operation whose first data tag is `data`.
fn data_tag(data: u32, j: usize) -> i32 {
    let k = (data as u64 + j as u64) % DATA_TAGS as u64;
    -3 - k as i32
}

/// The send side of an operation.
struct SendSide {
    /// First data tag (assigned at the first start).
    data: Option<u32>,
    ready: Vec<bool>,
    nready: usize,
    /// Device requests still to finish (partition sends, the setup send).
    sends: Vec<ReqId>,
    /// The setup message, kept until its send is done.
    setup: Box<[u8; SETUP_LEN]>,
}

/// The receive side of an operation.
struct RecvSide {
    /// The sender's announcement, once matched.
    peer: Option<Setup>,
    /// Waiting for a setup (started, not matched).
    waiting: bool,
    /// Per sender partition: the device receive under way this round.
    recvs: Vec<Option<ReqId>>,
    /// Per sender partition: arrived this round.
    arrived: Vec<bool>,
    narrived: usize,
    bytes: u64,
    error: Outcome,
    /// Packed bytes of the whole buffer when the type is not contiguous.
    staging: Option<Vec<u8>>,
}

enum Side {
    Send(SendSide),
    Recv(RecvSide),
}

/// One partitioned request.
struct Entry {
    req: ReqId,
    ctx: u32,
    /// This process's rank in the communicator (the source of its messages).
    me: i32,
    /// The peer's rank in the communicator and its world rank (None: `MPI_PROC_NULL`).
    peer_rank: i32,
    peer: Option<u32>,
    tag: i32,
    partitions: usize,
    /// Elements per partition.
    count: usize,
    ty: TypeInfo,
    base: usize,
    /// Start of the packed data when the buffer is one run of memory.
    direct: Option<usize>,
    /// Started and not yet done.
    running: bool,
    side: Side,
}

impl Entry {
    fn part_bytes(&self) -> usize {
        self.count * self.ty.size
    }

    fn total_bytes(&self) -> usize {
        self.partitions * self.part_bytes()
    }
}

/// A device receive for setup messages from one source in one context.
struct Listener {
    ctx: u32,
    src: i32,
    req: ReqId,
    buf: Box<[u8; SETUP_LEN]>,
}

/// The partitioned requests of the process (a field of `p2p_mpi4::State`).
#[derive(Default)]
pub struct Table {
    entries: Vec<Entry>,
    listeners: Vec<Listener>,
    /// Setups that arrived and were not yet taken, in arrival order.
    stash: Vec<Setup>,
    /// Receives waiting for a setup, in the order they were first started.
    waiting: Vec<ReqId>,
    /// Entries running.
    running: usize,
    /// Next first data tag.
    next_data: u32,
}

impl Table {
    /// Nothing to move forward.
    #[inline(always)]
    pub fn is_idle(&self) -> bool {
        self.running == 0 && self.listeners.is_empty()
    }

    fn find(&self, id: ReqId) -> Option<usize> {
        self.entries.iter().position(|e| e.req == id)
    }
}

fn dangling() -> *mut u8 {
    NonNull::<u8>::dangling().as_ptr()
}

// ----- initialisation ------------------------------------------------------------------

fn check_partitions(partitions: i32) -> Result<usize> {
    if partitions < 1 {
        return err(
            ErrorClass::Arg,
            format!("invalid partitions {partitions} (must be at least 1)"),
        );
    }
    Ok(partitions as usize)
}

fn check_count(count: i64) -> Result<usize> {
    if count < 0 {
        return err(
            ErrorClass::Count,
            format!("invalid count {count} (must be >= 0)"),
        );
    }
    Ok(count as usize)
}

/// Creates the inactive request of a partitioned send or receive.
#[allow(clippy::too_many_arguments)]
fn init(
    addr: usize,
    partitions: i32,
    count: i64,
    ty: TypeId,
    peer_rank: i32,
    tag: i32,
    comm: CommId,
    send: bool,
) -> Result<ReqId> {
    runtime::with(|rt| {
        let c = rt.comms.get(comm)?;
        let partitions = check_partitions(partitions)?;
        let count = check_count(count)?;
        let t = rt.types.for_comm(ty)?.clone();
        let what = if send { "destination" } else { "source" };
        if peer_rank == ANY_SOURCE {
            return err(
                ErrorClass::Rank,
                format!("invalid {what} MPI_ANY_SOURCE (partitioned communication does not allow wildcards)"),
            );
        }
        if tag == ANY_TAG {
            return err(
                ErrorClass::Tag,
                "invalid tag MPI_ANY_TAG (partitioned communication does not allow wildcards)",
            );
        }
        if !(0..=TAG_UB).contains(&tag) {
            return err(
                ErrorClass::Tag,
                format!("invalid tag {tag} (must be between 0 and MPI_TAG_UB = {TAG_UB})"),
            );
        }
        let g = c.peer_group();
        let peer = if peer_rank == PROC_NULL {
            None
        } else {
            match g.world_of(peer_rank) {
                Some(w) => Some(w),
                None => {
                    return err(
                        ErrorClass::Rank,
                        format!(
                            "invalid {what} rank {peer_rank} (communicator size {})",
                            g.size()
                        ),
                    )
                }
            }
        };
        let elems = partitions.checked_mul(count);
        let total = elems.and_then(|n| n.checked_mul(t.size));
        let (Some(elems), Some(_)) = (elems, total) else {
            return err(
                ErrorClass::Count,
                format!("{partitions} partitions of {count} elements are too large"),
            );
        };
        if addr == 0 && elems > 0 && t.size > 0 && t.predefined.is_some() {
            return err(
                ErrorClass::Buffer,
                format!("null buffer with {partitions} partitions of {count} elements"),
            );
        }
        let direct = if t.contiguous {
            Some(addr)
        } else {
            t.contiguous_block(elems)
                .map(|(disp, _)| addr.wrapping_add(disp as usize))
        };
        let (ctx, me) = (c.coll_ctx(), c.rank);
        let dir = if send {
            Direction::Send
        } else {
            Direction::Recv
        };
        let req = rt.device.persistent_request(Persistent::ProcNull, dir);
        if let Some(r) = rt.device.request_mut(req) {
            r.owner = comm;
        }
        let side = if send {
            Side::Send(SendSide {
                data: None,
                ready: vec![false; partitions],
                nready: 0,
                sends: Vec::new(),
                setup: Box::new([0; SETUP_LEN]),
            })
        } else {
            Side::Recv(RecvSide {
                peer: None,
                waiting: false,
                recvs: Vec::new(),
                arrived: Vec::new(),
                narrived: 0,
                bytes: 0,
                error: Outcome::Success,
                staging: None,
            })
        };
        rt.p2p4.part.entries.push(Entry {
            req,
            ctx,
            me,
            peer_rank,
            peer,
            tag,
            partitions,
            count,
            ty: t,
            base: addr,
            direct,
            running: false,
            side,
        });
        Ok(req)
    })
}

/// `MPI_Psend_init`: an inactive partitioned send of `partitions` partitions of
/// `count` elements each.
///
/// # Safety
/// The buffer must hold `partitions * count` elements of the datatype and stay valid
/// until the request is freed; a partition must not change between its `MPI_Pready`
/// and the completion of the request.
pub unsafe fn psend_init(
    addr: usize,
    partitions: i32,
    count: i64,
    ty: TypeId,
    dest: i32,
    tag: i32,
    comm: CommId,
) -> Result<ReqId> {
    init(addr, partitions, count, ty, dest, tag, comm, true)
}

/// `MPI_Precv_init`.
///
/// # Safety
/// The buffer must hold `partitions * count` elements of the datatype and stay valid
/// until the request is freed.
pub unsafe fn precv_init(
    addr: usize,
    partitions: i32,
    count: i64,
    ty: TypeId,
    source: i32,
    tag: i32,
    comm: CommId,
) -> Result<ReqId> {
    init(addr, partitions, count, ty, source, tag, comm, false)
}

// ----- starting --------------------------------------------------------------------------

/// True when `id` is a partitioned request.
pub(crate) fn owns(rt: &Runtime, id: ReqId) -> bool {
    !rt.p2p4.part.entries.is_empty() && rt.p2p4.part.find(id).is_some()
}

/// `MPI_Start` of `id` when it is a partitioned request: Ok(false) when it is not one.
pub(crate) fn start(rt: &mut Runtime, id: ReqId) -> Result<bool> {
    if !owns(rt, id) {
        return Ok(false);
    }
    let inactive = rt.device.request(id).is_some_and(|r| r.is_inactive());
    if !inactive || rt.device.start_pending(id).is_err() {
        return err(
            ErrorClass::Request,
            "the partitioned request is already active (complete it with MPI_Wait or MPI_Test before starting it again)",
        );
    }
    let Runtime { device, p2p4, .. } = rt;
    let t = &mut p2p4.part;
    let i = t.find(id).expect("owned");
    t.running += 1;
    let e = &mut t.entries[i];
    e.running = true;
    match &mut e.side {
        Side::Send(s) => {
            s.ready.iter_mut().for_each(|r| *r = false);
            s.nready = 0;
            if s.data.is_none() {
                let data = t.next_data;
                t.next_data = ((data as u64 + e.partitions as u64) % DATA_TAGS as u64) as u32;
                s.data = Some(data);
                if let Some(dest) = e.peer {
                    let setup = Setup {
                        ctx: e.ctx,
                        src: e.me,
                        tag: e.tag,
                        data,
                        parts: e.partitions,
                        part_bytes: e.count * e.ty.size,
                    };
                    *s.setup = setup.encode();
                    let r = device.isend(SendArgs {
                        dest,
                        ctx: e.ctx,
                        src_rank: e.me,
                        tag: SETUP_TAG,
                        buf: s.setup.as_ptr(),
                        len: SETUP_LEN,
                        mode: SendMode::Standard,
                    });
                    s.sends.push(r);
                }
            }
        }
        Side::Recv(r) => {
            r.narrived = 0;
            r.bytes = 0;
            r.error = Outcome::Success;
            if e.peer.is_none() {
                // MPI_PROC_NULL: nothing arrives, done at once.
                e.running = false;
                t.running -= 1;
                device.mark_done(id, Status::proc_null());
                return Ok(true);
            }
            if r.peer.is_some() {
                post_recvs(device, e);
            } else {
                r.waiting = true;
                t.waiting.push(id);
            }
        }
    }
    advance_table(device, t);
    Ok(true)
}

/// Posts the receives of every sender partition of a matched receive for one round.
fn post_recvs(device: &mut Device, e: &mut Entry) {
    let total = e.total_bytes();
    let (ctx, src, direct) = (e.ctx, e.peer_rank, e.direct);
    let Side::Recv(r) = &mut e.side else {
        return;
    };
    let p = r.peer.expect("matched");
    if direct.is_none() && r.staging.is_none() && total > 0 {
        r.staging = Some(vec![0u8; total]);
    }
    r.recvs.clear();
    r.arrived.clear();
    r.arrived.resize(p.parts, false);
    for j in 0..p.parts {
        let off = j * p.part_bytes;
        let cap = p.part_bytes.min(total.saturating_sub(off));
        let buf = if cap == 0 {
            dangling()
        } else {
            match (direct, &mut r.staging) {
                (Some(a), _) => a.wrapping_add(off) as *mut u8,
                // SAFETY: off < total = the staging length (cap > 0).
                (None, Some(s)) => unsafe { s.as_mut_ptr().add(off) },
                (None, None) => dangling(),
            }
        };
        let id = device.irecv(RecvArgs {
            spec: Spec {
                ctx,
                src,
                tag: data_tag(p.data, j),
            },
            buf,
            cap,
        });
        r.recvs.push(Some(id));
    }
}

// ----- marking partitions ready -------------------------------------------------------

fn bad_partition(partition: i32, partitions: usize) -> Error {
    Error::new(
        ErrorClass::Arg,
        format!(
            "invalid partition {partition} (the request has {partitions} partitions: 0 to {})",
            partitions - 1
        ),
    )
}

/// The send entry of `id`, checked for `MPI_Pready`.
fn send_entry(rt: &Runtime, id: ReqId) -> Result<usize> {
    let t = &rt.p2p4.part;
    let Some(i) = t.find(id) else {
        if rt.device.request(id).is_none() {
            return crate::p2p::invalid_request(id);
        }
        return err(
            ErrorClass::Request,
            format!("request (index {id}) is not a partitioned send request"),
        );
    };
    if !matches!(t.entries[i].side, Side::Send(_)) {
        return err(
            ErrorClass::Request,
            format!("request (index {id}) is a partitioned receive request (MPI_Pready applies to send requests)"),
        );
    }
    if rt.device.request(id).is_none_or(|r| r.is_inactive()) {
        return err(
            ErrorClass::Request,
            format!("request (index {id}) is inactive (start it with MPI_Start first)"),
        );
    }
    Ok(i)
}

/// Marks partition `p` of entry `i` ready and sends it.
fn ready_one(device: &mut Device, e: &mut Entry, p: i32) -> Result<()> {
    if p < 0 || p as usize >= e.partitions {
        return Err(bad_partition(p, e.partitions));
    }
    let j = p as usize;
    let pb = e.part_bytes();
    let Side::Send(s) = &mut e.side else {
        return Ok(());
    };
    if s.ready[j] {
        return err(
            ErrorClass::Request,
            format!("partition {p} is already marked ready in this round"),
        );
    }
    s.ready[j] = true;
    s.nready += 1;
    let Some(dest) = e.peer else {
        return Ok(());
    };
    let data = s.data.expect("started");
    let args = |buf: *const u8, len: usize| SendArgs {
        dest,
        ctx: e.ctx,
        src_rank: e.me,
        tag: data_tag(data, j),
        buf,
        len,
        mode: SendMode::Standard,
    };
    let id = if pb == 0 {
        device.isend(args(dangling(), 0))
    } else if let Some(a) = e.direct {
        device.isend(args(a.wrapping_add(j * pb) as *const u8, pb))
    } else {
        let step = (j * e.count) as isize * e.ty.signed_extent;
        let layout = Layout {
            base: e.base.wrapping_add(step as usize),
            count: e.count,
            size: e.ty.size,
            ty: e.ty.datatype().clone(),
            skip: 0,
        };
        device.isend_layout(args(e.base as *const u8, pb), layout)
    };
    s.sends.push(id);
    Ok(())
}

/// `MPI_Pready_list` (and the other two forms): marks each partition ready and sends
/// it at once. Partitions before a bad one in the list stay marked.
pub fn pready_list(id: ReqId, parts: &[i32]) -> Result<()> {
    runtime::with(|rt| {
        let i = send_entry(rt, id)?;
        let Runtime { device, p2p4, .. } = rt;
        let t = &mut p2p4.part;
        let mut res = Ok(());
        for &p in parts {
            res = ready_one(device, &mut t.entries[i], p);
            if res.is_err() {
                break;
            }
        }
        advance_table(device, t);
        res
    })
}

/// `MPI_Pready`.
pub fn pready(id: ReqId, partition: i32) -> Result<()> {
    pready_list(id, &[partition])
}

/// `MPI_Pready_range`: partitions `low..=high`.
pub fn pready_range(id: ReqId, low: i32, high: i32) -> Result<()> {
    let n = runtime::with(|rt| {
        let i = send_entry(rt, id)?;
        Ok(rt.p2p4.part.entries[i].partitions)
    })?;
    if low < 0 || low as usize >= n {
        return err(
            ErrorClass::Arg,
            format!(
                "invalid partition_low {low} (the request has {n} partitions: 0 to {})",
                n - 1
            ),
        );
    }
    if high < low || high as usize >= n {
        return Err(Error::new(
            ErrorClass::Arg,
            format!(
                "invalid partition_high {high} (must be from partition_low {low} to {})",
                n - 1
            ),
        ));
    }
    let list: Vec<i32> = (low..=high).collect();
    pready_list(id, &list)
}

/// `MPI_Parrived`: whether receiver partition `partition` has arrived (true for an
/// inactive request).
pub fn parrived(id: ReqId, partition: i32) -> Result<bool> {
    runtime::with(|rt| {
        let t = &rt.p2p4.part;
        let Some(i) = t.find(id) else {
            if rt.device.request(id).is_none() {
                return crate::p2p::invalid_request(id);
            }
            return err(
                ErrorClass::Request,
                format!("request (index {id}) is not a partitioned receive request"),
            );
        };
        let e = &t.entries[i];
        if !matches!(e.side, Side::Recv(_)) {
            return err(
                ErrorClass::Request,
                format!("request (index {id}) is a partitioned send request (MPI_Parrived applies to receive requests)"),
            );
        }
        if partition < 0 || partition as usize >= e.partitions {
            return Err(bad_partition(partition, e.partitions));
        }
        if !arrived(rt, i, partition as usize) {
            runtime::progress_all(rt);
        }
        Ok(arrived(rt, i, partition as usize))
    })
}

fn arrived(rt: &Runtime, i: usize, partition: usize) -> bool {
    let e = &rt.p2p4.part.entries[i];
    if !e.running {
        return true;
    }
    let Side::Recv(r) = &e.side else {
        return false;
    };
    let Some(p) = r.peer else {
        return false;
    };
    let pb = e.part_bytes();
    let lo = partition * pb;
    let hi = (lo + pb).min(p.parts * p.part_bytes);
    if lo >= hi || p.part_bytes == 0 {
        return r.narrived == p.parts;
    }
    (lo / p.part_bytes..=(hi - 1) / p.part_bytes).all(|j| r.arrived[j])
}

// ----- progress ------------------------------------------------------------------------

/// Moves every running partitioned operation forward.
#[inline]
pub(crate) fn advance(rt: &mut Runtime) {
    if rt.p2p4.part.is_idle() {
        return;
    }
    let Runtime { device, p2p4, .. } = rt;
    advance_table(device, &mut p2p4.part);
}

fn advance_table(device: &mut Device, t: &mut Table) {
    take_setups(device, t);
    match_waiting(device, t);
    if t.running == 0 {
        return;
    }
    for e in &mut t.entries {
        if e.running && advance_entry(device, e) {
            e.running = false;
            t.running -= 1;
        }
    }
}

/// Moves the setup messages that arrived into the stash.
fn take_setups(device: &mut Device, t: &mut Table) {
    let mut k = 0;
    while k < t.listeners.len() {
        let l = &t.listeners[k];
        match device.finish_if_complete(l.req) {
            Finish::Done { .. } => {
                let l = t.listeners.swap_remove(k);
                t.stash.push(Setup::decode(l.ctx, l.src, &l.buf));
            }
            _ => k += 1,
        }
    }
}

/// Gives waiting receives the setups meant for them, in the order they started, and
/// listens for the setups still missing.
fn match_waiting(device: &mut Device, t: &mut Table) {
    if t.waiting.is_empty() {
        return;
    }
    let mut w = 0;
    while w < t.waiting.len() {
        let id = t.waiting[w];
        let Some(i) = t.find(id) else {
            t.waiting.remove(w);
            continue;
        };
        let (ctx, src, tag) = {
            let e = &t.entries[i];
            (e.ctx, e.peer_rank, e.tag)
        };
        if let Some(s) = t
            .stash
            .iter()
            .position(|s| s.ctx == ctx && s.src == src && s.tag == tag)
        {
            let setup = t.stash.remove(s);
            t.waiting.remove(w);
            let e = &mut t.entries[i];
            if let Side::Recv(r) = &mut e.side {
                r.peer = Some(setup);
                r.waiting = false;
            }
            post_recvs(device, e);
            continue;
        }
        if !t.listeners.iter().any(|l| l.ctx == ctx && l.src == src) {
            let mut buf = Box::new([0u8; SETUP_LEN]);
            let req = device.irecv(RecvArgs {
                spec: Spec {
                    ctx,
                    src,
                    tag: SETUP_TAG,
                },
                buf: buf.as_mut_ptr(),
                cap: SETUP_LEN,
            });
            t.listeners.push(Listener { ctx, src, req, buf });
        }
        w += 1;
    }
    // A listener may have completed at once (its setup had arrived).
    if t.listeners
        .iter()
        .any(|l| device.request(l.req).is_none_or(|r| r.is_complete()))
    {
        take_setups(device, t);
        match_waiting(device, t);
    }
}

/// Finishes the device requests of `e` that completed; true when `e` is done (its
/// request is then marked done).
fn advance_entry(device: &mut Device, e: &mut Entry) -> bool {
    let elems = e.partitions * e.count;
    match &mut e.side {
        Side::Send(s) => {
            s.sends
                .retain(|&id| matches!(device.finish_if_complete(id), Finish::NotComplete));
            if s.nready < e.partitions || !s.sends.is_empty() {
                return false;
            }
            device.mark_done(e.req, Status::EMPTY);
            true
        }
        Side::Recv(r) => {
            let Some(p) = r.peer else {
                return false;
            };
            for j in 0..r.recvs.len() {
                let Some(id) = r.recvs[j] else { continue };
                let Finish::Done { status, .. } = device.finish_if_complete(id) else {
                    continue;
                };
                r.recvs[j] = None;
                let off = j * p.part_bytes;
                let got = status.bytes as usize;
                if let Some(st) = &r.staging {
                    let end = (off + got).min(st.len());
                    if off < end {
                        // SAFETY: the program's buffer holds `elems` elements of the
                        // type (precv_init's contract); staging holds their packed bytes.
                        unsafe {
                            oxmpi_datatype::unpack(
                                e.ty.datatype(),
                                e.base as *mut u8,
                                elems,
                                off,
                                &st[off..end],
                            )
                        };
                    }
                }
                r.bytes += got as u64;
                if status.error != Outcome::Success && r.error == Outcome::Success {
                    r.error = status.error;
                }
                r.arrived[j] = true;
                r.narrived += 1;
            }
            if r.narrived < p.parts {
                return false;
            }
            device.mark_done(
                e.req,
                Status {
                    source: e.peer_rank,
                    tag: e.tag,
                    error: r.error,
                    bytes: r.bytes,
                    cancelled: false,
                },
            );
            true
        }
    }
}

// ----- freeing -----------------------------------------------------------------------

/// `MPI_Request_free` of a partitioned request: Ok(false) when `id` is not one; an
/// active one may not be freed.
pub(crate) fn free(rt: &mut Runtime, id: ReqId) -> Result<bool> {
    if !owns(rt, id) {
        return Ok(false);
    }
    if !rt.device.request(id).is_some_and(|r| r.is_inactive()) {
        return err(
            ErrorClass::Request,
            "a partitioned request cannot be freed while it is active (complete it with MPI_Wait or MPI_Test first)",
        );
    }
    let t = &mut rt.p2p4.part;
    let i = t.find(id).expect("owned");
    t.entries.swap_remove(i);
    rt.device.free_request(id);
    Ok(true)
}

/// `MPI_Cancel` refuses partitioned requests.
pub(crate) fn cancel_refused() -> Error {
    Error::new(
        ErrorClass::Request,
        "a partitioned request cannot be cancelled",
    )
}
