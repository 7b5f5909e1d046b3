//! Buffers cut into per-process blocks for the varcount collectives (`MPI_Gatherv`,
//! `MPI_Allgatherv`, `MPI_Alltoallv`, `MPI_Scatterv`): [`Partition`] (to send from) and
//! [`PartitionMut`] (to receive into), each a buffer with `counts[i]` values for process
//! `i` starting at value `displs[i]`.
//!
//! The blocks are checked against the buffer before the engine sees them: every count
//! and displacement non-negative and every block inside the buffer.

use crate::datatype::{Buffer, BufferMut, Equivalence};
use crate::error::{Error, ErrorClass, Result};
use crate::point_to_point::Count;
use std::borrow::Borrow;

/// A buffer to send from, cut into blocks: `counts[i]` values for process `i`, starting
/// at value `displs[i]` of the buffer.
#[derive(Debug)]
pub struct Partition<'a, B: ?Sized, C, D> {
    buf: &'a B,
    counts: C,
    displs: D,
}

impl<'a, B: Buffer + ?Sized, C: Borrow<[Count]>, D: Borrow<[Count]>> Partition<'a, B, C, D> {
    /// Blocks of `buf` with these counts and displacements (in values of the element
    /// type).
    pub fn new(buf: &'a B, counts: C, displs: D) -> Partition<'a, B, C, D> {
        Partition {
            buf,
            counts,
            displs,
        }
    }
}

/// A buffer to receive into, cut into blocks: `counts[i]` values from process `i`,
/// stored from value `displs[i]` of the buffer on.
#[derive(Debug)]
pub struct PartitionMut<'a, B: ?Sized, C, D> {
    buf: &'a mut B,
    counts: C,
    displs: D,
}

impl<'a, B: BufferMut + ?Sized, C: Borrow<[Count]>, D: Borrow<[Count]>> PartitionMut<'a, B, C, D> {
    /// Blocks of `buf` with these counts and displacements (in values of the element
    /// type).
    pub fn new(buf: &'a mut B, counts: C, displs: D) -> PartitionMut<'a, B, C, D> {
        PartitionMut {
            buf,
            counts,
            displs,
        }
    }
}

/// A buffer cut into blocks, to send from.
///
/// # Safety
/// `pointer()` must point to `count()` initialised, contiguous values that live as long
/// as the borrow of `self`.
pub unsafe trait PartitionedBuffer {
    /// The element type.
    type Element: Equivalence;
    /// Start of the elements.
    fn pointer(&self) -> *const Self::Element;
    /// Number of elements in the whole buffer.
    fn count(&self) -> usize;
    /// Values per block.
    fn counts(&self) -> &[Count];
    /// First value of each block.
    fn displs(&self) -> &[Count];
    /// True when the buffer is a view through a datatype (refused by the varcount
    /// calls).
    fn is_view(&self) -> bool {
        false
    }
}

/// A buffer cut into blocks, to receive into.
///
/// # Safety
/// `pointer_mut()` must point to `count()` initialised, contiguous, writable values that
/// live as long as the mutable borrow of `self`.
pub unsafe trait PartitionedBufferMut {
    /// The element type.
    type Element: Equivalence;
    /// Start of the elements, for writing.
    fn pointer_mut(&mut self) -> *mut Self::Element;
    /// Number of elements in the whole buffer.
    fn count(&self) -> usize;
    /// Values per block.
    fn counts(&self) -> &[Count];
    /// First value of each block.
    fn displs(&self) -> &[Count];
    /// True when the buffer is a view through a datatype (refused by the varcount
    /// calls).
    fn is_view(&self) -> bool {
        false
    }
}

// SAFETY: forwards the buffer's own (checked) pointer and count.
unsafe impl<B: Buffer + ?Sized, C: Borrow<[Count]>, D: Borrow<[Count]>> PartitionedBuffer
    for Partition<'_, B, C, D>
{
    type Element = B::Element;
    fn pointer(&self) -> *const B::Element {
        self.buf.pointer()
    }
    fn count(&self) -> usize {
        self.buf.count()
    }
    fn counts(&self) -> &[Count] {
        self.counts.borrow()
    }
    fn displs(&self) -> &[Count] {
        self.displs.borrow()
    }
    fn is_view(&self) -> bool {
        self.buf.datatype_view().is_some()
    }
}

// SAFETY: forwards the buffer's own (checked) pointer and count.
unsafe impl<B: BufferMut + ?Sized, C: Borrow<[Count]>, D: Borrow<[Count]>> PartitionedBufferMut
    for PartitionMut<'_, B, C, D>
{
    type Element = B::Element;
    fn pointer_mut(&mut self) -> *mut B::Element {
        self.buf.pointer_mut()
    }
    fn count(&self) -> usize {
        self.buf.count()
    }
    fn counts(&self) -> &[Count] {
        self.counts.borrow()
    }
    fn displs(&self) -> &[Count] {
        self.displs.borrow()
    }
    fn is_view(&self) -> bool {
        self.buf.datatype_view().is_some()
    }
}

/// Counts and displacements in engine elements, checked to lie inside the buffer.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Blocks {
    pub counts: Vec<i64>,
    pub displs: Vec<i64>,
}

