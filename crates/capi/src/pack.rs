//! Packing entry points: `MPI_Pack` / `MPI_Unpack` (the native representation) and
//! `MPI_Pack_external` / `MPI_Unpack_external` / `MPI_Pack_external_size`
//! ("external32"), with their large-count `_c` forms. The C buffers become slices
//! here; counts, positions, truncation and the conversions are the engine's.

use crate::convert::{self, datatype, out};
use crate::export::Target;
use crate::handles::{MPI_Aint, MPI_Comm, MPI_Count, MPI_Datatype};
use crate::mpi_fn;
use oxmpi_core::types;
use oxmpi_core::{Error, ErrorClass, Result};
use std::ffi::{c_void, CStr};
use std::os::raw::{c_char, c_int};

/// A C buffer of `size` bytes as a slice (empty for size 0, whatever the pointer).
///
/// # Safety
/// Unless null, `p` must be valid for `size` bytes for the duration of the call.
unsafe fn bytes<'a>(p: *const c_void, size: i64, what: &str) -> Result<&'a [u8]> {
    let size = check_size(size, what)?;
    if size == 0 {
        return Ok(&[]);
    }
    if p.is_null() {
        return Err(Error::new(
            ErrorClass::Buffer,
            format!("null {what} buffer of {size} bytes"),
        ));
    }
    // SAFETY: `p` is non-null (checked) and, per this function's contract, valid for reads of
    // `size` bytes while the slice lives (the MPI call); bytes have no alignment needs.
    Ok(unsafe { std::slice::from_raw_parts(p as *const u8, size) })
}

/// As [`bytes`], writable.
///
/// # Safety
/// As for [`bytes`], for writes; no other reference to the buffer may exist.
unsafe fn bytes_mut<'a>(p: *mut c_void, size: i64, what: &str) -> Result<&'a mut [u8]> {
    let size = check_size(size, what)?;
    if size == 0 {
        return Ok(&mut []);
    }
    if p.is_null() {
        return Err(Error::new(
            ErrorClass::Buffer,
            format!("null {what} buffer of {size} bytes"),
        ));
    }
    // SAFETY: `p` is non-null (checked) and, per this function's contract, valid for writes of
    // `size` bytes with no other reference to them while the slice lives (the MPI call).
    Ok(unsafe { std::slice::from_raw_parts_mut(p as *mut u8, size) })
}

fn check_size(size: i64, what: &str) -> Result<usize> {
    usize::try_from(size).map_err(|_| {
        Error::new(
            ErrorClass::Arg,
            format!("invalid {what}size {size} (must be >= 0)"),
        )
    })
}

/// Reads a position argument (an `int`, `MPI_Aint` or `MPI_Count` in/out value).
///
/// # Safety
/// `p` must be null or point to a readable value.
unsafe fn position<T: Copy + Into<i64>>(p: *mut T) -> Result<(*mut T, usize)> {
    let p = out(p, "position")?;
    // SAFETY: checked non-null; per this function's contract a non-null `p` points to a
    // readable, initialised `T` (the caller's position argument).
    let v: i64 = unsafe { *p }.into();
    let v = usize::try_from(v).map_err(|_| {
        Error::new(
            ErrorClass::Arg,
            format!("invalid position {v} (must be >= 0)"),
        )
    })?;
    Ok((p, v))
}

