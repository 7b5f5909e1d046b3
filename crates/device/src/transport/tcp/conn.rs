//! One TCP connection to another rank: its handshake phase, the receive buffer with the
//! frame being assembled (or a large data piece read straight into its receive buffer),
//! and the bytes not yet written.
//!
//! Memory per connection is bounded: the receive buffer holds at most one eager frame;
//! a partial write keeps a copy of at most the rest of one small frame, while the rest of
//! a rendezvous piece stays in the sender's buffer (borrowed until written).

use super::frame::PREFIX_BYTES;
use super::handshake::Nonce;
use crate::device::packet::Header;
use std::io;
use std::net::{SocketAddr, TcpStream};
use std::os::fd::AsRawFd;
use std::time::Instant;

/// Receive buffer of an open connection; it grows (up to one eager frame) on demand.
pub const RX_INITIAL: usize = 64 * 1024 + PREFIX_BYTES;
/// Receive buffer during the handshake.
const RX_HANDSHAKE: usize = 256;

/// Where a connection is in its life.
#[derive(Debug)]
pub enum Phase {
    /// Initiator: `connect` in progress.
    Connecting { deadline: Instant },
    /// Initiator: HELLO sent, waiting for the CHALLENGE.
    AwaitChallenge { ni: Nonce, deadline: Instant },
    /// Acceptor: waiting for a HELLO.
    AwaitHello { deadline: Instant },
    /// Acceptor: a process of another job (incarnation `inc`) said HELLO from `addr`
    /// before this process added it as a peer; the handshake goes on once it does (or
    /// fails at `deadline`).
    AwaitPeer {
        addr: std::net::SocketAddrV4,
        inc: u32,
        ni: Nonce,
        deadline: Instant,
    },
    /// Acceptor: CHALLENGE sent, waiting for the PROOF.
    AwaitProof {
        from: u32,
        ni: Nonce,
        na: Nonce,
        deadline: Instant,
    },
    /// Authenticated: frames flow.
    Open,
}

/// The rest of a data piece, read straight into the receiver's buffer.
pub struct Body {
    pub ptr: *mut u8,
    pub left: usize,
    pub hdr: Header,
}

/// The rest of a rendezvous piece, written straight from the sender's buffer.
pub struct Borrowed {
    pub ptr: *const u8,
    pub left: usize,
    pub token: u32,
}

/// A connection.
pub struct Conn {
    pub sock: TcpStream,
    pub addr: SocketAddr,
    /// The peer's world rank (known at once for an initiated connection).
    pub peer: Option<u32>,
    pub phase: Phase,
    pub rx: Vec<u8>,
    pub rx_start: usize,
    pub rx_end: usize,
    pub body: Option<Body>,
    /// Payload bytes still to read and drop (a piece nobody waits for).
    pub discard: u64,
    tx: Vec<u8>,
    tx_off: usize,
    pub borrowed: Option<Borrowed>,
    /// EPOLLOUT is in the registered interest set.
    pub want_out: bool,
}

/// Most slices one [`send_slices`] call takes.
const MAX_SLICES: usize = 4;

