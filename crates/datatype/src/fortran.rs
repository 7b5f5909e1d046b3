//! Fortran-kind type selection: which predefined type `MPI_Type_match_size` and
//! `MPI_Type_create_f90_integer/real/complex` name, by Fortran's `SELECTED_INT_KIND` and
//! `SELECTED_REAL_KIND` rules on x86-64 (gfortran's kinds), and the value those `f90`
//! calls return: the selected type under the `MPI_COMBINER_F90_*` combiner, which
//! decodes to the call's arguments (MPI-4.1 sections 19.1.9 and 5.1.13).

use crate::envelope::Combiner;
use crate::error::{Error, Result};
use crate::mpich::UNDEFINED;
use crate::{Datatype, Predefined};

/// `MPI_TYPECLASS_*`: the kind of type `MPI_Type_match_size` looks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TypeClass {
    Real,
    Integer,
    Complex,
}

impl TypeClass {
    /// The class for an MPICH constant value, if it is one.
    pub const fn from_mpich(value: i32) -> Option<TypeClass> {
        match value {
            crate::mpich::TYPECLASS_REAL => Some(TypeClass::Real),
            crate::mpich::TYPECLASS_INTEGER => Some(TypeClass::Integer),
            crate::mpich::TYPECLASS_COMPLEX => Some(TypeClass::Complex),
            _ => None,
        }
    }

    /// The predefined types of the class, smallest first: what `MPI_Type_match_size`
    /// and the `f90` selections choose from.
    const fn candidates(self) -> &'static [Predefined] {
        match self {
            TypeClass::Real => &[
                Predefined::Real2,
                Predefined::Real4,
                Predefined::Real8,
                Predefined::Real16,
            ],
            TypeClass::Integer => &[
                Predefined::Integer1,
                Predefined::Integer2,
                Predefined::Integer4,
                Predefined::Integer8,
            ],
            TypeClass::Complex => &[
                Predefined::Complex4,
                Predefined::Complex8,
                Predefined::Complex16,
                Predefined::Complex32,
            ],
        }
    }
}

