//! The device (MPICH's "abstract device interface"): requests, the matching engine,
//! the eager / rendezvous / synchronous / cancel protocols, and the progress engine
//! that drives the transports.
//!
//! The device speaks in world ranks, context ids, tags and contiguous byte ranges. It
//! knows nothing of communicators, datatypes or collectives. Protocol choice:
//! - `len <= eager limit`: one `Eager` packet carries the data (flag SYNC for
//!   synchronous mode; the receiver answers `SyncAck` when it matches);
//! - larger: `Rts` announces the message; on an oversubscribed node the receiver pulls
//!   it with one `process_vm_readv` and answers `Fin`; with a core per rank (or where
//!   cross-memory attach is not permitted, or disabled) it answers `Cts` and the sender
//!   streams `Data` pieces through the ring while the receiver copies them out.
//! - small contiguous standard/ready sends with nothing queued before them are written
//!   at once without a request ([`Device::send_now`]);
//! - a blocking receive from a local peer with nothing posted or stored before it takes
//!   that peer's next eager packet straight from the ring (`direct.rs`).
//!
//! Over TCP the receiver always answers `Cts` and the sender streams `Data` pieces that
//! are written from and read into the user buffers directly; the eager limit is then
//! `OXMPI_TCP_EAGER_LIMIT`.
//!
//! Non-contiguous buffers arrive as a [`Layout`] (base address, count and a datatype's
//! pack program), never as one packed copy: receives unpack each eager payload, `Data`
//! piece or TCP frame (through a piece-sized bounce buffer) straight into the user
//! buffer, and (oversubscribed) pull with `process_vm_readv` into the buffer's own pieces
//! (or through a bounce buffer when they are small). Large non-contiguous shared-memory
//! sends set `FLAG_NONCONTIG` on the `Rts` and stream pieces packed on the fly straight
//! into the ring slot after `Cts`; when ranks are oversubscribed they instead publish their piece
//! list ([`pieces`], `FLAG_IOVLIST`) and the receiver copies the message alone. Eager
//! and TCP non-contiguous sends are packed into a scratch buffer; persistent requests
//! take the same paths at every start ([`Device::start_layout`]).

pub mod bsend;
mod direct;
pub mod matching;
pub mod packet;
pub mod pieces;
mod poll_set;
pub mod request;
mod stats;
mod stored;
pub mod stream_stores;

pub use direct::Direct;

use crate::sys::cma;
use crate::transport::bell::Poker;
use crate::transport::ring::{Consumer, Producer, Watch};
use crate::transport::shm::ShmNode;
use crate::transport::tcp::{self, TcpNet};
use crate::transport::Route;
use bsend::BsendPool;
use matching::{Envelope, Matcher, Spec};
use packet::{
    Header, Kind, FLAG_CANCELLED, FLAG_IOVLIST, FLAG_NONCONTIG, FLAG_PROBED, FLAG_SYNC,
    HEADER_BYTES,
};
use poll_set::PollSet;
pub use request::{
    BufRef, Direction, Finish, InvalidRequest, Layout, Outcome, Persistent, RecvArgs, ReqId,
    Request, RequestTable, SendArgs, SendMode, Status, DONE_SEND,
};
use request::{Op, RecvState, SendState};
use std::collections::VecDeque;
use std::sync::Arc;
use stored::{PayloadStore, Stored};
use stream_stores::Policy;

/// A non-contiguous send publishes its piece list (see [`pieces`]) only when it has at
/// most one entry per this many message bytes (else its pieces stream through the ring).
const BYTES_PER_LIST_ENTRY: usize = 256;

/// Longest piece list a receiver accepts (entries).
const MAX_LIST_ENTRIES: u64 = 1 << 22;

/// A receiver reads a listed message piece by piece (the kernel's vectored copy) when its
/// pieces average at least this many bytes: the kernel pins remote memory piece by
/// piece, so small pieces are read instead as spans with their gaps, through a bounce
/// buffer, and gathered in user space.
const MIN_VECTORED_PIECE: u64 = 1024;

/// Largest span read at once into the bounce buffer.
const SPAN_BYTES: usize = 256 * 1024;

/// First piece of a message streamed through a ring (automatic piece size): the
/// receiver starts copying out after this many bytes, whatever the largest piece.
const FIRST_PIECE: u64 = 32 * 1024;

/// The size of the piece at byte `off` of a stream of `len` bytes: pieces grow with
/// the offset (each as large as everything sent before it) from `first` up to
/// `largest`, and to at most a quarter of the message (so that the sender's copy in
/// and the receiver's copy out overlap), but never below `first`.
///
/// A message then reaches the receiver after a small first piece, and a long one moves
/// in large pieces. On the 2-core development VM (10 interleaved rounds each), pieces
/// growing to 256 KiB gave 1-4 MiB window bandwidth 1.29-1.40x Open MPI's against
/// 1.09-1.15x with 32 KiB pieces, and bidirectional bandwidth 1.24x against 1.01-1.11x.
fn stream_piece(off: u64, len: u64, first: u64, largest: u64) -> u64 {
    let cap = largest.min((len / 4).max(first));
    off.max(first).min(cap).min(len - off)
}

/// The device's tunables, filled by the MPI layer from its configuration at start-up
/// (the device reads no environment variable itself).
#[derive(Clone, Copy, Debug)]
pub struct DeviceConfig {
    /// Messages up to this many bytes travel eagerly through shared memory.
    pub shm_eager_limit: usize,
    /// Messages up to this many bytes travel eagerly over TCP.
    pub tcp_eager_limit: usize,
    /// Single-copy rendezvous (`process_vm_readv`) is allowed.
    pub shm_cma: bool,
    /// Largest piece of the pipelined rendezvous copy through a ring (every piece when
    /// [`Self::shm_chunk_fixed`]).
    pub shm_chunk_bytes: usize,
    /// The piece size was set: every piece has it (else pieces grow up to it).
    pub shm_chunk_fixed: bool,
    /// Stores that write the pieces of long contiguous messages into a ring.
    pub shm_stream_stores: Policy,
    /// Piece size of a rendezvous message streamed over TCP.
    pub tcp_chunk_bytes: usize,
}

/// A failure after which the job cannot go on: a peer this rank needs was lost or
/// cannot be reached, or sent a corrupt packet. The message names the peer and the
/// cause; the MPI layer decides how the process ends.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceError(Box<str>);

impl DeviceError {
    #[cold]
    fn new(msg: String) -> DeviceError {
        DeviceError(msg.into_boxed_str())
    }

