//! The shared-memory fast path for small collectives on communicators whose members all
//! live on this node: `MPI_Barrier`, and `MPI_Bcast`, `MPI_Reduce`, `MPI_Allreduce`,
//! `MPI_Scan`, `MPI_Exscan`, `MPI_Allgather` of at most [`SLOT`] bytes per rank.
//!
//! Each such communicator gets, on its first eligible call, a segment of its own: two
//! generations ("parities") of one slot per member, each slot an arrival word followed
//! by the data in the same cache line. A call `s` is one step: every member writes its
//! contribution into its slot of the call's parity, stores `s` in the slot's arrival
//! word, waits until every member's word says `s` (the member whose store completes the
//! set wakes the sleepers), then reads what it needs from the others' slots (reducing
//! in rank order, so non-commutative operations keep their order). A member starts call `s + 2` (which rewrites the same parity) only after
//! seeing every member arrive at `s + 1`, i.e. after every member finished reading call
//! `s`: two parities are enough, no other synchronisation is needed.
//!
//! Setup is collective over point-to-point messages in the communicator's collective
//! context (tag [`SETUP_TAG`]): rank 0 creates the segment (mode 0600, named under the
//! job's `oxmpi.<kvsname>` prefix so `mpiexec` removes leftovers of crashed jobs), sends
//! its name, collects every member's "mapped" answer, unlinks the name and sends the
//! verdict; a communicator where any of this fails uses the point-to-point algorithms.
//!
//! Larger Bcast, Reduce, Allreduce and Alltoall (oversubscribed nodes, or when
//! `OXMPI_COLL_SHM_LARGE_MAX` is set) move through per-member staging areas in pieces
//! ([`large`]); a Reduce on two members always does, pipelined ([`reduce_pipelined`]).
//! The nonblocking and persistent forms of the slot and staged calls run the same
//! steps, moved on by the progress engine ([`poll`]).
//! Which calls take this path, and which of these variants, is decided by the
//! collective decision table (`oxmpi_coll::decision::choose_shm`); the sizes it uses are
//! this segment's geometry.
//!
//! While waiting, a member keeps the device and the nonblocking collectives progressing
//! (other ranks may need its progress to reach the collective) and follows the engine's
//! waiting policy numbers (`OXMPI_SPIN`, `OXMPI_YIELD`): spin, yield, then sleep on its node
//! doorbell, which the completing member and every incoming packet ring.

pub(crate) mod poll;

use super::check::Team;
use super::op::Reducer;
use crate::comm::Group;
use crate::device::matching::Spec;
use crate::device::{RecvArgs, ReqId, SendArgs, SendMode};
use crate::error::{err, Error, ErrorClass, Result};
use crate::runtime::{self, Runtime};
use crate::sys::shm::{self, Mapping};
use crate::transport::shm::ShmNode;
use crate::transport::Route;
use crate::types::TypeInfo;
use oxmpi_coll::decision::{self, ShmCall, ShmPath};
use oxmpi_coll::schedule::Collective;
use std::cell::Cell;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Weak};
use std::time::Duration;

/// Bytes of one member's slot: the largest per-rank contribution of the fast path.
pub const SLOT: usize = decision::SHM_SLOT;
/// Bytes of each member's staging area for large calls (and of the result area): a
/// large call moves its vector through them in pieces of this size.
pub const BIG: usize = decision::SHM_STAGE;
/// Offset of the data in a slot (the arrival word shares its cache line).
const DATA: usize = 8;
/// Distance between slots: the data plus one cache line, keeping slots line aligned.
const STRIDE: usize = SLOT + 64;
/// A cache line.
const LINE: usize = 64;
/// Tag of the setup messages (below communicator management's reserved range).
pub const SETUP_TAG: i32 = 0x7D00_0000;
const NAME_CAP: usize = 256;

/// A communicator's mapped segment and what waiting needs.
pub(crate) struct ShmComm {
    map: Mapping,
    n: usize,
    me: usize,
    /// Node-local index of each member (for ringing its doorbell).
    local: Vec<usize>,
    node: Arc<ShmNode>,
    /// Fast-path calls started by this process on the communicator.
    calls: AtomicU32,
    /// The last call every member is known to have arrived at.
    known: AtomicU32,
    /// Pieces moved by [`reduce_pipelined`] calls so far (the same on every member).
    pieces: AtomicU64,
    /// Nonblocking fast-path calls ([`poll`]) begun here, and those of them whose
    /// results this member has read: a member publishes a later call only once it read
    /// every earlier one (the two parities rely on it).
    poll_begun: AtomicU32,
    poll_read: AtomicU32,
    spin: u32,
    yields: u32,
    nap: Duration,
}

impl ShmComm {
    fn len_for(n: usize) -> usize {
        2 * n * STRIDE + (n + 1) * BIG + 2 * LINE
    }

    /// The piece counters of [`reduce_pipelined`], after the staging areas: pieces
    /// written by the non-root, pieces folded by the root (each on its own cache line;
    /// both count up over the communicator's life).
    fn piece_counters(&self) -> (&AtomicU64, &AtomicU64) {
        let at = self
            .map
            .as_ptr()
            .wrapping_add(2 * self.n * STRIDE + (self.n + 1) * BIG);
        // SAFETY: the two words lie inside the mapping (len_for), 64-byte aligned
        // (STRIDE, BIG are multiples of 64 and the mapping is page aligned), zero
        // initialised and only ever accessed atomically.
        unsafe {
            (
                &*(at as *const AtomicU64),
                &*(at.wrapping_add(LINE) as *const AtomicU64),
            )
        }
    }

