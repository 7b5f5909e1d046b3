//! The process-wide MPI state and its life cycle: `MPI_Init` or the first
//! `MPI_Session_init` builds it, every call runs under its lock, `MPI_Finalize` tears it
//! down, `MPI_Abort` ends the job.
//!
//! Two models share one runtime (MPI-4.1 section 11): the world model (`MPI_Init` ..
//! `MPI_Finalize`, which owns `MPI_COMM_WORLD` and `MPI_COMM_SELF`) and any number of
//! sessions ([`crate::session`]). The runtime starts with the first of them. When the
//! world model ends while no session is open, `MPI_Finalize` tears the runtime down as
//! it always did (a PMI fence, then PMI finalize). Otherwise the runtime outlives its
//! users: it stays up, dormant, when the last session ends, so that a later
//! `MPI_Session_init` or `MPI_Init` reuses it, and an exit hook registered by the first
//! session does the fence and PMI finalize when the process ends with every model
//! closed. Each process thus fences exactly once at the end, whichever model ended
//! last. A process that exits with a session or the world model still open skips the
//! hook's work, and the launcher reports it as an exit without finalization.
//!
//! Locking rule: the lock is held only inside engine code, never while user code runs
//! (error handlers, reduction functions, attribute callbacks are called by the bindings
//! after the engine returns), and never while a call waits: [`block_on`] takes it for
//! one poll at a time. That is what makes `MPI_THREAD_MULTIPLE` work with one lock:
//! threads interleave their polls, any of them may complete what another waits for,
//! and a thread that sleeps is woken by the next holder of the lock ([`crate::threads`]).
//! Under the lower levels two threads never meet in MPI, and a second thread that finds
//! the lock taken is refused ([`with`]).

use crate::bootstrap::{self, Bootstrap};
use crate::comm::{Comm, CommTable, Errhandler, Group, SELF, WORLD};
use crate::config::Config;
use crate::device::packet::HEADER_BYTES;
use crate::device::{Device, DeviceConfig, DeviceError};
use crate::error::{err, ErrorClass, Result};
use crate::placement;
use crate::state_lock::{StateGuard, StateLock};
use crate::threads;
use crate::transport::ring::{self, Watch};
use crate::transport::shm::ShmNode;
use crate::types::TypeTable;
use oxmpi_pmi::Client;
use std::sync::atomic::{AtomicU32, Ordering};
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
pub const MAX_THREAD_LEVEL: ThreadLevel = ThreadLevel::Multiple;

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
    /// Requests made of other requests (`MPI_Isendrecv`), see `p2p_mpi4`.
    pub p2p4: crate::p2p_mpi4::State,
    pub pmi: Option<Client>,
    pub world_rank: u32,
    pub world_size: u32,
    pub appnum: i32,
    pub universe_size: Option<u32>,
    /// Each world rank's IMPI client and host, in an IMPI job (the 2.5 attributes).
    pub impi_places: Option<crate::impi_attr::ImpiPlaces>,
    pub thread_level: ThreadLevel,
    pub processor_name: String,
    pub oversubscribed: bool,
    /// World ranks on this node, ascending.
    pub node_ranks: Vec<u32>,
    /// Where the world model stands.
    pub world_model: WorldModel,
    /// Sessions open now.
    pub sessions: u32,
    /// The tools interface's point-to-point counters (`mpit::counters`).
    pub stats: crate::mpit::Counters,
    start: Instant,
    main_thread: std::thread::ThreadId,
}

/// The world model's state in a running runtime.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WorldModel {
    /// `MPI_Init` has not been called (the runtime runs for sessions).
    NotStarted,
    /// Between `MPI_Init` and `MPI_Finalize`.
    Active,
    /// `MPI_Finalize` ended it while sessions stayed open.
    Finalized,
}

enum Phase {
    Before,
    Running(Box<Runtime>),
    After,
}

#[cfg(not(loom))]
static STATE: StateLock<Phase> = StateLock::new(Phase::Before);
// Loom's atomics have no const constructor (only the model checks build so).
#[cfg(loom)]
loom::lazy_static! {
    static ref STATE: StateLock<Phase> = StateLock::new(Phase::Before);
}

