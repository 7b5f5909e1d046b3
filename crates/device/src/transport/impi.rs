//! IMPI host channels (IMPI 0.0, chapter 3): the transport toward the ranks of other
//! clients of an IMPI job (`impirun -client`, docs/impi.md "Data path"). Every oxmpi
//! rank is its own IMPI host; its channels to the other clients' hosts were connected
//! by `impirun` and handed over at `MPI_Init` ([`ImpiJoin::fetch`]).
//!
//! The device's protocol packets are translated to and from chapter 3's packets:
//! `Eager` is `DATA` (`DATASYNC` with `FLAG_SYNC`), `SyncAck` is `SYNCACK`; `Rts` is a
//! long message's first `DATASYNC`, carrying the first `maxdatalen` bytes, the
//! receiver's `Cts` (or `Fin`, when it wants nothing) is its `SYNCACK`, and the
//! streamed `Data` pieces are the remaining `DATA` packets; `CancelReq`/`CancelResp` are
//! `CANCEL` and `CANCELYES`/`CANCELNO`. Flow control (3.6): each sender keeps at most
//! the destination host's `hiwater` packets unacknowledged per proc pair (the rest wait
//! here, in order), and each receiver answers `PROTOACK` for every `ackmark` data
//! packets that arrive. `IMPI_PK_FINI` ends each channel at `MPI_Finalize` (3.8).

use oxmpi_impi::finalize::Finalizer;
use oxmpi_impi::packet::{Packet, PacketStream, PacketType, Proc, HEADER_LEN};
use oxmpi_impi::protocol::{RecvWindow, SendWindow};
use std::collections::{HashMap, VecDeque};
use std::io::{self, ErrorKind, IoSlice, IoSliceMut, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};

use crate::device::packet::{Header, Kind, FLAG_CANCELLED, FLAG_SYNC};
use crate::transport::bell::Bell;
use crate::transport::tcp::Sleeper;
use nix::sys::epoll::{Epoll, EpollCreateFlags, EpollEvent, EpollFlags};
use std::os::fd::BorrowedFd;
use std::sync::Arc;

/// Bytes a channel may hold waiting for the socket or the flow-control window before
/// the transport reports no room (the protocol then queues the packet itself).
const QUEUE_BYTES: usize = 4 << 20;

/// Most bytes read from a channel in one call (then the packets in them are handled
/// before the next read, which bounds the inbox).
const READ_BYTES: usize = 256 * 1024;

/// Most packets of a long message written with one vectored write (and most read
/// with one vectored read).
const BATCH: usize = 16;

/// Most reads from one channel in one poll.
const READ_ROUNDS: usize = 64;

/// How long `MPI_Finalize` waits for a channel's finalization.
const FINI_TIMEOUT: Duration = Duration::from_secs(120);

/// A host of the IMPI job.
#[derive(Clone, Debug)]
pub struct HostInfo {
    pub client: u32,
    pub ackmark: u32,
    pub hiwater: u32,
}

/// What `impirun` tells a rank at `MPI_Init`.
#[derive(Debug)]
pub struct ImpiJoin {
    /// This rank's `MPI_COMM_WORLD` rank and host.
    pub world: u32,
    pub host: u32,
    pub maxdatalen: u32,
    pub tag_ub: i32,
    /// The negotiated `IMPI_C_COLL_XSIZE` and `IMPI_C_COLL_MAXLINEAR` (IMPI chapter 4).
    pub coll_xsize: u32,
    pub coll_maxlinear: u32,
    pub hosts: Vec<HostInfo>,
    /// Every proc's host and identifier, by world rank.
    pub procs: Vec<(u32, Proc)>,
    /// This host's channels: the other host and the connection.
    pub chans: Vec<(u32, OwnedFd)>,
}

fn bad(what: impl std::fmt::Display) -> io::Error {
    io::Error::new(
        ErrorKind::InvalidData,
        format!("IMPI job description: {what}"),
    )
}

impl ImpiJoin {
    /// The world size.
    pub fn size(&self) -> u32 {
        self.procs.len() as u32
    }

    /// This rank's client.
    pub fn client(&self) -> u32 {
        self.hosts[self.host as usize].client
    }

    /// Asks `impirun` (unix socket `path`) for PMI rank `rank`'s description and channels.
    pub fn fetch(path: &str, rank: u32) -> io::Result<ImpiJoin> {
        let mut s = UnixStream::connect(path)?;
        s.set_read_timeout(Some(Duration::from_secs(60)))?;
        s.write_all(format!("rank {rank}\n").as_bytes())?;
        let mut n = [0u8; 4];
        s.read_exact(&mut n)?;
        let n = u32::from_le_bytes(n) as usize;
        if n > 64 << 20 {
            return Err(bad(format!("{n} bytes")));
        }
        let mut text = vec![0u8; n];
        s.read_exact(&mut text)?;
        let text = String::from_utf8(text).map_err(bad)?;
        let mut j = ImpiJoin::parse(&text)?;
        let want = text.lines().filter(|l| l.starts_with("chan ")).count();
        let mut fds: Vec<OwnedFd> = Vec::with_capacity(want);
        while fds.len() < want {
            let mut byte = [0u8; 1];
            let mut iov = [IoSliceMut::new(&mut byte)];
            let mut space = nix::cmsg_space!([RawFd; 253]);
            let msg = nix::sys::socket::recvmsg::<()>(
                s.as_raw_fd(),
                &mut iov,
                Some(&mut space),
                nix::sys::socket::MsgFlags::MSG_CMSG_CLOEXEC,
            )
            .map_err(|e| io::Error::from_raw_os_error(e as i32))?;
            let mut got = 0;
            for c in msg
                .cmsgs()
                .map_err(|e| io::Error::from_raw_os_error(e as i32))?
            {
                if let nix::sys::socket::ControlMessageOwned::ScmRights(v) = c {
                    for fd in v {
                        // SAFETY: the kernel just gave us this descriptor; nothing else
                        // owns it.
                        fds.push(unsafe { OwnedFd::from_raw_fd(fd) });
                        got += 1;
                    }
                }
            }
            if got == 0 {
                return Err(bad("impirun sent no channels"));
            }
        }
        let hosts: Vec<u32> = text
            .lines()
            .filter_map(|l| l.strip_prefix("chan "))
            .map(|v| v.trim().parse::<u32>().map_err(bad))
            .collect::<io::Result<_>>()?;
        for h in &hosts {
            if *h as usize >= j.hosts.len() {
                return Err(bad(format!("channel to host {h}")));
            }
        }
        j.chans = hosts.into_iter().zip(fds).collect();
        Ok(j)
    }