    /// Member `rank`'s staging area for one piece of a large call.
    fn big_in(&self, rank: usize) -> *mut u8 {
        self.map
            .as_ptr()
            .wrapping_add(2 * self.n * STRIDE + rank * BIG)
    }

    /// The shared result area of a large call.
    fn big_out(&self) -> *mut u8 {
        self.big_in(self.n)
    }

    /// Start of member `rank`'s slot for `call` (its parity): the arrival word, then the
    /// data at [`DATA`].
    fn slot(&self, call: u32, rank: usize) -> *mut u8 {
        let parity = (call % 2) as usize;
        // In bounds: (parity * n + rank + 1) * STRIDE <= len for rank < n.
        self.map
            .as_ptr()
            .wrapping_add((parity * self.n + rank) * STRIDE)
    }

    fn data(&self, call: u32, rank: usize) -> *mut u8 {
        self.slot(call, rank).wrapping_add(DATA)
    }

    fn flag(&self, call: u32, rank: usize) -> &AtomicU32 {
        // SAFETY: every slot starts with a zero-initialised, 64-byte aligned u32 that
        // members only access atomically.
        unsafe { &*(self.slot(call, rank) as *const AtomicU32) }
    }

    /// First member (from `from`) that has not arrived at `call`, or `n`.
    fn missing(&self, call: u32, mut from: usize) -> usize {
        while from < self.n
            && (from == self.me || self.flag(call, from).load(Ordering::SeqCst) == call)
        {
            from += 1;
        }
        from
    }

    /// True when every member has arrived at `call`.
    fn all_arrived(&self, call: u32) -> bool {
        self.missing(call, 0) == self.n
    }

    /// Rings the doorbell of every other member that sleeps, and advances the count of
    /// those that do not: a member waiting for a nonblocking call on this path checks
    /// the slots after reading its count and before sleeping (`nbc::shm_ready`), so an
    /// arrival in between must not go unseen.
    fn notify_sleepers(&self) {
        for (k, &j) in self.local.iter().enumerate() {
            if k != self.me {
                self.node.bump_bell(j);
            }
        }
    }

    /// Publishes this member's arrival at `call` (after its data). A member that will
    /// not wait for all the others (`lazy`) wakes every sleeper, since someone may wait
    /// for it; otherwise only the member whose arrival completes the call does (the last
    /// in the total order of the arrival stores, which therefore sees all of them).
    /// Returns true when this member saw the call complete.
    fn publish(&self, call: u32, lazy: bool) -> bool {
        self.flag(call, self.me).store(call, Ordering::SeqCst);
        if lazy {
            self.notify_sleepers();
            return false;
        }
        if self.all_arrived(call) {
            self.known.store(call, Ordering::Relaxed);
            self.notify_sleepers();
            return true;
        }
        false
    }

    /// Waits until every member has arrived at `call`.
    fn wait_all(&self, call: u32) -> Result<()> {
        let next = Cell::new(0);
        self.wait_until(|| {
            next.set(self.missing(call, next.get()));
            next.get() == self.n
        })?;
        self.known.store(call, Ordering::Relaxed);
        Ok(())
    }

    /// Waits until members `ranks` have arrived at `call`.
    fn wait_some(&self, call: u32, ranks: std::ops::Range<usize>) -> Result<()> {
        let next = Cell::new(ranks.start);
        self.wait_until(|| {
            let mut k = next.get();
            while k < ranks.end
                && (k == self.me || self.flag(call, k).load(Ordering::SeqCst) == call)
            {
                k += 1;
            }
            next.set(k);
            k >= ranks.end
        })
    }

    /// Before writing a slot for `call`: every member has finished `call - 2` (which
    /// used the same slots), i.e. arrived at `call - 1`.
    fn ensure_prev(&self, call: u32) -> Result<()> {
        let prev = call.wrapping_sub(1);
        let known = self.known.load(Ordering::Relaxed);
        if prev == 0 || prev.wrapping_sub(known) as i32 <= 0 {
            return Ok(());
        }
        self.wait_all(prev)
    }

    /// The engine's waiting policy around `done`: spin, yield, then sleep on the node
    /// doorbell, keeping the device progressing.
    fn wait_until(&self, done: impl Fn() -> bool) -> Result<()> {
        let mut idle: u32 = 0;
        loop {
            if done() {
                return Ok(());
            }
            // Nonblocking collectives started before this call may need this member.
            super::nbc::run_parked();
            idle = idle.saturating_add(1);
            if idle <= self.spin {
                if idle % 64 == 0 {
                    runtime::with(|rt| Ok(runtime::progress_all(rt)))?;
                }
                std::hint::spin_loop();
            } else if idle <= self.spin.saturating_add(self.yields) {
                runtime::with(|rt| Ok(runtime::progress_all(rt)))?;
                if !done() {
                    std::thread::yield_now();
                }
            } else {
                // Read before moving the nonblocking calls on: an arrival after that
                // advances the count (`notify_sleepers`), so the sleep ends at once.
                let seen = self.node.doorbell_seq();
                let calm = runtime::with(|rt| {
                    let busy = runtime::progress_all(rt)
                        || rt.device.announce_blocked_sends()
                        || rt.device.has_incoming();
                    Ok(!busy)
                })?;
                if calm {
                    let node = &self.node;
                    node.sleep_since(seen, || done() || node.incoming_pending(), self.nap);
                }
            }
        }
    }

    /// Waits until the root of the last pipelined Reduce has folded every piece (a
    /// member of that call may leave before it), so the staging areas may be rewritten.
    fn wait_staging_free(&self) -> Result<()> {
        let pieces = self.pieces.load(Ordering::Relaxed);
        let (_, folded) = self.piece_counters();
        self.wait_until(|| folded.load(Ordering::SeqCst) >= pieces)
    }

