//! Neighbourhood collectives (MPI 4.1 section 8.6): `MPI_Neighbor_allgather(v)` and
//! `MPI_Neighbor_alltoall(v,w)` on communicators with a Cartesian, graph or
//! distributed-graph topology.
//!
//! Each process receives one block from each in-neighbour and sends one block to each
//! out-neighbour, in the order [`crate::topo::Topology::neighbors`] gives. Blocks of
//! `MPI_PROC_NULL` neighbours (the open ends of a Cartesian grid) are neither sent nor
//! received, and their receive blocks are left untouched.
//!
//! Every block is one point-to-point message in the communicator's collective context
//! under the call's tag from the collective sequence. Messages between one pair of
//! processes match in posting order, which decides where a neighbour that appears
//! several times goes: in a graph or distributed graph the k-th message from a source
//! fills the k-th block of that source. On a periodic Cartesian dimension of extent 1
//! or 2 the same process is both the -1 and the +1 neighbour; what a process sends to
//! its -1 neighbour must land in that neighbour's +1 block, so each dimension's sends go
//! -1 first and its receives are posted +1 first.
//!
//! Contiguous blocks travel straight from and into user memory; other blocks are packed
//! into (and unpacked from) a staging copy of their own. A call is one exchange step of
//! a [`super::nbc`] op: the blocking calls run it at once, the nonblocking and
//! persistent ones (`MPI_Ineighbor_*`, `MPI_Neighbor_*_init`) hand it to the progress
//! engine.

use super::check::{buffer, datatype, nonneg};
use super::movement::VBuf;
use super::nbc::{finish_how, How, Op, Step, Xchg};
use super::stage::View;
use crate::comm::{CommId, Group};
use crate::device::ReqId;
use crate::error::{err, Error, ErrorClass, Result};
use crate::p2p::Buf;
use crate::runtime::{self, Runtime};
use crate::topo::TopoKind;
use crate::types::{TypeId, TypeInfo};
use crate::PROC_NULL;
use std::sync::Arc;

/// An `MPI_Neighbor_alltoallw` buffer argument: `counts[i]` elements of `types[i]` at
/// byte displacement `displs[i]` (an `MPI_Aint`) from `addr`.
#[derive(Clone, Copy, Debug)]
pub struct WBuf<'a> {
    pub addr: usize,
    pub counts: &'a [i64],
    pub displs: &'a [isize],
    pub types: &'a [TypeId],
}

/// The neighbours of the calling process: one receive block per source, one send
/// block per destination.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Degrees {
    /// In-neighbours (communicator ranks, or `MPI_PROC_NULL`), in block order.
    pub sources: Vec<i32>,
    /// Out-neighbours, in block order.
    pub destinations: Vec<i32>,
    /// The communicator's topology kind.
    pub kind: TopoKind,
}

impl Degrees {
    pub fn indegree(&self) -> usize {
        self.sources.len()
    }
    pub fn outdegree(&self) -> usize {
        self.destinations.len()
    }
}

fn no_topology() -> Error {
    Error::new(
        ErrorClass::Topology,
        "the communicator has no process topology (neighbourhood collectives need a Cartesian, graph or distributed graph communicator)",
    )
}

fn degrees_in(rt: &Runtime, comm: CommId) -> Result<Degrees> {
    let c = rt.comms.get(comm)?;
    let Some(t) = c.topo.as_deref() else {
        return Err(no_topology());
    };
    let (sources, destinations) = t.neighbors(c.rank)?;
    Ok(Degrees {
        sources,
        destinations,
        kind: t.kind(),
    })
}

/// The neighbours of this process in `comm`'s topology (what a binding needs to know
/// how many entries its array arguments have); `MPI_ERR_TOPOLOGY` without a topology.
pub fn degrees(comm: CommId) -> Result<Degrees> {
    runtime::with(|rt| degrees_in(rt, comm))
}

/// The order in which receive blocks are posted: block order, except that on a
/// Cartesian grid each dimension's +1 block goes before its -1 block.
fn post_order(kind: TopoKind, n: usize) -> Vec<usize> {
    if kind == TopoKind::Cart {
        (0..n).map(|i| i ^ 1).collect()
    } else {
        (0..n).collect()
    }
}

/// `count` elements of `ty` at `addr`.
struct Piece {
    addr: usize,
    count: usize,
    ty: TypeInfo,
}

impl Piece {
    fn new(addr: usize, count: usize, ty: &TypeInfo, what: &str) -> Result<Piece> {
        buffer(addr, count, ty, what)?;
        count.checked_mul(ty.size).ok_or_else(|| {
            Error::new(
                ErrorClass::Count,
                format!("{what}: {count} elements of {} bytes overflow", ty.size),
            )
        })?;
        Ok(Piece {
            addr,
            count,
            ty: ty.clone(),
        })
    }

