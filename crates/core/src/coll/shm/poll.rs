//! Nonblocking and persistent runs of the fast path's calls through the slots and
//! through the staging areas: the same protocol as the blocking [`run`](super::run),
//! cut where that waits, so the progress engine moves it on (`coll::nbc`, `Step::Shm`).
//!
//! A call is one step (the slot variant) or two synchronisation steps per piece (the
//! staged variant, [`large`](super::large)), each step numbered like a blocking call.
//! A started call takes the numbers of all its steps at once (all members number
//! their calls on the communicator alike, blocking or not) and publishes each step as
//! soon as the protocol allows: once every member arrived at the previous number (its
//! slots are then free), and, for its first step, once this member read the results of
//! its own earlier nonblocking calls and (staged) the last pipelined Reduce freed the
//! staging areas. A step is done when the members it reads from have arrived and this
//! member has acted on it; the call is done after its last step. A blocking call waits
//! for this member's nonblocking ones first ([`ShmComm::begin`]), so steps publish in
//! number order and two parities stay enough. Only calls whose operation is predefined
//! come here (their reduction runs under the runtime lock).
//!
//! What does not change from one start to the next is worked out when the call is
//! planned (a persistent call's plan serves every `MPI_Start`): the members a step
//! waits for, and for a reduction through the slots into contiguous memory with a
//! one-pass kernel, the fold itself ([`Fixed`]: the kernel compiled for the operation
//! and type, the output and a scratch vector), so a start moves the data with no
//! dispatch and no allocation.

use super::{read, shape, staged_after, staged_before, staged_steps, Call, Kind, ShmComm};
use crate::error::{Error, Result};
use oxmpi_coll::decision::{self, ShmPath};
use oxmpi_coll::ops::Fold3;
use std::ops::Range;
use std::sync::atomic::Ordering;

/// A slot reduction resolved at planning: `out = x(lo) op ... op x(hi - 1)` over the
/// members' slots of `ranks`, in rank order.
struct Fixed {
    /// The contiguous input, if it is (else it is packed as the general path does).
    src: Option<*const u8>,
    /// Every member's slot data, per parity.
    data: [Vec<*const u8>; 2],
    /// The contiguous output (`bytes` bytes of user memory).
    out: *mut u8,
    bytes: usize,
    ranks: Range<usize>,
    fold: Fold3,
    /// Partial results alternate between it and the output (the kernel needs an output
    /// distinct from its operands).
    scratch: Vec<u8>,
}

impl Fixed {
    /// The fixed fold of `c` (a slot call), when it has one.
    fn of(c: &Call) -> Option<Fixed> {
        let (me, n) = (c.comm.me, c.comm.n);
        let ranks = match c.kind {
            Kind::Allreduce => 0..n,
            Kind::Reduce { root } if root == me => 0..n,
            Kind::Scan => 0..me + 1,
            Kind::Exscan if me > 0 => 0..me,
            _ => return None,
        };
        let out = c.output.as_ref()?;
        if out.layout.is_some() || c.bytes == 0 || out.bytes != c.bytes {
            return None;
        }
        let scratch = if ranks.len() > 2 {
            vec![0u8; c.bytes]
        } else {
            Vec::new()
        };
        let src = match &c.input {
            Some(i) if i.layout.is_none() && i.bytes == c.bytes => Some(i.addr as *const u8),
            _ => None,
        };
        let sc = &*c.comm;
        let data = [0u32, 1].map(|parity| {
            (0..n)
                .map(|k| sc.data(parity, k) as *const u8)
                .collect::<Vec<_>>()
        });
        Some(Fixed {
            src,
            data,
            out: out.addr as *mut u8,
            bytes: c.bytes,
            ranks,
            fold: c.reducer.fold3()?,
            scratch,
        })
    }

    /// Copies this member's contribution into its slot for call `num`; false when the
    /// input is not contiguous (the caller packs it).
    fn put(&self, sc: &ShmComm, num: u32) -> bool {
        let Some(src) = self.src else { return false };
        let dst = self.data[(num % 2) as usize][sc.me] as *mut u8;
        // SAFETY: the slot holds SLOT >= bytes bytes and nobody reads it before this
        // member publishes; the input is `bytes` bytes of user memory (checked at the
        // call, valid while the call is active).
        unsafe {
            if self.bytes == 8 {
                dst.cast::<u64>()
                    .write_unaligned(src.cast::<u64>().read_unaligned());
            } else {
                std::ptr::copy_nonoverlapping(src, dst, self.bytes);
            }
        }
        true
    }

