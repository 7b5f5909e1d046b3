//! Context ids: which are free at this process, and the agreement on a new one.
//!
//! A communicator owns the pair (`ctx`, `ctx + 1`) — point-to-point and collective
//! traffic — so ids are handed out in slots of two: slot `s` is ids `2s, 2s+1`. Slot 0
//! is `MPI_COMM_WORLD`, slot 1 `MPI_COMM_SELF`. To create a communicator, every member
//! contributes a bitmask of the slots it has free; the lowest slot free at all members
//! wins (the AND of the masks). Two communicators may share a slot only when no
//! process belongs to both, so an id names one communicator at every process that
//! can send or receive on it.
//!
//! An agreement in progress holds the slots it offered ([`Claims`]) until it ends, so
//! no other agreement at this process offers them meanwhile: a blocking one waits for
//! its exchange while progress moves nonblocking ones (`MPI_Comm_idup`, see
//! `crate::idup`) forward, and those may be several at once. An agreement whose AND
//! comes out empty because some member held slots back tries again. One that decided
//! keeps the chosen slot held ([`Claims::narrow`]) until its communicator is installed,
//! so no other thread's agreement offers it in between.
//!
//! A freed communicator's slot comes back only once nothing can still match on it:
//! its table entry stays "retired" while requests started on it exist or messages for
//! it wait in the unexpected queue (see `CommTable::retire` and [`sweep`]).

use crate::device::matching::Spec;
use crate::device::Device;
use crate::error::{err, Result};
use crate::runtime::Runtime;
use crate::{ErrorClass, ANY_SOURCE, ANY_TAG};

/// Number of context slots (communicators that can exist at once at one process).
pub const SLOTS: usize = 8192;
/// Bytes of an encoded free-slot mask.
pub const MASK_BYTES: usize = SLOTS / 8;

/// A set of context slots, one bit each (set = free).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mask {
    words: Vec<u64>,
}

impl Mask {
    /// Every slot free.
    pub fn full() -> Mask {
        Mask {
            words: vec![u64::MAX; SLOTS / 64],
        }
    }

    pub fn clear(&mut self, slot: usize) {
        if slot < SLOTS {
            self.words[slot / 64] &= !(1u64 << (slot % 64));
        }
    }

    pub fn is_free(&self, slot: usize) -> bool {
        slot < SLOTS && self.words[slot / 64] & (1u64 << (slot % 64)) != 0
    }

    /// No slot free.
    pub fn empty() -> Mask {
        Mask {
            words: vec![0; SLOTS / 64],
        }
    }

    pub fn is_empty(&self) -> bool {
        self.words.iter().all(|w| *w == 0)
    }

    /// Takes away the slots of `other`.
    pub fn remove(&mut self, other: &Mask) {
        for (a, b) in self.words.iter_mut().zip(&other.words) {
            *a &= !*b;
        }
    }

    /// Adds the slots of `other`.
    pub fn or(&mut self, other: &Mask) {
        for (a, b) in self.words.iter_mut().zip(&other.words) {
            *a |= *b;
        }
    }

    /// Keeps only the slots free in both.
    pub fn and(&mut self, other: &Mask) {
        for (a, b) in self.words.iter_mut().zip(&other.words) {
            *a &= *b;
        }
    }

    /// The lowest free slot.
    pub fn lowest(&self) -> Option<usize> {
        self.words
            .iter()
            .enumerate()
            .find(|(_, w)| **w != 0)
            .map(|(i, w)| i * 64 + w.trailing_zeros() as usize)
    }

    /// The highest slot not free.
    pub fn highest_used(&self) -> Option<usize> {
        self.words
            .iter()
            .enumerate()
            .rev()
            .find(|(_, w)| **w != u64::MAX)
            .map(|(i, w)| i * 64 + 63 - (!*w).leading_zeros() as usize)
    }

    pub fn encode(&self) -> Vec<u8> {
        self.words.iter().flat_map(|w| w.to_le_bytes()).collect()
    }

    /// Decodes a mask received from a peer; `None` when the length is wrong.
    pub fn decode(b: &[u8]) -> Option<Mask> {
        if b.len() != MASK_BYTES {
            return None;
        }
        Some(Mask {
            words: b
                .chunks_exact(8)
                .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")))
                .collect(),
        })
    }
}

/// The context id (p2p) of a slot.
pub fn ctx_of_slot(slot: usize) -> u32 {
    (slot * 2) as u32
}

