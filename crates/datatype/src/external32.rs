//! The "external32" data representation (MPI 4.1, section 13.5.2): big-endian, fixed
//! sizes independent of the platform (e.g. `MPI_LONG` is 4 bytes, `MPI_WCHAR` 2,
//! `MPI_LONG_DOUBLE` a 16-byte IEEE binary128), no padding between elements.
//! Implements `MPI_Pack_external`, `MPI_Unpack_external` and
//! `MPI_Pack_external_size` with a conversion for every predefined type.

use std::ptr;

use crate::datatype::Datatype;
use crate::error::{Error, Result};
use crate::typemap::for_each_leaf;
use crate::Predefined;

/// How one scalar of a predefined type is converted.
#[derive(Clone, Copy, Debug)]
enum Scalar {
    /// One byte, copied as is.
    Byte,
    /// `n`-byte integer or IEEE float whose external form only differs in byte order.
    Swap(u8),
    /// Integer of `native` bytes stored in `ext` bytes (range checked when narrowing).
    Resize { native: u8, ext: u8, signed: bool },
    /// C `long double` of this platform, external IEEE binary128.
    LongDouble,
    /// IEEE binary128 in native byte order (`REAL*16`).
    Quad,
}

impl Scalar {
    const fn ext_size(self) -> usize {
        match self {
            Scalar::Byte => 1,
            Scalar::Swap(n) => n as usize,
            Scalar::Resize { ext, .. } => ext as usize,
            Scalar::LongDouble | Scalar::Quad => 16,
        }
    }
}

use Scalar::{Byte, LongDouble, Quad, Swap};

const LONG: Scalar = Scalar::Resize {
    native: 8,
    ext: 4,
    signed: true,
};
const ULONG: Scalar = Scalar::Resize {
    native: 8,
    ext: 4,
    signed: false,
};
const WCHAR: Scalar = Scalar::Resize {
    native: 4,
    ext: 2,
    signed: false,
};

/// The scalars of one element of `p`, with their native byte offsets.
fn scalars(p: Predefined) -> &'static [(usize, Scalar)] {
    use Predefined as P;
    match p {
        P::Char
        | P::SignedChar
        | P::UnsignedChar
        | P::Byte
        | P::Packed
        | P::Character
        | P::Integer1
        | P::Int8
        | P::Uint8
        | P::CBool
        | P::CxxBool
        | P::Logical1 => &[(0, Byte)],
        P::Wchar => &[(0, WCHAR)],
        P::Short
        | P::UnsignedShort
        | P::Integer2
        | P::Int16
        | P::Uint16
        | P::Logical2
        | P::Real2 => &[(0, Swap(2))],
        P::Int
        | P::Unsigned
        | P::Integer
        | P::Integer4
        | P::Int32
        | P::Uint32
        | P::Logical
        | P::Logical4
        | P::Float
        | P::Real
        | P::Real4 => &[(0, Swap(4))],
        P::Long => &[(0, LONG)],
        P::UnsignedLong => &[(0, ULONG)],
        P::LongLongInt
        | P::UnsignedLongLong
        | P::Integer8
        | P::Int64
        | P::Uint64
        | P::Aint
        | P::Offset
        | P::Count
        | P::Double
        | P::DoublePrecision
        | P::Real8
        | P::Logical8 => &[(0, Swap(8))],
        P::Logical16 => &[(0, Swap(16))],
        P::Complex4 => &[(0, Swap(2)), (2, Swap(2))],
        P::LongDouble => &[(0, LongDouble)],
        P::Real16 => &[(0, Quad)],
        P::Complex
        | P::Complex8
        | P::CFloatComplex
        | P::CxxFloatComplex
        | P::FloatInt
        | P::TwoInt
        | P::TwoInteger
        | P::TwoReal => &[(0, Swap(4)), (4, Swap(4))],
        P::DoubleComplex
        | P::Complex16
        | P::CDoubleComplex
        | P::CxxDoubleComplex
        | P::TwoDoublePrecision => &[(0, Swap(8)), (8, Swap(8))],
        // Fortran COMPLEX*32 is a pair of REAL*16 (binary128) values.
        P::Complex32 => &[(0, Quad), (16, Quad)],
        P::CLongDoubleComplex | P::CxxLongDoubleComplex => &[(0, LongDouble), (16, LongDouble)],
        P::DoubleInt => &[(0, Swap(8)), (8, Swap(4))],
        P::LongInt => &[(0, LONG), (8, Swap(4))],
        P::ShortInt => &[(0, Swap(2)), (4, Swap(4))],
        P::LongDoubleInt => &[(0, LongDouble), (16, Swap(4))],
        P::Lb | P::Ub => &[],
    }
}

