//! The job event loop: one `poll` over the signalfd, every rank's PMI socket and output
//! pipes, and mpiexec's stdin. It drives the PMI [`Server`], forwards output line by line,
//! reaps ranks, and on the first abnormal event prints one message and ends the whole
//! process group (SIGTERM, then SIGKILL after a grace period).
//!
//! In a multi-host job ([`crate::cluster`]) some or all ranks are remote: their PMI
//! bytes, output and exits arrive as messages from the proxy on their host
//! ([`ProxyLink`]), and signals to the job are sent to every proxy as well.
//!
//! The process group id is the first rank's pid. That rank is only peeked at (`waitid`
//! with `WNOWAIT`) until the end, so its zombie keeps the group id reserved and signals to
//! the group can never reach an unrelated process.

use crate::outcome::{judge_exit, Cause, Termination};
use crate::output::LineSplitter;
use crate::signals;
use crate::spawn::{self, SpawnedJob};
use crate::wire::{self, Msg};
use nix::errno::Errno;
use nix::poll::{PollFd, PollFlags, PollTimeout};
use nix::sys::signal::{killpg, Signal};
use nix::sys::signalfd::SignalFd;
use nix::sys::socket::{send, MsgFlags};
use nix::sys::wait::{waitid, waitpid, Id, WaitPidFlag, WaitStatus};
use nix::unistd::Pid;
use oxmpi_pmi::{ConnId, Event, Server};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd, RawFd};
use std::time::{Duration, Instant};

/// Time between SIGTERM and SIGKILL.
const KILL_GRACE: Duration = Duration::from_secs(1);
/// How long output of ended ranks is still awaited (from processes that left the group).
const DRAIN_GRACE: Duration = Duration::from_secs(2);
/// An incomplete output line is passed on after this much quiet (prompts).
const PARTIAL_LINE_DELAY: Duration = Duration::from_millis(200);
/// Upper bound on one poll wait, a safety net for missed wake-ups.
const TICK: Duration = Duration::from_millis(250);
const READ_CHUNK: usize = 64 * 1024;

/// One output pipe of a rank.
struct Stream {
    fd: OwnedFd,
    split: LineSplitter,
    partial_since: Option<Instant>,
}

/// A rank as the loop sees it.
pub struct RankProc {
    pub rank: u32,
    pub pid: i32,
    pub conn: ConnId,
    pub pmi: Option<OwnedFd>,
    stdout: Option<Stream>,
    stderr: Option<Stream>,
    ended: Option<Termination>,
    remote: Option<RemoteOut>,
}

/// Output assembly of a rank on another host.
struct RemoteOut {
    proxy: usize,
    split: [LineSplitter; 2],
    partial_since: [Option<Instant>; 2],
}

/// The connection to the proxy of one host.
pub struct ProxyLink {
    host: String,
    sock: TcpStream,
    dec: wire::Decoder,
    out: Vec<u8>,
    open: bool,
}

/// Bytes queued toward a proxy before mpiexec stops reading its own stdin for it.
const MAX_PROXY_BACKLOG: usize = 4 << 20;

impl RankProc {
    pub fn new(
        rank: u32,
        pid: i32,
        conn: ConnId,
        pmi: OwnedFd,
        stdout: OwnedFd,
        stderr: OwnedFd,
        label: bool,
    ) -> Self {
        let stream = |fd: OwnedFd| {
            set_nonblocking(fd.as_raw_fd());
            Stream {
                fd,
                split: LineSplitter::new(label.then_some(rank)),
                partial_since: None,
            }
        };
        set_nonblocking(pmi.as_raw_fd());
        RankProc {
            rank,
            pid,
            conn,
            pmi: Some(pmi),
            stdout: Some(stream(stdout)),
            stderr: Some(stream(stderr)),
            ended: None,
            remote: None,
        }
    }

    /// A rank started by the proxy `proxy` on another host.
    pub fn remote(rank: u32, conn: ConnId, proxy: usize, label: bool) -> Self {
        let split = || LineSplitter::new(label.then_some(rank));
        RankProc {
            rank,
            pid: 0,
            conn,
            pmi: None,
            stdout: None,
            stderr: None,
            ended: None,
            remote: Some(RemoteOut {
                proxy,
                split: [split(), split()],
                partial_since: [None, None],
            }),
        }
    }
}

/// mpiexec's stdin, forwarded to rank 0.
struct StdinForward {
    src_open: bool,
    dst: Option<OwnedFd>,
    buf: Vec<u8>,
}

#[derive(Clone, Copy, Debug)]
enum Token {
    Signal,
    Pmi(usize),
    Out(usize),
    Err(usize),
    StdinSrc,
    StdinDst,
    Proxy(usize),
}

