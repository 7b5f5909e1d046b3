//! A walk over the type map entry by entry: every predefined element with its byte
//! displacement, in type-map order. Used where each element needs its own treatment
//! (external32 conversion); plain copies use the compiled program instead.

use crate::datatype::{Datatype, Kind};
use crate::error::Result;
use crate::{Category, Predefined};

fn rep<F>(old: &Datatype, n: i64, disp: i64, f: &mut F) -> Result<()>
where
    F: FnMut(Predefined, i64) -> Result<()>,
{
    if old.layout().size == 0 {
        return Ok(());
    }
    let ext = old.layout().extent();
    for k in 0..n {
        for_each_leaf(old, disp.wrapping_add(k.wrapping_mul(ext)), f)?;
    }
    Ok(())
}

/// Calls `f(element type, displacement)` for each predefined data element of one
/// element of `t` placed at `disp`, in type-map order (markers are skipped).
pub(crate) fn for_each_leaf<F>(t: &Datatype, disp: i64, f: &mut F) -> Result<()>
where
    F: FnMut(Predefined, i64) -> Result<()>,
{
    let t = t.resolve();
    if t.layout().size == 0 {
        return Ok(()); // also skips long loops over empty blocks
    }
    match t.kind() {
        Kind::Named(p) if p.category() == Category::Marker => Ok(()),
        Kind::Named(p) => f(*p, disp),
        Kind::Dup(old) | Kind::Resized { old, .. } => for_each_leaf(old, disp, f),
        Kind::Subarray { expansion, .. } | Kind::Darray { expansion, .. } => {
            for_each_leaf(expansion, disp, f)
        }
        Kind::Contiguous { count, old } => rep(old, *count, disp, f),
        Kind::Vector {
            count,
            blocklength,
            stride,
            old,
        } => {
            let step = stride.wrapping_mul(old.layout().extent());
            for i in 0..*count {
                rep(
                    old,
                    *blocklength,
                    disp.wrapping_add(i.wrapping_mul(step)),
                    f,
                )?;
            }
            Ok(())
        }
        Kind::Hvector {
            count,
            blocklength,
            stride,
            old,
        } => {
            for i in 0..*count {
                rep(
                    old,
                    *blocklength,
                    disp.wrapping_add(i.wrapping_mul(*stride)),
                    f,
                )?;
            }
            Ok(())
        }
        Kind::Indexed {
            blocklengths,
            displacements,
            old,
        } => {
            let ext = old.layout().extent();
            for (&b, &d) in blocklengths.iter().zip(displacements.iter()) {
                rep(old, b, disp.wrapping_add(d.wrapping_mul(ext)), f)?;
            }
            Ok(())
        }
        Kind::Hindexed {
            blocklengths,
            displacements,
            old,
        } => {
            for (&b, &d) in blocklengths.iter().zip(displacements.iter()) {
                rep(old, b, disp.wrapping_add(d), f)?;
            }
            Ok(())
        }
        Kind::IndexedBlock {
            blocklength,
            displacements,
            old,
        } => {
            let ext = old.layout().extent();
            for &d in displacements.iter() {
                rep(old, *blocklength, disp.wrapping_add(d.wrapping_mul(ext)), f)?;
            }
            Ok(())
        }
        Kind::HindexedBlock {
            blocklength,
            displacements,
            old,
        } => {
            for &d in displacements.iter() {
                rep(old, *blocklength, disp.wrapping_add(d), f)?;
            }
            Ok(())
        }
        Kind::Struct {
            blocklengths,
            displacements,
            types,
        } => {
            for ((&b, &d), ty) in blocklengths
                .iter()
                .zip(displacements.iter())
                .zip(types.iter())
            {
                rep(ty, b, disp.wrapping_add(d), f)?;
            }
            Ok(())
        }
    }
}