/// The runtime lock held; releasing it wakes the threads that sleep in a wait (see
/// [`crate::threads`]) unless the holder is one that is about to sleep.
///
/// Its release is the only cost the thread machinery adds to a call: one load of the
/// sleeper count, which stays zero unless several threads may be inside MPI (granted
/// `MPI_THREAD_MULTIPLE`, or the progress thread). Everything else happens on paths that
/// a call made by one thread never takes (the lock found taken, a sleeper to wake).
struct Locked {
    g: StateGuard<'static, Phase>,
    /// Release without waking anyone (the holder counted itself a sleeper).
    quiet: bool,
}

/// [`Locked`] for a call that any thread may make at any time (see [`AnyThread`]); the
/// count is given back after the lock (fields drop in order).
struct AnyLocked {
    l: Locked,
    _any: AnyThread,
}

/// Threads waiting for or holding the lock in a call that any thread may make at any
/// time (the tools interface, `MPI_Query_thread`, the progress thread...). Below
/// `MPI_THREAD_MULTIPLE` finding the lock taken is an error only when none is counted.
static ANY_THREAD: AtomicU32 = AtomicU32::new(0);

/// One count in [`ANY_THREAD`], taken before the lock and given back after it.
struct AnyThread;

impl AnyThread {
    fn enter() -> AnyThread {
        ANY_THREAD.fetch_add(1, Ordering::AcqRel);
        AnyThread
    }
}

impl Drop for AnyThread {
    fn drop(&mut self) {
        ANY_THREAD.fetch_sub(1, Ordering::AcqRel);
    }
}

impl std::ops::Deref for Locked {
    type Target = Phase;
    #[inline]
    fn deref(&self) -> &Phase {
        &self.g
    }
}

impl std::ops::DerefMut for Locked {
    #[inline]
    fn deref_mut(&mut self) -> &mut Phase {
        &mut self.g
    }
}

impl std::ops::Deref for AnyLocked {
    type Target = Phase;
    #[inline]
    fn deref(&self) -> &Phase {
        &self.l.g
    }
}

impl std::ops::DerefMut for AnyLocked {
    #[inline]
    fn deref_mut(&mut self) -> &mut Phase {
        &mut self.l.g
    }
}

impl Drop for Locked {
    #[inline]
    fn drop(&mut self) {
        let s = threads::sleepers();
        if s != 0 {
            release_with_sleepers(self, s);
        }
    }
}

/// The part of releasing the lock that only runs while threads sleep.
#[cold]
#[inline(never)]
fn release_with_sleepers(l: &Locked, s: u32) {
    if !l.quiet {
        wake_sleepers(&l.g, s);
    }
}

/// Wakes the sleeping threads of this process, still holding the lock (so a thread that
/// counts itself a sleeper after this holder cannot miss the wake: it polls after
/// this holder's changes). The progress thread alone is woken only for work that no
/// packet will announce: packets queued for ring space, collectives under way.
fn wake_sleepers(p: &Phase, s: u32) {
    let Phase::Running(rt) = p else {
        threads::ring_local();
        return;
    };
    if s == threads::BACKGROUND
        && !rt.device.has_outgoing()
        && rt.coll.nbc.is_idle()
        && !crate::coll::nbc::any_parked()
    {
        return;
    }
    rt.device.wake_own_threads();
    threads::ring_local();
}

/// Takes the lock, waiting as long as it is held.
fn lock_plain() -> Locked {
    Locked {
        g: STATE.lock(),
        quiet: false,
    }
}

/// The lock for a call any thread may make at any time.
fn lock() -> AnyLocked {
    let any = AnyThread::enter();
    AnyLocked {
        l: lock_plain(),
        _any: any,
    }
}

/// The lock for a call: under `MPI_THREAD_SINGLE`, `_FUNNELED` and `_SERIALIZED` no
/// other thread may be inside MPI, so finding it taken (the contended path, free when
/// the program keeps its promise) means two threads call MPI at once, an error.
/// Below `MPI_THREAD_MULTIPLE` a call from a thread other than the one that alone may
/// call now (`threads::excluded`: not the main thread under `_FUNNELED`, not the thread
/// waiting inside MPI under `_SINGLE` and `_SERIALIZED`) is refused too.
#[inline]
fn lock_call() -> Result<Locked> {
    let l = match STATE.try_lock() {
        Some(g) => Locked { g, quiet: false },
        None => lock_contended()?,
    };
    if threads::excluded() {
        return excluded_call(l);
    }
    Ok(l)
}

