//! The process-wide MPI state and its life cycle: `MPI_Init` builds it, every call runs
//! under its lock, `MPI_Finalize` tears it down, `MPI_Abort` ends the job.
//!
//! Locking rule: the lock is held only inside engine code, never while user code runs
//! (error handlers, reduction functions, attribute callbacks are called by the bindings
//! after the engine returns).

use crate::bootstrap::{self, Bootstrap};
use crate::comm::{Comm, CommTable, Errhandler, Group, SELF, WORLD};
use crate::config::Config;
use crate::device::packet::HEADER_BYTES;
use crate::device::{Device, DeviceConfig, DeviceError};
use crate::error::{err, ErrorClass, Result};
use crate::placement;
use crate::state_lock::{StateGuard, StateLock};
use crate::transport::ring::{self, Watch};
use crate::transport::shm::ShmNode;
use crate::types::TypeTable;
use oxmpi_pmi::Client;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Thread support levels, ordered as in the standard.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum ThreadLevel {
    Single = 0,
    Funneled = 1,
    Serialized = 2,
    Multiple = 3,
}

impl ThreadLevel {
    /// The standard's name, e.g. `"MPI_THREAD_SERIALIZED"`.
    pub fn name(self) -> &'static str {
        match self {
            ThreadLevel::Single => "MPI_THREAD_SINGLE",
            ThreadLevel::Funneled => "MPI_THREAD_FUNNELED",
            ThreadLevel::Serialized => "MPI_THREAD_SERIALIZED",
            ThreadLevel::Multiple => "MPI_THREAD_MULTIPLE",
        }
    }
}

/// The highest thread support level `MPI_Init_thread` provides.
pub const MAX_THREAD_LEVEL: ThreadLevel = ThreadLevel::Serialized;

/// Everything an initialised process owns.
pub struct Runtime {
    pub device: Device,
    /// The engine's tunables as read at `MPI_Init` (the device got its part of them).
    pub config: Config,
    pub comms: CommTable,
    pub groups: crate::group::GroupTable,
    pub keyvals: crate::attr::KeyvalTable,
    pub types: TypeTable,
    /// Collective state: operations, sequence numbers, schedule cache.
    pub coll: crate::coll::State,
    pub pmi: Option<Client>,
    pub world_rank: u32,
    pub world_size: u32,
    pub appnum: i32,
    pub universe_size: Option<u32>,
    pub thread_level: ThreadLevel,
    pub processor_name: String,
    pub oversubscribed: bool,
    start: Instant,
    main_thread: std::thread::ThreadId,
}

enum Phase {
    Before,
    Running(Box<Runtime>),
    After,
}

static STATE: StateLock<Phase> = StateLock::new(Phase::Before);

fn lock() -> StateGuard<'static, Phase> {
    STATE.lock()
}

/// `MPI_Initialized`.
pub fn initialized() -> bool {
    !matches!(*lock(), Phase::Before)
}

/// `MPI_Finalized`.
pub fn finalized() -> bool {
    matches!(*lock(), Phase::After)
}

