//! Making and unmaking communicators: duplicate, create (from a group, or collectively
//! over the group only), split (by colour, by node), free; intercommunicators (create,
//! merge, and dup/create/split on them); communicators with a process topology;
//! names, groups, comparison; and attribute caching on communicators with its
//! callbacks run at the right moments.
//!
//! Collective constructors agree on a context id (see [`crate::context`]) and share
//! what each member contributed through the exchanges of `internal_coll`. Attribute
//! callbacks and everything else that runs user code are called with the runtime lock
//! released.

use crate::attr::{AttrHooks, AttrKind, AttrObject, Key, KeyvalId, Predefined};
use crate::coll::impi;
use crate::comm::{Comm, CommId, Group, Hints, SELF, WORLD};
use crate::context::{self, Mask};
use crate::error::{err, Error, ErrorClass, Result};
use crate::group::{self, Comparison, GroupId};
use crate::internal_coll::{self as ic, Member, Reader, Team, Writer};
use crate::runtime;
use crate::topo::{self, Cart, DistGraph, Graph, Topology};
use crate::{ANY_SOURCE, PROC_NULL, TAG_UB, UNDEFINED};
use std::sync::Arc;

/// Longest communicator name kept (`MPI_MAX_OBJECT_NAME - 1` bytes).
pub const MAX_NAME: usize = 127;

fn malformed() -> Error {
    Error::new(
        ErrorClass::Intern,
        "malformed communicator-management message from a peer",
    )
}

/// A copy of communicator `id` (cheap: groups and topology are shared).
pub fn snapshot(id: CommId) -> Result<Comm> {
    runtime::with(|rt| Ok(rt.comms.get(id)?.clone()))
}

fn my_world() -> Result<u32> {
    runtime::with(|rt| Ok(rt.world_rank))
}

pub(crate) fn require_intra(c: &Comm, what: &str) -> Result<()> {
    if c.is_inter() {
        return err(
            ErrorClass::Comm,
            format!("{what} must be an intracommunicator"),
        );
    }
    Ok(())
}

fn require_inter(c: &Comm) -> Result<()> {
    if !c.is_inter() {
        return err(
            ErrorClass::Comm,
            "the communicator is not an intercommunicator",
        );
    }
    Ok(())
}

pub(crate) fn new_comm(
    ctx: u32,
    group: Arc<Group>,
    remote: Option<Arc<Group>>,
    parent: &Comm,
    me: u32,
) -> Option<Comm> {
    let rank = group.rank_of_world(me)?;
    Some(Comm {
        ctx,
        rank,
        group,
        remote,
        errhandler: parent.errhandler,
        name: String::new(),
        attrs: Default::default(),
        topo: None,
        hints: Default::default(),
        session: parent.session,
    })
}

pub(crate) fn install(c: Comm) -> Result<CommId> {
    runtime::with(|rt| Ok(rt.comms.insert(c)))
}

// ----- agreement -------------------------------------------------------------------------

pub(crate) fn team_of(group: &Group, me: i32, ctx: u32, tag: i32) -> Team {
    Team {
        ctx,
        tag,
        members: group
            .members()
            .iter()
            .enumerate()
            .map(|(i, &w)| Member {
                world: w,
                id: i as i32,
            })
            .collect(),
        me: me as usize,
        root: 0,
    }
}

/// The slots an agreement without retries offers: held, and nonblocking agreements
/// offering nothing here, until the guard goes (at the end of the calling function).
pub(crate) fn held_mask() -> Result<(Mask, HeldMask)> {
    let o = offer(1)?;
    Ok((o.mask, HeldMask(o.hold)))
}

/// See [`held_mask`].
pub(crate) struct HeldMask(context::HoldId);

impl Drop for HeldMask {
    fn drop(&mut self) {
        release(self.0);
        agreement_ended(2);
    }
}

/// This process's offer for one round of a blocking agreement, held until
/// [`release`]: nothing in the first round (which only waits for every member), its
/// free slots after it. `round` counts from 0; the second round marks the agreement as blocking the
/// nonblocking ones until [`agreement_ended`].
fn offer(round: usize) -> Result<context::Offer> {
    runtime::with(|rt| {
        if round == 1 {
            rt.comms.claims.blocking(true);
        }
        Ok(context::offer(rt, round > 0))
    })
}

/// A blocking agreement ended after `rounds` rounds.
fn agreement_ended(rounds: usize) {
    if rounds > 1 {
        let _ = runtime::with(|rt| {
            rt.comms.claims.blocking(false);
            Ok(())
        });
    }
}

fn release(hold: context::HoldId) {
    let _ = runtime::with(|rt| {
        rt.comms.claims.release(hold);
        Ok(())
    });
}

/// The slot a blocking agreement decided on, still held at this process: another
/// thread's agreement must not offer it before the new communicator is installed (two
/// communicators would share the context here, mixing their messages and collective
/// sequences). Keep it until after [`install`], or until giving up.
#[must_use = "the decided slot is free to other threads once this is dropped"]
pub(crate) struct Decided(context::HoldId);

impl Drop for Decided {
    fn drop(&mut self) {
        release(self.0);
    }
}

/// Ends the hold of one agreement round with outcome `r`: a decision on context id
/// `ctx(x)` keeps that slot held (see [`Decided`]); anything else releases it.
fn end_round<T>(
    hold: context::HoldId,
    r: Result<Option<T>>,
    ctx: impl Fn(&T) -> u32,
) -> Result<Option<(T, Decided)>> {
    match r {
        Ok(Some(x)) => {
            let slot = ctx(&x) as usize / 2;
            let _ = runtime::with(|rt| {
                rt.comms.claims.narrow(hold, slot);
                Ok(())
            });
            Ok(Some((x, Decided(hold))))
        }
        other => {
            release(hold);
            other.map(|_| None)
        }
    }
}

/// Every member contributes `payload`; the root ANDs the free-context masks, runs
/// `compute` on the payloads (in member order) to get one part per member, and each
/// member receives (context id, its part) — or the error the root found. Rounds repeat
/// while the AND is empty only because members held slots back.
fn agree(
    team: &Team,
    payload: Vec<u8>,
    compute: impl FnOnce(&[Vec<u8>]) -> Result<Vec<Vec<u8>>>,
) -> Result<(u32, Vec<u8>, Decided)> {
    let mut compute = Some(compute);
    let mut rounds = 0;
    let r = (|| loop {
        let o = offer(rounds)?;
        rounds += 1;
        let r = agree_round(team, &payload, &o, &mut compute);
        if let Some(((ctx, part), held)) = end_round(o.hold, r, |x| x.0)? {
            return Ok((ctx, part, held));
        }
    })();
    agreement_ended(rounds);
    r
}

