//! Count widths: the `int` arguments of the MPI-1 style calls and the `MPI_Count` /
//! `MPI_Aint` arguments of their large-count `_c` twins (MPI 4.1 section 2.5.8), read
//! and written through one trait, [`CountWidth`], so that each call has one body.
//!
//! [`count_fns!`] defines a call and its `_c` twin from one description: the argument
//! list names the types `Count` (a count) and `Disp` (an element displacement of a
//! `v` collective, a byte displacement of `MPI_Alltoallw`), which are `int` in the
//! first definition and `MPI_Count` / `MPI_Aint` in the second. The engine takes
//! 64-bit counts and displacements, so a body converts with [`CountWidth::get`] and
//! [`counts`]; the conversion widens and never fails.

use crate::handles::MPI_Count;
use oxmpi_core::{Error, ErrorClass, Result, UNDEFINED};
use std::borrow::Cow;
use std::os::raw::c_int;

/// An integer argument that is `int` in one form of a call and `MPI_Count` (or
/// `MPI_Aint`, the same C type here) in its `_c` form.
pub trait CountWidth: Copy + 'static {
    /// The value as the engine takes it.
    fn get(self) -> i64;
    /// A C array of these as the engine takes it: borrowed when already 64-bit.
    fn widen(s: &[Self]) -> Cow<'_, [i64]>;
    /// `v`, or an error naming `what` when it does not fit (`MPI_ERR_VALUE_TOO_LARGE`:
    /// a 32-bit output of a value only the `_c` form can hold).
    fn from_count(v: i64, what: &str) -> Result<Self>;
    /// A count of a status query: `MPI_UNDEFINED` for `None` and for a count the type
    /// cannot hold (MPI-4.1 section 4.2.5: a 32-bit query of a count beyond `int`).
    fn or_undefined(n: Option<u64>) -> Self;
}

impl CountWidth for c_int {
    #[inline(always)]
    fn get(self) -> i64 {
        self.into()
    }
    fn widen(s: &[Self]) -> Cow<'_, [i64]> {
        Cow::Owned(s.iter().map(|&v| i64::from(v)).collect())
    }
    fn from_count(v: i64, what: &str) -> Result<Self> {
        c_int::try_from(v).map_err(|_| {
            Error::new(
                ErrorClass::ValueTooLarge,
                format!("{what} {v} does not fit in an int (use the _c form of the call)"),
            )
        })
    }
    fn or_undefined(n: Option<u64>) -> Self {
        n.and_then(|n| c_int::try_from(n).ok()).unwrap_or(UNDEFINED)
    }
}

impl CountWidth for MPI_Count {
    #[inline(always)]
    fn get(self) -> i64 {
        self
    }
    fn widen(s: &[Self]) -> Cow<'_, [i64]> {
        Cow::Borrowed(s)
    }
    fn from_count(v: i64, _what: &str) -> Result<Self> {
        Ok(v)
    }
    fn or_undefined(n: Option<u64>) -> Self {
        n.and_then(|n| MPI_Count::try_from(n).ok())
            .unwrap_or(UNDEFINED.into())
    }
}

/// `n` entries of a C array of counts or displacements, as 64-bit values.
///
/// # Safety
/// A non-null `p` must point to at least `n` initialised values that the caller does
/// not write during the MPI call.
pub unsafe fn counts<'a, T: CountWidth>(
    p: *const T,
    n: usize,
    what: &str,
) -> Result<Cow<'a, [i64]>> {
    if n == 0 {
        return Ok(Cow::Borrowed(&[]));
    }
    if p.is_null() {
        return Err(Error::new(
            ErrorClass::Arg,
            format!("{what} is NULL but {n} entries are needed"),
        ));
    }
    // SAFETY: `p` is non-null (checked) and, per this function's contract, points to `n`
    // initialised, aligned values.
    let s: &'a [T] = unsafe { std::slice::from_raw_parts(p, n) };
    Ok(T::widen(s))
}

/// Defines a call in both count widths (see the module docs): `MPI_X` / `PMPI_X` with
/// `Count` and `Disp` as `int`, `MPI_X_c` / `PMPI_X_c` with them as `MPI_Count` and
/// `MPI_Aint`. Each pair is defined in a module named after its `PMPI_` name (modules
/// and functions have separate namespaces) that defines the two aliases and sees the
/// enclosing module's names; the functions are re-exported from there, so Rust code
/// (the Fortran bindings) calls them by their plain path.
#[macro_export]
macro_rules! count_fns {
    ($name:ident / $pname:ident, $cname:ident / $cpname:ident ( $($arg:ident : $ty:ty),* $(,)? ) target($($target:tt)*) $body:block) => {
        #[doc(hidden)]
        mod $pname {
            #[allow(unused_imports)]
            use super::*;
            #[allow(dead_code)]
            type Count = ::std::os::raw::c_int;
            #[allow(dead_code)]
            type Disp = ::std::os::raw::c_int;
            $crate::mpi_fn! { $name / $pname ( $($arg : $ty),* ) target($($target)*) $body }
        }
        pub use self::$pname::{$name, $pname};
        #[doc(hidden)]
        mod $cpname {
            #[allow(unused_imports)]
            use super::*;
            #[allow(dead_code)]
            type Count = $crate::handles::MPI_Count;
            #[allow(dead_code)]
            type Disp = $crate::handles::MPI_Aint;
            $crate::mpi_fn! { $cname / $cpname ( $($arg : $ty),* ) target($($target)*) $body }
        }
        pub use self::$cpname::{$cname, $cpname};
    };
}
