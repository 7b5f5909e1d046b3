//! The short path of the commonest operations on shared-memory windows: `MPI_Put` and
//! `MPI_Get` between predefined contiguous datatypes, and `MPI_Fetch_and_op` and
//! `MPI_Compare_and_swap` that the atomic rule (`atomic.rs`) runs with CPU atomics.
//! No lock, no allocation and no runtime access: the window comes from the thread's
//! copy of the table, the epoch from the window's atomic summary, the datatype's size
//! from a table of the predefined types. A put or get is one copy between the origin
//! buffer and the target's memory (mapped here, or reached with
//! `process_vm_readv`/`writev` for memory a member gave `MPI_Win_create`).
//!
//! Each function answers `None` when the call is not one it handles, or would fail:
//! the general path in `access.rs` then carries it out, or reports the error, with
//! the same outcome.

use super::access::{cma, Cas, Origin, TargetSpec};
use super::atomic;
use super::{Flavor, Win};
use crate::error::Result;
use crate::types::TypeId;
use oxmpi_coll::ops::{op_valid, PredefinedOp};
use oxmpi_datatype::{Category, Datatype, Predefined};
use std::sync::OnceLock;

/// Size of each predefined type whose elements are their bytes in order (contiguous,
/// usable in communication), by type index; 0 for the others.
fn sizes() -> &'static [usize; Predefined::COUNT] {
    static SIZES: OnceLock<[usize; Predefined::COUNT]> = OnceLock::new();
    SIZES.get_or_init(|| {
        let mut v = [0; Predefined::COUNT];
        for (k, &p) in Predefined::ALL.iter().enumerate() {
            let d = Datatype::predefined(p);
            let plain =
                p.category() != Category::Marker && matches!(d.contiguous_block(2), Some((0, _)));
            v[k] = if plain { d.size() } else { 0 };
        }
        v
    })
}

/// The size of predefined contiguous type `ty`.
#[inline]
fn size_of(ty: TypeId) -> Option<usize> {
    sizes().get(ty as usize).copied().filter(|&s| s > 0)
}

/// Address of `n` bytes at displacement `disp` of target `t`, checked against the
/// window: the target index and the address, and whether it is mapped here.
#[inline]
fn locate(w: &Win, rank: i32, disp: i64, n: usize) -> Option<(usize, usize, bool)> {
    if w.is_am() || w.flavor() == Flavor::Dynamic || rank < 0 {
        return None;
    }
    let t = rank as usize;
    if t >= w.parts.len() || w.check_epoch(t).is_err() || disp < 0 {
        return None;
    }
    let p = &w.parts[t];
    let start = (disp as usize).checked_mul(p.disp_unit)?;
    if start.checked_add(n)? > p.size {
        return None;
    }
    Some((t, p.addr + start, p.direct))
}

/// `MPI_Put` (`write`) or `MPI_Get` of predefined contiguous types.
#[inline]
pub(crate) fn transfer(w: &Win, o: &Origin, tg: &TargetSpec, write: bool) -> Option<Result<()>> {
    let n = size_of(o.ty)?.checked_mul(o.count)?;
    if size_of(tg.ty)?.checked_mul(tg.count)? != n {
        return None;
    }
    let (t, at, direct) = locate(w, tg.rank, tg.disp, n)?;
    if n == 0 {
        return Some(Ok(()));
    }
    if direct {
        // SAFETY: `at..at + n` lies inside target `t`'s window memory, mapped in this
        // process for the window's life (`locate` checked the range); the origin
        // buffer holds `n` bytes (MPI's contract), and is not window memory of the
        // same target range (MPI forbids the overlap).
        unsafe {
            if write {
                std::ptr::copy_nonoverlapping(o.addr as *const u8, at as *mut u8, n);
            } else {
                std::ptr::copy_nonoverlapping(at as *const u8, o.addr as *mut u8, n);
            }
        }
        return Some(Ok(()));
    }
    // SAFETY: the origin buffer holds `n` bytes (MPI's contract); `cma` only reads it
    // for a put.
    let local = unsafe { std::slice::from_raw_parts_mut(o.addr as *mut u8, n) };
    Some(cma(w.parts[t].pid, at, local, write))
}

/// Per predefined type index: the element the atomic rule runs with CPU atomics, and
/// the operations (bit `1 << index`) defined on the type that have an atomic form.
fn atomic_types() -> &'static [Option<(atomic::Elem, u16)>; Predefined::COUNT] {
    static TYPES: OnceLock<[Option<(atomic::Elem, u16)>; Predefined::COUNT]> = OnceLock::new();
    TYPES.get_or_init(|| {
        let mut v = [None; Predefined::COUNT];
        for (k, &p) in Predefined::ALL.iter().enumerate() {
            v[k] = atomic::elem_of(p).map(|e| {
                let ops = PredefinedOp::ALL
                    .iter()
                    .enumerate()
                    .filter(|&(_, &o)| atomic::op_ok(e, o) && op_valid(o, p))
                    .fold(0u16, |m, (i, _)| m | 1 << i);
                (e, ops)
            });
        }
        v
    })
}

/// The element of a window location that the atomic rule runs with CPU atomics:
/// (address, element, operations) for one element of `ty` at `disp` of `rank`.
#[inline]
fn atomic_slot(w: &Win, ty: TypeId, rank: i32, disp: i64) -> Option<(usize, atomic::Elem, u16)> {
    if !matches!(w.flavor(), Flavor::Allocate | Flavor::Shared) {
        return None;
    }
    let (e, ops) = (*atomic_types().get(ty as usize)?)?;
    let (_, at, direct) = locate(w, rank, disp, e.size)?;
    (direct && at % e.size == 0).then_some((at, e, ops))
}

/// `MPI_Fetch_and_op` (operation index `op`).
#[inline]
pub(crate) fn fetch_and_op(
    w: &Win,
    origin: usize,
    result: usize,
    ty: TypeId,
    rank: i32,
    disp: i64,
    op: u32,
) -> Option<Result<()>> {
    let p = *PredefinedOp::ALL.get(op as usize)?;
    let (at, e, ops) = atomic_slot(w, ty, rank, disp)?;
    if ops & (1 << op) == 0 {
        return None;
    }
    let v = if p == PredefinedOp::NoOp {
        0
    } else {
        // SAFETY: `origin` holds one element of `ty` (MPI's contract).
        unsafe { atomic::load_bits(origin, e.size) }
    };
    // SAFETY: `atomic_slot` checked that the aligned element lies in segment memory
    // of the target; `op_ok` holds.
    let old = unsafe { atomic::rmw(e, p, at, v) };
    // SAFETY: `result` holds one element of `ty` (MPI's contract).
    unsafe { atomic::store_bits(result, e.size, old) };
    Some(Ok(()))
}

/// `MPI_Compare_and_swap`.
#[inline]
pub(crate) fn compare_and_swap(w: &Win, c: &Cas) -> Option<Result<()>> {
    let (at, e, _) = atomic_slot(w, c.ty, c.rank, c.disp)?;
    // SAFETY: the three buffers hold one element of `ty` each (MPI's contract);
    // `atomic_slot` checked the target element.
    unsafe {
        let new = atomic::load_bits(c.origin, e.size);
        let cmp = atomic::load_bits(c.compare, e.size);
        let old = atomic::cas(e.size, at, cmp, new);
        atomic::store_bits(c.result, e.size, old);
    }
    Some(Ok(()))
}
