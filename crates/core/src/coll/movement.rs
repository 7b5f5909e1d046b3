//! The collectives that move data without combining it: `MPI_Barrier`, `MPI_Bcast`,
//! `MPI_Gather(v)`, `MPI_Scatter(v)`, `MPI_Allgather(v)`, `MPI_Alltoall(v,w)`.
//!
//! Arguments are checked where the standard makes them significant (the root's
//! receive side of a gather, the root's send side of a scatter, ...) and nowhere else:
//! insignificant pointers and arrays are never read.

use super::check::{
    buffer, bytes, counts, datatype, disjoint, drive_how, fast_plan, in_place_not_allowed, launch,
    nonneg, not_aliased, root, span, sum_counts, team_or_inter, Input, Key, Plan,
};
use super::inter::{self, Many, Side};
use super::nbc::How;
use super::op::Reducer;
use super::shm::{self, Data};
use super::stage::View;
use crate::comm::CommId;
use crate::device::ReqId;
use crate::error::{err, Error, ErrorClass, Result};
use crate::p2p::Buf;
use crate::runtime::Runtime;
use crate::types::{TypeId, TypeInfo};
use oxmpi_coll::schedule::Spec;

/// A v-variant buffer argument: `counts[i]` elements of `ty` at element displacement
/// `displs[i]` from `addr`.
#[derive(Clone, Copy, Debug)]
pub struct VBuf<'a> {
    pub addr: usize,
    pub counts: &'a [i64],
    pub displs: &'a [i64],
    pub ty: TypeId,
}

/// An `MPI_Alltoallw` buffer argument: `counts[i]` elements of `types[i]` at byte
/// displacement `displs[i]` from `addr`.
#[derive(Clone, Copy, Debug)]
pub struct WBuf<'a> {
    pub addr: usize,
    pub counts: &'a [i64],
    pub displs: &'a [i64],
    pub types: &'a [TypeId],
}

/// Count and datatype of a plain buffer argument.
fn plain<'a>(rt: &'a Runtime, b: &Buf, what: Which) -> Result<(usize, &'a TypeInfo)> {
    let (count, ty, buf) = match what {
        Which::Send => ("sendcount", "sendtype", "sendbuf"),
        Which::Recv => ("recvcount", "recvtype", "recvbuf"),
        Which::Both => ("count", "datatype", "buffer"),
    };
    let n = nonneg(b.count, count)?;
    let t = datatype(rt, b.ty, ty)?;
    buffer(b.addr, n, t, buf)?;
    Ok((n, t))
}

/// Which buffer argument [`plain`] checks (for the names in messages).
#[derive(Clone, Copy)]
enum Which {
    Send,
    Recv,
    Both,
}

/// The byte displacement of a v-variant block at element displacement `d` of `t`.
fn vdisp(d: i64, t: &TypeInfo) -> isize {
    (d as isize).wrapping_mul(t.signed_extent)
}

/// Each of the first `n` element displacements, times the extent of `t`, is a byte
/// offset an address can take (a large-count `MPI_Aint` displacement may not be).
fn displs_fit(d: &[i64], n: usize, what: &str, t: &TypeInfo) -> Result<()> {
    for (i, &x) in d[..n].iter().enumerate() {
        if x.checked_mul(t.signed_extent as i64).is_none() {
            return err(
                ErrorClass::Arg,
                format!(
                    "{what}[{i}] = {x}: times the extent {} it is beyond any address",
                    t.signed_extent
                ),
            );
        }
    }
    Ok(())
}

fn displs_len(d: &[i64], n: usize, what: &str) -> Result<()> {
    if d.len() < n {
        return err(
            ErrorClass::Arg,
            format!(
                "{what} has {} entries, the communicator has {n} ranks",
                d.len()
            ),
        );
    }
    Ok(())
}

fn mismatch(what: &str, send: usize, recv: usize) -> Error {
    Error::new(
        ErrorClass::Truncate,
        format!("{what}: this rank sends itself {send} bytes but receives {recv} (sendcount/sendtype and recvcount/recvtype differ in size)"),
    )
}

