//! Group entry points (`MPI_Group_*`, `MPI_Comm_group`, `MPI_Comm_remote_group`):
//! handle translation and argument reading around the engine's group algebra.

use crate::convert::{self, comm};
use crate::export::Target;
use crate::handles::{self, MPI_Comm, MPI_Group};
use crate::mpi_fn;
use oxmpi_core::comm::Group;
use oxmpi_core::commops;
use oxmpi_core::group::{self, GroupId};
use oxmpi_core::{Error, ErrorClass, Result};
use std::os::raw::c_int;
use std::sync::Arc;

/// The group a handle names.
pub fn group_id(h: MPI_Group) -> Result<GroupId> {
    if h == handles::MPI_GROUP_NULL {
        return Err(Error::new(
            ErrorClass::Group,
            "invalid group MPI_GROUP_NULL",
        ));
    }
    handles::group_index(h)
        .ok_or_else(|| Error::new(ErrorClass::Group, format!("invalid group handle {h:#x}")))
}

/// The group object a handle names.
pub fn group_of(h: MPI_Group) -> Result<Arc<Group>> {
    commops::group(group_id(h)?)
}

/// # Safety
/// `out` must be non-null and point to a writable `MPI_Group` (this function does not check).
unsafe fn put_group(out: *mut MPI_Group, id: GroupId) {
    // SAFETY: `out` is non-null and writable (this function's contract).
    unsafe { *out = handles::group_handle(id) };
}

/// # Safety
/// `out` must be null (refused) or point to a writable `MPI_Group`.
unsafe fn new_group(out: *mut MPI_Group, g: Group) -> Result<()> {
    let out = convert::out(out, "newgroup")?;
    let id = commops::group_insert(g)?;
    // SAFETY: `out` passed `convert::out` above and is the C caller's writable group handle (MPI
    // contract).
    unsafe { put_group(out, id) };
    Ok(())
}

/// Reads `n` ints from a C array (`n` may be 0 with any pointer).
///
/// # Safety
/// `p` must point to `n` readable ints when `n > 0`.
pub unsafe fn ints<'a>(p: *const c_int, n: c_int, what: &str) -> Result<&'a [c_int]> {
    if n < 0 {
        return Err(Error::new(
            ErrorClass::Arg,
            format!("invalid length {n} of {what} (must be >= 0)"),
        ));
    }
    if n == 0 {
        return Ok(&[]);
    }
    if p.is_null() {
        return Err(Error::new(
            ErrorClass::Arg,
            format!("null pointer for {what}"),
        ));
    }
    // SAFETY: per the contract the array holds n ints.
    Ok(unsafe { std::slice::from_raw_parts(p, n as usize) })
}

unsafe fn ranges<'a>(p: *const [c_int; 3], n: c_int) -> Result<&'a [[c_int; 3]]> {
    if n < 0 {
        return Err(Error::new(
            ErrorClass::Arg,
            format!("invalid number of ranges n = {n}"),
        ));
    }
    if n == 0 {
        return Ok(&[]);
    }
    if p.is_null() {
        return Err(Error::new(ErrorClass::Arg, "null pointer for ranges"));
    }
    // SAFETY: the caller passes n triplets (MPI contract).
    Ok(unsafe { std::slice::from_raw_parts(p, n as usize) })
}

mpi_fn! { MPI_Group_size / PMPI_Group_size (g: MPI_Group, size: *mut c_int) target(Target::None) {
    let size = convert::out(size, "size")?;
    let n = group_of(g)?.size();
    // SAFETY: checked non-null.
    unsafe { *size = n };
    Ok(())
}}

mpi_fn! { MPI_Group_rank / PMPI_Group_rank (g: MPI_Group, rank: *mut c_int) target(Target::None) {
    let rank = convert::out(rank, "rank")?;
    let r = commops::group_rank(group_id(g)?)?;
    // SAFETY: checked non-null.
    unsafe { *rank = r };
    Ok(())
}}

mpi_fn! { MPI_Group_translate_ranks / PMPI_Group_translate_ranks (g1: MPI_Group, n: c_int, ranks1: *const c_int, g2: MPI_Group, ranks2: *mut c_int) target(Target::None) {
    let (a, b) = (group_of(g1)?, group_of(g2)?);
    // SAFETY: ranks1 holds n ints (MPI contract).
    let r1 = unsafe { ints(ranks1, n, "ranks1")? };
    let out = group::translate_ranks(&a, r1, &b)?;
    if n > 0 {
        let dst = convert::out(ranks2, "ranks2")?;
        // SAFETY: ranks2 holds n ints (MPI contract); checked non-null.
        unsafe { std::ptr::copy_nonoverlapping(out.as_ptr(), dst, out.len()) };
    }
    Ok(())
}}

mpi_fn! { MPI_Group_compare / PMPI_Group_compare (g1: MPI_Group, g2: MPI_Group, result: *mut c_int) target(Target::None) {
    let result = convert::out(result, "result")?;
    let c = group::compare(&*group_of(g1)?, &*group_of(g2)?);
    // SAFETY: checked non-null.
    unsafe { *result = c as c_int };
    Ok(())
}}

