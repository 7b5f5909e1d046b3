//! Collective entry points: `MPI_Barrier`, `MPI_Bcast`, the gather/scatter/allgather/
//! alltoall families (with their v and w variants) and the reductions.
//!
//! `MPI_IN_PLACE` becomes [`Input::InPlace`]. Arguments the standard declares
//! insignificant on this rank (a non-root's receive side of a gather, say) are never
//! converted or read, since programs commonly pass `NULL` or `MPI_DATATYPE_NULL` there.

use crate::convert::{self, buf, comm, datatype};
use crate::handles::{MPI_Comm, MPI_Datatype, MPI_Op, MPI_IN_PLACE};
use crate::mpi_fn;
use crate::op::op;
use oxmpi_core::coll::{self, Input, VBuf, WBuf};
use oxmpi_core::comm::CommId;
use oxmpi_core::p2p::Buf;
use oxmpi_core::types::TypeId;
use oxmpi_core::{Error, ErrorClass, Result};
use std::ffi::c_void;
use std::os::raw::c_int;

type Ptr = *const c_void;
type MutPtr = *mut c_void;

fn in_place(p: Ptr) -> bool {
    std::ptr::eq(p, MPI_IN_PLACE)
}

/// The send-buffer argument of a reduction.
fn input(p: Ptr) -> Input<usize> {
    if in_place(p) {
        Input::InPlace
    } else {
        Input::Data(p as usize)
    }
}

/// A (buffer, count, datatype) send argument, or `MPI_IN_PLACE`.
fn input_buf(p: Ptr, n: c_int, dt: MPI_Datatype) -> Result<Input<Buf>> {
    if in_place(p) {
        Ok(Input::InPlace)
    } else {
        Ok(Input::Data(buf(p, n, dt)?))
    }
}

/// A placeholder for an argument this rank does not use.
fn unused() -> Buf {
    Buf {
        addr: 0,
        count: 0,
        ty: oxmpi_datatype::Predefined::Byte as TypeId,
    }
}

/// Whether this process is the root of a rooted collective (its root-only arguments
/// are significant), and whether it takes part at all (not `MPI_PROC_NULL` in the root
/// group of an intercommunicator).
fn rooted(c: CommId, root: c_int) -> Result<(coll::Shape, bool, bool)> {
    let s = coll::shape(c)?;
    let idle = s.inter && root == oxmpi_core::PROC_NULL;
    Ok((s, s.is_root(root), !idle))
}

/// `n` entries of a C array argument.
///
/// # Safety
/// A non-null `p` must point to at least `n` integers.
unsafe fn ints<'a>(p: *const c_int, n: usize, what: &str) -> Result<&'a [c_int]> {
    if n == 0 {
        return Ok(&[]);
    }
    if p.is_null() {
        return Err(Error::new(ErrorClass::Arg, format!("{what} is NULL")));
    }
    // SAFETY: `p` is non-null (checked) and, per this function's contract, points to `n`
    // initialised, aligned ints that the caller does not write during the MPI call.
    Ok(unsafe { std::slice::from_raw_parts(p, n) })
}

/// `n` datatype handles of an `MPI_Alltoallw` argument.
///
/// # Safety
/// As for [`ints`].
unsafe fn types(p: *const MPI_Datatype, n: usize, what: &str) -> Result<Vec<TypeId>> {
    // SAFETY: MPI_Datatype is a c_int, and this function's contract is that of `ints`.
    let hs = unsafe { ints(p, n, what)? };
    hs.iter()
        .enumerate()
        .map(|(i, &h)| {
            datatype(h).map_err(|e| Error::new(e.class, format!("{what}[{i}]: {}", e.message)))
        })
        .collect()
}

/// Entries of the per-peer array arguments (the remote group's size on an
/// intercommunicator).
fn size(c: CommId) -> Result<usize> {
    Ok(coll::shape(c)?.peers)
}

mpi_fn! { MPI_Barrier / PMPI_Barrier (c: MPI_Comm) target(convert::target(c)) {
    coll::barrier(comm(c)?)
}}

