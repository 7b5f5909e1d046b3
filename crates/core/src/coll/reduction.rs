//! The reduction collectives — `MPI_Reduce`, `MPI_Allreduce`, `MPI_Reduce_scatter_block`,
//! `MPI_Reduce_scatter`, `MPI_Scan`, `MPI_Exscan` — and `MPI_Reduce_local`.
//!
//! Each checks its arguments (count, datatype, operation valid for the datatype, root,
//! buffers, `MPI_IN_PLACE` only where allowed, no aliasing), then runs the schedule the
//! decision table picks.

use super::check::{
    buffer, bytes, counts, datatype, drive_how, fast_plan, in_place_not_allowed, launch, nonneg,
    not_aliased, root, team_or_inter, Input, Key, Plan,
};
use super::inter;
use super::nbc::How;
use super::op::{data_range, Op, OpId, Reducer};
use super::shm::{self, Data};
use super::stage::View;
use crate::comm::CommId;
use crate::device::ReqId;
use crate::error::{err, ErrorClass, Result};
use crate::runtime::{self, Runtime};
use crate::types::{TypeId, TypeInfo};
use oxmpi_coll::ops::reduce_local as kernel_reduce_local;
use oxmpi_coll::schedule::{Elems, Spec};

/// The reduction's operation and element description, after the checks.
struct Red {
    reducer: Reducer,
    commutative: bool,
    elem: usize,
}

fn operation(rt: &Runtime, op: OpId, ty: TypeId, info: &TypeInfo) -> Result<Red> {
    let o = rt.coll.ops.get(op)?;
    Ok(Red {
        reducer: Reducer::new(&o, ty, info)?,
        commutative: o.commutative(),
        elem: info.size,
    })
}

/// The user buffer a fast-path reduction reads: the send buffer, or the receive buffer
/// in place.
fn data(send: Input<usize>, recv: usize, n: usize, info: &TypeInfo) -> Data {
    let addr = match send {
        Input::Data(s) => s,
        Input::InPlace => recv,
    };
    Data::new(addr, n, info)
}

/// Elements of a reduction buffer (a datatype of size 0 makes an empty reduction).
fn elems(n: usize, elem: usize) -> Elems {
    if elem == 0 {
        Elems::new(0, 0)
    } else {
        Elems::new(n, elem)
    }
}

/// Checks `sendbuf` (unless in place) against `recvbuf` for a reduction of `n` elements
/// in each; returns the send view.
///
/// # Safety
/// A non-in-place send buffer must hold `n` elements.
unsafe fn send_view(
    send: Input<usize>,
    recv: Option<usize>,
    n: usize,
    info: &TypeInfo,
) -> Result<View> {
    match send {
        Input::InPlace => Ok(View::unused()),
        Input::Data(s) => {
            buffer(s, n, info, "sendbuf")?;
            if let Some(r) = recv {
                not_aliased(s, info, n, r, info, n)?;
            }
            // SAFETY: forwarded contract.
            Ok(unsafe { View::single(s, info, n, &[(0, n)], &[]) })
        }
    }
}

/// `MPI_Reduce`. `recv` matters only at the root; `MPI_IN_PLACE` only at the root.
/// (The blocking call; [`reduce_how`] makes all three kinds.)
///
/// # Safety
/// As for [`reduce_how`].
pub unsafe fn reduce(
    send: Input<usize>,
    recv: usize,
    count: i64,
    ty: TypeId,
    op: OpId,
    root_rank: i32,
    comm: CommId,
) -> Result<()> {
    // SAFETY: forwarded contract.
    unsafe { reduce_how(send, recv, count, ty, op, root_rank, comm, How::Block) }.map(drop)
}

