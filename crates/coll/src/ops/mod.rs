//! The predefined reduction operations (`MPI_MAX` ... `MPI_NO_OP`): which (operation,
//! type) pairs the standard allows, and the element-wise kernels that apply them.
//!
//! Operand order follows `MPI_Reduce_local`: `inout[i] = input[i] op inout[i]`, so
//! `input` is the left operand. Every predefined operation except `MPI_REPLACE` and
//! `MPI_NO_OP` is commutative, so the order only matters for those two and for user
//! operations (which the core calls itself).
//!
//! Semantics worth knowing:
//! - Integer `SUM`/`PROD` wrap (two's complement) for signed and unsigned types alike.
//! - Floating `MAX`/`MIN` are C's `a > b ? a : b` / `a < b ? a : b` with `a` the input
//!   element and `b` the inout element: if either is NaN the inout element is kept, and
//!   `+0.0`/`-0.0` compare equal (inout kept). `MINLOC`/`MAXLOC` compare values the same
//!   way; on equal values the smaller index wins.
//! - Logical operations (`LAND`, `LOR`, `LXOR`) treat any non-zero bit pattern as true
//!   and store 1 for true, 0 for false (gfortran's `.TRUE.` is 1).
//! - `MPI_LONG_DOUBLE` (x87 80-bit extended in 16 bytes) is computed with the x87 unit
//!   itself, so results are bit-identical to C `long double` arithmetic (no loss to
//!   f64). The 6 padding bytes of each inout element are left untouched.
//! - `MPI_REAL16` (binary128) has no arithmetic here: only `REPLACE`/`NO_OP` apply.
//! - Beyond the standard's table, the pairs both MPICH and Open MPI accept are accepted
//!   too ([`is_extension`]): every arithmetic, ordering, logical and bitwise operation on
//!   `MPI_CHAR` and `MPI_CHARACTER` (computed as C `signed char`, as MPICH does), and the
//!   logical operations on `MPI_INTEGER1/2/8`, `MPI_AINT`, `MPI_OFFSET`, `MPI_COUNT`.
//! - `MPI_REPLACE` and `MPI_NO_OP` are only for one-sided accumulate operations
//!   (MPI 4.1 section 12.3.4); [`check_collective_op`] rejects them for collectives and
//!   `MPI_Reduce_local`, [`reduce_local`] itself implements them for the RMA code.

mod kernels;

pub use kernels::Fold3;
mod x87;

use std::fmt;

use oxmpi_datatype::{Category, Predefined, Primitive};

/// A predefined `MPI_Op`. The order is MPICH's: handle = `0x58000001 + index`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum PredefinedOp {
    Max,
    Min,
    Sum,
    Prod,
    Land,
    Band,
    Lor,
    Bor,
    Lxor,
    Bxor,
    Minloc,
    Maxloc,
    Replace,
    NoOp,
}

impl PredefinedOp {
    /// All predefined operations in handle order.
    pub const ALL: [PredefinedOp; 14] = [
        PredefinedOp::Max,
        PredefinedOp::Min,
        PredefinedOp::Sum,
        PredefinedOp::Prod,
        PredefinedOp::Land,
        PredefinedOp::Band,
        PredefinedOp::Lor,
        PredefinedOp::Bor,
        PredefinedOp::Lxor,
        PredefinedOp::Bxor,
        PredefinedOp::Minloc,
        PredefinedOp::Maxloc,
        PredefinedOp::Replace,
        PredefinedOp::NoOp,
    ];

    /// MPICH ABI handle value (`MPI_MAX` = `0x58000001`, ..., `MPI_NO_OP` = `0x5800000e`).
    pub const fn handle(self) -> u32 {
        0x5800_0001 + self as u32
    }

    /// The operation with this MPICH handle value, if it names a predefined one.
    pub fn from_handle(handle: u32) -> Option<PredefinedOp> {
        let index = handle.checked_sub(0x5800_0001)? as usize;
        Self::ALL.get(index).copied()
    }