/// Settings of the loop.
pub struct JobOptions {
    pub timeout_secs: Option<u64>,
    pub verbose: bool,
}

/// The running job.
pub struct Job {
    ranks: Vec<RankProc>,
    server: Server,
    pgid: Option<i32>,
    sigfd: SignalFd,
    stdin: StdinForward,
    cause: Option<Cause>,
    kill_at: Option<Instant>,
    deadline: Option<Instant>,
    opts: JobOptions,
    stdout_ok: bool,
    stderr_ok: bool,
    proxies: Vec<ProxyLink>,
    /// The proxy whose host runs rank 0, when mpiexec's stdin goes there.
    stdin_proxy: Option<usize>,
    /// The job's name and secret, for the jobs it spawns (None: spawning is refused).
    spawn_ctx: Option<(String, String)>,
    /// In a multi-host job: where spawned processes go.
    spawn_hosts: Option<spawn::SpawnHosts>,
    /// The family's universe slots, when it has a universe size ([`crate::slots`]).
    spawn_slots: Option<crate::slots::Slots>,
    /// Jobs this job spawned that have not ended well (those that did are dropped).
    spawned: Vec<SpawnedJob>,
    /// Jobs spawned so far (names them).
    spawn_count: u64,
}

fn set_nonblocking(fd: RawFd) {
    // SAFETY: F_GETFL/F_SETFL on a descriptor this process owns.
    unsafe {
        let fl = libc::fcntl(fd, libc::F_GETFL);
        if fl >= 0 {
            libc::fcntl(fd, libc::F_SETFL, fl | libc::O_NONBLOCK);
        }
    }
}

/// Writes all of `data` to `fd`, waiting when the descriptor is non-blocking and full.
fn write_all_fd(fd: RawFd, mut data: &[u8]) -> Result<(), Errno> {
    while !data.is_empty() {
        // SAFETY: data is a valid buffer of data.len() bytes.
        let n = unsafe { libc::write(fd, data.as_ptr().cast(), data.len()) };
        if n < 0 {
            match Errno::last() {
                Errno::EINTR => continue,
                Errno::EAGAIN => {
                    // SAFETY: fd stays open for the duration of this call.
                    let b = unsafe { BorrowedFd::borrow_raw(fd) };
                    let mut p = [PollFd::new(b, PollFlags::POLLOUT)];
                    let _ = nix::poll::poll(&mut p, PollTimeout::from(1000u16));
                    continue;
                }
                e => return Err(e),
            }
        }
        data = &data[n as usize..];
    }
    Ok(())
}

/// Reads once from a non-blocking descriptor: `Ok(None)` when nothing is available.
fn read_some(fd: RawFd, buf: &mut [u8]) -> Result<Option<usize>, Errno> {
    loop {
        match nix::unistd::read(fd, buf) {
            Ok(n) => return Ok(Some(n)),
            Err(Errno::EINTR) => continue,
            Err(Errno::EAGAIN) => return Ok(None),
            Err(e) => return Err(e),
        }
    }
}

impl Job {
    pub fn new(
        server: Server,
        sigfd: SignalFd,
        stdin_dst: Option<OwnedFd>,
        opts: JobOptions,
    ) -> Job {
        if let Some(fd) = &stdin_dst {
            set_nonblocking(fd.as_raw_fd());
        }
        let deadline = opts
            .timeout_secs
            .map(|s| Instant::now() + Duration::from_secs(s));
        Job {
            ranks: Vec::new(),
            server,
            pgid: None,
            sigfd,
            stdin: StdinForward {
                src_open: stdin_dst.is_some(),
                dst: stdin_dst,
                buf: Vec::new(),
            },
            cause: None,
            kill_at: None,
            deadline,
            opts,
            stdout_ok: true,
            stderr_ok: true,
            proxies: Vec::new(),
            stdin_proxy: None,
            spawn_ctx: None,
            spawn_hosts: None,
            spawn_slots: None,
            spawned: Vec::new(),
            spawn_count: 0,
        }
    }

    /// Lets the job spawn jobs ([`crate::spawn`]); they are named after `kvsname` and
    /// share `secret`.
    pub fn enable_spawn(&mut self, kvsname: String, secret: String) {
        self.spawn_ctx = Some((kvsname, secret));
    }

    /// In a multi-host job: spawned jobs run their ranks on `hosts` ([`spawn::SpawnHosts`]).
    pub fn spawn_on_hosts(&mut self, hosts: spawn::SpawnHosts) {
        self.spawn_hosts = Some(hosts);
    }

    /// Spawned jobs reserve their processes in `slots` (the job has a universe size).
    pub fn spawn_in_slots(&mut self, slots: Option<crate::slots::Slots>) {
        self.spawn_slots = slots;
    }