/// One round of [`agree`]; `None`: try again.
fn agree_round<F: FnOnce(&[Vec<u8>]) -> Result<Vec<Vec<u8>>>>(
    team: &Team,
    payload: &[u8],
    o: &context::Offer,
    compute: &mut Option<F>,
) -> Result<Option<(u32, Vec<u8>)>> {
    let mut w = Writer::default();
    w.bytes(&o.mask.encode())
        .u32(o.constrained as u32)
        .bytes(payload);
    let all = team.gather(w.finish())?;
    let parts = all.map(|all| {
        let n = all.len();
        let r = (|| {
            let mut m = Mask::full();
            let mut constrained = false;
            let mut payloads = Vec::with_capacity(n);
            for b in &all {
                let mut r = Reader::new(b);
                m.and(&Mask::decode(r.bytes()?).ok_or_else(malformed)?);
                constrained |= r.u32()? != 0;
                payloads.push(r.bytes()?.to_vec());
            }
            let ctx = match context::Decision::of(&m, constrained) {
                context::Decision::Ctx(c) => c,
                context::Decision::Retry => return Ok(None),
                context::Decision::Exhausted => return Err(context::exhausted()),
            };
            let f = compute
                .take()
                .ok_or_else(|| Error::new(ErrorClass::Intern, "agreement computed twice"))?;
            let parts = f(&payloads)?;
            if parts.len() != n {
                return err(ErrorClass::Intern, "wrong number of parts");
            }
            Ok(Some((ctx, parts)))
        })();
        match r {
            Ok(Some((ctx, parts))) => parts
                .into_iter()
                .map(|p| {
                    let mut w = Writer::default();
                    w.u32(ctx).bytes(&p);
                    ic::encode_outcome(&Ok(w.finish()))
                })
                .collect(),
            Ok(None) => {
                let mut w = Writer::default();
                w.u32(context::Decision::Retry.encode()).bytes(&[]);
                vec![ic::encode_outcome(&Ok(w.finish())); n]
            }
            Err(e) => vec![ic::encode_outcome(&Err(e)); n],
        }
    });
    let mine = team.scatter(parts)?;
    let body = ic::decode_outcome(&mine)?;
    let mut r = Reader::new(&body);
    let ctx = r.u32()?;
    let part = r.bytes()?.to_vec();
    if context::Decision::decode(ctx) == context::Decision::Retry {
        return Ok(None);
    }
    Ok(Some((ctx, part)))
}

/// Every member gets the list of all payloads (an allgather) and the agreed context id.
pub(crate) fn agree_all(team: &Team, payload: Vec<u8>) -> Result<(u32, Vec<Vec<u8>>, Decided)> {
    let n = team.members.len();
    let (ctx, part, held) = agree(team, payload, |p| {
        let mut w = Writer::default();
        w.u32(p.len() as u32);
        for x in p {
            w.bytes(x);
        }
        Ok(vec![w.finish(); n])
    })?;
    Ok((ctx, decode_list(&part, n)?, held))
}

fn decode_list(b: &[u8], max: usize) -> Result<Vec<Vec<u8>>> {
    let mut r = Reader::new(b);
    let n = r.u32()? as usize;
    if n > max {
        return Err(malformed());
    }
    (0..n).map(|_| r.bytes().map(|x| x.to_vec())).collect()
}

fn encode_list(p: &[Vec<u8>]) -> Vec<u8> {
    let mut w = Writer::default();
    w.u32(p.len() as u32);
    for x in p {
        w.bytes(x);
    }
    w.finish()
}

/// (context id, local payloads, remote payloads).
type InterAgreement = (u32, Vec<Vec<u8>>, Vec<Vec<u8>>);

/// The agreement over both groups of an intercommunicator: a context id free at every
/// member of both, the payloads of the local group and those of the remote group.
fn inter_agree(c: &Comm, payload: Vec<u8>) -> Result<(InterAgreement, Decided)> {
    let mut rounds = 0;
    let r = (|| loop {
        let o = offer(rounds)?;
        rounds += 1;
        let r = inter_agree_round(c, &payload, &o);
        if let Some(x) = end_round(o.hold, r, |x| x.0)? {
            return Ok(x);
        }
    })();
    agreement_ended(rounds);
    r
}

/// One round of [`inter_agree`]; `None`: try again.
fn inter_agree_round(
    c: &Comm,
    payload: &[u8],
    o: &context::Offer,
) -> Result<Option<InterAgreement>> {
    let remote = c
        .remote
        .as_ref()
        .ok_or_else(|| Error::new(ErrorClass::Comm, "not an intercommunicator"))?;
    let team = team_of(&c.group, c.rank, c.coll_ctx(), ic::TAG_LOCAL);
    let nl = c.group.members().len();
    let nr = remote.members().len();
    let mut w = Writer::default();
    w.bytes(&o.mask.encode())
        .u32(o.constrained as u32)
        .bytes(payload);
    let all = team.gather(w.finish())?;
    let outcome = match all {
        None => None,
        Some(all) => {
            let r = (|| {
                let mut m = Mask::full();
                let mut constrained = false;
                let mut payloads = Vec::with_capacity(all.len());
                for b in &all {
                    let mut r = Reader::new(b);
                    m.and(&Mask::decode(r.bytes()?).ok_or_else(malformed)?);
                    constrained |= r.u32()? != 0;
                    payloads.push(r.bytes()?.to_vec());
                }
                let mut s = Writer::default();
                s.bytes(&m.encode())
                    .u32(constrained as u32)
                    .bytes(&encode_list(&payloads));
                let leader = Member {
                    world: remote.world_of(0).ok_or_else(malformed)?,
                    id: 0,
                };
                let theirs = ic::swap(leader, 0, c.coll_ctx(), ic::TAG_CROSS, s.finish())?;
                let mut r = Reader::new(&theirs);
                m.and(&Mask::decode(r.bytes()?).ok_or_else(malformed)?);
                constrained |= r.u32()? != 0;
                let remote_payloads = decode_list(r.bytes()?, nr)?;
                if remote_payloads.len() != nr {
                    return Err(malformed());
                }
                // Both leaders see the same AND and flags, so they decide alike.
                let ctx = match context::Decision::of(&m, constrained) {
                    context::Decision::Exhausted => return Err(context::exhausted()),
                    d => d.encode(),
                };
                let mut o = Writer::default();
                o.u32(ctx)
                    .bytes(&encode_list(&payloads))
                    .bytes(&encode_list(&remote_payloads));
                Ok(o.finish())
            })();
            Some(ic::encode_outcome(&r))
        }
    };
    let b = team.bcast(outcome)?;
    let body = ic::decode_outcome(&b)?;
    let mut r = Reader::new(&body);
    let ctx = r.u32()?;
    if context::Decision::decode(ctx) == context::Decision::Retry {
        return Ok(None);
    }
    let local = decode_list(r.bytes()?, nl)?;
    let remote_p = decode_list(r.bytes()?, nr)?;
    if local.len() != nl || remote_p.len() != nr {
        return Err(malformed());
    }
    Ok(Some((ctx, local, remote_p)))
}

// ----- duplication and attribute copying ------------------------------------------------

/// Runs the copy callbacks of `old`'s attributes for the new communicator `new`.
pub(crate) fn copy_attrs(old: CommId, new: CommId, attrs: &crate::attr::AttrList) -> Result<()> {
    for &(key, val) in attrs.entries().iter().rev() {
        let Some(h) = runtime::with(|rt| Ok(rt.keyvals.hooks(key)))? else {
            continue;
        };
        if let Some(v) = h.copy(AttrObject::Comm(old), key, val)? {
            runtime::with(|rt| {
                let c = rt.comms.get_mut(new)?;
                if c.attrs.set(key, v).is_none() {
                    rt.keyvals.add_use(key);
                }
                Ok(())
            })?;
        }
    }
    Ok(())
}