/// `MPI_Init_thread`: returns the level provided.
pub fn init(required: ThreadLevel) -> Result<ThreadLevel> {
    let mut g = lock();
    match *g {
        Phase::Running(_) => return err(ErrorClass::Other, "MPI is already initialized"),
        Phase::After => {
            return err(
                ErrorClass::Other,
                "MPI cannot be initialized again after MPI_Finalize",
            )
        }
        Phase::Before => {}
    }
    // Every tunable is validated before anything starts: a bad value fails the call.
    let settings = crate::tunables::Settings::from_env()?;
    let mut cfg = Config::from_settings(&settings);
    let boot: Bootstrap = bootstrap::run(&cfg)?;
    if boot.ring_bytes > 0 {
        if !cfg.shm_chunk_set {
            // The largest piece of a streamed message: an eighth of the ring (256 KiB
            // on the 2 MiB rings of a node of up to 6 ranks, 128 KiB on the 1 MiB rings
            // of 7-8), so that several pieces are in flight; pieces start smaller (see
            // `device::stream_piece`).
            cfg.shm_chunk_bytes = (boot.ring_bytes / 8).clamp(16 * 1024, 256 * 1024);
        }
        if !cfg.shm_eager_set {
            cfg.shm_eager_limit =
                crate::config::auto_shm_eager_limit(boot.ring_bytes, boot.oversubscribed);
        }
        let max = ring::max_body(boot.ring_bytes) - HEADER_BYTES;
        cfg.shm_eager_limit = cfg.shm_eager_limit.min(max);
        cfg.shm_chunk_bytes = cfg.shm_chunk_bytes.min(max);
    }
    let nlocal = boot.node_size;
    let oversubscribed = boot.oversubscribed;
    // A node with more ranks than CPUs is balanced by hand (see `placement`).
    placement::apply(cfg.bind, boot.node_index, nlocal);
    let provided = required.min(MAX_THREAD_LEVEL);
    let world_group = Arc::new(Group::new((0..boot.size).collect()));
    let self_group = Arc::new(Group::new(vec![boot.rank]));
    let mut comms = CommTable::default();
    comms.set(
        WORLD,
        Comm {
            ctx: 0,
            rank: boot.rank as i32,
            group: world_group,
            remote: None,
            errhandler: Errhandler::Fatal,
            name: "MPI_COMM_WORLD".into(),
            attrs: Default::default(),
            topo: None,
        },
    );
    comms.set(
        SELF,
        Comm {
            ctx: 2,
            rank: 0,
            group: self_group,
            remote: None,
            errhandler: Errhandler::Fatal,
            name: "MPI_COMM_SELF".into(),
            attrs: Default::default(),
            topo: None,
        },
    );
    let coll = crate::coll::State::from_settings(&settings);
    let mut device = Device::new(
        boot.rank,
        boot.peers,
        device_config(&cfg),
        boot.node,
        boot.local_world,
        oversubscribed,
    );
    if let Some(t) = boot.tcp {
        device.attach_tcp(t);
    }
    if let Some(p) = boot.poker {
        device.attach_poker(p);
    }
    *g = Phase::Running(Box::new(Runtime {
        device,
        config: cfg,
        comms,
        groups: Default::default(),
        keyvals: Default::default(),
        types: TypeTable::default(),
        coll,
        pmi: boot.pmi,
        world_rank: boot.rank,
        world_size: boot.size,
        appnum: boot.appnum,
        universe_size: boot.universe_size,
        thread_level: provided,
        processor_name: bootstrap::processor_name(),
        oversubscribed,
        start: Instant::now(),
        main_thread: std::thread::current().id(),
    }));
    Ok(provided)
}

/// The device's part of the configuration.
pub(crate) fn device_config(cfg: &Config) -> DeviceConfig {
    DeviceConfig {
        shm_eager_limit: cfg.shm_eager_limit,
        tcp_eager_limit: cfg.tcp_eager_limit,
        shm_cma: !cfg.shm_no_cma,
        shm_chunk_bytes: cfg.shm_chunk_bytes,
        shm_chunk_fixed: cfg.shm_chunk_set,
        shm_stream_stores: cfg.shm_stream_stores,
        tcp_chunk_bytes: cfg.tcp_chunk_bytes,
    }
}

/// One round of the device's progress engine; true if anything happened. A failure
/// the job cannot survive (a lost peer, a corrupt packet) ends the process here, with
/// the device's message.
#[inline]
pub fn progress(dev: &mut Device) -> bool {
    match dev.progress() {
        Ok(did) => did,
        Err(e) => device_failed(&e),
    }
}

/// [`progress`], then the nonblocking and persistent collectives under way move on
/// (one check when there are none); true if anything happened.
#[inline]
pub fn progress_all(rt: &mut Runtime) -> bool {
    let did = progress(&mut rt.device);
    if rt.coll.nbc.is_idle() {
        return did;
    }
    crate::coll::nbc::advance_all(rt) | did
}

#[cold]
fn device_failed(e: &DeviceError) -> ! {
    fatal(e.message())
}

/// Runs `f` on the initialised runtime.
pub fn with<R>(f: impl FnOnce(&mut Runtime) -> Result<R>) -> Result<R> {
    let mut g = lock();
    match &mut *g {
        Phase::Running(rt) => f(rt),
        Phase::Before => err(
            ErrorClass::Other,
            "MPI has not been initialized (call MPI_Init first)",
        ),
        Phase::After => err(ErrorClass::Other, "MPI has already been finalized"),
    }
}