    fn parse(text: &str) -> io::Result<ImpiJoin> {
        let mut lines = text.lines();
        if lines.next() != Some("oxmpi-impi 1") {
            return Err(bad("unknown version"));
        }
        let mut j = ImpiJoin {
            world: 0,
            host: 0,
            maxdatalen: 0,
            tag_ub: 0,
            coll_xsize: 1024,
            coll_maxlinear: 4,
            hosts: Vec::new(),
            procs: Vec::new(),
            chans: Vec::new(),
        };
        let num = |v: Option<&str>| -> io::Result<i64> {
            v.and_then(|x| x.parse().ok())
                .ok_or_else(|| bad(format!("bad number {v:?}")))
        };
        let mut size = 0;
        for l in lines {
            let mut w = l.split(' ');
            match w.next() {
                Some("me") => {
                    j.world = num(w.next())? as u32;
                    j.host = num(w.next())? as u32;
                }
                Some("size") => size = num(w.next())? as usize,
                Some("maxdatalen") => j.maxdatalen = num(w.next())? as u32,
                Some("tagub") => j.tag_ub = num(w.next())? as i32,
                Some("coll") => {
                    j.coll_xsize = num(w.next())? as u32;
                    j.coll_maxlinear = num(w.next())? as u32;
                }
                Some("host") => {
                    let _ = num(w.next())?;
                    j.hosts.push(HostInfo {
                        client: num(w.next())? as u32,
                        ackmark: num(w.next())? as u32,
                        hiwater: num(w.next())? as u32,
                    });
                }
                Some("proc") => {
                    let _ = num(w.next())?;
                    let host = num(w.next())? as u32;
                    let hex = w.next().unwrap_or("");
                    let mut hostid = [0u8; 16];
                    if hex.len() != 32 {
                        return Err(bad(format!("host id {hex:?}")));
                    }
                    for (i, b) in hostid.iter_mut().enumerate() {
                        *b = u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).map_err(bad)?;
                    }
                    let pid = num(w.next())?;
                    j.procs.push((host, Proc { hostid, pid }));
                }
                Some("chan") | Some("") | None => {}
                Some(x) => return Err(bad(format!("unknown line {x:?}"))),
            }
        }
        let ok = size == j.procs.len()
            && (j.world as usize) < size
            && (j.host as usize) < j.hosts.len()
            && j.maxdatalen > 0
            && j.procs.iter().all(|p| (p.0 as usize) < j.hosts.len())
            && j.hosts
                .iter()
                .all(|h| 1 <= h.ackmark && h.ackmark <= h.hiwater);
        if !ok {
            return Err(bad("inconsistent"));
        }
        Ok(j)
    }
}

/// What the transport hands to the protocol.
pub trait Sink {
    fn packet(&mut self, from: u32, hdr: Header, payload: &[u8]);
    /// A `Data` piece of a long message (`hdr.rreq`, offset `hdr.addr`, `hdr.len`
    /// bytes) is arriving: where its bytes go, or None to have them handed to
    /// [`Sink::packet`] instead.
    fn data_target(&mut self, from: u32, hdr: &Header) -> Option<*mut u8>;
    /// Like [`Sink::data_target`], but only where the piece lands in the receive
    /// buffer itself, contiguous with the rest of the message (no bounce buffer): then
    /// the bytes after the piece may be read ahead into the buffer too.
    fn data_span(&mut self, from: u32, hdr: &Header) -> Option<*mut u8>;
    /// Every byte of a piece given a target has been written there.
    fn data_landed(&mut self, from: u32, hdr: &Header);
}

/// The rest of a long message's `DATA` packet, read from the socket straight into
/// the receive buffer.
struct Body {
    from: u32,
    /// The piece for the sink (`rreq`, offset, length).
    hdr: Header,
    ptr: *mut u8,
    left: usize,
    /// The message's `pk_drqid`.
    drqid: u64,
    /// The piece lies in the receive buffer itself ([`Sink::data_span`]), so the
    /// message's next bytes go right after it.
    span: bool,
}

/// A long message this rank sends: its first packet left with `first` bytes.
struct LongSend {
    msglen: u64,
    first: u64,
    /// The receiver's `pk_drqid` once its `SYNCACK` came.
    drqid: u64,
    srqid: u64,
    /// The envelope every packet of the message carries (3.5: data packets use all
    /// fields): the first packet's header.
    env: Header,
}

/// A long message arriving: where its remaining `DATA` go.
struct LongRecv {
    from: u32,
    /// The receive request (`None`: the receiver wants nothing more; discard).
    rreq: Option<u32>,
    /// The next byte's offset and how many bytes the receive wants.
    off: u64,
    want: u64,
    left: u64,
}

/// A first packet of a long message, not matched yet.
struct Announced {
    first: Vec<u8>,
    msglen: u64,
}

/// A message that waits for this rank's answer.
struct Waiting {
    ctx: u32,
    src_rank: i32,
    /// The sender's whole `pk_srqid`, which every answer echoes (3.7.1).
    srqid: u64,
}

/// Per proc pair (this rank and a remote proc).
struct Pair {
    chan: usize,
    id: Proc,
    send: SendWindow,
    recv: RecvWindow,
    /// Encoded packets waiting for the window.
    held: VecDeque<Vec<u8>>,
    seq: u64,
}

struct Chan {
    host: u32,
    sock: TcpStream,
    out: Vec<u8>,
    out_off: usize,
    inp: PacketStream,
    /// The other host's `IMPI_PK_FINI` has arrived (it finalized first).
    peer_fini: bool,
    /// EPOLLOUT is in the channel's interest set (it has bytes the socket refused).
    out_interest: bool,
    /// A packet's data being read straight into its receive buffer.
    body: Option<Body>,
    /// The last packet's data went straight to its receive buffer: the next read
    /// takes a header alone, so that the data of a next such packet does too.
    direct: bool,
}

impl Chan {
    /// Writes a packet (`head`, then `data`) with one vectored write when the socket
    /// takes some of it (what it does not take is queued); false when it takes
    /// nothing.
    fn write_now(&mut self, head: &[u8], data: &[u8]) -> io::Result<bool> {
        self.write_parts(&[head, data]).map(|n| n > 0)
    }

