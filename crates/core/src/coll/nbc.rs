//! Nonblocking (`MPI_Ibcast`, ...) and persistent (`MPI_Bcast_init`, ...) collectives:
//! a started call is an `Op`, a list of steps — schedules of `oxmpi-coll` run by an
//! `Exec`, and plain exchanges of messages (`Xchg`, for intercommunicators and
//! neighbourhoods) — that the progress engine moves forward whenever the process is
//! inside an MPI call that progresses (`advance_all`, from `runtime::progress_all`).
//!
//! The program sees an ordinary device request: a pending request that the op marks
//! done when its last step ends (its status is empty, or says truncated when a peer
//! sent a different amount). A persistent collective's request is a persistent device
//! request; `MPI_Start` restarts its op, whose schedules, buffers and tag were fixed at
//! initialisation. Every call takes its tag from the communicator's collective
//! sequence when it is started (or initialised), so outstanding calls never mix.
//!
//! User reduction functions never run under the runtime lock: an op whose next local
//! step needs one is parked, and the next waiting or testing call runs that step
//! without the lock (`run_parked`).

use super::exec::{self, Exec};
use super::stage::View;
use crate::comm::{CommId, Group};
use crate::device::matching::Spec as MSpec;
use crate::device::{Direction, Outcome, Persistent, RecvArgs, ReqId, SendArgs, SendMode, Status};
use crate::error::{err, Error, ErrorClass, Result};
use crate::runtime::{self, Runtime};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// How a collective call runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum How {
    /// The blocking call (`MPI_Bcast`).
    Block,
    /// The nonblocking call (`MPI_Ibcast`): started, a request returned.
    Start,
    /// The persistent call (`MPI_Bcast_init`): planned, an inactive request returned.
    Init,
}

impl How {
    pub fn is_blocking(self) -> bool {
        self == How::Block
    }
}

fn dangling() -> *mut u8 {
    NonNull::<u8>::dangling().as_ptr()
}

/// Messages exchanged in one go with the members of `peers`: all posted at once, done
/// when all completed. Receives must get exactly their length.
pub(crate) struct Xchg {
    comm: CommId,
    ctx: u32,
    /// This process's rank as its peers know it (the source of its messages).
    me: i32,
    tag: i32,
    /// World ranks of the peers (a local or remote group).
    peers: Arc<Group>,
    /// (peer rank, data, length).
    sends: Vec<(u32, *const u8, usize)>,
    /// (peer rank, buffer, exact length).
    recvs: Vec<(u32, *mut u8, usize)>,
    /// Names the peers in messages ("remote rank", "neighbour rank").
    who: &'static str,
    ids: Vec<ReqId>,
    posted: bool,
}

impl Xchg {
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        comm: CommId,
        ctx: u32,
        me: i32,
        tag: i32,
        peers: Arc<Group>,
        sends: Vec<(u32, *const u8, usize)>,
        recvs: Vec<(u32, *mut u8, usize)>,
        who: &'static str,
    ) -> Xchg {
        Xchg {
            comm,
            ctx,
            me,
            tag,
            peers,
            sends,
            recvs,
            who,
            ids: Vec::new(),
            posted: false,
        }
    }

    fn post(&mut self, rt: &mut Runtime) {
        self.ids.clear();
        for &(from, buf, len) in &self.recvs {
            let buf = if len == 0 { dangling() } else { buf };
            let id = rt.device.irecv(RecvArgs {
                spec: MSpec {
                    ctx: self.ctx,
                    src: from as i32,
                    tag: self.tag,
                },
                buf,
                cap: len,
            });
            self.ids.push(id);
        }
        for &(to, buf, len) in &self.sends {
            let buf = if len == 0 {
                dangling() as *const u8
            } else {
                buf
            };
            let id = rt.device.isend(SendArgs {
                dest: self.peers.members()[to as usize],
                ctx: self.ctx,
                src_rank: self.me,
                tag: self.tag,
                buf,
                len,
                mode: SendMode::Standard,
            });
            self.ids.push(id);
        }
        for &id in &self.ids {
            if let Some(r) = rt.device.request_mut(id) {
                r.owner = self.comm;
            }
        }
        self.posted = true;
    }

    /// None while transfers are under way; then the first error, if any.
    fn advance(&mut self, rt: &mut Runtime) -> Option<Option<Error>> {
        if !self.posted {
            self.post(rt);
            runtime::progress(&mut rt.device);
        }
        let done = self
            .ids
            .iter()
            .all(|&id| rt.device.request(id).is_some_and(|r| r.is_complete()));
        if !done {
            return None;
        }
        let mut first = None;
        for (i, &id) in self.ids.iter().enumerate() {
            let st = rt.device.finish(id);
            if first.is_some() {
                continue;
            }
            match self.recvs.get(i) {
                Some(&(from, _, len)) if st.error != Outcome::Success || st.bytes != len as u64 => {
                    let got = if st.error == Outcome::Truncated {
                        "more".to_string()
                    } else {
                        st.bytes.to_string()
                    };
                    first = Some(Error::new(
                        ErrorClass::Truncate,
                        format!(
                            "{} {from} sent {got} bytes where this rank expected {len}: the processes passed different counts or datatype signatures",
                            self.who
                        ),
                    ));
                }
                _ => {}
            }
        }
        self.ids.clear();
        self.posted = false;
        Some(first)
    }
}