/// Runs the delete callbacks of every attribute on `id` (most recent first) and
/// removes them; stops at the first callback that fails.
fn delete_all_attrs(id: CommId) -> Result<()> {
    loop {
        let next = runtime::with(|rt| Ok(rt.comms.get(id)?.attrs.entries().first().copied()))?;
        let Some((key, val)) = next else {
            return Ok(());
        };
        if let Some(h) = runtime::with(|rt| Ok(rt.keyvals.hooks(key)))? {
            h.delete(AttrObject::Comm(id), key, val)?;
        }
        runtime::with(|rt| {
            if let Ok(c) = rt.comms.get_mut(id) {
                if c.attrs.remove(key).is_some() {
                    rt.keyvals.drop_use(key);
                }
            }
            Ok(())
        })?;
    }
}

/// Deletes the attributes of a communicator being abandoned and removes it.
pub(crate) fn discard(id: CommId) -> Result<()> {
    let r = delete_all_attrs(id);
    runtime::with(|rt| {
        context::remove_now(rt, id);
        Ok(())
    })?;
    r
}

/// Inserts a freshly agreed duplicate of `old` and copies its attributes; on a copy
/// callback failure the duplicate is deleted again.
fn finish_dup(old: CommId, oc: &Comm, new: Comm) -> Result<CommId> {
    let id = install(new)?;
    if let Err(e) = copy_attrs(old, id, &oc.attrs) {
        let _ = delete_all_attrs(id);
        runtime::with(|rt| {
            context::remove_now(rt, id);
            Ok(())
        })?;
        return Err(e);
    }
    Ok(id)
}

/// `MPI_Comm_dup`: same group(s), same topology, attributes copied by their
/// callbacks, the same hints, a new context.
pub fn comm_dup(id: CommId) -> Result<CommId> {
    comm_dup_hinted(id, None)
}

/// `MPI_Comm_dup_with_info`: [`comm_dup`], with the hints of `info` (an
/// `MPI_INFO_NULL` gives none) instead of those of `id`.
pub fn comm_dup_with_info(id: CommId, info: Option<crate::info::InfoId>) -> Result<CommId> {
    let hints = hints_of(info)?;
    comm_dup_hinted(id, Some(hints))
}

/// The hints an info object gives a communicator that has none.
pub(crate) fn hints_of(info: Option<crate::info::InfoId>) -> Result<Hints> {
    let entries = match info {
        Some(i) => crate::info::entries(i)?,
        None => Vec::new(),
    };
    Ok(Hints::default().updated(entries.iter().map(|(k, v)| (&k[..], &v[..]))))
}

/// `MPI_Comm_set_info`: the assertions `info` names change; the others keep their
/// values.
pub fn comm_set_info(id: CommId, info: crate::info::InfoId) -> Result<()> {
    let entries = crate::info::entries(info)?;
    runtime::with(|rt| {
        let c = rt.comms.get_mut(id)?;
        c.hints = c
            .hints
            .updated(entries.iter().map(|(k, v)| (&k[..], &v[..])));
        Ok(())
    })
}

/// `MPI_Comm_get_info`: a new info object with every assertion oxmpi supports and
/// its current value (`"true"` / `"false"`): the standard asks for every supported
/// hint with a default value, and oxmpi retains no other.
pub fn comm_get_info(id: CommId) -> Result<crate::info::InfoId> {
    let hints = runtime::with(|rt| Ok(rt.comms.get(id)?.hints))?;
    let info = crate::info::create();
    for (k, v) in Hints::KEYS.iter().zip(hints.values()) {
        let v: &[u8] = if v { b"true" } else { b"false" };
        if let Err(e) = crate::info::set(info, k.as_bytes(), v) {
            let _ = crate::info::free(info);
            return Err(e);
        }
    }
    Ok(info)
}

/// The hints of a communicator (the Rust API's view).
pub fn comm_hints(id: CommId) -> Result<Hints> {
    runtime::with(|rt| Ok(rt.comms.get(id)?.hints))
}

