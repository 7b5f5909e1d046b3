//! Jobs started by a running job (`MPI_Comm_spawn`, PMI spawn requests).
//!
//! A spawn request starts one more `mpiexec` (this same program) as a child of this one,
//! with the request's commands as its applications: the new job gets its
//! own PMI server, key-value space (`kvsname`), `MPI_COMM_WORLD` and process group, and
//! the ranks see `PMI_SPAWNED=1`. The request's preput pairs (where MPICH's parents put
//! the address their root listens on, `PARENT_ROOT_PORT_NAME`) are in the new job's
//! key-value space before its ranks start. The new job shares the spawning job's secret,
//! so that the two jobs' processes can authenticate each other.
//!
//! The parent learns these through environment variables that only `mpiexec` reads
//! ([`take_inherited`] removes them before anything else sees the environment).
//!
//! Programs are looked up before the answer (in the `path` info value, then in `PATH`),
//! so a program that does not exist fails the spawn at once instead of leaving the
//! parents waiting for children that never come. Info keys read: `wdir`, `path`, `host`
//! (only this host's names in a single-host job), `file` (a file of further `key=value`
//! pairs, normally already read by the MPI library at the spawning root) and `soft`
//! ([`oxmpi_pmi::spawn_info`]): a command with `soft` starts the largest allowed number
//! of processes up to `maxprocs` that fits the universe's free slots ([`crate::slots`]);
//! when none fits, the spawn fails and starts nothing. The answer says how many
//! processes of each command started (the parents' `array_of_errcodes`). Other keys are
//! ignored, as the standard allows.
//!
//! In a multi-host job ([`SpawnHosts`]) the spawned `mpiexec` is itself the head of a
//! multi-host job: it gets the host list and launcher of the spawning job, and
//! `OXMPI_SPAWN_PLACE` says on which host each of its ranks runs (the `host` info key,
//! else round-robin over the hosts, continuing after the ranks placed so far). The spawn
//! is answered once the spawned `mpiexec` reports on a pipe (`OXMPI_SPAWN_READY_FD`) that
//! its proxies are up, so a host its launcher cannot reach fails the spawn (error codes
//! at the parents) instead of the spawning job.
//!
//! A singleton spawns by running `mpiexec --singleton-spawn` ([`SINGLETON_ARG`]) itself.
//!
//! The spawning `mpiexec` waits for its spawned jobs before it exits; a spawned job that
//! fails fails the spawning job, and ending the spawning job ends its spawned jobs (they
//! also die with it: parent-death signal).

use crate::launch::resolve_program;
use crate::outcome::Termination;
use crate::slots::Slots;
use oxmpi_pmi::spawn::SpawnRequest;
use oxmpi_pmi::spawn_info::{with_file, Soft};
use oxmpi_pmi::{decode_value, encode_value};
use std::ffi::OsString;
use std::os::fd::AsRawFd;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Command, Stdio};

const ENV_KVSNAME: &str = "OXMPI_SPAWN_KVSNAME";
const ENV_SECRET: &str = "OXMPI_SPAWN_SECRET";
const ENV_PREPUT: &str = "OXMPI_SPAWN_PREPUT";
const ENV_PLACE: &str = "OXMPI_SPAWN_PLACE";
const ENV_REQUEST: &str = "OXMPI_SPAWN_REQUEST";
const ENV_READY: &str = "OXMPI_SPAWN_READY_FD";

/// The argument with which a singleton (a process started without a launcher) runs
/// `mpiexec` to spawn: the request is in `OXMPI_SPAWN_REQUEST`
/// ([`oxmpi_pmi::spawn::to_word`]), the new job's name and secret in
/// `OXMPI_SPAWN_KVSNAME` / `OXMPI_SPAWN_SECRET`.
pub const SINGLETON_ARG: &str = "--singleton-spawn";

/// For [`SINGLETON_ARG`]: reads the singleton's request, moves its preput pairs where
/// [`take_inherited`] finds them, and returns the command line (after the program name)
/// of the job to run. Call before any thread starts.
pub fn singleton_command_line() -> Result<Vec<String>, String> {
    let word = std::env::var(ENV_REQUEST)
        .map_err(|_| format!("{SINGLETON_ARG} needs {ENV_REQUEST} (it is for MPI programs)"))?;
    std::env::remove_var(ENV_REQUEST);
    let req = oxmpi_pmi::spawn::from_word(&word)
        .map_err(|e| format!("{ENV_REQUEST} is malformed: {e}"))?;
    std::env::set_var(ENV_PREPUT, encode_preput(&req.preput));
    // A singleton has no universe size: soft only narrows maxprocs (as its library did).
    let mut req = with_files(&req)?;
    let counts = plan(&req, None)?;
    narrow(&mut req, &counts);
    command_line(&req, std::env::var_os("PATH").as_ref(), false)
}