mpi_fn! { MPI_Bcast / PMPI_Bcast (b: MutPtr, n: c_int, dt: MPI_Datatype, root: c_int, c: MPI_Comm) target(convert::target(c)) {
    let id = comm(c)?;
    // MPI_PROC_NULL in an intercommunicator's root group: the buffer is insignificant.
    let b = if root == oxmpi_core::PROC_NULL { unused() } else { buf(b, n, dt)? };
    // SAFETY: `b` holds `n` elements of `dt` (MPI_Bcast's contract); `buf` checked the datatype
    // and MPI_IN_PLACE. With root MPI_PROC_NULL it is `unused()` (count 0), never touched.
    unsafe { coll::bcast(b, root, id) }
}}

mpi_fn! { MPI_Gather / PMPI_Gather (sb: Ptr, sn: c_int, st: MPI_Datatype, rb: MutPtr, rn: c_int, rt: MPI_Datatype, root: c_int, c: MPI_Comm) target(convert::target(c)) {
    let id = comm(c)?;
    let (shape, at_root, active) = rooted(id, root)?;
    // The root of an intercommunicator sends nothing: its send side is insignificant.
    let send = if at_root && shape.inter { Input::Data(unused()) } else if at_root { input_buf(sb, sn, st)? } else if active { Input::Data(buf(sb, sn, st)?) } else { Input::Data(unused()) };
    let recv = if at_root { buf(rb, rn, rt)? } else { unused() };
    // SAFETY: the send buffer holds `sn` elements of `st` and the root's receive buffer
    // `size * rn` of `rt` (MPI_Gather's contract); arguments not significant on this rank are
    // `unused()` (count 0) and never touched.
    unsafe { coll::gather(send, recv, root, id) }
}}

mpi_fn! { MPI_Gatherv / PMPI_Gatherv (sb: Ptr, sn: c_int, st: MPI_Datatype, rb: MutPtr, rcounts: *const c_int, displs: *const c_int, rt: MPI_Datatype, root: c_int, c: MPI_Comm) target(convert::target(c)) {
    let id = comm(c)?;
    let (shape, at_root, active) = rooted(id, root)?;
    let send = if at_root && shape.inter { Input::Data(unused()) } else if at_root { input_buf(sb, sn, st)? } else if active { Input::Data(buf(sb, sn, st)?) } else { Input::Data(unused()) };
    let n = if at_root { shape.peers } else { 0 };
    if at_root {
        convert::not_in_place(rb, "recvbuf")?;
    }
    let recv = VBuf {
        addr: rb as usize,
        // SAFETY: at the root this is a C array of one entry per process (MPI contract);
        // elsewhere `n` is 0 and `ints` reads nothing.
        counts: unsafe { ints(rcounts, n, "recvcounts")? },
        // SAFETY: at the root this is a C array of one entry per process (MPI contract);
        // elsewhere `n` is 0 and `ints` reads nothing.
        displs: unsafe { ints(displs, n, "displs")? },
        ty: if at_root { datatype(rt)? } else { unused().ty },
    };
    // SAFETY: the send buffer holds `sn` elements of `st`, and the root's receive buffer every
    // block that recvcounts and displs describe (MPI_Gatherv's contract); elsewhere the receive
    // side has no blocks and is not touched.
    unsafe { coll::gatherv(send, recv, root, id) }
}}

mpi_fn! { MPI_Scatter / PMPI_Scatter (sb: Ptr, sn: c_int, st: MPI_Datatype, rb: MutPtr, rn: c_int, rt: MPI_Datatype, root: c_int, c: MPI_Comm) target(convert::target(c)) {
    let id = comm(c)?;
    let (shape, at_root, active) = rooted(id, root)?;
    let send = if at_root { buf(sb, sn, st)? } else { unused() };
    // The root of an intercommunicator receives nothing: its receive side is insignificant.
    let recv = if at_root && shape.inter { Input::Data(unused()) } else if at_root { input_buf(rb, rn, rt)? } else if active { Input::Data(buf(rb, rn, rt)?) } else { Input::Data(unused()) };
    // SAFETY: the root's send buffer holds `size * sn` elements of `st` and each receive buffer
    // `rn` of `rt` (MPI_Scatter's contract); arguments not significant on this rank are
    // `unused()` (count 0) and never touched.
    unsafe { coll::scatter(send, recv, root, id) }
}}

