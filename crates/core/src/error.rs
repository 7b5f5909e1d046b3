//! MPI error classes and the engine's error value.
//!
//! Every fallible engine operation returns [`Result<T>`]; the error carries the MPI
//! error class (numbered as in MPICH, so the C layer can return it unchanged) and a
//! specific message naming the call, the argument and the value.

use crate::device::Outcome;
use std::fmt;

/// MPI error classes, with MPICH's numeric values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(i32)]
pub enum ErrorClass {
    Success = 0,
    Buffer = 1,
    Count = 2,
    Type = 3,
    Tag = 4,
    Comm = 5,
    Rank = 6,
    Root = 7,
    Group = 8,
    Op = 9,
    Topology = 10,
    Dims = 11,
    Arg = 12,
    Unknown = 13,
    Truncate = 14,
    Other = 15,
    Intern = 16,
    InStatus = 17,
    Pending = 18,
    Request = 19,
    Access = 20,
    Amode = 21,
    BadFile = 22,
    Conversion = 23,
    DupDatarep = 24,
    FileExists = 25,
    FileInUse = 26,
    File = 27,
    Info = 28,
    InfoKey = 29,
    InfoValue = 30,
    InfoNokey = 31,
    Io = 32,
    Name = 33,
    NoMem = 34,
    NotSame = 35,
    NoSpace = 36,
    NoSuchFile = 37,
    Port = 38,
    Quota = 39,
    ReadOnly = 40,
    Service = 41,
    Spawn = 42,
    UnsupportedDatarep = 43,
    UnsupportedOperation = 44,
    Win = 45,
    Base = 46,
    Locktype = 47,
    Keyval = 48,
    RmaConflict = 49,
    RmaSync = 50,
    Size = 51,
    Disp = 52,
    Assert = 53,
    RmaRange = 55,
    RmaAttach = 56,
    RmaShared = 57,
    RmaFlavor = 58,
    Session = 75,
    ProcAborted = 76,
    ValueTooLarge = 77,
    /// MPI-4.1's class for an invalid error handler argument. MPICH 4.0.2 has no
    /// such class; 79 is the first number after its last one (`MPI_T_ERR_NOT_SUPPORTED`).
    Errhandler = 79,
}

impl ErrorClass {
    /// The largest predefined class number (user classes start above it).
    pub const LAST_PREDEFINED: i32 = 80;