    /// A full synchronisation step (a call without data).
    fn sync(&self) -> Result<()> {
        let call = self.begin()?;
        self.ensure_prev(call)?;
        if !self.publish(call, false) {
            self.wait_all(call)?;
        }
        Ok(())
    }

    /// Starts a blocking call: its number, once this member has read the results of
    /// its earlier nonblocking calls (waiting moves them on).
    fn begin(&self) -> Result<u32> {
        self.wait_polls()?;
        Ok(self.calls.fetch_add(1, Ordering::Relaxed).wrapping_add(1))
    }

    /// Waits until this member has read the results of its nonblocking calls (which
    /// may still use the slots or the staging areas).
    fn wait_polls(&self) -> Result<()> {
        if self.poll_read.load(Ordering::Relaxed) != self.poll_begun.load(Ordering::Relaxed) {
            self.wait_until(|| {
                self.poll_read.load(Ordering::Relaxed) == self.poll_begun.load(Ordering::Relaxed)
            })?;
        }
        Ok(())
    }
}

/// A user buffer as the fast path reads or writes it.
#[derive(Clone)]
pub(crate) struct Data {
    pub addr: usize,
    pub count: usize,
    /// Packed bytes of the `count` elements.
    pub bytes: usize,
    /// The datatype when it is not contiguous (contiguous data is copied directly).
    pub layout: Option<Box<TypeInfo>>,
}

impl Data {
    pub fn new(addr: usize, count: usize, ty: &TypeInfo) -> Data {
        Data {
            addr,
            count,
            bytes: count * ty.size,
            layout: (!ty.contiguous).then(|| Box::new(ty.clone())),
        }
    }

    /// Copies the packed bytes of the buffer to `dst`.
    ///
    /// # Safety
    /// The user buffer holds `count` elements; `dst` has room for their packed bytes.
    unsafe fn pack_to(&self, dst: *mut u8) {
        if self.bytes == 0 {
            return;
        }
        match &self.layout {
            // SAFETY: per the contract; shared slots never overlap user memory.
            None => unsafe {
                std::ptr::copy_nonoverlapping(self.addr as *const u8, dst, self.bytes)
            },
            Some(t) => {
                // SAFETY: per the contract.
                let out = unsafe { std::slice::from_raw_parts_mut(dst, self.bytes) };
                // SAFETY: per the contract.
                unsafe { t.pack(self.addr as *const u8, self.count, out) };
            }
        }
    }

    /// Copies packed bytes `off..off + len` of the buffer to `dst`.
    ///
    /// # Safety
    /// As for [`Data::pack_to`], with `off + len <= bytes` and `dst` holding `len` bytes.
    unsafe fn pack_range(&self, off: usize, len: usize, dst: *mut u8) {
        if len == 0 {
            return;
        }
        match &self.layout {
            // SAFETY: per the contract.
            None => unsafe {
                std::ptr::copy_nonoverlapping((self.addr + off) as *const u8, dst, len)
            },
            Some(t) => {
                // SAFETY: per the contract.
                let out = unsafe { std::slice::from_raw_parts_mut(dst, len) };
                // SAFETY: per the contract.
                unsafe { t.pack_at(self.addr as *const u8, self.count, off, out) };
            }
        }
    }

    /// Writes packed bytes `off..off + len` of the buffer from `src`.
    ///
    /// # Safety
    /// As for [`Data::pack_range`].
    unsafe fn unpack_range(&self, off: usize, len: usize, src: *const u8) {
        if len == 0 {
            return;
        }
        match &self.layout {
            // SAFETY: per the contract.
            None => unsafe {
                std::ptr::copy_nonoverlapping(src, (self.addr + off) as *mut u8, len)
            },
            Some(t) => {
                // SAFETY: per the contract.
                let input = unsafe { std::slice::from_raw_parts(src, len) };
                // SAFETY: per the contract.
                unsafe { t.unpack_at(self.addr as *mut u8, self.count, off, input) };
            }
        }
    }

    /// Writes packed bytes from `src` into the buffer.
    ///
    /// # Safety
    /// As for [`Data::pack_to`], with `src` holding the packed bytes.
    unsafe fn unpack_from(&self, src: *const u8) {
        if self.bytes == 0 {
            return;
        }
        match &self.layout {
            // SAFETY: per the contract.
            None => unsafe { std::ptr::copy_nonoverlapping(src, self.addr as *mut u8, self.bytes) },
            Some(t) => {
                // SAFETY: per the contract.
                let data = unsafe { std::slice::from_raw_parts(src, self.bytes) };
                // SAFETY: per the contract.
                unsafe { t.unpack(self.addr as *mut u8, data) };
            }
        }
    }
}

/// Which collective a fast call runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    Barrier,
    Bcast { root: usize },
    Reduce { root: usize },
    Allreduce,
    Scan,
    Exscan,
    Allgather,
    Gather { root: usize },
    Scatter { root: usize },
    Alltoall,
}

/// One fast-path call, prepared under the runtime lock.
pub(crate) struct Call {
    pub comm: Arc<ShmComm>,
    pub kind: Kind,
    /// This rank's contribution (for Bcast: the root's buffer, at the root).
    pub input: Option<Data>,
    /// Where the result goes on this rank, if anywhere.
    pub output: Option<Data>,
    pub reducer: Reducer,
    /// Bytes of one rank's contribution.
    pub bytes: usize,
    /// Bytes of one element (reductions split vectors only between elements).
    pub elem: usize,
}