    /// Writes whole packets (`parts`: each packet's header, then its data) with one
    /// vectored write; the rest of a packet the socket takes in part is queued, the
    /// packets it did not reach are not. Returns how many packets went (in whole or in
    /// part); 0 when the socket took nothing.
    fn write_parts(&mut self, parts: &[&[u8]]) -> io::Result<usize> {
        let mut iov = [IoSlice::new(&[]); 2 * BATCH];
        for (v, p) in iov.iter_mut().zip(parts) {
            *v = IoSlice::new(p);
        }
        let iov = &iov[..parts.len().min(2 * BATCH)];
        let mut done = loop {
            match self.sock.write_vectored(iov) {
                Ok(n) => break n,
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) if e.kind() == ErrorKind::WouldBlock => return Ok(0),
                Err(e) => return Err(e),
            }
        };
        if done == 0 {
            return Ok(0);
        }
        for (i, pk) in parts.chunks(2).enumerate() {
            let n: usize = pk.iter().map(|p| p.len()).sum();
            if done < n {
                // This packet went in part: queue its rest.
                let mut skip = done;
                for p in pk {
                    let s = skip.min(p.len());
                    self.out.extend_from_slice(&p[s..]);
                    skip -= s;
                }
                return Ok(i + 1);
            }
            done -= n;
            if done == 0 {
                return Ok(i + 1);
            }
        }
        Ok(parts.len() / 2)
    }

    /// Puts EPOLLOUT in (or out of) the channel's interest set, whose token is `i`.
    fn watch_out(&mut self, epoll: &Epoll, i: usize, want: bool) {
        if want == self.out_interest {
            return;
        }
        let mut fl = EpollFlags::EPOLLIN;
        if want {
            fl |= EpollFlags::EPOLLOUT;
        }
        let mut ev = EpollEvent::new(fl, i as u64);
        // A channel that cannot be watched for room is still written at every poll;
        // the rank then naps and retries.
        if epoll.modify(&self.sock, &mut ev).is_ok() {
            self.out_interest = want;
        }
    }

    /// Writes a packet (`head`, then `data`) at once when nothing waits before it,
    /// with one vectored write and no copy; queues what the socket does not take.
    fn write_or_queue(&mut self, head: &[u8], data: &[u8]) -> io::Result<()> {
        if self.out_off < self.out.len() || !self.write_now(head, data)? {
            self.out.extend_from_slice(head);
            self.out.extend_from_slice(data);
        }
        Ok(())
    }
}

/// The IMPI transport of one rank.
pub struct ImpiNet {
    me: Proc,
    maxdatalen: u32,
    my_ackmark: u32,
    chans: Vec<Chan>,
    /// Remote world rank → its pair state (None for ranks of this client).
    pairs: Vec<Option<Pair>>,
    by_id: HashMap<Proc, u32>,
    long_sends: HashMap<(u32, u32), LongSend>,
    /// By this rank's `pk_drqid`.
    long_recvs: HashMap<u64, LongRecv>,
    /// By sender rank and the low half of its `pk_srqid` (the device's request ids are
    /// 32 bits).
    announced: HashMap<(u32, u32), Announced>,
    /// Messages that wait for this rank's answer (sync or long): their context and
    /// sender rank, for a cancel request, which names the send request only.
    waiting: HashMap<(u32, u32), Waiting>,
    /// Pieces to hand to the protocol at the next poll (a long message's first bytes,
    /// once its receive asked for them).
    local: VecDeque<(u32, Header, Vec<u8>)>,
    next_discard: u64,
    failure: Option<String>,
    buf: Vec<u8>,
    /// The channels (and the doorbell, and a TCP transport's set) a blocked rank
    /// sleeps on.
    epoll: Arc<Epoll>,
    bell: Option<Bell>,
}

fn io_err(e: impl std::fmt::Display) -> String {
    e.to_string()
}

impl ImpiNet {
    /// The channels of `j`; `bell` is this rank's doorbell when it has shared-memory
    /// peers and no TCP transport (whose set holds it otherwise).
    pub fn new(j: ImpiJoin, bell: Option<Bell>) -> io::Result<ImpiNet> {
        let to_io = |e: nix::Error| io::Error::from_raw_os_error(e as i32);
        let epoll = Epoll::new(EpollCreateFlags::EPOLL_CLOEXEC).map_err(to_io)?;
        if let Some(b) = &bell {
            epoll
                .add(b.socket(), EpollEvent::new(EpollFlags::EPOLLIN, u64::MAX))
                .map_err(to_io)?;
        }
        let mut chans = Vec::new();
        let mut chan_of = HashMap::new();
        for (h, fd) in j.chans {
            let sock = TcpStream::from(fd);
            sock.set_nonblocking(true)?;
            epoll
                .add(
                    &sock,
                    EpollEvent::new(EpollFlags::EPOLLIN, chans.len() as u64),
                )
                .map_err(to_io)?;
            let _ = sock.set_nodelay(true);
            chan_of.insert(h, chans.len());
            chans.push(Chan {
                host: h,
                sock,
                out: Vec::new(),
                out_off: 0,
                inp: PacketStream::new(j.maxdatalen),
                peer_fini: false,
                out_interest: false,
                body: None,
                direct: false,
            });
        }
        let my_client = j.hosts[j.host as usize].client;
        let mine = j.hosts[j.host as usize].clone();
        let mut pairs = Vec::new();
        let mut by_id = HashMap::new();
        for (w, (h, id)) in j.procs.iter().enumerate() {
            by_id.insert(*id, w as u32);
            let host = &j.hosts[*h as usize];
            if host.client == my_client {
                pairs.push(None);
                continue;
            }
            let chan = *chan_of
                .get(h)
                .ok_or_else(|| bad(format!("no channel to host {h} (rank {w})")))?;
            pairs.push(Some(Pair {
                chan,
                id: *id,
                send: SendWindow::new(host.ackmark, host.hiwater),
                recv: RecvWindow::new(mine.ackmark, mine.hiwater),
                held: VecDeque::new(),
                seq: 0,
            }));
        }
        Ok(ImpiNet {
            me: j.procs[j.world as usize].1,
            maxdatalen: j.maxdatalen,
            my_ackmark: mine.ackmark,
            chans,
            pairs,
            by_id,
            long_sends: HashMap::new(),
            long_recvs: HashMap::new(),
            announced: HashMap::new(),
            waiting: HashMap::new(),
            local: VecDeque::new(),
            next_discard: 1 << 62,
            failure: None,
            buf: vec![0u8; 256 * 1024],
            epoll: Arc::new(epoll),
            bell,
        })
    }

    /// Adds another transport's epoll set (TCP's) to the set a blocked rank sleeps on.
    pub fn nest(&mut self, fd: BorrowedFd<'_>) -> io::Result<()> {
        self.epoll
            .add(fd, EpollEvent::new(EpollFlags::EPOLLIN, u64::MAX - 1))
            .map_err(|e| io::Error::from_raw_os_error(e as i32))
    }

    /// Where a blocked rank sleeps: until a channel (or the doorbell, or a nested set)
    /// is readable.
    pub fn sleeper(&self) -> Sleeper {
        Sleeper::on(self.epoll.clone())
    }

    /// The largest message sent in one packet (the device's eager limit toward IMPI peers).
    pub fn maxdatalen(&self) -> usize {
        self.maxdatalen as usize
    }

    /// The failure that ended the transport, once.
    pub fn take_failure(&mut self) -> Option<String> {
        self.failure.take()
    }

    fn pair(&mut self, dest: u32) -> &mut Pair {
        self.pairs[dest as usize]
            .as_mut()
            .expect("IMPI route to a rank of another client")
    }

    fn queued(&self, dest: u32) -> usize {
        let p = self.pairs[dest as usize].as_ref().expect("IMPI peer");
        self.chans[p.chan].out.len() - self.chans[p.chan].out_off
            + p.held.iter().map(Vec::len).sum::<usize>()
    }

    /// Records the first failure of the transport.
    fn fail(&mut self, msg: impl FnOnce() -> String) {
        if self.failure.is_none() {
            self.failure = Some(msg());
        }
    }

