//! Probing and cancel (`CancelReq`/`CancelResp`: a send the receiver has not matched
//! is taken back), and lost peers (what waits on them fails instead of hanging).

use super::{probed_status, Io, Payload, Protocol, Unexpected};
use crate::device::matching::Spec;
use crate::device::packet::{Header, Kind, FLAG_CANCELLED, FLAG_PROBED};
use crate::device::request::{Op, Outcome, RecvState, ReqId, SendState, Status};

impl Protocol {
    /// `MPI_Iprobe` on the unexpected queue.
    pub(crate) fn probe(&self, spec: Spec) -> Option<Status> {
        self.matcher
            .peek_unexpected(spec)
            .map(|(env, u)| probed_status(env, u.hdr()))
    }

    /// `MPI_Iprobe` by the application: the message found can no longer be cancelled
    /// by its sender.
    pub(crate) fn probe_seen(&mut self, spec: Spec) -> Option<Status> {
        let (env, u) = self.matcher.peek_unexpected_mut(spec)?;
        let h = u.hdr_mut();
        h.flags |= FLAG_PROBED;
        Some(probed_status(env, h))
    }

    /// `MPI_Cancel`. Receives still posted are cancelled at once, and sends still in
    /// our own queue; sends the receiver has (rendezvous or synchronous, not yet
    /// matched) are cancelled by asking it with `CancelReq` (the answer arrives as a
    /// packet). Anything else has gone too far and completes normally.
    pub(crate) fn cancel(&mut self, id: ReqId, io: &mut impl Io) {
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
                self.complete(id, io);
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
                        self.complete(id, io);
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
                self.post_packet(a.dest, h, Payload::Empty, None, io);
            }
            _ => {}
        }
    }

    #[cold]
    pub(crate) fn is_lost(&self, rank: u32) -> bool {
        self.lost.contains(&rank)
    }

    /// Completes request `id` with [`Outcome::PeerLost`] (whatever cancel was under way).
    #[cold]
    pub(super) fn fail(&mut self, id: ReqId, io: &mut impl Io) {
        let Some(r) = self.reqs.get_mut(id) else {
            return;
        };
        r.status.error = Outcome::PeerLost;
        r.cancel_pending = false;
        self.complete(id, io);
    }

    /// World rank `rank` is gone (its connection broke, or it sent a corrupt packet):
    /// every operation under way with it fails with [`Outcome::PeerLost`] rather than
    /// wait forever. That is each send to it (queued, announced or streaming, or
    /// waiting for a cancel answer) and each receive it was streaming to; its queued
    /// packets are dropped, and a receive that later matches a message it only
    /// announced fails too. Its eager messages already here stay receivable. (A
    /// receive posted for it by source alone cannot be told apart here: the device
    /// knows sources as communicator ranks.)
    #[cold]
    pub(crate) fn peer_lost(&mut self, rank: u32, io: &mut impl Io) {
        if self.is_lost(rank) {
            return;
        }
        self.lost.push(rank);
        if let Some(q) = self.pending.get_mut(rank as usize) {
            q.clear();
        }
        self.pending_dests.retain(|&d| d != rank);
        self.streams.retain(|s| s.dest != rank);
        let doomed: Vec<ReqId> = self
            .reqs
            .ids()
            .filter(|&id| {
                let r = self.reqs.get(id).expect("listed request exists");
                match r.op {
                    Op::Send(a, _) => a.dest == rank,
                    Op::Recv(_, RecvState::Streaming { from, .. }) => from == rank,
                    Op::Recv(_, RecvState::Posted) | Op::Done | Op::Inactive => false,
                }
            })
            .collect();
        for id in doomed {
            self.fail(id, io);
        }
    }

    /// `CancelReq` from `from`: take its message back if it is still unexpected here and
    /// may be cancelled ([`Unexpected::cancellable_by`]), and answer `CancelResp`.
    pub(super) fn answer_cancel(&mut self, from: u32, hdr: &Header, io: &mut impl Io) {
        let removed = self
            .matcher
            .remove_unexpected(hdr.ctx, hdr.src_rank, |u: &Unexpected| {
                u.cancellable_by(from, hdr.sreq)
            });
        let mut h = Header::new(Kind::CancelResp);
        h.sreq = hdr.sreq;
        if removed.is_some() {
            h.flags = FLAG_CANCELLED;
        }
        self.post_packet(from, h, Payload::Empty, None, io);
    }

    /// `CancelResp`: the send is cancelled, or it goes on (and completes now if it
    /// finished while the answer travelled).
    pub(super) fn cancel_answered(&mut self, hdr: &Header, io: &mut impl Io) {
        let Some(r) = self.reqs.get_mut(hdr.sreq) else {
            return;
        };
        r.cancel_pending = false;
        if hdr.flags & FLAG_CANCELLED != 0 {
            r.status.cancelled = true;
            self.complete(hdr.sreq, io);
        } else if r.complete {
            // The message matched before the cancel arrived and the send has
            // already finished; run the completion steps held back meanwhile.
            self.complete(hdr.sreq, io);
        }
    }
}
