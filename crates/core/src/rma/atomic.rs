//! CPU atomic instructions for accumulates on shared-memory windows.
//!
//! The rule: an accumulate, get-accumulate, fetch-and-op or compare-and-swap runs
//! element by element with atomic instructions, without the target's accumulate mutex,
//! when (1) the window's memory is in the shared segment (`MPI_Win_allocate`,
//! `MPI_Win_allocate_shared`: every origin then reaches it the same way), (2) the
//! target datatype is made of one predefined integer type of 1, 2, 4 or 8 bytes or of
//! `float` or `double` ([`elem_of`]), and (3) every target element is naturally
//! aligned. Every operation the standard defines on such a type has an atomic form:
//! the native read-modify-write instructions where the CPU has one (integer sum,
//! bitwise operations, min, max, replace, and `MPI_NO_OP` as a load), a
//! compare-and-swap loop otherwise (products, logical operations, every floating-point
//! operation). Whether a call qualifies depends only on its basic type and the
//! location, never on its operation or element count, so all accumulates of one basic
//! type to one location take the same path, whatever their operations: MPI 4.1
//! §12.7.1 asks atomicity only of accumulates with one basic type (and one operation
//! or `MPI_NO_OP`), and this gives it for any mix of operations. Other accumulates
//! (larger or pair types, misaligned elements, memory a member gave `MPI_Win_create`)
//! keep the mutex, whose whole-element stores no atomic of another type relies on.

use oxmpi_coll::ops::PredefinedOp;
use oxmpi_datatype::{Predefined, Primitive};
use std::sync::atomic::{
    AtomicI16, AtomicI32, AtomicI64, AtomicI8, AtomicU16, AtomicU32, AtomicU64, AtomicU8,
    Ordering::SeqCst,
};

/// An element the atomic path handles: its size and kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Elem {
    pub size: usize,
    pub kind: ElemKind,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ElemKind {
    Signed,
    Unsigned,
    Float,
}

/// The element a predefined type is made of, if the atomic path handles it.
pub(crate) fn elem_of(p: Predefined) -> Option<Elem> {
    use ElemKind::*;
    let (size, kind) = match p.primitives() {
        [Primitive::I8] => (1, Signed),
        [Primitive::I16] => (2, Signed),
        [Primitive::I32] => (4, Signed),
        [Primitive::I64] => (8, Signed),
        [Primitive::U8] => (1, Unsigned),
        [Primitive::U16] => (2, Unsigned),
        [Primitive::U32] => (4, Unsigned),
        [Primitive::U64] => (8, Unsigned),
        [Primitive::F32] => (4, Float),
        [Primitive::F64] => (8, Float),
        _ => return None,
    };
    Some(Elem { size, kind })
}

/// Whether [`rmw`] has a form of `op` on `e`: every operation MPI defines on
/// integers and floating-point numbers (the caller checked that `op` is defined on
/// the type).
pub(crate) fn op_ok(e: Elem, op: PredefinedOp) -> bool {
    use PredefinedOp as P;
    match e.kind {
        ElemKind::Float => matches!(
            op,
            P::Sum | P::Prod | P::Min | P::Max | P::Replace | P::NoOp
        ),
        _ => !matches!(op, P::Minloc | P::Maxloc),
    }
}

fn truth<T: From<bool>>(b: bool) -> T {
    T::from(b)
}

/// `MPI_MIN` of the origin's `v` and the target's `t`, as the reduction kernels take it
/// (the target's value when they compare unordered).
fn min_of<T: PartialOrd>(v: T, t: T) -> T {
    if v < t {
        v
    } else {
        t
    }
}

/// `MPI_MAX`, as [`min_of`].
fn max_of<T: PartialOrd>(v: T, t: T) -> T {
    if v > t {
        v
    } else {
        t
    }
}

/// The new value of an integer element: `op` of the origin's `v` and the target's `t`
/// (as the reduction kernels compute it).
macro_rules! int_combine {
    ($ty:ty, $op:expr, $v:expr, $t:expr) => {{
        let (v, t): ($ty, $ty) = ($v, $t);
        match $op {
            PredefinedOp::Sum => t.wrapping_add(v),
            PredefinedOp::Prod => t.wrapping_mul(v),
            PredefinedOp::Min => min_of(v, t),
            PredefinedOp::Max => max_of(v, t),
            PredefinedOp::Band => t & v,
            PredefinedOp::Bor => t | v,
            PredefinedOp::Bxor => t ^ v,
            PredefinedOp::Land => truth::<u8>(v != 0 && t != 0) as $ty,
            PredefinedOp::Lor => truth::<u8>(v != 0 || t != 0) as $ty,
            PredefinedOp::Lxor => truth::<u8>((v != 0) != (t != 0)) as $ty,
            PredefinedOp::Replace => v,
            _ => t,
        }
    }};
}

