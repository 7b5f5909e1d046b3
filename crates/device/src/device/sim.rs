//! Unit tests of the protocols: two or three simulated ranks in one process, each a
//! [`Protocol`] with an in-memory [`Io`]. What a rank writes goes into a FIFO channel
//! per (sender, receiver) pair, as the rings and connections keep order; the test
//! decides when (and, in the property tests, in which interleaving) each packet is
//! handed to the receiver's [`Protocol::packet`]. Pulls copy straight from the
//! "remote" address, which is memory of this process. A rank can be told that it has
//! no room to write (a full ring), or that its pulls fail.

use super::matching::{Spec, ANY_SOURCE, ANY_TAG};
use super::packet::{Header, Kind};
use super::pieces;
use super::protocol::{Io, MsgId, Protocol, Stream};
use super::request::{Finish, Layout, Outcome, RecvArgs, ReqId, SendArgs, SendMode, Status};
use super::stream_stores::Policy;
use super::{DeviceConfig, Peer};
use crate::transport::Route;
use proptest::prelude::*;
use std::collections::VecDeque;

/// Eager limit of the simulated shared memory (bytes): larger messages rendezvous.
const EAGER: usize = 64;
/// Largest streamed piece through a "ring".
const CHUNK: usize = 32;
/// Piece size of a stream over "TCP".
const TCP_CHUNK: usize = 48;

fn config(cma: bool) -> DeviceConfig {
    DeviceConfig {
        shm_eager_limit: EAGER,
        tcp_eager_limit: EAGER,
        shm_cma: cma,
        shm_chunk_bytes: CHUNK,
        shm_chunk_fixed: false,
        shm_stream_stores: Policy::Cached,
        tcp_chunk_bytes: TCP_CHUNK,
    }
}

/// The in-memory transports of one simulated rank.
#[derive(Default)]
struct SimIo {
    /// Packets written, to be moved into the channels: (destination, header, payload).
    out: Vec<(u32, Header, Vec<u8>)>,
    /// No room to write anything (every write answers "full").
    full: bool,
    /// Pulls fail (as `process_vm_readv` does where it is not permitted).
    pull_fails: bool,
    /// Pulls done (single-copy rendezvous).
    pulls: usize,
    /// Buffered-send pool regions given back.
    released: Vec<usize>,
}

impl Io for SimIo {
    fn try_write(&mut self, dest: u32, hdr: &Header, payload: &[u8]) -> bool {
        if self.full {
            return false;
        }
        self.out.push((dest, *hdr, payload.to_vec()));
        true
    }

    fn try_write_packed(&mut self, dest: u32, hdr: &Header, l: &Layout, off: u64, n: u64) -> bool {
        if self.full {
            return false;
        }
        let mut piece = vec![0; n as usize];
        // SAFETY: the test's send buffer holds the layout's elements until the send
        // completes.
        unsafe { l.pack_at(off as usize, &mut piece) };
        self.out.push((dest, *hdr, piece));
        true
    }

    fn try_write_piece(&mut self, dest: u32, hdr: &Header, piece: &[u8], _len: u64) -> bool {
        self.try_write(dest, hdr, piece)
    }

    fn pump_impi_stream(&mut self, s: &mut Stream, may_write: bool) -> (bool, bool) {
        self.pump_tcp_stream(s, may_write)
    }

    fn pump_tcp_stream(&mut self, s: &mut Stream, may_write: bool) -> (bool, bool) {
        let mut did = false;
        while may_write && !self.full && s.off < s.len {
            let n = (TCP_CHUNK as u64).min(s.len - s.off);
            let mut h = Header::new(Kind::Data);
            h.rreq = s.rreq;
            h.addr = s.off;
            h.len = n;
            let mut piece = vec![0; n as usize];
            match &s.layout {
                // SAFETY: the test's send buffer holds the layout's elements.
                Some(l) => unsafe {
                    l.pack_at(s.off as usize, &mut piece);
                },
                // SAFETY: the test's send buffer holds `len` bytes.
                None => unsafe {
                    std::ptr::copy_nonoverlapping(
                        s.buf.add(s.off as usize),
                        piece.as_mut_ptr(),
                        n as usize,
                    )
                },
            }
            self.out.push((s.dest, h, piece));
            s.off += n;
            did = true;
        }
        (did, s.off >= s.len)
    }

    fn pull(
        &mut self,
        _from: u32,
        remote: usize,
        n: usize,
        buf: *mut u8,
        layout: Option<&Layout>,
    ) -> std::io::Result<()> {
        if self.pull_fails {
            return Err(std::io::Error::from(std::io::ErrorKind::PermissionDenied));
        }
        self.pulls += 1;
        // SAFETY: the "remote" send buffer is memory of this process that holds at
        // least n bytes until the send completes; the receive buffer holds n bytes.
        unsafe {
            let src = std::slice::from_raw_parts(remote as *const u8, n);
            match layout {
                Some(l) => {
                    l.unpack_at(0, src);
                }
                None => std::ptr::copy_nonoverlapping(src.as_ptr(), buf, n),
            }
        }
        Ok(())
    }

    fn pull_listed(
        &mut self,
        _from: u32,
        hdr: &Header,
        n: usize,
        buf: *mut u8,
        layout: Option<&Layout>,
    ) -> std::io::Result<()> {
        if self.pull_fails {
            return Err(std::io::Error::from(std::io::ErrorKind::PermissionDenied));
        }
        self.pulls += 1;
        // SAFETY: the sender's piece list is memory of this process with `hdr.rreq`
        // entries, alive until the send completes.
        let list = unsafe {
            std::slice::from_raw_parts(hdr.addr as *const pieces::Entry, hdr.rreq as usize)
        };
        let mut packed = Vec::new();
        for (addr, len) in pieces::expand(list) {
            // SAFETY: the listed pieces lie inside the sender's buffer.
            packed.extend_from_slice(unsafe { std::slice::from_raw_parts(addr as *const u8, len) });
        }
        packed.truncate(n);
        // SAFETY: the receive buffer holds n bytes (packed, for a layout).
        unsafe {
            match layout {
                Some(l) => {
                    l.unpack_at(0, &packed);
                }
                None => std::ptr::copy_nonoverlapping(packed.as_ptr(), buf, packed.len()),
            }
        }
        Ok(())
    }

