//! Collectives on intercommunicators (MPI 4.1 section 6.2.2): data flows from one group
//! to the other. `root` is `MPI_ROOT` at the root, `MPI_PROC_NULL` at the other members
//! of its group, and the root's rank in the remote group at the members of the other
//! group. `MPI_IN_PLACE` is not allowed.
//!
//! Built from the intracommunicator schedules run inside the local group plus
//! point-to-point transfers between the groups, all in the intercommunicator's
//! collective context: Barrier, Allreduce, Allgather and the reduce-scatters combine
//! within each group at its rank 0, swap between the two rank 0s and spread within the
//! group again; the rooted operations and the v/w variants move data directly between
//! the root and each remote member, or between every pair. Each call uses four tags
//! from the communicator's sequence: one per phase.

use super::check::{buffer, bytes, counts, datatype, nonneg, Input};
use super::exec::Exec;
use super::movement::{VBuf, WBuf};
use super::nbc::{finish_how, How, Op, Step, Xchg};
use super::op::{OpId, Reducer};
use super::stage::View;
use crate::comm::{CommId, Group};
use crate::device::ReqId;
use crate::error::{err, Error, ErrorClass, Result};
use crate::p2p::Buf;
use crate::runtime::{self, Runtime};
use crate::types::{TypeId, TypeInfo};
use crate::{PROC_NULL, ROOT};
use oxmpi_coll::decision::choose;
use oxmpi_coll::schedule::{build, Block, Elems, Member, Spec};
use std::ptr::NonNull;
use std::sync::Arc;

/// Phase tags within one call.
const LOCAL_1: i32 = 1;
const CROSS: i32 = 2;
const LOCAL_2: i32 = 3;

/// One intercommunicator call's context.
struct Ic {
    id: CommId,
    ctx: u32,
    rank: usize,
    local: Arc<Group>,
    remote: Arc<Group>,
    base: i32,
}

impl Ic {
    fn nl(&self) -> usize {
        self.local.size() as usize
    }
    fn nr(&self) -> usize {
        self.remote.size() as usize
    }
}

/// Resolves an intercommunicator and takes the call's tags.
fn begin(rt: &mut Runtime, id: CommId) -> Result<Ic> {
    let c = rt.comms.get(id)?;
    let Some(remote) = c.remote.clone() else {
        return err(ErrorClass::Intern, "not an intercommunicator");
    };
    let local = c.group.clone();
    let (ctx, rank) = (c.coll_ctx(), c.rank as usize);
    let dev = &rt.device;
    let seq = rt.coll.next_tag(c, |w| dev.route(w))?;
    Ok(Ic {
        id,
        ctx,
        rank,
        local,
        remote,
        base: (seq % (1 << 27)) * 4,
    })
}

/// The root argument: `Root` here, `Idle` (`MPI_PROC_NULL`), or the remote root's rank.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Role {
    Root,
    Idle,
    Remote(usize),
}

fn role(root: i32, ic: &Ic) -> Result<Role> {
    match root {
        ROOT => Ok(Role::Root),
        PROC_NULL => Ok(Role::Idle),
        r if r >= 0 && (r as usize) < ic.nr() => Ok(Role::Remote(r as usize)),
        r => err(
            ErrorClass::Root,
            format!(
                "invalid root {r} on an intercommunicator (MPI_ROOT, MPI_PROC_NULL or a rank of the remote group of size {})",
                ic.nr()
            ),
        ),
    }
}

fn no_in_place<T>(x: Input<T>, what: &str) -> Result<T> {
    match x {
        Input::Data(d) => Ok(d),
        Input::InPlace => err(
            ErrorClass::Buffer,
            format!("MPI_IN_PLACE is not allowed on an intercommunicator ({what})"),
        ),
    }
}

fn dangling() -> *mut u8 {
    NonNull::<u8>::dangling().as_ptr()
}

