//! TCP between ranks that do not share memory (or between every pair when
//! `OXMPI_NETMOD=tcp`).
//!
//! Each rank listens on one socket whose address is in its business card. Connections are
//! made lazily, on the first packet toward a peer, and authenticated both ways with the
//! job secret ([`handshake`]) before any frame is read. A rank sends to a peer on the
//! first connection with it that becomes open, whichever side made it, and reads from
//! every connection with it; when two ranks dial each other at the same moment each
//! direction simply uses one of the two connections, so packet order per direction holds.
//!
//! Sockets are non-blocking, `TCP_NODELAY`, level-triggered in one epoll set (which also
//! holds the listening socket and, on a node with shared-memory peers, the doorbell
//! socket of [`crate::transport::bell`]); a blocked rank sleeps in that epoll set.
//! Frames ([`frame`]) carry the device's packets unchanged. Rendezvous pieces are read
//! straight into the receive buffer and written straight from the send buffer.
//!
//! A connection that breaks, a peer that cannot be reached, or a peer that sends a
//! malformed frame is a failure of the job: the transport records it (the first one,
//! with a message naming the peer), stops using that connection, and the device
//! reports it from its next progress ([`TcpNet::take_failure`]). A stranger (wrong secret, garbage, silence) is refused and logged;
//! the job goes on.
//!
//! Peers of other jobs ([`TcpNet::add_peer`], for `MPI_Comm_spawn` and
//! `MPI_Comm_accept`/`connect`) get slots after the job's ranks. They are known by the
//! address they listen on together with their incarnation (a random number each
//! transport draws when it starts: a later process may listen on the port of an exited
//! one) and authenticated with a key of their own (the port's one-time key, see
//! [`handshake`]); a HELLO from one that this process has not added yet waits until it
//! does. A new incarnation added at the address of a peer still thought live (the
//! new process proved a port's key, unlike a mere HELLO) shows that the peer exited: it
//! is dropped as lost. Losing such a peer (it disconnected and exited, or died)
//! is not a failure of this job: the peer is reported once through
//! [`TcpNet::take_departed`], and what waits on it fails.

pub mod addr;
mod conn;
pub mod frame;
pub mod handshake;
#[cfg(test)]
mod tests;

use crate::device::packet::{Header, Kind, HEADER_BYTES};
use crate::transport::bell::Bell;
use conn::{Body, Borrowed, Conn, Phase};
use frame::{encode_prefix, parse_prefix, PREFIX_BYTES};
use nix::poll::PollTimeout;
use nix::sys::epoll::{Epoll, EpollCreateFlags, EpollEvent, EpollFlags};
use nix::sys::eventfd::{EfdFlags, EventFd};
use std::io;
use std::net::{SocketAddr, SocketAddrV4, TcpListener, TcpStream};
use std::os::fd::{AsFd, AsRawFd};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Largest eager payload a rank accepts over TCP (bounds the receive buffer).
pub const MAX_EAGER: usize = 1 << 20;
/// Connections still proving themselves that a rank keeps at once.
const MAX_UNAUTHENTICATED: usize = 64;
/// Time a stranger gets to complete the handshake.
const ACCEPT_HANDSHAKE_LIMIT: Duration = Duration::from_secs(10);
/// Time a process of another job waits, after its HELLO, for this process to add it
/// as a peer (the two jobs' start-up of a new intercommunicator).
const DYN_PEER_WAIT: Duration = Duration::from_secs(120);

/// Up to this many open connections are polled directly rather than through epoll.
const DIRECT_POLL_MAX: usize = 4;
/// While connections are polled directly, one poll in this many consults the epoll set
/// (listener, doorbell, handshakes); an `epoll_wait` costs as much as a `recv`, and a
/// message that arrives during it waits for it to end.
const EPOLL_EVERY: u32 = 128;

const TOKEN_LISTENER: u64 = 0;
const TOKEN_BELL: u64 = 1;
const TOKEN_CONN0: u64 = 2;
/// The eventfd by which a rank's own threads wake the one of them in the epoll set.
const TOKEN_WAKE: u64 = u64::MAX;

/// What the transport hands to the device.
pub trait Sink {
    /// A whole packet arrived from world rank `from`.
    fn packet(&mut self, from: u32, hdr: Header, payload: &[u8]);
    /// A `Data` piece (`hdr.rreq`, offset `hdr.addr`, `hdr.len` bytes) is arriving: where
    /// its bytes go, or None to drop them.
    fn data_target(&mut self, from: u32, hdr: &Header) -> Option<*mut u8>;
    /// Every byte of a piece given a target has been written there.
    fn data_landed(&mut self, from: u32, hdr: &Header);
}

/// Settings of the transport.
#[derive(Clone, Debug)]
pub struct TcpSettings {
    pub connect_timeout: Duration,
    /// Log connection events to stderr.
    pub debug: bool,
}

/// The listening socket, opened before the business cards are exchanged.
pub struct Listener {
    sock: TcpListener,
    plan: addr::ListenPlan,
    port: u16,
}

/// A peer of another job.
struct DynPeer {
    /// Where it listens and its incarnation (its identity in the handshake).
    addr: SocketAddrV4,
    inc: u32,
    /// The key both sides prove.
    key: Vec<u8>,
    /// Its connection was lost: never dialed again.
    gone: bool,
    /// No communicator of this process refers to it any more: a HELLO from its address
    /// is no longer taken for it (the address may be a new process's, see
    /// [`TcpNet::retire_peer`]).
    retired: bool,
}

