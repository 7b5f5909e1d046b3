//! Argument checks shared by the collective calls, and the common start of every call:
//! resolve the communicator, take the call's tag, fetch the schedule, build the
//! executor. Messages name the argument and the value; the bindings add the call name.

use super::exec::Exec;
use super::nbc::How;
use super::op::OpId;
use super::op::{data_range, Reducer};
use super::shm::{self, Offer, ShmComm};
use super::stage::View;
use super::state::schedule_error;
use crate::comm::{CommId, Group};
use crate::device::ReqId;
use crate::error::{err, Error, ErrorClass, Result};
use crate::runtime::{self, Runtime};
use crate::types::{TypeId, TypeInfo};
use oxmpi_coll::schedule::{Member, Spec};
use std::cell::Cell;
use std::sync::Arc;

/// The send-buffer argument of a collective: `MPI_IN_PLACE`, or the data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Input<T> {
    InPlace,
    Data(T),
}

impl<T> Input<T> {
    pub fn is_in_place(&self) -> bool {
        matches!(self, Input::InPlace)
    }

    /// The same input with its data transformed.
    pub fn map<U>(self, f: impl FnOnce(T) -> U) -> Input<U> {
        match self {
            Input::Data(t) => Input::Data(f(t)),
            Input::InPlace => Input::InPlace,
        }
    }
}

/// Sum of per-rank element counts (saturating: the buffer check rejects absurd totals).
pub(crate) fn sum_counts(counts: &[usize]) -> usize {
    counts.iter().fold(0usize, |a, &c| a.saturating_add(c))
}

/// The communicator facts a collective needs.
pub(crate) struct Team {
    pub id: CommId,
    pub ctx: u32,
    pub rank: usize,
    pub size: usize,
}

impl Team {
    pub fn member(&self) -> Member {
        Member {
            rank: self.rank as u32,
            size: self.size as u32,
        }
    }
}

/// Resolves a communicator: `None` for an intercommunicator.
pub(crate) fn team_or_inter(rt: &Runtime, id: CommId) -> Result<Option<Team>> {
    let c = rt.comms.get(id)?;
    if c.remote.is_some() {
        return Ok(None);
    }
    Ok(Some(Team {
        id,
        ctx: c.coll_ctx(),
        rank: c.rank as usize,
        size: c.size() as usize,
    }))
}

pub(crate) fn nonneg(v: i64, what: &str) -> Result<usize> {
    if v < 0 {
        return err(
            ErrorClass::Count,
            format!("invalid {what} {v} (must be >= 0)"),
        );
    }
    Ok(v as usize)
}

/// Every entry of a per-rank count array.
pub(crate) fn counts(v: &[i64], n: usize, what: &str) -> Result<Vec<usize>> {
    if v.len() < n {
        return err(
            ErrorClass::Count,
            format!(
                "{what} has {} entries, the communicator has {n} ranks",
                v.len()
            ),
        );
    }
    v[..n]
        .iter()
        .enumerate()
        .map(|(i, &c)| {
            if c < 0 {
                err(
                    ErrorClass::Count,
                    format!("invalid {what}[{i}] = {c} (must be >= 0)"),
                )
            } else {
                Ok(c as usize)
            }
        })
        .collect()
}

/// A datatype usable for communication.
pub(crate) fn datatype<'a>(rt: &'a Runtime, ty: TypeId, what: &str) -> Result<&'a TypeInfo> {
    rt.types
        .for_comm(ty)
        .map_err(|e| Error::new(e.class, format!("{what}: {}", e.message)))
}

/// A buffer of `count` elements of `t` may not be the null pointer (for a predefined
/// type, where no absolute addresses can be meant).
pub(crate) fn buffer(addr: usize, count: usize, t: &TypeInfo, what: &str) -> Result<()> {
    if addr == 0 && count > 0 && t.size > 0 && t.predefined.is_some() {
        return err(
            ErrorClass::Buffer,
            format!("{what} is NULL but holds {count} elements"),
        );
    }
    Ok(())
}

fn aliased(send: usize) -> Error {
    Error::new(
        ErrorClass::Buffer,
        format!("sendbuf and recvbuf overlap (sendbuf {send:#x}); use MPI_IN_PLACE to reuse the receive buffer"),
    )
}