mpi_fn! { MPI_Scatterv / PMPI_Scatterv (sb: Ptr, scounts: *const c_int, displs: *const c_int, st: MPI_Datatype, rb: MutPtr, rn: c_int, rt: MPI_Datatype, root: c_int, c: MPI_Comm) target(convert::target(c)) {
    let id = comm(c)?;
    let (shape, at_root, active) = rooted(id, root)?;
    let n = if at_root { shape.peers } else { 0 };
    if at_root {
        convert::not_in_place(sb, "sendbuf")?;
    }
    let send = VBuf {
        addr: sb as usize,
        // SAFETY: at the root this is a C array of one entry per process (MPI contract);
        // elsewhere `n` is 0 and `ints` reads nothing.
        counts: unsafe { ints(scounts, n, "sendcounts")? },
        // SAFETY: at the root this is a C array of one entry per process (MPI contract);
        // elsewhere `n` is 0 and `ints` reads nothing.
        displs: unsafe { ints(displs, n, "displs")? },
        ty: if at_root { datatype(st)? } else { unused().ty },
    };
    let recv = if at_root && shape.inter { Input::Data(unused()) } else if at_root { input_buf(rb, rn, rt)? } else if active { Input::Data(buf(rb, rn, rt)?) } else { Input::Data(unused()) };
    // SAFETY: the root's send buffer holds every block that sendcounts and displs describe, and
    // each receive buffer `rn` elements of `rt` (MPI_Scatterv's contract).
    unsafe { coll::scatterv(send, recv, root, id) }
}}

mpi_fn! { MPI_Allgather / PMPI_Allgather (sb: Ptr, sn: c_int, st: MPI_Datatype, rb: MutPtr, rn: c_int, rt: MPI_Datatype, c: MPI_Comm) target(convert::target(c)) {
    // SAFETY: the send buffer holds `sn` elements of `st` (unless MPI_IN_PLACE) and the receive
    // buffer `size * rn` of `rt` (MPI_Allgather's contract); `buf` checked the handles.
    unsafe { coll::allgather(input_buf(sb, sn, st)?, buf(rb, rn, rt)?, comm(c)?) }
}}

mpi_fn! { MPI_Allgatherv / PMPI_Allgatherv (sb: Ptr, sn: c_int, st: MPI_Datatype, rb: MutPtr, rcounts: *const c_int, displs: *const c_int, rt: MPI_Datatype, c: MPI_Comm) target(convert::target(c)) {
    let id = comm(c)?;
    let n = size(id)?;
    convert::not_in_place(rb, "recvbuf")?;
    let recv = VBuf {
        addr: rb as usize,
        // SAFETY: a C array of one entry per process of the (remote) group, `n` of them (MPI
        // contract); `ints` refuses NULL.
        counts: unsafe { ints(rcounts, n, "recvcounts")? },
        // SAFETY: a C array of one entry per process of the (remote) group, `n` of them (MPI
        // contract); `ints` refuses NULL.
        displs: unsafe { ints(displs, n, "displs")? },
        ty: datatype(rt)?,
    };
    // SAFETY: the send buffer holds `sn` elements of `st` (unless MPI_IN_PLACE) and the receive
    // buffer every block that recvcounts and displs describe (MPI_Allgatherv's contract).
    unsafe { coll::allgatherv(input_buf(sb, sn, st)?, recv, id) }
}}

mpi_fn! { MPI_Alltoall / PMPI_Alltoall (sb: Ptr, sn: c_int, st: MPI_Datatype, rb: MutPtr, rn: c_int, rt: MPI_Datatype, c: MPI_Comm) target(convert::target(c)) {
    // SAFETY: both buffers hold one block per peer, `sn` elements of `st` and `rn` of `rt`
    // (MPI_Alltoall's contract; only the receive buffer with MPI_IN_PLACE).
    unsafe { coll::alltoall(input_buf(sb, sn, st)?, buf(rb, rn, rt)?, comm(c)?) }
}}