    /// The MPI name, e.g. `"MPI_SUM"`.
    pub const fn name(self) -> &'static str {
        match self {
            PredefinedOp::Max => "MPI_MAX",
            PredefinedOp::Min => "MPI_MIN",
            PredefinedOp::Sum => "MPI_SUM",
            PredefinedOp::Prod => "MPI_PROD",
            PredefinedOp::Land => "MPI_LAND",
            PredefinedOp::Band => "MPI_BAND",
            PredefinedOp::Lor => "MPI_LOR",
            PredefinedOp::Bor => "MPI_BOR",
            PredefinedOp::Lxor => "MPI_LXOR",
            PredefinedOp::Bxor => "MPI_BXOR",
            PredefinedOp::Minloc => "MPI_MINLOC",
            PredefinedOp::Maxloc => "MPI_MAXLOC",
            PredefinedOp::Replace => "MPI_REPLACE",
            PredefinedOp::NoOp => "MPI_NO_OP",
        }
    }

    /// What `MPI_Op_commutative` reports. `MPI_REPLACE` (`f(a, b) = b`) and `MPI_NO_OP`
    /// are not commutative; every other predefined operation is.
    pub const fn is_commutative(self) -> bool {
        !matches!(self, PredefinedOp::Replace | PredefinedOp::NoOp)
    }

    /// True for the operations a collective reduction (and `MPI_Reduce_local`) may use:
    /// all but `MPI_REPLACE` and `MPI_NO_OP`, which only the accumulate functions accept.
    pub const fn allowed_in_collectives(self) -> bool {
        !matches!(self, PredefinedOp::Replace | PredefinedOp::NoOp)
    }
}

impl fmt::Display for PredefinedOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Why a predefined operation cannot be applied.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OpError {
    /// The standard does not define `op` on `ty` (error class `MPI_ERR_OP`).
    NotDefined { op: PredefinedOp, ty: Predefined },
    /// The standard defines `op` on `ty`, but oxmpi has no arithmetic for it
    /// (`MPI_REAL16` binary128 values; error class `MPI_ERR_OP`).
    Unsupported { op: PredefinedOp, ty: Predefined },
    /// `MPI_REPLACE` / `MPI_NO_OP` given to a collective (error class `MPI_ERR_OP`).
    NotForCollectives { op: PredefinedOp },
    /// A buffer is shorter than `count` elements need (error class `MPI_ERR_BUFFER`;
    /// reaching this from the core is an internal bug).
    BufferTooShort {
        which: &'static str,
        needed: usize,
        len: usize,
    },
}

impl OpError {
    /// The name of the MPI error class this error maps to.
    pub const fn class_name(&self) -> &'static str {
        match self {
            OpError::NotDefined { .. }
            | OpError::Unsupported { .. }
            | OpError::NotForCollectives { .. } => "MPI_ERR_OP",
            OpError::BufferTooShort { .. } => "MPI_ERR_BUFFER",
        }
    }
}

impl fmt::Display for OpError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OpError::NotDefined { op, ty } => write!(
                f,
                "{op} is not defined for datatype {} (MPI 4.1 section 6.9.2)",
                ty.name()
            ),
            OpError::Unsupported { op, ty } => write!(
                f,
                "{op} on {} is not supported: oxmpi has no binary128 arithmetic",
                ty.name()
            ),
            OpError::NotForCollectives { op } => write!(
                f,
                "{op} may only be used with the accumulate functions, not with collective reductions"
            ),
            OpError::BufferTooShort { which, needed, len } => write!(
                f,
                "{which} buffer holds {len} bytes but the reduction needs {needed}"
            ),
        }
    }
}

impl std::error::Error for OpError {}

/// True when the standard's table (MPI 4.1 section 6.9.2, plus section 12.3.4 for
/// `MPI_REPLACE` / `MPI_NO_OP`) or oxmpi's extension ([`is_extension`]) defines `op`
/// on `ty` AND oxmpi can compute it.
/// `MPI_REPLACE` and `MPI_NO_OP` are valid on every type except the `MPI_LB`/`MPI_UB`
/// markers; use [`check_collective_op`] for collectives.
pub fn op_valid(op: PredefinedOp, ty: Predefined) -> bool {
    check_op(op, ty).is_ok()
}

/// [`op_valid`] with the reason when it is not.
pub fn check_op(op: PredefinedOp, ty: Predefined) -> Result<(), OpError> {
    use Category as C;
    use PredefinedOp as O;
    let cat = ty.category();
    let defined = match op {
        O::Max | O::Min => matches!(cat, C::CInteger | C::FortranInteger | C::Floating),
        O::Sum | O::Prod => matches!(
            cat,
            C::CInteger | C::FortranInteger | C::Floating | C::Complex
        ),
        O::Land | O::Lor | O::Lxor => matches!(cat, C::CInteger | C::Logical),
        O::Band | O::Bor | O::Bxor => matches!(cat, C::CInteger | C::FortranInteger | C::Byte),
        O::Minloc | O::Maxloc => cat == C::Pair,
        O::Replace | O::NoOp => cat != C::Marker,
    } || is_extension(op, ty);
    if !defined {
        return Err(OpError::NotDefined { op, ty });
    }
    let arithmetic = !matches!(op, O::Replace | O::NoOp);
    if arithmetic
        && ty
            .primitives()
            .iter()
            .any(|p| matches!(p, Primitive::F128 | Primitive::C128))
    {
        return Err(OpError::Unsupported { op, ty });
    }
    if arithmetic && !x87::ARITHMETIC && needs_x87_arithmetic(op, ty) {
        return Err(OpError::Unsupported { op, ty });
    }
    Ok(())
}

