//! The point-to-point protocols as a state machine that does no I/O: the request
//! table, the matching engine, the payloads of unexpected messages, the per-destination
//! queues of packets not yet written and the rendezvous streams, and every decision of
//! the eager, rendezvous (`Rts`, then a single-copy pull and `Fin`, or `Cts` and
//! streamed `Data` pieces), synchronous (`SyncAck`), ready, buffered and cancel
//! (`CancelReq`/`CancelResp`) protocols.
//!
//! Events come in as method calls ([`Protocol::isend_request`], [`Protocol::irecv`],
//! [`Protocol::packet`], [`Protocol::flush_pending`], [`Protocol::cancel`], ...); what
//! the protocol needs done outside itself goes out through the [`Io`] passed to each
//! call: write a packet (or a streamed piece), pull bytes from a peer's memory, give a
//! buffered-send region back. `Io` is a generic parameter, so the real transports
//! ([`super::wire::Wire`]) and the in-memory ranks of the unit tests each get their own
//! monomorphized copy of this code: no dynamic dispatch, no action buffer on the path
//! of a message.
//!
//! This file holds the state, the starts of operations, the queues and the dispatch of
//! arriving packets (eager delivery and the synchronous ack); `rendezvous.rs` the
//! large-message protocol (pull or stream), `cancel.rs` probe, cancel and lost peers,
//! and `mprobe.rs` matched probe and the receive of a matched message.

mod cancel;
mod ext32;
mod mprobe;
mod rendezvous;

pub use mprobe::{MsgId, TooManyMessages, MAX_MESSAGES};

#[cfg(test)]
pub(crate) use rendezvous::stream_piece;
pub(crate) use rendezvous::Stream;

use super::matching::{Envelope, Matcher};
use super::packet::{Header, Kind, FLAG_IOVLIST, FLAG_NONCONTIG, FLAG_PROBED, FLAG_SYNC};
use super::pieces;
use super::request::{
    Direction, Finish, InvalidRequest, Layout, Op, Outcome, Persistent, RecvArgs, RecvState, ReqId,
    Request, RequestTable, SendArgs, SendMode, SendState, Status,
};
use super::stored::{PayloadStore, Stored};
use super::{copy_small, DeviceConfig, Peer};
use crate::transport::Route;
use std::collections::VecDeque;
use std::sync::Arc;

/// A non-contiguous send publishes its piece list (see [`pieces`]) only when it has at
/// most one entry per this many message bytes (else its pieces stream through the ring).
const BYTES_PER_LIST_ENTRY: usize = 256;
/// A non-contiguous send publishes a piece list only when its pieces average at least
/// this many bytes; shorter ones (elements of a few scalars) are streamed, packed into
/// the ring by the compiled element loops.
const MIN_LISTED_PIECE: usize = 64;

/// Longest piece list a receiver accepts (entries).
pub(crate) const MAX_LIST_ENTRIES: u64 = 1 << 22;

/// The sender request id carried by a message that has none ([`super::Device::send_now`]).
pub(crate) const NO_REQUEST: ReqId = ReqId::MAX;

/// What the protocol asks of the transports. Each method either does its work now and
/// says so, or does nothing and returns false (no room): the protocol then keeps the
/// packet or piece and tries again at the next [`Protocol::flush_pending`] or
/// [`Protocol::pump_streams`].
pub(crate) trait Io {
    /// Writes packet `hdr` with `payload` to world rank `dest`.
    fn try_write(&mut self, dest: u32, hdr: &Header, payload: &[u8]) -> bool;
    /// Writes `Data` packet `hdr` whose payload is stream bytes `off..off + n` of the
    /// non-contiguous send buffer `l`, packed on the way (into the ring slot for a
    /// local peer).
    fn try_write_packed(&mut self, dest: u32, hdr: &Header, l: &Layout, off: u64, n: u64) -> bool;
    /// Writes `Data` piece `hdr` of a contiguous stream of `stream_len` bytes (the
    /// transport may pick its stores by the stream's length).
    fn try_write_piece(&mut self, dest: u32, hdr: &Header, piece: &[u8], stream_len: u64) -> bool;
    /// Writes what it can of stream `s` to a peer over TCP, whose connection sizes the
    /// pieces itself, when `may_write` (nothing is queued before it). Returns (something
    /// was written, every byte has left: the send may complete).
    fn pump_tcp_stream(&mut self, s: &mut Stream, may_write: bool) -> (bool, bool);
    /// Writes what the flow-control window and the socket take of contiguous stream
    /// `s` to a rank of another IMPI client, in packets of the negotiated size, straight
    /// from the send buffer, when `may_write`. Returns as `pump_tcp_stream` does.
    fn pump_impi_stream(&mut self, s: &mut Stream, may_write: bool) -> (bool, bool);
    /// Copies `n` bytes at address `remote` of local peer `from` into the receive
    /// buffer (`buf`, or the pieces of `layout`).
    fn pull(
        &mut self,
        from: u32,
        remote: usize,
        n: usize,
        buf: *mut u8,
        layout: Option<&Layout>,
    ) -> std::io::Result<()>;
    /// Copies the first `n` bytes of a message whose sender published its piece list
    /// (`hdr.addr`, `hdr.rreq` entries; see [`FLAG_IOVLIST`]) into the receive buffer.
    fn pull_listed(
        &mut self,
        from: u32,
        hdr: &Header,
        n: usize,
        buf: *mut u8,
        layout: Option<&Layout>,
    ) -> std::io::Result<()>;
    /// The buffered send that held region `slot` of the attached pool has completed.
    fn release_bsend(&mut self, slot: usize);
}