impl Listener {
    /// Opens the listening socket per `OXMPI_TCP_ADDR` / `OXMPI_TCP_IF` (see [`addr`]).
    pub fn open(addr_setting: Option<&str>, iface: Option<&str>) -> Result<Listener, String> {
        let plan = addr::plan(addr_setting, iface)?;
        let sock = TcpListener::bind((plan.bind, 0))
            .map_err(|e| format!("cannot listen on {}: {e}", plan.bind))?;
        sock.set_nonblocking(true)
            .map_err(|e| format!("cannot make the listening socket non-blocking: {e}"))?;
        let port = sock
            .local_addr()
            .map_err(|e| format!("cannot read the listening address: {e}"))?
            .port();
        Ok(Listener { sock, plan, port })
    }

    /// The listening socket itself (for a port of `MPI_Open_port`).
    pub fn into_socket(self) -> TcpListener {
        self.sock
    }

    /// The address published in the card (the identity of this process toward peers of
    /// other jobs).
    pub fn addr(&self) -> SocketAddrV4 {
        SocketAddrV4::new(self.plan.publish, self.port)
    }

    /// The card field: `ip:port`, plus `+lo` when peers on this node may use 127.0.0.1
    /// (PMI values may not contain `;`).
    pub fn card(&self) -> String {
        let mut s = format!("{}:{}", self.plan.publish, self.port);
        if self.plan.loopback_ok {
            s.push_str("+lo");
        }
        s
    }
}

/// Parses the card field written by [`Listener::card`]: the address, and whether it
/// is reachable through loopback.
pub fn parse_card(field: &str) -> Option<(SocketAddrV4, bool)> {
    let (a, lo) = match field.strip_suffix("+lo") {
        Some(a) => (a, true),
        None => (field, false),
    };
    Some((a.parse().ok()?, lo))
}

/// Where a blocked rank sleeps: the transport's epoll set.
pub struct Sleeper {
    epoll: Arc<Epoll>,
    /// The set's wake-up eventfd (none in another transport's set).
    wake: Option<Arc<EventFd>>,
}

impl Sleeper {
    /// A sleeper on another transport's epoll set (the IMPI channels').
    pub(crate) fn on(epoll: Arc<Epoll>) -> Sleeper {
        Sleeper { epoll, wake: None }
    }

    /// True when the rank's own threads can wake the thread asleep here
    /// ([`TcpNet::wake_sleeper`]).
    pub fn wakeable(&self) -> bool {
        self.wake.is_some()
    }

    /// The epoll set's descriptor (to nest it in another set).
    pub(crate) fn fd(&self) -> std::os::fd::BorrowedFd<'_> {
        self.epoll.0.as_fd()
    }

    /// Waits until a socket of the set is ready, or `timeout`.
    pub fn wait(&self, timeout: Duration) {
        let mut ev = [EpollEvent::empty(); 1];
        let ms = timeout.as_millis().min(u16::MAX as u128) as u16;
        if let (Ok(1), Some(w)) = (self.epoll.wait(&mut ev, PollTimeout::from(ms)), &self.wake) {
            if ev[0].data() == TOKEN_WAKE {
                // Read back, or the set would stay ready.
                let _ = w.read();
            }
        }
    }
}

/// The TCP transport of one rank.
pub struct TcpNet {
    me: u32,
    size: u32,
    secret: Vec<u8>,
    settings: TcpSettings,
    /// The failure that ends the job, until the device takes it (see [`Self::fail`]).
    failure: Option<String>,
    epoll: Arc<Epoll>,
    /// In the epoll set: a write wakes the thread asleep in the set, which reads it
    /// back (see [`TcpNet::wake_sleeper`]).
    wake: Arc<EventFd>,
    listener: TcpListener,
    bell: Option<Bell>,
    conns: Vec<Option<Conn>>,
    free: Vec<usize>,
    /// The connection this rank sends on, per world rank.
    send_conn: Vec<Option<usize>>,
    /// The connection this rank dialed, per world rank.
    dialed: Vec<Option<usize>>,
    /// Where each rank listens (None: not reachable by TCP).
    peers: Vec<Option<SocketAddrV4>>,
    handshaking: usize,
    unauthenticated: usize,
    /// Open connections, polled directly (without epoll) while there are few of them.
    open: Vec<usize>,
    polls: u32,
    /// Connections refused so far.
    refused: u64,
    /// Connections with EPOLLOUT in their interest set.
    writers: usize,
    /// The address this process publishes (see [`Listener::addr`]).
    card: SocketAddrV4,
    /// This transport's incarnation: with `card`, its identity toward other jobs.
    inc: u32,
    /// Peers on this node may dial 127.0.0.1 (the listener is bound to every address).
    loopback_ok: bool,
    /// Peers of other jobs, slot `size + i` at index `i`.
    dynamic: Vec<DynPeer>,
    /// Peers of other jobs lost since [`TcpNet::take_departed`] last ran.
    departed: Vec<u32>,
}

fn interest(out: bool) -> EpollFlags {
    if out {
        EpollFlags::EPOLLIN | EpollFlags::EPOLLOUT
    } else {
        EpollFlags::EPOLLIN
    }
}

