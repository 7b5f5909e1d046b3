//! Datatype entry points: the constructors (MPI-1, MPI-2/3 and the MPI-4 large-count
//! `_c` forms), commit and free, layout queries (size, extent, bounds, true extent),
//! decoding (envelope, contents), names, addresses, and counting the elements of a
//! received message (`MPI_Get_elements`, `MPI_Status_set_elements`).
//!
//! Packing (`MPI_Pack`, `MPI_Unpack`, external32) lives in [`crate::pack`]. Every body
//! checks the C arguments, translates handles and calls `oxmpi_core::types`.

use crate::convert::{self, datatype, out};
use crate::count::CountWidth;
use crate::export::Target;
use crate::handles::{self, DatatypeRef, MPI_Aint, MPI_Count, MPI_Datatype, MPI_Status};
use crate::mpi_fn;
use oxmpi_core::types::{self, TypeId};
use oxmpi_core::{Error, ErrorClass, Result, UNDEFINED};
use oxmpi_datatype::fortran::F90;
use std::ffi::CStr;
use std::os::raw::{c_char, c_int};

/// The handle of a table entry.
pub fn handle_of(id: TypeId) -> MPI_Datatype {
    handles::datatype_handle(DatatypeRef::from_index(id))
}

fn check_count(what: &str, n: i64) -> Result<usize> {
    if n < 0 {
        return Err(Error::new(
            ErrorClass::Count,
            format!("invalid {what} {n} (must be >= 0)"),
        ));
    }
    usize::try_from(n)
        .map_err(|_| Error::new(ErrorClass::Count, format!("{what} {n} is too large")))
}

/// Reads a C array of `n` integers (`int`, `MPI_Aint` or `MPI_Count`) as `i64`.
///
/// # Safety
/// `p` must point to `n` readable values unless it is null (reported as an error).
unsafe fn array<T: Copy + Into<i64>>(p: *const T, n: usize, what: &str) -> Result<Vec<i64>> {
    if n == 0 {
        return Ok(Vec::new());
    }
    if p.is_null() {
        return Err(Error::new(
            ErrorClass::Arg,
            format!("null pointer for {what} with {n} entries"),
        ));
    }
    // SAFETY: per the contract `p` holds `n` values.
    let s = unsafe { std::slice::from_raw_parts(p, n) };
    Ok(s.iter().map(|&v| v.into()).collect())
}

/// Reads `n` datatype handles.
///
/// # Safety
/// As for [`array`].
unsafe fn type_array(p: *const MPI_Datatype, n: usize) -> Result<Vec<TypeId>> {
    // SAFETY: forwarded contract.
    let hs = unsafe { array(p, n, "array_of_types")? };
    hs.iter()
        .enumerate()
        .map(|(i, &h)| {
            datatype(h as MPI_Datatype)
                .map_err(|e| Error::new(e.class, format!("array_of_types[{i}]: {}", e.message)))
        })
        .collect()
}

/// Stores a new type's handle.
///
/// # Safety
/// `newtype` must be non-null (checked by the caller with `out`) and point to a writable
/// `MPI_Datatype`.
unsafe fn give(newtype: *mut MPI_Datatype, id: Result<TypeId>) -> Result<()> {
    let id = id?;
    // SAFETY: `newtype` is non-null and writable (this function's contract).
    unsafe { *newtype = handle_of(id) };
    Ok(())
}

/// Marks the type a large-count constructor just stored in `*newtype` (after `made`
/// succeeded), so that decoding it returns large counts.
///
/// # Safety
/// When `made` is `Ok`, `newtype` must point to the handle the constructor stored.
unsafe fn large_counts(made: Result<()>, newtype: *mut MPI_Datatype) -> Result<()> {
    made?;
    // SAFETY: the constructor succeeded, so `newtype` is non-null and holds its new handle
    // (this function's contract).
    let h = unsafe { *newtype };
    types::mark_large_counts(datatype(h)?)
}

fn to_int(v: i64, what: &str) -> Result<c_int> {
    c_int::try_from(v).map_err(|_| {
        Error::new(
            ErrorClass::Arg,
            format!("{what} {v} does not fit in an int (use the _c or _x form of the call)"),
        )
    })
}

// ----- constructors ---------------------------------------------------------------------

unsafe fn contiguous(n: i64, old: MPI_Datatype, newtype: *mut MPI_Datatype) -> Result<()> {
    let newtype = out(newtype, "newtype")?;
    let old = datatype(old)?;
    // SAFETY: `newtype` passed `out` above, and the C caller's output handle is writable (MPI
    // contract).
    unsafe { give(newtype, types::contiguous(n, old)) }
}

mpi_fn! { MPI_Type_contiguous / PMPI_Type_contiguous (n: c_int, old: MPI_Datatype, newtype: *mut MPI_Datatype) target(Target::None) {
    // SAFETY: `newtype` must point to a writable MPI_Datatype (MPI_Type_contiguous's contract;
    // `contiguous` refuses NULL before storing the new handle through it).
    unsafe { contiguous(n.into(), old, newtype) }
}}
mpi_fn! { MPI_Type_contiguous_c / PMPI_Type_contiguous_c (n: MPI_Count, old: MPI_Datatype, newtype: *mut MPI_Datatype) target(Target::None) {
    // SAFETY: `newtype` must point to a writable MPI_Datatype (MPI_Type_contiguous_c's
    // contract; `contiguous` refuses NULL before storing the new handle through it).
    // `large_counts` then marks the handle just stored there.
    unsafe { large_counts(contiguous(n, old, newtype), newtype) }
}}

unsafe fn vector(
    n: i64,
    bl: i64,
    stride: i64,
    bytes: bool,
    old: MPI_Datatype,
    newtype: *mut MPI_Datatype,
) -> Result<()> {
    let newtype = out(newtype, "newtype")?;
    let old = datatype(old)?;
    let id = if bytes {
        types::hvector(n, bl, stride, old)
    } else {
        types::vector(n, bl, stride, old)
    };
    // SAFETY: `newtype` passed `out` above, and the C caller's output handle is writable (MPI
    // contract).
    unsafe { give(newtype, id) }
}

