//! Neighbourhood collective entry points: `MPI_Neighbor_allgather(v)` and
//! `MPI_Neighbor_alltoall(v,w)`.
//!
//! The per-neighbour arrays hold one entry per in-neighbour (receive side) or
//! out-neighbour (send side) of the calling process, so the communicator's topology is
//! resolved first (`MPI_ERR_TOPOLOGY` without one) and only that many entries are read.
//! `MPI_IN_PLACE` is not an option for these calls (MPI 4.1 section 8.6).

use crate::coll_fns;
use crate::convert::{self, buf, comm, datatype};
use crate::count::counts;
use crate::handles::{MPI_Aint, MPI_Comm, MPI_Datatype, MPI_IN_PLACE};
use oxmpi_core::coll::movement::VBuf;
use oxmpi_core::coll::neighbor::{self, WBuf};
use oxmpi_core::types::TypeId;
use oxmpi_core::{Error, ErrorClass, Result};
use std::ffi::c_void;

type Ptr = *const c_void;
type MutPtr = *mut c_void;

/// The send buffer, which may not be `MPI_IN_PLACE`.
fn send_ptr(p: Ptr) -> Result<Ptr> {
    if std::ptr::eq(p, MPI_IN_PLACE) {
        return Err(Error::new(
            ErrorClass::Buffer,
            "sendbuf is MPI_IN_PLACE, which neighbourhood collectives do not accept",
        ));
    }
    Ok(p)
}

/// `n` entries of a C array argument.
///
/// # Safety
/// A non-null `p` must point to at least `n` elements.
unsafe fn array<'a, T>(p: *const T, n: usize, what: &str) -> Result<&'a [T]> {
    if n == 0 {
        return Ok(&[]);
    }
    if p.is_null() {
        return Err(Error::new(
            ErrorClass::Arg,
            format!("{what} is NULL but {n} entries are needed"),
        ));
    }
    // SAFETY: per the contract.
    Ok(unsafe { std::slice::from_raw_parts(p, n) })
}

/// `n` datatype handles.
///
/// # Safety
/// As for [`array`].
unsafe fn types(p: *const MPI_Datatype, n: usize, what: &str) -> Result<Vec<TypeId>> {
    // SAFETY: forwarded contract.
    let hs = unsafe { array(p, n, what)? };
    hs.iter()
        .enumerate()
        .map(|(i, &h)| {
            datatype(h).map_err(|e| Error::new(e.class, format!("{what}[{i}]: {}", e.message)))
        })
        .collect()
}

coll_fns! { MPI_Neighbor_allgather / PMPI_Neighbor_allgather, MPI_Ineighbor_allgather / PMPI_Ineighbor_allgather, MPI_Neighbor_allgather_init / PMPI_Neighbor_allgather_init ; MPI_Neighbor_allgather_c / PMPI_Neighbor_allgather_c, MPI_Ineighbor_allgather_c / PMPI_Ineighbor_allgather_c, MPI_Neighbor_allgather_init_c / PMPI_Neighbor_allgather_init_c (sb: Ptr, sn: Count, st: MPI_Datatype, rb: MutPtr, rn: Count, rt: MPI_Datatype, c: MPI_Comm) comm(c) how(how) {
    let id = comm(c)?;
    let send = buf(send_ptr(sb)?, sn, st)?;
    let recv = buf(rb, rn, rt)?;
    // SAFETY: the buffers hold their blocks (MPI contract).
    unsafe { neighbor::neighbor_allgather_how(send, recv, id, how) }
}}

coll_fns! { MPI_Neighbor_allgatherv / PMPI_Neighbor_allgatherv, MPI_Ineighbor_allgatherv / PMPI_Ineighbor_allgatherv, MPI_Neighbor_allgatherv_init / PMPI_Neighbor_allgatherv_init ; MPI_Neighbor_allgatherv_c / PMPI_Neighbor_allgatherv_c, MPI_Ineighbor_allgatherv_c / PMPI_Ineighbor_allgatherv_c, MPI_Neighbor_allgatherv_init_c / PMPI_Neighbor_allgatherv_init_c (sb: Ptr, sn: Count, st: MPI_Datatype, rb: MutPtr, rcounts: *const Count, displs: *const Disp, rt: MPI_Datatype, c: MPI_Comm) comm(c) how(how) {
    let id = comm(c)?;
    let n = neighbor::degrees(id)?.indegree();
    let send = buf(send_ptr(sb)?, sn, st)?;
    // SAFETY: the arrays hold one entry per in-neighbour (MPI contract).
    let (rc, rd) = unsafe { (counts(rcounts, n, "recvcounts")?, counts(displs, n, "displs")?) };
    let recv = VBuf { addr: rb as usize, counts: &rc, displs: &rd, ty: datatype(rt)? };
    // SAFETY: the buffers hold their blocks (MPI contract).
    unsafe { neighbor::neighbor_allgatherv_how(send, recv, id, how) }
}}