/// A step running the schedule of `spec` inside the local group.
fn local(
    rt: &mut Runtime,
    ic: &Ic,
    spec: &Spec<'_>,
    send: *const u8,
    recv: *mut u8,
    reducer: Reducer,
    phase: i32,
) -> Result<Step> {
    let me = Member {
        rank: ic.rank as u32,
        size: ic.nl() as u32,
    };
    let algo = choose(&rt.coll.tuning, spec, me.size);
    let sched = build(spec, me, algo).map_err(super::state::schedule_error)?;
    let pool = rt.coll.take_pool();
    Ok(Step::Sched(Box::new(Exec::new(
        Arc::new(sched),
        ic.local.clone(),
        ic.id,
        ic.ctx,
        ic.base + phase,
        ic.rank as i32,
        send,
        recv,
        reducer,
        pool,
    ))))
}

/// A step of transfers between the groups: `sends` (remote rank, data, length) and
/// `recvs` (remote rank, buffer, exact length), all posted at once.
fn exchange(
    ic: &Ic,
    sends: Vec<(u32, *const u8, usize)>,
    recvs: Vec<(u32, *mut u8, usize)>,
) -> Step {
    Step::Xchg(Xchg::new(
        ic.id,
        ic.ctx,
        ic.rank as i32,
        ic.base + CROSS,
        ic.remote.clone(),
        sends,
        recvs,
        "remote rank",
    ))
}

/// A zeroed temporary of `len` bytes kept by the op, and its address.
fn temp(keep: &mut Vec<Vec<u8>>, len: usize) -> *mut u8 {
    let mut v = vec![0u8; len];
    let p = if len == 0 { dangling() } else { v.as_mut_ptr() };
    keep.push(v);
    p
}

fn one(addr: usize, t: &TypeInfo, n: usize, read: bool, write: bool) -> View {
    let all = [(0, n)];
    let none: &[(usize, usize)] = &[];
    let pre = if read { &all[..] } else { none };
    let post = if write { &all[..] } else { none };
    // SAFETY: the caller's buffer holds `n` elements where significant (MPI contract).
    unsafe { View::single(addr, t, n, pre, post) }
}

/// `MPI_Barrier` on an intercommunicator.
pub(crate) fn barrier(comm: CommId, how: How) -> Result<Option<ReqId>> {
    let op = runtime::with(|rt| {
        let ic = begin(rt, comm)?;
        let (s, r) = (dangling() as *const u8, dangling());
        let mut steps = vec![local(
            rt,
            &ic,
            &Spec::Barrier,
            s,
            r,
            Reducer::None,
            LOCAL_1,
        )?];
        if ic.rank == 0 {
            steps.push(exchange(&ic, vec![(0, s, 0)], vec![(0, r, 0)]));
        }
        steps.push(local(
            rt,
            &ic,
            &Spec::Barrier,
            s,
            r,
            Reducer::None,
            LOCAL_2,
        )?);
        Ok(Op::new(comm, steps, Vec::new(), Vec::new()))
    })?;
    finish_how(op, how)
}

/// `MPI_Bcast` on an intercommunicator.
pub(crate) unsafe fn bcast(b: Buf, root: i32, comm: CommId, how: How) -> Result<Option<ReqId>> {
    let op = runtime::with(|rt| {
        let ic = begin(rt, comm)?;
        let role = role(root, &ic)?;
        if role == Role::Idle {
            // MPI_PROC_NULL in the root's group: no other argument is significant.
            return Ok(Op::new(comm, Vec::new(), Vec::new(), Vec::new()));
        }
        let n = nonneg(b.count, "count")?;
        let t = datatype(rt, b.ty, "datatype")?.clone();
        buffer(b.addr, n, &t, "buffer")?;
        let len = bytes(n, &t)?;
        let v = match role {
            Role::Root => one(b.addr, &t, n, true, false),
            _ => one(b.addr, &t, n, false, true),
        };
        let p = v.base;
        let mut steps = Vec::new();
        match role {
            Role::Root => steps.push(exchange(&ic, vec![(0, p as *const u8, len)], Vec::new())),
            Role::Idle => {}
            Role::Remote(r) => {
                if ic.rank == 0 {
                    steps.push(exchange(&ic, Vec::new(), vec![(r as u32, p, len)]));
                }
                let spec = Spec::Bcast {
                    root: 0,
                    bytes: len,
                };
                steps.push(local(
                    rt,
                    &ic,
                    &spec,
                    dangling(),
                    p,
                    Reducer::None,
                    LOCAL_1,
                )?);
            }
        }
        Ok(Op::new(comm, steps, vec![v], Vec::new()))
    })?;
    finish_how(op, how)
}