mpi_fn! { MPI_Type_vector / PMPI_Type_vector (n: c_int, bl: c_int, stride: c_int, old: MPI_Datatype, newtype: *mut MPI_Datatype) target(Target::None) {
    // SAFETY: `newtype` must point to a writable MPI_Datatype (MPI_Type_vector's contract;
    // `vector` refuses NULL before storing the new handle through it).
    unsafe { vector(n.into(), bl.into(), stride.into(), false, old, newtype) }
}}
mpi_fn! { MPI_Type_vector_c / PMPI_Type_vector_c (n: MPI_Count, bl: MPI_Count, stride: MPI_Count, old: MPI_Datatype, newtype: *mut MPI_Datatype) target(Target::None) {
    // SAFETY: `newtype` must point to a writable MPI_Datatype (MPI_Type_vector_c's contract;
    // `vector` refuses NULL before storing the new handle through it).
    // `large_counts` then marks the handle just stored there.
    unsafe { large_counts(vector(n, bl, stride, false, old, newtype), newtype) }
}}
mpi_fn! { MPI_Type_create_hvector / PMPI_Type_create_hvector (n: c_int, bl: c_int, stride: MPI_Aint, old: MPI_Datatype, newtype: *mut MPI_Datatype) target(Target::None) {
    // SAFETY: `newtype` must point to a writable MPI_Datatype (MPI_Type_create_hvector's
    // contract; `vector` refuses NULL before storing the new handle through it).
    unsafe { vector(n.into(), bl.into(), stride, true, old, newtype) }
}}
mpi_fn! { MPI_Type_create_hvector_c / PMPI_Type_create_hvector_c (n: MPI_Count, bl: MPI_Count, stride: MPI_Count, old: MPI_Datatype, newtype: *mut MPI_Datatype) target(Target::None) {
    // SAFETY: `newtype` must point to a writable MPI_Datatype (MPI_Type_create_hvector_c's
    // contract; `vector` refuses NULL before storing the new handle through it).
    // `large_counts` then marks the handle just stored there.
    unsafe { large_counts(vector(n, bl, stride, true, old, newtype), newtype) }
}}
mpi_fn! { MPI_Type_hvector / PMPI_Type_hvector (n: c_int, bl: c_int, stride: MPI_Aint, old: MPI_Datatype, newtype: *mut MPI_Datatype) target(Target::None) {
    // SAFETY: `newtype` must point to a writable MPI_Datatype (MPI_Type_hvector's contract;
    // `vector` refuses NULL before storing the new handle through it).
    unsafe { vector(n.into(), bl.into(), stride, true, old, newtype) }
}}

/// The indexed family: `bls` None means every block has `bl` elements.
#[allow(clippy::too_many_arguments)]
unsafe fn indexed<B: Copy + Into<i64>, D: Copy + Into<i64>>(
    n: i64,
    bls: Option<*const B>,
    bl: i64,
    disps: *const D,
    bytes: bool,
    old: MPI_Datatype,
    newtype: *mut MPI_Datatype,
) -> Result<()> {
    let newtype = out(newtype, "newtype")?;
    let n = check_count("count", n)?;
    let old = datatype(old)?;
    // SAFETY: the caller's arrays hold `n` entries (MPI contract).
    let d = unsafe { array(disps, n, "array_of_displacements")? };
    let id = match bls {
        Some(p) => {
            // SAFETY: as above.
            let b = unsafe { array(p, n, "array_of_blocklengths")? };
            if bytes {
                types::hindexed(&b, &d, old)
            } else {
                types::indexed(&b, &d, old)
            }
        }
        None if bytes => types::hindexed_block(bl, &d, old),
        None => types::indexed_block(bl, &d, old),
    };
    // SAFETY: `newtype` passed `out` above, and the C caller's output handle is writable (MPI
    // contract).
    unsafe { give(newtype, id) }
}

mpi_fn! { MPI_Type_indexed / PMPI_Type_indexed (n: c_int, bls: *const c_int, disps: *const c_int, old: MPI_Datatype, newtype: *mut MPI_Datatype) target(Target::None) {
    // SAFETY: `newtype` must point to a writable MPI_Datatype (MPI_Type_indexed's contract;
    // `indexed` refuses NULL before storing the new handle through it), and `bls` and `disps`
    // must hold `n` entries each (`indexed` refuses NULL and a negative `n`).
    unsafe { indexed(n.into(), Some(bls), 0, disps, false, old, newtype) }
}}
mpi_fn! { MPI_Type_indexed_c / PMPI_Type_indexed_c (n: MPI_Count, bls: *const MPI_Count, disps: *const MPI_Count, old: MPI_Datatype, newtype: *mut MPI_Datatype) target(Target::None) {
    // SAFETY: `newtype` must point to a writable MPI_Datatype (MPI_Type_indexed_c's contract;
    // `indexed` refuses NULL before storing the new handle through it), and `bls` and `disps`
    // must hold `n` entries each (`indexed` refuses NULL and a negative `n`).
    // `large_counts` then marks the handle just stored there.
    unsafe { large_counts(indexed(n, Some(bls), 0, disps, false, old, newtype), newtype) }
}}
mpi_fn! { MPI_Type_create_hindexed / PMPI_Type_create_hindexed (n: c_int, bls: *const c_int, disps: *const MPI_Aint, old: MPI_Datatype, newtype: *mut MPI_Datatype) target(Target::None) {
    // SAFETY: `newtype` must point to a writable MPI_Datatype (MPI_Type_create_hindexed's
    // contract; `indexed` refuses NULL before storing the new handle through it), and `bls` and
    // `disps` must hold `n` entries each (`indexed` refuses NULL and a negative `n`).
    unsafe { indexed(n.into(), Some(bls), 0, disps, true, old, newtype) }
}}
mpi_fn! { MPI_Type_create_hindexed_c / PMPI_Type_create_hindexed_c (n: MPI_Count, bls: *const MPI_Count, disps: *const MPI_Count, old: MPI_Datatype, newtype: *mut MPI_Datatype) target(Target::None) {
    // SAFETY: `newtype` must point to a writable MPI_Datatype (MPI_Type_create_hindexed_c's
    // contract; `indexed` refuses NULL before storing the new handle through it), and `bls` and
    // `disps` must hold `n` entries each (`indexed` refuses NULL and a negative `n`).
    // `large_counts` then marks the handle just stored there.
    unsafe { large_counts(indexed(n, Some(bls), 0, disps, true, old, newtype), newtype) }
}}
mpi_fn! { MPI_Type_hindexed / PMPI_Type_hindexed (n: c_int, bls: *const c_int, disps: *const MPI_Aint, old: MPI_Datatype, newtype: *mut MPI_Datatype) target(Target::None) {
    // SAFETY: `newtype` must point to a writable MPI_Datatype (MPI_Type_hindexed's contract;
    // `indexed` refuses NULL before storing the new handle through it), and `bls` and `disps`
    // must hold `n` entries each (`indexed` refuses NULL and a negative `n`).
    unsafe { indexed(n.into(), Some(bls), 0, disps, true, old, newtype) }
}}
mpi_fn! { MPI_Type_create_indexed_block / PMPI_Type_create_indexed_block (n: c_int, bl: c_int, disps: *const c_int, old: MPI_Datatype, newtype: *mut MPI_Datatype) target(Target::None) {
    // SAFETY: `newtype` must point to a writable MPI_Datatype (MPI_Type_create_indexed_block's
    // contract; `indexed` refuses NULL before storing the new handle through it), and `disps`
    // must hold `n` entries (`indexed` refuses NULL and a negative `n`).
    unsafe { indexed::<c_int, c_int>(n.into(), None, bl.into(), disps, false, old, newtype) }
}}
mpi_fn! { MPI_Type_create_indexed_block_c / PMPI_Type_create_indexed_block_c (n: MPI_Count, bl: MPI_Count, disps: *const MPI_Count, old: MPI_Datatype, newtype: *mut MPI_Datatype) target(Target::None) {
    // SAFETY: `newtype` must point to a writable MPI_Datatype
    // (MPI_Type_create_indexed_block_c's contract; `indexed` refuses NULL before storing the
    // new handle through it), and `disps` must hold `n` entries (`indexed` refuses NULL and a
    // negative `n`).
    // `large_counts` then marks the handle just stored there.
    unsafe { large_counts(indexed::<MPI_Count, MPI_Count>(n, None, bl, disps, false, old, newtype), newtype) }
}}
mpi_fn! { MPI_Type_create_hindexed_block / PMPI_Type_create_hindexed_block (n: c_int, bl: c_int, disps: *const MPI_Aint, old: MPI_Datatype, newtype: *mut MPI_Datatype) target(Target::None) {
    // SAFETY: `newtype` must point to a writable MPI_Datatype (MPI_Type_create_hindexed_block's
    // contract; `indexed` refuses NULL before storing the new handle through it), and `disps`
    // must hold `n` entries (`indexed` refuses NULL and a negative `n`).
    unsafe { indexed::<c_int, MPI_Aint>(n.into(), None, bl.into(), disps, true, old, newtype) }
}}
mpi_fn! { MPI_Type_create_hindexed_block_c / PMPI_Type_create_hindexed_block_c (n: MPI_Count, bl: MPI_Count, disps: *const MPI_Count, old: MPI_Datatype, newtype: *mut MPI_Datatype) target(Target::None) {
    // SAFETY: `newtype` must point to a writable MPI_Datatype
    // (MPI_Type_create_hindexed_block_c's contract; `indexed` refuses NULL before storing the
    // new handle through it), and `disps` must hold `n` entries (`indexed` refuses NULL and a
    // negative `n`).
    // `large_counts` then marks the handle just stored there.
    unsafe { large_counts(indexed::<MPI_Count, MPI_Count>(n, None, bl, disps, true, old, newtype), newtype) }
}}