/// Send and receive buffers may only share memory through `MPI_IN_PLACE`: `scount`
/// elements of `st` at `send` against `rcount` elements of `rt` at `recv`.
pub(crate) fn not_aliased(
    send: usize,
    st: &TypeInfo,
    scount: usize,
    recv: usize,
    rt: &TypeInfo,
    rcount: usize,
) -> Result<()> {
    let (slo, shi) = data_range(st, scount);
    let (rlo, rhi) = data_range(rt, rcount);
    if slo == shi || rlo == rhi {
        return Ok(());
    }
    let (s0, s1) = (
        (send as isize).wrapping_add(slo),
        (send as isize).wrapping_add(shi),
    );
    let (r0, r1) = (
        (recv as isize).wrapping_add(rlo),
        (recv as isize).wrapping_add(rhi),
    );
    if s0 < r1 && r0 < s1 {
        return Err(aliased(send));
    }
    Ok(())
}

/// The bytes `count` elements of `t` describe in a block `disp` bytes after `base` (a
/// buffer argument, `MPI_BOTTOM` for absolute addresses): `[lo, hi)` as addresses, or
/// `None` without data.
pub(crate) fn span(base: usize, disp: isize, t: &TypeInfo, count: usize) -> Option<(isize, isize)> {
    let (lo, hi) = data_range(t, count);
    if lo == hi {
        return None;
    }
    let at = (base as isize).wrapping_add(disp);
    Some((at.wrapping_add(lo), at.wrapping_add(hi)))
}

/// The smallest range holding every block of `f(0..n)`.
fn hull(n: usize, f: &impl Fn(usize) -> Option<(isize, isize)>) -> Option<(isize, isize)> {
    (0..n)
        .filter_map(f)
        .reduce(|(a, b), (c, d)| (a.min(c), b.max(d)))
}

/// Send and receive buffers made of blocks (the v and w variants) may only share memory
/// through `MPI_IN_PLACE`: fails when bytes of a send block (`send(i)`, `i < ns`) are
/// also bytes of a receive block (`recv(j)`, `j < nr`), both from [`span`]. Compares the
/// memory the datatypes describe, not the buffer addresses, so `MPI_BOTTOM` on both
/// sides with absolute addresses in the datatypes is fine when they do not meet.
pub(crate) fn disjoint(
    ns: usize,
    send: impl Fn(usize) -> Option<(isize, isize)>,
    nr: usize,
    recv: impl Fn(usize) -> Option<(isize, isize)>,
) -> Result<()> {
    let (Some(sh), Some(rh)) = (hull(ns, &send), hull(nr, &recv)) else {
        return Ok(());
    };
    if sh.1 <= rh.0 || rh.1 <= sh.0 {
        return Ok(());
    }
    // The hulls meet: compare with the union of the receive blocks, sorted.
    let mut rs: Vec<(isize, isize)> = (0..nr).filter_map(&recv).collect();
    rs.sort_unstable();
    let mut union: Vec<(isize, isize)> = Vec::with_capacity(rs.len());
    for (a, b) in rs {
        match union.last_mut() {
            Some(last) if a <= last.1 => last.1 = last.1.max(b),
            _ => union.push((a, b)),
        }
    }
    for i in 0..ns {
        let Some((a, b)) = send(i) else { continue };
        let k = union.partition_point(|u| u.1 <= a);
        if let Some(&(c, d)) = union.get(k) {
            if c < b {
                let block = if ns > 1 {
                    format!(" block {i}")
                } else {
                    String::new()
                };
                return err(
                    ErrorClass::Buffer,
                    format!(
                        "sendbuf{block} (bytes {a:#x}..{b:#x}) overlaps recvbuf (bytes {c:#x}..{d:#x}); use MPI_IN_PLACE to reuse the receive buffer"
                    ),
                );
            }
        }
    }
    Ok(())
}

pub(crate) fn root(root: i32, n: usize) -> Result<usize> {
    if root < 0 || root as usize >= n {
        return err(
            ErrorClass::Root,
            format!("invalid root {root} (communicator size {n})"),
        );
    }
    Ok(root as usize)
}

/// `MPI_IN_PLACE` given where this rank may not use it.
pub(crate) fn in_place_not_allowed(what: &str) -> Error {
    Error::new(
        ErrorClass::Buffer,
        format!("MPI_IN_PLACE is not allowed here: {what}"),
    )
}

