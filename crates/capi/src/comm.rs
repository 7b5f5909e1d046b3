//! Communicator entry points: duplication, creation from groups, splitting, freeing,
//! comparison, names, hints (info), and intercommunicators (create, merge, queries).

use crate::convert::{self, comm};
use crate::export::Target;
use crate::group::group_of;
use crate::handles::{self, MPI_Comm, MPI_Group, MPI_Info};
use crate::mpi_fn;
use oxmpi_core::comm::CommId;
use oxmpi_core::commops::{self, SplitType};
use oxmpi_core::{Error, ErrorClass, Result, UNDEFINED};
use std::ffi::CStr;
use std::os::raw::{c_char, c_int};

/// Writes a new communicator handle (`MPI_COMM_NULL` for `None`).
///
/// # Safety
/// `out` must be non-null and point to a writable `MPI_Comm` (this function does not check).
pub(crate) unsafe fn put_comm(out: *mut MPI_Comm, id: Option<CommId>) {
    // SAFETY: `out` is non-null and writable (this function's contract).
    unsafe { *out = id.map_or(handles::MPI_COMM_NULL, handles::comm_handle) };
}

/// Checks a new-communicator output pointer and sets it to `MPI_COMM_NULL`, which it
/// stays if the call fails.
///
/// # Safety
/// `out` must be null (refused with `MPI_ERR_ARG`) or point to a writable `MPI_Comm`.
pub unsafe fn new_comm_out(out: *mut MPI_Comm, what: &str) -> Result<*mut MPI_Comm> {
    let out = convert::out(out, what)?;
    // SAFETY: checked non-null; the caller provides a writable handle.
    unsafe { *out = handles::MPI_COMM_NULL };
    Ok(out)
}

/// The split of `MPI_COMM_TYPE_HW_GUIDED` / `MPI_COMM_TYPE_RESOURCE_GUIDED`: by the resource
/// the info key `mpi_hw_resource_type` names (MPI 4.1 section 7.4.2). The one resource oxmpi
/// knows is `mpi_shared_memory` (the `MPI_COMM_TYPE_SHARED` split); a missing key or any other
/// resource gives `MPI_COMM_NULL`, as the standard says for an unsupported one.
fn guided(info: Option<oxmpi_core::info::InfoId>) -> Result<SplitType> {
    let v = match info {
        Some(i) => oxmpi_core::info::get(i, b"mpi_hw_resource_type")?,
        None => None,
    };
    Ok(if v.as_deref() == Some(b"mpi_shared_memory".as_slice()) {
        SplitType::Shared
    } else {
        SplitType::Hardware
    })
}

/// The error-handler target for a call whose communicator is passed by pointer.
///
/// # Safety
/// `p` is null or points to a readable handle.
pub unsafe fn target_ptr(p: *const MPI_Comm) -> Target {
    if p.is_null() {
        Target::None
    } else {
        // SAFETY: non-null per the check; readable per the contract.
        convert::target(unsafe { *p })
    }
}

mpi_fn! { MPI_Comm_dup / PMPI_Comm_dup (c: MPI_Comm, out: *mut MPI_Comm) target(convert::target(c)) {
    // SAFETY: `out` is NULL or the C caller's writable communicator handle (MPI contract);
    // `new_comm_out` refuses NULL.
    let out = unsafe { new_comm_out(out, "newcomm")? };
    let id = commops::comm_dup(comm(c)?)?;
    // SAFETY: `out` came back from `new_comm_out` (non-null) and is the C caller's writable handle
    // (MPI contract).
    unsafe { put_comm(out, Some(id)) };
    Ok(())
}}

mpi_fn! { MPI_Comm_create / PMPI_Comm_create (c: MPI_Comm, g: MPI_Group, out: *mut MPI_Comm) target(convert::target(c)) {
    // SAFETY: `out` is NULL or the C caller's writable communicator handle (MPI contract);
    // `new_comm_out` refuses NULL.
    let out = unsafe { new_comm_out(out, "newcomm")? };
    let id = comm(c)?;
    let id = commops::comm_create(id, &*group_of(g)?)?;
    // SAFETY: `out` came back from `new_comm_out` (non-null) and is the C caller's writable handle
    // (MPI contract).
    unsafe { put_comm(out, id) };
    Ok(())
}}

mpi_fn! { MPI_Comm_create_group / PMPI_Comm_create_group (c: MPI_Comm, g: MPI_Group, tag: c_int, out: *mut MPI_Comm) target(convert::target(c)) {
    // SAFETY: `out` is NULL or the C caller's writable communicator handle (MPI contract);
    // `new_comm_out` refuses NULL.
    let out = unsafe { new_comm_out(out, "newcomm")? };
    let id = comm(c)?;
    let id = commops::comm_create_group(id, &*group_of(g)?, tag)?;
    // SAFETY: `out` came back from `new_comm_out` (non-null) and is the C caller's writable handle
    // (MPI contract).
    unsafe { put_comm(out, id) };
    Ok(())
}}

mpi_fn! { MPI_Comm_split / PMPI_Comm_split (c: MPI_Comm, color: c_int, key: c_int, out: *mut MPI_Comm) target(convert::target(c)) {
    // SAFETY: `out` is NULL or the C caller's writable communicator handle (MPI contract);
    // `new_comm_out` refuses NULL.
    let out = unsafe { new_comm_out(out, "newcomm")? };
    let id = commops::comm_split(comm(c)?, color, key)?;
    // SAFETY: `out` came back from `new_comm_out` (non-null) and is the C caller's writable handle
    // (MPI contract).
    unsafe { put_comm(out, id) };
    Ok(())
}}