/// Everything the collective setup needs, gathered under the lock.
pub(crate) struct Setup {
    ctx: u32,
    group: Arc<Group>,
    me: usize,
    local: Vec<usize>,
    node: Arc<ShmNode>,
    prefix: String,
    spin: u32,
    yields: u32,
    nap: Duration,
}

/// What the state knows about a communicator's fast path.
pub(crate) struct Entry {
    group: Weak<Group>,
    comm: Option<Arc<ShmComm>>,
}

/// Answer of [`offer`].
pub(crate) enum Offer {
    Ready(Arc<ShmComm>),
    Setup(Setup),
    /// The communicator (context id, group) cannot have a fast path.
    Disable(u32, Arc<Group>),
}

fn sanitize(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// The fast path for a call on `t` whose per-rank contribution is `bytes` (in elements
/// of `elem` bytes), if the decision table's shared-memory rows choose it for the call
/// and the communicator has (or can get) a segment. Every member decides the same way:
/// the answer depends only on the communicator, the sizes and the environment.
pub(crate) fn offer(
    rt: &Runtime,
    t: &Team,
    bytes: usize,
    elem: usize,
    kind: Kind,
) -> Option<Offer> {
    let call = ShmCall {
        collective: kind.collective(),
        bytes,
        elem,
        size: t.size,
        oversubscribed: rt.oversubscribed,
    };
    decision::choose_shm(&rt.coll.tuning, &call)?;
    let group = &rt.comms.get(t.id).ok()?.group;
    let slot = t.ctx as usize / 2;
    if let Some(Some(e)) = rt.coll.fast.get(slot) {
        if e.group.as_ptr() == Arc::as_ptr(group) {
            return e.comm.clone().map(Offer::Ready);
        }
    }
    // A new communicator on this context: find out whether it can have a segment.
    let node = rt.device.node().cloned();
    let mut local = Vec::with_capacity(t.size);
    let eligible = node.is_some()
        && group
            .members()
            .iter()
            .enumerate()
            .all(|(k, &w)| match rt.device.route(w) {
                Route::Shm(j) => {
                    local.push(j);
                    true
                }
                Route::SelfLoop if k == t.rank => {
                    local.push(node.as_ref().map_or(0, |n| n.local_rank()));
                    true
                }
                _ => false,
            });
    let (true, Some(node), Some(pmi)) = (eligible, node, rt.pmi.as_ref()) else {
        return Some(Offer::Disable(t.ctx, group.clone()));
    };
    let cfg = &rt.config;
    let nap = if rt.device.tcp_sleeper().is_some() {
        Duration::from_millis(1)
    } else {
        Duration::from_millis(100)
    };
    Some(Offer::Setup(Setup {
        ctx: t.ctx,
        group: group.clone(),
        me: t.rank,
        local,
        node,
        prefix: format!("/oxmpi.{}.coll", sanitize(pmi.kvsname())),
        spin: cfg.effective_spin(rt.oversubscribed),
        yields: cfg.yield_iters,
        nap,
    }))
}

/// Records the outcome of a setup (or that a communicator has no fast path).
/// True when `comm` (an identifier) still names the communicator whose fast path is
/// `sc`: a planned call may run again on it.
pub(crate) fn is_current(rt: &Runtime, comm: crate::comm::CommId, sc: &Arc<ShmComm>) -> bool {
    let Ok(c) = rt.comms.get(comm) else {
        return false;
    };
    match rt.coll.fast.get(c.coll_ctx() as usize / 2) {
        Some(Some(e)) => {
            c.remote.is_none()
                && e.group.as_ptr() == Arc::as_ptr(&c.group)
                && e.comm.as_ref().is_some_and(|f| Arc::ptr_eq(f, sc))
        }
        _ => false,
    }
}

pub(crate) fn entry(group: &Arc<Group>, comm: Option<Arc<ShmComm>>) -> Entry {
    Entry {
        group: Arc::downgrade(group),
        comm,
    }
}

// ----- setup messages ------------------------------------------------------------------

fn send(ctx: u32, me: usize, to_world: u32, data: Vec<u8>) -> Result<ReqId> {
    runtime::with(|rt| {
        Ok(rt.device.isend_staged(
            SendArgs {
                dest: to_world,
                ctx,
                src_rank: me as i32,
                tag: SETUP_TAG,
                buf: std::ptr::null(),
                len: 0,
                mode: SendMode::Standard,
            },
            data,
        ))
    })
}

fn wait(id: ReqId) -> Result<u64> {
    let st = runtime::block_on(|rt| {
        let done = rt.device.request(id).is_some_and(|r| r.is_complete());
        Ok(done.then(|| rt.device.finish(id)))
    })?;
    if st.error != ErrorClass::Success {
        return err(
            st.error.into(),
            "shared-memory collective setup message failed",
        );
    }
    Ok(st.bytes)
}

fn recv(ctx: u32, from: usize, cap: usize) -> Result<Vec<u8>> {
    let mut buf = vec![0u8; cap.max(1)];
    let ptr = buf.as_mut_ptr();
    let id = runtime::with(|rt| {
        Ok(rt.device.irecv(RecvArgs {
            spec: Spec {
                ctx,
                src: from as i32,
                tag: SETUP_TAG,
            },
            buf: ptr,
            cap,
        }))
    })?;
    let n = wait(id)? as usize;
    buf.truncate(n);
    Ok(buf)
}

static SEGMENTS: AtomicU32 = AtomicU32::new(0);

/// The collective setup (see the module documentation): `Some` when every member mapped
/// the segment.
pub(crate) fn setup(s: Setup) -> Result<Option<Arc<ShmComm>>> {
    let n = s.group.size() as usize;
    let len = ShmComm::len_for(n);
    let members = s.group.members();
    let mut mapping = None;
    if s.me == 0 {
        let name = format!(
            "{}.{}.{}.{}",
            s.prefix,
            s.ctx,
            std::process::id(),
            SEGMENTS.fetch_add(1, Ordering::Relaxed)
        );
        let _ = shm::unlink(&name);
        mapping = shm::create(&name, len).ok();
        let announced = if mapping.is_some() {
            name.clone().into_bytes()
        } else {
            Vec::new()
        };
        let sends = members[1..]
            .iter()
            .map(|&w| send(s.ctx, 0, w, announced.clone()))
            .collect::<Result<Vec<_>>>()?;
        let mut all_ok = mapping.is_some();
        for k in 1..n {
            all_ok &= recv(s.ctx, k, 1)? == [1];
        }
        for id in sends {
            wait(id)?;
        }
        if mapping.is_some() {
            let _ = shm::unlink(&name);
        }
        let verdict = vec![all_ok as u8];
        let sends = members[1..]
            .iter()
            .map(|&w| send(s.ctx, 0, w, verdict.clone()))
            .collect::<Result<Vec<_>>>()?;
        for id in sends {
            wait(id)?;
        }
        if !all_ok {
            mapping = None;
        }
    } else {
        let name = recv(s.ctx, 0, NAME_CAP)?;
        if !name.is_empty() {
            let name = String::from_utf8_lossy(&name).into_owned();
            mapping = shm::open(&name, len).ok();
        }
        let id = send(s.ctx, s.me, members[0], vec![mapping.is_some() as u8])?;
        wait(id)?;
        if recv(s.ctx, 0, 1)? != [1] {
            mapping = None;
        }
    }
    Ok(mapping.map(|map| {
        Arc::new(ShmComm {
            map,
            n,
            me: s.me,
            local: s.local,
            node: s.node,
            calls: AtomicU32::new(0),
            known: AtomicU32::new(0),
            pieces: AtomicU64::new(0),
            poll_begun: AtomicU32::new(0),
            poll_read: AtomicU32::new(0),
            spin: s.spin,
            yields: s.yields,
            nap: s.nap,
        })
    }))
}

/// Runs the setup and records its outcome for the communicator.
pub(crate) fn set_up(s: Setup) -> Result<()> {
    let (slot, group) = (s.ctx as usize / 2, s.group.clone());
    let comm = setup(s)?;
    runtime::with(|rt| {
        rt.coll.set_fast(slot, &group, comm);
        Ok(())
    })
}

// ----- the calls -------------------------------------------------------------------------

fn internal(what: &str) -> Error {
    Error::new(
        ErrorClass::Intern,
        format!("shared-memory collective: {what}"),
    )
}

impl Kind {
    /// The collective, as the decision table names it.
    #[inline]
    fn collective(self) -> Collective {
        match self {
            Kind::Barrier => Collective::Barrier,
            Kind::Bcast { .. } => Collective::Bcast,
            Kind::Reduce { .. } => Collective::Reduce,
            Kind::Allreduce => Collective::Allreduce,
            Kind::Scan => Collective::Scan,
            Kind::Exscan => Collective::Exscan,
            Kind::Allgather => Collective::Allgather,
            Kind::Gather { .. } => Collective::Gather,
            Kind::Scatter { .. } => Collective::Scatter,
            Kind::Alltoall => Collective::Alltoall,
        }
    }
}

/// Runs a prepared fast call (outside the runtime lock), by the variant the decision
/// table gives its sizes.
pub(crate) fn run(c: &Call) -> Result<()> {
    let sc = &*c.comm;
    let (n, me, bytes) = (sc.n, sc.me, c.bytes);
    match decision::shm_path(c.kind.collective(), bytes, c.elem, n) {
        ShmPath::Slots => {}
        ShmPath::Staged => return large(c),
        ShmPath::PipelinedReduce => match c.kind {
            Kind::Reduce { root } => return reduce_pipelined(c, root),
            _ => return Err(internal("pipelined variant of a call other than Reduce")),
        },
    }
    let call = sc.begin()?;
    sc.ensure_prev(call)?;
    let (lazy, wait) = shape(c.kind, me, n);
    if let Some(input) = &c.input {
        // SAFETY: the slot holds SLOT bytes, enough for this call (checked above); the
        // input holds its elements (checked by the caller, MPI contract).
        unsafe { input.pack_to(sc.data(call, me)) };
    }
    let complete = sc.publish(call, lazy);
    if !lazy && wait.len() == n {
        if !complete {
            sc.wait_all(call)?;
        }
    } else if !wait.is_empty() {
        sc.wait_some(call, wait)?;
    }
    read(c, call)
}

/// Whether `c` may run as a nonblocking call ([`poll::Poll`]): through the slots or
/// the staging areas (not the pipelined Reduce, whose members do not meet), and no
/// user function to run (it reduces under the runtime lock). Depends only on what every
/// member passes alike.
pub(crate) fn pollable(c: &Call) -> bool {
    matches!(
        decision::shm_path(c.kind.collective(), c.bytes, c.elem, c.comm.n),
        ShmPath::Slots | ShmPath::Staged
    ) && !c.reducer.is_user()
}

/// How a one-step call of `kind` meets the others at member `me` of `n`: whether its
/// arrival is lazy (it will not wait for every member, so it wakes every sleeper), and
/// the members whose arrival it waits for before reading (an empty range: none).
fn shape(kind: Kind, me: usize, n: usize) -> (bool, std::ops::Range<usize>) {
    match kind {
        Kind::Barrier | Kind::Allreduce | Kind::Allgather | Kind::Alltoall => (false, 0..n),
        Kind::Reduce { root } | Kind::Gather { root } if me == root => (false, 0..n),
        Kind::Reduce { .. } | Kind::Gather { .. } => (true, 0..0),
        Kind::Bcast { root } | Kind::Scatter { root } if me != root => (true, root..root + 1),
        Kind::Bcast { .. } | Kind::Scatter { .. } => (true, 0..0),
        Kind::Scan => (true, 0..me + 1),
        Kind::Exscan => (true, 0..me),
    }
}

/// The reading end of one-step call `call` (every member it waits for has arrived):
/// moves what this member receives from the slots into its output.
fn read(c: &Call, call: u32) -> Result<()> {
    let sc = &*c.comm;
    let (n, me, bytes) = (sc.n, sc.me, c.bytes);
    let data = |k: usize, at: usize, len: usize| -> &[u8] {
        // SAFETY: the member wrote its slot before publishing its arrival, and nobody
        // rewrites this parity before everyone arrived at the next call (module
        // documentation); `at + len <= SLOT` for every caller below.
        unsafe { std::slice::from_raw_parts(sc.data(call, k).wrapping_add(at) as *const u8, len) }
    };
    let Some(out) = &c.output else { return Ok(()) };
    match c.kind {
        Kind::Barrier => Ok(()),
        Kind::Bcast { root } => {
            if me != root {
                // SAFETY: the output holds `bytes` packed bytes (checked by the caller).
                unsafe { out.unpack_from(data(root, 0, bytes).as_ptr()) };
            }
            Ok(())
        }
        Kind::Reduce { root } | Kind::Gather { root } if me != root => Ok(()),
        Kind::Reduce { .. } | Kind::Allreduce => {
            fold(&c.reducer, out, bytes, 0..n, &|k| data(k, 0, bytes))
        }
        Kind::Gather { .. } | Kind::Allgather => gather_into(out, bytes, n, |k| data(k, 0, bytes)),
        Kind::Scatter { root } => {
            // SAFETY: the root's slot holds n blocks; the output holds one.
            unsafe { out.unpack_from(data(root, me * bytes, bytes).as_ptr()) };
            Ok(())
        }
        Kind::Scan | Kind::Exscan => {
            let upto = if c.kind == Kind::Scan { me + 1 } else { me };
            if upto == 0 {
                return Ok(());
            }
            fold(&c.reducer, out, bytes, 0..upto, &|k| data(k, 0, bytes))
        }
        Kind::Alltoall => gather_into(out, bytes, n, |k| data(k, me * bytes, bytes)),
    }
}

/// Writes block `k` (`bytes` long, from `block(k)`) of every member into the output,
/// packed in rank order.
fn gather_into<'a>(
    out: &Data,
    bytes: usize,
    n: usize,
    block: impl Fn(usize) -> &'a [u8],
) -> Result<()> {
    if bytes == 0 {
        return Ok(());
    }
    let mut staged = if out.layout.is_none() {
        Vec::new()
    } else {
        vec![0u8; n * bytes]
    };
    for k in 0..n {
        let dst = if out.layout.is_none() {
            (out.addr as *mut u8).wrapping_add(k * bytes)
        } else {
            staged.as_mut_ptr().wrapping_add(k * bytes)
        };
        // SAFETY: the output buffer (or the staging copy) holds n * bytes bytes.
        unsafe { std::ptr::copy_nonoverlapping(block(k).as_ptr(), dst, bytes) };
    }
    if let Some(t) = &out.layout {
        // SAFETY: the output buffer holds the n blocks' elements (checked by the caller).
        unsafe { t.unpack(out.addr as *mut u8, &staged) };
    }
    Ok(())
}