pub(crate) fn bytes(count: usize, t: &TypeInfo) -> Result<usize> {
    count.checked_mul(t.size).ok_or_else(|| {
        Error::new(
            ErrorClass::Count,
            format!("{count} elements of {} bytes overflow", t.size),
        )
    })
}

/// The common end of every call's setup, once all arguments are checked: takes the
/// tag and builds the executor for `spec`.
pub(crate) fn launch(
    rt: &mut Runtime,
    t: &Team,
    spec: &Spec<'_>,
    send: &View,
    recv: &View,
    reducer: Reducer,
) -> Result<Exec> {
    let sched = rt.coll.schedule(spec, t.member()).map_err(schedule_error)?;
    let c = rt.comms.get(t.id)?;
    let group = c.group.clone();
    let dev = &rt.device;
    let tag = rt.coll.next_tag(c, |w| dev.route(w))?;
    let pool = rt.coll.take_pool();
    Ok(Exec::new(
        sched,
        group,
        t.id,
        t.ctx,
        tag,
        t.rank as i32,
        send.base,
        recv.base,
        reducer,
        pool,
    )
    .with_streams(send.stream(), recv.stream()))
}

/// How a call will run, decided under the runtime lock.
pub(crate) enum Plan {
    /// The point-to-point schedule, with the views to unpack afterwards.
    Sched(Box<(Exec, View, View)>),
    /// The shared-memory fast path (its call always present; the box goes back to
    /// [`SPARE_CALL`] once the call ran).
    Fast(Box<Spare>),
    /// The communicator's fast path must be set up first (collectively), then the call
    /// planned again.
    Setup(Box<shm::Setup>),
    /// A nonblocking or persistent call on the fast path (see [`fast_plan`]).
    Poll(CommId, Box<shm::Call>),
    /// The communicator has no fast path: record that, then plan again.
    NoFast(u32, Arc<Group>),
    /// An intercommunicator: the caller runs the intercommunicator algorithm.
    Inter,
}

impl Plan {
    /// A point-to-point schedule plan. The plans are boxed: a plan is moved several
    /// times on its way out of the lock, and the small fast-path calls felt a few
    /// hundred bytes of moves.
    pub(crate) fn sched(exec: Exec, send: View, recv: View) -> Plan {
        Plan::Sched(Box::new((exec, send, recv)))
    }
}

/// The arguments a fast-path call was planned with. A later call on the same thread with
/// equal arguments runs the same plan again ([`reuse`]) without checking and planning
/// anew: the checks and the plan depend on nothing else. Only calls whose datatype and
/// operation are predefined (never freed, never redefined) have a key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Key {
    pub kind: shm::Kind,
    pub comm: CommId,
    /// Send buffer (`usize::MAX` for `MPI_IN_PLACE`).
    pub send: usize,
    pub recv: usize,
    pub count: i64,
    pub ty: TypeId,
    pub op: OpId,
}

impl Key {
    /// The key of a call on `ty` and `op`, when both are predefined (`op` 0, a
    /// predefined operation, for calls without one).
    pub fn predefined(
        kind: shm::Kind,
        comm: CommId,
        send: Input<usize>,
        recv: usize,
        count: i64,
        ty: TypeId,
        op: OpId,
    ) -> Option<Key> {
        (crate::types::is_predefined(ty) && super::op::is_predefined(op)).then_some(Key {
            kind,
            comm,
            send: match send {
                Input::Data(a) => a,
                Input::InPlace => usize::MAX,
            },
            recv,
            count,
            ty,
            op,
        })
    }

    /// The key of a call with no buffers (`MPI_Barrier`).
    pub fn bare(kind: shm::Kind, comm: CommId) -> Key {
        Key {
            kind,
            comm,
            send: 0,
            recv: 0,
            count: 0,
            ty: 0,
            op: 0,
        }
    }
}

/// A fast-path call in its box, with the key it may run again under.
#[derive(Default)]
pub(crate) struct Spare {
    key: Option<Key>,
    call: Option<shm::Call>,
}

