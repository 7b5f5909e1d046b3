//! The short path of the commonest operations on shared-memory windows: `MPI_Put` and
//! `MPI_Get` between predefined contiguous datatypes, and `MPI_Fetch_and_op` and
//! `MPI_Compare_and_swap` that the atomic rule (`atomic.rs`) runs with CPU atomics.
//! No lock, no allocation and no runtime access: the window comes from the table's
//! lock-free entries, what the window allows from its `fast` bits, the epoch from its
//! atomic summary, the datatype's size from a table of the predefined types. The C
//! binding calls the `*_fast` functions with the handles it decoded from its own table
//! of predefined types, before any other argument processing. A put or get is one copy between the origin
//! buffer and the target's memory (mapped here, or reached with
//! `process_vm_readv`/`writev` for memory a member gave `MPI_Win_create`).
//!
//! Each function answers `None` (the `*_fast` ones `false`) when the call is not one
//! it handles, or would fail: the general path in `access.rs` then carries it out, or
//! reports the error, with the same outcome.

use super::access::{cma, Cas, Fop, Origin, TargetSpec};
use super::{atomic, table};
use super::{Win, WinId, FAST_ATOMIC, FAST_COPY};
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

/// The size of predefined type `ty` if its elements are their bytes in order (so a
/// transfer of it is a copy of bytes, as [`transfer_fast`] makes), else 0: for a
/// binding's table of the handles it may send there.
pub fn plain_type_size(ty: TypeId) -> usize {
    size_of(ty).unwrap_or(0)
}

/// Address of `n` bytes at displacement `disp` of target `t`, checked against the
/// window (which must allow short path `kind`, and have an access epoch to the target
/// open: a passive-target one when `passive`): the target index, the address, and
/// whether it is mapped here.
#[inline]
fn locate(
    w: &Win,
    kind: u8,
    rank: i32,
    disp: i64,
    n: usize,
    passive: bool,
) -> Option<(usize, usize, bool)> {
    if w.fast & kind == 0 || rank < 0 || disp < 0 {
        return None;
    }
    let t = rank as usize;
    let p = w.parts.get(t)?;
    let open = if passive {
        w.passive_to(t)
    } else {
        w.in_epoch(t)
    };
    if !open {
        return None;
    }
    let start = (disp as usize).checked_mul(p.disp_unit)?;
    if start.checked_add(n)? > p.size {
        return None;
    }
    Some((t, p.addr + start, p.direct))
}

/// A put (`write`) or get of `n` bytes at origin address `addr` (predefined contiguous
/// types of that total size on both sides) to or from displacement `disp` of `rank`;
/// `passive`: the request-based forms, which need a passive-target epoch.
#[derive(Clone, Copy, Debug)]
pub struct Transfer {
    pub addr: usize,
    pub n: usize,
    pub rank: i32,
    pub disp: i64,
    pub write: bool,
    pub passive: bool,
}

/// `MPI_Put` (`write`) or `MPI_Get` of predefined contiguous types.
#[inline]
pub(crate) fn transfer(w: &Win, o: &Origin, tg: &TargetSpec, write: bool) -> Option<Result<()>> {
    let n = size_of(o.ty)?.checked_mul(o.count)?;
    if size_of(tg.ty)?.checked_mul(tg.count)? != n {
        return None;
    }
    let x = Transfer {
        addr: o.addr,
        n,
        rank: tg.rank,
        disp: tg.disp,
        write,
        passive: false,
    };
    bytes(w, &x).then_some(Ok(()))
}

/// `MPI_Put`, `MPI_Get`, `MPI_Rput` or `MPI_Rget` `x` with window `id`: true when
/// done (complete: the request forms hand out a completed request), false when the
/// general path must carry the call out (or report its error).
#[inline]
pub fn transfer_fast(id: WinId, x: &Transfer) -> bool {
    table::peek(id, |w| bytes(w, x))
}

#[inline]
fn bytes(w: &Win, x: &Transfer) -> bool {
    let n = x.n;
    let Some((t, at, direct)) = locate(w, FAST_COPY, x.rank, x.disp, n, x.passive) else {
        return false;
    };
    if n == 0 {
        return true;
    }
    if direct {
        if x.write {
            w.note_stored();
        }
        let (src, dst) = if x.write { (x.addr, at) } else { (at, x.addr) };
        // SAFETY: `at..at + n` lies inside target `t`'s window memory, mapped in this
        // process for the window's life (`locate` checked the range); the origin
        // buffer holds `n` bytes (MPI's contract), and is not window memory of the
        // same target range (MPI forbids the overlap).
        unsafe { copy(src as *const u8, dst as *mut u8, n) };
        return true;
    }
    // SAFETY: the origin buffer holds `n` bytes (MPI's contract); `cma` only reads it
    // for a put.
    let local = unsafe { std::slice::from_raw_parts_mut(x.addr as *mut u8, n) };
    cma(w.parts[t].pid, at, local, x.write).is_ok()
}

