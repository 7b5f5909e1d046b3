//! Environment entry points: initialisation and finalisation, abort, clocks, processor
//! name, versions, thread levels, error classes and strings, and the marker symbol that
//! proves a program runs on oxmpi's library.

use crate::convert::{self, comm};
use crate::export::Target;
use crate::handles::MPI_Comm;
use crate::{errors, mpi_fn};
use oxmpi_core::runtime::{self, ThreadLevel};
use oxmpi_core::{p2p, Error, ErrorClass, Result};
use std::os::raw::{c_char, c_double, c_int};

/// `MPI_MAX_PROCESSOR_NAME`.
const MAX_PROCESSOR_NAME: usize = 128;
/// `MPI_MAX_ERROR_STRING`.
const MAX_ERROR_STRING: usize = 512;
/// `MPI_MAX_LIBRARY_VERSION_STRING`.
const MAX_LIBRARY_VERSION_STRING: usize = 8192;

/// Present only in oxmpi's library: tests look it up to prove which library is loaded.
#[no_mangle]
pub static OXMPI_Library_marker: [u8; 6] = *b"oxmpi\0";

/// Copies `s` into a C buffer of `cap` bytes (NUL-terminated, truncated to fit) and
/// stores the copied length.
unsafe fn put_string(s: &str, dst: *mut c_char, cap: usize, len: *mut c_int) -> Result<()> {
    let dst = convert::out(dst, "string buffer")?;
    let len = convert::out(len, "result length")?;
    let n = s.len().min(cap - 1);
    // SAFETY: the caller's buffer holds `cap` bytes (the standard's maximum for this call).
    unsafe {
        std::ptr::copy_nonoverlapping(s.as_ptr(), dst as *mut u8, n);
        *dst.add(n) = 0;
        *len = n as c_int;
    }
    Ok(())
}

fn level_from(v: c_int) -> Result<ThreadLevel> {
    Ok(match v {
        0 => ThreadLevel::Single,
        1 => ThreadLevel::Funneled,
        2 => ThreadLevel::Serialized,
        3 => ThreadLevel::Multiple,
        _ => {
            return Err(Error::new(
                ErrorClass::Arg,
                format!("invalid thread level {v}"),
            ))
        }
    })
}

mpi_fn! { MPI_Init / PMPI_Init (_argc: *mut c_int, _argv: *mut *mut *mut c_char) target(Target::None) {
    runtime::init(ThreadLevel::Single).map(|_| ())
}}

mpi_fn! { MPI_Init_thread / PMPI_Init_thread (_argc: *mut c_int, _argv: *mut *mut *mut c_char, required: c_int, provided: *mut c_int) target(Target::None) {
    let provided = convert::out(provided, "provided")?;
    let got = runtime::init(level_from(required)?)?;
    // SAFETY: checked non-null.
    unsafe { *provided = got as c_int };
    Ok(())
}}

mpi_fn! { MPI_Finalize / PMPI_Finalize () target(Target::None) {
    let r = runtime::finalize();
    if !runtime::is_running() {
        crate::export::finalized();
    }
    r
}}

mpi_fn! { MPI_Initialized / PMPI_Initialized (flag: *mut c_int) target(Target::None) {
    let flag = convert::out(flag, "flag")?;
    // SAFETY: checked non-null.
    unsafe { *flag = runtime::initialized() as c_int };
    Ok(())
}}

mpi_fn! { MPI_Finalized / PMPI_Finalized (flag: *mut c_int) target(Target::None) {
    let flag = convert::out(flag, "flag")?;
    // SAFETY: checked non-null.
    unsafe { *flag = runtime::finalized() as c_int };
    Ok(())
}}

mpi_fn! { MPI_Query_thread / PMPI_Query_thread (provided: *mut c_int) target(Target::None) {
    let provided = convert::out(provided, "provided")?;
    let l = runtime::thread_level()?;
    // SAFETY: checked non-null.
    unsafe { *provided = l as c_int };
    Ok(())
}}

mpi_fn! { MPI_Is_thread_main / PMPI_Is_thread_main (flag: *mut c_int) target(Target::None) {
    let flag = convert::out(flag, "flag")?;
    let m = runtime::is_thread_main()?;
    // SAFETY: checked non-null.
    unsafe { *flag = m as c_int };
    Ok(())
}}

mpi_fn! { MPI_Abort / PMPI_Abort (c: MPI_Comm, code: c_int) target(convert::target(c)) {
    let rank = runtime::with(|rt| Ok(rt.world_rank)).unwrap_or(0);
    runtime::abort(code, &format!("oxmpi: rank {rank} called MPI_Abort with error code {code}"))
}}

mpi_fn! { MPI_Comm_size / PMPI_Comm_size (c: MPI_Comm, size: *mut c_int) target(convert::target(c)) {
    let size = convert::out(size, "size")?;
    let n = p2p::comm_size(comm(c)?)?;
    // SAFETY: checked non-null.
    unsafe { *size = n };
    Ok(())
}}

mpi_fn! { MPI_Comm_rank / PMPI_Comm_rank (c: MPI_Comm, rank: *mut c_int) target(convert::target(c)) {
    let rank = convert::out(rank, "rank")?;
    let r = p2p::comm_rank(comm(c)?)?;
    // SAFETY: checked non-null.
    unsafe { *rank = r };
    Ok(())
}}