    /// Sends a packet (`head` and `data`) toward `dest`, data packets (`counted`)
    /// through the window: held in order while it is full.
    fn emit(&mut self, dest: u32, head: &[u8], data: &[u8], counted: bool) {
        let p = self.pairs[dest as usize].as_mut().expect("IMPI peer");
        if counted {
            if !(p.send.can_send() && p.held.is_empty()) {
                let mut b = Vec::with_capacity(head.len() + data.len());
                b.extend_from_slice(head);
                b.extend_from_slice(data);
                p.held.push_back(b);
                return;
            }
            p.send.sent();
        }
        let c = &mut self.chans[p.chan];
        if let Err(e) = c.write_or_queue(head, data) {
            let host = c.host;
            c.out_off = c.out.len();
            self.fail(|| format!("IMPI channel to host {host}: {e}"));
        }
    }

    fn data_packet(
        &mut self,
        dest: u32,
        sync: bool,
        (srqid, drqid, msglen): (u64, u64, u64),
        hdr: &Header,
        data: &[u8],
    ) {
        let me = self.me;
        let p = self.pair(dest);
        p.seq += 1;
        let pk = Packet::data(
            sync,
            me,
            p.id,
            srqid,
            drqid,
            msglen,
            data.len() as u32,
            hdr.src_rank,
            hdr.tag,
            u64::from(hdr.ctx),
            p.seq,
        );
        self.emit(dest, &pk.encode(), data, true);
    }

    fn control(&mut self, dest: u32, pk: Packet) {
        self.emit(dest, &pk.encode(), &[], false);
    }

    /// Sends packet `hdr` with `payload` to `dest` (a rank of another client); false
    /// when the channel holds too much already.
    pub fn try_send(&mut self, dest: u32, hdr: &Header, payload: &[u8]) -> bool {
        if self.queued(dest) > QUEUE_BYTES {
            self.flush();
            if self.queued(dest) > QUEUE_BYTES {
                return false;
            }
        }
        let me = self.me;
        let id = self.pair(dest).id;
        match hdr.kind {
            Kind::Eager => {
                let sync = hdr.flags & FLAG_SYNC != 0;
                self.data_packet(dest, sync, (u64::from(hdr.sreq), 0, hdr.len), hdr, payload);
            }
            Kind::Rts => {
                // A long message: the first packet carries maxdatalen bytes of the
                // (contiguous: the protocol stages toward IMPI peers) send buffer.
                let first = u64::from(self.maxdatalen).min(hdr.len);
                // SAFETY: `addr` is the sender's contiguous buffer of `len` bytes, valid
                // until the send completes, which waits for the answer to this packet.
                let data =
                    unsafe { std::slice::from_raw_parts(hdr.addr as *const u8, first as usize) };
                self.data_packet(dest, true, (u64::from(hdr.sreq), 0, hdr.len), hdr, data);
                self.long_sends.insert(
                    (dest, hdr.sreq),
                    LongSend {
                        msglen: hdr.len,
                        first,
                        drqid: 0,
                        srqid: u64::from(hdr.sreq),
                        env: *hdr,
                    },
                );
            }
            Kind::SyncAck => {
                let srqid = self.answered(dest, hdr.sreq);
                self.control(dest, Packet::sync_ack(me, id, srqid, 0));
            }
            Kind::Cts | Kind::Fin => {
                // The receiver of a long message asks for the rest (Fin: wants none).
                let sreq = self.answered(dest, hdr.sreq);
                let Some(a) = self.announced.remove(&(dest, hdr.sreq)) else {
                    return true;
                };
                let want = if hdr.kind == Kind::Cts { hdr.len } else { 0 };
                let drqid = self.next_discard;
                self.next_discard += 1;
                let got = a.first.len() as u64;
                let n = got.min(want);
                if n > 0 {
                    let mut h = Header::new(Kind::Data);
                    h.rreq = hdr.rreq;
                    h.addr = 0;
                    h.len = n;
                    let mut first = a.first;
                    first.truncate(n as usize);
                    self.local.push_back((dest, h, first));
                }
                self.long_recvs.insert(
                    drqid,
                    LongRecv {
                        from: dest,
                        rreq: (hdr.kind == Kind::Cts).then_some(hdr.rreq),
                        off: got,
                        want,
                        left: a.msglen - got,
                    },
                );
                if a.msglen == got {
                    self.long_recvs.remove(&drqid);
                }
                self.control(dest, Packet::sync_ack(me, id, sreq, drqid));
            }
            Kind::Data => {
                // A piece of a long message being streamed after the receiver's
                // SYNCACK: what the first packet did not carry goes as DATA packets.
                let Some(ls) = self.long_sends.get(&(dest, hdr.rreq)) else {
                    return true;
                };
                let (srqid, drqid, first, msglen) = (ls.srqid, ls.drqid, ls.first, ls.msglen);
                let env = ls.env;
                let start = hdr.addr.max(first);
                let end = hdr.addr + payload.len() as u64;
                let mut off = start;
                while off < end {
                    let n = (end - off).min(u64::from(self.maxdatalen));
                    let a = (off - hdr.addr) as usize;
                    let piece = &payload[a..a + n as usize];
                    self.data_packet(dest, false, (srqid, drqid, msglen), &env, piece);
                    off += n;
                }
                if end >= msglen {
                    self.long_sends.remove(&(dest, hdr.rreq));
                }
            }
            Kind::CancelReq => {
                self.control(dest, Packet::cancel(me, id, u64::from(hdr.sreq)));
            }
            Kind::CancelResp => {
                let yes = hdr.flags & FLAG_CANCELLED != 0;
                let srqid = self.answered(dest, hdr.sreq);
                if yes {
                    self.announced.remove(&(dest, hdr.sreq));
                }
                self.control(dest, Packet::cancel_reply(yes, me, id, srqid));
            }
        }
        self.flush();
        true
    }

    /// The message of `dest`'s send request `sreq` (the low half of its `pk_srqid`) has
    /// been answered: it waits no more; returns its whole `pk_srqid`.
    fn answered(&mut self, dest: u32, sreq: u32) -> u64 {
        self.waiting
            .remove(&(dest, sreq))
            .map_or(u64::from(sreq), |w| w.srqid)
    }

    /// Writes what the sockets take; a channel with bytes left waits for EPOLLOUT in
    /// the set a blocked rank sleeps on.
    pub fn flush(&mut self) -> bool {
        let mut did = false;
        for (i, c) in self.chans.iter_mut().enumerate() {
            while c.out_off < c.out.len() {
                match c.sock.write(&c.out[c.out_off..]) {
                    Ok(0) => break,
                    Ok(n) => {
                        c.out_off += n;
                        did = true;
                    }
                    Err(e) if e.kind() == ErrorKind::Interrupted => {}
                    Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                    Err(e) => {
                        if self.failure.is_none() {
                            self.failure = Some(format!("IMPI channel to host {}: {e}", c.host));
                        }
                        c.out_off = c.out.len();
                    }
                }
            }
            if c.out_off == c.out.len() {
                c.out.clear();
                c.out_off = 0;
            } else if c.out_off > (1 << 20) {
                c.out.drain(..c.out_off);
                c.out_off = 0;
            }
            let want = c.out_off < c.out.len();
            c.watch_out(&self.epoll, i, want);
        }
        did
    }