    fn release_bsend(&mut self, slot: usize) {
        self.released.push(slot);
    }
}

/// Packets in flight from one rank to another, in order.
type Channel = VecDeque<(Header, Vec<u8>)>;

struct Rank {
    proto: Protocol,
    io: SimIo,
}

/// Simulated ranks and the channels between them.
struct Sim {
    ranks: Vec<Rank>,
    /// `chans[from][to]`: packets in flight, in order.
    chans: Vec<Vec<Channel>>,
    /// Ranks that are gone: nothing more is delivered to or from them.
    dead: Vec<bool>,
}

impl Sim {
    /// `n` ranks on one node (shared memory between them), single-copy pulls allowed
    /// when `cma` (and then chosen, as the ranks are oversubscribed).
    fn new(n: usize, cma: bool) -> Sim {
        Sim::with_routes(n, cma, |_, _| false)
    }

    /// As [`Sim::new`], with the pairs for which `tcp(a, b)` holds connected by TCP.
    fn with_routes(n: usize, cma: bool, tcp: impl Fn(usize, usize) -> bool) -> Sim {
        let ranks = (0..n)
            .map(|me| {
                let peers = (0..n)
                    .map(|p| Peer {
                        route: if p == me {
                            Route::SelfLoop
                        } else if tcp(me, p) {
                            Route::Tcp
                        } else {
                            Route::Shm(p)
                        },
                        pid: 0,
                    })
                    .collect();
                Rank {
                    proto: Protocol::new(me as u32, peers, config(cma), cma),
                    io: SimIo::default(),
                }
            })
            .collect();
        Sim {
            ranks,
            chans: (0..n)
                .map(|_| (0..n).map(|_| VecDeque::new()).collect())
                .collect(),
            dead: vec![false; n],
        }
    }

    /// Moves what rank `r` wrote into the channels.
    fn collect(&mut self, r: usize) {
        for (dest, h, p) in self.ranks[r].io.out.drain(..) {
            if !self.dead[dest as usize] {
                self.chans[r][dest as usize].push_back((h, p));
            }
        }
    }

    fn with<T>(&mut self, r: usize, f: impl FnOnce(&mut Protocol, &mut SimIo) -> T) -> T {
        let rank = &mut self.ranks[r];
        let t = f(&mut rank.proto, &mut rank.io);
        self.collect(r);
        t
    }

    fn isend(&mut self, from: usize, a: SendArgs) -> ReqId {
        self.with(from, |p, io| p.isend_request(a, io))
    }

    fn irecv(&mut self, at: usize, a: RecvArgs) -> ReqId {
        self.with(at, |p, io| p.irecv(a, io))
    }

    fn cancel(&mut self, r: usize, id: ReqId) {
        self.with(r, |p, io| p.cancel(id, io))
    }

    /// Hands the next packet from `from` to `to`; false when there is none.
    fn deliver(&mut self, from: usize, to: usize) -> bool {
        let Some((h, payload)) = self.chans[from][to].pop_front() else {
            return false;
        };
        self.with(to, |p, io| p.packet(from as u32, h, &payload, io));
        true
    }

    /// What rank `r`'s progress does besides polling: queued packets and streams.
    fn pump(&mut self, r: usize) -> bool {
        self.with(r, |p, io| p.flush_pending(io) | p.pump_streams(io))
    }

    fn in_flight(&self) -> usize {
        self.chans.iter().flatten().map(|c| c.len()).sum()
    }

    /// The kinds of the packets in flight from `from` to `to`.
    fn kinds(&self, from: usize, to: usize) -> Vec<Kind> {
        self.chans[from][to].iter().map(|(h, _)| h.kind).collect()
    }

    /// Runs every live rank's progress and delivers every packet until nothing moves.
    fn settle(&mut self) {
        for _ in 0..10_000 {
            let mut did = false;
            for r in 0..self.ranks.len() {
                if !self.dead[r] {
                    did |= self.pump(r);
                }
            }
            for from in 0..self.ranks.len() {
                for to in 0..self.ranks.len() {
                    if !self.dead[from] && !self.dead[to] {
                        did |= self.deliver(from, to);
                    }
                }
            }
            if !did {
                return;
            }
        }
        panic!("the simulated ranks never settle");
    }

    fn request(&self, r: usize, id: ReqId) -> &super::Request {
        self.ranks[r].proto.reqs.get(id).expect("request exists")
    }

    fn is_complete(&self, r: usize, id: ReqId) -> bool {
        self.request(r, id).is_complete()
    }

    /// Waits for request `id` of rank `r`: settles, then takes its final status.
    fn wait(&mut self, r: usize, id: ReqId) -> Status {
        self.settle();
        match self.ranks[r].proto.finish_if_complete(id) {
            Finish::Done { status, .. } => status,
            other => panic!("request {id} of rank {r} did not complete: {other:?}"),
        }
    }

    /// Rank `r` is gone: the others are told, and nothing more moves to or from it.
    fn kill(&mut self, r: usize) {
        self.dead[r] = true;
        for c in &mut self.chans[r] {
            c.clear();
        }
        for other in 0..self.ranks.len() {
            self.chans[other][r].clear();
            if other != r {
                self.with(other, |p, io| p.peer_lost(r as u32, io));
            }
        }
    }
}

fn send(from: u32, dest: u32, tag: i32, data: &[u8], mode: SendMode) -> SendArgs {
    SendArgs {
        dest,
        ctx: 7,
        src_rank: from as i32,
        tag,
        buf: data.as_ptr(),
        len: data.len(),
        mode,
    }
}