/// True for the (operation, type) pairs outside the standard's table that oxmpi accepts
/// because MPICH and Open MPI both do (found by trying every predefined operation on
/// every predefined type with both), so that programs written for them, such as the
/// OSU benchmarks (`MPI_SUM` on `MPI_CHAR`) and MPICH's tests (`MPI_LOR` on
/// `MPI_AINT`), run unchanged:
/// - `MPI_CHAR`, `MPI_CHARACTER`: `MAX`, `MIN`, `SUM`, `PROD`, `LAND`, `LOR`, `LXOR`,
///   `BAND`, `BOR`, `BXOR`, on C `signed char` values (sums and products wrap);
/// - `MPI_INTEGER1`, `MPI_INTEGER2`, `MPI_INTEGER8`, `MPI_AINT`, `MPI_OFFSET`,
///   `MPI_COUNT`: `LAND`, `LOR`, `LXOR`.
///
/// Not extended, although both accept them: `MPI_REAL16` arithmetic (they compute it as
/// x87 `long double` or produce garbage, not as the binary128 values Fortran stores).
pub const fn is_extension(op: PredefinedOp, ty: Predefined) -> bool {
    use Predefined as T;
    use PredefinedOp as O;
    match ty {
        T::Char | T::Character => !matches!(op, O::Minloc | O::Maxloc | O::Replace | O::NoOp),
        T::Integer1 | T::Integer2 | T::Integer8 | T::Aint | T::Offset | T::Count => {
            matches!(op, O::Land | O::Lor | O::Lxor)
        }
        _ => false,
    }
}

/// The primitive the kernels compute `ty` as: its own, except that the text types
/// `MPI_CHAR` and `MPI_CHARACTER` (uninterpreted bytes elsewhere) reduce as C
/// `signed char`, like MPICH (x86-64's `char` is signed).
pub fn reduction_primitive(ty: Predefined) -> Option<Primitive> {
    match ty {
        Predefined::Char | Predefined::Character => Some(Primitive::I8),
        _ => ty.primitives().first().copied(),
    }
}

/// Validity for a collective reduction or `MPI_Reduce_local`: [`check_op`] plus the
/// rule that `MPI_REPLACE` / `MPI_NO_OP` are for the accumulate functions only.
pub fn check_collective_op(op: PredefinedOp, ty: Predefined) -> Result<(), OpError> {
    if !op.allowed_in_collectives() {
        return Err(OpError::NotForCollectives { op });
    }
    check_op(op, ty)
}

fn needs_x87_arithmetic(op: PredefinedOp, ty: Predefined) -> bool {
    matches!(op, PredefinedOp::Sum | PredefinedOp::Prod)
        && ty
            .primitives()
            .iter()
            .any(|p| matches!(p, Primitive::LongDouble | Primitive::CLongDouble))
}

/// How consecutive elements of a predefined type lie in a buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    /// As in user memory: element `k` at `k * extent`, pair types padded like their C struct.
    Extent,
    /// Packed: element `k` at `k * size`, no padding (what `MPI_Pack` and the core's
    /// packed collective buffers hold).
    Packed,
}

/// `MPI_Reduce_local` on a contiguous buffer of `count` elements of `ty` in user-memory
/// layout: `inout[k] = input[k] op inout[k]`. Buffers may be unaligned. The last element
/// needs only the bytes up to the end of its last primitive, not a full extent. Padding bytes of `inout` are untouched.
pub fn reduce_local(
    op: PredefinedOp,
    ty: Predefined,
    input: &[u8],
    inout: &mut [u8],
    count: usize,
) -> Result<(), OpError> {
    reduce(op, ty, Layout::Extent, input, inout, count)
}

/// Like [`reduce_local`] on packed data (element stride = type size). This is what the
/// core uses for collective buffers and for derived types whose basic elements are all
/// `ty` (pack them first, then pass the element count).
pub fn reduce_packed(
    op: PredefinedOp,
    ty: Predefined,
    input: &[u8],
    inout: &mut [u8],
    count: usize,
) -> Result<(), OpError> {
    reduce(op, ty, Layout::Packed, input, inout, count)
}

