//! How a C entry point runs: catch panics (none may cross into C), turn engine errors
//! into error codes, and hand them to the error handler of the object the call was
//! about — `MPI_ERRORS_ARE_FATAL` prints one line and ends the job.
//!
//! Outside `MPI_Init` .. `MPI_Finalize` only the functions the standard makes always
//! available run; every other call fails with `MPI_ERR_OTHER` (and, as no error handler
//! can be set then, the default `MPI_ERRORS_ARE_FATAL` prints it and ends the process).
//!
//! [`mpi_fn!`] defines each function twice, as `PMPI_Xxx` (the implementation) and
//! `MPI_Xxx` (the interceptable name a profiling library may replace). Internal calls
//! never go through the `MPI_` names.

use crate::errors;
use oxmpi_core::comm::{CommId, Errhandler};
use oxmpi_core::errhandler::{self, ErrObject};
use oxmpi_core::{runtime, Error, ErrorClass};
use std::os::raw::c_int;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};

/// The object whose error handler reports a failure of the call.
#[derive(Clone, Copy, Debug)]
pub enum Target {
    Comm(CommId),
    /// A session's handler (`session.rs`).
    Session(u32),
    /// A window's handler (`win.rs`).
    Win(u32),
    /// The handler passed to the call (`MPI_Comm_create_from_group` and friends).
    Handler(Errhandler),
    /// No object: the engine picks the handler (`errhandler::handler_for`).
    None,
}

impl From<Target> for ErrObject {
    fn from(t: Target) -> ErrObject {
        match t {
            Target::Comm(c) => ErrObject::Comm(c),
            Target::Session(s) => ErrObject::Session(s),
            Target::Win(w) => ErrObject::Win(w),
            Target::Handler(h) => ErrObject::Handler(h),
            Target::None => ErrObject::None,
        }
    }
}

/// Reports `e` raised by `call` on `target` and returns the code to give the caller
/// (when the handler lets the call return).
#[cold]
#[inline(never)]
pub fn raise(call: &str, target: Target, e: &Error) -> c_int {
    // A C function run for a Fortran entry point reports the Fortran call (`MPI_SEND`).
    let call = crate::fortran::call_name(call);
    let code = errors::code_for(call, e);
    let obj = match e.comm {
        Some(c) => ErrObject::Comm(c),
        None => target.into(),
    };
    errhandler::dispatch(call, obj, e, code)
}

/// A hint that the process is between `MPI_Init` and `MPI_Finalize`: set by the first
/// call that finds the runtime up, cleared by `MPI_Finalize`. While it is set a call
/// costs one atomic load for the check below.
static RUNNING: AtomicBool = AtomicBool::new(false);

/// The functions MPI-4.1 lets a program call at any time, before `MPI_Init` and after
/// `MPI_Finalize` (section 12.4.1, table 9: the info, error-class and version calls),
/// plus `MPI_Init` and `MPI_Init_thread`, which check the phase themselves.
const ALWAYS_AVAILABLE: &[&str] = &[
    "MPI_Init",
    "MPI_Init_thread",
    "MPI_Initialized",
    "MPI_Finalized",
    "MPI_Get_version",
    "MPI_Get_library_version",
    "MPI_Info_create",
    "MPI_Info_create_env",
    "MPI_Info_set",
    "MPI_Info_delete",
    "MPI_Info_get",
    "MPI_Info_get_valuelen",
    "MPI_Info_get_string",
    "MPI_Info_get_nkeys",
    "MPI_Info_get_nthkey",
    "MPI_Info_dup",
    "MPI_Info_free",
    "MPI_Errhandler_free",
    "MPI_Error_string",
    "MPI_Error_class",
    "MPI_Add_error_class",
    "MPI_Add_error_code",
    "MPI_Add_error_string",
    // Sessions start (and their handlers are made) without MPI_Init (MPI-4.1 11.3.1).
    "MPI_Session_init",
    "MPI_Session_create_errhandler",
    "MPI_Remove_error_class",
    "MPI_Remove_error_code",
    "MPI_Remove_error_string",
];

