//! How Rust values map to MPI datatypes: the [`Equivalence`] trait for element types,
//! [`DatatypeRef`] naming an engine datatype, and the [`Buffer`] / [`BufferMut`] traits
//! that describe the memory a message is sent from or received into.
//!
//! # Extension point for user types
//!
//! A user type becomes sendable by implementing [`Equivalence`] for it and returning a
//! [`DatatypeRef`] made with [`DatatypeRef::from_raw`] for a committed engine datatype
//! that describes its layout. The `#[derive(Equivalence)]` macro (a separate crate) does
//! exactly that: it builds a struct datatype in the engine once, keeps it for the life of
//! the process, and implements [`Equivalence::repair`] for fields that need it (`bool`).
//! Its support code is [`derive`](mod@derive).
//!
//! # Datatypes made at run time
//!
//! [`UserDatatype`] builds contiguous, vector, indexed and struct types; a [`View`] or
//! [`MutView`] lays one over a buffer to send or receive strided or scattered values.

use crate::point_to_point::Count;
use oxmpi_core::types::TypeId;
use oxmpi_datatype::Predefined;

pub mod derive;
mod fortran;
mod user;

pub use fortran::{f90_complex, f90_integer, f90_real, match_size, TypeClass};
pub use user::{Address, AsDatatype, MutView, UserDatatype, View};

/// Names an engine datatype, repeated `multiplicity` times per Rust value.
///
/// Arrays `[T; N]` use `T`'s datatype with `N` times its multiplicity, so a buffer of
/// `k` arrays is sent as `k * N` elements of `T`'s datatype (a contiguous layout), and
/// reductions over arrays work element by element.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct DatatypeRef {
    id: TypeId,
    multiplicity: usize,
    size: usize,
}

impl DatatypeRef {
    /// The predefined engine datatype `p`.
    pub fn predefined(p: Predefined) -> DatatypeRef {
        DatatypeRef {
            id: p as TypeId,
            multiplicity: 1,
            size: p.size(),
        }
    }

    /// A datatype from the engine's table, given by index.
    ///
    /// # Safety
    /// `id` must name a committed engine datatype that stays valid for as long as the
    /// returned value (or copies of it) are used, and `size` must be its size in bytes
    /// (`MPI_Type_size`). When used as an [`Equivalence`] implementation's datatype, the
    /// type's extent must be `size_of::<Self>()` and its lower bound zero.
    pub unsafe fn from_raw(id: TypeId, size: usize) -> DatatypeRef {
        DatatypeRef {
            id,
            multiplicity: 1,
            size,
        }
    }

    /// This datatype repeated `n` times (contiguously) per value, as `[T; n]` needs.
    pub fn repeated(self, n: usize) -> DatatypeRef {
        DatatypeRef {
            multiplicity: self.multiplicity.saturating_mul(n),
            ..self
        }
    }

    /// The index of the engine datatype.
    pub fn type_id(&self) -> TypeId {
        self.id
    }

    /// How many engine-datatype elements make up one Rust value.
    pub fn multiplicity(&self) -> usize {
        self.multiplicity
    }

    /// Bytes of data of one element of the engine datatype (`MPI_Type_size`).
    pub fn engine_size(&self) -> usize {
        self.size
    }

    /// Bytes of data in one Rust value (`engine_size() * multiplicity()`).
    pub fn value_size(&self) -> usize {
        self.size.saturating_mul(self.multiplicity)
    }
}

/// A Rust type with an equivalent MPI datatype, so values of it can be sent and received.
///
/// # Safety
/// Implementors promise that:
/// - [`equivalent_datatype`](Equivalence::equivalent_datatype) describes the memory of
///   one value exactly: lower bound 0, extent `size_of::<Self>()`, every data byte inside
///   the value, and no data byte inside a padding byte of the Rust type;
/// - the type holds no pointers, references, or `UnsafeCell` (no interior mutability),
///   and no resources to release (messages copy bytes);
/// - any value of the type, including one whose bytes are all zero, stays a valid value
///   when any of its data bytes are overwritten with arbitrary values and
///   [`repair`](Equivalence::repair) is then run on it. Types for which every bit pattern
///   is valid (integers, floats) need no repair; `bool` repairs bytes other than 0 and 1.
pub unsafe trait Equivalence: Sized {
    /// The datatype that describes one value of this type.
    fn equivalent_datatype() -> DatatypeRef;

    /// True when received bytes may be invalid for the type and
    /// [`repair`](Equivalence::repair) must run after every receive.
    const NEEDS_REPAIR: bool = false;