/// The error of a call that `threads::excluded` refuses.
#[cold]
#[inline(never)]
fn excluded_call(l: Locked) -> Result<Locked> {
    let level = match &*l {
        Phase::Running(rt) => rt.thread_level,
        _ => return Ok(l),
    };
    if level == ThreadLevel::Multiple {
        second_thread_arrives(&l);
        return Ok(l);
    }
    drop(l);
    if level == ThreadLevel::Funneled {
        return err(
            ErrorClass::Other,
            "called from a thread other than the main thread (the one that called MPI_Init_thread), but MPI was initialized with MPI_THREAD_FUNNELED (only the main thread may call MPI; MPI_THREAD_SERIALIZED or MPI_THREAD_MULTIPLE allow others)",
        );
    }
    second_thread(level)
}

/// Under `MPI_THREAD_MULTIPLE` the thread that called `MPI_Init_thread` runs alone
/// with `SINGLE`'s bookkeeping (the funnel of [`threads::OWNER`], no sleeper or wait
/// counts) until another thread calls: then, with the lock held, the counting starts
/// and every thread asleep in a wait is woken once (one that slept uncounted would not
/// be woken by the next release), polls and sleeps again counted.
#[cold]
fn second_thread_arrives(l: &Locked) {
    threads::allow_concurrency();
    threads::unfunnel();
    if let Phase::Running(rt) = &**l {
        rt.device.wake_own_threads();
    }
    threads::ring_local();
}

/// The error of a call made while another thread is inside MPI below `MULTIPLE`.
#[cold]
fn second_thread<T>(level: ThreadLevel) -> Result<T> {
    err(
        ErrorClass::Other,
        format!(
            "called from a second thread while another thread was inside MPI, but MPI was initialized with {} (MPI_Init_thread with MPI_THREAD_MULTIPLE allows that)",
            level.name()
        ),
    )
}

/// Tries of [`lock_contended`] before it reports a second thread.
const CONTENDED_TRIES: u32 = 64;

#[cold]
#[inline(never)]
fn lock_contended() -> Result<Locked> {
    if threads::concurrent() {
        return Ok(lock_plain());
    }
    // The holder may be a call that any thread may make at any time (MPI_T,
    // MPI_Query_thread...): wait for it. Only a holder that is not counted so for a
    // while is another thread inside MPI.
    for _ in 0..CONTENDED_TRIES {
        if ANY_THREAD.load(Ordering::Acquire) > 0 {
            // Counted while it waits; this call is an ordinary one once it holds the
            // lock: it does not excuse others then.
            let any = AnyThread::enter();
            let l = lock_plain();
            drop(any);
            return Ok(l);
        }
        if let Some(g) = STATE.try_lock() {
            return Ok(Locked { g, quiet: false });
        }
        std::hint::spin_loop();
    }
    let g = lock();
    let level = match &*g {
        Phase::Running(rt) => rt.thread_level,
        _ => ThreadLevel::Multiple,
    };
    if level == ThreadLevel::Multiple {
        // A second thread under MULTIPLE before it was seen (`second_thread_arrives`).
        let AnyLocked { l, _any } = g;
        return Ok(l);
    }
    second_thread(level)
}

/// Wakes every sleeping thread of this process, the progress thread included.
pub(crate) fn wake_background() {
    let g = lock();
    if let Phase::Running(rt) = &*g {
        rt.device.wake_own_threads();
    }
    threads::ring_local();
}

/// `MPI_Query_thread`: the level granted (any thread may ask at any time).
pub fn thread_level() -> Result<ThreadLevel> {
    match &*lock() {
        Phase::Running(rt) => Ok(rt.thread_level),
        Phase::Before => err(
            ErrorClass::Other,
            "MPI has not been initialized (call MPI_Init first)",
        ),
        Phase::After => err(ErrorClass::Other, "MPI has already been finalized"),
    }
}

/// `MPI_Is_thread_main`: whether the caller is the thread that initialised MPI.
pub fn is_thread_main() -> Result<bool> {
    match &*lock() {
        Phase::Running(rt) => Ok(rt.is_main_thread()),
        Phase::Before => err(
            ErrorClass::Other,
            "MPI has not been initialized (call MPI_Init first)",
        ),
        Phase::After => err(ErrorClass::Other, "MPI has already been finalized"),
    }
}