/// One step of an [`Op`].
pub(crate) enum Step {
    Sched(Box<Exec>),
    Xchg(Xchg),
    /// A context-id agreement (`MPI_Comm_idup`).
    Agree(Box<crate::idup::Agreement>),
    /// A call on the shared-memory fast path.
    Shm(Box<super::shm::poll::Poll>),
}

/// Where an op stands after moving forward.
enum Progress {
    Pending,
    /// The current schedule's next local step runs a user function.
    Parked,
    Done,
}

/// One started (or initialised) collective call.
pub(crate) struct Op {
    steps: Vec<Step>,
    at: usize,
    /// Staged user buffers: packed when the op starts, unpacked when it ends.
    views: Vec<View>,
    /// Temporaries the steps point into.
    #[allow(dead_code)]
    keep: Vec<Vec<u8>>,
    error: Option<Error>,
    comm: CommId,
}

// SAFETY: the raw pointers an op holds name the program's buffers (which the MPI
// contract keeps valid and untouched until the call completes) and the op's own
// temporaries; the op is only used under the runtime lock, or by the one thread that
// took it out of the table to run a user function.
unsafe impl Send for Op {}

impl Op {
    pub(crate) fn new(comm: CommId, steps: Vec<Step>, views: Vec<View>, keep: Vec<Vec<u8>>) -> Op {
        Op {
            steps,
            at: 0,
            views,
            keep,
            error: None,
            comm,
        }
    }

    /// The op of a single schedule on an intracommunicator.
    pub(crate) fn sched(exec: Exec, send: View, recv: View) -> Op {
        let comm = exec.comm;
        Op::new(
            comm,
            vec![Step::Sched(Box::new(exec))],
            vec![send, recv],
            Vec::new(),
        )
    }

    fn note(&mut self, e: Option<Error>) {
        if self.error.is_none() {
            self.error = e;
        }
    }

    fn advance(&mut self, rt: &mut Runtime) -> Progress {
        while self.at < self.steps.len() {
            match &mut self.steps[self.at] {
                Step::Sched(x) => match x.advance(rt) {
                    Ok(None) => return Progress::Pending,
                    Ok(Some(exec::Step::UserLocals)) => return Progress::Parked,
                    Ok(Some(exec::Step::Done)) => {
                        let e = x.take_error();
                        self.note(e);
                    }
                    Err(e) => self.note(Some(e)),
                },
                Step::Xchg(x) => match x.advance(rt) {
                    None => return Progress::Pending,
                    Some(e) => self.note(e),
                },
                Step::Agree(a) => match a.advance(rt) {
                    crate::idup::Poll::Pending => return Progress::Pending,
                    crate::idup::Poll::User => return Progress::Parked,
                    crate::idup::Poll::Done(e) => self.note(e),
                },
                Step::Shm(p) => match p.advance() {
                    Ok(false) => return Progress::Pending,
                    Ok(true) => {}
                    Err(e) => self.note(Some(e)),
                },
            }
            self.at += 1;
        }
        for v in &self.views {
            // SAFETY: the program keeps its buffers valid until the call completes.
            unsafe { v.unpack() };
        }
        Progress::Done
    }

