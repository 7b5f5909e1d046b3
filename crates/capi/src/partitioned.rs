//! Partitioned communication entry points (MPI 4.1 chapter 4): `MPI_Psend_init`,
//! `MPI_Precv_init`, `MPI_Pready`, `MPI_Pready_range`, `MPI_Pready_list`,
//! `MPI_Parrived`. The requests they make are started, completed and freed by the
//! ordinary request calls (`crate::p2p`); the rules are the engine's
//! (`oxmpi_core::partitioned`).

use crate::convert::{self, comm, datatype, request, request_handle};
use crate::export::Target;
use crate::handles::{MPI_Comm, MPI_Count, MPI_Datatype, MPI_Info, MPI_Request};
use crate::info::optional_info;
use crate::mpi_fn;
use oxmpi_core::device::ReqId;
use oxmpi_core::partitioned;
use oxmpi_core::{p2p, Error, ErrorClass, Result};
use std::ffi::c_void;
use std::os::raw::c_int;

/// The request a partitioned call acts on (`MPI_REQUEST_NULL` is an error).
fn part_request(h: MPI_Request) -> Result<ReqId> {
    request(h)?.ok_or_else(|| {
        Error::new(
            ErrorClass::Request,
            "invalid request MPI_REQUEST_NULL (a partitioned request is needed)",
        )
    })
}

/// The error handler target of a request handle (its communicator).
fn req_target(h: MPI_Request) -> Target {
    match request(h).ok().flatten().and_then(p2p::request_comm) {
        Some(c) => Target::Comm(c),
        None => Target::None,
    }
}

mpi_fn! { MPI_Psend_init / PMPI_Psend_init (b: *const c_void, partitions: c_int, n: MPI_Count, dt: MPI_Datatype,
        dest: c_int, tag: c_int, c: MPI_Comm, info: MPI_Info, r: *mut MPI_Request) target(convert::target(c)) {
    let r = convert::out(r, "request")?;
    convert::not_in_place(b, "buffer")?;
    let (cm, ty) = (comm(c)?, datatype(dt)?);
    optional_info(info)?;
    // SAFETY: the buffer holds the partitions and stays valid until the request is
    // freed (MPI contract).
    let id = unsafe { partitioned::psend_init(b as usize, partitions, n, ty, dest, tag, cm)? };
    // SAFETY: r checked non-null.
    unsafe { *r = request_handle(id) };
    Ok(())
}}

mpi_fn! { MPI_Precv_init / PMPI_Precv_init (b: *mut c_void, partitions: c_int, n: MPI_Count, dt: MPI_Datatype,
        src: c_int, tag: c_int, c: MPI_Comm, info: MPI_Info, r: *mut MPI_Request) target(convert::target(c)) {
    let r = convert::out(r, "request")?;
    convert::not_in_place(b, "buffer")?;
    let (cm, ty) = (comm(c)?, datatype(dt)?);
    optional_info(info)?;
    // SAFETY: the buffer holds the partitions and stays valid until the request is
    // freed (MPI contract).
    let id = unsafe { partitioned::precv_init(b as usize, partitions, n, ty, src, tag, cm)? };
    // SAFETY: r checked non-null.
    unsafe { *r = request_handle(id) };
    Ok(())
}}

mpi_fn! { MPI_Pready / PMPI_Pready (partition: c_int, r: MPI_Request) target(req_target(r)) {
    partitioned::pready(part_request(r)?, partition)
}}

mpi_fn! { MPI_Pready_range / PMPI_Pready_range (low: c_int, high: c_int, r: MPI_Request) target(req_target(r)) {
    partitioned::pready_range(part_request(r)?, low, high)
}}

mpi_fn! { MPI_Pready_list / PMPI_Pready_list (n: c_int, list: *const c_int, r: MPI_Request) target(req_target(r)) {
    let id = part_request(r)?;
    if n < 0 {
        return Err(Error::new(ErrorClass::Arg, format!("invalid length {n} (must be >= 0)")));
    }
    if n == 0 {
        return partitioned::pready_list(id, &[]);
    }
    if list.is_null() {
        return Err(Error::new(ErrorClass::Arg, format!("array_of_partitions is NULL with length {n}")));
    }
    // SAFETY: the caller passes `n` readable ints (MPI contract); checked non-null.
    let parts = unsafe { std::slice::from_raw_parts(list, n as usize) };
    partitioned::pready_list(id, parts)
}}

mpi_fn! { MPI_Parrived / PMPI_Parrived (r: MPI_Request, partition: c_int, flag: *mut c_int) target(req_target(r)) {
    let flag = convert::out(flag, "flag")?;
    // MPI 4.1 section 4.2.3: on a null or inactive request the flag is true.
    let arrived = match request(r)? {
        None => true,
        Some(id) => partitioned::parrived(id, partition)?,
    };
    // SAFETY: flag checked non-null.
    unsafe { *flag = c_int::from(arrived) };
    Ok(())
}}