impl TcpNet {
    /// The transport of world rank `me` of `size`. `peers[r]` is where rank `r` listens.
    pub fn new(
        me: u32,
        size: u32,
        secret: Vec<u8>,
        listener: Listener,
        peers: Vec<Option<SocketAddrV4>>,
        bell: Option<Bell>,
        settings: TcpSettings,
    ) -> io::Result<TcpNet> {
        let epoll = Epoll::new(EpollCreateFlags::EPOLL_CLOEXEC)?;
        epoll.add(
            listener.sock.as_fd(),
            EpollEvent::new(EpollFlags::EPOLLIN, TOKEN_LISTENER),
        )?;
        if let Some(b) = &bell {
            epoll.add(
                b.socket().as_fd(),
                EpollEvent::new(EpollFlags::EPOLLIN, TOKEN_BELL),
            )?;
        }
        let wake = EventFd::from_flags(EfdFlags::EFD_CLOEXEC | EfdFlags::EFD_NONBLOCK)?;
        epoll.add(
            wake.as_fd(),
            EpollEvent::new(EpollFlags::EPOLLIN, TOKEN_WAKE),
        )?;
        let n = size as usize;
        let card = listener.addr();
        let mut inc = [0u8; 4];
        oxmpi_auth::random(&mut inc).map_err(|e| io::Error::other(e.to_string()))?;
        let net = TcpNet {
            card,
            inc: u32::from_le_bytes(inc),
            loopback_ok: listener.plan.loopback_ok,
            dynamic: Vec::new(),
            departed: Vec::new(),
            me,
            size,
            secret,
            settings,
            epoll: Arc::new(epoll),
            wake: Arc::new(wake),
            listener: listener.sock,
            bell,
            conns: Vec::new(),
            free: Vec::new(),
            send_conn: vec![None; n],
            dialed: vec![None; n],
            peers,
            handshaking: 0,
            unauthenticated: 0,
            open: Vec::new(),
            polls: 0,
            refused: 0,
            failure: None,
            writers: 0,
        };
        net.debug(|| format!("listening on {:?}", net.listener.local_addr()));
        Ok(net)
    }

    /// Wakes the thread of this process that sleeps in the epoll set, if one does (a
    /// thread of the rank changed what it may wait for).
    pub fn wake_sleeper(&self) {
        let _ = self.wake.write(1);
    }

    /// The epoll set, for sleeping outside the runtime lock.
    pub fn sleeper(&self) -> Sleeper {
        Sleeper {
            epoll: self.epoll.clone(),
            wake: Some(self.wake.clone()),
        }
    }

    /// The address this process publishes: what a peer of another job dials, and how
    /// it knows this process.
    pub fn card_addr(&self) -> SocketAddrV4 {
        self.card
    }

    /// This transport's incarnation (see the module doc).
    pub fn incarnation(&self) -> u32 {
        self.inc
    }

    /// True when peers on this node may dial this process at 127.0.0.1.
    pub fn loopback_ok(&self) -> bool {
        self.loopback_ok
    }

    /// Adds a peer of another job, known by the address `addr` it publishes and its
    /// incarnation `inc`, and dialed at `dial` (127.0.0.1 on the same node, where
    /// allowed), under slot `slot` (the next one: the job's size plus the peers added
    /// before), authenticated with `key`. A HELLO it sent before is answered now; an
    /// earlier incarnation at its address is dropped as lost.
    pub fn add_peer(
        &mut self,
        slot: u32,
        addr: SocketAddrV4,
        inc: u32,
        dial: SocketAddrV4,
        key: Vec<u8>,
    ) {
        assert_eq!(
            slot as usize,
            self.peers.len(),
            "peer slots are added in order"
        );
        self.drop_earlier(addr, inc);
        self.peers.push(Some(dial));
        self.send_conn.push(None);
        self.dialed.push(None);
        self.dynamic.push(DynPeer {
            addr,
            inc,
            key,
            gone: false,
            retired: false,
        });
        self.debug(|| format!("added peer {slot} of another job at {addr} (incarnation {inc:#x})"));
        for c in 0..self.conns.len() {
            let waiting = matches!(
                self.conns[c].as_ref().map(|c| &c.phase),
                Some(Phase::AwaitPeer { addr: a, inc: i, .. }) if *a == addr && *i == inc
            );
            if waiting {
                if let Err(why) = self.advance_handshake(c) {
                    self.handshake_failed(c, &why);
                }
            }
        }
    }

    /// The slot of the live peer of another job that listens at `addr` as incarnation
    /// `inc`.
    pub fn dyn_slot(&self, addr: SocketAddrV4, inc: u32) -> Option<u32> {
        self.dynamic
            .iter()
            .rposition(|d| d.addr == addr && d.inc == inc && !d.gone && !d.retired)
            .map(|i| self.size + i as u32)
    }

    /// A process of incarnation `inc` listens at `addr`: peers recorded at that address
    /// under another incarnation have exited (the address was theirs until then). They
    /// are lost, as if their connection had closed: what waits on them fails, and they
    /// are never dialed again.
    fn drop_earlier(&mut self, addr: SocketAddrV4, inc: u32) {
        for i in 0..self.dynamic.len() {
            let d = &self.dynamic[i];
            if d.addr != addr || d.inc == inc || d.gone {
                continue;
            }
            let peer = self.size + i as u32;
            let old = d.inc;
            self.debug(|| {
                format!("peer {peer} of another job (incarnation {old:#x}) exited: {addr} is a new process's")
            });
            for slot in 0..self.conns.len() {
                if self.conns[slot]
                    .as_ref()
                    .is_some_and(|c| c.peer == Some(peer))
                {
                    self.close(slot);
                }
            }
            self.send_conn[peer as usize] = None;
            self.dialed[peer as usize] = None;
            self.dynamic[i].gone = true;
            self.departed.push(peer);
        }
    }

    /// Peer `slot` of another job was added again by a new intercommunicator with it:
    /// connections made from now on prove the new `key`, which is the one the other
    /// side holds (it may have added this process afresh).
    pub fn rekey_peer(&mut self, slot: u32, key: Vec<u8>) {
        if let Some(i) = slot.checked_sub(self.size) {
            if let Some(d) = self.dynamic.get_mut(i as usize) {
                d.key = key;
            }
        }
    }

    /// No communicator of this process refers to peer `slot` of another job any more
    /// (they were freed or disconnected). Its listening address no longer names it: the
    /// process may exit and a new one (of a later spawn) listen at the same port, whose
    /// HELLO must wait for its own [`TcpNet::add_peer`] and key rather than be answered
    /// with this peer's. Connections already open with it stay until it closes them.
    pub fn retire_peer(&mut self, slot: u32) {
        if let Some(i) = slot.checked_sub(self.size) {
            if let Some(d) = self.dynamic.get_mut(i as usize) {
                d.retired = true;
            }
        }
    }