    /// Starts a job for a spawn request of `rank`, or says why not.
    fn spawn_job(
        &mut self,
        rank: u32,
        req: &oxmpi_pmi::spawn::SpawnRequest,
    ) -> Result<oxmpi_pmi::spawn::Spawned, String> {
        let Some((kvsname, secret)) = self.spawn_ctx.clone() else {
            return Err("this job cannot spawn".into());
        };
        if self.cause.is_some() {
            return Err("the job is ending".into());
        }
        if self.spawned.iter().filter(|j| j.ended.is_none()).count() >= spawn::MAX_SPAWNED {
            return Err(format!(
                "more than {} spawned jobs at once",
                spawn::MAX_SPAWNED
            ));
        }
        let name = format!("{kvsname}-s{}", self.spawn_count + 1);
        let j = spawn::start(
            req,
            &name,
            &secret,
            self.spawn_hosts.as_mut(),
            self.spawn_slots.as_ref(),
        )?;
        self.spawn_count += 1;
        self.verbose(format!(
            "rank {rank} spawned job {name}: {} of {} process(es), mpiexec pid {}",
            j.procs(),
            req.total_procs(),
            j.pid
        ));
        let started = j.started.clone();
        self.spawned.push(j);
        Ok(oxmpi_pmi::spawn::Spawned {
            jobid: name,
            started,
        })
    }

    /// Adds the authenticated connection to the proxy of `host`; returns its index.
    pub fn add_proxy(&mut self, host: String, sock: TcpStream) -> usize {
        let _ = sock.set_nonblocking(true);
        self.proxies.push(ProxyLink {
            host,
            sock,
            dec: wire::Decoder::default(),
            out: Vec::new(),
            open: true,
        });
        self.proxies.len() - 1
    }

    /// Queues a message to proxy `p` and writes what the socket takes.
    pub fn send_proxy(&mut self, p: usize, m: &Msg) {
        if let Some(link) = self.proxies.get_mut(p) {
            if link.open {
                link.out.extend(wire::encode(m));
                self.flush_proxy(p);
            }
        }
    }

    /// Forwards mpiexec's stdin to rank 0 through proxy `p`.
    pub fn set_stdin_proxy(&mut self, p: usize) {
        self.stdin_proxy = Some(p);
        self.stdin.src_open = true;
    }

    /// Adds a started rank. The first one added is the process-group leader.
    pub fn add_rank(&mut self, r: RankProc) {
        if self.pgid.is_none() && r.remote.is_none() {
            self.pgid = Some(r.pid);
        }
        self.ranks.push(r);
    }

    /// Sets the stdin pipe of rank 0 once it exists.
    pub fn set_stdin(&mut self, fd: Option<OwnedFd>) {
        if let Some(fd) = &fd {
            set_nonblocking(fd.as_raw_fd());
        }
        self.stdin.src_open = fd.is_some();
        self.stdin.dst = fd;
    }

    pub fn pgid(&self) -> Option<i32> {
        self.pgid
    }

    fn verbose(&mut self, msg: impl AsRef<str>) {
        if self.opts.verbose {
            self.write_stderr(format!("mpiexec(verbose): {}\n", msg.as_ref()).as_bytes());
        }
    }

    fn write_stdout(&mut self, data: &[u8]) {
        if self.stdout_ok && !data.is_empty() && write_all_fd(1, data).is_err() {
            self.stdout_ok = false;
        }
    }

    fn write_stderr(&mut self, data: &[u8]) {
        if self.stderr_ok && !data.is_empty() && write_all_fd(2, data).is_err() {
            self.stderr_ok = false;
        }
    }

    /// Records the first abnormal event: prints its message and starts ending the job.
    pub fn fail(&mut self, cause: Cause) {
        self.fail_with_signal(cause, Signal::SIGTERM);
    }

    fn fail_with_signal(&mut self, cause: Cause, sig: Signal) {
        if self.cause.is_some() {
            return;
        }
        let msg = format!("{}\n", cause.message());
        self.write_stderr(msg.as_bytes());
        self.cause = Some(cause);
        self.signal_group(sig);
        self.kill_at = Some(Instant::now() + KILL_GRACE);
    }

    fn signal_group(&mut self, sig: Signal) {
        // The leader's zombie keeps the group id reserved while any rank is unreaped.
        if let Some(pg) = self.pgid {
            let _ = killpg(Pid::from_raw(pg), sig);
            self.verbose(format!("sent {sig} to process group {pg}"));
        }
        for p in 0..self.proxies.len() {
            self.send_proxy(p, &Msg::Kill { signal: sig as i32 });
        }
        // A spawned job's mpiexec ends its own ranks on SIGTERM; SIGKILL ends them
        // through their parent-death signal.
        for j in self.spawned.iter().filter(|j| j.ended.is_none()) {
            let _ = nix::sys::signal::kill(Pid::from_raw(j.pid), sig);
        }
    }

