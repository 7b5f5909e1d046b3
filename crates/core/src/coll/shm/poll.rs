//! Nonblocking and persistent runs of the fast path's one-step calls (the slot
//! variant): the same protocol as the blocking [`run`](super::run), cut where that
//! waits, so the progress engine moves it on (`coll::nbc`, `Step::Shm`).
//!
//! A started call takes its number at once (all members number their calls on the
//! communicator alike, blocking or not) and publishes its contribution as soon as the
//! protocol allows: once every member arrived at the previous call (its slots are then
//! free) and this member read the results of its own earlier nonblocking calls. It is
//! done when the members it reads from have arrived and it has read them. A blocking
//! call waits for this member's nonblocking ones first ([`ShmComm::begin`]), so calls
//! publish in number order and two parities stay enough. Only calls whose operation is
//! predefined come here (their reduction runs under the runtime lock).

use super::{read, shape, Call, ShmComm};
use crate::error::Result;
use std::sync::atomic::Ordering;

/// One nonblocking fast-path call.
pub(crate) struct Poll {
    call: Call,
    /// The call's number on the communicator (0 before the first start).
    num: u32,
    /// Its index among this member's nonblocking calls on the communicator.
    seq: u32,
    published: bool,
    /// The next member whose arrival is still to be seen.
    next: usize,
}

impl Poll {
    pub(crate) fn new(call: Call) -> Poll {
        Poll {
            call,
            num: 0,
            seq: 0,
            published: false,
            next: 0,
        }
    }

    /// Starts the call (again, for a persistent request): takes its number.
    pub(crate) fn begin(&mut self) {
        let sc = &*self.call.comm;
        self.num = sc.calls.fetch_add(1, Ordering::Relaxed).wrapping_add(1);
        self.seq = sc.poll_begun.fetch_add(1, Ordering::Relaxed);
        self.published = false;
        self.next = 0;
    }

    /// Whether the members this call waits for have arrived (after publishing).
    fn arrived(&mut self) -> bool {
        let sc = &*self.call.comm;
        let (_, wait) = shape(self.call.kind, sc.me, sc.n);
        let mut k = self.next.max(wait.start);
        while k < wait.end
            && (k == sc.me || sc.flag(self.num, k).load(Ordering::SeqCst) == self.num)
        {
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
        if sc.poll_read.load(Ordering::Relaxed) != self.seq {
            return false;
        }
        let prev = self.num.wrapping_sub(1);
        prev == 0
            || prev.wrapping_sub(sc.known.load(Ordering::Relaxed)) as i32 <= 0
            || sc.all_arrived(prev)
    }

    /// Moves the call on: true once it is done (the result read); never waits.
    pub(crate) fn advance(&mut self) -> Result<bool> {
        let comm = self.call.comm.clone();
        let sc: &ShmComm = &comm;
        let (lazy, wait) = shape(self.call.kind, sc.me, sc.n);
        if !self.published {
            if !self.may_publish() {
                return Ok(false);
            }
            let prev = self.num.wrapping_sub(1);
            if prev != 0 && prev.wrapping_sub(sc.known.load(Ordering::Relaxed)) as i32 > 0 {
                sc.known.store(prev, Ordering::Relaxed);
            }
            if let Some(input) = &self.call.input {
                // SAFETY: the slot holds SLOT bytes, enough for this call (the decision
                // table chose the slot variant); the input holds its elements (checked
                // at the call, MPI contract: valid until the request completes).
                unsafe { input.pack_to(sc.data(self.num, sc.me)) };
            }
            self.published = true;
            if sc.publish(self.num, lazy) {
                self.next = sc.n;
            }
        }
        if !self.arrived() {
            return Ok(false);
        }
        if !lazy && wait.len() == sc.n {
            sc.known.store(self.num, Ordering::Relaxed);
        }
        let r = read(&self.call, self.num);
        sc.poll_read.fetch_add(1, Ordering::Relaxed);
        r.map(|()| true)
    }
}