    /// Writes packets of long message `sreq` to `dest` straight from its contiguous
    /// send buffer (`buf`, `len` bytes) from stream offset `*off`, as far as the
    /// window and the socket take them, up to [`BATCH`] packets a vectored write (what
    /// the socket takes of a packet in part is copied to the channel's queue). True
    /// when anything was written; `*off` reaches `len` once every byte has left (the
    /// buffer is free then).
    ///
    /// # Safety
    /// `[buf, buf + len)` must stay readable for the call.
    pub unsafe fn pump_stream(
        &mut self,
        dest: u32,
        sreq: u32,
        buf: *const u8,
        len: u64,
        off: &mut u64,
    ) -> bool {
        let Some(ls) = self.long_sends.get(&(dest, sreq)) else {
            // Cancelled, or the channel failed: nothing more goes.
            *off = len;
            return false;
        };
        let (srqid, drqid, first, msglen, env) = (ls.srqid, ls.drqid, ls.first, ls.msglen, ls.env);
        let (me, max) = (self.me, u64::from(self.maxdatalen));
        *off = (*off).max(first);
        let mut did = false;
        let mut heads = [[0u8; HEADER_LEN]; BATCH];
        while *off < len {
            let p = self.pairs[dest as usize].as_mut().expect("IMPI peer");
            let c = &mut self.chans[p.chan];
            if !p.held.is_empty() || c.out_off < c.out.len() {
                break;
            }
            let k = (p.send.room() as usize)
                .min(BATCH)
                .min((len - *off).div_ceil(max) as usize);
            if k == 0 {
                break;
            }
            // The packets' headers and data, alternating.
            let mut parts: [&[u8]; 2 * BATCH] = [&[]; 2 * BATCH];
            let mut at = *off;
            for (i, h) in heads[..k].iter_mut().enumerate() {
                let n = (len - at).min(max);
                *h = Packet::data(
                    false,
                    me,
                    p.id,
                    srqid,
                    drqid,
                    msglen,
                    n as u32,
                    env.src_rank,
                    env.tag,
                    u64::from(env.ctx),
                    p.seq + 1 + i as u64,
                )
                .encode();
                parts[2 * i] = h;
                // SAFETY: [buf + at, buf + at + n) lies in the send buffer (the
                // caller's contract).
                parts[2 * i + 1] =
                    unsafe { std::slice::from_raw_parts(buf.add(at as usize), n as usize) };
                at += n;
            }
            match c.write_parts(&parts[..2 * k]) {
                Ok(0) => {
                    // The socket is full: wait for room in the set the rank sleeps on.
                    let ch = p.chan;
                    self.chans[ch].watch_out(&self.epoll, ch, true);
                    break;
                }
                Ok(sent) => {
                    // Whole packets, the last perhaps in part (its rest is queued).
                    for _ in 0..sent {
                        p.send.sent();
                    }
                    p.seq += sent as u64;
                    *off = (*off + sent as u64 * max).min(len);
                    did = true;
                    if sent < k {
                        break;
                    }
                }
                Err(e) => {
                    let host = c.host;
                    self.fail(|| format!("IMPI channel to host {host}: {e}"));
                    *off = len;
                }
            }
        }
        if *off >= len {
            self.long_sends.remove(&(dest, sreq));
        }
        did
    }

    /// Whether some channel has bytes not yet written.
    pub fn has_outgoing(&self) -> bool {
        self.chans.iter().any(|c| c.out_off < c.out.len())
            || self.pairs.iter().flatten().any(|p| !p.held.is_empty())
    }

    /// Reads every channel and hands what arrived to `sink`. Returns true if anything
    /// happened.
    pub fn poll(&mut self, sink: &mut impl Sink) -> bool {
        let mut did = false;
        if let Some(b) = &self.bell {
            b.drain();
        }
        while let Some((from, h, data)) = self.local.pop_front() {
            sink.packet(from, h, &data);
            did = true;
        }
        for i in 0..self.chans.len() {
            // Bounded, so that a sender that never pauses cannot hold the rank here.
            for _ in 0..READ_ROUNDS {
                let (direct, queued) = match self.read_chan(i, sink) {
                    Ok(Some(x)) => x,
                    Ok(None) => break,
                    Err(e) => {
                        self.fail(|| e);
                        break;
                    }
                };
                did = true;
                if !self.take_packets(i, sink) {
                    break;
                }
                // A short read into the stream emptied the socket.
                let c = &self.chans[i];
                if direct == 0 && c.body.is_none() && !c.direct && queued < READ_BYTES {
                    break;
                }
            }
        }
        did |= self.flush();
        did
    }

    /// The sizes of the packets expected after the one whose data is being read
    /// straight into its receive buffer on channel `i` (`body`): the same message's
    /// next `DATA` packets, full ones while the message has more, as long as the
    /// receive wants them and its buffer holds them right after the body. Their data
    /// can then be read ahead with the body's rest, into `sizes` (how many, at most
    /// `BATCH - 1`).
    fn read_ahead(&self, b: &Body, sizes: &mut [usize; BATCH]) -> usize {
        let Some(lr) = self.long_recvs.get(&b.drqid) else {
            return 0;
        };
        if !b.span || lr.rreq != Some(b.hdr.rreq) || lr.from != b.from {
            return 0;
        }
        let (mut at, mut left, mut k) = (lr.off, lr.left, 0);
        while k < BATCH - 1 {
            let n = left.min(u64::from(self.maxdatalen));
            if n == 0 || at + n > lr.want {
                break;
            }
            sizes[k] = n as usize;
            (at, left, k) = (at + n, left - n, k + 1);
        }
        k
    }