/// `out = x(lo) op ... op x(hi - 1)` over the members' slots, in rank order.
fn fold<'a>(
    red: &Reducer,
    out: &Data,
    bytes: usize,
    ranks: std::ops::Range<usize>,
    slot: &dyn Fn(usize) -> &'a [u8],
) -> Result<()> {
    let Some(last) = ranks.clone().last() else {
        return Ok(());
    };
    if bytes == 0 {
        return Ok(());
    }
    let mut staged = Vec::new();
    let acc: &mut [u8] = if out.layout.is_none() {
        // SAFETY: a contiguous output buffer is exactly `bytes` bytes at its address
        // (checked by the caller); no slot overlaps user memory.
        unsafe { std::slice::from_raw_parts_mut(out.addr as *mut u8, bytes) }
    } else {
        staged.resize(bytes, 0);
        &mut staged
    };
    let first = ranks.start;
    if last == first {
        acc.copy_from_slice(slot(last));
    } else {
        red.apply_into(slot(last - 1), slot(last), acc)?;
        for k in (first..last - 1).rev() {
            red.apply(slot(k), acc)?;
        }
    }
    if out.layout.is_some() {
        // SAFETY: the output buffer holds the result's elements (checked by the caller).
        unsafe { out.unpack_from(staged.as_ptr()) };
    }
    Ok(())
}

