//! The shared-memory fast path for small collectives on communicators whose members all
//! live on this node: `MPI_Barrier`, and `MPI_Bcast`, `MPI_Reduce`, `MPI_Allreduce`,
//! `MPI_Scan`, `MPI_Exscan`, `MPI_Allgather` of at most [`SLOT`] bytes per rank.
//!
//! Each such communicator gets, on its first eligible call, a segment of its own: a
//! header with one arrival counter, then two generations ("parities") of one slot per
//! member. A call is one step: every member writes its contribution into its slot of
//! the call's parity, adds one to the counter (the member completing `s * n` arrivals
//! wakes the sleepers), waits until the counter reaches `s * n`, then reads what it needs
//! from the others' slots (and reduces in rank order, so non-commutative operations keep
//! their order). A member starts call `s + 2` (which rewrites the same parity) only after
//! seeing every member arrive at `s + 1`, i.e. after every member finished reading call
//! `s`: two parities are enough, no other synchronisation is needed.
//!
//! Setup is collective over point-to-point messages in the communicator's collective
//! context (tag [`SETUP_TAG`]): rank 0 creates the segment (mode 0600, named under the
//! job's `oxmpi.<kvsname>` prefix so `mpiexec` removes leftovers of crashed jobs), sends
//! its name, collects every member's "mapped" answer, unlinks the name and sends the
//! verdict; a communicator where any of this fails uses the point-to-point algorithms.
//!
//! While waiting, a member keeps the device progressing (other ranks may need its
//! point-to-point progress to reach the collective) and follows the engine's waiting
//! policy numbers (`OXMPI_SPIN`, `OXMPI_YIELD`): spin, yield, then sleep on its node
//! doorbell, which the completing member and every incoming packet ring.

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
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Weak};
use std::time::Duration;

/// Bytes of one member's slot: the largest per-rank contribution of the fast path.
pub const SLOT: usize = 2048;
/// Largest communicator that uses the fast path.
pub const MAX_MEMBERS: usize = 64;
const HEADER: usize = 128;
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
    spin: u32,
    yields: u32,
    nap: Duration,
}

impl ShmComm {
    fn len_for(n: usize) -> usize {
        HEADER + 2 * n * SLOT
    }

    fn counter(&self) -> &AtomicU32 {
        // SAFETY: the segment starts with a zero-initialised, 4-byte aligned (page
        // aligned mapping) u32 that every member only accesses atomically.
        unsafe { &*(self.map.as_ptr() as *const AtomicU32) }
    }

    fn slot(&self, call: u32, rank: usize) -> *mut u8 {
        let parity = (call % 2) as usize;
        // In bounds: HEADER + (parity * n + rank + 1) * SLOT <= len for rank < n.
        self.map.as_ptr().wrapping_add(HEADER + (parity * self.n + rank) * SLOT)
    }

    fn target(&self, call: u32) -> u32 {
        call.wrapping_mul(self.n as u32)
    }

    fn done(&self, target: u32) -> bool {
        self.counter().load(Ordering::Acquire).wrapping_sub(target) as i32 >= 0
    }

    /// Counts this member in for `call`; the member completing it wakes the others.
    fn arrive(&self, call: u32) {
        let now = self.counter().fetch_add(1, Ordering::SeqCst).wrapping_add(1);
        if now == self.target(call) {
            for (k, &j) in self.local.iter().enumerate() {
                if k != self.me {
                    self.node.notify(j);
                }
            }
        }
    }