/// Copies `n` bytes between an origin buffer and mapped window memory. Up to 16 bytes
/// (the latency-bound case) with two possibly overlapping loads and stores inline, not
/// through a call to `memcpy`; large copies with `oxmpi_datatype`'s vector loop.
///
/// # Safety
/// Both ranges valid for `n` bytes and disjoint.
#[inline(always)]
unsafe fn copy(src: *const u8, dst: *mut u8, n: usize) {
    use std::ptr::{read_unaligned as rd, write_unaligned as wr};
    // SAFETY: every access below lies inside the first `n` bytes of both ranges.
    unsafe {
        match n {
            8..=16 => {
                let (a, b) = (rd(src as *const u64), rd(src.add(n - 8) as *const u64));
                wr(dst as *mut u64, a);
                wr(dst.add(n - 8) as *mut u64, b);
            }
            4..=7 => {
                let (a, b) = (rd(src as *const u32), rd(src.add(n - 4) as *const u32));
                wr(dst as *mut u32, a);
                wr(dst.add(n - 4) as *mut u32, b);
            }
            0..=3 => {
                for i in 0..n {
                    *dst.add(i) = *src.add(i);
                }
            }
            _ if n >= LARGE_COPY => oxmpi_datatype::copy_large(dst, src, n),
            _ => std::ptr::copy_nonoverlapping(src, dst, n),
        }
    }
}

/// Copies of this many bytes or more go to [`oxmpi_datatype::copy_large`].
const LARGE_COPY: usize = 512 << 10;

/// `MPI_Win_flush` of target `rank` in the usual case: a passive-target epoch to it on
/// shared memory, where operations complete when issued and only memory needs
/// ordering, and only after plain stores ([`Win::take_stored`]). False for anything
/// else (the message transport, no epoch, a bad rank): the general path then handles it.
#[inline]
pub(crate) fn flush(w: &Win, rank: i32) -> bool {
    let t = rank as usize;
    if rank < 0 || t >= w.n() || w.is_am() || !w.passive_to(t) {
        return false;
    }
    if w.take_stored() {
        super::full_fence();
    }
    true
}

/// [`flush`] with window `id`: true when done.
#[inline]
pub fn flush_fast(id: WinId, rank: i32) -> bool {
    table::peek(id, |w| flush(w, rank))
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
    let (e, ops) = (*atomic_types().get(ty as usize)?)?;
    let (_, at, direct) = locate(w, FAST_ATOMIC, rank, disp, e.size, false)?;
    (direct && at % e.size == 0).then_some((at, e, ops))
}

/// `MPI_Fetch_and_op`.
#[inline]
pub(crate) fn fetch_and_op(w: &Win, f: &Fop) -> Option<Result<()>> {
    let p = *PredefinedOp::ALL.get(f.op as usize)?;
    let (at, e, ops) = atomic_slot(w, f.ty, f.rank, f.disp)?;
    if ops & (1 << f.op) == 0 {
        return None;
    }
    let v = if p == PredefinedOp::NoOp {
        0
    } else {
        // SAFETY: `origin` holds one element of `ty` (MPI's contract).
        unsafe { atomic::load_bits(f.origin, e.size) }
    };
    // SAFETY: `atomic_slot` checked that the aligned element lies in segment memory
    // of the target; `op_ok` holds.
    let old = unsafe { atomic::rmw(e, p, at, v) };
    // SAFETY: `result` holds one element of `ty` (MPI's contract).
    unsafe { atomic::store_bits(f.result, e.size, old) };
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

/// `MPI_Fetch_and_op` with window `id` (see [`fetch_and_op`]): true when done, false
/// when the general path must carry the call out.
#[inline]
pub fn fetch_and_op_fast(id: WinId, f: &Fop) -> bool {
    table::peek(id, |w| fetch_and_op(w, f).is_some())
}

/// `MPI_Compare_and_swap` with window `id`: true when done, false when the general
/// path must carry the call out.
#[inline]
pub fn compare_and_swap_fast(id: WinId, c: &Cas) -> bool {
    table::peek(id, |w| compare_and_swap(w, c).is_some())
}