fn recv(src: i32, tag: i32, buf: &mut [u8]) -> RecvArgs {
    RecvArgs {
        spec: Spec { ctx: 7, src, tag },
        buf: buf.as_mut_ptr(),
        cap: buf.len(),
    }
}

fn pattern(n: usize, seed: u8) -> Vec<u8> {
    (0..n)
        .map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed))
        .collect()
}

fn ok(source: i32, tag: i32, bytes: usize) -> Status {
    Status {
        source,
        tag,
        error: Outcome::Success,
        bytes: bytes as u64,
        cancelled: false,
    }
}

fn sent() -> Status {
    Status::EMPTY
}

fn cancelled() -> Status {
    Status {
        cancelled: true,
        ..Status::EMPTY
    }
}

// ----- eager ---------------------------------------------------------------------------

#[test]
fn eager_to_a_posted_receive_and_to_a_late_one() {
    let mut sim = Sim::new(2, false);
    let data = pattern(40, 1);
    // Posted first: the packet completes the receive as it arrives.
    let mut buf = vec![0u8; 64];
    let r = sim.irecv(1, recv(0, 5, &mut buf));
    let s = sim.isend(0, send(0, 1, 5, &data, SendMode::Standard));
    assert!(
        sim.is_complete(0, s),
        "an eager send completes once written"
    );
    assert_eq!(sim.kinds(0, 1), [Kind::Eager]);
    assert_eq!(sim.wait(1, r), ok(0, 5, 40));
    assert_eq!(&buf[..40], &data[..]);
    assert_eq!(sim.wait(0, s), sent());
    // Unexpected first: stored, then copied out by the receive, which completes at once.
    let s = sim.isend(0, send(0, 1, 6, &data[..3], SendMode::Standard));
    sim.settle();
    let mut buf = vec![0u8; 8];
    let r = sim.irecv(1, recv(ANY_SOURCE, ANY_TAG, &mut buf));
    assert!(sim.is_complete(1, r));
    assert_eq!(sim.wait(1, r), ok(0, 6, 3));
    assert_eq!(&buf[..3], &data[..3]);
    assert_eq!(sim.wait(0, s), sent());
    assert_eq!(sim.in_flight(), 0);
}

#[test]
fn messages_to_self_take_the_same_paths() {
    let mut sim = Sim::new(1, false);
    for n in [8, 200] {
        let data = pattern(n, 3);
        let mut buf = vec![0u8; n];
        let s = sim.isend(0, send(0, 0, 1, &data, SendMode::Standard));
        let r = sim.irecv(0, recv(0, 1, &mut buf));
        assert_eq!(sim.wait(0, r), ok(0, 1, n));
        assert_eq!(sim.wait(0, s), sent());
        assert_eq!(buf, data);
    }
}

#[test]
fn a_ready_send_to_a_posted_receive_goes_eagerly() {
    let mut sim = Sim::new(2, false);
    let data = pattern(16, 9);
    let mut buf = vec![0u8; 16];
    let r = sim.irecv(1, recv(0, 2, &mut buf));
    let s = sim.isend(0, send(0, 1, 2, &data, SendMode::Ready));
    assert!(sim.is_complete(0, s));
    assert_eq!(sim.wait(1, r), ok(0, 2, 16));
    assert_eq!(buf, data);
}

#[test]
fn tags_and_contexts_select_the_message() {
    let mut sim = Sim::new(2, false);
    let (a, b) = (pattern(4, 1), pattern(4, 2));
    sim.isend(0, send(0, 1, 1, &a, SendMode::Standard));
    sim.isend(0, send(0, 1, 2, &b, SendMode::Standard));
    sim.settle();
    let mut other_ctx = [0u8; 4];
    let mut x = recv(0, 2, &mut other_ctx);
    x.spec.ctx = 8;
    let r0 = sim.irecv(1, x);
    let mut buf = [0u8; 4];
    let r = sim.irecv(1, recv(0, 2, &mut buf));
    assert_eq!(sim.wait(1, r), ok(0, 2, 4));
    assert_eq!(buf[..], b[..]);
    assert!(!sim.is_complete(1, r0), "another context matches nothing");
    let mut buf = [0u8; 4];
    let r = sim.irecv(1, recv(0, ANY_TAG, &mut buf));
    assert_eq!(sim.wait(1, r), ok(0, 1, 4));
    assert_eq!(buf[..], a[..]);
}

// ----- rendezvous ----------------------------------------------------------------------

#[test]
fn rendezvous_streams_pieces_after_cts() {
    let mut sim = Sim::new(2, false);
    let data = pattern(300, 4);
    let mut buf = vec![0u8; 300];
    let s = sim.isend(0, send(0, 1, 3, &data, SendMode::Standard));
    assert_eq!(sim.kinds(0, 1), [Kind::Rts]);
    let r = sim.irecv(1, recv(0, 3, &mut buf));
    assert!(sim.deliver(0, 1));
    assert_eq!(
        sim.kinds(1, 0),
        [Kind::Cts],
        "no pull allowed: ask for a stream"
    );
    assert!(sim.deliver(1, 0));
    assert!(!sim.is_complete(0, s));
    sim.pump(0);
    let pieces = sim.kinds(0, 1);
    assert!(pieces.len() > 2 && pieces.iter().all(|k| *k == Kind::Data));
    assert!(
        sim.is_complete(0, s),
        "the send completes once its last piece left"
    );
    assert_eq!(sim.wait(1, r), ok(0, 3, 300));
    assert_eq!(buf, data);
    assert_eq!(sim.ranks[1].io.pulls, 0);
}

#[test]
fn rendezvous_single_copy_pulls_and_answers_fin() {
    let mut sim = Sim::new(2, true);
    let data = pattern(500, 5);
    let mut buf = vec![0u8; 500];
    let r = sim.irecv(1, recv(0, 3, &mut buf));
    let s = sim.isend(0, send(0, 1, 3, &data, SendMode::Standard));
    assert!(sim.deliver(0, 1));
    assert!(
        sim.is_complete(1, r),
        "the pull completes the receive at once"
    );
    assert_eq!(sim.kinds(1, 0), [Kind::Fin]);
    assert!(!sim.is_complete(0, s));
    assert!(sim.deliver(1, 0));
    assert_eq!(sim.wait(0, s), sent());
    assert_eq!(sim.wait(1, r), ok(0, 3, 500));
    assert_eq!(buf, data);
    assert_eq!(sim.ranks[1].io.pulls, 1);
}