    /// Waits until every member has arrived at `call`.
    fn wait(&self, call: u32) -> Result<()> {
        let target = self.target(call);
        let mut idle: u32 = 0;
        loop {
            if self.done(target) {
                return Ok(());
            }
            idle = idle.saturating_add(1);
            if idle <= self.spin {
                if idle % 64 == 0 {
                    runtime::with(|rt| Ok(rt.device.progress()))?;
                }
                std::hint::spin_loop();
            } else if idle <= self.spin.saturating_add(self.yields) {
                runtime::with(|rt| Ok(rt.device.progress()))?;
                if !self.done(target) {
                    std::thread::yield_now();
                }
            } else {
                let calm = runtime::with(|rt| {
                    let busy = rt.device.progress()
                        || rt.device.announce_blocked_sends()
                        || rt.device.has_incoming();
                    Ok(!busy)
                })?;
                if calm {
                    let node = &self.node;
                    node.sleep(|| self.done(target) || node.incoming_pending(), self.nap);
                }
            }
        }
    }

    /// Starts a call: its number.
    fn begin(&self) -> u32 {
        self.calls.fetch_add(1, Ordering::Relaxed).wrapping_add(1)
    }
}

/// A user buffer as the fast path reads or writes it.
#[derive(Clone)]
pub(crate) struct Data {
    pub addr: usize,
    pub count: usize,
    pub ty: TypeInfo,
}

impl Data {
    /// Copies the packed bytes of the buffer to `dst`.
    ///
    /// # Safety
    /// The user buffer holds `count` elements; `dst` has room for their packed bytes.
    unsafe fn pack_to(&self, dst: *mut u8) {
        let n = self.count * self.ty.size;
        if n == 0 {
            return;
        }
        if self.ty.contiguous {
            // SAFETY: per the contract; shared slots never overlap user memory.
            unsafe { std::ptr::copy_nonoverlapping(self.addr as *const u8, dst, n) };
        } else {
            // SAFETY: per the contract.
            let out = unsafe { std::slice::from_raw_parts_mut(dst, n) };
            // SAFETY: per the contract.
            unsafe { self.ty.pack(self.addr as *const u8, self.count, out) };
        }
    }

