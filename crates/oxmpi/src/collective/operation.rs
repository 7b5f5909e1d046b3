//! Reduction operations for the reducing collectives: the [`Operation`] trait, the
//! predefined [`SystemOperation`]s (`MPI_SUM`, `MPI_MAX`, ...), and [`UserOperation`]s
//! made from Rust closures (`MPI_Op_create`), plus [`reduce_local_into`]
//! (`MPI_Reduce_local`).
//!
//! A user operation is typed: `UserOperation<T>` combines slices of `T`, and the
//! collectives accept it only for buffers of `T`. The closure is called as
//! `f(input, inout)` and must compute `inout[i] = input[i] op inout[i]`, where `input`
//! holds the values of lower ranks (the order MPI guarantees for non-commutative
//! operations).

use crate::datatype::{Buffer, BufferMut, DatatypeRef, Equivalence};
use crate::error::{engine, Error, ErrorClass, Result};
use crate::raw::{engine_count, zeroed_vec, Fixup};
use oxmpi_coll::ops::PredefinedOp;
use oxmpi_core::coll::{self, OpId, UserFn};
use oxmpi_core::types::{self, TypeId};
use std::marker::PhantomData;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

/// An operation that reduces values of `T`: a [`SystemOperation`] or a reference to a
/// [`UserOperation<T>`].
pub trait Operation<T: Equivalence> {
    /// The engine's index of the operation.
    fn op_id(&self) -> OpId;

    /// True for user operations, which see whole values of `T` (the engine then works on
    /// one element per value, not per array entry).
    fn is_user(&self) -> bool;

    /// Whether the operation is commutative (`MPI_Op_commutative`).
    fn is_commutative(&self) -> bool;
}

/// One of the operations MPI predefines. Each is defined for some element types only
/// (`sum` for numbers, `logical_and` for integers and `bool`, ...); using one on a type
/// it is not defined for fails with class `MPI_ERR_OP`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SystemOperation(PredefinedOp);

impl SystemOperation {
    /// The maximum (`MPI_MAX`).
    pub fn max() -> SystemOperation {
        SystemOperation(PredefinedOp::Max)
    }
    /// The minimum (`MPI_MIN`).
    pub fn min() -> SystemOperation {
        SystemOperation(PredefinedOp::Min)
    }
    /// The sum (`MPI_SUM`).
    pub fn sum() -> SystemOperation {
        SystemOperation(PredefinedOp::Sum)
    }
    /// The product (`MPI_PROD`).
    pub fn product() -> SystemOperation {
        SystemOperation(PredefinedOp::Prod)
    }
    /// Logical and (`MPI_LAND`).
    pub fn logical_and() -> SystemOperation {
        SystemOperation(PredefinedOp::Land)
    }
    /// Bitwise and (`MPI_BAND`).
    pub fn bitwise_and() -> SystemOperation {
        SystemOperation(PredefinedOp::Band)
    }
    /// Logical or (`MPI_LOR`).
    pub fn logical_or() -> SystemOperation {
        SystemOperation(PredefinedOp::Lor)
    }
    /// Bitwise or (`MPI_BOR`).
    pub fn bitwise_or() -> SystemOperation {
        SystemOperation(PredefinedOp::Bor)
    }
    /// Logical exclusive or (`MPI_LXOR`).
    pub fn logical_xor() -> SystemOperation {
        SystemOperation(PredefinedOp::Lxor)
    }
    /// Bitwise exclusive or (`MPI_BXOR`).
    pub fn bitwise_xor() -> SystemOperation {
        SystemOperation(PredefinedOp::Bxor)
    }
    /// The smallest value with its location, the lowest location on ties
    /// (`MPI_MINLOC`); for buffers of [`Location`].
    pub fn min_location() -> SystemOperation {
        SystemOperation(PredefinedOp::Minloc)
    }
    /// The largest value with its location, the lowest location on ties
    /// (`MPI_MAXLOC`); for buffers of [`Location`].
    pub fn max_location() -> SystemOperation {
        SystemOperation(PredefinedOp::Maxloc)
    }
    /// Keeps the value of the higher rank (`MPI_REPLACE`).
    pub fn replace() -> SystemOperation {
        SystemOperation(PredefinedOp::Replace)
    }
    /// Keeps the value already there (`MPI_NO_OP`).
    pub fn no_op() -> SystemOperation {
        SystemOperation(PredefinedOp::NoOp)
    }

    /// The MPI name of the operation (`"MPI_SUM"`, ...).
    pub fn name(&self) -> &'static str {
        self.0.name()
    }
}

