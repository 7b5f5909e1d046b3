//! The error type of the safe API: an MPI error class plus a message that names the
//! Rust method that failed and what was wrong.

use std::fmt;

pub use oxmpi_core::ErrorClass;

/// An MPI error reported by a call of this crate.
///
/// [`class`](Error::class) is the MPI error class (`MPI_ERR_RANK`, `MPI_ERR_TRUNCATE`, ...);
/// [`message`](Error::message) is a complete sentence for people, naming the method, the
/// class and the problem, e.g.
/// `send: MPI_ERR_RANK: invalid rank 7 (communicator size 4)`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    class: ErrorClass,
    method: &'static str,
    message: String,
}

impl Error {
    /// An error of `class` reported by `method`, with `detail` describing the problem.
    pub fn new(method: &'static str, class: ErrorClass, detail: impl fmt::Display) -> Error {
        Error {
            class,
            method,
            message: format!("{method}: {}: {detail}", class.name()),
        }
    }

    /// Wraps an engine error, naming the method that called the engine.
    pub(crate) fn from_core(method: &'static str, e: oxmpi_core::Error) -> Error {
        let class = e.class;
        Error::new(method, class, e.into_message())
    }

    /// The MPI error class.
    pub fn class(&self) -> ErrorClass {
        self.class
    }

    /// The name of the method that reported the error (e.g. `"receive_into"`).
    pub fn method(&self) -> &'static str {
        self.method
    }

    /// The full message: method, class name and the problem.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}

/// The result type of every fallible call of this crate.
pub type Result<T> = std::result::Result<T, Error>;

/// Adapter for `map_err`: turns an engine error into an [`Error`] naming `method`.
pub(crate) fn engine(method: &'static str) -> impl FnOnce(oxmpi_core::Error) -> Error {
    move |e| Error::from_core(method, e)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn message_names_method_class_and_detail() {
        let e = Error::new(
            "send",
            ErrorClass::Rank,
            "invalid rank 7 (communicator size 4)",
        );
        assert_eq!(e.class(), ErrorClass::Rank);
        assert_eq!(e.method(), "send");
        assert_eq!(
            e.message(),
            "send: MPI_ERR_RANK: invalid rank 7 (communicator size 4)"
        );
        assert_eq!(e.to_string(), e.message());
    }

    #[test]
    fn engine_errors_keep_their_class() {
        let core = oxmpi_core::Error::new(ErrorClass::Tag, "invalid tag -4");
        let e = engine("receive_into")(core);
        assert_eq!(e.class(), ErrorClass::Tag);
        assert_eq!(e.message(), "receive_into: MPI_ERR_TAG: invalid tag -4");
        let _: &dyn std::error::Error = &e;
    }
}