/// `MPI_Initialized`: the world model has been started (true after `MPI_Finalize` too).
pub fn initialized() -> bool {
    match &*lock() {
        Phase::Before => false,
        Phase::Running(rt) => rt.world_model != WorldModel::NotStarted,
        Phase::After => true,
    }
}

/// `MPI_Finalized`: the world model has been ended by `MPI_Finalize`.
pub fn finalized() -> bool {
    match &*lock() {
        Phase::Before => false,
        Phase::Running(rt) => rt.world_model == WorldModel::Finalized,
        Phase::After => true,
    }
}

/// True while the runtime is up (for the world model, a session, or dormant between
/// sessions): MPI calls other than the always-available ones may run.
pub fn is_running() -> bool {
    matches!(&*lock(), Phase::Running(_))
}

/// `MPI_Init_thread`: returns the level provided.
pub fn init(required: ThreadLevel) -> Result<ThreadLevel> {
    let provided = init_world(required)?;
    // A spawned process connects to its parents before MPI_Init returns.
    crate::dpm::connect_parent()?;
    Ok(provided)
}

fn init_world(required: ThreadLevel) -> Result<ThreadLevel> {
    let mut g = lock();
    let provided = required.min(MAX_THREAD_LEVEL);
    match &mut *g {
        Phase::Running(rt) => match rt.world_model {
            WorldModel::Active => err(ErrorClass::Other, "MPI is already initialized"),
            WorldModel::Finalized => err(
                ErrorClass::Other,
                "MPI cannot be initialized again after MPI_Finalize",
            ),
            WorldModel::NotStarted => {
                // Sessions started the runtime: the world model joins it.
                rt.thread_level = provided;
                rt.main_thread = std::thread::current().id();
                if provided == ThreadLevel::Multiple {
                    threads::allow_concurrency();
                }
                if provided == ThreadLevel::Funneled && rt.sessions == 0 {
                    threads::funnel_to_caller();
                }
                install_world(rt);
                Ok(provided)
            }
        },
        Phase::After => err(
            ErrorClass::Other,
            "MPI cannot be initialized again after MPI_Finalize",
        ),
        Phase::Before => {
            let mut rt = start(provided)?;
            install_world(&mut rt);
            // Under MULTIPLE too: the calling thread alone runs SINGLE's code until
            // another thread calls (`excluded_call` then lets every thread in).
            if matches!(provided, ThreadLevel::Funneled | ThreadLevel::Multiple) {
                threads::funnel_to_caller();
            }
            let bg = rt.config.async_progress;
            *g = Phase::Running(rt);
            drop(g);
            if bg {
                crate::async_progress::start()?;
            }
            Ok(provided)
        }
    }
}

/// Opens the runtime for a new session (starting it if nothing runs); returns the
/// thread level provided. Fails once `MPI_Finalize` has torn the runtime down: the
/// launcher's PMI connection is closed then and cannot be opened again.
pub(crate) fn open_session(required: ThreadLevel) -> Result<ThreadLevel> {
    let mut g = lock();
    let provided = required.min(MAX_THREAD_LEVEL);
    // The world model's main thread is no longer the only one that may call MPI: a
    // session's calls may come from any thread.
    threads::unfunnel();
    match &mut *g {
        Phase::Running(rt) => rt.sessions += 1,
        Phase::After => {
            return err(
                ErrorClass::Other,
                "a session cannot start after MPI_Finalize ended this process's MPI runtime (its connection to the launcher is closed)",
            )
        }
        Phase::Before => {
            let mut rt = start(provided)?;
            rt.sessions = 1;
            if provided == ThreadLevel::Multiple {
                threads::allow_concurrency();
            }
            let bg = rt.config.async_progress;
            *g = Phase::Running(rt);
            drop(g);
            if bg {
                crate::async_progress::start()?;
            }
            register_exit_hook();
            return Ok(provided);
        }
    }
    if provided == ThreadLevel::Multiple {
        threads::allow_concurrency();
    }
    drop(g);
    register_exit_hook();
    Ok(provided)
}

/// Starts the asynchronous progress thread on the running runtime unless it runs (the
/// info key `oxmpi_async_progress` of `MPI_Session_init`); it runs until the runtime ends.
pub fn start_async_progress() -> Result<()> {
    if !is_running() {
        return err(ErrorClass::Other, "MPI is not running");
    }
    crate::async_progress::start()
}

