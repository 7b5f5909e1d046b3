//! Which incoming shared-memory rings the progress engine polls.
//!
//! A rank polls the rings of the local ranks that send to it, as the sender mask of its
//! doorbell names them (set by [`ShmNode::notify`]), rather than one ring per local
//! rank: most programs talk to a few neighbours, and every poll of an empty ring costs
//! time on each round of progress. A ring that stays empty for [`IDLE_ROUNDS`] rounds
//! is dropped and its sender's bit cleared; the sender sets it again with its next
//! packet. In the rare race where a sender checks its bit just before the rank clears
//! it, the packet is found by the scan of every ring made every [`SCAN_ROUNDS`] rounds
//! and before the rank sleeps.

use crate::transport::ring::Consumer;
use crate::transport::shm::ShmNode;

/// Rounds of progress between two scans of every ring.
const SCAN_ROUNDS: u32 = 64;
/// Rounds without a packet after which a ring is no longer polled. Short: a ring
/// kept after a collective or a one-off exchange costs every later round a look (the
/// 8-rank ring benchmark, callgrind: 1.6% fewer instructions per iteration than with
/// 4096), while a dropped ring costs its sender one atomic OR on its next packet.
const IDLE_ROUNDS: u32 = 256;

/// The rings polled, with what decides it.
pub struct PollSet {
    /// Local indexes of the polled rings, in increasing order.
    polled: Vec<usize>,
    /// The sender mask as `polled` reflects it.
    seen: Vec<u64>,
    /// Per local rank: a packet came since the last look for idle rings.
    busy: Vec<bool>,
    /// Rounds of progress so far.
    rounds: u32,
    /// The node tracks senders; false: every ring is polled.
    tracking: bool,
}

impl PollSet {
    /// The poll set of a rank whose incoming rings are `consumers` (by local index).
    pub fn new(node: Option<&ShmNode>, consumers: &[Option<Consumer>]) -> PollSet {
        let tracking = node.is_some_and(|n| n.tracks_senders());
        let polled = if tracking {
            Vec::new()
        } else {
            (0..consumers.len())
                .filter(|&j| consumers[j].is_some())
                .collect()
        };
        PollSet {
            polled,
            seen: vec![0; consumers.len().div_ceil(64)],
            busy: vec![false; consumers.len()],
            rounds: 0,
            tracking,
        }
    }

    /// Starts a round of progress: adds the rings of new senders (and, now and then,
    /// every ring holding packets, and drops idle ones). Returns how many rings to poll.
    #[inline]
    pub fn start_round(&mut self, node: &ShmNode, consumers: &[Option<Consumer>]) -> usize {
        if self.tracking {
            self.rounds = self.rounds.wrapping_add(1);
            for w in 0..self.seen.len() {
                let mask = node.senders(w);
                if mask & !self.seen[w] != 0 {
                    self.add_senders(w, mask, consumers);
                }
            }
            if self.rounds % SCAN_ROUNDS == 0 {
                self.upkeep(node, consumers);
            }
        }
        self.polled.len()
    }

    /// The local index of the `k`-th polled ring.
    #[inline]
    pub fn ring(&self, k: usize) -> usize {
        self.polled[k]
    }

    /// Notes that the ring from local rank `j` held packets.
    #[inline]
    pub fn saw_data(&mut self, j: usize) {
        self.busy[j] = true;
    }

    /// Before sleeping: polls rings holding packets that are not polled yet (see the
    /// module comment); true when any ring holds packets.
    pub fn any_incoming(&mut self, consumers: &[Option<Consumer>]) -> bool {
        let mut any = false;
        for (j, c) in consumers.iter().enumerate() {
            if c.as_ref().is_some_and(|c| c.has_data()) {
                any = true;
                self.poll(j);
            }
        }
        any
    }

    #[cold]
    fn add_senders(&mut self, w: usize, mask: u64, consumers: &[Option<Consumer>]) {
        let new = mask & !self.seen[w];
        self.seen[w] |= mask;
        for b in 0..64 {
            let j = w * 64 + b;
            if new & (1 << b) != 0 && consumers.get(j).is_some_and(|c| c.is_some()) {
                self.poll(j);
            }
        }
    }

    fn poll(&mut self, j: usize) {
        if let Err(at) = self.polled.binary_search(&j) {
            self.polled.insert(at, j);
            self.busy[j] = true;
        }
    }

    /// Every [`SCAN_ROUNDS`] rounds: polls every ring holding packets; every
    /// [`IDLE_ROUNDS`] rounds: stops polling the rings that stayed empty meanwhile.
    #[cold]
    fn upkeep(&mut self, node: &ShmNode, consumers: &[Option<Consumer>]) {
        self.any_incoming(consumers);
        if self.rounds % IDLE_ROUNDS != 0 {
            return;
        }
        let mut k = 0;
        while k < self.polled.len() {
            let j = self.polled[k];
            if std::mem::take(&mut self.busy[j]) {
                k += 1;
                continue;
            }
            node.withdraw_sender(j);
            self.seen[j / 64] &= !(1u64 << (j % 64));
            // A packet written before the bit was cleared keeps the ring polled.
            if consumers[j].as_ref().is_some_and(|c| c.has_data()) {
                k += 1;
                continue;
            }
            self.polled.remove(k);
        }
    }
}