/// Bcast, Reduce, Allreduce and Alltoall of more than a slot: the vectors move through
/// the staging areas in pieces of at most [`BIG`] bytes (whole elements), two
/// synchronisation steps per piece ([`staged_before`] runs before this member arrives
/// at a step, [`staged_after`] once every member has). Reductions: each member copies
/// its piece in, then member `k` reduces the `k`-th part of the piece from every
/// member's staging area (in rank order) into the result area, then every member that
/// wants the result copies it out. The result area is only rewritten after the next
/// piece's first step, which every member reaches after copying the previous result
/// out. Alltoall: each member copies the piece of each of its `n` blocks into its
/// staging area (block `j`'s at `j` times the piece), then reads its own from every
/// member's; a staging area is rewritten only after the second step, when all have read.
fn large(c: &Call) -> Result<()> {
    let sc = &*c.comm;
    let steps = staged_steps(c)?;
    // This member's nonblocking calls may still use the staging areas.
    sc.wait_polls()?;
    sc.wait_staging_free()?;
    for s in 0..steps {
        staged_before(c, s)?;
        sc.sync()?;
        staged_after(c, s)?;
    }
    Ok(())
}

/// Bytes of one piece of a staged call (per block for Alltoall).
fn staged_piece(c: &Call) -> Result<usize> {
    if !decision::has_shm_staged(c.kind.collective()) {
        return Err(internal("no large-message variant"));
    }
    let elem = c.elem.max(1);
    let room = match c.kind {
        Kind::Alltoall => BIG / c.comm.n,
        _ => BIG,
    };
    let piece = (room / elem) * elem;
    if piece == 0 {
        return Err(internal("element larger than a staging area"));
    }
    Ok(piece)
}

