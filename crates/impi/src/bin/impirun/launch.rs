//! `impirun -client` running a program: after the startup and the dance, starts the
//! client's ranks with `mpiexec` (the one next to `impirun`, else the first on `PATH`)
//! and hands each rank, when its `MPI_Init` asks through the unix socket named by
//! `OXMPI_IMPI`, the job description and its host's channels (`SCM_RIGHTS`). Every rank
//! is its own IMPI host (docs/impi.md, "Data path"); the ranks run the data transfer and
//! the finalization of their channels themselves, so this process keeps nothing on the
//! data path and only waits for `mpiexec`.
//!
//! The exchange on the socket: the rank sends `rank <PMI rank>\n`; impirun answers a
//! 4-byte little-endian length and the description (lines, see [`description`]), then
//! the channels' descriptors in batches of at most [`FDS_PER_MESSAGE`], each batch
//! attached to one byte, in the order of the description's `chan` lines.

use std::io::{ErrorKind, IoSlice, Read, Write};
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::fs::DirBuilderExt;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use nix::sys::socket::{getsockopt, sendmsg, sockopt::PeerCredentials, ControlMessage, MsgFlags};
use oxmpi_impi::Job;

use crate::args::ClientArgs;
use crate::client::{Channel, Fail};

/// The kernel's limit of descriptors in one `SCM_RIGHTS` message.
const FDS_PER_MESSAGE: usize = 253;

/// The description a rank receives: its place, the job's negotiated values, every host
/// and proc, and the hosts whose channels follow.
pub fn description(job: &Job, world: u32, my_host: u32, chans: &[u32]) -> String {
    let mut s = String::new();
    s.push_str("oxmpi-impi 1\n");
    s.push_str(&format!("me {world} {my_host}\n"));
    s.push_str(&format!("size {}\n", job.procs.len()));
    s.push_str(&format!("maxdatalen {}\n", job.maxdatalen));
    s.push_str(&format!("tagub {}\n", job.tag_ub));
    s.push_str(&format!("coll {} {}\n", job.coll_xsize, job.coll_maxlinear));
    for (i, h) in job.hosts.iter().enumerate() {
        s.push_str(&format!(
            "host {i} {} {} {}\n",
            h.client, h.ackmark, h.hiwater
        ));
    }
    for (i, p) in job.procs.iter().enumerate() {
        let hex: String = p.id.hostid.iter().map(|b| format!("{b:02x}")).collect();
        s.push_str(&format!("proc {i} {} {hex} {}\n", p.host, p.id.pid));
    }
    for h in chans {
        s.push_str(&format!("chan {h}\n"));
    }
    s
}

fn mpiexec_path() -> PathBuf {
    std::env::current_exe()
        .ok()
        .and_then(|p| p.parent().map(|d| d.join("mpiexec")))
        .filter(|p| p.is_file())
        .unwrap_or_else(|| PathBuf::from("mpiexec"))
}

/// A private directory for the socket, removed on drop.
struct TempDir(PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn private_dir() -> Result<TempDir, Fail> {
    let base = std::env::temp_dir();
    for i in 0..100u32 {
        let p = base.join(format!("oxmpi-impi-{}-{i}", std::process::id()));
        match std::fs::DirBuilder::new().mode(0o700).create(&p) {
            Ok(()) => return Ok(TempDir(p)),
            Err(e) if e.kind() == ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(Fail(format!("cannot create {}: {e}", p.display()))),
        }
    }
    Err(Fail(format!(
        "no free directory name in {}",
        base.display()
    )))
}

/// Starts the program and serves its ranks; returns mpiexec's exit status.
pub fn run(a: &ClientArgs, job: &Job, chans: Vec<Channel>) -> Result<i32, Fail> {
    let me = &job.clients[job.my_client as usize];
    let dir = private_dir()?;
    let path = dir.0.join("sock");
    let listener = UnixListener::bind(&path)
        .map_err(|e| Fail(format!("cannot listen on {}: {e}", path.display())))?;
    listener.set_nonblocking(true)?;
    let mut by_rank: Vec<Vec<Channel>> = (0..me.nprocs).map(|_| Vec::new()).collect();
    for c in chans {
        let r = job.hosts[c.mine as usize].first_proc - me.first_proc;
        by_rank[r as usize].push(c);
    }
    let mut served = vec![false; me.nprocs as usize];
    let mut child = Command::new(mpiexec_path())
        .args(&a.mpiexec_args)
        .env("OXMPI_IMPI", &path)
        .spawn()
        .map_err(|e| Fail(format!("cannot start {}: {e}", mpiexec_path().display())))?;
    let uid = nix::unistd::geteuid().as_raw();
    loop {
        if let Some(st) = child.try_wait()? {
            return Ok(st.code().unwrap_or(1));
        }
        match listener.accept() {
            Ok((s, _)) => {
                let ok = getsockopt(&s, PeerCredentials).is_ok_and(|c| c.uid() == uid);
                if !ok {
                    continue;
                }
                if let Err(e) = serve(job, me.first_proc, s, &mut by_rank, &mut served) {
                    eprintln!(
                        "impirun: client {}: a rank's IMPI join failed: {e}",
                        job.my_client
                    );
                }
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock || e.kind() == ErrorKind::Interrupted => {
                std::thread::sleep(Duration::from_millis(2));
            }
            Err(e) => return Err(Fail(format!("accepting on {}: {e}", path.display()))),
        }
    }
}

fn serve(
    job: &Job,
    first: u32,
    mut s: UnixStream,
    by_rank: &mut [Vec<Channel>],
    served: &mut [bool],
) -> Result<(), String> {
    s.set_nonblocking(false).map_err(|e| e.to_string())?;
    s.set_read_timeout(Some(Duration::from_secs(10)))
        .map_err(|e| e.to_string())?;
    let mut line = Vec::new();
    let mut b = [0u8; 1];
    while line.len() < 32 {
        s.read_exact(&mut b)
            .map_err(|e| format!("reading its rank: {e}"))?;
        if b[0] == b'\n' {
            break;
        }
        line.push(b[0]);
    }
    let text = String::from_utf8_lossy(&line).into_owned();
    let r: usize = text
        .strip_prefix("rank ")
        .and_then(|v| v.parse().ok())
        .filter(|&r: &usize| r < served.len())
        .ok_or_else(|| format!("it sent {text:?}, not a rank of this client"))?;
    if served[r] {
        return Err(format!("rank {r} asked twice"));
    }
    served[r] = true;
    let chans = std::mem::take(&mut by_rank[r]);
    let world = first + r as u32;
    let my_host = job.procs[world as usize].host;
    let hosts: Vec<u32> = chans.iter().map(|c| c.other).collect();
    let d = description(job, world, my_host, &hosts);
    let mut msg = (d.len() as u32).to_le_bytes().to_vec();
    msg.extend_from_slice(d.as_bytes());
    s.write_all(&msg)
        .map_err(|e| format!("sending rank {r} its description: {e}"))?;
    let fds: Vec<RawFd> = chans.iter().map(|c| c.stream.as_raw_fd()).collect();
    for batch in fds.chunks(FDS_PER_MESSAGE) {
        let cmsg = [ControlMessage::ScmRights(batch)];
        sendmsg::<()>(
            s.as_raw_fd(),
            &[IoSlice::new(b"f")],
            &cmsg,
            MsgFlags::MSG_NOSIGNAL,
            None,
        )
        .map_err(|e| format!("sending rank {r} its channels: {e}"))?;
    }
    // The rank holds its own copies now; ours close with `chans`.
    drop(chans);
    Ok(())
}
