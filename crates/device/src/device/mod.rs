//! The device (MPICH's "abstract device interface"): requests, the matching engine,
//! the eager / rendezvous / synchronous / cancel protocols, and the progress engine
//! that drives the transports.
//!
//! The device speaks in world ranks, context ids, tags and contiguous byte ranges. It
//! knows nothing of communicators, datatypes or collectives. It is built in two layers:
//! - [`protocol`]: every protocol decision and its state (requests, matching, stored
//!   payloads, queued packets, streams, cancel), a state machine that does no I/O;
//! - this module's [`Device`] and [`wire`]: the driver, which feeds the protocol what
//!   arrives on the transports (self queue, shared-memory rings, TCP) and carries out
//!   what it asks through [`protocol::Io`] (ring and socket writes, `process_vm_readv`).
//!
//! Protocol choice:
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
pub(crate) mod protocol;
pub mod request;
#[cfg(test)]
mod sim;
mod stats;
mod stored;
pub mod stream_stores;
mod wire;

pub use direct::Direct;

use crate::transport::bell::Poker;
use crate::transport::impi::{self, ImpiNet};
use crate::transport::ring::Watch;
use crate::transport::shm::ShmNode;
use crate::transport::tcp::{self, TcpNet};
use crate::transport::Route;
use bsend::BsendPool;
use matching::Spec;
use packet::{Header, HEADER_BYTES};
use protocol::{eager_header, Protocol, NO_REQUEST};
pub use protocol::{MsgId, TooManyMessages, MAX_MESSAGES};
use request::Op;
pub use request::{
    BufRef, Direction, Finish, InvalidRequest, Layout, Outcome, Persistent, RecvArgs, ReqId,
    Request, RequestTable, SendArgs, SendMode, Status, DONE_SEND,
};
use std::sync::Arc;
use stream_stores::Policy;
use wire::{Link, Wire};

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

/// The point-to-point engine of one process: the protocol state machine driven over
/// this process's transports.
pub struct Device {
    proto: Protocol,
    wire: Wire,
    /// Ranks of this job: peers of other jobs take the slots after them.
    world: u32,
    /// The attached buffered-send buffer.
    pub bsend: BsendPool,
}

// SAFETY: raw pointers inside requests/outgoing packets refer to user buffers whose
// validity the MPI rules guarantee until completion; the device is only ever used
// under the runtime's lock.
unsafe impl Send for Device {}