    fn all_ended(&self) -> bool {
        self.ranks.iter().all(|r| r.ended.is_some())
            && self.spawned.iter().all(|j| j.ended.is_some())
    }

    fn streams_open(&self) -> bool {
        self.ranks
            .iter()
            .any(|r| r.stdout.is_some() || r.stderr.is_some())
            || self.proxies.iter().any(|p| p.open && !p.out.is_empty())
    }

    /// Runs until every rank has ended and its output is forwarded. Returns the cause of
    /// failure, if any.
    pub fn run(mut self) -> Option<Cause> {
        let mut drain_until: Option<Instant> = None;
        let mut buf = vec![0u8; READ_CHUNK];
        loop {
            self.reap();
            self.after_activity();
            if self.all_ended() {
                if drain_until.is_none() {
                    // Kill whatever the ranks left behind in the group, then let the
                    // output pipes run dry.
                    self.signal_group(Signal::SIGKILL);
                    self.reap_leader();
                    self.stdin.dst = None;
                    self.stdin.src_open = false;
                    drain_until = Some(Instant::now() + DRAIN_GRACE);
                }
                if !self.streams_open() || drain_until.is_some_and(|d| Instant::now() >= d) {
                    break;
                }
            }
            let now = Instant::now();
            let mut wake = now + TICK;
            for t in [self.kill_at, self.deadline, drain_until]
                .into_iter()
                .flatten()
            {
                wake = wake.min(t);
            }
            for r in &self.ranks {
                for s in [&r.stdout, &r.stderr].into_iter().flatten() {
                    if let Some(t) = s.partial_since {
                        wake = wake.min(t + PARTIAL_LINE_DELAY);
                    }
                }
                if let Some(rm) = &r.remote {
                    for t in rm.partial_since.iter().flatten() {
                        wake = wake.min(*t + PARTIAL_LINE_DELAY);
                    }
                }
            }
            let ready = self.wait(wake.saturating_duration_since(now));
            for (tok, flags) in ready {
                self.handle(tok, flags, &mut buf);
            }
            self.timers();
        }
        // Pass on whatever incomplete lines are left.
        for i in 0..self.ranks.len() {
            self.close_stream(i, false);
            self.close_stream(i, true);
        }
        self.cause
    }

    fn wait(&mut self, timeout: Duration) -> Vec<(Token, PollFlags)> {
        let mut fds: Vec<PollFd<'_>> = Vec::new();
        let mut toks = Vec::new();
        let input = PollFlags::POLLIN;
        fds.push(PollFd::new(self.sigfd.as_fd(), input));
        toks.push(Token::Signal);
        for (i, r) in self.ranks.iter().enumerate() {
            if let Some(fd) = &r.pmi {
                let mut fl = input;
                if !self.server.output(r.conn).is_empty() {
                    fl |= PollFlags::POLLOUT;
                }
                fds.push(PollFd::new(fd.as_fd(), fl));
                toks.push(Token::Pmi(i));
            }
            if let Some(s) = &r.stdout {
                fds.push(PollFd::new(s.fd.as_fd(), input));
                toks.push(Token::Out(i));
            }
            if let Some(s) = &r.stderr {
                fds.push(PollFd::new(s.fd.as_fd(), input));
                toks.push(Token::Err(i));
            }
        }
        for (p, link) in self.proxies.iter().enumerate() {
            if link.open {
                let mut fl = input;
                if !link.out.is_empty() {
                    fl |= PollFlags::POLLOUT;
                }
                fds.push(PollFd::new(link.sock.as_fd(), fl));
                toks.push(Token::Proxy(p));
            }
        }
        let stdin_fd = std::io::stdin();
        let stdin_room = match self.stdin_proxy {
            Some(p) => self.proxies[p].open && self.proxies[p].out.len() < MAX_PROXY_BACKLOG,
            None => self.stdin.dst.is_some() && self.stdin.buf.len() < READ_CHUNK,
        };
        if self.stdin.src_open && stdin_room {
            fds.push(PollFd::new(stdin_fd.as_fd(), input));
            toks.push(Token::StdinSrc);
        }
        if let Some(dst) = &self.stdin.dst {
            if !self.stdin.buf.is_empty() {
                fds.push(PollFd::new(dst.as_fd(), PollFlags::POLLOUT));
                toks.push(Token::StdinDst);
            }
        }
        let ms = timeout.as_millis().min(60_000) as u16;
        match nix::poll::poll(&mut fds, PollTimeout::from(ms)) {
            Ok(0) | Err(_) => Vec::new(),
            Ok(_) => fds
                .iter()
                .zip(toks)
                .filter_map(|(p, t)| p.revents().filter(|r| !r.is_empty()).map(|r| (t, r)))
                .collect(),
        }
    }

