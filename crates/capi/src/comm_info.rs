//! Communicator hints: `MPI_Comm_dup_with_info`, `MPI_Comm_set_info` and
//! `MPI_Comm_get_info`. The engine keeps the assertions of MPI 4.1 section 7.4.4
//! (`mpi_assert_no_any_tag`, `_no_any_source`, `_exact_length`, `_allow_overtaking`)
//! on each communicator (`oxmpi_core::comm::Hints`); other keys are hints oxmpi ignores.

use crate::comm::new_comm_out;
use crate::convert::{self, comm};
use crate::handles::{self, MPI_Comm, MPI_Info};
use crate::mpi_fn;
use oxmpi_core::commops;

mpi_fn! { MPI_Comm_dup_with_info / PMPI_Comm_dup_with_info (c: MPI_Comm, info: MPI_Info, out: *mut MPI_Comm) target(convert::target(c)) {
    // SAFETY: `out` is NULL or the C caller's writable communicator handle (MPI contract);
    // `new_comm_out` refuses NULL.
    let out = unsafe { new_comm_out(out, "newcomm")? };
    let info = crate::info::optional_info(info)?;
    let id = commops::comm_dup_with_info(comm(c)?, info)?;
    // SAFETY: `out` came back from `new_comm_out` (non-null) and is the C caller's writable
    // handle (MPI contract).
    unsafe { *out = handles::comm_handle(id) };
    Ok(())
}}

mpi_fn! { MPI_Comm_set_info / PMPI_Comm_set_info (c: MPI_Comm, info: MPI_Info) target(convert::target(c)) {
    let id = comm(c)?;
    // MPI_INFO_NULL is refused, as MPICH and Open MPI do.
    let info = crate::info::info(info)?;
    commops::comm_set_info(id, info)
}}

mpi_fn! { MPI_Comm_get_info / PMPI_Comm_get_info (c: MPI_Comm, out: *mut MPI_Info) target(convert::target(c)) {
    let id = comm(c)?;
    let out = convert::out(out, "info_used")?;
    let info = commops::comm_get_info(id)?;
    // SAFETY: checked non-null; the caller provides a writable handle.
    unsafe { *out = handles::info_handle(info) };
    Ok(())
}}