#[test]
fn a_failed_pull_falls_back_to_a_stream_and_pulls_stop() {
    let mut sim = Sim::new(2, true);
    sim.ranks[1].io.pull_fails = true;
    for round in 0..2 {
        let data = pattern(200, round);
        let mut buf = vec![0u8; 200];
        let s = sim.isend(0, send(0, 1, 3, &data, SendMode::Standard));
        let r = sim.irecv(1, recv(0, 3, &mut buf));
        sim.deliver(0, 1);
        assert_eq!(sim.kinds(1, 0), [Kind::Cts]);
        assert_eq!(sim.wait(1, r), ok(0, 3, 200));
        assert_eq!(sim.wait(0, s), sent());
        assert_eq!(buf, data);
    }
    sim.ranks[1].io.pull_fails = false;
    let data = pattern(200, 9);
    let mut buf = vec![0u8; 200];
    sim.isend(0, send(0, 1, 3, &data, SendMode::Standard));
    let r = sim.irecv(1, recv(0, 3, &mut buf));
    assert_eq!(sim.wait(1, r), ok(0, 3, 200));
    assert_eq!(sim.ranks[1].io.pulls, 0, "after a failure the rank streams");
}

#[test]
fn rendezvous_over_tcp_streams_in_the_connections_pieces() {
    let mut sim = Sim::with_routes(2, true, |_, _| true);
    let data = pattern(130, 6);
    let mut buf = vec![0u8; 130];
    let r = sim.irecv(1, recv(0, 3, &mut buf));
    let s = sim.isend(0, send(0, 1, 3, &data, SendMode::Standard));
    sim.deliver(0, 1);
    assert_eq!(sim.kinds(1, 0), [Kind::Cts], "TCP peers never pull");
    sim.deliver(1, 0);
    sim.pump(0);
    assert_eq!(sim.kinds(0, 1), [Kind::Data; 3]);
    assert_eq!(sim.wait(1, r), ok(0, 3, 130));
    assert_eq!(sim.wait(0, s), sent());
    assert_eq!(buf, data);
}

/// A vector of `n` single bytes with stride 2 at `base`.
fn strided(base: &[u8], n: usize) -> Layout {
    strided_blocks(base, n, 1)
}

/// A vector of `n` blocks of `block` bytes, each followed by a gap of the same size.
fn strided_blocks(base: &[u8], n: usize, block: usize) -> Layout {
    use oxmpi_datatype::{Datatype, Predefined};
    let ty = Datatype::vector(
        n as i64,
        block as i64,
        2 * block as i64,
        &Datatype::predefined(Predefined::Byte),
    )
    .expect("vector type");
    Layout {
        base: base.as_ptr() as usize,
        count: 1,
        size: n * block,
        ty,
        skip: 0,
    }
}

#[test]
fn non_contiguous_buffers_stream_pack_and_pull_listed() {
    // Single-byte pieces always stream through the ring; 64-byte pieces are pulled from
    // the sender's published piece list where pulls are allowed.
    for (block, cma) in [(1, false), (1, true), (64, false), (64, true)] {
        let mut sim = Sim::new(2, cma);
        let n = 400;
        let len = n * block;
        let src = pattern(2 * len, 7);
        let mut dst = vec![0u8; 2 * len];
        let a = send(0, 1, 4, &src, SendMode::Standard);
        let s = sim.with(0, |p, io| {
            p.isend_layout(SendArgs { len, ..a }, strided_blocks(&src, n, block), io)
        });
        let mut x = recv(0, 4, &mut dst);
        x.cap = len;
        let l = strided_blocks(&dst, n, block);
        let r = sim.with(1, |p, io| p.irecv_layout(x, l, io));
        assert_eq!(sim.wait(1, r), ok(0, 4, len));
        assert_eq!(sim.wait(0, s), sent());
        for i in 0..len {
            let (at, gap) = (2 * block * (i / block) + i % block, block);
            assert_eq!(dst[at], src[at], "byte {i} (block {block}, cma {cma})");
            assert_eq!(
                dst[at + gap],
                0,
                "gap of {i} untouched (block {block}, cma {cma})"
            );
        }
        assert_eq!(
            sim.ranks[1].io.pulls,
            usize::from(cma && block >= 64),
            "pulls (block {block}, cma {cma})"
        );
    }
}

// ----- synchronous, buffered -------------------------------------------------------------

#[test]
fn a_synchronous_send_completes_when_the_receive_matches() {
    let mut sim = Sim::new(2, false);
    let data = pattern(8, 1);
    let s = sim.isend(0, send(0, 1, 1, &data, SendMode::Synchronous));
    sim.settle();
    assert!(
        !sim.is_complete(0, s),
        "written, but no receive has matched it"
    );
    let mut buf = [0u8; 8];
    let r = sim.irecv(1, recv(0, 1, &mut buf));
    assert_eq!(sim.kinds(1, 0), [Kind::SyncAck]);
    assert_eq!(sim.wait(1, r), ok(0, 1, 8));
    assert_eq!(sim.wait(0, s), sent());
    // Posted first, the ack follows the match at once.
    let r = sim.irecv(1, recv(0, 1, &mut buf));
    let s = sim.isend(0, send(0, 1, 1, &data, SendMode::Synchronous));
    sim.deliver(0, 1);
    assert!(sim.is_complete(1, r));
    assert!(!sim.is_complete(0, s));
    sim.deliver(1, 0);
    assert!(sim.is_complete(0, s));
}

