//! The predefined MPI datatypes and the primitive element kinds they are built from.
//!
//! [`Predefined`] lists every named type the C library exposes. Its discriminant is the
//! type's index in the core's datatype table (created types come after the last one),
//! so the order of the variants is part of the contract between crates: append only.

/// The machine-level element kind of a basic type: what reductions compute on,
/// what `MPI_Get_elements` counts, what external32 converts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Primitive {
    I8,
    I16,
    I32,
    I64,
    U8,
    U16,
    U32,
    U64,
    F32,
    F64,
    /// C `long double` on x86-64: 80-bit extended precision stored in 16 bytes.
    LongDouble,
    /// IEEE binary128 (`__float128`, Fortran `REAL*16`); moved as bytes, no arithmetic.
    F128,
    /// Two `f32` (real, imaginary).
    C32,
    /// Two `f64`.
    C64,
    /// Two `long double`.
    CLongDouble,
    /// Two IEEE binary128 (Fortran `COMPLEX*32`); moved as bytes, no arithmetic.
    C128,
    /// C `_Bool` / C++ `bool` (1 byte, 0 or 1).
    Bool,
    /// Fortran `LOGICAL` (4 bytes, zero is false).
    Logical,
    /// Uninterpreted byte (`MPI_BYTE`, `MPI_PACKED`, `MPI_CHAR` text).
    Byte,
    /// Fortran `LOGICAL*2` (zero is false). `LOGICAL*1` is [`Primitive::Bool`]'s shape.
    Logical2,
    /// Fortran `LOGICAL*8`.
    Logical8,
    /// Fortran `LOGICAL*16`.
    Logical16,
    /// IEEE binary16 (Fortran `REAL*2`); reductions compute in `f32` and round back.
    F16,
    /// Two binary16 (Fortran `COMPLEX*4`).
    C16,
}

impl Primitive {
    /// Size in bytes.
    pub const fn size(self) -> usize {
        match self {
            Primitive::I8 | Primitive::U8 | Primitive::Bool | Primitive::Byte => 1,
            Primitive::I16 | Primitive::U16 | Primitive::Logical2 | Primitive::F16 => 2,
            Primitive::I32
            | Primitive::U32
            | Primitive::F32
            | Primitive::Logical
            | Primitive::C16 => 4,
            Primitive::I64 | Primitive::U64 | Primitive::F64 | Primitive::C32 => 8,
            Primitive::Logical8 => 8,
            Primitive::LongDouble | Primitive::F128 | Primitive::C64 | Primitive::Logical16 => 16,
            Primitive::CLongDouble | Primitive::C128 => 32,
        }
    }

    /// Natural alignment in bytes on x86-64 Linux (used for struct padding rules).
    pub const fn align(self) -> usize {
        match self {
            Primitive::C16 => 2,
            Primitive::C32 => 4,
            Primitive::C64 => 8,
            Primitive::CLongDouble | Primitive::C128 => 16,
            other => other.size(),
        }
    }
}

/// Which group of the standard's reduction table a predefined type belongs to
/// (MPI 4.1, section 6.9.2). Decides which predefined operations apply.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Category {
    /// C integer: `MPI_INT`, `MPI_LONG`, ..., `MPI_INT8_T`, ..., `MPI_SIGNED_CHAR`, `MPI_UNSIGNED_CHAR`, ...
    CInteger,
    /// Fortran integer: `MPI_INTEGER`, `MPI_INTEGERn`, `MPI_AINT`, `MPI_OFFSET`, `MPI_COUNT`.
    FortranInteger,
    /// Floating point: `MPI_FLOAT`, `MPI_DOUBLE`, `MPI_REAL`, `MPI_LONG_DOUBLE`, ...
    Floating,
    /// Logical: `MPI_C_BOOL`, `MPI_LOGICAL`, `MPI_CXX_BOOL`.
    Logical,
    /// Complex: `MPI_C_COMPLEX`, `MPI_COMPLEX`, ...
    Complex,
    /// Byte: `MPI_BYTE`.
    Byte,
    /// Pair types for `MPI_MINLOC`/`MPI_MAXLOC`: value then index.
    Pair,
    /// Text and other types no arithmetic operation applies to (`MPI_CHAR`, `MPI_WCHAR`, `MPI_PACKED`).
    Other,
    /// The `MPI_LB` / `MPI_UB` markers (size 0; only meaningful inside struct types).
    Marker,
}

