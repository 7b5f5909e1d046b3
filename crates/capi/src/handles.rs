//! The C ABI's vocabulary: raw handle types, `MPI_Status`, the value of every
//! predefined handle and constant in `include/mpi.h`, and the encoding that maps a
//! 32-bit handle to an index in the core's per-class object table and back.
//!
//! Values follow the MPICH ABI, so binaries built against MPICH run on this library.
//! A handle is laid out as
//!
//! ```text
//!   bits 30-31  kind:   00 invalid/null, 01 predefined ("builtin"), 10 created ("direct")
//!   bits 26-29  class:  see HandleClass (1 communicator, 2 group, 3 datatype, ...)
//!   bits  0-25  index:  position in the table of that class
//! ```
//!
//! Each table keeps its predefined objects first: a table index below the class's
//! `FIRST_CREATED_*` constant is encoded as MPICH's predefined handle, anything from
//! there on as `0b10 << 30 | class << 26 | index`. Decoding accepts only the
//! canonical handle of each index, so every valid handle has exactly one meaning and
//! everything else (0, -1, a handle of another class, a predefined value MPICH
//! reserves for something we do not have) decodes to `None`.
//!
//! Null handles (`MPI_COMM_NULL`, ...) decode to `None` as well; callers compare
//! against them first where the standard gives the null handle a meaning.
//!
//! This module is pure data and arithmetic: no tables, no global state. It is the
//! whole ABI vocabulary: the constants and types of `mpi.h` stay here even where no
//! entry point uses them yet, since a test checks them against the header both ways
//! (those items carry their own `allow(dead_code)`); helpers no entry point uses are
//! left out until one needs them.

#![allow(non_camel_case_types, non_snake_case)]

use std::ffi::c_void;

use libc::{c_int, c_long};
use oxmpi_datatype::Predefined;

// ----------------------------------------------------------------------------
// Raw C types
// ----------------------------------------------------------------------------

pub type MPI_Comm = c_int;
pub type MPI_Group = c_int;
pub type MPI_Datatype = c_int;
pub type MPI_Op = c_int;
pub type MPI_Request = c_int;
// The handle types of objects that no entry point takes yet: the types of their null
// handles, checked against mpi.h by `constants_match_the_header_both_ways`.
#[allow(dead_code)]
pub type MPI_Message = c_int;
pub type MPI_Errhandler = c_int;
pub type MPI_Info = c_int;
#[allow(dead_code)]
pub type MPI_Win = c_int;
pub type MPI_Session = c_int;
/// An address or address difference (C `long`, the width of a pointer).
pub type MPI_Aint = c_long;
/// A large count (C `long`, as in MPICH's header).
pub type MPI_Count = c_long;
/// A Fortran `INTEGER`.
pub type MPI_Fint = c_int;

/// The object an `MPI_File` points to; never dereferenced.
#[allow(dead_code)] // the type of MPI_FILE_NULL, which no entry point uses yet
#[repr(C)]
pub struct ADIOI_FileD {
    _opaque: [u8; 0],
}
/// File handles are pointers in the MPICH ABI.
#[allow(dead_code)] // as for ADIOI_FileD
pub type MPI_File = *mut ADIOI_FileD;
/// `MPI_FILE_NULL`.
#[allow(dead_code)] // as for ADIOI_FileD
pub const MPI_FILE_NULL: MPI_File = std::ptr::null_mut();

/// `MPI_Status`, with MPICH's layout. The byte count is 63 bits wide: the low 32 in
/// `count_lo`, the rest in `count_hi_and_cancelled` above bit 0, which is the
/// cancelled flag. Use the accessors rather than the two count fields.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MPI_Status {
    pub count_lo: c_int,
    pub count_hi_and_cancelled: c_int,
    pub MPI_SOURCE: c_int,
    pub MPI_TAG: c_int,
    pub MPI_ERROR: c_int,
}

/// The Fortran 2008 status has the same five `MPI_Fint` fields in the same order.
pub type MPI_F08_status = MPI_Status;

impl MPI_Status {
    /// A status for a completed operation that moved `bytes` bytes.
    pub fn new(source: c_int, tag: c_int, error: c_int, bytes: MPI_Count) -> MPI_Status {
        let mut status = MPI_Status {
            count_lo: 0,
            count_hi_and_cancelled: 0,
            MPI_SOURCE: source,
            MPI_TAG: tag,
            MPI_ERROR: error,
        };
        status.set_count(bytes);
        status
    }

    /// The byte count (`MPI_Get_count` divides it by the type size).
    pub fn count(&self) -> MPI_Count {
        let lo = self.count_lo as u32 as MPI_Count;
        let hi = (self.count_hi_and_cancelled >> 1) as MPI_Count;
        (hi << 32) | lo
    }

    /// Stores a byte count (0 ..= 2^62 - 1), keeping the cancelled flag.
    pub fn set_count(&mut self, bytes: MPI_Count) {
        self.count_lo = bytes as u32 as c_int;
        let hi = ((bytes >> 32) as c_int) << 1;
        self.count_hi_and_cancelled = hi | (self.count_hi_and_cancelled & 1);
    }

    /// `MPI_Test_cancelled`.
    pub fn cancelled(&self) -> bool {
        self.count_hi_and_cancelled & 1 != 0
    }

    /// `MPI_Status_set_cancelled`.
    pub fn set_cancelled(&mut self, cancelled: bool) {
        self.count_hi_and_cancelled = (self.count_hi_and_cancelled & !1) | c_int::from(cancelled);
    }
}

// ----------------------------------------------------------------------------
// Special addresses
// ----------------------------------------------------------------------------

// The special addresses of mpi.h, checked by the test `special_addresses`; the entry
// points compare against their own integer forms (`convert::STATUS_IGNORE`, ...).

/// `MPI_BOTTOM`: buffer addresses are absolute (the null address).
#[allow(dead_code)]
pub const MPI_BOTTOM: *mut c_void = std::ptr::null_mut();
/// `MPI_IN_PLACE`: the address `(void *)-1`.
pub const MPI_IN_PLACE: *mut c_void = usize::MAX as *mut c_void;
/// `MPI_STATUS_IGNORE`: the address 1 (MPICH's value, so not `dangling_mut`, which
/// would use the alignment of `MPI_Status`).
#[allow(clippy::manual_dangling_ptr, dead_code)]
pub const MPI_STATUS_IGNORE: *mut MPI_Status = 1 as *mut MPI_Status;
/// `MPI_STATUSES_IGNORE`: the address 1, like `MPI_STATUS_IGNORE`.
#[allow(clippy::manual_dangling_ptr, dead_code)]
pub const MPI_STATUSES_IGNORE: *mut MPI_Status = 1 as *mut MPI_Status;
/// `MPI_ERRCODES_IGNORE`: the null address.
#[allow(dead_code)]
pub const MPI_ERRCODES_IGNORE: *mut c_int = std::ptr::null_mut();

// ----------------------------------------------------------------------------
// Integer constants of mpi.h
// ----------------------------------------------------------------------------

/// A handle value written as the unsigned number MPICH documents.
const fn h(value: u32) -> c_int {
    value as c_int
}