    /// Writes packed bytes from `src` into the buffer.
    ///
    /// # Safety
    /// As for [`Data::pack_to`], with `src` holding the packed bytes.
    unsafe fn unpack_from(&self, src: *const u8) {
        let n = self.count * self.ty.size;
        if n == 0 {
            return;
        }
        if self.ty.contiguous {
            // SAFETY: per the contract.
            unsafe { std::ptr::copy_nonoverlapping(src, self.addr as *mut u8, n) };
        } else {
            // SAFETY: per the contract.
            let data = unsafe { std::slice::from_raw_parts(src, n) };
            // SAFETY: per the contract.
            unsafe { self.ty.unpack(self.addr as *mut u8, data) };
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
}

fn sanitize(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.' { c } else { '_' })
        .collect()
}

/// The fast path for a call on `t` whose per-rank contribution is `bytes`, if the
/// communicator has (or can get) one. Every member decides the same way: the answer
/// depends only on the communicator, the byte count and the environment.
pub(crate) fn offer(rt: &mut Runtime, t: &Team, bytes: usize) -> Option<Offer> {
    if !rt.coll.fast_enabled || bytes > rt.coll.fast_max.min(SLOT) || t.size < 2 || t.size > MAX_MEMBERS {
        return None;
    }
    let slot = t.ctx as usize / 2;
    if let Some(Some(e)) = rt.coll.fast.get(slot) {
        if e.group.as_ptr() == Arc::as_ptr(&t.group) {
            return e.comm.clone().map(Offer::Ready);
        }
    }
    // A new communicator on this context: find out whether it can have a segment.
    let node = rt.device.node().cloned();
    let mut local = Vec::with_capacity(t.size);
    let eligible = node.is_some()
        && t.group.members().iter().enumerate().all(|(k, &w)| match rt.device.route(w) {
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
    let (Some(node), Some(pmi)) = (node, rt.pmi.as_ref()) else {
        rt.coll.set_fast(slot, &t.group, None);
        return None;
    };
    if !eligible {
        rt.coll.set_fast(slot, &t.group, None);
        return None;
    }
    let cfg = rt.device.config();
    let nap = if rt.device.tcp_sleeper().is_some() {
        Duration::from_millis(1)
    } else {
        Duration::from_millis(100)
    };
    Some(Offer::Setup(Setup {
        ctx: t.ctx,
        group: t.group.clone(),
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
        return err(st.error, "shared-memory collective setup message failed");
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
        let announced = if mapping.is_some() { name.clone().into_bytes() } else { Vec::new() };
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
    Error::new(ErrorClass::Intern, format!("shared-memory collective: {what}"))
}

/// Runs a prepared fast call (outside the runtime lock).
pub(crate) fn run(c: Call) -> Result<()> {
    let sc = &*c.comm;
    let call = sc.begin();
    let (n, me, bytes) = (sc.n, sc.me, c.bytes);
    if bytes > SLOT {
        return Err(internal("contribution larger than a slot"));
    }
    // Contribute.
    let writes = match c.kind {
        Kind::Barrier => false,
        Kind::Bcast { root } => me == root,
        _ => true,
    };
    if writes {
        if let Some(input) = &c.input {
            // SAFETY: the slot holds SLOT >= bytes bytes of our mapping; the input
            // buffer holds its elements (checked by the caller, MPI contract).
            unsafe { input.pack_to(sc.slot(call, me)) };
        }
    }
    sc.arrive(call);
    sc.wait(call)?;
    let slot = |k: usize| -> &[u8] {
        // SAFETY: every member wrote its slot before arriving and nobody rewrites this
        // parity before we arrive at the next call (module documentation).
        unsafe { std::slice::from_raw_parts(sc.slot(call, k) as *const u8, bytes) }
    };
    let Some(out) = &c.output else {
        return Ok(());
    };
    match c.kind {
        Kind::Barrier => Ok(()),
        Kind::Bcast { root } => {
            if me != root {
                // SAFETY: the output buffer holds `bytes` packed bytes (checked).
                unsafe { out.unpack_from(slot(root).as_ptr()) };
            }
            Ok(())
        }
        Kind::Reduce { .. } | Kind::Allreduce => fold(&c.reducer, out, bytes, 0..n, &slot),
        Kind::Scan => fold(&c.reducer, out, bytes, 0..me + 1, &slot),
        Kind::Exscan => {
            if me > 0 {
                fold(&c.reducer, out, bytes, 0..me, &slot)
            } else {
                Ok(())
            }
        }
        Kind::Allgather => {
            // The output holds n blocks of `bytes`, packed in rank order.
            let mut staged = if out.ty.contiguous { Vec::new() } else { vec![0u8; n * bytes] };
            for k in 0..n {
                let dst = if out.ty.contiguous {
                    (out.addr as *mut u8).wrapping_add(k * bytes)
                } else {
                    staged.as_mut_ptr().wrapping_add(k * bytes)
                };
                // SAFETY: the output buffer (or the staging copy) holds n * bytes bytes.
                unsafe { std::ptr::copy_nonoverlapping(slot(k).as_ptr(), dst, bytes) };
            }
            if !out.ty.contiguous {
                // SAFETY: the output buffer holds n * recvcount elements (checked).
                unsafe { out.ty.unpack(out.addr as *mut u8, &staged) };
            }
            Ok(())
        }
    }
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
    let acc: &mut [u8] = if out.ty.contiguous {
        // SAFETY: a contiguous output buffer is exactly `bytes` bytes at its address
        // (checked by the caller); no slot overlaps user memory.
        unsafe { std::slice::from_raw_parts_mut(out.addr as *mut u8, bytes) }
    } else {
        staged.resize(bytes, 0);
        &mut staged
    };
    acc.copy_from_slice(slot(last));
    for k in ranks.rev().skip(1) {
        red.apply(slot(k), acc)?;
    }
    if !out.ty.contiguous {
        // SAFETY: the output buffer holds the result's elements (checked by the caller).
        unsafe { out.unpack_from(staged.as_ptr()) };
    }
    Ok(())
}
