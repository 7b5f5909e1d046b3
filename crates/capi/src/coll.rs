//! Collective entry points: `MPI_Barrier`, `MPI_Bcast`, the gather/scatter/allgather/
//! alltoall families (with their v and w variants) and the reductions.
//!
//! `MPI_IN_PLACE` becomes [`Input::InPlace`]. Arguments the standard declares
//! insignificant on this rank (a non-root's receive side of a gather, say) are never
//! converted or read, since programs commonly pass `NULL` or `MPI_DATATYPE_NULL` there.

use crate::coll_fns;
use crate::convert::{self, buf, comm, datatype};
use crate::count::{counts, CountWidth};
use crate::handles::{MPI_Comm, MPI_Datatype, MPI_Op, MPI_IN_PLACE};
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
fn input_buf(p: Ptr, n: impl CountWidth, dt: MPI_Datatype) -> Result<Input<Buf>> {
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

/// `n` entries of a C array of handles.
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

coll_fns! { MPI_Barrier / PMPI_Barrier, MPI_Ibarrier / PMPI_Ibarrier, MPI_Barrier_init / PMPI_Barrier_init (c: MPI_Comm) comm(c) how(how) {
    coll::barrier_how(comm(c)?, how)
}}

coll_fns! { MPI_Bcast / PMPI_Bcast, MPI_Ibcast / PMPI_Ibcast, MPI_Bcast_init / PMPI_Bcast_init ; MPI_Bcast_c / PMPI_Bcast_c, MPI_Ibcast_c / PMPI_Ibcast_c, MPI_Bcast_init_c / PMPI_Bcast_init_c (b: MutPtr, n: Count, dt: MPI_Datatype, root: c_int, c: MPI_Comm) comm(c) how(how) {
    let id = comm(c)?;
    // MPI_PROC_NULL in an intercommunicator's root group: the buffer is insignificant.
    let b = if root == oxmpi_core::PROC_NULL { unused() } else { buf(b, n, dt)? };
    // SAFETY: `b` holds `n` elements of `dt` (MPI_Bcast's contract); `buf` checked the datatype
    // and MPI_IN_PLACE. With root MPI_PROC_NULL it is `unused()` (count 0), never touched.
    unsafe { coll::bcast_how(b, root, id, how) }
}}

coll_fns! { MPI_Gather / PMPI_Gather, MPI_Igather / PMPI_Igather, MPI_Gather_init / PMPI_Gather_init ; MPI_Gather_c / PMPI_Gather_c, MPI_Igather_c / PMPI_Igather_c, MPI_Gather_init_c / PMPI_Gather_init_c (sb: Ptr, sn: Count, st: MPI_Datatype, rb: MutPtr, rn: Count, rt: MPI_Datatype, root: c_int, c: MPI_Comm) comm(c) how(how) {
    let id = comm(c)?;
    let (shape, at_root, active) = rooted(id, root)?;
    // The root of an intercommunicator sends nothing: its send side is insignificant.
    let send = if at_root && shape.inter { Input::Data(unused()) } else if at_root { input_buf(sb, sn, st)? } else if active { Input::Data(buf(sb, sn, st)?) } else { Input::Data(unused()) };
    let recv = if at_root { buf(rb, rn, rt)? } else { unused() };
    // SAFETY: the send buffer holds `sn` elements of `st` and the root's receive buffer
    // `size * rn` of `rt` (MPI_Gather's contract); arguments not significant on this rank are
    // `unused()` (count 0) and never touched.
    unsafe { coll::gather_how(send, recv, root, id, how) }
}}

coll_fns! { MPI_Gatherv / PMPI_Gatherv, MPI_Igatherv / PMPI_Igatherv, MPI_Gatherv_init / PMPI_Gatherv_init ; MPI_Gatherv_c / PMPI_Gatherv_c, MPI_Igatherv_c / PMPI_Igatherv_c, MPI_Gatherv_init_c / PMPI_Gatherv_init_c (sb: Ptr, sn: Count, st: MPI_Datatype, rb: MutPtr, rcounts: *const Count, displs: *const Disp, rt: MPI_Datatype, root: c_int, c: MPI_Comm) comm(c) how(how) {
    let id = comm(c)?;
    let (shape, at_root, active) = rooted(id, root)?;
    let send = if at_root && shape.inter { Input::Data(unused()) } else if at_root { input_buf(sb, sn, st)? } else if active { Input::Data(buf(sb, sn, st)?) } else { Input::Data(unused()) };
    let n = if at_root { shape.peers } else { 0 };
    if at_root {
        convert::not_in_place(rb, "recvbuf")?;
    }
    // SAFETY: at the root these are C arrays of one entry per process (MPI contract);
    // elsewhere `n` is 0 and nothing is read.
    let (rc, rd) = unsafe { (counts(rcounts, n, "recvcounts")?, counts(displs, n, "displs")?) };
    let recv = VBuf {
        addr: rb as usize,
        counts: &rc,
        displs: &rd,
        ty: if at_root { datatype(rt)? } else { unused().ty },
    };
    // SAFETY: the send buffer holds `sn` elements of `st`, and the root's receive buffer every
    // block that recvcounts and displs describe (MPI_Gatherv's contract); elsewhere the receive
    // side has no blocks and is not touched.
    unsafe { coll::gatherv_how(send, recv, root, id, how) }
}}

coll_fns! { MPI_Scatter / PMPI_Scatter, MPI_Iscatter / PMPI_Iscatter, MPI_Scatter_init / PMPI_Scatter_init ; MPI_Scatter_c / PMPI_Scatter_c, MPI_Iscatter_c / PMPI_Iscatter_c, MPI_Scatter_init_c / PMPI_Scatter_init_c (sb: Ptr, sn: Count, st: MPI_Datatype, rb: MutPtr, rn: Count, rt: MPI_Datatype, root: c_int, c: MPI_Comm) comm(c) how(how) {
    let id = comm(c)?;
    let (shape, at_root, active) = rooted(id, root)?;
    let send = if at_root { buf(sb, sn, st)? } else { unused() };
    // The root of an intercommunicator receives nothing: its receive side is insignificant.
    let recv = if at_root && shape.inter { Input::Data(unused()) } else if at_root { input_buf(rb, rn, rt)? } else if active { Input::Data(buf(rb, rn, rt)?) } else { Input::Data(unused()) };
    // SAFETY: the root's send buffer holds `size * sn` elements of `st` and each receive buffer
    // `rn` of `rt` (MPI_Scatter's contract); arguments not significant on this rank are
    // `unused()` (count 0) and never touched.
    unsafe { coll::scatter_how(send, recv, root, id, how) }
}}

coll_fns! { MPI_Scatterv / PMPI_Scatterv, MPI_Iscatterv / PMPI_Iscatterv, MPI_Scatterv_init / PMPI_Scatterv_init ; MPI_Scatterv_c / PMPI_Scatterv_c, MPI_Iscatterv_c / PMPI_Iscatterv_c, MPI_Scatterv_init_c / PMPI_Scatterv_init_c (sb: Ptr, scounts: *const Count, displs: *const Disp, st: MPI_Datatype, rb: MutPtr, rn: Count, rt: MPI_Datatype, root: c_int, c: MPI_Comm) comm(c) how(how) {
    let id = comm(c)?;
    let (shape, at_root, active) = rooted(id, root)?;
    let n = if at_root { shape.peers } else { 0 };
    if at_root {
        convert::not_in_place(sb, "sendbuf")?;
    }
    // SAFETY: at the root these are C arrays of one entry per process (MPI contract);
    // elsewhere `n` is 0 and nothing is read.
    let (sc, sd) = unsafe { (counts(scounts, n, "sendcounts")?, counts(displs, n, "displs")?) };
    let send = VBuf {
        addr: sb as usize,
        counts: &sc,
        displs: &sd,
        ty: if at_root { datatype(st)? } else { unused().ty },
    };
    let recv = if at_root && shape.inter { Input::Data(unused()) } else if at_root { input_buf(rb, rn, rt)? } else if active { Input::Data(buf(rb, rn, rt)?) } else { Input::Data(unused()) };
    // SAFETY: the root's send buffer holds every block that sendcounts and displs describe, and
    // each receive buffer `rn` elements of `rt` (MPI_Scatterv's contract).
    unsafe { coll::scatterv_how(send, recv, root, id, how) }
}}

coll_fns! { MPI_Allgather / PMPI_Allgather, MPI_Iallgather / PMPI_Iallgather, MPI_Allgather_init / PMPI_Allgather_init ; MPI_Allgather_c / PMPI_Allgather_c, MPI_Iallgather_c / PMPI_Iallgather_c, MPI_Allgather_init_c / PMPI_Allgather_init_c (sb: Ptr, sn: Count, st: MPI_Datatype, rb: MutPtr, rn: Count, rt: MPI_Datatype, c: MPI_Comm) comm(c) how(how) {
    // SAFETY: the send buffer holds `sn` elements of `st` (unless MPI_IN_PLACE) and the receive
    // buffer `size * rn` of `rt` (MPI_Allgather's contract); `buf` checked the handles.
    unsafe { coll::allgather_how(input_buf(sb, sn, st)?, buf(rb, rn, rt)?, comm(c)?, how) }
}}

coll_fns! { MPI_Allgatherv / PMPI_Allgatherv, MPI_Iallgatherv / PMPI_Iallgatherv, MPI_Allgatherv_init / PMPI_Allgatherv_init ; MPI_Allgatherv_c / PMPI_Allgatherv_c, MPI_Iallgatherv_c / PMPI_Iallgatherv_c, MPI_Allgatherv_init_c / PMPI_Allgatherv_init_c (sb: Ptr, sn: Count, st: MPI_Datatype, rb: MutPtr, rcounts: *const Count, displs: *const Disp, rt: MPI_Datatype, c: MPI_Comm) comm(c) how(how) {
    let id = comm(c)?;
    let n = size(id)?;
    convert::not_in_place(rb, "recvbuf")?;
    // SAFETY: C arrays of one entry per process of the (remote) group, `n` of them (MPI
    // contract); `counts` refuses NULL.
    let (rc, rd) = unsafe { (counts(rcounts, n, "recvcounts")?, counts(displs, n, "displs")?) };
    let recv = VBuf { addr: rb as usize, counts: &rc, displs: &rd, ty: datatype(rt)? };
    // SAFETY: the send buffer holds `sn` elements of `st` (unless MPI_IN_PLACE) and the receive
    // buffer every block that recvcounts and displs describe (MPI_Allgatherv's contract).
    unsafe { coll::allgatherv_how(input_buf(sb, sn, st)?, recv, id, how) }
}}

coll_fns! { MPI_Alltoall / PMPI_Alltoall, MPI_Ialltoall / PMPI_Ialltoall, MPI_Alltoall_init / PMPI_Alltoall_init ; MPI_Alltoall_c / PMPI_Alltoall_c, MPI_Ialltoall_c / PMPI_Ialltoall_c, MPI_Alltoall_init_c / PMPI_Alltoall_init_c (sb: Ptr, sn: Count, st: MPI_Datatype, rb: MutPtr, rn: Count, rt: MPI_Datatype, c: MPI_Comm) comm(c) how(how) {
    // SAFETY: both buffers hold one block per peer, `sn` elements of `st` and `rn` of `rt`
    // (MPI_Alltoall's contract; only the receive buffer with MPI_IN_PLACE).
    unsafe { coll::alltoall_how(input_buf(sb, sn, st)?, buf(rb, rn, rt)?, comm(c)?, how) }
}}

coll_fns! { MPI_Alltoallv / PMPI_Alltoallv, MPI_Ialltoallv / PMPI_Ialltoallv, MPI_Alltoallv_init / PMPI_Alltoallv_init ; MPI_Alltoallv_c / PMPI_Alltoallv_c, MPI_Ialltoallv_c / PMPI_Ialltoallv_c, MPI_Alltoallv_init_c / PMPI_Alltoallv_init_c (sb: Ptr, scounts: *const Count, sdispls: *const Disp, st: MPI_Datatype, rb: MutPtr, rcounts: *const Count, rdispls: *const Disp, rt: MPI_Datatype, c: MPI_Comm) comm(c) how(how) {
    let id = comm(c)?;
    let n = size(id)?;
    convert::not_in_place(rb, "recvbuf")?;
    // The send arrays are read only when the send side is not MPI_IN_PLACE.
    let ns = if in_place(sb) { 0 } else { n };
    // SAFETY: C arrays of one entry per process of the (remote) group, `n` of them (MPI
    // contract); `counts` refuses NULL.
    let (sc, sd) = unsafe { (counts(scounts, ns, "sendcounts")?, counts(sdispls, ns, "sdispls")?) };
    // SAFETY: as above.
    let (rc, rd) = unsafe { (counts(rcounts, n, "recvcounts")?, counts(rdispls, n, "rdispls")?) };
    let send = if in_place(sb) {
        Input::InPlace
    } else {
        Input::Data(VBuf { addr: sb as usize, counts: &sc, displs: &sd, ty: datatype(st)? })
    };
    let recv = VBuf { addr: rb as usize, counts: &rc, displs: &rd, ty: datatype(rt)? };
    // SAFETY: each buffer holds the blocks its counts and displacements describe
    // (MPI_Alltoallv's contract); the count and displacement slices outlive the call.
    unsafe { coll::alltoallv_how(send, recv, id, how) }
}}

coll_fns! { MPI_Alltoallw / PMPI_Alltoallw, MPI_Ialltoallw / PMPI_Ialltoallw, MPI_Alltoallw_init / PMPI_Alltoallw_init ; MPI_Alltoallw_c / PMPI_Alltoallw_c, MPI_Ialltoallw_c / PMPI_Ialltoallw_c, MPI_Alltoallw_init_c / PMPI_Alltoallw_init_c (sb: Ptr, scounts: *const Count, sdispls: *const Disp, st: *const MPI_Datatype, rb: MutPtr, rcounts: *const Count, rdispls: *const Disp, rt: *const MPI_Datatype, c: MPI_Comm) comm(c) how(how) {
    let id = comm(c)?;
    let n = size(id)?;
    convert::not_in_place(rb, "recvbuf")?;
    // The send arrays are read only when the send side is not MPI_IN_PLACE.
    let ns = if in_place(sb) { 0 } else { n };
    // SAFETY: sendtypes is a C array of one handle per peer, `ns` of them (MPI contract).
    let stypes = unsafe { types(st, ns, "sendtypes")? };
    // SAFETY: a C array of one handle per peer, `n` of them (MPI contract).
    let rtypes = unsafe { types(rt, n, "recvtypes")? };
    // SAFETY: C arrays of one entry per process of the (remote) group (MPI contract);
    // `counts` refuses NULL.
    let (sc, sd) = unsafe { (counts(scounts, ns, "sendcounts")?, counts(sdispls, ns, "sdispls")?) };
    // SAFETY: as above.
    let (rc, rd) = unsafe { (counts(rcounts, n, "recvcounts")?, counts(rdispls, n, "rdispls")?) };
    let send = if in_place(sb) {
        Input::InPlace
    } else {
        Input::Data(WBuf { addr: sb as usize, counts: &sc, displs: &sd, types: &stypes })
    };
    let recv = WBuf { addr: rb as usize, counts: &rc, displs: &rd, types: &rtypes };
    // SAFETY: each buffer holds the blocks its counts, byte displacements and types describe
    // (MPI_Alltoallw's contract); the arrays and type lists borrowed above outlive the call.
    unsafe { coll::alltoallw_how(send, recv, id, how) }
}}

coll_fns! { MPI_Reduce / PMPI_Reduce, MPI_Ireduce / PMPI_Ireduce, MPI_Reduce_init / PMPI_Reduce_init ; MPI_Reduce_c / PMPI_Reduce_c, MPI_Ireduce_c / PMPI_Ireduce_c, MPI_Reduce_init_c / PMPI_Reduce_init_c (sb: Ptr, rb: MutPtr, n: Count, dt: MPI_Datatype, o: MPI_Op, root: c_int, c: MPI_Comm) comm(c) how(how) {
    let id = comm(c)?;
    if root == oxmpi_core::PROC_NULL && !rooted(id, root)?.2 {
        // MPI_PROC_NULL in an intercommunicator's root group: no other argument is
        // significant (mpi4py passes count 0, MPI_BYTE and MPI_OP_NULL there).
        let placeholder = unused();
        // SAFETY: no buffer is passed (null addresses, count 0): a member idle in this
        // reduction reads and writes no memory.
        return unsafe { coll::reduce_how(Input::Data(0), 0, 0, placeholder.ty, 0, root, id, how) };
    }
    if in_place(rb) && rooted(id, root)?.1 {
        convert::not_in_place(rb, "recvbuf")?;
    }
    // SAFETY: the send buffer (unless MPI_IN_PLACE) holds `n` elements of `dt`, and so does the
    // root's receive buffer (MPI_Reduce's contract); `datatype` and `op` checked the handles.
    unsafe { coll::reduce_how(input(sb), rb as usize, n.get(), datatype(dt)?, op(o)?, root, id, how) }
}}

coll_fns! { MPI_Allreduce / PMPI_Allreduce, MPI_Iallreduce / PMPI_Iallreduce, MPI_Allreduce_init / PMPI_Allreduce_init ; MPI_Allreduce_c / PMPI_Allreduce_c, MPI_Iallreduce_c / PMPI_Iallreduce_c, MPI_Allreduce_init_c / PMPI_Allreduce_init_c (sb: Ptr, rb: MutPtr, n: Count, dt: MPI_Datatype, o: MPI_Op, c: MPI_Comm) comm(c) how(how) {
    convert::not_in_place(rb, "recvbuf")?;
    // SAFETY: the receive buffer, and the send buffer unless MPI_IN_PLACE, hold `n` elements of
    // `dt` (MPI_Allreduce's contract); recvbuf is not MPI_IN_PLACE (checked above).
    unsafe { coll::allreduce_how(input(sb), rb as usize, n.get(), datatype(dt)?, op(o)?, comm(c)?, how) }
}}

coll_fns! { MPI_Reduce_scatter_block / PMPI_Reduce_scatter_block, MPI_Ireduce_scatter_block / PMPI_Ireduce_scatter_block, MPI_Reduce_scatter_block_init / PMPI_Reduce_scatter_block_init ; MPI_Reduce_scatter_block_c / PMPI_Reduce_scatter_block_c, MPI_Ireduce_scatter_block_c / PMPI_Ireduce_scatter_block_c, MPI_Reduce_scatter_block_init_c / PMPI_Reduce_scatter_block_init_c (sb: Ptr, rb: MutPtr, n: Count, dt: MPI_Datatype, o: MPI_Op, c: MPI_Comm) comm(c) how(how) {
    convert::not_in_place(rb, "recvbuf")?;
    // SAFETY: the send buffer (the receive buffer, in place) holds `size * n` elements of `dt`
    // and the receive buffer `n` (MPI_Reduce_scatter_block's contract).
    unsafe { coll::reduce_scatter_block_how(input(sb), rb as usize, n.get(), datatype(dt)?, op(o)?, comm(c)?, how) }
}}

coll_fns! { MPI_Reduce_scatter / PMPI_Reduce_scatter, MPI_Ireduce_scatter / PMPI_Ireduce_scatter, MPI_Reduce_scatter_init / PMPI_Reduce_scatter_init ; MPI_Reduce_scatter_c / PMPI_Reduce_scatter_c, MPI_Ireduce_scatter_c / PMPI_Ireduce_scatter_c, MPI_Reduce_scatter_init_c / PMPI_Reduce_scatter_init_c (sb: Ptr, rb: MutPtr, counts: *const Count, dt: MPI_Datatype, o: MPI_Op, c: MPI_Comm) comm(c) how(how) {
    convert::not_in_place(rb, "recvbuf")?;
    let id = comm(c)?;
    let n = coll::shape(id)?.local;
    // SAFETY: recvcounts is a C array of one entry per process of the local group, `n` of them
    // (MPI contract); `counts` refuses NULL.
    let rc = unsafe { crate::count::counts(counts, n, "recvcounts")? };
    // SAFETY: the send buffer (the receive buffer, in place) holds sum(recvcounts) elements of
    // `dt` and the receive buffer recvcounts[rank] (MPI_Reduce_scatter's contract).
    unsafe { coll::reduce_scatter_how(input(sb), rb as usize, &rc, datatype(dt)?, op(o)?, id, how) }
}}

coll_fns! { MPI_Scan / PMPI_Scan, MPI_Iscan / PMPI_Iscan, MPI_Scan_init / PMPI_Scan_init ; MPI_Scan_c / PMPI_Scan_c, MPI_Iscan_c / PMPI_Iscan_c, MPI_Scan_init_c / PMPI_Scan_init_c (sb: Ptr, rb: MutPtr, n: Count, dt: MPI_Datatype, o: MPI_Op, c: MPI_Comm) comm(c) how(how) {
    convert::not_in_place(rb, "recvbuf")?;
    // SAFETY: the receive buffer, and the send buffer unless MPI_IN_PLACE, hold `n` elements of
    // `dt` (MPI_Scan's contract); recvbuf is not MPI_IN_PLACE (checked above).
    unsafe { coll::scan_how(input(sb), rb as usize, n.get(), datatype(dt)?, op(o)?, comm(c)?, how) }
}}

coll_fns! { MPI_Exscan / PMPI_Exscan, MPI_Iexscan / PMPI_Iexscan, MPI_Exscan_init / PMPI_Exscan_init ; MPI_Exscan_c / PMPI_Exscan_c, MPI_Iexscan_c / PMPI_Iexscan_c, MPI_Exscan_init_c / PMPI_Exscan_init_c (sb: Ptr, rb: MutPtr, n: Count, dt: MPI_Datatype, o: MPI_Op, c: MPI_Comm) comm(c) how(how) {
    convert::not_in_place(rb, "recvbuf")?;
    // SAFETY: the receive buffer, and the send buffer unless MPI_IN_PLACE, hold `n` elements of
    // `dt` (MPI_Exscan's contract); recvbuf is not MPI_IN_PLACE (checked above).
    unsafe { coll::exscan_how(input(sb), rb as usize, n.get(), datatype(dt)?, op(o)?, comm(c)?, how) }
}}
