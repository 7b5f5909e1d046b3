//! `MPI_Comm_idup` and `MPI_Comm_idup_with_info`: a duplicate whose context id is
//! agreed without blocking, as a step of a nonblocking collective op (`coll::nbc`).
//!
//! The new communicator's index is reserved at once (its handle is valid, the
//! communicator unusable until the request completes, as in MPICH). The agreement runs
//! in rounds on the parent's collective context with the call's own tag: members send
//! their offers (free-slot mask and a "held back" flag) to local rank 0, which ANDs them
//! (for an intercommunicator, the two leaders swap and AND both groups' results, so they
//! decide alike) and sends the decision back. Several agreements may be in progress at
//! a process; each has a key (parent context id, collective sequence number) that is
//! the same at every member. The first round offers nothing (it only waits until every
//! member has started the call); in later rounds only the one with the lowest key
//! offers its free slots, and none while a blocking agreement is past its first round
//! here (`context::Claims`); the others offer none and try again. Offered slots are held
//! until the round ends, so no other agreement here (blocking ones included) offers
//! them, and a hold waits only on progress at the members. No round waits on another
//! agreement, and the lowest key among the agreements that every member has joined
//! gets every member's full offer once the rounds holding slots end, so every
//! agreement completes. Attributes are copied by their callbacks at completion, outside
//! the runtime lock (the op parks for it).

use crate::attr::AttrList;
use crate::comm::{Comm, CommId, Group};
use crate::context::{self, AgreementKey, Decision, HoldId, Mask, MASK_BYTES};
use crate::device::matching::Spec;
use crate::device::{Outcome, RecvArgs, ReqId, SendArgs, SendMode};
use crate::error::{Error, ErrorClass, Result};
use crate::runtime::{self, Runtime};
use std::sync::Arc;

/// Bytes of one offer: the mask and the flag.
const OFFER: usize = MASK_BYTES + 4;

/// Where a round stands.
enum Stage {
    /// Root: receiving the other members' offers.
    Gather,
    /// Intercommunicator leader: swapping with the remote leader.
    Cross,
    /// Root: sending the decision.
    Spread(Decision),
    /// Non-root: sent its offer, waiting for the decision.
    Wait,
}

struct Round {
    hold: HoldId,
    stage: Stage,
    acc: Mask,
    constrained: bool,
    /// Send buffers and receive buffers; the requests point into them.
    out: Vec<Vec<u8>>,
    bufs: Vec<Vec<u8>>,
    ids: Vec<ReqId>,
}

/// What the agreement step reports to its op.
pub(crate) enum Poll {
    Pending,
    /// Attribute callbacks must run (outside the lock).
    User,
    Done(Option<Error>),
}

/// One nonblocking duplication in progress.
pub(crate) struct Agreement {
    key: AgreementKey,
    parent: CommId,
    new_id: CommId,
    /// The duplicate, context id to be filled in.
    template: Option<Comm>,
    attrs: AttrList,
    coll_ctx: u32,
    tag: i32,
    cross: i32,
    me: usize,
    local: Arc<Group>,
    remote: Option<Arc<Group>>,
    round: Option<Round>,
    /// Past the first round (every member has started the call).
    joined: bool,
    /// A one-member agreement that had to try again: the claims' generation then. Its
    /// rounds exchange no messages and depend only on the claims here, so it tries
    /// again only once they changed (spinning in place would starve the agreement it
    /// waits for).
    idle_at: Option<u64>,
    copied: bool,
    error: Option<Error>,
}

// SAFETY: the raw pointers the device requests hold point into the agreement's own
// buffers; it is used under the runtime lock, or by the one thread running its
// callbacks.
unsafe impl Send for Agreement {}

fn malformed() -> Error {
    Error::new(
        ErrorClass::Intern,
        "malformed context-id agreement message from a peer (MPI_Comm_idup)",
    )
}

impl Agreement {
    fn recv(&mut self, rt: &mut Runtime, from: i32, tag: i32, len: usize) {
        let r = self.round.as_mut().expect("round");
        r.bufs.push(vec![0u8; len]);
        let buf = r.bufs.last_mut().expect("just pushed").as_mut_ptr();
        let id = rt.device.irecv(RecvArgs {
            spec: Spec {
                ctx: self.coll_ctx,
                src: from,
                tag,
            },
            buf,
            cap: len,
        });
        self.track(rt, id);
    }

    fn send(&mut self, rt: &mut Runtime, dest: u32, src_rank: i32, tag: i32, data: Vec<u8>) {
        let r = self.round.as_mut().expect("round");
        r.out.push(data);
        let d = r.out.last().expect("just pushed");
        let id = rt.device.isend(SendArgs {
            dest,
            ctx: self.coll_ctx,
            src_rank,
            tag,
            buf: d.as_ptr(),
            len: d.len(),
            mode: SendMode::Standard,
        });
        self.track(rt, id);
    }