/// Splits the device into its protocol and the [`protocol::Io`] over its transports
/// (disjoint fields, so both can be borrowed at once).
macro_rules! split {
    ($d:expr) => {
        (
            &mut $d.proto,
            &mut Link {
                wire: &mut $d.wire,
                bsend: &mut $d.bsend,
            },
        )
    };
}

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
        Device {
            world: peers.len() as u32,
            proto: Protocol::new(me, peers.clone(), cfg, oversubscribed),
            wire: Wire::new(me, peers, cfg, node, local_world),
            bsend: BsendPool::default(),
        }
    }

    /// Adds the TCP transport (for peers whose route is [`Route::Tcp`]).
    pub fn attach_tcp(&mut self, net: TcpNet) {
        self.wire.tcp = Some(Box::new(net));
    }

    /// Adds the IMPI host channels (for peers whose route is [`Route::Impi`]); messages
    /// of at most its maximum data length go to them in one packet.
    pub fn attach_impi(&mut self, mut net: ImpiNet) -> Result<(), DeviceError> {
        // A blocked rank sleeps in the IMPI set, with the TCP set nested in it.
        if let Some(s) = self.wire.tcp.as_ref().map(|t| t.sleeper()) {
            net.nest(s.fd())
                .map_err(|e| DeviceError::new(format!("IMPI: cannot watch the TCP set: {e}")))?;
        }
        self.proto.impi_eager_limit = net.maxdatalen();
        self.wire.impi = Some(Box::new(net));
        Ok(())
    }

    /// Whether this rank has IMPI host channels (their sockets are polled, never
    /// slept on).
    pub fn has_impi(&self) -> bool {
        self.wire.impi.is_some()
    }

    /// `MPI_Finalize` of an IMPI job: finalizes every host channel (IMPI 3.8).
    pub fn finalize_impi(&mut self) -> Result<(), DeviceError> {
        match self.wire.impi.as_mut() {
            Some(t) => t.finalize().map_err(DeviceError::new),
            None => Ok(()),
        }
    }

    /// Adds the means to wake local ranks that sleep in their TCP epoll set.
    pub fn attach_poker(&mut self, poker: Poker) {
        self.wire.poker = Some(poker);
    }

    /// Where to sleep when this rank has TCP connections.
    pub fn tcp_sleeper(&self) -> Option<tcp::Sleeper> {
        if let Some(i) = &self.wire.impi {
            return Some(i.sleeper());
        }
        self.wire.tcp.as_ref().map(|t| t.sleeper())
    }

    pub fn world_rank(&self) -> u32 {
        self.wire.me
    }

    /// Ranks of this job (peers of other jobs not counted).
    pub fn world_size(&self) -> u32 {
        self.world
    }

    /// True when the TCP transport is attached.
    pub fn has_tcp(&self) -> bool {
        self.wire.tcp.is_some()
    }

    /// Where this process listens for TCP connections (its identity toward processes of
    /// other jobs); None without the TCP transport.
    pub fn tcp_addr(&self) -> Option<std::net::SocketAddrV4> {
        self.wire.tcp.as_ref().map(|t| t.card_addr())
    }

    /// True when processes on this node may reach this one at 127.0.0.1.
    pub fn tcp_loopback_ok(&self) -> bool {
        self.wire.tcp.as_ref().is_some_and(|t| t.loopback_ok())
    }

    /// Adds a process of another job, which publishes the listening address `addr` as
    /// incarnation `inc` and is dialed at `dial`, as a peer reached over TCP and
    /// authenticated with `key`, and returns its slot: the number that names it in sends,
    /// receives and groups, after this job's ranks. A peer already added (and neither
    /// lost nor retired since) keeps its slot, under the new key. None without the TCP
    /// transport ([`Device::attach_tcp`]).
    pub fn add_peer(
        &mut self,
        addr: std::net::SocketAddrV4,
        inc: u32,
        dial: std::net::SocketAddrV4,
        key: Vec<u8>,
    ) -> Option<u32> {
        let tcp = self.wire.tcp.as_mut()?;
        if let Some(slot) = tcp.dyn_slot(addr, inc) {
            tcp.rekey_peer(slot, key);
            return Some(slot);
        }
        let slot = self.wire.peers.len() as u32;
        let peer = Peer {
            route: Route::Tcp,
            pid: 0,
        };
        self.wire.peers.push(peer);
        self.proto.add_peer(peer);
        tcp.add_peer(slot, addr, inc, dial, key);
        Some(slot)
    }

    /// This process's TCP incarnation (see `TcpNet::incarnation`); None without TCP.
    pub fn tcp_incarnation(&self) -> Option<u32> {
        self.wire.tcp.as_ref().map(|t| t.incarnation())
    }

    /// No communicator refers to peer `slot` of another job any more: its address no
    /// longer names it (see `TcpNet::retire_peer`).
    pub fn retire_peer(&mut self, slot: u32) {
        if let Some(t) = self.wire.tcp.as_mut() {
            t.retire_peer(slot);
        }
    }

    /// Wakes this rank's own threads that sleep on its doorbell or in its epoll set:
    /// another thread of the rank changed what they may be waiting for (with several
    /// threads in MPI at once; single-threaded waits never need it).
    pub fn wake_own_threads(&self) {
        if let Some(n) = &self.wire.node {
            if n.wake_own() {
                self.wire.poke(n.local_rank());
            }
        } else if let (Some(t), None) = (&self.wire.tcp, &self.wire.impi) {
            // Without a node segment the thread asleep sleeps in the TCP epoll set.
            t.wake_sleeper();
        }
    }

    /// The shared segment, for sleeping on the doorbell outside the runtime lock.
    pub fn node(&self) -> Option<&Arc<ShmNode>> {
        self.wire.node.as_ref()
    }

    #[inline]
    pub fn route(&self, world: u32) -> Route {
        self.wire.route(world)
    }

    // ----- requests -------------------------------------------------------------

    #[inline]
    pub fn request(&self, id: ReqId) -> Option<&Request> {
        self.proto.reqs.get(id)
    }

    #[inline]
    pub fn request_mut(&mut self, id: ReqId) -> Option<&mut Request> {
        self.proto.reqs.get_mut(id)
    }

    /// A request that is already complete with `status` (e.g. `MPI_PROC_NULL`).
    pub fn complete_request(&mut self, status: Status, direction: Direction) -> ReqId {
        self.proto.reqs.insert_complete(status, direction)
    }

    /// A persistent request, inactive until started.
    pub fn persistent_request(&mut self, p: Persistent, direction: Direction) -> ReqId {
        let (id, r) = self.proto.reqs.insert_slot(Op::Inactive, direction);
        r.persistent = Some(p);
        id
    }

    /// True when no request exists any more (used at finalize).
    pub fn live_requests(&self) -> usize {
        self.proto.reqs.live()
    }

    /// Takes the final status of a complete request: a non-persistent request is
    /// released, a persistent one becomes inactive (the empty status when there is
    /// nothing to finish).
    #[inline]
    pub fn finish(&mut self, id: ReqId) -> Status {
        match self.proto.finish_if_complete(id) {
            Finish::Done { status, .. } => status,
            Finish::NotComplete | Finish::Inactive => Status::EMPTY,
        }
    }

    /// Finishes request `id` if it is complete, as [`Device::finish`] does, and says
    /// what it found.
    #[inline]
    pub fn finish_if_complete(&mut self, id: ReqId) -> Finish {
        self.proto.finish_if_complete(id)
    }

    /// [`Device::finish_if_complete`], also giving the owner of a receive it finished
    /// (not a generalized request), found in the same lookup.
    #[inline]
    pub fn finish_noting_receive(&mut self, id: ReqId) -> (Finish, Option<u32>) {
        self.proto.reqs.finish_noting_receive(id)
    }

    /// The owner of request `id` just finished with `status` (see
    /// [`RequestTable::finished_owner`]).
    pub fn finished_owner(&self, id: ReqId, status: &Status) -> Option<u32> {
        self.proto.reqs.finished_owner(id, status)
    }

    /// `MPI_Request_free`: release now if complete or inactive, else when it completes.
    pub fn free_request(&mut self, id: ReqId) {
        let (p, io) = split!(self);
        p.free_request(id, io);
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
        let (p, io) = split!(self);
        p.isend_request(a, io)
    }

    /// Sends a small contiguous message at once, without a request, when it can leave
    /// now: eager size, not synchronous, nothing queued before it for that destination
    /// and room in the transport. Returns false (nothing sent) otherwise; the caller
    /// then starts an ordinary send. Such a message has no sender request to name, so
    /// it cannot be cancelled (a blocking send never can be).
    pub fn send_now(&mut self, a: &SendArgs) -> bool {
        let route = self.route(a.dest);
        let eager_limit = match route {
            Route::Shm(_) => self.wire.cfg.shm_eager_limit,
            Route::Tcp => self.wire.cfg.tcp_eager_limit,
            Route::Impi => self.proto.impi_eager_limit,
            _ => return false,
        };
        if a.len > eager_limit || a.mode == SendMode::Synchronous || self.proto.queued_for(a.dest) {
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
            Route::Shm(j) => self.wire.try_push_shm(j, &h, payload, copy_small),
            _ => self.wire.try_write(a.dest, &h, payload),
        }
    }

    /// Starts a send of bytes packed into `scratch` (a non-contiguous user buffer).
    pub fn isend_staged(&mut self, a: SendArgs, scratch: Vec<u8>) -> ReqId {
        let (p, io) = split!(self);
        p.isend_staged(a, scratch, io)
    }

    /// Starts a send of the packed stream of a non-contiguous buffer (`a.buf` is its base
    /// and `a.len` the packed bytes). Messages sent eagerly or toward IMPI peers are
    /// packed into a scratch buffer first; larger ones are announced with a
    /// non-contiguous rendezvous and streamed in pieces packed straight into the ring
    /// (shared memory) or into one chunk at a time (TCP).
    pub fn isend_layout(&mut self, a: SendArgs, l: Layout) -> ReqId {
        let (p, io) = split!(self);
        p.isend_layout(a, l, io)
    }

    /// Restarts an inactive persistent send with the bytes of `scratch` (the message
    /// in external32 toward a rank of another IMPI client) instead of its buffer.
    pub fn start_staged(&mut self, id: ReqId, scratch: Vec<u8>) -> Result<(), InvalidRequest> {
        let (p, io) = split!(self);
        p.restart_staged(id, scratch, io)
    }

    /// Restarts an inactive persistent send or receive whose buffer is not contiguous,
    /// like [`Device::start`] with the buffer described by `l`.
    pub fn start_layout(&mut self, id: ReqId, l: Layout) -> Result<(), InvalidRequest> {
        let (p, io) = split!(self);
        p.restart(id, Some(l), io)
    }

    /// Starts a receive into a non-contiguous buffer (`a.buf` is its base, `a.cap` the
    /// packed capacity): each arriving piece is unpacked straight into it.
    pub fn irecv_layout(&mut self, a: RecvArgs, l: Layout) -> ReqId {
        let (p, io) = split!(self);
        p.irecv_layout(a, l, io)
    }

    /// Starts a receive. The buffer must stay valid until the request completes.
    #[inline]
    pub fn irecv(&mut self, a: RecvArgs) -> ReqId {
        let (p, io) = split!(self);
        p.irecv(a, io)
    }

    /// `MPI_Start` for a persistent send or receive (buffered sends are started by the
    /// caller, which packs into the pool and calls [`Device::start_bsend_copy`]).
    #[inline]
    pub fn start(&mut self, id: ReqId) -> Result<(), InvalidRequest> {
        let (p, io) = split!(self);
        p.restart(id, None, io)
    }

    /// Sends the pool copy of a buffered message: an internal request that frees its
    /// pool region when the message has left.
    pub fn start_bsend_copy(&mut self, a: SendArgs, slot: usize) {
        let (p, io) = split!(self);
        p.start_bsend_copy(a, slot, io)
    }

    /// Marks a started persistent request as done with `status` (used for buffered
    /// persistent sends, which complete once copied).
    pub fn mark_done(&mut self, id: ReqId, status: Status) {
        if let Some(r) = self.proto.reqs.get_mut(id) {
            r.status = status;
            r.complete = true;
            r.op = Op::Done;
        }
    }

    /// Starts inactive persistent request `id` as a pending operation that its owner
    /// carries out and ends with [`Device::mark_done`] (persistent collectives, which
    /// the MPI layer runs). `Err` when `id` is not an inactive persistent request.
    pub fn start_pending(&mut self, id: ReqId) -> Result<(), InvalidRequest> {
        let Some(r) = self.proto.reqs.get_mut(id) else {
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
        let (id, r) = self.proto.reqs.insert_slot(Op::Done, Direction::Recv);
        r.generalized = true;
        id
    }

    /// `MPI_Grequest_complete`. Returns whether the request was released here (it had
    /// been freed with `MPI_Request_free` before); `Err` when `id` is not a pending
    /// generalized request.
    pub fn grequest_complete(&mut self, id: ReqId) -> Result<bool, InvalidRequest> {
        let Some(r) = self.proto.reqs.get_mut(id) else {
            return Err(InvalidRequest);
        };
        if !r.generalized || r.complete {
            return Err(InvalidRequest);
        }
        r.complete = true;
        let released = r.detached;
        if released {
            self.proto.reqs.remove(id);
        }
        // A waiter may sleep on this rank's doorbell (when another thread completes).
        let me = self.wire.me;
        if let Some(j) = self.wire.local_world.iter().position(|&w| w == me) {
            self.wire.wake_local(j);
        }
        Ok(released)
    }

    // ----- probing and cancelling --------------------------------------------------

    /// `MPI_Iprobe` on the unexpected queue (call [`Device::progress`] first).
    pub fn probe(&self, spec: Spec) -> Option<Status> {
        self.proto.probe(spec)
    }

    /// `MPI_Iprobe` by the application: like [`Device::probe`], and the message found
    /// can no longer be cancelled by its sender (the receive that follows must get it).
    pub fn probe_seen(&mut self, spec: Spec) -> Option<Status> {
        self.proto.probe_seen(spec)
    }

    /// `MPI_Improbe`: takes the earliest unexpected message `spec` accepts out of the
    /// queue (call [`Device::progress`] first) and keeps it under a message id for
    /// [`Device::mrecv`]; no other receive or probe can match it. `owner` is the
    /// caller's tag (its communicator), read back by [`Device::message_owner`].
    pub fn mprobe(
        &mut self,
        spec: Spec,
        owner: u32,
    ) -> Result<Option<(MsgId, Status)>, TooManyMessages> {
        self.proto.mprobe(spec, owner)
    }

    /// The owner tag of matched message `id`; None when it names no message waiting
    /// for its receive.
    pub fn message_owner(&self, id: MsgId) -> Option<u32> {
        self.proto.message_owner(id)
    }

    /// Matched messages waiting for their receive.
    pub fn matched_len(&self) -> usize {
        self.proto.matched_len()
    }

    /// `MPI_Imrecv`: starts the receive of matched message `msg` into `a`'s buffer
    /// (`a.spec` is ignored; the buffer described by `layout` when it is not
    /// contiguous). `Err` when `msg` names no matched message.
    pub fn mrecv(
        &mut self,
        msg: MsgId,
        a: RecvArgs,
        layout: Option<Layout>,
    ) -> Result<ReqId, InvalidRequest> {
        let (p, io) = split!(self);
        p.mrecv(msg, a, layout, io)
    }

    /// `MPI_Cancel`. Receives still posted are cancelled at once; sends not yet matched
    /// are cancelled by asking the receiver (the answer arrives through progress).
    pub fn cancel(&mut self, id: ReqId) {
        let (p, io) = split!(self);
        p.cancel(id, io);
    }

    // ----- progress ----------------------------------------------------------------

    /// Polls every transport once, hands what arrived to the protocol and writes what
    /// it has queued. Returns true if anything happened; an error when the job cannot
    /// go on (a peer lost or misbehaving, here or in an earlier send).
    pub fn progress(&mut self) -> Result<bool, DeviceError> {
        let mut did = false;
        let me = self.wire.me;
        while let Some((hdr, data)) = self.wire.selfq.pop_front() {
            let (p, io) = split!(self);
            p.packet(me, hdr, &data, io);
            did = true;
        }
        let rings = match &self.wire.node {
            Some(node) => self.wire.polls.start_round(node, &self.wire.consumers),
            None => 0,
        };
        if rings > 0 {
            let mut consumers = std::mem::take(&mut self.wire.consumers);
            for k in 0..rings {
                let j = self.wire.polls.ring(k);
                let Some(c) = consumers[j].as_mut() else {
                    continue;
                };
                if !c.has_data() {
                    // Consumed space goes back to the producer once the ring is found
                    // empty: off the path of the packet that was just handled, and always
                    // before this rank waits (nobody would hand it back meanwhile).
                    if c.publish() {
                        self.wire.wake_local(j);
                    }
                    continue;
                }
                self.wire.polls.saw_data(j);
                let from = self.wire.local_world[j];
                while let Some(body) = c.peek() {
                    match Header::decode(body) {
                        Some(hdr) => {
                            let payload = &body[HEADER_BYTES..];
                            let (p, io) = split!(self);
                            p.packet(from, hdr, payload, io);
                        }
                        None => {
                            self.wire.consumers = consumers;
                            let (p, io) = split!(self);
                            p.peer_lost(from, io);
                            return Err(DeviceError::new(format!(
                                "corrupt packet from rank {from} on shared memory"
                            )));
                        }
                    }
                    if c.pop_and_hand_back() {
                        self.wire.wake_local(j);
                    }
                }
                did = true;
            }
            self.wire.consumers = consumers;
        }
        if let Some(mut t) = self.wire.tcp.take() {
            let (proto, io) = split!(self);
            did |= t.poll(&mut TcpSink { proto, io });
            let gone = t.take_departed();
            self.wire.tcp = Some(t);
            for peer in gone {
                let (p, io) = split!(self);
                p.peer_lost(peer, io);
                did = true;
            }
        }
        if let Some(mut t) = self.wire.impi.take() {
            let (proto, io) = split!(self);
            did |= t.poll(&mut ImpiSink { proto, io });
            self.wire.impi = Some(t);
        }
        let (p, io) = split!(self);
        did |= p.flush_pending(io);
        did |= p.pump_streams(io);
        if let Some(msg) = self.wire.tcp.as_mut().and_then(|t| t.take_failure()) {
            return Err(DeviceError::new(msg));
        }
        if let Some(msg) = self.wire.impi.as_mut().and_then(|t| t.take_failure()) {
            return Err(DeviceError::new(msg));
        }
        Ok(did)
    }

    /// Before sleeping: tells consumers of full rings that this rank waits for space.
    /// Returns true if space appeared (do not sleep).
    pub fn announce_blocked_sends(&mut self) -> bool {
        let mut ready = false;
        for d in self.proto.blocked_dests() {
            match self.wire.route(d) {
                Route::Shm(j) => {
                    if let Some(p) = self.wire.producers[j].as_mut() {
                        ready |= p.announce_waiting();
                    }
                }
                // The connection waits for EPOLLOUT (or for its handshake) in the set the
                // rank sleeps in; an IMPI channel for EPOLLOUT or for the PROTOACK that
                // opens its window (EPOLLIN), in the same set.
                Route::Tcp | Route::Impi => {}
                _ => ready = true,
            }
        }
        ready || !self.wire.selfq.is_empty()
    }

    /// True when no message to itself waits to be handled.
    pub fn selfq_empty(&self) -> bool {
        self.wire.selfq.is_empty()
    }

    /// True when some incoming ring has data (checked just before sleeping).
    pub fn has_incoming(&mut self) -> bool {
        !self.wire.selfq.is_empty() || self.wire.polls.any_incoming(&self.wire.consumers)
    }

    /// Fills `out` with the ring words where the next packet from each local peer will
    /// appear (watched by a rank spinning without the lock) and returns how many; None
    /// when there are more rings than `out` holds.
    pub fn watch_points(&self, out: &mut [Watch]) -> Option<usize> {
        let mut n = 0;
        for c in self.wire.consumers.iter().flatten() {
            *out.get_mut(n)? = c.watch();
            n += 1;
        }
        Some(n)
    }

    /// True when packets or streams are waiting to be written.
    pub fn has_outgoing(&self) -> bool {
        self.proto.has_outgoing()
            || self.wire.tcp.as_ref().is_some_and(|t| t.has_outgoing())
            || self.wire.impi.as_ref().is_some_and(|t| t.has_outgoing())
    }
}