/// Bytes of one element of `p` in external32.
pub(crate) fn size_of(p: Predefined) -> usize {
    scalars(p).iter().map(|(_, s)| s.ext_size()).sum()
}

/// Rounds `v >> shift` to nearest, ties to even.
fn shift_round(v: u128, shift: u32) -> u128 {
    if shift == 0 {
        return v;
    }
    if shift >= 128 {
        return 0;
    }
    let q = v >> shift;
    let rem = v & ((1u128 << shift) - 1);
    let half = 1u128 << (shift - 1);
    if rem > half || (rem == half && q & 1 == 1) {
        q + 1
    } else {
        q
    }
}

/// x87 80-bit extended (significand with explicit integer bit, sign+exponent word) to
/// IEEE binary128 bits. Exact; invalid encodings (unnormals, pseudo-NaNs) become NaN.
pub(crate) fn x87_to_binary128(mant: u64, sign_exp: u16) -> u128 {
    let sign = u128::from(sign_exp >> 15) << 127;
    let exp = u128::from(sign_exp & 0x7fff);
    let int_bit = mant >> 63;
    let frac = u128::from(mant & !(1u64 << 63)) << 49;
    let nan = sign | (0x7fffu128 << 112) | (1u128 << 111) | frac;
    if exp == 0x7fff {
        return if int_bit == 1 && frac == 0 {
            sign | (0x7fffu128 << 112)
        } else {
            nan
        };
    }
    if exp == 0 {
        // Denormal (or pseudo-denormal, int bit set): value = mant * 2^(-16382-63),
        // which is mant << 49 as a binary128 subnormal; a set int bit carries into
        // the exponent field and yields the equal normal number.
        return sign | (u128::from(mant) << 49);
    }
    if int_bit == 0 {
        return nan; // unnormal: not a valid operand on x87
    }
    sign | (exp << 112) | frac
}

/// IEEE binary128 bits to x87 80-bit extended `(significand, sign+exponent)`, rounding
/// to nearest even (overflow gives infinity).
pub(crate) fn binary128_to_x87(q: u128) -> (u64, u16) {
    let sign = ((q >> 127) as u16) << 15;
    let exp = ((q >> 112) & 0x7fff) as u16;
    let frac = q & ((1u128 << 112) - 1);
    if exp == 0x7fff {
        if frac == 0 {
            return (1 << 63, sign | 0x7fff);
        }
        return ((1 << 63) | (1 << 62) | (frac >> 49) as u64, sign | 0x7fff);
    }
    if exp == 0 {
        // Subnormal: same scale as an x87 denormal with 49 fewer fraction bits.
        let m = shift_round(frac, 49);
        // Rounding up to 2^63 gives the smallest normal number.
        return if m >> 63 == 1 {
            (m as u64, sign | 1)
        } else {
            (m as u64, sign)
        };
    }
    let m = shift_round(frac | (1u128 << 112), 49);
    if m >> 64 == 1 {
        // Carried out of the significand: 1.0 * 2^(exp + 1).
        let e = exp + 1;
        return if e == 0x7fff {
            (1 << 63, sign | 0x7fff)
        } else {
            (1 << 63, sign | e)
        };
    }
    (m as u64, sign | exp)
}