thread_local! {
    /// The box of the last fast-path call of each family made on this thread, kept for
    /// the next one (small collectives otherwise spent a tenth of their instructions in
    /// malloc/free), with the call itself when it may run again. Families keep a loop of
    /// barriers and reductions from evicting each other.
    static SPARE_CALL: [Cell<Option<Box<Spare>>>; 3] = const {
        [Cell::new(None), Cell::new(None), Cell::new(None)]
    };
}

/// The [`SPARE_CALL`] slot of a kind of call.
fn family(kind: shm::Kind) -> usize {
    match kind {
        shm::Kind::Barrier => 0,
        shm::Kind::Allreduce | shm::Kind::Scan | shm::Kind::Exscan | shm::Kind::Reduce { .. } => 1,
        _ => 2,
    }
}

fn take_spare(kind: shm::Kind) -> Option<Box<Spare>> {
    SPARE_CALL.with(|s| s[family(kind)].take())
}

fn keep_spare(kind: shm::Kind, b: Box<Spare>) {
    SPARE_CALL.with(|s| s[family(kind)].set(Some(b)));
}

/// The plan of the last fast-path call made on this thread, if it had `key` and its
/// communicator still has the same fast path.
fn reuse(rt: &Runtime, key: Key) -> Option<Plan> {
    let spare = take_spare(key.kind)?;
    if spare.key == Some(key)
        && spare
            .call
            .as_ref()
            .is_some_and(|c| shm::is_current(rt, key.comm, &c.comm))
    {
        return Some(Plan::Fast(spare));
    }
    keep_spare(key.kind, spare);
    None
}

/// The fast-path plan for a call of `bytes` per rank on `t` (reductions split vectors
/// only between elements of `elem` bytes; 1 for the others), if it takes that path.
/// `key`: the call may run again as planned (see [`reuse`]).
#[allow(clippy::too_many_arguments)]
pub(crate) fn fast_plan(
    rt: &Runtime,
    how: How,
    t: &Team,
    bytes: usize,
    elem: usize,
    kind: shm::Kind,
    key: Option<Key>,
    make: impl FnOnce(Arc<ShmComm>) -> shm::Call,
) -> Option<Plan> {
    if !fast_ok(how) {
        // A nonblocking or persistent call takes the fast path when the communicator
        // already has it (every member then knows it, having made the same calls) and
        // the call goes through the slots or the staging areas (`shm::pollable`).
        return match shm::offer(rt, t, bytes, elem, kind)? {
            Offer::Ready(c) => {
                let call = make(c);
                shm::pollable(&call).then(|| Plan::Poll(t.id, Box::new(call)))
            }
            _ => None,
        };
    }
    match shm::offer(rt, t, bytes, elem, kind)? {
        Offer::Ready(c) => {
            let mut b = take_spare(kind).unwrap_or_default();
            b.key = key;
            b.call = Some(make(c));
            Some(Plan::Fast(b))
        }
        Offer::Setup(s) => Some(Plan::Setup(Box::new(s))),
        Offer::Disable(ctx, group) => Some(Plan::NoFast(ctx, group)),
    }
}

/// [`drive`] for a call that may have a [`Key`]: a repeat of the thread's last such
/// call runs that plan again instead of planning with `f`.
pub(crate) fn drive_keyed(
    key: Option<Key>,
    mut f: impl FnMut(&mut Runtime) -> Result<Plan>,
) -> Result<bool> {
    drive(|rt| match key.and_then(|k| reuse(rt, k)) {
        Some(p) => Ok(p),
        None => f(rt),
    })
}

/// What [`drive_how`] did.
pub(crate) enum Ran {
    /// The communicator is an intercommunicator: nothing was done.
    Inter,
    /// The blocking call ran.
    Done,
    /// The nonblocking or persistent call's request.
    Req(ReqId),
}

impl Ran {
    /// The request of a nonblocking call, None for a blocking one; `inter` runs an
    /// intercommunicator's call.
    pub(crate) fn or_inter(
        self,
        inter: impl FnOnce() -> Result<Option<ReqId>>,
    ) -> Result<Option<ReqId>> {
        match self {
            Ran::Inter => inter(),
            Ran::Done => Ok(None),
            Ran::Req(r) => Ok(Some(r)),
        }
    }
}