    fn len(&self) -> usize {
        self.count * self.ty.size
    }
}

/// One call, its arguments checked: `sends[i]` = (out-neighbour, index into `pieces`),
/// `recvs[i]` = (in-neighbour, index into `pieces`), in block order; `order` is the
/// posting order of the receives.
struct Call {
    comm: CommId,
    ctx: u32,
    group: Arc<Group>,
    rank: i32,
    tag: i32,
    pieces: Vec<Piece>,
    sends: Vec<(i32, usize)>,
    recvs: Vec<(i32, usize)>,
    order: Vec<usize>,
}

/// Resolves the communicator, lets `build` check the arguments and describe the blocks,
/// then takes the call's tag.
fn plan(
    comm: CommId,
    build: impl FnOnce(&Runtime, &Degrees) -> Result<(Vec<Piece>, Vec<usize>, Vec<usize>)>,
) -> Result<Call> {
    runtime::with(|rt| {
        let d = degrees_in(rt, comm)?;
        let (pieces, send_of, recv_of) = build(rt, &d)?;
        let sends = d.destinations.iter().copied().zip(send_of).collect();
        let recvs: Vec<(i32, usize)> = d.sources.iter().copied().zip(recv_of).collect();
        let order = post_order(d.kind, recvs.len());
        let c = rt.comms.get(comm)?;
        let dev = &rt.device;
        let tag = rt.coll.next_tag(c, |w| dev.route(w))?;
        Ok(Call {
            comm,
            ctx: c.coll_ctx(),
            group: c.group.clone(),
            rank: c.rank,
            tag,
            pieces,
            sends,
            recvs,
            order,
        })
    })
}

impl Call {
    /// The call as an op: one exchange of every block, from and into the pieces'
    /// views (user memory for contiguous runs, else staging copies packed at the
    /// start and unpacked at the end).
    fn op(self) -> Op {
        let n = self.pieces.len();
        let (mut sent, mut received) = (vec![false; n], vec![false; n]);
        for &(peer, p) in &self.sends {
            sent[p] |= peer != PROC_NULL;
        }
        for &(peer, p) in &self.recvs {
            received[p] |= peer != PROC_NULL;
        }
        let views: Vec<View> = self
            .pieces
            .iter()
            .enumerate()
            .map(|(i, pc)| {
                if !sent[i] && !received[i] {
                    return View::unused();
                }
                let all = [(0, pc.count)];
                let none: &[(usize, usize)] = &[];
                let pre = if sent[i] { &all[..] } else { none };
                let post = if received[i] { &all[..] } else { none };
                // SAFETY: the user buffer holds the piece (MPI contract; counts checked).
                unsafe { View::single(pc.addr, &pc.ty, pc.count, pre, post) }
            })
            .collect();
        let sends = self
            .sends
            .iter()
            .filter(|&&(peer, _)| peer != PROC_NULL)
            .map(|&(peer, p)| {
                (
                    peer as u32,
                    views[p].base as *const u8,
                    self.pieces[p].len(),
                )
            })
            .collect();
        let recvs = self
            .order
            .iter()
            .map(|&i| self.recvs[i])
            .filter(|&(peer, _)| peer != PROC_NULL)
            .map(|(peer, p)| (peer as u32, views[p].base, self.pieces[p].len()))
            .collect();
        let x = Xchg::new(
            self.comm,
            self.ctx,
            self.rank,
            self.tag,
            self.group,
            sends,
            recvs,
            "neighbour rank",
        );
        Op::new(self.comm, vec![Step::Xchg(x)], views, Vec::new())
    }
}

/// `n` blocks of `b.count` elements, block `i` at element `i * b.count`.
fn plain_pieces(rt: &Runtime, b: &Buf, n: usize, side: Side) -> Result<Vec<Piece>> {
    let (count, ty, buf) = side.names();
    let c = nonneg(b.count, count)?;
    let t = datatype(rt, b.ty, ty)?;
    let stride = (c as isize).wrapping_mul(t.signed_extent);
    (0..n)
        .map(|i| {
            Piece::new(
                b.addr
                    .wrapping_add((i as isize).wrapping_mul(stride) as usize),
                c,
                t,
                buf,
            )
        })
        .collect()
}

