//! `MPI_Alloc_mem` / `MPI_Free_mem`: memory from the C heap (`malloc`), remembered so
//! that `MPI_Free_mem` refuses an address it did not hand out (`MPI_ERR_BASE`) instead
//! of corrupting the heap. No info hints are honoured (none is needed: every transport
//! reaches ordinary memory at full speed).

use crate::convert;
use crate::export::Target;
use crate::handles::{MPI_Aint, MPI_Info};
use crate::mpi_fn;
use oxmpi_core::{runtime, Error, ErrorClass};
use std::collections::HashSet;
use std::ffi::c_void;
use std::sync::Mutex;

static LIVE: Mutex<Option<HashSet<usize>>> = Mutex::new(None);

fn with_live<R>(f: impl FnOnce(&mut HashSet<usize>) -> R) -> R {
    let mut g = LIVE.lock().unwrap_or_else(|p| p.into_inner());
    f(g.get_or_insert_with(HashSet::new))
}

mpi_fn! { MPI_Alloc_mem / PMPI_Alloc_mem (size: MPI_Aint, info: MPI_Info, baseptr: *mut c_void) target(Target::None) {
    runtime::with(|_| Ok(()))?;
    crate::info::optional_info(info)?;
    let out = convert::out(baseptr as *mut *mut c_void, "baseptr")?;
    if size < 0 {
        return Err(Error::new(ErrorClass::Arg, format!("invalid size {size} (must be >= 0)")));
    }
    // A zero-byte request still gets a unique address that MPI_Free_mem accepts.
    let bytes = (size as usize).max(1);
    // SAFETY: malloc with a non-zero size; the result is checked for null.
    let p = unsafe { libc::malloc(bytes) };
    if p.is_null() {
        return Err(Error::new(ErrorClass::NoMem, format!("cannot allocate {size} bytes")));
    }
    with_live(|l| l.insert(p as usize));
    // SAFETY: checked non-null; MPI passes the address of a pointer as void*.
    unsafe { *out = p };
    Ok(())
}}

mpi_fn! { MPI_Free_mem / PMPI_Free_mem (base: *mut c_void) target(Target::None) {
    runtime::with(|_| Ok(()))?;
    if base.is_null() {
        return Ok(());
    }
    if !with_live(|l| l.remove(&(base as usize))) {
        return Err(Error::new(
            ErrorClass::Base,
            format!("address {base:p} was not returned by MPI_Alloc_mem (or was already freed)"),
        ));
    }
    // SAFETY: the address came from malloc in MPI_Alloc_mem and is freed once.
    unsafe { libc::free(base) };
    Ok(())
}}