    /// The peers of other jobs lost since the last call (each once).
    pub fn take_departed(&mut self) -> Vec<u32> {
        std::mem::take(&mut self.departed)
    }

    fn dyn_peer(&self, slot: u32) -> Option<&DynPeer> {
        slot.checked_sub(self.size)
            .and_then(|i| self.dynamic.get(i as usize))
    }

    /// How the dialer of a connection to `dest` names the two sides, and the key.
    fn dial_who(&self, dest: u32) -> (handshake::Who, &[u8]) {
        match self.dyn_peer(dest) {
            Some(d) => (
                handshake::Who::Dyn {
                    from: self.card,
                    from_inc: self.inc,
                    to: d.addr.port(),
                    to_inc: d.inc,
                },
                &d.key,
            ),
            None => (
                handshake::Who::Job {
                    from: self.me,
                    to: dest,
                },
                &self.secret,
            ),
        }
    }

    /// How the acceptor of a connection from `from` names the two sides, and the key.
    fn accept_who(&self, from: u32) -> (handshake::Who, &[u8]) {
        match self.dyn_peer(from) {
            Some(d) => (
                handshake::Who::Dyn {
                    from: d.addr,
                    from_inc: d.inc,
                    to: self.card.port(),
                    to_inc: self.inc,
                },
                &d.key,
            ),
            None => (handshake::Who::Job { from, to: self.me }, &self.secret),
        }
    }

    /// A peer of another job is gone: its connection closes, what waits on it fails
    /// (through [`TcpNet::take_departed`]), and it is never dialed again.
    fn depart(&mut self, peer: u32, slot: usize, why: &str) {
        let Some(i) = peer.checked_sub(self.size) else {
            return;
        };
        self.debug(|| format!("peer {peer} of another job is gone: {why}"));
        self.close(slot);
        for s in [&mut self.send_conn, &mut self.dialed] {
            if s[peer as usize] == Some(slot) {
                s[peer as usize] = None;
            }
        }
        let d = &mut self.dynamic[i as usize];
        if !d.gone {
            d.gone = true;
            self.departed.push(peer);
        }
    }

    fn debug(&self, msg: impl FnOnce() -> String) {
        if self.settings.debug {
            eprintln!("oxmpi: rank {}: tcp: {}", self.me, msg());
        }
    }

    // ----- sending ---------------------------------------------------------------

    /// Writes one packet to `dest`. False when it cannot be written now (no open
    /// connection yet, or the previous one is still being written): try again later.
    pub fn try_send(&mut self, dest: u32, hdr: &Header, payload: &[u8]) -> bool {
        let Some(slot) = self.ready_conn(dest) else {
            return false;
        };
        let prefix = encode_prefix(&hdr.encode(), payload.len());
        let c = self.conns[slot].as_mut().expect("send connection exists");
        match conn::send_slices(&c.sock, &[&prefix, payload]) {
            Ok(n) if n == PREFIX_BYTES + payload.len() => true,
            Ok(n) => {
                if n < PREFIX_BYTES {
                    c.queue_copy(&prefix[n..]);
                    c.queue_copy(payload);
                } else {
                    c.queue_copy(&payload[n - PREFIX_BYTES..]);
                }
                self.set_out(slot, true);
                true
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                self.set_out(slot, true);
                false
            }
            Err(e) => {
                self.lost(slot, &e.to_string());
                false
            }
        }
    }

    /// Writes one packet whose payload stays in the caller's memory until written.
    ///
    /// # Safety
    /// `[ptr, ptr+len)` must be readable now and stay valid and unchanged while
    /// [`TcpNet::holds`]`(dest, token)` is true.
    pub unsafe fn try_send_borrowed(
        &mut self,
        dest: u32,
        hdr: &Header,
        ptr: *const u8,
        len: usize,
        token: u32,
    ) -> bool {
        let Some(slot) = self.ready_conn(dest) else {
            return false;
        };
        let prefix = encode_prefix(&hdr.encode(), len);
        // SAFETY: the caller guarantees [ptr, ptr+len) is readable.
        let payload = unsafe { std::slice::from_raw_parts(ptr, len) };
        let c = self.conns[slot].as_mut().expect("send connection exists");
        match conn::send_slices(&c.sock, &[&prefix, payload]) {
            Ok(n) if n == PREFIX_BYTES + len => true,
            Ok(n) => {
                let done = if n < PREFIX_BYTES {
                    c.queue_copy(&prefix[n..]);
                    0
                } else {
                    n - PREFIX_BYTES
                };
                c.borrowed = Some(Borrowed {
                    // SAFETY: done <= len.
                    ptr: unsafe { ptr.add(done) },
                    left: len - done,
                    token,
                });
                self.set_out(slot, true);
                true
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                self.set_out(slot, true);
                false
            }
            Err(e) => {
                self.lost(slot, &e.to_string());
                false
            }
        }
    }

    /// True while the connection toward `dest` still has to write borrowed bytes of `token`.
    pub fn holds(&self, dest: u32, token: u32) -> bool {
        self.send_conn
            .get(dest as usize)
            .copied()
            .flatten()
            .and_then(|s| self.conns[s].as_ref())
            .and_then(|c| c.borrowed.as_ref())
            .is_some_and(|b| b.token == token)
    }

    /// True when some connection has bytes not yet handed to the kernel.
    pub fn has_outgoing(&self) -> bool {
        self.conns
            .iter()
            .flatten()
            .any(|c| c.is_open() && c.has_tx())
    }

