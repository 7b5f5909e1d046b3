//! Global symbols that MPICH's header makes programs reference directly, so that
//! binaries built against MPICH link and run on this library: sentinel pointers
//! (`MPI_UNWEIGHTED`, `MPI_F_STATUS_IGNORE`, ...) and `MPIR_Dup_fn`, the function
//! behind `MPI_DUP_FN` / `MPI_COMM_DUP_FN` / `MPI_TYPE_DUP_FN` / `MPI_WIN_DUP_FN`.

use std::ffi::c_void;
use std::os::raw::c_int;

/// A pointer that may live in an exported static.
#[repr(transparent)]
pub struct SentinelPtr(pub *const c_void);

// SAFETY: the pointers are sentinels compared by address, never dereferenced.
unsafe impl Sync for SentinelPtr {}

static UNWEIGHTED_TARGET: c_int = 0;
static WEIGHTS_EMPTY_TARGET: c_int = 0;
static F08_STATUS_IGNORE_TARGET: [c_int; 5] = [0; 5];
static F08_STATUSES_IGNORE_TARGET: [c_int; 5] = [0; 5];

/// `MPI_UNWEIGHTED` (`int *const`).
#[no_mangle]
pub static MPI_UNWEIGHTED: SentinelPtr =
    SentinelPtr(&UNWEIGHTED_TARGET as *const c_int as *const c_void);
/// `MPI_WEIGHTS_EMPTY` (`int *const`).
#[no_mangle]
pub static MPI_WEIGHTS_EMPTY: SentinelPtr =
    SentinelPtr(&WEIGHTS_EMPTY_TARGET as *const c_int as *const c_void);
/// `MPI_F_STATUS_IGNORE` (`MPI_Fint *`): the address of Fortran's `MPI_STATUS_IGNORE`
/// (in `COMMON /MPIPRIV1/`, after `MPI_BOTTOM` and `MPI_IN_PLACE`), so that C code given a
/// status by Fortran recognises it.
#[no_mangle]
pub static MPI_F_STATUS_IGNORE: SentinelPtr = SentinelPtr(crate::fortran::mpipriv1_.addr(2));
/// `MPI_F_STATUSES_IGNORE` (`MPI_Fint *`): the address of Fortran's `MPI_STATUSES_IGNORE`
/// (the start of `COMMON /MPIPRIV2/`).
#[no_mangle]
pub static MPI_F_STATUSES_IGNORE: SentinelPtr = SentinelPtr(crate::fortran::mpipriv2_.addr(0));
/// `MPI_F08_STATUS_IGNORE` (`MPI_F08_status *`).
#[no_mangle]
pub static MPI_F08_STATUS_IGNORE: SentinelPtr =
    SentinelPtr(&F08_STATUS_IGNORE_TARGET as *const [c_int; 5] as *const c_void);
/// `MPI_F08_STATUSES_IGNORE` (`MPI_F08_status *`).
#[no_mangle]
pub static MPI_F08_STATUSES_IGNORE: SentinelPtr =
    SentinelPtr(&F08_STATUSES_IGNORE_TARGET as *const [c_int; 5] as *const c_void);

/// The predefined "duplicate" attribute copy function: the new object gets the same
/// attribute value.
///
/// # Safety
/// Called by the attribute machinery (or a program) with valid output pointers.
#[no_mangle]
pub unsafe extern "C" fn MPIR_Dup_fn(
    _old: c_int,
    _keyval: c_int,
    _extra_state: *mut c_void,
    attribute_val_in: *mut c_void,
    attribute_val_out: *mut c_void,
    flag: *mut c_int,
) -> c_int {
    if attribute_val_out.is_null() || flag.is_null() {
        return oxmpi_core::ErrorClass::Arg as c_int;
    }
    // SAFETY: the standard passes the address of a `void *` to store the copy in, and
    // the address of an int flag.
    unsafe {
        *(attribute_val_out as *mut *mut c_void) = attribute_val_in;
        *flag = 1;
    }
    0
}
