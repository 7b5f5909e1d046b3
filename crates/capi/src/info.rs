//! Info object entry points (`MPI_Info_create set get delete dup free get_nkeys
//! get_nthkey get_valuelen get_string create_env`) over the engine's info table, and
//! the handle check other bindings use for their `MPI_Info` arguments.
//!
//! As MPI-4 allows, these work before `MPI_Init` and after `MPI_Finalize`.

use crate::convert;
use crate::errors::c_string;
use crate::export::Target;
use crate::handles::{self, MPI_Info};
use crate::mpi_fn;
use oxmpi_core::info::{self as core_info, InfoId, MAX_KEY, MAX_VALUE};
use oxmpi_core::{Error, ErrorClass, Result};
use std::os::raw::{c_char, c_int};

/// The info object a handle names (`MPI_INFO_NULL` is an error).
pub fn info(h: MPI_Info) -> Result<InfoId> {
    if h == handles::MPI_INFO_NULL {
        return Err(Error::new(
            ErrorClass::Info,
            "invalid info object MPI_INFO_NULL",
        ));
    }
    let id = handles::info_index(h)
        .ok_or_else(|| Error::new(ErrorClass::Info, format!("invalid info handle {h:#x}")))?;
    core_info::check(id)?;
    Ok(id)
}

/// An optional info argument (hints): `MPI_INFO_NULL` gives None; anything else must
/// name a live info object.
pub fn optional_info(h: MPI_Info) -> Result<Option<InfoId>> {
    if h == handles::MPI_INFO_NULL {
        return Ok(None);
    }
    info(h).map(Some)
}

/// Reads a key argument.
unsafe fn key<'a>(k: *const c_char) -> Result<&'a [u8]> {
    // SAFETY: the caller passes a NUL-terminated string (MPI contract).
    let k = unsafe { c_string(k, "key")? }.to_bytes();
    if k.len() >= MAX_KEY {
        return Err(Error::new(
            ErrorClass::InfoKey,
            format!(
                "invalid info key: {} bytes long (at most MPI_MAX_INFO_KEY - 1 = {})",
                k.len(),
                MAX_KEY - 1
            ),
        ));
    }
    Ok(k)
}

/// Copies `bytes` and a NUL into `dst` (the caller checked the room).
///
/// # Safety
/// `dst` must have room for `bytes.len() + 1` bytes.
unsafe fn put(bytes: &[u8], dst: *mut c_char) {
    // SAFETY: per the contract.
    unsafe {
        std::ptr::copy_nonoverlapping(bytes.as_ptr(), dst as *mut u8, bytes.len());
        *dst.add(bytes.len()) = 0;
    }
}

/// # Safety
/// `p` must be non-null and point to a writable `int` (this function does not check).
unsafe fn store(p: *mut c_int, v: usize) {
    // SAFETY: `p` is non-null and writable (this function's contract). Lengths are bounded by
    // MAX_VALUE, so `v` fits.
    unsafe { *p = v as c_int };
}

mpi_fn! { MPI_Info_create / PMPI_Info_create (out: *mut MPI_Info) target(Target::None) {
    let out = convert::out(out, "info")?;
    // SAFETY: checked non-null.
    unsafe { *out = handles::info_handle(core_info::create()) };
    Ok(())
}}

mpi_fn! { MPI_Info_create_env / PMPI_Info_create_env (_argc: c_int, _argv: *mut *mut c_char, out: *mut MPI_Info) target(Target::None) {
    let out = convert::out(out, "info")?;
    // The contents come from the process itself (/proc), which holds the same
    // command line as the arguments a C program passes.
    // SAFETY: checked non-null.
    unsafe { *out = handles::info_handle(core_info::create_env()) };
    Ok(())
}}

mpi_fn! { MPI_Info_set / PMPI_Info_set (h: MPI_Info, k: *const c_char, v: *const c_char) target(Target::None) {
    let id = info(h)?;
    // SAFETY: NUL-terminated strings (MPI contract).
    let (k, v) = unsafe { (key(k)?, c_string(v, "value")?.to_bytes()) };
    core_info::set(id, k, v)
}}

mpi_fn! { MPI_Info_delete / PMPI_Info_delete (h: MPI_Info, k: *const c_char) target(Target::None) {
    let id = info(h)?;
    // SAFETY: NUL-terminated string (MPI contract).
    core_info::delete(id, unsafe { key(k)? })
}}

