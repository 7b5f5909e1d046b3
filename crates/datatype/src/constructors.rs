//! The type constructors of MPI (contiguous, vector, hvector, indexed, hindexed,
//! indexed_block, hindexed_block, struct, resized): argument checks and the layout
//! of the new type. Subarray and darray live in [`crate::distributed`].
//!
//! Counts and displacements are `i64` (the C binding widens `int`); byte arithmetic
//! is checked and reports [`Error::Overflow`] instead of wrapping.

use crate::datatype::{Datatype, Kind};
use crate::error::{Error, Result};
use crate::layout::{Acc, Layout};

fn check_count(arg: &str, v: i64) -> Result<()> {
    if v < 0 {
        Err(Error::count(arg, v))
    } else {
        Ok(())
    }
}

fn check_nonneg(arg: &str, v: i64) -> Result<()> {
    if v < 0 {
        Err(Error::arg(arg, v, "non-negative"))
    } else {
        Ok(())
    }
}

fn check_len(arg: &str, len: usize, expected: usize) -> Result<()> {
    if len != expected {
        Err(Error::LengthMismatch {
            arg: arg.to_string(),
            len,
            expected,
        })
    } else {
        Ok(())
    }
}

fn scaled(v: i64, ext: i64, arg: &str) -> Result<i64> {
    v.checked_mul(ext)
        .ok_or_else(|| Error::overflow(format!("{arg} {v} times extent {ext}")))
}

impl Datatype {
    /// `MPI_Type_contiguous`: `count` copies of `old`, each one extent after the other.
    pub fn contiguous(count: i64, old: &Datatype) -> Result<Datatype> {
        check_count("count", count)?;
        let l = old.layout();
        let mut acc = Acc::new();
        acc.add(l, 0, 1, 0, count)?;
        Ok(Datatype::new(
            Kind::Contiguous {
                count,
                old: old.clone(),
            },
            acc.finish(false)?,
        ))
    }

    /// `MPI_Type_vector`: `count` blocks of `blocklength` copies of `old`, block starts
    /// `stride` extents of `old` apart.
    pub fn vector(count: i64, blocklength: i64, stride: i64, old: &Datatype) -> Result<Datatype> {
        check_count("count", count)?;
        check_nonneg("blocklength", blocklength)?;
        let l = old.layout();
        let stride_bytes = scaled(stride, l.extent(), "stride")?;
        let mut acc = Acc::new();
        acc.add(l, 0, count, stride_bytes, blocklength)?;
        let kind = Kind::Vector {
            count,
            blocklength,
            stride,
            old: old.clone(),
        };
        Ok(Datatype::new(kind, acc.finish(false)?))
    }

    /// `MPI_Type_create_hvector`: like [`vector`](Self::vector) with the stride in bytes.
    pub fn hvector(count: i64, blocklength: i64, stride: i64, old: &Datatype) -> Result<Datatype> {
        check_count("count", count)?;
        check_nonneg("blocklength", blocklength)?;
        let mut acc = Acc::new();
        acc.add(old.layout(), 0, count, stride, blocklength)?;
        let kind = Kind::Hvector {
            count,
            blocklength,
            stride,
            old: old.clone(),
        };
        Ok(Datatype::new(kind, acc.finish(false)?))
    }

    /// `MPI_Type_indexed`: block i has `blocklengths[i]` copies of `old` at
    /// `displacements[i]` extents of `old`.
    pub fn indexed(
        blocklengths: &[i64],
        displacements: &[i64],
        old: &Datatype,
    ) -> Result<Datatype> {
        let layout = indexed_layout(blocklengths, displacements, old.layout(), true)?;
        let kind = Kind::Indexed {
            blocklengths: blocklengths.into(),
            displacements: displacements.into(),
            old: old.clone(),
        };
        Ok(Datatype::new(kind, layout))
    }