/// `MPI_Reduce`. `recv` matters only at the root; `MPI_IN_PLACE` only at the root.
///
/// # Safety
/// The buffers must hold `count` elements of `ty` where significant.
#[allow(clippy::too_many_arguments)]
pub unsafe fn reduce_how(
    send: Input<usize>,
    recv: usize,
    count: i64,
    ty: TypeId,
    op: OpId,
    root_rank: i32,
    comm: CommId,
    how: How,
) -> Result<Option<ReqId>> {
    if super::impi::chapter4(comm, how, |s| {
        super::impi::reduce(s, send, recv, count, ty, op, root_rank)
    })? {
        return Ok(None);
    }
    let key = usize::try_from(root_rank).ok().and_then(|r| {
        Key::predefined(
            shm::Kind::Reduce { root: r },
            comm,
            send,
            recv,
            count,
            ty,
            op,
        )
    });
    let ran = drive_how(how, key, |rt| {
        let Some(t) = team_or_inter(rt, comm)? else {
            return Ok(Plan::Inter);
        };
        let n = nonneg(count, "count")?;
        let info = datatype(rt, ty, "datatype")?;
        let red = operation(rt, op, ty, info)?;
        let root = root(root_rank, t.size)?;
        let at_root = t.rank == root;
        if send.is_in_place() && !at_root {
            return Err(in_place_not_allowed(
                "sendbuf of a rank other than the root",
            ));
        }
        if let Input::Data(s) = send {
            buffer(s, n, info, "sendbuf")?;
            if at_root {
                not_aliased(s, info, n, recv, info, n)?;
            }
        }
        if at_root {
            buffer(recv, n, info, "recvbuf")?;
        }
        let fast = fast_plan(
            rt,
            how,
            &t,
            bytes(n, info)?,
            info.size,
            shm::Kind::Reduce { root },
            key,
            |comm| shm::Call {
                comm,
                kind: shm::Kind::Reduce { root },
                input: Some(data(send, recv, n, info)),
                output: at_root.then(|| data(Input::Data(recv), recv, n, info)),
                reducer: red.reducer.clone(),
                bytes: n * info.size,
                elem: info.size,
            },
        );
        if let Some(p) = fast {
            return Ok(p);
        }
        // SAFETY: per the function's contract.
        let sv = unsafe { send_view(send, at_root.then_some(recv), n, info)? };
        let rv = if at_root {
            buffer(recv, n, info, "recvbuf")?;
            let pre: &[(usize, usize)] = if send.is_in_place() { &[(0, n)] } else { &[] };
            // SAFETY: per the function's contract.
            unsafe { View::single(recv, info, n, pre, &[(0, n)]) }
        } else {
            View::unused()
        };
        let spec = Spec::Reduce {
            root: root as u32,
            elems: elems(n, red.elem),
            commutative: red.commutative,
            in_place: send.is_in_place(),
        };
        let exec = launch(rt, &t, &spec, &sv, &rv, red.reducer)?;
        Ok(Plan::sched(exec, sv, rv))
    })?;
    // SAFETY: forwarded contract.
    ran.or_inter(|| unsafe { inter::reduce(send, recv, count, ty, op, root_rank, comm, how) })
}

/// Which of the like-shaped reductions [`reduce_all`] runs.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Allreduce,
    Scan,
    Exscan,
}

#[allow(clippy::too_many_arguments)]
unsafe fn reduce_all(
    kind: Kind,
    send: Input<usize>,
    recv: usize,
    count: i64,
    ty: TypeId,
    op: OpId,
    comm: CommId,
    how: How,
) -> Result<Option<ReqId>> {
    let fast_kind = match kind {
        Kind::Allreduce => shm::Kind::Allreduce,
        Kind::Scan => shm::Kind::Scan,
        Kind::Exscan => shm::Kind::Exscan,
    };
    let key = Key::predefined(fast_kind, comm, send, recv, count, ty, op);
    let ran = drive_how(how, key, |rt| {
        let Some(t) = team_or_inter(rt, comm)? else {
            return Ok(Plan::Inter);
        };
        let n = nonneg(count, "count")?;
        let info = datatype(rt, ty, "datatype")?;
        let red = operation(rt, op, ty, info)?;
        buffer(recv, n, info, "recvbuf")?;
        if let Input::Data(s) = send {
            buffer(s, n, info, "sendbuf")?;
            not_aliased(s, info, n, recv, info, n)?;
        }
        let fast = fast_plan(
            rt,
            how,
            &t,
            bytes(n, info)?,
            info.size,
            fast_kind,
            key,
            |comm| shm::Call {
                comm,
                kind: fast_kind,
                input: Some(data(send, recv, n, info)),
                output: (kind != Kind::Exscan || t.rank > 0)
                    .then(|| data(Input::Data(recv), recv, n, info)),
                reducer: red.reducer.clone(),
                bytes: n * info.size,
                elem: info.size,
            },
        );
        if let Some(p) = fast {
            return Ok(p);
        }
        // SAFETY: per the caller's contract.
        let sv = unsafe { send_view(send, Some(recv), n, info)? };
        let in_place = send.is_in_place();
        let pre: &[(usize, usize)] = if in_place { &[(0, n)] } else { &[] };
        // Exscan leaves rank 0's receive buffer undefined: never write it there.
        let post: &[(usize, usize)] = if kind == Kind::Exscan && t.rank == 0 {
            &[]
        } else {
            &[(0, n)]
        };
        // SAFETY: per the caller's contract.
        let rv = unsafe { View::single(recv, info, n, pre, post) };
        let (e, commutative) = (elems(n, red.elem), red.commutative);
        let spec = match kind {
            Kind::Allreduce => Spec::Allreduce {
                elems: e,
                commutative,
                in_place,
            },
            Kind::Scan => Spec::Scan {
                elems: e,
                commutative,
                in_place,
            },
            Kind::Exscan => Spec::Exscan {
                elems: e,
                commutative,
                in_place,
            },
        };
        let exec = launch(rt, &t, &spec, &sv, &rv, red.reducer)?;
        Ok(Plan::sched(exec, sv, rv))
    })?;
    ran.or_inter(|| match kind {
        // SAFETY: forwarded contract.
        Kind::Allreduce => unsafe { inter::allreduce(send, recv, count, ty, op, comm, how) },
        _ => err(
            ErrorClass::Comm,
            "MPI_Scan and MPI_Exscan are not defined on intercommunicators",
        ),
    })
}