/// What `MPI_Gather` and `MPI_Scatter` checked of their buffers: the block size, this
/// rank's one-block buffer (none when in place at the root) and, at the root, the
/// buffer of one block per rank.
struct RootedBlocks<'a> {
    block: usize,
    /// The one-block buffer: address, count, type.
    one: Option<(usize, usize, &'a TypeInfo)>,
    /// The root's buffer of all blocks: count per block, total count, type.
    all: Option<(usize, usize, &'a TypeInfo)>,
}

/// Checks the buffers of a rooted block collective: `one` is every rank's one-block
/// buffer (`side` names it: the send buffer of a gather, the receive buffer of a
/// scatter; in place only at the root), `all` the root's buffer of `size` blocks.
fn rooted_blocks<'a>(
    rt: &'a Runtime,
    size: usize,
    at_root: bool,
    one: Input<Buf>,
    side: Which,
    all: &Buf,
) -> Result<RootedBlocks<'a>> {
    let (one_name, all_side, all_count) = match side {
        Which::Send => ("sendbuf", Which::Recv, "recvcount"),
        _ => ("recvbuf", Which::Send, "sendcount"),
    };
    let one = match one {
        Input::Data(b) => {
            let (n, info) = plain(rt, &b, side)?;
            Some((b.addr, n, info))
        }
        Input::InPlace if at_root => None,
        Input::InPlace => {
            return Err(in_place_not_allowed(&format!(
                "{one_name} of a rank other than the root"
            )))
        }
    };
    if !at_root {
        let (_, n, info) = one.expect("checked above");
        let block = bytes(n, info)?;
        return Ok(RootedBlocks {
            block,
            one,
            all: None,
        });
    }
    let (c, info) = plain(rt, all, all_side)?;
    let total = c.checked_mul(size).ok_or_else(|| {
        Error::new(
            ErrorClass::Count,
            format!("{all_count} times size overflows"),
        )
    })?;
    let block = bytes(c, info)?;
    if let Some((addr, n, oinfo)) = one {
        let ob = bytes(n, oinfo)?;
        if ob != block {
            return Err(match side {
                Which::Send => mismatch("the root's own block", ob, block),
                _ => mismatch("the root's own block", block, ob),
            });
        }
        match side {
            Which::Send => not_aliased(addr, oinfo, n, all.addr, info, total)?,
            _ => not_aliased(all.addr, info, total, addr, oinfo, n)?,
        }
    }
    Ok(RootedBlocks {
        block,
        one,
        all: Some((c, total, info)),
    })
}

fn no_reduce() -> Reducer {
    Reducer::None
}

/// `MPI_Barrier`.
/// (The blocking call; [`barrier_how`] makes all three kinds.)
pub fn barrier(comm: CommId) -> Result<()> {
    barrier_how(comm, How::Block).map(drop)
}

/// `MPI_Barrier`.
pub fn barrier_how(comm: CommId, how: How) -> Result<Option<ReqId>> {
    // A communicator spanning IMPI clients runs chapter 4's algorithm (blocking
    // MPI-1 calls; docs/impi.md).
    if how == How::Block {
        if let Some(s) = super::impi::span(comm)? {
            super::impi::barrier(&s)?;
            return Ok(None);
        }
    }
    let key = Key::bare(shm::Kind::Barrier, comm);
    let ran = drive_how(how, Some(key), |rt| {
        let Some(t) = team_or_inter(rt, comm)? else {
            return Ok(Plan::Inter);
        };
        let fast = fast_plan(rt, how, &t, 0, 1, shm::Kind::Barrier, Some(key), |comm| {
            shm::Call {
                comm,
                kind: shm::Kind::Barrier,
                input: None,
                output: None,
                reducer: no_reduce(),
                bytes: 0,
                elem: 1,
            }
        });
        if let Some(p) = fast {
            return Ok(p);
        }
        let (sv, rv) = (View::unused(), View::unused());
        let exec = launch(rt, &t, &Spec::Barrier, &sv, &rv, no_reduce())?;
        Ok(Plan::sched(exec, sv, rv))
    })?;
    ran.or_inter(|| inter::barrier(comm, how))
}

/// `MPI_Bcast`.
/// (The blocking call; [`bcast_how`] makes all three kinds.)
///
/// # Safety
/// As for [`bcast_how`].
pub unsafe fn bcast(b: Buf, root_rank: i32, comm: CommId) -> Result<()> {
    // SAFETY: forwarded contract.
    unsafe { bcast_how(b, root_rank, comm, How::Block) }.map(drop)
}

/// `MPI_Bcast`.
///
/// # Safety
/// The buffer must hold `count` elements of its datatype.
pub unsafe fn bcast_how(b: Buf, root_rank: i32, comm: CommId, how: How) -> Result<Option<ReqId>> {
    if super::impi::chapter4(comm, how, |s| super::impi::bcast(s, b, root_rank))? {
        return Ok(None);
    }
    let key = usize::try_from(root_rank).ok().and_then(|r| {
        let kind = shm::Kind::Bcast { root: r };
        Key::predefined(kind, comm, Input::Data(b.addr), b.addr, b.count, b.ty, 0)
    });
    let ran = drive_how(how, key, |rt| {
        let Some(t) = team_or_inter(rt, comm)? else {
            return Ok(Plan::Inter);
        };
        let (n, info) = plain(rt, &b, Which::Both)?;
        let root = root(root_rank, t.size)?;
        let d = Data::new(b.addr, n, info);
        let at_root = t.rank == root;
        let fast = fast_plan(
            rt,
            how,
            &t,
            bytes(n, info)?,
            1,
            shm::Kind::Bcast { root },
            key,
            |comm| shm::Call {
                comm,
                kind: shm::Kind::Bcast { root },
                input: at_root.then(|| d.clone()),
                output: (!at_root).then_some(d),
                reducer: no_reduce(),
                bytes: n * info.size,
                elem: 1,
            },
        );
        if let Some(p) = fast {
            return Ok(p);
        }
        // SAFETY: per the function's contract.
        let v = unsafe { View::streamed(b.addr, info, n) };
        let spec = Spec::Bcast {
            root: root as u32,
            bytes: bytes(n, info)?,
        };
        let sv = View::unused();
        let exec = launch(rt, &t, &spec, &sv, &v, no_reduce())?;
        Ok(Plan::sched(exec, sv, v))
    })?;
    // SAFETY: forwarded contract.
    ran.or_inter(|| unsafe { inter::bcast(b, root_rank, comm, how) })
}