/// Releases retired communicators whose traffic has drained, then returns the slots
/// free at this process and held by no agreement in progress.
pub fn local_mask(rt: &mut Runtime) -> Mask {
    let mut m = unclaimed_mask(rt);
    m.remove(&rt.comms.claims.held());
    m
}

/// The slots free at this process, held or not.
fn unclaimed_mask(rt: &mut Runtime) -> Mask {
    sweep(rt);
    let mut m = Mask::full();
    // The slots of MPI_COMM_WORLD and MPI_COMM_SELF stay theirs while the world model
    // is not running (a process that uses only sessions, or before MPI_Init).
    m.clear(0);
    m.clear(1);
    for ctx in rt.comms.contexts_in_use() {
        m.clear(ctx as usize / 2);
    }
    m
}

/// Identifies a hold in [`Claims`].
pub type HoldId = u64;

/// Key of a nonblocking agreement: (parent's context id, collective sequence number of
/// the call on the parent) — the same at every member.
pub type AgreementKey = (u32, u32);

/// The slots that agreements in progress at this process offered, and the nonblocking
/// agreements in progress.
///
/// Every agreement first runs a round in which nobody offers anything: once it ends,
/// every member has joined, so the later rounds wait on nothing but progress, and a
/// hold never waits on what the program does next. Blocking agreements past that first
/// round go first: nonblocking ones offer nothing meanwhile. Among nonblocking ones past
/// it, only the one with the lowest key offers.
#[derive(Default)]
pub struct Claims {
    holds: Vec<(HoldId, Mask)>,
    next: HoldId,
    /// (key, past its first round).
    keys: Vec<(AgreementKey, bool)>,
    /// Blocking agreements past their first round.
    blocking: u32,
    /// Counts changes of the above: an agreement that only waits for another to go
    /// first compares it to know when to try again (see `crate::idup`).
    generation: u64,
}

impl Claims {
    /// Every slot some agreement holds.
    fn held(&self) -> Mask {
        let mut m = Mask::empty();
        for (_, h) in &self.holds {
            m.or(h);
        }
        m
    }

    /// True while some agreement holds slots.
    pub fn holding(&self) -> bool {
        self.holds.iter().any(|(_, m)| !m.is_empty())
    }

    /// Gives back the slots of hold `id`.
    pub fn release(&mut self, id: HoldId) {
        let n = self.holds.len();
        self.holds.retain(|(i, _)| *i != id);
        if self.holds.len() != n {
            self.generation += 1;
        }
    }

    /// Shrinks hold `id` to slot `slot` alone: the slot an agreement decided on, held
    /// until its communicator is installed.
    pub fn narrow(&mut self, id: HoldId, slot: usize) {
        for (i, m) in &mut self.holds {
            if *i == id {
                let mut only = Mask::empty();
                if slot < SLOTS {
                    only.words[slot / 64] |= 1u64 << (slot % 64);
                }
                *m = only;
                self.generation += 1;
            }
        }
    }

    /// Changes with every change of the holds, the agreements in progress and the
    /// blocking ones: what decides whether an agreement may offer, and what.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// Notes a nonblocking agreement in progress.
    pub fn enter(&mut self, key: AgreementKey) {
        self.keys.push((key, false));
        self.generation += 1;
    }

    /// Nonblocking agreement `key` ended its first round.
    pub fn joined(&mut self, key: AgreementKey) {
        for k in &mut self.keys {
            if k.0 == key {
                k.1 = true;
            }
        }
        self.generation += 1;
    }

    /// The nonblocking agreement `key` ended.
    pub fn leave(&mut self, key: AgreementKey) {
        self.keys.retain(|k| k.0 != key);
        self.generation += 1;
    }

    /// True when nonblocking agreement `key` may offer slots in its next round.
    pub fn may_offer(&self, key: AgreementKey) -> bool {
        self.blocking == 0 && self.keys.iter().filter(|k| k.1).map(|k| k.0).min() == Some(key)
    }

    /// A blocking agreement ended its first round (`true`) or ended (`false`).
    pub fn blocking(&mut self, on: bool) {
        if on {
            self.blocking += 1;
        } else {
            self.blocking = self.blocking.saturating_sub(1);
        }
        self.generation += 1;
    }
}

/// What one member offers in one round of an agreement.
pub struct Offer {
    pub mask: Mask,
    /// The member held slots back (others' holds, or it offered nothing because another
    /// agreement goes first): an empty AND is then no proof that no slot is free.
    pub constrained: bool,
    /// The hold on `mask`, to release when the round ends.
    pub hold: HoldId,
}