#[test]
fn a_buffered_copy_gives_its_pool_region_back_when_it_has_left() {
    let mut sim = Sim::new(2, false);
    for (n, slot) in [(10, 64), (100, 128)] {
        let data = pattern(n, 2);
        sim.with(0, |p, io| {
            p.start_bsend_copy(send(0, 1, 1, &data, SendMode::Standard), slot, io)
        });
        let mut buf = vec![0u8; n];
        let r = sim.irecv(1, recv(0, 1, &mut buf));
        assert_eq!(sim.wait(1, r), ok(0, 1, n));
        assert_eq!(buf, data);
    }
    assert_eq!(sim.ranks[0].io.released, [64, 128]);
    assert_eq!(
        sim.ranks[0].proto.reqs.live(),
        0,
        "the internal requests are gone"
    );
}

// ----- cancel ----------------------------------------------------------------------------

#[test]
fn cancel_of_a_receive_before_and_after_its_match() {
    let mut sim = Sim::new(2, false);
    let mut buf = [0u8; 8];
    let r = sim.irecv(1, recv(0, 1, &mut buf));
    sim.cancel(1, r);
    assert_eq!(sim.wait(1, r), cancelled());
    // The message that comes later is not taken by the cancelled receive.
    let data = pattern(8, 3);
    sim.isend(0, send(0, 1, 1, &data, SendMode::Standard));
    sim.settle();
    assert!(sim.ranks[1]
        .proto
        .probe(Spec {
            ctx: 7,
            src: 0,
            tag: 1
        })
        .is_some());
    // Matched (eager: complete), a cancel changes nothing.
    let r = sim.irecv(1, recv(0, 1, &mut buf));
    sim.cancel(1, r);
    assert_eq!(sim.wait(1, r), ok(0, 1, 8));
    // Matched a rendezvous and streaming (after Cts): too late, it completes.
    let data = pattern(200, 4);
    let mut big = vec![0u8; 200];
    sim.isend(0, send(0, 1, 1, &data, SendMode::Standard));
    let r = sim.irecv(1, recv(0, 1, &mut big));
    sim.deliver(0, 1);
    assert_eq!(sim.kinds(1, 0), [Kind::Cts]);
    sim.cancel(1, r);
    assert_eq!(sim.wait(1, r), ok(0, 1, 200));
    assert_eq!(big, data);
}

#[test]
fn cancel_of_a_send_still_in_its_own_queue() {
    let mut sim = Sim::new(2, false);
    sim.ranks[0].io.full = true;
    let data = pattern(8, 1);
    let s = sim.isend(0, send(0, 1, 1, &data, SendMode::Standard));
    assert!(!sim.is_complete(0, s) && sim.ranks[0].proto.has_outgoing());
    sim.cancel(0, s);
    assert_eq!(sim.wait(0, s), cancelled());
    sim.ranks[0].io.full = false;
    sim.settle();
    assert_eq!(sim.in_flight(), 0);
    assert!(!sim.ranks[0].proto.has_outgoing());
    assert!(sim.ranks[1]
        .proto
        .probe(Spec {
            ctx: 7,
            src: 0,
            tag: 1
        })
        .is_none());
}

#[test]
fn cancel_of_an_announced_send_before_its_match() {
    // A rendezvous (after Rts) and a synchronous eager message wait at the receiver.
    for (n, mode) in [(200, SendMode::Standard), (8, SendMode::Synchronous)] {
        let mut sim = Sim::new(2, false);
        let data = pattern(n, 5);
        let s = sim.isend(0, send(0, 1, 1, &data, mode));
        sim.settle();
        sim.cancel(0, s);
        assert_eq!(sim.kinds(0, 1), [Kind::CancelReq]);
        sim.deliver(0, 1);
        assert_eq!(sim.kinds(1, 0), [Kind::CancelResp]);
        assert_eq!(sim.wait(0, s), cancelled());
        assert!(
            sim.ranks[1]
                .proto
                .probe(Spec {
                    ctx: 7,
                    src: 0,
                    tag: 1
                })
                .is_none(),
            "the receiver dropped the message"
        );
        // A later message is received normally.
        let s = sim.isend(0, send(0, 1, 1, &data, mode));
        let mut buf = vec![0u8; n];
        let r = sim.irecv(1, recv(0, 1, &mut buf));
        assert_eq!(sim.wait(1, r), ok(0, 1, n));
        assert_eq!(sim.wait(0, s), sent());
    }
}

#[test]
fn cancel_of_a_send_the_receiver_has_seen_or_matched_fails() {
    let mut sim = Sim::new(2, false);
    let data = pattern(200, 6);
    // Probed by the application: the receive that follows must get it.
    let s = sim.isend(0, send(0, 1, 1, &data, SendMode::Standard));
    sim.settle();
    assert!(sim.ranks[1]
        .proto
        .probe_seen(Spec {
            ctx: 7,
            src: 0,
            tag: 1
        })
        .is_some());
    sim.cancel(0, s);
    sim.settle();
    assert!(!sim.is_complete(0, s));
    let mut buf = vec![0u8; 200];
    let r = sim.irecv(1, recv(0, 1, &mut buf));
    assert_eq!(sim.wait(1, r), ok(0, 1, 200));
    assert_eq!(sim.wait(0, s), sent());
    // Matched while the cancel travels (the answer crosses the Fin): not cancelled,
    // and not complete before the answer arrives.
    let mut sim = Sim::new(2, true);
    let s = sim.isend(0, send(0, 1, 1, &data, SendMode::Standard));
    let r = sim.irecv(1, recv(0, 1, &mut buf));
    sim.cancel(0, s);
    assert_eq!(sim.kinds(0, 1), [Kind::Rts, Kind::CancelReq]);
    sim.deliver(0, 1);
    assert_eq!(sim.kinds(1, 0), [Kind::Fin]);
    sim.deliver(1, 0);
    assert!(!sim.is_complete(0, s), "the cancel answer is still due");
    sim.deliver(0, 1);
    assert_eq!(sim.kinds(1, 0), [Kind::CancelResp]);
    sim.deliver(1, 0);
    assert_eq!(sim.wait(0, s), sent());
    assert_eq!(sim.wait(1, r), ok(0, 1, 200));
    // Streaming (after Cts): the send goes on.
    let mut sim = Sim::new(2, false);
    let s = sim.isend(0, send(0, 1, 1, &data, SendMode::Standard));
    let r = sim.irecv(1, recv(0, 1, &mut buf));
    sim.deliver(0, 1);
    sim.deliver(1, 0);
    sim.cancel(0, s);
    assert_eq!(sim.wait(0, s), sent());
    assert_eq!(sim.wait(1, r), ok(0, 1, 200));
    // Completed: nothing to cancel.
    let small = pattern(8, 1);
    let s = sim.isend(0, send(0, 1, 1, &small, SendMode::Standard));
    sim.cancel(0, s);
    assert_eq!(sim.kinds(0, 1), [Kind::Eager]);
    assert_eq!(sim.wait(0, s), sent());
}

