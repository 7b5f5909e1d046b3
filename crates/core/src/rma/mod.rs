//! One-sided communication (MPI RMA): windows and their table, the operations
//! (`MPI_Put`, `MPI_Get`, `MPI_Accumulate`, `MPI_Get_accumulate`, `MPI_Fetch_and_op`,
//! `MPI_Compare_and_swap`) and the synchronisation calls (fence, lock/unlock, lock_all,
//! flush, `MPI_Win_sync`).
//!
//! Two transports. Windows whose members all live on this node use shared memory
//! (below). Windows with a member on another node, and every window when
//! `OXMPI_RMA_TRANSPORT=am` (any member asking decides), use active messages for all
//! of their members, this process included (`am.rs`): operations become requests that
//! the target serves from its progress engine, so a passive target progresses at its
//! next MPI call, or through the progress thread where one runs.
//!
//! Shared memory: each
//! window has a shared segment that all members map, holding one cache line per member
//! for its passive-target lock word and one for its accumulate mutex, followed, for
//! windows the library allocates (`MPI_Win_allocate`, `MPI_Win_allocate_shared`), by
//! the window memory of every member, contiguous in rank order. An operation is carried
//! out by the origin itself and is complete when the call returns: loads and stores
//! into the segment, or `process_vm_readv`/`writev` into the memory a member passed to
//! `MPI_Win_create`. So passive-target epochs need nothing from the target process
//! (it need not call MPI), and fence is a barrier. Accumulates take the target's
//! accumulate mutex around read, combine, write, which gives the standard's per-element
//! atomicity between accumulates of all origins; accumulates on integers, `float` and
//! `double` use CPU atomic instructions instead (`atomic.rs` states the rule). The
//! commonest calls take the short path of `fast.rs`, which reads the window from the
//! table's lock-free entries (`table.rs`) and the open epochs from the window's atomic
//! summary ([`Win::open`], [`Win::open_to`]), so it takes no lock.
//!
//! The segment is named under the job's `oxmpi.<kvsname>` prefix and unlinked as soon
//! as every member has mapped it (or failed to), so nothing is left in `/dev/shm`.

mod access;
mod am;
mod atomic;
mod fast;
mod table;

use crate::comm::{CommId, Errhandler, Group};
use crate::error::{err, Error, ErrorClass, Result};
use crate::internal_coll::{Member, Reader, Team, Writer};
use crate::runtime;
use crate::sys::shm::{self, Mapping};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU8, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

pub use access::{
    accumulate, accumulate_req, compare_and_swap, fetch_and_op, get, get_accumulate,
    get_accumulate_req, get_req, put, put_req, Cas, Fop, Origin, TargetSpec,
};
pub use am::progress;
pub use fast::{
    compare_and_swap_fast, fetch_and_op_fast, flush_fast, plain_type_size, transfer_fast, Transfer,
};
pub use table::win;

/// Index of a window in the table.
pub type WinId = u32;

/// How a window's memory came to be (`MPI_WIN_CREATE_FLAVOR`, MPICH's numbers).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flavor {
    Create = 1,
    Allocate = 2,
    Dynamic = 3,
    Shared = 4,
}

/// `MPI_LOCK_EXCLUSIVE` / `MPI_LOCK_SHARED`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LockKind {
    Exclusive,
    Shared,
}

/// Assertion bits of the synchronisation calls (MPICH's values).
pub const MODE_NOCHECK: i32 = 1024;
pub const MODE_NOSTORE: i32 = 2048;
pub const MODE_NOPUT: i32 = 4096;
pub const MODE_NOPRECEDE: i32 = 8192;
pub const MODE_NOSUCCEED: i32 = 16384;
const ALL_MODES: i32 = MODE_NOCHECK | MODE_NOSTORE | MODE_NOPUT | MODE_NOPRECEDE | MODE_NOSUCCEED;

/// Tag of the window setup messages on the window's private communicator.
const SETUP_TAG: i32 = 0x7D20_0001;
const LINE: usize = 64;
/// Regions one member may have attached to a dynamic window at once.
pub const MAX_REGIONS: usize = 64;
/// Bytes of one member's region table: a count, then (address, length) pairs.
const REGION_TABLE: usize = 8 + MAX_REGIONS * 16;

/// Offset of the region tables in the segment: after the lock lines and the PSCW
/// counter matrices.
fn regions_at(n: usize) -> usize {
    (2 * n * LINE + 2 * n * n * 4).div_ceil(8) * 8
}
/// Bits of [`Win::open`]: a fence epoch, a `MPI_Win_lock_all` epoch.
const OPEN_FENCE: u32 = 1;
const OPEN_LOCK_ALL: u32 = 2;
/// `Win::fast`: puts and gets of contiguous bytes may take the short path (shared-memory
/// transport, displacements relative to a base).
const FAST_COPY: u8 = 1;
/// `Win::fast`: CPU atomics may run fetch-and-op and compare-and-swap (window memory in
/// the segment).
const FAST_ATOMIC: u8 = 2;

/// `Win::fast`: a flush after no plain stores to target memory may skip ordering memory:
/// x86-64 (loads are never reordered with later stores there, and the atomics' locked
/// instructions are full barriers) and fewer threads than `MPI_THREAD_MULTIPLE` allows
/// (the record of stores is the window's, not the thread's).
const FAST_FLUSH: u8 = 4;

/// The short paths a window of `flavor` on the message transport (`am`) or not allows.
fn fast_paths(flavor: Flavor, am: bool) -> u8 {
    if am {
        return 0;
    }
    match flavor {
        Flavor::Dynamic => 0,
        Flavor::Create => FAST_COPY,
        Flavor::Allocate | Flavor::Shared => FAST_COPY | FAST_ATOMIC,
    }
}

/// Bits of [`Win::open_to`]: the target is locked, in the `MPI_Win_start` group.
const OPEN_LOCKED: u8 = 1;
const OPEN_STARTED: u8 = 2;

/// The exclusive bit of a lock word; the bits below count shared holders.
const EXCL: u32 = 1 << 31;

/// Where one member's window memory is, as this process reaches it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Part {
    /// Address of the window base: in this process (`direct`) or in the member's.
    pub addr: usize,
    pub size: usize,
    pub disp_unit: usize,
    /// The memory is mapped here (segment, or this process's own memory).
    pub direct: bool,
    pub pid: i32,
}

/// Epochs this process has open on the window.
#[derive(Default)]
struct Epochs {
    /// A fence opened an epoch (a later fence closes it).
    fence: bool,
    /// `MPI_Win_lock_all` is open (true: the shared locks were taken, i.e. not
    /// `MPI_MODE_NOCHECK`).
    lock_all: Option<bool>,
    /// Per target: the lock this process holds (and whether it took the lock word).
    locks: Vec<Option<(LockKind, bool)>>,
    /// `MPI_Win_start`'s access group (window ranks), while its epoch is open.
    access: Option<Vec<usize>>,
    /// `MPI_Win_post`'s exposure group (window ranks), until `MPI_Win_wait`/`test`.
    exposure: Option<Vec<usize>>,
    /// Per target: post counts consumed by `MPI_Win_start` so far.
    started: Vec<u32>,
    /// Per origin: complete counts consumed by `MPI_Win_wait`/`test` so far.
    waited: Vec<u32>,
}

struct Meta {
    name: String,
    errhandler: Errhandler,
    epochs: Epochs,
    hints: Hints,
    /// Cached attributes (user keys; the predefined ones are the cells).
    attrs: crate::attr::AttrList,
}