    /// What failed, e.g. `lost the TCP connection to rank 3 (10.0.0.2:4000): Broken pipe`.
    pub fn message(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for DeviceError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for DeviceError {}

/// How to reach one world rank.
#[derive(Clone, Copy, Debug)]
pub struct Peer {
    pub route: Route,
    /// Process id, for cross-memory attach.
    pub pid: i32,
}

enum Payload {
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

/// A rendezvous message being streamed to a receiver that asked for it with `Cts`.
struct Stream {
    dest: u32,
    sreq: ReqId,
    rreq: u32,
    buf: *const u8,
    len: u64,
    off: u64,
    /// The send buffer when it is not contiguous (`buf` is then its base only).
    layout: Option<Arc<Layout>>,
    /// For a layout over TCP: the next piece, packed once (`piece_off` is its stream
    /// offset, `u64::MAX` for none), so a socket that has no room now costs no repacking.
    piece: Vec<u8>,
    piece_off: u64,
}

/// The sender request id carried by a message that has none ([`Device::send_now`]).
const NO_REQUEST: ReqId = ReqId::MAX;

/// The `Eager` header of send `a` (the message's envelope and length), naming sender
/// request `sreq`.
/// The status of a receive of `cap` bytes matched by the message `hdr` announces
/// (truncated to `cap`, with `MPI_ERR_TRUNCATE` then).
fn matched_status(hdr: &Header, cap: usize) -> Status {
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

fn eager_header(a: &SendArgs, sreq: ReqId) -> Header {
    let mut h = Header::new(Kind::Eager);
    h.src_rank = a.src_rank;
    h.ctx = a.ctx;
    h.tag = a.tag;
    h.len = a.len as u64;
    h.sreq = sreq;
    h
}

/// The point-to-point engine of one process.
pub struct Device {
    me: u32,
    peers: Vec<Peer>,
    cfg: DeviceConfig,
    reqs: RequestTable,
    matcher: Matcher<ReqId, Unexpected>,
    node: Option<Arc<ShmNode>>,
    producers: Vec<Option<Producer>>,
    consumers: Vec<Option<Consumer>>,
    /// Which of `consumers` progress polls.
    polls: PollSet,
    /// World rank of each local rank index.
    local_world: Vec<u32>,
    selfq: VecDeque<(Header, Vec<u8>)>,
    pending: Vec<VecDeque<Outgoing>>,
    pending_dests: Vec<u32>,
    streams: Vec<Stream>,
    cma_ok: bool,
    /// More local ranks than cores (or `OXMPI_OVERSUBSCRIBED=1`): non-contiguous sends
    /// publish their piece list rather than stream.
    oversubscribed: bool,
    /// Bounce buffer for reading listed messages of small pieces (kept between messages).
    span_bounce: Vec<u8>,
    /// Copies of the payloads of unexpected eager messages.
    payloads: PayloadStore,
    /// The TCP transport (taken out while it delivers packets to the device).
    tcp: Option<Box<TcpNet>>,
    /// Wakes local ranks that sleep in their TCP epoll set.
    poker: Option<Poker>,
    /// The attached buffered-send buffer.
    pub bsend: BsendPool,
}

// SAFETY: raw pointers inside requests/outgoing packets refer to user buffers whose
// validity the MPI rules guarantee until completion; the device is only ever used
// under the runtime's lock.
unsafe impl Send for Device {}

impl Device {
    /// A device for world rank `me`. `node` is the shared segment (None when this rank
    /// has no local peers); `local_world[i]` is the world rank of local index `i`.
    pub fn new(
        me: u32,
        peers: Vec<Peer>,
        cfg: DeviceConfig,
        node: Option<Arc<ShmNode>>,
        local_world: Vec<u32>,
        oversubscribed: bool,
    ) -> Device {
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
        let cma_ok = cfg.shm_cma;
        let npeers = peers.len();
        Device {
            me,
            peers,
            cfg,
            reqs: RequestTable::default(),
            matcher: Matcher::new(),
            node,
            producers,
            consumers,
            polls,
            local_world,
            selfq: VecDeque::new(),
            pending: (0..npeers).map(|_| VecDeque::new()).collect(),
            pending_dests: Vec::new(),
            streams: Vec::new(),
            cma_ok,
            oversubscribed,
            span_bounce: Vec::new(),
            payloads: PayloadStore::default(),
            tcp: None,
            poker: None,
            bsend: BsendPool::default(),
        }
    }

    /// Adds the TCP transport (for peers whose route is [`Route::Tcp`]).
    pub fn attach_tcp(&mut self, net: TcpNet) {
        self.tcp = Some(Box::new(net));
    }

    /// Adds the means to wake local ranks that sleep in their TCP epoll set.
    pub fn attach_poker(&mut self, poker: Poker) {
        self.poker = Some(poker);
    }

    /// Where to sleep when this rank has TCP connections.
    pub fn tcp_sleeper(&self) -> Option<tcp::Sleeper> {
        self.tcp.as_ref().map(|t| t.sleeper())
    }

    pub fn world_rank(&self) -> u32 {
        self.me
    }

    pub fn world_size(&self) -> u32 {
        self.peers.len() as u32
    }

    /// The shared segment, for sleeping on the doorbell outside the runtime lock.
    pub fn node(&self) -> Option<&Arc<ShmNode>> {
        self.node.as_ref()
    }

    pub fn route(&self, world: u32) -> Route {
        self.peers
            .get(world as usize)
            .map_or(Route::Unreachable, |p| p.route)
    }

    // ----- requests -------------------------------------------------------------

    pub fn request(&self, id: ReqId) -> Option<&Request> {
        self.reqs.get(id)
    }

    pub fn request_mut(&mut self, id: ReqId) -> Option<&mut Request> {
        self.reqs.get_mut(id)
    }

    /// A request that is already complete with `status` (e.g. `MPI_PROC_NULL`).
    pub fn complete_request(&mut self, status: Status, direction: Direction) -> ReqId {
        self.reqs.insert_complete(status, direction)
    }

    /// A persistent request, inactive until started.
    pub fn persistent_request(&mut self, p: Persistent, direction: Direction) -> ReqId {
        let (id, r) = self.reqs.insert_slot(Op::Inactive, direction);
        r.persistent = Some(p);
        id
    }

    /// True when no request exists any more (used at finalize).
    pub fn live_requests(&self) -> usize {
        self.reqs.live()
    }

    /// Takes the final status of a complete request: a non-persistent request is
    /// released, a persistent one becomes inactive (the empty status when there is
    /// nothing to finish).
    pub fn finish(&mut self, id: ReqId) -> Status {
        match self.reqs.finish_if_complete(id) {
            Finish::Done { status, .. } => status,
            Finish::NotComplete | Finish::Inactive => Status::EMPTY,
        }
    }

    /// Finishes request `id` if it is complete, as [`Device::finish`] does, and says
    /// what it found.
    pub fn finish_if_complete(&mut self, id: ReqId) -> Finish {
        self.reqs.finish_if_complete(id)
    }

    /// The owner of request `id` just finished with `status` (see
    /// [`RequestTable::finished_owner`]).
    pub fn finished_owner(&self, id: ReqId, status: &Status) -> Option<u32> {
        self.reqs.finished_owner(id, status)
    }

    /// `MPI_Request_free`: release now if complete or inactive, else when it completes.
    pub fn free_request(&mut self, id: ReqId) {
        let Some(r) = self.reqs.get_mut(id) else {
            return;
        };
        if r.is_complete() || r.is_inactive() {
            if let Some(slot) = r.extra.as_mut().and_then(|x| x.bsend_slot.take()) {
                self.bsend.free(slot);
            }
            self.reqs.remove(id);
        } else {
            r.detached = true;
            r.persistent = None;
        }
    }

    fn complete(&mut self, id: ReqId) {
        let Some(r) = self.reqs.get_mut(id) else {
            return;
        };
        r.complete = true;
        r.op = Op::Done;
        if r.cancel_pending {
            return;
        }
        if let Some(slot) = r.extra.as_mut().and_then(|x| x.bsend_slot.take()) {
            self.bsend.free(slot);
        }
        if r.detached {
            self.reqs.remove(id);
        }
    }

    // ----- starting operations ---------------------------------------------------

    /// Starts a send. The buffer must stay valid until the request completes. A small
    /// standard or ready send that leaves at once ([`Device::send_now`]) is complete
    /// already and gets the shared request [`DONE_SEND`].
    pub fn isend(&mut self, a: SendArgs) -> ReqId {
        if self.send_now(&a) {
            return DONE_SEND;
        }
        self.isend_request(a)
    }

    /// Starts a send with a request of its own, for a caller that already tried
    /// [`Device::send_now`] (or whose send cannot leave that way).
    pub fn isend_request(&mut self, a: SendArgs) -> ReqId {
        let id = self
            .reqs
            .insert_new(Op::Send(a, SendState::Queued), Direction::Send);
        self.launch_send(id, a);
        id
    }

    /// Sends a small contiguous message at once, without a request, when it can leave
    /// now: eager size, not synchronous, nothing queued before it for that destination
    /// and room in the transport. Returns false (nothing sent) otherwise; the caller
    /// then starts an ordinary send. Such a message has no sender request to name, so
    /// it cannot be cancelled (a blocking send never can be).
    pub fn send_now(&mut self, a: &SendArgs) -> bool {
        let route = self.route(a.dest);
        let eager_limit = match route {
            Route::Shm(_) => self.cfg.shm_eager_limit,
            Route::Tcp => self.cfg.tcp_eager_limit,
            _ => return false,
        };
        if a.len > eager_limit || a.mode == SendMode::Synchronous || self.queued_for(a.dest) {
            return false;
        }
        let h = eager_header(a, NO_REQUEST);
        let payload = if a.len == 0 {
            &[][..]
        } else {
            // SAFETY: the caller's buffer holds `len` bytes (MPI contract, checked counts).
            unsafe { std::slice::from_raw_parts(a.buf, a.len) }
        };
        match route {
            Route::Shm(j) => self.try_push_shm(j, &h, payload, copy_small),
            _ => self.try_write(a.dest, &h, payload),
        }
    }

    /// Starts a send of bytes packed into `scratch` (a non-contiguous user buffer).
    pub fn isend_staged(&mut self, mut a: SendArgs, scratch: Vec<u8>) -> ReqId {
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
        self.launch_send(id, a);
        id
    }

    /// Starts a send of the packed stream of a non-contiguous buffer (`a.buf` is its base
    /// and `a.len` the packed bytes). Messages sent eagerly or over TCP are packed into a
    /// scratch buffer first; larger ones over shared memory are announced with a
    /// non-contiguous rendezvous and streamed in pieces packed straight into the ring.
    pub fn isend_layout(&mut self, a: SendArgs, l: Layout) -> ReqId {
        let id = self
            .reqs
            .insert_new(Op::Send(a, SendState::Queued), Direction::Send);
        let a = self.attach_send_layout(id, a, l);
        self.launch_send(id, a);
        id
    }

    /// Gives send `id` its non-contiguous buffer: packed into its scratch when it goes
    /// eagerly or over TCP (the returned arguments then point there), else kept as the
    /// layout that rendezvous streams from (with the piece list when oversubscribed).
    fn attach_send_layout(&mut self, id: ReqId, mut a: SendArgs, l: Layout) -> SendArgs {
        let route = self.route(a.dest);
        let eager_limit = match route {
            Route::Tcp => self.cfg.tcp_eager_limit,
            _ => self.cfg.shm_eager_limit,
        };
        let staged = a.len <= eager_limit || route == Route::Tcp;
        // With a core per rank, the sender packing into the ring while the receiver
        // unpacks from it (two copies in parallel) is fastest; oversubscribed, the
        // receiver copies alone from the published list (one process at work, no
        // handoff per ring's worth).
        let listed =
            !staged && matches!(route, Route::Shm(_)) && self.cma_ok && self.oversubscribed;
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

    /// Restarts an inactive persistent send or receive whose buffer is not contiguous,
    /// like [`Device::start`] with the buffer described by `l`.
    pub fn start_layout(&mut self, id: ReqId, l: Layout) -> Result<(), InvalidRequest> {
        self.restart(id, Some(l))
    }

    /// Starts a receive into a non-contiguous buffer (`a.buf` is its base, `a.cap` the
    /// packed capacity): each arriving piece is unpacked straight into it.
    pub fn irecv_layout(&mut self, a: RecvArgs, l: Layout) -> ReqId {
        let id = self
            .reqs
            .insert_new(Op::Recv(a, RecvState::Posted), Direction::Recv);
        self.reqs
            .get_mut(id)
            .expect("just inserted")
            .extra_mut()
            .layout = Some(Arc::new(l));
        self.launch_recv(id, a);
        id
    }

    fn launch_send(&mut self, id: ReqId, a: SendArgs) {
        let mut h = eager_header(&a, id);
        let eager_limit = match self.route(a.dest) {
            Route::Tcp => self.cfg.tcp_eager_limit,
            _ => self.cfg.shm_eager_limit,
        };
        if a.len <= eager_limit {
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
            self.post_packet(a.dest, h, Payload::Empty, None);
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

    /// Starts a receive. The buffer must stay valid until the request completes.
    pub fn irecv(&mut self, a: RecvArgs) -> ReqId {
        match self.matcher.take_unexpected(a.spec) {
            // The message is here: the receive is complete as it starts.
            Some((_, Unexpected::Eager { from, hdr, data })) => {
                let status = land_eager(&a, None, &hdr, data.bytes());
                self.payloads.recycle(data);
                self.ack_if_sync(from, &hdr);
                self.reqs.insert_complete(status, Direction::Recv)
            }
            Some((_, u)) => {
                let id = self
                    .reqs
                    .insert_new(Op::Recv(a, RecvState::Posted), Direction::Recv);
                self.deliver(id, u);
                id
            }
            None => {
                let id = self
                    .reqs
                    .insert_new(Op::Recv(a, RecvState::Posted), Direction::Recv);
                self.matcher.post(a.spec, id);
                id
            }
        }
    }

    fn launch_recv(&mut self, id: ReqId, a: RecvArgs) {
        match self.matcher.take_unexpected(a.spec) {
            Some((_, u)) => self.deliver(id, u),
            None => self.matcher.post(a.spec, id),
        }
    }

    /// `MPI_Start` for a persistent send or receive (buffered sends are started by the
    /// caller, which packs into the pool and calls [`Device::start_bsend_copy`]).
    pub fn start(&mut self, id: ReqId) -> Result<(), InvalidRequest> {
        self.restart(id, None)
    }

    /// Restarts inactive persistent request `id`, with its buffer described by `layout`
    /// when it is not contiguous.
    fn restart(&mut self, id: ReqId, layout: Option<Layout>) -> Result<(), InvalidRequest> {
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
                self.launch_send(id, a);
            }
            Some(Persistent::Recv(a)) => {
                r.op = Op::Recv(a, RecvState::Posted);
                if let Some(l) = layout {
                    let x = r.extra_mut();
                    x.scratch = None;
                    x.layout = Some(Arc::new(l));
                }
                self.launch_recv(id, a);
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

    /// Sends the pool copy of a buffered message: an internal request that frees its
    /// pool region when the message has left.
    pub fn start_bsend_copy(&mut self, a: SendArgs, slot: usize) {
        let id = self
            .reqs
            .insert_new(Op::Send(a, SendState::Queued), Direction::Send);
        if let Some(r) = self.reqs.get_mut(id) {
            r.detached = true;
            r.extra_mut().bsend_slot = Some(slot);
        }
        self.launch_send(id, a);
    }

    /// Marks a started persistent request as done with `status` (used for buffered
    /// persistent sends, which complete once copied).
    pub fn mark_done(&mut self, id: ReqId, status: Status) {
        if let Some(r) = self.reqs.get_mut(id) {
            r.status = status;
            r.complete = true;
            r.op = Op::Done;
        }
    }

    /// Starts inactive persistent request `id` as a pending operation that its owner
    /// carries out and ends with [`Device::mark_done`] (persistent collectives, which
    /// the MPI layer runs). `Err` when `id` is not an inactive persistent request.
    pub fn start_pending(&mut self, id: ReqId) -> Result<(), InvalidRequest> {
        let Some(r) = self.reqs.get_mut(id) else {
            return Err(InvalidRequest);
        };
        if !matches!(r.op, Op::Inactive) || r.persistent.is_none() {
            return Err(InvalidRequest);
        }
        r.complete = false;
        r.status = Status::EMPTY;
        r.op = Op::Done;
        Ok(())
    }

    // ----- generalized requests ------------------------------------------------------

    /// `MPI_Grequest_start`: a request that stays incomplete until
    /// [`Device::grequest_complete`]. The device keeps no status for it: the binding
    /// that owns its callbacks computes the status when it completes.
    pub fn generalized_request(&mut self) -> ReqId {
        let (id, r) = self.reqs.insert_slot(Op::Done, Direction::Recv);
        r.generalized = true;
        id
    }

    /// `MPI_Grequest_complete`. Returns whether the request was released here (it had
    /// been freed with `MPI_Request_free` before); `Err` when `id` is not a pending
    /// generalized request.
    pub fn grequest_complete(&mut self, id: ReqId) -> Result<bool, InvalidRequest> {
        let Some(r) = self.reqs.get_mut(id) else {
            return Err(InvalidRequest);
        };
        if !r.generalized || r.complete {
            return Err(InvalidRequest);
        }
        r.complete = true;
        let released = r.detached;
        if released {
            self.reqs.remove(id);
        }
        // A waiter may sleep on this rank's doorbell (when another thread completes).
        if let Some(j) = self.local_world.iter().position(|&w| w == self.me) {
            self.wake_local(j);
        }
        Ok(released)
    }

    // ----- probing and cancelling --------------------------------------------------

    /// `MPI_Iprobe` on the unexpected queue (call [`Device::progress`] first).
    pub fn probe(&self, spec: Spec) -> Option<Status> {
        self.matcher
            .peek_unexpected(spec)
            .map(|(env, u)| probed_status(env, u.hdr()))
    }

    /// `MPI_Iprobe` by the application: like [`Device::probe`], and the message found
    /// can no longer be cancelled by its sender (the receive that follows must get it).
    pub fn probe_seen(&mut self, spec: Spec) -> Option<Status> {
        let (env, u) = self.matcher.peek_unexpected_mut(spec)?;
        let h = u.hdr_mut();
        h.flags |= FLAG_PROBED;
        Some(probed_status(env, h))
    }

    /// `MPI_Cancel`. Receives still posted are cancelled at once; sends not yet matched
    /// are cancelled by asking the receiver (the answer arrives through progress).
    pub fn cancel(&mut self, id: ReqId) {
        let Some(r) = self.reqs.get(id) else {
            return;
        };
        if r.complete {
            return;
        }
        match r.op {
            Op::Recv(a, RecvState::Posted) if self.matcher.remove_posted(a.spec, |p| *p == id) => {
                let r = self.reqs.get_mut(id).expect("request exists");
                r.status = Status {
                    cancelled: true,
                    ..Status::EMPTY
                };
                self.complete(id);
            }
            Op::Send(a, SendState::Queued) => {
                // Still in our own queue: take it back without telling anyone.
                if let Some(q) = self.pending.get_mut(a.dest as usize) {
                    if let Some(i) = q
                        .iter()
                        .position(|o| o.hdr.sreq == id && o.hdr.kind == Kind::Eager)
                    {
                        q.remove(i);
                        let r = self.reqs.get_mut(id).expect("request exists");
                        r.status.cancelled = true;
                        self.complete(id);
                    }
                }
            }
            Op::Send(a, SendState::WaitAck) | Op::Send(a, SendState::WaitFin) => {
                if r.cancel_pending {
                    return;
                }
                self.reqs
                    .get_mut(id)
                    .expect("request exists")
                    .cancel_pending = true;
                let mut h = Header::new(Kind::CancelReq);
                h.sreq = id;
                h.ctx = a.ctx;
                h.src_rank = a.src_rank;
                self.post_packet(a.dest, h, Payload::Empty, None);
            }
            _ => {}
        }
    }

    // ----- sending packets ---------------------------------------------------------

    fn try_write(&mut self, dest: u32, hdr: &Header, payload: &[u8]) -> bool {
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
            Route::Unreachable => {
                // The runtime refuses to start operations toward unreachable ranks;
                // reaching here is an engine bug, reported loudly rather than hanging.
                panic!("no transport reaches world rank {dest}");
            }
        }
    }

    /// Writes a packet to local peer `j`'s ring, its payload copied with `copy`, and
    /// rings the peer's doorbell when it sleeps. Returns whether there was room.
    fn try_push_shm(
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

    /// Writes a `Data` packet of stream bytes `off..off + n` of layout `l` to `dest` (a
    /// local peer or this rank), packing them straight into the ring slot for a peer.
    /// Returns whether there was room.
    fn try_push_packed(&mut self, dest: u32, hdr: &Header, l: &Layout, off: u64, n: u64) -> bool {
        let Route::Shm(j) = self.route(dest) else {
            let mut piece = vec![0; n as usize];
            // SAFETY: the send buffer holds the layout's elements until this send
            // completes after its last piece; `piece` is our own memory.
            unsafe { l.pack_at(off as usize, &mut piece) };
            if self.route(dest) == Route::SelfLoop {
                self.selfq.push_back((*hdr, piece));
                return true;
            }
            return self.try_write(dest, hdr, &piece);
        };
        let h = hdr.encode();
        let p = self.producers[j].as_mut().expect("producer for local peer");
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
        if let Some(nd) = &self.node {
            if nd.notify(j) {
                self.poke(j);
            }
        }
        true
    }

    /// Whether packets wait in the queue toward `dest` (a later one must not pass them).
    #[inline]
    fn queued_for(&self, dest: u32) -> bool {
        // Most of the time nothing waits anywhere: one look at the list of destinations.
        !self.pending_dests.is_empty() && !self.pending[dest as usize].is_empty()
    }

    fn post_packet(&mut self, dest: u32, hdr: Header, payload: Payload, completes: Option<ReqId>) {
        let d = dest as usize;
        if !self.queued_for(dest) && self.try_write(dest, &hdr, payload.bytes()) {
            if let Some(id) = completes {
                self.complete(id);
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
    fn flush_pending(&mut self) -> bool {
        if self.pending_dests.is_empty() {
            return false;
        }
        let mut did = false;
        let dests = std::mem::take(&mut self.pending_dests);
        let mut still = Vec::new();
        for dest in dests {
            while let Some(o) = self.pending[dest as usize].pop_front() {
                if self.try_write(dest, &o.hdr, o.payload.bytes()) {
                    did = true;
                    if let Some(id) = o.completes {
                        self.complete(id);
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

    fn pump_streams(&mut self) -> bool {
        if self.streams.is_empty() {
            return false;
        }
        let mut did = false;
        let largest = self.cfg.shm_chunk_bytes as u64;
        let first = if self.cfg.shm_chunk_fixed {
            largest
        } else {
            FIRST_PIECE.min(largest)
        };
        let mut i = 0;
        while i < self.streams.len() {
            let s = &self.streams[i];
            let (dest, rreq, buf, len, mut off, sreq) =
                (s.dest, s.rreq, s.buf, s.len, s.off, s.sreq);
            let layout = s.layout.clone();
            if self.route(dest) == Route::Tcp {
                let (progressed, done) = self.pump_tcp_stream(i);
                did |= progressed;
                if done {
                    self.streams.swap_remove(i);
                    self.complete(sreq);
                } else {
                    i += 1;
                }
                continue;
            }
            if self.pending[dest as usize].is_empty() {
                while off < len {
                    let n = stream_piece(off, len, first, largest);
                    let mut h = Header::new(Kind::Data);
                    h.rreq = rreq;
                    h.addr = off;
                    h.len = n;
                    let written = match &layout {
                        Some(l) => self.try_push_packed(dest, &h, l, off, n),
                        None => {
                            // SAFETY: [buf+off, buf+off+n) lies within the send buffer,
                            // which stays valid until this send completes after its last
                            // piece.
                            let piece = unsafe {
                                std::slice::from_raw_parts(buf.add(off as usize), n as usize)
                            };
                            self.try_write_piece(dest, &h, piece, len)
                        }
                    };
                    if !written {
                        break;
                    }
                    off += n;
                    did = true;
                }
            }
            if off >= len {
                self.streams.swap_remove(i);
                self.complete(sreq);
            } else {
                self.streams[i].off = off;
                i += 1;
            }
        }
        did
    }

    /// Writes a `Data` piece of a contiguous stream of `len` bytes to `dest`: to a local
    /// peer of a long stream with the stores `OXMPI_SHM_STREAM_STORES` names, else as any
    /// packet. Returns whether there was room.
    fn try_write_piece(&mut self, dest: u32, hdr: &Header, piece: &[u8], len: u64) -> bool {
        use stream_stores::{copy_non_temporal, MIN_STREAM};
        match self.route(dest) {
            Route::Shm(j)
                if len >= MIN_STREAM && self.cfg.shm_stream_stores == Policy::NonTemporal =>
            {
                self.try_push_shm(j, hdr, piece, copy_non_temporal)
            }
            _ => self.try_write(dest, hdr, piece),
        }
    }

    /// Streams pieces of `streams[i]` over TCP straight from the send buffer. Returns
    /// (something was written, the send may complete: every byte is in the kernel).
    fn pump_tcp_stream(&mut self, i: usize) -> (bool, bool) {
        let s = &self.streams[i];
        let (dest, rreq, buf, len, mut off, sreq) = (s.dest, s.rreq, s.buf, s.len, s.off, s.sreq);
        let layout = s.layout.clone();
        let mut piece = std::mem::take(&mut self.streams[i].piece);
        let mut piece_off = self.streams[i].piece_off;
        let Some(t) = self.tcp.as_mut() else {
            self.streams[i].piece = piece;
            return (false, false);
        };
        let chunk = self.cfg.tcp_chunk_bytes as u64;
        let mut did = false;
        if off < len && self.pending[dest as usize].is_empty() {
            while off < len && !t.holds(dest, sreq) {
                let n = chunk.min(len - off);
                let mut h = Header::new(Kind::Data);
                h.rreq = rreq;
                h.addr = off;
                h.len = n;
                let sent = match &layout {
                    Some(l) => {
                        // A non-contiguous piece is packed (once) and handed over as a
                        // copy.
                        if piece_off != off || piece.len() != n as usize {
                            piece.resize(n as usize, 0);
                            // SAFETY: the send buffer holds the layout's elements until
                            // this send completes.
                            unsafe { l.pack_at(off as usize, &mut piece) };
                            piece_off = off;
                        }
                        t.try_send(dest, &h, &piece)
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
            self.streams[i].off = off;
        }
        self.streams[i].piece = piece;
        self.streams[i].piece_off = piece_off;
        (did, off >= len && !t.holds(dest, sreq))
    }

    fn poke(&self, j: usize) {
        if let Some(p) = &self.poker {
            p.poke(j);
        }
    }

    // ----- progress ----------------------------------------------------------------

    /// Polls every transport once, handles what arrived and writes what is queued.
    /// Returns true if anything happened; an error when the job cannot go on (a peer
    /// lost or misbehaving, here or in an earlier send).
    pub fn progress(&mut self) -> Result<bool, DeviceError> {
        let mut did = false;
        while let Some((hdr, data)) = self.selfq.pop_front() {
            self.handle(self.me, hdr, &data);
            did = true;
        }
        let rings = match &self.node {
            Some(node) => self.polls.start_round(node, &self.consumers),
            None => 0,
        };
        if rings > 0 {
            let mut consumers = std::mem::take(&mut self.consumers);
            for k in 0..rings {
                let j = self.polls.ring(k);
                let Some(c) = consumers[j].as_mut() else {
                    continue;
                };
                if !c.has_data() {
                    // Consumed space goes back to the producer once the ring is found
                    // empty: off the path of the packet that was just handled, and always
                    // before this rank waits (nobody would hand it back meanwhile).
                    if c.publish() {
                        self.wake_local(j);
                    }
                    continue;
                }
                self.polls.saw_data(j);
                let from = self.local_world[j];
                while let Some(body) = c.peek() {
                    match Header::decode(body) {
                        Some(hdr) => {
                            let payload = &body[HEADER_BYTES..];
                            self.handle(from, hdr, payload);
                        }
                        None => {
                            self.consumers = consumers;
                            return Err(DeviceError::new(format!(
                                "corrupt packet from rank {from} on shared memory"
                            )));
                        }
                    }
                    if c.pop_and_hand_back() {
                        self.wake_local(j);
                    }
                }
                did = true;
            }
            self.consumers = consumers;
        }
        if let Some(mut t) = self.tcp.take() {
            did |= t.poll(self);
            self.tcp = Some(t);
        }
        did |= self.flush_pending();
        did |= self.pump_streams();
        if let Some(msg) = self.tcp.as_mut().and_then(|t| t.take_failure()) {
            return Err(DeviceError::new(msg));
        }
        Ok(did)
    }

    fn wake_local(&self, j: usize) {
        if let Some(n) = &self.node {
            if n.wake(j) {
                self.poke(j);
            }
        }
    }

    /// Before sleeping: tells consumers of full rings that this rank waits for space.
    /// Returns true if space appeared (do not sleep).
    pub fn announce_blocked_sends(&mut self) -> bool {
        let mut ready = false;
        let dests: Vec<u32> = self
            .pending_dests
            .iter()
            .copied()
            .chain(self.streams.iter().map(|s| s.dest))
            .collect();
        for d in dests {
            match self.route(d) {
                Route::Shm(j) => {
                    if let Some(p) = self.producers[j].as_mut() {
                        ready |= p.announce_waiting();
                    }
                }
                // The connection waits for EPOLLOUT (or for its handshake) in the set the
                // rank sleeps in.
                Route::Tcp => {}
                _ => ready = true,
            }
        }
        ready || !self.selfq.is_empty()
    }

    /// True when no message to itself waits to be handled.
    pub fn selfq_empty(&self) -> bool {
        self.selfq.is_empty()
    }

    /// True when some incoming ring has data (checked just before sleeping).
    pub fn has_incoming(&mut self) -> bool {
        !self.selfq.is_empty() || self.polls.any_incoming(&self.consumers)
    }

    /// Fills `out` with the ring words where the next packet from each local peer will
    /// appear (watched by a rank spinning without the lock) and returns how many; None
    /// when there are more rings than `out` holds.
    pub fn watch_points(&self, out: &mut [Watch]) -> Option<usize> {
        let mut n = 0;
        for c in self.consumers.iter().flatten() {
            *out.get_mut(n)? = c.watch();
            n += 1;
        }
        Some(n)
    }

    /// True when packets or streams are waiting to be written.
    pub fn has_outgoing(&self) -> bool {
        !self.pending_dests.is_empty()
            || !self.streams.is_empty()
            || self.tcp.as_ref().is_some_and(|t| t.has_outgoing())
    }

    // ----- handling arrivals -------------------------------------------------------

    fn handle(&mut self, from: u32, hdr: Header, payload: &[u8]) {
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
                            self.deliver_eager(id, from, &hdr, payload);
                        } else {
                            self.start_pull(id, from, &hdr);
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
            Kind::SyncAck | Kind::Fin => self.complete(hdr.sreq),
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
            Kind::Data => self.receive_piece(hdr.rreq, hdr.addr, payload),
            Kind::CancelReq => {
                let removed = self
                    .matcher
                    .remove_unexpected(hdr.ctx, hdr.src_rank, |u| u.cancellable_by(from, hdr.sreq));
                let mut h = Header::new(Kind::CancelResp);
                h.sreq = hdr.sreq;
                if removed.is_some() {
                    h.flags = FLAG_CANCELLED;
                }
                self.post_packet(from, h, Payload::Empty, None);
            }
            Kind::CancelResp => {
                let Some(r) = self.reqs.get_mut(hdr.sreq) else {
                    return;
                };
                r.cancel_pending = false;
                if hdr.flags & FLAG_CANCELLED != 0 {
                    r.status.cancelled = true;
                    self.complete(hdr.sreq);
                } else if r.complete {
                    // The message matched before the cancel arrived and the send has
                    // already finished; run the completion steps held back meanwhile.
                    self.complete(hdr.sreq);
                }
            }
        }
    }

    /// A posted receive meets an unexpected message.
    fn deliver(&mut self, id: ReqId, u: Unexpected) {
        match u {
            Unexpected::Eager { from, hdr, data } => {
                self.deliver_eager(id, from, &hdr, data.bytes());
                self.payloads.recycle(data);
            }
            Unexpected::Rts { from, hdr } => self.start_pull(id, from, &hdr),
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

    /// Answers a synchronous-mode message (`FLAG_SYNC`) from `from` once it matched.
    fn ack_if_sync(&mut self, from: u32, hdr: &Header) {
        if hdr.flags & FLAG_SYNC != 0 {
            let mut h = Header::new(Kind::SyncAck);
            h.sreq = hdr.sreq;
            self.post_packet(from, h, Payload::Empty, None);
        }
    }

    fn deliver_eager(&mut self, id: ReqId, from: u32, hdr: &Header, data: &[u8]) {
        let Some(r) = self.reqs.get_mut(id) else {
            unreachable!("matched request {id} does not exist")
        };
        let Op::Recv(a, _) = r.op else {
            unreachable!("matched request {id} is not a receive")
        };
        r.status = land_eager(&a, r.layout().map(|l| &**l), hdr, data);
        self.complete(id);
        self.ack_if_sync(from, hdr);
    }

    fn start_pull(&mut self, id: ReqId, from: u32, hdr: &Header) {
        let a = self.recv_args(id);
        let n = self.set_recv_status(id, hdr, a.cap);
        let layout = self.reqs.get(id).and_then(|r| r.layout().cloned());
        let mut pulled = false;
        if n == 0 {
            pulled = true;
        } else if hdr.flags & FLAG_NONCONTIG != 0 {
            // The sender's data is scattered: read it piece by piece when it published
            // its piece list, else it streams packed pieces after Cts.
            if hdr.flags & FLAG_IOVLIST != 0
                && self.cma_ok
                && matches!(self.route(from), Route::Shm(_))
            {
                let pid = self.peers[from as usize].pid;
                match self.pull_listed(pid, hdr, n, a.buf, layout.as_deref()) {
                    Ok(()) => pulled = true,
                    Err(_) => self.cma_ok = false,
                }
            }
        } else if from == self.me {
            // SAFETY: the sender's buffer (our own memory) holds hdr.len >= n bytes and
            // stays valid until we send Fin; the receive buffer holds cap >= n bytes
            // (packed size of the layout's elements, when it has one).
            unsafe {
                match &layout {
                    Some(l) => {
                        l.unpack_at(0, std::slice::from_raw_parts(hdr.addr as *const u8, n));
                    }
                    None => std::ptr::copy(hdr.addr as *const u8, a.buf, n),
                }
            }
            pulled = true;
        } else if self.cma_ok && self.oversubscribed && matches!(self.route(from), Route::Shm(_)) {
            // With a core per rank, the message streams through the ring (the sender
            // copies in while the receiver copies or unpacks out, in parallel, the ring
            // staying in cache): about twice the rate of one process pulling alone with
            // process_vm_readv. Oversubscribed, the single copy wins.
            let pid = self.peers[from as usize].pid;
            let r = match &layout {
                Some(l) if small_pieces(l, n) => self.pull_unpack(pid, hdr.addr as usize, n, l),
                Some(l) => {
                    // SAFETY: the pieces lie inside the receive buffer (n <= its packed
                    // size); the remote range is checked by the kernel.
                    unsafe { cma::read_scatter(pid, hdr.addr as usize, &mut l.pieces(0, n)) }
                        .and_then(|got| {
                            if got == n {
                                Ok(())
                            } else {
                                Err(std::io::Error::other("short cross-memory read"))
                            }
                        })
                }
                // SAFETY: the receive buffer holds n bytes; the remote range is checked
                // by the kernel.
                None => unsafe { cma::read_from(pid, hdr.addr as usize, a.buf, n) },
            };
            match r {
                Ok(()) => pulled = true,
                Err(_) => self.cma_ok = false,
            }
        }
        if pulled {
            let mut h = Header::new(Kind::Fin);
            h.sreq = hdr.sreq;
            self.complete(id);
            self.post_packet(from, h, Payload::Empty, None);
        } else {
            if let Some(Request {
                op: Op::Recv(_, st),
                ..
            }) = self.reqs.get_mut(id)
            {
                *st = RecvState::Streaming {
                    want: n as u64,
                    got: 0,
                };
            }
            let mut h = Header::new(Kind::Cts);
            h.sreq = hdr.sreq;
            h.rreq = id;
            h.len = n as u64;
            self.post_packet(from, h, Payload::Empty, None);
        }
    }

    /// Copies the first `n` bytes of a message whose sender published its piece list
    /// (see [`FLAG_IOVLIST`]) straight from the sender's memory into the receive buffer
    /// (`buf`, or the pieces of `layout`).
    fn pull_listed(
        &mut self,
        pid: i32,
        hdr: &Header,
        n: usize,
        buf: *mut u8,
        layout: Option<&Layout>,
    ) -> std::io::Result<()> {
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
        let mut bounce = std::mem::take(&mut self.span_bounce);
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
        self.span_bounce = bounce;
        result?;
        if off == n {
            Ok(())
        } else {
            Err(bad("short cross-memory read"))
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

    fn receive_piece(&mut self, id: ReqId, off: u64, data: &[u8]) {
        if let Some(l) = self.streaming_layout(id, off, data.len() as u64) {
            // SAFETY: the receive buffer holds the layout's elements and the piece lies
            // inside the packed bytes the request wants (checked above).
            unsafe { l.unpack_at(off as usize, data) };
            self.piece_landed(id, data.len() as u64);
            return;
        }
        let Some(dst) = self.piece_target(id, off, data.len() as u64) else {
            return;
        };
        // SAFETY: piece_target checked that [off, off+len) lies inside the receive buffer.
        unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), dst, data.len()) };
        self.piece_landed(id, data.len() as u64);
    }

    /// The layout of streamed receive `id` when it has one and a piece of `len` bytes
    /// at `off` falls inside what it wants.
    fn streaming_layout(&self, id: ReqId, off: u64, len: u64) -> Option<Arc<Layout>> {
        let Some(
            r @ Request {
                op: Op::Recv(_, RecvState::Streaming { want, .. }),
                ..
            },
        ) = self.reqs.get(id)
        else {
            return None;
        };
        let l = r.layout()?;
        (off.checked_add(len)? <= *want).then(|| l.clone())
    }

    /// Where a piece of `len` bytes at `off` of streamed receive `id` goes; None if the
    /// request is not streaming or the range falls outside what it wants. A receive
    /// with a layout gets its bounce buffer, unpacked when the piece has landed.
    fn piece_target(&mut self, id: ReqId, off: u64, len: u64) -> Option<*mut u8> {
        let r = self.reqs.get_mut(id)?;
        let Op::Recv(a, RecvState::Streaming { want, .. }) = r.op else {
            return None;
        };
        if off.checked_add(len)? > want {
            return None;
        }
        if let Some(x) = r.extra.as_mut().filter(|x| x.layout.is_some()) {
            x.bounce.resize(len as usize, 0);
            return Some(x.bounce.as_mut_ptr());
        }
        // SAFETY: off <= want <= cap, inside the receive buffer.
        Some(unsafe { a.buf.add(off as usize) })
    }

    /// Counts `len` bytes of streamed receive `id` as arrived; completes it when all did.
    fn piece_landed(&mut self, id: ReqId, len: u64) {
        let Some(Request {
            op: Op::Recv(_, RecvState::Streaming { want, got }),
            ..
        }) = self.reqs.get_mut(id)
        else {
            return;
        };
        *got += len;
        if *got >= *want {
            self.complete(id);
        }
    }
}

impl tcp::Sink for Device {
    fn packet(&mut self, from: u32, hdr: Header, payload: &[u8]) {
        self.handle(from, hdr, payload);
    }

    fn data_target(&mut self, _from: u32, hdr: &Header) -> Option<*mut u8> {
        self.piece_target(hdr.rreq, hdr.addr, hdr.len)
    }

    fn data_landed(&mut self, _from: u32, hdr: &Header) {
        if let Some(x) = self.reqs.get(hdr.rreq).and_then(|r| r.extra()) {
            if let Some(l) = &x.layout {
                let n = (hdr.len as usize).min(x.bounce.len());
                // SAFETY: the receive buffer holds the layout's elements; data_target
                // checked that the piece lies inside the packed bytes wanted.
                unsafe { l.unpack_at(hdr.addr as usize, &x.bounce[..n]) };
            }
        }
        self.piece_landed(hdr.rreq, hdr.len);
    }
}

/// Copies `n` bytes; payloads of 4 or 8 bytes (one `int` or `double`, the common tiny
/// message) without a call into `memcpy`.
///
/// # Safety
/// As for [`std::ptr::copy_nonoverlapping`].
#[inline(always)]
pub(super) unsafe fn copy_small(src: *const u8, dst: *mut u8, n: usize) {
    // SAFETY: forwarded caller contract (both ranges hold n bytes and do not overlap).
    unsafe {
        match n {
            8 => dst
                .cast::<u64>()
                .write_unaligned(src.cast::<u64>().read_unaligned()),
            4 => dst
                .cast::<u32>()
                .write_unaligned(src.cast::<u32>().read_unaligned()),
            _ => std::ptr::copy_nonoverlapping(src, dst, n),
        }
    }
}

/// Whether the pieces behind the first `n` stream bytes of `l` average under
/// [`MIN_VECTORED_PIECE`] bytes (judged from the first 64 KiB).
fn small_pieces(l: &Layout, n: usize) -> bool {
    let probe = n.min(64 * 1024);
    let count = l.pieces(0, probe).count().max(1);
    ((probe / count) as u64) < MIN_VECTORED_PIECE
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::tcp::{parse_card, Listener, TcpSettings};
    use std::time::Duration;

    fn config() -> DeviceConfig {
        DeviceConfig {
            shm_eager_limit: 16 * 1024,
            tcp_eager_limit: 64 * 1024,
            shm_cma: false,
            shm_chunk_bytes: 64 * 1024,
            shm_chunk_fixed: false,
            shm_stream_stores: Policy::Cached,
            tcp_chunk_bytes: 256 * 1024,
        }
    }

    #[test]
    fn a_lost_peer_comes_out_of_progress_as_an_error() {
        let me = Peer {
            route: Route::SelfLoop,
            pid: std::process::id() as i32,
        };
        let other = Peer {
            route: Route::Tcp,
            pid: 0,
        };
        let mut dev = Device::new(0, vec![me, other], config(), None, vec![0], false);
        let l = Listener::open(Some("127.0.0.1"), None).unwrap();
        let (addr, _) = parse_card(&l.card()).unwrap();
        let settings = TcpSettings {
            connect_timeout: Duration::from_secs(10),
            debug: false,
        };
        // Rank 1 published no TCP address: sending to it cannot work.
        let net = TcpNet::new(
            0,
            2,
            b"k".to_vec(),
            l,
            vec![Some(addr), None],
            None,
            settings,
        );
        dev.attach_tcp(net.unwrap());
        let data = [1u8; 8];
        let a = SendArgs {
            dest: 1,
            ctx: 0,
            src_rank: 0,
            tag: 0,
            buf: data.as_ptr(),
            len: data.len(),
            mode: SendMode::Standard,
        };
        let id = dev.isend(a);
        let e = dev.progress().expect_err("the send cannot leave");
        assert_eq!(
            e.to_string(),
            "rank 1 cannot be reached: its business card has no TCP address"
        );
        assert!(!dev.request(id).is_some_and(|r| r.is_complete()));
    }

    /// The pieces of a whole stream, in order.
    fn pieces(len: u64, first: u64, largest: u64) -> Vec<u64> {
        let mut out = Vec::new();
        let mut off = 0;
        while off < len {
            let n = stream_piece(off, len, first, largest);
            assert!(n > 0);
            out.push(n);
            off += n;
        }
        out
    }

    #[test]
    fn stream_pieces_grow_from_the_first_to_the_largest() {
        const K: u64 = 1024;
        assert_eq!(
            pieces(1024 * K, 32 * K, 256 * K),
            [32 * K, 32 * K, 64 * K, 128 * K, 256 * K, 256 * K, 256 * K]
        );
        assert_eq!(pieces(4096 * K, 32 * K, 256 * K).len(), 19);
        // At most a quarter of the message, at least the first piece.
        assert_eq!(
            pieces(256 * K, 32 * K, 256 * K),
            [32 * K, 32 * K, 64 * K, 64 * K, 64 * K]
        );
        assert_eq!(pieces(64 * K, 32 * K, 256 * K), [32 * K, 32 * K]);
        // The last piece is what is left.
        assert_eq!(
            pieces(100 * K, 32 * K, 256 * K),
            [32 * K, 32 * K, 32 * K, 4 * K]
        );
        assert_eq!(pieces(10 * K, 32 * K, 256 * K), [10 * K]);
        // A fixed piece size (first == largest); the largest is a hard cap.
        assert_eq!(pieces(70 * K, 16 * K, 16 * K).len(), 5);
        assert_eq!(pieces(64 * K, 32 * K, 16 * K), [16 * K; 4]);
    }
}