/// `req` with every command's `file` info key replaced by the pairs of that file.
fn with_files(req: &SpawnRequest) -> Result<SpawnRequest, String> {
    let mut out = req.clone();
    for (i, app) in out.apps.iter_mut().enumerate() {
        app.info = with_file(&app.info)
            .map_err(|e| format!("info key \"file\" of command {i} ({}): {e}", app.command))?;
    }
    Ok(out)
}

/// The free slots of the universe when a spawn is planned: free, used, universe size.
type Room = (u32, u32, u32);

/// The number of processes to start of each command of `req`: `maxprocs`, or for a
/// command with `soft`, the largest allowed number that fits the slots left free (in
/// `room`, when the job has a universe size) by the commands before it.
pub fn plan(req: &SpawnRequest, room: Option<Room>) -> Result<Vec<u32>, String> {
    let mut free = room.map(|r| r.0);
    let mut out = Vec::with_capacity(req.apps.len());
    for (i, app) in req.apps.iter().enumerate() {
        let n = match app.info_value("soft") {
            None => app.maxprocs,
            Some(v) => {
                let soft = Soft::parse(v).map_err(|e| {
                    format!(
                        "info key \"soft\" of command {i} ({}) has value {v:?}: {e}",
                        app.command
                    )
                })?;
                soft.choose(app.maxprocs, free).ok_or_else(|| match (room, free) {
                    (Some((_, used, universe)), Some(f)) => format!(
                        "soft {v:?} of command {i} ({}, maxprocs {}): no allowed number of processes fits the {f} free slot(s) of the universe (size {universe}; the job family runs {used} process(es){})",
                        app.command,
                        app.maxprocs,
                        if i > 0 { ", and the commands before this one take some" } else { "" }
                    ),
                    _ => format!(
                        "soft {v:?} of command {i} ({}): allows no number of processes from 1 to maxprocs {}",
                        app.command, app.maxprocs
                    ),
                })?
            }
        };
        free = free.map(|f| f.saturating_sub(n));
        out.push(n);
    }
    Ok(out)
}

/// Sets each command's number of processes to its planned count.
fn narrow(req: &mut SpawnRequest, counts: &[u32]) {
    for (a, &n) in req.apps.iter_mut().zip(counts) {
        a.maxprocs = n;
    }
}

/// Spawned jobs one job may have running at once.
pub const MAX_SPAWNED: usize = 256;

/// What a spawned `mpiexec` inherits from the job that spawned it.
#[derive(Debug)]
pub struct Inherited {
    pub kvsname: String,
    pub secret: String,
    pub preput: Vec<(String, String)>,
    /// In a multi-host job: the index into `-hosts` of each rank's host.
    pub place: Option<Vec<usize>>,
    /// In a multi-host job: the pipe on which to report, with one byte, that every proxy
    /// is up ([`report_ready`]); the spawning `mpiexec` answers the spawn then.
    pub ready: Option<std::fs::File>,
    /// The family's slot count, when it has a universe size.
    pub slots: Option<Slots>,
}

/// Tells the spawning `mpiexec` that this spawned job's proxies are all up.
pub fn report_ready(ready: Option<std::fs::File>) {
    use std::io::Write;
    if let Some(mut f) = ready {
        let _ = f.write_all(b"1");
    }
}

/// Where a multi-host job's spawned processes may go: its hosts, in the order of its
/// host list, and how its proxies are started.
#[derive(Debug, Clone)]
pub struct SpawnHosts {
    pub hosts: Vec<String>,
    pub launcher: String,
    /// The universe size the spawned jobs report.
    pub universe_size: u32,
    /// Round-robin cursor: the host (mod `hosts`) of the next process placed without a
    /// `host` info key; starts after the job's own ranks.
    pub next: usize,
}