/// Synchronisation steps of a staged call: two per piece.
pub(super) fn staged_steps(c: &Call) -> Result<u32> {
    let pieces = c.bytes.div_ceil(staged_piece(c)?);
    u32::try_from(2 * pieces).map_err(|_| internal("too many pieces"))
}

/// Offset and length of the piece that step `s` of a staged call moves.
fn staged_range(c: &Call, s: u32) -> Result<(usize, usize)> {
    let piece = staged_piece(c)?;
    let off = (s / 2) as usize * piece;
    Ok((off, piece.min(c.bytes.saturating_sub(off))))
}

/// What this member does before it arrives at step `s` of a staged call: fills its
/// staging area (first step of a piece).
pub(super) fn staged_before(c: &Call, s: u32) -> Result<()> {
    let sc = &*c.comm;
    let me = sc.me;
    if s % 2 == 1 {
        return Ok(());
    }
    let (off, len) = staged_range(c, s)?;
    let Some(input) = &c.input else { return Ok(()) };
    match c.kind {
        Kind::Bcast { root } if me != root => {}
        Kind::Alltoall => {
            for j in 0..sc.n {
                // SAFETY: block j's piece lands at j * len < BIG / n * n in our staging
                // area (nobody reads it before the next step); the input holds n blocks
                // of `bytes` packed bytes (checked by the caller).
                unsafe {
                    input.pack_range(j * c.bytes + off, len, sc.big_in(me).wrapping_add(j * len))
                };
            }
        }
        // SAFETY: our staging area holds BIG >= len bytes (nobody reads it before the
        // next step); the input holds `bytes` packed bytes (checked by the caller).
        _ => unsafe { input.pack_range(off, len, sc.big_in(me)) },
    }
    Ok(())
}

/// What this member does once every member has arrived at step `s` of a staged call.
pub(super) fn staged_after(c: &Call, s: u32) -> Result<()> {
    let sc = &*c.comm;
    let (n, me) = (sc.n, sc.me);
    let (off, len) = staged_range(c, s)?;
    let Some(out) = &c.output else {
        // A Reduce's non-root member still reduces its part of the piece.
        return match c.kind {
            Kind::Reduce { .. } if s % 2 == 0 => reduce_part(c, len),
            _ => Ok(()),
        };
    };
    match c.kind {
        Kind::Bcast { root } => {
            if me != root && s % 2 == 0 {
                // SAFETY: the root filled its staging area before arriving; nobody
                // rewrites it before the next step. The output holds `bytes` bytes.
                unsafe { out.unpack_range(off, len, sc.big_in(root)) };
            }
        }
        Kind::Alltoall => {
            if s % 2 == 0 {
                for k in 0..n {
                    // SAFETY: member k put our block's piece at me * len of its staging
                    // area before arriving; the output holds n blocks of `bytes`.
                    unsafe {
                        out.unpack_range(
                            k * c.bytes + off,
                            len,
                            sc.big_in(k).wrapping_add(me * len),
                        )
                    };
                }
            }
        }
        _ => {
            if s % 2 == 0 {
                reduce_part(c, len)?;
            } else {
                // SAFETY: the result area holds the piece; the output holds `bytes`.
                unsafe { out.unpack_range(off, len, sc.big_out()) };
            }
        }
    }
    Ok(())
}

/// This member's part of a staged reduction's piece of `len` bytes: its share of the
/// elements, reduced from every member's staging area in rank order into the result area.
fn reduce_part(c: &Call, len: usize) -> Result<()> {
    let sc = &*c.comm;
    let (n, me) = (sc.n, sc.me);
    let elem = c.elem.max(1);
    let count = len / elem;
    let (base, extra) = (count / n, count % n);
    let lo = (me * base + me.min(extra)) * elem;
    let hi = lo + (base + usize::from(me < extra)) * elem;
    if hi == lo {
        return Ok(());
    }
    // SAFETY: [lo, hi) lies inside every staging area and the result area (hi <= len <=
    // BIG); member `me` alone writes this part of the result area during this step,
    // and nobody writes staging areas.
    let acc = unsafe { std::slice::from_raw_parts_mut(sc.big_out().wrapping_add(lo), hi - lo) };
    let part = |k: usize| -> &[u8] {
        // SAFETY: as above.
        unsafe { std::slice::from_raw_parts(sc.big_in(k).wrapping_add(lo) as *const u8, hi - lo) }
    };
    acc.copy_from_slice(part(n - 1));
    for k in (0..n - 1).rev() {
        c.reducer.apply(part(k), acc)?;
    }
    Ok(())
}

/// Bytes of a piece of [`reduce_pipelined`].
const PIECE: usize = decision::SHM_PIPELINE_PIECE;