    /// The open connection to send on, with nothing left from the previous packet;
    /// starts dialing when there is none.
    fn ready_conn(&mut self, dest: u32) -> Option<usize> {
        let d = dest as usize;
        let Some(slot) = self.send_conn.get(d).copied().flatten() else {
            if self.dyn_peer(dest).is_some_and(|p| p.gone) {
                return None;
            }
            if d < self.dialed.len() && self.dialed[d].is_none() {
                self.dial(dest);
            }
            return None;
        };
        let c = self.conns[slot].as_mut().expect("send connection exists");
        if c.has_tx() {
            match c.flush() {
                Ok(true) => self.set_out(slot, false),
                Ok(false) => return None,
                Err(e) => {
                    self.lost(slot, &e.to_string());
                    return None;
                }
            }
        }
        Some(slot)
    }

    fn dial(&mut self, dest: u32) {
        use nix::sys::socket::{connect, socket, AddressFamily, SockFlag, SockType, SockaddrIn};
        let Some(addr) = self.peers.get(dest as usize).copied().flatten() else {
            return self.fail(format!(
                "rank {dest} cannot be reached: its business card has no TCP address"
            ));
        };
        let fd = match socket(
            AddressFamily::Inet,
            SockType::Stream,
            SockFlag::SOCK_NONBLOCK | SockFlag::SOCK_CLOEXEC,
            None,
        ) {
            Ok(fd) => fd,
            Err(e) => {
                return self.fail(format!("cannot create a socket to reach rank {dest}: {e}"))
            }
        };
        match connect(fd.as_raw_fd(), &SockaddrIn::from(addr)) {
            Ok(()) | Err(nix::errno::Errno::EINPROGRESS) => {}
            Err(e) => return self.fail(format!("cannot connect to rank {dest} at {addr}: {e}")),
        }
        let sock = TcpStream::from(fd);
        let _ = sock.set_nodelay(true);
        let deadline = Instant::now() + self.settings.connect_timeout;
        let slot = self.insert(Conn::new(
            sock,
            SocketAddr::V4(addr),
            Some(dest),
            Phase::Connecting { deadline },
        ));
        self.dialed[dest as usize] = Some(slot);
        self.handshaking += 1;
        self.register(slot, true);
        self.debug(|| format!("dialing rank {dest} at {addr}"));
    }

    fn insert(&mut self, c: Conn) -> usize {
        match self.free.pop() {
            Some(s) => {
                self.conns[s] = Some(c);
                s
            }
            None => {
                self.conns.push(Some(c));
                self.conns.len() - 1
            }
        }
    }

    fn register(&mut self, slot: usize, out: bool) {
        let c = self.conns[slot].as_mut().expect("connection exists");
        c.want_out = out;
        self.writers += usize::from(out);
        if let Err(e) = self.epoll.add(
            c.sock.as_fd(),
            EpollEvent::new(interest(out), TOKEN_CONN0 + slot as u64),
        ) {
            self.fail(format!("epoll_ctl(ADD) failed: {e}"));
        }
    }

    fn set_out(&mut self, slot: usize, out: bool) {
        let Some(c) = self.conns[slot].as_mut() else {
            return;
        };
        if c.want_out == out {
            return;
        }
        c.want_out = out;
        if out {
            self.writers += 1;
        } else {
            self.writers -= 1;
        }
        let mut ev = EpollEvent::new(interest(out), TOKEN_CONN0 + slot as u64);
        if let Err(e) = self.epoll.modify(c.sock.as_fd(), &mut ev) {
            self.fail(format!("epoll_ctl(MOD) failed: {e}"));
        }
    }

    fn close(&mut self, slot: usize) {
        if let Some(c) = self.conns[slot].take() {
            let _ = self.epoll.delete(c.sock.as_fd());
            self.open.retain(|&s| s != slot);
            self.writers -= usize::from(c.want_out);
            if !c.is_open() {
                self.handshaking -= 1;
                if c.peer.is_none() || matches!(c.phase, Phase::AwaitProof { .. }) {
                    self.unauthenticated -= 1;
                }
            }
            self.free.push(slot);
        }
    }

    /// Records the failure that ends the job (the first one: later ones are its
    /// consequences), for [`TcpNet::take_failure`].
    #[cold]
    fn fail(&mut self, msg: String) {
        self.failure.get_or_insert(msg);
    }

    /// The failure that ends the job, once: a peer this rank needs was lost or cannot
    /// be reached, or sent a malformed frame.
    #[inline]
    pub fn take_failure(&mut self) -> Option<String> {
        self.failure.take()
    }

    /// An authenticated connection (or one we dialed) failed: the job cannot go on.
    fn lost(&mut self, slot: usize, why: &str) {
        let c = self.conns[slot].as_ref().expect("connection exists");
        if let Some(p) = c.peer.filter(|&p| p >= self.size) {
            return self.depart(p, slot, why);
        }
        let who = c
            .peer
            .map_or_else(|| "a peer".to_string(), |p| format!("rank {p}"));
        let msg = format!("lost the TCP connection to {who} ({}): {why}", c.addr);
        self.fail(msg);
    }

    fn refuse(&mut self, slot: usize, why: &str) {
        self.refused += 1;
        // A peer of another job that dials an exited process's incarnation holds a
        // stale record: expected, and the closed connection tells it. So is a dial that
        // a process of another job (or a dialer that said nothing) gave up.
        let expected = why == handshake::FOR_EARLIER_PROCESS || why == handshake::ABANDONED_DIAL;
        if let Some(c) = self.conns[slot].as_ref().filter(|_| !expected) {
            eprintln!(
                "oxmpi: rank {}: refused a TCP connection from {}: {why}",
                self.me, c.addr
            );
        }
        self.close(slot);
    }

    /// A failure during the handshake: fatal on connections this rank dialed (the peer
    /// it needs cannot be reached), refusal on connections it accepted.
    fn handshake_failed(&mut self, slot: usize, why: &str) {
        let c = self.conns[slot].as_ref().expect("connection exists");
        if matches!(
            c.phase,
            Phase::Connecting { .. } | Phase::AwaitChallenge { .. }
        ) {
            let peer = c.peer.unwrap_or(u32::MAX);
            if peer >= self.size && peer != u32::MAX {
                return self.depart(peer, slot, why);
            }
            let msg = format!("cannot connect to rank {peer} at {}: {why}", c.addr);
            return self.fail(msg);
        }
        self.refuse(slot, why);
    }