impl SpawnHosts {
    /// The host of every process of `req`: an application's `host` info key, else the
    /// next host round-robin.
    fn place(&mut self, req: &SpawnRequest) -> Result<Vec<String>, String> {
        let mut out = Vec::new();
        let mut next = self.next;
        for app in &req.apps {
            let fixed = match app.info_value("host") {
                Some(h) => Some(
                    crate::hosts::parse_entry(h)
                        .ok()
                        .filter(|e| e.slots.is_none())
                        .ok_or_else(|| format!("host {h:?}: not a host name"))?
                        .name,
                ),
                None => None,
            };
            for _ in 0..app.maxprocs {
                out.push(match &fixed {
                    Some(h) => h.clone(),
                    None => {
                        next += 1;
                        self.hosts[(next - 1) % self.hosts.len()].clone()
                    }
                });
            }
        }
        self.next = next;
        Ok(out)
    }
}

/// A running spawned job.
#[derive(Debug)]
pub struct SpawnedJob {
    pub pid: i32,
    pub kvsname: String,
    pub ended: Option<Termination>,
    /// Processes started of each command of the request.
    pub started: Vec<u32>,
}

impl SpawnedJob {
    /// Its number of processes.
    pub fn procs(&self) -> u32 {
        self.started.iter().sum()
    }
}

/// Reads and removes the variables a spawning `mpiexec` set. Call before any thread
/// starts and before the environment is read for the ranks.
pub fn take_inherited() -> Result<Option<Inherited>, String> {
    let slots = Slots::inherit()?;
    let Some(kvsname) = std::env::var_os(ENV_KVSNAME) else {
        return Ok(None);
    };
    let secret = std::env::var_os(ENV_SECRET).unwrap_or_default();
    let preput = std::env::var_os(ENV_PREPUT).unwrap_or_default();
    let place = std::env::var_os(ENV_PLACE);
    let ready = std::env::var(ENV_READY).ok();
    for v in [ENV_KVSNAME, ENV_SECRET, ENV_PREPUT, ENV_PLACE, ENV_READY] {
        std::env::remove_var(v);
    }
    let ready = match ready {
        None => None,
        Some(v) => {
            let fd: std::os::fd::RawFd = v
                .parse()
                .ok()
                .filter(|fd| *fd > 2)
                .ok_or_else(|| format!("malformed {ENV_READY}"))?;
            // SAFETY: fcntl on an integer descriptor only queries or sets its flags; an fd
            // that is not open fails with EBADF.
            if unsafe { libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) } != 0 {
                return Err(format!("{ENV_READY}={fd} is not an open descriptor"));
            }
            // SAFETY: the spawning mpiexec opened this pipe end for this process alone and
            // nothing else here owns it (the variable is removed above).
            Some(unsafe { <std::fs::File as std::os::fd::FromRawFd>::from_raw_fd(fd) })
        }
    };
    let text = |v: OsString, what: &str| {
        v.into_string()
            .map_err(|_| format!("{what} of the spawning job is not valid UTF-8"))
    };
    let kvsname = text(kvsname, ENV_KVSNAME)?;
    let secret = text(secret, ENV_SECRET)?;
    if kvsname.is_empty() || secret.is_empty() {
        return Err(format!("{ENV_KVSNAME} or {ENV_SECRET} is empty"));
    }
    let place = match place {
        None => None,
        Some(p) => Some(
            text(p, ENV_PLACE)?
                .split(',')
                .map(|i| i.parse::<usize>())
                .collect::<Result<Vec<_>, _>>()
                .map_err(|_| format!("malformed {ENV_PLACE}"))?,
        ),
    };
    Ok(Some(Inherited {
        kvsname,
        secret,
        preput: decode_preput(&text(preput, ENV_PREPUT)?)?,
        place,
        ready,
        slots,
    }))
}

/// Pairs as `key=value,key=value` with both sides in [`encode_value`]'s alphabet.
fn encode_preput(pairs: &[(String, String)]) -> String {
    pairs
        .iter()
        .map(|(k, v)| {
            format!(
                "{}={}",
                encode_value(k.as_bytes()),
                encode_value(v.as_bytes())
            )
        })
        .collect::<Vec<_>>()
        .join(",")
}

fn decode_preput(s: &str) -> Result<Vec<(String, String)>, String> {
    let bad = || format!("malformed {ENV_PREPUT}");
    let text = |x: &str| -> Result<String, String> {
        String::from_utf8(decode_value(x).map_err(|_| bad())?).map_err(|_| bad())
    };
    s.split(',')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').ok_or_else(bad)?;
            Ok((text(k)?, text(v)?))
        })
        .collect()
}