struct RedArgs {
    ic: Ic,
    n: usize,
    t: TypeInfo,
    reducer: Reducer,
    commutative: bool,
}

/// Checks count, datatype and operation (valid for the datatype), then gets the call's
/// communicator from `ic` (so a bad argument takes no tag when `ic` takes one).
fn red_checked(
    rt: &mut Runtime,
    count: i64,
    ty: TypeId,
    op: OpId,
    ic: impl FnOnce(&mut Runtime) -> Result<Ic>,
) -> Result<RedArgs> {
    let n = nonneg(count, "count")?;
    let t = datatype(rt, ty, "datatype")?.clone();
    let o = rt.coll.ops.get(op)?;
    let reducer = Reducer::new(&o, ty, &t)?;
    Ok(RedArgs {
        ic: ic(rt)?,
        n,
        t,
        reducer,
        commutative: o.commutative(),
    })
}

fn red_args(rt: &mut Runtime, comm: CommId, count: i64, ty: TypeId, op: OpId) -> Result<RedArgs> {
    red_checked(rt, count, ty, op, |rt| begin(rt, comm))
}

/// The step reducing `total` elements over the local group into `tmp` at local rank 0.
fn reduce_local(
    rt: &mut Runtime,
    a: &RedArgs,
    send: *const u8,
    total: usize,
    tmp: *mut u8,
) -> Result<Step> {
    let elems = if a.t.size == 0 {
        Elems::new(0, 0)
    } else {
        Elems::new(total, a.t.size)
    };
    let spec = Spec::Reduce {
        root: 0,
        elems,
        commutative: a.commutative,
        in_place: false,
    };
    let out = if a.ic.rank == 0 { tmp } else { dangling() };
    local(rt, &a.ic, &spec, send, out, a.reducer.clone(), LOCAL_1)
}

/// `MPI_Reduce` on an intercommunicator.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn reduce(
    send: Input<usize>,
    recv: usize,
    count: i64,
    ty: TypeId,
    op: OpId,
    root: i32,
    comm: CommId,
    how: How,
) -> Result<Option<ReqId>> {
    let op = runtime::with(|rt| {
        let ic = begin(rt, comm)?;
        let role = role(root, &ic)?;
        if role == Role::Idle {
            // MPI_PROC_NULL in the root's group: no other argument is significant
            // (mpi4py passes count 0, MPI_BYTE and any operation, even MPI_OP_NULL).
            return Ok(Op::new(comm, Vec::new(), Vec::new(), Vec::new()));
        }
        let a = red_checked(rt, count, ty, op, |_| Ok(ic))?;
        let len = a.n * a.t.size;
        let mut steps = Vec::new();
        let mut keep = Vec::new();
        let v = match role {
            Role::Root => {
                buffer(recv, a.n, &a.t, "recvbuf")?;
                let v = one(recv, &a.t, a.n, false, true);
                steps.push(exchange(&a.ic, Vec::new(), vec![(0, v.base, len)]));
                v
            }
            _ => {
                let s = no_in_place(send, "sendbuf")?;
                buffer(s, a.n, &a.t, "sendbuf")?;
                let v = one(s, &a.t, a.n, true, false);
                let Role::Remote(r) = role else {
                    unreachable!("idle handled above")
                };
                let tmp = temp(&mut keep, if a.ic.rank == 0 { len } else { 0 });
                steps.push(reduce_local(rt, &a, v.base, a.n, tmp)?);
                if a.ic.rank == 0 {
                    steps.push(exchange(
                        &a.ic,
                        vec![(r as u32, tmp as *const u8, len)],
                        Vec::new(),
                    ));
                }
                v
            }
        };
        Ok(Op::new(comm, steps, vec![v], keep))
    })?;
    finish_how(op, how)
}