    fn handle(&mut self, tok: Token, flags: PollFlags, buf: &mut [u8]) {
        match tok {
            Token::Signal => {
                for sig in signals::drain(&self.sigfd) {
                    if sig != libc::SIGCHLD {
                        self.interrupted(sig);
                    }
                }
            }
            Token::Pmi(i) => {
                if flags.contains(PollFlags::POLLOUT) {
                    self.flush_pmi(i);
                }
                if flags.intersects(PollFlags::POLLIN | PollFlags::POLLHUP | PollFlags::POLLERR) {
                    self.read_pmi(i, buf, false);
                }
            }
            Token::Out(i) => self.read_stream(i, false, buf, false),
            Token::Err(i) => self.read_stream(i, true, buf, false),
            Token::StdinSrc => self.read_stdin(),
            Token::StdinDst => self.write_stdin(),
            Token::Proxy(p) => {
                if flags.contains(PollFlags::POLLOUT) {
                    self.flush_proxy(p);
                }
                if flags.intersects(PollFlags::POLLIN | PollFlags::POLLHUP | PollFlags::POLLERR) {
                    self.read_proxy(p, buf);
                }
            }
        }
    }

    fn flush_proxy(&mut self, p: usize) {
        let link = &mut self.proxies[p];
        while link.open && !link.out.is_empty() {
            match link.sock.write(&link.out) {
                Ok(n) => {
                    link.out.drain(..n);
                }
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => {
                    let reason = format!("connection broken: {e}");
                    self.proxy_lost(p, &reason);
                    return;
                }
            }
        }
    }

    fn read_proxy(&mut self, p: usize, buf: &mut [u8]) {
        loop {
            let link = &mut self.proxies[p];
            if !link.open {
                return;
            }
            match link.sock.read(buf) {
                Ok(0) => {
                    self.drain_proxy(p);
                    self.proxy_lost(p, "its connection closed");
                    return;
                }
                Ok(n) => link.dec.push(&buf[..n]),
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => {
                    self.drain_proxy(p);
                    let reason = format!("connection broken: {e}");
                    self.proxy_lost(p, &reason);
                    return;
                }
            }
        }
        self.drain_proxy(p);
    }

    /// Handles every complete message received from proxy `p`.
    fn drain_proxy(&mut self, p: usize) {
        loop {
            let m = match self.proxies[p].dec.next() {
                Ok(Some(m)) => m,
                Ok(None) => return,
                Err(e) => {
                    let reason = format!("sent a malformed message: {e}");
                    self.proxy_lost(p, &reason);
                    return;
                }
            };
            let rank_of = |ranks: &[RankProc], r: u32| {
                ranks
                    .iter()
                    .position(|x| x.rank == r && x.remote.as_ref().is_some_and(|o| o.proxy == p))
            };
            match m {
                Msg::Pmi { rank, data } => {
                    if let Some(i) = rank_of(&self.ranks, rank) {
                        let conn = self.ranks[i].conn;
                        self.server.receive(conn, &data);
                    }
                }
                Msg::Out { rank, stream, data } => {
                    if let (Some(i), 1..=2) = (rank_of(&self.ranks, rank), stream) {
                        let s = stream as usize - 1;
                        let mut out = Vec::new();
                        if let Some(rm) = self.ranks[i].remote.as_mut() {
                            rm.split[s].push(&data, &mut out);
                            rm.partial_since[s] = rm.split[s].has_partial().then(Instant::now);
                        }
                        self.emit(s == 1, &out);
                    }
                }
                Msg::Started { rank, pid } => {
                    if let Some(i) = rank_of(&self.ranks, rank) {
                        self.ranks[i].pid = pid;
                        let host = self.proxies[p].host.clone();
                        self.verbose(format!("rank {rank}: pid {pid} on {host}"));
                    }
                }
                Msg::Exited {
                    rank,
                    signaled,
                    code,
                } => {
                    if let Some(i) = rank_of(&self.ranks, rank) {
                        if self.ranks[i].ended.is_none() {
                            self.finish_remote_output(i);
                            let conn = self.ranks[i].conn;
                            self.server.close(conn);
                            let term = if signaled {
                                Termination::Signaled(code)
                            } else {
                                Termination::Exited(code)
                            };
                            self.rank_ended(i, term);
                        }
                    }
                }
                Msg::LaunchFailed { rank, error } => {
                    let host = self.proxies[p].host.clone();
                    self.fail(Cause::LaunchFailed {
                        rank,
                        program: format!("on host {host}"),
                        error,
                    });
                }
                Msg::Spec(_) | Msg::Kill { .. } | Msg::Stdin { .. } => {
                    self.proxy_lost(p, "sent a message only mpiexec may send");
                    return;
                }
            }
        }
    }