/// True when `host` names this machine.
fn is_this_host(host: &str) -> bool {
    let me = nix::unistd::gethostname()
        .ok()
        .and_then(|h| h.into_string().ok())
        .unwrap_or_default();
    let short = |h: &str| h.split('.').next().unwrap_or("").to_owned();
    host == "localhost" || host == me || short(host) == short(&me) || host == "127.0.0.1"
}

/// The command line of the spawned `mpiexec` (its arguments), with every program
/// looked up; an error names the first program or setting that cannot be used.
pub fn command_line(
    req: &SpawnRequest,
    path_var: Option<&OsString>,
    multi_host: bool,
) -> Result<Vec<String>, String> {
    use oxmpi_pmi::limits::{MAX_KEY_LEN, MAX_VALUE_LEN};
    // The new job's PMI server would refuse these at its start, failing the new job
    // after the spawn was answered.
    let control = |s: &str| s.bytes().any(|b| b < 0x20 || b == 0x7f);
    for (k, v) in &req.preput {
        if k.is_empty()
            || k.len() > MAX_KEY_LEN
            || v.len() > MAX_VALUE_LEN
            || control(k)
            || control(v)
        {
            return Err(format!("unusable preput key {k:?}"));
        }
    }
    let mut args = Vec::new();
    for (i, app) in req.apps.iter().enumerate() {
        if let Some(h) = app.info_value("host") {
            if !multi_host && !is_this_host(h) {
                return Err(format!(
                    "host {h:?}: this job runs on this host only (spawning on other hosts needs mpiexec -hosts or -f)"
                ));
            }
        }
        if app.args.iter().any(|a| a == ":") || app.command == ":" {
            return Err("an argument \":\" cannot be passed to a spawned program".into());
        }
        let wdir = app.info_value("wdir").map(PathBuf::from);
        if let Some(d) = &wdir {
            if !d.is_dir() {
                return Err(format!("wdir {}: not a directory", d.display()));
            }
        }
        // A relative program is found from the working directory it will run in.
        let program = match (
            &wdir,
            app.command.contains('/') && !app.command.starts_with('/'),
        ) {
            (Some(d), true) => d.join(&app.command).to_string_lossy().into_owned(),
            _ => app.command.clone(),
        };
        let search: Option<OsString> = match app.info_value("path") {
            Some(p) => {
                let mut s = OsString::from(p);
                if let Some(rest) = path_var {
                    s.push(":");
                    s.push(rest);
                }
                Some(s)
            }
            None => path_var.cloned(),
        };
        let resolved = resolve_program(&program, search.as_ref())?;
        if i > 0 {
            args.push(":".to_owned());
        }
        args.push("-n".to_owned());
        args.push(app.maxprocs.to_string());
        if let Some(d) = &wdir {
            args.push("-wdir".to_owned());
            args.push(d.to_string_lossy().into_owned());
        }
        args.push(resolved.to_string_lossy().into_owned());
        args.extend(app.args.iter().cloned());
    }
    Ok(args)
}

/// The global options that make a spawned `mpiexec` start its ranks on `hosts` (one
/// name per rank), and the value of [`ENV_PLACE`].
fn cluster_options(hosts: &[String], cluster: &SpawnHosts) -> (Vec<String>, String) {
    let mut uniq: Vec<&str> = Vec::new();
    let mut place = Vec::with_capacity(hosts.len());
    for h in hosts {
        let i = uniq.iter().position(|u| u == h).unwrap_or_else(|| {
            uniq.push(h);
            uniq.len() - 1
        });
        place.push(i.to_string());
    }
    let opts = vec![
        "-hosts".to_owned(),
        uniq.join(","),
        "-launcher-exec".to_owned(),
        cluster.launcher.clone(),
        "-usize".to_owned(),
        cluster.universe_size.to_string(),
    ];
    (opts, place.join(","))
}

/// Starts the spawned job `kvsname` for `req`, sharing `secret`; in a multi-host job
/// (`cluster`) its ranks go where [`SpawnHosts`] places them. With `slots` (a universe
/// size), its processes are reserved there until it ends.
pub fn start(
    req: &SpawnRequest,
    kvsname: &str,
    secret: &str,
    cluster: Option<&mut SpawnHosts>,
    slots: Option<&Slots>,
) -> Result<SpawnedJob, String> {
    let mut req = with_files(req)?;
    let counts = match slots {
        Some(s) => s.reserve(|free, used| plan(&req, Some((free, used, s.universe()))))?,
        None => plan(&req, None)?,
    };
    narrow(&mut req, &counts);
    let r = start_planned(&req, kvsname, secret, cluster, slots);
    if r.is_err() {
        if let Some(s) = slots {
            s.release(counts.iter().sum());
        }
    }
    r.map(|pid| SpawnedJob {
        pid,
        kvsname: kvsname.to_owned(),
        ended: None,
        started: counts,
    })
}