    // ----- progress ----------------------------------------------------------------

    /// Handles every ready socket once; returns true if anything happened.
    pub fn poll(&mut self, sink: &mut dyn Sink) -> bool {
        // With few open connections, reading each directly costs one system call per
        // connection and spares the epoll_wait in front of every arrival (the latency
        // path); the epoll set is still consulted every few polls for the listener, the
        // doorbell and handshakes, and whenever this rank sleeps.
        self.polls = self.polls.wrapping_add(1);
        // A connection waiting for room to write goes through epoll too: epoll reports
        // writability without the socket lock that a failing write would take (and hold
        // against the peer's acknowledgements).
        if self.handshaking == 0
            && self.writers == 0
            && self.open.len() <= DIRECT_POLL_MAX
            && self.polls % EPOLL_EVERY != 0
        {
            let mut did = false;
            let mut k = 0;
            while k < self.open.len() {
                did |= self.read_frames(self.open[k], sink);
                k += 1;
            }
            return did;
        }
        let mut evs = [EpollEvent::empty(); 32];
        let n = self.epoll.wait(&mut evs, PollTimeout::ZERO).unwrap_or(0);
        for ev in &evs[..n] {
            match ev.data() {
                TOKEN_LISTENER => self.accept_all(),
                TOKEN_WAKE => {
                    let _ = self.wake.read();
                }
                TOKEN_BELL => {
                    if let Some(b) = &self.bell {
                        b.drain();
                    }
                }
                t => self.conn_ready((t - TOKEN_CONN0) as usize, ev.events(), sink),
            }
        }
        if self.handshaking > 0 {
            self.check_deadlines();
        }
        n > 0
    }

    fn accept_all(&mut self) {
        loop {
            match self.listener.accept() {
                Ok((sock, addr)) => {
                    if self.unauthenticated >= MAX_UNAUTHENTICATED {
                        eprintln!(
                            "oxmpi: rank {}: refused a TCP connection from {addr}: too many unauthenticated connections",
                            self.me
                        );
                        continue;
                    }
                    if sock.set_nonblocking(true).is_err() {
                        continue;
                    }
                    let _ = sock.set_nodelay(true);
                    let deadline = Instant::now() + ACCEPT_HANDSHAKE_LIMIT;
                    let slot =
                        self.insert(Conn::new(sock, addr, None, Phase::AwaitHello { deadline }));
                    self.handshaking += 1;
                    self.unauthenticated += 1;
                    self.register(slot, false);
                    self.debug(|| format!("accepted a connection from {addr}"));
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    // EMFILE and friends: report once per burst, keep running.
                    eprintln!("oxmpi: rank {}: accept failed: {e}", self.me);
                    return;
                }
            }
        }
    }

    fn conn_ready(&mut self, slot: usize, fl: EpollFlags, sink: &mut dyn Sink) {
        let Some(c) = self.conns.get_mut(slot).and_then(|c| c.as_mut()) else {
            return;
        };
        let bad = fl.intersects(EpollFlags::EPOLLERR | EpollFlags::EPOLLHUP);
        if let Phase::Connecting { .. } = c.phase {
            if fl.contains(EpollFlags::EPOLLOUT) || bad {
                self.finish_connect(slot);
            }
            return;
        }
        if fl.contains(EpollFlags::EPOLLOUT) {
            match c.flush() {
                Ok(true) => self.set_out(slot, false),
                Ok(false) => {}
                Err(e) => {
                    if self.conns[slot].as_ref().is_some_and(|c| c.is_open()) {
                        return self.lost(slot, &e.to_string());
                    }
                    self.handshake_failed(slot, &e.to_string());
                    return;
                }
            }
        }
        if fl.intersects(EpollFlags::EPOLLIN) || bad {
            self.read_ready(slot, sink);
        }
    }

    fn finish_connect(&mut self, slot: usize) {
        let c = self.conns[slot].as_mut().expect("connection exists");
        match c.sock.take_error() {
            Ok(None) => {}
            Ok(Some(e)) | Err(e) => {
                self.handshake_failed(slot, &e.to_string());
                return;
            }
        }
        let ni = match handshake::nonce() {
            Ok(n) => n,
            Err(e) => {
                self.handshake_failed(slot, &e);
                return;
            }
        };
        let dest = c.peer.expect("dialed connections know their peer");
        let hello = handshake::hello_for(self.dial_who(dest).0, &ni);
        let c = self.conns[slot].as_mut().expect("connection exists");
        c.queue_copy(&hello);
        let deadline = match c.phase {
            Phase::Connecting { deadline } => deadline,
            _ => Instant::now() + self.settings.connect_timeout,
        };
        c.phase = Phase::AwaitChallenge { ni, deadline };
        match c.flush() {
            Ok(done) => self.set_out(slot, !done),
            Err(e) => self.handshake_failed(slot, &e.to_string()),
        }
    }

    fn check_deadlines(&mut self) {
        let now = Instant::now();
        for slot in 0..self.conns.len() {
            let Some(c) = self.conns[slot].as_ref() else {
                continue;
            };
            let expired = match &c.phase {
                Phase::Connecting { deadline }
                | Phase::AwaitChallenge { deadline, .. }
                | Phase::AwaitHello { deadline }
                | Phase::AwaitPeer { deadline, .. }
                | Phase::AwaitProof { deadline, .. } => now >= *deadline,
                Phase::Open => false,
            };
            if expired {
                let why = format!(
                    "no answer within {} s",
                    match c.phase {
                        Phase::AwaitHello { .. } | Phase::AwaitProof { .. } =>
                            ACCEPT_HANDSHAKE_LIMIT.as_secs(),
                        Phase::AwaitPeer { .. } => DYN_PEER_WAIT.as_secs(),
                        _ => self.settings.connect_timeout.as_secs(),
                    }
                );
                self.handshake_failed(slot, &why);
            }
        }
    }