macro_rules! rmw_int {
    ($at:ident, $ty:ty, $val:expr, $op:expr, $addr:expr) => {{
        // SAFETY: the caller checked that `addr` is aligned for the type and lies in
        // window memory mapped here for the window's life, which the members touch
        // only by whole elements or atomically.
        let a = unsafe { &*($addr as *const $at) };
        let v = $val as $ty;
        let old = match $op {
            PredefinedOp::Sum => a.fetch_add(v, SeqCst),
            PredefinedOp::Band => a.fetch_and(v, SeqCst),
            PredefinedOp::Bor => a.fetch_or(v, SeqCst),
            PredefinedOp::Bxor => a.fetch_xor(v, SeqCst),
            PredefinedOp::Replace => a.swap(v, SeqCst),
            PredefinedOp::Min => a.fetch_min(v, SeqCst),
            PredefinedOp::Max => a.fetch_max(v, SeqCst),
            PredefinedOp::NoOp => a.load(SeqCst),
            op => match a.fetch_update(SeqCst, SeqCst, |t| Some(int_combine!($ty, op, v, t))) {
                Ok(o) | Err(o) => o,
            },
        };
        old as u64
    }};
}

macro_rules! rmw_float {
    ($at:ident, $ty:ty, $bits:ty, $val:expr, $op:expr, $addr:expr) => {{
        // SAFETY: as in `rmw_int`.
        let a = unsafe { &*($addr as *const $at) };
        let v = <$ty>::from_bits($val as $bits);
        let f = |t: $bits| -> $bits {
            let t = <$ty>::from_bits(t);
            let r = match $op {
                PredefinedOp::Sum => v + t,
                PredefinedOp::Prod => v * t,
                PredefinedOp::Min => min_of(v, t),
                PredefinedOp::Max => max_of(v, t),
                PredefinedOp::Replace => v,
                _ => t,
            };
            r.to_bits()
        };
        let old = match $op {
            PredefinedOp::NoOp => a.load(SeqCst),
            PredefinedOp::Replace => a.swap(v.to_bits(), SeqCst),
            _ => match a.fetch_update(SeqCst, SeqCst, |t| Some(f(t))) {
                Ok(o) | Err(o) => o,
            },
        };
        old as u64
    }};
}

/// Applies `op` with operand `val` (the element's bits, zero-extended) to the element
/// at `addr` atomically; returns the old bits.
///
/// # Safety
/// `addr` is aligned to `e.size` and holds an element of window memory mapped in this
/// process, which other processes touch only by whole elements or atomically; `op`
/// satisfies [`op_ok`].
#[inline]
pub(crate) unsafe fn rmw(e: Elem, op: PredefinedOp, addr: usize, val: u64) -> u64 {
    match (e.size, e.kind) {
        (4, ElemKind::Float) => rmw_float!(AtomicU32, f32, u32, val, op, addr),
        (8, ElemKind::Float) => rmw_float!(AtomicU64, f64, u64, val, op, addr),
        (1, ElemKind::Signed) => rmw_int!(AtomicI8, i8, val, op, addr) as u8 as u64,
        (2, ElemKind::Signed) => rmw_int!(AtomicI16, i16, val, op, addr) as u16 as u64,
        (4, ElemKind::Signed) => rmw_int!(AtomicI32, i32, val, op, addr) as u32 as u64,
        (8, ElemKind::Signed) => rmw_int!(AtomicI64, i64, val, op, addr),
        (1, _) => rmw_int!(AtomicU8, u8, val, op, addr),
        (2, _) => rmw_int!(AtomicU16, u16, val, op, addr),
        (4, _) => rmw_int!(AtomicU32, u32, val, op, addr),
        _ => rmw_int!(AtomicU64, u64, val, op, addr),
    }
}

macro_rules! cas_as {
    ($at:ident, $ty:ty, $addr:expr, $cmp:expr, $new:expr) => {{
        // SAFETY: as in `rmw_int`.
        let a = unsafe { &*($addr as *const $at) };
        match a.compare_exchange($cmp as $ty, $new as $ty, SeqCst, SeqCst) {
            Ok(v) | Err(v) => v as u64,
        }
    }};
}

/// Compare-and-swap of the element at `addr` (bitwise comparison, as
/// `MPI_Compare_and_swap` compares); returns the old bits.
///
/// # Safety
/// As for [`rmw`].
#[inline]
pub(crate) unsafe fn cas(size: usize, addr: usize, cmp: u64, new: u64) -> u64 {
    match size {
        1 => cas_as!(AtomicU8, u8, addr, cmp, new),
        2 => cas_as!(AtomicU16, u16, addr, cmp, new),
        4 => cas_as!(AtomicU32, u32, addr, cmp, new),
        _ => cas_as!(AtomicU64, u64, addr, cmp, new),
    }
}

/// Reads an element of `b.len()` (at most 8) bytes as little-endian bits.
#[inline]
pub(crate) fn bits(b: &[u8]) -> u64 {
    let mut v = [0u8; 8];
    v[..b.len()].copy_from_slice(b);
    u64::from_le_bytes(v)
}