mpi_fn! { MPI_Group_union / PMPI_Group_union (g1: MPI_Group, g2: MPI_Group, out: *mut MPI_Group) target(Target::None) {
    let g = group::union(&*group_of(g1)?, &*group_of(g2)?);
    // SAFETY: `out` is NULL or the C caller's writable group handle (MPI contract); `new_group`
    // refuses NULL.
    unsafe { new_group(out, g) }
}}

mpi_fn! { MPI_Group_intersection / PMPI_Group_intersection (g1: MPI_Group, g2: MPI_Group, out: *mut MPI_Group) target(Target::None) {
    let g = group::intersection(&*group_of(g1)?, &*group_of(g2)?);
    // SAFETY: `out` is NULL or the C caller's writable group handle (MPI contract); `new_group`
    // refuses NULL.
    unsafe { new_group(out, g) }
}}

mpi_fn! { MPI_Group_difference / PMPI_Group_difference (g1: MPI_Group, g2: MPI_Group, out: *mut MPI_Group) target(Target::None) {
    let g = group::difference(&*group_of(g1)?, &*group_of(g2)?);
    // SAFETY: `out` is NULL or the C caller's writable group handle (MPI contract); `new_group`
    // refuses NULL.
    unsafe { new_group(out, g) }
}}

mpi_fn! { MPI_Group_incl / PMPI_Group_incl (g: MPI_Group, n: c_int, ranks: *const c_int, out: *mut MPI_Group) target(Target::None) {
    let base = group_of(g)?;
    // SAFETY: ranks holds n ints (MPI contract).
    let r = unsafe { ints(ranks, n, "ranks")? };
    // SAFETY: `out` is NULL or the C caller's writable group handle (MPI contract); `new_group`
    // refuses NULL.
    unsafe { new_group(out, group::incl(&base, r)?) }
}}

mpi_fn! { MPI_Group_excl / PMPI_Group_excl (g: MPI_Group, n: c_int, ranks: *const c_int, out: *mut MPI_Group) target(Target::None) {
    let base = group_of(g)?;
    // SAFETY: ranks holds n ints (MPI contract).
    let r = unsafe { ints(ranks, n, "ranks")? };
    // SAFETY: `out` is NULL or the C caller's writable group handle (MPI contract); `new_group`
    // refuses NULL.
    unsafe { new_group(out, group::excl(&base, r)?) }
}}

mpi_fn! { MPI_Group_range_incl / PMPI_Group_range_incl (g: MPI_Group, n: c_int, rs: *const [c_int; 3], out: *mut MPI_Group) target(Target::None) {
    let base = group_of(g)?;
    // SAFETY: rs holds n triplets (MPI contract).
    let r = unsafe { ranges(rs, n)? };
    // SAFETY: `out` is NULL or the C caller's writable group handle (MPI contract); `new_group`
    // refuses NULL.
    unsafe { new_group(out, group::range_incl(&base, r)?) }
}}

mpi_fn! { MPI_Group_range_excl / PMPI_Group_range_excl (g: MPI_Group, n: c_int, rs: *const [c_int; 3], out: *mut MPI_Group) target(Target::None) {
    let base = group_of(g)?;
    // SAFETY: rs holds n triplets (MPI contract).
    let r = unsafe { ranges(rs, n)? };
    // SAFETY: `out` is NULL or the C caller's writable group handle (MPI contract); `new_group`
    // refuses NULL.
    unsafe { new_group(out, group::range_excl(&base, r)?) }
}}

mpi_fn! { MPI_Group_free / PMPI_Group_free (g: *mut MPI_Group) target(Target::None) {
    let g = convert::out(g, "group")?;
    // SAFETY: checked non-null.
    let id = group_id(unsafe { *g })?;
    commops::group_free(id)?;
    // SAFETY: checked non-null.
    unsafe { *g = handles::MPI_GROUP_NULL };
    Ok(())
}}

mpi_fn! { MPI_Comm_group / PMPI_Comm_group (c: MPI_Comm, out: *mut MPI_Group) target(convert::target(c)) {
    let out = convert::out(out, "group")?;
    let id = commops::comm_group(comm(c)?)?;
    // SAFETY: `out` passed `convert::out` above and is the C caller's writable group handle (MPI
    // contract).
    unsafe { put_group(out, id) };
    Ok(())
}}

mpi_fn! { MPI_Comm_remote_group / PMPI_Comm_remote_group (c: MPI_Comm, out: *mut MPI_Group) target(convert::target(c)) {
    let out = convert::out(out, "group")?;
    let id = commops::comm_remote_group(comm(c)?)?;
    // SAFETY: `out` passed `convert::out` above and is the C caller's writable group handle (MPI
    // contract).
    unsafe { put_group(out, id) };
    Ok(())
}}