/// [`start`] once the numbers of processes are decided; gives the pid of the spawned
/// `mpiexec`.
fn start_planned(
    req: &SpawnRequest,
    kvsname: &str,
    secret: &str,
    cluster: Option<&mut SpawnHosts>,
    slots: Option<&Slots>,
) -> Result<i32, String> {
    let mut args = command_line(req, std::env::var_os("PATH").as_ref(), cluster.is_some())?;
    let exe = std::env::current_exe().map_err(|e| format!("cannot find mpiexec itself: {e}"))?;
    let parent_pid = std::process::id() as libc::pid_t;
    let mut cmd = Command::new(exe);
    // In a multi-host job, the spawned mpiexec reports on this pipe when its proxies are
    // up; one whose launcher cannot reach a host exits instead, and the spawn fails.
    let mut ready: Option<(std::os::fd::OwnedFd, std::os::fd::OwnedFd)> = None;
    if let Some(c) = cluster {
        let hosts = c.place(req)?;
        let (mut opts, place) = cluster_options(&hosts, c);
        opts.append(&mut args);
        args = opts;
        cmd.env(ENV_PLACE, place);
        let p = nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC)
            .map_err(|e| format!("cannot create a pipe: {e}"))?;
        cmd.env(ENV_READY, p.1.as_raw_fd().to_string());
        ready = Some(p);
    } else if let Some(s) = slots {
        // The spawned job reports the family's universe size.
        args.splice(0..0, ["-usize".to_owned(), s.universe().to_string()]);
    }
    let ready_w = ready.as_ref().map_or(-1, |p| p.1.as_raw_fd());
    let slots_fd = match slots {
        Some(s) => {
            let (name, value, fd) = s.for_child();
            cmd.env(name, value);
            fd
        }
        None => -1,
    };
    cmd.args(&args)
        .env(ENV_KVSNAME, kvsname)
        .env(ENV_SECRET, secret)
        .env(ENV_PREPUT, encode_preput(&req.preput))
        .stdin(Stdio::null());
    // SAFETY: the closure runs in the forked child before exec and only makes
    // async-signal-safe system calls (prctl, getppid, kill, sigprocmask, signal) on plain
    // integers; it allocates nothing and takes no locks.
    unsafe {
        cmd.pre_exec(move || {
            if libc::prctl(
                libc::PR_SET_PDEATHSIG,
                libc::SIGKILL as libc::c_ulong,
                0,
                0,
                0,
            ) != 0
            {
                return Err(std::io::Error::last_os_error());
            }
            if libc::getppid() != parent_pid {
                libc::kill(libc::getpid(), libc::SIGKILL);
            }
            let mut empty: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut empty);
            libc::sigprocmask(libc::SIG_SETMASK, &empty, std::ptr::null_mut());
            libc::signal(libc::SIGPIPE, libc::SIG_DFL);
            if ready_w >= 0 {
                libc::fcntl(ready_w, libc::F_SETFD, 0);
            }
            if slots_fd >= 0 {
                libc::fcntl(slots_fd, libc::F_SETFD, 0);
            }
            Ok(())
        });
    }
    let mut child = cmd
        .spawn()
        .map_err(|e| format!("cannot start mpiexec for the spawned job: {e}"))?;
    if let Some((r, w)) = ready {
        drop(w);
        if !wait_ready(r) {
            let how = child
                .wait()
                .map_or_else(|e| e.to_string(), |st| st.to_string());
            return Err(format!(
                "the spawned job could not start its processes on their hosts (its mpiexec ended: {how})"
            ));
        }
    }
    Ok(child.id() as i32)
}