    const ALL: &'static [ErrorClass] = &[
        ErrorClass::Success,
        ErrorClass::Buffer,
        ErrorClass::Count,
        ErrorClass::Type,
        ErrorClass::Tag,
        ErrorClass::Comm,
        ErrorClass::Rank,
        ErrorClass::Root,
        ErrorClass::Group,
        ErrorClass::Op,
        ErrorClass::Topology,
        ErrorClass::Dims,
        ErrorClass::Arg,
        ErrorClass::Unknown,
        ErrorClass::Truncate,
        ErrorClass::Other,
        ErrorClass::Intern,
        ErrorClass::InStatus,
        ErrorClass::Pending,
        ErrorClass::Request,
        ErrorClass::Access,
        ErrorClass::Amode,
        ErrorClass::BadFile,
        ErrorClass::Conversion,
        ErrorClass::DupDatarep,
        ErrorClass::FileExists,
        ErrorClass::FileInUse,
        ErrorClass::File,
        ErrorClass::Info,
        ErrorClass::InfoKey,
        ErrorClass::InfoValue,
        ErrorClass::InfoNokey,
        ErrorClass::Io,
        ErrorClass::Name,
        ErrorClass::NoMem,
        ErrorClass::NotSame,
        ErrorClass::NoSpace,
        ErrorClass::NoSuchFile,
        ErrorClass::Port,
        ErrorClass::Quota,
        ErrorClass::ReadOnly,
        ErrorClass::Service,
        ErrorClass::Spawn,
        ErrorClass::UnsupportedDatarep,
        ErrorClass::UnsupportedOperation,
        ErrorClass::Win,
        ErrorClass::Base,
        ErrorClass::Locktype,
        ErrorClass::Keyval,
        ErrorClass::RmaConflict,
        ErrorClass::RmaSync,
        ErrorClass::Size,
        ErrorClass::Disp,
        ErrorClass::Assert,
        ErrorClass::RmaRange,
        ErrorClass::RmaAttach,
        ErrorClass::RmaShared,
        ErrorClass::RmaFlavor,
        ErrorClass::Session,
        ErrorClass::ProcAborted,
        ErrorClass::ValueTooLarge,
        ErrorClass::Errhandler,
    ];

    /// The class with this number, if it is a predefined class.
    pub fn from_code(code: i32) -> Option<ErrorClass> {
        Self::ALL.iter().copied().find(|c| *c as i32 == code)
    }

    /// The standard name, e.g. `"MPI_ERR_RANK"`.
    pub fn name(self) -> &'static str {
        use ErrorClass::*;
        match self {
            Success => "MPI_SUCCESS",
            Buffer => "MPI_ERR_BUFFER",
            Count => "MPI_ERR_COUNT",
            Type => "MPI_ERR_TYPE",
            Tag => "MPI_ERR_TAG",
            Comm => "MPI_ERR_COMM",
            Rank => "MPI_ERR_RANK",
            Root => "MPI_ERR_ROOT",
            Group => "MPI_ERR_GROUP",
            Op => "MPI_ERR_OP",
            Topology => "MPI_ERR_TOPOLOGY",
            Dims => "MPI_ERR_DIMS",
            Arg => "MPI_ERR_ARG",
            Unknown => "MPI_ERR_UNKNOWN",
            Truncate => "MPI_ERR_TRUNCATE",
            Other => "MPI_ERR_OTHER",
            Intern => "MPI_ERR_INTERN",
            InStatus => "MPI_ERR_IN_STATUS",
            Pending => "MPI_ERR_PENDING",
            Request => "MPI_ERR_REQUEST",
            Access => "MPI_ERR_ACCESS",
            Amode => "MPI_ERR_AMODE",
            BadFile => "MPI_ERR_BAD_FILE",
            Conversion => "MPI_ERR_CONVERSION",
            DupDatarep => "MPI_ERR_DUP_DATAREP",
            FileExists => "MPI_ERR_FILE_EXISTS",
            FileInUse => "MPI_ERR_FILE_IN_USE",
            File => "MPI_ERR_FILE",
            Info => "MPI_ERR_INFO",
            InfoKey => "MPI_ERR_INFO_KEY",
            InfoValue => "MPI_ERR_INFO_VALUE",
            InfoNokey => "MPI_ERR_INFO_NOKEY",
            Io => "MPI_ERR_IO",
            Name => "MPI_ERR_NAME",
            NoMem => "MPI_ERR_NO_MEM",
            NotSame => "MPI_ERR_NOT_SAME",
            NoSpace => "MPI_ERR_NO_SPACE",
            NoSuchFile => "MPI_ERR_NO_SUCH_FILE",
            Port => "MPI_ERR_PORT",
            Quota => "MPI_ERR_QUOTA",
            ReadOnly => "MPI_ERR_READ_ONLY",
            Service => "MPI_ERR_SERVICE",
            Spawn => "MPI_ERR_SPAWN",
            UnsupportedDatarep => "MPI_ERR_UNSUPPORTED_DATAREP",
            UnsupportedOperation => "MPI_ERR_UNSUPPORTED_OPERATION",
            Win => "MPI_ERR_WIN",
            Base => "MPI_ERR_BASE",
            Locktype => "MPI_ERR_LOCKTYPE",
            Keyval => "MPI_ERR_KEYVAL",
            RmaConflict => "MPI_ERR_RMA_CONFLICT",
            RmaSync => "MPI_ERR_RMA_SYNC",
            Size => "MPI_ERR_SIZE",
            Disp => "MPI_ERR_DISP",
            Assert => "MPI_ERR_ASSERT",
            RmaRange => "MPI_ERR_RMA_RANGE",
            RmaAttach => "MPI_ERR_RMA_ATTACH",
            RmaShared => "MPI_ERR_RMA_SHARED",
            RmaFlavor => "MPI_ERR_RMA_FLAVOR",
            Session => "MPI_ERR_SESSION",
            ProcAborted => "MPI_ERR_PROC_ABORTED",
            ValueTooLarge => "MPI_ERR_VALUE_TOO_LARGE",
            Errhandler => "MPI_ERR_ERRHANDLER",
        }
    }

    /// A one-line description of the class (what `MPI_Error_string` gives for a bare class).
    pub fn description(self) -> &'static str {
        use ErrorClass::*;
        match self {
            Success => "no error",
            Buffer => "invalid buffer pointer",
            Count => "invalid count argument",
            Type => "invalid datatype",
            Tag => "invalid tag",
            Comm => "invalid communicator",
            Rank => "invalid rank",
            Root => "invalid root",
            Group => "invalid group",
            Op => "invalid reduction operation",
            Topology => "invalid topology",
            Dims => "invalid dimension argument",
            Arg => "invalid argument",
            Unknown => "unknown error",
            Truncate => "message truncated",
            Other => "other error",
            Intern => "internal error",
            InStatus => "error code is in status",
            Pending => "pending request",
            Request => "invalid request",
            Access => "permission denied",
            Amode => "invalid access mode",
            BadFile => "invalid file name",
            Conversion => "data conversion error",
            DupDatarep => "data representation already defined",
            FileExists => "file exists",
            FileInUse => "file in use",
            File => "invalid file handle",
            Info => "invalid info object",
            InfoKey => "invalid info key",
            InfoValue => "invalid info value",
            InfoNokey => "info key not defined",
            Io => "I/O error",
            Name => "invalid service name",
            NoMem => "out of memory",
            NotSame => "collective arguments not identical",
            NoSpace => "no space left",
            NoSuchFile => "no such file",
            Port => "invalid port name",
            Quota => "quota exceeded",
            ReadOnly => "read-only file or file system",
            Service => "invalid service",
            Spawn => "spawn error",
            UnsupportedDatarep => "unsupported data representation",
            UnsupportedOperation => "unsupported operation",
            Win => "invalid window",
            Base => "invalid base address",
            Locktype => "invalid lock type",
            Keyval => "invalid attribute key",
            RmaConflict => "conflicting accesses to window",
            RmaSync => "wrong synchronization of RMA calls",
            Size => "invalid size",
            Disp => "invalid displacement",
            Assert => "invalid assertion",
            RmaRange => "target memory not in window",
            RmaAttach => "memory cannot be attached",
            RmaShared => "memory cannot be shared",
            RmaFlavor => "wrong window flavor",
            Session => "invalid session",
            ProcAborted => "communication with an aborted process",
            ValueTooLarge => "value too large to store",
            Errhandler => "invalid error handler",
        }
    }
}