unsafe fn create_struct<B: Copy + Into<i64>, D: Copy + Into<i64>>(
    n: i64,
    bls: *const B,
    disps: *const D,
    tys: *const MPI_Datatype,
    newtype: *mut MPI_Datatype,
) -> Result<()> {
    let newtype = out(newtype, "newtype")?;
    let n = check_count("count", n)?;
    // SAFETY: the caller's arrays hold `n` entries (MPI contract).
    let (b, d, t) = unsafe {
        (
            array(bls, n, "array_of_blocklengths")?,
            array(disps, n, "array_of_displacements")?,
            type_array(tys, n)?,
        )
    };
    // SAFETY: `newtype` passed `out` above, and the C caller's output handle is writable (MPI
    // contract).
    unsafe { give(newtype, types::create_struct(&b, &d, &t)) }
}

mpi_fn! { MPI_Type_create_struct / PMPI_Type_create_struct (n: c_int, bls: *const c_int, disps: *const MPI_Aint, tys: *const MPI_Datatype, newtype: *mut MPI_Datatype) target(Target::None) {
    // SAFETY: `newtype` must point to a writable MPI_Datatype (MPI_Type_create_struct's
    // contract; `create_struct` refuses NULL before storing the new handle through it), and
    // `bls`, `disps` and `tys` must hold `n` entries each (`create_struct` refuses NULL and a
    // negative `n`).
    unsafe { create_struct(n.into(), bls, disps, tys, newtype) }
}}
mpi_fn! { MPI_Type_create_struct_c / PMPI_Type_create_struct_c (n: MPI_Count, bls: *const MPI_Count, disps: *const MPI_Count, tys: *const MPI_Datatype, newtype: *mut MPI_Datatype) target(Target::None) {
    // SAFETY: `newtype` must point to a writable MPI_Datatype (MPI_Type_create_struct_c's
    // contract; `create_struct` refuses NULL before storing the new handle through it), and
    // `bls`, `disps` and `tys` must hold `n` entries each (`create_struct` refuses NULL and a
    // negative `n`).
    // `large_counts` then marks the handle just stored there.
    unsafe { large_counts(create_struct(n, bls, disps, tys, newtype), newtype) }
}}
mpi_fn! { MPI_Type_struct / PMPI_Type_struct (n: c_int, bls: *const c_int, disps: *const MPI_Aint, tys: *const MPI_Datatype, newtype: *mut MPI_Datatype) target(Target::None) {
    // SAFETY: `newtype` must point to a writable MPI_Datatype (MPI_Type_struct's contract;
    // `create_struct` refuses NULL before storing the new handle through it), and `bls`,
    // `disps` and `tys` must hold `n` entries each (`create_struct` refuses NULL and a negative
    // `n`).
    unsafe { create_struct(n.into(), bls, disps, tys, newtype) }
}}

/// # Safety
/// `newtype` must be null (refused) or point to a writable `MPI_Datatype`.
unsafe fn resized(
    old: MPI_Datatype,
    lb: i64,
    extent: i64,
    newtype: *mut MPI_Datatype,
) -> Result<()> {
    let newtype = out(newtype, "newtype")?;
    let old = datatype(old)?;
    // SAFETY: `newtype` passed `out` above, and the C caller's output handle is writable (MPI
    // contract).
    unsafe { give(newtype, types::resized(old, lb, extent)) }
}