// ----- matched probe ---------------------------------------------------------------------

impl Sim {
    fn mprobe(&mut self, r: usize, spec: Spec) -> Option<(MsgId, Status)> {
        self.ranks[r]
            .proto
            .mprobe(spec, 3)
            .expect("room for messages")
    }

    fn mrecv(&mut self, r: usize, msg: MsgId, a: RecvArgs) -> ReqId {
        self.with(r, |p, io| p.mrecv(msg, a, None, io))
            .expect("a matched message")
    }
}

fn spec(src: i32, tag: i32) -> Spec {
    Spec { ctx: 7, src, tag }
}

#[test]
fn a_matched_message_is_out_of_reach_of_other_receives_and_probes() {
    // Eager, streamed rendezvous, pulled rendezvous: the first of two messages with the
    // same envelope is matched; a receive and a probe then see only the second.
    for (n, cma) in [(40, false), (300, false), (300, true)] {
        let mut sim = Sim::new(2, cma);
        let (a, b) = (pattern(n, 1), pattern(n, 2));
        let sa = sim.isend(0, send(0, 1, 5, &a, SendMode::Standard));
        let sb = sim.isend(0, send(0, 1, 5, &b, SendMode::Standard));
        sim.settle();
        let (msg, st) = sim.mprobe(1, spec(ANY_SOURCE, ANY_TAG)).expect("a message");
        assert_eq!(st, ok(0, 5, n));
        assert_eq!(sim.ranks[1].proto.message_owner(msg), Some(3));
        assert_eq!(sim.ranks[1].proto.probe(spec(0, 5)), Some(ok(0, 5, n)));
        let mut got_b = vec![0u8; n];
        let rb = sim.irecv(1, recv(0, 5, &mut got_b));
        assert_eq!(sim.wait(1, rb), ok(0, 5, n));
        assert_eq!(got_b, b, "{n} bytes, cma {cma}: the receive got the second");
        assert!(sim.ranks[1].proto.probe(spec(0, 5)).is_none());
        assert!(sim.mprobe(1, spec(0, ANY_TAG)).is_none());
        let mut got_a = vec![0u8; n];
        let ra = sim.mrecv(1, msg, recv(0, 5, &mut got_a));
        assert_eq!(sim.wait(1, ra), ok(0, 5, n));
        assert_eq!(got_a, a);
        assert_eq!(sim.wait(0, sa), sent());
        assert_eq!(sim.wait(0, sb), sent());
        assert_eq!(sim.ranks[1].proto.matched_len(), 0);
        assert_eq!(sim.ranks[1].io.pulls, usize::from(cma && n > EAGER) * 2);
    }
}

#[test]
fn a_matched_message_is_received_once() {
    let mut sim = Sim::new(2, false);
    let data = pattern(8, 3);
    sim.isend(0, send(0, 1, 1, &data, SendMode::Standard));
    sim.settle();
    let (msg, _) = sim.mprobe(1, spec(0, 1)).expect("a message");
    let mut buf = [0u8; 8];
    let r = sim.mrecv(1, msg, recv(0, 1, &mut buf));
    assert_eq!(sim.wait(1, r), ok(0, 1, 8));
    let again = sim.with(1, |p, io| p.mrecv(msg, recv(0, 1, &mut buf), None, io));
    assert!(again.is_err(), "the id names no message any more");
    assert!(sim
        .with(1, |p, io| p.mrecv(999, recv(0, 1, &mut buf), None, io))
        .is_err());
}

#[test]
fn matched_messages_to_self_over_tcp_truncated_and_synchronous() {
    // To itself, over TCP, longer than the buffer, and in synchronous mode: each
    // completes as a receive of an unexpected message would.
    for (ranks, tcp, n, cap, mode) in [
        (1, false, 200, 200, SendMode::Standard),
        (2, true, 130, 130, SendMode::Standard),
        (2, true, 30, 30, SendMode::Standard),
        (2, false, 300, 24, SendMode::Standard),
        (2, false, 40, 24, SendMode::Standard),
        (2, false, 8, 8, SendMode::Synchronous),
        (2, false, 200, 200, SendMode::Synchronous),
    ] {
        let mut sim = Sim::with_routes(ranks, false, |_, _| tcp);
        let to = ranks - 1;
        let data = pattern(n, 4);
        let s = sim.isend(0, send(0, to as u32, 9, &data, mode));
        sim.settle();
        if mode == SendMode::Synchronous {
            assert!(!sim.is_complete(0, s), "not matched yet");
        }
        let (msg, st) = sim.mprobe(to, spec(0, 9)).expect("a message");
        assert_eq!(st, ok(0, 9, n), "the probe reports the whole message");
        sim.settle();
        if mode == SendMode::Synchronous && n <= EAGER {
            assert!(!sim.is_complete(0, s), "a probe is not a receive");
        }
        let mut buf = vec![0u8; cap];
        let r = sim.mrecv(to, msg, recv(0, 9, &mut buf));
        let st = sim.wait(to, r);
        assert_eq!(st.bytes as usize, cap);
        let want = if cap < n {
            Outcome::Truncated
        } else {
            Outcome::Success
        };
        assert_eq!(st.error, want);
        assert_eq!(buf[..], data[..cap]);
        assert_eq!(sim.wait(0, s), sent());
    }
}