    /// Runs the parked local step (user code; without the runtime lock).
    fn resume_user(&mut self) {
        match self.steps.get_mut(self.at) {
            Some(Step::Sched(x)) => x.resume_user(),
            Some(Step::Agree(a)) => a.run_user(),
            _ => {}
        }
    }

    /// Ready to run again from the start (a persistent collective's `MPI_Start`).
    fn restart(&mut self, rt: &mut Runtime) {
        self.at = 0;
        self.error = None;
        for v in &mut self.views {
            // SAFETY: the program's buffers are valid while the request is active.
            unsafe { v.repack() };
        }
        for s in &mut self.steps {
            match s {
                Step::Sched(x) => x.restart(rt.coll.take_pool()),
                Step::Shm(p) => p.begin(),
                _ => {}
            }
        }
    }

    /// The op of one fast-path call; `start`: begun now (a nonblocking call), else at
    /// each `MPI_Start` (a persistent one).
    pub(crate) fn shm(comm: CommId, call: super::shm::Call, start: bool) -> Result<Op> {
        // A persistent call plans its fold once for all its starts.
        let mut p = super::shm::poll::Poll::new(call, !start)?;
        if start {
            p.begin();
        }
        Ok(Op::new(
            comm,
            vec![Step::Shm(Box::new(p))],
            Vec::new(),
            Vec::new(),
        ))
    }

    /// A persistent op made of one fast-path call: restarts it and moves it on at once
    /// (what `MPI_Start` does for it, without the general op's passes). None for other
    /// ops; else whether the call is done, and its error.
    fn start_single_shm(&mut self) -> Option<Result<bool>> {
        if self.steps.len() != 1 || !self.views.is_empty() {
            return None;
        }
        let Some(Step::Shm(p)) = self.steps.first_mut() else {
            return None;
        };
        self.at = 0;
        self.error = None;
        p.begin();
        let r = p.advance();
        if !matches!(r, Ok(false)) {
            self.at = 1;
        }
        Some(r)
    }

    /// Whether the current step is a fast-path call.
    fn at_shm(&self) -> bool {
        matches!(self.steps.get(self.at), Some(Step::Shm(_)))
    }

    /// Whether the current step is a fast-path call that would move on if advanced.
    fn shm_ready(&mut self) -> bool {
        match self.steps.get_mut(self.at) {
            Some(Step::Shm(p)) => p.ready(),
            _ => false,
        }
    }

    /// Runs the op to completion here (the blocking calls built as ops).
    pub(crate) fn run(self) -> Result<()> {
        let mut op = self;
        loop {
            let p = runtime::block_on(|rt| {
                Ok(match op.advance(rt) {
                    Progress::Pending => None,
                    Progress::Parked => Some(false),
                    Progress::Done => Some(true),
                })
            })?;
            if p {
                break;
            }
            op.resume_user();
        }
        match op.error {
            None => Ok(()),
            Some(e) => Err(e),
        }
    }
}

/// An op and its request.
struct Entry {
    req: ReqId,
    op: Box<Op>,
    persistent: bool,
}

/// The ops of one process.
#[derive(Default)]
pub struct Table {
    /// Started and not done.
    active: Vec<Entry>,
    /// Waiting for a user function to run outside the lock.
    parked: Vec<Entry>,
    /// Persistent ops not started.
    idle: Vec<Entry>,
    /// Ops of `active` whose current step is a fast-path call (waiters read it on
    /// every round, so it is kept rather than counted).
    shm_active: usize,
}

/// Number of parked ops in the process (read without the lock by [`run_parked`]).
static PARKED: AtomicUsize = AtomicUsize::new(0);

impl Table {
    /// Nothing to move forward.
    #[inline]
    pub fn is_idle(&self) -> bool {
        self.active.is_empty()
    }