fn comm_dup_hinted(id: CommId, hints: Option<Hints>) -> Result<CommId> {
    let c = snapshot(id)?;
    let (ctx, _held) = if c.is_inter() && impi::inter_spans(&c)? {
        let rsize = c.remote.as_ref().ok_or_else(malformed)?.size();
        (impi::intercomm_dup(id, c.rank, rsize)?, None)
    } else if c.is_inter() {
        let ((ctx, ..), held) = inter_agree(&c, Vec::new())?;
        (ctx, Some(held))
    } else if let Some(s) = impi::span(id)? {
        (impi::new_cid(&s)?, None)
    } else {
        let (ctx, _, held) = agree_all(
            &team_of(&c.group, c.rank, c.coll_ctx(), ic::TAG_INTRA),
            Vec::new(),
        )?;
        (ctx, Some(held))
    };
    let new = Comm {
        ctx,
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
    finish_dup(id, &c, new)
}

// ----- creation from groups ---------------------------------------------------------------

fn check_subgroup(g: &Group, of: &Group, what: &str) -> Result<()> {
    for (i, &w) in g.members().iter().enumerate() {
        if of.rank_of_world(w).is_none() {
            return err(
                ErrorClass::Group,
                format!("process {i} of the group (world rank {w}) is not in {what}"),
            );
        }
    }
    Ok(())
}

/// `MPI_Comm_create`: `None` at processes not in `group` (or, on an
/// intercommunicator, when either side's group is empty).
pub fn comm_create(id: CommId, group: &Group) -> Result<Option<CommId>> {
    let c = snapshot(id)?;
    let me = my_world()?;
    check_subgroup(group, &c.group, "the communicator's (local) group")?;
    if c.is_inter() {
        let mut w = Writer::default();
        w.u32s(group.members());
        let ((ctx, _, remote), _held) = inter_agree(&c, w.finish())?;
        let remote_members = Reader::new(&remote[0]).u32s()?;
        if group.size() == 0 || remote_members.is_empty() {
            return Ok(None);
        }
        let rg = Arc::new(Group::new(remote_members));
        return match new_comm(ctx, Arc::new(group.clone()), Some(rg), &c, me) {
            Some(n) => install(n).map(Some),
            None => Ok(None),
        };
    }
    let (ctx, _held) = match impi::span(id)? {
        Some(s) => (impi::new_cid(&s)?, None),
        None => {
            let (ctx, _, held) = agree_all(
                &team_of(&c.group, c.rank, c.coll_ctx(), ic::TAG_INTRA),
                Vec::new(),
            )?;
            (ctx, Some(held))
        }
    };
    match new_comm(ctx, Arc::new(group.clone()), None, &c, me) {
        Some(n) => install(n).map(Some),
        None => Ok(None),
    }
}

/// `MPI_Comm_create_group`: collective over the members of `group` only.
pub fn comm_create_group(id: CommId, group: &Group, tag: i32) -> Result<Option<CommId>> {
    let c = snapshot(id)?;
    require_intra(&c, "the communicator of MPI_Comm_create_group")?;
    if !(0..=TAG_UB).contains(&tag) {
        return err(
            ErrorClass::Tag,
            format!("invalid tag {tag} (must be between 0 and MPI_TAG_UB = {TAG_UB})"),
        );
    }
    check_subgroup(group, &c.group, "the communicator's group")?;
    let me = my_world()?;
    let Some(pos) = group.rank_of_world(me) else {
        return Ok(None);
    };
    let team = Team {
        ctx: c.coll_ctx(),
        tag: ic::create_group_tag(tag),
        members: group
            .members()
            .iter()
            .map(|&w| Member {
                world: w,
                id: c.group.rank_of_world(w).unwrap_or(0),
            })
            .collect(),
        me: pos as usize,
        root: 0,
    };
    let (ctx, _, _held) = agree_all(&team, Vec::new())?;
    match new_comm(ctx, Arc::new(group.clone()), None, &c, me) {
        Some(n) => install(n).map(Some),
        None => Ok(None),
    }
}

// ----- split ---------------------------------------------------------------------------------

fn check_color(color: i32) -> Result<()> {
    if color < 0 && color != UNDEFINED {
        return err(
            ErrorClass::Arg,
            format!("invalid color {color} (must be non-negative or MPI_UNDEFINED)"),
        );
    }
    Ok(())
}

fn color_key(color: i32, key: i32) -> Vec<u8> {
    let mut w = Writer::default();
    w.i32(color).i32(key);
    w.finish()
}

/// The members of `g` whose payload has colour `color`, ordered by (key, rank).
fn members_of_color(g: &Group, payloads: &[Vec<u8>], color: i32) -> Result<Vec<u32>> {
    members_by_key(g, payloads, |r| {
        let (c, k) = (r.i32()?, r.i32()?);
        Ok((c == color).then_some(k))
    })
}

/// The members of `g` whose payload `pick` accepts (by returning their key), ordered
/// by (key, rank).
fn members_by_key(
    g: &Group,
    payloads: &[Vec<u8>],
    pick: impl Fn(&mut Reader<'_>) -> Result<Option<i32>>,
) -> Result<Vec<u32>> {
    let mut v = Vec::new();
    for (i, p) in payloads.iter().enumerate() {
        if let Some(k) = pick(&mut Reader::new(p))? {
            v.push((k, i, g.members().get(i).copied().ok_or_else(malformed)?));
        }
    }
    v.sort_by_key(|&(k, i, _)| (k, i));
    Ok(v.into_iter().map(|(_, _, w)| w).collect())
}

/// The new intercommunicator of a split of `c` between the local members `l` and the
/// remote members `r`; none when the remote side is empty.
fn inter_part(ctx: u32, l: Vec<u32>, r: Vec<u32>, c: &Comm, me: u32) -> Result<Option<CommId>> {
    if r.is_empty() {
        return Ok(None);
    }
    let n = new_comm(
        ctx,
        Arc::new(Group::new(l)),
        Some(Arc::new(Group::new(r))),
        c,
        me,
    );
    n.map(install).transpose()
}

fn split_with_topo(
    id: CommId,
    color: i32,
    key: i32,
    topo: Option<Topology>,
) -> Result<Option<CommId>> {
    // A bad colour is reported after taking part as MPI_UNDEFINED, so that the other
    // members do not wait for this process forever.
    let bad = check_color(color);
    let color = if bad.is_err() { UNDEFINED } else { color };
    let r = split_checked(id, color, key, topo);
    bad?;
    r
}

fn split_checked(
    id: CommId,
    color: i32,
    key: i32,
    topo: Option<Topology>,
) -> Result<Option<CommId>> {
    let c = snapshot(id)?;
    let me = my_world()?;
    if c.is_inter() {
        let ((ctx, local, remote), _held) = inter_agree(&c, color_key(color, key))?;
        if color == UNDEFINED {
            return Ok(None);
        }
        let rg = c.remote.as_ref().ok_or_else(malformed)?;
        let l = members_of_color(&c.group, &local, color)?;
        let r = members_of_color(rg, &remote, color)?;
        return inter_part(ctx, l, r, &c, me);
    }
    let (ctx, all, _held) = match impi::span(id)? {
        // IMPI 4.7: the new id first, then an allgather of (color, key, rank).
        Some(s) => {
            let ctx = impi::new_cid(&s)?;
            let all = impi::split_exchange(&s, color, key)?;
            let all = all.into_iter().map(|(c, k)| color_key(c, k)).collect();
            (ctx, all, None)
        }
        None => {
            let (ctx, all, held) = agree_all(
                &team_of(&c.group, c.rank, c.coll_ctx(), ic::TAG_INTRA),
                color_key(color, key),
            )?;
            (ctx, all, Some(held))
        }
    };
    if color == UNDEFINED {
        return Ok(None);
    }
    let g = members_of_color(&c.group, &all, color)?;
    match new_comm(ctx, Arc::new(Group::new(g)), None, &c, me) {
        Some(mut n) => {
            n.topo = topo.map(Arc::new);
            install(n).map(Some)
        }
        None => Ok(None),
    }
}

/// `MPI_Comm_split` (intra- and intercommunicators).
pub fn comm_split(id: CommId, color: i32, key: i32) -> Result<Option<CommId>> {
    split_with_topo(id, color, key, None)
}

/// The split types of `MPI_Comm_split_type`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SplitType {
    /// `MPI_UNDEFINED`: this process gets `MPI_COMM_NULL`.
    Undefined,
    /// `MPI_COMM_TYPE_SHARED`: processes that can share memory (same node).
    Shared,
    /// `MPI_COMM_TYPE_HW_GUIDED` / `HW_UNGUIDED`: oxmpi knows no hardware level below
    /// the node, so these give `MPI_COMM_NULL` as the standard allows.
    Hardware,
}

/// `MPI_Comm_split_type`. Processes share memory when they run on the same node: the
/// node key of start-up (host, boot id, network namespace, or `OXMPI_NODE_ID`), which
/// the members exchange, so the answer does not depend on which transport connects
/// them.
///
/// On an intercommunicator (allowed since MPI-4.0) the split is that of
/// `MPI_Comm_split` with the node as the colour, as in MPICH: the processes of one node
/// in the local group and those of the same node in the remote group make a new
/// intercommunicator; a process that passes `MPI_UNDEFINED` (or a hardware type, which
/// oxmpi has no level for), or whose node has no process of the other group, gets
/// `MPI_COMM_NULL`.
pub fn comm_split_type(id: CommId, ty: SplitType, key: i32) -> Result<Option<CommId>> {
    let c = snapshot(id)?;
    let joins = ty == SplitType::Shared;
    let node = if joins {
        crate::bootstrap::node_key()
    } else {
        String::new()
    };
    let mut w = Writer::default();
    w.i32(joins as i32).i32(key).bytes(node.as_bytes());
    let me = my_world()?;
    if let Some(rg) = c.remote.clone() {
        let ((ctx, local, remote), _held) = inter_agree(&c, w.finish())?;
        if !joins {
            return Ok(None);
        }
        let l = members_on_node(&c.group, &local, &node)?;
        let r = members_on_node(&rg, &remote, &node)?;
        return inter_part(ctx, l, r, &c, me);
    }
    let team = team_of(&c.group, c.rank, c.coll_ctx(), ic::TAG_INTRA);
    let (ctx, all, _held) = agree_all(&team, w.finish())?;
    if !joins {
        return Ok(None);
    }
    let g = Group::new(members_on_node(&c.group, &all, &node)?);
    new_comm(ctx, Arc::new(g), None, &c, me)
        .map(install)
        .transpose()
}

/// The members of `g` whose `MPI_Comm_split_type` payload (joins, key, node) joins the
/// split on `node`, ordered by (key, rank).
fn members_on_node(g: &Group, payloads: &[Vec<u8>], node: &str) -> Result<Vec<u32>> {
    members_by_key(g, payloads, |r| {
        let (j, k, n) = (r.i32()?, r.i32()?, r.bytes()?);
        Ok((j == 1 && n == node.as_bytes()).then_some(k))
    })
}

// ----- free ------------------------------------------------------------------------------

/// `MPI_Comm_free`: runs the attribute delete callbacks, then retires the
/// communicator; its context id is reused only once its traffic has drained.
pub fn comm_free(id: CommId) -> Result<()> {
    if id == WORLD || id == SELF {
        return err(
            ErrorClass::Comm,
            "MPI_COMM_WORLD and MPI_COMM_SELF cannot be freed",
        );
    }
    let c = snapshot(id)?;
    // IMPI 4.5: freeing a communicator that spans clients is a barrier (on an
    // intercommunicator, one of point-to-point messages between the groups).
    if let Some(s) = impi::span(id)? {
        impi::barrier(&s)?;
    } else if c.is_inter() && impi::inter_spans(&c)? {
        let rsize = c.remote.as_ref().ok_or_else(malformed)?.size();
        impi::intercomm_free_barrier(id, c.rank, rsize)?;
    }
    delete_all_attrs(id)?;
    crate::dpm::forget(id);
    runtime::with(|rt| {
        crate::p2p_mpi4::comm_freed(rt, id);
        let gone = rt.comms.retire(id);
        if let Some(c) = gone {
            crate::dpm::retire_unused_peers(rt, id, &c);
        }
        context::sweep(rt);
        Ok(())
    })
}

/// Runs the delete callbacks of `MPI_COMM_SELF`'s and then `MPI_COMM_WORLD`'s
/// attributes (the first thing `MPI_Finalize` does).
pub fn finalize_attributes() -> Result<()> {
    if !runtime::initialized() || runtime::finalized() {
        return Ok(());
    }
    let mut first = Ok(());
    for id in [SELF, WORLD] {
        // Keep going past a failing callback: every attribute is deleted.
        while let Err(e) = delete_all_attrs(id) {
            if first.is_ok() {
                first = Err(e);
            }
            runtime::with(|rt| {
                if let Some((key, _)) = rt.comms.get(id)?.attrs.entries().first().copied() {
                    rt.comms.get_mut(id)?.attrs.remove(key);
                    rt.keyvals.drop_use(key);
                }
                Ok(())
            })?;
        }
    }
    first
}

// ----- intercommunicators ----------------------------------------------------------------

/// The arguments of `MPI_Intercomm_create` that only the local leader reads.
struct IcreateArgs {
    peer: Option<CommId>,
    remote_leader: i32,
    tag: i32,
    me: u32,
}

impl IcreateArgs {
    /// At the local leader: the peer communicator (its id and state) and the remote
    /// leader's world rank, checked.
    fn remote_leader_world(&self) -> Result<(CommId, Comm, u32)> {
        let pid = self.peer.ok_or_else(|| {
            Error::new(
                ErrorClass::Comm,
                "invalid peer_comm (MPI_COMM_NULL or not a communicator) at the local leader",
            )
        })?;
        let pc = snapshot(pid)?;
        let pg = pc.peer_group();
        let remote_leader = self.remote_leader;
        let rw = pg.world_of(remote_leader).ok_or_else(|| {
            Error::new(
                ErrorClass::Rank,
                format!(
                    "invalid remote_leader {remote_leader} (peer_comm size {})",
                    pg.size()
                ),
            )
        })?;
        if rw == self.me {
            return err(
                ErrorClass::Rank,
                format!("remote_leader {remote_leader} is the local leader itself: the two groups overlap"),
            );
        }
        Ok((pid, pc, rw))
    }
}

/// One round of [`intercomm_create`]'s agreement: the local members' offers gathered
/// at the local leader, the leaders' results swapped, the decision spread; `None`:
/// try again.
fn icreate_round(
    lc: &Comm,
    team: &Team,
    a: &IcreateArgs,
    o: &context::Offer,
) -> Result<Option<(u32, Vec<u32>)>> {
    let mut mine = Writer::default();
    mine.bytes(&o.mask.encode()).u32(o.constrained as u32);
    let all = team.gather(mine.finish())?;
    let outcome = match all {
        None => None,
        Some(all) => {
            let r = (|| {
                let mut m = Mask::full();
                let mut constrained = false;
                for b in &all {
                    let mut r = Reader::new(b);
                    m.and(&Mask::decode(r.bytes()?).ok_or_else(malformed)?);
                    constrained |= r.u32()? != 0;
                }
                let (_, pc, rw) = a.remote_leader_world()?;
                let remote_leader = a.remote_leader;
                let mut w = Writer::default();
                w.bytes(&m.encode())
                    .u32(constrained as u32)
                    .u32s(lc.group.members());
                let theirs = ic::swap(
                    Member {
                        world: rw,
                        id: remote_leader,
                    },
                    pc.rank,
                    pc.coll_ctx(),
                    ic::icreate_peer_tag(a.tag),
                    w.finish(),
                )?;
                let mut r = Reader::new(&theirs);
                m.and(&Mask::decode(r.bytes()?).ok_or_else(malformed)?);
                constrained |= r.u32()? != 0;
                let remote = r.u32s()?;
                if let Some(w) = remote
                    .iter()
                    .find(|w| lc.group.rank_of_world(**w).is_some())
                {
                    return err(
                        ErrorClass::Comm,
                        format!("the local and remote groups overlap (world rank {w} is in both)"),
                    );
                }
                // Both leaders see the same AND and flags, so they decide alike.
                let ctx = match context::Decision::of(&m, constrained) {
                    context::Decision::Exhausted => return Err(context::exhausted()),
                    d => d.encode(),
                };
                let mut o = Writer::default();
                o.u32(ctx).u32s(&remote);
                Ok(o.finish())
            })();
            Some(ic::encode_outcome(&r))
        }
    };
    let b = team.bcast(outcome)?;
    let body = ic::decode_outcome(&b)?;
    let mut r = Reader::new(&body);
    let ctx = r.u32()?;
    if context::Decision::decode(ctx) == context::Decision::Retry {
        return Ok(None);
    }
    Ok(Some((ctx, r.u32s()?)))
}

/// `MPI_Intercomm_create`. `peer` and `remote_leader` matter only at the local leader.
pub fn intercomm_create(
    local: CommId,
    local_leader: i32,
    peer: Option<CommId>,
    remote_leader: i32,
    tag: i32,
) -> Result<CommId> {
    let lc = snapshot(local)?;
    require_intra(&lc, "local_comm")?;
    if !(0..lc.size()).contains(&local_leader) {
        return err(
            ErrorClass::Rank,
            format!(
                "invalid local_leader {local_leader} (local_comm size {})",
                lc.size()
            ),
        );
    }
    if !(0..=TAG_UB).contains(&tag) {
        return err(
            ErrorClass::Tag,
            format!("invalid tag {tag} (must be between 0 and MPI_TAG_UB = {TAG_UB})"),
        );
    }
    let me = my_world()?;
    // In an IMPI job every rank agrees as chapter 4 says (4.8), so that the ranks of a
    // foreign client agree with oxmpi's.
    if impi::in_job()? {
        let args = IcreateArgs {
            peer,
            remote_leader,
            tag,
            me,
        };
        let peer = (lc.rank == local_leader).then(|| args.remote_leader_world().map(|p| p.0));
        let (ctx, remote) = impi::intercomm_create(
            local,
            local_leader,
            lc.group.members(),
            peer,
            remote_leader,
            tag,
        )?;
        let remote = Some(Arc::new(Group::new(remote)));
        let new = new_comm(ctx, lc.group.clone(), remote, &lc, me).ok_or_else(malformed)?;
        return install(new);
    }
    let mut team = team_of(&lc.group, lc.rank, lc.coll_ctx(), ic::TAG_ICREATE_LOCAL);
    team.root = local_leader as usize;
    let args = IcreateArgs {
        peer,
        remote_leader,
        tag,
        me,
    };
    // Rounds repeat, as in `agree`, while the AND is empty only because members of
    // either group held slots back for other agreements in progress.
    let mut rounds = 0;
    let r: Result<_> = (|| loop {
        let o = offer(rounds)?;
        rounds += 1;
        let r = icreate_round(&lc, &team, &args, &o);
        if let Some(x) = end_round(o.hold, r, |x| x.0)? {
            return Ok(x);
        }
    })();
    agreement_ended(rounds);
    let ((ctx, remote), _held) = r?;
    let new = new_comm(
        ctx,
        lc.group.clone(),
        Some(Arc::new(Group::new(remote))),
        &lc,
        me,
    )
    .ok_or_else(malformed)?;
    install(new)
}

/// `MPI_Intercomm_merge`: the group with `high = false` comes first (on a tie, the
/// group whose leader has the lower world rank).
pub fn intercomm_merge(id: CommId, high: bool) -> Result<CommId> {
    let c = snapshot(id)?;
    require_inter(&c)?;
    if impi::in_job()? {
        return merge_as_chapter4(&c, id, high);
    }
    let mut w = Writer::default();
    w.u32(high as u32);
    identity(&mut w)?;
    let ((ctx, local, remote), _held) = inter_agree(&c, w.finish())?;
    // Each group's leader (member 0) decides for its group.
    let leader = |p: &[Vec<u8>]| -> Result<(bool, String, u32)> {
        let mut r = Reader::new(p.first().ok_or_else(malformed)?);
        let high = r.u32()? != 0;
        let job = String::from_utf8_lossy(r.bytes()?).into_owned();
        Ok((high, job, r.u32()?))
    };
    let ((lh, ljob, lrank), (rh, rjob, rrank)) = (leader(&local)?, leader(&remote)?);
    let rg = c.remote.as_ref().ok_or_else(malformed)?;
    let local_first = if lh != rh {
        !lh
    } else if (&ljob, lrank) != (&rjob, rrank) {
        // The same `high` on both sides: the group whose leader comes first by (job, rank
        // in its job) goes first. Both sides see the same two leaders, so they agree even
        // when the groups are of different jobs, whose device slot numbers (`world_of`)
        // differ from process to process.
        (&ljob, lrank) < (&rjob, rrank)
    } else {
        c.group.world_of(0) < rg.world_of(0)
    };
    let mut members = Vec::with_capacity((c.group.size() + rg.size()) as usize);
    if local_first {
        members.extend_from_slice(c.group.members());
        members.extend_from_slice(rg.members());
    } else {
        members.extend_from_slice(rg.members());
        members.extend_from_slice(c.group.members());
    }
    let me = my_world()?;
    let new = new_comm(ctx, Arc::new(Group::new(members)), None, &c, me).ok_or_else(malformed)?;
    install(new)
}

/// `MPI_Intercomm_merge` in an IMPI job (4.9): chapter 4's agreement; the group with
/// `high = false` first, on a tie the group whose leader has the lower world rank.
fn merge_as_chapter4(c: &Comm, id: CommId, high: bool) -> Result<CommId> {
    let rg = c.remote.as_ref().ok_or_else(malformed)?;
    let (ctx, rhigh) = impi::intercomm_merge(id, c.rank, rg.size(), high)?;
    let local_first = if high != rhigh {
        !high
    } else {
        c.group.world_of(0) < rg.world_of(0)
    };
    let (a, b) = if local_first {
        (&c.group, rg)
    } else {
        (rg, &c.group)
    };
    let members = [a.members(), b.members()].concat();
    let me = my_world()?;
    let new = new_comm(ctx, Arc::new(Group::new(members)), None, c, me).ok_or_else(malformed)?;
    install(new)
}

/// Writes who this process is across jobs: its job's name (the PMI key-value space name,
/// distinct for spawned and separately started jobs; empty for a singleton) and its rank
/// in its own `MPI_COMM_WORLD`.
fn identity(w: &mut Writer) -> Result<()> {
    runtime::with(|rt| {
        let job = rt.pmi.as_ref().map_or("", |p| p.kvsname());
        w.bytes(job.as_bytes()).u32(rt.world_rank);
        Ok(())
    })
}

// ----- queries -------------------------------------------------------------------------------

/// `MPI_Comm_compare`.
pub fn comm_compare(a: CommId, b: CommId) -> Result<Comparison> {
    let (x, y) = (snapshot(a)?, snapshot(b)?);
    if a == b {
        return Ok(Comparison::Ident);
    }
    let weaken = |c: Comparison| {
        if c == Comparison::Ident {
            Comparison::Congruent
        } else {
            c
        }
    };
    Ok(match (&x.remote, &y.remote) {
        (None, None) => weaken(group::compare(&x.group, &y.group)),
        (Some(xr), Some(yr)) => {
            let l = group::compare(&x.group, &y.group);
            let r = group::compare(xr, yr);
            if l == Comparison::Unequal || r == Comparison::Unequal {
                Comparison::Unequal
            } else if l == Comparison::Ident && r == Comparison::Ident {
                Comparison::Congruent
            } else {
                Comparison::Similar
            }
        }
        _ => Comparison::Unequal,
    })
}

/// `MPI_Comm_test_inter`.
pub fn comm_test_inter(id: CommId) -> Result<bool> {
    Ok(snapshot(id)?.is_inter())
}

/// `MPI_Comm_remote_size`.
pub fn comm_remote_size(id: CommId) -> Result<i32> {
    let c = snapshot(id)?;
    require_inter(&c)?;
    Ok(c.peer_group().size())
}

/// `MPI_Comm_group`: a new group handle for the (local) group.
pub fn comm_group(id: CommId) -> Result<GroupId> {
    runtime::with(|rt| {
        let g = rt.comms.get(id)?.group.clone();
        Ok(rt.groups.insert(g))
    })
}

/// `MPI_Comm_remote_group`.
pub fn comm_remote_group(id: CommId) -> Result<GroupId> {
    runtime::with(|rt| {
        let c = rt.comms.get(id)?;
        let g = c.remote.clone().ok_or_else(|| {
            Error::new(
                ErrorClass::Comm,
                "the communicator is not an intercommunicator",
            )
        })?;
        Ok(rt.groups.insert(g))
    })
}

/// `MPI_Comm_set_name` (longer names are cut at `MAX_NAME` bytes).
pub fn comm_set_name(id: CommId, name: &str) -> Result<()> {
    let mut n = name.to_string();
    if n.len() > MAX_NAME {
        let mut cut = MAX_NAME;
        while !n.is_char_boundary(cut) {
            cut -= 1;
        }
        n.truncate(cut);
    }
    runtime::with(|rt| {
        rt.comms.get_mut(id)?.name = n;
        Ok(())
    })
}

/// `MPI_Comm_get_name` (empty for an unnamed communicator).
pub fn comm_get_name(id: CommId) -> Result<String> {
    runtime::with(|rt| Ok(rt.comms.get(id)?.name.clone()))
}

/// The group table entry `id` (for constructors that take a group handle).
pub fn group(id: GroupId) -> Result<Arc<Group>> {
    runtime::with(|rt| Ok(rt.groups.get(id)?.clone()))
}

/// Stores a group and returns its handle index.
pub fn group_insert(g: Group) -> Result<GroupId> {
    runtime::with(|rt| Ok(rt.groups.insert(Arc::new(g))))
}

/// `MPI_Group_free`.
pub fn group_free(id: GroupId) -> Result<()> {
    runtime::with(|rt| rt.groups.free(id))
}

/// `MPI_Group_rank`: this process's rank in the group, or `MPI_UNDEFINED`.
pub fn group_rank(id: GroupId) -> Result<i32> {
    runtime::with(|rt| {
        let me = rt.world_rank;
        Ok(rt.groups.get(id)?.rank_of_world(me).unwrap_or(UNDEFINED))
    })
}

// ----- attributes ------------------------------------------------------------------------------

/// An attribute value as `MPI_Comm_get_attr` finds it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AttrValue {
    /// A value the program cached (a C `void *`).
    Word(usize),
    /// A predefined attribute's integer value.
    Int(i32),
}

