//! Errors of the datatype engine: what went wrong (naming the argument and its
//! value) and which MPI error class the core should report for it.

use std::fmt;

use crate::Predefined;

/// The MPI error class an [`Error`] maps to. The names mirror `MPI_ERR_*`; the core
/// translates them to the numeric classes of the ABI it exports.
#[allow(clippy::enum_variant_names)] // the `Err` prefix mirrors the MPI names on purpose
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ErrorClass {
    /// `MPI_ERR_ARG`: an invalid argument other than a count, rank or dimension.
    ErrArg,
    /// `MPI_ERR_COUNT`: a negative count.
    ErrCount,
    /// `MPI_ERR_TYPE`: a datatype that cannot be used this way.
    ErrType,
    /// `MPI_ERR_RANK`: the `rank` argument of `MPI_Type_create_darray` is out of range.
    ErrRank,
    /// `MPI_ERR_DIMS`: a non-positive number of dimensions.
    ErrDims,
    /// `MPI_ERR_TRUNCATE`: a pack buffer too small, or too little data to unpack.
    ErrTruncate,
    /// `MPI_ERR_CONVERSION`: a value not representable in the external32 format.
    ErrConversion,
    /// `MPI_ERR_OTHER`: an implementation limit was exceeded.
    ErrOther,
}

/// An error from a datatype constructor or a pack/unpack call.
///
/// `Display` gives a message that names the offending argument and its value, e.g.
/// `blocklength must be non-negative, got -3`; the binding prefixes the MPI call name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Error {
    /// A count argument is negative.
    NegativeCount { arg: String, value: i64 },
    /// An argument is out of its valid range (negative block length, bad subarray box, ...).
    InvalidArg {
        arg: String,
        value: i64,
        expected: String,
    },
    /// Parallel argument arrays have different lengths.
    LengthMismatch {
        arg: String,
        len: usize,
        expected: usize,
    },
    /// An unknown value for an enumerated argument (order, distribution).
    UnknownValue { arg: String, value: i64 },
    /// `rank` outside `0..size` in `MPI_Type_create_darray`.
    RankOutOfRange { rank: i64, size: i64 },
    /// A non-positive `ndims`.
    InvalidDims { value: i64 },
    /// Byte arithmetic (displacement, extent, size) does not fit in 64 bits.
    Overflow { what: String },
    /// Types nested deeper than [`crate::MAX_DEPTH`] levels.
    TooDeep { depth: usize },
    /// A buffer is too small for the data: `needed` bytes, `available` given.
    Truncate { needed: u64, available: u64 },
    /// A value of a predefined type has no external32 representation.
    Conversion { ty: Predefined, detail: String },
}

impl Error {
    /// The MPI error class to report.
    pub fn class(&self) -> ErrorClass {
        match self {
            Error::NegativeCount { .. } => ErrorClass::ErrCount,
            Error::InvalidArg { .. }
            | Error::LengthMismatch { .. }
            | Error::UnknownValue { .. }
            | Error::Overflow { .. } => ErrorClass::ErrArg,
            Error::RankOutOfRange { .. } => ErrorClass::ErrRank,
            Error::InvalidDims { .. } => ErrorClass::ErrDims,
            Error::TooDeep { .. } => ErrorClass::ErrOther,
            Error::Truncate { .. } => ErrorClass::ErrTruncate,
            Error::Conversion { .. } => ErrorClass::ErrConversion,
        }
    }

    pub(crate) fn count(arg: impl Into<String>, value: i64) -> Error {
        Error::NegativeCount {
            arg: arg.into(),
            value,
        }
    }

    pub(crate) fn arg(arg: impl Into<String>, value: i64, expected: impl Into<String>) -> Error {
        Error::InvalidArg {
            arg: arg.into(),
            value,
            expected: expected.into(),
        }
    }

    pub(crate) fn overflow(what: impl Into<String>) -> Error {
        Error::Overflow { what: what.into() }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::NegativeCount { arg, value } => {
                write!(f, "{arg} must be non-negative, got {value}")
            }
            Error::InvalidArg {
                arg,
                value,
                expected,
            } => {
                write!(f, "{arg} must be {expected}, got {value}")
            }
            Error::LengthMismatch { arg, len, expected } => {
                write!(f, "{arg} has {len} entries, expected {expected}")
            }
            Error::UnknownValue { arg, value } => write!(f, "{arg} has unknown value {value}"),
            Error::RankOutOfRange { rank, size } => {
                write!(f, "rank must be in 0..{size}, got {rank}")
            }
            Error::InvalidDims { value } => write!(f, "ndims must be positive, got {value}"),
            Error::Overflow { what } => write!(f, "{what} does not fit in a 64-bit address"),
            Error::TooDeep { depth } => write!(
                f,
                "datatype nesting depth {depth} exceeds the limit of {}",
                crate::MAX_DEPTH
            ),
            Error::Truncate { needed, available } => {
                write!(f, "buffer holds {available} bytes but {needed} are needed")
            }
            Error::Conversion { ty, detail } => {
                write!(
                    f,
                    "{} value {detail} has no external32 representation",
                    ty.name()
                )
            }
        }
    }
}

impl std::error::Error for Error {}

/// Result alias of this crate.
pub type Result<T> = std::result::Result<T, Error>;