    /// Makes `count` values at `elements` valid again after a receive wrote arbitrary
    /// bytes into their data bytes. The default does nothing.
    ///
    /// # Safety
    /// `elements` must be valid for reads and writes of `count` values, which may hold
    /// invalid bit patterns in their data bytes; no reference to them may exist.
    unsafe fn repair(elements: *mut Self, count: usize) {
        let _ = (elements, count);
    }
}

macro_rules! equivalent {
    ($($t:ty => $p:ident),* $(,)?) => {$(
        // SAFETY: the predefined type has the size of the Rust primitive, no padding, and
        // every bit pattern of the primitive is a valid value.
        unsafe impl Equivalence for $t {
            fn equivalent_datatype() -> DatatypeRef {
                DatatypeRef::predefined(Predefined::$p)
            }
        }
    )*};
}

equivalent! {
    i8 => Int8, i16 => Int16, i32 => Int32, i64 => Int64,
    u8 => Uint8, u16 => Uint16, u32 => Uint32, u64 => Uint64,
    f32 => Float, f64 => Double,
}

#[cfg(target_pointer_width = "64")]
equivalent! { isize => Int64, usize => Uint64 }
#[cfg(target_pointer_width = "32")]
equivalent! { isize => Int32, usize => Uint32 }

// SAFETY: `bool` is one byte, `MPI_C_BOOL` is one byte; received bytes other than 0 and
// 1 are invalid for `bool` and are repaired (any non-zero byte becomes `true`).
unsafe impl Equivalence for bool {
    fn equivalent_datatype() -> DatatypeRef {
        DatatypeRef::predefined(Predefined::CBool)
    }

    const NEEDS_REPAIR: bool = true;

    unsafe fn repair(elements: *mut bool, count: usize) {
        let bytes = elements.cast::<u8>();
        for i in 0..count {
            // SAFETY: per the contract the `count` one-byte values are readable and
            // writable; they are accessed as `u8`, for which every byte is valid.
            unsafe {
                let b = bytes.add(i);
                b.write((b.read() != 0) as u8);
            }
        }
    }
}

// SAFETY: an array is `N` values of `T` back to back with no padding between them, so
// `N` contiguous elements of `T`'s datatype describe it; repair is `T`'s, element-wise.
unsafe impl<T: Equivalence, const N: usize> Equivalence for [T; N] {
    fn equivalent_datatype() -> DatatypeRef {
        T::equivalent_datatype().repeated(N)
    }

    const NEEDS_REPAIR: bool = T::NEEDS_REPAIR;

    unsafe fn repair(elements: *mut [T; N], count: usize) {
        // SAFETY: `count` arrays of `N` values are `count * N` values of `T`.
        unsafe { T::repair(elements.cast::<T>(), count * N) }
    }
}

/// Memory a message can be sent from: `count()` values of `Element`, contiguous.
///
/// # Safety
/// `pointer()` must point to `count()` initialised, contiguous values of `Element` that
/// live as long as the borrow of `self`. When `datatype_view()` returns `Some((d, n))`,
/// `n` values of `d` at `pointer()` must touch only data bytes (no padding) inside those
/// `count()` values.
pub unsafe trait Buffer {
    /// The element type.
    type Element: Equivalence;
    /// Start of the elements.
    fn pointer(&self) -> *const Self::Element;
    /// Number of elements.
    fn count(&self) -> usize;

    /// For a buffer seen through a datatype ([`View`]): that datatype and how many
    /// values of it the message holds, instead of `count()` elements of `Element`.
    /// `None` (the default) for plain buffers. Calls that cannot take views (the
    /// reductions, the varcount collectives) refuse buffers that return `Some`.
    fn datatype_view(&self) -> Option<(DatatypeRef, Count)> {
        None
    }
}

/// Memory a message can be received into: `count()` values of `Element`, contiguous.
///
/// # Safety
/// `pointer_mut()` must point to `count()` initialised, contiguous, writable values of
/// `Element` that live as long as the mutable borrow of `self`. When `datatype_view()`
/// returns `Some((d, n))`, `n` values of `d` at `pointer_mut()` must touch only bytes
/// inside those `count()` values (which are all repaired after a receive).
pub unsafe trait BufferMut {
    /// The element type.
    type Element: Equivalence;
    /// Start of the elements, for writing.
    fn pointer_mut(&mut self) -> *mut Self::Element;
    /// Number of elements.
    fn count(&self) -> usize;