/// `MPI_Comm_create_keyval` (and the MPI-1 `MPI_Keyval_create`).
pub fn create_keyval(kind: AttrKind, hooks: Arc<dyn AttrHooks>) -> Result<KeyvalId> {
    runtime::with(|rt| Ok(rt.keyvals.create(kind, hooks)))
}

/// `MPI_Comm_free_keyval`.
pub fn free_keyval(id: KeyvalId, kind: AttrKind) -> Result<()> {
    runtime::with(|rt| rt.keyvals.free(id, kind))
}

fn predefined_value(rt: &runtime::Runtime, c: &Comm, p: Predefined) -> Option<i32> {
    match p {
        Predefined::TagUb => Some(TAG_UB),
        Predefined::Host => Some(PROC_NULL),
        Predefined::Io => Some(ANY_SOURCE),
        Predefined::WtimeIsGlobal => Some(0),
        Predefined::UniverseSize => rt.universe_size.map(|u| u.min(i32::MAX as u32) as i32),
        Predefined::LastUsedCode => Some(crate::user_errors::last_used()),
        Predefined::AppNum => (rt.appnum >= 0).then_some(rt.appnum),
        // Set in IMPI jobs only (IMPI 2.5).
        Predefined::ImpiClientSize
        | Predefined::ImpiClientColor
        | Predefined::ImpiHostSize
        | Predefined::ImpiHostColor => rt
            .impi_places
            .as_ref()
            .and_then(|pl| pl.value(p, c.group.members(), rt.world_rank)),
    }
}