    /// The fold of call `num` (every member of `ranks` has arrived at it).
    fn run(&mut self, num: u32) {
        let bytes = self.bytes;
        let data = &self.data[(num % 2) as usize];
        let slot = |k: usize| -> &[u8] {
            // SAFETY: member k wrote its slot before publishing its arrival, and nobody
            // rewrites this parity before everyone arrived at the next call; `bytes`
            // fits a slot (the decision table chose the slot variant).
            unsafe { std::slice::from_raw_parts(data[k], bytes) }
        };
        let (lo, hi) = (self.ranks.start, self.ranks.end);
        // SAFETY: the output is `bytes` bytes of user memory, valid while the call is
        // active (MPI contract), overlapping no slot and not the scratch vector.
        let out = unsafe { std::slice::from_raw_parts_mut(self.out, bytes) };
        if hi - lo == 1 {
            out.copy_from_slice(slot(lo));
            return;
        }
        // Fold i (1..=a) combines x(hi - 1 - i) with the previous partial result; it
        // writes the output when a - i is even, so the last one lands there.
        let a = hi - lo - 1;
        let mut prev = slot(hi - 1).as_ptr();
        for i in 1..=a {
            let dst = if (a - i) % 2 == 0 {
                self.out
            } else {
                self.scratch.as_mut_ptr()
            };
            // SAFETY: `prev` is a slot or the buffer the previous fold wrote (the other
            // one of output and scratch), `bytes` bytes, never `dst`.
            let (acc, dst) = unsafe {
                (
                    std::slice::from_raw_parts(prev, bytes),
                    std::slice::from_raw_parts_mut(dst, bytes),
                )
            };
            (self.fold)(slot(hi - 1 - i), acc, dst);
            prev = dst.as_ptr();
        }
    }
}

/// The arrivals a published step waits for, watched by `MPI_Wait` outside the lock
/// (`coll::nbc::wait_watch`) with the blocking calls' waiting policy.
pub(crate) struct Watch {
    comm: std::sync::Arc<ShmComm>,
    num: u32,
    from: usize,
    to: usize,
}

impl Watch {
    /// Waits until every member of the range arrived at the step (or later: another
    /// thread's progress may have finished the call and the members gone on to reuse
    /// its parity); the caller then moves the call on under the lock.
    pub(crate) fn wait(self) -> Result<()> {
        let sc = &*self.comm;
        let next = std::cell::Cell::new(self.from);
        sc.wait_until(|| {
            let mut k = next.get();
            while k < self.to
                && (k == sc.me
                    || sc
                        .flag(self.num, k)
                        .load(Ordering::SeqCst)
                        .wrapping_sub(self.num) as i32
                        >= 0)
            {
                k += 1;
            }
            next.set(k);
            k >= self.to
        })
    }
}

/// One nonblocking fast-path call.
pub(crate) struct Poll {
    call: Call,
    /// Steps of the call: 1 through the slots, else through the staging areas.
    steps: u32,
    /// Whether this member waits for all before reading, and the members it reads from.
    lazy: bool,
    wait: Range<usize>,
    /// The reading end resolved at planning, for the reductions that have one.
    fixed: Option<Fixed>,
    /// The number of its first step on the communicator (0 before the first start).
    num: u32,
    /// The step under way.
    at: u32,
    /// Its index among this member's nonblocking calls on the communicator.
    seq: u32,
    published: bool,
    /// The next member whose arrival is still to be seen.
    next: usize,
    /// The first error of a staged step (the remaining steps still run: the other
    /// members count on this one's arrivals).
    error: Option<Error>,
}

impl Poll {
    /// The call as a nonblocking one (a call [`pollable`](super::pollable) accepts);
    /// `plan`: resolve its fold now (a persistent call, started many times).
    pub(crate) fn new(call: Call, plan: bool) -> Result<Poll> {
        let c = &call;
        let steps = match decision::shm_path(c.kind.collective(), c.bytes, c.elem, c.comm.n) {
            ShmPath::Slots => 1,
            ShmPath::Staged => staged_steps(c)?.max(2),
            ShmPath::PipelinedReduce => return Err(super::internal("pipelined nonblocking call")),
        };
        let (lazy, wait) = if steps == 1 {
            shape(c.kind, c.comm.me, c.comm.n)
        } else {
            (false, 0..c.comm.n)
        };
        let fixed = if plan && steps == 1 {
            Fixed::of(c)
        } else {
            None
        };
        Ok(Poll {
            call,
            steps,
            lazy,
            wait,
            fixed,
            num: 0,
            at: 0,
            seq: 0,
            published: false,
            next: 0,
            error: None,
        })
    }