    fn finish_remote_output(&mut self, i: usize) {
        let mut outs = [Vec::new(), Vec::new()];
        if let Some(rm) = self.ranks[i].remote.as_mut() {
            for (s, out) in outs.iter_mut().enumerate() {
                rm.split[s].finish(out);
                rm.partial_since[s] = None;
            }
        }
        self.emit(false, &outs[0]);
        self.emit(true, &outs[1]);
    }

    /// The proxy of a host is gone: its ranks count as ended and the job fails unless
    /// they had all ended already.
    fn proxy_lost(&mut self, p: usize, reason: &str) {
        if !self.proxies[p].open {
            return;
        }
        self.proxies[p].open = false;
        let host = self.proxies[p].host.clone();
        let running: Vec<u32> = self
            .ranks
            .iter()
            .filter(|r| r.ended.is_none() && r.remote.as_ref().is_some_and(|o| o.proxy == p))
            .map(|r| r.rank)
            .collect();
        if running.is_empty() {
            return;
        }
        self.fail(Cause::HostLost {
            host,
            reason: reason.to_string(),
            ranks: running.clone(),
        });
        for i in 0..self.ranks.len() {
            if running.contains(&self.ranks[i].rank) {
                self.finish_remote_output(i);
                self.ranks[i].ended = Some(Termination::Signaled(libc::SIGKILL));
                let conn = self.ranks[i].conn;
                self.server.close(conn);
            }
        }
    }

    fn interrupted(&mut self, sig: i32) {
        let Ok(s) = Signal::try_from(sig) else { return };
        if self.cause.is_none() {
            self.fail_with_signal(Cause::Interrupted { signal: sig }, s);
        } else {
            // A second interrupt: no more grace.
            self.signal_group(Signal::SIGKILL);
            self.kill_at = None;
        }
    }

    /// Reads PMI input of rank `i`: once, or until nothing is left when `drain`.
    fn read_pmi(&mut self, i: usize, buf: &mut [u8], drain: bool) {
        loop {
            let Some(fd) = self.ranks[i].pmi.as_ref().map(|f| f.as_raw_fd()) else {
                return;
            };
            match read_some(fd, buf) {
                Ok(Some(0)) | Err(_) => {
                    let conn = self.ranks[i].conn;
                    self.server.close(conn);
                    self.ranks[i].pmi = None;
                    return;
                }
                Ok(Some(n)) => {
                    let conn = self.ranks[i].conn;
                    self.server.receive(conn, &buf[..n]);
                }
                Ok(None) => return,
            }
            if !drain {
                return;
            }
        }
    }

    fn flush_pmi(&mut self, i: usize) {
        let conn = self.ranks[i].conn;
        if let Some(p) = self.ranks[i].remote.as_ref().map(|r| r.proxy) {
            let data = self.server.output(conn).to_vec();
            if !data.is_empty() {
                self.server.consume_output(conn, data.len());
                let rank = self.ranks[i].rank;
                self.send_proxy(p, &Msg::Pmi { rank, data });
            }
            return;
        }
        let Some(fd) = self.ranks[i].pmi.as_ref().map(|f| f.as_raw_fd()) else {
            return;
        };
        loop {
            let out = self.server.output(conn);
            if out.is_empty() {
                return;
            }
            match send(fd, out, MsgFlags::MSG_NOSIGNAL | MsgFlags::MSG_DONTWAIT) {
                Ok(n) => self.server.consume_output(conn, n),
                Err(Errno::EINTR) => {}
                Err(Errno::EAGAIN) => return,
                Err(_) => {
                    self.server.close(conn);
                    self.ranks[i].pmi = None;
                    return;
                }
            }
        }
    }

    fn read_stream(&mut self, i: usize, is_err: bool, buf: &mut [u8], drain: bool) {
        loop {
            let r = &mut self.ranks[i];
            let slot = if is_err { &mut r.stderr } else { &mut r.stdout };
            let Some(s) = slot.as_mut() else { return };
            match read_some(s.fd.as_raw_fd(), buf) {
                Ok(Some(0)) | Err(_) => {
                    self.close_stream(i, is_err);
                    return;
                }
                Ok(Some(n)) => {
                    let mut out = Vec::new();
                    s.split.push(&buf[..n], &mut out);
                    s.partial_since = s.split.has_partial().then(Instant::now);
                    self.emit(is_err, &out);
                }
                Ok(None) => return,
            }
            if !drain {
                return;
            }
        }
    }

    fn close_stream(&mut self, i: usize, is_err: bool) {
        let r = &mut self.ranks[i];
        let slot = if is_err { &mut r.stderr } else { &mut r.stdout };
        if let Some(mut s) = slot.take() {
            let mut out = Vec::new();
            s.split.finish(&mut out);
            self.emit(is_err, &out);
        }
    }

