//! Reduction-operation entry points: `MPI_Op_create`, `MPI_Op_free`,
//! `MPI_Op_commutative`, `MPI_Reduce_local` (and `_c`), and the translation of `MPI_Op` handles.
//!
//! A user function is wrapped in a closure the engine calls (never under its lock); the
//! closure hands the C function the buffers, the element count and the datatype
//! handle, in chunks of at most `INT_MAX` elements for the `int`-count signature.

use crate::count::CountWidth;
use crate::export::Target;
use crate::handles::{self, DatatypeRef, MPI_Count, MPI_Datatype, MPI_Op, MPI_OP_NULL};
use crate::{count_fns, mpi_fn};
use oxmpi_core::coll::{self, OpId, UserFn};
use oxmpi_core::types::TypeId;
use oxmpi_core::{runtime, Error, ErrorClass, Result};
use std::ffi::c_void;
use std::os::raw::c_int;
use std::sync::Arc;

/// `MPI_User_function`.
pub type MPI_User_function =
    unsafe extern "C" fn(*mut c_void, *mut c_void, *mut c_int, *mut MPI_Datatype);
/// `MPI_User_function_c` (large counts).
pub type MPI_User_function_c =
    unsafe extern "C" fn(*mut c_void, *mut c_void, *mut MPI_Count, *mut MPI_Datatype);

/// The engine index of an operation handle.
pub fn op(h: MPI_Op) -> Result<OpId> {
    if h == MPI_OP_NULL {
        return Err(Error::new(ErrorClass::Op, "invalid operation MPI_OP_NULL"));
    }
    handles::op_index(h)
        .ok_or_else(|| Error::new(ErrorClass::Op, format!("invalid operation handle {h:#x}")))
}

fn type_handle(ty: TypeId) -> MPI_Datatype {
    handles::datatype_handle(DatatypeRef::from_index(ty))
}

/// The extent of `ty`, for stepping over chunks (only needed beyond `INT_MAX` elements).
fn extent(ty: TypeId) -> isize {
    runtime::with(|rt| Ok(rt.types.get(ty)?.signed_extent)).unwrap_or(0)
}

fn wrap(f: MPI_User_function) -> UserFn {
    Arc::new(move |a: *const u8, b: *mut u8, count: usize, ty: TypeId| {
        let mut dt = type_handle(ty);
        let (mut a, mut b, mut left) = (a, b, count);
        while left > 0 {
            let k = left.min(c_int::MAX as usize);
            let mut len = k as c_int;
            // SAFETY: the engine passes `count` elements of `ty` at both addresses, as
            // the C function expects; `len` and `dt` are valid for its duration.
            unsafe { f(a as *mut c_void, b as *mut c_void, &mut len, &mut dt) };
            left -= k;
            if left > 0 {
                let step = (k as isize).wrapping_mul(extent(ty));
                a = a.wrapping_offset(step);
                b = b.wrapping_offset(step);
            }
        }
    })
}

fn wrap_c(f: MPI_User_function_c) -> UserFn {
    Arc::new(move |a: *const u8, b: *mut u8, count: usize, ty: TypeId| {
        let mut dt = type_handle(ty);
        let mut len = count as MPI_Count;
        // SAFETY: as for `wrap`; the large-count signature takes every element at once.
        unsafe { f(a as *mut c_void, b as *mut c_void, &mut len, &mut dt) };
    })
}

/// Registers `func` and stores the new operation's handle in `*out`.
///
/// # Safety
/// `out` is NULL (refused) or points to a writable `MPI_Op`.
unsafe fn create(func: UserFn, commute: c_int, out: *mut MPI_Op) -> Result<()> {
    let out = crate::convert::out(out, "op")?;
    let id = coll::op_create(func, commute != 0)?;
    // SAFETY: checked non-null; the caller provides writable storage.
    unsafe { *out = handles::op_handle(id) };
    Ok(())
}

mpi_fn! { MPI_Op_create / PMPI_Op_create (f: Option<MPI_User_function>, commute: c_int, out: *mut MPI_Op) target(Target::None) {
    let f = f.ok_or_else(|| Error::new(ErrorClass::Arg, "user_fn is NULL"))?;
    // SAFETY: `out` must point to a writable MPI_Op (MPI_Op_create's contract; `create` refuses
    // NULL before storing through it).
    unsafe { create(wrap(f), commute, out) }
}}

mpi_fn! { MPI_Op_create_c / PMPI_Op_create_c (f: Option<MPI_User_function_c>, commute: c_int, out: *mut MPI_Op) target(Target::None) {
    let f = f.ok_or_else(|| Error::new(ErrorClass::Arg, "user_fn is NULL"))?;
    // SAFETY: `out` must point to a writable MPI_Op (MPI_Op_create_c's contract; `create`
    // refuses NULL before storing through it).
    unsafe { create(wrap_c(f), commute, out) }
}}

mpi_fn! { MPI_Op_free / PMPI_Op_free (h: *mut MPI_Op) target(Target::None) {
    let h = crate::convert::out(h, "op")?;
    // SAFETY: checked non-null; points to the caller's handle.
    let id = op(unsafe { *h })?;
    coll::op_free(id)?;
    // SAFETY: as above.
    unsafe { *h = MPI_OP_NULL };
    Ok(())
}}

mpi_fn! { MPI_Op_commutative / PMPI_Op_commutative (h: MPI_Op, commute: *mut c_int) target(Target::None) {
    let out = crate::convert::out(commute, "commute")?;
    let c = coll::op_commutative(op(h)?)?;
    // SAFETY: checked non-null.
    unsafe { *out = c as c_int };
    Ok(())
}}

count_fns! { MPI_Reduce_local / PMPI_Reduce_local, MPI_Reduce_local_c / PMPI_Reduce_local_c (inbuf: *const c_void, inoutbuf: *mut c_void, count: Count, dt: MPI_Datatype, h: MPI_Op) target(Target::None) {
    crate::convert::not_in_place(inbuf, "inbuf")?;
    crate::convert::not_in_place(inoutbuf, "inoutbuf")?;
    let ty = crate::convert::datatype(dt)?;
    // SAFETY: the buffers hold `count` elements (MPI contract).
    unsafe { coll::reduce_local(inbuf as usize, inoutbuf as usize, count.get(), ty, op(h)?) }
}}
