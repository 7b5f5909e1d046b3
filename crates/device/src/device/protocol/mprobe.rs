//! Matched probe (`MPI_Mprobe`, `MPI_Improbe`) and the receive of a matched message
//! (`MPI_Mrecv`, `MPI_Imrecv`). The probe takes the message it finds out of the
//! unexpected queue and keeps it under a message id, so that no other receive or probe
//! can match it; the receive then gets exactly that message, by the same paths as a
//! receive that met it in the queue (eager copy, single-copy pull or stream).
//!
//! A matched rendezvous message keeps its sender waiting, as an unexpected one does; a
//! cancel request for it finds nothing in the queue and fails, as for a message the
//! application has seen through `MPI_Probe`.

use super::{land_eager, probed_status, Io, Protocol, Unexpected};
use crate::device::matching::Spec;
use crate::device::request::{
    Direction, InvalidRequest, Layout, Op, RecvArgs, RecvState, ReqId, Status,
};
use std::sync::Arc;

/// Index of a matched message in the protocol's table.
pub type MsgId = u32;

/// Most matched messages held at once: ids stay below 2^26 - 1, so that a binding may
/// encode them in 26 bits next to its own reserved values.
pub const MAX_MESSAGES: usize = (1 << 26) - 2;

/// A message taken by a matched probe, waiting for its receive.
pub(crate) struct Matched {
    msg: Unexpected,
    /// The owner tag given by the probe (the MPI layer's communicator).
    owner: u32,
}

/// The matched messages not yet received.
#[derive(Default)]
pub(crate) struct Messages {
    slots: Vec<Option<Matched>>,
    free: Vec<MsgId>,
}

impl Messages {
    fn insert(&mut self, m: Matched) -> MsgId {
        match self.free.pop() {
            Some(id) => {
                self.slots[id as usize] = Some(m);
                id
            }
            None => {
                self.slots.push(Some(m));
                (self.slots.len() - 1) as MsgId
            }
        }
    }

    fn take(&mut self, id: MsgId) -> Option<Matched> {
        let m = self.slots.get_mut(id as usize)?.take()?;
        self.free.push(id);
        Some(m)
    }

    fn get(&self, id: MsgId) -> Option<&Matched> {
        self.slots.get(id as usize)?.as_ref()
    }

    /// Messages held.
    pub(crate) fn len(&self) -> usize {
        self.slots.len() - self.free.len()
    }
}

/// The matched-message table is full ([`MAX_MESSAGES`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TooManyMessages;

impl Protocol {
    /// `MPI_Improbe`: takes the earliest unexpected message `spec` accepts out of the
    /// queue and keeps it as a matched message owned by `owner`. None when no message
    /// matches.
    pub(crate) fn mprobe(
        &mut self,
        spec: Spec,
        owner: u32,
    ) -> Result<Option<(MsgId, Status)>, TooManyMessages> {
        if self.messages.len() >= MAX_MESSAGES {
            return Err(TooManyMessages);
        }
        let Some((env, msg)) = self.matcher.take_unexpected(spec) else {
            return Ok(None);
        };
        let status = probed_status(env, msg.hdr());
        let id = self.messages.insert(Matched { msg, owner });
        Ok(Some((id, status)))
    }

    /// The owner tag of matched message `id`, while it waits for its receive.
    pub(crate) fn message_owner(&self, id: MsgId) -> Option<u32> {
        self.messages.get(id).map(|m| m.owner)
    }

    /// Matched messages waiting for their receive.
    pub(crate) fn matched_len(&self) -> usize {
        self.messages.len()
    }

    /// `MPI_Imrecv`: receives matched message `msg` into `a`'s buffer (described by
    /// `layout` when it is not contiguous). The message id is then free; `Err` when it
    /// names no matched message (never matched, or received already).
    pub(crate) fn mrecv(
        &mut self,
        msg: MsgId,
        mut a: RecvArgs,
        layout: Option<Layout>,
        io: &mut impl Io,
    ) -> Result<ReqId, InvalidRequest> {
        let Matched { msg: u, .. } = self.messages.take(msg).ok_or(InvalidRequest)?;
        let h = u.hdr();
        // The receive accepts exactly this message (and is never posted).
        a.spec = Spec {
            ctx: h.ctx,
            src: h.src_rank,
            tag: h.tag,
        };
        if let (None, Unexpected::Eager { from, hdr, data }) = (&layout, &u) {
            // The data is here: the receive is complete as it starts.
            let status = land_eager(&a, None, hdr, data.bytes());
            let (from, hdr) = (*from, *hdr);
            if let Unexpected::Eager { data, .. } = u {
                self.payloads.recycle(data);
            }
            self.ack_if_sync(from, &hdr, io);
            return Ok(self.reqs.insert_complete(status, Direction::Recv));
        }
        let id = self
            .reqs
            .insert_new(Op::Recv(a, RecvState::Posted), Direction::Recv);
        if let Some(l) = layout {
            self.reqs
                .get_mut(id)
                .expect("just inserted")
                .extra_mut()
                .layout = Some(Arc::new(l));
        }
        self.deliver(id, u, io);
        Ok(id)
    }
}