/// `MPI_Gather`. `recv` matters only at the root; `MPI_IN_PLACE` only at the root.
/// (The blocking call; [`gather_how`] makes all three kinds.)
///
/// # Safety
/// As for [`gather_how`].
pub unsafe fn gather(send: Input<Buf>, recv: Buf, root_rank: i32, comm: CommId) -> Result<()> {
    // SAFETY: forwarded contract.
    unsafe { gather_how(send, recv, root_rank, comm, How::Block) }.map(drop)
}

/// `MPI_Gather`. `recv` matters only at the root; `MPI_IN_PLACE` only at the root.
///
/// # Safety
/// The buffers must hold their counts of elements where significant (the root's
/// receive buffer `size * recvcount`).
pub unsafe fn gather_how(
    send: Input<Buf>,
    recv: Buf,
    root_rank: i32,
    comm: CommId,
    how: How,
) -> Result<Option<ReqId>> {
    if super::impi::chapter4(comm, how, |s| super::impi::gather(s, send, recv, root_rank))? {
        return Ok(None);
    }
    let ran = drive_how(how, None, |rt| {
        let Some(t) = team_or_inter(rt, comm)? else {
            return Ok(Plan::Inter);
        };
        let root = root(root_rank, t.size)?;
        let RootedBlocks {
            block,
            one: sent,
            all: received,
        } = rooted_blocks(rt, t.size, t.rank == root, send, Which::Send, &recv)?;
        let input = match (sent, received) {
            (Some((addr, n, info)), _) => Data::new(addr, n, info),
            (None, Some((rc, _, rinfo))) => {
                Data::new(own_block(recv.addr, t.rank, rc, rinfo), rc, rinfo)
            }
            (None, None) => unreachable!("in place only at the root"),
        };
        let kind = shm::Kind::Gather { root };
        let fast = fast_plan(rt, how, &t, block, 1, kind, None, |comm| shm::Call {
            comm,
            kind,
            input: Some(input),
            output: received.map(|(_, total, rinfo)| Data::new(recv.addr, total, rinfo)),
            reducer: no_reduce(),
            bytes: block,
            elem: 1,
        });
        if let Some(p) = fast {
            return Ok(p);
        }
        let sv = match sent {
            // SAFETY: per the function's contract.
            Some((addr, n, info)) => unsafe { View::streamed(addr, info, n) },
            None => View::unused(),
        };
        let rv = match received {
            // SAFETY: per the function's contract.
            Some((_, total, rinfo)) => unsafe { View::streamed(recv.addr, rinfo, total) },
            None => View::unused(),
        };
        let spec = Spec::Gather {
            root: root as u32,
            bytes: block,
            in_place: send.is_in_place(),
        };
        let exec = launch(rt, &t, &spec, &sv, &rv, no_reduce())?;
        Ok(Plan::sched(exec, sv, rv))
    })?;
    // SAFETY: forwarded contract.
    ran.or_inter(|| unsafe { inter::rooted(true, Many::Plain(recv), send, root_rank, comm, how) })
}

/// Address of block `rank` (of `count` elements each) in a buffer of `info` elements.
fn own_block(addr: usize, rank: usize, count: usize, info: &TypeInfo) -> usize {
    addr.wrapping_add(((rank * count) as isize).wrapping_mul(info.signed_extent) as usize)
}

/// `MPI_Gatherv`. `recv` (its counts and displacements too) matters only at the root.
/// (The blocking call; [`gatherv_how`] makes all three kinds.)
///
/// # Safety
/// As for [`gatherv_how`].
pub unsafe fn gatherv(
    send: Input<Buf>,
    recv: VBuf<'_>,
    root_rank: i32,
    comm: CommId,
) -> Result<()> {
    // SAFETY: forwarded contract.
    unsafe { gatherv_how(send, recv, root_rank, comm, How::Block) }.map(drop)
}