pub(crate) enum Payload {
    Empty,
    /// User memory that stays valid until the owning request completes.
    Borrowed(*const u8, usize),
}

impl Payload {
    fn bytes(&self) -> &[u8] {
        match self {
            // A zero-byte buffer may be NULL, which a slice may not be.
            Payload::Empty | Payload::Borrowed(_, 0) => &[],
            // SAFETY: borrowed payloads point at user buffers that stay valid until the
            // request completes, which happens only after the packet is written.
            Payload::Borrowed(p, n) => unsafe { std::slice::from_raw_parts(*p, *n) },
        }
    }
}

/// A packet waiting for room toward its destination.
struct Outgoing {
    hdr: Header,
    payload: Payload,
    /// A send that completes once this packet is written.
    completes: Option<ReqId>,
}

/// A message that arrived before its receive was posted.
pub(crate) enum Unexpected {
    Eager {
        from: u32,
        hdr: Header,
        data: Stored,
    },
    Rts {
        from: u32,
        hdr: Header,
    },
}

impl Unexpected {
    fn from(&self) -> u32 {
        match self {
            Unexpected::Eager { from, .. } | Unexpected::Rts { from, .. } => *from,
        }
    }
    fn hdr(&self) -> &Header {
        match self {
            Unexpected::Eager { hdr, .. } | Unexpected::Rts { hdr, .. } => hdr,
        }
    }
    fn hdr_mut(&mut self) -> &mut Header {
        match self {
            Unexpected::Eager { hdr, .. } | Unexpected::Rts { hdr, .. } => hdr,
        }
    }
    /// Whether the sender may still take this message back with a cancel request: it
    /// waits for an answer (rendezvous or synchronous), so its request id is still in
    /// use and names this message alone (ids of completed sends are reused, so the id
    /// of a plain eager message may already stand for a later send), and the
    /// application has not seen it through a probe.
    fn cancellable_by(&self, from: u32, sreq: ReqId) -> bool {
        let h = self.hdr();
        let waits = matches!(self, Unexpected::Rts { .. }) || h.flags & FLAG_SYNC != 0;
        self.from() == from && h.sreq == sreq && waits && h.flags & FLAG_PROBED == 0
    }
}

/// The status `MPI_Probe` reports for an unexpected message.
fn probed_status(env: Envelope, h: &Header) -> Status {
    Status {
        source: env.src,
        tag: env.tag,
        error: Outcome::Success,
        bytes: h.len,
        cancelled: false,
    }
}

/// The status of a receive of `cap` bytes matched by the message `hdr` announces
/// (truncated to `cap`, with `MPI_ERR_TRUNCATE` then).
pub(crate) fn matched_status(hdr: &Header, cap: usize) -> Status {
    Status {
        source: hdr.src_rank,
        tag: hdr.tag,
        error: if hdr.len as usize > cap {
            Outcome::Truncated
        } else {
            Outcome::Success
        },
        bytes: (hdr.len as usize).min(cap) as u64,
        cancelled: false,
    }
}

