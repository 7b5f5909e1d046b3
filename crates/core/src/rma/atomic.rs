//! CPU atomic instructions for accumulates on shared-memory windows.
//!
//! The rule: an accumulate, get-accumulate, fetch-and-op or compare-and-swap runs
//! element by element with atomic instructions, without the target's accumulate mutex,
//! when (1) the window's memory is in the shared segment (`MPI_Win_allocate`,
//! `MPI_Win_allocate_shared`: every origin then reaches it the same way), (2) the
//! target datatype is made of one predefined integer type of 1, 2, 4 or 8 bytes, (3)
//! the operation is `MPI_SUM`, `MPI_BAND`, `MPI_BOR`, `MPI_BXOR`, `MPI_REPLACE`,
//! `MPI_NO_OP`, `MPI_MIN` or `MPI_MAX` (compare-and-swap always qualifies), and (4)
//! every target element is naturally aligned. Whether a call qualifies depends only on
//! its operation and basic type (alignment is a property of the location), never on its
//! element count, so all accumulates with one operation and one basic type to one
//! location take the same path: MPI 4.1 §12.7.1 asks atomicity only of those (and of
//! `MPI_NO_OP` with them, which here is an atomic load, or a read under the mutex that
//! the mutex path's whole-element stores do not tear). Other accumulates keep the
//! mutex.

use oxmpi_coll::ops::PredefinedOp;
use oxmpi_datatype::{Predefined, Primitive};
use std::sync::atomic::{
    AtomicI16, AtomicI32, AtomicI64, AtomicI8, AtomicU16, AtomicU32, AtomicU64, AtomicU8,
    Ordering::SeqCst,
};

/// An integer element: its size and signedness.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Int {
    pub size: usize,
    pub signed: bool,
}

/// The integer element a predefined type is made of, if it is one.
pub(crate) fn int_of(p: Predefined) -> Option<Int> {
    let (size, signed) = match p.primitives() {
        [Primitive::I8] => (1, true),
        [Primitive::I16] => (2, true),
        [Primitive::I32] => (4, true),
        [Primitive::I64] => (8, true),
        [Primitive::U8] => (1, false),
        [Primitive::U16] => (2, false),
        [Primitive::U32] => (4, false),
        [Primitive::U64] => (8, false),
        _ => return None,
    };
    Some(Int { size, signed })
}

/// Whether `op` has an atomic form.
pub(crate) fn op_ok(op: PredefinedOp) -> bool {
    use PredefinedOp as P;
    matches!(
        op,
        P::Sum | P::Band | P::Bor | P::Bxor | P::Replace | P::NoOp | P::Min | P::Max
    )
}

macro_rules! rmw_as {
    ($at:ident, $ty:ty, $val:expr, $op:expr, $addr:expr) => {{
        // SAFETY: the caller checked that `addr` is aligned for the type and lies in
        // window memory mapped here for the window's life, only accessed by whole
        // elements or atomically by the members.
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
            _ => a.load(SeqCst),
        };
        old as u64
    }};
}

/// Applies `op` with operand `val` (the element's bits, zero-extended) to the element
/// at `addr` atomically; returns the old bits.
///
/// # Safety
/// `addr` is aligned to `t.size` and holds an element of window memory mapped in this
/// process, which other processes touch only by whole elements or atomically.
pub(crate) unsafe fn rmw(t: Int, op: PredefinedOp, addr: usize, val: u64) -> u64 {
    match (t.size, t.signed) {
        (1, true) => rmw_as!(AtomicI8, i8, val, op, addr) as u8 as u64,
        (2, true) => rmw_as!(AtomicI16, i16, val, op, addr) as u16 as u64,
        (4, true) => rmw_as!(AtomicI32, i32, val, op, addr) as u32 as u64,
        (8, true) => rmw_as!(AtomicI64, i64, val, op, addr),
        (1, false) => rmw_as!(AtomicU8, u8, val, op, addr),
        (2, false) => rmw_as!(AtomicU16, u16, val, op, addr),
        (4, false) => rmw_as!(AtomicU32, u32, val, op, addr),
        _ => rmw_as!(AtomicU64, u64, val, op, addr),
    }
}

macro_rules! cas_as {
    ($at:ident, $ty:ty, $addr:expr, $cmp:expr, $new:expr) => {{
        // SAFETY: as in `rmw_as`.
        let a = unsafe { &*($addr as *const $at) };
        match a.compare_exchange($cmp as $ty, $new as $ty, SeqCst, SeqCst) {
            Ok(v) | Err(v) => v as u64,
        }
    }};
}

/// Compare-and-swap of the element at `addr`; returns the old bits.
///
/// # Safety
/// As for [`rmw`].
pub(crate) unsafe fn cas(t: Int, addr: usize, cmp: u64, new: u64) -> u64 {
    match t.size {
        1 => cas_as!(AtomicU8, u8, addr, cmp, new),
        2 => cas_as!(AtomicU16, u16, addr, cmp, new),
        4 => cas_as!(AtomicU32, u32, addr, cmp, new),
        _ => cas_as!(AtomicU64, u64, addr, cmp, new),
    }
}

/// Reads an element of `size` bytes (little-endian bits) from `b`.
pub(crate) fn bits(b: &[u8]) -> u64 {
    let mut v = [0u8; 8];
    v[..b.len()].copy_from_slice(b);
    u64::from_le_bytes(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atomic_ops_give_old_values_and_combine() {
        let x = AtomicI32::new(-5);
        let at = &x as *const AtomicI32 as usize;
        let t = Int {
            size: 4,
            signed: true,
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
            assert_eq!(cas(t, at, 4, 10), 3);
            assert_eq!(x.load(SeqCst), 3);
            assert_eq!(cas(t, at, 3, 10), 3);
            assert_eq!(x.load(SeqCst), 10);
            assert_eq!(rmw(t, PredefinedOp::NoOp, at, 99), 10);
        }
        let u = AtomicU16::new(0xF0F0);
        let at = &u as *const AtomicU16 as usize;
        let t = Int {
            size: 2,
            signed: false,
        };
        // SAFETY: `u` is a live aligned u16.
        unsafe {
            assert_eq!(rmw(t, PredefinedOp::Max, at, 0x0001), 0xF0F0);
            assert_eq!(rmw(t, PredefinedOp::Bxor, at, 0xFFFF), 0xF0F0);
            assert_eq!(u.load(SeqCst), 0x0F0F);
        }
    }
}