#[test]
fn a_matched_message_cannot_be_cancelled_and_a_lost_sender_fails_its_receive() {
    let mut sim = Sim::new(3, false);
    let data = pattern(200, 5);
    let s = sim.isend(0, send(0, 1, 1, &data, SendMode::Standard));
    sim.settle();
    let (msg, _) = sim.mprobe(1, spec(0, 1)).expect("a message");
    sim.cancel(0, s);
    sim.settle();
    assert!(
        !sim.is_complete(0, s),
        "the receiver keeps the matched message"
    );
    let mut buf = vec![0u8; 200];
    let r = sim.mrecv(1, msg, recv(0, 1, &mut buf));
    assert_eq!(sim.wait(1, r), ok(0, 1, 200));
    assert_eq!(sim.wait(0, s), sent());
    assert_eq!(buf, data);
    // Rank 2 announces a message, which rank 1 matches; rank 2 is lost before the
    // receive: the receive fails rather than wait.
    sim.isend(2, send(2, 1, 2, &data, SendMode::Standard));
    sim.settle();
    let (msg, st) = sim.mprobe(1, spec(ANY_SOURCE, 2)).expect("a message");
    assert_eq!(st.source, 2);
    sim.kill(2);
    let r = sim.mrecv(1, msg, recv(2, 2, &mut buf));
    assert_eq!(sim.wait(1, r).error, Outcome::PeerLost);
}

#[test]
fn a_matched_message_lands_in_a_non_contiguous_buffer() {
    for n in [20usize, 150] {
        let mut sim = Sim::new(2, false);
        let data = pattern(n, 6);
        let s = sim.isend(0, send(0, 1, 4, &data, SendMode::Standard));
        sim.settle();
        let (msg, _) = sim.mprobe(1, spec(0, 4)).expect("a message");
        let mut spread = vec![0u8; 2 * n];
        let l = strided(&spread, n);
        let mut a = recv(0, 4, &mut spread);
        a.cap = n;
        let r = sim
            .with(1, |p, io| p.mrecv(msg, a, Some(l), io))
            .expect("a matched message");
        assert_eq!(sim.wait(1, r), ok(0, 4, n));
        assert_eq!(sim.wait(0, s), sent());
        let got: Vec<u8> = spread.iter().step_by(2).copied().collect();
        assert_eq!(got, data, "{n} bytes");
    }
}

// ----- truncation, lost peers ------------------------------------------------------------

#[test]
fn a_longer_message_is_truncated_to_the_receive_buffer() {
    for (n, cma) in [(40, false), (300, false), (300, true)] {
        let mut sim = Sim::new(2, cma);
        let data = pattern(n, 8);
        let mut buf = vec![0u8; 24];
        let s = sim.isend(0, send(0, 1, 1, &data, SendMode::Standard));
        let r = sim.irecv(1, recv(0, 1, &mut buf));
        let st = sim.wait(1, r);
        assert_eq!(st.error, Outcome::Truncated, "{n} bytes");
        assert_eq!(st.bytes, 24);
        assert_eq!(buf[..], data[..24]);
        assert_eq!(sim.wait(0, s), sent(), "the sender completes normally");
    }
}

#[test]
fn a_peer_lost_mid_message_fails_what_waits_on_it() {
    let mut sim = Sim::new(3, false);
    let data = pattern(300, 1);
    // Rank 0 streams to rank 1, which dies after the first pieces.
    let mut buf1 = vec![0u8; 300];
    let to1 = sim.isend(0, send(0, 1, 1, &data, SendMode::Standard));
    sim.irecv(1, recv(0, 1, &mut buf1));
    sim.deliver(0, 1);
    sim.deliver(1, 0);
    // Rank 1 streams to rank 2, which has the first piece when rank 1 dies.
    let mut buf2 = vec![0u8; 300];
    sim.isend(1, send(1, 2, 2, &data, SendMode::Standard));
    let r2 = sim.irecv(2, recv(1, 2, &mut buf2));
    sim.deliver(1, 2);
    sim.deliver(2, 1);
    sim.pump(1);
    sim.deliver(1, 2);
    assert!(!sim.is_complete(2, r2));
    // A synchronous send to rank 1 waits for an ack that will not come; one queued
    // behind a full ring toward it will never be written.
    let s_sync = sim.isend(0, send(0, 1, 3, &data[..8], SendMode::Synchronous));
    sim.ranks[0].io.full = true;
    let s_queued = sim.isend(0, send(0, 1, 4, &data[..8], SendMode::Standard));
    sim.ranks[0].io.full = false;
    // Rank 1 announced a message to rank 0 that rank 0 receives only later.
    sim.isend(1, send(1, 0, 5, &data, SendMode::Standard));
    sim.deliver(1, 0);
    sim.kill(1);
    let lost = |st: Status| st.error == Outcome::PeerLost;
    assert!(lost(sim.wait(0, to1)));
    assert!(lost(sim.wait(2, r2)));
    assert!(lost(sim.wait(0, s_sync)));
    assert!(lost(sim.wait(0, s_queued)));
    let mut late = vec![0u8; 300];
    let r_late = sim.irecv(0, recv(1, 5, &mut late));
    assert!(lost(sim.wait(0, r_late)));
    assert!(!sim.ranks[0].proto.has_outgoing());
    // Rank 0 and rank 2 go on.
    let mut buf = vec![0u8; 300];
    let s = sim.isend(0, send(0, 2, 6, &data, SendMode::Standard));
    let r = sim.irecv(2, recv(0, 6, &mut buf));
    assert_eq!(sim.wait(2, r), ok(0, 6, 300));
    assert_eq!(sim.wait(0, s), sent());
}

