//! The counters behind the tools interface's point-to-point performance variables:
//! plain integers in the runtime, bumped under the runtime lock that every send and
//! completion already holds (no atomics, no allocation after `MPI_Init`).

use crate::comm::CommId;
use crate::device::Status;
use crate::runtime::Runtime;

/// Messages and bytes exchanged with one peer.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Traffic {
    pub msgs: u64,
    pub bytes: u64,
}

/// The point-to-point counters of one process, by world rank.
#[derive(Clone, Debug, Default)]
pub struct Counters {
    /// Sends started (each `MPI_Send` family call and each start of a persistent send).
    pub sent: Vec<Traffic>,
    /// Receives completed with a message (not cancelled, not `MPI_PROC_NULL`).
    pub received: Vec<Traffic>,
    /// Nanoseconds waits spent yielding and sleeping after their spin phase.
    pub blocked_ns: u64,
}

impl Counters {
    /// Zeroed counters for a job of `world_size` ranks.
    pub fn new(world_size: u32) -> Counters {
        Counters {
            sent: vec![Traffic::default(); world_size as usize],
            received: vec![Traffic::default(); world_size as usize],
            blocked_ns: 0,
        }
    }

    /// A send of `bytes` to world rank `dest`.
    #[inline(always)]
    pub fn sent(&mut self, dest: u32, bytes: usize) {
        if let Some(t) = self.sent.get_mut(dest as usize) {
            t.msgs += 1;
            t.bytes += bytes as u64;
        }
    }

    /// A receive of `bytes` from world rank `src` completed.
    #[inline(always)]
    pub fn received(&mut self, src: u32, bytes: u64) {
        if let Some(t) = self.received.get_mut(src as usize) {
            t.msgs += 1;
            t.bytes += bytes;
        }
    }
}

/// Counts the receive on communicator `comm` that completed with `status` (a receive
/// that matched no message — cancelled, or from `MPI_PROC_NULL` — counts nothing).
#[inline]
pub fn count_receive(rt: &mut Runtime, comm: CommId, status: &Status) {
    if status.source < 0 || status.cancelled {
        return;
    }
    let from = match rt.comms.get(comm) {
        Ok(c) => c.peer_group().world_of(status.source),
        Err(_) => None,
    };
    if let Some(w) = from {
        rt.stats.received(w, status.bytes);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_by_peer_and_ignores_unknown_ranks() {
        let mut c = Counters::new(3);
        c.sent(1, 10);
        c.sent(1, 5);
        c.sent(7, 1);
        c.received(2, 8);
        assert_eq!(c.sent[1], Traffic { msgs: 2, bytes: 15 });
        assert_eq!(c.sent[0], Traffic::default());
        assert_eq!(c.received[2], Traffic { msgs: 1, bytes: 8 });
    }
}