/// Puts the payload `data` of eager message `hdr` into receive `a` (unpacked through
/// `layout` when the buffer is not contiguous) and returns the receive's status.
fn land_eager(a: &RecvArgs, layout: Option<&Layout>, hdr: &Header, data: &[u8]) -> Status {
    let status = matched_status(hdr, a.cap);
    let n = (status.bytes as usize).min(data.len());
    if n > 0 {
        match layout {
            // SAFETY: the receive buffer holds the layout's elements, whose packed size
            // is cap >= n (MPI contract checked by the caller's validation).
            Some(l) => unsafe {
                l.unpack_at(0, &data[..n]);
            },
            // SAFETY: the receive buffer holds `cap >= n` bytes (MPI contract checked
            // by the caller's count/type validation); `data` has at least n bytes.
            None => unsafe { copy_small(data.as_ptr(), a.buf, n) },
        }
    }
    status
}

/// The `Eager` header of send `a` (the message's envelope and length), naming sender
/// request `sreq`.
pub(crate) fn eager_header(a: &SendArgs, sreq: ReqId) -> Header {
    let mut h = Header::new(Kind::Eager);
    h.src_rank = a.src_rank;
    h.ctx = a.ctx;
    h.tag = a.tag;
    h.len = a.len as u64;
    h.sreq = sreq;
    h
}

/// The protocol state of one process (see the module doc).
pub(crate) struct Protocol {
    me: u32,
    peers: Vec<Peer>,
    cfg: DeviceConfig,
    pub(crate) reqs: RequestTable,
    pub(crate) matcher: Matcher<ReqId, Unexpected>,
    /// Packets waiting for room, per destination, in order.
    pending: Vec<VecDeque<Outgoing>>,
    /// The destinations whose queue is not empty.
    pending_dests: Vec<u32>,
    streams: Vec<Stream>,
    /// Single-copy pulls are allowed and have not failed yet.
    cma_ok: bool,
    /// More local ranks than cores (or `OXMPI_OVERSUBSCRIBED=1`): non-contiguous sends
    /// publish their piece list rather than stream.
    oversubscribed: bool,
    /// Copies of the payloads of unexpected eager messages.
    payloads: PayloadStore,
    /// Peers that were lost ([`Protocol::peer_lost`]); almost always empty.
    lost: Vec<u32>,
    /// Messages taken by a matched probe, waiting for their receive.
    messages: mprobe::Messages,
    /// Largest message sent in one packet to a rank of another IMPI client (the
    /// negotiated maximum data length).
    pub(crate) impi_eager_limit: usize,
}

impl Protocol {
    pub(crate) fn new(
        me: u32,
        peers: Vec<Peer>,
        cfg: DeviceConfig,
        oversubscribed: bool,
    ) -> Protocol {
        let npeers = peers.len();
        Protocol {
            me,
            peers,
            cfg,
            reqs: RequestTable::default(),
            matcher: Matcher::new(),
            pending: (0..npeers).map(|_| VecDeque::new()).collect(),
            pending_dests: Vec::new(),
            streams: Vec::new(),
            cma_ok: cfg.shm_cma,
            oversubscribed,
            payloads: PayloadStore::default(),
            lost: Vec::new(),
            messages: mprobe::Messages::default(),
            impi_eager_limit: 0,
        }
    }

    /// A peer of another job takes the next slot.
    pub(crate) fn add_peer(&mut self, peer: Peer) {
        self.peers.push(peer);
        self.pending.push(VecDeque::new());
    }

    #[inline]
    pub(crate) fn route(&self, world: u32) -> Route {
        self.peers
            .get(world as usize)
            .map_or(Route::Unreachable, |p| p.route)
    }

    /// The eager limit toward a peer reached by `route`.
    #[inline]
    pub(crate) fn eager_limit(&self, route: Route) -> usize {
        match route {
            Route::Tcp => self.cfg.tcp_eager_limit,
            Route::Impi => self.impi_eager_limit,
            _ => self.cfg.shm_eager_limit,
        }
    }

    // ----- requests -------------------------------------------------------------

    /// `MPI_Request_free`: release now if complete or inactive, else when it completes.
    pub(crate) fn free_request(&mut self, id: ReqId, io: &mut impl Io) {
        let Some(r) = self.reqs.get_mut(id) else {
            return;
        };
        if r.is_complete() || r.is_inactive() {
            if let Some(slot) = r.extra.as_mut().and_then(|x| x.bsend_slot.take()) {
                io.release_bsend(slot);
            }
            self.reqs.remove(id);
        } else {
            r.detached = true;
            r.persistent = None;
        }
    }

