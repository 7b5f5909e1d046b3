//! The direct receive: a receive from one local peer that takes the peer's next eager
//! packet straight out of the shared-memory ring into the user's buffer, without a
//! posted entry or an unexpected copy (a blocking receive also without a request).
//!
//! It applies only when nothing could claim that packet first: the receive names its
//! source, its buffer is contiguous, no receive is posted for any source in the context,
//! and none for that source (a blocking receive: no unexpected message from it either;
//! a nonblocking one: none it accepts, and on a communicator asserting
//! `mpi_assert_allow_overtaking` receives posted for that source do not count). The
//! packet must then be an eager message the receive accepts; anything else (another
//! context or tag, a rendezvous request, a protocol packet) sends the caller to the
//! ordinary path, which posts the receive and lets the progress engine handle the packet.

use super::matching::ANY_TAG;
use super::packet::{Header, Kind, HEADER_BYTES};
use super::protocol::matched_status;
use super::request::Op;
use super::wire::Link;
use super::{Device, Direction, RecvArgs, ReqId, Status};
use crate::transport::Route;

/// What [`Device::recv_direct`] found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direct {
    /// The message was received.
    Took(Status),
    /// Nothing from the peer yet; the receive may keep waiting directly.
    Empty,
    /// The direct path does not apply now: post the receive the ordinary way.
    Busy,
}

impl Device {
    /// Receives into `a` (a contiguous buffer, source a rank) the next packet from world
    /// rank `from` if it is an eager message `a` accepts and nothing posted or unexpected
    /// comes before it.
    pub fn recv_direct(&mut self, from: u32, a: &RecvArgs) -> Direct {
        if !self.proto.matcher.clear_for(a.spec.ctx, a.spec.src) {
            return Direct::Busy;
        }
        self.take_next_eager(from, a)
    }

    /// `MPI_Irecv` into `a` (a contiguous buffer, source a rank at world rank `from`):
    /// a stored message it matches, else the next packet from `from` straight out of the
    /// ring when it is an eager message `a` accepts and no posted receive could claim it
    /// first (with `overtaking`, from `mpi_assert_allow_overtaking`, receives posted
    /// earlier for the same source may not: the messages need not match in order), else
    /// a posted receive. The request gets `owner`.
    pub fn irecv_from(&mut self, from: u32, a: RecvArgs, overtaking: bool, owner: u32) -> ReqId {
        // The matcher's state for this source, looked up once (again only after packets
        // were handed over).
        let mut ahead = self.proto.matcher.ahead_of(a.spec.ctx, a.spec.src);
        if !overtaking && ahead.posted_from {
            // Before the stored messages are looked at: a packet handed over may be
            // stored, and it comes before the next one in the ring.
            self.hand_over_for(from, a.spec.ctx, a.spec.src);
            ahead = self.proto.matcher.ahead_of(a.spec.ctx, a.spec.src);
        }
        let stored = if ahead.stored {
            let io = &mut Link {
                wire: &mut self.wire,
                bsend: &mut self.bsend,
            };
            self.proto.irecv_stored(a, io)
        } else {
            None
        };
        let id = match stored {
            Some(id) => id,
            // No stored message matched: what is posted is as `ahead` found it.
            None => {
                let took = if ahead.may_take_next(overtaking) {
                    self.take_next_eager(from, &a)
                } else {
                    Direct::Busy
                };
                match took {
                    Direct::Took(s) => {
                        // The owner is set in the same visit of the new request.
                        let (id, r) = self.proto.reqs.insert_slot(Op::Done, Direction::Recv);
                        r.status = s;
                        r.complete = true;
                        r.owner = owner;
                        return id;
                    }
                    Direct::Empty | Direct::Busy => self.proto.irecv_post(a),
                }
            }
        };
        if let Some(r) = self.proto.reqs.get_mut(id) {
            r.owner = owner;
        }
        id
    }

    /// While receives for `src` in `ctx` are posted, hands the packets waiting in the
    /// ring from world rank `from` to the protocol, as progress would (the posted
    /// receives claim them first, in order): a window of receives posted one after the
    /// other then takes its later messages directly.
    #[inline(never)]
    fn hand_over_for(&mut self, from: u32, ctx: u32, src: i32) {
        let Route::Shm(j) = self.route(from) else {
            return;
        };
        let Some(mut c) = self.wire.consumers[j].take() else {
            return;
        };
        while !self.proto.matcher.none_posted_from(ctx, src) {
            let Some(body) = c.peek() else {
                break;
            };
            // A corrupt packet is left for progress, which reports it.
            let Some(hdr) = Header::decode(body) else {
                break;
            };
            let io = &mut Link {
                wire: &mut self.wire,
                bsend: &mut self.bsend,
            };
            self.proto.packet(from, hdr, &body[HEADER_BYTES..], io);
            if c.pop_and_hand_back() {
                self.wire.wake_local(j);
            }
        }
        self.wire.consumers[j] = Some(c);
    }

    /// Takes the next packet from `from` into `a` if it is an eager message `a` accepts
    /// (the caller checked that no posted or stored entry comes before it).
    #[inline]
    fn take_next_eager(&mut self, from: u32, a: &RecvArgs) -> Direct {
        let Route::Shm(j) = self.route(from) else {
            return Direct::Busy;
        };
        let Some(c) = self.wire.consumers[j].as_mut() else {
            return Direct::Busy;
        };
        let Some(body) = c.peek() else {
            return Direct::Empty;
        };
        let hdr = match Header::decode(body) {
            Some(h)
                if h.kind == Kind::Eager
                    && h.ctx == a.spec.ctx
                    && h.src_rank == a.spec.src
                    && (a.spec.tag == ANY_TAG || a.spec.tag == h.tag) =>
            {
                h
            }
            // Not for this receive (or corrupt: the progress engine reports that).
            _ => return Direct::Busy,
        };
        let status = matched_status(&hdr, a.cap);
        let data = &body[HEADER_BYTES..];
        let n = (status.bytes as usize).min(data.len());
        if n > 0 {
            // SAFETY: the receive buffer holds `cap >= n` bytes (MPI contract, counts
            // checked by the caller); the packet body holds at least n bytes.
            unsafe { super::copy_small(data.as_ptr(), a.buf, n) };
        }
        if c.pop_and_hand_back() {
            self.wire.wake_local(j);
        }
        let io = &mut Link {
            wire: &mut self.wire,
            bsend: &mut self.bsend,
        };
        self.proto.ack_if_sync(from, &hdr, io);
        Direct::Took(status)
    }
}