    /// One read from channel `i`: the rest of a packet's data straight into its
    /// receive buffer (with the headers and data of the same message's next packets
    /// read ahead, [`ImpiNet::read_ahead`], then at most a header into the stream), or
    /// into the stream. The bytes that went each way; None when the socket had
    /// nothing.
    fn read_chan(
        &mut self,
        i: usize,
        sink: &mut impl Sink,
    ) -> Result<Option<(usize, usize)>, String> {
        let mut sizes = [0usize; BATCH];
        let ahead = match &self.chans[i].body {
            Some(b) => self.read_ahead(b, &mut sizes),
            None => 0,
        };
        let mut heads = [[0u8; HEADER_LEN]; BATCH];
        let c = &mut self.chans[i];
        let host = c.host;
        let r = loop {
            let r = match c.body.as_mut() {
                Some(b) => {
                    let mut parts: Vec<&mut [u8]> = Vec::with_capacity(1 + 2 * ahead);
                    // SAFETY: the device keeps [ptr, ptr + left) of the receive buffer
                    // valid and untouched until `data_landed` (the request stays
                    // streaming until then); nothing else refers to it meanwhile. With
                    // `ahead` > 0 the buffer holds the message's next `sizes` bytes
                    // right after it (`read_ahead`), which the receive waits for too.
                    parts.push(unsafe { std::slice::from_raw_parts_mut(b.ptr, b.left) });
                    let mut at = b.left;
                    for (h, &n) in heads.iter_mut().zip(&sizes[..ahead]) {
                        parts.push(h);
                        // SAFETY: as above.
                        parts.push(unsafe { std::slice::from_raw_parts_mut(b.ptr.add(at), n) });
                        at += n;
                    }
                    c.inp
                        .inbox()
                        .read_after(&mut c.sock, &mut parts, HEADER_LEN)
                }
                None => {
                    let n = if c.direct { HEADER_LEN } else { READ_BYTES };
                    c.inp.inbox().read_from(&mut c.sock, n).map(|k| (0, k))
                }
            };
            match r {
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                r => break r,
            }
        };
        let (d, k) = match r {
            Ok((0, 0)) => {
                return Err(format!(
                    "IMPI host {host} closed its channel (its rank ended abnormally)"
                ))
            }
            Ok(x) => x,
            Err(e) if e.kind() == ErrorKind::WouldBlock => return Ok(None),
            Err(e) => return Err(format!("IMPI channel to host {host}: {e}")),
        };
        if d > 0 {
            let b = c.body.as_mut().expect("bytes went to a body");
            let t = d.min(b.left);
            b.left -= t;
            // SAFETY: t <= left, inside the receive buffer.
            b.ptr = unsafe { b.ptr.add(t) };
            if b.left == 0 {
                let b = c.body.take().expect("a body");
                sink.data_landed(b.from, &b.hdr);
                if d > t {
                    self.took_ahead(i, b, (&heads, &sizes[..ahead]), d - t, sink)?;
                }
            }
        }
        Ok(Some((d, k)))
    }

    /// Handles the `got` bytes read ahead after body `b` on channel `i` (the headers
    /// in `heads`, each followed by `sizes` bytes of data right after the body in the
    /// receive buffer): each header that is the expected packet of the message counts
    /// and lands its data (the last perhaps in part: it is the channel's body then).
    /// From the first that is not (another message's packet, an acknowledgment, a
    /// shorter packet), the bytes go to the stream, in order before what the read put
    /// there, to be handled as usual; the receive buffer's bytes they passed through
    /// are rewritten when the message's own packets come.
    fn took_ahead(
        &mut self,
        i: usize,
        b: Body,
        (heads, sizes): (&[[u8; HEADER_LEN]; BATCH], &[usize]),
        mut got: usize,
        sink: &mut impl Sink,
    ) -> Result<(), String> {
        let mut ptr = b.ptr;
        for (j, &n) in sizes.iter().enumerate() {
            if got == 0 {
                return Ok(());
            }
            let expected = got >= HEADER_LEN
                && Packet::decode(&heads[j]).is_ok_and(|p| {
                    p.pk_type == PacketType::Data
                        && p.pk_drqid == b.drqid
                        && p.payload_len() == n
                        && p.check_data(self.maxdatalen).is_ok()
                        && !self.chans[i].peer_fini
                        && self.by_id.get(&p.pk_src) == Some(&b.from)
                        && p.pk_dest == self.me
                });
            if !expected {
                // To the stream: this header and every byte read after it.
                let inp = self.chans[i].inp.inbox();
                let tail = inp.take_all().to_vec();
                let mut at = ptr;
                for (h, &m) in heads[j..].iter().zip(&sizes[j..]) {
                    let t = got.min(HEADER_LEN);
                    inp.push(&h[..t]);
                    got -= t;
                    let t = got.min(m);
                    // SAFETY: [at, at + t) was just read into the receive buffer
                    // (read_ahead's range), which nothing else touches meanwhile.
                    inp.push(unsafe { std::slice::from_raw_parts(at, t) });
                    got -= t;
                    // SAFETY: within the read-ahead range.
                    at = unsafe { at.add(m) };
                }
                inp.push(&tail);
                self.chans[i].direct = false;
                return Ok(());
            }
            let p = Packet::decode(&heads[j]).expect("decoded above");
            got -= HEADER_LEN;
            let from = self.source(i, &p)?.expect("a DATA packet names its sender");
            self.count_data(from)?;
            let h = self
                .long_piece(from, &p, n as u64)?
                .expect("the receive wants the read-ahead bytes");
            let t = got.min(n);
            got -= t;
            if t < n {
                self.chans[i].body = Some(Body {
                    hdr: h,
                    // SAFETY: t < n, inside this packet's range of the receive buffer.
                    ptr: unsafe { ptr.add(t) },
                    left: n - t,
                    ..b
                });
                return Ok(());
            }
            sink.data_landed(from, &h);
            // SAFETY: the next packet's data follows in the read-ahead range.
            ptr = unsafe { ptr.add(n) };
        }
        Ok(())
    }

    /// Handles the whole packets that have arrived on channel `i`, and starts reading
    /// a long message's `DATA` straight into its receive buffer when its header has
    /// come and its data has not all; false after a protocol error (recorded).
    fn take_packets(&mut self, i: usize, sink: &mut impl Sink) -> bool {
        if self.chans[i].body.is_some() {
            return true;
        }
        // Lent out while its packets are handled, so that they need no copy.
        let mut inp = std::mem::replace(&mut self.chans[i].inp, PacketStream::new(0));
        let host = self.chans[i].host;
        let ok = loop {
            let (p, have) = match inp.peek_header() {
                Ok(Some(x)) => x,
                Ok(None) => break true,
                Err(e) => {
                    self.fail(|| format!("from IMPI host {host}: {e}"));
                    break false;
                }
            };
            if have < p.payload_len() {
                match self.direct_target(i, &p, sink) {
                    Ok(Some(mut b)) => {
                        let got = inp.detach();
                        // SAFETY: the target holds the packet's payload_len > have =
                        // got.len() bytes (direct_target's contract).
                        unsafe { std::ptr::copy_nonoverlapping(got.as_ptr(), b.ptr, got.len()) };
                        b.left -= got.len();
                        // SAFETY: got.len() < the target's length.
                        b.ptr = unsafe { b.ptr.add(got.len()) };
                        self.chans[i].body = Some(b);
                        self.chans[i].direct = true;
                    }
                    Ok(None) => self.chans[i].direct = false,
                    Err(e) => {
                        self.fail(|| format!("from IMPI host {host}: {e}"));
                        break false;
                    }
                }
                break true;
            }
            let Ok(Some((p, data))) = inp.next_packet_ref() else {
                unreachable!("a whole packet was peeked")
            };
            self.chans[i].direct = false;
            if let Err(e) = self.arrived(i, p, data, sink) {
                self.fail(|| format!("from IMPI host {host}: {e}"));
                break false;
            }
        };
        self.chans[i].inp = inp;
        ok
    }

