//! Dynamic process management: intercommunicators between jobs (`MPI_Comm_spawn`,
//! `MPI_Comm_spawn_multiple`, `MPI_Comm_accept`, `MPI_Comm_connect`, `MPI_Comm_join`),
//! the parent intercommunicator (`MPI_Comm_get_parent`) and `MPI_Comm_disconnect`.
//!
//! Every one of them is [`establish`]: each member of the local group makes sure its
//! TCP transport runs (attaching one at run time when the job had no TCP peers) and
//! sends its listening address and free context slots to the group's root; the root
//! talks to the other group's root (`port.rs`: over a port's socket, or the socket
//! given to `MPI_Comm_join`) and broadcasts what it learnt; every member then adds the
//! other group's processes as device peers (`Device::add_peer`, with the port's key)
//! and installs the intercommunicator, whose context id is the lowest slot free on
//! both sides (each member holds its offered slots until then, and establishments at
//! one process take turns, so threads creating communicators meanwhile cannot take it). An error at the root (a spawn refused, a malformed port name, a
//! connect timeout) reaches every member through the broadcast.
//!
//! Spawning: the root opens a port of its own, asks the process manager to start the
//! children with the port's name as the preput key `PARENT_ROOT_PORT_NAME` (MPICH's
//! name for it), and accepts on it; the children's `MPI_Init` connects to it
//! ([`connect_parent`]) and records the intercommunicator as their parent. Freeing or
//! disconnecting it makes `MPI_Comm_get_parent` return `MPI_COMM_NULL` again, as the
//! standard says.
//!
//! Peers are device slots numbered after this job's ranks, in the order this process
//! added them, so the numbers of one remote process may differ between the members of
//! a group: they never travel between processes (intercommunicator merge and the
//! collectives work on communicator ranks).

use crate::comm::{CommId, Group, NO_COMM, SELF, WORLD};
use crate::context::{self, Mask};
use crate::error::{err, Error, ErrorClass, Result};
use crate::internal_coll::{self as ic, Reader, Writer};
use crate::launcher::Launcher;
use crate::port::{self, PortName, Remote, Side, KEY_BYTES};
use crate::runtime::{self, Runtime};
use crate::transport::bell::Bell;
use crate::transport::tcp::{Listener, TcpNet, TcpSettings};
pub use oxmpi_pmi::spawn::SpawnApp;
use oxmpi_pmi::spawn::SpawnRequest;
use std::cell::RefCell;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

/// The preput key under which spawned processes find their parents' port.
pub const PARENT_PORT_KEY: &str = "PARENT_ROOT_PORT_NAME";

/// The parent intercommunicator, or `NO_COMM`.
static PARENT: AtomicU32 = AtomicU32::new(NO_COMM);

/// Records the intercommunicator to the parents (for spawned processes).
pub fn set_parent(id: CommId) {
    PARENT.store(id, Ordering::Relaxed);
}

/// `MPI_Comm_get_parent`: the parent intercommunicator, None when the process was
/// not spawned or the parent was freed or disconnected.
pub fn parent() -> Result<Option<CommId>> {
    runtime::with(|_| Ok(()))?;
    let p = PARENT.load(Ordering::Relaxed);
    Ok((p != NO_COMM).then_some(p))
}

/// Called when communicator `id` is freed: it is no longer the parent.
pub fn forget(id: CommId) {
    let _ = PARENT.compare_exchange(id, NO_COMM, Ordering::Relaxed, Ordering::Relaxed);
}

/// True while a request started on communicator `id` has not completed.
fn pending(rt: &runtime::Runtime, id: CommId) -> bool {
    let dev = &rt.device;
    let live = dev.live_requests();
    let mut found = 0;
    let mut r = 0u32;
    while found < live {
        if let Some(q) = dev.request(r) {
            found += 1;
            if q.owner == id && !q.is_complete() {
                return true;
            }
        }
        r = r.wrapping_add(1);
        if r == 0 {
            break;
        }
    }
    false
}