    /// Completes request `id` (its status already set), unless a cancel request still
    /// travels: then the answer finishes it.
    pub(crate) fn complete(&mut self, id: ReqId, io: &mut impl Io) {
        let Some(r) = self.reqs.get_mut(id) else {
            return;
        };
        // Only a receive restaged for external32 has conversion left (it has `extra`).
        if r.extra.is_some() && matches!(r.op, Op::Recv(..)) {
            ext32::finish_ext32(r);
        }
        r.complete = true;
        r.op = Op::Done;
        if r.cancel_pending {
            return;
        }
        if let Some(slot) = r.extra.as_mut().and_then(|x| x.bsend_slot.take()) {
            io.release_bsend(slot);
        }
        if r.detached {
            self.reqs.remove(id);
        }
    }

    /// Finishes request `id` if it is complete (see [`RequestTable::finish_if_complete`]).
    #[inline]
    pub(crate) fn finish_if_complete(&mut self, id: ReqId) -> Finish {
        self.reqs.finish_if_complete(id)
    }

    // ----- starting operations ---------------------------------------------------

    /// Starts a send with a request of its own.
    pub(crate) fn isend_request(&mut self, a: SendArgs, io: &mut impl Io) -> ReqId {
        let id = self
            .reqs
            .insert_new(Op::Send(a, SendState::Queued), Direction::Send);
        self.launch_send(id, a, io);
        id
    }

    /// Starts a send of bytes packed into `scratch` (a non-contiguous user buffer).
    pub(crate) fn isend_staged(
        &mut self,
        mut a: SendArgs,
        scratch: Vec<u8>,
        io: &mut impl Io,
    ) -> ReqId {
        a.buf = scratch.as_ptr();
        a.len = scratch.len();
        let id = self
            .reqs
            .insert_new(Op::Send(a, SendState::Queued), Direction::Send);
        self.reqs
            .get_mut(id)
            .expect("just inserted")
            .extra_mut()
            .scratch = Some(scratch);
        self.launch_send(id, a, io);
        id
    }

    /// Starts a send of the packed stream of a non-contiguous buffer (see
    /// [`super::Device::isend_layout`]).
    pub(crate) fn isend_layout(&mut self, a: SendArgs, l: Layout, io: &mut impl Io) -> ReqId {
        let id = self
            .reqs
            .insert_new(Op::Send(a, SendState::Queued), Direction::Send);
        let a = self.attach_send_layout(id, a, l);
        self.launch_send(id, a, io);
        id
    }

    /// Gives send `id` its non-contiguous buffer: packed into its scratch when it goes
    /// eagerly or toward an IMPI peer (the returned arguments then point there), else
    /// kept as the layout that rendezvous streams from (packed piece by piece into the
    /// ring or the TCP chunks, with the piece list when oversubscribed).
    fn attach_send_layout(&mut self, id: ReqId, mut a: SendArgs, l: Layout) -> SendArgs {
        let route = self.route(a.dest);
        // Toward IMPI peers a long message's first packet carries data read from one
        // contiguous buffer.
        let staged = a.len <= self.eager_limit(route) || matches!(route, Route::Impi);
        // With a core per rank, the sender packing into the ring while the receiver
        // unpacks from it (two copies in parallel) is fastest; oversubscribed, the
        // receiver copies alone from the published list (one process at work, no
        // handoff per ring's worth) when the pieces are long enough: a list costs a walk
        // of every piece at the sender and at the receiver, far more per byte than the
        // packing loops for elements of a few small blocks.
        let listed = !staged
            && matches!(route, Route::Shm(_))
            && self.cma_ok
            && self.oversubscribed
            && l.average_piece(a.len) >= MIN_LISTED_PIECE;
        let list = if listed {
            let most = (a.len / BYTES_PER_LIST_ENTRY).min(MAX_LIST_ENTRIES as usize);
            pieces::build(l.pieces(0, a.len), most).unwrap_or_default()
        } else {
            Vec::new()
        };
        let r = self.reqs.get_mut(id).expect("request exists");
        let x = r.extra_mut();
        x.piece_list = list;
        if staged {
            let mut v = vec![0u8; a.len];
            // SAFETY: the user buffer holds the layout's elements (MPI contract).
            let n = unsafe { l.pack_at(0, &mut v) };
            v.truncate(n);
            a.buf = v.as_ptr();
            a.len = v.len();
            x.scratch = Some(v);
            x.layout = None;
        } else {
            x.scratch = None;
            x.layout = Some(Arc::new(l));
        }
        if let Op::Send(args, _) = &mut r.op {
            *args = a;
        }
        a
    }