    fn read_ready(&mut self, slot: usize, sink: &mut dyn Sink) {
        if !self.conns[slot].as_ref().is_some_and(|c| c.is_open()) {
            loop {
                let c = self.conns[slot].as_mut().expect("connection exists");
                match c.read_some() {
                    Ok(Some(0)) => {
                        let why = if c.abandoned_dial(self.size) {
                            handshake::ABANDONED_DIAL
                        } else {
                            "closed during the handshake"
                        };
                        self.handshake_failed(slot, why);
                        return;
                    }
                    Ok(Some(_)) => {}
                    Ok(None) => return,
                    Err(e) => {
                        self.handshake_failed(slot, &e.to_string());
                        return;
                    }
                }
                match self.advance_handshake(slot) {
                    Err(why) => {
                        self.handshake_failed(slot, &why);
                        return;
                    }
                    Ok(true) => break,
                    Ok(false) => {}
                }
            }
        }
        self.read_frames(slot, sink);
    }

    /// Moves the handshake on with the bytes received; Ok(true) once open.
    fn advance_handshake(&mut self, slot: usize) -> Result<bool, String> {
        let (me, size) = (self.me, self.size);
        loop {
            let c = self.conns[slot].as_mut().expect("connection exists");
            match c.phase {
                Phase::Open => return Ok(true),
                Phase::Connecting { .. } => return Ok(false),
                Phase::AwaitHello { deadline } => {
                    let Some(magic) = c.peek::<{ handshake::MAGIC_BYTES }>() else {
                        return Ok(false);
                    };
                    let (from, ni) = if handshake::is_dyn_hello(&magic) {
                        let Some(b) = c.take::<{ handshake::DYN_HELLO_BYTES }>() else {
                            return Ok(false);
                        };
                        let (addr, inc, ni) =
                            handshake::parse_hello_dyn(&b, self.card.port(), self.inc)?;
                        match self.dyn_slot(addr, inc) {
                            Some(from) => (from, ni),
                            None => {
                                // A process of another job that this one has not added
                                // yet: wait for `add_peer`.
                                let deadline = deadline.max(Instant::now() + DYN_PEER_WAIT);
                                let c = self.conns[slot].as_mut().expect("connection exists");
                                c.phase = Phase::AwaitPeer {
                                    addr,
                                    inc,
                                    ni,
                                    deadline,
                                };
                                return Ok(false);
                            }
                        }
                    } else {
                        let Some(b) = c.take::<{ handshake::HELLO_BYTES }>() else {
                            return Ok(false);
                        };
                        handshake::parse_hello(&b, me, size)?
                    };
                    self.send_challenge(slot, from, ni, deadline)?;
                }
                Phase::AwaitPeer {
                    addr,
                    inc,
                    ni,
                    deadline,
                } => {
                    let Some(from) = self.dyn_slot(addr, inc) else {
                        return Ok(false);
                    };
                    self.send_challenge(slot, from, ni, deadline)?;
                }
                Phase::AwaitProof { from, ni, na, .. } => {
                    let Some(b) = c.take::<{ handshake::PROOF_BYTES }>() else {
                        return Ok(false);
                    };
                    let (who, key) = self.accept_who(from);
                    handshake::verify_proof_for(key, who, &ni, &na, &b)?;
                    let c = self.conns[slot].as_mut().expect("connection exists");
                    c.peer = Some(from);
                    c.phase = Phase::Open;
                    c.open_buffers();
                    let addr = c.addr;
                    self.handshaking -= 1;
                    self.unauthenticated -= 1;
                    self.send_conn[from as usize].get_or_insert(slot);
                    self.open.push(slot);
                    self.debug(|| format!("rank {from} connected from {addr}"));
                    return Ok(true);
                }
                Phase::AwaitChallenge { ni, .. } => {
                    let Some(b) = c.take::<{ handshake::CHALLENGE_BYTES }>() else {
                        return Ok(false);
                    };
                    let dest = c.peer.expect("dialed connections know their peer");
                    let (who, key) = self.dial_who(dest);
                    let na = handshake::verify_challenge_for(key, who, &ni, &b)?;
                    let proof = handshake::proof_for(key, who, &ni, &na);
                    let c = self.conns[slot].as_mut().expect("connection exists");
                    c.queue_copy(&proof);
                    c.phase = Phase::Open;
                    c.open_buffers();
                    let done = c.flush().map_err(|e| e.to_string())?;
                    self.handshaking -= 1;
                    self.send_conn[dest as usize].get_or_insert(slot);
                    self.open.push(slot);
                    self.set_out(slot, !done);
                    self.debug(|| format!("connected to rank {dest}"));
                    return Ok(true);
                }
            }
        }
    }

    /// The acceptor's CHALLENGE to `from`, who said HELLO with nonce `ni`.
    fn send_challenge(
        &mut self,
        slot: usize,
        from: u32,
        ni: handshake::Nonce,
        deadline: Instant,
    ) -> Result<(), String> {
        let na = handshake::nonce()?;
        let (who, key) = self.accept_who(from);
        let msg = handshake::challenge_for(key, who, &ni, &na);
        let c = self.conns[slot].as_mut().expect("connection exists");
        c.queue_copy(&msg);
        c.phase = Phase::AwaitProof {
            from,
            ni,
            na,
            deadline,
        };
        let done = c.flush().map_err(|e| e.to_string())?;
        self.set_out(slot, !done);
        Ok(())
    }