coll_fns! { MPI_Neighbor_alltoall / PMPI_Neighbor_alltoall, MPI_Ineighbor_alltoall / PMPI_Ineighbor_alltoall, MPI_Neighbor_alltoall_init / PMPI_Neighbor_alltoall_init ; MPI_Neighbor_alltoall_c / PMPI_Neighbor_alltoall_c, MPI_Ineighbor_alltoall_c / PMPI_Ineighbor_alltoall_c, MPI_Neighbor_alltoall_init_c / PMPI_Neighbor_alltoall_init_c (sb: Ptr, sn: Count, st: MPI_Datatype, rb: MutPtr, rn: Count, rt: MPI_Datatype, c: MPI_Comm) comm(c) how(how) {
    let id = comm(c)?;
    let send = buf(send_ptr(sb)?, sn, st)?;
    let recv = buf(rb, rn, rt)?;
    // SAFETY: the buffers hold their blocks (MPI contract).
    unsafe { neighbor::neighbor_alltoall_how(send, recv, id, how) }
}}

coll_fns! { MPI_Neighbor_alltoallv / PMPI_Neighbor_alltoallv, MPI_Ineighbor_alltoallv / PMPI_Ineighbor_alltoallv, MPI_Neighbor_alltoallv_init / PMPI_Neighbor_alltoallv_init ; MPI_Neighbor_alltoallv_c / PMPI_Neighbor_alltoallv_c, MPI_Ineighbor_alltoallv_c / PMPI_Ineighbor_alltoallv_c, MPI_Neighbor_alltoallv_init_c / PMPI_Neighbor_alltoallv_init_c (sb: Ptr, scounts: *const Count, sdispls: *const Disp, st: MPI_Datatype, rb: MutPtr, rcounts: *const Count, rdispls: *const Disp, rt: MPI_Datatype, c: MPI_Comm) comm(c) how(how) {
    let id = comm(c)?;
    let d = neighbor::degrees(id)?;
    let (nin, nout) = (d.indegree(), d.outdegree());
    let sb = send_ptr(sb)?;
    // SAFETY: the arrays hold one entry per out-neighbour (MPI contract).
    let (sc, sd) = unsafe { (counts(scounts, nout, "sendcounts")?, counts(sdispls, nout, "sdispls")?) };
    // SAFETY: the arrays hold one entry per in-neighbour (MPI contract).
    let (rc, rd) = unsafe { (counts(rcounts, nin, "recvcounts")?, counts(rdispls, nin, "rdispls")?) };
    let send = VBuf { addr: sb as usize, counts: &sc, displs: &sd, ty: datatype(st)? };
    let recv = VBuf { addr: rb as usize, counts: &rc, displs: &rd, ty: datatype(rt)? };
    // SAFETY: the buffers hold their blocks (MPI contract).
    unsafe { neighbor::neighbor_alltoallv_how(send, recv, id, how) }
}}

coll_fns! { MPI_Neighbor_alltoallw / PMPI_Neighbor_alltoallw, MPI_Ineighbor_alltoallw / PMPI_Ineighbor_alltoallw, MPI_Neighbor_alltoallw_init / PMPI_Neighbor_alltoallw_init ; MPI_Neighbor_alltoallw_c / PMPI_Neighbor_alltoallw_c, MPI_Ineighbor_alltoallw_c / PMPI_Ineighbor_alltoallw_c, MPI_Neighbor_alltoallw_init_c / PMPI_Neighbor_alltoallw_init_c (sb: Ptr, scounts: *const Count, sdispls: *const MPI_Aint, st: *const MPI_Datatype, rb: MutPtr, rcounts: *const Count, rdispls: *const MPI_Aint, rt: *const MPI_Datatype, c: MPI_Comm) comm(c) how(how) {
    let id = comm(c)?;
    let d = neighbor::degrees(id)?;
    let (nin, nout) = (d.indegree(), d.outdegree());
    let sb = send_ptr(sb)?;
    // SAFETY: the array holds one entry per neighbour (MPI contract).
    let stypes = unsafe { types(st, nout, "sendtypes")? };
    // SAFETY: the array holds one entry per neighbour (MPI contract).
    let rtypes = unsafe { types(rt, nin, "recvtypes")? };
    // SAFETY: the array holds one entry per neighbour (MPI contract).
    let sd: &[MPI_Aint] = unsafe { array(sdispls, nout, "sdispls")? };
    // SAFETY: the array holds one entry per neighbour (MPI contract).
    let rd: &[MPI_Aint] = unsafe { array(rdispls, nin, "rdispls")? };
    let sd: Vec<isize> = sd.iter().map(|&x| x as isize).collect();
    let rd: Vec<isize> = rd.iter().map(|&x| x as isize).collect();
    // SAFETY: the arrays hold one entry per neighbour (MPI contract).
    let (sc, rc) = unsafe { (counts(scounts, nout, "sendcounts")?, counts(rcounts, nin, "recvcounts")?) };
    let send = WBuf { addr: sb as usize, counts: &sc, displs: &sd, types: &stypes };
    let recv = WBuf { addr: rb as usize, counts: &rc, displs: &rd, types: &rtypes };
    // SAFETY: the buffers hold their blocks (MPI contract).
    unsafe { neighbor::neighbor_alltoallw_how(send, recv, id, how) }
}}