/// `out = a op b` on packed data ([`reduce_packed`] with separate operands): one pass
/// for plain numeric types, else `b` is copied to `out` and reduced into.
pub fn reduce_packed_into(
    op: PredefinedOp,
    ty: Predefined,
    a: &[u8],
    b: &[u8],
    out: &mut [u8],
    count: usize,
) -> Result<(), OpError> {
    check_op(op, ty)?;
    let needed = count.saturating_mul(ty.size());
    for (which, len) in [("input", a.len()), ("input", b.len()), ("inout", out.len())] {
        if len < needed {
            return Err(OpError::BufferTooShort { which, needed, len });
        }
    }
    let (a, b, out) = (&a[..needed], &b[..needed], &mut out[..needed]);
    if let Some(k) = FlatKernel::new(op, ty) {
        k.apply_into(a, b, out);
        return Ok(());
    }
    out.copy_from_slice(b);
    reduce(op, ty, Layout::Packed, a, out, count)
}

/// A predefined operation on packed elements of a type made of one primitive (every
/// type but the pairs), validated once: what a collective applies over and over.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FlatKernel {
    op: PredefinedOp,
    prim: Primitive,
}

impl FlatKernel {
    /// The kernel of `op` on `ty`, if `ty` is not a pair type and the pair is valid.
    pub fn new(op: PredefinedOp, ty: Predefined) -> Option<FlatKernel> {
        if ty.category() == Category::Pair || check_op(op, ty).is_err() {
            return None;
        }
        let prim = reduction_primitive(ty)?;
        (prim.size() == ty.size()).then_some(FlatKernel { op, prim })
    }

    /// `inout = input op inout` over the whole elements both hold.
    #[inline]
    pub fn apply(&self, input: &[u8], inout: &mut [u8]) {
        if self.op == PredefinedOp::NoOp {
            return;
        }
        let n = input.len().min(inout.len()) / self.prim.size() * self.prim.size();
        kernels::elementwise(self.op, self.prim, &input[..n], &mut inout[..n]);
    }

    /// This kernel's `out = a op b` compiled for its pair, when it has one pass (the
    /// plain numeric types; for the others [`apply_into`](Self::apply_into) copies and
    /// reduces). Like `apply_into`, it works on the whole elements all three hold.
    pub fn fold3(&self) -> Option<Fold3> {
        kernels::fold3(self.op, self.prim)
    }

    /// `out = a op b` over the whole elements all three hold.
    #[inline]
    pub fn apply_into(&self, a: &[u8], b: &[u8], out: &mut [u8]) {
        let n = a.len().min(b.len()).min(out.len()) / self.prim.size() * self.prim.size();
        let (a, b, out) = (&a[..n], &b[..n], &mut out[..n]);
        if !kernels::elementwise3(self.op, self.prim, a, b, out) {
            out.copy_from_slice(b);
            self.apply(a, out);
        }
    }
}

/// The general entry point behind [`reduce_local`] and [`reduce_packed`].
pub fn reduce(
    op: PredefinedOp,
    ty: Predefined,
    layout: Layout,
    input: &[u8],
    inout: &mut [u8],
    count: usize,
) -> Result<(), OpError> {
    check_op(op, ty)?;
    let size = ty.size();
    let pair = ty.category() == Category::Pair;
    let (stride, span) = match layout {
        // The last element needs only up to the end of its last primitive.
        Layout::Extent if pair => {
            let last = ty.offsets().last().copied().unwrap_or(0);
            (
                ty.extent(),
                last + ty.primitives().last().map_or(0, |p| p.size()),
            )
        }
        Layout::Extent | Layout::Packed => (size, size),
    };
    let needed = match count {
        0 => 0,
        n => (n - 1)
            .checked_mul(stride)
            .and_then(|v| v.checked_add(span))
            .ok_or(OpError::BufferTooShort {
                which: "input",
                needed: usize::MAX,
                len: input.len(),
            })?,
    };
    if input.len() < needed {
        return Err(OpError::BufferTooShort {
            which: "input",
            needed,
            len: input.len(),
        });
    }
    if inout.len() < needed {
        return Err(OpError::BufferTooShort {
            which: "inout",
            needed,
            len: inout.len(),
        });
    }
    if count == 0 || op == PredefinedOp::NoOp {
        return Ok(());
    }
    let input = &input[..needed];
    let inout = &mut inout[..needed];
    let prims = ty.primitives();
    if pair {
        let index_off = match layout {
            Layout::Extent => ty.offsets()[1],
            Layout::Packed => prims[0].size(),
        };
        kernels::pair(
            op, prims[0], prims[1], index_off, stride, input, inout, count,
        );
        return Ok(());
    }
    // Every non-pair type with data has exactly one primitive and stride == size.
    let prim = reduction_primitive(ty).unwrap_or(prims[0]);
    kernels::elementwise(op, prim, input, inout);
    Ok(())
}

#[cfg(test)]
mod tests;
