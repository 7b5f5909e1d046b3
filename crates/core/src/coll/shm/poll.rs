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

use super::{read, shape, staged_after, staged_before, staged_steps, Call, ShmComm};
use crate::error::{Error, Result};
use oxmpi_coll::decision::{self, ShmPath};
use std::sync::atomic::Ordering;

/// One nonblocking fast-path call.
pub(crate) struct Poll {
    call: Call,
    /// Steps of the call: 1 through the slots, else through the staging areas.
    steps: u32,
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
    /// The call as a nonblocking one (a call [`pollable`](super::pollable) accepts).
    pub(crate) fn new(call: Call) -> Result<Poll> {
        let c = &call;
        let steps = match decision::shm_path(c.kind.collective(), c.bytes, c.elem, c.comm.n) {
            ShmPath::Slots => 1,
            ShmPath::Staged => staged_steps(c)?.max(2),
            ShmPath::PipelinedReduce => return Err(super::internal("pipelined nonblocking call")),
        };
        Ok(Poll {
            call,
            steps,
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

    /// Whether this member waits for all before reading, and the members it reads from.
    fn shape(&self) -> (bool, std::ops::Range<usize>) {
        let sc = &*self.call.comm;
        if self.staged() {
            (false, 0..sc.n)
        } else {
            shape(self.call.kind, sc.me, sc.n)
        }
    }

    /// Whether the members the step waits for have arrived (after publishing).
    fn arrived(&mut self) -> bool {
        let sc = &*self.call.comm;
        let (_, wait) = self.shape();
        let num = self.number();
        let mut k = self.next.max(wait.start);
        while k < wait.end && (k == sc.me || sc.flag(num, k).load(Ordering::SeqCst) == num) {
            k += 1;
        }
        self.next = k;
        k >= wait.end
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
        let comm = self.call.comm.clone();
        let sc: &ShmComm = &comm;
        let (lazy, wait) = self.shape();
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
            if !lazy && wait.len() == sc.n {
                sc.known.store(num, Ordering::Relaxed);
            }
            let r = if self.staged() {
                staged_after(&self.call, self.at)
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