/// Reads `N` bytes at address `at`.
///
/// # Safety
/// `at..at+N` must be readable.
unsafe fn read<const N: usize>(at: usize) -> [u8; N] {
    // SAFETY: the caller guarantees `at..at+N` is readable; a byte array has no alignment
    // needs, and any bytes are a valid `[u8; N]`.
    unsafe { ptr::read_unaligned(at as *const [u8; N]) }
}

/// Writes `N` bytes at address `at`.
///
/// # Safety
/// `at..at+N` must be writable.
unsafe fn write<const N: usize>(at: usize, v: [u8; N]) {
    // SAFETY: the caller guarantees `at..at+N` is writable; a byte array has no alignment
    // needs.
    unsafe { ptr::write_unaligned(at as *mut [u8; N], v) }
}

/// Converts one scalar at memory address `at` into `out` (exactly `s.ext_size()` bytes).
///
/// # Safety
/// The scalar's native bytes at `at` must be readable.
unsafe fn encode(p: Predefined, s: Scalar, at: usize, out: &mut [u8]) -> Result<()> {
    match s {
        // SAFETY: `at` holds a native byte, readable per this function's contract (1 byte,
        // read unaligned).
        Scalar::Byte => out[0] = unsafe { read::<1>(at) }[0],
        Scalar::Swap(2) => {
            // SAFETY: `at` holds a native 2-byte scalar (Swap(2)), readable per this function's
            // contract (2 bytes, read unaligned).
            out.copy_from_slice(&u16::from_ne_bytes(unsafe { read(at) }).to_be_bytes())
        }
        Scalar::Swap(4) => {
            // SAFETY: `at` holds a native 4-byte scalar (Swap(4)), readable per this function's
            // contract (4 bytes, read unaligned).
            out.copy_from_slice(&u32::from_ne_bytes(unsafe { read(at) }).to_be_bytes())
        }
        Scalar::Swap(_) => {
            // SAFETY: `at` holds a native 8-byte scalar (Swap(8), the only other width),
            // readable per this function's contract (8 bytes, read unaligned).
            out.copy_from_slice(&u64::from_ne_bytes(unsafe { read(at) }).to_be_bytes())
        }
        Scalar::Resize {
            native,
            ext,
            signed,
        } => {
            let v: i128 = match (native, signed) {
                // SAFETY: `at` holds a native signed 8-byte integer (Resize, native 8),
                // readable per this function's contract (8 bytes, read unaligned).
                (8, true) => i64::from_ne_bytes(unsafe { read(at) }).into(),
                // SAFETY: `at` holds a native unsigned 8-byte integer (Resize, native 8),
                // readable per this function's contract (8 bytes, read unaligned).
                (8, false) => u64::from_ne_bytes(unsafe { read(at) }).into(),
                // SAFETY: `at` holds a native signed 4-byte integer (Resize, native 4),
                // readable per this function's contract (4 bytes, read unaligned).
                (_, true) => i32::from_ne_bytes(unsafe { read(at) }).into(),
                // SAFETY: `at` holds a native unsigned 4-byte integer (Resize, native 4),
                // readable per this function's contract (4 bytes, read unaligned).
                (_, false) => u32::from_ne_bytes(unsafe { read(at) }).into(),
            };
            let bits = 8 * u32::from(ext);
            let (lo, hi) = if signed {
                (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
            } else {
                (0, (1i128 << bits) - 1)
            };
            if v < lo || v > hi {
                return Err(Error::Conversion {
                    ty: p,
                    detail: format!("{v} (external32 holds {} bytes)", ext),
                });
            }
            let be = v.to_be_bytes();
            out.copy_from_slice(&be[16 - ext as usize..]);
        }
        Scalar::Quad => {
            // SAFETY: `at` holds a native binary128 (Quad), readable per this function's
            // contract (16 bytes, read unaligned).
            out.copy_from_slice(&u128::from_ne_bytes(unsafe { read(at) }).to_be_bytes())
        }
        Scalar::LongDouble => {
            // SAFETY: `at` holds a native `long double`, whose storage is 16 bytes on the
            // supported targets, readable per this function's contract (16 bytes, read
            // unaligned).
            let raw: [u8; 16] = unsafe { read(at) };
            out.copy_from_slice(&long_double_to_binary128(raw).to_be_bytes());
        }
    }
    Ok(())
}

/// Converts one external scalar from `inp` into native form at memory address `at`.
///
/// # Safety
/// The scalar's native bytes at `at` must be writable.
unsafe fn decode(s: Scalar, inp: &[u8], at: usize) {
    match s {
        // SAFETY: `at` holds a native byte, writable per this function's contract (1 byte,
        // written unaligned).
        Scalar::Byte => unsafe { write(at, [inp[0]]) },
        // SAFETY: `at` holds a native 2-byte scalar (Swap(2)), writable per this function's
        // contract (2 bytes, written unaligned).
        Scalar::Swap(2) => unsafe { write(at, u16::from_be_bytes([inp[0], inp[1]]).to_ne_bytes()) },
        Scalar::Swap(4) => {
            let v = u32::from_be_bytes(inp[..4].try_into().expect("4 bytes"));
            // SAFETY: `at` holds a native 4-byte scalar (Swap(4)), writable per this function's
            // contract (4 bytes, written unaligned).
            unsafe { write(at, v.to_ne_bytes()) }
        }
        Scalar::Swap(_) => {
            let v = u64::from_be_bytes(inp[..8].try_into().expect("8 bytes"));
            // SAFETY: `at` holds a native 8-byte scalar (Swap(8), the only other width), writable per this function's
            // contract (8 bytes, written unaligned).
            unsafe { write(at, v.to_ne_bytes()) }
        }
        Scalar::Resize {
            native,
            ext,
            signed,
        } => {
            let ext = ext as usize;
            let mut be = if signed && inp[0] & 0x80 != 0 {
                [0xffu8; 16]
            } else {
                [0u8; 16]
            };
            be[16 - ext..].copy_from_slice(&inp[..ext]);
            let v = i128::from_be_bytes(be);
            if native == 8 {
                // SAFETY: `at` holds a native 8-byte integer (Resize, native 8), writable per
                // this function's contract (8 bytes, written unaligned).
                unsafe { write(at, (v as i64).to_ne_bytes()) }
            } else {
                // SAFETY: `at` holds a native 4-byte integer (Resize, native 4), writable per
                // this function's contract (4 bytes, written unaligned).
                unsafe { write(at, (v as i32).to_ne_bytes()) }
            }
        }
        Scalar::Quad => {
            let v = u128::from_be_bytes(inp[..16].try_into().expect("16 bytes"));
            // SAFETY: `at` holds a native binary128 (Quad), writable per this function's
            // contract (16 bytes, written unaligned).
            unsafe { write(at, v.to_ne_bytes()) }
        }
        Scalar::LongDouble => {
            let v = u128::from_be_bytes(inp[..16].try_into().expect("16 bytes"));
            // SAFETY: `at` holds a native `long double`, whose storage is 16 bytes on the
            // supported targets, writable per this function's contract (16 bytes, written
            // unaligned).
            unsafe { write(at, binary128_to_long_double(v)) }
        }
    }
}

#[cfg(any(target_arch = "x86_64", target_arch = "x86"))]
fn long_double_to_binary128(raw: [u8; 16]) -> u128 {
    let mant = u64::from_le_bytes(raw[..8].try_into().expect("8 bytes"));
    x87_to_binary128(mant, u16::from_le_bytes([raw[8], raw[9]]))
}

#[cfg(any(target_arch = "x86_64", target_arch = "x86"))]
fn binary128_to_long_double(v: u128) -> [u8; 16] {
    let (mant, se) = binary128_to_x87(v);
    let mut raw = [0u8; 16];
    raw[..8].copy_from_slice(&mant.to_le_bytes());
    raw[8..10].copy_from_slice(&se.to_le_bytes());
    raw
}

// Elsewhere (e.g. aarch64, riscv64 Linux) `long double` is binary128 already.
#[cfg(not(any(target_arch = "x86_64", target_arch = "x86")))]
fn long_double_to_binary128(raw: [u8; 16]) -> u128 {
    u128::from_ne_bytes(raw)
}

#[cfg(not(any(target_arch = "x86_64", target_arch = "x86")))]
fn binary128_to_long_double(v: u128) -> [u8; 16] {
    v.to_ne_bytes()
}

/// Bytes of the bounce buffer of [`unpack_external`]'s fast path (a multiple of every
/// scalar width).
const BOUNCE: usize = 16 * 1024;

/// The scalar width `w` when the external32 form of `ty` is its native packed stream
/// with every `w`-byte word in big-endian order: every data element is one predefined
/// type whose scalars are all bytes (`w` = 1: the same bytes) or all `w`-byte values
/// that differ only in byte order. Such types convert in bulk (the native packer, then
/// a byte swap) instead of scalar by scalar.
fn uniform_width(ty: &Datatype) -> Option<usize> {
    let p = ty.basic_type()?;
    let mut width = None;
    let mut end = 0;
    for &(off, s) in scalars(p) {
        let w = match s {
            Byte => 1,
            Swap(n) => usize::from(n),
            _ => return None,
        };
        // The scalars must lie back to back, so that the packed stream of an element
        // is their concatenation in order.
        if off != end || *width.get_or_insert(w) != w {
            return None;
        }
        end += w;
    }
    (end == p.size()).then_some(width?)
}

/// Whether the external32 form of `ty` is its native packed stream (every data element
/// is made of bytes: `MPI_CHAR`, `MPI_BYTE`, ... and types built of them), so that
/// converting it is a plain copy, or nothing when the data is contiguous.
pub fn external32_is_native(ty: &Datatype) -> bool {
    uniform_width(ty) == Some(1)
}

/// Puts each `w`-byte word of `b` in big-endian order (its own inverse).
fn to_big_endian(b: &mut [u8], w: usize) {
    if cfg!(target_endian = "big") {
        return;
    }
    match w {
        1 => {}
        2 => b
            .chunks_exact_mut(2)
            .for_each(|c| c.copy_from_slice(&u16::from_le_bytes([c[0], c[1]]).to_be_bytes())),
        4 => b.chunks_exact_mut(4).for_each(|c| {
            let v = u32::from_le_bytes(c.try_into().expect("4 bytes"));
            c.copy_from_slice(&v.to_be_bytes());
        }),
        8 => b.chunks_exact_mut(8).for_each(|c| {
            let v = u64::from_le_bytes(c.try_into().expect("8 bytes"));
            c.copy_from_slice(&v.to_be_bytes());
        }),
        _ => b.chunks_exact_mut(w).for_each(<[u8]>::reverse),
    }
}

/// `MPI_Pack_external_size`: external32 bytes of `count` elements, `None` on overflow.
pub fn pack_external_size(ty: &Datatype, count: usize) -> Option<usize> {
    count.checked_mul(ty.layout().ext32 as usize)
}

fn needed(ty: &Datatype, count: usize) -> Result<usize> {
    pack_external_size(ty, count)
        .ok_or_else(|| Error::overflow(format!("external32 size of {count} elements")))
}

/// `MPI_Pack_external("external32", ...)`: converts `count` elements of `ty` at `base`
/// into `out[..n]` and returns `n` (= [`pack_external_size`]). Fails with
/// [`Error::Truncate`] when `out` is too short and [`Error::Conversion`] for a value
/// with no external32 form (a `long` outside 32 bits, a `wchar_t` above 0xFFFF); `out`
/// may then be partly written.
///
/// # Safety
/// The type map of the `count` elements at `base` (absolute when `base` is null) must
/// be readable.
pub unsafe fn pack_external(
    ty: &Datatype,
    base: *const u8,
    count: usize,
    out: &mut [u8],
) -> Result<usize> {
    let need = needed(ty, count)?;
    if out.len() < need {
        return Err(Error::Truncate {
            needed: need as u64,
            available: out.len() as u64,
        });
    }
    if need == 0 {
        return Ok(0);
    }
    if let Some(w) = uniform_width(ty) {
        // SAFETY: forwarded caller contract; `out` holds `need` bytes, the native
        // packed size (equal to the external32 size for these types).
        let n = unsafe { crate::pack::pack(ty, base, count, 0, &mut out[..need]) };
        debug_assert_eq!(n, need);
        to_big_endian(&mut out[..need], w);
        return Ok(need);
    }
    // SAFETY: forwarded caller contract; `out` holds `need` bytes.
    unsafe { pack_each(ty, base, count, out) }
}

/// [`pack_external`] scalar by scalar (any type).
///
/// # Safety
/// As for [`pack_external`]; `out` must hold the external32 size.
unsafe fn pack_each(ty: &Datatype, base: *const u8, count: usize, out: &mut [u8]) -> Result<usize> {
    let base = base as usize;
    let ext = ty.layout().extent();
    let mut pos = 0usize;
    for e in 0..count {
        let origin = (e as i64).wrapping_mul(ext);
        for_each_leaf(ty, origin, &mut |p, disp| {
            let at = base.wrapping_add(disp as usize);
            for &(off, s) in scalars(p) {
                let n = s.ext_size();
                // SAFETY: this scalar is part of the caller's readable type map.
                unsafe { encode(p, s, at.wrapping_add(off), &mut out[pos..pos + n])? };
                pos += n;
            }
            Ok(())
        })?;
    }
    Ok(pos)
}

/// `MPI_Unpack_external("external32", ...)`: converts the first
/// [`pack_external_size`] bytes of `input` into `count` elements of `ty` at `base`
/// and returns the bytes consumed; [`Error::Truncate`] when `input` is too short.
///
/// # Safety
/// The type map of the `count` elements at `base` (absolute when `base` is null) must
/// be writable.
pub unsafe fn unpack_external(
    ty: &Datatype,
    base: *mut u8,
    count: usize,
    input: &[u8],
) -> Result<usize> {
    let need = needed(ty, count)?;
    if input.len() < need {
        return Err(Error::Truncate {
            needed: need as u64,
            available: input.len() as u64,
        });
    }
    if need == 0 {
        return Ok(0);
    }
    if let Some(w) = uniform_width(ty) {
        let input = &input[..need];
        if w == 1 || cfg!(target_endian = "big") {
            // SAFETY: forwarded caller contract; the stream is the native one.
            unsafe { crate::pack::unpack(ty, base, count, 0, input) };
            return Ok(need);
        }
        // Swapped through a small bounce buffer (the input is read-only), each piece
        // unpacked at its offset of the stream; pieces hold whole scalars.
        let mut bounce = [0u8; BOUNCE];
        for (i, piece) in input.chunks(BOUNCE).enumerate() {
            let b = &mut bounce[..piece.len()];
            b.copy_from_slice(piece);
            to_big_endian(b, w);
            // SAFETY: forwarded caller contract; `b` is our own memory.
            unsafe { crate::pack::unpack(ty, base, count, i * BOUNCE, b) };
        }
        return Ok(need);
    }
    // SAFETY: forwarded caller contract; `input` holds `need` bytes.
    unsafe { unpack_each(ty, base, count, input) }
}

/// [`unpack_external`] scalar by scalar (any type).
///
/// # Safety
/// As for [`unpack_external`]; `input` must hold the external32 size.
unsafe fn unpack_each(ty: &Datatype, base: *mut u8, count: usize, input: &[u8]) -> Result<usize> {
    let base = base as usize;
    let ext = ty.layout().extent();
    let mut pos = 0usize;
    for e in 0..count {
        let origin = (e as i64).wrapping_mul(ext);
        for_each_leaf(ty, origin, &mut |p, disp| {
            let at = base.wrapping_add(disp as usize);
            for &(off, s) in scalars(p) {
                let n = s.ext_size();
                // SAFETY: this scalar is part of the caller's writable type map.
                unsafe { decode(s, &input[pos..pos + n], at.wrapping_add(off)) };
                pos += n;
            }
            Ok(())
        })?;
    }
    Ok(pos)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The bulk path gives the bytes and values of the scalar-by-scalar one.
    #[test]
    fn bulk_conversion_matches_scalar_conversion() {
        let int = Datatype::predefined(Predefined::Int);
        let vec = Datatype::vector(3, 2, 5, &int).unwrap();
        let cases = [
            (Datatype::predefined(Predefined::Byte), 1),
            (Datatype::predefined(Predefined::Short), 2),
            (int.clone(), 4),
            (Datatype::predefined(Predefined::Double), 8),
            (Datatype::predefined(Predefined::FloatInt), 4),
            (Datatype::predefined(Predefined::DoubleComplex), 8),
            (vec, 4),
        ];
        let src: Vec<u8> = (0..4096u32).map(|i| (i * 37 + i / 251) as u8).collect();
        for (ty, w) in cases {
            assert_eq!(uniform_width(&ty), Some(w), "{ty:?}");
            let count = 4096 / ty.extent() as usize - 1;
            let need = pack_external_size(&ty, count).unwrap();
            let (mut bulk, mut each) = (vec![0u8; need], vec![0u8; need]);
            // SAFETY: `src` holds `count` elements of every type here.
            unsafe {
                pack_external(&ty, src.as_ptr(), count, &mut bulk).unwrap();
                pack_each(&ty, src.as_ptr(), count, &mut each).unwrap();
            }
            assert_eq!(bulk, each, "{ty:?}");
            let (mut a, mut b) = (vec![0u8; 4096], vec![0u8; 4096]);
            // SAFETY: as above, for writing.
            unsafe {
                unpack_external(&ty, a.as_mut_ptr(), count, &bulk).unwrap();
                unpack_each(&ty, b.as_mut_ptr(), count, &bulk).unwrap();
            }
            assert_eq!(a, b, "{ty:?}");
        }
        for p in [
            Predefined::Long,
            Predefined::Wchar,
            Predefined::DoubleInt,
            Predefined::LongDouble,
        ] {
            assert_eq!(uniform_width(&Datatype::predefined(p)), None, "{p:?}");
        }
    }

    fn x87_of_f64(v: f64) -> (u64, u16) {
        // Exact widening of a normal f64 to x87 extended.
        let b = v.to_bits();
        let sign = ((b >> 63) as u16) << 15;
        let e = ((b >> 52) & 0x7ff) as u16;
        let f = b & ((1 << 52) - 1);
        if e == 0 && f == 0 {
            return (0, sign);
        }
        assert!(e != 0 && e != 0x7ff, "normal values only");
        ((1 << 63) | (f << 11), sign | (e - 1023 + 16383))
    }

    #[test]
    fn binary128_of_simple_values() {
        assert_eq!(
            x87_to_binary128(x87_of_f64(1.0).0, x87_of_f64(1.0).1),
            0x3fffu128 << 112
        );
        assert_eq!(
            x87_to_binary128(x87_of_f64(2.0).0, x87_of_f64(2.0).1),
            0x4000u128 << 112
        );
        let (m, e) = x87_of_f64(-1.5);
        assert_eq!(x87_to_binary128(m, e), (0xbfffu128 << 112) | (1u128 << 111));
        assert_eq!(x87_to_binary128(0, 0x8000), 1u128 << 127); // -0.0
        assert_eq!(x87_to_binary128(1 << 63, 0x7fff), 0x7fffu128 << 112); // +inf
        let nan = x87_to_binary128(0xc000_0000_0000_0000, 0x7fff);
        assert_eq!(nan >> 112, 0x7fff);
        assert_ne!(nan & ((1u128 << 112) - 1), 0);
        assert_eq!(
            x87_to_binary128(0x4000_0000_0000_0000, 0x3fff) >> 112,
            0x7fff
        ); // unnormal -> NaN
    }

    #[test]
    fn x87_round_trips_through_binary128() {
        let samples: [(u64, u16); 7] = [
            (0x8000_0000_0000_0001, 0x3fff),
            (0xffff_ffff_ffff_ffff, 0x7ffe), // largest finite
            (0x8000_0000_0000_0000, 0x0001), // smallest normal
            (0x0000_0000_0000_0001, 0x0000), // smallest denormal
            (0x7fff_ffff_ffff_ffff, 0x8000), // largest negative denormal
            (0x8000_0000_0000_0000, 0xffff), // -inf
            (0xc123_4567_89ab_cdef, 0x4abc),
        ];
        for (m, e) in samples {
            assert_eq!(
                binary128_to_x87(x87_to_binary128(m, e)),
                (m, e),
                "{m:x} {e:x}"
            );
        }
        // A pseudo-denormal reads as the equal smallest normal number.
        assert_eq!(binary128_to_x87(x87_to_binary128(1 << 63, 0)), (1 << 63, 1));
    }

    #[test]
    fn binary128_rounds_to_nearest_even() {
        let one = 0x3fffu128 << 112;
        // 1 + 2^-64: exactly half an x87 ulp above 1 -> ties to even (1.0).
        assert_eq!(binary128_to_x87(one | (1u128 << 48)), (1 << 63, 0x3fff));
        // Slightly more than half -> rounds up.
        assert_eq!(
            binary128_to_x87(one | (1u128 << 48) | 1),
            ((1 << 63) | 1, 0x3fff)
        );
        // 1 + 3 * 2^-64: half above an odd significand -> rounds up to even.
        assert_eq!(
            binary128_to_x87(one | (3u128 << 48)),
            ((1 << 63) | 2, 0x3fff)
        );
        // All-ones fraction rounds up into the next binade.
        assert_eq!(
            binary128_to_x87(one | ((1u128 << 112) - 1)),
            (1 << 63, 0x4000)
        );
        // The largest binary128 overflows to infinity.
        assert_eq!(
            binary128_to_x87((0x7ffeu128 << 112) | ((1u128 << 112) - 1)),
            (1 << 63, 0x7fff)
        );
        // A binary128 subnormal far below x87's range flushes to zero.
        assert_eq!(binary128_to_x87(1), (0, 0));
    }

    #[test]
    fn sizes_follow_the_standard_table() {
        use Predefined as P;
        for (p, n) in [
            (P::Long, 4),
            (P::UnsignedLong, 4),
            (P::Wchar, 2),
            (P::LongDouble, 16),
            (P::CBool, 1),
            (P::Aint, 8),
            (P::Count, 8),
            (P::Offset, 8),
            (P::LongLongInt, 8),
            (P::CLongDoubleComplex, 32),
            (P::Complex32, 32),
            (P::Logical, 4),
            (P::LongInt, 8),
            (P::DoubleInt, 12),
            (P::Lb, 0),
        ] {
            assert_eq!(size_of(p), n, "{}", p.name());
        }
        for p in Predefined::ALL {
            let native: usize = scalars(*p)
                .iter()
                .map(|(o, s)| {
                    o + match s {
                        Scalar::Resize { native, .. } => *native as usize,
                        other => other.ext_size(),
                    }
                })
                .max()
                .unwrap_or(0);
            assert!(
                native <= p.extent(),
                "{} scalars exceed the element",
                p.name()
            );
        }
    }
}