/// `MPI_Comm_disconnect`: waits until every operation started on the communicator
/// here has completed, then until every member has got that far (a barrier over the
/// communicator, both groups of an intercommunicator), then frees it. The program's
/// request handles stay valid (completed) until it waits on or frees them.
pub fn disconnect(id: CommId) -> Result<()> {
    if id == WORLD || id == SELF {
        return err(
            ErrorClass::Comm,
            "MPI_COMM_WORLD and MPI_COMM_SELF cannot be disconnected",
        );
    }
    runtime::with(|rt| rt.comms.get(id).map(|_| ()))?;
    runtime::block_on(|rt| Ok((!pending(rt, id)).then_some(())))?;
    crate::coll::movement::barrier(id)?;
    crate::commops::comm_free(id)?;
    forget(id);
    Ok(())
}

/// After communicator `id` (`freed`) is freed: the processes of other jobs in it that
/// no live communicator refers to any more are retired from the device, so that their
/// listening addresses, which a later process may reuse, no longer name them. Not while
/// operations started on it are pending (freeing lets them complete, and their peers may
/// still have to connect).
pub fn retire_unused_peers(rt: &mut Runtime, id: CommId, freed: &crate::comm::Comm) {
    let n = rt.world_size;
    let of = |c: &crate::comm::Comm| -> Vec<u32> {
        let mut v: Vec<u32> = c.group.members().to_vec();
        if let Some(r) = &c.remote {
            v.extend_from_slice(r.members());
        }
        v.retain(|&s| s >= n);
        v
    };
    let mut dyn_peers = of(freed);
    if dyn_peers.is_empty() || pending(rt, id) {
        return;
    }
    for other in rt.comms.live_ids().collect::<Vec<_>>() {
        if let Ok(c) = rt.comms.get(other) {
            let used = of(c);
            dyn_peers.retain(|s| !used.contains(s));
        }
    }
    for s in dyn_peers {
        rt.device.retire_peer(s);
    }
}

// ----- building an intercommunicator between two jobs ----------------------------------

/// The hash of this node's key (which processes are on the same node).
pub fn my_node() -> u64 {
    static NODE: OnceLock<u64> = OnceLock::new();
    *NODE.get_or_init(|| port::node_hash(&crate::bootstrap::node_key()))
}

/// Attaches the TCP transport when the job had no TCP peers (a single-node job, a
/// singleton): a listening socket, and the doorbell socket through which local ranks
/// wake this one when it sleeps in the TCP epoll set.
fn ensure_tcp(rt: &mut Runtime) -> Result<()> {
    if rt.device.has_tcp() {
        return Ok(());
    }
    let fail = |e: String| Error::new(ErrorClass::Other, format!("cannot start TCP: {e}"));
    let l =
        Listener::open(rt.config.tcp_addr.as_deref(), rt.config.tcp_if.as_deref()).map_err(fail)?;
    let bell = match (&rt.pmi, rt.device.node()) {
        (Some(pmi), Some(_)) => Some(
            Bell::bind(pmi.kvsname(), rt.world_rank)
                .map_err(|e| fail(format!("cannot bind the doorbell socket: {e}")))?,
        ),
        _ => None,
    };
    // No rank of this job is reached over this transport, so the job secret is never
    // used; a random one refuses everyone who claims to be of this job.
    let secret = port::random_key()?.to_vec();
    let settings = TcpSettings {
        connect_timeout: Duration::from_secs(rt.config.tcp_connect_timeout_secs),
        debug: rt.config.tcp_debug,
    };
    let n = rt.world_size as usize;
    let net = TcpNet::new(
        rt.world_rank,
        rt.world_size,
        secret,
        l,
        vec![None; n],
        bell,
        settings,
    )
    .map_err(|e| fail(e.to_string()))?;
    rt.device.attach_tcp(net);
    Ok(())
}

/// This process as the other group sees it.
fn me_remote(rt: &mut Runtime) -> Result<Remote> {
    ensure_tcp(rt)?;
    let addr = rt
        .device
        .tcp_addr()
        .ok_or_else(|| Error::new(ErrorClass::Intern, "TCP transport missing"))?;
    let inc = rt
        .device
        .tcp_incarnation()
        .ok_or_else(|| Error::new(ErrorClass::Intern, "TCP transport missing"))?;
    Ok(Remote {
        addr,
        inc,
        loopback_ok: rt.device.tcp_loopback_ok(),
        node: my_node(),
    })
}

fn malformed() -> Error {
    Error::new(
        ErrorClass::Intern,
        "malformed dynamic-process message from a member of the group",
    )
}