mpi_fn! { MPI_Type_create_resized / PMPI_Type_create_resized (old: MPI_Datatype, lb: MPI_Aint, extent: MPI_Aint, newtype: *mut MPI_Datatype) target(Target::None) {
    // SAFETY: `newtype` is NULL or the C caller's writable output handle (MPI contract); `resized`
    // refuses NULL.
    unsafe { resized(old, lb, extent, newtype) }
}}
mpi_fn! { MPI_Type_create_resized_c / PMPI_Type_create_resized_c (old: MPI_Datatype, lb: MPI_Count, extent: MPI_Count, newtype: *mut MPI_Datatype) target(Target::None) {
    // SAFETY: `newtype` is NULL or the C caller's writable output handle (MPI contract); `resized`
    // refuses NULL.
    // `large_counts` then marks the handle just stored there.
    unsafe { large_counts(resized(old, lb, extent, newtype), newtype) }
}}

fn check_ndims(ndims: c_int) -> Result<usize> {
    if ndims <= 0 {
        return Err(Error::new(
            ErrorClass::Dims,
            format!("invalid ndims {ndims} (must be positive)"),
        ));
    }
    Ok(ndims as usize)
}

#[allow(clippy::too_many_arguments)]
unsafe fn subarray<T: Copy + Into<i64>>(
    ndims: c_int,
    sizes: *const T,
    subsizes: *const T,
    starts: *const T,
    order: c_int,
    old: MPI_Datatype,
    newtype: *mut MPI_Datatype,
) -> Result<()> {
    let newtype = out(newtype, "newtype")?;
    let n = check_ndims(ndims)?;
    let old = datatype(old)?;
    // SAFETY: the caller's arrays hold `ndims` entries (MPI contract).
    let (a, b, c) = unsafe {
        (
            array(sizes, n, "array_of_sizes")?,
            array(subsizes, n, "array_of_subsizes")?,
            array(starts, n, "array_of_starts")?,
        )
    };
    // SAFETY: `newtype` passed `out` above, and the C caller's output handle is writable (MPI
    // contract).
    unsafe { give(newtype, types::subarray(&a, &b, &c, order, old)) }
}

mpi_fn! { MPI_Type_create_subarray / PMPI_Type_create_subarray (ndims: c_int, sizes: *const c_int, subsizes: *const c_int, starts: *const c_int, order: c_int, old: MPI_Datatype, newtype: *mut MPI_Datatype) target(Target::None) {
    // SAFETY: `newtype` must point to a writable MPI_Datatype (MPI_Type_create_subarray's
    // contract; `subarray` refuses NULL before storing the new handle through it), and the
    // three arrays must hold `ndims` entries each (`subarray` refuses NULL and `ndims` <= 0).
    unsafe { subarray(ndims, sizes, subsizes, starts, order, old, newtype) }
}}
mpi_fn! { MPI_Type_create_subarray_c / PMPI_Type_create_subarray_c (ndims: c_int, sizes: *const MPI_Count, subsizes: *const MPI_Count, starts: *const MPI_Count, order: c_int, old: MPI_Datatype, newtype: *mut MPI_Datatype) target(Target::None) {
    // SAFETY: `newtype` must point to a writable MPI_Datatype (MPI_Type_create_subarray_c's
    // contract; `subarray` refuses NULL before storing the new handle through it), and the
    // three arrays must hold `ndims` entries each (`subarray` refuses NULL and `ndims` <= 0).
    // `large_counts` then marks the handle just stored there.
    unsafe { large_counts(subarray(ndims, sizes, subsizes, starts, order, old, newtype), newtype) }
}}

#[allow(clippy::too_many_arguments)]
unsafe fn darray<G: Copy + Into<i64>>(
    size: c_int,
    rank: c_int,
    ndims: c_int,
    gsizes: *const G,
    distribs: *const c_int,
    dargs: *const c_int,
    psizes: *const c_int,
    order: c_int,
    old: MPI_Datatype,
    newtype: *mut MPI_Datatype,
) -> Result<()> {
    let newtype = out(newtype, "newtype")?;
    let n = check_ndims(ndims)?;
    let old = datatype(old)?;
    // SAFETY: the caller's arrays hold `ndims` entries (MPI contract).
    let (g, d, a, p) = unsafe {
        (
            array(gsizes, n, "array_of_gsizes")?,
            array(distribs, n, "array_of_distribs")?,
            array(dargs, n, "array_of_dargs")?,
            array(psizes, n, "array_of_psizes")?,
        )
    };
    let d: Vec<i32> = d.iter().map(|&v| v as i32).collect();
    // SAFETY: `newtype` passed `out` above, and the C caller's output handle is writable (MPI
    // contract).
    unsafe {
        give(
            newtype,
            types::darray(size.into(), rank.into(), &g, &d, &a, &p, order, old),
        )
    }
}

mpi_fn! { MPI_Type_create_darray / PMPI_Type_create_darray (size: c_int, rank: c_int, ndims: c_int, gsizes: *const c_int, distribs: *const c_int, dargs: *const c_int, psizes: *const c_int, order: c_int, old: MPI_Datatype, newtype: *mut MPI_Datatype) target(Target::None) {
    // SAFETY: `newtype` must point to a writable MPI_Datatype (MPI_Type_create_darray's
    // contract; `darray` refuses NULL before storing the new handle through it), and the four
    // arrays must hold `ndims` entries each (`darray` refuses NULL and `ndims` <= 0).
    unsafe { darray(size, rank, ndims, gsizes, distribs, dargs, psizes, order, old, newtype) }
}}
mpi_fn! { MPI_Type_create_darray_c / PMPI_Type_create_darray_c (size: c_int, rank: c_int, ndims: c_int, gsizes: *const MPI_Count, distribs: *const c_int, dargs: *const c_int, psizes: *const c_int, order: c_int, old: MPI_Datatype, newtype: *mut MPI_Datatype) target(Target::None) {
    // SAFETY: `newtype` must point to a writable MPI_Datatype (MPI_Type_create_darray_c's
    // contract; `darray` refuses NULL before storing the new handle through it), and the four
    // arrays must hold `ndims` entries each (`darray` refuses NULL and `ndims` <= 0).
    // `large_counts` then marks the handle just stored there.
    unsafe { large_counts(darray(size, rank, ndims, gsizes, distribs, dargs, psizes, order, old, newtype), newtype) }
}}

// ----- Fortran kinds and pair types ------------------------------------------------------

/// # Safety
/// `newtype` must be null (refused) or point to a writable `MPI_Datatype`.
unsafe fn f90(params: F90, newtype: *mut MPI_Datatype) -> Result<()> {
    let newtype = out(newtype, "newtype")?;
    // SAFETY: `newtype` passed `out` above, and the C caller's output handle is writable (MPI
    // contract).
    unsafe { give(newtype, types::f90(params)) }
}