/// `MPI_Gatherv`. `recv` (its counts and displacements too) matters only at the root.
///
/// # Safety
/// As for [`gather`], with the root's blocks inside its receive buffer.
pub unsafe fn gatherv_how(
    send: Input<Buf>,
    recv: VBuf<'_>,
    root_rank: i32,
    comm: CommId,
    how: How,
) -> Result<Option<ReqId>> {
    if super::impi::chapter4(comm, how, |s| {
        super::impi::gatherv(s, send, &recv, root_rank)
    })? {
        return Ok(None);
    }
    let ran = drive_how(how, None, |rt| {
        let Some(t) = team_or_inter(rt, comm)? else {
            return Ok(Plan::Inter);
        };
        let root = root(root_rank, t.size)?;
        let at_root = t.rank == root;
        let mut sv = View::unused();
        let mut send_bytes = 0;
        let mut sent = None;
        if let Input::Data(s) = send {
            let (n, info) = plain(rt, &s, Which::Send)?;
            send_bytes = bytes(n, info)?;
            // SAFETY: per the function's contract.
            sv = unsafe { View::streamed(s.addr, info, n) };
            sent = Some((s.addr, n, info));
        } else if !at_root {
            return Err(in_place_not_allowed(
                "sendbuf of a rank other than the root",
            ));
        }
        let (rv, blocks) = if at_root {
            let cs = counts(recv.counts, t.size, "recvcounts")?;
            displs_len(recv.displs, t.size, "displs")?;
            let rinfo = datatype(rt, recv.ty, "recvtype")?;
            displs_fit(recv.displs, t.size, "displs", rinfo)?;
            let total: usize = sum_counts(&cs);
            buffer(recv.addr, total, rinfo, "recvbuf")?;
            if let Some((addr, n, info)) = sent {
                disjoint(
                    1,
                    |_| span(addr, 0, info, n),
                    t.size,
                    |i| span(recv.addr, vdisp(recv.displs[i], rinfo), rinfo, cs[i]),
                )?;
            }
            // SAFETY: per the function's contract.
            unsafe { View::streamed_blocks(recv.addr, rinfo, &cs, recv.displs)? }
        } else {
            (View::unused(), Vec::new())
        };
        if send.is_in_place() {
            send_bytes = blocks[t.rank].len;
        }
        let spec = Spec::Gatherv {
            root: root as u32,
            send_bytes,
            recv: &blocks,
            in_place: send.is_in_place(),
        };
        let exec = launch(rt, &t, &spec, &sv, &rv, no_reduce())?;
        Ok(Plan::sched(exec, sv, rv))
    })?;
    // SAFETY: forwarded contract.
    ran.or_inter(|| unsafe { inter::rooted(true, Many::V(recv), send, root_rank, comm, how) })
}

/// `MPI_Scatter`. `send` matters only at the root; `MPI_IN_PLACE` (as the receive
/// (The blocking call; [`scatter_how`] makes all three kinds.)
///
/// # Safety
/// As for [`scatter_how`].
pub unsafe fn scatter(send: Buf, recv: Input<Buf>, root_rank: i32, comm: CommId) -> Result<()> {
    // SAFETY: forwarded contract.
    unsafe { scatter_how(send, recv, root_rank, comm, How::Block) }.map(drop)
}

/// `MPI_Scatter`. `send` matters only at the root; `MPI_IN_PLACE` (as the receive
/// buffer) only at the root.
///
/// # Safety
/// The root's send buffer must hold `size * sendcount` elements, every other receive
/// buffer `recvcount`.
pub unsafe fn scatter_how(
    send: Buf,
    recv: Input<Buf>,
    root_rank: i32,
    comm: CommId,
    how: How,
) -> Result<Option<ReqId>> {
    if super::impi::chapter4(comm, how, |s| {
        super::impi::scatter(s, send, recv, root_rank)
    })? {
        return Ok(None);
    }
    let ran = drive_how(how, None, |rt| {
        let Some(t) = team_or_inter(rt, comm)? else {
            return Ok(Plan::Inter);
        };
        let root = root(root_rank, t.size)?;
        let RootedBlocks {
            block,
            one: received,
            all: sent,
        } = rooted_blocks(rt, t.size, t.rank == root, recv, Which::Recv, &send)?;
        let kind = shm::Kind::Scatter { root };
        let fast = fast_plan(rt, how, &t, block, 1, kind, None, |comm| shm::Call {
            comm,
            kind,
            input: sent.map(|(_, total, sinfo)| Data::new(send.addr, total, sinfo)),
            output: received.map(|(addr, n, info)| Data::new(addr, n, info)),
            reducer: no_reduce(),
            bytes: block,
            elem: 1,
        });
        if let Some(p) = fast {
            return Ok(p);
        }
        let rv = match received {
            // SAFETY: per the function's contract.
            Some((addr, n, info)) => unsafe { View::streamed(addr, info, n) },
            None => View::unused(),
        };
        let sv = match sent {
            // SAFETY: per the function's contract.
            Some((_, total, sinfo)) => unsafe { View::streamed(send.addr, sinfo, total) },
            None => View::unused(),
        };
        let spec = Spec::Scatter {
            root: root as u32,
            bytes: block,
            in_place: recv.is_in_place(),
        };
        let exec = launch(rt, &t, &spec, &sv, &rv, no_reduce())?;
        Ok(Plan::sched(exec, sv, rv))
    })?;
    // SAFETY: forwarded contract.
    ran.or_inter(|| unsafe { inter::rooted(false, Many::Plain(send), recv, root_rank, comm, how) })
}