/// # Safety
/// `p` must be null (refused) or point to a NUL-terminated string.
unsafe fn datarep(p: *const c_char) -> Result<String> {
    if p.is_null() {
        return Err(Error::new(ErrorClass::Arg, "null pointer for datarep"));
    }
    // SAFETY: a NUL-terminated string (MPI contract).
    Ok(unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
}

/// `MPI_Pack` and `MPI_Pack_c`: `T` is the type of `position` (`int` / `MPI_Count`).
///
/// # Safety
/// Those of `MPI_Pack`: unless NULL, `inbuf` holds `incount` elements of `dt`, `outbuf` is
/// `outsize` writable bytes apart from `inbuf`, and `pos` points to a readable, writable `T`.
#[allow(clippy::too_many_arguments)]
unsafe fn pack<T: Copy + Into<i64> + TryFrom<usize>>(
    inbuf: *const c_void,
    incount: i64,
    dt: MPI_Datatype,
    outbuf: *mut c_void,
    outsize: i64,
    pos: *mut T,
    c: MPI_Comm,
) -> Result<()> {
    convert::not_in_place(inbuf, "inbuf")?;
    convert::not_in_place(outbuf, "outbuf")?;
    convert::live_comm(c)?;
    let id = datatype(dt)?;
    // SAFETY: per this function's contract `pos` is NULL or a readable position.
    let (pos, at) = unsafe { position(pos)? };
    // SAFETY: per this function's contract `outbuf` is `outsize` writable bytes, apart from
    // `inbuf`; `bytes_mut` refuses NULL and a negative size.
    let out = unsafe { bytes_mut(outbuf, outsize, "out")? };
    // SAFETY: `inbuf` holds `incount` elements (MPI contract).
    let end = unsafe { types::pack(inbuf as *const u8, incount, id, out, at)? };
    // SAFETY: `pos` came back from `position`, which refused NULL, and is the C caller's writable
    // position (MPI contract).
    unsafe { store_position(pos, end) }
}

/// # Safety
/// `pos` must be non-null and point to a writable `T` (this function does not check; the
/// callers got it from `position`, which refuses NULL).
unsafe fn store_position<T: TryFrom<usize>>(pos: *mut T, end: usize) -> Result<()> {
    let v = T::try_from(end).map_err(|_| {
        Error::new(
            ErrorClass::Count,
            format!("position {end} does not fit the position argument"),
        )
    })?;
    // SAFETY: `pos` is non-null and writable (this function's contract).
    unsafe { *pos = v };
    Ok(())
}

mpi_fn! { MPI_Pack / PMPI_Pack (inbuf: *const c_void, incount: c_int, dt: MPI_Datatype, outbuf: *mut c_void, outsize: c_int, pos: *mut c_int, c: MPI_Comm) target(convert::target(c)) {
    // SAFETY: MPI_Pack's contract: `inbuf` holds `incount` elements of `dt`, `outbuf` is
    // `outsize` writable bytes apart from `inbuf`, and `pos` points to a readable, writable
    // int; `pack` refuses NULL where a size is non-zero.
    unsafe { pack(inbuf, incount.into(), dt, outbuf, outsize.into(), pos, c) }
}}
mpi_fn! { MPI_Pack_c / PMPI_Pack_c (inbuf: *const c_void, incount: MPI_Count, dt: MPI_Datatype, outbuf: *mut c_void, outsize: MPI_Count, pos: *mut MPI_Count, c: MPI_Comm) target(convert::target(c)) {
    // SAFETY: MPI_Pack_c's contract: `inbuf` holds `incount` elements of `dt`, `outbuf` is
    // `outsize` writable bytes apart from `inbuf`, and `pos` points to a readable, writable
    // MPI_Count; `pack` refuses NULL where a size is non-zero.
    unsafe { pack(inbuf, incount, dt, outbuf, outsize, pos, c) }
}}

/// `MPI_Unpack` and `MPI_Unpack_c`.
///
/// # Safety
/// Those of `MPI_Unpack`: unless NULL, `inbuf` is `insize` readable bytes, `outbuf` holds
/// `outcount` elements of `dt` apart from `inbuf`, and `pos` points to a readable, writable `T`.
#[allow(clippy::too_many_arguments)]
unsafe fn unpack<T: Copy + Into<i64> + TryFrom<usize>>(
    inbuf: *const c_void,
    insize: i64,
    pos: *mut T,
    outbuf: *mut c_void,
    outcount: i64,
    dt: MPI_Datatype,
    c: MPI_Comm,
) -> Result<()> {
    convert::not_in_place(inbuf, "inbuf")?;
    convert::not_in_place(outbuf, "outbuf")?;
    convert::live_comm(c)?;
    let id = datatype(dt)?;
    // SAFETY: per this function's contract `pos` is NULL or a readable position.
    let (pos, at) = unsafe { position(pos)? };
    // SAFETY: per this function's contract `inbuf` is `insize` readable bytes; `bytes`
    // refuses NULL and a negative size.
    let input = unsafe { bytes(inbuf, insize, "in")? };
    // SAFETY: `outbuf` holds `outcount` elements (MPI contract).
    let end = unsafe { types::unpack(input, at, outbuf as *mut u8, outcount, id)? };
    // SAFETY: `pos` came back from `position`, which refused NULL, and is the C caller's writable
    // position (MPI contract).
    unsafe { store_position(pos, end) }
}

mpi_fn! { MPI_Unpack / PMPI_Unpack (inbuf: *const c_void, insize: c_int, pos: *mut c_int, outbuf: *mut c_void, outcount: c_int, dt: MPI_Datatype, c: MPI_Comm) target(convert::target(c)) {
    // SAFETY: MPI_Unpack's contract: `inbuf` is `insize` readable bytes, `outbuf` holds
    // `outcount` elements of `dt` apart from `inbuf`, and `pos` points to a readable, writable
    // int; `unpack` refuses NULL where a size is non-zero.
    unsafe { unpack(inbuf, insize.into(), pos, outbuf, outcount.into(), dt, c) }
}}
mpi_fn! { MPI_Unpack_c / PMPI_Unpack_c (inbuf: *const c_void, insize: MPI_Count, pos: *mut MPI_Count, outbuf: *mut c_void, outcount: MPI_Count, dt: MPI_Datatype, c: MPI_Comm) target(convert::target(c)) {
    // SAFETY: MPI_Unpack_c's contract: `inbuf` is `insize` readable bytes, `outbuf` holds
    // `outcount` elements of `dt` apart from `inbuf`, and `pos` points to a readable, writable
    // MPI_Count; `unpack` refuses NULL where a size is non-zero.
    unsafe { unpack(inbuf, insize, pos, outbuf, outcount, dt, c) }
}}

mpi_fn! { MPI_Pack_size_c / PMPI_Pack_size_c (incount: MPI_Count, dt: MPI_Datatype, c: MPI_Comm, size: *mut MPI_Count) target(convert::target(c)) {
    let size = out(size, "size")?;
    convert::live_comm(c)?;
    let n = types::pack_size(incount, datatype(dt)?)?;
    // SAFETY: checked non-null.
    unsafe { *size = n as MPI_Count };
    Ok(())
}}

// ----- external32 ---------------------------------------------------------------------------

/// `MPI_Pack_external` and `MPI_Pack_external_c`.
///
/// # Safety
/// Those of `MPI_Pack_external`: unless NULL, `rep` is NUL-terminated, `inbuf` holds
/// `incount` elements of `dt`, `outbuf` is `outsize` writable bytes apart from `inbuf`, and
/// `pos` points to a readable, writable position.
#[allow(clippy::too_many_arguments)]
unsafe fn pack_external(
    rep: *const c_char,
    inbuf: *const c_void,
    incount: i64,
    dt: MPI_Datatype,
    outbuf: *mut c_void,
    outsize: i64,
    pos: *mut i64,
) -> Result<()> {
    convert::not_in_place(inbuf, "inbuf")?;
    convert::not_in_place(outbuf, "outbuf")?;
    // SAFETY: `rep` is NULL or a NUL-terminated string (MPI contract); `datarep` refuses NULL.
    let rep = unsafe { datarep(rep)? };
    let id = datatype(dt)?;
    // SAFETY: per this function's contract `pos` is NULL or a readable position.
    let (pos, at) = unsafe { position(pos)? };
    // SAFETY: per this function's contract `outbuf` is `outsize` writable bytes, apart from
    // `inbuf`; `bytes_mut` refuses NULL and a negative size.
    let out = unsafe { bytes_mut(outbuf, outsize, "out")? };
    // SAFETY: `inbuf` holds `incount` elements (MPI contract).
    let end = unsafe { types::pack_external(&rep, inbuf as *const u8, incount, id, out, at)? };
    // SAFETY: `pos` came back from `position`, which refused NULL, and is the C caller's writable
    // position (MPI contract).
    unsafe { store_position(pos, end) }
}

mpi_fn! { MPI_Pack_external / PMPI_Pack_external (rep: *const c_char, inbuf: *const c_void, incount: c_int, dt: MPI_Datatype, outbuf: *mut c_void, outsize: MPI_Aint, pos: *mut MPI_Aint) target(Target::None) {
    // SAFETY: MPI_Pack_external's contract: `rep` is NUL-terminated, `inbuf` holds `incount`
    // elements of `dt`, `outbuf` is `outsize` writable bytes apart from `inbuf`, and `pos`
    // points to a readable, writable position; `pack_external` refuses NULL pointers.
    unsafe { pack_external(rep, inbuf, incount.into(), dt, outbuf, outsize, pos) }
}}
mpi_fn! { MPI_Pack_external_c / PMPI_Pack_external_c (rep: *const c_char, inbuf: *const c_void, incount: MPI_Count, dt: MPI_Datatype, outbuf: *mut c_void, outsize: MPI_Count, pos: *mut MPI_Count) target(Target::None) {
    // SAFETY: MPI_Pack_external_c's contract: `rep` is NUL-terminated, `inbuf` holds `incount`
    // elements of `dt`, `outbuf` is `outsize` writable bytes apart from `inbuf`, and `pos`
    // points to a readable, writable position; `pack_external` refuses NULL pointers.
    unsafe { pack_external(rep, inbuf, incount, dt, outbuf, outsize, pos) }
}}

/// `MPI_Unpack_external` and `MPI_Unpack_external_c`.
///
/// # Safety
/// Those of `MPI_Unpack_external`: unless NULL, `rep` is NUL-terminated, `inbuf` is `insize`
/// readable bytes, `outbuf` holds `outcount` elements of `dt` apart from `inbuf`, and `pos`
/// points to a readable, writable position.
#[allow(clippy::too_many_arguments)]
unsafe fn unpack_external(
    rep: *const c_char,
    inbuf: *const c_void,
    insize: i64,
    pos: *mut i64,
    outbuf: *mut c_void,
    outcount: i64,
    dt: MPI_Datatype,
) -> Result<()> {
    convert::not_in_place(inbuf, "inbuf")?;
    convert::not_in_place(outbuf, "outbuf")?;
    // SAFETY: `rep` is NULL or a NUL-terminated string (MPI contract); `datarep` refuses NULL.
    let rep = unsafe { datarep(rep)? };
    let id = datatype(dt)?;
    // SAFETY: per this function's contract `pos` is NULL or a readable position.
    let (pos, at) = unsafe { position(pos)? };
    // SAFETY: per this function's contract `inbuf` is `insize` readable bytes; `bytes`
    // refuses NULL and a negative size.
    let input = unsafe { bytes(inbuf, insize, "in")? };
    // SAFETY: `outbuf` holds `outcount` elements (MPI contract).
    let end = unsafe { types::unpack_external(&rep, input, at, outbuf as *mut u8, outcount, id)? };
    // SAFETY: `pos` came back from `position`, which refused NULL, and is the C caller's writable
    // position (MPI contract).
    unsafe { store_position(pos, end) }
}

mpi_fn! { MPI_Unpack_external / PMPI_Unpack_external (rep: *const c_char, inbuf: *const c_void, insize: MPI_Aint, pos: *mut MPI_Aint, outbuf: *mut c_void, outcount: c_int, dt: MPI_Datatype) target(Target::None) {
    // SAFETY: MPI_Unpack_external's contract: `rep` is NUL-terminated, `inbuf` is `insize`
    // readable bytes, `outbuf` holds `outcount` elements of `dt` apart from `inbuf`, and `pos`
    // points to a readable, writable position; `unpack_external` refuses NULL pointers.
    unsafe { unpack_external(rep, inbuf, insize, pos, outbuf, outcount.into(), dt) }
}}
mpi_fn! { MPI_Unpack_external_c / PMPI_Unpack_external_c (rep: *const c_char, inbuf: *const c_void, insize: MPI_Count, pos: *mut MPI_Count, outbuf: *mut c_void, outcount: MPI_Count, dt: MPI_Datatype) target(Target::None) {
    // SAFETY: MPI_Unpack_external_c's contract: `rep` is NUL-terminated, `inbuf` is `insize`
    // readable bytes, `outbuf` holds `outcount` elements of `dt` apart from `inbuf`, and `pos`
    // points to a readable, writable position; `unpack_external` refuses NULL pointers.
    unsafe { unpack_external(rep, inbuf, insize, pos, outbuf, outcount, dt) }
}}

/// # Safety
/// `rep` must be null (refused) or a NUL-terminated string; `size` must be null (refused) or
/// point to a writable `i64`.
unsafe fn external_size(
    rep: *const c_char,
    incount: i64,
    dt: MPI_Datatype,
    size: *mut i64,
) -> Result<()> {
    let size = out(size, "size")?;
    // SAFETY: `rep` is NULL or a NUL-terminated string (MPI contract); `datarep` refuses NULL.
    let rep = unsafe { datarep(rep)? };
    let n = types::pack_external_size(&rep, incount, datatype(dt)?)?;
    // SAFETY: checked non-null.
    unsafe { *size = n as i64 };
    Ok(())
}

mpi_fn! { MPI_Pack_external_size / PMPI_Pack_external_size (rep: *const c_char, incount: c_int, dt: MPI_Datatype, size: *mut MPI_Aint) target(Target::None) {
    // SAFETY: `rep` is NULL or a NUL-terminated string, `size` NULL or writable (MPI contract);
    // both NULLs are refused inside.
    unsafe { external_size(rep, incount.into(), dt, size) }
}}
mpi_fn! { MPI_Pack_external_size_c / PMPI_Pack_external_size_c (rep: *const c_char, incount: MPI_Count, dt: MPI_Datatype, size: *mut MPI_Count) target(Target::None) {
    // SAFETY: `rep` is NULL or a NUL-terminated string, `size` NULL or writable (MPI contract);
    // both NULLs are refused inside.
    unsafe { external_size(rep, incount, dt, size) }
}}
