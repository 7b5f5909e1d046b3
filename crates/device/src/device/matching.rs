//! The matching engine: posted receives and unexpected messages, matched by envelope
//! (context id, source, tag) in MPI order. Plain data, no I/O.
//!
//! Ordering rules kept here:
//! - an arriving message matches the earliest-posted receive that accepts it, whether
//!   that receive names the source or uses `MPI_ANY_SOURCE`;
//! - a new receive matches the earliest-arrived unexpected message it accepts;
//! - messages from one source in one context are matched in arrival order, which the
//!   transports make equal to send order (non-overtaking).

use std::collections::VecDeque;

/// `MPI_ANY_SOURCE`.
pub const ANY_SOURCE: i32 = -2;
/// `MPI_ANY_TAG`.
pub const ANY_TAG: i32 = -1;
/// `MPI_PROC_NULL`: the source of the status of an operation with no partner.
pub const PROC_NULL: i32 = -1;

/// The envelope of a message that arrived.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Envelope {
    pub ctx: u32,
    pub src: i32,
    pub tag: i32,
}

/// What a receive accepts: a context, a source or `ANY_SOURCE`, a tag or `ANY_TAG`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Spec {
    pub ctx: u32,
    pub src: i32,
    pub tag: i32,
}

impl Spec {
    fn tag_ok(&self, tag: i32) -> bool {
        self.tag == ANY_TAG || self.tag == tag
    }
}

struct Entry<T> {
    seq: u64,
    tag: i32,
    item: T,
}

struct Context<P, U> {
    posted_src: Vec<VecDeque<Entry<P>>>,
    posted_any: VecDeque<Entry<(i32, P)>>,
    unexpected: Vec<VecDeque<Entry<U>>>,
    unexpected_count: usize,
}

impl<P, U> Context<P, U> {
    fn new() -> Self {
        Context {
            posted_src: Vec::new(),
            posted_any: VecDeque::new(),
            unexpected: Vec::new(),
            unexpected_count: 0,
        }
    }
}

impl<P, U> Context<P, U> {
    /// [`Matcher::take_unexpected`] for an `MPI_ANY_SOURCE` receive: the earliest
    /// acceptable message over all sources, by sequence number (out of line).
    #[inline(never)]
    fn take_unexpected_any(&mut self, spec: Spec) -> Option<(Envelope, U)> {
        let mut best: Option<(u64, usize, usize)> = None;
        for (s, q) in self.unexpected.iter().enumerate() {
            if let Some(i) = q.iter().position(|e| spec.tag_ok(e.tag)) {
                if best.is_none_or(|(seq, _, _)| q[i].seq < seq) {
                    best = Some((q[i].seq, s, i));
                }
            }
        }
        let (_, src, idx) = best?;
        let e = take_at(&mut self.unexpected[src], idx)?;
        self.unexpected_count -= 1;
        let env = Envelope {
            ctx: spec.ctx,
            src: src as i32,
            tag: e.tag,
        };
        Some((env, e.item))
    }

    /// [`Matcher::take_posted`] with wildcard-source receives posted: the earlier by
    /// sequence number of the source's and the wildcard list's first acceptable entry.
    /// Kept out of line, off the path of communicators without wildcards.
    #[inline(never)]
    fn take_posted_ordered(&mut self, env: Envelope) -> Option<P> {
        let ok = |spec_tag: i32| spec_tag == ANY_TAG || spec_tag == env.tag;
        let by_src = self
            .posted_src
            .get(env.src as usize)
            .and_then(|q| q.iter().position(|e| ok(e.tag)).map(|i| (q[i].seq, i)));
        let any = self
            .posted_any
            .iter()
            .position(|e| ok(e.tag))
            .map(|i| (self.posted_any[i].seq, i));
        match (by_src, any) {
            (Some((s1, i)), Some((s2, _))) if s1 < s2 => {
                take_at(&mut self.posted_src[env.src as usize], i).map(|e| e.item)
            }
            (Some((_, i)), None) => {
                take_at(&mut self.posted_src[env.src as usize], i).map(|e| e.item)
            }
            (_, Some((_, j))) => take_at(&mut self.posted_any, j).map(|e| e.item.1),
            (None, None) => None,
        }
    }
}

fn slot<T>(v: &mut Vec<VecDeque<T>>, src: usize) -> &mut VecDeque<T> {
    if v.len() <= src {
        v.resize_with(src + 1, VecDeque::new);
    }
    &mut v[src]
}