mpi_fn! { MPI_Type_create_f90_integer / PMPI_Type_create_f90_integer (r: c_int, newtype: *mut MPI_Datatype) target(Target::None) {
    // SAFETY: `newtype` is NULL or the C caller's writable output handle (MPI contract); `f90`
    // refuses NULL.
    unsafe { f90(F90::Integer { r: r.into() }, newtype) }
}}
mpi_fn! { MPI_Type_create_f90_real / PMPI_Type_create_f90_real (p: c_int, r: c_int, newtype: *mut MPI_Datatype) target(Target::None) {
    // SAFETY: `newtype` is NULL or the C caller's writable output handle (MPI contract); `f90`
    // refuses NULL.
    unsafe { f90(F90::Real { p: p.into(), r: r.into() }, newtype) }
}}
mpi_fn! { MPI_Type_create_f90_complex / PMPI_Type_create_f90_complex (p: c_int, r: c_int, newtype: *mut MPI_Datatype) target(Target::None) {
    // SAFETY: `newtype` is NULL or the C caller's writable output handle (MPI contract); `f90`
    // refuses NULL.
    unsafe { f90(F90::Complex { p: p.into(), r: r.into() }, newtype) }
}}

mpi_fn! { MPI_Type_match_size / PMPI_Type_match_size (typeclass: c_int, size: c_int, dt: *mut MPI_Datatype) target(Target::None) {
    let id = types::match_size(typeclass, size.into())?;
    // SAFETY: `dt` is the C caller's output argument: NULL (refused by `put`) or writable (MPI
    // contract).
    unsafe { put(dt, "datatype", handle_of(id)) }
}}

mpi_fn! { MPI_Type_get_value_index / PMPI_Type_get_value_index (value: MPI_Datatype, index: MPI_Datatype, pair: *mut MPI_Datatype) target(Target::None) {
    let pair = out(pair, "pair_type")?;
    let found = types::value_index(datatype(value)?, datatype(index)?)?;
    // SAFETY: checked non-null; the caller provides a writable handle.
    unsafe { *pair = found.map_or(handles::MPI_DATATYPE_NULL, handle_of) };
    Ok(())
}}

mpi_fn! { MPI_Type_dup / PMPI_Type_dup (old: MPI_Datatype, newtype: *mut MPI_Datatype) target(Target::None) {
    let newtype = out(newtype, "newtype")?;
    let old = datatype(old)?;
    // SAFETY: `newtype` passed `out` above, and the C caller's output handle is writable (MPI
    // contract).
    unsafe { give(newtype, types::dup(old)) }
}}

// ----- commit and free ----------------------------------------------------------------

/// # Safety
/// `p` must be null (refused) or point to a readable, writable `MPI_Datatype`.
unsafe fn handle_arg(p: *mut MPI_Datatype) -> Result<(*mut MPI_Datatype, TypeId)> {
    let p = out(p, "datatype")?;
    // SAFETY: checked non-null; the caller passes the address of a handle.
    let h = unsafe { *p };
    Ok((p, datatype(h)?))
}

mpi_fn! { MPI_Type_commit / PMPI_Type_commit (dt: *mut MPI_Datatype) target(Target::None) {
    // SAFETY: `dt` is NULL or the address of the C caller's handle (MPI contract); `handle_arg`
    // refuses NULL.
    let (_, id) = unsafe { handle_arg(dt)? };
    types::commit(id)
}}

mpi_fn! { MPI_Type_free / PMPI_Type_free (dt: *mut MPI_Datatype) target(Target::None) {
    // SAFETY: `dt` is NULL or the address of the C caller's handle (MPI contract); `handle_arg`
    // refuses NULL.
    let (p, id) = unsafe { handle_arg(dt)? };
    types::free(id)?;
    // SAFETY: checked by handle_arg.
    unsafe { *p = handles::MPI_DATATYPE_NULL };
    Ok(())
}}

// ----- queries --------------------------------------------------------------------------

fn info(dt: MPI_Datatype) -> Result<types::TypeInfo> {
    types::info(datatype(dt)?)
}

/// Writes one output value after checking the pointer.
///
/// # Safety
/// `p` must be null (refused) or point to a writable `T`.
unsafe fn put<T>(p: *mut T, what: &str, v: T) -> Result<()> {
    let p = out(p, what)?;
    // SAFETY: checked non-null; the caller provides writable storage.
    unsafe { *p = v };
    Ok(())
}

/// Writes two output values (both pointers checked first).
///
/// # Safety
/// `p` and `q` must each be null (refused) or point to a writable `T` / `U`.
unsafe fn put2<T, U>(p: *mut T, pn: &str, v: T, q: *mut U, qn: &str, w: U) -> Result<()> {
    let p = out(p, pn)?;
    let q = out(q, qn)?;
    // SAFETY: both checked non-null; the caller provides writable storage.
    unsafe {
        *p = v;
        *q = w;
    }
    Ok(())
}

mpi_fn! { MPI_Type_size / PMPI_Type_size (dt: MPI_Datatype, size: *mut c_int) target(Target::None) {
    let s = info(dt)?.size;
    // SAFETY: `size` is the C caller's output argument: NULL (refused by `put`) or writable (MPI
    // contract).
    unsafe { put(size, "size", c_int::try_from(s).unwrap_or(UNDEFINED)) }
}}
mpi_fn! { MPI_Type_size_x / PMPI_Type_size_x (dt: MPI_Datatype, size: *mut MPI_Count) target(Target::None) {
    // SAFETY: `size` is the C caller's output argument: NULL (refused by `put`) or writable (MPI
    // contract).
    unsafe { put(size, "size", info(dt)?.size as MPI_Count) }
}}
mpi_fn! { MPI_Type_size_c / PMPI_Type_size_c (dt: MPI_Datatype, size: *mut MPI_Count) target(Target::None) {
    // SAFETY: `size` is the C caller's output argument: NULL (refused by `put`) or writable (MPI
    // contract).
    unsafe { put(size, "size", info(dt)?.size as MPI_Count) }
}}

/// # Safety
/// `lb` and `ext` must each be null (refused) or point to a writable `i64`.
unsafe fn extent(dt: MPI_Datatype, lb: *mut i64, ext: *mut i64) -> Result<()> {
    let t = info(dt)?;
    // SAFETY: `lb` and `ext` are NULL or writable (this function's contract); `put2` refuses NULL.
    unsafe { put2(lb, "lb", t.lb as i64, ext, "extent", t.signed_extent as i64) }
}