mpi_fn! { MPI_Alltoallv / PMPI_Alltoallv (sb: Ptr, scounts: *const c_int, sdispls: *const c_int, st: MPI_Datatype, rb: MutPtr, rcounts: *const c_int, rdispls: *const c_int, rt: MPI_Datatype, c: MPI_Comm) target(convert::target(c)) {
    let id = comm(c)?;
    let n = size(id)?;
    convert::not_in_place(rb, "recvbuf")?;
    let send = if in_place(sb) {
        Input::InPlace
    } else {
        Input::Data(VBuf {
            addr: sb as usize,
            // SAFETY: a C array of one entry per process of the (remote) group, `n` of them
            // (MPI contract); `ints` refuses NULL. Read only when the send side is not
            // MPI_IN_PLACE.
            counts: unsafe { ints(scounts, n, "sendcounts")? },
            // SAFETY: a C array of one entry per process of the (remote) group, `n` of them
            // (MPI contract); `ints` refuses NULL.
            displs: unsafe { ints(sdispls, n, "sdispls")? },
            ty: datatype(st)?,
        })
    };
    let recv = VBuf {
        addr: rb as usize,
        // SAFETY: a C array of one entry per process of the (remote) group, `n` of them (MPI
        // contract); `ints` refuses NULL.
        counts: unsafe { ints(rcounts, n, "recvcounts")? },
        // SAFETY: a C array of one entry per process of the (remote) group, `n` of them (MPI
        // contract); `ints` refuses NULL.
        displs: unsafe { ints(rdispls, n, "rdispls")? },
        ty: datatype(rt)?,
    };
    // SAFETY: each buffer holds the blocks its counts and displacements describe
    // (MPI_Alltoallv's contract); the count and displacement slices outlive the call.
    unsafe { coll::alltoallv(send, recv, id) }
}}

mpi_fn! { MPI_Alltoallw / PMPI_Alltoallw (sb: Ptr, scounts: *const c_int, sdispls: *const c_int, st: *const MPI_Datatype, rb: MutPtr, rcounts: *const c_int, rdispls: *const c_int, rt: *const MPI_Datatype, c: MPI_Comm) target(convert::target(c)) {
    let id = comm(c)?;
    let n = size(id)?;
    convert::not_in_place(rb, "recvbuf")?;
    // SAFETY: sendtypes is a C array of one handle per peer, `n` of them (MPI contract), read
    // only when the send side is not MPI_IN_PLACE.
    let stypes = if in_place(sb) { Vec::new() } else { unsafe { types(st, n, "sendtypes")? } };
    // SAFETY: a C array of one entry per process of the (remote) group, `n` of them (MPI
    // contract); `ints` refuses NULL.
    let rtypes = unsafe { types(rt, n, "recvtypes")? };
    let send = if in_place(sb) {
        Input::InPlace
    } else {
        Input::Data(WBuf {
            addr: sb as usize,
            // SAFETY: a C array of one entry per process of the (remote) group, `n` of them
            // (MPI contract); `ints` refuses NULL.
            counts: unsafe { ints(scounts, n, "sendcounts")? },
            // SAFETY: a C array of one entry per process of the (remote) group, `n` of them
            // (MPI contract); `ints` refuses NULL.
            displs: unsafe { ints(sdispls, n, "sdispls")? },
            types: &stypes,
        })
    };
    let recv = WBuf {
        addr: rb as usize,
        // SAFETY: a C array of one entry per process of the (remote) group, `n` of them (MPI
        // contract); `ints` refuses NULL.
        counts: unsafe { ints(rcounts, n, "recvcounts")? },
        // SAFETY: a C array of one entry per process of the (remote) group, `n` of them (MPI
        // contract); `ints` refuses NULL.
        displs: unsafe { ints(rdispls, n, "rdispls")? },
        types: &rtypes,
    };
    // SAFETY: each buffer holds the blocks its counts, byte displacements and types describe
    // (MPI_Alltoallw's contract); the arrays and type lists borrowed above outlive the call.
    unsafe { coll::alltoallw(send, recv, id) }
}}