    /// The sender of packet `p` (on channel `chan`) after the checks every packet
    /// passes; None for `IMPI_PK_FINI` (handled here: it names no proc).
    fn source(&mut self, chan: usize, p: &Packet) -> Result<Option<u32>, String> {
        if p.pk_type == PacketType::Fini {
            if std::mem::replace(&mut self.chans[chan].peer_fini, true) {
                return Err("a second IMPI_PK_FINI".into());
            }
            return Ok(None);
        }
        if self.chans[chan].peer_fini {
            return Err(format!(
                "{} after the other host's IMPI_PK_FINI",
                p.pk_type.name()
            ));
        }
        let from = *self
            .by_id
            .get(&p.pk_src)
            .ok_or_else(|| format!("a packet from unknown proc {:?}", p.pk_src))?;
        if p.pk_dest != self.me {
            return Err(format!("a packet for another proc {:?}", p.pk_dest));
        }
        match self.pairs[from as usize].as_ref() {
            Some(pr) if pr.chan == chan => Ok(Some(from)),
            _ => Err(format!("rank {from}'s packet on the wrong channel")),
        }
    }

    /// Counts a data packet from `from` as received (3.6: it is in this process now)
    /// and answers `PROTOACK` every `ackmark` of them.
    fn count_data(&mut self, from: u32) -> Result<(), String> {
        let me = self.me;
        let pr = self.pair(from);
        pr.recv.arrived().map_err(io_err)?;
        if pr.recv.taken() {
            let id = pr.id;
            self.control(from, Packet::proto_ack(me, id));
        }
        Ok(())
    }

    /// Where the data of `p`, a long message's later packet whose header has arrived
    /// on channel `chan`, goes when its receive wants all of it: the packet is then
    /// counted and its message advanced, and the caller reads the data there. None
    /// (nothing done) for any other packet.
    fn direct_target(
        &mut self,
        chan: usize,
        p: &Packet,
        sink: &mut impl Sink,
    ) -> Result<Option<Body>, String> {
        if p.pk_type != PacketType::Data || p.pk_drqid == 0 || self.chans[chan].peer_fini {
            return Ok(None);
        }
        let n = p.payload_len() as u64;
        let Some(lr) = self.long_recvs.get(&p.pk_drqid) else {
            return Ok(None);
        };
        let Some(rreq) = lr.rreq.filter(|_| lr.off + n <= lr.want && n <= lr.left) else {
            return Ok(None);
        };
        let mut h = Header::new(Kind::Data);
        h.rreq = rreq;
        h.addr = lr.off;
        h.len = n;
        // The rest of the message the receive wants, when it lies in the receive
        // buffer, so that later packets can be read ahead into it.
        let rest = Header {
            len: lr.want - lr.off,
            ..h
        };
        let sender = lr.from;
        match self.source(chan, p)? {
            Some(from) if from == sender => {
                let (ptr, span) = match sink.data_span(from, &rest) {
                    Some(p) => (p, true),
                    None => match sink.data_target(from, &h) {
                        Some(p) => (p, false),
                        None => return Ok(None),
                    },
                };
                self.count_data(from)?;
                self.long_piece(from, p, n)?;
                Ok(Some(Body {
                    from,
                    hdr: h,
                    ptr,
                    left: n as usize,
                    drqid: p.pk_drqid,
                    span,
                }))
            }
            _ => Ok(None),
        }
    }

    fn arrived(
        &mut self,
        chan: usize,
        p: Packet,
        data: &[u8],
        sink: &mut impl Sink,
    ) -> Result<(), String> {
        let Some(from) = self.source(chan, &p)? else {
            return Ok(());
        };
        let me = self.me;
        match p.pk_type {
            PacketType::Data | PacketType::DataSync => {
                self.count_data(from)?;
                self.data_arrived(from, &p, data, sink)
            }
            PacketType::ProtoAck => {
                let pr = self.pairs[from as usize].as_mut().expect("IMPI peer");
                pr.send.acked().map_err(io_err)?;
                // Released window: move held data packets to the channel.
                let out = &mut self.chans[pr.chan].out;
                while pr.send.can_send() {
                    let Some(b) = pr.held.pop_front() else { break };
                    pr.send.sent();
                    out.extend_from_slice(&b);
                }
                Ok(())
            }
            PacketType::SyncAck => {
                let sreq = u32::try_from(p.pk_srqid).map_err(io_err)?;
                if let Some(ls) = self.long_sends.get_mut(&(from, sreq)) {
                    ls.drqid = p.pk_drqid;
                    let mut h = Header::new(Kind::Cts);
                    h.sreq = sreq;
                    h.rreq = sreq;
                    h.len = ls.msglen;
                    if ls.first >= ls.msglen {
                        self.long_sends.remove(&(from, sreq));
                        let mut f = Header::new(Kind::Fin);
                        f.sreq = sreq;
                        sink.packet(from, f, &[]);
                    } else {
                        sink.packet(from, h, &[]);
                    }
                } else {
                    let mut h = Header::new(Kind::SyncAck);
                    h.sreq = sreq;
                    sink.packet(from, h, &[]);
                }
                Ok(())
            }
            PacketType::Cancel => {
                let w = self
                    .waiting
                    .get(&(from, p.pk_srqid as u32))
                    .filter(|w| w.srqid == p.pk_srqid);
                let Some(&Waiting { ctx, src_rank, .. }) = w else {
                    // Nothing waits for an answer under that id: the message matched.
                    self.control(from, Packet::cancel_reply(false, me, p.pk_src, p.pk_srqid));
                    return Ok(());
                };
                let mut h = Header::new(Kind::CancelReq);
                h.sreq = p.pk_srqid as u32;
                h.ctx = ctx;
                h.src_rank = src_rank;
                sink.packet(from, h, &[]);
                Ok(())
            }
            PacketType::CancelYes | PacketType::CancelNo => {
                let sreq = u32::try_from(p.pk_srqid).map_err(io_err)?;
                if p.pk_type == PacketType::CancelYes {
                    self.long_sends.remove(&(from, sreq));
                }
                let mut h = Header::new(Kind::CancelResp);
                h.sreq = sreq;
                if p.pk_type == PacketType::CancelYes {
                    h.flags = FLAG_CANCELLED;
                }
                sink.packet(from, h, &[]);
                Ok(())
            }
            // Handled before the source is looked up (FINI names no proc).
            PacketType::Fini => Ok(()),
        }
    }