mpi_fn! { MPI_Type_get_extent / PMPI_Type_get_extent (dt: MPI_Datatype, lb: *mut MPI_Aint, ext: *mut MPI_Aint) target(Target::None) {
    // SAFETY: `lb` and `ext` are NULL or the C caller's writable outputs (MPI contract); `extent`
    // refuses NULL.
    unsafe { extent(dt, lb, ext) }
}}
mpi_fn! { MPI_Type_get_extent_x / PMPI_Type_get_extent_x (dt: MPI_Datatype, lb: *mut MPI_Count, ext: *mut MPI_Count) target(Target::None) {
    // SAFETY: `lb` and `ext` are NULL or the C caller's writable outputs (MPI contract); `extent`
    // refuses NULL.
    unsafe { extent(dt, lb, ext) }
}}
mpi_fn! { MPI_Type_get_extent_c / PMPI_Type_get_extent_c (dt: MPI_Datatype, lb: *mut MPI_Count, ext: *mut MPI_Count) target(Target::None) {
    // SAFETY: `lb` and `ext` are NULL or the C caller's writable outputs (MPI contract); `extent`
    // refuses NULL.
    unsafe { extent(dt, lb, ext) }
}}

/// # Safety
/// `lb` and `ext` must each be null (refused) or point to a writable `i64`.
unsafe fn true_extent(dt: MPI_Datatype, lb: *mut i64, ext: *mut i64) -> Result<()> {
    let t = info(dt)?;
    let d = t.datatype();
    // SAFETY: `lb` and `ext` are NULL or writable (this function's contract); `put2` refuses NULL.
    unsafe {
        put2(
            lb,
            "true_lb",
            d.true_lb() as i64,
            ext,
            "true_extent",
            d.true_extent() as i64,
        )
    }
}

mpi_fn! { MPI_Type_get_true_extent / PMPI_Type_get_true_extent (dt: MPI_Datatype, lb: *mut MPI_Aint, ext: *mut MPI_Aint) target(Target::None) {
    // SAFETY: `lb` and `ext` are NULL or the C caller's writable outputs (MPI contract);
    // `true_extent` refuses NULL.
    unsafe { true_extent(dt, lb, ext) }
}}
mpi_fn! { MPI_Type_get_true_extent_x / PMPI_Type_get_true_extent_x (dt: MPI_Datatype, lb: *mut MPI_Count, ext: *mut MPI_Count) target(Target::None) {
    // SAFETY: `lb` and `ext` are NULL or the C caller's writable outputs (MPI contract);
    // `true_extent` refuses NULL.
    unsafe { true_extent(dt, lb, ext) }
}}
mpi_fn! { MPI_Type_get_true_extent_c / PMPI_Type_get_true_extent_c (dt: MPI_Datatype, lb: *mut MPI_Count, ext: *mut MPI_Count) target(Target::None) {
    // SAFETY: `lb` and `ext` are NULL or the C caller's writable outputs (MPI contract);
    // `true_extent` refuses NULL.
    unsafe { true_extent(dt, lb, ext) }
}}

mpi_fn! { MPI_Type_extent / PMPI_Type_extent (dt: MPI_Datatype, ext: *mut MPI_Aint) target(Target::None) {
    // SAFETY: `ext` is the C caller's output argument: NULL (refused by `put`) or writable (MPI
    // contract).
    unsafe { put(ext, "extent", info(dt)?.signed_extent as MPI_Aint) }
}}
mpi_fn! { MPI_Type_lb / PMPI_Type_lb (dt: MPI_Datatype, disp: *mut MPI_Aint) target(Target::None) {
    // SAFETY: `disp` is the C caller's output argument: NULL (refused by `put`) or writable (MPI
    // contract).
    unsafe { put(disp, "displacement", info(dt)?.lb as MPI_Aint) }
}}
mpi_fn! { MPI_Type_ub / PMPI_Type_ub (dt: MPI_Datatype, disp: *mut MPI_Aint) target(Target::None) {
    let t = info(dt)?;
    // SAFETY: `disp` is the C caller's output argument: NULL (refused by `put`) or writable (MPI
    // contract).
    unsafe { put(disp, "displacement", t.datatype().ub() as MPI_Aint) }
}}

// ----- decoding ---------------------------------------------------------------------------

// The counts a decoding call returns are `int` in the MPI-2 forms and `MPI_Count` in the
// `_c` forms, written through `crate::count::CountWidth` (shared with the _c calls that
// take counts).

/// `MPI_Type_get_envelope` (`nl` is `None`: a type made by a large-count constructor
/// cannot be described without large counts) and `MPI_Type_get_envelope_c`.
///
/// # Safety
/// Each pointer must be null (refused) or point to writable storage.
unsafe fn envelope<T: CountWidth>(
    dt: MPI_Datatype,
    ni: *mut T,
    na: *mut T,
    nl: Option<*mut T>,
    nd: *mut T,
    combiner: *mut c_int,
) -> Result<()> {
    let (ni, na, nd) = (
        out(ni, "num_integers")?,
        out(na, "num_addresses")?,
        out(nd, "num_datatypes")?,
    );
    let nl = nl.map(|p| out(p, "num_large_counts")).transpose()?;
    let combiner = out(combiner, "combiner")?;
    let e = types::envelope(datatype(dt)?)?;
    if nl.is_none() && e.num_large_counts > 0 {
        return Err(Error::new(
            ErrorClass::Type,
            format!(
                "the datatype was made by a large-count constructor ({} large counts): decode it with MPI_Type_get_envelope_c",
                e.num_large_counts
            ),
        ));
    }
    let ints = T::from_count(e.num_integers as i64, "num_integers")?;
    let addrs = T::from_count(e.num_addresses as i64, "num_addresses")?;
    let large = T::from_count(e.num_large_counts as i64, "num_large_counts")?;
    let tys = T::from_count(e.num_datatypes as i64, "num_datatypes")?;
    // SAFETY: every pointer was checked non-null, and the caller provides writable storage
    // (this function's contract).
    unsafe {
        *ni = ints;
        *na = addrs;
        if let Some(nl) = nl {
            *nl = large;
        }
        *nd = tys;
        *combiner = e.combiner.combiner_mpich_value();
    }
    Ok(())
}

