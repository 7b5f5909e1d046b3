//! Collective schedules: for one rank of one collective call, an ordered list of rounds
//! of sends, receives, copies and reductions on byte regions of three kinds of buffer.
//! Plain data, no I/O: the core executes a [`Schedule`] over its nonblocking
//! point-to-point layer in the communicator's collective context.
//!
//! # Execution contract
//!
//! For each [`Round`] in order, the executor
//! 1. posts every receive of `round.recvs` (in order), then every send of `round.sends`
//!    (in order), all nonblocking;
//! 2. waits until all of them have completed;
//! 3. runs `round.locals` in order ([`Local::Copy`], [`Local::Reduce`]).
//!
//! All messages of one collective call use one tag; between two ranks they are matched
//! in the order posted (MPI's non-overtaking rule), and every receive is matched by a
//! send of exactly its length. Schedules never deadlock even when every send completes
//! only once matched (rendezvous), as long as all ranks run the same collective.
//!
//! # Buffers
//!
//! Regions name a [`BufRef`]: the user's send buffer, the user's receive buffer (both as
//! packed contiguous bytes; the core packs/unpacks derived types around the schedule),
//! or a temporary buffer whose size is [`Schedule::tmp_sizes`]. A schedule never writes
//! [`BufRef::Send`]. When a call is "in place" the schedule never names `Send` at all and
//! reads the input where MPI puts it for `MPI_IN_PLACE` (see each [`Spec`] variant).
//! Zero-length regions never touch memory (a barrier's messages are all zero-length).
//! Within one round no receive region overlaps another receive or a send region, and a
//! copy's source and destination never overlap.
//!
//! # Reductions
//!
//! `Local::Reduce { src, dst }` means `dst = src op dst` element-wise — exactly the user
//! function's `inoutvec = invec op inoutvec` with `src` as `invec`. `len` is a multiple
//! of the element size the spec gave. Algorithms for non-commutative operations keep
//! the canonical order `x0 op x1 op ... op x(n-1)`: `src` always holds lower ranks.

mod allgather;
mod alltoall;
mod bcast;
mod reduce;
mod rooted;
mod scan;
mod spec;

pub use spec::{
    build, build_into, Algorithm, Block, Collective, Elems, Member, ScheduleError, Spec,
};

use std::fmt;

/// A buffer a schedule operates on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BufRef {
    /// The user's send (input) buffer: read only.
    Send,
    /// The user's receive (output) buffer; also the single buffer of `MPI_Bcast`.
    Recv,
    /// Temporary buffer `i`, of `tmp_sizes()[i]` bytes, allocated by the executor.
    Tmp(u16),
}

/// `len` bytes at byte offset `off` of `buf`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Region {
    pub buf: BufRef,
    pub off: usize,
    pub len: usize,
}

impl Region {
    pub const fn new(buf: BufRef, off: usize, len: usize) -> Region {
        Region { buf, off, len }
    }

    /// The sub-region `[off, off + len)` relative to this one.
    pub const fn sub(self, off: usize, len: usize) -> Region {
        Region {
            buf: self.buf,
            off: self.off + off,
            len,
        }
    }

    /// True when both regions are in the same buffer and share at least one byte.
    pub fn overlaps(&self, other: &Region) -> bool {
        self.buf == other.buf
            && self.len > 0
            && other.len > 0
            && self.off < other.off + other.len
            && other.off < self.off + self.len
    }
}

/// A send to or receive from `peer` (a rank in the communicator).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Xfer {
    pub peer: u32,
    pub region: Region,
}

/// A local step, run after the round's communication has completed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Local {
    /// `dst = src` (same length, never overlapping).
    Copy { src: Region, dst: Region },
    /// `dst = src op dst` element-wise (same length, never overlapping).
    Reduce { src: Region, dst: Region },
}

/// One round: receives and sends that may all be in flight at once, then local steps.
#[derive(Clone, Copy, Debug)]
pub struct Round<'a> {
    pub recvs: &'a [Xfer],
    pub sends: &'a [Xfer],
    pub locals: &'a [Local],
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Bounds {
    recv_end: u32,
    send_end: u32,
    local_end: u32,
}