/// Pieces in flight in [`reduce_pipelined`]: the staging area holds this many.
const DEPTH: usize = BIG / PIECE;

/// Bytes the root of [`reduce_pipelined`] folds at a time (kept in the first-level cache).
const FOLD_BYTES: usize = 16 * 1024;

/// Reduce on two members, pipelined: the non-root copies its vector piece by piece into
/// the [`DEPTH`] piece buffers of its staging area while the root folds each arrived
/// piece with its own vector straight into its output. Two counters in the segment
/// (pieces written, pieces folded) hand the buffers back and forth, so the copier runs
/// up to `DEPTH` pieces ahead. Members leave without waiting for each other: a later
/// pipelined call follows the same counters, and the other large calls first wait for
/// the root to have folded every piece ([`ShmComm::wait_staging_free`]).
fn reduce_pipelined(c: &Call, root: usize) -> Result<()> {
    let sc = &*c.comm;
    let me = sc.me;
    let other = 1 - me;
    let elem = c.elem.max(1);
    let piece = (PIECE / elem) * elem;
    let (written, folded) = sc.piece_counters();
    let base = sc.pieces.load(Ordering::Relaxed);
    let count = c.bytes.div_ceil(piece) as u64;
    let buffer = |g: u64| {
        sc.big_in(1 - root)
            .wrapping_add((g % DEPTH as u64) as usize * PIECE)
    };
    let mut scratch = Vec::new();
    sc.wait_polls()?;
    for k in 0..count {
        let g = base + k;
        let off = k as usize * piece;
        let len = piece.min(c.bytes - off);
        if me != root {
            sc.wait_until(|| folded.load(Ordering::SeqCst) + DEPTH as u64 > g)?;
            if let Some(input) = &c.input {
                // SAFETY: buffer g holds PIECE >= len bytes; the root has folded piece
                // g - DEPTH, its last user, and reads it again only after `written`
                // passes g; the input holds `bytes` packed bytes (checked by the caller).
                unsafe { input.pack_range(off, len, buffer(g)) };
            }
            written.store(g + 1, Ordering::SeqCst);
            sc.node.ring_bell(sc.local[other]);
        } else {
            sc.wait_until(|| written.load(Ordering::SeqCst) > g)?;
            // SAFETY: the other member wrote piece g before counting it and does not
            // rewrite its buffer before we count it folded.
            let theirs = unsafe { std::slice::from_raw_parts(buffer(g) as *const u8, len) };
            fold_piece(c, root, off, theirs, &mut scratch)?;
            folded.store(g + 1, Ordering::SeqCst);
            sc.node.ring_bell(sc.local[other]);
        }
    }
    sc.pieces.store(base + count, Ordering::Relaxed);
    Ok(())
}

/// The root's half of [`reduce_pipelined`]: output bytes `off..off + theirs.len()` become
/// `x0 op x1`, where the root's own vector is one operand and `theirs` (the other
/// member's piece) the other, [`FOLD_BYTES`] at a time.
fn fold_piece(
    c: &Call,
    root: usize,
    off: usize,
    theirs: &[u8],
    scratch: &mut Vec<u8>,
) -> Result<()> {
    let (Some(out), Some(input)) = (&c.output, &c.input) else {
        return Ok(());
    };
    let elem = c.elem.max(1);
    let step = (FOLD_BYTES / elem).max(1) * elem;
    let direct = out.layout.is_none() && input.layout.is_none();
    let in_place = direct && input.addr == out.addr;
    // Every predefined operation commutes.
    let commutes = matches!(c.reducer, Reducer::Predefined { .. });
    let mut at = 0;
    while at < theirs.len() {
        let m = step.min(theirs.len() - at);
        let other = &theirs[at..at + m];
        if in_place && (root == 1 || commutes) {
            // SAFETY: a contiguous output holds `bytes` bytes at its address (checked by
            // the caller); shared staging never overlaps user memory.
            let acc =
                unsafe { std::slice::from_raw_parts_mut((out.addr + off + at) as *mut u8, m) };
            // acc holds our vector x_root: x0 op x1 is other op acc for root 1, and the
            // same value for a commutative operation at root 0.
            c.reducer.apply(other, acc)?;
        } else if direct && !in_place {
            // SAFETY: as above; the input is distinct user memory the output does not
            // overlap (MPI forbids aliasing them unless MPI_IN_PLACE).
            let (acc, mine) = unsafe {
                (
                    std::slice::from_raw_parts_mut((out.addr + off + at) as *mut u8, m),
                    std::slice::from_raw_parts((input.addr + off + at) as *const u8, m),
                )
            };
            let (x0, x1) = if root == 0 {
                (mine, other)
            } else {
                (other, mine)
            };
            c.reducer.apply_into(x0, x1, acc)?;
        } else {
            // A non-contiguous buffer (or in place at root 0 with an operation that
            // does not commute): fold in scratch memory.
            scratch.resize(2 * step, 0);
            let (acc, mine) = scratch.split_at_mut(step);
            let (acc, mine) = (&mut acc[..m], &mut mine[..m]);
            // SAFETY: `mine` holds m bytes; off + at + m <= bytes.
            unsafe { input.pack_range(off + at, m, mine.as_mut_ptr()) };
            let (x0, x1): (&[u8], &[u8]) = if root == 0 {
                (mine, other)
            } else {
                (other, mine)
            };
            c.reducer.apply_into(x0, x1, acc)?;
            // SAFETY: the output holds `bytes` packed bytes (checked by the caller).
            unsafe { out.unpack_range(off + at, m, acc.as_ptr()) };
        }
        at += m;
    }
    Ok(())
}