/// Most incoming rings a spinning rank watches word by word (more: it polls the node).
const WATCHED_RINGS: usize = 16;

/// Checks of the incoming rings between two lock-taking polls while spinning.
const LOCKLESS_SPINS: u32 = 256;

/// Runs progress and `poll` until `poll` yields a value, blocking politely in between:
/// spin, then yield the CPU, then sleep on the doorbell that senders ring.
pub fn block_on<R>(poll: impl FnMut(&mut Runtime) -> Result<Option<R>>) -> Result<R> {
    block_on_first(|_| Ok(None), poll)
}

/// Like [`block_on`], with `first` tried before each round of progress: for a waiter
/// that takes its packet from a transport itself before the progress engine would
/// handle it the general way, or one whose work is often done before it waits.
pub fn block_on_first<R>(
    mut first: impl FnMut(&mut Runtime) -> Result<Option<R>>,
    mut poll: impl FnMut(&mut Runtime) -> Result<Option<R>>,
) -> Result<R> {
    let mut idle: u32 = 0;
    // While spinning with nothing to send, the rank watches its incoming rings without
    // the lock and takes it again only when something arrives (or every
    // LOCKLESS_SPINS checks, for what other threads or transports may have done).
    // The node mapping is held while its ring words are watched.
    let mut watch: Option<Arc<ShmNode>> = None;
    // Filled when the rank first spins (most waits end before that).
    let mut points: Option<[Watch; WATCHED_RINGS]> = None;
    // How many of `points` are meaningful; None: too many rings, watch the node instead.
    let mut watched: Option<usize> = None;
    loop {
        // Collectives waiting to run a user reduction function do so here, unlocked.
        crate::coll::nbc::run_parked();
        let (spin, yields, node, sleeper, seen, quiet) = {
            let mut g = lock();
            let rt = match &mut *g {
                Phase::Running(rt) => rt,
                Phase::Before => return err(ErrorClass::Other, "MPI has not been initialized"),
                Phase::After => return err(ErrorClass::Other, "MPI has already been finalized"),
            };
            if let Some(r) = first(rt)? {
                return Ok(r);
            }
            let progressed = progress_all(rt);
            if let Some(r) = poll(rt)? {
                return Ok(r);
            }
            if progressed {
                idle = 0;
                continue;
            }
            let cfg = &rt.config;
            let spin = cfg.effective_spin(rt.oversubscribed);
            let yields = cfg.yield_iters;
            let quiet = idle < spin
                && rt.device.tcp_sleeper().is_none()
                && !rt.device.has_outgoing()
                && rt.device.selfq_empty();
            if quiet {
                if watch.is_none() {
                    watch = rt.device.node().cloned();
                }
                watched = rt
                    .device
                    .watch_points(points.get_or_insert([Watch::NONE; WATCHED_RINGS]));
            }
            let (node, sleeper, seen) = if idle >= spin.saturating_add(yields) {
                // The doorbell count is read before peers learn that this rank waits
                // for ring space, so that their wake in between is not lost.
                let seen = rt.device.node().map_or(0, |n| n.doorbell_seq());
                if rt.device.announce_blocked_sends() || rt.device.has_incoming() {
                    idle = 0;
                    continue;
                }
                (rt.device.node().cloned(), rt.device.tcp_sleeper(), seen)
            } else {
                (None, None, 0)
            };
            (spin, yields, node, sleeper, seen, quiet)
        };
        idle = idle.saturating_add(1);
        if idle <= spin {
            match (&watch, quiet) {
                (Some(node), true) => {
                    let mut k = 0;
                    let arrived = || match watched {
                        // SAFETY: the words lie in the node mapping, which `watch` keeps
                        // mapped; a word left stale by another thread only ends the wait.
                        Some(n) => points
                            .as_ref()
                            .is_some_and(|p| p[..n].iter().any(|w| unsafe { w.ready() })),
                        None => node.incoming_pending(),
                    };
                    while k < LOCKLESS_SPINS && idle < spin && !arrived() {
                        std::hint::spin_loop();
                        k += 1;
                        // A check costs a fraction of a locked poll.
                        if k % 16 == 0 {
                            idle += 1;
                        }
                    }
                }
                _ => std::hint::spin_loop(),
            }
        } else if idle <= spin.saturating_add(yields) {
            std::thread::yield_now();
        } else {
            // A rank with TCP connections sleeps in its epoll set; shared-memory senders
            // then poke its doorbell socket instead of the futex.
            let nap = Duration::from_millis(100);
            match (sleeper, node) {
                (Some(s), Some(n)) => n.sleep_in_epoll(seen, || n_has_incoming(&n), || s.wait(nap)),
                (Some(s), None) => s.wait(nap),
                (None, Some(n)) => n.sleep_since(seen, || n_has_incoming(&n), nap),
                (None, None) => std::thread::sleep(Duration::from_micros(200)),
            }
        }
    }
}