/// `MPI_Allreduce` on an intercommunicator: each group gets the other's reduction.
pub(crate) unsafe fn allreduce(
    send: Input<usize>,
    recv: usize,
    count: i64,
    ty: TypeId,
    op: OpId,
    comm: CommId,
    how: How,
) -> Result<Option<ReqId>> {
    let op = runtime::with(|rt| {
        let a = red_args(rt, comm, count, ty, op)?;
        let s = no_in_place(send, "sendbuf")?;
        buffer(s, a.n, &a.t, "sendbuf")?;
        buffer(recv, a.n, &a.t, "recvbuf")?;
        let views = vec![
            one(s, &a.t, a.n, true, false),
            one(recv, &a.t, a.n, false, true),
        ];
        let (p0, p1) = (views[0].base, views[1].base);
        let len = a.n * a.t.size;
        let lead = a.ic.rank == 0;
        let mut keep = Vec::new();
        let tmp = temp(&mut keep, if lead { len } else { 0 });
        let mut steps = vec![reduce_local(rt, &a, p0, a.n, tmp)?];
        if lead {
            steps.push(exchange(
                &a.ic,
                vec![(0, tmp as *const u8, len)],
                vec![(0, p1, len)],
            ));
        }
        let spec = Spec::Bcast {
            root: 0,
            bytes: len,
        };
        steps.push(local(
            rt,
            &a.ic,
            &spec,
            dangling(),
            p1,
            Reducer::None,
            LOCAL_2,
        )?);
        Ok(Op::new(comm, steps, views, keep))
    })?;
    finish_how(op, how)
}

/// `MPI_Reduce_scatter_block` (`counts` None, `recvcount` each) and `MPI_Reduce_scatter`
/// on an intercommunicator: the other group's reduction, scattered over this group.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn reduce_scatter(
    send: Input<usize>,
    recv: usize,
    recvcount: i64,
    recvcounts: Option<&[i64]>,
    ty: TypeId,
    op: OpId,
    comm: CommId,
    how: How,
) -> Result<Option<ReqId>> {
    let op = runtime::with(|rt| {
        let a = red_args(rt, comm, recvcount.max(0), ty, op)?;
        let nl = a.ic.nl();
        let cs = match recvcounts {
            Some(c) => counts(c, nl, "recvcounts")?,
            None => vec![nonneg(recvcount, "recvcount")?; nl],
        };
        let total: usize = cs.iter().sum();
        let s = no_in_place(send, "sendbuf")?;
        buffer(s, total, &a.t, "sendbuf")?;
        let mine = cs[a.ic.rank];
        buffer(recv, mine, &a.t, "recvbuf")?;
        let views = vec![
            one(s, &a.t, total, true, false),
            one(recv, &a.t, mine, false, true),
        ];
        let (p0, p1) = (views[0].base, views[1].base);
        let size = a.t.size;
        let len = total * size;
        let lead = a.ic.rank == 0;
        let mut keep = Vec::new();
        let tmp = temp(&mut keep, if lead { len } else { 0 });
        let theirs = temp(&mut keep, if lead { len } else { 0 });
        let mut steps = vec![reduce_local(rt, &a, p0, total, tmp)?];
        if lead {
            steps.push(exchange(
                &a.ic,
                vec![(0, tmp as *const u8, len)],
                vec![(0, theirs, len)],
            ));
        }
        let mut blocks = Vec::with_capacity(cs.len());
        let mut off = 0;
        for &c in &cs {
            blocks.push(Block { off, len: c * size });
            off += c * size;
        }
        let spec = Spec::Scatterv {
            root: 0,
            send: if lead { &blocks } else { &[] },
            recv_bytes: cs[a.ic.rank] * size,
            in_place: false,
        };
        let src = if lead {
            theirs as *const u8
        } else {
            dangling() as *const u8
        };
        steps.push(local(rt, &a.ic, &spec, src, p1, Reducer::None, LOCAL_2)?);
        Ok(Op::new(comm, steps, views, keep))
    })?;
    finish_how(op, how)
}