/// True when the per-source queue of `src` is absent or empty.
#[inline]
fn none_from<T>(v: &[VecDeque<T>], src: i32) -> bool {
    v.get(src as usize).is_none_or(|q| q.is_empty())
}

/// Removes element `i` of `q`; the common case (the first) without a general remove.
#[inline]
fn take_at<T>(q: &mut VecDeque<T>, i: usize) -> Option<T> {
    if i == 0 {
        q.pop_front()
    } else {
        q.remove(i)
    }
}

/// What stands before a new receive from one source in a context
/// ([`Matcher::ahead_of`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Ahead {
    /// A receive naming the source is posted.
    pub posted_from: bool,
    /// An `MPI_ANY_SOURCE` receive is posted (never on a communicator asserting
    /// `mpi_assert_no_any_source`).
    pub posted_any: bool,
    /// Some unexpected message of the context is stored.
    pub stored: bool,
}

impl Ahead {
    /// The receive may take the source's next message straight from the transport
    /// once no stored message matched it (see [`Matcher::may_take_next`]).
    #[inline]
    pub fn may_take_next(&self, overtaking: bool) -> bool {
        !self.posted_any && (overtaking || !self.posted_from)
    }
}

/// Posted receives carry `P` (a request id), unexpected messages carry `U`.
pub struct Matcher<P, U> {
    contexts: Vec<Option<Box<Context<P, U>>>>,
    seq: u64,
}

impl<P, U> Default for Matcher<P, U> {
    fn default() -> Self {
        Self::new()
    }
}

impl<P, U> Matcher<P, U> {
    pub fn new() -> Self {
        Matcher {
            contexts: Vec::new(),
            seq: 0,
        }
    }

    fn ctx_mut(&mut self, ctx: u32) -> &mut Context<P, U> {
        let i = ctx as usize;
        if self.contexts.len() <= i {
            self.contexts.resize_with(i + 1, || None);
        }
        self.contexts[i].get_or_insert_with(|| Box::new(Context::new()))
    }

    fn ctx_ref(&self, ctx: u32) -> Option<&Context<P, U>> {
        self.contexts.get(ctx as usize).and_then(|c| c.as_deref())
    }

    fn next_seq(&mut self) -> u64 {
        self.seq += 1;
        self.seq
    }

    /// Removes and returns the earliest unexpected message that `spec` accepts.
    pub fn take_unexpected(&mut self, spec: Spec) -> Option<(Envelope, U)> {
        let c = self.contexts.get_mut(spec.ctx as usize)?.as_deref_mut()?;
        if c.unexpected_count == 0 {
            return None;
        }
        if spec.src == ANY_SOURCE {
            return c.take_unexpected_any(spec);
        }
        // The common case: the source's earliest message is the one.
        let q = c.unexpected.get_mut(spec.src as usize)?;
        let i = if spec.tag_ok(q.front()?.tag) {
            0
        } else {
            q.iter().position(|e| spec.tag_ok(e.tag))?
        };
        let e = take_at(q, i)?;
        c.unexpected_count -= 1;
        let env = Envelope {
            ctx: spec.ctx,
            src: spec.src,
            tag: e.tag,
        };
        Some((env, e.item))
    }

    /// Looks at (without removing) the earliest unexpected message `spec` accepts.
    pub fn peek_unexpected(&self, spec: Spec) -> Option<(Envelope, &U)> {
        let c = self.ctx_ref(spec.ctx)?;
        let mut best: Option<(u64, usize, &Entry<U>)> = None;
        let range = if spec.src == ANY_SOURCE {
            0..c.unexpected.len()
        } else {
            let s = spec.src as usize;
            s..(s + 1).min(c.unexpected.len()).max(s)
        };
        for s in range {
            if let Some(e) = c.unexpected[s].iter().find(|e| spec.tag_ok(e.tag)) {
                if best.is_none_or(|(seq, _, _)| e.seq < seq) {
                    best = Some((e.seq, s, e));
                }
            }
        }
        best.map(|(_, s, e)| {
            (
                Envelope {
                    ctx: spec.ctx,
                    src: s as i32,
                    tag: e.tag,
                },
                &e.item,
            )
        })
    }

    /// Like [`Matcher::peek_unexpected`], with the message open for marking.
    pub fn peek_unexpected_mut(&mut self, spec: Spec) -> Option<(Envelope, &mut U)> {
        let (env, _) = self.peek_unexpected(spec)?;
        let c = self.contexts.get_mut(spec.ctx as usize)?.as_deref_mut()?;
        let e = c.unexpected[env.src as usize]
            .iter_mut()
            .find(|e| spec.tag_ok(e.tag))?;
        Some((env, &mut e.item))
    }