impl<T: Equivalence> Operation<T> for SystemOperation {
    fn op_id(&self) -> OpId {
        self.0 as OpId
    }
    fn is_user(&self) -> bool {
        false
    }
    fn is_commutative(&self) -> bool {
        self.0.is_commutative()
    }
}

/// A value and where it came from (a rank, an index), for
/// [`SystemOperation::min_location`] and [`SystemOperation::max_location`]. Laid out
/// as C's `struct { T value; int location; }`, the layout of MPI's pair types
/// (`MPI_FLOAT_INT`, `MPI_DOUBLE_INT`, `MPI_LONG_INT`, `MPI_SHORT_INT`, `MPI_2INT`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, PartialOrd)]
pub struct Location<T> {
    /// The value compared.
    pub value: T,
    /// Where it came from.
    pub location: i32,
}

macro_rules! location {
    ($($t:ty => $p:ident),* $(,)?) => {$(
        // SAFETY: `#[repr(C)]` puts `value` at 0 and `location` at the next multiple of
        // 4 after it, exactly the predefined pair type's map, whose extent is the C
        // struct's size, i.e. `size_of::<Self>()`; padding is outside the map. Every
        // bit pattern of the two fields is valid.
        unsafe impl Equivalence for Location<$t> {
            fn equivalent_datatype() -> DatatypeRef {
                DatatypeRef::predefined(oxmpi_datatype::Predefined::$p)
            }
        }
    )*};
}

location! {
    f32 => FloatInt, f64 => DoubleInt, i16 => ShortInt, i32 => TwoInt,
}
#[cfg(target_pointer_width = "64")]
location! { i64 => LongInt }

/// A reduction operation on values of `T` defined by a Rust closure
/// (`MPI_Op_create`); freed when dropped (`MPI_Op_free`).
///
/// ```no_run
/// use oxmpi::collective::UserOperation;
/// use oxmpi::traits::*;
/// let universe = oxmpi::initialize()?;
/// let world = universe.world();
/// // Keeps the larger magnitude, with its sign.
/// let op = UserOperation::commutative(|x: &[i64], y: &mut [i64]| {
///     for (a, b) in x.iter().zip(y.iter_mut()) {
///         if a.abs() > b.abs() {
///             *b = *a;
///         }
///     }
/// })?;
/// let mut biggest = 0i64;
/// world.all_reduce_into(&(world.rank() as i64 - 2), &mut biggest, &op)?;
/// # Ok::<(), oxmpi::Error>(())
/// ```
pub struct UserOperation<T> {
    id: OpId,
    commutative: bool,
    _values: PhantomData<fn() -> T>,
}

impl<T> std::fmt::Debug for UserOperation<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UserOperation")
            .field("id", &self.id)
            .field("commutative", &self.commutative)
            .finish()
    }
}

impl<T: Equivalence + 'static> UserOperation<T> {
    /// A commutative (and associative) operation: the library may combine values in any
    /// order. `f(input, inout)` sets `inout[i] = input[i] op inout[i]`.
    pub fn commutative<F>(f: F) -> Result<UserOperation<T>>
    where
        F: Fn(&[T], &mut [T]) + Send + Sync + 'static,
    {
        UserOperation::create("UserOperation::commutative", f, true)
    }

    /// An associative operation that is not commutative: values are combined in rank
    /// order, `input` always holding the values of the lower ranks.
    pub fn non_commutative<F>(f: F) -> Result<UserOperation<T>>
    where
        F: Fn(&[T], &mut [T]) + Send + Sync + 'static,
    {
        UserOperation::create("UserOperation::non_commutative", f, false)
    }

    fn create<F>(method: &'static str, f: F, commutative: bool) -> Result<UserOperation<T>>
    where
        F: Fn(&[T], &mut [T]) + Send + Sync + 'static,
    {
        let func: UserFn = Arc::new(move |a: *const u8, b: *mut u8, count: usize, _ty| {
            // SAFETY: the engine passes `count` elements of the datatype this operation
            // is used with, which the collectives make one element per value of `T`
            // (see `ReductionType`), laid out as in memory, the two vectors disjoint.
            let r = catch_unwind(AssertUnwindSafe(|| unsafe { call_typed(&f, a, b, count) }));
            if r.is_err() {
                oxmpi_core::runtime::abort(
                    1,
                    "oxmpi: a user reduction operation panicked; ending the job",
                );
            }
        });
        let id = coll::op_create(func, commutative).map_err(engine(method))?;
        Ok(UserOperation {
            id,
            commutative,
            _values: PhantomData,
        })
    }
}