    fn emit(&mut self, is_err: bool, data: &[u8]) {
        if is_err {
            self.write_stderr(data);
        } else {
            self.write_stdout(data);
        }
    }

    fn read_stdin(&mut self) {
        if let Some(p) = self.stdin_proxy {
            let mut tmp = vec![0u8; READ_CHUNK];
            match nix::unistd::read(0, &mut tmp) {
                Ok(n) if n > 0 => self.send_proxy(
                    p,
                    &Msg::Stdin {
                        data: tmp[..n].to_vec(),
                    },
                ),
                Err(Errno::EINTR) | Err(Errno::EAGAIN) => {}
                _ => {
                    self.stdin.src_open = false;
                    self.send_proxy(p, &Msg::Stdin { data: Vec::new() });
                }
            }
            return;
        }
        let mut tmp = vec![0u8; READ_CHUNK - self.stdin.buf.len()];
        match nix::unistd::read(0, &mut tmp) {
            Ok(0) => {
                self.stdin.src_open = false;
                if self.stdin.buf.is_empty() {
                    self.stdin.dst = None;
                }
            }
            Ok(n) => {
                self.stdin.buf.extend_from_slice(&tmp[..n]);
                self.write_stdin();
            }
            Err(Errno::EINTR) | Err(Errno::EAGAIN) => {}
            Err(_) => {
                self.stdin.src_open = false;
                if self.stdin.buf.is_empty() {
                    self.stdin.dst = None;
                }
            }
        }
    }

    fn write_stdin(&mut self) {
        let Some(dst) = self.stdin.dst.as_ref() else {
            self.stdin.buf.clear();
            return;
        };
        while !self.stdin.buf.is_empty() {
            match nix::unistd::write(dst, &self.stdin.buf) {
                Ok(n) => {
                    self.stdin.buf.drain(..n);
                }
                Err(Errno::EINTR) => {}
                Err(Errno::EAGAIN) => return,
                Err(_) => {
                    // Rank 0 closed its stdin or ended: stop forwarding.
                    self.stdin.dst = None;
                    self.stdin.src_open = false;
                    self.stdin.buf.clear();
                    return;
                }
            }
        }
        if !self.stdin.src_open {
            self.stdin.dst = None;
        }
    }

    /// Collects spawned jobs that ended; one that failed fails this job.
    fn reap_spawned(&mut self) {
        for i in 0..self.spawned.len() {
            if self.spawned[i].ended.is_some() {
                continue;
            }
            let term = match waitpid(
                Pid::from_raw(self.spawned[i].pid),
                Some(WaitPidFlag::WNOHANG),
            ) {
                Ok(WaitStatus::Exited(_, code)) => Termination::Exited(code),
                Ok(WaitStatus::Signaled(_, sig, _)) => Termination::Signaled(sig as i32),
                Ok(_) | Err(Errno::EINTR) => continue,
                Err(_) => Termination::Exited(255),
            };
            self.spawned[i].ended = Some(term);
            if let Some(s) = &self.spawn_slots {
                s.release(self.spawned[i].procs());
            }
            let kvsname = self.spawned[i].kvsname.clone();
            self.verbose(format!("spawned job {kvsname} ended: {term:?}"));
            if term != Termination::Exited(0) {
                self.fail(Cause::SpawnedJobFailed { kvsname, how: term });
            }
        }
        self.spawned
            .retain(|j| j.ended != Some(Termination::Exited(0)));
    }

    /// Collects ranks that ended. The group leader is only peeked at.
    fn reap(&mut self) {
        self.reap_spawned();
        for i in 0..self.ranks.len() {
            if self.ranks[i].ended.is_some() || self.ranks[i].remote.is_some() {
                continue;
            }
            let pid = Pid::from_raw(self.ranks[i].pid);
            let leader = Some(self.ranks[i].pid) == self.pgid;
            let status = if leader {
                waitid(
                    Id::Pid(pid),
                    WaitPidFlag::WEXITED | WaitPidFlag::WNOHANG | WaitPidFlag::WNOWAIT,
                )
            } else {
                waitpid(pid, Some(WaitPidFlag::WNOHANG))
            };
            let term = match status {
                Ok(WaitStatus::Exited(_, code)) => Termination::Exited(code),
                Ok(WaitStatus::Signaled(_, sig, _)) => Termination::Signaled(sig as i32),
                Ok(_) => continue,
                Err(Errno::EINTR) => continue,
                Err(e) => {
                    self.verbose(format!("cannot wait for rank {}: {e}", self.ranks[i].rank));
                    Termination::Exited(255)
                }
            };
            self.rank_ended(i, term);
        }
    }