/// How long an establishment waits for the context-id holds of other threads' agreements.
const HOLD_WAIT: Duration = Duration::from_secs(10);

/// Held by the thread establishing an intercommunicator at this process.
static ESTABLISH: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Builds an intercommunicator between the group of `comm` and another group (see the
/// module doc). `talk` runs at the root only: given this group's side, it reaches the
/// other root and gives back the other side and the key both groups' processes use.
/// `note` (significant at the root, which may change it in `talk`) reaches every member,
/// whether the establishment succeeds or fails (what a spawn asked for and started).
fn establish(
    comm: CommId,
    root: i32,
    call: &str,
    note: &RefCell<Vec<u32>>,
    talk: impl FnOnce(&Side) -> Result<(Side, Vec<u8>)>,
) -> Result<CommId> {
    let lc = crate::commops::snapshot(comm)?;
    crate::commops::require_intra(&lc, "comm")?;
    if !(0..lc.size()).contains(&root) {
        return err(
            ErrorClass::Root,
            format!(
                "{call}: invalid root {root} (communicator size {})",
                lc.size()
            ),
        );
    }
    // The offered slots stay held until the intercommunicator is installed, so that no
    // communicator creation of another thread at this process picks one of them
    // meanwhile (two communicators would share a context here: their collective
    // sequences and messages get mixed). Those agreements see the hold and retry; two
    // establishments at once would each leave the other nothing, so they take turns.
    let _turn = ESTABLISH.lock().unwrap_or_else(|e| e.into_inner());
    // An agreement of another thread in its round (an Intercomm_merge, a Comm_dup)
    // holds every slot it found free, which would leave this one nothing to offer and
    // the establishment no id (it cannot retry: the other group has its answer). Such a
    // round ends on its own, so wait for it; a hold that outlasts the bound (a pending
    // idup whose members are not there yet) is passed over with what is unheld.
    let deadline = std::time::Instant::now() + HOLD_WAIT;
    let (mine, offer, me) = loop {
        let got = runtime::with(|rt| {
            if rt.comms.claims.holding() && std::time::Instant::now() < deadline {
                runtime::progress_all(rt);
                return Ok(None);
            }
            let r = me_remote(rt)?;
            Ok(Some((r, context::offer(rt, true), rt.world_rank)))
        })?;
        match got {
            Some(g) => break g,
            None => std::thread::yield_now(),
        }
    };
    let hold = offer.hold;
    let r = establish_held(root, &lc, offer.mask, (mine, me), note, talk);
    runtime::with(|rt| {
        rt.comms.claims.release(hold);
        Ok(())
    })?;
    r
}

/// [`establish`] once this member's free slots are held.
fn establish_held(
    root: i32,
    lc: &crate::comm::Comm,
    mask: Mask,
    (mine, me): (Remote, u32),
    note: &RefCell<Vec<u32>>,
    talk: impl FnOnce(&Side) -> Result<(Side, Vec<u8>)>,
) -> Result<CommId> {
    let mut team = crate::commops::team_of(&lc.group, lc.rank, lc.coll_ctx(), ic::TAG_DPM);
    team.root = root as usize;
    let mut w = Writer::default();
    w.bytes(&mask.encode());
    mine.write(&mut w);
    let all = team.gather(w.finish())?;
    let outcome = all.map(|all| {
        let r = (|| {
            let mut m = Mask::full();
            let mut members = Vec::with_capacity(all.len());
            for b in &all {
                let mut r = Reader::new(b);
                m.and(&Mask::decode(r.bytes()?).ok_or_else(malformed)?);
                members.push(Remote::read(&mut r)?);
            }
            let side = Side {
                mask: m,
                members,
                salt: port::random_key()?,
            };
            let (theirs, key) = talk(&side)?;
            let mut both = side.mask.clone();
            both.and(&theirs.mask);
            let ctx = context::choose(&both)?;
            let mut o = Writer::default();
            o.u32(ctx).bytes(&key).u32(theirs.members.len() as u32);
            for r in &theirs.members {
                r.write(&mut o);
            }
            Ok(o.finish())
        })();
        let mut w = Writer::default();
        let n = note.borrow();
        w.u32(n.len() as u32);
        for &x in n.iter() {
            w.u32(x);
        }
        w.bytes(&ic::encode_outcome(&r));
        w.finish()
    });
    let b = team.bcast(outcome)?;
    let mut r = Reader::new(&b);
    let len = r.u32()? as usize;
    if len > b.len() {
        return Err(malformed());
    }
    *note.borrow_mut() = (0..len).map(|_| r.u32()).collect::<Result<_>>()?;
    let body = ic::decode_outcome(r.bytes()?)?;
    let mut r = Reader::new(&body);
    let ctx = r.u32()?;
    let key = r.bytes()?.to_vec();
    let n = r.u32()? as usize;
    if n == 0 || n > body.len() {
        return Err(malformed());
    }
    let remote: Vec<Remote> = (0..n)
        .map(|_| Remote::read(&mut r))
        .collect::<Result<_>>()?;
    let slots = runtime::with(|rt| {
        remote
            .iter()
            .map(|p| {
                rt.device
                    .add_peer(p.addr, p.inc, p.dial_addr(my_node()), key.clone())
                    .ok_or_else(|| Error::new(ErrorClass::Intern, "TCP transport missing"))
            })
            .collect::<Result<Vec<u32>>>()
    })?;
    // The collective state of a context is forgotten when its previous communicator is
    // released (`context::sweep`), so both jobs start this one's sequence at 0.
    let new = crate::commops::new_comm(
        ctx,
        Arc::new((*lc.group).clone()),
        Some(Arc::new(Group::new(slots))),
        lc,
        me,
    )
    .ok_or_else(malformed)?;
    crate::commops::install(new)
}

/// Runs the engine's progress while a root waits on a socket.
fn idle() -> Result<()> {
    runtime::with(|rt| {
        runtime::progress_all(rt);
        Ok(())
    })
}

/// The `MPI_Comm_connect` timeout: the info key `timeout` (seconds) when given, else
/// `OXMPI_DPM_CONNECT_TIMEOUT`.
pub fn connect_timeout(info_timeout: Option<&str>) -> Result<Duration> {
    if let Some(t) = info_timeout {
        let s: f64 = t.trim().parse().ok().filter(|s: &f64| *s > 0.0 && s.is_finite()).ok_or_else(|| {
            Error::new(
                ErrorClass::Info,
                format!("MPI_Comm_connect: info key \"timeout\" has value {t:?} (a positive number of seconds)"),
            )
        })?;
        return Ok(Duration::from_secs_f64(s.min(86_400.0)));
    }
    runtime::with(|rt| Ok(Duration::from_secs(rt.config.dpm_connect_timeout_secs)))
}

/// `MPI_Open_port`.
pub fn open_port() -> Result<String> {
    let (a, i) = runtime::with(|rt| Ok((rt.config.tcp_addr.clone(), rt.config.tcp_if.clone())))?;
    port::open(a.as_deref(), i.as_deref(), my_node())
}

/// `MPI_Close_port`.
pub fn close_port(name: &str) -> Result<()> {
    runtime::with(|_| Ok(()))?;
    port::close(name)
}

/// The root's arguments of a dynamic-process call: None at the other members, and an
/// error found in them (reported to every member) at the root.
pub type RootArgs<T> = Option<Result<T>>;

fn root_args<T>(call: &str, a: RootArgs<T>) -> Result<T> {
    a.unwrap_or_else(|| {
        err(
            ErrorClass::Intern,
            format!("{call}: the root's arguments are missing"),
        )
    })
}

/// `MPI_Comm_accept`: `port` (significant at `root`) must be open in the root.
pub fn accept(port: RootArgs<String>, root: i32, comm: CommId) -> Result<CommId> {
    establish(comm, root, "MPI_Comm_accept", &RefCell::default(), |mine| {
        let name = &root_args("MPI_Comm_accept", port)?;
        let key = PortName::parse("MPI_Comm_accept", name)?.key.to_vec();
        Ok((port::accept_root(name, mine, idle)?, key))
    })
}

/// `MPI_Comm_connect`: `port` and `timeout` are significant at `root`.
pub fn connect(port: RootArgs<(String, Duration)>, root: i32, comm: CommId) -> Result<CommId> {
    establish(
        comm,
        root,
        "MPI_Comm_connect",
        &RefCell::default(),
        |mine| {
            let (name, timeout) = root_args("MPI_Comm_connect", port)?;
            let p = PortName::parse("MPI_Comm_connect", &name)?;
            Ok((
                port::connect_root(&p, my_node(), mine, timeout)?,
                p.key.to_vec(),
            ))
        },
    )
}

/// `MPI_Comm_join` over the connected socket `fd`: an intercommunicator of this process
/// and the one at the other end. The two sides' random salts make the key.
pub fn join(fd: std::os::fd::BorrowedFd<'_>) -> Result<CommId> {
    establish(SELF, 0, "MPI_Comm_join", &RefCell::default(), |mine| {
        let theirs = port::join_root(fd, mine)?;
        let (a, b) = if mine.salt <= theirs.salt {
            (mine.salt, theirs.salt)
        } else {
            (theirs.salt, mine.salt)
        };
        let mut key = Vec::with_capacity(2 * KEY_BYTES);
        key.extend_from_slice(&a);
        key.extend_from_slice(&b);
        Ok((theirs, key))
    })
}

/// `MPI_Comm_spawn` / `MPI_Comm_spawn_multiple`: `apps` is significant at `root`. The
/// children are started by the process manager and connect back in their `MPI_Init`.
/// A refused spawn (a program that does not exist, no launcher for a singleton) is
/// `MPI_ERR_SPAWN` at every member, and so are children that do not connect within
/// `OXMPI_DPM_CONNECT_TIMEOUT`. A singleton starts its launcher itself
/// ([`crate::launcher`]).
///
/// The reserved info keys `file` and `soft` are read here ([`prepare`]); the process
/// manager may start fewer processes than asked for (oxmpi's `mpiexec` does, for `soft`,
/// within the universe size), which [`SpawnCodes`] reports.
pub fn spawn(apps: RootArgs<Vec<SpawnApp>>, root: i32, comm: CommId) -> Result<CommId> {
    let asked = match &apps {
        Some(Ok(a)) => a.iter().map(|a| a.maxprocs).sum(),
        _ => 0,
    };
    spawn_counted(apps, asked, root, comm).0
}

/// What a spawn asked for and started, known at every member.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SpawnCodes {
    /// Processes asked for at the root, over all commands (0 where the call failed
    /// before the root's answer came).
    pub asked: usize,
    /// For each command of a spawn that succeeded: processes asked for and started.
    pub commands: Vec<(u32, u32)>,
}

