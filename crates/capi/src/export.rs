//! How a C entry point runs: catch panics (none may cross into C), turn engine errors
//! into error codes, and hand them to the error handler of the object the call was
//! about — `MPI_ERRORS_ARE_FATAL` prints one line and ends the job.
//!
//! [`mpi_fn!`] defines each function twice, as `PMPI_Xxx` (the implementation) and
//! `MPI_Xxx` (the interceptable name a profiling library may replace). Internal calls
//! never go through the `MPI_` names.

use crate::errors;
use oxmpi_core::comm::{CommId, Errhandler, SELF};
use oxmpi_core::{runtime, Error, ErrorClass};
use std::os::raw::c_int;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// The object whose error handler reports a failure of the call.
#[derive(Clone, Copy, Debug)]
pub enum Target {
    Comm(CommId),
    /// No object: errors go to `MPI_COMM_SELF`'s handler, as MPI-4 specifies.
    None,
}

fn handler_of(t: Target) -> Errhandler {
    let id = match t {
        Target::Comm(c) => c,
        Target::None => SELF,
    };
    runtime::with(|rt| Ok(rt.comms.get(id).map(|c| c.errhandler).ok()))
        .ok()
        .flatten()
        .or_else(|| {
            runtime::with(|rt| Ok(rt.comms.get(SELF).map(|c| c.errhandler).ok()))
                .ok()
                .flatten()
        })
        .unwrap_or(Errhandler::Fatal)
}

/// Reports `e` raised by `call` on `target` and returns the code to give the caller
/// (when the handler lets the call return).
pub fn raise(call: &str, target: Target, e: &Error) -> c_int {
    let code = errors::code_for(call, e);
    match handler_of(target) {
        Errhandler::Return => code,
        Errhandler::User(_) => crate::errhandler::call_user(target, code),
        Errhandler::Fatal | Errhandler::Abort => fatal_exit(call, e),
    }
}

/// Prints the error the way `MPI_ERRORS_ARE_FATAL` does and ends the job.
pub fn fatal_exit(call: &str, e: &Error) -> ! {
    let rank = runtime::with(|rt| Ok(rt.world_rank as i64)).unwrap_or(-1);
    let who = if rank >= 0 {
        format!("rank {rank}")
    } else {
        "process".to_string()
    };
    let line = format!(
        "oxmpi: {who}: {call}: {}: {} (error handler MPI_ERRORS_ARE_FATAL)",
        e.class.name(),
        e.message
    );
    runtime::abort(1, &line)
}

/// Runs the body of an entry point.
pub fn guard(call: &'static str, target: Target, f: impl FnOnce() -> Result<(), Error>) -> c_int {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(())) => 0,
        Ok(Err(e)) => raise(call, target, &e),
        Err(panic) => {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".into());
            let e = Error::new(ErrorClass::Intern, format!("internal error: {what}"));
            raise(call, target, &e)
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
#[macro_export]
macro_rules! mpi_fn {
    ($name:ident / $pname:ident ( $($arg:ident : $ty:ty),* $(,)? ) target($target:expr) $body:block) => {
        /// # Safety
        /// C entry point; pointer arguments must be valid as the MPI standard requires.
        #[no_mangle]
        pub unsafe extern "C" fn $pname($($arg: $ty),*) -> ::std::os::raw::c_int {
            let target = $target;
            $crate::export::guard(stringify!($name), target, move || $body)
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