/// `MPI_Scatterv`. `send` (its counts and displacements too) matters only at the root.
/// (The blocking call; [`scatterv_how`] makes all three kinds.)
///
/// # Safety
/// As for [`scatterv_how`].
pub unsafe fn scatterv(
    send: VBuf<'_>,
    recv: Input<Buf>,
    root_rank: i32,
    comm: CommId,
) -> Result<()> {
    // SAFETY: forwarded contract.
    unsafe { scatterv_how(send, recv, root_rank, comm, How::Block) }.map(drop)
}

/// `MPI_Scatterv`. `send` (its counts and displacements too) matters only at the root.
///
/// # Safety
/// As for [`scatter`], with the root's blocks inside its send buffer.
pub unsafe fn scatterv_how(
    send: VBuf<'_>,
    recv: Input<Buf>,
    root_rank: i32,
    comm: CommId,
    how: How,
) -> Result<Option<ReqId>> {
    if super::impi::chapter4(comm, how, |s| {
        super::impi::scatterv(s, &send, recv, root_rank)
    })? {
        return Ok(None);
    }
    let ran = drive_how(how, None, |rt| {
        let Some(t) = team_or_inter(rt, comm)? else {
            return Ok(Plan::Inter);
        };
        let root = root(root_rank, t.size)?;
        let at_root = t.rank == root;
        let mut rv = View::unused();
        let mut recv_bytes = 0;
        let mut received = None;
        if let Input::Data(r) = recv {
            let (n, info) = plain(rt, &r, Which::Recv)?;
            recv_bytes = bytes(n, info)?;
            // SAFETY: per the function's contract.
            rv = unsafe { View::streamed(r.addr, info, n) };
            received = Some((r.addr, n, info));
        } else if !at_root {
            return Err(in_place_not_allowed(
                "recvbuf of a rank other than the root",
            ));
        }
        let (sv, blocks) = if at_root {
            let cs = counts(send.counts, t.size, "sendcounts")?;
            displs_len(send.displs, t.size, "displs")?;
            let sinfo = datatype(rt, send.ty, "sendtype")?;
            displs_fit(send.displs, t.size, "displs", sinfo)?;
            let total: usize = sum_counts(&cs);
            buffer(send.addr, total, sinfo, "sendbuf")?;
            if let Some((addr, n, info)) = received {
                disjoint(
                    t.size,
                    |i| span(send.addr, vdisp(send.displs[i], sinfo), sinfo, cs[i]),
                    1,
                    |_| span(addr, 0, info, n),
                )?;
            }
            // SAFETY: per the function's contract.
            unsafe { View::streamed_blocks(send.addr, sinfo, &cs, send.displs)? }
        } else {
            (View::unused(), Vec::new())
        };
        if recv.is_in_place() {
            recv_bytes = blocks[t.rank].len;
        }
        let spec = Spec::Scatterv {
            root: root as u32,
            send: &blocks,
            recv_bytes,
            in_place: recv.is_in_place(),
        };
        let exec = launch(rt, &t, &spec, &sv, &rv, no_reduce())?;
        Ok(Plan::sched(exec, sv, rv))
    })?;
    // SAFETY: forwarded contract.
    ran.or_inter(|| unsafe { inter::rooted(false, Many::V(send), recv, root_rank, comm, how) })
}

/// `MPI_Allgather`.
/// (The blocking call; [`allgather_how`] makes all three kinds.)
///
/// # Safety
/// As for [`allgather_how`].
pub unsafe fn allgather(send: Input<Buf>, recv: Buf, comm: CommId) -> Result<()> {
    // SAFETY: forwarded contract.
    unsafe { allgather_how(send, recv, comm, How::Block) }.map(drop)
}