impl SpawnCodes {
    /// `array_of_errcodes`: for a spawn that succeeded, `MPI_SUCCESS` for each process
    /// started and `not_started` for the rest, command after command; else `failed`
    /// everywhere.
    pub fn codes(&self, ok: bool, not_started: i32, failed: i32) -> Vec<i32> {
        if !ok || self.commands.is_empty() {
            return vec![if ok { 0 } else { failed }; self.asked];
        }
        let mut out = Vec::with_capacity(self.asked);
        for &(asked, started) in &self.commands {
            out.extend(std::iter::repeat_n(0, started as usize));
            out.extend(std::iter::repeat_n(not_started, (asked - started) as usize));
        }
        out
    }

    fn from_note(note: &[u32]) -> SpawnCodes {
        let Some((&asked, rest)) = note.split_first() else {
            return SpawnCodes::default();
        };
        SpawnCodes {
            asked: asked as usize,
            commands: rest.chunks_exact(2).map(|c| (c[0], c[1])).collect(),
        }
    }
}

/// The commands of a spawn as the process manager gets them: each command's `file` info
/// key replaced by that file's pairs, and, for a command with a `soft` key, `maxprocs`
/// lowered to the largest number the key allows (a process manager that ignores `soft`,
/// such as MPICH's Hydra, then still starts an allowed number). A malformed `soft`
/// value or an unusable file is `MPI_ERR_INFO_VALUE`; a `soft` that allows no number
/// from 1 to `maxprocs` is `MPI_ERR_SPAWN`.
pub fn prepare(mut apps: Vec<SpawnApp>) -> Result<Vec<SpawnApp>> {
    use oxmpi_pmi::spawn_info::{with_file, Soft};
    for (i, app) in apps.iter_mut().enumerate() {
        app.info = with_file(&app.info).map_err(|e| {
            Error::new(
                ErrorClass::InfoValue,
                format!("info key \"file\" of command {i} ({:?}): {e}", app.command),
            )
        })?;
        if let Some(v) = app.info_value("soft") {
            let soft = Soft::parse(v).map_err(|e| {
                Error::new(
                    ErrorClass::InfoValue,
                    format!(
                        "info key \"soft\" of command {i} ({:?}) has value {v:?}: {e}",
                        app.command
                    ),
                )
            })?;
            app.maxprocs = soft.choose(app.maxprocs, None).ok_or_else(|| {
                Error::new(
                    ErrorClass::Spawn,
                    format!(
                        "info key \"soft\" of command {i} ({:?}) has value {v:?}, which allows no number of processes from 1 to maxprocs {}",
                        app.command, app.maxprocs
                    ),
                )
            })?;
        }
    }
    Ok(apps)
}