/// `MPI_Comm_get_attr`: `None` when no value is cached with the key.
pub fn attr_get(id: CommId, key: Key) -> Result<Option<AttrValue>> {
    runtime::with(|rt| {
        let c = rt.comms.get(id)?;
        match key {
            Key::Predefined(p) => Ok(predefined_value(rt, c, p).map(AttrValue::Int)),
            Key::User(k) => {
                rt.keyvals.check_use(k, AttrKind::Comm)?;
                Ok(c.attrs.get(k).map(AttrValue::Word))
            }
        }
    })
}

fn user_key(key: Key) -> Result<KeyvalId> {
    match key {
        Key::User(k) => Ok(k),
        Key::Predefined(p) => err(
            ErrorClass::Keyval,
            format!(
                "the predefined attribute {} cannot be set or deleted",
                p.name()
            ),
        ),
    }
}

/// `MPI_Comm_set_attr`: a value already cached with the key is deleted first (its
/// delete callback runs; if that fails the old value stays).
pub fn attr_set(id: CommId, key: Key, value: usize) -> Result<()> {
    let k = user_key(key)?;
    let (old, hooks) = runtime::with(|rt| {
        rt.keyvals.check_use(k, AttrKind::Comm)?;
        Ok((rt.comms.get(id)?.attrs.get(k), rt.keyvals.hooks(k)))
    })?;
    if let (Some(v), Some(h)) = (old, hooks) {
        h.delete(AttrObject::Comm(id), k, v)?;
    }
    runtime::with(|rt| {
        let c = rt.comms.get_mut(id)?;
        if c.attrs.set(k, value).is_none() {
            rt.keyvals.add_use(k);
        }
        Ok(())
    })
}