/// Waits for the spawned `mpiexec`'s report on `r`: false when it ended without one. It
/// reports or ends within its own launch timeout (the wait for its proxies).
fn wait_ready(r: std::os::fd::OwnedFd) -> bool {
    use std::io::Read;
    let mut f = std::fs::File::from(r);
    let mut b = [0u8; 1];
    loop {
        match f.read(&mut b) {
            Ok(0) => return false,
            Ok(_) => return true,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use oxmpi_pmi::spawn::SpawnApp;

    #[test]
    fn preput_pairs_survive_the_environment() {
        let pairs = vec![
            (
                "PARENT_ROOT_PORT_NAME".to_string(),
                "tag#0$a=b c,d$".to_string(),
            ),
            ("k".to_string(), "".to_string()),
        ];
        assert_eq!(decode_preput(&encode_preput(&pairs)).unwrap(), pairs);
        assert_eq!(decode_preput("").unwrap(), vec![]);
        assert!(decode_preput("x").is_err());
    }

    #[test]
    fn soft_plans() {
        let app = |n: u32, soft: Option<&str>| SpawnApp {
            command: "w".into(),
            maxprocs: n,
            args: vec![],
            info: soft
                .map(|s| vec![("soft".to_string(), s.to_string())])
                .unwrap_or_default(),
        };
        let req = |apps| SpawnRequest {
            apps,
            preput: vec![],
        };
        // Universe 4, one process running: 3 free.
        let room = Some((3, 1, 4));
        assert_eq!(plan(&req(vec![app(8, Some("1:8"))]), room).unwrap(), [3]);
        assert_eq!(plan(&req(vec![app(8, Some("2,4,6"))]), room).unwrap(), [2]);
        assert_eq!(plan(&req(vec![app(8, Some("2,4,6"))]), None).unwrap(), [6]);
        // Commands take their slots in order; one without soft oversubscribes.
        let two = req(vec![app(4, Some("1,3")), app(2, Some("1:2"))]);
        assert_eq!(plan(&two, Some((4, 1, 5))).unwrap(), [3, 1]);
        let e = plan(&two, Some((3, 2, 5))).unwrap_err();
        assert!(e.contains("command 1") && e.contains("0 free slot"), "{e}");
        assert_eq!(
            plan(&req(vec![app(5, None), app(2, Some("1:2"))]), None).unwrap(),
            [5, 2]
        );
        assert_eq!(
            plan(&req(vec![app(5, None)]), Some((0, 4, 4))).unwrap(),
            [5]
        );
        let e = plan(&req(vec![app(8, Some("1:x"))]), None).unwrap_err();
        assert!(e.contains("soft") && e.contains("1:x"), "{e}");
        let e = plan(&req(vec![app(8, Some("9:12"))]), room).unwrap_err();
        assert!(e.contains("9:12"), "{e}");
    }

    #[test]
    fn command_lines_and_refusals() {
        let path = Some(OsString::from("/usr/bin:/bin"));
        let app = |cmd: &str, n: u32, info: &[(&str, &str)]| SpawnApp {
            command: cmd.into(),
            maxprocs: n,
            args: vec!["-x".into(), "a b".into()],
            info: info
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        };
        let req = SpawnRequest {
            apps: vec![app("true", 2, &[]), app("sh", 1, &[("wdir", "/tmp")])],
            preput: vec![],
        };
        let args = command_line(&req, path.as_ref(), false).unwrap();
        let t = resolve_program("true", path.as_ref()).unwrap();
        let sh = resolve_program("sh", path.as_ref()).unwrap();
        assert_eq!(
            args,
            [
                "-n",
                "2",
                t.to_str().unwrap(),
                "-x",
                "a b",
                ":",
                "-n",
                "1",
                "-wdir",
                "/tmp",
                sh.to_str().unwrap(),
                "-x",
                "a b"
            ]
        );
        for (bad, why) in [
            (app("no-such-program-oxmpi", 1, &[]), "not found"),
            (
                app("true", 1, &[("wdir", "/no/such/dir")]),
                "not a directory",
            ),
            (
                app("true", 1, &[("host", "elsewhere.invalid")]),
                "this host only",
            ),
        ] {
            let req = SpawnRequest {
                apps: vec![bad],
                preput: vec![],
            };
            let e = command_line(&req, path.as_ref(), false).unwrap_err();
            assert!(e.contains(why), "{e}");
        }
        let req = SpawnRequest {
            apps: vec![app("true", 1, &[])],
            preput: vec![("k".repeat(65), "v".into())],
        };
        assert!(command_line(&req, path.as_ref(), false)
            .unwrap_err()
            .contains("preput"));
        // The path info key is searched first.
        let req = SpawnRequest {
            apps: vec![app("sh", 1, &[("path", "/bin")])],
            preput: vec![],
        };
        let args = command_line(&req, None, false).unwrap();
        assert_eq!(args[2], "/bin/sh");
    }
}