/// Reads an element of `size` (1, 2, 4 or 8) bytes at `addr` as little-endian bits.
///
/// # Safety
/// `addr` is valid for reads of `size` bytes.
#[inline]
pub(crate) unsafe fn load_bits(addr: usize, size: usize) -> u64 {
    // SAFETY: the caller's range, read unaligned.
    unsafe {
        match size {
            1 => u64::from(*(addr as *const u8)),
            2 => u64::from((addr as *const u16).read_unaligned()),
            4 => u64::from((addr as *const u32).read_unaligned()),
            _ => (addr as *const u64).read_unaligned(),
        }
    }
}

/// Writes the low `size` (1, 2, 4 or 8) bytes of `bits` to `addr`.
///
/// # Safety
/// `addr` is valid for writes of `size` bytes.
#[inline]
pub(crate) unsafe fn store_bits(addr: usize, size: usize, bits: u64) {
    // SAFETY: the caller's range, written unaligned.
    unsafe {
        match size {
            1 => *(addr as *mut u8) = bits as u8,
            2 => (addr as *mut u16).write_unaligned(bits as u16),
            4 => (addr as *mut u32).write_unaligned(bits as u32),
            _ => (addr as *mut u64).write_unaligned(bits),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atomic_ops_give_old_values_and_combine() {
        let x = AtomicI32::new(-5);
        let at = &x as *const AtomicI32 as usize;
        let t = Elem {
            size: 4,
            kind: ElemKind::Signed,
        };
        // SAFETY: `x` is a live aligned i32.
        unsafe {
            assert_eq!(rmw(t, PredefinedOp::Sum, at, 7) as u32 as i32, -5);
            assert_eq!(x.load(SeqCst), 2);
            assert_eq!(
                rmw(t, PredefinedOp::Min, at, (-9i32) as u32 as u64) as u32,
                2
            );
            assert_eq!(x.load(SeqCst), -9);
            assert_eq!(rmw(t, PredefinedOp::Max, at, 3), (-9i32) as u32 as u64);
            assert_eq!(x.load(SeqCst), 3);
            assert_eq!(rmw(t, PredefinedOp::Prod, at, (-4i32) as u32 as u64), 3);
            assert_eq!(x.load(SeqCst), -12);
            assert_eq!(rmw(t, PredefinedOp::Land, at, 0), (-12i32) as u32 as u64);
            assert_eq!(x.load(SeqCst), 0);
            assert_eq!(rmw(t, PredefinedOp::Lxor, at, 5), 0);
            assert_eq!(x.load(SeqCst), 1);
            assert_eq!(cas(4, at, 4, 10), 1);
            assert_eq!(x.load(SeqCst), 1);
            assert_eq!(cas(4, at, 1, 10), 1);
            assert_eq!(x.load(SeqCst), 10);
            assert_eq!(rmw(t, PredefinedOp::NoOp, at, 99), 10);
        }
        let u = AtomicU16::new(0xF0F0);
        let at = &u as *const AtomicU16 as usize;
        let t = Elem {
            size: 2,
            kind: ElemKind::Unsigned,
        };
        // SAFETY: `u` is a live aligned u16.
        unsafe {
            assert_eq!(rmw(t, PredefinedOp::Max, at, 0x0001), 0xF0F0);
            assert_eq!(rmw(t, PredefinedOp::Bxor, at, 0xFFFF), 0xF0F0);
            assert_eq!(u.load(SeqCst), 0x0F0F);
        }
    }

    fn float(size: usize) -> Elem {
        Elem {
            size,
            kind: ElemKind::Float,
        }
    }

    #[test]
    fn float_ops_run_as_compare_and_swap_loops() {
        let x = AtomicU64::new(1.5f64.to_bits());
        let at = &x as *const AtomicU64 as usize;
        let d = float(8);
        // SAFETY: `x` is a live aligned u64.
        unsafe {
            assert_eq!(
                rmw(d, PredefinedOp::Sum, at, 2.25f64.to_bits()),
                1.5f64.to_bits()
            );
            assert_eq!(f64::from_bits(x.load(SeqCst)), 3.75);
            rmw(d, PredefinedOp::Prod, at, (-2.0f64).to_bits());
            assert_eq!(f64::from_bits(x.load(SeqCst)), -7.5);
            rmw(d, PredefinedOp::Max, at, 1.0f64.to_bits());
            assert_eq!(f64::from_bits(x.load(SeqCst)), 1.0);
            rmw(d, PredefinedOp::Min, at, (-3.0f64).to_bits());
            assert_eq!(f64::from_bits(x.load(SeqCst)), -3.0);
        }
        let y = AtomicU32::new(2.0f32.to_bits());
        let at = &y as *const AtomicU32 as usize;
        let f = float(4);
        // SAFETY: `y` is a live aligned u32.
        unsafe {
            assert_eq!(
                rmw(f, PredefinedOp::Sum, at, 0.5f32.to_bits() as u64),
                2.0f32.to_bits() as u64
            );
            assert_eq!(f32::from_bits(y.load(SeqCst)), 2.5);
            assert!(op_ok(f, PredefinedOp::Replace) && !op_ok(f, PredefinedOp::Band));
        }
    }
}