mpi_fn! { MPI_Info_get / PMPI_Info_get (h: MPI_Info, k: *const c_char, valuelen: c_int, value: *mut c_char, flag: *mut c_int) target(Target::None) {
    let id = info(h)?;
    // SAFETY: NUL-terminated string (MPI contract).
    let k = unsafe { key(k)? };
    let flag = convert::out(flag, "flag")?;
    if valuelen < 0 {
        return Err(Error::new(ErrorClass::Arg, format!("invalid valuelen {valuelen} (must be >= 0)")));
    }
    let v = core_info::get(id, k)?;
    if let Some(v) = &v {
        let value = convert::out(value, "value")?;
        let n = v.len().min(valuelen as usize);
        // SAFETY: the buffer holds valuelen + 1 bytes (MPI contract) and n <= valuelen.
        unsafe { put(&v[..n], value) };
    }
    // SAFETY: `flag` passed `convert::out` above and is the C caller's writable int (MPI contract).
    unsafe { store(flag, v.is_some() as usize) };
    Ok(())
}}

mpi_fn! { MPI_Info_get_valuelen / PMPI_Info_get_valuelen (h: MPI_Info, k: *const c_char, valuelen: *mut c_int, flag: *mut c_int) target(Target::None) {
    let id = info(h)?;
    // SAFETY: NUL-terminated string (MPI contract).
    let k = unsafe { key(k)? };
    let valuelen = convert::out(valuelen, "valuelen")?;
    let flag = convert::out(flag, "flag")?;
    let v = core_info::get(id, k)?;
    if let Some(v) = &v {
        // SAFETY: `valuelen` passed `convert::out` above and is the C caller's writable int (MPI
        // contract).
        unsafe { store(valuelen, v.len()) };
    }
    // SAFETY: `flag` passed `convert::out` above and is the C caller's writable int (MPI contract).
    unsafe { store(flag, v.is_some() as usize) };
    Ok(())
}}

mpi_fn! { MPI_Info_get_string / PMPI_Info_get_string (h: MPI_Info, k: *const c_char, buflen: *mut c_int, value: *mut c_char, flag: *mut c_int) target(Target::None) {
    let id = info(h)?;
    // SAFETY: NUL-terminated string (MPI contract).
    let k = unsafe { key(k)? };
    let buflen = convert::out(buflen, "buflen")?;
    let flag = convert::out(flag, "flag")?;
    // SAFETY: checked non-null.
    let room = unsafe { *buflen };
    if room < 0 {
        return Err(Error::new(ErrorClass::Arg, format!("invalid buflen {room} (must be >= 0)")));
    }
    let v = core_info::get(id, k)?;
    if let Some(v) = &v {
        if room > 0 {
            let value = convert::out(value, "value")?;
            let n = v.len().min(room as usize - 1);
            // SAFETY: the buffer holds buflen bytes (MPI contract) and n < buflen.
            unsafe { put(&v[..n], value) };
        }
        // The size needed for the whole value with its NUL.
        // SAFETY: `buflen` passed `convert::out` above and is the C caller's writable int (MPI
        // contract).
        unsafe { store(buflen, v.len() + 1) };
    }
    // SAFETY: `flag` passed `convert::out` above and is the C caller's writable int (MPI contract).
    unsafe { store(flag, v.is_some() as usize) };
    Ok(())
}}

mpi_fn! { MPI_Info_get_nkeys / PMPI_Info_get_nkeys (h: MPI_Info, nkeys: *mut c_int) target(Target::None) {
    let id = info(h)?;
    let nkeys = convert::out(nkeys, "nkeys")?;
    let n = core_info::nkeys(id)?;
    // SAFETY: `nkeys` passed `convert::out` above and is the C caller's writable int (MPI
    // contract).
    unsafe { store(nkeys, n) };
    Ok(())
}}

mpi_fn! { MPI_Info_get_nthkey / PMPI_Info_get_nthkey (h: MPI_Info, n: c_int, k: *mut c_char) target(Target::None) {
    let id = info(h)?;
    let k = convert::out(k, "key")?;
    let name = core_info::nth_key(id, n.into())?;
    // SAFETY: the buffer holds MPI_MAX_INFO_KEY bytes (MPI contract); keys are at
    // most MPI_MAX_INFO_KEY - 1 bytes.
    unsafe { put(&name, k) };
    Ok(())
}}

mpi_fn! { MPI_Info_dup / PMPI_Info_dup (h: MPI_Info, out: *mut MPI_Info) target(Target::None) {
    let id = info(h)?;
    let out = convert::out(out, "newinfo")?;
    let new = core_info::dup(id)?;
    // SAFETY: checked non-null.
    unsafe { *out = handles::info_handle(new) };
    Ok(())
}}

mpi_fn! { MPI_Info_free / PMPI_Info_free (h: *mut MPI_Info) target(Target::None) {
    let h = convert::out(h, "info")?;
    // SAFETY: checked non-null.
    let id = info(unsafe { *h })?;
    core_info::free(id)?;
    // SAFETY: checked non-null.
    unsafe { *h = handles::MPI_INFO_NULL };
    Ok(())
}}

// Values never exceed MPI_MAX_INFO_VAL, so lengths always fit a C int.
const _: () = assert!(MAX_VALUE < c_int::MAX as usize);
