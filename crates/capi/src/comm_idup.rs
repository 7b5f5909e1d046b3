//! `MPI_Comm_idup` and `MPI_Comm_idup_with_info`: the new communicator's handle is
//! written at once and may be used once the request completes (`oxmpi_core::idup`).

use crate::comm::new_comm_out;
use crate::convert::{self, comm, request_handle};
use crate::handles::{self, MPI_Comm, MPI_Info, MPI_Request};
use crate::mpi_fn;
use oxmpi_core::idup;

mpi_fn! { MPI_Comm_idup / PMPI_Comm_idup (c: MPI_Comm, out: *mut MPI_Comm, r: *mut MPI_Request) target(convert::target(c)) {
    // SAFETY: `out` is NULL or the C caller's writable communicator handle (MPI contract);
    // `new_comm_out` refuses NULL.
    let out = unsafe { new_comm_out(out, "newcomm")? };
    let r = convert::out(r, "request")?;
    let (id, req) = idup::comm_idup(comm(c)?, None)?;
    // SAFETY: both checked non-null; the caller provides writable handles.
    unsafe {
        *out = handles::comm_handle(id);
        *r = request_handle(req);
    }
    Ok(())
}}

mpi_fn! { MPI_Comm_idup_with_info / PMPI_Comm_idup_with_info (c: MPI_Comm, info: MPI_Info, out: *mut MPI_Comm, r: *mut MPI_Request) target(convert::target(c)) {
    // SAFETY: `out` is NULL or the C caller's writable communicator handle (MPI contract);
    // `new_comm_out` refuses NULL.
    let out = unsafe { new_comm_out(out, "newcomm")? };
    let r = convert::out(r, "request")?;
    let info = crate::info::optional_info(info)?;
    let (id, req) = idup::comm_idup_with_info(comm(c)?, info)?;
    // SAFETY: both checked non-null; the caller provides writable handles.
    unsafe {
        *out = handles::comm_handle(id);
        *r = request_handle(req);
    }
    Ok(())
}}