/// The window info hints (`MPI_Win_get_info`). Only `no_locks` changes behaviour: the
/// others allow optimisations this implementation does not make, and what it does
/// (every accumulate ordered and atomic) satisfies any of their values.
#[derive(Clone, Debug)]
struct Hints {
    no_locks: bool,
    accumulate_ordering: String,
    accumulate_ops: String,
    same_size: bool,
    same_disp_unit: bool,
}

impl Default for Hints {
    fn default() -> Hints {
        Hints {
            no_locks: false,
            accumulate_ordering: "rar,raw,war,waw".into(),
            accumulate_ops: "same_op_no_op".into(),
            same_size: false,
            same_disp_unit: false,
        }
    }
}

impl Hints {
    /// Takes the keys of info object `info` that are set with valid values.
    fn update(&mut self, info: crate::info::InfoId) -> Result<()> {
        let get = |k: &str| -> Result<Option<String>> {
            Ok(crate::info::get(info, k.as_bytes())?
                .map(|v| String::from_utf8_lossy(&v).trim().to_string()))
        };
        let flag = |v: &str| match v {
            "true" => Some(true),
            "false" => Some(false),
            _ => None,
        };
        if let Some(b) = get("no_locks")?.as_deref().and_then(flag) {
            self.no_locks = b;
        }
        if let Some(b) = get("same_size")?.as_deref().and_then(flag) {
            self.same_size = b;
        }
        if let Some(b) = get("same_disp_unit")?.as_deref().and_then(flag) {
            self.same_disp_unit = b;
        }
        if let Some(v) = get("accumulate_ordering")? {
            let ok = v == "none"
                || v.split(',')
                    .all(|p| matches!(p.trim(), "rar" | "raw" | "war" | "waw"));
            if ok {
                self.accumulate_ordering = v;
            }
        }
        if let Some(v) = get("accumulate_ops")? {
            if v == "same_op" || v == "same_op_no_op" {
                self.accumulate_ops = v;
            }
        }
        Ok(())
    }

    fn entries(&self, shared: bool) -> Vec<(&'static str, String)> {
        let b = |v: bool| if v { "true" } else { "false" }.to_string();
        let mut v = vec![
            ("no_locks", b(self.no_locks)),
            ("accumulate_ordering", self.accumulate_ordering.clone()),
            ("accumulate_ops", self.accumulate_ops.clone()),
            ("same_size", b(self.same_size)),
            ("same_disp_unit", b(self.same_disp_unit)),
        ];
        if shared {
            // The members' memory is always contiguous.
            v.push(("alloc_shared_noncontig", b(false)));
        }
        v
    }
}

/// A window.
pub struct Win {
    /// The window's private duplicate of the communicator it was made on.
    comm: CommId,
    group: Arc<Group>,
    rank: usize,
    flavor: Flavor,
    /// The shared segment: control words and, for the allocating flavors, memory.
    /// Absent for windows on the message transport (but for `MPI_Win_allocate_shared`,
    /// whose memory it holds).
    map: Option<Mapping>,
    /// This member's memory of `MPI_Win_allocate` on the message transport.
    #[allow(dead_code)]
    own: Option<OwnMem>,
    /// The message transport's state; `None` for the shared-memory transport.
    am: Option<Mutex<am::Am>>,
    parts: Vec<Part>,
    meta: Mutex<Meta>,
    /// The open epochs as the operations check them without the meta lock:
    /// [`OPEN_FENCE`], [`OPEN_LOCK_ALL`]. Changed only with the meta lock held.
    open: AtomicU32,
    /// Per target: [`OPEN_LOCKED`], [`OPEN_STARTED`].
    open_to: Box<[AtomicU8]>,
    /// Which short paths of `fast.rs` the window allows: [`FAST_COPY`], [`FAST_ATOMIC`].
    fast: u8,
    /// Set by every operation that may have written target memory with plain stores
    /// since the last flush; a flush orders memory only when it is set.
    stored: AtomicBool,
    /// The values `MPI_Win_get_attr` points to, for the window's life.
    cells: Cells,
}

/// This member's `MPI_WIN_SIZE`, `MPI_WIN_DISP_UNIT`, `MPI_WIN_CREATE_FLAVOR` and
/// `MPI_WIN_MODEL` attribute values.
#[derive(Debug)]
pub struct Cells {
    pub size: i64,
    pub disp_unit: i32,
    pub flavor: i32,
    pub model: i32,
}

/// `MPI_WIN_UNIFIED`: the public and private copies of window memory are one.
pub const WIN_UNIFIED: i32 = 2;

/// Memory the library allocated for this member (64-byte aligned), freed with the window.
struct OwnMem {
    ptr: *mut u8,
    layout: std::alloc::Layout,
}

impl OwnMem {
    fn new(size: usize) -> Result<OwnMem> {
        let layout = std::alloc::Layout::from_size_align(size.max(1), LINE)
            .map_err(|_| Error::new(ErrorClass::Size, format!("size {size} is too large")))?;
        // SAFETY: the layout has a non-zero size.
        let ptr = unsafe { std::alloc::alloc_zeroed(layout) };
        if ptr.is_null() {
            return err(
                ErrorClass::NoMem,
                format!("cannot allocate {size} bytes of window memory"),
            );
        }
        Ok(OwnMem { ptr, layout })
    }
}

impl Drop for OwnMem {
    fn drop(&mut self) {
        // SAFETY: allocated in `OwnMem::new` with this layout, freed once.
        unsafe { std::alloc::dealloc(self.ptr, self.layout) };
    }
}

// SAFETY: the memory is owned by the window; the pointer is only an address to it.
unsafe impl Send for OwnMem {}
// SAFETY: as above; accesses to the memory follow MPI's rules, not Rust references.
unsafe impl Sync for OwnMem {}

/// The error handler of window `id` (for error dispatch); `None` if it is not live.
pub fn errhandler_of(id: WinId) -> Option<Errhandler> {
    let w = win(id).ok()?;
    let h = w.meta().errhandler;
    Some(h)
}

fn install(w: Win) -> WinId {
    let w = Arc::new(w);
    if w.am.is_some() {
        am::serve(w.clone());
    }
    table::install(w)
}