fn n_has_incoming(n: &crate::transport::shm::ShmNode) -> bool {
    n.incoming_pending()
}

/// `MPI_Finalize`: completes buffered traffic, synchronises with the other ranks and
/// leaves the job.
pub fn finalize() -> Result<()> {
    // Attribute delete callbacks on MPI_COMM_SELF (then MPI_COMM_WORLD) run first; a
    // failing callback is reported once finalization is complete.
    let attrs = crate::commops::finalize_attributes();
    // Let buffered sends and queued packets drain before leaving.
    block_on(|rt| Ok((!rt.device.bsend.busy() && !rt.device.has_outgoing()).then_some(())))?;
    let mut g = lock();
    let phase = std::mem::replace(&mut *g, Phase::After);
    let Phase::Running(mut rt) = phase else {
        *g = phase;
        return err(ErrorClass::Other, "MPI is not initialized");
    };
    drop(g);
    if let Some(pmi) = rt.pmi.as_mut() {
        // The fence keeps a rank from leaving while a peer may still pull a rendezvous
        // message out of its memory.
        pmi.fence().map_err(|e| {
            crate::error::Error::new(
                ErrorClass::Other,
                format!("PMI fence at finalize failed: {e}"),
            )
        })?;
        pmi.finalize().map_err(|e| {
            crate::error::Error::new(ErrorClass::Other, format!("PMI finalize failed: {e}"))
        })?;
    }
    attrs
}

/// `MPI_Abort`: tells the launcher to end the job with `code`, and exits.
pub fn abort(code: i32, msg: &str) -> ! {
    // Our own mpiexec (which sets OXMPI_KVSNAME) prints the message it receives with
    // the abort; other launchers (Hydra, Slurm) may kill the job as soon as they hear
    // of the abort, so the message is printed before telling them.
    let launcher_prints = std::env::var_os("OXMPI_KVSNAME").is_some();
    let mut g = lock();
    let has_pmi = matches!(&*g, Phase::Running(rt) if rt.pmi.is_some());
    let printed_by_launcher = has_pmi && launcher_prints;
    if !msg.is_empty() && !printed_by_launcher {
        eprintln!("{msg}");
    }
    if let Phase::Running(rt) = &mut *g {
        if let Some(pmi) = rt.pmi.as_mut() {
            pmi.abort(code, msg);
        }
    }
    drop(g);
    std::process::exit(code);
}

/// Ends the job after an unrecoverable engine failure (never returns).
pub fn fatal(msg: &str) -> ! {
    let rank = std::env::var("PMI_RANK").unwrap_or_else(|_| "?".into());
    let line = format!("oxmpi: rank {rank}: fatal: {msg}");
    eprintln!("{line}");
    // Do not take the runtime lock here: fatal may be called with it held.
    std::process::exit(1);
}

impl Runtime {
    /// Seconds since initialisation (`MPI_Wtime`'s clock is global monotonic time).
    pub fn uptime(&self) -> f64 {
        self.start.elapsed().as_secs_f64()
    }

    pub fn is_main_thread(&self) -> bool {
        std::thread::current().id() == self.main_thread
    }
}

/// `MPI_Wtime`: seconds on a monotonic clock.
pub fn wtime() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec to a valid pointer.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

/// `MPI_Wtick`: resolution of [`wtime`].
pub fn wtick() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_getres writes one timespec to a valid pointer.
    unsafe { libc::clock_getres(libc::CLOCK_MONOTONIC, &mut ts) };
    let t = ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9;
    if t > 0.0 {
        t
    } else {
        1e-9
    }
}