    fn holds(&self, id: ReqId) -> bool {
        self.active
            .iter()
            .chain(&self.parked)
            .chain(&self.idle)
            .any(|e| e.req == id)
    }

    fn is_empty(&self) -> bool {
        self.active.is_empty() && self.parked.is_empty() && self.idle.is_empty()
    }
}

/// Moves `e` forward and files it where it now belongs.
fn settle(rt: &mut Runtime, mut e: Entry) -> bool {
    match e.op.advance(rt) {
        Progress::Pending => {
            if e.op.at_shm() {
                rt.coll.nbc.shm_active += 1;
            }
            rt.coll.nbc.active.push(e);
            false
        }
        Progress::Parked => {
            rt.coll.nbc.parked.push(e);
            PARKED.fetch_add(1, Ordering::Relaxed);
            true
        }
        Progress::Done => {
            let status = match e.op.error.take() {
                None => Status::EMPTY,
                Some(_) => truncated(),
            };
            rt.device.mark_done(e.req, status);
            if e.persistent {
                rt.coll.nbc.idle.push(e);
            }
            true
        }
    }
}

/// The status of a collective that failed (a peer passed a different amount).
fn truncated() -> Status {
    Status {
        error: Outcome::Truncated,
        ..Status::EMPTY
    }
}

/// Registers `op` and returns its request: started (`How::Start`) or inactive
/// (`How::Init`).
pub(crate) fn register(rt: &mut Runtime, op: Op, how: How) -> ReqId {
    let comm = op.comm;
    let persistent = how == How::Init;
    let req = if persistent {
        rt.device
            .persistent_request(Persistent::ProcNull, Direction::Send)
    } else {
        rt.device.generalized_request()
    };
    if let Some(r) = rt.device.request_mut(req) {
        r.owner = comm;
    }
    let e = Entry {
        req,
        op: Box::new(op),
        persistent,
    };
    if persistent {
        rt.coll.nbc.idle.push(e);
    } else {
        settle(rt, e);
    }
    req
}

/// Runs `op` now (`How::Block`) or registers it; the request for the others.
pub(crate) fn finish_how(op: Op, how: How) -> Result<Option<ReqId>> {
    match how {
        How::Block => op.run().map(|()| None),
        _ => runtime::with(|rt| Ok(Some(register(rt, op, how)))),
    }
}

/// Moves every started op forward; true if any finished a step that others may wait for.
pub fn advance_all(rt: &mut Runtime) -> bool {
    let list = std::mem::take(&mut rt.coll.nbc.active);
    rt.coll.nbc.shm_active = 0;
    // A change of the context claims (an agreement joined, went or released slots)
    // may let an op moved earlier in this pass go on: it counts as something done, so
    // the waiter polls again instead of sleeping on a doorbell no peer rings.
    let claims = rt.comms.claims.generation();
    let mut did = false;
    for e in list {
        did |= settle(rt, e);
    }
    did | (rt.comms.claims.generation() != claims)
}

/// `MPI_Start` of request `id` when it is a persistent collective: Ok(false) when it is
/// not one.
pub(crate) fn start(rt: &mut Runtime, id: ReqId) -> Result<bool> {
    // The idle list first: a persistent collective being restarted is there.
    let Some(i) = rt.coll.nbc.idle.iter().position(|e| e.req == id) else {
        return if owns(rt, id) {
            Err(still_active())
        } else {
            Ok(false)
        };
    };
    if !is_inactive(rt, id) {
        // Done, but not yet completed by a wait or test call.
        return Err(still_active());
    }
    if rt.device.start_pending(id).is_err() {
        return Err(still_active());
    }
    // A single fast-path call mostly completes inside its start: it stays on the idle
    // list then, with its request marked done.
    match rt.coll.nbc.idle[i].op.start_single_shm() {
        Some(Ok(true)) => {
            rt.device.mark_done(id, Status::EMPTY);
            return Ok(true);
        }
        Some(Err(_)) => {
            rt.device.mark_done(id, truncated());
            return Ok(true);
        }
        Some(Ok(false)) => {
            let e = rt.coll.nbc.idle.swap_remove(i);
            rt.coll.nbc.shm_active += 1;
            rt.coll.nbc.active.push(e);
            return Ok(true);
        }
        None => {}
    }
    let mut e = rt.coll.nbc.idle.swap_remove(i);
    e.op.restart(rt);
    settle(rt, e);
    Ok(true)
}

