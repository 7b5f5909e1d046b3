//! The direct receive: a blocking receive from one local peer that takes the peer's next
//! eager packet straight out of the shared-memory ring into the user's buffer, without a
//! request, a posted entry or an unexpected copy.
//!
//! It applies only when nothing could claim that packet first: the receive names its
//! source, its buffer is contiguous, and no receive is posted for that source (or for any
//! source) in the context and no unexpected message from it is stored. The packet must
//! then be an eager message the receive accepts; anything else (another context or tag,
//! a rendezvous request, a protocol packet) sends the caller to the ordinary path, which
//! posts the receive and lets the progress engine handle the packet.

use super::matching::ANY_TAG;
use super::packet::{Header, Kind, HEADER_BYTES};
use super::protocol::matched_status;
use super::wire::Link;
use super::{Device, RecvArgs, Status};
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
        let Route::Shm(j) = self.route(from) else {
            return Direct::Busy;
        };
        if !self.proto.matcher.clear_for(a.spec.ctx, a.spec.src) {
            return Direct::Busy;
        }
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