/// [`spawn`], also giving at every member what the root asked for (`asked` processes in
/// all: its array of error codes has that many entries) and started, whether the spawn
/// succeeded or not.
pub fn spawn_counted(
    apps: RootArgs<Vec<SpawnApp>>,
    asked: u32,
    root: i32,
    comm: CommId,
) -> (Result<CommId>, SpawnCodes) {
    let note = RefCell::new(vec![asked]);
    let r = establish(comm, root, "MPI_Comm_spawn", &note, |mine| {
        let apps = root_args("MPI_Comm_spawn", apps)?;
        let wanted: Vec<u32> = apps.iter().map(|a| a.maxprocs).collect();
        let apps = prepare(apps)?;
        let name = open_port()?;
        let r = (|| {
            let key = PortName::parse("MPI_Comm_spawn", &name)?.key.to_vec();
            let req = SpawnRequest {
                apps,
                preput: vec![(PARENT_PORT_KEY.to_string(), name.clone())],
            };
            // A singleton has no process manager: it starts a launcher of its own, which
            // starts every process asked for.
            let (mut launcher, codes) = runtime::with(|rt| {
                let Some(pmi) = rt.pmi.as_mut() else {
                    let codes = vec![0; req.total_procs() as usize];
                    return Launcher::start(&req).map(|l| (Some(l), codes));
                };
                pmi.spawn(&req).map(|c| (None, c)).map_err(|e| {
                    Error::new(
                        ErrorClass::Spawn,
                        format!("MPI_Comm_spawn: the process manager refused the spawn: {e}"),
                    )
                })
            })?;
            // Children that never connect (a launcher that answered the spawn but could not
            // start them, as Hydra does for a missing program) fail the spawn in time.
            let limit = connect_timeout(None)?;
            let deadline = std::time::Instant::now() + limit;
            let side = port::accept_root(&name, mine, || {
                if let Some(l) = launcher.as_mut() {
                    l.check()?;
                }
                if std::time::Instant::now() >= deadline {
                    return err(
                        ErrorClass::Spawn,
                        format!(
                            "MPI_Comm_spawn: the children did not connect within {} s (OXMPI_DPM_CONNECT_TIMEOUT)",
                            limit.as_secs()
                        ),
                    );
                }
                idle()
            })?;
            let mut n = note.borrow_mut();
            let mut at = 0;
            for (app, &w) in req.apps.iter().zip(&wanted) {
                let mine = codes.get(at..at + app.maxprocs as usize).unwrap_or(&[]);
                let started = mine.iter().filter(|&&c| c == 0).count() as u32;
                n.extend([w, started]);
                at += app.maxprocs as usize;
            }
            Ok((side, key))
        })();
        let _ = port::close(&name);
        r
    });
    let codes = SpawnCodes::from_note(&note.borrow());
    (r, codes)
}

/// At `MPI_Init` of a spawned process: connects to the parents' port (found in the
/// key-value space) over `MPI_COMM_WORLD` and records the parent intercommunicator.
pub fn connect_parent() -> Result<()> {
    let name = runtime::with(|rt| {
        let Some(pmi) = rt.pmi.as_mut() else {
            return Ok(None);
        };
        if !pmi.spawned() {
            return Ok(None);
        }
        pmi.get(PARENT_PORT_KEY).map(Some).map_err(|e| {
            Error::new(
                ErrorClass::Other,
                format!("MPI_Init: a spawned process cannot find its parents' port ({PARENT_PORT_KEY}): {e}"),
            )
        })
    })?;
    let Some(name) = name else {
        return Ok(());
    };
    let timeout = connect_timeout(None)?;
    let id = connect(Some(Ok((name, timeout))), 0, WORLD)?;
    set_parent(id);
    Ok(())
}