/// What the TCP transport delivers to while it polls: the protocol, with the rest of
/// the transports to answer through (TCP itself is taken out meanwhile, so what the
/// protocol writes to a TCP peer then waits in its queue for a moment).
struct TcpSink<'a, 'b> {
    proto: &'a mut Protocol,
    io: &'a mut Link<'b>,
}

impl tcp::Sink for TcpSink<'_, '_> {
    fn packet(&mut self, from: u32, hdr: Header, payload: &[u8]) {
        self.proto.packet(from, hdr, payload, self.io);
    }

    fn data_target(&mut self, _from: u32, hdr: &Header) -> Option<*mut u8> {
        self.proto.piece_target(hdr.rreq, hdr.addr, hdr.len)
    }

    fn data_landed(&mut self, _from: u32, hdr: &Header) {
        self.proto.data_landed(hdr, self.io);
    }
}

struct ImpiSink<'a, 'b> {
    proto: &'a mut Protocol,
    io: &'a mut Link<'b>,
}

impl impi::Sink for ImpiSink<'_, '_> {
    fn packet(&mut self, from: u32, hdr: Header, payload: &[u8]) {
        self.proto.packet(from, hdr, payload, self.io);
    }

    fn data_target(&mut self, _from: u32, hdr: &Header) -> Option<*mut u8> {
        self.proto.piece_target(hdr.rreq, hdr.addr, hdr.len)
    }