    fn reap_leader(&mut self) {
        if let Some(pg) = self.pgid {
            while let Err(Errno::EINTR) = waitpid(Pid::from_raw(pg), None) {}
        }
    }

    fn rank_ended(&mut self, i: usize, term: Termination) {
        self.ranks[i].ended = Some(term);
        let (rank, pid) = (self.ranks[i].rank, self.ranks[i].pid);
        self.verbose(format!("rank {rank} (pid {pid}) ended: {term:?}"));
        // Everything the rank wrote before it ended is in its socket and pipes now.
        let mut buf = vec![0u8; READ_CHUNK];
        self.read_pmi(i, &mut buf, true);
        if let Some(fd) = self.ranks[i].pmi.take() {
            drop(fd);
            self.server.close(self.ranks[i].conn);
        }
        self.read_stream(i, false, &mut buf, true);
        self.read_stream(i, true, &mut buf, true);
        self.process_events();
        if self.cause.is_none() {
            let st = self.server.rank_state(rank).unwrap_or_default();
            if let Some(c) = judge_exit(rank, pid, term, st.initialized, st.finalized) {
                self.fail(c);
            }
        }
    }

    fn process_events(&mut self) {
        while let Some(ev) = self.server.poll_event() {
            match ev {
                Event::Initialized { rank, version, .. } => {
                    self.verbose(format!("rank {rank} initialized PMI ({version:?})"))
                }
                Event::Finalized { rank, .. } => self.verbose(format!("rank {rank} finalized PMI")),
                Event::FenceCompleted { epoch } => self.verbose(format!("fence {epoch} completed")),
                Event::Aborted {
                    rank,
                    code,
                    message,
                    ..
                } => self.fail(Cause::Aborted {
                    rank,
                    code,
                    message,
                }),
                Event::Spawn {
                    conn,
                    rank,
                    request,
                } => {
                    let outcome = self.spawn_job(rank, &request);
                    if let Err(e) = &outcome {
                        self.verbose(format!("rank {rank}: spawn refused: {e}"));
                    }
                    self.server.spawn_done(conn, outcome);
                }
                Event::ProtocolError { conn, rank, reason } => {
                    let (rank, pid) = self
                        .ranks
                        .iter()
                        .find(|r| r.conn == conn)
                        .map_or((rank.unwrap_or(0), 0), |r| (r.rank, r.pid));
                    self.fail(Cause::Protocol { rank, pid, reason });
                }
            }
        }
    }

    /// Work after any input: server events, PMI replies, stuck fences.
    fn after_activity(&mut self) {
        self.process_events();
        for i in 0..self.ranks.len() {
            if !self.server.output(self.ranks[i].conn).is_empty() {
                self.flush_pmi(i);
            }
        }
        if self.cause.is_none() {
            let waiting = self.server.ranks_in_fence();
            if !waiting.is_empty() {
                let gone = self
                    .ranks
                    .iter()
                    .find(|r| r.ended.is_some() && !waiting.contains(&r.rank))
                    .map(|r| (r.rank, r.pid, r.ended.unwrap_or(Termination::Exited(0))));
                if let Some((rank, pid, how)) = gone {
                    self.fail(Cause::FenceAbandoned { rank, pid, how });
                }
            }
        }
    }

    fn timers(&mut self) {
        let now = Instant::now();
        if let Some(t) = self.kill_at {
            if now >= t {
                self.kill_at = None;
                if !self.all_ended() {
                    self.signal_group(Signal::SIGKILL);
                }
            }
        }
        if let Some(t) = self.deadline {
            if now >= t {
                self.deadline = None;
                let secs = self.opts.timeout_secs.unwrap_or(0);
                self.fail(Cause::Timeout { secs });
            }
        }
        for i in 0..self.ranks.len() {
            let mut outs = [Vec::new(), Vec::new()];
            if let Some(rm) = self.ranks[i].remote.as_mut() {
                for (s, out) in outs.iter_mut().enumerate() {
                    if rm.partial_since[s].is_some_and(|t| now >= t + PARTIAL_LINE_DELAY) {
                        rm.split[s].flush_partial(out);
                        rm.partial_since[s] = None;
                    }
                }
            }
            self.emit(false, &outs[0]);
            self.emit(true, &outs[1]);
            for is_err in [false, true] {
                let r = &mut self.ranks[i];
                let slot = if is_err { &mut r.stderr } else { &mut r.stdout };
                let Some(s) = slot.as_mut() else { continue };
                if s.partial_since
                    .is_some_and(|t| now >= t + PARTIAL_LINE_DELAY)
                {
                    let mut out = Vec::new();
                    s.split.flush_partial(&mut out);
                    s.partial_since = None;
                    self.emit(is_err, &out);
                }
            }
        }
    }
}