/// True when closing one session leaves the runtime with no user.
pub(crate) fn last_user() -> bool {
    match &*lock() {
        Phase::Running(rt) => rt.sessions <= 1 && rt.world_model != WorldModel::Active,
        _ => false,
    }
}

/// Closes one session; the last one leaves the runtime up, dormant (see the module
/// doc).
pub(crate) fn close_session() {
    if let Phase::Running(rt) = &mut *lock() {
        rt.sessions = rt.sessions.saturating_sub(1);
    }
}

/// Starts the runtime: validates the tunables, runs the PMI start-up and builds the
/// device. No communicator exists yet.
fn start(provided: ThreadLevel) -> Result<Box<Runtime>> {
    // Every tunable is validated before anything starts: a bad value fails the call.
    // (With the values a tool wrote through MPI_T_cvar_write before MPI_Init on top.)
    let settings = crate::mpit::settings_at_init()?;
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
    // Threads of this rank that may wait spinning at once: its CPUs, at most its share
    // of the node's (after `apply`, which may have bound it to one).
    threads::set_spin_room(match cfg.spin_threads {
        Some(n) => n,
        None if oversubscribed => 1,
        None => crate::sys::available_cpus().min(boot.node_cpus / nlocal.max(1)),
    });
    let mut coll = crate::coll::State::from_settings(&settings);
    coll.impi = boot.impi_world.map(Arc::new);
    crate::coll::impi::set_job(coll.impi.is_some());
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
    if let Some(n) = boot.impi {
        device
            .attach_impi(n)
            .map_err(|e| crate::error::Error::new(ErrorClass::Other, format!("MPI_Init: {e}")))?;
    }
    Ok(Box::new(Runtime {
        device,
        config: cfg,
        comms: CommTable::default(),
        groups: Default::default(),
        keyvals: Default::default(),
        types: TypeTable::default(),
        coll,
        p2p4: Default::default(),
        pmi: boot.pmi,
        world_rank: boot.rank,
        world_size: boot.size,
        appnum: boot.appnum,
        universe_size: boot.universe_size,
        impi_places: boot.impi_places,
        thread_level: provided,
        processor_name: bootstrap::processor_name(),
        oversubscribed,
        node_ranks: boot.node_ranks,
        world_model: WorldModel::NotStarted,
        sessions: 0,
        stats: crate::mpit::Counters::new(boot.size),
        start: Instant::now(),
        main_thread: std::thread::current().id(),
    }))
}

/// Starts the world model on a running runtime: `MPI_COMM_WORLD` and `MPI_COMM_SELF`
/// appear (their context ids are reserved for them from the start, see
/// [`crate::context::local_mask`]).
fn install_world(rt: &mut Runtime) {
    let world_group = Arc::new(Group::new((0..rt.world_size).collect()));
    let self_group = Arc::new(Group::new(vec![rt.world_rank]));
    rt.comms.set(
        WORLD,
        Comm {
            ctx: 0,
            rank: rt.world_rank as i32,
            group: world_group,
            remote: None,
            errhandler: Errhandler::Fatal,
            name: "MPI_COMM_WORLD".into(),
            attrs: Default::default(),
            topo: None,
            hints: Default::default(),
            session: None,
        },
    );
    rt.comms.set(
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
            hints: Default::default(),
            session: None,
        },
    );
    rt.world_model = WorldModel::Active;
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
        Ok(true) => {
            threads::note_progress();
            true
        }
        Ok(false) => false,
        Err(e) => device_failed(&e),
    }
}

/// [`progress`], then the nonblocking and persistent collectives under way move on
/// (one check when there are none); true if anything happened.
#[inline]
pub fn progress_all(rt: &mut Runtime) -> bool {
    let did = progress(&mut rt.device);
    // Requests the MPI layer completes itself (Isendrecv, buffer flushes).
    crate::p2p_mpi4::advance(rt);
    // One-sided requests to serve and replies to take (windows across nodes).
    let did = crate::rma::progress(rt) | did;
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
    let mut g = lock_call()?;
    match &mut *g {
        Phase::Running(rt) => f(rt),
        Phase::Before => err(
            ErrorClass::Other,
            "MPI has not been initialized (call MPI_Init first)",
        ),
        Phase::After => err(ErrorClass::Other, "MPI has already been finalized"),
    }
}