    /// True when nothing stands between a new receive for `src` (a rank, not
    /// `ANY_SOURCE`) in `ctx` and the next message from `src`: no receive posted for that
    /// source or for any source, and no unexpected message from it. Such a receive may
    /// take the next message from `src` straight from the transport if it accepts it.
    #[inline]
    pub fn clear_for(&self, ctx: u32, src: i32) -> bool {
        let Some(c) = self.ctx_ref(ctx) else {
            return true;
        };
        c.posted_any.is_empty() && none_from(&c.posted_src, src) && none_from(&c.unexpected, src)
    }

    /// True when a new receive for `src` (a rank) in `ctx` that matched no stored message
    /// may take the next message from `src` straight from the transport: no receive for
    /// any source is posted, nor (unless `overtaking`: `mpi_assert_allow_overtaking`
    /// lets later receives match first) one for `src`. Stored messages from `src` the
    /// receive does not accept do not stand in its way.
    #[inline]
    pub fn may_take_next(&self, ctx: u32, src: i32, overtaking: bool) -> bool {
        let Some(c) = self.ctx_ref(ctx) else {
            return true;
        };
        c.posted_any.is_empty() && (overtaking || none_from(&c.posted_src, src))
    }

    /// What a new receive for `src` (a rank) in `ctx` finds before it, in one look-up of
    /// the context: the three facts [`Matcher::none_posted_from`],
    /// [`Matcher::may_take_next`] and [`Matcher::take_unexpected`] each look up.
    #[inline]
    pub fn ahead_of(&self, ctx: u32, src: i32) -> Ahead {
        match self.ctx_ref(ctx) {
            None => Ahead::default(),
            Some(c) => Ahead {
                posted_from: !none_from(&c.posted_src, src),
                posted_any: !c.posted_any.is_empty(),
                stored: c.unexpected_count > 0,
            },
        }
    }

    /// True when no receive naming `src` is posted in `ctx`.
    #[inline]
    pub fn none_posted_from(&self, ctx: u32, src: i32) -> bool {
        self.ctx_ref(ctx)
            .is_none_or(|c| none_from(&c.posted_src, src))
    }

    /// Records a receive that found no unexpected message.
    pub fn post(&mut self, spec: Spec, item: P) {
        let seq = self.next_seq();
        let c = self.ctx_mut(spec.ctx);
        if spec.src == ANY_SOURCE {
            c.posted_any.push_back(Entry {
                seq,
                tag: spec.tag,
                item: (spec.src, item),
            });
        } else {
            slot(&mut c.posted_src, spec.src as usize).push_back(Entry {
                seq,
                tag: spec.tag,
                item,
            });
        }
    }

    /// Removes and returns the earliest posted receive that accepts `env`.
    pub fn take_posted(&mut self, env: Envelope) -> Option<P> {
        let c = self.contexts.get_mut(env.ctx as usize)?.as_deref_mut()?;
        if !c.posted_any.is_empty() {
            return c.take_posted_ordered(env);
        }
        // No wildcard-source receive to order against (always so on a communicator that
        // asserts mpi_assert_no_any_source): the source's queue alone decides, and its
        // earliest receive is usually the one.
        let ok = |spec_tag: i32| spec_tag == ANY_TAG || spec_tag == env.tag;
        let q = c.posted_src.get_mut(env.src as usize)?;
        let i = if ok(q.front()?.tag) {
            0
        } else {
            q.iter().position(|e| ok(e.tag))?
        };
        take_at(q, i).map(|e| e.item)
    }

    /// Stores a message no posted receive accepted.
    pub fn push_unexpected(&mut self, env: Envelope, item: U) {
        let seq = self.next_seq();
        let c = self.ctx_mut(env.ctx);
        slot(&mut c.unexpected, env.src as usize).push_back(Entry {
            seq,
            tag: env.tag,
            item,
        });
        c.unexpected_count += 1;
    }

    /// Removes a posted receive (cancel). Returns true if it was still posted.
    pub fn remove_posted(&mut self, spec: Spec, is_it: impl Fn(&P) -> bool) -> bool {
        let Some(c) = self
            .contexts
            .get_mut(spec.ctx as usize)
            .and_then(|c| c.as_deref_mut())
        else {
            return false;
        };
        if spec.src == ANY_SOURCE {
            if let Some(i) = c.posted_any.iter().position(|e| is_it(&e.item.1)) {
                c.posted_any.remove(i);
                return true;
            }
        } else if let Some(q) = c.posted_src.get_mut(spec.src as usize) {
            if let Some(i) = q.iter().position(|e| is_it(&e.item)) {
                q.remove(i);
                return true;
            }
        }
        false
    }