/// A schedule for one rank (see the module documentation for the contract).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Schedule {
    recvs: Vec<Xfer>,
    sends: Vec<Xfer>,
    locals: Vec<Local>,
    rounds: Vec<Bounds>,
    tmp: Vec<usize>,
}

impl Schedule {
    /// An empty schedule (nothing to do).
    pub fn new() -> Schedule {
        Schedule::default()
    }

    /// Empties the schedule, keeping its allocations.
    pub fn clear(&mut self) {
        self.recvs.clear();
        self.sends.clear();
        self.locals.clear();
        self.rounds.clear();
        self.tmp.clear();
    }

    /// Number of rounds.
    pub fn round_count(&self) -> usize {
        self.rounds.len()
    }

    /// True when there is nothing to execute.
    pub fn is_empty(&self) -> bool {
        self.rounds.is_empty()
    }

    /// Round `i` (panics if `i >= round_count()`).
    pub fn round(&self, i: usize) -> Round<'_> {
        let start = if i == 0 {
            Bounds::default()
        } else {
            self.rounds[i - 1]
        };
        let end = self.rounds[i];
        Round {
            recvs: &self.recvs[start.recv_end as usize..end.recv_end as usize],
            sends: &self.sends[start.send_end as usize..end.send_end as usize],
            locals: &self.locals[start.local_end as usize..end.local_end as usize],
        }
    }

    /// All rounds in execution order.
    pub fn rounds(&self) -> impl ExactSizeIterator<Item = Round<'_>> + '_ {
        (0..self.rounds.len()).map(move |i| self.round(i))
    }

    /// Sizes in bytes of the temporary buffers `Tmp(0)`, `Tmp(1)`, ...
    pub fn tmp_sizes(&self) -> &[usize] {
        &self.tmp
    }

    /// Total number of sends (messages this rank originates).
    pub fn send_count(&self) -> usize {
        self.sends.len()
    }

    /// Total number of receives.
    pub fn recv_count(&self) -> usize {
        self.recvs.len()
    }

    /// Every send, in order (all rounds).
    pub fn sends(&self) -> &[Xfer] {
        &self.sends
    }

    /// Every receive, in order (all rounds).
    pub fn recvs(&self) -> &[Xfer] {
        &self.recvs
    }

    /// Every local step, in order (all rounds).
    pub fn locals(&self) -> &[Local] {
        &self.locals
    }

    /// Checks the structural promises of the contract against buffer sizes: every
    /// region within its buffer, `Send` never written, no overlaps inside a round or a
    /// local step, reductions on whole elements. For tests and the core's debug builds.
    pub fn validate(
        &self,
        send_len: usize,
        recv_len: usize,
        elem_size: usize,
    ) -> Result<(), String> {
        let size_of = |b: BufRef| match b {
            BufRef::Send => Some(send_len),
            BufRef::Recv => Some(recv_len),
            BufRef::Tmp(i) => self.tmp.get(i as usize).copied(),
        };
        let check = |what: &str, r: &Region| -> Result<(), String> {
            let size = size_of(r.buf).ok_or_else(|| format!("{what} names missing {:?}", r.buf))?;
            if r.len > 0 && r.off.checked_add(r.len).is_none_or(|end| end > size) {
                return Err(format!("{what} {r:?} exceeds the buffer's {size} bytes"));
            }
            Ok(())
        };
        for (i, round) in self.rounds().enumerate() {
            for x in round.recvs {
                check("receive", &x.region)?;
                if x.region.buf == BufRef::Send {
                    return Err(format!("round {i}: receive into the send buffer"));
                }
            }
            for x in round.sends {
                check("send", &x.region)?;
            }
            for (j, a) in round.recvs.iter().enumerate() {
                for b in round.recvs[j + 1..].iter().chain(round.sends) {
                    if a.region.overlaps(&b.region) {
                        return Err(format!("round {i}: receive {a:?} overlaps {b:?}"));
                    }
                }
            }
            for l in round.locals {
                let (Local::Copy { src, dst } | Local::Reduce { src, dst }) = *l;
                check("local source", &src)?;
                check("local destination", &dst)?;
                if dst.buf == BufRef::Send {
                    return Err(format!("round {i}: {l:?} writes the send buffer"));
                }
                if src.len != dst.len || src.overlaps(&dst) {
                    return Err(format!("round {i}: bad local step {l:?}"));
                }
                if matches!(l, Local::Reduce { .. }) && elem_size > 0 && src.len % elem_size != 0 {
                    return Err(format!(
                        "round {i}: {l:?} is not whole elements of {elem_size} bytes"
                    ));
                }
            }
        }
        Ok(())
    }

    // ---- building (crate-internal) ----

    /// A new temporary buffer of `size` bytes.
    pub(crate) fn tmp(&mut self, size: usize) -> BufRef {
        self.tmp.push(size);
        BufRef::Tmp((self.tmp.len() - 1) as u16)
    }

    /// Makes sure temporary buffer `t` holds at least `size` bytes.
    pub(crate) fn grow(&mut self, t: BufRef, size: usize) {
        if let BufRef::Tmp(i) = t {
            let s = &mut self.tmp[i as usize];
            *s = (*s).max(size);
        }
    }

    fn open_bounds(&self) -> Bounds {
        Bounds {
            recv_end: self.recvs.len() as u32,
            send_end: self.sends.len() as u32,
            local_end: self.locals.len() as u32,
        }
    }

    fn last_closed(&self) -> Bounds {
        self.rounds.last().copied().unwrap_or_default()
    }

    /// Closes the round being built (if it has anything); later steps go to a new one.
    pub(crate) fn next_round(&mut self) {
        let open = self.open_bounds();
        if open != self.last_closed() {
            self.rounds.push(open);
        }
    }

    /// Communication added after local steps starts a new round (locals run last).
    fn before_comm(&mut self) {
        if self.locals.len() as u32 != self.last_closed().local_end {
            self.next_round();
        }
    }

    /// Receive `region` from `peer` (skipped when empty).
    pub(crate) fn recv(&mut self, peer: usize, region: Region) {
        if region.len > 0 {
            self.before_comm();
            self.recvs.push(Xfer {
                peer: peer as u32,
                region,
            });
        }
    }

    /// Send `region` to `peer` (skipped when empty).
    pub(crate) fn send(&mut self, peer: usize, region: Region) {
        if region.len > 0 {
            self.before_comm();
            self.sends.push(Xfer {
                peer: peer as u32,
                region,
            });
        }
    }

    /// A zero-length receive (pure synchronisation).
    pub(crate) fn recv_signal(&mut self, peer: usize) {
        self.before_comm();
        self.recvs.push(Xfer {
            peer: peer as u32,
            region: Region::new(BufRef::Recv, 0, 0),
        });
    }

    /// A zero-length send (pure synchronisation).
    pub(crate) fn send_signal(&mut self, peer: usize) {
        self.before_comm();
        self.sends.push(Xfer {
            peer: peer as u32,
            region: Region::new(BufRef::Recv, 0, 0),
        });
    }

    /// `dst = src` (skipped when empty or when both name the same bytes).
    pub(crate) fn copy(&mut self, src: Region, dst: Region) {
        debug_assert_eq!(src.len, dst.len);
        if src.len > 0 && src != dst {
            self.locals.push(Local::Copy { src, dst });
        }
    }

    /// `dst = src op dst` (skipped when empty).
    pub(crate) fn reduce(&mut self, src: Region, dst: Region) {
        debug_assert_eq!(src.len, dst.len);
        if src.len > 0 {
            self.locals.push(Local::Reduce { src, dst });
        }
    }
}