impl Win {
    fn meta(&self) -> MutexGuard<'_, Meta> {
        self.meta.lock().unwrap_or_else(|p| p.into_inner())
    }

    #[inline]
    fn n(&self) -> usize {
        self.parts.len()
    }

    /// True on the message transport.
    #[inline]
    pub(crate) fn is_am(&self) -> bool {
        self.am.is_some()
    }

    /// The segment's address (shared-memory transport only).
    fn seg(&self) -> *mut u8 {
        self.map
            .as_ref()
            .map_or(std::ptr::null_mut(), |m| m.as_ptr())
    }

    /// Lock word (`which` 0) or accumulate mutex (`which` 1) of member `r`.
    fn word(&self, r: usize, which: usize) -> &AtomicU32 {
        assert!(r < self.n() && which < 2 && self.map.is_some());
        let at = self.seg().wrapping_add((2 * r + which) * LINE);
        // SAFETY: the control area holds 2n zero-initialised, 64-byte aligned lines
        // inside the mapping, only ever accessed atomically by the members.
        unsafe { &*(at as *const AtomicU32) }
    }

    /// Checks a target rank: `Ok(None)` for `MPI_PROC_NULL`.
    pub(crate) fn target(&self, rank: i32, call_arg: &str) -> Result<Option<usize>> {
        if rank == crate::PROC_NULL {
            return Ok(None);
        }
        if rank < 0 || rank as usize >= self.n() {
            return err(
                ErrorClass::Rank,
                format!(
                    "{call_arg} {rank} is not a rank of the window's group (size {})",
                    self.n()
                ),
            );
        }
        Ok(Some(rank as usize))
    }

    /// Records that an operation wrote target memory with plain stores, which the next
    /// flush must order.
    #[inline]
    pub(crate) fn note_stored(&self) {
        if !self.stored.load(Ordering::Relaxed) {
            self.stored.store(true, Ordering::Relaxed);
        }
    }

    /// Whether a flush must order memory: always unless [`FAST_FLUSH`] allows less,
    /// then only after plain stores since the last one (and clears the record).
    #[inline]
    fn take_stored(&self) -> bool {
        if !cfg!(target_arch = "x86_64") || self.fast & FAST_FLUSH == 0 {
            return true;
        }
        if !self.stored.load(Ordering::Relaxed) {
            return false;
        }
        self.stored.store(false, Ordering::Relaxed);
        true
    }

    /// Refuses an operation on `t` outside any access epoch to it.
    #[inline]
    pub(crate) fn check_epoch(&self, t: usize) -> Result<()> {
        if self.in_epoch(t) {
            return Ok(());
        }
        self.no_epoch(t)
    }

    /// Whether an access epoch to `t` is open (fence, lock_all, a lock on `t`, or `t`
    /// in the started group).
    #[inline]
    pub(crate) fn in_epoch(&self, t: usize) -> bool {
        self.open.load(Ordering::Relaxed) != 0
            || self.open_to.get(t).map(|o| o.load(Ordering::Relaxed)) > Some(0)
    }

    #[cold]
    fn no_epoch(&self, t: usize) -> Result<()> {
        err(
            ErrorClass::RmaSync,
            format!(
                "no access epoch to target rank {t} is open on the window (call MPI_Win_fence, MPI_Win_lock, MPI_Win_lock_all or MPI_Win_start first)"
            ),
        )
    }

    /// Whether a passive-target epoch to `t` is open (a lock on it or lock_all).
    #[inline]
    pub(crate) fn passive_to(&self, t: usize) -> bool {
        self.open.load(Ordering::Relaxed) & OPEN_LOCK_ALL != 0
            || self.open_to[t].load(Ordering::Relaxed) & OPEN_LOCKED != 0
    }

    fn set_open(&self, bit: u32, on: bool) {
        if on {
            self.open.fetch_or(bit, Ordering::Relaxed);
        } else {
            self.open.fetch_and(!bit, Ordering::Relaxed);
        }
    }

    fn set_open_to(&self, t: usize, bit: u8, on: bool) {
        if on {
            self.open_to[t].fetch_or(bit, Ordering::Relaxed);
        } else {
            self.open_to[t].fetch_and(!bit, Ordering::Relaxed);
        }
    }

    pub(crate) fn flavor(&self) -> Flavor {
        self.flavor
    }

    pub(crate) fn part(&self, t: usize) -> Part {
        self.parts[t]
    }

    /// The PSCW counters: `post[t][o]` counts the exposure epochs target `t` opened to
    /// origin `o` (`which` 0); `complete[t][o]` the access epochs `o` closed at `t`
    /// (`which` 1).
    fn pscw(&self, which: usize, t: usize, o: usize) -> &AtomicU32 {
        let n = self.n();
        assert!(which < 2 && t < n && o < n && self.map.is_some());
        let at = self
            .seg()
            .wrapping_add(2 * n * LINE + 4 * (which * n * n + t * n + o));
        // SAFETY: the control area holds the 2 n x n matrices of zero-initialised,
        // 4-byte aligned words after the lock lines, only ever accessed atomically.
        unsafe { &*(at as *const AtomicU32) }
    }

    /// Member `t`'s table of attached regions (dynamic windows): word 0 the count,
    /// then address and length of each region. Read and written only under `t`'s
    /// accumulate mutex.
    fn regions(&self, t: usize) -> *mut u64 {
        assert!(self.map.is_some());
        self.seg()
            .wrapping_add(regions_at(self.n()) + t * REGION_TABLE) as *mut u64
    }

    /// The attached region of member `t` holding bytes `lo..hi` (absolute addresses
    /// in `t`'s memory), if any.
    pub(crate) fn region_covers(&self, t: usize, lo: usize, hi: usize) -> bool {
        let p = self.regions(t);
        self.with_acc_lock(t, || {
            // SAFETY: the table lies inside the mapping (`regions_at`, `REGION_TABLE`),
            // 8-byte aligned, and is only touched under the member's accumulate mutex,
            // which we hold; the count never exceeds MAX_REGIONS.
            unsafe {
                let k = (*p as usize).min(MAX_REGIONS);
                (0..k).any(|i| {
                    let a = *p.add(1 + 2 * i) as usize;
                    let l = *p.add(2 + 2 * i) as usize;
                    lo >= a && hi <= a + l
                })
            }
        })
    }

    /// Runs `f` holding member `t`'s accumulate mutex.
    pub(crate) fn with_acc_lock<R>(&self, t: usize, f: impl FnOnce() -> R) -> R {
        let w = self.word(t, 1);
        spin_until(|| {
            w.compare_exchange(0, 1, Ordering::Acquire, Ordering::Relaxed)
                .is_ok()
        });
        let r = f();
        w.store(0, Ordering::Release);
        r
    }
}

/// Spins (yielding, and keeping the device progressing now and then) until `f` holds.
fn spin_until(mut f: impl FnMut() -> bool) {
    let mut idle: u32 = 0;
    while !f() {
        idle = idle.wrapping_add(1);
        if idle % 16 == 0 {
            // Other ranks may need this one's point-to-point progress meanwhile.
            let _ = runtime::with(|rt| Ok(runtime::progress(&mut rt.device)));
        }
        if idle < 64 {
            std::hint::spin_loop();
        } else {
            std::thread::yield_now();
        }
    }
}

// ----- creation ------------------------------------------------------------------------

/// What `MPI_Win_create` / `MPI_Win_allocate(_shared)` ask for.
pub struct Create {
    pub flavor: Flavor,
    /// Size in bytes of this member's memory.
    pub size: i64,
    pub disp_unit: i64,
    /// The memory for `Flavor::Create`.
    pub base: usize,
    /// The info argument (hints).
    pub info: Option<crate::info::InfoId>,
}

/// This process's node, as the device sees it (`OXMPI_NODE_ID`, or host, boot and
/// network namespace): members on other nodes make a window use messages.
fn node_id() -> Vec<u8> {
    crate::bootstrap::node_key().into_bytes()
}

fn u64_bytes(v: u64) -> [u8; 8] {
    v.to_le_bytes()
}