/// `MPI_Allreduce`.
/// (The blocking call; [`allreduce_how`] makes all three kinds.)
///
/// # Safety
/// As for [`allreduce_how`].
pub unsafe fn allreduce(
    send: Input<usize>,
    recv: usize,
    count: i64,
    ty: TypeId,
    op: OpId,
    comm: CommId,
) -> Result<()> {
    // SAFETY: forwarded contract.
    unsafe { allreduce_how(send, recv, count, ty, op, comm, How::Block) }.map(drop)
}

/// `MPI_Allreduce`.
///
/// # Safety
/// Both buffers (the receive buffer only, in place) must hold `count` elements of `ty`.
pub unsafe fn allreduce_how(
    send: Input<usize>,
    recv: usize,
    count: i64,
    ty: TypeId,
    op: OpId,
    comm: CommId,
    how: How,
) -> Result<Option<ReqId>> {
    if super::impi::chapter4(comm, how, |s| {
        super::impi::allreduce(s, send, recv, count, ty, op)
    })? {
        return Ok(None);
    }
    // SAFETY: forwarded contract.
    unsafe { reduce_all(Kind::Allreduce, send, recv, count, ty, op, comm, how) }
}

/// `MPI_Scan`: rank `i` receives the reduction of ranks `0..=i`.
/// (The blocking call; [`scan_how`] makes all three kinds.)
///
/// # Safety
/// As for [`scan_how`].
pub unsafe fn scan(
    send: Input<usize>,
    recv: usize,
    count: i64,
    ty: TypeId,
    op: OpId,
    comm: CommId,
) -> Result<()> {
    // SAFETY: forwarded contract.
    unsafe { scan_how(send, recv, count, ty, op, comm, How::Block) }.map(drop)
}

/// `MPI_Scan`: rank `i` receives the reduction of ranks `0..=i`.
///
/// # Safety
/// As for [`allreduce`].
pub unsafe fn scan_how(
    send: Input<usize>,
    recv: usize,
    count: i64,
    ty: TypeId,
    op: OpId,
    comm: CommId,
    how: How,
) -> Result<Option<ReqId>> {
    if super::impi::chapter4(comm, how, |s| {
        super::impi::scan(s, send, recv, count, ty, op)
    })? {
        return Ok(None);
    }
    // SAFETY: forwarded contract.
    unsafe { reduce_all(Kind::Scan, send, recv, count, ty, op, comm, how) }
}

/// `MPI_Exscan`: rank `i > 0` receives the reduction of ranks `0..i`; rank 0's receive
/// (The blocking call; [`exscan_how`] makes all three kinds.)
///
/// # Safety
/// As for [`exscan_how`].
pub unsafe fn exscan(
    send: Input<usize>,
    recv: usize,
    count: i64,
    ty: TypeId,
    op: OpId,
    comm: CommId,
) -> Result<()> {
    // SAFETY: forwarded contract.
    unsafe { exscan_how(send, recv, count, ty, op, comm, How::Block) }.map(drop)
}

/// `MPI_Exscan`: rank `i > 0` receives the reduction of ranks `0..i`; rank 0's receive
/// buffer is left alone.
///
/// # Safety
/// As for [`allreduce`].
pub unsafe fn exscan_how(
    send: Input<usize>,
    recv: usize,
    count: i64,
    ty: TypeId,
    op: OpId,
    comm: CommId,
    how: How,
) -> Result<Option<ReqId>> {
    // SAFETY: forwarded contract.
    unsafe { reduce_all(Kind::Exscan, send, recv, count, ty, op, comm, how) }
}

