//! The transports under the protocol: this rank's queue of messages to itself, the
//! shared-memory rings toward local peers (and their doorbells), the TCP connections,
//! and cross-memory attach. [`Link`] carries out the [`Io`] requests of
//! [`super::protocol::Protocol`] on them: writes a packet or a streamed piece into a ring
//! slot or a socket, pulls a message out of a peer's memory with `process_vm_readv`.

use super::bsend::BsendPool;
use super::packet::{Header, HEADER_BYTES};
use super::pieces;
use super::poll_set::PollSet;
use super::protocol::{Io, Stream, MAX_LIST_ENTRIES};
use super::request::Layout;
use super::stream_stores::{self, Policy};
use super::{copy_small, DeviceConfig, Peer};
use crate::sys::cma;
use crate::transport::bell::Poker;
use crate::transport::impi::ImpiNet;
use crate::transport::ring::{Consumer, Producer};
use crate::transport::shm::ShmNode;
use crate::transport::tcp::TcpNet;
use crate::transport::Route;
use std::collections::VecDeque;
use std::sync::Arc;

/// A receiver reads a listed message piece by piece (the kernel's vectored copy) when its
/// pieces average at least this many bytes: the kernel pins remote memory piece by
/// piece, so small pieces are read instead as spans with their gaps, through a bounce
/// buffer, and gathered in user space.
const MIN_VECTORED_PIECE: u64 = 1024;

/// Largest span read at once into the bounce buffer.
const SPAN_BYTES: usize = 256 * 1024;

/// The transports of one process.
pub(crate) struct Wire {
    pub(crate) me: u32,
    pub(crate) peers: Vec<Peer>,
    pub(crate) cfg: DeviceConfig,
    pub(crate) node: Option<Arc<ShmNode>>,
    pub(crate) producers: Vec<Option<Producer>>,
    /// Taken out of the wire while progress hands their packets to the protocol.
    pub(crate) consumers: Vec<Option<Consumer>>,
    /// Which of `consumers` progress polls.
    pub(crate) polls: PollSet,
    /// World rank of each local rank index.
    pub(crate) local_world: Vec<u32>,
    /// Packets this rank sent to itself, with copies of their payloads.
    pub(crate) selfq: VecDeque<(Header, Vec<u8>)>,
    /// The TCP transport (taken out while it delivers packets to the protocol).
    pub(crate) tcp: Option<Box<TcpNet>>,
    /// Wakes local ranks that sleep in their TCP epoll set.
    pub(crate) poker: Option<Poker>,
    /// The IMPI host channels (taken out while they deliver packets to the protocol).
    pub(crate) impi: Option<Box<ImpiNet>>,
    /// Bounce buffer for reading listed messages of small pieces (kept between messages).
    span_bounce: Vec<u8>,
}

impl Wire {
    pub(crate) fn new(
        me: u32,
        peers: Vec<Peer>,
        cfg: DeviceConfig,
        node: Option<Arc<ShmNode>>,
        local_world: Vec<u32>,
    ) -> Wire {
        let nlocal = local_world.len();
        let mut producers: Vec<Option<Producer>> = (0..nlocal).map(|_| None).collect();
        let mut consumers: Vec<Option<Consumer>> = (0..nlocal).map(|_| None).collect();
        if let Some(n) = &node {
            for i in 0..nlocal {
                if i != n.local_rank() {
                    producers[i] = Some(n.producer(i));
                    consumers[i] = Some(n.consumer(i));
                }
            }
        }
        let polls = PollSet::new(node.as_deref(), &consumers);
        Wire {
            me,
            peers,
            cfg,
            node,
            producers,
            consumers,
            polls,
            local_world,
            selfq: VecDeque::new(),
            tcp: None,
            poker: None,
            impi: None,
            span_bounce: Vec::new(),
        }
    }

    #[inline]
    pub(crate) fn route(&self, world: u32) -> Route {
        self.peers
            .get(world as usize)
            .map_or(Route::Unreachable, |p| p.route)
    }