mpi_fn! { MPI_Type_get_envelope / PMPI_Type_get_envelope (dt: MPI_Datatype, ni: *mut c_int, na: *mut c_int, nd: *mut c_int, combiner: *mut c_int) target(Target::None) {
    // SAFETY: the four outputs are NULL or the C caller's writable variables (MPI contract);
    // `envelope` refuses NULL.
    unsafe { envelope(dt, ni, na, None, nd, combiner) }
}}
mpi_fn! { MPI_Type_get_envelope_c / PMPI_Type_get_envelope_c (dt: MPI_Datatype, ni: *mut MPI_Count, na: *mut MPI_Count, nl: *mut MPI_Count, nd: *mut MPI_Count, combiner: *mut c_int) target(Target::None) {
    // SAFETY: the five outputs are NULL or the C caller's writable variables (MPI contract);
    // `envelope` refuses NULL.
    unsafe { envelope(dt, ni, na, Some(nl), nd, combiner) }
}}

/// `MPI_Type_get_contents` (`large` is `None`) and `MPI_Type_get_contents_c`.
///
/// # Safety
/// Each array must be null or hold as many writable entries as its `max_*` says.
#[allow(clippy::too_many_arguments)]
unsafe fn contents(
    call: &str,
    dt: MPI_Datatype,
    max: [i64; 4],
    ints: *mut c_int,
    addrs: *mut MPI_Aint,
    large: Option<*mut MPI_Count>,
    tys: *mut MPI_Datatype,
) -> Result<()> {
    let id = datatype(dt)?;
    let max = types::ContentsMax {
        integers: check_count("max_integers", max[0])?,
        addresses: check_count("max_addresses", max[1])?,
        large_counts: check_count("max_large_counts", max[2])?,
        datatypes: check_count("max_datatypes", max[3])?,
    };
    let e = types::envelope(id)?;
    if large.is_none() && e.num_large_counts > 0 {
        return Err(Error::new(
            ErrorClass::Type,
            format!(
                "the datatype was made by a large-count constructor ({} large counts): decode it with MPI_Type_get_contents_c",
                e.num_large_counts
            ),
        ));
    }
    let large = large.unwrap_or(std::ptr::null_mut());
    for (p, n, what) in [
        (ints.is_null(), e.num_integers, "array_of_integers"),
        (addrs.is_null(), e.num_addresses, "array_of_addresses"),
        (large.is_null(), e.num_large_counts, "array_of_large_counts"),
        (tys.is_null(), e.num_datatypes, "array_of_datatypes"),
    ] {
        if p && n > 0 {
            return Err(Error::new(
                ErrorClass::Arg,
                format!("null pointer for {what} ({n} entries needed)"),
            ));
        }
    }
    // Check that the integers fit before creating the returned types.
    if let Some(c) = oxmpi_core::runtime::with(|rt| Ok(rt.types.get(id)?.datatype().contents()))? {
        for (i, &v) in c.integers.iter().enumerate() {
            to_int(v, &format!("array_of_integers[{i}]"))?;
        }
    }
    let c = types::contents(id, max, call)?;
    // SAFETY: each array holds max_* >= the envelope's counts entries (checked by the
    // engine against max_*); null only when nothing is written to it.
    unsafe {
        for (i, &v) in c.integers.iter().enumerate() {
            *ints.add(i) = v as c_int;
        }
        for (i, &v) in c.addresses.iter().enumerate() {
            *addrs.add(i) = v as MPI_Aint;
        }
        for (i, &v) in c.large_counts.iter().enumerate() {
            *large.add(i) = v as MPI_Count;
        }
        for (i, &t) in c.datatypes.iter().enumerate() {
            *tys.add(i) = handle_of(t);
        }
    }
    Ok(())
}

mpi_fn! { MPI_Type_get_contents / PMPI_Type_get_contents (dt: MPI_Datatype, max_i: c_int, max_a: c_int, max_d: c_int, ints: *mut c_int, addrs: *mut MPI_Aint, tys: *mut MPI_Datatype) target(Target::None) {
    // SAFETY: the arrays are NULL or hold max_* writable entries (MPI contract); `contents`
    // refuses NULL where it has something to write.
    unsafe { contents("MPI_Type_get_contents", dt, [max_i.into(), max_a.into(), 0, max_d.into()], ints, addrs, None, tys) }
}}
mpi_fn! { MPI_Type_get_contents_c / PMPI_Type_get_contents_c (dt: MPI_Datatype, max_i: MPI_Count, max_a: MPI_Count, max_l: MPI_Count, max_d: MPI_Count, ints: *mut c_int, addrs: *mut MPI_Aint, large: *mut MPI_Count, tys: *mut MPI_Datatype) target(Target::None) {
    // SAFETY: the arrays are NULL or hold max_* writable entries (MPI contract); `contents`
    // refuses NULL where it has something to write.
    unsafe { contents("MPI_Type_get_contents_c", dt, [max_i, max_a, max_l, max_d], ints, addrs, Some(large), tys) }
}}

// ----- names ----------------------------------------------------------------------------

mpi_fn! { MPI_Type_set_name / PMPI_Type_set_name (dt: MPI_Datatype, name: *const c_char) target(Target::None) {
    let id = datatype(dt)?;
    if name.is_null() {
        return Err(Error::new(ErrorClass::Arg, "null pointer for type_name"));
    }
    // SAFETY: a NUL-terminated string (MPI contract).
    let s = unsafe { CStr::from_ptr(name) }.to_string_lossy();
    types::set_name(id, &s)
}}

mpi_fn! { MPI_Type_get_name / PMPI_Type_get_name (dt: MPI_Datatype, name: *mut c_char, len: *mut c_int) target(Target::None) {
    // The null handle is a predefined object with a predefined name (MPI 4.1 section 7.8).
    if dt == handles::MPI_DATATYPE_NULL {
        return convert::write_name("MPI_DATATYPE_NULL", types::MAX_NAME_BYTES, name, len, "type_name");
    }
    let id = datatype(dt)?;
    let s = types::name(id)?;
    convert::write_name(&s, types::MAX_NAME_BYTES, name, len, "type_name")
}}

// ----- addresses ------------------------------------------------------------------------

mpi_fn! { MPI_Get_address / PMPI_Get_address (location: *const std::ffi::c_void, address: *mut MPI_Aint) target(Target::None) {
    // SAFETY: `address` is the C caller's output argument: NULL (refused by `put`) or writable (MPI
    // contract).
    unsafe { put(address, "address", location as MPI_Aint) }
}}
mpi_fn! { MPI_Address / PMPI_Address (location: *const std::ffi::c_void, address: *mut MPI_Aint) target(Target::None) {
    // SAFETY: `address` is the C caller's output argument: NULL (refused by `put`) or writable (MPI
    // contract).
    unsafe { put(address, "address", location as MPI_Aint) }
}}

