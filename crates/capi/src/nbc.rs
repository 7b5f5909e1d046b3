//! The shared shape of the nonblocking (`MPI_Ibcast`) and persistent (`MPI_Bcast_init`)
//! collective entry points: [`coll_fns!`] defines a collective's blocking, nonblocking
//! and persistent entry points (with their `PMPI_` names) from one body that converts
//! the arguments and calls the engine made `how`; the request and info arguments are
//! checked here, before anything starts.

use crate::convert::request_handle;
use crate::handles::{MPI_Info, MPI_Request};
use oxmpi_core::device::ReqId;
use oxmpi_core::{Error, ErrorClass, Result};

/// The request argument may not be NULL (checked before the call starts).
pub(crate) fn check_request(r: *mut MPI_Request) -> Result<()> {
    if r.is_null() {
        return Err(Error::new(ErrorClass::Arg, "request is NULL"));
    }
    Ok(())
}

/// The info argument of a persistent collective: `MPI_INFO_NULL` or a live object (no
/// hints are used).
pub(crate) fn check_info(h: MPI_Info) -> Result<()> {
    crate::info::optional_info(h).map(drop)
}

/// Writes the request of a started or initialised collective.
///
/// # Safety
/// `r` must point to a writable `MPI_Request` (checked non-null by [`check_request`]).
pub(crate) unsafe fn put(r: *mut MPI_Request, id: Option<ReqId>) -> Result<()> {
    let Some(id) = id else {
        return Err(Error::new(
            ErrorClass::Intern,
            "the collective made no request",
        ));
    };
    // SAFETY: per the contract.
    unsafe { *r = request_handle(id) };
    Ok(())
}

/// Defines `MPI_X`, `MPI_IX` and `MPI_X_init` (and their `PMPI_` names) from one body
/// that evaluates to the engine call made `how` (`Result<Option<ReqId>>`). The
/// nonblocking form takes a trailing `MPI_Request *`, the persistent one an `MPI_Info`
/// and an `MPI_Request *`.
///
/// With a second list of three names after a `;` (`MPI_X_c`, `MPI_IX_c`,
/// `MPI_X_init_c`) it also defines the large-count twins from the same body, as
/// [`count_fns!`](crate::count_fns) does for single calls: the argument list names the
/// types `Count` and `Disp`, `int` in the first three and `MPI_Count` / `MPI_Aint` in
/// the twins. Each set is defined in a module named after its `PMPI_` blocking name
/// (modules and functions have separate namespaces), which defines the two aliases and
/// sees the enclosing module's names; the functions are re-exported from there.
#[macro_export]
macro_rules! coll_fns {
    ($b:ident / $pb:ident, $i:ident / $pi:ident, $p:ident / $pp:ident ; $bc:ident / $pbc:ident, $ic:ident / $pic:ident, $pc:ident / $ppc:ident ( $($arg:ident : $ty:ty),* ) comm($c:ident) how($how:ident) $body:block) => {
        #[doc(hidden)]
        mod $pb {
            #[allow(unused_imports)]
            use super::*;
            #[allow(dead_code)]
            type Count = ::std::os::raw::c_int;
            #[allow(dead_code)]
            type Disp = ::std::os::raw::c_int;
            $crate::coll_fns! { $b / $pb, $i / $pi, $p / $pp ( $($arg : $ty),* ) comm($c) how($how) $body }
        }
        pub use self::$pb::{$b, $pb, $i, $pi, $p, $pp};
        #[doc(hidden)]
        mod $pbc {
            #[allow(unused_imports)]
            use super::*;
            #[allow(dead_code)]
            type Count = $crate::handles::MPI_Count;
            #[allow(dead_code)]
            type Disp = $crate::handles::MPI_Aint;
            $crate::coll_fns! { $bc / $pbc, $ic / $pic, $pc / $ppc ( $($arg : $ty),* ) comm($c) how($how) $body }
        }
        pub use self::$pbc::{$bc, $pbc, $ic, $pic, $pc, $ppc};
    };
    ($b:ident / $pb:ident, $i:ident / $pi:ident, $p:ident / $pp:ident ( $($arg:ident : $ty:ty),* ) comm($c:ident) how($how:ident) $body:block) => {
        $crate::mpi_fn! { $b / $pb ( $($arg : $ty),* ) target(convert::target($c)) {
            let $how = oxmpi_core::coll::How::Block;
            (move || -> oxmpi_core::Result<Option<oxmpi_core::device::ReqId>> { $body })().map(drop)
        }}
        $crate::coll_fns! { @more $i / $pi, $p / $pp ( $($arg : $ty),* ) comm($c) how($how) $body }
    };
    ($i:ident / $pi:ident, $p:ident / $pp:ident ( $($arg:ident : $ty:ty),* ) comm($c:ident) how($how:ident) $body:block) => {
        $crate::coll_fns! { @more $i / $pi, $p / $pp ( $($arg : $ty),* ) comm($c) how($how) $body }
    };
    (@more $i:ident / $pi:ident, $p:ident / $pp:ident ( $($arg:ident : $ty:ty),* ) comm($c:ident) how($how:ident) $body:block) => {
        $crate::mpi_fn! { $i / $pi ( $($arg : $ty,)* request: *mut $crate::handles::MPI_Request ) target(convert::target($c)) {
            $crate::nbc::check_request(request)?;
            let $how = oxmpi_core::coll::How::Start;
            let id = (move || -> oxmpi_core::Result<Option<oxmpi_core::device::ReqId>> { $body })()?;
            // SAFETY: `request` is non-null (checked above) and points to a writable
            // MPI_Request (the call's contract).
            unsafe { $crate::nbc::put(request, id) }
        }}
        $crate::mpi_fn! { $p / $pp ( $($arg : $ty,)* info: $crate::handles::MPI_Info, request: *mut $crate::handles::MPI_Request ) target(convert::target($c)) {
            $crate::nbc::check_request(request)?;
            $crate::nbc::check_info(info)?;
            let $how = oxmpi_core::coll::How::Init;
            let id = (move || -> oxmpi_core::Result<Option<oxmpi_core::device::ReqId>> { $body })()?;
            // SAFETY: `request` is non-null (checked above) and points to a writable
            // MPI_Request (the call's contract).
            unsafe { $crate::nbc::put(request, id) }
        }}
    };
}