    fn data_span(&mut self, _from: u32, hdr: &Header) -> Option<*mut u8> {
        self.proto.piece_span(hdr.rreq, hdr.addr, hdr.len)
    }

    fn data_landed(&mut self, _from: u32, hdr: &Header) {
        self.proto.data_landed(hdr, self.io);
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

#[cfg(test)]
mod tests {
    use super::protocol::stream_piece;
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

    /// A job of one process with the TCP transport (and `key` as its job secret).
    fn lone(key: &[u8]) -> Device {
        let me = Peer {
            route: Route::SelfLoop,
            pid: std::process::id() as i32,
        };
        let mut dev = Device::new(0, vec![me], config(), None, vec![0], false);
        let l = Listener::open(Some("127.0.0.1"), None).unwrap();
        let settings = TcpSettings {
            connect_timeout: Duration::from_secs(10),
            debug: false,
        };
        let net = TcpNet::new(0, 1, key.to_vec(), l, vec![None], None, settings).unwrap();
        dev.attach_tcp(net);
        dev
    }

    fn send_to(dev: &mut Device, dest: u32, data: &[u8]) -> ReqId {
        dev.isend_request(SendArgs {
            dest,
            ctx: 4,
            src_rank: 0,
            tag: 7,
            buf: data.as_ptr(),
            len: data.len(),
            mode: SendMode::Standard,
        })
    }

    fn run_until(devs: &mut [&mut Device], mut done: impl FnMut(&mut [&mut Device]) -> bool) {
        let end = std::time::Instant::now() + Duration::from_secs(20);
        while !done(devs) {
            for d in devs.iter_mut() {
                d.progress().expect("no failure");
            }
            assert!(std::time::Instant::now() < end, "timed out");
        }
    }

    #[test]
    fn processes_of_two_jobs_talk_once_added_as_peers() {
        // Two jobs of one rank each, with different job secrets: the peers authenticate
        // with the key they were added with.
        let mut a = lone(b"job a");
        let mut b = lone(b"job b");
        let (aa, ba) = (a.tcp_addr().unwrap(), b.tcp_addr().unwrap());
        let (ai, bi) = (a.tcp_incarnation().unwrap(), b.tcp_incarnation().unwrap());
        let sb = a.add_peer(ba, bi, ba, b"port key".to_vec()).unwrap();
        assert_eq!(sb, 1);
        assert_eq!(a.add_peer(ba, bi, ba, b"port key".to_vec()), Some(1));
        assert_eq!(a.world_size(), 1);
        // `a` dials before `b` knows it: the HELLO waits for b's add_peer.
        let big: Vec<u8> = (0..300_000u32).map(|i| i as u8).collect();
        let s1 = send_to(&mut a, sb, b"hello");
        let s2 = send_to(&mut a, sb, &big);
        for _ in 0..200 {
            a.progress().unwrap();
            b.progress().unwrap();
        }
        let sa = b.add_peer(aa, ai, aa, b"port key".to_vec()).unwrap();
        assert_eq!(sa, 1);
        let mut small = [0u8; 5];
        let mut large = vec![0u8; big.len()];
        let spec = Spec {
            ctx: 4,
            src: 0,
            tag: 7,
        };
        let r1 = b.irecv(RecvArgs {
            spec,
            buf: small.as_mut_ptr(),
            cap: 5,
        });
        let r2 = b.irecv(RecvArgs {
            spec,
            buf: large.as_mut_ptr(),
            cap: large.len(),
        });
        run_until(&mut [&mut a, &mut b], |d| {
            [(0, s1), (0, s2), (1, r1), (1, r2)]
                .iter()
                .all(|&(k, id)| d[k].request(id).is_some_and(|r| r.is_complete()))
        });
        assert_eq!(&small, b"hello");
        assert!(large == big);
        assert_eq!(b.finish(r2).bytes, big.len() as u64);
        // An answer the other way, on the connection b accepted.
        let s3 = send_to(&mut b, sa, b"back!");
        let r3 = a.irecv(RecvArgs {
            spec,
            buf: small.as_mut_ptr(),
            cap: 5,
        });
        run_until(&mut [&mut a, &mut b], |d| {
            d[0].request(r3).is_some_and(|r| r.is_complete())
                && d[1].request(s3).is_some_and(|r| r.is_complete())
        });
        assert_eq!(&small, b"back!");
        // b goes away: not a failure of a's job, but a receive that waits on b fails
        // only if b was streaming to it; a later send to b fails as lost.
        drop(b);
        let end = std::time::Instant::now() + Duration::from_secs(20);
        let s4 = loop {
            a.progress().expect("a departed peer is not a failure");
            if a.proto.is_lost(sb) {
                break send_to(&mut a, sb, b"late");
            }
            assert!(std::time::Instant::now() < end, "the loss was not noticed");
        };
        a.progress().unwrap();
        let r = a.request(s4).expect("request exists");
        assert!(r.is_complete());
        assert_eq!(a.finish(s4).error, Outcome::PeerLost);
        // A new peer at the same address would get a new slot.
        assert_eq!(a.add_peer(ba, bi, ba, b"k".to_vec()), Some(2));
    }

    #[test]
    fn a_new_incarnation_at_a_peers_address_replaces_it() {
        // `b` stays live, but `a` is told of another process at b's address (as after
        // b exited and a later process got its port): the old record is lost at once,
        // and the new one gets a slot of its own.
        let mut a = lone(b"job a");
        let b = lone(b"job b");
        let (ba, bi) = (b.tcp_addr().unwrap(), b.tcp_incarnation().unwrap());
        let old = a.add_peer(ba, bi, ba, b"k1".to_vec()).unwrap();
        let new = a
            .add_peer(ba, bi.wrapping_add(1), ba, b"k2".to_vec())
            .unwrap();
        assert_ne!(old, new);
        a.progress().expect("a replaced peer is not a failure");
        assert!(a.proto.is_lost(old));
        assert!(!a.proto.is_lost(new));
        // The old incarnation is not found again.
        assert_eq!(a.add_peer(ba, bi, ba, b"k1".to_vec()), Some(new + 1));
    }

    #[test]
    fn a_peer_of_another_job_with_the_wrong_key_is_refused() {
        let mut a = lone(b"s");
        let mut b = lone(b"s");
        let (aa, ba) = (a.tcp_addr().unwrap(), b.tcp_addr().unwrap());
        let (ai, bi) = (a.tcp_incarnation().unwrap(), b.tcp_incarnation().unwrap());
        let sb = a.add_peer(ba, bi, ba, b"key one".to_vec()).unwrap();
        b.add_peer(aa, ai, aa, b"key two".to_vec()).unwrap();
        let s = send_to(&mut a, sb, b"x");
        run_until(&mut [&mut a, &mut b], |d| {
            d[0].request(s).is_some_and(|r| r.is_complete())
        });
        assert_eq!(a.finish(s).error, Outcome::PeerLost);
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