/// `MPI_Reduce_scatter_block`: the input has `size * recvcount` elements; rank `i`
/// (The blocking call; [`reduce_scatter_block_how`] makes all three kinds.)
///
/// # Safety
/// As for [`reduce_scatter_block_how`].
pub unsafe fn reduce_scatter_block(
    send: Input<usize>,
    recv: usize,
    recvcount: i64,
    ty: TypeId,
    op: OpId,
    comm: CommId,
) -> Result<()> {
    // SAFETY: forwarded contract.
    unsafe { reduce_scatter_block_how(send, recv, recvcount, ty, op, comm, How::Block) }.map(drop)
}

/// `MPI_Reduce_scatter_block`: the input has `size * recvcount` elements; rank `i`
/// receives block `i` of the reduction.
///
/// # Safety
/// The send buffer (the receive buffer, in place) must hold `size * recvcount`
/// elements, the receive buffer `recvcount`.
pub unsafe fn reduce_scatter_block_how(
    send: Input<usize>,
    recv: usize,
    recvcount: i64,
    ty: TypeId,
    op: OpId,
    comm: CommId,
    how: How,
) -> Result<Option<ReqId>> {
    let ran = drive_how(how, None, |rt| {
        let Some(t) = team_or_inter(rt, comm)? else {
            return Ok(Plan::Inter);
        };
        let rc = nonneg(recvcount, "recvcount")?;
        let total = rc.checked_mul(t.size).ok_or_else(|| {
            crate::Error::new(
                ErrorClass::Count,
                format!("recvcount {rc} times {} ranks overflows", t.size),
            )
        })?;
        let info = datatype(rt, ty, "datatype")?;
        let red = operation(rt, op, ty, info)?;
        let in_place = send.is_in_place();
        let held = if in_place { total } else { rc };
        buffer(recv, held, info, "recvbuf")?;
        let sv = match send {
            Input::InPlace => View::unused(),
            Input::Data(s) => {
                buffer(s, total, info, "sendbuf")?;
                not_aliased(s, info, total, recv, info, rc)?;
                // SAFETY: per the function's contract.
                unsafe { View::single(s, info, total, &[(0, total)], &[]) }
            }
        };
        let pre: &[(usize, usize)] = if in_place { &[(0, total)] } else { &[] };
        // SAFETY: per the function's contract.
        let rv = unsafe { View::single(recv, info, held, pre, &[(0, rc)]) };
        let spec = Spec::ReduceScatterBlock {
            elems: elems(rc, red.elem),
            commutative: red.commutative,
            in_place,
        };
        let exec = launch(rt, &t, &spec, &sv, &rv, red.reducer)?;
        Ok(Plan::sched(exec, sv, rv))
    })?;
    // SAFETY: forwarded contract.
    ran.or_inter(|| unsafe {
        inter::reduce_scatter(send, recv, recvcount, None, ty, op, comm, how)
    })
}

/// `MPI_Reduce_scatter`: the input has `sum(recvcounts)` elements; rank `i` receives
/// (The blocking call; [`reduce_scatter_how`] makes all three kinds.)
///
/// # Safety
/// As for [`reduce_scatter_how`].
pub unsafe fn reduce_scatter(
    send: Input<usize>,
    recv: usize,
    recvcounts: &[i64],
    ty: TypeId,
    op: OpId,
    comm: CommId,
) -> Result<()> {
    // SAFETY: forwarded contract.
    unsafe { reduce_scatter_how(send, recv, recvcounts, ty, op, comm, How::Block) }.map(drop)
}