/// `sendmsg` of up to [`MAX_SLICES`] slices, non-blocking, without SIGPIPE.
pub fn send_slices(sock: &TcpStream, parts: &[&[u8]]) -> io::Result<usize> {
    assert!(
        parts.len() <= MAX_SLICES,
        "send_slices takes at most {MAX_SLICES} slices"
    );
    let empty = libc::iovec {
        iov_base: std::ptr::null_mut(),
        iov_len: 0,
    };
    let mut iov = [empty; MAX_SLICES];
    let mut k = 0;
    for p in parts.iter().filter(|p| !p.is_empty()) {
        iov[k] = libc::iovec {
            iov_base: p.as_ptr() as *mut libc::c_void,
            iov_len: p.len(),
        };
        k += 1;
    }
    let iov = &iov[..k];
    if iov.is_empty() {
        return Ok(0);
    }
    // SAFETY: msghdr is plain data; all-zero is a valid empty header.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = iov.as_ptr() as *mut libc::iovec;
    msg.msg_iovlen = iov.len();
    loop {
        // SAFETY: the iovecs point at live slices for the duration of the call; the
        // kernel only reads them.
        let n = unsafe {
            libc::sendmsg(
                sock.as_raw_fd(),
                &msg,
                libc::MSG_NOSIGNAL | libc::MSG_DONTWAIT,
            )
        };
        if n >= 0 {
            return Ok(n as usize);
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

/// `recv` into raw memory, non-blocking. `Ok(0)` is end of stream.
///
/// # Safety
/// `ptr` must be valid for writes of `len` bytes.
pub unsafe fn recv_raw(sock: &TcpStream, ptr: *mut u8, len: usize) -> io::Result<usize> {
    loop {
        // SAFETY: per the contract, [ptr, ptr+len) is writable.
        let n = unsafe { libc::recv(sock.as_raw_fd(), ptr.cast(), len, libc::MSG_DONTWAIT) };
        if n >= 0 {
            return Ok(n as usize);
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

impl Conn {
    pub fn new(sock: TcpStream, addr: SocketAddr, peer: Option<u32>, phase: Phase) -> Conn {
        Conn {
            sock,
            addr,
            peer,
            phase,
            rx: vec![0u8; RX_HANDSHAKE],
            rx_start: 0,
            rx_end: 0,
            body: None,
            discard: 0,
            tx: Vec::new(),
            tx_off: 0,
            borrowed: None,
            want_out: false,
        }
    }

    pub fn is_open(&self) -> bool {
        matches!(self.phase, Phase::Open)
    }

    /// On an accepted connection whose dialer has not proven itself: the dialer has
    /// sent nothing yet, or said it is a process of another job (rank `size` or above).
    pub fn abandoned_dial(&self, size: u32) -> bool {
        match self.phase {
            Phase::AwaitHello { .. } => self.rx_end == 0,
            Phase::AwaitPeer { .. } => true,
            Phase::AwaitProof { from, .. } => from >= size,
            _ => false,
        }
    }

    /// Bytes written but not yet handed to the kernel.
    pub fn has_tx(&self) -> bool {
        self.tx_off < self.tx.len() || self.borrowed.is_some()
    }

    /// Keeps a copy of bytes to write after what is already queued.
    pub fn queue_copy(&mut self, bytes: &[u8]) {
        if self.tx_off == self.tx.len() {
            self.tx.clear();
            self.tx_off = 0;
        }
        self.tx.extend_from_slice(bytes);
    }

    /// Writes queued bytes; `Ok(true)` once nothing is left.
    pub fn flush(&mut self) -> io::Result<bool> {
        while self.tx_off < self.tx.len() {
            match send_slices(&self.sock, &[&self.tx[self.tx_off..]]) {
                Ok(n) => self.tx_off += n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(false),
                Err(e) => return Err(e),
            }
        }
        if self.tx.capacity() > RX_INITIAL {
            self.tx = Vec::new();
        } else {
            self.tx.clear();
        }
        self.tx_off = 0;
        while let Some(b) = self.borrowed.as_mut() {
            // SAFETY: the sender keeps the buffer alive until the device sees that this
            // connection no longer holds `token` (see `TcpNet::holds`).
            let rest = unsafe { std::slice::from_raw_parts(b.ptr, b.left) };
            match send_slices(&self.sock, &[rest]) {
                Ok(n) => {
                    b.left -= n;
                    // SAFETY: n <= left, so the pointer stays within the buffer.
                    b.ptr = unsafe { b.ptr.add(n) };
                    if b.left == 0 {
                        self.borrowed = None;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(false),
                Err(e) => return Err(e),
            }
        }
        Ok(true)
    }

    /// Grows the receive buffer to hold at least `need` bytes from `rx_start` on,
    /// moving the unread bytes to the front.
    pub fn make_room(&mut self, need: usize) {
        if self.rx_start > 0 {
            self.rx.copy_within(self.rx_start..self.rx_end, 0);
            self.rx_end -= self.rx_start;
            self.rx_start = 0;
        }
        if self.rx.len() < need {
            self.rx.resize(need, 0);
        }
    }

    /// Sizes the buffer for frames once the handshake is over.
    pub fn open_buffers(&mut self) {
        self.make_room(RX_INITIAL);
    }

    /// Reads once into the free end of the receive buffer. `Ok(None)`: nothing there.
    pub fn read_some(&mut self) -> io::Result<Option<usize>> {
        if self.rx_start == self.rx_end {
            self.rx_start = 0;
            self.rx_end = 0;
        } else if self.rx_end == self.rx.len() {
            self.make_room(self.rx.len());
        }
        let free = self.rx.len() - self.rx_end;
        // SAFETY: [rx_end, rx_end + free) lies inside rx.
        match unsafe { recv_raw(&self.sock, self.rx.as_mut_ptr().add(self.rx_end), free) } {
            Ok(n) => {
                self.rx_end += n;
                Ok(Some(n))
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Takes `n` bytes from the front of the receive buffer if they are there.
    /// The first `N` bytes received and not taken yet, left in place.
    pub fn peek<const N: usize>(&self) -> Option<[u8; N]> {
        let b = self.rx.get(self.rx_start..self.rx_start + N)?;
        (self.rx_end - self.rx_start >= N).then(|| b.try_into().expect("N bytes"))
    }

    pub fn take<const N: usize>(&mut self) -> Option<[u8; N]> {
        if self.rx_end - self.rx_start < N {
            return None;
        }
        let mut b = [0u8; N];
        b.copy_from_slice(&self.rx[self.rx_start..self.rx_start + N]);
        self.rx_start += N;
        Some(b)
    }
}