macro_rules! abi_constants {
    ($( $(#[$doc:meta])* $name:ident : $ty:ty = $value:expr ; )*) => {
        // The header's whole integer vocabulary: the entry points use a subset, the test
        // `constants_match_the_header_both_ways` every one.
        $( $(#[$doc])* #[allow(dead_code)] pub const $name: $ty = $value; )*

        /// Every constant above with its C name, for the cross-check with `mpi.h`.
        #[cfg(test)]
        pub(crate) const ABI_CONSTANTS: &[(&str, i64)] = &[ $( (stringify!($name), $name as i64), )* ];
    };
}

abi_constants! {
    /// The version of the standard this library claims (`MPI_Get_version`).
    MPI_VERSION: c_int = 4;
    MPI_SUBVERSION: c_int = 1;

    // Position of the fields in a Fortran status (an array of MPI_Fint).
    MPI_F_STATUS_SIZE: c_int = 5;
    MPI_F_SOURCE: c_int = 2;
    MPI_F_TAG: c_int = 3;
    MPI_F_ERROR: c_int = 4;

    // Null handles
    MPI_COMM_NULL: MPI_Comm = 0x0400_0000;
    MPI_GROUP_NULL: MPI_Group = 0x0800_0000;
    MPI_DATATYPE_NULL: MPI_Datatype = 0x0c00_0000;
    MPI_ERRHANDLER_NULL: MPI_Errhandler = 0x1400_0000;
    MPI_OP_NULL: MPI_Op = 0x1800_0000;
    MPI_INFO_NULL: MPI_Info = 0x1c00_0000;
    MPI_WIN_NULL: MPI_Win = 0x2000_0000;
    MPI_REQUEST_NULL: MPI_Request = 0x2c00_0000;
    MPI_MESSAGE_NULL: MPI_Message = 0x2c00_0000;
    MPI_SESSION_NULL: MPI_Session = 0x3800_0000;
    /// What MPI_Mprobe/MPI_Improbe return for a probe on MPI_PROC_NULL.
    MPI_MESSAGE_NO_PROC: MPI_Message = 0x6c00_0000;

    // Predefined datatypes: C basic types
    MPI_CHAR: MPI_Datatype = 0x4c00_0101;
    MPI_SIGNED_CHAR: MPI_Datatype = 0x4c00_0118;
    MPI_UNSIGNED_CHAR: MPI_Datatype = 0x4c00_0102;
    MPI_BYTE: MPI_Datatype = 0x4c00_010d;
    MPI_WCHAR: MPI_Datatype = 0x4c00_040e;
    MPI_SHORT: MPI_Datatype = 0x4c00_0203;
    MPI_UNSIGNED_SHORT: MPI_Datatype = 0x4c00_0204;
    MPI_INT: MPI_Datatype = 0x4c00_0405;
    MPI_UNSIGNED: MPI_Datatype = 0x4c00_0406;
    MPI_LONG: MPI_Datatype = 0x4c00_0807;
    MPI_UNSIGNED_LONG: MPI_Datatype = 0x4c00_0808;
    MPI_LONG_LONG_INT: MPI_Datatype = 0x4c00_0809;
    MPI_LONG_LONG: MPI_Datatype = MPI_LONG_LONG_INT;
    MPI_UNSIGNED_LONG_LONG: MPI_Datatype = 0x4c00_0819;
    MPI_FLOAT: MPI_Datatype = 0x4c00_040a;
    MPI_DOUBLE: MPI_Datatype = 0x4c00_080b;
    MPI_LONG_DOUBLE: MPI_Datatype = 0x4c00_100c;
    MPI_PACKED: MPI_Datatype = 0x4c00_010f;

    // Bound markers (removed from the standard in MPI-3, still accepted)
    MPI_LB: MPI_Datatype = 0x4c00_0010;
    MPI_UB: MPI_Datatype = 0x4c00_0011;

    // Value-index pairs for MPI_MINLOC / MPI_MAXLOC (the padded ones are direct handles 0..=4)
    MPI_FLOAT_INT: MPI_Datatype = h(0x8c00_0000);
    MPI_DOUBLE_INT: MPI_Datatype = h(0x8c00_0001);
    MPI_LONG_INT: MPI_Datatype = h(0x8c00_0002);
    MPI_SHORT_INT: MPI_Datatype = h(0x8c00_0003);
    MPI_LONG_DOUBLE_INT: MPI_Datatype = h(0x8c00_0004);
    MPI_2INT: MPI_Datatype = 0x4c00_0816;

    // Fortran types
    MPI_CHARACTER: MPI_Datatype = 0x4c00_011a;
    MPI_INTEGER: MPI_Datatype = 0x4c00_041b;
    MPI_REAL: MPI_Datatype = 0x4c00_041c;
    MPI_LOGICAL: MPI_Datatype = 0x4c00_041d;
    MPI_COMPLEX: MPI_Datatype = 0x4c00_081e;
    MPI_DOUBLE_PRECISION: MPI_Datatype = 0x4c00_081f;
    MPI_DOUBLE_COMPLEX: MPI_Datatype = 0x4c00_1022;
    MPI_2INTEGER: MPI_Datatype = 0x4c00_0820;
    MPI_2REAL: MPI_Datatype = 0x4c00_0821;
    MPI_2DOUBLE_PRECISION: MPI_Datatype = 0x4c00_1023;

    // Optional Fortran types of explicit size (MPI_INTEGER16 is not provided)
    MPI_INTEGER1: MPI_Datatype = 0x4c00_012d;
    MPI_INTEGER2: MPI_Datatype = 0x4c00_022f;
    MPI_INTEGER4: MPI_Datatype = 0x4c00_0430;
    MPI_INTEGER8: MPI_Datatype = 0x4c00_0831;
    MPI_INTEGER16: MPI_Datatype = MPI_DATATYPE_NULL;
    MPI_REAL4: MPI_Datatype = 0x4c00_0427;
    MPI_REAL8: MPI_Datatype = 0x4c00_0829;
    MPI_REAL16: MPI_Datatype = 0x4c00_102b;
    MPI_COMPLEX8: MPI_Datatype = 0x4c00_0828;
    MPI_COMPLEX16: MPI_Datatype = 0x4c00_102a;
    MPI_COMPLEX32: MPI_Datatype = 0x4c00_202c;

    // C99 fixed-width integers, _Bool and complex types
    MPI_INT8_T: MPI_Datatype = 0x4c00_0137;
    MPI_INT16_T: MPI_Datatype = 0x4c00_0238;
    MPI_INT32_T: MPI_Datatype = 0x4c00_0439;
    MPI_INT64_T: MPI_Datatype = 0x4c00_083a;
    MPI_UINT8_T: MPI_Datatype = 0x4c00_013b;
    MPI_UINT16_T: MPI_Datatype = 0x4c00_023c;
    MPI_UINT32_T: MPI_Datatype = 0x4c00_043d;
    MPI_UINT64_T: MPI_Datatype = 0x4c00_083e;
    MPI_C_BOOL: MPI_Datatype = 0x4c00_013f;
    MPI_C_FLOAT_COMPLEX: MPI_Datatype = 0x4c00_0840;
    MPI_C_COMPLEX: MPI_Datatype = MPI_C_FLOAT_COMPLEX;
    MPI_C_DOUBLE_COMPLEX: MPI_Datatype = 0x4c00_1041;
    MPI_C_LONG_DOUBLE_COMPLEX: MPI_Datatype = 0x4c00_2042;

    // The address-sized integer types
    MPI_AINT: MPI_Datatype = 0x4c00_0843;
    MPI_OFFSET: MPI_Datatype = 0x4c00_0844;
    MPI_COUNT: MPI_Datatype = 0x4c00_0845;

    // C++ types
    MPI_CXX_BOOL: MPI_Datatype = 0x4c00_0133;
    MPI_CXX_FLOAT_COMPLEX: MPI_Datatype = 0x4c00_0834;
    MPI_CXX_DOUBLE_COMPLEX: MPI_Datatype = 0x4c00_1035;
    MPI_CXX_LONG_DOUBLE_COMPLEX: MPI_Datatype = 0x4c00_2036;

    // Optional Fortran types of MPI-4.1 that MPICH 4.0.2 lacks: oxmpi's values, in
    // MPICH's encoding (size in bits 8-15) with type numbers above MPICH's last (0x46)
    MPI_LOGICAL1: MPI_Datatype = 0x4c00_0160;
    MPI_LOGICAL2: MPI_Datatype = 0x4c00_0261;
    MPI_LOGICAL4: MPI_Datatype = 0x4c00_0462;
    MPI_LOGICAL8: MPI_Datatype = 0x4c00_0863;
    MPI_LOGICAL16: MPI_Datatype = 0x4c00_1064;
    MPI_REAL2: MPI_Datatype = 0x4c00_0265;
    MPI_COMPLEX4: MPI_Datatype = 0x4c00_0466;

    // Classes for MPI_Type_match_size
    MPI_TYPECLASS_REAL: c_int = 1;
    MPI_TYPECLASS_INTEGER: c_int = 2;
    MPI_TYPECLASS_COMPLEX: c_int = 3;

    // Datatype constructors, as reported by MPI_Type_get_envelope
    MPI_COMBINER_NAMED: c_int = 1;
    MPI_COMBINER_DUP: c_int = 2;
    MPI_COMBINER_CONTIGUOUS: c_int = 3;
    MPI_COMBINER_VECTOR: c_int = 4;
    MPI_COMBINER_HVECTOR_INTEGER: c_int = 5;
    MPI_COMBINER_HVECTOR: c_int = 6;
    MPI_COMBINER_INDEXED: c_int = 7;
    MPI_COMBINER_HINDEXED_INTEGER: c_int = 8;
    MPI_COMBINER_HINDEXED: c_int = 9;
    MPI_COMBINER_INDEXED_BLOCK: c_int = 10;
    MPI_COMBINER_STRUCT_INTEGER: c_int = 11;
    MPI_COMBINER_STRUCT: c_int = 12;
    MPI_COMBINER_SUBARRAY: c_int = 13;
    MPI_COMBINER_DARRAY: c_int = 14;
    MPI_COMBINER_F90_REAL: c_int = 15;
    MPI_COMBINER_F90_COMPLEX: c_int = 16;
    MPI_COMBINER_F90_INTEGER: c_int = 17;
    MPI_COMBINER_RESIZED: c_int = 18;
    MPI_COMBINER_HINDEXED_BLOCK: c_int = 19;
    MPI_COMBINER_VALUE_INDEX: c_int = 20;

    // Array layouts for MPI_Type_create_subarray / MPI_Type_create_darray
    MPI_ORDER_C: c_int = 56;
    MPI_ORDER_FORTRAN: c_int = 57;
    MPI_DISTRIBUTE_BLOCK: c_int = 121;
    MPI_DISTRIBUTE_CYCLIC: c_int = 122;
    MPI_DISTRIBUTE_NONE: c_int = 123;
    MPI_DISTRIBUTE_DFLT_DARG: c_int = -49767;

    // Predefined communicators, group, operations, error handlers, info
    MPI_COMM_WORLD: MPI_Comm = 0x4400_0000;
    MPI_COMM_SELF: MPI_Comm = 0x4400_0001;
    MPI_GROUP_EMPTY: MPI_Group = 0x4800_0000;
    MPI_MAX: MPI_Op = 0x5800_0001;
    MPI_MIN: MPI_Op = 0x5800_0002;
    MPI_SUM: MPI_Op = 0x5800_0003;
    MPI_PROD: MPI_Op = 0x5800_0004;
    MPI_LAND: MPI_Op = 0x5800_0005;
    MPI_BAND: MPI_Op = 0x5800_0006;
    MPI_LOR: MPI_Op = 0x5800_0007;
    MPI_BOR: MPI_Op = 0x5800_0008;
    MPI_LXOR: MPI_Op = 0x5800_0009;
    MPI_BXOR: MPI_Op = 0x5800_000a;
    MPI_MINLOC: MPI_Op = 0x5800_000b;
    MPI_MAXLOC: MPI_Op = 0x5800_000c;
    MPI_REPLACE: MPI_Op = 0x5800_000d;
    MPI_NO_OP: MPI_Op = 0x5800_000e;
    MPI_ERRORS_ARE_FATAL: MPI_Errhandler = 0x5400_0000;
    MPI_ERRORS_RETURN: MPI_Errhandler = 0x5400_0001;
    MPI_ERRORS_ABORT: MPI_Errhandler = 0x5400_0003;
    MPI_INFO_ENV: MPI_Info = 0x5c00_0001;
    MPI_MAX_INFO_KEY: c_int = 255;
    MPI_MAX_INFO_VAL: c_int = 1024;

    // Results of MPI_Comm_compare / MPI_Group_compare
    MPI_IDENT: c_int = 0;
    MPI_CONGRUENT: c_int = 1;
    MPI_SIMILAR: c_int = 2;
    MPI_UNEQUAL: c_int = 3;

    // Split types for MPI_Comm_split_type
    MPI_COMM_TYPE_SHARED: c_int = 1;
    MPI_COMM_TYPE_HW_GUIDED: c_int = 2;
    MPI_COMM_TYPE_HW_UNGUIDED: c_int = 3;
    MPI_COMM_TYPE_RESOURCE_GUIDED: c_int = 4;

    // Topologies reported by MPI_Topo_test
    MPI_GRAPH: c_int = 1;
    MPI_CART: c_int = 2;
    MPI_DIST_GRAPH: c_int = 3;

    // Predefined attribute keys of MPI_COMM_WORLD
    MPI_TAG_UB: c_int = 0x6440_0001;
    MPI_HOST: c_int = 0x6440_0003;
    MPI_IO: c_int = 0x6440_0005;
    MPI_WTIME_IS_GLOBAL: c_int = 0x6440_0007;
    MPI_UNIVERSE_SIZE: c_int = 0x6440_0009;
    MPI_LASTUSEDCODE: c_int = 0x6440_000b;
    MPI_APPNUM: c_int = 0x6440_000d;

    // IMPI 2.5: client and host attributes of every communicator (IMPI jobs)
    IMPI_CLIENT_SIZE: c_int = 0x6440_0101;
    IMPI_CLIENT_COLOR: c_int = 0x6440_0103;
    IMPI_HOST_SIZE: c_int = 0x6440_0105;
    IMPI_HOST_COLOR: c_int = 0x6440_0107;

    // Predefined attribute keys of every window
    MPI_WIN_BASE: c_int = 0x6600_0001;
    MPI_WIN_SIZE: c_int = 0x6600_0003;
    MPI_WIN_DISP_UNIT: c_int = 0x6600_0005;
    MPI_WIN_CREATE_FLAVOR: c_int = 0x6600_0007;
    MPI_WIN_MODEL: c_int = 0x6600_0009;
    /// The "no key" value of an attribute key variable.
    MPI_KEYVAL_INVALID: c_int = 0x2400_0000;

    // Special ranks, tags and counts
    MPI_PROC_NULL: c_int = -1;
    MPI_ANY_SOURCE: c_int = -2;
    MPI_ROOT: c_int = -3;
    MPI_ANY_TAG: c_int = -1;
    MPI_UNDEFINED: c_int = -32766;

    // Upper bound of the bookkeeping MPI_Bsend adds to each message
    MPI_BSEND_OVERHEAD: c_int = 96;

    // String buffer lengths (including the terminating NUL)
    MPI_MAX_PROCESSOR_NAME: c_int = 128;
    MPI_MAX_ERROR_STRING: c_int = 512;
    MPI_MAX_OBJECT_NAME: c_int = 128;
    MPI_MAX_PORT_NAME: c_int = 256;
    MPI_MAX_LIBRARY_VERSION_STRING: c_int = 8192;
    MPI_MAX_DATAREP_STRING: c_int = 128;
    MPI_MAX_STRINGTAG_LEN: c_int = 256;
    MPI_MAX_PSET_NAME_LEN: c_int = 256;

    // Thread support levels
    MPI_THREAD_SINGLE: c_int = 0;
    MPI_THREAD_FUNNELED: c_int = 1;
    MPI_THREAD_SERIALIZED: c_int = 2;
    MPI_THREAD_MULTIPLE: c_int = 3;

    // One-sided communication: lock types, assertions, window flavors, models
    MPI_LOCK_EXCLUSIVE: c_int = 234;
    MPI_LOCK_SHARED: c_int = 235;
    MPI_MODE_NOCHECK: c_int = 1024;
    MPI_MODE_NOSTORE: c_int = 2048;
    MPI_MODE_NOPUT: c_int = 4096;
    MPI_MODE_NOPRECEDE: c_int = 8192;
    MPI_MODE_NOSUCCEED: c_int = 16384;
    MPI_WIN_FLAVOR_CREATE: c_int = 1;
    MPI_WIN_FLAVOR_ALLOCATE: c_int = 2;
    MPI_WIN_FLAVOR_DYNAMIC: c_int = 3;
    MPI_WIN_FLAVOR_SHARED: c_int = 4;
    MPI_WIN_SEPARATE: c_int = 1;
    MPI_WIN_UNIFIED: c_int = 2;

    // File access modes, seek origins and the current-view displacement
    MPI_MODE_CREATE: c_int = 1;
    MPI_MODE_RDONLY: c_int = 2;
    MPI_MODE_WRONLY: c_int = 4;
    MPI_MODE_RDWR: c_int = 8;
    MPI_MODE_DELETE_ON_CLOSE: c_int = 16;
    MPI_MODE_UNIQUE_OPEN: c_int = 32;
    MPI_MODE_EXCL: c_int = 64;
    MPI_MODE_APPEND: c_int = 128;
    MPI_MODE_SEQUENTIAL: c_int = 256;
    MPI_SEEK_SET: c_int = 600;
    MPI_SEEK_CUR: c_int = 602;
    MPI_SEEK_END: c_int = 604;
    MPI_DISPLACEMENT_CURRENT: c_int = -54278278;

    // Error classes
    MPI_SUCCESS: c_int = 0;
    MPI_ERR_BUFFER: c_int = 1;
    MPI_ERR_COUNT: c_int = 2;
    MPI_ERR_TYPE: c_int = 3;
    MPI_ERR_TAG: c_int = 4;
    MPI_ERR_COMM: c_int = 5;
    MPI_ERR_RANK: c_int = 6;
    MPI_ERR_ROOT: c_int = 7;
    MPI_ERR_GROUP: c_int = 8;
    MPI_ERR_OP: c_int = 9;
    MPI_ERR_TOPOLOGY: c_int = 10;
    MPI_ERR_DIMS: c_int = 11;
    MPI_ERR_ARG: c_int = 12;
    MPI_ERR_UNKNOWN: c_int = 13;
    MPI_ERR_TRUNCATE: c_int = 14;
    MPI_ERR_OTHER: c_int = 15;
    MPI_ERR_INTERN: c_int = 16;
    MPI_ERR_IN_STATUS: c_int = 17;
    MPI_ERR_PENDING: c_int = 18;
    MPI_ERR_REQUEST: c_int = 19;
    MPI_ERR_ACCESS: c_int = 20;
    MPI_ERR_AMODE: c_int = 21;
    MPI_ERR_BAD_FILE: c_int = 22;
    MPI_ERR_CONVERSION: c_int = 23;
    MPI_ERR_DUP_DATAREP: c_int = 24;
    MPI_ERR_FILE_EXISTS: c_int = 25;
    MPI_ERR_FILE_IN_USE: c_int = 26;
    MPI_ERR_FILE: c_int = 27;
    MPI_ERR_INFO: c_int = 28;
    MPI_ERR_INFO_KEY: c_int = 29;
    MPI_ERR_INFO_VALUE: c_int = 30;
    MPI_ERR_INFO_NOKEY: c_int = 31;
    MPI_ERR_IO: c_int = 32;
    MPI_ERR_NAME: c_int = 33;
    MPI_ERR_NO_MEM: c_int = 34;
    MPI_ERR_NOT_SAME: c_int = 35;
    MPI_ERR_NO_SPACE: c_int = 36;
    MPI_ERR_NO_SUCH_FILE: c_int = 37;
    MPI_ERR_PORT: c_int = 38;
    MPI_ERR_QUOTA: c_int = 39;
    MPI_ERR_READ_ONLY: c_int = 40;
    MPI_ERR_SERVICE: c_int = 41;
    MPI_ERR_SPAWN: c_int = 42;
    MPI_ERR_UNSUPPORTED_DATAREP: c_int = 43;
    MPI_ERR_UNSUPPORTED_OPERATION: c_int = 44;
    MPI_ERR_WIN: c_int = 45;
    MPI_ERR_BASE: c_int = 46;
    MPI_ERR_LOCKTYPE: c_int = 47;
    MPI_ERR_KEYVAL: c_int = 48;
    MPI_ERR_RMA_CONFLICT: c_int = 49;
    MPI_ERR_RMA_SYNC: c_int = 50;
    MPI_ERR_SIZE: c_int = 51;
    MPI_ERR_DISP: c_int = 52;
    MPI_ERR_ASSERT: c_int = 53;

    // 54 is unused
    MPI_ERR_RMA_RANGE: c_int = 55;
    MPI_ERR_RMA_ATTACH: c_int = 56;
    MPI_ERR_RMA_SHARED: c_int = 57;
    MPI_ERR_RMA_FLAVOR: c_int = 58;

    // 59-74 and 78 belong to the tool information interface
    MPI_T_ERR_MEMORY: c_int = 59;
    MPI_T_ERR_NOT_INITIALIZED: c_int = 60;
    MPI_T_ERR_CANNOT_INIT: c_int = 61;
    MPI_T_ERR_INVALID_INDEX: c_int = 62;
    MPI_T_ERR_INVALID_ITEM: c_int = 63;
    MPI_T_ERR_INVALID_HANDLE: c_int = 64;
    MPI_T_ERR_OUT_OF_HANDLES: c_int = 65;
    MPI_T_ERR_OUT_OF_SESSIONS: c_int = 66;
    MPI_T_ERR_INVALID_SESSION: c_int = 67;
    MPI_T_ERR_CVAR_SET_NOT_NOW: c_int = 68;
    MPI_T_ERR_CVAR_SET_NEVER: c_int = 69;
    MPI_T_ERR_PVAR_NO_STARTSTOP: c_int = 70;
    MPI_T_ERR_PVAR_NO_WRITE: c_int = 71;
    MPI_T_ERR_PVAR_NO_ATOMIC: c_int = 72;
    MPI_T_ERR_INVALID_NAME: c_int = 73;
    MPI_T_ERR_INVALID: c_int = 74;
    MPI_ERR_SESSION: c_int = 75;
    MPI_ERR_PROC_ABORTED: c_int = 76;
    MPI_ERR_VALUE_TOO_LARGE: c_int = 77;
    MPI_T_ERR_NOT_SUPPORTED: c_int = 78;
    // MPI-4.1 classes MPICH 4.0.2 lacks, numbered after its last one
    MPI_ERR_ERRHANDLER: c_int = 79;
    MPI_T_ERR_NOT_ACCESSIBLE: c_int = 80;

    // Upper bound of error codes and classes, including user-added ones
    MPI_ERR_LASTCODE: c_int = 0x3fff_ffff;
}

// ----------------------------------------------------------------------------
// Handle layout
// ----------------------------------------------------------------------------

const KIND_SHIFT: u32 = 30;
const CLASS_SHIFT: u32 = 26;
const INDEX_MASK: u32 = (1 << CLASS_SHIFT) - 1;
const KIND_BUILTIN: u32 = 0b01;
const KIND_DIRECT: u32 = 0b10;

/// The largest table index a handle can carry (2^26 - 1). Object tables must refuse
/// to grow past it (the encoders panic on a larger index: that is a bug, not input).
pub const MAX_INDEX: u32 = INDEX_MASK;

/// The object class of a handle (bits 26-29), with MPICH's numbers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u32)]
pub enum HandleClass {
    Comm = 0x1,
    Group = 0x2,
    Datatype = 0x3,
    // MPICH's numbers of classes with no entry points yet, kept so the numbering
    // stays in one place.
    #[allow(dead_code)]
    File = 0x4,
    Errhandler = 0x5,
    Op = 0x6,
    Info = 0x7,
    Win = 0x8,
    Keyval = 0x9,
    /// Created messages (`MPI_Mprobe`). MPICH has no class of its own for them;
    /// oxmpi uses MPICH's otherwise internal "attribute" number so that a message
    /// can never be mistaken for a request.
    Message = 0xa,
    Request = 0xb,
    #[allow(dead_code)]
    Session = 0xe,
}

impl HandleClass {
    /// What an object of the class is called in error messages.
    pub const fn noun(self) -> &'static str {
        match self {
            HandleClass::Comm => "communicator",
            HandleClass::Group => "group",
            HandleClass::Datatype => "datatype",
            HandleClass::File => "file",
            HandleClass::Errhandler => "error handler",
            HandleClass::Op => "operation",
            HandleClass::Info => "info object",
            HandleClass::Win => "window",
            HandleClass::Keyval => "attribute key",
            HandleClass::Message => "message",
            HandleClass::Request => "request",
            HandleClass::Session => "session",
        }
    }
}

const fn compose(kind: u32, class: HandleClass, low: u32) -> c_int {
    ((kind << KIND_SHIFT) | ((class as u32) << CLASS_SHIFT) | low) as c_int
}

/// The created-object handle of `index` in `class`'s table.
fn direct(class: HandleClass, index: u32) -> c_int {
    assert!(
        index <= MAX_INDEX,
        "{} table index {index} does not fit in a handle",
        class.noun()
    );
    compose(KIND_DIRECT, class, index)
}

/// The index carried by a created-object handle of `class`.
#[inline]
fn direct_index(handle: c_int, class: HandleClass) -> Option<u32> {
    let bits = handle as u32;
    (bits >> CLASS_SHIFT == ((KIND_DIRECT << 4) | class as u32)).then_some(bits & INDEX_MASK)
}

/// The low bits of a predefined handle of `class`.
fn builtin_low(handle: c_int, class: HandleClass) -> Option<u32> {
    let bits = handle as u32;
    (bits >> CLASS_SHIFT == ((KIND_BUILTIN << 4) | class as u32)).then_some(bits & INDEX_MASK)
}

/// Encodes a table index for a class whose table starts with predefined objects;
/// `predefined[i]` is the low bits of MPICH's handle for table index `i`.
fn encode(class: HandleClass, predefined: &[u32], index: u32) -> c_int {
    match predefined.get(index as usize) {
        Some(&low) => compose(KIND_BUILTIN, class, low),
        None => direct(class, index),
    }
}

/// The inverse of [`encode`]; `None` for anything that is not a canonical handle.
fn decode(class: HandleClass, predefined: &[u32], handle: c_int) -> Option<u32> {
    if let Some(low) = builtin_low(handle, class) {
        return predefined.iter().position(|&l| l == low).map(|i| i as u32);
    }
    direct_index(handle, class).filter(|&index| index as usize >= predefined.len())
}

// ----------------------------------------------------------------------------
// Communicators, groups, error handlers, operations, info objects
// ----------------------------------------------------------------------------

/// Table index of `MPI_COMM_WORLD`.
#[allow(dead_code)] // table layout set up by the core; checked by the tests below
pub const COMM_WORLD_INDEX: u32 = 0;
/// Table index of `MPI_COMM_SELF`.
#[allow(dead_code)] // table layout set up by the core; checked by the tests below
pub const COMM_SELF_INDEX: u32 = 1;
/// First table index of a created communicator.
#[cfg(test)]
pub const FIRST_CREATED_COMM: u32 = 2;
const COMM_PREDEFINED: [u32; 2] = [0, 1];

/// The handle of communicator table entry `index`.
pub fn comm_handle(index: u32) -> MPI_Comm {
    encode(HandleClass::Comm, &COMM_PREDEFINED, index)
}

/// The communicator table index a handle names (`MPI_COMM_NULL` gives `None`).
#[inline]
pub fn comm_index(handle: MPI_Comm) -> Option<u32> {
    decode(HandleClass::Comm, &COMM_PREDEFINED, handle)
}

/// Table index of `MPI_GROUP_EMPTY`.
#[allow(dead_code)] // table layout set up by the core; checked by the tests below
pub const GROUP_EMPTY_INDEX: u32 = 0;
/// First table index of a created group.
#[allow(dead_code)] // table layout set up by the core; checked by the tests below
pub const FIRST_CREATED_GROUP: u32 = 1;
const GROUP_PREDEFINED: [u32; 1] = [0];

/// The handle of group table entry `index`.
pub fn group_handle(index: u32) -> MPI_Group {
    encode(HandleClass::Group, &GROUP_PREDEFINED, index)
}

/// The group table index a handle names (`MPI_GROUP_NULL` gives `None`).
pub fn group_index(handle: MPI_Group) -> Option<u32> {
    decode(HandleClass::Group, &GROUP_PREDEFINED, handle)
}

/// Table index of `MPI_ERRORS_ARE_FATAL`.
pub const ERRORS_ARE_FATAL_INDEX: u32 = 0;
/// Table index of `MPI_ERRORS_RETURN`.
pub const ERRORS_RETURN_INDEX: u32 = 1;
/// Table index of `MPI_ERRORS_ABORT`.
pub const ERRORS_ABORT_INDEX: u32 = 2;
/// First table index of a created error handler.
pub const FIRST_CREATED_ERRHANDLER: u32 = 3;
// MPICH's 0x54000002 is its C++ "throw exceptions" handler, which oxmpi lacks.
const ERRHANDLER_PREDEFINED: [u32; 3] = [0, 1, 3];

/// The handle of error handler table entry `index`.
pub fn errhandler_handle(index: u32) -> MPI_Errhandler {
    encode(HandleClass::Errhandler, &ERRHANDLER_PREDEFINED, index)
}

/// The error handler table index a handle names (`MPI_ERRHANDLER_NULL` gives `None`).
pub fn errhandler_index(handle: MPI_Errhandler) -> Option<u32> {
    decode(HandleClass::Errhandler, &ERRHANDLER_PREDEFINED, handle)
}

/// Number of predefined operations; table index `i` below it is MPICH's
/// `0x58000001 + i`, in the order `MPI_MAX, MPI_MIN, MPI_SUM, MPI_PROD, MPI_LAND,
/// MPI_BAND, MPI_LOR, MPI_BOR, MPI_LXOR, MPI_BXOR, MPI_MINLOC, MPI_MAXLOC,
/// MPI_REPLACE, MPI_NO_OP` (the order of `oxmpi_coll::ops::PredefinedOp::ALL`).
#[allow(dead_code)] // table layout set up by the core; checked by the tests below
pub const FIRST_CREATED_OP: u32 = 14;
const OP_PREDEFINED: [u32; 14] = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14];

/// The handle of operation table entry `index`.
pub fn op_handle(index: u32) -> MPI_Op {
    encode(HandleClass::Op, &OP_PREDEFINED, index)
}

/// The operation table index a handle names (`MPI_OP_NULL` gives `None`).
pub fn op_index(handle: MPI_Op) -> Option<u32> {
    decode(HandleClass::Op, &OP_PREDEFINED, handle)
}

/// Table index of `MPI_INFO_ENV`.
#[allow(dead_code)] // table layout set up by the core; checked by the tests below
pub const INFO_ENV_INDEX: u32 = 0;
/// First table index of a created info object.
#[allow(dead_code)] // table layout set up by the core; checked by the tests below
pub const FIRST_CREATED_INFO: u32 = 1;
const INFO_PREDEFINED: [u32; 1] = [1];

/// The handle of info table entry `index`.
pub fn info_handle(index: u32) -> MPI_Info {
    encode(HandleClass::Info, &INFO_PREDEFINED, index)
}

/// The info table index a handle names (`MPI_INFO_NULL` gives `None`).
pub fn info_index(handle: MPI_Info) -> Option<u32> {
    decode(HandleClass::Info, &INFO_PREDEFINED, handle)
}

// ----------------------------------------------------------------------------
// Requests: no predefined objects
// ----------------------------------------------------------------------------

// The shared request of sends that left at once must have a handle.
const _: () = assert!(oxmpi_core::device::DONE_SEND <= MAX_INDEX);

/// The handle of request table entry `index` (`0xac000000 | index`).
#[inline]
pub fn request_handle(index: u32) -> MPI_Request {
    direct(HandleClass::Request, index)
}

/// The request table index a handle names (`MPI_REQUEST_NULL` gives `None`).
#[inline]
pub fn request_index(handle: MPI_Request) -> Option<u32> {
    direct_index(handle, HandleClass::Request)
}

// ----------------------------------------------------------------------------
// Messages (MPI_Mprobe): no predefined objects besides MPI_MESSAGE_NO_PROC
// ----------------------------------------------------------------------------

// Every matched message must have a handle.
const _: () = assert!(oxmpi_core::device::MAX_MESSAGES as u32 <= MAX_INDEX);

/// The handle of matched message `index` (`0xa8000000 | index`).
pub fn message_handle(index: u32) -> MPI_Message {
    direct(HandleClass::Message, index)
}

/// The matched message a handle names (None for anything else, the null and no-proc
/// messages included).
pub fn message_index(handle: MPI_Message) -> Option<u32> {
    direct_index(handle, HandleClass::Message)
}

// ----------------------------------------------------------------------------
// Windows: no predefined objects
// ----------------------------------------------------------------------------

/// The handle of window table entry `index` (`0xa0000000 | index`, as MPICH's).
pub fn win_handle(index: u32) -> MPI_Win {
    direct(HandleClass::Win, index)
}

/// The window table index a handle names (`MPI_WIN_NULL` gives `None`).
pub fn win_index(handle: MPI_Win) -> Option<u32> {
    direct_index(handle, HandleClass::Win)
}

// ----------------------------------------------------------------------------
// Sessions: no predefined objects
// ----------------------------------------------------------------------------

/// The handle of session table entry `index` (`0xb8000000 | index`, as MPICH's).
pub fn session_handle(index: u32) -> MPI_Session {
    direct(HandleClass::Session, index)
}

/// The session table index a handle names (`MPI_SESSION_NULL` gives `None`).
pub fn session_index(handle: MPI_Session) -> Option<u32> {
    direct_index(handle, HandleClass::Session)
}

// ----------------------------------------------------------------------------
// Attribute keys
// ----------------------------------------------------------------------------

/// The kind of object an attribute key caches on (bits 22-25 of a key).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u32)]
pub enum KeyvalObject {
    Comm = HandleClass::Comm as u32,
    Datatype = HandleClass::Datatype as u32,
    Win = HandleClass::Win as u32,
}

const KEYVAL_OBJECT_SHIFT: u32 = 22;
const KEYVAL_INDEX_MASK: u32 = (1 << KEYVAL_OBJECT_SHIFT) - 1;

/// The largest index a created attribute key can carry (2^22 - 1).
pub const MAX_KEYVAL_INDEX: u32 = KEYVAL_INDEX_MASK;

/// The attribute keys every communicator world or window has from the start.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PredefinedKeyval {
    TagUb,
    Host,
    Io,
    WtimeIsGlobal,
    UniverseSize,
    LastUsedCode,
    AppNum,
    ImpiClientSize,
    ImpiClientColor,
    ImpiHostSize,
    ImpiHostColor,
    WinBase,
    WinSize,
    WinDispUnit,
    WinCreateFlavor,
    WinModel,
}

impl PredefinedKeyval {
    /// Every predefined key.
    pub const ALL: [PredefinedKeyval; 16] = [
        PredefinedKeyval::TagUb,
        PredefinedKeyval::Host,
        PredefinedKeyval::Io,
        PredefinedKeyval::WtimeIsGlobal,
        PredefinedKeyval::UniverseSize,
        PredefinedKeyval::LastUsedCode,
        PredefinedKeyval::AppNum,
        PredefinedKeyval::ImpiClientSize,
        PredefinedKeyval::ImpiClientColor,
        PredefinedKeyval::ImpiHostSize,
        PredefinedKeyval::ImpiHostColor,
        PredefinedKeyval::WinBase,
        PredefinedKeyval::WinSize,
        PredefinedKeyval::WinDispUnit,
        PredefinedKeyval::WinCreateFlavor,
        PredefinedKeyval::WinModel,
    ];

    /// The key's value in `mpi.h`.
    pub const fn handle(self) -> c_int {
        match self {
            PredefinedKeyval::TagUb => MPI_TAG_UB,
            PredefinedKeyval::Host => MPI_HOST,
            PredefinedKeyval::Io => MPI_IO,
            PredefinedKeyval::WtimeIsGlobal => MPI_WTIME_IS_GLOBAL,
            PredefinedKeyval::UniverseSize => MPI_UNIVERSE_SIZE,
            PredefinedKeyval::LastUsedCode => MPI_LASTUSEDCODE,
            PredefinedKeyval::AppNum => MPI_APPNUM,
            PredefinedKeyval::ImpiClientSize => IMPI_CLIENT_SIZE,
            PredefinedKeyval::ImpiClientColor => IMPI_CLIENT_COLOR,
            PredefinedKeyval::ImpiHostSize => IMPI_HOST_SIZE,
            PredefinedKeyval::ImpiHostColor => IMPI_HOST_COLOR,
            PredefinedKeyval::WinBase => MPI_WIN_BASE,
            PredefinedKeyval::WinSize => MPI_WIN_SIZE,
            PredefinedKeyval::WinDispUnit => MPI_WIN_DISP_UNIT,
            PredefinedKeyval::WinCreateFlavor => MPI_WIN_CREATE_FLAVOR,
            PredefinedKeyval::WinModel => MPI_WIN_MODEL,
        }
    }

    /// The key's C name, e.g. `"MPI_TAG_UB"`.
    pub const fn name(self) -> &'static str {
        match self {
            PredefinedKeyval::TagUb => "MPI_TAG_UB",
            PredefinedKeyval::Host => "MPI_HOST",
            PredefinedKeyval::Io => "MPI_IO",
            PredefinedKeyval::WtimeIsGlobal => "MPI_WTIME_IS_GLOBAL",
            PredefinedKeyval::UniverseSize => "MPI_UNIVERSE_SIZE",
            PredefinedKeyval::LastUsedCode => "MPI_LASTUSEDCODE",
            PredefinedKeyval::AppNum => "MPI_APPNUM",
            PredefinedKeyval::ImpiClientSize => "IMPI_CLIENT_SIZE",
            PredefinedKeyval::ImpiClientColor => "IMPI_CLIENT_COLOR",
            PredefinedKeyval::ImpiHostSize => "IMPI_HOST_SIZE",
            PredefinedKeyval::ImpiHostColor => "IMPI_HOST_COLOR",
            PredefinedKeyval::WinBase => "MPI_WIN_BASE",
            PredefinedKeyval::WinSize => "MPI_WIN_SIZE",
            PredefinedKeyval::WinDispUnit => "MPI_WIN_DISP_UNIT",
            PredefinedKeyval::WinCreateFlavor => "MPI_WIN_CREATE_FLAVOR",
            PredefinedKeyval::WinModel => "MPI_WIN_MODEL",
        }
    }
}