/// Offers the free slots not held by others (or none, when `take` is false) and holds
/// them until [`Claims::release`].
pub fn offer(rt: &mut Runtime, take: bool) -> Offer {
    let base = unclaimed_mask(rt);
    let mut mask = base.clone();
    mask.remove(&rt.comms.claims.held());
    let constrained = !take || mask != base;
    if !take {
        mask = Mask::empty();
    }
    let c = &mut rt.comms.claims;
    let hold = c.next;
    c.next += 1;
    c.holds.push((hold, mask.clone()));
    c.generation += 1;
    Offer {
        mask,
        constrained,
        hold,
    }
}

/// What the AND of a round's offers gives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decision {
    Ctx(u32),
    /// Nothing in common, but some member held slots back: try again.
    Retry,
    /// No slot free at every member.
    Exhausted,
}

impl Decision {
    pub fn of(m: &Mask, constrained: bool) -> Decision {
        match m.lowest() {
            Some(s) => Decision::Ctx(ctx_of_slot(s)),
            None if constrained => Decision::Retry,
            None => Decision::Exhausted,
        }
    }

    /// On the wire: the id, or a code no id takes (ids are even).
    pub fn encode(self) -> u32 {
        match self {
            Decision::Ctx(c) => c,
            Decision::Retry => u32::MAX,
            Decision::Exhausted => u32::MAX - 2,
        }
    }

    pub fn decode(v: u32) -> Decision {
        match v {
            u32::MAX => Decision::Retry,
            x if x == u32::MAX - 2 => Decision::Exhausted,
            c => Decision::Ctx(c),
        }
    }
}

/// The error of an exhausted agreement.
pub fn exhausted() -> crate::error::Error {
    crate::error::Error::new(
        ErrorClass::Other,
        format!("no context id is free at every member: too many communicators exist (at most {SLOTS} per process)"),
    )
}

/// This process's `IMPI_max_cid` (IMPI 4.3.1): the collective context id of the
/// highest pair in use here (retired ones included), which chapter 4's agreement on a
/// new id must exceed. It falls again when communicators are freed, as the advice of
/// 4.5 allows.
pub fn max_cid(rt: &mut Runtime) -> u64 {
    let slot = local_mask(rt).highest_used().unwrap_or(0);
    ctx_of_slot(slot) as u64 + 1
}

/// The id for a new communicator from the AND of its members' masks.
pub fn choose(m: &Mask) -> Result<u32> {
    match m.lowest() {
        Some(s) => Ok(ctx_of_slot(s)),
        None => err(
            ErrorClass::Other,
            format!("no context id is free at every member: too many communicators exist (at most {SLOTS} per process)"),
        ),
    }
}

/// True while requests or unexpected messages may still use `ctx` or `ctx + 1`, or
/// a request started on communicator `owner` exists.
fn busy(dev: &Device, owner: u32, ctx: u32) -> bool {
    let on = |c: u32| c == ctx || c == ctx + 1;
    for c in [ctx, ctx + 1] {
        let spec = Spec {
            ctx: c,
            src: ANY_SOURCE,
            tag: ANY_TAG,
        };
        if dev.probe(spec).is_some() {
            return true;
        }
    }
    let live = dev.live_requests();
    let mut found = 0;
    let mut id = 0u32;
    while found < live {
        if let Some(r) = dev.request(id) {
            found += 1;
            if r.owner == owner {
                return true;
            }
            if r.uses_context(on) {
                return true;
            }
        }
        id = id.wrapping_add(1);
        if id == 0 {
            break;
        }
    }
    false
}

/// Frees the table entries (and so the context slots) of retired communicators whose
/// traffic has drained.
pub fn sweep(rt: &mut Runtime) {
    // Buffered copies and compound requests that are done release their requests.
    crate::p2p_mpi4::advance(rt);
    let retired: Vec<(u32, u32)> = rt.comms.retired().collect();
    for (id, ctx) in retired {
        if !busy(&rt.device, id, ctx) {
            rt.comms.release(id);
            // A later communicator on this context starts its collectives afresh.
            rt.coll.forget_context(ctx);
        }
    }
}