    /// Starts a receive into a non-contiguous buffer (see [`super::Device::irecv_layout`]).
    pub(crate) fn irecv_layout(&mut self, a: RecvArgs, l: Layout, io: &mut impl Io) -> ReqId {
        let id = self
            .reqs
            .insert_new(Op::Recv(a, RecvState::Posted), Direction::Recv);
        self.reqs
            .get_mut(id)
            .expect("just inserted")
            .extra_mut()
            .layout = Some(Arc::new(l));
        self.launch_recv(id, a, io);
        id
    }

    /// Announces send `id`: one `Eager` packet up to the eager limit (`FLAG_SYNC` for
    /// synchronous mode, which then waits for `SyncAck`), else `Rts` (which waits for
    /// `Fin` or `Cts`).
    fn launch_send(&mut self, id: ReqId, a: SendArgs, io: &mut impl Io) {
        let mut h = eager_header(&a, id);
        if a.len <= self.eager_limit(self.route(a.dest)) {
            let sync = a.mode == SendMode::Synchronous;
            if sync {
                h.flags = FLAG_SYNC;
                self.set_send_state(id, SendState::WaitAck);
            }
            self.post_packet(
                a.dest,
                h,
                Payload::Borrowed(a.buf, a.len),
                if sync { None } else { Some(id) },
                io,
            );
        } else {
            h.kind = Kind::Rts;
            h.addr = a.buf as u64;
            let noncontig = self
                .reqs
                .get(id)
                .and_then(|r| r.extra())
                .filter(|x| x.layout.is_some());
            if let Some(x) = noncontig {
                h.flags |= FLAG_NONCONTIG;
                h.addr = 0;
                if !x.piece_list.is_empty() {
                    h.flags |= FLAG_IOVLIST;
                    h.addr = x.piece_list.as_ptr() as u64;
                    h.rreq = x.piece_list.len() as u32;
                }
            }
            self.set_send_state(id, SendState::WaitFin);
            self.post_packet(a.dest, h, Payload::Empty, None, io);
        }
    }

    fn set_send_state(&mut self, id: ReqId, s: SendState) {
        if let Some(Request {
            op: Op::Send(_, st),
            ..
        }) = self.reqs.get_mut(id)
        {
            *st = s;
        }
    }

    /// Starts a receive. A message already here completes it at once (eager) or starts
    /// its rendezvous; else the receive is posted.
    pub(crate) fn irecv(&mut self, a: RecvArgs, io: &mut impl Io) -> ReqId {
        match self.irecv_stored(a, io) {
            Some(id) => id,
            None => self.irecv_post(a),
        }
    }

    /// The first half of [`Protocol::irecv`]: a receive that matches a stored message
    /// starts with it (complete at once for an eager one); None when none matches.
    #[inline]
    pub(crate) fn irecv_stored(&mut self, a: RecvArgs, io: &mut impl Io) -> Option<ReqId> {
        match self.matcher.take_unexpected(a.spec)? {
            // The message is here: the receive is complete as it starts.
            (_, Unexpected::Eager { from, hdr, data }) => {
                let status = land_eager(&a, None, &hdr, data.bytes());
                self.payloads.recycle(data);
                self.ack_if_sync(from, &hdr, io);
                Some(self.reqs.insert_complete(status, Direction::Recv))
            }
            (_, u) => {
                let id = self
                    .reqs
                    .insert_new(Op::Recv(a, RecvState::Posted), Direction::Recv);
                self.deliver(id, u, io);
                Some(id)
            }
        }
    }

    /// The second half of [`Protocol::irecv`]: posts a receive no stored message matched.
    #[inline]
    pub(crate) fn irecv_post(&mut self, a: RecvArgs) -> ReqId {
        let id = self
            .reqs
            .insert_new(Op::Recv(a, RecvState::Posted), Direction::Recv);
        self.matcher.post(a.spec, id);
        id
    }

    fn launch_recv(&mut self, id: ReqId, a: RecvArgs, io: &mut impl Io) {
        match self.matcher.take_unexpected(a.spec) {
            Some((_, u)) => self.deliver(id, u, io),
            None => self.matcher.post(a.spec, id),
        }
    }