    fn staged(&self) -> bool {
        self.steps != 1
    }

    /// Starts the call (again, for a persistent request): takes its numbers.
    pub(crate) fn begin(&mut self) {
        let sc = &*self.call.comm;
        self.num = sc
            .calls
            .fetch_add(self.steps, Ordering::Relaxed)
            .wrapping_add(1);
        self.seq = sc.poll_begun.fetch_add(1, Ordering::Relaxed);
        self.at = 0;
        self.published = false;
        self.next = 0;
        self.error = None;
    }

    /// The number of the step under way.
    fn number(&self) -> u32 {
        self.num.wrapping_add(self.at)
    }

    /// Whether the members the step waits for have arrived (after publishing).
    fn arrived(&mut self) -> bool {
        let sc = &*self.call.comm;
        let wait = &self.wait;
        let num = self.number();
        let mut k = self.next.max(wait.start);
        while k < wait.end && (k == sc.me || sc.flag(num, k).load(Ordering::SeqCst) == num) {
            k += 1;
        }
        self.next = k;
        k >= wait.end
    }

    /// What a waiter for this call may watch without the lock: the arrivals its
    /// current step waits for, once it is published and while they are missing.
    pub(crate) fn watch(&mut self) -> Option<Watch> {
        if !self.published || self.arrived() {
            return None;
        }
        Some(Watch {
            comm: self.call.comm.clone(),
            num: self.number(),
            from: self.next.max(self.wait.start),
            to: self.wait.end,
        })
    }

    /// Whether a call to [`advance`](Self::advance) would move the call on (read by a
    /// waiter about to sleep).
    pub(crate) fn ready(&mut self) -> bool {
        if self.published {
            self.arrived()
        } else {
            self.may_publish()
        }
    }

    fn may_publish(&self) -> bool {
        let sc = &*self.call.comm;
        if self.at == 0 {
            if sc.poll_read.load(Ordering::Relaxed) != self.seq {
                return false;
            }
            if self.staged() {
                let (_, folded) = sc.piece_counters();
                if folded.load(Ordering::SeqCst) < sc.pieces.load(Ordering::Relaxed) {
                    return false;
                }
            }
        }
        let prev = self.number().wrapping_sub(1);
        prev == 0
            || prev.wrapping_sub(sc.known.load(Ordering::Relaxed)) as i32 <= 0
            || sc.all_arrived(prev)
    }

    /// Moves the call on: true once it is done (the results read); never waits.
    pub(crate) fn advance(&mut self) -> Result<bool> {
        let comm = std::sync::Arc::as_ptr(&self.call.comm);
        // SAFETY: the call holds its communicator's segment for as long as it lives,
        // and nothing below replaces `self.call`.
        let sc: &ShmComm = unsafe { &*comm };
        let lazy = self.lazy;
        loop {
            let num = self.number();
            if !self.published {
                if !self.may_publish() {
                    return Ok(false);
                }
                let prev = num.wrapping_sub(1);
                if prev != 0 && prev.wrapping_sub(sc.known.load(Ordering::Relaxed)) as i32 > 0 {
                    sc.known.store(prev, Ordering::Relaxed);
                }
                if self.staged() {
                    if let Err(e) = staged_before(&self.call, self.at) {
                        self.error.get_or_insert(e);
                    }
                } else if self.fixed.as_ref().is_some_and(|f| f.put(sc, num)) {
                    // Copied.
                } else if let Some(input) = &self.call.input {
                    // SAFETY: the slot holds SLOT bytes, enough for this call (the
                    // decision table chose the slot variant); the input holds its
                    // elements (checked at the call, MPI contract: valid until the
                    // request completes).
                    unsafe { input.pack_to(sc.data(num, sc.me)) };
                }
                self.published = true;
                self.next = 0;
                if sc.publish(num, lazy) {
                    self.next = sc.n;
                }
            }
            if !self.arrived() {
                return Ok(false);
            }
            if !lazy && self.wait.len() == sc.n {
                sc.known.store(num, Ordering::Relaxed);
            }
            let r = if self.staged() {
                staged_after(&self.call, self.at)
            } else if let Some(f) = &mut self.fixed {
                f.run(num);
                Ok(())
            } else {
                read(&self.call, num)
            };
            if let Err(e) = r {
                self.error.get_or_insert(e);
            }
            self.at += 1;
            self.published = false;
            if self.at >= self.steps {
                sc.poll_read.fetch_add(1, Ordering::Relaxed);
                return match self.error.take() {
                    None => Ok(true),
                    Some(e) => Err(e),
                };
            }
        }
    }
}