impl fmt::Display for Schedule {
    /// One line per round, for debugging.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, r) in self.rounds().enumerate() {
            write!(f, "round {i}:")?;
            for x in r.recvs {
                write!(
                    f,
                    " recv<{} {:?}[{}+{}]",
                    x.peer, x.region.buf, x.region.off, x.region.len
                )?;
            }
            for x in r.sends {
                write!(
                    f,
                    " send>{} {:?}[{}+{}]",
                    x.peer, x.region.buf, x.region.off, x.region.len
                )?;
            }
            for l in r.locals {
                let name = if matches!(l, Local::Copy { .. }) {
                    "copy"
                } else {
                    "reduce"
                };
                let (Local::Copy { src, dst } | Local::Reduce { src, dst }) = *l;
                write!(
                    f,
                    " {name} {:?}[{}+{}]->{:?}[{}]",
                    src.buf, src.off, src.len, dst.buf, dst.off
                )?;
            }
            writeln!(f)?;
        }
        Ok(())
    }
}

/// Largest power of two not above `n` (`n >= 1`).
pub(crate) fn pof2_floor(n: usize) -> usize {
    1 << (usize::BITS - 1 - n.leading_zeros())
}

/// Lowest set bit of `v` (`v > 0`).
pub(crate) fn lowbit(v: usize) -> usize {
    v & v.wrapping_neg()
}