/// [`with`] for the calls any thread may make at any time (the tools interface's, and
/// error reporting's look-up of the handler to call).
pub fn with_any_thread<R>(f: impl FnOnce(&mut Runtime) -> Result<R>) -> Result<R> {
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
    first: impl FnMut(&mut Runtime) -> Result<Option<R>>,
    poll: impl FnMut(&mut Runtime) -> Result<Option<R>>,
) -> Result<R> {
    wait(Waiter::Call, first, poll)
}

/// Who waits in [`wait`].
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Waiter {
    /// An MPI call.
    Call,
    /// The progress thread: it never spins or yields, it sleeps as soon as a round of
    /// progress finds nothing to do.
    Background,
}

/// The waiting policy of [`block_on_first`] and of the progress thread.
pub(crate) fn wait<R>(
    who: Waiter,
    mut first: impl FnMut(&mut Runtime) -> Result<Option<R>>,
    mut poll: impl FnMut(&mut Runtime) -> Result<Option<R>>,
) -> Result<R> {
    let bg = who == Waiter::Background;
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
    // When the wait stopped spinning and began to give up the CPU (the tools
    // interface's blocked time); waits that end while spinning read no clock.
    let mut blocked_since: Option<Instant> = None;
    // This thread's place among the waiting threads (taken and given back under the
    // lock; the progress thread takes none).
    let mut inside = threads::Inside::default();
    // With several threads in MPI: the count of `threads::progressed` when the spin
    // began, so that a spinner learns that another thread's progress may have
    // completed what it waits for.
    let mut gen: Option<u32> = None;
    loop {
        // Collectives waiting to run a user reduction function do so here, unlocked.
        crate::coll::nbc::run_parked();
        let (spin, yields, node, sleeper, seen, quiet) = {
            // The progress thread counts as a call any thread may make (declared before
            // the lock: given back after it).
            let _any = bg.then(AnyThread::enter);
            let mut g = if bg { lock_plain() } else { lock_call()? };
            let rt = match &mut *g {
                Phase::Running(rt) => rt,
                Phase::Before => {
                    inside.leave();
                    return err(ErrorClass::Other, "MPI has not been initialized");
                }
                Phase::After => {
                    inside.leave();
                    return err(ErrorClass::Other, "MPI has already been finalized");
                }
            };
            let mut progressed = false;
            // A call whose request is already complete never counts as waiting.
            let done = first(rt).transpose().or_else(|| {
                if !bg {
                    inside.enter();
                }
                progressed = progress_all(rt);
                poll(rt).transpose()
            });
            if let Some(r) = done {
                inside.leave();
                if r.is_ok() {
                    count_blocked(rt, blocked_since);
                }
                return r;
            }
            if progressed {
                idle = 0;
                continue;
            }
            let cfg = &rt.config;
            // Several waiting threads share the CPUs with the application's others:
            // none of them spins.
            let spin = if bg || threads::crowded() {
                0
            } else {
                cfg.effective_spin(rt.oversubscribed)
            };
            let yields = if bg { 0 } else { cfg.yield_iters };
            let quiet = idle < spin
                && rt.device.tcp_sleeper().is_none()
                && !rt.device.has_outgoing()
                && rt.device.selfq_empty()
                && !crate::coll::nbc::shm_waiting(rt);
            if quiet {
                if watch.is_none() {
                    watch = rt.device.node().cloned();
                }
                gen = threads::concurrent().then(threads::progressed);
                watched = rt
                    .device
                    .watch_points(points.get_or_insert([Watch::NONE; WATCHED_RINGS]));
            }
            let mut go_quiet = false;
            let (node, sleeper, seen) = if idle >= spin.saturating_add(yields) {
                // The doorbell count is read before peers learn that this rank waits
                // for ring space, so that their wake in between is not lost.
                let seen = rt.device.node().map_or(0, |n| n.doorbell_seq());
                if rt.device.announce_blocked_sends()
                    || rt.device.has_incoming()
                    || crate::coll::nbc::shm_ready(rt)
                {
                    idle = 0;
                    continue;
                }
                let mut sleeper = rt.device.tcp_sleeper();
                let mut seen = Sleep::Node(seen);
                if threads::concurrent() {
                    // Counted while still holding the lock: the next holder wakes it.
                    let local = threads::start_sleeping(bg);
                    go_quiet = true;
                    if sleeper.is_some() && !threads::take_epoll() {
                        sleeper = None;
                    }
                    if sleeper.is_none() && rt.device.node().is_none() {
                        seen = Sleep::Local(local);
                    }
                    if sleeper.is_none() && seen != Sleep::Local(local) {
                        // A thread of a rank with TCP connections that did not get the
                        // epoll set sleeps on the process-local doorbell: the thread in
                        // epoll wakes it when it takes the lock.
                        if rt.device.tcp_sleeper().is_some() {
                            seen = Sleep::Local(local);
                        }
                    }
                    seen = match seen {
                        Sleep::Node(s) => Sleep::CountedNode(s),
                        other => other,
                    };
                    if matches!(seen, Sleep::Local(_)) {
                        threads::will_sleep_local();
                    }
                }
                (rt.device.node().cloned(), sleeper, seen)
            } else {
                (None, None, Sleep::Node(0))
            };
            g.quiet = go_quiet;
            (spin, yields, node, sleeper, seen, quiet)
        };
        idle = idle.saturating_add(1);
        if idle <= spin {
            match (&watch, quiet) {
                (Some(node), true) => {
                    let mut k = 0;
                    let arrived = || {
                        gen.is_some_and(|g| g != threads::progressed())
                            || match watched {
                                // SAFETY: the words lie in the node mapping, which `watch`
                                // keeps mapped; a word left stale by another thread only
                                // ends the wait.
                                Some(n) => points
                                    .as_ref()
                                    .is_some_and(|p| p[..n].iter().any(|w| unsafe { w.ready() })),
                                None => node.incoming_pending(),
                            }
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
            blocked_since.get_or_insert_with(Instant::now);
            std::thread::yield_now();
        } else {
            blocked_since.get_or_insert_with(Instant::now);
            // A rank with TCP connections sleeps in its epoll set; shared-memory senders
            // then poke its doorbell socket instead of the futex.
            // A thread in a set that the rank's other threads cannot wake it in (another
            // transport's, IMPI's) naps briefly while there may be some.
            let nap = if threads::concurrent()
                && node.is_none()
                && sleeper.as_ref().is_some_and(|e| !e.wakeable())
            {
                Duration::from_millis(1)
            } else {
                Duration::from_millis(100)
            };
            let had_epoll = sleeper.is_some();
            match (seen, sleeper, node) {
                (Sleep::Local(l), _, _) => threads::sleep_local(l, nap),
                (Sleep::Node(s) | Sleep::CountedNode(s), Some(e), Some(n)) => {
                    n.sleep_in_epoll(s, || n_has_incoming(&n), || e.wait(nap))
                }
                (_, Some(e), None) => e.wait(nap),
                (Sleep::Node(s) | Sleep::CountedNode(s), None, Some(n)) => {
                    n.sleep_since(s, || n_has_incoming(&n), nap)
                }
                (_, None, None) => std::thread::sleep(Duration::from_micros(200)),
            }
            if matches!(seen, Sleep::Local(_) | Sleep::CountedNode(_)) {
                threads::stop_sleeping(bg);
            }
            if had_epoll {
                threads::release_epoll();
            }
        }
    }
}

/// Where a waiting thread sleeps and the doorbell count it read.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Sleep {
    /// On the node's doorbell (or in epoll), the only thread of the process in MPI.
    Node(u32),
    /// The same, counted among the process's sleepers.
    CountedNode(u32),
    /// On the process-local doorbell, counted among the sleepers.
    Local(u32),
}

/// Adds the time a wait spent blocked to the tools interface's counter.
#[inline]
fn count_blocked(rt: &mut Runtime, since: Option<Instant>) {
    if let Some(t) = since {
        rt.stats.blocked_ns += t.elapsed().as_nanos() as u64;
    }
}

fn n_has_incoming(n: &crate::transport::shm::ShmNode) -> bool {
    n.incoming_pending()
}

/// `MPI_Finalize`: completes buffered traffic, synchronises with the other ranks and
/// leaves the job. With sessions still open only the world model ends: its two
/// communicators go, and the runtime stays up for the sessions.
pub fn finalize() -> Result<()> {
    with(|rt| {
        let others = threads::waiting();
        if others > 0 {
            return err(
                ErrorClass::Other,
                format!("MPI_Finalize was called while {others} other thread(s) of this process were still inside MPI calls (every thread must have left MPI first)"),
            );
        }
        match rt.world_model {
        WorldModel::Active => Ok(()),
        WorldModel::NotStarted => err(
            ErrorClass::Other,
            "MPI has not been initialized (MPI_Init was not called; sessions end with MPI_Session_finalize)",
        ),
        WorldModel::Finalized => err(ErrorClass::Other, "MPI has already been finalized"),
    }
    })?;
    // Attribute delete callbacks on MPI_COMM_SELF (then MPI_COMM_WORLD) run first; a
    // failing callback is reported once finalization is complete.
    let attrs = crate::commops::finalize_attributes();
    // IMPI 4.24: MPI_Finalize begins with a barrier on MPI_COMM_WORLD when the world
    // spans clients.
    if let Some(s) = crate::coll::impi::span(WORLD)? {
        crate::coll::impi::barrier(&s)?;
    }
    // Let buffered sends and queued packets drain before leaving.
    block_on(|rt| {
        let drained = crate::p2p_mpi4::drained(rt);
        Ok((drained && !rt.device.bsend.busy() && !rt.device.has_outgoing()).then_some(()))
    })?;
    threads::unfunnel();
    if with(|rt| Ok(rt.sessions == 0))? {
        // The runtime goes: its progress thread first (it would find it gone).
        crate::async_progress::stop();
    }
    let mut g = lock();
    if let Phase::Running(rt) = &mut *g {
        if rt.sessions > 0 {
            rt.comms.remove(WORLD);
            rt.comms.remove(SELF);
            rt.world_model = WorldModel::Finalized;
            return attrs;
        }
    }
    let phase = std::mem::replace(&mut *g, Phase::After);
    let Phase::Running(mut rt) = phase else {
        *g = phase;
        return err(ErrorClass::Other, "MPI is not initialized");
    };
    drop(g);
    leave(&mut rt)?;
    attrs
}

/// The end of a process's part in the job: a PMI fence (which keeps a rank from
/// leaving while a peer may still pull a rendezvous message out of its memory), then
/// PMI finalize.
fn leave(rt: &mut Runtime) -> Result<()> {
    // IMPI host channels end first (IMPI 3.8), while the other clients' ranks still
    // answer on them.
    rt.device.finalize_impi().map_err(|e| {
        crate::error::Error::new(ErrorClass::Other, format!("IMPI finalization failed: {e}"))
    })?;
    if let Some(pmi) = rt.pmi.as_mut() {
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
    Ok(())
}

/// Set by [`abort`] and [`fatal`]: the exit hook must not synchronise then.
static ENDING_ABNORMALLY: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

fn register_exit_hook() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // SAFETY: `at_exit` is a plain `extern "C" fn()` that lives as long as the
        // program; registering it has no other precondition.
        unsafe { libc::atexit(at_exit) };
    });
}