impl<T> UserOperation<T> {
    /// Whether the operation was declared commutative.
    pub fn is_commutative(&self) -> bool {
        self.commutative
    }
}

impl<T> Drop for UserOperation<T> {
    fn drop(&mut self) {
        // Fails only after finalization, when the table is gone anyway.
        let _ = coll::op_free(self.id);
    }
}

impl<T: Equivalence> Operation<T> for &UserOperation<T> {
    fn op_id(&self) -> OpId {
        self.id
    }
    fn is_user(&self) -> bool {
        true
    }
    fn is_commutative(&self) -> bool {
        self.commutative
    }
}

/// Calls `f` on `count` values of `T` at `a` (input) and `b` (input and output).
///
/// # Safety
/// `a` and `b` must each hold `count` values of `T` (data bytes of valid or repairable
/// values, at `size_of::<T>()` steps), readable, `b` writable, not overlapping, with no
/// references to them in use.
unsafe fn call_typed<T: Equivalence, F: Fn(&[T], &mut [T])>(
    f: &F,
    a: *const u8,
    b: *mut u8,
    count: usize,
) {
    if count == 0 {
        return;
    }
    let size = std::mem::size_of::<T>();
    let align = std::mem::align_of::<T>();
    let aligned = (a as usize) % align == 0 && (b as usize) % align == 0;
    if aligned && !T::NEEDS_REPAIR && size > 0 {
        // SAFETY: per the contract, aligned values whose every data-byte pattern is
        // valid (no repair needed); the engine keeps them alive during the call.
        let (x, y) = unsafe {
            (
                std::slice::from_raw_parts(a.cast::<T>(), count),
                std::slice::from_raw_parts_mut(b.cast::<T>(), count),
            )
        };
        f(x, y);
        return;
    }
    // Misaligned engine scratch memory, or values to repair: work on aligned copies.
    let mut x = zeroed_vec::<T>(count);
    let mut y = zeroed_vec::<T>(count);
    let bytes = count * size;
    // SAFETY: both sources hold `bytes` bytes (contract); the copies are fresh vectors
    // of `count` values, repaired before use as the `Equivalence` contract requires.
    unsafe {
        std::ptr::copy_nonoverlapping(a, x.as_mut_ptr().cast::<u8>(), bytes);
        std::ptr::copy_nonoverlapping(b.cast_const(), y.as_mut_ptr().cast::<u8>(), bytes);
        T::repair(x.as_mut_ptr(), count);
        T::repair(y.as_mut_ptr(), count);
    }
    f(&x, &mut y);
    // SAFETY: `b` has room for `bytes` bytes (contract).
    unsafe { std::ptr::copy_nonoverlapping(y.as_ptr().cast::<u8>(), b, bytes) };
}

/// The engine datatype and count a reduction of `n` values of `T` uses: the element
/// type with `n * multiplicity` elements for predefined operations (which work entry
/// by entry), one element per value for user operations (a contiguous type made for
/// the call when `T` is an array, freed afterwards).
pub(crate) struct ReductionType {
    pub ty: TypeId,
    pub count: i32,
    temporary: bool,
}

impl ReductionType {
    pub(crate) fn new<T: Equivalence, O: Operation<T> + ?Sized>(
        method: &'static str,
        op: &O,
        n: usize,
    ) -> Result<ReductionType> {
        let d = T::equivalent_datatype();
        if !op.is_user() || d.multiplicity() == 1 {
            return Ok(ReductionType {
                ty: d.type_id(),
                count: engine_count::<T>(method, n)?,
                temporary: false,
            });
        }
        let count = i32::try_from(n).map_err(|_| {
            Error::new(
                method,
                ErrorClass::Count,
                format_args!("{n} values are too many for one call"),
            )
        })?;
        let per = i64::try_from(d.multiplicity())
            .map_err(|_| Error::new(method, ErrorClass::Count, "the value type is too large"))?;
        let ty = types::contiguous(per, d.type_id()).map_err(engine(method))?;
        if let Err(e) = types::commit(ty) {
            let _ = types::free(ty);
            return Err(Error::from_core(method, e));
        }
        Ok(ReductionType {
            ty,
            count,
            temporary: true,
        })
    }
}

impl Drop for ReductionType {
    fn drop(&mut self) {
        if self.temporary {
            let _ = types::free(self.ty);
        }
    }
}

