//! Proxy mode (`mpiexec --proxy HEAD:PORT --proxy-id N`, started on each host by the
//! launcher command): reads the job secret from stdin, connects to the head mpiexec and
//! authenticates, receives its share of the job, starts those ranks, and relays their
//! PMI traffic, output and exits to the head (the head serves PMI for the whole job).
//! It kills its ranks when the head says so, when the head's connection breaks, or when
//! it is signalled itself.

use crate::auth;
use crate::launch::{self, JobIdentity, RankLaunch};
use crate::signals;
use crate::wire::{self, Decoder, Msg, ProxySpec};
use nix::errno::Errno;
use nix::poll::{PollFd, PollFlags, PollTimeout};
use nix::sys::signal::{killpg, Signal};
use nix::sys::wait::{waitid, waitpid, Id, WaitPidFlag, WaitStatus};
use nix::unistd::Pid;
use std::ffi::OsString;
use std::io::{BufRead, Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::time::Duration;

/// Output held for the head before the proxy stops reading its ranks' output.
const MAX_BACKLOG: usize = 4 << 20;
const CHUNK: usize = 64 * 1024;

struct Local {
    rank: u32,
    pid: i32,
    pmi: Option<OwnedFd>,
    pmi_out: Vec<u8>,
    out: [Option<OwnedFd>; 2],
    ended: bool,
}

fn fail(msg: &str) -> i32 {
    eprintln!("mpiexec proxy: {msg}");
    1
}

fn nonblocking(fd: &impl AsRawFd) {
    // SAFETY: F_GETFL/F_SETFL on a descriptor this process owns.
    unsafe {
        let fl = libc::fcntl(fd.as_raw_fd(), libc::F_GETFL);
        libc::fcntl(fd.as_raw_fd(), libc::F_SETFL, fl | libc::O_NONBLOCK);
    }
}

fn read_some(fd: &impl AsRawFd, buf: &mut [u8]) -> Option<usize> {
    loop {
        match nix::unistd::read(fd.as_raw_fd(), buf) {
            Ok(n) => return Some(n),
            Err(Errno::EINTR) => continue,
            Err(Errno::EAGAIN) => return None,
            Err(_) => return Some(0),
        }
    }
}

/// Runs the proxy; returns its exit status.
pub fn run(head: &str, id: u32) -> i32 {
    let mut line = String::new();
    let _ = std::io::stdin().lock().take(512).read_line(&mut line);
    let secret = line.trim().to_string();
    if secret.is_empty() {
        return fail("no job secret on standard input");
    }
    let Some(addr) = head.to_socket_addrs().ok().and_then(|mut a| a.next()) else {
        return fail(&format!("bad head address {head:?}"));
    };
    let mut sock = match TcpStream::connect_timeout(&addr, Duration::from_secs(30)) {
        Ok(s) => s,
        Err(e) => return fail(&format!("cannot connect to mpiexec at {addr}: {e}")),
    };
    let _ = sock.set_nodelay(true);
    let _ = sock.set_read_timeout(Some(Duration::from_secs(30)));
    if let Err(e) = auth::proxy_side(&mut sock, secret.as_bytes(), id) {
        return fail(&format!(
            "authentication with mpiexec at {addr} failed: {e}"
        ));
    }
    let mut dec = Decoder::default();
    let spec = loop {
        match dec.next() {
            Ok(Some(Msg::Spec(s))) => break s,
            Ok(Some(m)) => return fail(&format!("unexpected first message {m:?}")),
            Ok(None) => {}
            Err(e) => return fail(&format!("bad message from mpiexec: {e}")),
        }
        let mut b = [0u8; 4096];
        match sock.read(&mut b) {
            Ok(0) | Err(_) => return fail("mpiexec closed the connection before sending the job"),
            Ok(n) => dec.push(&b[..n]),
        }
    };
    let sigfd = match signals::install() {
        Ok(fd) => fd,
        Err(e) => return fail(&format!("cannot set up signal handling: {e}")),
    };
    let _ = sock.set_read_timeout(None);
    let _ = sock.set_nonblocking(true);
    Proxy {
        sock,
        dec,
        outbuf: Vec::new(),
        ranks: Vec::new(),
        pgid: None,
        stdin: None,
    }
    .serve(&spec, &sigfd)
}

struct Proxy {
    sock: TcpStream,
    dec: Decoder,
    outbuf: Vec<u8>,
    ranks: Vec<Local>,
    pgid: Option<i32>,
    stdin: Option<OwnedFd>,
}

#[derive(Clone, Copy)]
enum Tok {
    Head,
    Sig,
    Pmi(usize),
    Out(usize, usize),
}

impl Proxy {
    fn send(&mut self, m: &Msg) {
        self.outbuf.extend(wire::encode(m));
    }

    fn start(&mut self, spec: &ProxySpec) {
        let ident = JobIdentity {
            kvsname: spec.kvsname.clone(),
            secret: spec.secret.clone(),
            size: spec.size,
            spawned: spec.spawned,
        };
        let nlocal = spec.ranks.len() as u32;
        for (i, &(rank, app)) in spec.ranks.iter().enumerate() {
            let a = &spec.apps[app as usize];
            let env: Vec<(OsString, OsString)> = a
                .env
                .iter()
                .map(|(k, v)| (OsString::from(k), OsString::from(v)))
                .collect();
            let path = env
                .iter()
                .find(|(k, _)| k == "PATH")
                .map(|(_, v)| v.clone());
            let app_spec = crate::args::AppSpec {
                nprocs: 1,
                program: a.program.clone(),
                args: a.args.clone(),
                env: Vec::new(),
                env_mode: None,
                wdir: a.wdir.clone().map(Into::into),
            };
            let started = launch::resolve_program(&a.program, path.as_ref())
                .map_err(|e| e.to_string())
                .and_then(|resolved| {
                    let l = RankLaunch {
                        rank,
                        app: &app_spec,
                        resolved: &resolved,
                        pgid: self.pgid,
                        stdin_pipe: rank == 0 && spec.stdin_rank0,
                        local: (i as u32, nlocal),
                    };
                    launch::spawn_rank(&ident, &l, &env, None).map_err(|e| e.to_string())
                });
            match started {
                Ok(st) => {
                    self.pgid.get_or_insert(st.pid);
                    for fd in [&st.pmi, &st.stdout, &st.stderr] {
                        nonblocking(fd);
                    }
                    if let Some(i) = &st.stdin {
                        nonblocking(i);
                    }
                    self.stdin = self.stdin.take().or(st.stdin);
                    self.send(&Msg::Started { rank, pid: st.pid });
                    self.ranks.push(Local {
                        rank,
                        pid: st.pid,
                        pmi: Some(st.pmi),
                        pmi_out: Vec::new(),
                        out: [Some(st.stdout), Some(st.stderr)],
                        ended: false,
                    });
                }
                Err(error) => {
                    self.send(&Msg::LaunchFailed { rank, error });
                    return;
                }
            }
        }
    }

    fn kill(&self, sig: Signal) {
        if let Some(pg) = self.pgid {
            let _ = killpg(Pid::from_raw(pg), sig);
        }
    }

    fn serve(mut self, spec: &ProxySpec, sigfd: &nix::sys::signalfd::SignalFd) -> i32 {
        self.start(spec);
        // Messages that came with the job description (stdin, say) are already buffered.
        if !self.handle_messages() {
            return self.head_lost();
        }
        let mut buf = vec![0u8; CHUNK];
        loop {
            self.reap(&mut buf);
            if self.ranks.iter().all(|r| r.ended) && self.outbuf.is_empty() {
                break;
            }
            let ready = self.wait(sigfd);
            for (tok, fl) in ready {
                match tok {
                    Tok::Head => {
                        if fl.contains(PollFlags::POLLOUT) && !self.flush_head() {
                            return self.head_lost();
                        }
                        if fl
                            .intersects(PollFlags::POLLIN | PollFlags::POLLHUP | PollFlags::POLLERR)
                            && !self.read_head(&mut buf)
                        {
                            return self.head_lost();
                        }
                    }
                    Tok::Sig => {
                        for s in signals::drain(sigfd) {
                            if s != libc::SIGCHLD {
                                self.kill(Signal::SIGKILL);
                                return 128 + s;
                            }
                        }
                    }
                    Tok::Pmi(i) => {
                        if fl.contains(PollFlags::POLLOUT) {
                            self.write_pmi(i);
                        }
                        if fl
                            .intersects(PollFlags::POLLIN | PollFlags::POLLHUP | PollFlags::POLLERR)
                        {
                            self.read_pmi(i, &mut buf);
                        }
                    }
                    Tok::Out(i, s) => self.read_out(i, s, &mut buf),
                }
            }
            if !self.outbuf.is_empty() && !self.flush_head() {
                return self.head_lost();
            }
        }
        // Everything reported: give the head a moment to read, then leave.
        let _ = self.sock.set_nonblocking(false);
        let _ = self.sock.flush();
        0
    }

    fn head_lost(&self) -> i32 {
        self.kill(Signal::SIGKILL);
        fail("lost the connection to mpiexec; killed the local ranks")
    }

    fn wait(&self, sigfd: &nix::sys::signalfd::SignalFd) -> Vec<(Tok, PollFlags)> {
        let mut fds = Vec::new();
        let mut toks = Vec::new();
        let mut hf = PollFlags::POLLIN;
        if !self.outbuf.is_empty() {
            hf |= PollFlags::POLLOUT;
        }
        fds.push(PollFd::new(self.sock.as_fd(), hf));
        toks.push(Tok::Head);
        fds.push(PollFd::new(sigfd.as_fd(), PollFlags::POLLIN));
        toks.push(Tok::Sig);
        let backlog_ok = self.outbuf.len() < MAX_BACKLOG;
        for (i, r) in self.ranks.iter().enumerate() {
            if let Some(p) = &r.pmi {
                let mut f = PollFlags::empty();
                if backlog_ok {
                    f |= PollFlags::POLLIN;
                }
                if !r.pmi_out.is_empty() {
                    f |= PollFlags::POLLOUT;
                }
                fds.push(PollFd::new(p.as_fd(), f));
                toks.push(Tok::Pmi(i));
            }
            for (s, o) in r.out.iter().enumerate() {
                if let (Some(o), true) = (o, backlog_ok) {
                    fds.push(PollFd::new(o.as_fd(), PollFlags::POLLIN));
                    toks.push(Tok::Out(i, s));
                }
            }
        }
        match nix::poll::poll(&mut fds, PollTimeout::from(250u16)) {
            Ok(0) | Err(_) => Vec::new(),
            Ok(_) => fds
                .iter()
                .zip(toks)
                .filter_map(|(p, t)| p.revents().filter(|r| !r.is_empty()).map(|r| (t, r)))
                .collect(),
        }
    }

    fn flush_head(&mut self) -> bool {
        while !self.outbuf.is_empty() {
            match self.sock.write(&self.outbuf) {
                Ok(0) => return false,
                Ok(n) => {
                    self.outbuf.drain(..n);
                }
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return true,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => return false,
            }
        }
        true
    }

    fn read_head(&mut self, buf: &mut [u8]) -> bool {
        loop {
            match self.sock.read(buf) {
                Ok(0) => return false,
                Ok(n) => self.dec.push(&buf[..n]),
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => return false,
            }
        }
        self.handle_messages()
    }

    /// Handles the complete messages received from the head; false on a bad one.
    fn handle_messages(&mut self) -> bool {
        loop {
            match self.dec.next() {
                Ok(Some(Msg::Pmi { rank, data })) => {
                    if let Some(i) = self.ranks.iter().position(|r| r.rank == rank) {
                        self.ranks[i].pmi_out.extend_from_slice(&data);
                        self.write_pmi(i);
                    }
                }
                Ok(Some(Msg::Kill { signal })) => {
                    if let Ok(s) = Signal::try_from(signal) {
                        self.kill(s);
                    }
                }
                Ok(Some(Msg::Stdin { data })) => {
                    if data.is_empty() {
                        self.stdin = None;
                    } else if let Some(fd) = &self.stdin {
                        // Best effort: input a rank does not read is dropped when its pipe
                        // is full rather than stalling the proxy.
                        let _ = nix::unistd::write(fd, &data);
                    }
                }
                Ok(Some(_)) => {}
                Ok(None) => return true,
                Err(e) => {
                    eprintln!("mpiexec proxy: bad message from mpiexec: {e}");
                    return false;
                }
            }
        }
    }

    fn write_pmi(&mut self, i: usize) {
        let r = &mut self.ranks[i];
        let Some(fd) = &r.pmi else {
            r.pmi_out.clear();
            return;
        };
        while !r.pmi_out.is_empty() {
            match nix::sys::socket::send(
                fd.as_raw_fd(),
                &r.pmi_out,
                nix::sys::socket::MsgFlags::MSG_NOSIGNAL | nix::sys::socket::MsgFlags::MSG_DONTWAIT,
            ) {
                Ok(n) => {
                    r.pmi_out.drain(..n);
                }
                Err(Errno::EINTR) => {}
                Err(Errno::EAGAIN) => return,
                Err(_) => {
                    r.pmi_out.clear();
                    return;
                }
            }
        }
    }

    fn read_pmi(&mut self, i: usize, buf: &mut [u8]) {
        let rank = self.ranks[i].rank;
        let Some(fd) = self.ranks[i].pmi.as_ref() else {
            return;
        };
        match read_some(fd, buf) {
            Some(0) => self.ranks[i].pmi = None,
            Some(n) => {
                let data = buf[..n].to_vec();
                self.send(&Msg::Pmi { rank, data });
            }
            None => {}
        }
    }

    fn read_out(&mut self, i: usize, s: usize, buf: &mut [u8]) {
        let rank = self.ranks[i].rank;
        let Some(fd) = self.ranks[i].out[s].as_ref() else {
            return;
        };
        match read_some(fd, buf) {
            Some(0) => self.ranks[i].out[s] = None,
            Some(n) => {
                let data = buf[..n].to_vec();
                self.send(&Msg::Out {
                    rank,
                    stream: s as u8 + 1,
                    data,
                });
            }
            None => {}
        }
    }

    /// Collects ranks that ended: drains their channels, then reports the exit.
    fn reap(&mut self, buf: &mut [u8]) {
        for i in 0..self.ranks.len() {
            if self.ranks[i].ended {
                continue;
            }
            let pid = Pid::from_raw(self.ranks[i].pid);
            let leader = Some(self.ranks[i].pid) == self.pgid;
            // The group leader is only peeked at: its zombie keeps the group id reserved
            // until the end.
            let st = if leader {
                waitid(
                    Id::Pid(pid),
                    WaitPidFlag::WEXITED | WaitPidFlag::WNOHANG | WaitPidFlag::WNOWAIT,
                )
            } else {
                waitpid(pid, Some(WaitPidFlag::WNOHANG))
            };
            let (signaled, code) = match st {
                Ok(WaitStatus::Exited(_, c)) => (false, c),
                Ok(WaitStatus::Signaled(_, s, _)) => (true, s as i32),
                Ok(_) | Err(Errno::EINTR) => continue,
                Err(_) => (false, 255),
            };
            // Everything the rank wrote before it ended is in its socket and pipes.
            while self.ranks[i].pmi.is_some() {
                let before = self.outbuf.len();
                self.read_pmi(i, buf);
                if self.outbuf.len() == before {
                    break;
                }
            }
            for s in 0..2 {
                while self.ranks[i].out[s].is_some() {
                    let before = self.outbuf.len();
                    self.read_out(i, s, buf);
                    if self.outbuf.len() == before {
                        break;
                    }
                }
            }
            let r = &mut self.ranks[i];
            r.ended = true;
            r.pmi = None;
            r.out = [None, None];
            let rank = r.rank;
            self.send(&Msg::Exited {
                rank,
                signaled,
                code,
            });
        }
        if self.ranks.iter().all(|r| r.ended) {
            if let Some(pg) = self.pgid.take() {
                let _ = killpg(Pid::from_raw(pg), Signal::SIGKILL);
                while let Err(Errno::EINTR) = waitpid(Pid::from_raw(pg), None) {}
            }
        }
    }
}