/// The view of a v-variant argument and its blocks.
fn vview(
    v: &VBuf<'_>,
    n: usize,
    read: bool,
    write: bool,
    rt: &Runtime,
    what: &str,
) -> Result<(View, Vec<Block>)> {
    let cs = counts(v.counts, n, what)?;
    if v.displs.len() < n {
        return err(
            ErrorClass::Arg,
            format!(
                "displacements for {what} have {} entries, {n} needed",
                v.displs.len()
            ),
        );
    }
    let t = datatype(rt, v.ty, "datatype")?;
    buffer(v.addr, cs.iter().sum(), t, "buffer")?;
    // SAFETY: the caller's buffer holds its blocks (MPI contract).
    unsafe { View::blocks(v.addr, t, &cs, v.displs, |_| read, |_| write) }
}

/// The blocks of a plain buffer of `n` blocks of `count` elements.
fn plain_blocks(
    b: &Buf,
    n: usize,
    read: bool,
    write: bool,
    rt: &Runtime,
    what: &str,
) -> Result<(View, Vec<Block>)> {
    let c = nonneg(b.count, what)?;
    let t = datatype(rt, b.ty, "datatype")?;
    let total = c
        .checked_mul(n)
        .ok_or_else(|| Error::new(ErrorClass::Count, "count times size overflows"))?;
    buffer(b.addr, total, t, "buffer")?;
    let len = bytes(c, t)?;
    let v = one(b.addr, t, total, read, write);
    Ok((v, (0..n).map(|i| Block { off: i * len, len }).collect()))
}

/// The step that sends block `i` of `s` to remote rank `i` and receives remote rank
/// `i`'s message into block `i` of `r` (either side may be empty).
fn pairwise(ic: &Ic, s: Option<(*mut u8, &[Block])>, r: Option<(*mut u8, &[Block])>) -> Step {
    let sends: Vec<(u32, *const u8, usize)> = s
        .map(|(base, bl)| {
            bl.iter()
                .enumerate()
                .map(|(i, b)| (i as u32, base.wrapping_add(b.off) as *const u8, b.len))
                .collect()
        })
        .unwrap_or_default();
    let recvs: Vec<(u32, *mut u8, usize)> = r
        .map(|(base, bl)| {
            bl.iter()
                .enumerate()
                .map(|(i, b)| (i as u32, base.wrapping_add(b.off), b.len))
                .collect()
        })
        .unwrap_or_default();
    exchange(ic, sends, recvs)
}

/// Rooted data movement on an intercommunicator: Gather(v) (`gather`) or Scatter(v).
/// `many` is the root's side (one block per remote rank), `single` a member's side.
pub(crate) enum Many<'a> {
    Plain(Buf),
    V(VBuf<'a>),
}