/// The error class of an operation the device finished with `o`.
impl From<Outcome> for ErrorClass {
    #[inline]
    fn from(o: Outcome) -> ErrorClass {
        match o {
            Outcome::Success => ErrorClass::Success,
            Outcome::Truncated => ErrorClass::Truncate,
            Outcome::PeerLost => ErrorClass::ProcAborted,
        }
    }
}

/// A device outcome equals the error class it maps to (`status.error !=
/// ErrorClass::Success` reads as it did when statuses held classes).
impl PartialEq<ErrorClass> for Outcome {
    #[inline]
    fn eq(&self, c: &ErrorClass) -> bool {
        ErrorClass::from(*self) == *c
    }
}

/// What an [`Error`] says: a class and a specific message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ErrorData {
    pub class: ErrorClass,
    pub message: String,
    /// The error code a user callback returned (a generalized request's query
    /// function, say), which the call hands back to the program unchanged; `None` for
    /// errors the engine found.
    pub code: Option<i32>,
    /// The communicator whose error handler reports this error when it is not the
    /// call's own object: that of the failing request of a completion call (index of
    /// [`crate::comm::CommId`]; `None`: the call's object).
    pub comm: Option<u32>,
}

/// An engine error: a class and a specific message (`e.class`, `e.message`).
///
/// Boxed so that a `Result` of a small value fits in registers: errors are the rare
/// path, and every hot call returns one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error(Box<ErrorData>);

impl Error {
    // Errors are the rare path: keeping their construction out of line keeps the
    // argument checks of the hot calls short.
    #[cold]
    #[inline(never)]
    pub fn new(class: ErrorClass, message: impl Into<String>) -> Error {
        Error(Box::new(ErrorData {
            class,
            message: message.into(),
            code: None,
            comm: None,
        }))
    }

    /// The error, to be reported to the handler of communicator `comm`.
    pub fn on_comm(mut self, comm: u32) -> Error {
        self.comm = Some(comm);
        self
    }

    /// An error standing for `code`, which a user callback returned: its class is
    /// `class` (the class of the code, as the binding knows it), and the binding hands
    /// `code` itself back to the program.
    #[cold]
    #[inline(never)]
    pub fn from_callback(code: i32, class: ErrorClass, message: impl Into<String>) -> Error {
        let mut e = Error::new(class, message);
        e.code = Some(code);
        e
    }
}

impl Error {
    /// The message, taken out of the error.
    pub fn into_message(self) -> String {
        self.0.message
    }
}

impl std::ops::Deref for Error {
    type Target = ErrorData;
    fn deref(&self) -> &ErrorData {
        &self.0
    }
}

impl std::ops::DerefMut for Error {
    fn deref_mut(&mut self) -> &mut ErrorData {
        &mut self.0
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.class.name(), self.message)
    }
}

impl std::error::Error for Error {}

/// Result alias used throughout the engine.
pub type Result<T> = std::result::Result<T, Error>;

/// Shorthand for building an `Err(Error)`.
#[cold]
pub fn err<T>(class: ErrorClass, message: impl Into<String>) -> Result<T> {
    Err(Error::new(class, message))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_round_trip() {
        for c in ErrorClass::ALL {
            assert_eq!(ErrorClass::from_code(*c as i32), Some(*c));
            assert!(c.name().starts_with("MPI_"));
        }
        assert_eq!(ErrorClass::from_code(54), None);
        assert_eq!(ErrorClass::Truncate as i32, 14);
    }
}