/// # Safety
/// C entry point (no arguments).
#[no_mangle]
pub unsafe extern "C" fn PMPI_Wtime() -> c_double {
    runtime::wtime()
}

/// # Safety
/// C entry point (no arguments).
#[no_mangle]
pub unsafe extern "C" fn MPI_Wtime() -> c_double {
    runtime::wtime()
}

/// # Safety
/// C entry point (no arguments).
#[no_mangle]
pub unsafe extern "C" fn PMPI_Wtick() -> c_double {
    runtime::wtick()
}

/// # Safety
/// C entry point (no arguments).
#[no_mangle]
pub unsafe extern "C" fn MPI_Wtick() -> c_double {
    runtime::wtick()
}

mpi_fn! { MPI_Get_processor_name / PMPI_Get_processor_name (name: *mut c_char, len: *mut c_int) target(Target::None) {
    let host = runtime::with(|rt| Ok(rt.processor_name.clone()))
        .unwrap_or_else(|_| oxmpi_core::bootstrap::processor_name());
    // SAFETY: the buffer holds MPI_MAX_PROCESSOR_NAME bytes (MPI contract).
    unsafe { put_string(&host, name, MAX_PROCESSOR_NAME, len) }
}}

mpi_fn! { MPI_Get_version / PMPI_Get_version (version: *mut c_int, subversion: *mut c_int) target(Target::None) {
    let v = convert::out(version, "version")?;
    let s = convert::out(subversion, "subversion")?;
    // SAFETY: both checked non-null.
    unsafe {
        (*v, *s) = oxmpi_core::MPI_VERSION;
    }
    Ok(())
}}

/// The text `MPI_Get_library_version` returns.
pub fn library_version() -> String {
    format!(
        "oxmpi {} (MPI {}.{} interface; MPICH ABI, libmpi.so.12; thread support up to {}; transports: self, shm, tcp)",
        oxmpi_core::VERSION,
        oxmpi_core::MPI_VERSION.0,
        oxmpi_core::MPI_VERSION.1,
        runtime::MAX_THREAD_LEVEL.name()
    )
}

/// `MPI_Pcontrol(const int level, ...)`: profiling control. The library itself does
/// nothing with it (the standard's behaviour); a profiling library that replaces
/// `MPI_Pcontrol` gets the call.
///
/// Variadic function definitions are not stable Rust, so these symbols take the one
/// named argument only. That is ABI-compatible with callers passing extra arguments
/// on the platforms oxmpi supports (x86-64 System V and AArch64 Linux): variadic
/// arguments travel in the same registers and stack slots as ordinary ones, a callee
/// that does not read them is unaffected, and the caller cleans up the stack.
///
/// # Safety
/// C entry point; no pointer arguments.
#[no_mangle]
pub unsafe extern "C" fn PMPI_Pcontrol(_level: c_int) -> c_int {
    0
}

/// # Safety
/// C entry point; see [`PMPI_Pcontrol`].
#[no_mangle]
pub unsafe extern "C" fn MPI_Pcontrol(level: c_int) -> c_int {
    // SAFETY: same contract.
    unsafe { PMPI_Pcontrol(level) }
}

mpi_fn! { MPI_Get_library_version / PMPI_Get_library_version (version: *mut c_char, len: *mut c_int) target(Target::None) {
    // SAFETY: the buffer holds MPI_MAX_LIBRARY_VERSION_STRING bytes (MPI contract).
    unsafe { put_string(&library_version(), version, MAX_LIBRARY_VERSION_STRING, len) }
}}

mpi_fn! { MPI_Error_class / PMPI_Error_class (code: c_int, class: *mut c_int) target(Target::None) {
    let class = convert::out(class, "error class")?;
    let c = errors::class_of(code)
        .ok_or_else(|| Error::new(ErrorClass::Arg, format!("invalid error code {code}")))?;
    // SAFETY: checked non-null.
    unsafe { *class = c };
    Ok(())
}}

mpi_fn! { MPI_Error_string / PMPI_Error_string (code: c_int, s: *mut c_char, len: *mut c_int) target(Target::None) {
    let text = errors::string_of(code)
        .ok_or_else(|| Error::new(ErrorClass::Arg, format!("invalid error code {code}")))?;
    // SAFETY: the buffer holds MPI_MAX_ERROR_STRING bytes (MPI contract).
    unsafe { put_string(&text, s, MAX_ERROR_STRING, len) }
}}

// MPI-4.1: the hardware the calling process runs on, as a new info object
// (`oxmpi_core::placement::hw_resource_entries` lists the keys).
mpi_fn! { MPI_Get_hw_resource_info / PMPI_Get_hw_resource_info (hw_info: *mut crate::handles::MPI_Info) target(Target::None) {
    let out = convert::out(hw_info, "hw_info")?;
    let id = oxmpi_core::info::create();
    for (k, v) in oxmpi_core::placement::hw_resource_entries() {
        oxmpi_core::info::set(id, k.as_bytes(), v.as_bytes())?;
    }
    // SAFETY: checked non-null; the caller provides a writable handle.
    unsafe { *out = crate::handles::info_handle(id) };
    Ok(())
}}