    /// Reads and delivers frames until the socket has nothing more.
    fn read_frames(&mut self, slot: usize, sink: &mut dyn Sink) -> bool {
        let mut got = false;
        for _ in 0..64 {
            let c = self.conns[slot].as_mut().expect("connection exists");
            let peer = c.peer.expect("open connections know their peer");
            // A data piece going straight into its receive buffer.
            if let Some(b) = c.body.as_mut() {
                // SAFETY: the device keeps [ptr, ptr+left) of the receive buffer valid until
                // `data_landed` (the request stays in the streaming state until then).
                match unsafe { conn::recv_raw(&c.sock, b.ptr, b.left) } {
                    Ok(0) => {
                        self.closed_by_peer(slot);
                        return got;
                    }
                    Ok(n) => {
                        got = true;
                        b.left -= n;
                        // SAFETY: n <= left.
                        b.ptr = unsafe { b.ptr.add(n) };
                        if b.left == 0 {
                            let hdr = b.hdr;
                            c.body = None;
                            sink.data_landed(peer, &hdr);
                        }
                        continue;
                    }
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => return got,
                    Err(e) => {
                        self.lost(slot, &e.to_string());
                        return got;
                    }
                }
            }
            if c.discard > 0 {
                let mut scratch = [0u8; 4096];
                let n = (c.discard as usize).min(scratch.len());
                // SAFETY: scratch holds n bytes.
                match unsafe { conn::recv_raw(&c.sock, scratch.as_mut_ptr(), n) } {
                    Ok(0) => {
                        self.closed_by_peer(slot);
                        return got;
                    }
                    Ok(k) => {
                        got = true;
                        c.discard -= k as u64;
                        continue;
                    }
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => return got,
                    Err(e) => {
                        self.lost(slot, &e.to_string());
                        return got;
                    }
                }
            }
            // Whole frames already buffered.
            loop {
                let buffered = &c.rx[c.rx_start..c.rx_end];
                let (hdr, plen) = match parse_prefix(buffered, MAX_EAGER) {
                    Ok(Some(x)) => x,
                    Ok(None) => break,
                    Err(e) => {
                        let msg =
                            format!("rank {peer} ({}) sent a malformed TCP frame: {e}", c.addr);
                        self.fail(msg);
                        return got;
                    }
                };
                let have = buffered.len() - PREFIX_BYTES;
                if have >= plen {
                    let start = c.rx_start + PREFIX_BYTES;
                    c.rx_start = start + plen;
                    sink.packet(peer, hdr, &c.rx[start..start + plen]);
                    continue;
                }
                if hdr.kind == Kind::Data {
                    let part_start = c.rx_start + PREFIX_BYTES;
                    c.rx_start = c.rx_end;
                    match sink.data_target(peer, &hdr) {
                        Some(p) => {
                            // SAFETY: the target holds hdr.len = plen > have bytes.
                            unsafe {
                                std::ptr::copy_nonoverlapping(
                                    c.rx.as_ptr().add(part_start),
                                    p,
                                    have,
                                )
                            };
                            c.body = Some(Body {
                                // SAFETY: have < plen, inside the target.
                                ptr: unsafe { p.add(have) },
                                left: plen - have,
                                hdr,
                            });
                        }
                        None => c.discard = (plen - have) as u64,
                    }
                    break;
                }
                c.make_room(PREFIX_BYTES + plen);
                break;
            }
            if c.body.is_some() || c.discard > 0 {
                continue;
            }
            let free = c.rx.len() - c.rx_end + c.rx_start;
            match c.read_some() {
                Ok(Some(0)) => {
                    self.closed_by_peer(slot);
                    return got;
                }
                // A short read emptied the socket: done until epoll says otherwise.
                Ok(Some(n)) if n < free => {
                    got = true;
                    if !self.deliver_buffered(slot, sink) {
                        return got;
                    }
                }
                Ok(Some(_)) => got = true,
                Ok(None) => return got,
                Err(e) => {
                    self.lost(slot, &e.to_string());
                    return got;
                }
            }
        }
        got
    }

    /// Delivers the complete frames in the buffer; true if a data piece started (so the
    /// caller should keep reading).
    fn deliver_buffered(&mut self, slot: usize, sink: &mut dyn Sink) -> bool {
        let c = self.conns[slot].as_mut().expect("connection exists");
        let peer = c.peer.expect("open connections know their peer");
        loop {
            let buffered = &c.rx[c.rx_start..c.rx_end];
            let (hdr, plen) = match parse_prefix(buffered, MAX_EAGER) {
                Ok(Some(x)) => x,
                Ok(None) => return false,
                Err(e) => {
                    let msg = format!("rank {peer} ({}) sent a malformed TCP frame: {e}", c.addr);
                    self.fail(msg);
                    return false;
                }
            };
            if buffered.len() - PREFIX_BYTES >= plen {
                let start = c.rx_start + PREFIX_BYTES;
                c.rx_start = start + plen;
                sink.packet(peer, hdr, &c.rx[start..start + plen]);
            } else {
                // An incomplete frame: the main loop finishes it.
                return true;
            }
        }
    }

    fn closed_by_peer(&mut self, slot: usize) {
        let c = self.conns[slot].as_ref().expect("connection exists");
        if let Some(p) = c.peer.filter(|&p| p >= self.size) {
            return self.depart(p, slot, "it closed the connection");
        }
        let who = c
            .peer
            .map_or_else(|| "a peer".to_string(), |p| format!("rank {p}"));
        let msg = format!(
            "{who} ({}) closed its TCP connection unexpectedly (did it exit or crash?)",
            c.addr
        );
        self.fail(msg);
    }
}

impl Drop for TcpNet {
    fn drop(&mut self) {
        // Sockets close with their owners; nothing is left to flush here (finalize waits
        // for `has_outgoing` to become false before it synchronises and drops us).
        let _ = HEADER_BYTES;
    }
}