/// `MPI_Allgather`.
///
/// # Safety
/// The send buffer must hold `sendcount` elements, the receive buffer `size * recvcount`.
pub unsafe fn allgather_how(
    send: Input<Buf>,
    recv: Buf,
    comm: CommId,
    how: How,
) -> Result<Option<ReqId>> {
    if super::impi::chapter4(comm, how, |s| super::impi::allgather(s, send, recv))? {
        return Ok(None);
    }
    let ran = drive_how(how, None, |rt| {
        let Some(t) = team_or_inter(rt, comm)? else {
            return Ok(Plan::Inter);
        };
        let (rc, rinfo) = plain(rt, &recv, Which::Recv)?;
        let total = rc
            .checked_mul(t.size)
            .ok_or_else(|| Error::new(ErrorClass::Count, "recvcount times size overflows"))?;
        let block = bytes(rc, rinfo)?;
        let own = recv
            .addr
            .wrapping_add(((t.rank * rc) as isize).wrapping_mul(rinfo.signed_extent) as usize);
        let mut input = Data::new(own, rc, rinfo);
        let mut sent = (own, rc, rinfo.clone());
        if let Input::Data(s) = send {
            let (sc, sinfo) = plain(rt, &s, Which::Send)?;
            let sb = bytes(sc, sinfo)?;
            if sb != block {
                return Err(mismatch("MPI_Allgather", sb, block));
            }
            not_aliased(s.addr, sinfo, sc, recv.addr, rinfo, total)?;
            input = Data::new(s.addr, sc, sinfo);
            sent = (s.addr, sc, sinfo.clone());
        }
        let fast = fast_plan(rt, how, &t, block, 1, shm::Kind::Allgather, None, |comm| {
            shm::Call {
                comm,
                kind: shm::Kind::Allgather,
                input: Some(input.clone()),
                output: Some(Data::new(recv.addr, total, rinfo)),
                reducer: no_reduce(),
                bytes: block,
                elem: 1,
            }
        });
        if let Some(p) = fast {
            return Ok(p);
        }
        let mut sv = View::unused();
        if let Input::Data(_) = send {
            // SAFETY: per the function's contract.
            sv = unsafe { View::streamed(sent.0, &sent.2, sent.1) };
        }
        // SAFETY: per the function's contract.
        let rv = unsafe { View::streamed(recv.addr, rinfo, total) };
        let spec = Spec::Allgather {
            bytes: block,
            in_place: send.is_in_place(),
        };
        let exec = launch(rt, &t, &spec, &sv, &rv, no_reduce())?;
        Ok(Plan::sched(exec, sv, rv))
    })?;
    ran.or_inter(|| {
        let send = send.map(Side::Same);
        // SAFETY: forwarded contract.
        unsafe { inter::all_pairs(send, Side::Each(recv), comm, how) }
    })
}

/// `MPI_Allgatherv`.
/// (The blocking call; [`allgatherv_how`] makes all three kinds.)
///
/// # Safety
/// As for [`allgatherv_how`].
pub unsafe fn allgatherv(send: Input<Buf>, recv: VBuf<'_>, comm: CommId) -> Result<()> {
    // SAFETY: forwarded contract.
    unsafe { allgatherv_how(send, recv, comm, How::Block) }.map(drop)
}

/// `MPI_Allgatherv`.
///
/// # Safety
/// The send buffer must hold `sendcount` elements, the receive buffer every block.
pub unsafe fn allgatherv_how(
    send: Input<Buf>,
    recv: VBuf<'_>,
    comm: CommId,
    how: How,
) -> Result<Option<ReqId>> {
    if super::impi::chapter4(comm, how, |s| super::impi::allgatherv(s, send, &recv))? {
        return Ok(None);
    }
    let ran = drive_how(how, None, |rt| {
        let Some(t) = team_or_inter(rt, comm)? else {
            return Ok(Plan::Inter);
        };
        let cs = counts(recv.counts, t.size, "recvcounts")?;
        displs_len(recv.displs, t.size, "displs")?;
        let rinfo = datatype(rt, recv.ty, "recvtype")?;
        displs_fit(recv.displs, t.size, "displs", rinfo)?;
        let total: usize = sum_counts(&cs);
        buffer(recv.addr, total, rinfo, "recvbuf")?;
        let me = t.rank;
        let ip = send.is_in_place();
        // SAFETY: per the function's contract.
        let (rv, blocks) = unsafe { View::streamed_blocks(recv.addr, rinfo, &cs, recv.displs)? };
        let mut sv = View::unused();
        if let Input::Data(s) = send {
            let (sc, sinfo) = plain(rt, &s, Which::Send)?;
            let sb = bytes(sc, sinfo)?;
            if sb != blocks[me].len {
                return Err(mismatch("MPI_Allgatherv", sb, blocks[me].len));
            }
            disjoint(
                1,
                |_| span(s.addr, 0, sinfo, sc),
                t.size,
                |i| span(recv.addr, vdisp(recv.displs[i], rinfo), rinfo, cs[i]),
            )?;
            // SAFETY: per the function's contract.
            sv = unsafe { View::streamed(s.addr, sinfo, sc) };
        }
        let spec = Spec::Allgatherv {
            blocks: &blocks,
            in_place: ip,
        };
        let exec = launch(rt, &t, &spec, &sv, &rv, no_reduce())?;
        Ok(Plan::sched(exec, sv, rv))
    })?;
    ran.or_inter(|| {
        let send = send.map(Side::Same);
        // SAFETY: forwarded contract.
        unsafe { inter::all_pairs(send, Side::V(recv), comm, how) }
    })
}

/// `MPI_Alltoall`.
/// (The blocking call; [`alltoall_how`] makes all three kinds.)
///
/// # Safety
/// As for [`alltoall_how`].
pub unsafe fn alltoall(send: Input<Buf>, recv: Buf, comm: CommId) -> Result<()> {
    // SAFETY: forwarded contract.
    unsafe { alltoall_how(send, recv, comm, How::Block) }.map(drop)
}

