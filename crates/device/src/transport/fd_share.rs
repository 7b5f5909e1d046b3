//! Hands the node segment from the node's leader to its other ranks as a file
//! descriptor over an abstract unix socket (`SCM_RIGHTS`), so the segment never has a
//! name in `/dev/shm`: the kernel frees it when the last process holding it exits, even
//! when every rank is killed at once during start-up (the launcher's death kills its
//! ranks with `SIGKILL`).
//!
//! The socket name is `\0oxmpi-seg-<hash of kvsname>-<leader's world rank>`: abstract
//! (no file), per network namespace (the node key includes it, so all ranks of a node
//! share one). Only processes of the leader's user get the descriptor, the same rule as
//! the mode 0600 a named segment had.

use nix::sys::socket::{
    getsockopt, recvmsg, sendmsg, sockopt::PeerCredentials, ControlMessage, ControlMessageOwned,
    MsgFlags,
};
use sha2::{Digest, Sha256};
use std::io::{self, IoSlice, IoSliceMut};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};
use std::os::linux::net::SocketAddrExt;
use std::os::unix::net::{SocketAddr, UnixListener, UnixStream};
use std::time::{Duration, Instant};

/// The abstract socket name on which `leader` of job `kvsname` offers the segment.
pub fn offer_name(kvsname: &str, leader: u32) -> String {
    let h = Sha256::digest(kvsname.as_bytes());
    let hex: String = h[..8].iter().map(|b| format!("{b:02x}")).collect();
    format!("oxmpi-seg-{hex}-{leader}")
}

fn to_io(e: nix::Error) -> io::Error {
    io::Error::from_raw_os_error(e as i32)
}

/// The leader's listening socket, bound before the other ranks look for it.
pub struct FdOffer {
    listener: UnixListener,
}

impl FdOffer {
    pub fn bind(kvsname: &str, leader: u32) -> io::Result<FdOffer> {
        let addr = SocketAddr::from_abstract_name(offer_name(kvsname, leader).as_bytes())?;
        let listener = UnixListener::bind_addr(&addr)?;
        listener.set_nonblocking(true)?;
        Ok(FdOffer { listener })
    }

    /// Gives `fd` to `clients` connecting processes of this user, waiting at most
    /// `timeout` for all of them. Connections from other users are refused and do not
    /// count.
    pub fn serve(&self, fd: BorrowedFd<'_>, clients: usize, timeout: Duration) -> io::Result<()> {
        let deadline = Instant::now() + timeout;
        let uid = nix::unistd::geteuid().as_raw();
        let mut served = 0;
        while served < clients {
            match self.listener.accept() {
                Ok((stream, _)) => {
                    stream.set_nonblocking(false)?;
                    let cred = getsockopt(&stream, PeerCredentials).map_err(to_io)?;
                    if cred.uid() != uid {
                        continue;
                    }
                    let fds = [fd.as_raw_fd()];
                    let cmsg = [ControlMessage::ScmRights(&fds)];
                    sendmsg::<()>(
                        stream.as_raw_fd(),
                        &[IoSlice::new(b"s")],
                        &cmsg,
                        MsgFlags::MSG_NOSIGNAL,
                        None,
                    )
                    .map_err(to_io)?;
                    served += 1;
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    let left = deadline.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        return Err(io::Error::new(
                            io::ErrorKind::TimedOut,
                            format!(
                                "{served} of {clients} local ranks took the shared segment \
                                 within {timeout:?}"
                            ),
                        ));
                    }
                    wait_readable(self.listener.as_fd(), left.min(Duration::from_millis(100)))?;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }
}

fn wait_readable(fd: BorrowedFd<'_>, t: Duration) -> io::Result<()> {
    use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
    let ms = PollTimeout::try_from(t.as_millis().min(i32::MAX as u128) as i32)
        .unwrap_or(PollTimeout::MAX);
    match poll(&mut [PollFd::new(fd, PollFlags::POLLIN)], ms) {
        Ok(_) | Err(nix::Error::EINTR) => Ok(()),
        Err(e) => Err(to_io(e)),
    }
}

/// Connects to the leader's offer and receives the segment's descriptor, retrying
/// until `timeout` while the leader has not bound its socket yet.
pub fn fetch(kvsname: &str, leader: u32, timeout: Duration) -> io::Result<OwnedFd> {
    let addr = SocketAddr::from_abstract_name(offer_name(kvsname, leader).as_bytes())?;
    let deadline = Instant::now() + timeout;
    let stream = loop {
        match UnixStream::connect_addr(&addr) {
            Ok(s) => break s,
            Err(e)
                if Instant::now() < deadline
                    && matches!(
                        e.kind(),
                        io::ErrorKind::ConnectionRefused | io::ErrorKind::NotFound
                    ) =>
            {
                std::thread::sleep(Duration::from_millis(2));
            }
            Err(e) => return Err(e),
        }
    };
    stream.set_read_timeout(Some(
        deadline
            .saturating_duration_since(Instant::now())
            .max(Duration::from_millis(1)),
    ))?;
    let mut byte = [0u8; 1];
    let mut iov = [IoSliceMut::new(&mut byte)];
    let mut space = nix::cmsg_space!([RawFd; 1]);
    let msg = recvmsg::<()>(
        stream.as_raw_fd(),
        &mut iov,
        Some(&mut space),
        MsgFlags::MSG_CMSG_CLOEXEC,
    )
    .map_err(to_io)?;
    for c in msg.cmsgs().map_err(to_io)? {
        if let ControlMessageOwned::ScmRights(fds) = c {
            if let Some(&raw) = fds.first() {
                // SAFETY: the kernel just installed `raw` in this process for us
                // (SCM_RIGHTS); nothing else owns it, so taking ownership is sound.
                return Ok(unsafe { OwnedFd::from_raw_fd(raw) });
            }
        }
    }
    Err(io::Error::other(
        "the node leader's answer carried no file descriptor",
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn descriptor_reaches_every_client() {
        let job = format!("fdshare-test-{}", std::process::id());
        let (fd, map) = crate::sys::shm::create_anonymous(8192).unwrap();
        // SAFETY: the mapping is 8192 bytes.
        unsafe { map.as_ptr().add(10).write(7) };
        let offer = FdOffer::bind(&job, 0).unwrap();
        let clients: Vec<_> = (0..3)
            .map(|_| {
                let job = job.clone();
                std::thread::spawn(move || {
                    let fd = fetch(&job, 0, Duration::from_secs(10)).unwrap();
                    let m = crate::sys::shm::map_fd_checked(&fd, 8192).unwrap();
                    // SAFETY: as above.
                    unsafe { m.as_ptr().add(10).read() }
                })
            })
            .collect();
        offer.serve(fd.as_fd(), 3, Duration::from_secs(10)).unwrap();
        for c in clients {
            assert_eq!(c.join().unwrap(), 7);
        }
    }

    #[test]
    fn serve_times_out_without_clients() {
        let job = format!("fdshare-timeout-{}", std::process::id());
        let (fd, _map) = crate::sys::shm::create_anonymous(4096).unwrap();
        let offer = FdOffer::bind(&job, 0).unwrap();
        let e = offer
            .serve(fd.as_fd(), 1, Duration::from_millis(50))
            .unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::TimedOut);
    }

    #[test]
    fn fetch_without_offer_fails() {
        let job = format!("fdshare-none-{}", std::process::id());
        assert!(fetch(&job, 0, Duration::from_millis(20)).is_err());
    }
}