    /// Removes the first unexpected message from `src` in `ctx` that `is_it` selects
    /// (remote cancel of a send).
    pub fn remove_unexpected(
        &mut self,
        ctx: u32,
        src: i32,
        is_it: impl Fn(&U) -> bool,
    ) -> Option<U> {
        let c = self.contexts.get_mut(ctx as usize)?.as_deref_mut()?;
        let q = c.unexpected.get_mut(src as usize)?;
        let i = q.iter().position(|e| is_it(&e.item))?;
        c.unexpected_count -= 1;
        q.remove(i).map(|e| e.item)
    }

    /// Unexpected messages held in all contexts (the tools interface's queue length;
    /// computed on read, nothing is counted on the matching path).
    pub fn unexpected_len(&self) -> usize {
        self.contexts
            .iter()
            .flatten()
            .map(|c| c.unexpected_count)
            .sum()
    }

    /// Receives posted and not yet matched in all contexts (computed on read).
    pub fn posted_len(&self) -> usize {
        self.contexts
            .iter()
            .flatten()
            .map(|c| c.posted_any.len() + c.posted_src.iter().map(|q| q.len()).sum::<usize>())
            .sum()
    }

    /// Number of unexpected messages held in `ctx` (what the tests check).
    #[cfg(test)]
    fn unexpected_in(&self, ctx: u32) -> usize {
        self.ctx_ref(ctx).map_or(0, |c| c.unexpected_count)
    }