/// [`drive_keyed`] for a blocking call; a nonblocking or persistent one plans with
/// `f` (which must not take the fast path: see [`fast_ok`]) and registers the
/// schedule as an op of [`super::nbc`].
pub(crate) fn drive_how(
    how: How,
    key: Option<Key>,
    mut f: impl FnMut(&mut Runtime) -> Result<Plan>,
) -> Result<Ran> {
    if how.is_blocking() {
        return Ok(if drive_keyed(key, f)? {
            Ran::Done
        } else {
            Ran::Inter
        });
    }
    runtime::with(|rt| match f(rt)? {
        Plan::Inter => Ok(Ran::Inter),
        Plan::Sched(b) => {
            let (exec, sv, rv) = *b;
            Ok(Ran::Req(super::nbc::register(
                rt,
                super::nbc::Op::sched(exec, sv, rv),
                how,
            )))
        }
        Plan::Poll(comm, call) => {
            let op = super::nbc::Op::shm(comm, *call, how == How::Start)?;
            Ok(Ran::Req(super::nbc::register(rt, op, how)))
        }
        _ => err(
            ErrorClass::Intern,
            "a nonblocking collective was planned to set up the shared-memory path",
        ),
    })
}

/// Whether a call made `how` may take the shared-memory fast path: only blocking
/// calls do (its protocol waits inside the call).
pub(crate) fn fast_ok(how: How) -> bool {
    how.is_blocking()
}

/// Plans a call with `f` (under the lock) and runs it (without the lock). False when
/// the communicator is an intercommunicator (nothing was done).
pub(crate) fn drive(mut f: impl FnMut(&mut Runtime) -> Result<Plan>) -> Result<bool> {
    loop {
        match runtime::with(&mut f)? {
            Plan::Inter => return Ok(false),
            Plan::Poll(..) => {
                return err(
                    ErrorClass::Intern,
                    "a blocking collective was planned as a nonblocking one",
                )
            }
            Plan::Setup(s) => shm::set_up(*s)?,
            Plan::NoFast(ctx, group) => runtime::with(|rt| {
                rt.coll.set_fast(ctx as usize / 2, &group, None);
                Ok(())
            })?,
            Plan::Fast(mut c) => {
                let Some(call) = &c.call else {
                    return err(ErrorClass::Intern, "fast-path plan without a call");
                };
                let kind = call.kind;
                let r = shm::run(call);
                if c.key.is_none() || r.is_err() {
                    c.key = None;
                    c.call = None;
                }
                keep_spare(kind, c);
                return r.map(|()| true);
            }
            Plan::Sched(b) => {
                let (exec, send, recv) = *b;
                let r = exec.run();
                // SAFETY: the user buffers stay valid for the whole call (MPI contract).
                unsafe {
                    send.finish();
                    recv.finish();
                }
                return r.map(|()| true);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn blocks(v: &[(isize, isize)]) -> impl Fn(usize) -> Option<(isize, isize)> + '_ {
        |i| v.get(i).copied().filter(|&(a, b)| a < b)
    }

    #[test]
    fn disjoint_compares_blocks_not_hulls() {
        let recv = [(100, 108), (200, 204), (0, 0), (300, 340)];
        // Between and around the receive blocks: fine.
        let send = [(108, 200), (204, 300), (340, 400), (0, 100)];
        assert!(disjoint(4, blocks(&send), 4, blocks(&recv)).is_ok());
        // Touching a receive block by one byte.
        let send = [(150, 160), (339, 341)];
        let e = disjoint(2, blocks(&send), 4, blocks(&recv)).unwrap_err();
        assert_eq!(e.class, ErrorClass::Buffer);
        assert!(e.message.contains("block 1"), "{}", e.message);
        // Covering a receive block whole, or inside a merged run.
        assert!(disjoint(1, blocks(&[(90, 110)]), 4, blocks(&recv)).is_err());
        let run = [(0, 8), (8, 16), (4, 12)];
        assert!(disjoint(1, blocks(&[(15, 20)]), 3, blocks(&run)).is_err());
        assert!(disjoint(1, blocks(&[(16, 20)]), 3, blocks(&run)).is_ok());
        // Empty sides never alias.
        assert!(disjoint(0, blocks(&[]), 4, blocks(&recv)).is_ok());
        assert!(disjoint(1, blocks(&[(0, 0)]), 4, blocks(&recv)).is_ok());
    }
}