/// What a valid attribute key names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum KeyvalRef {
    Predefined(PredefinedKeyval),
    /// Entry `index` of the key table, created for objects of kind `object`.
    Created {
        object: KeyvalObject,
        index: u32,
    },
}

/// The key value of key table entry `index`, created for objects of kind `object`
/// (`0xa4000000 | object << 22 | index`).
pub fn keyval_handle(object: KeyvalObject, index: u32) -> c_int {
    assert!(
        index <= MAX_KEYVAL_INDEX,
        "attribute key index {index} does not fit in a key"
    );
    direct(
        HandleClass::Keyval,
        ((object as u32) << KEYVAL_OBJECT_SHIFT) | index,
    )
}

/// What an attribute key value names (`MPI_KEYVAL_INVALID` gives `None`).
pub fn keyval_from_handle(handle: c_int) -> Option<KeyvalRef> {
    if builtin_low(handle, HandleClass::Keyval).is_some() {
        return PredefinedKeyval::ALL
            .iter()
            .find(|key| key.handle() == handle)
            .map(|&key| KeyvalRef::Predefined(key));
    }
    let low = direct_index(handle, HandleClass::Keyval)?;
    let object = match low >> KEYVAL_OBJECT_SHIFT {
        x if x == KeyvalObject::Comm as u32 => KeyvalObject::Comm,
        x if x == KeyvalObject::Datatype as u32 => KeyvalObject::Datatype,
        x if x == KeyvalObject::Win as u32 => KeyvalObject::Win,
        _ => return None,
    };
    Some(KeyvalRef::Created {
        object,
        index: low & KEYVAL_INDEX_MASK,
    })
}