/// v-variant blocks: block `i` is `counts[i]` elements at element displacement `displs[i]`.
fn v_pieces(rt: &Runtime, v: &VBuf<'_>, n: usize, side: Side) -> Result<Vec<Piece>> {
    let (_, ty, buf) = side.names();
    let counts = side.counts();
    let displs = side.displs();
    arrays(v.counts.len(), v.displs.len(), n, counts, displs)?;
    let t = datatype(rt, v.ty, ty)?;
    (0..n)
        .map(|i| {
            let c = nonneg(v.counts[i], &format!("{counts}[{i}]"))?;
            let at = v.displs[i]
                .checked_mul(t.signed_extent as i64)
                .ok_or_else(|| {
                    Error::new(
                        ErrorClass::Arg,
                        format!(
                            "{displs}[{i}] = {}: times the extent {} it is beyond any address",
                            v.displs[i], t.signed_extent
                        ),
                    )
                })?;
            Piece::new(v.addr.wrapping_add(at as usize), c, t, buf)
        })
        .collect()
}

/// w-variant blocks: block `i` is `counts[i]` elements of `types[i]` at byte
/// displacement `displs[i]`.
fn w_pieces(rt: &Runtime, w: &WBuf<'_>, n: usize, side: Side) -> Result<Vec<Piece>> {
    let (_, types, buf) = side.names();
    let (counts, displs) = (side.counts(), side.displs());
    arrays(w.counts.len(), w.displs.len(), n, counts, displs)?;
    if w.types.len() < n {
        return err(
            ErrorClass::Arg,
            format!("{types}s has {} entries, {n} needed", w.types.len()),
        );
    }
    (0..n)
        .map(|i| {
            let c = nonneg(w.counts[i], &format!("{counts}[{i}]"))?;
            let t = datatype(rt, w.types[i], &format!("{types}s[{i}]"))?;
            Piece::new(w.addr.wrapping_add(w.displs[i] as usize), c, t, buf)
        })
        .collect()
}

fn arrays(nc: usize, nd: usize, n: usize, counts: &str, displs: &str) -> Result<()> {
    if nc < n || nd < n {
        return err(
            ErrorClass::Arg,
            format!(
                "{counts} has {nc} and {displs} {nd} entries, the topology gives {n} neighbours"
            ),
        );
    }
    Ok(())
}

/// Which buffer argument is checked (for the names in messages).
#[derive(Clone, Copy)]
enum Side {
    Send,
    Recv,
}

impl Side {
    fn names(self) -> (&'static str, &'static str, &'static str) {
        match self {
            Side::Send => ("sendcount", "sendtype", "sendbuf"),
            Side::Recv => ("recvcount", "recvtype", "recvbuf"),
        }
    }
    fn counts(self) -> &'static str {
        match self {
            Side::Send => "sendcounts",
            Side::Recv => "recvcounts",
        }
    }
    fn displs(self) -> &'static str {
        match self {
            Side::Send => "sdispls",
            Side::Recv => "rdispls",
        }
    }
}

/// Joins send and receive pieces into one list: sends first.
fn join(
    send: Vec<Piece>,
    send_of: impl Fn(usize) -> usize,
    nsend: usize,
    recv: Vec<Piece>,
) -> (Vec<Piece>, Vec<usize>, Vec<usize>) {
    let base = send.len();
    let nrecv = recv.len();
    let mut pieces = send;
    pieces.extend(recv);
    (
        pieces,
        (0..nsend).map(send_of).collect(),
        (0..nrecv).map(|i| base + i).collect(),
    )
}

/// `MPI_Neighbor_allgather`: `send` to every out-neighbour; block `i` of `recv`
/// (`recv.count` elements) from in-neighbour `i`.
///
/// # Safety
/// The send buffer must hold `send.count` elements, the receive buffer one block per
/// in-neighbour.
pub unsafe fn neighbor_allgather(send: Buf, recv: Buf, comm: CommId) -> Result<()> {
    // SAFETY: forwarded contract.
    unsafe { neighbor_allgather_how(send, recv, comm, How::Block) }.map(drop)
}

/// [`neighbor_allgather`] made `how`.
///
/// # Safety
/// As for [`neighbor_allgather`], until the call completes.
pub unsafe fn neighbor_allgather_how(
    send: Buf,
    recv: Buf,
    comm: CommId,
    how: How,
) -> Result<Option<ReqId>> {
    let call = plan(comm, |rt, d| {
        let s = plain_pieces(rt, &send, 1, Side::Send)?;
        let r = plain_pieces(rt, &recv, d.indegree(), Side::Recv)?;
        Ok(join(s, |_| 0, d.outdegree(), r))
    })?;
    finish_how(call.op(), how)
}

/// `MPI_Neighbor_allgatherv`: as [`neighbor_allgather`] with per-neighbour receive
/// counts and displacements.
///
/// # Safety
/// As for [`neighbor_allgather`], with the blocks inside the receive buffer.
pub unsafe fn neighbor_allgatherv(send: Buf, recv: VBuf<'_>, comm: CommId) -> Result<()> {
    // SAFETY: forwarded contract.
    unsafe { neighbor_allgatherv_how(send, recv, comm, How::Block) }.map(drop)
}