    /// Restarts inactive persistent request `id`, with its buffer described by `layout`
    /// when it is not contiguous.
    pub(crate) fn restart(
        &mut self,
        id: ReqId,
        layout: Option<Layout>,
        io: &mut impl Io,
    ) -> Result<(), InvalidRequest> {
        let Some(r) = self.reqs.get_mut(id) else {
            return Err(InvalidRequest);
        };
        if !matches!(r.op, Op::Inactive) {
            return Err(InvalidRequest);
        }
        r.complete = false;
        r.status = Status::EMPTY;
        match r.persistent {
            Some(Persistent::Send(a)) => {
                r.op = Op::Send(a, SendState::Queued);
                let a = match layout {
                    Some(l) => self.attach_send_layout(id, a, l),
                    None => a,
                };
                self.launch_send(id, a, io);
            }
            Some(Persistent::Recv(a)) => {
                r.op = Op::Recv(a, RecvState::Posted);
                if let Some(l) = layout {
                    let x = r.extra_mut();
                    x.scratch = None;
                    x.layout = Some(Arc::new(l));
                }
                self.launch_recv(id, a, io);
            }
            Some(Persistent::ProcNull) => {
                r.status = Status::proc_null();
                r.complete = true;
                r.op = Op::Done;
            }
            Some(Persistent::Bsend(_)) | None => return Err(InvalidRequest),
        }
        Ok(())
    }

    /// Sends the pool copy of a buffered message: an internal request that gives its
    /// pool region back ([`Io::release_bsend`]) when the message has left.
    pub(crate) fn start_bsend_copy(&mut self, a: SendArgs, slot: usize, io: &mut impl Io) {
        let id = self
            .reqs
            .insert_new(Op::Send(a, SendState::Queued), Direction::Send);
        if let Some(r) = self.reqs.get_mut(id) {
            r.detached = true;
            r.extra_mut().bsend_slot = Some(slot);
        }
        self.launch_send(id, a, io);
    }

    // ----- sending packets ---------------------------------------------------------

    /// Whether packets wait in the queue toward `dest` (a later one must not pass them).
    #[inline]
    pub(crate) fn queued_for(&self, dest: u32) -> bool {
        // Most of the time nothing waits anywhere: one look at the list of destinations.
        !self.pending_dests.is_empty() && !self.pending[dest as usize].is_empty()
    }

    /// Writes a packet now when nothing waits before it and there is room, else queues
    /// it; `completes` is a send that completes once it is written.
    fn post_packet(
        &mut self,
        dest: u32,
        hdr: Header,
        payload: Payload,
        completes: Option<ReqId>,
        io: &mut impl Io,
    ) {
        let d = dest as usize;
        if !self.queued_for(dest) && io.try_write(dest, &hdr, payload.bytes()) {
            if let Some(id) = completes {
                self.complete(id, io);
            }
            return;
        }
        if self.is_lost(dest) {
            // Nobody will take it: the send it completes fails instead.
            if let Some(id) = completes {
                self.fail(id, io);
            }
            return;
        }
        if self.pending[d].is_empty() {
            self.pending_dests.push(dest);
        }
        self.pending[d].push_back(Outgoing {
            hdr,
            payload,
            completes,
        });
    }

    /// Writes queued packets in order; returns true if any was written.
    pub(crate) fn flush_pending(&mut self, io: &mut impl Io) -> bool {
        if self.pending_dests.is_empty() {
            return false;
        }
        let mut did = false;
        let dests = std::mem::take(&mut self.pending_dests);
        let mut still = Vec::new();
        for dest in dests {
            while let Some(o) = self.pending[dest as usize].pop_front() {
                if io.try_write(dest, &o.hdr, o.payload.bytes()) {
                    did = true;
                    if let Some(id) = o.completes {
                        self.complete(id, io);
                    }
                } else {
                    self.pending[dest as usize].push_front(o);
                    still.push(dest);
                    break;
                }
            }
        }
        self.pending_dests.extend(still);
        did
    }

    /// True when packets or streams are waiting to be written.
    #[inline]
    pub(crate) fn has_outgoing(&self) -> bool {
        !self.pending_dests.is_empty() || !self.streams.is_empty()
    }