/// `MPI_Comm_delete_attr`: runs the delete callback and removes the value (it stays
/// if the callback fails). Deleting a key with no value cached does nothing.
pub fn attr_delete(id: CommId, key: Key) -> Result<()> {
    let k = user_key(key)?;
    let (old, hooks) = runtime::with(|rt| {
        rt.keyvals.check_use(k, AttrKind::Comm)?;
        Ok((rt.comms.get(id)?.attrs.get(k), rt.keyvals.hooks(k)))
    })?;
    let Some(v) = old else {
        return Ok(());
    };
    if let Some(h) = hooks {
        h.delete(AttrObject::Comm(id), k, v)?;
    }
    runtime::with(|rt| {
        let c = rt.comms.get_mut(id)?;
        if c.attrs.remove(k).is_some() {
            rt.keyvals.drop_use(k);
        }
        Ok(())
    })
}

// ----- topologies ---------------------------------------------------------------------------

/// The topology of a communicator (`MPI_Topo_test`: `None` = `MPI_UNDEFINED`).
pub fn topology(id: CommId) -> Result<Option<Arc<Topology>>> {
    runtime::with(|rt| Ok(rt.comms.get(id)?.topo.clone()))
}

/// The Cartesian topology of `id` and the caller's rank, or `MPI_ERR_TOPOLOGY`.
pub fn cart_of(id: CommId) -> Result<(Cart, i32)> {
    let c = snapshot(id)?;
    match c.topo.as_deref() {
        Some(Topology::Cart(t)) => Ok((t.clone(), c.rank)),
        _ => err(
            ErrorClass::Topology,
            "the communicator has no Cartesian topology",
        ),
    }
}

/// The graph topology of `id`, or `MPI_ERR_TOPOLOGY`.
pub fn graph_of(id: CommId) -> Result<Graph> {
    match topology(id)?.as_deref() {
        Some(Topology::Graph(g)) => Ok(g.clone()),
        _ => err(
            ErrorClass::Topology,
            "the communicator has no graph topology",
        ),
    }
}

/// The distributed-graph topology of `id`, or `MPI_ERR_TOPOLOGY`.
pub fn dist_graph_of(id: CommId) -> Result<DistGraph> {
    match topology(id)?.as_deref() {
        Some(Topology::DistGraph(g)) => Ok(g.clone()),
        _ => err(
            ErrorClass::Topology,
            "the communicator has no distributed graph topology",
        ),
    }
}