pub(crate) unsafe fn rooted(
    gather: bool,
    many: Many<'_>,
    single: Input<Buf>,
    root: i32,
    comm: CommId,
    how: How,
) -> Result<Option<ReqId>> {
    let (ic, role, views, blocks) = runtime::with(|rt| {
        let ic = begin(rt, comm)?;
        let role = role(root, &ic)?;
        let nr = ic.nr();
        match role {
            Role::Root => {
                let (v, bl) = match many {
                    Many::Plain(b) => plain_blocks(
                        &b,
                        nr,
                        !gather,
                        gather,
                        rt,
                        if gather { "recvcount" } else { "sendcount" },
                    )?,
                    Many::V(v) => vview(
                        &v,
                        nr,
                        !gather,
                        gather,
                        rt,
                        if gather { "recvcounts" } else { "sendcounts" },
                    )?,
                };
                Ok((ic, role, vec![v], bl))
            }
            Role::Idle => Ok((ic, role, Vec::new(), Vec::new())),
            Role::Remote(_) => {
                let b = no_in_place(single, if gather { "sendbuf" } else { "recvbuf" })?;
                let (v, bl) = plain_blocks(
                    &b,
                    1,
                    gather,
                    !gather,
                    rt,
                    if gather { "sendcount" } else { "recvcount" },
                )?;
                Ok((ic, role, vec![v], bl))
            }
        }
    })?;
    let p: Vec<*mut u8> = views.iter().map(|v| v.base).collect();
    let steps = match role {
        Role::Root if gather => vec![pairwise(&ic, None, Some((p[0], &blocks)))],
        Role::Root => vec![pairwise(&ic, Some((p[0], &blocks)), None)],
        Role::Idle => Vec::new(),
        Role::Remote(r) if gather => vec![exchange(
            &ic,
            vec![(r as u32, p[0] as *const u8, blocks[0].len)],
            Vec::new(),
        )],
        Role::Remote(r) => vec![exchange(
            &ic,
            Vec::new(),
            vec![(r as u32, p[0], blocks[0].len)],
        )],
    };
    finish_how(Op::new(comm, steps, views, Vec::new()), how)
}

/// The send and receive sides of Allgather(v) and Alltoall(v,w) on an intercommunicator.
pub(crate) enum Side<'a> {
    /// One block to/from every remote rank: `Buf` with its count per block.
    Each(Buf),
    /// The same block sent to every remote rank.
    Same(Buf),
    V(VBuf<'a>),
    W(WBuf<'a>),
}

fn side_view(s: &Side<'_>, nr: usize, read: bool, rt: &Runtime) -> Result<(View, Vec<Block>)> {
    match s {
        Side::Each(b) => plain_blocks(
            b,
            nr,
            read,
            !read,
            rt,
            if read { "sendcount" } else { "recvcount" },
        ),
        Side::Same(b) => {
            let (v, bl) = plain_blocks(b, 1, read, !read, rt, "sendcount")?;
            let len = bl[0].len;
            Ok((v, vec![Block { off: 0, len }; nr]))
        }
        Side::V(v) => vview(
            v,
            nr,
            read,
            !read,
            rt,
            if read { "sendcounts" } else { "recvcounts" },
        ),
        Side::W(w) => {
            let cs = counts(w.counts, nr, if read { "sendcounts" } else { "recvcounts" })?;
            if w.displs.len() < nr || w.types.len() < nr {
                return err(
                    ErrorClass::Arg,
                    format!("displacement or datatype arrays have fewer than {nr} entries"),
                );
            }
            let types = w.types[..nr]
                .iter()
                .map(|&t| datatype(rt, t, "datatype"))
                .collect::<Result<Vec<_>>>()?;
            // SAFETY: the caller's buffer holds its blocks (MPI contract).
            unsafe { View::wblocks(w.addr, &types, &cs, w.displs, read, !read) }
        }
    }
}

/// Allgather(v) and Alltoall(v,w) on an intercommunicator: every member exchanges with
/// every remote member.
pub(crate) unsafe fn all_pairs(
    send: Input<Side<'_>>,
    recv: Side<'_>,
    comm: CommId,
    how: How,
) -> Result<Option<ReqId>> {
    let (ic, views, sb, rb) = runtime::with(|rt| {
        let ic = begin(rt, comm)?;
        let nr = ic.nr();
        let s = no_in_place(send, "sendbuf")?;
        let (sv, sb) = side_view(&s, nr, true, rt)?;
        let (rv, rb) = side_view(&recv, nr, false, rt)?;
        Ok((ic, vec![sv, rv], sb, rb))
    })?;
    let steps = vec![pairwise(
        &ic,
        Some((views[0].base, &sb)),
        Some((views[1].base, &rb)),
    )];
    finish_how(Op::new(comm, steps, views, Vec::new()), how)
}