macro_rules! predefined {
    ($( $(#[$doc:meta])* $variant:ident = $name:literal, $cat:ident, [$($prim:ident),*] ; )*) => {
        /// Every predefined (named) MPI datatype. The discriminant is the core table index.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        #[repr(u32)]
        pub enum Predefined {
            $( $(#[$doc])* $variant, )*
        }

        impl Predefined {
            /// All predefined types, in discriminant order.
            pub const ALL: &'static [Predefined] = &[$(Predefined::$variant,)*];

            /// The MPI name, e.g. `"MPI_INT"` (what `MPI_Type_get_name` returns).
            pub const fn name(self) -> &'static str {
                match self { $(Predefined::$variant => $name,)* }
            }

            /// The standard's reduction category.
            pub const fn category(self) -> Category {
                match self { $(Predefined::$variant => Category::$cat,)* }
            }

            /// The primitive elements, in memory order. Empty for the markers; two
            /// entries for the pair types (value, index).
            pub const fn primitives(self) -> &'static [Primitive] {
                match self { $(Predefined::$variant => &[$(Primitive::$prim),*],)* }
            }
        }
    };
}

predefined! {
    Char = "MPI_CHAR", Other, [Byte];
    SignedChar = "MPI_SIGNED_CHAR", CInteger, [I8];
    UnsignedChar = "MPI_UNSIGNED_CHAR", CInteger, [U8];
    Byte = "MPI_BYTE", Byte, [Byte];
    Wchar = "MPI_WCHAR", Other, [I32];
    Short = "MPI_SHORT", CInteger, [I16];
    UnsignedShort = "MPI_UNSIGNED_SHORT", CInteger, [U16];
    Int = "MPI_INT", CInteger, [I32];
    Unsigned = "MPI_UNSIGNED", CInteger, [U32];
    Long = "MPI_LONG", CInteger, [I64];
    UnsignedLong = "MPI_UNSIGNED_LONG", CInteger, [U64];
    Float = "MPI_FLOAT", Floating, [F32];
    Double = "MPI_DOUBLE", Floating, [F64];
    LongDouble = "MPI_LONG_DOUBLE", Floating, [LongDouble];
    LongLongInt = "MPI_LONG_LONG_INT", CInteger, [I64];
    UnsignedLongLong = "MPI_UNSIGNED_LONG_LONG", CInteger, [U64];
    Packed = "MPI_PACKED", Other, [Byte];
    Lb = "MPI_LB", Marker, [];
    Ub = "MPI_UB", Marker, [];
    /// `struct { float; int; }`: size 8, extent 8.
    FloatInt = "MPI_FLOAT_INT", Pair, [F32, I32];
    /// `struct { double; int; }`: size 12, extent 16.
    DoubleInt = "MPI_DOUBLE_INT", Pair, [F64, I32];
    /// `struct { long; int; }`: size 12, extent 16.
    LongInt = "MPI_LONG_INT", Pair, [I64, I32];
    /// `struct { short; int; }`: size 6, extent 8.
    ShortInt = "MPI_SHORT_INT", Pair, [I16, I32];
    /// `struct { int; int; }`: size 8, extent 8.
    TwoInt = "MPI_2INT", Pair, [I32, I32];
    /// `struct { long double; int; }`: size 20, extent 32.
    LongDoubleInt = "MPI_LONG_DOUBLE_INT", Pair, [LongDouble, I32];
    Complex = "MPI_COMPLEX", Complex, [C32];
    DoubleComplex = "MPI_DOUBLE_COMPLEX", Complex, [C64];
    Logical = "MPI_LOGICAL", Logical, [Logical];
    Real = "MPI_REAL", Floating, [F32];
    DoublePrecision = "MPI_DOUBLE_PRECISION", Floating, [F64];
    Integer = "MPI_INTEGER", FortranInteger, [I32];
    TwoInteger = "MPI_2INTEGER", Pair, [I32, I32];
    TwoReal = "MPI_2REAL", Pair, [F32, F32];
    TwoDoublePrecision = "MPI_2DOUBLE_PRECISION", Pair, [F64, F64];
    Character = "MPI_CHARACTER", Other, [Byte];
    Real4 = "MPI_REAL4", Floating, [F32];
    Real8 = "MPI_REAL8", Floating, [F64];
    Real16 = "MPI_REAL16", Floating, [F128];
    Complex8 = "MPI_COMPLEX8", Complex, [C32];
    Complex16 = "MPI_COMPLEX16", Complex, [C64];
    Complex32 = "MPI_COMPLEX32", Complex, [C128];
    Integer1 = "MPI_INTEGER1", FortranInteger, [I8];
    Integer2 = "MPI_INTEGER2", FortranInteger, [I16];
    Integer4 = "MPI_INTEGER4", FortranInteger, [I32];
    Integer8 = "MPI_INTEGER8", FortranInteger, [I64];
    Int8 = "MPI_INT8_T", CInteger, [I8];
    Int16 = "MPI_INT16_T", CInteger, [I16];
    Int32 = "MPI_INT32_T", CInteger, [I32];
    Int64 = "MPI_INT64_T", CInteger, [I64];
    Uint8 = "MPI_UINT8_T", CInteger, [U8];
    Uint16 = "MPI_UINT16_T", CInteger, [U16];
    Uint32 = "MPI_UINT32_T", CInteger, [U32];
    Uint64 = "MPI_UINT64_T", CInteger, [U64];
    CBool = "MPI_C_BOOL", Logical, [Bool];
    CFloatComplex = "MPI_C_FLOAT_COMPLEX", Complex, [C32];
    CDoubleComplex = "MPI_C_DOUBLE_COMPLEX", Complex, [C64];
    CLongDoubleComplex = "MPI_C_LONG_DOUBLE_COMPLEX", Complex, [CLongDouble];
    Aint = "MPI_AINT", FortranInteger, [I64];
    Offset = "MPI_OFFSET", FortranInteger, [I64];
    Count = "MPI_COUNT", FortranInteger, [I64];
    CxxBool = "MPI_CXX_BOOL", Logical, [Bool];
    CxxFloatComplex = "MPI_CXX_FLOAT_COMPLEX", Complex, [C32];
    CxxDoubleComplex = "MPI_CXX_DOUBLE_COMPLEX", Complex, [C64];
    CxxLongDoubleComplex = "MPI_CXX_LONG_DOUBLE_COMPLEX", Complex, [CLongDouble];
    // The optional Fortran types of MPI-4.1 (section 3.2.2) MPICH 4.0.2 lacks.
    /// `LOGICAL*1`: one byte, zero is false.
    Logical1 = "MPI_LOGICAL1", Logical, [Bool];
    Logical2 = "MPI_LOGICAL2", Logical, [Logical2];
    Logical4 = "MPI_LOGICAL4", Logical, [Logical];
    Logical8 = "MPI_LOGICAL8", Logical, [Logical8];
    Logical16 = "MPI_LOGICAL16", Logical, [Logical16];
    /// `REAL*2`: IEEE binary16.
    Real2 = "MPI_REAL2", Floating, [F16];
    /// `COMPLEX*4`: two IEEE binary16.
    Complex4 = "MPI_COMPLEX4", Complex, [C16];
}

impl Predefined {
    /// Number of predefined types; created types get table indices from here on.
    pub const COUNT: usize = Self::ALL.len();

    /// `MPI_Type_size`: the number of data bytes.
    pub fn size(self) -> usize {
        self.primitives().iter().map(|p| p.size()).sum()
    }

    /// `MPI_Type_get_extent`'s extent (lower bound is always 0 for predefined types).
    /// Pair types are padded like the C struct they describe.
    pub fn extent(self) -> usize {
        let prims = self.primitives();
        if prims.len() < 2 {
            return self.size();
        }
        let align = prims.iter().map(|p| p.align()).max().unwrap_or(1);
        let mut off = 0usize;
        for p in prims {
            off = off.next_multiple_of(p.align());
            off += p.size();
        }
        off.next_multiple_of(align)
    }

    /// Byte offset of each primitive inside one element (pair types are padded).
    pub fn offsets(self) -> Vec<usize> {
        let mut off = 0usize;
        self.primitives()
            .iter()
            .map(|p| {
                off = off.next_multiple_of(p.align());
                let here = off;
                off += p.size();
                here
            })
            .collect()
    }

    /// True when one element is a single run of bytes with no holes (every type but
    /// the padded pairs and the markers).
    pub fn is_contiguous(self) -> bool {
        self.size() == self.extent() && self.category() != Category::Marker
    }

    /// MPI-4.1's `MPI_Type_get_value_index`: the predefined pair type of a value of
    /// type `value` and an index of type `index`, if there is one.
    pub fn value_index(value: Predefined, index: Predefined) -> Option<Predefined> {
        use Predefined as P;
        Some(match (value, index) {
            (P::Float, P::Int) => P::FloatInt,
            (P::Double, P::Int) => P::DoubleInt,
            (P::Long, P::Int) => P::LongInt,
            (P::Short, P::Int) => P::ShortInt,
            (P::Int, P::Int) => P::TwoInt,
            (P::LongDouble, P::Int) => P::LongDoubleInt,
            (P::Real, P::Real) => P::TwoReal,
            (P::DoublePrecision, P::DoublePrecision) => P::TwoDoublePrecision,
            (P::Integer, P::Integer) => P::TwoInteger,
            _ => return None,
        })
    }

    /// The type at a table index, if the index names a predefined type.
    pub fn from_index(index: usize) -> Option<Predefined> {
        Self::ALL.get(index).copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pair_layouts_match_c_structs() {
        assert_eq!(
            (Predefined::FloatInt.size(), Predefined::FloatInt.extent()),
            (8, 8)
        );
        assert_eq!(
            (Predefined::DoubleInt.size(), Predefined::DoubleInt.extent()),
            (12, 16)
        );
        assert_eq!(
            (Predefined::LongInt.size(), Predefined::LongInt.extent()),
            (12, 16)
        );
        assert_eq!(
            (Predefined::ShortInt.size(), Predefined::ShortInt.extent()),
            (6, 8)
        );
        assert_eq!(
            (Predefined::TwoInt.size(), Predefined::TwoInt.extent()),
            (8, 8)
        );
        assert_eq!(
            (
                Predefined::LongDoubleInt.size(),
                Predefined::LongDoubleInt.extent()
            ),
            (20, 32)
        );
        assert_eq!(Predefined::ShortInt.offsets(), vec![0, 4]);
        assert!(!Predefined::DoubleInt.is_contiguous());
        assert!(Predefined::TwoInt.is_contiguous());
    }

    #[test]
    fn value_index_pairs() {
        use Predefined as P;
        assert_eq!(P::value_index(P::Double, P::Int), Some(P::DoubleInt));
        assert_eq!(P::value_index(P::Int, P::Int), Some(P::TwoInt));
        assert_eq!(P::value_index(P::Real, P::Real), Some(P::TwoReal));
        assert_eq!(P::value_index(P::Int, P::Double), None);
        assert_eq!(P::value_index(P::Float, P::Long), None);
        for p in P::ALL {
            if let Some(pair) = P::value_index(*p, P::Int) {
                assert_eq!(pair.primitives()[0], p.primitives()[0]);
            }
        }
    }

    #[test]
    fn indices_round_trip() {
        for (i, p) in Predefined::ALL.iter().enumerate() {
            assert_eq!(*p as usize, i);
            assert_eq!(Predefined::from_index(i), Some(*p));
        }
        assert_eq!(Predefined::from_index(Predefined::COUNT), None);
    }
}
