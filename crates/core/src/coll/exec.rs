//! The schedule executor: runs one rank's [`Schedule`] of a collective call over the
//! device, in the communicator's collective context under the call's tag.
//!
//! Round by round it posts every receive, then every send (straight from and into the
//! buffers the schedule names: user memory for contiguous data, a window of a streamed
//! buffer's layout that the device packs or unpacks piece by piece, the staging copy,
//! or pooled temporaries), waits for all of them, then runs the round's local copies
//! and reductions (a copy touching a streamed buffer packs or unpacks in place, through
//! a bounded bounce buffer when both sides are streamed). Everything that runs no user code happens inside one
//! [`runtime::block_on`] poll, so a round whose data has already arrived costs one lock
//! acquisition; rounds with a user reduction leave the lock for their local steps.
//!
//! Errors (a peer sending a different amount than this rank expects) do not stop the
//! schedule: the rest still runs, so the other ranks are not left waiting, and the
//! first error is reported at the end.

use super::op::Reducer;
use crate::comm::{CommId, Group};
use crate::device::matching::Spec;
use crate::device::{Layout, RecvArgs, ReqId, SendArgs, SendMode};
use crate::error::{Error, ErrorClass, Result};
use crate::runtime::{self, Runtime};
use oxmpi_coll::schedule::{BufRef, Local, Region, Round, Schedule};
use std::ptr::NonNull;
use std::sync::Arc;

/// One started transfer of the current round.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Pending {
    id: ReqId,
    /// Peer rank in the communicator.
    peer: u32,
    /// For receives: the number of bytes the schedule expects.
    recv_len: Option<usize>,
}

/// Buffers kept between calls so that small collectives allocate nothing.
#[derive(Default)]
pub(crate) struct Pool {
    pub tmps: Vec<Vec<u8>>,
    pub reqs: Vec<Pending>,
    /// For local copies between two streamed buffers.
    pub bounce: Vec<u8>,
}

/// The bounce buffer's size: copies between two streamed buffers go through it in
/// pieces of this many bytes.
const BOUNCE: usize = 64 * 1024;

/// Everything one rank needs to run one collective call.
pub(crate) struct Exec {
    pub sched: Arc<Schedule>,
    /// World ranks of the communicator's members (peers of the schedule).
    pub group: Arc<Group>,
    pub comm: CommId,
    pub ctx: u32,
    pub tag: i32,
    pub me: i32,
    /// Base of `BufRef::Send` (never written).
    pub send: *const u8,
    /// Base of `BufRef::Recv`.
    pub recv: *mut u8,
    pub reducer: Reducer,
    /// `BufRef::Send` / `BufRef::Recv` when streamed: regions are windows of these.
    send_stream: Option<Layout>,
    recv_stream: Option<Layout>,
    pool: Pool,
    round: usize,
    posted: bool,
    checked: usize,
    error: Option<Error>,
}

pub(crate) enum Step {
    Done,
    /// The current round's transfers are complete and its local steps need user code.
    UserLocals,
}

fn dangling() -> *mut u8 {
    NonNull::<u8>::dangling().as_ptr()
}