/// `MPI_Alltoall`.
///
/// # Safety
/// The send buffer must hold `size * sendcount` elements, the receive buffer
/// `size * recvcount`.
pub unsafe fn alltoall_how(
    send: Input<Buf>,
    recv: Buf,
    comm: CommId,
    how: How,
) -> Result<Option<ReqId>> {
    if let Some(d) = super::impi::data(&send) {
        if super::impi::chapter4(comm, how, |s| super::impi::alltoall(s, d, recv))? {
            return Ok(None);
        }
    }
    let ran = drive_how(how, None, |rt| {
        let Some(t) = team_or_inter(rt, comm)? else {
            return Ok(Plan::Inter);
        };
        let (rc, rinfo) = plain(rt, &recv, Which::Recv)?;
        let total = rc
            .checked_mul(t.size)
            .ok_or_else(|| Error::new(ErrorClass::Count, "recvcount times size overflows"))?;
        let block = bytes(rc, rinfo)?;
        let mut sent = None;
        if let Input::Data(s) = send {
            let (sc, sinfo) = plain(rt, &s, Which::Send)?;
            let sb = bytes(sc, sinfo)?;
            if sb != block {
                return Err(mismatch("MPI_Alltoall", sb, block));
            }
            let stotal = sc.saturating_mul(t.size);
            not_aliased(s.addr, sinfo, stotal, recv.addr, rinfo, total)?;
            sent = Some((s.addr, stotal, sinfo));
        }
        let kind = shm::Kind::Alltoall;
        let fast = fast_plan(rt, how, &t, block, 1, kind, None, |comm| shm::Call {
            comm,
            kind,
            input: Some(match sent {
                Some((addr, stotal, sinfo)) => Data::new(addr, stotal, sinfo),
                None => Data::new(recv.addr, total, rinfo),
            }),
            output: Some(Data::new(recv.addr, total, rinfo)),
            reducer: no_reduce(),
            bytes: block,
            elem: 1,
        });
        if let Some(p) = fast {
            return Ok(p);
        }
        let sv = match sent {
            // SAFETY: per the function's contract.
            Some((addr, stotal, sinfo)) => unsafe { View::streamed(addr, sinfo, stotal) },
            None => View::unused(),
        };
        // SAFETY: per the function's contract.
        let rv = unsafe { View::streamed(recv.addr, rinfo, total) };
        let spec = Spec::Alltoall {
            bytes: block,
            in_place: send.is_in_place(),
        };
        let exec = launch(rt, &t, &spec, &sv, &rv, no_reduce())?;
        Ok(Plan::sched(exec, sv, rv))
    })?;
    ran.or_inter(|| {
        let send = match send {
            Input::Data(s) => Input::Data(Side::Each(s)),
            Input::InPlace => Input::InPlace,
        };
        // SAFETY: forwarded contract.
        unsafe { inter::all_pairs(send, Side::Each(recv), comm, how) }
    })
}

/// `MPI_Alltoallv`.
/// (The blocking call; [`alltoallv_how`] makes all three kinds.)
///
/// # Safety
/// As for [`alltoallv_how`].
pub unsafe fn alltoallv(send: Input<VBuf<'_>>, recv: VBuf<'_>, comm: CommId) -> Result<()> {
    // SAFETY: forwarded contract.
    unsafe { alltoallv_how(send, recv, comm, How::Block) }.map(drop)
}

/// `MPI_Alltoallv`.
///
/// # Safety
/// Each buffer must hold its blocks.
pub unsafe fn alltoallv_how(
    send: Input<VBuf<'_>>,
    recv: VBuf<'_>,
    comm: CommId,
    how: How,
) -> Result<Option<ReqId>> {
    if let Some(d) = super::impi::data(&send) {
        if super::impi::chapter4(comm, how, |s| super::impi::alltoallv(s, &d, &recv))? {
            return Ok(None);
        }
    }
    let ran = drive_how(how, None, |rt| {
        let Some(t) = team_or_inter(rt, comm)? else {
            return Ok(Plan::Inter);
        };
        let rcs = counts(recv.counts, t.size, "recvcounts")?;
        displs_len(recv.displs, t.size, "rdispls")?;
        let rinfo = datatype(rt, recv.ty, "recvtype")?;
        displs_fit(recv.displs, t.size, "rdispls", rinfo)?;
        let rtotal: usize = sum_counts(&rcs);
        buffer(recv.addr, rtotal, rinfo, "recvbuf")?;
        let ip = send.is_in_place();
        // SAFETY: per the function's contract.
        let (rv, rblocks) = unsafe { View::streamed_blocks(recv.addr, rinfo, &rcs, recv.displs)? };
        let (sv, sblocks) = match send {
            Input::InPlace => (View::unused(), Vec::new()),
            Input::Data(s) => {
                let scs = counts(s.counts, t.size, "sendcounts")?;
                displs_len(s.displs, t.size, "sdispls")?;
                let sinfo = datatype(rt, s.ty, "sendtype")?;
                displs_fit(s.displs, t.size, "sdispls", sinfo)?;
                let stotal: usize = sum_counts(&scs);
                buffer(s.addr, stotal, sinfo, "sendbuf")?;
                disjoint(
                    t.size,
                    |i| span(s.addr, vdisp(s.displs[i], sinfo), sinfo, scs[i]),
                    t.size,
                    |i| span(recv.addr, vdisp(recv.displs[i], rinfo), rinfo, rcs[i]),
                )?;
                // SAFETY: per the function's contract.
                unsafe { View::streamed_blocks(s.addr, sinfo, &scs, s.displs)? }
            }
        };
        if !ip && sblocks[t.rank].len != rblocks[t.rank].len {
            return Err(mismatch(
                "MPI_Alltoallv",
                sblocks[t.rank].len,
                rblocks[t.rank].len,
            ));
        }
        let spec = Spec::Alltoallv {
            send: &sblocks,
            recv: &rblocks,
            in_place: ip,
        };
        let exec = launch(rt, &t, &spec, &sv, &rv, no_reduce())?;
        Ok(Plan::sched(exec, sv, rv))
    })?;
    ran.or_inter(|| {
        let send = match send {
            Input::Data(s) => Input::Data(Side::V(s)),
            Input::InPlace => Input::InPlace,
        };
        // SAFETY: forwarded contract.
        unsafe { inter::all_pairs(send, Side::V(recv), comm, how) }
    })
}