    pub(crate) fn try_write(&mut self, dest: u32, hdr: &Header, payload: &[u8]) -> bool {
        match self.route(dest) {
            Route::SelfLoop => {
                self.selfq.push_back((*hdr, payload.to_vec()));
                true
            }
            Route::Shm(j) => self.try_push_shm(j, hdr, payload, copy_small),
            // While the transport delivers packets it is taken out of the device: what
            // handlers send meanwhile waits in the pending queue for a moment.
            Route::Tcp => match self.tcp.as_mut() {
                Some(t) => t.try_send(dest, hdr, payload),
                None => false,
            },
            Route::Impi => match self.impi.as_mut() {
                Some(t) => t.try_send(dest, hdr, payload),
                None => false,
            },
            Route::Unreachable => {
                // The runtime refuses to start operations toward unreachable ranks;
                // reaching here is an engine bug, reported loudly rather than hanging.
                panic!("no transport reaches world rank {dest}");
            }
        }
    }

    /// Writes a packet to local peer `j`'s ring, its payload copied with `copy`, and
    /// rings the peer's doorbell when it sleeps. Returns whether there was room.
    #[inline]
    pub(crate) fn try_push_shm(
        &mut self,
        j: usize,
        hdr: &Header,
        payload: &[u8],
        copy: unsafe fn(*const u8, *mut u8, usize),
    ) -> bool {
        let p = self.producers[j].as_mut().expect("producer for local peer");
        let pushed = p.try_push_with(HEADER_BYTES + payload.len(), |dst| {
            let (h, rest) = dst.split_at_mut(HEADER_BYTES);
            h.copy_from_slice(&hdr.encode());
            assert_eq!(rest.len(), payload.len());
            // SAFETY: both slices hold payload.len() bytes (checked above) and the ring
            // slot cannot overlap the caller's buffer.
            unsafe { copy(payload.as_ptr(), rest.as_mut_ptr(), payload.len()) };
        });
        if pushed {
            if let Some(n) = &self.node {
                if n.notify(j) {
                    self.poke(j);
                }
            }
        }
        pushed
    }

    pub(crate) fn poke(&self, j: usize) {
        if let Some(p) = &self.poker {
            p.poke(j);
        }
    }

    /// Wakes local rank `j` if it sleeps on its doorbell.
    pub(crate) fn wake_local(&self, j: usize) {
        if let Some(n) = &self.node {
            if n.wake(j) {
                self.poke(j);
            }
        }
    }

    /// Copies `n` contiguous bytes at `remote` in process `pid` into the non-contiguous
    /// receive buffer `l` through the bounce buffer (read a span, unpack it), which beats
    /// the kernel's vectored copy for small pieces.
    fn pull_unpack(
        &mut self,
        pid: i32,
        remote: usize,
        n: usize,
        l: &Layout,
    ) -> std::io::Result<()> {
        let mut bounce = std::mem::take(&mut self.span_bounce);
        bounce.resize(SPAN_BYTES, 0);
        let mut off = 0;
        let mut r = Ok(());
        while off < n {
            let k = (n - off).min(SPAN_BYTES);
            // SAFETY: the bounce buffer holds SPAN_BYTES >= k bytes; the remote range is
            // checked by the kernel.
            r = unsafe { cma::read_from(pid, remote + off, bounce.as_mut_ptr(), k) };
            if r.is_err() {
                break;
            }
            // SAFETY: the receive buffer holds the layout's elements; off + k <= n lies
            // within their packed size.
            unsafe { l.unpack_at(off, &bounce[..k]) };
            off += k;
        }
        self.span_bounce = bounce;
        r
    }
}

/// Whether the pieces behind the first `n` stream bytes of `l` average under
/// [`MIN_VECTORED_PIECE`] bytes (judged from the first 64 KiB).
fn small_pieces(l: &Layout, n: usize) -> bool {
    (l.average_piece(n) as u64) < MIN_VECTORED_PIECE
}

/// The wire with the buffered-send pool: what the protocol's [`Io`] requests act on.
pub(crate) struct Link<'a> {
    pub(crate) wire: &'a mut Wire,
    pub(crate) bsend: &'a mut BsendPool,
}