mpi_fn! { MPI_Reduce / PMPI_Reduce (sb: Ptr, rb: MutPtr, n: c_int, dt: MPI_Datatype, o: MPI_Op, root: c_int, c: MPI_Comm) target(convert::target(c)) {
    let id = comm(c)?;
    if root == oxmpi_core::PROC_NULL && !rooted(id, root)?.2 {
        // MPI_PROC_NULL in an intercommunicator's root group: no other argument is
        // significant (mpi4py passes count 0, MPI_BYTE and MPI_OP_NULL there).
        let placeholder = unused();
        // SAFETY: no buffer is passed (null addresses, count 0): a member idle in this
        // reduction reads and writes no memory.
        return unsafe { coll::reduce(Input::Data(0), 0, 0, placeholder.ty, 0, root, id) };
    }
    if in_place(rb) && rooted(id, root)?.1 {
        convert::not_in_place(rb, "recvbuf")?;
    }
    // SAFETY: the send buffer (unless MPI_IN_PLACE) holds `n` elements of `dt`, and so does the
    // root's receive buffer (MPI_Reduce's contract); `datatype` and `op` checked the handles.
    unsafe { coll::reduce(input(sb), rb as usize, n, datatype(dt)?, op(o)?, root, id) }
}}

mpi_fn! { MPI_Allreduce / PMPI_Allreduce (sb: Ptr, rb: MutPtr, n: c_int, dt: MPI_Datatype, o: MPI_Op, c: MPI_Comm) target(convert::target(c)) {
    convert::not_in_place(rb, "recvbuf")?;
    // SAFETY: the receive buffer, and the send buffer unless MPI_IN_PLACE, hold `n` elements of
    // `dt` (MPI_Allreduce's contract); recvbuf is not MPI_IN_PLACE (checked above).
    unsafe { coll::allreduce(input(sb), rb as usize, n, datatype(dt)?, op(o)?, comm(c)?) }
}}

mpi_fn! { MPI_Reduce_scatter_block / PMPI_Reduce_scatter_block (sb: Ptr, rb: MutPtr, n: c_int, dt: MPI_Datatype, o: MPI_Op, c: MPI_Comm) target(convert::target(c)) {
    convert::not_in_place(rb, "recvbuf")?;
    // SAFETY: the send buffer (the receive buffer, in place) holds `size * n` elements of `dt`
    // and the receive buffer `n` (MPI_Reduce_scatter_block's contract).
    unsafe { coll::reduce_scatter_block(input(sb), rb as usize, n, datatype(dt)?, op(o)?, comm(c)?) }
}}

mpi_fn! { MPI_Reduce_scatter / PMPI_Reduce_scatter (sb: Ptr, rb: MutPtr, counts: *const c_int, dt: MPI_Datatype, o: MPI_Op, c: MPI_Comm) target(convert::target(c)) {
    convert::not_in_place(rb, "recvbuf")?;
    let id = comm(c)?;
    let n = coll::shape(id)?.local;
    // SAFETY: recvcounts is a C array of one entry per process of the local group, `n` of them
    // (MPI contract); `ints` refuses NULL.
    let counts = unsafe { ints(counts, n, "recvcounts")? };
    // SAFETY: the send buffer (the receive buffer, in place) holds sum(recvcounts) elements of
    // `dt` and the receive buffer recvcounts[rank] (MPI_Reduce_scatter's contract).
    unsafe { coll::reduce_scatter(input(sb), rb as usize, counts, datatype(dt)?, op(o)?, id) }
}}

mpi_fn! { MPI_Scan / PMPI_Scan (sb: Ptr, rb: MutPtr, n: c_int, dt: MPI_Datatype, o: MPI_Op, c: MPI_Comm) target(convert::target(c)) {
    convert::not_in_place(rb, "recvbuf")?;
    // SAFETY: the receive buffer, and the send buffer unless MPI_IN_PLACE, hold `n` elements of
    // `dt` (MPI_Scan's contract); recvbuf is not MPI_IN_PLACE (checked above).
    unsafe { coll::scan(input(sb), rb as usize, n, datatype(dt)?, op(o)?, comm(c)?) }
}}

mpi_fn! { MPI_Exscan / PMPI_Exscan (sb: Ptr, rb: MutPtr, n: c_int, dt: MPI_Datatype, o: MPI_Op, c: MPI_Comm) target(convert::target(c)) {
    convert::not_in_place(rb, "recvbuf")?;
    // SAFETY: the receive buffer, and the send buffer unless MPI_IN_PLACE, hold `n` elements of
    // `dt` (MPI_Exscan's contract); recvbuf is not MPI_IN_PLACE (checked above).
    unsafe { coll::exscan(input(sb), rb as usize, n, datatype(dt)?, op(o)?, comm(c)?) }
}}