    /// Advances long message `p.pk_drqid` from `from` by `n` bytes; the piece its
    /// receive wants of them (the rest of a truncated message is dropped).
    fn long_piece(&mut self, from: u32, p: &Packet, n: u64) -> Result<Option<Header>, String> {
        let lr = self
            .long_recvs
            .get_mut(&p.pk_drqid)
            .filter(|l| l.from == from)
            .ok_or_else(|| format!("DATA for unknown receive {}", p.pk_drqid))?;
        let off = lr.off;
        lr.off += n;
        lr.left = lr.left.saturating_sub(n);
        let (rreq, want, left) = (lr.rreq, lr.want, lr.left);
        if left == 0 {
            self.long_recvs.remove(&p.pk_drqid);
        }
        Ok(rreq.filter(|_| off < want).map(|rreq| {
            let mut h = Header::new(Kind::Data);
            h.rreq = rreq;
            h.addr = off;
            h.len = (want - off).min(n);
            h
        }))
    }

    fn data_arrived(
        &mut self,
        from: u32,
        p: &Packet,
        data: &[u8],
        sink: &mut impl Sink,
    ) -> Result<(), String> {
        let ctx = u32::try_from(p.pk_cid).map_err(io_err)?;
        if p.pk_drqid != 0 {
            // A later packet of a long message.
            if let Some(h) = self.long_piece(from, p, data.len() as u64)? {
                sink.packet(from, h, &data[..h.len as usize]);
            }
            return Ok(());
        }
        let sync = p.pk_type == PacketType::DataSync;
        let mut h = Header::new(Kind::Eager);
        h.src_rank = p.pk_lsrank;
        h.ctx = ctx;
        h.tag = p.pk_tag;
        h.len = p.pk_msglen;
        // Request ids of this device are 32 bits; a foreign sender's larger id is kept
        // by its low half (unique while the message waits).
        h.sreq = p.pk_srqid as u32;
        if p.pk_msglen > data.len() as u64 {
            if !sync {
                return Err("a long message's first packet is not DATASYNC".into());
            }
            h.kind = Kind::Rts;
            self.announced.insert(
                (from, p.pk_srqid as u32),
                Announced {
                    first: data.to_vec(),
                    msglen: p.pk_msglen,
                },
            );
            self.await_answer(from, p, ctx);
            sink.packet(from, h, &[]);
        } else {
            if sync {
                h.flags = FLAG_SYNC;
                self.await_answer(from, p, ctx);
            }
            sink.packet(from, h, data);
        }
        Ok(())
    }

    /// Records message `p` (sync or long) as waiting for this rank's answer, so that a
    /// `CANCEL`, which names only its `pk_srqid`, finds its context and sender rank.
    fn await_answer(&mut self, from: u32, p: &Packet, ctx: u32) {
        self.waiting.insert(
            (from, p.pk_srqid as u32),
            Waiting {
                ctx,
                src_rank: p.pk_lsrank,
                srqid: p.pk_srqid,
            },
        );
    }

    /// `MPI_Finalize` (3.8): writes everything out, sends `IMPI_PK_FINI` on every
    /// channel, consumes each until the other host's, answering what the protocol
    /// requires, then closes.
    pub fn finalize(&mut self) -> Result<(), String> {
        let deadline = Instant::now() + FINI_TIMEOUT;
        // Held data packets first: they wait for acknowledgments that keep coming.
        let mut fin: Vec<Finalizer> = self
            .chans
            .iter()
            .map(|_| Finalizer::new(self.my_ackmark))
            .collect();
        let mut started = vec![false; self.chans.len()];
        loop {
            struct Drop;
            impl Sink for Drop {
                fn packet(&mut self, _: u32, _: Header, _: &[u8]) {}
                fn data_target(&mut self, _: u32, _: &Header) -> Option<*mut u8> {
                    None
                }
                fn data_span(&mut self, _: u32, _: &Header) -> Option<*mut u8> {
                    None
                }
                fn data_landed(&mut self, _: u32, _: &Header) {}
            }
            let held = self.pairs.iter().flatten().any(|p| !p.held.is_empty());
            if !held {
                for (i, f) in fin.iter_mut().enumerate() {
                    if !started[i] {
                        started[i] = true;
                        let b = f.start().encode();
                        self.chans[i].out.extend_from_slice(&b);
                        if self.chans[i].peer_fini {
                            f.on_packet(&Packet::fini()).map_err(io_err)?;
                        }
                    }
                }
                for pr in self.pairs.iter().flatten() {
                    fin[pr.chan].carry(pr.id, self.me, pr.recv.unacked());
                }
                break;
            }
            self.poll(&mut Drop);
            if let Some(e) = self.failure.take() {
                return Err(e);
            }
            if Instant::now() > deadline {
                return Err("IMPI finalization: acknowledgments stopped coming".into());
            }
            std::thread::yield_now();
        }
        for i in 0..self.chans.len() {
            self.chans[i].sock.set_nonblocking(false).map_err(io_err)?;
        }
        self.flush();
        if let Some(e) = self.failure.take() {
            return Err(e);
        }
        for (i, f) in fin.iter_mut().enumerate() {
            let host = self.chans[i].host;
            while !f.complete() {
                let left = deadline.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    return Err(format!("IMPI host {host} did not finish its channel"));
                }
                let c = &mut self.chans[i];
                c.sock.set_read_timeout(Some(left)).map_err(io_err)?;
                let n = match c.sock.read(&mut self.buf) {
                    Ok(0) => return Err(format!("IMPI host {host} closed before IMPI_PK_FINI")),
                    Ok(n) => n,
                    Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                    Err(e) => return Err(format!("reading from IMPI host {host}: {e}")),
                };
                c.inp.push(&self.buf[..n]);
                while let Some((p, _)) = c.inp.next_packet().map_err(io_err)? {
                    for reply in f.on_packet(&p).map_err(io_err)? {
                        c.sock.write_all(&reply.encode()).map_err(io_err)?;
                    }
                }
            }
        }
        for c in &mut self.chans {
            let _ = c.sock.shutdown(Shutdown::Write);
            let _ = c.sock.set_read_timeout(Some(Duration::from_secs(5)));
            while let Ok(n) = c.sock.read(&mut self.buf) {
                if n == 0 {
                    break;
                }
            }
        }
        self.chans.clear();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn descriptions_parse_and_bad_ones_are_refused() {
        let t = "oxmpi-impi 1\nme 2 2\nsize 3\nmaxdatalen 100\ntagub 32767\n\
                 host 0 0 8 32\nhost 1 0 8 32\nhost 2 1 4 16\n\
                 proc 0 0 00000000000000000000ffff7f000001 1\n\
                 proc 1 1 00000000000000000000ffff7f000001 2\n\
                 proc 2 2 00000000000000000000ffff7f000001 3\nchan 0\nchan 1\n";
        let j = ImpiJoin::parse(t).unwrap();
        assert_eq!((j.world, j.host, j.size(), j.client()), (2, 2, 3, 1));
        assert_eq!(j.procs[1].1.pid, 2);
        assert_eq!(j.procs[1].1.hostid[15], 1);
        assert!(ImpiJoin::parse(&t.replace("size 3", "size 4")).is_err());
        assert!(ImpiJoin::parse(&t.replace("host 2 1 4 16", "host 2 1 17 16")).is_err());
        assert!(ImpiJoin::parse("oxmpi-impi 2\n").is_err());
    }
}