    fn track(&mut self, rt: &mut Runtime, id: ReqId) {
        if let Some(q) = rt.device.request_mut(id) {
            q.owner = self.parent;
        }
        self.round.as_mut().expect("round").ids.push(id);
    }

    fn start_round(&mut self, rt: &mut Runtime) {
        // The first round only gathers the members (see `context::Claims`).
        let take = self.joined && rt.comms.claims.may_offer(self.key);
        let o = context::offer(rt, take);
        let mut mine = o.mask.encode();
        mine.extend_from_slice(&(o.constrained as u32).to_le_bytes());
        self.round = Some(Round {
            hold: o.hold,
            stage: Stage::Gather,
            acc: o.mask,
            constrained: o.constrained,
            out: Vec::new(),
            bufs: Vec::new(),
            ids: Vec::new(),
        });
        if self.me == 0 {
            for i in 1..self.local.members().len() {
                self.recv(rt, i as i32, self.tag, OFFER);
            }
        } else {
            let root = self.local.members()[0];
            self.send(rt, root, self.me as i32, self.tag, mine);
            self.recv(rt, 0, self.tag, 4);
            self.round.as_mut().expect("round").stage = Stage::Wait;
        }
    }

    /// Finishes the round's requests once all are complete; Some(received buffers).
    fn collect(&mut self, rt: &mut Runtime) -> Option<Result<Vec<Vec<u8>>>> {
        let r = self.round.as_mut().expect("round");
        if !r
            .ids
            .iter()
            .all(|&id| rt.device.request(id).is_some_and(|q| q.is_complete()))
        {
            return None;
        }
        let mut bad = false;
        let mut lost = false;
        for id in r.ids.drain(..) {
            let st = rt.device.finish(id);
            match st.error {
                Outcome::Success => {}
                Outcome::PeerLost => lost = true,
                Outcome::Truncated => bad = true,
            }
        }
        r.out.clear();
        let bufs = std::mem::take(&mut r.bufs);
        Some(if lost {
            Err(Error::new(
                ErrorClass::Other,
                "a member of the communicator was lost during MPI_Comm_idup",
            ))
        } else if bad {
            Err(malformed())
        } else {
            Ok(bufs)
        })
    }

    fn absorb(r: &mut Round, b: &[u8]) -> Result<()> {
        if b.len() != OFFER {
            return Err(malformed());
        }
        r.acc
            .and(&Mask::decode(&b[..MASK_BYTES]).ok_or_else(malformed)?);
        r.constrained |= b[MASK_BYTES..] != [0, 0, 0, 0];
        Ok(())
    }

    fn encode_acc(r: &Round) -> Vec<u8> {
        let mut v = r.acc.encode();
        v.extend_from_slice(&(r.constrained as u32).to_le_bytes());
        v
    }

    fn decide(&mut self, rt: &mut Runtime) {
        let r = self.round.as_mut().expect("round");
        let d = Decision::of(&r.acc, r.constrained);
        r.stage = Stage::Spread(d);
        let bytes = d.encode().to_le_bytes().to_vec();
        let members = self.local.members().to_vec();
        for &w in &members[1..] {
            self.send(rt, w, 0, self.tag, bytes.clone());
        }
    }

    /// Moves the current round on; Some(decision) when it ended here.
    fn step(&mut self, rt: &mut Runtime) -> Result<Option<Decision>> {
        loop {
            let Some(bufs) = self.collect(rt) else {
                return Ok(None);
            };
            let bufs = bufs?;
            let r = self.round.as_mut().expect("round");
            match r.stage {
                Stage::Gather => {
                    for b in &bufs {
                        Self::absorb(r, b)?;
                    }
                    if let Some(remote) = self.remote.clone() {
                        let data = Self::encode_acc(r);
                        r.stage = Stage::Cross;
                        self.recv(rt, 0, self.cross, OFFER);
                        self.send(rt, remote.members()[0], 0, self.cross, data);
                    } else {
                        self.decide(rt);
                    }
                }
                Stage::Cross => {
                    Self::absorb(r, &bufs[0])?;
                    self.decide(rt);
                }
                Stage::Spread(d) => return Ok(Some(d)),
                Stage::Wait => {
                    let b: [u8; 4] = bufs[0].as_slice().try_into().map_err(|_| malformed())?;
                    return Ok(Some(Decision::decode(u32::from_le_bytes(b))));
                }
            }
        }
    }

    /// Ends the agreement here: no longer in progress, its index given back on failure.
    fn end(&mut self, rt: &mut Runtime, e: Option<Error>) -> Poll {
        rt.comms.claims.leave(self.key);
        if e.is_some() {
            rt.comms.unreserve(self.new_id);
        }
        Poll::Done(e)
    }