// ----- properties ------------------------------------------------------------------------

/// One step of a random schedule.
#[derive(Clone, Debug)]
enum Step {
    /// The next send of sender `0..2` starts.
    Send(usize),
    /// The receiver posts its next receive.
    Recv,
    /// The next packet of channel `i` (of the 9) is delivered.
    Deliver(usize),
    /// Rank `r` writes what it has queued.
    Pump(usize),
    /// Rank `r`'s transports fill up or drain.
    Full(usize, bool),
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        2 => (0..2usize).prop_map(Step::Send),
        2 => Just(Step::Recv),
        6 => (0..9usize).prop_map(Step::Deliver),
        2 => (0..3usize).prop_map(Step::Pump),
        1 => (0..3usize, any::<bool>()).prop_map(|(r, f)| Step::Full(r, f)),
    ]
}

/// A message of the schedule: its size, tag and mode.
fn message() -> impl Strategy<Value = (usize, i32, bool)> {
    (
        prop_oneof![0..=EAGER, EAGER + 1..4 * EAGER],
        0..3i32,
        any::<bool>(),
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// Ranks 0 and 1 each send a list of messages to rank 2 (eager and rendezvous,
    /// standard and synchronous, random tags); rank 2 posts as many receives, any tag,
    /// all from any source or each from one sender. Whatever the interleaving of starts, deliveries
    /// and full transports: every request completes, each receive gets a whole message
    /// with the right envelope, and the messages of one sender arrive in the order it
    /// sent them (non-overtaking).
    #[test]
    fn every_request_completes_in_order_under_any_interleaving(
        msgs in prop::collection::vec((0..2usize, message()), 1..12),
        srcs in prop::collection::vec(0..2usize, 12),
        any_source in any::<bool>(),
        steps in prop::collection::vec(step(), 0..120),
        cma in any::<bool>(),
    ) {
        let mut sim = Sim::new(3, cma);
        // Payload: sender, sequence number, then a pattern; at least 2 bytes.
        let per: [Vec<(Vec<u8>, i32, SendMode)>; 2] = [0, 1].map(|s| {
            msgs.iter()
                .filter(|(from, _)| *from == s)
                .enumerate()
                .map(|(seq, (_, (n, tag, sync)))| {
                    let mut p = pattern((*n).max(2), seq as u8);
                    p[0] = s as u8;
                    p[1] = seq as u8;
                    let mode = if *sync { SendMode::Synchronous } else { SendMode::Standard };
                    (p, *tag, mode)
                })
                .collect()
        });
        // Receives: all from any source, or each from one sender (as many as it sends,
        // in the drawn order); a mix could leave a receive for one sender without a
        // message when one from any source took it first.
        let mut left = [per[0].len(), per[1].len()];
        let mut plan = Vec::new();
        for &s in srcs.iter().take(msgs.len()) {
            if any_source {
                plan.push(ANY_SOURCE);
                continue;
            }
            let s = if left[s] > 0 { s } else { 1 - s };
            left[s] -= 1;
            plan.push(s as i32);
        }
        let mut bufs: Vec<Vec<u8>> = vec![vec![0u8; 4 * EAGER]; plan.len()];
        let mut next_send = [0usize; 2];
        let mut sends: Vec<(usize, ReqId)> = Vec::new();
        let mut recvs: Vec<ReqId> = Vec::new();
        let start_send = |sim: &mut Sim, s: usize, next: &mut [usize; 2], sends: &mut Vec<(usize, ReqId)>| {
            if let Some((p, tag, mode)) = per[s].get(next[s]) {
                let id = sim.isend(s, send(s as u32, 2, *tag, p, *mode));
                sends.push((s, id));
                next[s] += 1;
            }
        };
        for st in &steps {
            match *st {
                Step::Send(s) => start_send(&mut sim, s, &mut next_send, &mut sends),
                Step::Recv => {
                    if let Some(&src) = plan.get(recvs.len()) {
                        let i = recvs.len();
                        let id = sim.irecv(2, recv(src, ANY_TAG, &mut bufs[i]));
                        recvs.push(id);
                    }
                }
                Step::Deliver(c) => {
                    sim.deliver(c / 3, c % 3);
                }
                Step::Pump(r) => {
                    sim.pump(r);
                }
                Step::Full(r, f) => sim.ranks[r].io.full = f,
            }
        }
        // Then everything else, with room everywhere.
        for r in 0..3 {
            sim.ranks[r].io.full = false;
        }
        for s in 0..2 {
            while next_send[s] < per[s].len() {
                start_send(&mut sim, s, &mut next_send, &mut sends);
            }
        }
        while recvs.len() < plan.len() {
            let i = recvs.len();
            let id = sim.irecv(2, recv(plan[i], ANY_TAG, &mut bufs[i]));
            recvs.push(id);
        }
        sim.settle();
        let mut last_seq = [-1i32; 2];
        for (i, &id) in recvs.iter().enumerate() {
            let st = sim.wait(2, id);
            let b = &bufs[i];
            let (s, seq) = (b[0] as usize, b[1] as usize);
            prop_assert!(s < 2, "receive {} got sender {}", i, s);
            let (p, tag, _) = &per[s][seq];
            prop_assert_eq!(st, ok(s as i32, *tag, p.len()));
            prop_assert_eq!(&b[..p.len()], &p[..]);
            if plan[i] >= 0 {
                prop_assert_eq!(plan[i], s as i32);
            }
            prop_assert!(seq as i32 > last_seq[s], "sender {} overtaken: {} after {}", s, seq, last_seq[s]);
            last_seq[s] = seq as i32;
        }
        for &(s, id) in &sends {
            prop_assert_eq!(sim.wait(s, id), sent());
        }
        for r in 0..3 {
            prop_assert_eq!(sim.ranks[r].proto.reqs.live(), 0);
            prop_assert!(!sim.ranks[r].proto.has_outgoing());
        }
        prop_assert_eq!(sim.in_flight(), 0);
    }
}