// ----------------------------------------------------------------------------
// Datatypes
// ----------------------------------------------------------------------------

/// What a valid datatype handle names: a predefined type, or entry `n` of the
/// core's datatype table (where `n >= Predefined::COUNT`; the predefined types
/// occupy the indices below, at their discriminants).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DatatypeRef {
    Predefined(Predefined),
    Created(u32),
}

impl DatatypeRef {
    /// The entry at a core table index.
    pub fn from_index(index: u32) -> DatatypeRef {
        match Predefined::from_index(index as usize) {
            Some(p) => DatatypeRef::Predefined(p),
            None => DatatypeRef::Created(index),
        }
    }
}

/// The handle of a predefined datatype (the canonical one where C has aliases:
/// `MPI_LONG_LONG` is `MPI_LONG_LONG_INT`, `MPI_C_COMPLEX` is `MPI_C_FLOAT_COMPLEX`).
#[inline]
pub const fn predefined_handle(p: Predefined) -> MPI_Datatype {
    match p {
        Predefined::Char => MPI_CHAR,
        Predefined::SignedChar => MPI_SIGNED_CHAR,
        Predefined::UnsignedChar => MPI_UNSIGNED_CHAR,
        Predefined::Byte => MPI_BYTE,
        Predefined::Wchar => MPI_WCHAR,
        Predefined::Short => MPI_SHORT,
        Predefined::UnsignedShort => MPI_UNSIGNED_SHORT,
        Predefined::Int => MPI_INT,
        Predefined::Unsigned => MPI_UNSIGNED,
        Predefined::Long => MPI_LONG,
        Predefined::UnsignedLong => MPI_UNSIGNED_LONG,
        Predefined::Float => MPI_FLOAT,
        Predefined::Double => MPI_DOUBLE,
        Predefined::LongDouble => MPI_LONG_DOUBLE,
        Predefined::LongLongInt => MPI_LONG_LONG_INT,
        Predefined::UnsignedLongLong => MPI_UNSIGNED_LONG_LONG,
        Predefined::Packed => MPI_PACKED,
        Predefined::Lb => MPI_LB,
        Predefined::Ub => MPI_UB,
        Predefined::FloatInt => MPI_FLOAT_INT,
        Predefined::DoubleInt => MPI_DOUBLE_INT,
        Predefined::LongInt => MPI_LONG_INT,
        Predefined::ShortInt => MPI_SHORT_INT,
        Predefined::TwoInt => MPI_2INT,
        Predefined::LongDoubleInt => MPI_LONG_DOUBLE_INT,
        Predefined::Complex => MPI_COMPLEX,
        Predefined::DoubleComplex => MPI_DOUBLE_COMPLEX,
        Predefined::Logical => MPI_LOGICAL,
        Predefined::Real => MPI_REAL,
        Predefined::DoublePrecision => MPI_DOUBLE_PRECISION,
        Predefined::Integer => MPI_INTEGER,
        Predefined::TwoInteger => MPI_2INTEGER,
        Predefined::TwoReal => MPI_2REAL,
        Predefined::TwoDoublePrecision => MPI_2DOUBLE_PRECISION,
        Predefined::Character => MPI_CHARACTER,
        Predefined::Real4 => MPI_REAL4,
        Predefined::Real8 => MPI_REAL8,
        Predefined::Real16 => MPI_REAL16,
        Predefined::Complex8 => MPI_COMPLEX8,
        Predefined::Complex16 => MPI_COMPLEX16,
        Predefined::Complex32 => MPI_COMPLEX32,
        Predefined::Integer1 => MPI_INTEGER1,
        Predefined::Integer2 => MPI_INTEGER2,
        Predefined::Integer4 => MPI_INTEGER4,
        Predefined::Integer8 => MPI_INTEGER8,
        Predefined::Int8 => MPI_INT8_T,
        Predefined::Int16 => MPI_INT16_T,
        Predefined::Int32 => MPI_INT32_T,
        Predefined::Int64 => MPI_INT64_T,
        Predefined::Uint8 => MPI_UINT8_T,
        Predefined::Uint16 => MPI_UINT16_T,
        Predefined::Uint32 => MPI_UINT32_T,
        Predefined::Uint64 => MPI_UINT64_T,
        Predefined::CBool => MPI_C_BOOL,
        Predefined::CFloatComplex => MPI_C_FLOAT_COMPLEX,
        Predefined::CDoubleComplex => MPI_C_DOUBLE_COMPLEX,
        Predefined::CLongDoubleComplex => MPI_C_LONG_DOUBLE_COMPLEX,
        Predefined::Aint => MPI_AINT,
        Predefined::Offset => MPI_OFFSET,
        Predefined::Count => MPI_COUNT,
        Predefined::CxxBool => MPI_CXX_BOOL,
        Predefined::CxxFloatComplex => MPI_CXX_FLOAT_COMPLEX,
        Predefined::CxxDoubleComplex => MPI_CXX_DOUBLE_COMPLEX,
        Predefined::CxxLongDoubleComplex => MPI_CXX_LONG_DOUBLE_COMPLEX,
        Predefined::Logical1 => MPI_LOGICAL1,
        Predefined::Logical2 => MPI_LOGICAL2,
        Predefined::Logical4 => MPI_LOGICAL4,
        Predefined::Logical8 => MPI_LOGICAL8,
        Predefined::Logical16 => MPI_LOGICAL16,
        Predefined::Real2 => MPI_REAL2,
        Predefined::Complex4 => MPI_COMPLEX4,
    }
}