/// At process exit, after sessions were used: a runtime left dormant (every session
/// closed, the world model not active) leaves the job as `MPI_Finalize` would. Anything still open means the program did not finish MPI:
/// nothing is done, and the launcher sees an exit without finalization.
extern "C" fn at_exit() {
    if ENDING_ABNORMALLY.load(std::sync::atomic::Ordering::Relaxed) {
        return;
    }
    let dormant = match &*lock() {
        Phase::Running(rt) => rt.sessions == 0 && rt.world_model != WorldModel::Active,
        _ => false,
    };
    // The last model to end drained its traffic (`session::finalize`, `finalize`);
    // nothing here may end the process again (no progress, which can fail fatally).
    if !dormant {
        return;
    }
    crate::async_progress::stop();
    let phase = std::mem::replace(&mut *lock(), Phase::After);
    if let Phase::Running(mut rt) = phase {
        if let Err(e) = leave(&mut rt) {
            eprintln!("oxmpi: rank {}: at exit: {}", rt.world_rank, e.message);
        }
    }
}

/// `MPI_Abort`: tells the launcher to end the job with `code`, and exits.
pub fn abort(code: i32, msg: &str) -> ! {
    // Our own mpiexec (which sets OXMPI_KVSNAME) prints the message it receives with
    // the abort; other launchers (Hydra, Slurm) may kill the job as soon as they hear
    // of the abort, so the message is printed before telling them.
    let launcher_prints = std::env::var_os("OXMPI_KVSNAME").is_some();
    ENDING_ABNORMALLY.store(true, std::sync::atomic::Ordering::Relaxed);
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
    ENDING_ABNORMALLY.store(true, std::sync::atomic::Ordering::Relaxed);
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