/// Byte offsets of `parts` near-equal element blocks of `count` elements:
/// `out[i]..out[i+1]` is block `i` (the first `count % parts` blocks get one more).
pub(crate) fn even_split(count: usize, elem_size: usize, parts: usize) -> Vec<usize> {
    let (base, extra) = (count / parts, count % parts);
    let mut offs = Vec::with_capacity(parts + 1);
    let mut at = 0;
    offs.push(0);
    for i in 0..parts {
        at += (base + usize::from(i < extra)) * elem_size;
        offs.push(at);
    }
    offs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounds_split_where_locals_end_and_where_asked() {
        let mut s = Schedule::new();
        let r = |off| Region::new(BufRef::Recv, off, 4);
        s.recv(1, r(0));
        s.send(1, r(4));
        s.copy(r(0), r(8));
        s.send(2, r(8)); // after a local: a new round
        s.next_round();
        s.next_round(); // empty rounds are not recorded
        s.recv(3, Region::new(BufRef::Recv, 0, 0)); // empty data transfers are dropped
        s.recv_signal(3); // but signals are kept
        s.next_round();
        assert_eq!(s.round_count(), 3);
        let r0 = s.round(0);
        assert_eq!((r0.recvs.len(), r0.sends.len(), r0.locals.len()), (1, 1, 1));
        assert_eq!(s.round(1).sends[0].peer, 2);
        assert_eq!(s.round(2).recvs[0].region.len, 0);
        assert!(s.validate(0, 12, 4).is_ok());
        assert!(s.validate(0, 11, 4).unwrap_err().contains("exceeds"));
    }

    #[test]
    fn validate_finds_conflicts() {
        let mut s = Schedule::new();
        s.recv(1, Region::new(BufRef::Recv, 0, 8));
        s.send(1, Region::new(BufRef::Recv, 4, 8));
        s.next_round();
        assert!(s.validate(0, 16, 1).unwrap_err().contains("overlaps"));
        let mut s = Schedule::new();
        let t = s.tmp(8);
        s.reduce(Region::new(t, 0, 6), Region::new(BufRef::Recv, 0, 6));
        s.next_round();
        assert!(s.validate(0, 8, 4).unwrap_err().contains("whole elements"));
        let mut s = Schedule::new();
        s.recv(0, Region::new(BufRef::Send, 0, 1));
        s.next_round();
        assert!(s.validate(4, 4, 1).unwrap_err().contains("send buffer"));
    }

    #[test]
    fn even_split_spreads_the_remainder() {
        assert_eq!(even_split(10, 8, 4), vec![0, 24, 48, 64, 80]);
        assert_eq!(even_split(2, 4, 4), vec![0, 4, 8, 8, 8]);
        assert_eq!(pof2_floor(1), 1);
        assert_eq!(pof2_floor(33), 32);
        assert_eq!(lowbit(12), 4);
    }
}