/// The padded pair types, whose handles are created-kind handles 0..=4.
const PAIR_TYPES: [Predefined; 5] = [
    Predefined::FloatInt,
    Predefined::DoubleInt,
    Predefined::LongInt,
    Predefined::ShortInt,
    Predefined::LongDoubleInt,
];

/// Predefined-kind datatype handles by their low byte (MPICH numbers them uniquely).
const BUILTIN_DATATYPES: [Option<Predefined>; 256] = {
    let mut table: [Option<Predefined>; 256] = [None; 256];
    let mut i = 0;
    while i < Predefined::ALL.len() {
        let p = Predefined::ALL[i];
        let bits = predefined_handle(p) as u32;
        if bits >> KIND_SHIFT == KIND_BUILTIN {
            let number = (bits & 0xff) as usize;
            assert!(
                table[number].is_none(),
                "two predefined datatypes share a number"
            );
            table[number] = Some(p);
        }
        i += 1;
    }
    table
};

/// The predefined datatype a handle names, if it names one.
#[inline]
pub fn predefined_from_handle(handle: MPI_Datatype) -> Option<Predefined> {
    let p = if builtin_low(handle, HandleClass::Datatype).is_some() {
        BUILTIN_DATATYPES[(handle as u32 & 0xff) as usize]?
    } else {
        *PAIR_TYPES.get(direct_index(handle, HandleClass::Datatype)? as usize)?
    };
    (predefined_handle(p) == handle).then_some(p)
}