/// Removes communicator `id` at once (one that carried no traffic yet: a creation
/// undone), forgetting its context's collective state like [`sweep`] does.
pub fn remove_now(rt: &mut Runtime, id: u32) {
    if let Some(c) = rt.comms.remove(id) {
        rt.coll.forget_context(c.ctx);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;
    use crate::device::{Peer, RecvArgs, SendArgs, SendMode};
    use crate::transport::Route;

    fn self_device() -> Device {
        let peers = vec![Peer {
            route: Route::SelfLoop,
            pid: std::process::id() as i32,
        }];
        Device::new(
            0,
            peers,
            crate::runtime::device_config(&Config::default()),
            None,
            vec![0],
            false,
        )
    }

    #[test]
    fn retired_contexts_stay_busy_while_traffic_remains() {
        let mut dev = self_device();
        assert!(!busy(&dev, 7, 4));
        // A posted receive on the collective context keeps the pair busy.
        let mut buf = [0u8; 4];
        let r = dev.irecv(RecvArgs {
            spec: Spec {
                ctx: 5,
                src: 0,
                tag: 1,
            },
            buf: buf.as_mut_ptr(),
            cap: 4,
        });
        assert!(busy(&dev, 7, 4));
        assert!(!busy(&dev, 7, 6));
        // A message that arrives for it completes the receive; finishing it frees
        // the context.
        let data = [1u8, 2, 3, 4];
        let s = dev.isend(SendArgs {
            dest: 0,
            ctx: 5,
            src_rank: 0,
            tag: 1,
            buf: data.as_ptr(),
            len: 4,
            mode: SendMode::Standard,
        });
        for _ in 0..100 {
            dev.progress().expect("no peer fails");
        }
        assert!(dev.request(r).is_some_and(|q| q.is_complete()));
        dev.finish(r);
        dev.finish(s);
        assert!(!busy(&dev, 7, 4));
        assert_eq!(buf, data);
        // An unexpected message keeps its context busy until received.
        let s = dev.isend(SendArgs {
            dest: 0,
            ctx: 4,
            src_rank: 0,
            tag: 9,
            buf: data.as_ptr(),
            len: 4,
            mode: SendMode::Standard,
        });
        for _ in 0..100 {
            dev.progress().expect("no peer fails");
        }
        dev.finish(s);
        assert!(busy(&dev, 7, 4));
        // A request owned by the communicator keeps it busy whatever its context.
        let mut dev = self_device();
        let r = dev.irecv(RecvArgs {
            spec: Spec {
                ctx: 40,
                src: 0,
                tag: 1,
            },
            buf: buf.as_mut_ptr(),
            cap: 4,
        });
        dev.request_mut(r).expect("exists").owner = 7;
        assert!(busy(&dev, 7, 4));
        assert!(!busy(&dev, 8, 4));
    }

    #[test]
    fn mask_and_lowest() {
        let mut a = Mask::full();
        a.clear(0);
        a.clear(1);
        let mut b = Mask::full();
        b.clear(2);
        b.clear(64);
        a.and(&b);
        assert_eq!(a.lowest(), Some(3));
        assert_eq!(a.highest_used(), Some(64));
        assert_eq!(Mask::full().highest_used(), None);
        assert!(!a.is_free(64));
        assert!(a.is_free(65));
        let d = Mask::decode(&a.encode()).unwrap();
        assert_eq!(d, a);
        assert!(Mask::decode(&[0; 3]).is_none());
        let mut none = Mask::full();
        for s in 0..SLOTS {
            none.clear(s);
        }
        assert_eq!(none.lowest(), None);
        assert_eq!(choose(&none).unwrap_err().class, ErrorClass::Other);
        assert_eq!(choose(&a).unwrap(), 6);
    }

    #[test]
    fn claims_generation_moves_with_what_decides_an_offer() {
        let mut c = Claims::default();
        let (a, b) = ((4, 0), (2, 1));
        let g = c.generation();
        c.enter(a);
        c.enter(b);
        assert!(c.generation() > g);
        // Nobody offers before joining; then the lowest joined key goes first.
        assert!(!c.may_offer(a));
        c.joined(a);
        assert!(c.may_offer(a));
        c.joined(b);
        assert!(!c.may_offer(a) && c.may_offer(b));
        // A blocking agreement past its first round goes before both.
        c.blocking(true);
        assert!(!c.may_offer(b));
        let g = c.generation();
        c.blocking(false);
        assert!(c.generation() > g && c.may_offer(b));
        // The one waiting learns that the other went from the generation.
        let g = c.generation();
        c.leave(b);
        assert!(c.generation() > g && c.may_offer(a));
        // Releasing a hold that is not there changes nothing.
        let g = c.generation();
        c.release(12345);
        assert_eq!(c.generation(), g);
    }
}