    pub(crate) fn advance(&mut self, rt: &mut Runtime) -> Poll {
        if self.copied {
            return Poll::Done(self.error.take());
        }
        loop {
            if self.round.is_none() {
                if self.idle_at == Some(rt.comms.claims.generation()) {
                    return Poll::Pending;
                }
                self.idle_at = None;
                self.start_round(rt);
                runtime::progress(&mut rt.device);
            }
            let d = match self.step(rt) {
                Ok(None) => return Poll::Pending,
                Ok(Some(d)) => d,
                Err(e) => {
                    if let Some(r) = self.round.take() {
                        rt.comms.claims.release(r.hold);
                        if !r.ids.is_empty() {
                            // Requests of a failed round finish on their own, into
                            // buffers that must outlive them.
                            for &id in &r.ids {
                                rt.device.free_request(id);
                            }
                            std::mem::forget(r.bufs);
                            std::mem::forget(r.out);
                        }
                    }
                    return self.end(rt, Some(e));
                }
            };
            let r = self.round.take().expect("round");
            match d {
                Decision::Retry => {
                    rt.comms.claims.release(r.hold);
                    if !self.joined {
                        self.joined = true;
                        rt.comms.claims.joined(self.key);
                    } else if self.remote.is_none() && self.local.members().len() == 1 {
                        self.idle_at = Some(rt.comms.claims.generation());
                        return Poll::Pending;
                    }
                }
                Decision::Exhausted => {
                    rt.comms.claims.release(r.hold);
                    return self.end(rt, Some(context::exhausted()));
                }
                Decision::Ctx(ctx) => {
                    let mut c = self.template.take().expect("template");
                    c.ctx = ctx;
                    // Installed before the hold goes, so the slot is never free between.
                    rt.comms.fill(self.new_id, c);
                    rt.comms.claims.release(r.hold);
                    rt.comms.claims.leave(self.key);
                    if self.attrs.entries().is_empty() {
                        self.copied = true;
                        return Poll::Done(None);
                    }
                    return Poll::User;
                }
            }
        }
    }

    /// Runs the parent's attribute copy callbacks for the new communicator (no lock).
    pub(crate) fn run_user(&mut self) {
        if self.copied {
            return;
        }
        self.copied = true;
        if let Err(e) = crate::commops::copy_attrs(self.parent, self.new_id, &self.attrs) {
            // As MPI_Comm_dup: a failed copy leaves no new communicator.
            let _ = crate::commops::discard(self.new_id);
            self.error = Some(e);
        }
    }
}

/// Starts `MPI_Comm_idup` (`hints`: those of `MPI_Comm_idup_with_info`, else the
/// parent's): the new communicator's index and the request.
pub fn comm_idup(id: CommId, hints: Option<crate::comm::Hints>) -> Result<(CommId, ReqId)> {
    runtime::with(|rt| {
        let c = rt.comms.get(id)?.clone();
        let dev = &rt.device;
        let seq = rt.coll.next_tag(&c, |w| dev.route(w))?;
        let (tag, cross) = if c.is_inter() {
            // The tags an intercommunicator collective with this sequence number would use.
            let base = (seq % (1 << 27)) * 4;
            (base, base + 1)
        } else {
            (seq, seq)
        };
        let key = (c.ctx, seq as u32);
        let new_id = rt.comms.reserve();
        rt.comms.claims.enter(key);
        let template = Comm {
            ctx: 0,
            rank: c.rank,
            group: c.group.clone(),
            remote: c.remote.clone(),
            errhandler: c.errhandler,
            name: String::new(),
            attrs: Default::default(),
            topo: c.topo.clone(),
            hints: hints.unwrap_or(c.hints),
            session: c.session,
        };
        let a = Agreement {
            key,
            parent: id,
            new_id,
            template: Some(template),
            attrs: c.attrs.clone(),
            coll_ctx: c.coll_ctx(),
            tag,
            cross,
            me: c.rank as usize,
            local: c.group.clone(),
            remote: c.remote.clone(),
            round: None,
            joined: false,
            idle_at: None,
            copied: false,
            error: None,
        };
        let op = crate::coll::nbc::Op::new(
            id,
            vec![crate::coll::nbc::Step::Agree(Box::new(a))],
            Vec::new(),
            Vec::new(),
        );
        let req = crate::coll::nbc::register(rt, op, crate::coll::How::Start);
        Ok((new_id, req))
    })
}

/// `MPI_Comm_idup_with_info`: the hints of `info` (`MPI_INFO_NULL`: none).
pub fn comm_idup_with_info(
    id: CommId,
    info: Option<crate::info::InfoId>,
) -> Result<(CommId, ReqId)> {
    let hints = crate::commops::hints_of(info)?;
    comm_idup(id, Some(hints))
}