fn still_active() -> Error {
    Error::new(
        ErrorClass::Request,
        "the persistent collective request is already active (complete it with MPI_Wait or MPI_Test before starting it again)",
    )
}

fn is_inactive(rt: &Runtime, id: ReqId) -> bool {
    rt.device.request(id).is_some_and(|r| r.is_inactive())
}

/// True when `id` is the request of a collective this table holds: a nonblocking one
/// until it is done, a persistent one until it is freed. (A done nonblocking one has
/// left the table; its request is then like any complete request.)
pub(crate) fn owns(rt: &Runtime, id: ReqId) -> bool {
    !rt.coll.nbc.is_empty() && rt.coll.nbc.holds(id)
}

/// `MPI_Request_free` of a collective request: an active one (started and not yet
/// completed by a wait or test call) may not be freed; an inactive persistent one goes
/// with its op. Ok(false) when `id` is not one.
pub(crate) fn free(rt: &mut Runtime, id: ReqId) -> Result<bool> {
    if !owns(rt, id) {
        return Ok(false);
    }
    let idle = rt.coll.nbc.idle.iter().any(|e| e.req == id);
    if !idle || !is_inactive(rt, id) {
        return err(
            ErrorClass::Request,
            "the request of a nonblocking or persistent collective cannot be freed while it is active (complete it with MPI_Wait or MPI_Test first)",
        );
    }
    rt.coll.nbc.idle.retain(|e| e.req != id);
    rt.device.free_request(id);
    Ok(true)
}

/// For `MPI_Wait` on request `id`: when it is a started fast-path call whose current
/// step waits for its peers' arrivals, what to watch for them outside the lock (the
/// waiter then needs no locked rounds of progress until they came).
pub(crate) fn wait_watch(rt: &mut Runtime, id: ReqId) -> Option<super::shm::poll::Watch> {
    if rt.coll.nbc.shm_active == 0 {
        return None;
    }
    let e = rt.coll.nbc.active.iter_mut().find(|e| e.req == id)?;
    match e.op.steps.get_mut(e.op.at) {
        Some(Step::Shm(p)) => p.watch(),
        _ => None,
    }
}

/// Whether a started fast-path call would move on if advanced: a waiter about to sleep
/// asks, since such a call's peers ring the doorbell when they arrive, which may have
/// happened after the waiter last moved it.
pub fn shm_ready(rt: &mut Runtime) -> bool {
    rt.coll.nbc.active.iter_mut().any(|e| e.op.shm_ready())
}

/// Whether a started fast-path call is under way: its peers' arrivals show in the
/// communicator's slots, not in the rings a quiet waiter watches, so the waiter polls.
#[inline]
pub fn shm_waiting(rt: &Runtime) -> bool {
    rt.coll.nbc.shm_active != 0
}

/// Some op waits for a user function to run (read without the lock).
#[inline]
pub fn any_parked() -> bool {
    PARKED.load(Ordering::Relaxed) != 0
}

/// Runs the user functions that parked ops wait for (outside the runtime lock), then
/// moves those ops on. One atomic load when none is parked.
#[inline]
pub fn run_parked() {
    if PARKED.load(Ordering::Relaxed) != 0 {
        run_parked_slow();
    }
}

#[cold]
fn run_parked_slow() {
    let Ok(mut list) = runtime::with(|rt| Ok(std::mem::take(&mut rt.coll.nbc.parked))) else {
        return;
    };
    PARKED.fetch_sub(list.len(), Ordering::Relaxed);
    for e in &mut list {
        e.op.resume_user();
    }
    let _ = runtime::with(|rt| {
        for e in list {
            settle(rt, e);
        }
        Ok(())
    });
}