    /// For a buffer seen through a datatype ([`MutView`]): that datatype and how many
    /// values of it to receive; see [`Buffer::datatype_view`].
    fn datatype_view(&self) -> Option<(DatatypeRef, Count)> {
        None
    }
}

// SAFETY: one value is one element at its own address.
unsafe impl<T: Equivalence> Buffer for T {
    type Element = T;
    fn pointer(&self) -> *const T {
        self
    }
    fn count(&self) -> usize {
        1
    }
}

// SAFETY: a slice is `len()` contiguous values.
unsafe impl<T: Equivalence> Buffer for [T] {
    type Element = T;
    fn pointer(&self) -> *const T {
        self.as_ptr()
    }
    fn count(&self) -> usize {
        self.len()
    }
}

// SAFETY: a vector's initialised part is `len()` contiguous values.
unsafe impl<T: Equivalence> Buffer for Vec<T> {
    type Element = T;
    fn pointer(&self) -> *const T {
        self.as_ptr()
    }
    fn count(&self) -> usize {
        self.len()
    }
}

// SAFETY: one value is one element at its own address.
unsafe impl<T: Equivalence> BufferMut for T {
    type Element = T;
    fn pointer_mut(&mut self) -> *mut T {
        self
    }
    fn count(&self) -> usize {
        1
    }
}

// SAFETY: a slice is `len()` contiguous values.
unsafe impl<T: Equivalence> BufferMut for [T] {
    type Element = T;
    fn pointer_mut(&mut self) -> *mut T {
        self.as_mut_ptr()
    }
    fn count(&self) -> usize {
        self.len()
    }
}

// SAFETY: a vector's initialised part is `len()` contiguous values.
unsafe impl<T: Equivalence> BufferMut for Vec<T> {
    type Element = T;
    fn pointer_mut(&mut self) -> *mut T {
        self.as_mut_ptr()
    }
    fn count(&self) -> usize {
        self.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::size_of;

    fn check<T: Equivalence>() {
        let d = T::equivalent_datatype();
        assert_eq!(
            d.value_size(),
            size_of::<T>(),
            "{}",
            std::any::type_name::<T>()
        );
    }

    #[test]
    fn primitive_sizes_match_rust_sizes() {
        check::<i8>();
        check::<i16>();
        check::<i32>();
        check::<i64>();
        check::<isize>();
        check::<u8>();
        check::<u16>();
        check::<u32>();
        check::<u64>();
        check::<usize>();
        check::<f32>();
        check::<f64>();
        check::<bool>();
        check::<[f64; 3]>();
        check::<[[u16; 2]; 5]>();
        check::<[i32; 0]>();
    }

    #[test]
    fn arrays_repeat_the_element_type() {
        let d = <[[u16; 2]; 5]>::equivalent_datatype();
        assert_eq!(d.type_id(), Predefined::Uint16 as TypeId);
        assert_eq!(d.multiplicity(), 10);
        assert_eq!(d.engine_size(), 2);
        assert_eq!(
            f64::equivalent_datatype().type_id(),
            Predefined::Double as TypeId
        );
    }

    #[test]
    fn bool_repair_maps_nonzero_to_true() {
        let mut raw: [u8; 5] = [0, 1, 2, 255, 0x80];
        // SAFETY: five readable/writable bytes, no reference to them as bool exists.
        unsafe { bool::repair(raw.as_mut_ptr().cast::<bool>(), raw.len()) };
        assert_eq!(raw, [0, 1, 1, 1, 1]);
        let mut arr: [[u8; 2]; 2] = [[3, 0], [0, 9]];
        // SAFETY: as above, two [bool; 2] values.
        unsafe { <[bool; 2]>::repair(arr.as_mut_ptr().cast::<[bool; 2]>(), 2) };
        assert_eq!(arr, [[1, 0], [0, 1]]);
        const { assert!(<[bool; 2]>::NEEDS_REPAIR && !<[f32; 2]>::NEEDS_REPAIR) };
    }

    #[test]
    fn buffers_report_pointer_and_count() {
        let v = vec![1u32, 2, 3];
        assert_eq!(Buffer::count(&v), 3);
        assert_eq!(Buffer::count(&v[1..]), 2);
        assert_eq!(Buffer::count(&7u8), 1);
        assert_eq!(Buffer::pointer(&v[..]), v.as_ptr());
        let mut a = [0.5f64; 4];
        assert_eq!(BufferMut::count(&a), 1); // one [f64; 4] value
        assert_eq!(BufferMut::count(&a[..]), 4);
        assert_eq!(BufferMut::pointer_mut(&mut a[..]), a.as_mut_ptr());
    }
}