/// `PMPI_Aint_add`: `base + disp` (wrapping, as address arithmetic in C).
#[no_mangle]
pub extern "C" fn PMPI_Aint_add(base: MPI_Aint, disp: MPI_Aint) -> MPI_Aint {
    base.wrapping_add(disp)
}

/// `MPI_Aint_add`.
#[no_mangle]
pub extern "C" fn MPI_Aint_add(base: MPI_Aint, disp: MPI_Aint) -> MPI_Aint {
    PMPI_Aint_add(base, disp)
}

/// `PMPI_Aint_diff`: `addr1 - addr2` (wrapping).
#[no_mangle]
pub extern "C" fn PMPI_Aint_diff(addr1: MPI_Aint, addr2: MPI_Aint) -> MPI_Aint {
    addr1.wrapping_sub(addr2)
}

/// `MPI_Aint_diff`.
#[no_mangle]
pub extern "C" fn MPI_Aint_diff(addr1: MPI_Aint, addr2: MPI_Aint) -> MPI_Aint {
    PMPI_Aint_diff(addr1, addr2)
}

// ----- counting elements of a status -------------------------------------------------------

/// # Safety
/// `st` must be null or `MPI_STATUS_IGNORE` (both refused) or point to a readable
/// `MPI_Status` that outlives every use of the returned reference.
unsafe fn status_in(st: *const MPI_Status) -> Result<&'static MPI_Status> {
    if st.is_null() || st as usize == convert::STATUS_IGNORE {
        return Err(Error::new(
            ErrorClass::Arg,
            "status must be a real status, not null or MPI_STATUS_IGNORE",
        ));
    }
    // SAFETY: checked to be a real status pointer (MPI contract); used only during the call.
    Ok(unsafe { &*st })
}

/// `MPI_Get_count` (`elements` false) and `MPI_Get_elements` (true) in every width.
///
/// # Safety
/// `st` as for [`status_in`]; `count` must be null (refused) or point to a writable `T`.
unsafe fn status_count<T: CountWidth>(
    st: *const MPI_Status,
    dt: MPI_Datatype,
    count: *mut T,
    elements: bool,
) -> Result<()> {
    let count = out(count, "count")?;
    // SAFETY: `st` is NULL, MPI_STATUS_IGNORE or a readable status (this function's
    // contract); `status_in` refuses the first two.
    let st = unsafe { status_in(st)? };
    let (id, bytes) = (datatype(dt)?, convert::get_count(st));
    let n = if elements {
        types::elements_in(id, bytes)?
    } else {
        types::count_in(id, bytes)?
    };
    // SAFETY: checked non-null; the caller provides a writable `T`.
    unsafe { *count = T::or_undefined(n) };
    Ok(())
}

// `MPI_Get_count` itself lives with the point-to-point calls (`crate::p2p`).
mpi_fn! { MPI_Get_count_c / PMPI_Get_count_c (st: *const MPI_Status, dt: MPI_Datatype, count: *mut MPI_Count) target(Target::None) {
    // SAFETY: `st` is NULL, MPI_STATUS_IGNORE or a readable status, `count` NULL or writable (MPI
    // contract); both are checked inside.
    unsafe { status_count(st, dt, count, false) }
}}
mpi_fn! { MPI_Get_elements / PMPI_Get_elements (st: *const MPI_Status, dt: MPI_Datatype, count: *mut c_int) target(Target::None) {
    // SAFETY: `st` is NULL, MPI_STATUS_IGNORE or a readable status, `count` NULL or writable (MPI
    // contract); both are checked inside.
    unsafe { status_count(st, dt, count, true) }
}}
mpi_fn! { MPI_Get_elements_x / PMPI_Get_elements_x (st: *const MPI_Status, dt: MPI_Datatype, count: *mut MPI_Count) target(Target::None) {
    // SAFETY: `st` is NULL, MPI_STATUS_IGNORE or a readable status, `count` NULL or writable (MPI
    // contract); both are checked inside.
    unsafe { status_count(st, dt, count, true) }
}}
mpi_fn! { MPI_Get_elements_c / PMPI_Get_elements_c (st: *const MPI_Status, dt: MPI_Datatype, count: *mut MPI_Count) target(Target::None) {
    // SAFETY: `st` is NULL, MPI_STATUS_IGNORE or a readable status, `count` NULL or writable (MPI
    // contract); both are checked inside.
    unsafe { status_count(st, dt, count, true) }
}}

/// # Safety
/// `st` must be null or `MPI_STATUS_IGNORE` (both refused) or point to a readable, writable
/// `MPI_Status`.
unsafe fn set_elements(st: *mut MPI_Status, dt: MPI_Datatype, n: i64) -> Result<()> {
    let st = out(st, "status")?;
    if st as usize == convert::STATUS_IGNORE {
        return Err(Error::new(
            ErrorClass::Arg,
            "status must be a real status, not MPI_STATUS_IGNORE",
        ));
    }
    let n = check_count("count", n)?;
    let bytes = types::status_bytes_for_elements(datatype(dt)?, n as u64)?;
    if bytes >> 63 != 0 {
        return Err(Error::new(
            ErrorClass::Count,
            format!("{n} elements do not fit in a status"),
        ));
    }
    // SAFETY: a real, writable status (checked above, MPI contract).
    let st = unsafe { &mut *st };
    convert::set_count(st, bytes, convert::is_cancelled(st));
    Ok(())
}

mpi_fn! { MPI_Status_set_elements / PMPI_Status_set_elements (st: *mut MPI_Status, dt: MPI_Datatype, n: c_int) target(Target::None) {
    // SAFETY: `st` is NULL, MPI_STATUS_IGNORE or the C caller's writable status (MPI contract);
    // `set_elements` refuses the first two.
    unsafe { set_elements(st, dt, n.into()) }
}}
mpi_fn! { MPI_Status_set_elements_x / PMPI_Status_set_elements_x (st: *mut MPI_Status, dt: MPI_Datatype, n: MPI_Count) target(Target::None) {
    // SAFETY: `st` is NULL, MPI_STATUS_IGNORE or the C caller's writable status (MPI contract);
    // `set_elements` refuses the first two.
    unsafe { set_elements(st, dt, n) }
}}
mpi_fn! { MPI_Status_set_elements_c / PMPI_Status_set_elements_c (st: *mut MPI_Status, dt: MPI_Datatype, n: MPI_Count) target(Target::None) {
    // SAFETY: `st` is NULL, MPI_STATUS_IGNORE or the C caller's writable status (MPI contract);
    // `set_elements` refuses the first two.
    unsafe { set_elements(st, dt, n) }
}}
