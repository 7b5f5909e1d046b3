//! Counting what a received byte count holds: whole elements (`MPI_Get_count`) and
//! basic elements (`MPI_Get_elements`), and the type signature accessor. Partial
//! elements are resolved by descending the constructor tree, one division per level.

use crate::datatype::{Datatype, Kind};
use crate::signature::Signature;

/// Basic elements in the first `rem` bytes of `n` consecutive copies of `t`.
fn rep(t: &Datatype, n: u64, rem: u64) -> u64 {
    let l = t.layout();
    let size = l.size as u64;
    if size == 0 || n == 0 {
        return 0;
    }
    let k = (rem / size).min(n);
    let mut e = k * l.elements as u64;
    if k < n {
        e += prefix(t, rem - k * size);
    }
    e
}

/// Basic elements in the first `rem` bytes (`rem < size`) of one element of `t`.
fn prefix(t: &Datatype, rem: u64) -> u64 {
    let t = t.resolve();
    match t.kind() {
        Kind::Named(p) => {
            let mut used = 0u64;
            let mut n = 0u64;
            for q in p.primitives() {
                used += q.size() as u64;
                if used > rem {
                    break;
                }
                n += 1;
            }
            n
        }
        Kind::Dup(old) | Kind::Resized { old, .. } => prefix(old, rem),
        Kind::Subarray { expansion, .. } | Kind::Darray { expansion, .. } => prefix(expansion, rem),
        Kind::Contiguous { count, old } => rep(old, *count as u64, rem),
        Kind::Vector {
            count,
            blocklength,
            old,
            ..
        }
        | Kind::Hvector {
            count,
            blocklength,
            old,
            ..
        } => rep(old, (*count as u64) * (*blocklength as u64), rem),
        // The packed stream of any indexed type is just its blocks' copies of `old`.
        Kind::Indexed {
            blocklengths, old, ..
        }
        | Kind::Hindexed {
            blocklengths, old, ..
        } => rep(old, blocklengths.iter().map(|&b| b as u64).sum(), rem),
        Kind::IndexedBlock {
            blocklength,
            displacements,
            old,
        }
        | Kind::HindexedBlock {
            blocklength,
            displacements,
            old,
        } => rep(old, *blocklength as u64 * displacements.len() as u64, rem),
        Kind::Struct {
            blocklengths,
            types,
            ..
        } => {
            let mut rem = rem;
            let mut e = 0u64;
            for (&b, ty) in blocklengths.iter().zip(types.iter()) {
                let l = ty.layout();
                let bytes = b as u64 * l.size as u64;
                if rem < bytes {
                    return e + rep(ty, b as u64, rem);
                }
                rem -= bytes;
                e += b as u64 * l.elements as u64;
            }
            e
        }
    }
}

impl Datatype {
    /// `MPI_Get_count`: whole elements in `bytes` received bytes; `None` (the caller's
    /// `MPI_UNDEFINED`) when `bytes` is not a multiple of the size. A type of size zero
    /// gives 0.
    pub fn count_in(&self, bytes: u64) -> Option<u64> {
        let size = self.layout().size as u64;
        if size == 0 {
            return Some(0);
        }
        (bytes % size == 0).then_some(bytes / size)
    }

    /// `MPI_Get_elements`: complete basic elements in the first `bytes` bytes of a
    /// packed stream of this type (a trailing partial basic element is not counted,
    /// as in MPICH). Saturates instead of overflowing.
    pub fn elements_in(&self, bytes: u64) -> u64 {
        let l = self.layout();
        let size = l.size as u64;
        if size == 0 {
            return 0;
        }
        let full = bytes / size;
        (full.saturating_mul(l.elements as u64)).saturating_add(prefix(self, bytes % size))
    }

    /// The type signature of one element (sequence of primitive elements).
    pub fn signature(&self) -> Signature {
        self.layout().sig
    }
}