    /// The destinations that packets or streams wait to be written to (repeats
    /// possible).
    pub(crate) fn blocked_dests(&self) -> impl Iterator<Item = u32> + '_ {
        self.pending_dests
            .iter()
            .copied()
            .chain(self.streams.iter().map(|s| s.dest))
    }

    // ----- handling arrivals -------------------------------------------------------

    /// A packet arrived from world rank `from`.
    pub(crate) fn packet(&mut self, from: u32, hdr: Header, payload: &[u8], io: &mut impl Io) {
        match hdr.kind {
            Kind::Eager | Kind::Rts => {
                let env = Envelope {
                    ctx: hdr.ctx,
                    src: hdr.src_rank,
                    tag: hdr.tag,
                };
                match self.matcher.take_posted(env) {
                    Some(id) => {
                        if hdr.kind == Kind::Eager {
                            self.deliver_eager(id, from, &hdr, payload, io);
                        } else {
                            self.start_pull(id, from, &hdr, io);
                        }
                    }
                    None => {
                        let u = if hdr.kind == Kind::Eager {
                            Unexpected::Eager {
                                from,
                                hdr,
                                data: self.payloads.store(payload),
                            }
                        } else {
                            Unexpected::Rts { from, hdr }
                        };
                        self.matcher.push_unexpected(env, u);
                    }
                }
            }
            Kind::SyncAck | Kind::Fin => self.complete(hdr.sreq, io),
            Kind::Cts => {
                let Some(
                    r @ Request {
                        op: Op::Send(a, _), ..
                    },
                ) = self.reqs.get(hdr.sreq)
                else {
                    return;
                };
                let (a, layout) = (*a, r.layout().cloned());
                let len = hdr.len.min(a.len as u64);
                self.set_send_state(hdr.sreq, SendState::Streaming);
                self.streams.push(Stream {
                    dest: from,
                    sreq: hdr.sreq,
                    rreq: hdr.rreq,
                    buf: a.buf,
                    len,
                    off: 0,
                    layout,
                    piece: Vec::new(),
                    piece_off: u64::MAX,
                });
            }
            Kind::Data => self.receive_piece(hdr.rreq, hdr.addr, payload, io),
            Kind::CancelReq => self.answer_cancel(from, &hdr, io),
            Kind::CancelResp => self.cancel_answered(&hdr, io),
        }
    }

    /// A posted receive meets an unexpected message.
    fn deliver(&mut self, id: ReqId, u: Unexpected, io: &mut impl Io) {
        match u {
            Unexpected::Eager { from, hdr, data } => {
                self.deliver_eager(id, from, &hdr, data.bytes(), io);
                self.payloads.recycle(data);
            }
            Unexpected::Rts { from, hdr } => self.start_pull(id, from, &hdr, io),
        }
    }

    fn recv_args(&self, id: ReqId) -> RecvArgs {
        match self.reqs.get(id).map(|r| r.op) {
            Some(Op::Recv(a, _)) => a,
            _ => unreachable!("matched request {id} is not a receive"),
        }
    }

    fn set_recv_status(&mut self, id: ReqId, hdr: &Header, cap: usize) -> usize {
        let status = matched_status(hdr, cap);
        self.reqs.get_mut(id).expect("request exists").status = status;
        status.bytes as usize
    }

    /// Answers a synchronous-mode message (`FLAG_SYNC`) from `from` once it matched
    /// (the test inline, the answer out of line: most messages are not synchronous).
    #[inline(always)]
    pub(crate) fn ack_if_sync(&mut self, from: u32, hdr: &Header, io: &mut impl Io) {
        if hdr.flags & FLAG_SYNC != 0 {
            self.sync_ack(from, hdr.sreq, io);
        }
    }

    #[inline(never)]
    fn sync_ack(&mut self, from: u32, sreq: u32, io: &mut impl Io) {
        let mut h = Header::new(Kind::SyncAck);
        h.sreq = sreq;
        self.post_packet(from, h, Payload::Empty, None, io);
    }

    fn deliver_eager(&mut self, id: ReqId, from: u32, hdr: &Header, data: &[u8], io: &mut impl Io) {
        self.restage_ext32(id, from);
        let Some(r) = self.reqs.get_mut(id) else {
            unreachable!("matched request {id} does not exist")
        };
        let Op::Recv(a, _) = r.op else {
            unreachable!("matched request {id} is not a receive")
        };
        r.status = land_eager(&a, r.layout().map(|l| &**l), hdr, data);
        self.complete(id, io);
        self.ack_if_sync(from, hdr, io);
    }
}