/// Combines `inbuf` into `inoutbuf` on this process, without communication
/// (`MPI_Reduce_local`): `inoutbuf[i] = inbuf[i] op inoutbuf[i]`. The buffers must have
/// the same length (class `MPI_ERR_COUNT` otherwise).
pub fn reduce_local_into<S, R, O>(inbuf: &S, inoutbuf: &mut R, op: O) -> Result<()>
where
    S: Buffer + ?Sized,
    R: BufferMut<Element = S::Element> + ?Sized,
    O: Operation<S::Element>,
{
    const M: &str = "reduce_local_into";
    super::no_view(
        M,
        inbuf.datatype_view().is_some() || inoutbuf.datatype_view().is_some(),
    )?;
    same_length(M, inbuf.count(), inoutbuf.count())?;
    let rt = ReductionType::new::<S::Element, O>(M, &op, inbuf.count())?;
    let n = inoutbuf.count();
    let out = inoutbuf.pointer_mut();
    // SAFETY: both buffers hold `n` values, which is `rt.count` elements of `rt.ty`; the
    // borrows (shared and exclusive) keep them alive and disjoint during the call.
    let r = unsafe {
        coll::reduce_local(
            inbuf.pointer() as usize,
            out as usize,
            rt.count.into(),
            rt.ty,
            op.op_id(),
        )
    };
    // SAFETY: the call is over; the buffer is alive and unused.
    unsafe { Fixup::new(out, n).apply() };
    r.map_err(engine(M))
}

/// Send and receive buffers of a reduction must hold the same number of values.
pub(crate) fn same_length(method: &'static str, send: usize, recv: usize) -> Result<()> {
    if send != recv {
        return Err(Error::new(
            method,
            ErrorClass::Count,
            format_args!(
                "the send buffer holds {send} values but the receive buffer {recv} (they must be equal)"
            ),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn system_operations_have_their_mpi_indices() {
        assert_eq!(
            <SystemOperation as Operation<i32>>::op_id(&SystemOperation::max()),
            0
        );
        assert_eq!(
            <SystemOperation as Operation<i32>>::op_id(&SystemOperation::sum()),
            2
        );
        assert_eq!(
            <SystemOperation as Operation<i32>>::op_id(&SystemOperation::no_op()),
            13
        );
        assert_eq!(SystemOperation::product().name(), "MPI_PROD");
        assert!(!<SystemOperation as Operation<f64>>::is_commutative(
            &SystemOperation::replace()
        ));
    }

    #[test]
    fn locations_match_the_pair_types() {
        use oxmpi_datatype::Predefined as P;
        fn check<T>(p: P)
        where
            Location<T>: Equivalence,
        {
            assert_eq!(p.extent(), std::mem::size_of::<Location<T>>());
            assert_eq!(p.offsets()[1], std::mem::offset_of!(Location<T>, location));
        }
        check::<f32>(P::FloatInt);
        check::<f64>(P::DoubleInt);
        check::<i16>(P::ShortInt);
        check::<i32>(P::TwoInt);
        check::<i64>(P::LongInt);
    }

    #[test]
    fn typed_calls_work_on_misaligned_and_repaired_copies() {
        let add = |x: &[u32], y: &mut [u32]| {
            for (a, b) in x.iter().zip(y.iter_mut()) {
                *b += *a;
            }
        };
        // Misaligned byte buffers, as engine scratch memory may be.
        let mut a = [0u8; 13];
        let mut b = [0u8; 13];
        a[1..5].copy_from_slice(&7u32.to_ne_bytes());
        a[5..9].copy_from_slice(&1u32.to_ne_bytes());
        b[1..5].copy_from_slice(&5u32.to_ne_bytes());
        b[5..9].copy_from_slice(&2u32.to_ne_bytes());
        // SAFETY: two u32 values at offset 1 of each buffer.
        unsafe { call_typed(&add, a.as_ptr().add(1), b.as_mut_ptr().add(1), 2) };
        assert_eq!(b[1..5], 12u32.to_ne_bytes());
        assert_eq!(b[5..9], 3u32.to_ne_bytes());
        // bool needs repair: a byte 7 is read as true.
        let or = |x: &[bool], y: &mut [bool]| {
            for (a, b) in x.iter().zip(y.iter_mut()) {
                *b |= *a;
            }
        };
        let a = [7u8, 0];
        let mut b = [0u8, 0];
        // SAFETY: two one-byte values each.
        unsafe { call_typed(&or, a.as_ptr(), b.as_mut_ptr(), 2) };
        assert_eq!(b, [1, 0]);
    }
}