impl Io for Link<'_> {
    #[inline]
    fn try_write(&mut self, dest: u32, hdr: &Header, payload: &[u8]) -> bool {
        self.wire.try_write(dest, hdr, payload)
    }

    /// Packs straight into the ring slot for a local peer; through a temporary piece
    /// for this rank or a TCP peer.
    fn try_write_packed(&mut self, dest: u32, hdr: &Header, l: &Layout, off: u64, n: u64) -> bool {
        let w = &mut *self.wire;
        let Route::Shm(j) = w.route(dest) else {
            let mut piece = vec![0; n as usize];
            // SAFETY: the send buffer holds the layout's elements until this send
            // completes after its last piece; `piece` is our own memory.
            unsafe { l.pack_at(off as usize, &mut piece) };
            if w.route(dest) == Route::SelfLoop {
                w.selfq.push_back((*hdr, piece));
                return true;
            }
            return w.try_write(dest, hdr, &piece);
        };
        let h = hdr.encode();
        let p = w.producers[j].as_mut().expect("producer for local peer");
        let pushed = p.try_push_with(h.len() + n as usize, |dst| {
            let (head, body) = dst.split_at_mut(h.len());
            head.copy_from_slice(&h);
            // SAFETY: the send buffer holds the layout's elements until this send
            // completes after its last piece; `body` is ring memory owned by the
            // producer, which cannot overlap it.
            unsafe { l.pack_at(off as usize, body) };
        });
        if !pushed {
            return false;
        }
        if let Some(nd) = &w.node {
            if nd.notify(j) {
                w.poke(j);
            }
        }
        true
    }

    /// To a local peer, a long stream uses the stores `OXMPI_SHM_STREAM_STORES` names;
    /// anything else goes as any packet.
    fn try_write_piece(&mut self, dest: u32, hdr: &Header, piece: &[u8], len: u64) -> bool {
        use stream_stores::{copy_non_temporal, MIN_STREAM};
        let w = &mut *self.wire;
        match w.route(dest) {
            Route::Shm(j)
                if len >= MIN_STREAM && w.cfg.shm_stream_stores == Policy::NonTemporal =>
            {
                w.try_push_shm(j, hdr, piece, copy_non_temporal)
            }
            _ => w.try_write(dest, hdr, piece),
        }
    }

    /// Streams pieces of `OXMPI_TCP_CHUNK_BYTES` straight from the send buffer (a
    /// non-contiguous one packed piece by piece); the send may complete once the
    /// connection no longer holds any of its bytes.
    fn pump_tcp_stream(&mut self, s: &mut Stream, may_write: bool) -> (bool, bool) {
        let (dest, rreq, buf, len, mut off, sreq) = (s.dest, s.rreq, s.buf, s.len, s.off, s.sreq);
        let chunk = self.wire.cfg.tcp_chunk_bytes as u64;
        let Some(t) = self.wire.tcp.as_mut() else {
            return (false, false);
        };
        let mut did = false;
        if off < len && may_write {
            while off < len && !t.holds(dest, sreq) {
                let n = chunk.min(len - off);
                let mut h = Header::new(super::packet::Kind::Data);
                h.rreq = rreq;
                h.addr = off;
                h.len = n;
                let sent = match &s.layout {
                    Some(l) => {
                        // A non-contiguous piece is packed (once) and handed over as a
                        // copy.
                        if s.piece_off != off || s.piece.len() != n as usize {
                            s.piece.resize(n as usize, 0);
                            // SAFETY: the send buffer holds the layout's elements until
                            // this send completes.
                            unsafe { l.pack_at(off as usize, &mut s.piece) };
                            s.piece_off = off;
                        }
                        t.try_send(dest, &h, &s.piece)
                    }
                    // SAFETY: [buf+off, buf+off+n) lies within the send buffer, which
                    // stays valid until this send completes, which waits until the
                    // connection no longer holds `sreq`.
                    None => unsafe {
                        t.try_send_borrowed(dest, &h, buf.add(off as usize), n as usize, sreq)
                    },
                };
                if !sent {
                    break;
                }
                off += n;
                did = true;
            }
            s.off = off;
        }
        (did, off >= len && !t.holds(dest, sreq))
    }

    fn pump_impi_stream(&mut self, s: &mut Stream, may_write: bool) -> (bool, bool) {
        let Some(t) = self.wire.impi.as_mut() else {
            return (false, false);
        };
        if !may_write {
            return (false, false);
        }
        let mut off = s.off;
        // SAFETY: [buf, buf + len) is the contiguous send buffer, valid until this
        // send completes, which waits until the transport has written every byte.
        let did = unsafe { t.pump_stream(s.dest, s.rreq, s.buf, s.len, &mut off) };
        s.off = off;
        (did, off >= s.len)
    }

    fn pull(
        &mut self,
        from: u32,
        remote: usize,
        n: usize,
        buf: *mut u8,
        layout: Option<&Layout>,
    ) -> std::io::Result<()> {
        let pid = self.wire.peers[from as usize].pid;
        match layout {
            Some(l) if small_pieces(l, n) => self.wire.pull_unpack(pid, remote, n, l),
            Some(l) => {
                // SAFETY: the pieces lie inside the receive buffer (n <= its packed
                // size); the remote range is checked by the kernel.
                unsafe { cma::read_scatter(pid, remote, &mut l.pieces(0, n)) }.and_then(|got| {
                    if got == n {
                        Ok(())
                    } else {
                        Err(std::io::Error::other("short cross-memory read"))
                    }
                })
            }
            // SAFETY: the receive buffer holds n bytes; the remote range is checked by
            // the kernel.
            None => unsafe { cma::read_from(pid, remote, buf, n) },
        }
    }

    fn pull_listed(
        &mut self,
        from: u32,
        hdr: &Header,
        n: usize,
        buf: *mut u8,
        layout: Option<&Layout>,
    ) -> std::io::Result<()> {
        let pid = self.wire.peers[from as usize].pid;
        let bad =
            |what: &str| std::io::Error::new(std::io::ErrorKind::InvalidData, what.to_string());
        let entries = hdr.rreq as u64;
        if entries == 0 || entries > MAX_LIST_ENTRIES {
            return Err(bad("piece list of a bad length"));
        }
        let mut list = vec![[0u64; 4]; entries as usize];
        // SAFETY: `list` holds entries * ENTRY_BYTES writable bytes; the remote range is
        // checked by the kernel.
        unsafe {
            cma::read_from(
                pid,
                hdr.addr as usize,
                list.as_mut_ptr() as *mut u8,
                list.len() * pieces::ENTRY_BYTES,
            )?
        };
        let count = pieces::check(&list, hdr.len, hdr.len).ok_or_else(|| bad("bad piece list"))?;
        if hdr.len / count >= MIN_VECTORED_PIECE {
            let mut remote = pieces::expand(&list);
            // SAFETY: the local pieces lie inside the receive buffer, which holds n bytes
            // (packed, for a layout); the remote pieces are checked by the kernel.
            let got = unsafe {
                match layout {
                    Some(l) => cma::read_vectored(pid, &mut remote, &mut l.pieces(0, n)),
                    None => cma::read_vectored(
                        pid,
                        &mut remote,
                        &mut std::iter::once((buf as usize, n)),
                    ),
                }
            }?;
            return if got == n {
                Ok(())
            } else {
                Err(bad("short cross-memory read"))
            };
        }
        // Small pieces: read spans (gaps included) into the bounce buffer, gather the
        // pieces, and write them to the receive buffer.
        let mut bounce = std::mem::take(&mut self.wire.span_bounce);
        bounce.resize(SPAN_BYTES, 0);
        let mut packed = Vec::with_capacity(if layout.is_some() { SPAN_BYTES } else { 0 });
        let mut spans = pieces::Spans::new(pieces::expand(&list), SPAN_BYTES);
        let mut span = pieces::Span::default();
        let mut off = 0usize;
        let mut result = Ok(());
        while off < n && spans.next_into(&mut span) {
            // SAFETY: the bounce buffer holds SPAN_BYTES >= span.len bytes; the remote
            // range is checked by the kernel.
            let read = unsafe { cma::read_from(pid, span.start, bounce.as_mut_ptr(), span.len) };
            if let Err(e) = read {
                result = Err(e);
                break;
            }
            match layout {
                None => {
                    for &(o, len) in &span.pieces {
                        let len = len.min(n - off);
                        // SAFETY: [off, off + len) lies inside the receive buffer of n
                        // bytes; the source lies inside the span just read.
                        unsafe {
                            std::ptr::copy_nonoverlapping(bounce.as_ptr().add(o), buf.add(off), len)
                        };
                        off += len;
                        if off >= n {
                            break;
                        }
                    }
                }
                Some(l) => {
                    packed.clear();
                    for &(o, len) in &span.pieces {
                        let len = len.min(n - off - packed.len());
                        packed.extend_from_slice(&bounce[o..o + len]);
                        if off + packed.len() >= n {
                            break;
                        }
                    }
                    // SAFETY: the receive buffer holds the layout's elements, whose
                    // packed bytes off..off + packed.len() lie within the n wanted.
                    unsafe { l.unpack_at(off, &packed) };
                    off += packed.len();
                }
            }
        }
        self.wire.span_bounce = bounce;
        result?;
        if off == n {
            Ok(())
        } else {
            Err(bad("short cross-memory read"))
        }
    }

    #[inline]
    fn release_bsend(&mut self, slot: usize) {
        self.bsend.free(slot);
    }
}