/// Whether `handle` has the form of a predefined (builtin) datatype handle, whose low
/// byte then indexes MPICH's builtin types.
pub fn is_builtin_datatype(handle: MPI_Datatype) -> bool {
    builtin_low(handle, HandleClass::Datatype).is_some()
}

/// What a datatype handle names. `None` for `MPI_DATATYPE_NULL` (and so for the
/// optional types MPICH defines as null, like `MPI_INTEGER16`), for handles of
/// types oxmpi does not have (MPICH's `MPIX_C_FLOAT16`) and for non-handles.
pub fn datatype_from_handle(handle: MPI_Datatype) -> Option<DatatypeRef> {
    if let Some(p) = predefined_from_handle(handle) {
        return Some(DatatypeRef::Predefined(p));
    }
    let index = direct_index(handle, HandleClass::Datatype)?;
    (index as usize >= Predefined::COUNT).then_some(DatatypeRef::Created(index))
}

/// The handle of a datatype. A created type's index must be at least
/// `Predefined::COUNT` (the core's table numbering guarantees it).
pub fn datatype_handle(datatype: DatatypeRef) -> MPI_Datatype {
    match datatype {
        DatatypeRef::Predefined(p) => predefined_handle(p),
        DatatypeRef::Created(index) => {
            assert!(
                index as usize >= Predefined::COUNT,
                "created datatype index {index} overlaps the predefined types"
            );
            direct(HandleClass::Datatype, index)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::{HashMap, HashSet};

    /// The `#define NAME VALUE` lines of our header whose value is an integer.
    fn header_integers() -> HashMap<String, i64> {
        let text = include_str!("../include/mpi.h");
        let mut raw = HashMap::new();
        for line in text.lines() {
            let Some(rest) = line.strip_prefix("#define ") else {
                continue;
            };
            let mut parts = rest.splitn(2, char::is_whitespace);
            let name = parts.next().unwrap_or("");
            let value = parts.next().unwrap_or("").trim();
            if (name.starts_with("MPI_") || name.starts_with("IMPI_")) && !name.contains('(') {
                raw.insert(name.to_string(), value.to_string());
            }
        }
        fn eval(raw: &HashMap<String, String>, value: &str, depth: u32) -> Option<i64> {
            let mut v = value.trim();
            // Peel `((TYPE)NUMBER)`, `(NUMBER)` and `(TYPE)NUMBER`.
            loop {
                if let Some(inner) = v.strip_prefix('(').and_then(|s| s.strip_suffix(')')) {
                    if inner.matches('(').count() == inner.matches(')').count() {
                        v = inner.trim();
                        continue;
                    }
                }
                if let Some(rest) = v.strip_prefix("(MPI_") {
                    if let Some(end) = rest.find(')') {
                        // Integer handle casts only; `(MPI_File)` and `(T *)` are pointers.
                        if !rest[..end].contains('*') && &rest[..end] != "File" {
                            v = rest[end + 1..].trim();
                            continue;
                        }
                    }
                }
                break;
            }
            if let Some(hex) = v.strip_prefix("0x") {
                return i64::from_str_radix(hex, 16)
                    .ok()
                    .map(|x| x as u32 as i32 as i64);
            }
            if let Ok(n) = v.parse::<i64>() {
                return Some(n);
            }
            if depth < 4 {
                if let Some(target) = raw.get(v) {
                    return eval(raw, target, depth + 1);
                }
            }
            None
        }
        raw.iter()
            .filter_map(|(name, value)| eval(&raw, value, 0).map(|v| (name.clone(), v)))
            .collect()
    }

    #[test]
    fn constants_match_the_header_both_ways() {
        let header = header_integers();
        let ours: HashMap<&str, i64> = ABI_CONSTANTS.iter().copied().collect();
        for (name, value) in ABI_CONSTANTS {
            assert_eq!(header.get(*name), Some(value), "{name}");
        }
        for name in header.keys() {
            assert!(
                ours.contains_key(name.as_str()),
                "{name} is in mpi.h but not in handles.rs"
            );
        }
        assert!(header.len() > 250, "parsed only {} constants", header.len());
    }

    #[test]
    fn every_predefined_type_has_its_header_value_and_round_trips() {
        let header = header_integers();
        let mut seen = HashSet::new();
        for &p in Predefined::ALL {
            let handle = predefined_handle(p);
            assert_eq!(header.get(p.name()), Some(&(handle as i64)), "{}", p.name());
            assert!(seen.insert(handle), "{} shares a handle", p.name());
            assert_eq!(predefined_from_handle(handle), Some(p));
            assert_eq!(
                datatype_from_handle(handle),
                Some(DatatypeRef::Predefined(p))
            );
            assert_eq!(datatype_handle(DatatypeRef::Predefined(p)), handle);
            assert_eq!(
                DatatypeRef::from_index(p as u32),
                DatatypeRef::Predefined(p)
            );
        }
        assert_eq!(seen.len(), Predefined::COUNT);
    }

    #[test]
    fn datatype_aliases_and_null_types() {
        assert_eq!(
            predefined_from_handle(MPI_LONG_LONG),
            Some(Predefined::LongLongInt)
        );
        assert_eq!(
            predefined_from_handle(MPI_C_COMPLEX),
            Some(Predefined::CFloatComplex)
        );
        assert_eq!(datatype_from_handle(MPI_DATATYPE_NULL), None);
        assert_eq!(datatype_from_handle(MPI_INTEGER16), None);
        // MPICH's MPIX_C_FLOAT16, which oxmpi does not provide.
        assert_eq!(datatype_from_handle(0x4c00_0246), None);
        // A predefined number with the wrong size byte is not that type.
        assert_eq!(datatype_from_handle(0x4c00_0805), None);
        // Created-kind numbers between the pair types and the first created type.
        for index in 5..Predefined::COUNT as u32 {
            assert_eq!(datatype_from_handle(h(0x8c00_0000) | index as c_int), None);
        }
    }

    #[test]
    fn created_datatypes_round_trip_without_collisions() {
        let first = Predefined::COUNT as u32;
        for index in [first, first + 1, first + 1000, MAX_INDEX] {
            let handle = datatype_handle(DatatypeRef::Created(index));
            assert_eq!(handle as u32, 0x8c00_0000 | index);
            assert_eq!(
                datatype_from_handle(handle),
                Some(DatatypeRef::Created(index))
            );
            assert_eq!(DatatypeRef::from_index(index), DatatypeRef::Created(index));
            assert!(Predefined::ALL
                .iter()
                .all(|&p| predefined_handle(p) != handle));
        }
    }

    #[test]
    #[should_panic(expected = "overlaps the predefined types")]
    fn created_datatype_below_count_is_a_bug() {
        datatype_handle(DatatypeRef::Created(3));
    }

    #[test]
    fn predefined_objects_have_mpich_values() {
        assert_eq!(comm_handle(COMM_WORLD_INDEX), MPI_COMM_WORLD);
        assert_eq!(comm_handle(COMM_SELF_INDEX), MPI_COMM_SELF);
        assert_eq!(group_handle(GROUP_EMPTY_INDEX), MPI_GROUP_EMPTY);
        assert_eq!(
            errhandler_handle(ERRORS_ARE_FATAL_INDEX),
            MPI_ERRORS_ARE_FATAL
        );
        assert_eq!(errhandler_handle(ERRORS_RETURN_INDEX), MPI_ERRORS_RETURN);
        assert_eq!(errhandler_handle(ERRORS_ABORT_INDEX), MPI_ERRORS_ABORT);
        assert_eq!(info_handle(INFO_ENV_INDEX), MPI_INFO_ENV);
        let ops = [
            MPI_MAX,
            MPI_MIN,
            MPI_SUM,
            MPI_PROD,
            MPI_LAND,
            MPI_BAND,
            MPI_LOR,
            MPI_BOR,
            MPI_LXOR,
            MPI_BXOR,
            MPI_MINLOC,
            MPI_MAXLOC,
            MPI_REPLACE,
            MPI_NO_OP,
        ];
        assert_eq!(ops.len() as u32, FIRST_CREATED_OP);
        for (index, &op) in ops.iter().enumerate() {
            assert_eq!(op_handle(index as u32), op);
            assert_eq!(op_index(op), Some(index as u32));
        }
        assert_eq!(comm_index(MPI_COMM_WORLD), Some(COMM_WORLD_INDEX));
        assert_eq!(comm_index(MPI_COMM_SELF), Some(COMM_SELF_INDEX));
        assert_eq!(group_index(MPI_GROUP_EMPTY), Some(GROUP_EMPTY_INDEX));
        assert_eq!(errhandler_index(MPI_ERRORS_ABORT), Some(ERRORS_ABORT_INDEX));
        assert_eq!(info_index(MPI_INFO_ENV), Some(INFO_ENV_INDEX));
    }

    type Codec = (
        &'static str,
        fn(u32) -> c_int,
        fn(c_int) -> Option<u32>,
        u32,
        c_int,
    );

    /// (name, encoder, decoder, first created index, null handle) per table class.
    fn codecs() -> Vec<Codec> {
        vec![
            (
                "comm",
                comm_handle,
                comm_index,
                FIRST_CREATED_COMM,
                MPI_COMM_NULL,
            ),
            (
                "group",
                group_handle,
                group_index,
                FIRST_CREATED_GROUP,
                MPI_GROUP_NULL,
            ),
            (
                "errhandler",
                errhandler_handle,
                errhandler_index,
                FIRST_CREATED_ERRHANDLER,
                MPI_ERRHANDLER_NULL,
            ),
            ("op", op_handle, op_index, FIRST_CREATED_OP, MPI_OP_NULL),
            (
                "info",
                info_handle,
                info_index,
                FIRST_CREATED_INFO,
                MPI_INFO_NULL,
            ),
            (
                "request",
                request_handle,
                request_index,
                0,
                MPI_REQUEST_NULL,
            ),
        ]
    }

    #[test]
    fn table_handles_round_trip() {
        for (name, encode, decode, first, null) in codecs() {
            assert_eq!(decode(null), None, "{name} null");
            let indices = (0..first + 20).chain([MAX_INDEX - 1, MAX_INDEX]);
            for index in indices {
                let handle = encode(index);
                assert_eq!(decode(handle), Some(index), "{name} {index}");
                if index >= first {
                    assert_eq!(
                        handle as u32 >> 30,
                        0b10,
                        "{name} {index} is a created handle"
                    );
                    assert_eq!(handle as u32 & INDEX_MASK, index);
                }
            }
        }
        assert_eq!(request_handle(7) as u32, 0xac00_0007);
        assert_eq!(comm_handle(2) as u32, 0x8400_0002);
        assert_eq!(op_handle(14) as u32, 0x9800_000e);
    }

    #[test]
    fn table_decoders_reject_non_canonical_and_foreign_handles() {
        // Created-kind spellings of predefined indices.
        assert_eq!(comm_index(h(0x8400_0000)), None);
        assert_eq!(comm_index(h(0x8400_0001)), None);
        assert_eq!(group_index(h(0x8800_0000)), None);
        assert_eq!(op_index(h(0x9800_0003)), None);
        assert_eq!(errhandler_index(h(0x9400_0001)), None);
        assert_eq!(info_index(h(0x9c00_0000)), None);
        // Predefined-kind values MPICH reserves for objects oxmpi lacks.
        assert_eq!(comm_index(0x4400_0002), None);
        assert_eq!(op_index(0x5800_0000), None);
        assert_eq!(op_index(0x5800_000f), None);
        assert_eq!(errhandler_index(0x5400_0002), None);
        assert_eq!(info_index(0x5c00_0000), None);
        // Another class's handles.
        for (name, _, decode, _, _) in codecs() {
            for foreign in [
                MPI_INT,
                MPI_FLOAT_INT,
                MPI_COMM_WORLD,
                MPI_SUM,
                MPI_INFO_ENV,
                MPI_TAG_UB,
            ] {
                let own = match name {
                    "comm" => foreign == MPI_COMM_WORLD,
                    "op" => foreign == MPI_SUM,
                    "info" => foreign == MPI_INFO_ENV,
                    _ => false,
                };
                assert_eq!(
                    decode(foreign).is_some(),
                    own,
                    "{name} accepted {foreign:#x}"
                );
            }
        }
        assert_eq!(datatype_from_handle(MPI_COMM_WORLD), None);
        assert_eq!(datatype_from_handle(comm_handle(40)), None);
        assert_eq!(keyval_from_handle(MPI_INT), None);
        assert_eq!(request_index(MPI_MESSAGE_NO_PROC), None);
    }

    /// A small deterministic generator, so the garbage test needs no dependency.
    fn garbage() -> impl Iterator<Item = c_int> {
        let fixed = [
            0,
            -1,
            1,
            i32::MIN,
            i32::MAX,
            0x4000_0000,
            -0x4000_0000,
            0x7c00_0000,
        ];
        let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
        let random = (0..200_000).map(move |_| {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (state >> 32) as u32 as c_int
        });
        fixed.into_iter().chain(random)
    }

    #[test]
    fn garbage_decodes_to_nothing_or_to_its_own_canonical_handle() {
        let mut accepted = 0;
        for value in garbage() {
            for (name, encode, decode, _, _) in codecs() {
                if let Some(index) = decode(value) {
                    assert_eq!(
                        encode(index),
                        value,
                        "{name} accepted non-canonical {value:#x}"
                    );
                    accepted += 1;
                }
            }
            if let Some(d) = datatype_from_handle(value) {
                assert_eq!(datatype_handle(d), value, "datatype accepted {value:#x}");
                accepted += 1;
            }
            match keyval_from_handle(value) {
                Some(KeyvalRef::Created { object, index }) => {
                    assert_eq!(keyval_handle(object, index), value)
                }
                Some(KeyvalRef::Predefined(key)) => assert_eq!(key.handle(), value),
                None => {}
            }
        }
        // Random 32-bit values hit a created handle of some class about 1 time in 16.
        assert!(
            accepted > 1000,
            "the generator never produced a valid handle"
        );
    }

    #[test]
    fn predefined_handles_never_collide_across_classes() {
        let mut all: Vec<(c_int, &str)> = vec![
            (MPI_COMM_WORLD, "MPI_COMM_WORLD"),
            (MPI_COMM_SELF, "MPI_COMM_SELF"),
            (MPI_GROUP_EMPTY, "MPI_GROUP_EMPTY"),
            (MPI_ERRORS_ARE_FATAL, "MPI_ERRORS_ARE_FATAL"),
            (MPI_ERRORS_RETURN, "MPI_ERRORS_RETURN"),
            (MPI_ERRORS_ABORT, "MPI_ERRORS_ABORT"),
            (MPI_INFO_ENV, "MPI_INFO_ENV"),
            (MPI_MESSAGE_NO_PROC, "MPI_MESSAGE_NO_PROC"),
            (MPI_COMM_NULL, "MPI_COMM_NULL"),
            (MPI_GROUP_NULL, "MPI_GROUP_NULL"),
            (MPI_DATATYPE_NULL, "MPI_DATATYPE_NULL"),
            (MPI_ERRHANDLER_NULL, "MPI_ERRHANDLER_NULL"),
            (MPI_OP_NULL, "MPI_OP_NULL"),
            (MPI_INFO_NULL, "MPI_INFO_NULL"),
            (MPI_WIN_NULL, "MPI_WIN_NULL"),
            (MPI_REQUEST_NULL, "MPI_REQUEST_NULL and MPI_MESSAGE_NULL"),
            (MPI_SESSION_NULL, "MPI_SESSION_NULL"),
            (MPI_KEYVAL_INVALID, "MPI_KEYVAL_INVALID"),
        ];
        all.extend((0..FIRST_CREATED_OP).map(|i| (op_handle(i), "an op")));
        all.extend(
            Predefined::ALL
                .iter()
                .map(|&p| (predefined_handle(p), p.name())),
        );
        all.extend(
            PredefinedKeyval::ALL
                .iter()
                .map(|&k| (k.handle(), k.name())),
        );
        let mut seen = HashMap::new();
        for (value, name) in all {
            if let Some(other) = seen.insert(value, name) {
                panic!("{name} and {other} share {value:#x}");
            }
        }
        assert_eq!(MPI_MESSAGE_NULL, MPI_REQUEST_NULL);
    }

    #[test]
    fn keyvals_round_trip_and_keep_their_object_kind() {
        for key in PredefinedKeyval::ALL {
            assert_eq!(
                keyval_from_handle(key.handle()),
                Some(KeyvalRef::Predefined(key))
            );
            // Fortran spells these keys as the C value plus one; C never does.
            assert_eq!(keyval_from_handle(key.handle() + 1), None);
        }
        for object in [
            KeyvalObject::Comm,
            KeyvalObject::Datatype,
            KeyvalObject::Win,
        ] {
            for index in [0, 1, 77, MAX_KEYVAL_INDEX] {
                let handle = keyval_handle(object, index);
                let got = keyval_from_handle(handle);
                assert_eq!(got, Some(KeyvalRef::Created { object, index }));
            }
        }
        assert_eq!(keyval_handle(KeyvalObject::Comm, 5) as u32, 0xa440_0005);
        assert_eq!(keyval_from_handle(MPI_KEYVAL_INVALID), None);
        // Object bits naming a class that cannot carry attributes.
        assert_eq!(keyval_from_handle(h(0xa400_0000 | (2 << 22))), None);
    }

    #[test]
    fn status_layout_and_count() {
        assert_eq!(std::mem::size_of::<MPI_Status>(), 20);
        assert_eq!(std::mem::align_of::<MPI_Status>(), 4);
        assert_eq!(std::mem::offset_of!(MPI_Status, MPI_SOURCE), 8);
        assert_eq!(std::mem::offset_of!(MPI_Status, MPI_TAG), 12);
        assert_eq!(std::mem::offset_of!(MPI_Status, MPI_ERROR), 16);
        for bytes in [
            0,
            1,
            0x7fff_ffff,
            0x8000_0000,
            0xffff_ffff,
            0x1_0000_0000,
            (1 << 62) - 1,
        ] {
            let mut status = MPI_Status::new(3, 9, MPI_SUCCESS, bytes);
            assert_eq!(status.count(), bytes);
            assert!(!status.cancelled());
            status.set_cancelled(true);
            assert_eq!(status.count(), bytes);
            assert!(status.cancelled());
            status.set_count(bytes / 2);
            assert!(status.cancelled());
            assert_eq!(status.count(), bytes / 2);
            status.set_cancelled(false);
            assert!(!status.cancelled());
            assert_eq!((status.MPI_SOURCE, status.MPI_TAG), (3, 9));
        }
        // MPICH's encoding: 2^32 + 5 bytes is count_lo 5, count_hi_and_cancelled 1 << 1.
        let status = MPI_Status::new(0, 0, 0, (1 << 32) + 5);
        assert_eq!((status.count_lo, status.count_hi_and_cancelled), (5, 2));
    }

    #[test]
    fn special_addresses() {
        assert_eq!(MPI_IN_PLACE as usize, usize::MAX);
        assert_eq!(MPI_STATUS_IGNORE as usize, 1);
        assert_eq!(MPI_STATUSES_IGNORE as usize, 1);
        assert!(MPI_BOTTOM.is_null());
        assert!(MPI_ERRCODES_IGNORE.is_null());
        assert!(MPI_FILE_NULL.is_null());
    }
}