impl Exec {
    /// An executor for `sched`; `pool` provides the temporaries and request list.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        sched: Arc<Schedule>,
        group: Arc<Group>,
        comm: CommId,
        ctx: u32,
        tag: i32,
        me: i32,
        send: *const u8,
        recv: *mut u8,
        reducer: Reducer,
        mut pool: Pool,
    ) -> Exec {
        let sizes = sched.tmp_sizes();
        if pool.tmps.len() < sizes.len() {
            pool.tmps.resize_with(sizes.len(), Vec::new);
        }
        for (t, &n) in pool.tmps.iter_mut().zip(sizes) {
            if t.len() < n {
                t.resize(n, 0);
            }
        }
        pool.reqs.clear();
        Exec {
            sched,
            group,
            comm,
            ctx,
            tag,
            me,
            send,
            recv,
            reducer,
            send_stream: None,
            recv_stream: None,
            pool,
            round: 0,
            posted: false,
            checked: 0,
            error: None,
        }
    }

    /// Streams the send and receive buffers through these layouts (a streamed
    /// view's): the schedule's offsets in them are offsets of their packed bytes.
    pub(crate) fn with_streams(mut self, send: Option<&Layout>, recv: Option<&Layout>) -> Exec {
        self.send_stream = send.cloned();
        self.recv_stream = recv.cloned();
        self
    }

    /// Runs the whole schedule; the pool goes back to the runtime at the end.
    pub(crate) fn run(mut self) -> Result<()> {
        loop {
            let step = runtime::block_on(|rt| self.advance(rt))?;
            match step {
                Step::Done => break,
                Step::UserLocals => self.resume_user(),
            }
        }
        match self.error {
            None => Ok(()),
            Some(e) => Err(e),
        }
    }

    /// Makes a finished executor ready to run its schedule again (a persistent
    /// collective's next start), with temporaries from `pool`.
    pub(crate) fn restart(&mut self, mut pool: Pool) {
        let sizes = self.sched.tmp_sizes();
        if pool.tmps.len() < sizes.len() {
            pool.tmps.resize_with(sizes.len(), Vec::new);
        }
        for (t, &n) in pool.tmps.iter_mut().zip(sizes) {
            if t.len() < n {
                t.resize(n, 0);
            }
        }
        pool.reqs.clear();
        self.pool = pool;
        self.round = 0;
        self.posted = false;
        self.checked = 0;
        self.error = None;
    }

    /// After [`Step::UserLocals`]: runs the current round's local steps (user code:
    /// call without the runtime lock) and moves to the next round.
    pub(crate) fn resume_user(&mut self) {
        let sched = self.sched.clone();
        self.run_locals(sched.round(self.round));
        self.round += 1;
        self.posted = false;
    }

    /// The first error the schedule met, taken.
    pub(crate) fn take_error(&mut self) -> Option<Error> {
        self.error.take()
    }

    /// Moves the schedule forward as far as possible under the lock (never called
    /// again once it returned [`Step::Done`] until [`Exec::restart`]).
    pub(crate) fn advance(&mut self, rt: &mut Runtime) -> Result<Option<Step>> {
        let sched = self.sched.clone();
        loop {
            if self.round == sched.round_count() {
                rt.coll.put_pool(std::mem::take(&mut self.pool));
                return Ok(Some(Step::Done));
            }
            let round = sched.round(self.round);
            if !self.posted {
                self.post(rt, round);
                self.posted = true;
                if !self.complete(rt) {
                    runtime::progress(&mut rt.device);
                }
            }
            if !self.complete(rt) {
                return Ok(None);
            }
            self.finish(rt);
            if self.reducer.is_user()
                && round
                    .locals
                    .iter()
                    .any(|l| matches!(l, Local::Reduce { .. }))
            {
                return Ok(Some(Step::UserLocals));
            }
            self.run_locals(round);
            self.round += 1;
            self.posted = false;
        }
    }

    fn base(&mut self, b: BufRef) -> *mut u8 {
        match b {
            BufRef::Send => self.send as *mut u8,
            BufRef::Recv => self.recv,
            BufRef::Tmp(i) => self.pool.tmps[i as usize].as_mut_ptr(),
        }
    }

    fn at(&mut self, r: Region) -> *mut u8 {
        if r.len == 0 {
            return dangling();
        }
        self.base(r.buf).wrapping_add(r.off)
    }

    /// The message layout of region `r` when it lies in a streamed buffer.
    fn window(&self, r: Region) -> Option<Layout> {
        let l = match r.buf {
            _ if r.len == 0 => None,
            BufRef::Send => self.send_stream.as_ref(),
            BufRef::Recv => self.recv_stream.as_ref(),
            BufRef::Tmp(_) => None,
        }?;
        Some(Layout {
            skip: r.off,
            ..l.clone()
        })
    }

    fn post(&mut self, rt: &mut Runtime, round: Round<'_>) {
        self.pool.reqs.clear();
        self.checked = 0;
        for x in round.recvs {
            let spec = Spec {
                ctx: self.ctx,
                src: x.peer as i32,
                tag: self.tag,
            };
            let cap = x.region.len;
            let id = match self.window(x.region) {
                Some(l) => {
                    let buf = l.base as *mut u8;
                    rt.device.irecv_layout(RecvArgs { spec, buf, cap }, l)
                }
                None => {
                    let buf = self.at(x.region);
                    rt.device.irecv(RecvArgs { spec, buf, cap })
                }
            };
            self.own(rt, id);
            self.pool.reqs.push(Pending {
                id,
                peer: x.peer,
                recv_len: Some(x.region.len),
            });
        }
        for x in round.sends {
            let window = self.window(x.region);
            let buf = match &window {
                Some(l) => l.base as *mut u8,
                None => self.at(x.region),
            };
            let a = SendArgs {
                dest: self.group.members()[x.peer as usize],
                ctx: self.ctx,
                src_rank: self.me,
                tag: self.tag,
                buf,
                len: x.region.len,
                mode: SendMode::Standard,
            };
            let id = match window {
                Some(l) => rt.device.isend_layout(a, l),
                None => rt.device.isend(a),
            };
            self.own(rt, id);
            self.pool.reqs.push(Pending {
                id,
                peer: x.peer,
                recv_len: None,
            });
        }
    }

    fn own(&self, rt: &mut Runtime, id: ReqId) {
        if let Some(r) = rt.device.request_mut(id) {
            r.owner = self.comm;
        }
    }

    /// True when every transfer of the round has completed.
    fn complete(&mut self, rt: &Runtime) -> bool {
        while let Some(p) = self.pool.reqs.get(self.checked) {
            if !rt.device.request(p.id).is_some_and(|r| r.is_complete()) {
                return false;
            }
            self.checked += 1;
        }
        true
    }

    /// Releases the round's requests, noting the first error.
    fn finish(&mut self, rt: &mut Runtime) {
        for i in 0..self.pool.reqs.len() {
            let p = self.pool.reqs[i];
            let st = rt.device.finish(p.id);
            if self.error.is_some() {
                continue;
            }
            if let Some(want) = p.recv_len {
                let msg = if st.error == ErrorClass::Truncate {
                    format!(
                        "rank {} sent more than the {want} bytes this rank expected",
                        p.peer
                    )
                } else if st.error != ErrorClass::Success || st.bytes != want as u64 {
                    format!(
                        "rank {} sent {} bytes where this rank expected {want}",
                        p.peer, st.bytes
                    )
                } else {
                    continue;
                };
                self.error = Some(Error::new(
                    ErrorClass::Truncate,
                    format!("{msg}: the ranks passed different counts or datatype signatures"),
                ));
            } else if st.error != ErrorClass::Success {
                self.error = Some(Error::new(
                    st.error.into(),
                    format!("collective message to rank {} failed", p.peer),
                ));
            }
        }
        self.pool.reqs.clear();
        self.checked = 0;
    }

    fn run_locals(&mut self, round: Round<'_>) {
        for l in round.locals {
            match *l {
                Local::Copy { src, dst } => self.copy(src, dst),
                Local::Reduce { src, dst }
                    if self.window(src).is_some() || self.window(dst).is_some() =>
                {
                    // Only the data-movement collectives stream their buffers, and
                    // their schedules never reduce.
                    self.error.get_or_insert(Error::new(
                        ErrorClass::Intern,
                        "a reduction step names a streamed buffer",
                    ));
                }
                Local::Reduce { src, dst } => {
                    let (s, d) = (self.at(src), self.at(dst));
                    // SAFETY: as for copies: in bounds, disjoint, and nothing else
                    // accesses these bytes while the slices live.
                    let (s, d) = unsafe {
                        (
                            std::slice::from_raw_parts(s as *const u8, src.len),
                            std::slice::from_raw_parts_mut(d, dst.len),
                        )
                    };
                    if let Err(e) = self.reducer.apply(s, d) {
                        self.error.get_or_insert(e);
                    }
                }
            }
        }
    }

    /// `dst = src` for a local step; a streamed side is packed or unpacked in place.
    fn copy(&mut self, src: Region, dst: Region) {
        let len = src.len;
        match (self.window(src), self.window(dst)) {
            (None, None) => {
                let (s, d) = (self.at(src), self.at(dst));
                // SAFETY: the schedule keeps both regions inside their buffers
                // (validated sizes) and never lets a copy's regions overlap.
                unsafe { std::ptr::copy_nonoverlapping(s, d, len) };
            }
            (Some(s), None) => {
                let d = self.at(dst);
                // SAFETY: `dst` lies inside its buffer (a temporary or contiguous user
                // memory), which the streamed user buffer cannot overlap; the layout's
                // buffer holds the window's bytes (MPI contract).
                unsafe { s.pack_at(0, std::slice::from_raw_parts_mut(d, len)) };
            }
            (None, Some(d)) => {
                let s = self.at(src);
                // SAFETY: as above, with the roles swapped.
                unsafe { d.unpack_at(0, std::slice::from_raw_parts(s, len)) };
            }
            (Some(s), Some(d)) => {
                let mut b = std::mem::take(&mut self.pool.bounce);
                b.resize(BOUNCE.min(len), 0);
                let mut off = 0;
                while off < len {
                    let n = b.len().min(len - off);
                    // SAFETY: both layouts' buffers hold their windows (MPI contract)
                    // and `b` is our own memory.
                    unsafe {
                        s.pack_at(off, &mut b[..n]);
                        d.unpack_at(off, &b[..n]);
                    }
                    off += n;
                }
                self.pool.bounce = b;
            }
        }
    }
}
