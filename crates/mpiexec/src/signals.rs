//! The signals mpiexec handles, delivered through a signalfd so the event loop can poll
//! them: SIGCHLD (a rank ended) and the termination signals it forwards to the job.

use nix::sys::signal::{SigSet, SigmaskHow, Signal};
use nix::sys::signalfd::{SfdFlags, SignalFd};

/// Signals that end the job and are forwarded to the ranks.
pub const FORWARDED: [Signal; 4] = [
    Signal::SIGINT,
    Signal::SIGTERM,
    Signal::SIGHUP,
    Signal::SIGQUIT,
];

/// Blocks SIGCHLD and [`FORWARDED`] and returns a non-blocking signalfd for them. Ranks
/// unblock everything again before exec.
pub fn install() -> nix::Result<SignalFd> {
    let mut set = SigSet::empty();
    set.add(Signal::SIGCHLD);
    for s in FORWARDED {
        set.add(s);
    }
    nix::sys::signal::sigprocmask(SigmaskHow::SIG_BLOCK, Some(&set), None)?;
    SignalFd::with_flags(&set, SfdFlags::SFD_NONBLOCK | SfdFlags::SFD_CLOEXEC)
}

/// Reads every pending signal number from the signalfd.
pub fn drain(fd: &SignalFd) -> Vec<i32> {
    let mut got = Vec::new();
    while let Ok(Some(info)) = fd.read_signal() {
        got.push(info.ssi_signo as i32);
    }
    got
}