    /// `MPI_Type_create_hindexed`: like [`indexed`](Self::indexed) with byte displacements.
    pub fn hindexed(
        blocklengths: &[i64],
        displacements: &[i64],
        old: &Datatype,
    ) -> Result<Datatype> {
        let layout = indexed_layout(blocklengths, displacements, old.layout(), false)?;
        let kind = Kind::Hindexed {
            blocklengths: blocklengths.into(),
            displacements: displacements.into(),
            old: old.clone(),
        };
        Ok(Datatype::new(kind, layout))
    }

    /// `MPI_Type_create_indexed_block`: blocks of equal length at displacements in extents.
    pub fn indexed_block(
        blocklength: i64,
        displacements: &[i64],
        old: &Datatype,
    ) -> Result<Datatype> {
        check_nonneg("blocklength", blocklength)?;
        let bls = vec![blocklength; displacements.len()];
        let layout = indexed_layout(&bls, displacements, old.layout(), true)?;
        let kind = Kind::IndexedBlock {
            blocklength,
            displacements: displacements.into(),
            old: old.clone(),
        };
        Ok(Datatype::new(kind, layout))
    }

    /// `MPI_Type_create_hindexed_block`: blocks of equal length at byte displacements.
    pub fn hindexed_block(
        blocklength: i64,
        displacements: &[i64],
        old: &Datatype,
    ) -> Result<Datatype> {
        check_nonneg("blocklength", blocklength)?;
        let bls = vec![blocklength; displacements.len()];
        let layout = indexed_layout(&bls, displacements, old.layout(), false)?;
        let kind = Kind::HindexedBlock {
            blocklength,
            displacements: displacements.into(),
            old: old.clone(),
        };
        Ok(Datatype::new(kind, layout))
    }

    /// `MPI_Type_create_struct` (and MPI-1 `MPI_Type_struct`): block i has
    /// `blocklengths[i]` copies of `types[i]` at byte displacement `displacements[i]`.
    /// `MPI_LB` / `MPI_UB` entries set explicit bounds. Without an explicit upper bound
    /// the extent is rounded up to the largest alignment of the components.
    pub fn create_struct(
        blocklengths: &[i64],
        displacements: &[i64],
        types: &[Datatype],
    ) -> Result<Datatype> {
        check_len(
            "array_of_displacements",
            displacements.len(),
            blocklengths.len(),
        )?;
        check_len("array_of_types", types.len(), blocklengths.len())?;
        let mut acc = Acc::new();
        for (i, ((&bl, &d), t)) in blocklengths
            .iter()
            .zip(displacements)
            .zip(types)
            .enumerate()
        {
            check_nonneg(&format!("array_of_blocklengths[{i}]"), bl)?;
            acc.note(t.layout());
            acc.add(t.layout(), d, 1, 0, bl)?;
        }
        let kind = Kind::Struct {
            blocklengths: blocklengths.into(),
            displacements: displacements.into(),
            types: types.into(),
        };
        Ok(Datatype::new(kind, acc.finish(true)?))
    }

    /// `MPI_Type_create_resized`: the same data with explicit bounds `lb` and
    /// `lb + extent` (sticky markers; `extent` may be zero or negative).
    pub fn resized(old: &Datatype, lb: i64, extent: i64) -> Result<Datatype> {
        let layout = old.layout().resized(lb, extent)?;
        Ok(Datatype::new(
            Kind::Resized {
                lb,
                extent,
                old: old.clone(),
            },
            layout,
        ))
    }
}

fn indexed_layout(bls: &[i64], disps: &[i64], old: &Layout, in_extents: bool) -> Result<Layout> {
    check_len("array_of_displacements", disps.len(), bls.len())?;
    let ext = old.extent();
    let mut acc = Acc::new();
    acc.note(old);
    for (i, (&bl, &d)) in bls.iter().zip(disps).enumerate() {
        check_nonneg(&format!("array_of_blocklengths[{i}]"), bl)?;
        let disp = if in_extents {
            scaled(d, ext, &format!("array_of_displacements[{i}]"))?
        } else {
            d
        };
        acc.add(old, disp, 1, 0, bl)?;
    }
    acc.finish(false)
}
