//! Error types: [`CodecError`] for malformed wire data, [`PmiError`] for everything the
//! client can report.

use std::fmt;
use std::io;

/// A message could not be encoded or decoded. The text says what was wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodecError(pub String);

impl CodecError {
    pub(crate) fn new(msg: impl Into<String>) -> Self {
        CodecError(msg.into())
    }
}

impl fmt::Display for CodecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for CodecError {}

/// Errors reported by the PMI client.
#[derive(Debug)]
pub enum PmiError {
    /// An environment variable that selects or configures PMI has an unusable value.
    Env {
        var: &'static str,
        value: String,
        reason: String,
    },
    /// A system call on the PMI connection failed.
    Io { op: &'static str, source: io::Error },
    /// The process manager closed the PMI connection.
    Closed,
    /// The process manager sent something this client cannot understand.
    Protocol(String),
    /// The process manager answered a request with an error.
    Server {
        cmd: String,
        rc: String,
        msg: String,
    },
    /// `get` found no value for the key.
    KeyNotFound { key: String },
    /// A caller-supplied key or value is unusable (too long, bad characters, ...).
    InvalidArgument(String),
    /// The operation was attempted after `finalize`.
    Finalized,
}

impl fmt::Display for PmiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PmiError::Env { var, value, reason } => {
                write!(f, "PMI environment: {var}={value:?}: {reason}")
            }
            PmiError::Io { op, source } => write!(f, "PMI connection: {op} failed: {source}"),
            PmiError::Closed => f.write_str("PMI connection closed by the process manager"),
            PmiError::Protocol(m) => write!(f, "PMI protocol error: {m}"),
            PmiError::Server { cmd, rc, msg } => {
                write!(f, "PMI server rejected {cmd}: rc={rc}")?;
                if !msg.is_empty() {
                    write!(f, " ({msg})")?;
                }
                Ok(())
            }
            PmiError::KeyNotFound { key } => write!(f, "PMI key {key:?} not found"),
            PmiError::InvalidArgument(m) => write!(f, "invalid PMI argument: {m}"),
            PmiError::Finalized => f.write_str("PMI already finalized"),
        }
    }
}

impl std::error::Error for PmiError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            PmiError::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

impl From<CodecError> for PmiError {
    fn from(e: CodecError) -> Self {
        PmiError::Protocol(e.0)
    }
}