/// Refuses every other call before `MPI_Init` and after `MPI_Finalize` with
/// `MPI_ERR_OTHER`, whether or not its body would touch the runtime: no call may act on
/// handles or memory while there is no MPI, and each reports the same clear error.
#[inline(always)]
fn check_phase(call: &str) -> Result<(), Error> {
    if RUNNING.load(Ordering::Acquire) {
        return Ok(());
    }
    check_phase_slow(call)
}

#[cold]
#[inline(never)]
fn check_phase_slow(call: &str) -> Result<(), Error> {
    if ALWAYS_AVAILABLE.contains(&call) {
        return Ok(());
    }
    // Up for the world model or for sessions (after MPI_Finalize too while a session
    // is open: MPI_COMM_WORLD is gone then, and calls on it fail as on any freed
    // communicator).
    if runtime::is_running() {
        RUNNING.store(true, Ordering::Release);
        return Ok(());
    }
    if runtime::finalized() {
        return Err(Error::new(
            ErrorClass::Other,
            "MPI has already been finalized (after MPI_Finalize only the calls MPI-4.1 section 12.4.1 lists may be made)",
        ));
    }
    Err(Error::new(
        ErrorClass::Other,
        "MPI has not been initialized (call MPI_Init, MPI_Init_thread or MPI_Session_init first)",
    ))
}

/// Called by `MPI_Finalize` once the runtime is gone: later calls are checked again.
pub fn finalized() {
    RUNNING.store(false, Ordering::Release);
}

/// Runs the body of an entry point. The object whose handler reports an error is
/// worked out only when there is one (`target`).
#[inline(always)]
pub fn guard(
    call: &'static str,
    target: impl FnOnce() -> Target,
    f: impl FnOnce() -> Result<(), Error>,
) -> c_int {
    if let Err(e) = check_phase(call) {
        return raise(call, target(), &e);
    }
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(())) => 0,
        Ok(Err(e)) => raise(call, target(), &e),
        Err(panic) => {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".into());
            let e = Error::new(ErrorClass::Intern, format!("internal error: {what}"));
            raise(call, target(), &e)
        }
    }
}

/// Defines `PMPI_name` with the body and `MPI_name` forwarding to it.
///
/// ```ignore
/// mpi_fn! { MPI_Comm_rank / PMPI_Comm_rank (comm: MPI_Comm, rank: *mut c_int) target(Target::None) {
///     ...; Ok(())
/// }}
/// ```
///
/// A target that is a communicator handle passed by value (`convert::target(c)`) is
/// decoded only when the call fails, as is one marked `lazy` (for an expression that
/// reads what the body may change, when the body's errors after that change name their
/// object themselves: `Error::comm`); any other target expression is evaluated before
/// the body runs.
#[macro_export]
macro_rules! mpi_fn {
    ($name:ident / $pname:ident ( $($arg:ident : $ty:ty),* $(,)? ) target(convert::target($c:ident)) $body:block) => {
        $crate::mpi_fn! { @define $name / $pname ( $($arg : $ty),* ) (move || convert::target($c)) $body }
    };
    ($name:ident / $pname:ident ( $($arg:ident : $ty:ty),* $(,)? ) target(lazy $target:expr) $body:block) => {
        $crate::mpi_fn! { @define $name / $pname ( $($arg : $ty),* ) (move || $target) $body }
    };
    ($name:ident / $pname:ident ( $($arg:ident : $ty:ty),* $(,)? ) target($target:expr) $body:block) => {
        $crate::mpi_fn! { @define $name / $pname ( $($arg : $ty),* ) ({ let t = $target; move || t }) $body }
    };
    (@define $name:ident / $pname:ident ( $($arg:ident : $ty:ty),* ) ($target:expr) $body:block) => {
        /// # Safety
        /// C entry point; pointer arguments must be valid as the MPI standard requires.
        #[no_mangle]
        pub unsafe extern "C" fn $pname($($arg: $ty),*) -> ::std::os::raw::c_int {
            $crate::export::guard(stringify!($name), $target, move || $body)
        }

        /// # Safety
        /// C entry point; see the `PMPI_` variant.
        #[no_mangle]
        pub unsafe extern "C" fn $name($($arg: $ty),*) -> ::std::os::raw::c_int {
            // SAFETY: same contract as the PMPI_ variant.
            unsafe { $pname($($arg),*) }
        }
    };
}