/// `MPI_Type_match_size`: the predefined type of `class` whose size is `size` bytes.
pub fn match_size(class: TypeClass, size: i64) -> Result<Predefined> {
    class
        .candidates()
        .iter()
        .copied()
        .find(|p| p.size() as i64 == size)
        .ok_or_else(|| Error::InvalidArg {
            arg: "size".into(),
            value: size,
            expected: format!(
                "the size of a {} type ({})",
                match class {
                    TypeClass::Real => "real",
                    TypeClass::Integer => "integer",
                    TypeClass::Complex => "complex",
                },
                class
                    .candidates()
                    .iter()
                    .map(|p| p.size().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        })
}

/// Decimal exponent range of each Fortran integer kind (`RANGE(0_k)`).
const INT_RANGES: [(Predefined, i64); 4] = [
    (Predefined::Integer1, 2),
    (Predefined::Integer2, 4),
    (Predefined::Integer4, 9),
    (Predefined::Integer8, 18),
];

/// Decimal precision and exponent range of each Fortran real kind with an MPI type
/// (`PRECISION(0._k)`, `RANGE(0._k)`; kind 16 is IEEE binary128).
const REAL_KINDS: [(Predefined, Predefined, i64, i64); 3] = [
    (Predefined::Real4, Predefined::Complex8, 6, 37),
    (Predefined::Real8, Predefined::Complex16, 15, 307),
    (Predefined::Real16, Predefined::Complex32, 33, 4931),
];

fn check_param(arg: &str, v: i64) -> Result<()> {
    if v < 0 && v != i64::from(UNDEFINED) {
        return Err(Error::InvalidArg {
            arg: arg.into(),
            value: v,
            expected: "a non-negative number or MPI_UNDEFINED".into(),
        });
    }
    Ok(())
}

/// `SELECTED_INT_KIND(r)`: the smallest integer type with at least `r` decimal digits.
pub fn f90_integer(r: i64) -> Result<Predefined> {
    check_param("r", r)?;
    INT_RANGES
        .iter()
        .find(|&&(_, range)| range >= r)
        .map(|&(p, _)| p)
        .ok_or_else(|| Error::InvalidArg {
            arg: "r".into(),
            value: r,
            expected: "a decimal range of at most 18 (no larger integer type)".into(),
        })
}

/// `SELECTED_REAL_KIND(p, r)`: the smallest real kind with at least `p` digits of
/// precision and exponent range `r` (either may be `MPI_UNDEFINED`, not both); the
/// real and complex types of that kind.
fn real_kind(p: i64, r: i64) -> Result<(Predefined, Predefined)> {
    check_param("p", p)?;
    check_param("r", r)?;
    let undefined = i64::from(UNDEFINED);
    if p == undefined && r == undefined {
        return Err(Error::InvalidArg {
            arg: "p".into(),
            value: p,
            expected: "a precision, or a range r (both are MPI_UNDEFINED)".into(),
        });
    }
    REAL_KINDS
        .iter()
        .find(|&&(_, _, prec, range)| {
            (p == undefined || prec >= p) && (r == undefined || range >= r)
        })
        .map(|&(real, complex, _, _)| (real, complex))
        .ok_or_else(|| Error::InvalidArg {
            arg: if p != undefined && p > 33 { "p" } else { "r" }.into(),
            value: if p != undefined && p > 33 { p } else { r },
            expected: "a precision of at most 33 and a range of at most 4931".into(),
        })
}

/// `SELECTED_REAL_KIND(p, r)` for `MPI_Type_create_f90_real`.
pub fn f90_real(p: i64, r: i64) -> Result<Predefined> {
    real_kind(p, r).map(|(real, _)| real)
}

/// The complex type of `SELECTED_REAL_KIND(p, r)` for `MPI_Type_create_f90_complex`.
pub fn f90_complex(p: i64, r: i64) -> Result<Predefined> {
    real_kind(p, r).map(|(_, complex)| complex)
}

/// Which `MPI_Type_create_f90_*` call made a type, with its arguments.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum F90 {
    Integer { r: i64 },
    Real { p: i64, r: i64 },
    Complex { p: i64, r: i64 },
}

impl F90 {
    /// `MPI_COMBINER_F90_*`.
    pub fn combiner(self) -> Combiner {
        match self {
            F90::Integer { .. } => Combiner::F90Integer,
            F90::Real { .. } => Combiner::F90Real,
            F90::Complex { .. } => Combiner::F90Complex,
        }
    }

    /// What `MPI_Type_get_contents` returns: `r`, or `p` and `r`.
    pub fn integers(self) -> Vec<i64> {
        match self {
            F90::Integer { r } => vec![r],
            F90::Real { p, r } | F90::Complex { p, r } => vec![p, r],
        }
    }

    /// The predefined type the arguments select.
    pub fn select(self) -> Result<Predefined> {
        match self {
            F90::Integer { r } => f90_integer(r),
            F90::Real { p, r } => f90_real(p, r),
            F90::Complex { p, r } => f90_complex(p, r),
        }
    }
}

impl Datatype {
    /// `MPI_Type_create_f90_integer/real/complex`: the type selected for the arguments,
    /// decoding as the call that made it.
    pub fn f90(f90: F90) -> Result<Datatype> {
        Ok(Datatype::new_f90(f90, f90.select()?))
    }

    /// The `MPI_Type_create_f90_*` call that made this type, if one did.
    pub fn f90_params(&self) -> Option<F90> {
        self.0.f90
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const U: i64 = UNDEFINED as i64;

    #[test]
    fn match_size_picks_the_fortran_types() {
        assert_eq!(match_size(TypeClass::Real, 8), Ok(Predefined::Real8));
        assert_eq!(match_size(TypeClass::Integer, 1), Ok(Predefined::Integer1));
        assert_eq!(
            match_size(TypeClass::Complex, 32),
            Ok(Predefined::Complex32)
        );
        assert_eq!(match_size(TypeClass::Real, 2), Ok(Predefined::Real2));
        assert!(match_size(TypeClass::Real, 3).is_err());
        assert!(match_size(TypeClass::Integer, 16).is_err());
        assert_eq!(TypeClass::from_mpich(4), None);
    }

    #[test]
    fn selected_kinds_follow_fortran() {
        assert_eq!(f90_integer(0), Ok(Predefined::Integer1));
        assert_eq!(f90_integer(2), Ok(Predefined::Integer1));
        assert_eq!(f90_integer(3), Ok(Predefined::Integer2));
        assert_eq!(f90_integer(9), Ok(Predefined::Integer4));
        assert_eq!(f90_integer(18), Ok(Predefined::Integer8));
        assert!(f90_integer(19).is_err());
        assert!(f90_integer(-2).is_err());
        assert_eq!(f90_real(6, 30), Ok(Predefined::Real4));
        assert_eq!(f90_real(7, U), Ok(Predefined::Real8));
        assert_eq!(f90_real(U, 300), Ok(Predefined::Real8));
        assert_eq!(f90_real(6, 38), Ok(Predefined::Real8));
        assert_eq!(f90_real(30, U), Ok(Predefined::Real16));
        assert!(f90_real(40, U).is_err());
        assert!(f90_real(U, U).is_err());
        assert_eq!(f90_complex(15, U), Ok(Predefined::Complex16));
    }

    #[test]
    fn f90_types_decode_as_their_call() {
        let t = Datatype::f90(F90::Real { p: 6, r: 30 }).unwrap();
        assert_eq!(t.size(), 4);
        assert_eq!(t.basic_type(), Some(Predefined::Real4));
        assert!(t.is_committed());
        let e = t.envelope();
        assert_eq!(
            (e.combiner, e.num_integers, e.num_addresses, e.num_datatypes),
            (Combiner::F90Real, 2, 0, 0)
        );
        assert_eq!(t.contents().unwrap().integers, vec![6, 30]);
        let i = Datatype::f90(F90::Integer { r: 9 }).unwrap();
        assert_eq!((i.size(), i.combiner()), (4, Combiner::F90Integer));
        assert_eq!(i.contents().unwrap().integers, vec![9]);
        assert_eq!(i.dup().combiner(), Combiner::Dup);
    }
}