/// Checks `counts`/`displs` (in values) for `peers` processes against a buffer of `len`
/// values, and scales them to engine elements (`multiplicity` per value).
pub(crate) fn blocks(
    method: &'static str,
    counts: &[Count],
    displs: &[Count],
    len: usize,
    multiplicity: usize,
    peers: usize,
) -> Result<Blocks> {
    let bad = |class: ErrorClass, detail: String| Error::new(method, class, detail);
    if counts.len() != peers || displs.len() != peers {
        return Err(bad(
            ErrorClass::Count,
            format!(
                "the partition has {} counts and {} displacements; the communicator needs {peers} of each",
                counts.len(),
                displs.len()
            ),
        ));
    }
    let scale = |v: usize, what: &str, i: usize| {
        v.checked_mul(multiplicity)
            .and_then(|e| i32::try_from(e).ok())
            .ok_or_else(|| {
                bad(
                    ErrorClass::Count,
                    format!("{what}[{i}] = {v} values is too many engine elements"),
                )
            })
    };
    let mut out = Blocks {
        counts: Vec::with_capacity(peers),
        displs: Vec::with_capacity(peers),
    };
    for (i, (&c, &d)) in counts.iter().zip(displs).enumerate() {
        if c < 0 {
            return Err(bad(
                ErrorClass::Count,
                format!("counts[{i}] = {c} is negative"),
            ));
        }
        if d < 0 {
            return Err(bad(
                ErrorClass::Arg,
                format!("displs[{i}] = {d} is negative"),
            ));
        }
        let (c, d) = (c as usize, d as usize);
        if c > 0 && c + d > len {
            return Err(bad(
                ErrorClass::Arg,
                format!(
                    "block {i} (values {d}..{}) ends past the buffer of {len} values",
                    d + c
                ),
            ));
        }
        out.counts.push(scale(c, "counts", i)?.into());
        out.displs.push(scale(d, "displs", i)?.into());
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_are_checked_and_scaled() {
        let b = blocks("t", &[1, 0, 2], &[0, 9, 1], 3, 2, 3).unwrap();
        assert_eq!(b.counts, [2, 0, 4]);
        assert_eq!(b.displs, [0, 18, 2]);
        let e = blocks("t", &[1, 2], &[0, 2], 3, 1, 2).unwrap_err();
        assert_eq!(e.class(), ErrorClass::Arg);
        assert_eq!(
            e.message(),
            "t: MPI_ERR_ARG: block 1 (values 2..4) ends past the buffer of 3 values"
        );
        assert_eq!(
            blocks("t", &[1], &[0], 3, 1, 2).unwrap_err().class(),
            ErrorClass::Count
        );
        assert_eq!(
            blocks("t", &[-1, 0], &[0, 0], 3, 1, 2).unwrap_err().class(),
            ErrorClass::Count
        );
        assert_eq!(
            blocks("t", &[0, 0], &[-1, 0], 3, 1, 2).unwrap_err().class(),
            ErrorClass::Arg
        );
    }

    #[test]
    fn partitions_expose_their_parts() {
        let v = [1u8, 2, 3];
        let p = Partition::new(&v[..], vec![1, 2], [0, 1]);
        assert_eq!(
            (p.count(), p.counts(), p.displs()),
            (3, &[1, 2][..], &[0, 1][..])
        );
        let mut w = [0u16; 4];
        let mut q = PartitionMut::new(&mut w[..], &[4][..], &[0][..]);
        assert_eq!(q.count(), 4);
        assert!(!q.pointer_mut().is_null());
    }
}