mpi_fn! { MPI_Comm_split_type / PMPI_Comm_split_type (c: MPI_Comm, ty: c_int, key: c_int, info: MPI_Info, out: *mut MPI_Comm) target(convert::target(c)) {
    // SAFETY: `out` is NULL or the C caller's writable communicator handle (MPI contract);
    // `new_comm_out` refuses NULL.
    let out = unsafe { new_comm_out(out, "newcomm")? };
    let id = comm(c)?;
    let info = crate::info::optional_info(info)?;
    let ty = match ty {
        handles::MPI_COMM_TYPE_SHARED => SplitType::Shared,
        handles::MPI_COMM_TYPE_HW_GUIDED | handles::MPI_COMM_TYPE_RESOURCE_GUIDED => guided(info)?,
        handles::MPI_COMM_TYPE_HW_UNGUIDED => SplitType::Hardware,
        UNDEFINED => SplitType::Undefined,
        t => return Err(Error::new(ErrorClass::Arg, format!("invalid split_type {t}"))),
    };
    let id = commops::comm_split_type(id, ty, key)?;
    // SAFETY: `out` came back from `new_comm_out` (non-null) and is the C caller's writable handle
    // (MPI contract).
    unsafe { put_comm(out, id) };
    Ok(())
}}

mpi_fn! { MPI_Comm_free / PMPI_Comm_free (c: *mut MPI_Comm) target(
    // SAFETY: `c` is NULL or points to the caller's MPI_Comm (MPI_Comm_free's contract),
    // which is all `target_ptr` reads.
    unsafe { target_ptr(c) }
) {
    let c = convert::out(c, "comm")?;
    // SAFETY: checked non-null.
    let h = unsafe { *c };
    // The communicator's reference to its error handler goes with it (the engine's
    // communicator table counts it).
    commops::comm_free(comm(h)?)?;
    // SAFETY: checked non-null.
    unsafe { *c = handles::MPI_COMM_NULL };
    Ok(())
}}

mpi_fn! { MPI_Comm_compare / PMPI_Comm_compare (c1: MPI_Comm, c2: MPI_Comm, result: *mut c_int) target(convert::target(c1)) {
    let result = convert::out(result, "result")?;
    let r = commops::comm_compare(comm(c1)?, comm(c2)?)?;
    // SAFETY: checked non-null.
    unsafe { *result = r as c_int };
    Ok(())
}}

mpi_fn! { MPI_Comm_test_inter / PMPI_Comm_test_inter (c: MPI_Comm, flag: *mut c_int) target(convert::target(c)) {
    let flag = convert::out(flag, "flag")?;
    let f = commops::comm_test_inter(comm(c)?)?;
    // SAFETY: checked non-null.
    unsafe { *flag = f as c_int };
    Ok(())
}}

mpi_fn! { MPI_Comm_remote_size / PMPI_Comm_remote_size (c: MPI_Comm, size: *mut c_int) target(convert::target(c)) {
    let size = convert::out(size, "size")?;
    let n = commops::comm_remote_size(comm(c)?)?;
    // SAFETY: checked non-null.
    unsafe { *size = n };
    Ok(())
}}

mpi_fn! { MPI_Comm_set_name / PMPI_Comm_set_name (c: MPI_Comm, name: *const c_char) target(convert::target(c)) {
    let id = comm(c)?;
    if name.is_null() {
        return Err(Error::new(ErrorClass::Arg, "null pointer for comm_name"));
    }
    // SAFETY: a NUL-terminated string (MPI contract).
    let s = unsafe { CStr::from_ptr(name) }.to_string_lossy();
    commops::comm_set_name(id, &s)
}}

mpi_fn! { MPI_Comm_get_name / PMPI_Comm_get_name (c: MPI_Comm, name: *mut c_char, len: *mut c_int) target(convert::target(c)) {
    // The null handle is a predefined object with a predefined name (MPI 4.1 section 7.8).
    if c == handles::MPI_COMM_NULL {
        return convert::write_name("MPI_COMM_NULL", commops::MAX_NAME, name, len, "comm_name");
    }
    let id = comm(c)?;
    let s = commops::comm_get_name(id)?;
    convert::write_name(&s, commops::MAX_NAME, name, len, "comm_name")
}}

mpi_fn! { MPI_Intercomm_create / PMPI_Intercomm_create (local: MPI_Comm, local_leader: c_int, peer: MPI_Comm, remote_leader: c_int, tag: c_int, out: *mut MPI_Comm) target(convert::target(local)) {
    // SAFETY: `out` is NULL or the C caller's writable communicator handle (MPI contract);
    // `new_comm_out` refuses NULL.
    let out = unsafe { new_comm_out(out, "newintercomm")? };
    let lc = comm(local)?;
    // The peer communicator matters only at the local leader; the engine reports a bad
    // one there.
    let pc = comm(peer).ok();
    let id = commops::intercomm_create(lc, local_leader, pc, remote_leader, tag)?;
    // SAFETY: `out` came back from `new_comm_out` (non-null) and is the C caller's writable handle
    // (MPI contract).
    unsafe { put_comm(out, Some(id)) };
    Ok(())
}}

mpi_fn! { MPI_Intercomm_merge / PMPI_Intercomm_merge (c: MPI_Comm, high: c_int, out: *mut MPI_Comm) target(convert::target(c)) {
    // SAFETY: `out` is NULL or the C caller's writable communicator handle (MPI contract);
    // `new_comm_out` refuses NULL.
    let out = unsafe { new_comm_out(out, "newintracomm")? };
    let id = commops::intercomm_merge(comm(c)?, high != 0)?;
    // SAFETY: `out` came back from `new_comm_out` (non-null) and is the C caller's writable handle
    // (MPI contract).
    unsafe { put_comm(out, Some(id)) };
    Ok(())
}}