/// [`neighbor_allgatherv`] made `how`.
///
/// # Safety
/// As for [`neighbor_allgatherv`], until the call completes.
pub unsafe fn neighbor_allgatherv_how(
    send: Buf,
    recv: VBuf<'_>,
    comm: CommId,
    how: How,
) -> Result<Option<ReqId>> {
    let call = plan(comm, |rt, d| {
        let s = plain_pieces(rt, &send, 1, Side::Send)?;
        let r = v_pieces(rt, &recv, d.indegree(), Side::Recv)?;
        Ok(join(s, |_| 0, d.outdegree(), r))
    })?;
    finish_how(call.op(), how)
}

/// `MPI_Neighbor_alltoall`: block `i` of `send` to out-neighbour `i`, block `i` of
/// `recv` from in-neighbour `i`.
///
/// # Safety
/// Each buffer must hold one block per neighbour.
pub unsafe fn neighbor_alltoall(send: Buf, recv: Buf, comm: CommId) -> Result<()> {
    // SAFETY: forwarded contract.
    unsafe { neighbor_alltoall_how(send, recv, comm, How::Block) }.map(drop)
}

/// [`neighbor_alltoall`] made `how`.
///
/// # Safety
/// As for [`neighbor_alltoall`], until the call completes.
pub unsafe fn neighbor_alltoall_how(
    send: Buf,
    recv: Buf,
    comm: CommId,
    how: How,
) -> Result<Option<ReqId>> {
    let call = plan(comm, |rt, d| {
        let s = plain_pieces(rt, &send, d.outdegree(), Side::Send)?;
        let r = plain_pieces(rt, &recv, d.indegree(), Side::Recv)?;
        Ok(join(s, |i| i, d.outdegree(), r))
    })?;
    finish_how(call.op(), how)
}

/// `MPI_Neighbor_alltoallv`.
///
/// # Safety
/// Each buffer must hold its blocks.
pub unsafe fn neighbor_alltoallv(send: VBuf<'_>, recv: VBuf<'_>, comm: CommId) -> Result<()> {
    // SAFETY: forwarded contract.
    unsafe { neighbor_alltoallv_how(send, recv, comm, How::Block) }.map(drop)
}

/// [`neighbor_alltoallv`] made `how`.
///
/// # Safety
/// As for [`neighbor_alltoallv`], until the call completes.
pub unsafe fn neighbor_alltoallv_how(
    send: VBuf<'_>,
    recv: VBuf<'_>,
    comm: CommId,
    how: How,
) -> Result<Option<ReqId>> {
    let call = plan(comm, |rt, d| {
        let s = v_pieces(rt, &send, d.outdegree(), Side::Send)?;
        let r = v_pieces(rt, &recv, d.indegree(), Side::Recv)?;
        Ok(join(s, |i| i, d.outdegree(), r))
    })?;
    finish_how(call.op(), how)
}

/// `MPI_Neighbor_alltoallw`: per-neighbour datatypes and byte displacements.
///
/// # Safety
/// Each buffer must hold its blocks.
pub unsafe fn neighbor_alltoallw(send: WBuf<'_>, recv: WBuf<'_>, comm: CommId) -> Result<()> {
    // SAFETY: forwarded contract.
    unsafe { neighbor_alltoallw_how(send, recv, comm, How::Block) }.map(drop)
}

/// [`neighbor_alltoallw`] made `how`.
///
/// # Safety
/// As for [`neighbor_alltoallw`], until the call completes.
pub unsafe fn neighbor_alltoallw_how(
    send: WBuf<'_>,
    recv: WBuf<'_>,
    comm: CommId,
    how: How,
) -> Result<Option<ReqId>> {
    let call = plan(comm, |rt, d| {
        let s = w_pieces(rt, &send, d.outdegree(), Side::Send)?;
        let r = w_pieces(rt, &recv, d.indegree(), Side::Recv)?;
        Ok(join(s, |i| i, d.outdegree(), r))
    })?;
    finish_how(call.op(), how)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cartesian_receives_post_plus_one_first() {
        assert_eq!(post_order(TopoKind::Cart, 4), vec![1, 0, 3, 2]);
        assert_eq!(post_order(TopoKind::Graph, 3), vec![0, 1, 2]);
        assert_eq!(post_order(TopoKind::DistGraph, 0), Vec::<usize>::new());
    }

    #[test]
    fn topology_neighbors_feed_the_blocks() {
        let t = crate::topo::Topology::Cart(crate::topo::Cart::new(&[2], &[true], 2).unwrap());
        // Extent 2, periodic: the other process is both neighbours.
        assert_eq!(t.neighbors(0).unwrap(), (vec![1, 1], vec![1, 1]));
    }
}