    /// True when nothing is posted or unexpected in `ctx` (what the tests check).
    #[cfg(test)]
    fn context_idle(&self, ctx: u32) -> bool {
        self.ctx_ref(ctx).is_none_or(|c| {
            c.unexpected_count == 0
                && c.posted_any.is_empty()
                && c.posted_src.iter().all(|q| q.is_empty())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    type M = Matcher<u32, u32>;

    fn spec(src: i32, tag: i32) -> Spec {
        Spec { ctx: 0, src, tag }
    }
    fn env(src: i32, tag: i32) -> Envelope {
        Envelope { ctx: 0, src, tag }
    }

    #[test]
    fn posted_order_between_specific_and_wildcard() {
        let mut m = M::new();
        m.post(spec(ANY_SOURCE, ANY_TAG), 1);
        m.post(spec(3, 5), 2);
        assert_eq!(m.take_posted(env(3, 5)), Some(1));
        assert_eq!(m.take_posted(env(3, 5)), Some(2));
        assert_eq!(m.take_posted(env(3, 5)), None);
        m.post(spec(3, 5), 3);
        m.post(spec(ANY_SOURCE, 5), 4);
        assert_eq!(m.take_posted(env(3, 5)), Some(3));
        assert_eq!(m.take_posted(env(4, 5)), Some(4));
    }

    #[test]
    fn unexpected_in_arrival_order_with_tags() {
        let mut m = M::new();
        m.push_unexpected(env(1, 7), 10);
        m.push_unexpected(env(2, 8), 11);
        m.push_unexpected(env(1, 8), 12);
        assert_eq!(m.take_unexpected(spec(ANY_SOURCE, 8)).unwrap().1, 11);
        assert_eq!(m.peek_unexpected(spec(1, ANY_TAG)).unwrap().1, &10);
        assert_eq!(m.take_unexpected(spec(1, 8)).unwrap().1, 12);
        assert_eq!(
            m.take_unexpected(spec(ANY_SOURCE, ANY_TAG)).unwrap(),
            (env(1, 7), 10)
        );
        assert!(m.take_unexpected(spec(ANY_SOURCE, ANY_TAG)).is_none());
        assert!(m.context_idle(0));
    }

    #[test]
    fn contexts_are_separate_and_cancel_works() {
        let mut m = M::new();
        m.push_unexpected(
            Envelope {
                ctx: 4,
                src: 0,
                tag: 1,
            },
            9,
        );
        assert!(m.take_unexpected(spec(0, 1)).is_none());
        assert_eq!(m.unexpected_in(4), 1);
        m.post(spec(0, 1), 5);
        assert!(m.remove_posted(spec(0, 1), |p| *p == 5));
        assert!(!m.remove_posted(spec(0, 1), |p| *p == 5));
        assert_eq!(m.remove_unexpected(4, 0, |u| *u == 9), Some(9));
        assert!(m.context_idle(4));
    }

    #[test]
    fn what_may_take_the_next_packet() {
        let mut m = M::new();
        assert!(m.may_take_next(0, 3, false) && m.none_posted_from(0, 3));
        m.post(spec(3, 5), 1);
        // A receive posted for the source claims its next packet first, unless the
        // communicator allows overtaking.
        assert!(!m.may_take_next(0, 3, false) && !m.none_posted_from(0, 3));
        assert!(m.may_take_next(0, 3, true));
        assert!(m.may_take_next(0, 4, false));
        // Stored messages from the source that a receive did not accept do not count.
        m.push_unexpected(env(4, 9), 7);
        assert!(m.may_take_next(0, 4, false));
        // A wildcard-source receive may claim any source's packet, overtaking or not.
        m.post(spec(ANY_SOURCE, ANY_TAG), 2);
        assert!(!m.may_take_next(0, 4, false) && !m.may_take_next(0, 4, true));
        assert!(m.may_take_next(1, 4, false));
    }

    /// `ahead_of` reads in one look-up what the separate queries answer.
    #[test]
    fn ahead_of_agrees_with_the_separate_queries() {
        let agree = |m: &M, src: i32, stored: bool| {
            for ctx in 0..2 {
                let a = m.ahead_of(ctx, src);
                assert_eq!(a.posted_from, !m.none_posted_from(ctx, src));
                for overtaking in [false, true] {
                    assert_eq!(
                        a.may_take_next(overtaking),
                        m.may_take_next(ctx, src, overtaking)
                    );
                }
                assert_eq!(a.stored, ctx == 0 && stored);
            }
        };
        let mut m = M::new();
        assert_eq!(m.ahead_of(0, 3), Ahead::default());
        agree(&m, 3, false);
        m.post(spec(3, 5), 1);
        agree(&m, 3, false);
        agree(&m, 4, false);
        m.push_unexpected(env(4, 9), 7);
        agree(&m, 4, true);
        agree(&m, 3, true);
        m.post(spec(ANY_SOURCE, ANY_TAG), 2);
        assert!(m.ahead_of(0, 4).posted_any);
        agree(&m, 4, true);
    }

    #[derive(Clone, Debug)]
    enum Op {
        Send(i32, i32),
        Recv(i32, i32),
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            (0..3i32, 0..3i32).prop_map(|(s, t)| Op::Send(s, t)),
            (-2..3i32, -1..3i32)
                .prop_filter("valid", |(s, _)| *s != -1)
                .prop_map(|(s, t)| Op::Recv(s, t)),
        ]
    }

    proptest! {
        /// Against a naive model: one list of posted receives, one list of arrivals,
        /// each matched by a linear scan in order.
        #[test]
        fn matches_naive_model(ops in proptest::collection::vec(op(), 1..200)) {
            let mut m = M::new();
            let mut posted: Vec<(i32, i32, u32)> = Vec::new();
            let mut unexp: Vec<(i32, i32, u32)> = Vec::new();
            let mut got = Vec::new();
            let mut want = Vec::new();
            for (id, o) in ops.iter().enumerate() {
                let id = id as u32;
                match *o {
                    Op::Send(s, t) => {
                        match m.take_posted(env(s, t)) {
                            Some(r) => got.push((r, id)),
                            None => m.push_unexpected(env(s, t), id),
                        }
                        let ok = |&(ps, pt, _): &(i32, i32, u32)| (ps == ANY_SOURCE || ps == s) && (pt == ANY_TAG || pt == t);
                        match posted.iter().position(ok) {
                            Some(i) => want.push((posted.remove(i).2, id)),
                            None => unexp.push((s, t, id)),
                        }
                    }
                    Op::Recv(s, t) => {
                        match m.take_unexpected(spec(s, t)) {
                            Some((e, u)) => {
                                prop_assert!(s == ANY_SOURCE || e.src == s);
                                got.push((id, u))
                            }
                            None => m.post(spec(s, t), id),
                        }
                        let ok = |&(us, ut, _): &(i32, i32, u32)| (s == ANY_SOURCE || us == s) && (t == ANY_TAG || ut == t);
                        match unexp.iter().position(ok) {
                            Some(i) => want.push((id, unexp.remove(i).2)),
                            None => posted.push((s, t, id)),
                        }
                    }
                }
            }
            prop_assert_eq!(got, want);
        }
    }
}