/// `MPI_Reduce_scatter`: the input has `sum(recvcounts)` elements; rank `i` receives
/// its `recvcounts[i]` elements of the reduction.
///
/// # Safety
/// The send buffer (the receive buffer, in place) must hold `sum(recvcounts)`
/// elements, the receive buffer `recvcounts[rank]`.
pub unsafe fn reduce_scatter_how(
    send: Input<usize>,
    recv: usize,
    recvcounts: &[i64],
    ty: TypeId,
    op: OpId,
    comm: CommId,
    how: How,
) -> Result<Option<ReqId>> {
    if super::impi::chapter4(comm, how, |s| {
        super::impi::reduce_scatter(s, send, recv, recvcounts, ty, op)
    })? {
        return Ok(None);
    }
    let ran = drive_how(how, None, |rt| {
        let Some(t) = team_or_inter(rt, comm)? else {
            return Ok(Plan::Inter);
        };
        let cs = counts(recvcounts, t.size, "recvcounts")?;
        let total = cs
            .iter()
            .try_fold(0usize, |a, &c| a.checked_add(c))
            .ok_or_else(|| {
                crate::Error::new(ErrorClass::Count, "the sum of recvcounts overflows")
            })?;
        let mine = cs[t.rank];
        let info = datatype(rt, ty, "datatype")?;
        let red = operation(rt, op, ty, info)?;
        let in_place = send.is_in_place();
        let held = if in_place { total } else { mine };
        buffer(recv, held, info, "recvbuf")?;
        let sv = match send {
            Input::InPlace => View::unused(),
            Input::Data(s) => {
                buffer(s, total, info, "sendbuf")?;
                not_aliased(s, info, total, recv, info, mine)?;
                // SAFETY: per the function's contract.
                unsafe { View::single(s, info, total, &[(0, total)], &[]) }
            }
        };
        let pre: &[(usize, usize)] = if in_place { &[(0, total)] } else { &[] };
        // SAFETY: per the function's contract.
        let rv = unsafe { View::single(recv, info, held, pre, &[(0, mine)]) };
        let elem = red.elem;
        let counts_for_spec: Vec<usize> = if elem == 0 { vec![0; t.size] } else { cs };
        let spec = Spec::ReduceScatter {
            counts: &counts_for_spec,
            elem_size: elem,
            commutative: red.commutative,
            in_place,
        };
        let exec = launch(rt, &t, &spec, &sv, &rv, red.reducer)?;
        Ok(Plan::sched(exec, sv, rv))
    })?;
    // SAFETY: forwarded contract.
    ran.or_inter(|| unsafe {
        inter::reduce_scatter(send, recv, 0, Some(recvcounts), ty, op, comm, how)
    })
}

/// `MPI_Reduce_local`: `inout[k] = input[k] op inout[k]` on user memory, no
/// communication. A user operation is called without the runtime lock, on the user's
/// buffers directly.
///
/// # Safety
/// Both buffers must hold `count` elements of `ty`.
pub unsafe fn reduce_local(
    input: usize,
    inout: usize,
    count: i64,
    ty: TypeId,
    op: OpId,
) -> Result<()> {
    let (o, info, n) = runtime::with(|rt| {
        let n = nonneg(count, "count")?;
        let info = datatype(rt, ty, "datatype")?;
        let o = rt.coll.ops.get(op)?;
        // Validates the operation against the type.
        Reducer::new(&o, ty, info)?;
        buffer(input, n, info, "inbuf")?;
        buffer(inout, n, info, "inoutbuf")?;
        Ok((o, info.clone(), n))
    })?;
    let (lo, hi) = data_range(&info, n);
    if lo == hi {
        return Ok(());
    }
    let (i0, o0) = (
        (input as isize).wrapping_add(lo),
        (inout as isize).wrapping_add(lo),
    );
    let len = (hi - lo) as usize;
    if i0 < o0.wrapping_add(len as isize) && o0 < i0.wrapping_add(len as isize) {
        return err(
            ErrorClass::Buffer,
            format!("inbuf {input:#x} and inoutbuf {inout:#x} overlap"),
        );
    }
    match o {
        Op::User(u) => {
            (u.func)(input as *const u8, inout as *mut u8, n, ty);
            Ok(())
        }
        Op::Predefined(p) => match info.predefined {
            Some(pt) => {
                // SAFETY: both buffers hold `count` elements, whose data bytes are
                // `lo..hi` from their base (contract); they do not overlap (checked).
                let (a, b) = unsafe {
                    (
                        std::slice::from_raw_parts(i0 as *const u8, len),
                        std::slice::from_raw_parts_mut(o0 as *mut u8, len),
                    )
                };
                kernel_reduce_local(p, pt, a, b, n)
                    .map_err(|e| crate::Error::new(ErrorClass::Op, e.to_string()))
            }
            None => {
                // A derived type of one basic type: reduce the packed elements.
                let bytes = n * info.size;
                let (mut a, mut b) = (vec![0u8; bytes], vec![0u8; bytes]);
                // SAFETY: both buffers hold `count` elements (contract).
                unsafe {
                    info.pack(input as *const u8, n, &mut a);
                    info.pack(inout as *const u8, n, &mut b);
                }
                Reducer::new(&Op::Predefined(p), ty, &info)?.apply(&a, &mut b)?;
                // SAFETY: as above.
                unsafe { info.unpack(inout as *mut u8, &b) };
                Ok(())
            }
        },
    }
}