/// A communicator of the first `n` processes of `c` carrying `topo` (`None` for the
/// others). Ranks are kept: `reorder` is allowed to change nothing.
fn create_first(c: &Comm, n: i32, topo: Topology) -> Result<Option<CommId>> {
    let (ctx, _, _held) = agree_all(
        &team_of(&c.group, c.rank, c.coll_ctx(), ic::TAG_INTRA),
        Vec::new(),
    )?;
    if c.rank >= n {
        return Ok(None);
    }
    let g = Group::new(c.group.members()[..n as usize].to_vec());
    let mut new = new_comm(
        ctx,
        Arc::new(g),
        None,
        c,
        c.group.world_of(c.rank).ok_or_else(malformed)?,
    )
    .ok_or_else(malformed)?;
    new.topo = Some(Arc::new(topo));
    install(new).map(Some)
}

/// `MPI_Cart_create`.
pub fn cart_create(
    id: CommId,
    dims: &[i32],
    periods: &[bool],
    _reorder: bool,
) -> Result<Option<CommId>> {
    let c = snapshot(id)?;
    require_intra(&c, "the communicator of MPI_Cart_create")?;
    let cart = Cart::new(dims, periods, c.size())?;
    let n = cart.size();
    create_first(&c, n, Topology::Cart(cart))
}

/// `MPI_Graph_create`.
pub fn graph_create(
    id: CommId,
    index: &[i32],
    edges: &[i32],
    _reorder: bool,
) -> Result<Option<CommId>> {
    let c = snapshot(id)?;
    require_intra(&c, "the communicator of MPI_Graph_create")?;
    let g = Graph::new(index, edges, c.size())?;
    let n = g.nnodes();
    create_first(&c, n, Topology::Graph(g))
}

/// `MPI_Cart_sub`.
pub fn cart_sub(id: CommId, remain: &[bool]) -> Result<CommId> {
    let (cart, rank) = cart_of(id)?;
    if remain.len() != cart.ndims() {
        return err(
            ErrorClass::Arg,
            "remain_dims must have one entry per dimension",
        );
    }
    let (color, sub) = cart.sub(rank, remain)?;
    let key = rank;
    split_with_topo(id, color, key, Some(Topology::Cart(sub)))?
        .ok_or_else(|| Error::new(ErrorClass::Intern, "MPI_Cart_sub produced no communicator"))
}

fn check_weights(what: &str, w: &[i32]) -> Result<()> {
    for (i, &x) in w.iter().enumerate() {
        if x < 0 {
            return err(
                ErrorClass::Arg,
                format!("invalid weight {what}[{i}] = {x} (must be >= 0)"),
            );
        }
    }
    Ok(())
}

/// `MPI_Dist_graph_create_adjacent`. `None` weights mean `MPI_UNWEIGHTED`.
pub fn dist_graph_create_adjacent(
    id: CommId,
    sources: &[i32],
    source_weights: Option<&[i32]>,
    destinations: &[i32],
    dest_weights: Option<&[i32]>,
    _reorder: bool,
) -> Result<CommId> {
    let c = snapshot(id)?;
    require_intra(&c, "the communicator of MPI_Dist_graph_create_adjacent")?;
    topo::check_neighbors("sources", sources, c.size())?;
    topo::check_neighbors("destinations", destinations, c.size())?;
    if let Some(w) = source_weights {
        check_weights("sourceweights", w)?;
    }
    if let Some(w) = dest_weights {
        check_weights("destweights", w)?;
    }
    let weighted = source_weights.is_some() || dest_weights.is_some();
    let dg = DistGraph {
        sources: sources.to_vec(),
        source_weights: source_weights
            .map(|w| w.to_vec())
            .unwrap_or_else(|| vec![1; sources.len()]),
        destinations: destinations.to_vec(),
        dest_weights: dest_weights
            .map(|w| w.to_vec())
            .unwrap_or_else(|| vec![1; destinations.len()]),
        weighted,
    };
    let (ctx, _, _held) = agree_all(
        &team_of(&c.group, c.rank, c.coll_ctx(), ic::TAG_INTRA),
        Vec::new(),
    )?;
    let me = my_world()?;
    let mut new = new_comm(ctx, c.group.clone(), None, &c, me).ok_or_else(malformed)?;
    new.topo = Some(Arc::new(Topology::DistGraph(dg)));
    install(new)
}

/// `MPI_Dist_graph_create`: process `sources[i]` has edges to the next `degrees[i]`
/// entries of `destinations` (with their weights). Edges are redistributed so every
/// process learns its own in- and out-neighbours.
pub fn dist_graph_create(
    id: CommId,
    sources: &[i32],
    degrees: &[i32],
    destinations: &[i32],
    weights: Option<&[i32]>,
    _reorder: bool,
) -> Result<CommId> {
    let c = snapshot(id)?;
    require_intra(&c, "the communicator of MPI_Dist_graph_create")?;
    let size = c.size();
    topo::check_neighbors("sources", sources, size)?;
    let mut total: usize = 0;
    for (i, &d) in degrees.iter().enumerate() {
        if d < 0 {
            return err(
                ErrorClass::Arg,
                format!("invalid degrees[{i}] = {d} (must be >= 0)"),
            );
        }
        total += d as usize;
    }
    if total != destinations.len() {
        return err(
            ErrorClass::Intern,
            "destinations must hold the sum of degrees entries",
        );
    }
    topo::check_neighbors("destinations", destinations, size)?;
    if let Some(w) = weights {
        check_weights("weights", w)?;
    }
    // Edge list: (source, destination, weight).
    let mut edges = Vec::with_capacity(total * 3);
    let mut k = 0;
    for (i, &s) in sources.iter().enumerate() {
        for _ in 0..degrees[i] {
            edges.extend_from_slice(&[s, destinations[k], weights.map_or(1, |w| w[k])]);
            k += 1;
        }
    }
    let mut w = Writer::default();
    w.i32s(&edges);
    let team = team_of(&c.group, c.rank, c.coll_ctx(), ic::TAG_INTRA);
    let n = size as usize;
    let (ctx, part, _held) = agree(&team, w.finish(), |payloads| {
        let mut ins: Vec<Vec<i32>> = vec![Vec::new(); n];
        let mut outs: Vec<Vec<i32>> = vec![Vec::new(); n];
        for p in payloads {
            let e = Reader::new(p).i32s()?;
            for t in e.chunks_exact(3) {
                let (s, d, wt) = (t[0], t[1], t[2]);
                if !(0..size).contains(&s) || !(0..size).contains(&d) {
                    return Err(malformed());
                }
                outs[s as usize].extend_from_slice(&[d, wt]);
                ins[d as usize].extend_from_slice(&[s, wt]);
            }
        }
        Ok((0..n)
            .map(|r| {
                let mut w = Writer::default();
                w.i32s(&ins[r]).i32s(&outs[r]);
                w.finish()
            })
            .collect())
    })?;
    let mut r = Reader::new(&part);
    let ins = r.i32s()?;
    let outs = r.i32s()?;
    let dg = DistGraph {
        sources: ins.chunks_exact(2).map(|p| p[0]).collect(),
        source_weights: ins.chunks_exact(2).map(|p| p[1]).collect(),
        destinations: outs.chunks_exact(2).map(|p| p[0]).collect(),
        dest_weights: outs.chunks_exact(2).map(|p| p[1]).collect(),
        weighted: weights.is_some(),
    };
    let me = my_world()?;
    let mut new = new_comm(ctx, c.group.clone(), None, &c, me).ok_or_else(malformed)?;
    new.topo = Some(Arc::new(Topology::DistGraph(dg)));
    install(new)
}