fn read_u64(r: &mut Reader) -> Result<u64> {
    let b = r.bytes()?;
    let a: [u8; 8] = b
        .try_into()
        .map_err(|_| Error::new(ErrorClass::Intern, "malformed window setup message"))?;
    Ok(u64::from_le_bytes(a))
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

static SEGMENTS: AtomicU32 = AtomicU32::new(0);

/// Rounds up to a cache line.
fn line_up(v: usize) -> usize {
    v.div_ceil(LINE) * LINE
}

/// Collective window creation over communicator `comm`. Returns the window and this
/// member's base address.
pub fn create(comm: CommId, c: Create) -> Result<(WinId, usize)> {
    let snap = crate::commops::snapshot(comm)?;
    if snap.is_inter() {
        return err(
            ErrorClass::Comm,
            "windows are made on intracommunicators; this is an intercommunicator",
        );
    }
    if c.size < 0 {
        return err(ErrorClass::Size, format!("size {} is negative", c.size));
    }
    if c.disp_unit <= 0 {
        return err(
            ErrorClass::Disp,
            format!("disp_unit {} is not positive", c.disp_unit),
        );
    }
    if c.flavor == Flavor::Create && c.size > 0 && c.base == 0 {
        return err(ErrorClass::Base, "base is NULL but size is positive");
    }
    let dup = crate::commops::comm_dup(comm)?;
    match setup(dup, &c) {
        Ok(r) => Ok(r),
        Err(e) => {
            let _ = crate::commops::comm_free(dup);
            Err(e)
        }
    }
}

fn setup(dup: CommId, c: &Create) -> Result<(WinId, usize)> {
    let snap = crate::commops::snapshot(dup)?;
    let n = snap.size() as usize;
    let me = snap.rank as usize;
    let team = Team {
        ctx: snap.coll_ctx(),
        tag: SETUP_TAG,
        members: snap
            .group
            .members()
            .iter()
            .enumerate()
            .map(|(i, &w)| Member {
                world: w,
                id: i as i32,
            })
            .collect(),
        me,
        root: 0,
    };
    // Everyone's size, unit, base, pid, node and transport wish, at everyone.
    let want_am = runtime::with(|rt| Ok(rt.config.rma_transport_am))?;
    let mut w = Writer::default();
    w.bytes(&u64_bytes(c.size as u64))
        .bytes(&u64_bytes(c.disp_unit as u64))
        .bytes(&u64_bytes(c.base as u64))
        .i32(std::process::id() as i32)
        .bytes(&node_id())
        .bytes(&[want_am as u8]);
    let all = team.gather(w.finish())?;
    let all = team.bcast(all.map(|v| {
        let mut w = Writer::default();
        for p in &v {
            w.bytes(p);
        }
        w.finish()
    }))?;
    let mut r = Reader::new(&all);
    let mut infos = Vec::with_capacity(n);
    for _ in 0..n {
        let b = r.bytes()?;
        let mut q = Reader::new(b);
        let size = read_u64(&mut q)? as usize;
        let unit = read_u64(&mut q)? as usize;
        let base = read_u64(&mut q)? as usize;
        let pid = q.i32()?;
        let node = q.bytes()?.to_vec();
        let am = q.bytes()? == [1];
        infos.push((size, unit, base, pid, node, am));
    }
    let spans_nodes = infos.iter().any(|i| i.4 != infos[0].4);
    if spans_nodes && c.flavor == Flavor::Shared {
        return err(
            ErrorClass::RmaShared,
            "the communicator's processes are on more than one node: MPI_Win_allocate_shared needs every member on one node",
        );
    }
    let am = spans_nodes || infos.iter().any(|i| i.5);
    if am && c.flavor != Flavor::Shared {
        return setup_am(dup, &snap, c, &infos);
    }
    // Other members reach memory given to MPI_Win_create (or attached to a dynamic
    // window) with process_vm_readv/writev, which Yama may forbid between siblings.
    if matches!(c.flavor, Flavor::Create | Flavor::Dynamic)
        && n > 1
        && !crate::sys::cma::yama_permits_siblings()
    {
        return err(
            ErrorClass::UnsupportedOperation,
            "windows on memory the program provides (MPI_Win_create, MPI_Win_create_dynamic) need cross-memory attach between ranks, which /proc/sys/kernel/yama/ptrace_scope forbids here; use MPI_Win_allocate",
        );
    }
    let ctrl = line_up(regions_at(n) + n * REGION_TABLE);
    let with_data = matches!(c.flavor, Flavor::Allocate | Flavor::Shared);
    let mut offsets = Vec::with_capacity(n);
    let mut total = ctrl;
    for i in &infos {
        offsets.push(total);
        if with_data {
            total = total
                .checked_add(i.0)
                .ok_or_else(|| Error::new(ErrorClass::Size, "window sizes overflow"))?;
        }
    }
    // Segment: made by member 0, name sent to all, unlinked once all mapped it.
    let prefix = runtime::with(|rt| {
        Ok(match rt.pmi.as_ref() {
            Some(p) => format!("/oxmpi.{}.win", sanitize(p.kvsname())),
            None => format!("/oxmpi.single{}.win", std::process::id()),
        })
    })?;
    let mut mapping: Option<Mapping> = None;
    let mut why = String::new();
    if me == 0 {
        let name = format!(
            "{}.{}.{}",
            prefix,
            std::process::id(),
            SEGMENTS.fetch_add(1, Ordering::Relaxed)
        );
        let _ = shm::unlink(&name);
        match shm::create(&name, total) {
            Ok(m) => mapping = Some(m),
            Err(e) => {
                why = format!("cannot create the window's shared segment of {total} bytes: {e}")
            }
        }
        let announced = if mapping.is_some() {
            name.clone().into_bytes()
        } else {
            Vec::new()
        };
        team.bcast(Some(announced))?;
        let oks = team
            .gather(vec![mapping.is_some() as u8])?
            .unwrap_or_default();
        if mapping.is_some() {
            let _ = shm::unlink(&name);
        }
        let ok = oks.iter().all(|o| o == &[1]);
        team.bcast(Some(vec![ok as u8]))?;
        if !ok {
            mapping = None;
            if why.is_empty() {
                why = "a member could not map the window's shared segment".into();
            }
        }
    } else {
        let name = team.bcast(None)?;
        if !name.is_empty() {
            match shm::open(&String::from_utf8_lossy(&name), total) {
                Ok(m) => mapping = Some(m),
                Err(e) => why = format!("cannot map the window's shared segment: {e}"),
            }
        }
        team.gather(vec![mapping.is_some() as u8])?;
        if team.bcast(None)? != [1] {
            mapping = None;
            if why.is_empty() {
                why = "member 0 could not create, or a member could not map, the window's shared segment".into();
            }
        }
    }
    let Some(map) = mapping else {
        return err(ErrorClass::NoMem, why);
    };
    let base_here = map.as_ptr() as usize;
    let parts: Vec<Part> = infos
        .iter()
        .enumerate()
        .map(|(k, i)| {
            if with_data {
                Part {
                    addr: base_here + offsets[k],
                    size: i.0,
                    disp_unit: i.1,
                    direct: true,
                    pid: i.3,
                }
            } else {
                Part {
                    addr: i.2,
                    size: i.0,
                    disp_unit: i.1,
                    direct: k == me,
                    pid: i.3,
                }
            }
        })
        .collect();
    let am = am.then(|| {
        Mutex::new(am::Am::new(
            snap.ctx,
            me,
            snap.group.members().to_vec(),
            parts[me],
            false,
        ))
    });
    finish(dup, &snap, c, parts, Some(map), None, am)
}

/// Member info exchanged at creation: size, unit, base, pid, node, wants messages.
type MemberInfo = (usize, usize, usize, i32, Vec<u8>, bool);

/// Window creation on the message transport: no shared segment; this member's memory
/// is its own (allocated here for `MPI_Win_allocate`).
fn setup_am(
    dup: CommId,
    snap: &crate::comm::Comm,
    c: &Create,
    infos: &[MemberInfo],
) -> Result<(WinId, usize)> {
    let me = snap.rank as usize;
    let own = match c.flavor {
        Flavor::Allocate => Some(OwnMem::new(infos[me].0)?),
        _ => None,
    };
    let parts: Vec<Part> = infos
        .iter()
        .enumerate()
        .map(|(k, i)| Part {
            addr: match (&own, k == me) {
                (Some(o), true) => o.ptr as usize,
                _ => i.2,
            },
            size: i.0,
            disp_unit: i.1,
            direct: k == me,
            pid: i.3,
        })
        .collect();
    let am = am::Am::new(
        snap.ctx,
        me,
        snap.group.members().to_vec(),
        parts[me],
        c.flavor == Flavor::Dynamic,
    );
    finish(dup, snap, c, parts, None, own, Some(Mutex::new(am)))
}

fn finish(
    dup: CommId,
    snap: &crate::comm::Comm,
    c: &Create,
    parts: Vec<Part>,
    map: Option<Mapping>,
    own: Option<OwnMem>,
    am: Option<Mutex<am::Am>>,
) -> Result<(WinId, usize)> {
    let me = snap.rank as usize;
    let n = parts.len();
    let my_base = parts[me].addr;
    let mut hints = Hints::default();
    if let Some(i) = c.info {
        hints.update(i)?;
    }
    let mut fast = fast_paths(c.flavor, am.is_some());
    if runtime::thread_level()? != runtime::ThreadLevel::Multiple {
        fast |= FAST_FLUSH;
    }
    let win = Win {
        comm: dup,
        group: snap.group.clone(),
        rank: me,
        flavor: c.flavor,
        map,
        own,
        am,
        cells: Cells {
            size: parts[me].size as i64,
            // The attribute is an int; a larger unit (only from the `_c` calls)
            // shows as the largest int.
            disp_unit: i32::try_from(parts[me].disp_unit).unwrap_or(i32::MAX),
            flavor: c.flavor as i32,
            model: WIN_UNIFIED,
        },
        open: AtomicU32::new(0),
        open_to: (0..n).map(|_| AtomicU8::new(0)).collect(),
        fast,
        stored: AtomicBool::new(false),
        parts,
        meta: Mutex::new(Meta {
            name: String::new(),
            errhandler: Errhandler::Fatal,
            hints,
            attrs: Default::default(),
            epochs: Epochs {
                locks: vec![None; n],
                started: vec![0; n],
                waited: vec![0; n],
                ..Default::default()
            },
        }),
    };
    Ok((install(win), my_base))
}

/// `MPI_Win_attach`: exposes `size` bytes at `base` of this process in dynamic window
/// `id` (target displacements are then absolute addresses).
pub fn attach(id: WinId, base: usize, size: usize) -> Result<()> {
    let w = win(id)?;
    if w.flavor != Flavor::Dynamic {
        return err(
            ErrorClass::RmaFlavor,
            "memory can only be attached to a window made by MPI_Win_create_dynamic",
        );
    }
    if size > 0 && base == 0 {
        return err(ErrorClass::RmaAttach, "base is NULL but size is positive");
    }
    if w.is_am() {
        return am::attach(&w, base, size);
    }
    let p = w.regions(w.rank);
    w.with_acc_lock(w.rank, || {
        // SAFETY: as in `Win::region_covers`; we hold our own accumulate mutex.
        unsafe {
            let k = *p as usize;
            for i in 0..k.min(MAX_REGIONS) {
                let a = *p.add(1 + 2 * i) as usize;
                let l = *p.add(2 + 2 * i) as usize;
                if base < a + l && a < base + size {
                    return err(
                        ErrorClass::RmaAttach,
                        format!("{size} bytes at {base:#x} overlap the attached region of {l} bytes at {a:#x}"),
                    );
                }
            }
            if k >= MAX_REGIONS {
                return err(
                    ErrorClass::RmaAttach,
                    format!("this process already has {MAX_REGIONS} regions attached to the window, the most a window takes"),
                );
            }
            *p.add(1 + 2 * k) = base as u64;
            *p.add(2 + 2 * k) = size as u64;
            *p = (k + 1) as u64;
        }
        Ok(())
    })
}

/// `MPI_Win_detach`: removes the region attached at `base`.
pub fn detach(id: WinId, base: usize) -> Result<()> {
    let w = win(id)?;
    if w.flavor != Flavor::Dynamic {
        return err(
            ErrorClass::RmaFlavor,
            "memory can only be detached from a window made by MPI_Win_create_dynamic",
        );
    }
    if w.is_am() {
        return am::detach(&w, base);
    }
    let p = w.regions(w.rank);
    w.with_acc_lock(w.rank, || {
        // SAFETY: as in `Win::region_covers`; we hold our own accumulate mutex.
        unsafe {
            let k = (*p as usize).min(MAX_REGIONS);
            let Some(i) = (0..k).find(|&i| *p.add(1 + 2 * i) as usize == base) else {
                return err(
                    ErrorClass::RmaAttach,
                    format!("no region is attached to the window at {base:#x}"),
                );
            };
            // Move the last region into the hole.
            *p.add(1 + 2 * i) = *p.add(1 + 2 * (k - 1));
            *p.add(2 + 2 * i) = *p.add(2 + 2 * (k - 1));
            *p = (k - 1) as u64;
        }
        Ok(())
    })
}

/// `MPI_Win_free`: collective; refused while this process has an epoch open.
pub fn free(id: WinId) -> Result<()> {
    let w = win(id)?;
    {
        let m = w.meta();
        if m.epochs.lock_all.is_some() || m.epochs.locks.iter().any(|l| l.is_some()) {
            return err(
                ErrorClass::RmaSync,
                "a passive-target epoch is still open on the window (unlock it first)",
            );
        }
        if m.epochs.access.is_some() || m.epochs.exposure.is_some() {
            return err(
                ErrorClass::RmaSync,
                "an MPI_Win_start or MPI_Win_post epoch is still open on the window (call MPI_Win_complete or MPI_Win_wait first)",
            );
        }
    }
    delete_all_attrs(id, &w)?;
    // Nobody may still be reading or writing our memory: all members arrive first
    // (their operations on it all answered: they closed their epochs).
    crate::coll::movement::barrier(w.comm)?;
    if w.is_am() {
        am::unserve(&w);
    }
    let h = w.meta().errhandler;
    table::remove(id);
    crate::errhandler::release(h);
    crate::commops::comm_free(w.comm)
}

// ----- attributes ----------------------------------------------------------------------

use crate::attr::{AttrKind, AttrObject, KeyvalId};

/// `MPI_Win_get_attr` of a user key: `None` when no value is cached with it.
pub fn attr_get(id: WinId, key: KeyvalId) -> Result<Option<usize>> {
    let w = win(id)?;
    runtime::with(|rt| rt.keyvals.check_use(key, AttrKind::Win))?;
    let v = w.meta().attrs.get(key);
    Ok(v)
}

/// `MPI_Win_set_attr`: a value already cached with the key is deleted first (its
/// delete callback runs; if that fails the old value stays).
pub fn attr_set(id: WinId, key: KeyvalId, value: usize) -> Result<()> {
    let w = win(id)?;
    let hooks = runtime::with(|rt| {
        rt.keyvals.check_use(key, AttrKind::Win)?;
        Ok(rt.keyvals.hooks(key))
    })?;
    let old = w.meta().attrs.get(key);
    if let (Some(v), Some(h)) = (old, hooks) {
        h.delete(AttrObject::Win(id), key, v)?;
    }
    let fresh = w.meta().attrs.set(key, value).is_none();
    if fresh {
        runtime::with(|rt| {
            rt.keyvals.add_use(key);
            Ok(())
        })?;
    }
    Ok(())
}

/// `MPI_Win_delete_attr`: runs the delete callback and removes the value (it stays if
/// the callback fails). Deleting a key with no value cached does nothing.
pub fn attr_delete(id: WinId, key: KeyvalId) -> Result<()> {
    let w = win(id)?;
    let hooks = runtime::with(|rt| {
        rt.keyvals.check_use(key, AttrKind::Win)?;
        Ok(rt.keyvals.hooks(key))
    })?;
    let Some(v) = w.meta().attrs.get(key) else {
        return Ok(());
    };
    if let Some(h) = hooks {
        h.delete(AttrObject::Win(id), key, v)?;
    }
    drop_attr(&w, key)
}

fn drop_attr(w: &Win, key: KeyvalId) -> Result<()> {
    let gone = w.meta().attrs.remove(key).is_some();
    if gone {
        runtime::with(|rt| {
            rt.keyvals.drop_use(key);
            Ok(())
        })?;
    }
    Ok(())
}

/// Deletes every cached attribute (callbacks in caching order), as `MPI_Win_free` does.
fn delete_all_attrs(id: WinId, w: &Win) -> Result<()> {
    loop {
        let next = w.meta().attrs.entries().first().copied();
        let Some((key, val)) = next else {
            return Ok(());
        };
        if let Some(h) = runtime::with(|rt| Ok(rt.keyvals.hooks(key)))? {
            h.delete(AttrObject::Win(id), key, val)?;
        }
        drop_attr(w, key)?;
    }
}

// ----- queries -------------------------------------------------------------------------

/// Attributes of this member's part: (base, size, disp_unit, flavor).
pub fn attributes(id: WinId) -> Result<(usize, usize, usize, Flavor)> {
    let w = win(id)?;
    let p = w.parts[w.rank];
    Ok((p.addr, p.size, p.disp_unit, w.flavor))
}

/// What `MPI_Win_get_attr` hands out: the base address, and the addresses of the
/// other attribute values, which stay where they are until the window is freed.
pub struct AttrAddrs {
    pub base: usize,
    pub size: usize,
    pub disp_unit: usize,
    pub flavor: usize,
    pub model: usize,
}

/// The attribute values of this member of window `id` (see [`AttrAddrs`]).
pub fn attr_cells(id: WinId) -> Result<AttrAddrs> {
    let w = win(id)?;
    let c = &w.cells;
    Ok(AttrAddrs {
        base: w.parts[w.rank].addr,
        size: &c.size as *const i64 as usize,
        disp_unit: &c.disp_unit as *const i32 as usize,
        flavor: &c.flavor as *const i32 as usize,
        model: &c.model as *const i32 as usize,
    })
}

/// `MPI_Win_shared_query`: (size, disp_unit, base) of member `rank`, or of the lowest
/// member with memory for `MPI_PROC_NULL`.
///
/// MPI 4.1 (section 12.2.3) allows the query on windows of every flavor but dynamic. Only a
/// shared window's segments are all load/store accessible; in a window made by
/// `MPI_Win_create` or `MPI_Win_allocate` just the caller's own segment is, and any other
/// segment reads as size 0 with a NULL base.
pub fn shared_query(id: WinId, rank: i32) -> Result<(usize, usize, usize)> {
    let w = win(id)?;
    if w.flavor == Flavor::Dynamic {
        return err(
            ErrorClass::RmaFlavor,
            "MPI_Win_shared_query: a window made by MPI_Win_create_dynamic has no segments to query",
        );
    }
    let t = if rank == crate::PROC_NULL {
        w.parts.iter().position(|p| p.size > 0).unwrap_or(0)
    } else {
        w.target(rank, "rank")?.expect("not PROC_NULL")
    };
    let p = w.parts[t];
    if w.flavor == Flavor::Shared || t == w.rank {
        Ok((p.size, p.disp_unit, p.addr))
    } else {
        Ok((0, p.disp_unit, 0))
    }
}

/// This process's rank in window `id`'s group.
pub fn rank(id: WinId) -> Result<i32> {
    Ok(win(id)?.rank as i32)
}

/// The number of members of window `id`.
pub fn size(id: WinId) -> Result<i32> {
    Ok(win(id)?.n() as i32)
}

/// `MPI_Win_get_group`: a new group handle for the window's group.
pub fn group(id: WinId) -> Result<crate::group::GroupId> {
    let g = win(id)?.group.clone();
    runtime::with(|rt| Ok(rt.groups.insert(g)))
}

pub fn set_name(id: WinId, name: &str) -> Result<()> {
    win(id)?.meta().name = name.to_string();
    Ok(())
}

pub fn get_name(id: WinId) -> Result<String> {
    Ok(win(id)?.meta().name.clone())
}

pub fn set_errhandler(id: WinId, h: Errhandler) -> Result<()> {
    let w = win(id)?;
    crate::errhandler::retain(h);
    let old = std::mem::replace(&mut w.meta().errhandler, h);
    crate::errhandler::release(old);
    Ok(())
}

pub fn get_errhandler(id: WinId) -> Result<Errhandler> {
    let h = win(id)?.meta().errhandler;
    crate::errhandler::retain(h);
    Ok(h)
}

// ----- synchronisation -----------------------------------------------------------------

fn check_assert(a: i32, allowed: i32) -> Result<()> {
    if a & !allowed != 0 {
        return err(
            ErrorClass::Assert,
            format!("assert {a} has bits that are not valid here"),
        );
    }
    Ok(())
}

/// `MPI_Win_fence`: every operation is complete at the origin when issued, so a fence
/// is a barrier (with the memory ordering it implies).
pub fn fence(id: WinId, assert: i32) -> Result<()> {
    let w = win(id)?;
    check_assert(assert, ALL_MODES)?;
    {
        let m = w.meta();
        if m.epochs.lock_all.is_some() || m.epochs.locks.iter().any(|l| l.is_some()) {
            return err(
                ErrorClass::RmaSync,
                "a passive-target epoch is open on the window (MPI_Win_fence may not be called inside it)",
            );
        }
    }
    // On the message transport, this process's operations are done at their targets
    // once answered; the barrier then covers everyone's.
    let done = if w.is_am() {
        am::wait_replies(&w, None)
    } else {
        Ok(())
    };
    std::sync::atomic::fence(Ordering::SeqCst);
    if assert & MODE_NOPRECEDE == 0 || assert & MODE_NOSUCCEED == 0 {
        crate::coll::movement::barrier(w.comm)?;
    }
    std::sync::atomic::fence(Ordering::SeqCst);
    let open = assert & MODE_NOSUCCEED == 0;
    let mut m = w.meta();
    m.epochs.fence = open;
    w.set_open(OPEN_FENCE, open);
    drop(m);
    done
}

fn check_locks_allowed(w: &Win) -> Result<()> {
    if w.meta().hints.no_locks {
        return err(
            ErrorClass::RmaSync,
            "the window has the info hint no_locks=true: passive-target locks are not allowed on it",
        );
    }
    Ok(())
}

/// `MPI_Win_set_info`: takes the hints of `info` that are set with valid values.
pub fn set_info(id: WinId, info: crate::info::InfoId) -> Result<()> {
    let w = win(id)?;
    let mut h = w.meta().hints.clone();
    h.update(info)?;
    w.meta().hints = h;
    Ok(())
}

/// `MPI_Win_get_info`: a new info object with the hints in use.
pub fn get_info(id: WinId) -> Result<crate::info::InfoId> {
    let w = win(id)?;
    let entries = w.meta().hints.entries(w.flavor == Flavor::Shared);
    let i = crate::info::create();
    for (k, v) in entries {
        crate::info::set(i, k.as_bytes(), v.as_bytes())?;
    }
    Ok(i)
}

/// `MPI_Win_lock`.
pub fn lock(id: WinId, kind: LockKind, rank: i32, assert: i32) -> Result<()> {
    table::with_win(id, |w| {
        check_assert(assert, MODE_NOCHECK)?;
        check_locks_allowed(w)?;
        let Some(t) = w.target(rank, "rank")? else {
            return Ok(());
        };
        {
            let m = w.meta();
            if m.epochs.lock_all.is_some() || m.epochs.locks[t].is_some() {
                return err(
                    ErrorClass::RmaSync,
                    format!("this process already holds a lock on target rank {t} of the window"),
                );
            }
        }
        let take = assert & MODE_NOCHECK == 0;
        if take {
            if w.is_am() {
                am::lock_targets(w, &[t], kind == LockKind::Exclusive)?;
            } else {
                acquire(w, t, kind);
            }
        }
        let mut m = w.meta();
        m.epochs.locks[t] = Some((kind, take));
        m.epochs.fence = false;
        w.set_open(OPEN_FENCE, false);
        w.set_open_to(t, OPEN_LOCKED, true);
        Ok(())
    })
}

fn acquire(w: &Win, t: usize, kind: LockKind) {
    let word = w.word(t, 0);
    match kind {
        LockKind::Exclusive => spin_until(|| {
            word.compare_exchange(0, EXCL, Ordering::Acquire, Ordering::Relaxed)
                .is_ok()
        }),
        LockKind::Shared => spin_until(|| {
            let v = word.load(Ordering::Relaxed);
            v & EXCL == 0
                && word
                    .compare_exchange(v, v + 1, Ordering::Acquire, Ordering::Relaxed)
                    .is_ok()
        }),
    }
}

fn release(w: &Win, t: usize, kind: LockKind) {
    let word = w.word(t, 0);
    match kind {
        LockKind::Exclusive => word.store(0, Ordering::Release),
        LockKind::Shared => {
            word.fetch_sub(1, Ordering::Release);
        }
    }
}

/// `MPI_Win_unlock`.
pub fn unlock(id: WinId, rank: i32) -> Result<()> {
    table::with_win(id, |w| {
        let Some(t) = w.target(rank, "rank")? else {
            return Ok(());
        };
        let (kind, taken) = {
            let mut m = w.meta();
            let l = m.epochs.locks[t].take().ok_or_else(|| {
                Error::new(
                    ErrorClass::RmaSync,
                    format!("this process holds no lock on target rank {t} of the window"),
                )
            })?;
            w.set_open_to(t, OPEN_LOCKED, false);
            l
        };
        if w.is_am() {
            return if taken {
                am::unlock_targets(w, &[t], kind == LockKind::Exclusive)
            } else {
                am::wait_replies(w, Some(&[t]))
            };
        }
        std::sync::atomic::fence(Ordering::SeqCst);
        if taken {
            release(w, t, kind);
        }
        Ok(())
    })
}

/// `MPI_Win_lock_all`: a shared lock on every member.
pub fn lock_all(id: WinId, assert: i32) -> Result<()> {
    table::with_win(id, |w| {
        check_assert(assert, MODE_NOCHECK)?;
        check_locks_allowed(w)?;
        {
            let m = w.meta();
            if m.epochs.lock_all.is_some() || m.epochs.locks.iter().any(|l| l.is_some()) {
                return err(
                    ErrorClass::RmaSync,
                    "this process already holds a lock on the window",
                );
            }
        }
        let take = assert & MODE_NOCHECK == 0;
        if take && w.is_am() {
            let all: Vec<usize> = (0..w.n()).collect();
            am::lock_targets(w, &all, false)?;
        } else if take {
            for t in 0..w.n() {
                acquire(w, t, LockKind::Shared);
            }
        }
        let mut m = w.meta();
        m.epochs.lock_all = Some(take);
        m.epochs.fence = false;
        w.set_open(OPEN_FENCE, false);
        w.set_open(OPEN_LOCK_ALL, true);
        Ok(())
    })
}

/// `MPI_Win_unlock_all`.
pub fn unlock_all(id: WinId) -> Result<()> {
    table::with_win(id, |w| {
        let Some(taken) = w.meta().epochs.lock_all.take() else {
            return err(
                ErrorClass::RmaSync,
                "this process holds no MPI_Win_lock_all epoch on the window",
            );
        };
        w.set_open(OPEN_LOCK_ALL, false);
        if w.is_am() {
            let all: Vec<usize> = (0..w.n()).collect();
            return if taken {
                am::unlock_targets(w, &all, false)
            } else {
                am::wait_replies(w, None)
            };
        }
        std::sync::atomic::fence(Ordering::SeqCst);
        if taken {
            for t in 0..w.n() {
                release(w, t, LockKind::Shared);
            }
        }
        Ok(())
    })
}

/// `MPI_Win_flush` (`rank` given) and `MPI_Win_flush_all`: operations on memory this
/// process maps complete when issued, so only the epoch is checked and memory ordered;
/// on the message transport the call waits for the targets' answers.
pub fn flush(id: WinId, rank: Option<i32>) -> Result<()> {
    flush_as(id, rank, false)
}

/// `MPI_Win_flush_local` (`rank` given) and `MPI_Win_flush_local_all`: like [`flush`],
/// but on the message transport only until the origin buffers may be reused.
pub fn flush_local(id: WinId, rank: Option<i32>) -> Result<()> {
    flush_as(id, rank, true)
}

fn flush_as(id: WinId, rank: Option<i32>, local: bool) -> Result<()> {
    let wait = |w: &Win, ts: Option<&[usize]>| {
        if local {
            am::wait_local(w, ts)
        } else {
            am::wait_replies(w, ts)
        }
    };
    table::with_win(id, |w| {
        // The usual case first: a locked target on shared memory.
        if rank.is_some_and(|r| fast::flush(w, r)) {
            return Ok(());
        }
        match rank {
            Some(r) => {
                let Some(t) = w.target(r, "rank")? else {
                    return Ok(());
                };
                if !w.passive_to(t) {
                    return err(
                        ErrorClass::RmaSync,
                        format!("no passive-target epoch to target rank {t} is open on the window"),
                    );
                }
                if w.is_am() {
                    return wait(w, Some(&[t]));
                }
            }
            None => {
                if !(0..w.n()).any(|t| w.passive_to(t)) {
                    return err(
                        ErrorClass::RmaSync,
                        "no passive-target epoch is open on the window",
                    );
                }
                if w.is_am() {
                    return wait(w, None);
                }
            }
        }
        full_fence();
        Ok(())
    })
}

/// A full memory barrier: this process's earlier loads and stores (the operations of
/// a flush) are ordered before its later ones, as the remote completion of the
/// operations needs.
#[inline]
pub(crate) fn full_fence() {
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: a locked OR of zero into the word at the stack pointer leaves it as
        // it was; a locked instruction orders every earlier load and store before every
        // later one (as `mfence` does, for less), and the block is a compiler barrier
        // since it may access memory.
        unsafe {
            std::arch::asm!("lock or dword ptr [rsp], 0", options(nostack));
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    std::sync::atomic::fence(Ordering::SeqCst);
}

// ----- general active target (post, start, complete, wait) ---------------------------------

/// The window ranks of the members of `g` (world ranks), or `MPI_ERR_GROUP`.
fn ranks_of(w: &Win, g: &Group) -> Result<Vec<usize>> {
    g.members()
        .iter()
        .map(|&world| {
            w.group
                .rank_of_world(world)
                .map(|r| r as usize)
                .ok_or_else(|| {
                    Error::new(
                        ErrorClass::Group,
                        format!("the group holds world rank {world}, which is not in the window's group"),
                    )
                })
        })
        .collect()
}

/// `MPI_Win_post`: opens an exposure epoch to the origins in `g`.
pub fn post(id: WinId, g: &Group, assert: i32) -> Result<()> {
    let w = win(id)?;
    check_assert(assert, MODE_NOCHECK | MODE_NOSTORE | MODE_NOPUT)?;
    let ranks = ranks_of(&w, g)?;
    {
        let mut m = w.meta();
        if m.epochs.exposure.is_some() {
            return err(
                ErrorClass::RmaSync,
                "an exposure epoch (MPI_Win_post) is already open on the window",
            );
        }
        m.epochs.exposure = Some(ranks.clone());
    }
    std::sync::atomic::fence(Ordering::SeqCst);
    if w.is_am() {
        return am::notify(&w, &ranks, true);
    }
    for &o in &ranks {
        w.pscw(0, w.rank, o).fetch_add(1, Ordering::Release);
    }
    Ok(())
}

/// `MPI_Win_start`: opens an access epoch to the targets in `g` once each has posted.
pub fn start(id: WinId, g: &Group, assert: i32) -> Result<()> {
    let w = win(id)?;
    check_assert(assert, MODE_NOCHECK)?;
    let ranks = ranks_of(&w, g)?;
    let mut started = {
        let m = w.meta();
        if m.epochs.access.is_some() {
            return err(
                ErrorClass::RmaSync,
                "an access epoch (MPI_Win_start) is already open on the window",
            );
        }
        m.epochs.started.clone()
    };
    if w.is_am() {
        am::wait_for(&w, true, |a| {
            ranks
                .iter()
                .all(|&t| a.posts[t].wrapping_sub(started[t].wrapping_add(1)) as i32 >= 0)
        })?;
        for &t in &ranks {
            started[t] = started[t].wrapping_add(1);
        }
    }
    for &t in ranks.iter().filter(|_| !w.is_am()) {
        let c = w.pscw(0, t, w.rank);
        let want = started[t].wrapping_add(1);
        spin_until(|| c.load(Ordering::Acquire).wrapping_sub(want) as i32 >= 0);
        started[t] = want;
    }
    let mut m = w.meta();
    m.epochs.started = started;
    for &t in &ranks {
        w.set_open_to(t, OPEN_STARTED, true);
    }
    m.epochs.access = Some(ranks);
    m.epochs.fence = false;
    w.set_open(OPEN_FENCE, false);
    Ok(())
}

/// `MPI_Win_complete`: closes the access epoch; every operation is already done.
pub fn complete(id: WinId) -> Result<()> {
    let w = win(id)?;
    let ranks = w.meta().epochs.access.take().ok_or_else(|| {
        Error::new(
            ErrorClass::RmaSync,
            "no access epoch (MPI_Win_start) is open on the window",
        )
    })?;
    for &t in &ranks {
        w.set_open_to(t, OPEN_STARTED, false);
    }
    if w.is_am() {
        let done = am::wait_replies(&w, Some(&ranks));
        am::notify(&w, &ranks, false)?;
        return done;
    }
    std::sync::atomic::fence(Ordering::SeqCst);
    for &t in &ranks {
        w.pscw(1, t, w.rank).fetch_add(1, Ordering::Release);
    }
    Ok(())
}

/// `MPI_Win_wait` (`block`) and `MPI_Win_test`: closes the exposure epoch once every
/// origin of it has completed; `MPI_Win_test` answers false instead of waiting.
pub fn wait(id: WinId, block: bool) -> Result<bool> {
    let w = win(id)?;
    let (ranks, waited) = {
        let m = w.meta();
        let Some(r) = m.epochs.exposure.clone() else {
            return err(
                ErrorClass::RmaSync,
                "no exposure epoch (MPI_Win_post) is open on the window",
            );
        };
        (r, m.epochs.waited.clone())
    };
    // An origin may appear once per group; count what each must have completed.
    let done = |o: usize| {
        let want = waited[o].wrapping_add(1);
        w.pscw(1, w.rank, o)
            .load(Ordering::Acquire)
            .wrapping_sub(want) as i32
            >= 0
    };
    if w.is_am() {
        let ready = am::wait_for(&w, block, |a| {
            ranks
                .iter()
                .all(|&o| a.completes[o].wrapping_sub(waited[o].wrapping_add(1)) as i32 >= 0)
        })?;
        if !ready {
            return Ok(false);
        }
    } else if block {
        for &o in &ranks {
            spin_until(|| done(o));
        }
    } else if !ranks.iter().all(|&o| done(o)) {
        return Ok(false);
    }
    std::sync::atomic::fence(Ordering::SeqCst);
    let mut m = w.meta();
    for &o in &ranks {
        m.epochs.waited[o] = m.epochs.waited[o].wrapping_add(1);
    }
    m.epochs.exposure = None;
    Ok(true)
}

/// The request-based operations (`MPI_Rput` ...) belong to passive-target epochs only:
/// refuses a target this process holds no lock on.
pub fn check_passive(id: WinId, rank: i32) -> Result<()> {
    let w = win(id)?;
    let Some(t) = w.target(rank, "target_rank")? else {
        return Ok(());
    };
    let m = w.meta();
    if m.epochs.lock_all.is_some() || m.epochs.locks[t].is_some() {
        return Ok(());
    }
    err(
        ErrorClass::RmaSync,
        format!("request-based operations need a passive-target epoch (MPI_Win_lock or MPI_Win_lock_all) to target rank {t}"),
    )
}

/// `MPI_Win_sync`: orders this process's loads and stores to the window memory.
pub fn sync(id: WinId) -> Result<()> {
    win(id)?;
    std::sync::atomic::fence(Ordering::SeqCst);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hints_take_valid_values_only() {
        let i = crate::info::create();
        crate::info::set(i, b"no_locks", b"true").unwrap();
        crate::info::set(i, b"accumulate_ordering", b"rar, waw").unwrap();
        crate::info::set(i, b"accumulate_ops", b"sometimes").unwrap();
        crate::info::set(i, b"same_size", b"maybe").unwrap();
        let mut h = Hints::default();
        h.update(i).unwrap();
        crate::info::free(i).unwrap();
        assert!(h.no_locks);
        assert_eq!(h.accumulate_ordering, "rar, waw");
        assert_eq!(h.accumulate_ops, "same_op_no_op");
        assert!(!h.same_size);
        let e = h.entries(true);
        assert!(e.contains(&("no_locks", "true".to_string())));
        assert!(e.contains(&("alloc_shared_noncontig", "false".to_string())));
        assert!(!h
            .entries(false)
            .iter()
            .any(|(k, _)| *k == "alloc_shared_noncontig"));
    }

    #[test]
    fn segment_layout_keeps_regions_aligned_and_apart() {
        for n in 1..40 {
            let at = regions_at(n);
            assert_eq!(at % 8, 0);
            assert!(at >= 2 * n * LINE + 2 * n * n * 4);
        }
    }
}