fn wtypes<'a>(
    rt: &'a Runtime,
    types: &[TypeId],
    n: usize,
    what: &str,
) -> Result<Vec<&'a TypeInfo>> {
    if types.len() < n {
        return err(
            ErrorClass::Arg,
            format!(
                "{what} has {} entries, the communicator has {n} ranks",
                types.len()
            ),
        );
    }
    types[..n]
        .iter()
        .enumerate()
        .map(|(i, &ty)| datatype(rt, ty, &format!("{what}[{i}]")))
        .collect()
}

/// `MPI_Alltoallw`: per-peer datatypes and byte displacements.
/// (The blocking call; [`alltoallw_how`] makes all three kinds.)
///
/// # Safety
/// As for [`alltoallw_how`].
pub unsafe fn alltoallw(send: Input<WBuf<'_>>, recv: WBuf<'_>, comm: CommId) -> Result<()> {
    // SAFETY: forwarded contract.
    unsafe { alltoallw_how(send, recv, comm, How::Block) }.map(drop)
}

/// `MPI_Alltoallw`: per-peer datatypes and byte displacements.
///
/// # Safety
/// Each buffer must hold its blocks.
pub unsafe fn alltoallw_how(
    send: Input<WBuf<'_>>,
    recv: WBuf<'_>,
    comm: CommId,
    how: How,
) -> Result<Option<ReqId>> {
    let ran = drive_how(how, None, |rt| {
        let Some(t) = team_or_inter(rt, comm)? else {
            return Ok(Plan::Inter);
        };
        let rcs = counts(recv.counts, t.size, "recvcounts")?;
        displs_len(recv.displs, t.size, "rdispls")?;
        let rtypes = wtypes(rt, recv.types, t.size, "recvtypes")?;
        let ip = send.is_in_place();
        // SAFETY: per the function's contract.
        let (rv, rblocks) =
            unsafe { View::streamed_wblocks(recv.addr, &rtypes, &rcs, recv.displs)? };
        let (sv, sblocks) = match send {
            Input::InPlace => (View::unused(), Vec::new()),
            Input::Data(s) => {
                let scs = counts(s.counts, t.size, "sendcounts")?;
                displs_len(s.displs, t.size, "sdispls")?;
                let stypes = wtypes(rt, s.types, t.size, "sendtypes")?;
                disjoint(
                    t.size,
                    |i| span(s.addr, s.displs[i] as isize, stypes[i], scs[i]),
                    t.size,
                    |i| span(recv.addr, recv.displs[i] as isize, rtypes[i], rcs[i]),
                )?;
                // SAFETY: per the function's contract.
                unsafe { View::streamed_wblocks(s.addr, &stypes, &scs, s.displs)? }
            }
        };
        if !ip && sblocks[t.rank].len != rblocks[t.rank].len {
            return Err(mismatch(
                "MPI_Alltoallw",
                sblocks[t.rank].len,
                rblocks[t.rank].len,
            ));
        }
        let spec = Spec::Alltoallv {
            send: &sblocks,
            recv: &rblocks,
            in_place: ip,
        };
        let exec = launch(rt, &t, &spec, &sv, &rv, no_reduce())?;
        Ok(Plan::sched(exec, sv, rv))
    })?;
    ran.or_inter(|| {
        let send = match send {
            Input::Data(s) => Input::Data(Side::W(s)),
            Input::InPlace => Input::InPlace,
        };
        // SAFETY: forwarded contract.
        unsafe { inter::all_pairs(send, Side::W(recv), comm, how) }
    })
}
