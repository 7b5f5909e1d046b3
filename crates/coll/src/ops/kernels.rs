//! The element-wise loops behind `reduce`: one tight loop per (operation, primitive),
//! written over byte chunks with `from_ne_bytes` so they accept unaligned buffers and
//! still compile to vector code for the common cases (the compiler sees a fixed-size
//! load, an arithmetic op and a store per element).

use std::cmp::Ordering;

use oxmpi_datatype::Primitive;

use super::x87::F80;
use super::PredefinedOp as O;
use super::PredefinedOp;

/// A fixed-size machine value read from and written to native-endian bytes.
pub(crate) trait Scalar: Copy {
    const SIZE: usize;
    /// A machine type whose in-memory form is exactly its `SIZE` native-endian bytes
    /// (every plain integer and float), which [`zip`] may read and write in place.
    const NATIVE: bool = false;
    fn load(b: &[u8]) -> Self;
    fn store(self, b: &mut [u8]);
}

macro_rules! scalar {
    ($($t:ty),*) => {$(
        impl Scalar for $t {
            const SIZE: usize = std::mem::size_of::<$t>();
            const NATIVE: bool = true;
            #[inline(always)]
            fn load(b: &[u8]) -> Self {
                let mut a = [0u8; std::mem::size_of::<$t>()];
                a.copy_from_slice(&b[..std::mem::size_of::<$t>()]);
                <$t>::from_ne_bytes(a)
            }
            #[inline(always)]
            fn store(self, b: &mut [u8]) {
                b[..std::mem::size_of::<$t>()].copy_from_slice(&self.to_ne_bytes());
            }
        }
    )*};
}
scalar!(i8, i16, i32, i64, u8, u16, u32, u64, u128, f32, f64);

/// An IEEE binary16 value (Fortran `REAL*2`), computed on as `f32`: every binary16 is
/// exactly an `f32`, and one `f32` operation rounded once to binary16 gives the
/// correctly rounded binary16 result for `+` and `*`.
#[derive(Clone, Copy)]
struct Half(u16);

impl Half {
    fn to_f32(self) -> f32 {
        let h = u32::from(self.0);
        let sign = (h & 0x8000) << 16;
        let exp = (h >> 10) & 0x1f;
        let man = h & 0x3ff;
        let bits = match (exp, man) {
            (0, 0) => sign,
            // Subnormal: normalise the mantissa into an f32 exponent.
            (0, m) => {
                let shift = m.leading_zeros() - 21;
                sign | ((113 - shift) << 23) | ((m << (shift + 13)) & 0x7f_ffff)
            }
            (0x1f, m) => sign | 0x7f80_0000 | (m << 13),
            (e, m) => sign | ((e + 112) << 23) | (m << 13),
        };
        f32::from_bits(bits)
    }

    /// Rounds to nearest, ties to even; overflow gives infinity, NaN stays NaN.
    fn from_f32(x: f32) -> Half {
        let b = x.to_bits();
        let sign = ((b >> 16) & 0x8000) as u16;
        let exp = ((b >> 23) & 0xff) as i32;
        let man = b & 0x7f_ffff;
        if exp == 0xff {
            return Half(sign | 0x7c00 | if man != 0 { 0x200 } else { 0 });
        }
        let e = exp - 127 + 15;
        if e >= 0x1f {
            return Half(sign | 0x7c00);
        }
        // The value's significand with its implicit bit, and how far to shift it right
        // so that its last kept bit is the binary16 unit in the last place.
        let (sig, shift) = if e <= 0 {
            if e < -10 {
                return Half(sign);
            }
            (man | 0x80_0000, (14 - e) as u32)
        } else {
            (man | 0x80_0000, 13)
        };
        let kept = sig >> shift;
        let rest = sig & ((1 << shift) - 1);
        let half = 1 << (shift - 1);
        let mut v = kept + u32::from(rest > half || (rest == half && kept & 1 == 1));
        if e > 0 {
            // Normal: the implicit bit becomes the exponent's (a carry out of the
            // significand raises the exponent, up to infinity).
            v = ((e as u32) << 10) + (v - 0x400);
        }
        Half(sign | v as u16)
    }
}

impl Scalar for Half {
    const SIZE: usize = 2;
    #[inline(always)]
    fn load(b: &[u8]) -> Self {
        Half(u16::load(b))
    }
    #[inline(always)]
    fn store(self, b: &mut [u8]) {
        self.0.store(b)
    }
}

fn half_op(f: impl Fn(f32, f32) -> f32) -> impl Fn(Half, Half) -> Half {
    move |a, b| Half::from_f32(f(a.to_f32(), b.to_f32()))
}

fn float16(op: PredefinedOp, input: &[u8], inout: &mut [u8]) {
    match op {
        O::Max => zip::<Half>(
            input,
            inout,
            |a, b| if a.to_f32() > b.to_f32() { a } else { b },
        ),
        O::Min => zip::<Half>(
            input,
            inout,
            |a, b| if a.to_f32() < b.to_f32() { a } else { b },
        ),
        O::Sum => zip::<Half>(input, inout, half_op(|a, b| a + b)),
        O::Prod => zip::<Half>(input, inout, half_op(|a, b| a * b)),
        _ => unreachable!("not a floating-point operation: {op}"),
    }
}

fn complex16(op: PredefinedOp, input: &[u8], inout: &mut [u8]) {
    match op {
        O::Sum => zip::<Half>(input, inout, half_op(|a, b| a + b)),
        O::Prod => {
            for (o, i) in inout.chunks_exact_mut(4).zip(input.chunks_exact(4)) {
                let (ar, ai) = (Half::load(i).to_f32(), Half::load(&i[2..]).to_f32());
                let (br, bi) = (Half::load(o).to_f32(), Half::load(&o[2..]).to_f32());
                Half::from_f32(ar * br - ai * bi).store(o);
                Half::from_f32(ar * bi + ai * br).store(&mut o[2..]);
            }
        }
        _ => unreachable!("not a complex operation: {op}"),
    }
}

impl Scalar for F80 {
    const SIZE: usize = 16;
    #[inline(always)]
    fn load(b: &[u8]) -> Self {
        F80::load(b)
    }
    #[inline(always)]
    fn store(self, b: &mut [u8]) {
        F80::store(self, b)
    }
}

/// `inout[k] = f(input[k], inout[k])` over whole elements of `T`.
#[inline(always)]
fn zip<T: Scalar>(input: &[u8], inout: &mut [u8], f: impl Fn(T, T) -> T) {
    if T::NATIVE && std::mem::size_of::<T>() == T::SIZE {
        // An indexed loop of unaligned loads and stores: the compiler turns it into
        // vector code (the chunk iterators below it does not, at a third of the rate).
        let n = inout.len().min(input.len()) / T::SIZE;
        let src = input.as_ptr() as *const T;
        let dst = inout.as_mut_ptr() as *mut T;
        for k in 0..n {
            // SAFETY: element k lies inside both slices (k < n, n elements of SIZE
            // bytes fit each); T is a plain machine type valid for any bit pattern
            // (NATIVE), read and written unaligned; the slices do not overlap (one is
            // borrowed mutably).
            unsafe {
                let v = f(src.add(k).read_unaligned(), dst.add(k).read_unaligned());
                dst.add(k).write_unaligned(v);
            }
        }
        return;
    }
    for (o, i) in inout
        .chunks_exact_mut(T::SIZE)
        .zip(input.chunks_exact(T::SIZE))
    {
        f(T::load(i), T::load(o)).store(o);
    }
}

/// Integer types: wrapping arithmetic, bitwise and logical operations.
trait Int: Scalar + Ord + Eq {
    const ZERO: Self;
    const ONE: Self;
    fn wadd(self, o: Self) -> Self;
    fn wmul(self, o: Self) -> Self;
    fn and(self, o: Self) -> Self;
    fn or(self, o: Self) -> Self;
    fn xor(self, o: Self) -> Self;
}

macro_rules! int {
    ($($t:ty),*) => {$(
        impl Int for $t {
            const ZERO: Self = 0;
            const ONE: Self = 1;
            #[inline(always)] fn wadd(self, o: Self) -> Self { self.wrapping_add(o) }
            #[inline(always)] fn wmul(self, o: Self) -> Self { self.wrapping_mul(o) }
            #[inline(always)] fn and(self, o: Self) -> Self { self & o }
            #[inline(always)] fn or(self, o: Self) -> Self { self | o }
            #[inline(always)] fn xor(self, o: Self) -> Self { self ^ o }
        }
    )*};
}
int!(i8, i16, i32, i64, u8, u16, u32, u64, u128);

#[inline(always)]
fn truth<T: Int>(b: bool) -> T {
    if b {
        T::ONE
    } else {
        T::ZERO
    }
}

fn integer<T: Int>(op: PredefinedOp, input: &[u8], inout: &mut [u8]) {
    match op {
        O::Max => zip::<T>(input, inout, |a, b| if a > b { a } else { b }),
        O::Min => zip::<T>(input, inout, |a, b| if a < b { a } else { b }),
        O::Sum => zip::<T>(input, inout, T::wadd),
        O::Prod => zip::<T>(input, inout, T::wmul),
        O::Band => zip::<T>(input, inout, T::and),
        O::Bor => zip::<T>(input, inout, T::or),
        O::Bxor => zip::<T>(input, inout, T::xor),
        O::Land | O::Lor | O::Lxor => logical::<T>(op, input, inout),
        O::Minloc | O::Maxloc | O::Replace | O::NoOp => {
            unreachable!("not an integer operation: {op}")
        }
    }
}

/// Logical operations on an integer-shaped truth value: non-zero is true, results 0/1.
fn logical<T: Int>(op: PredefinedOp, input: &[u8], inout: &mut [u8]) {
    match op {
        O::Land => zip::<T>(input, inout, |a, b| truth(a != T::ZERO && b != T::ZERO)),
        O::Lor => zip::<T>(input, inout, |a, b| truth(a != T::ZERO || b != T::ZERO)),
        O::Lxor => zip::<T>(input, inout, |a, b| truth((a != T::ZERO) != (b != T::ZERO))),
        _ => unreachable!("not a logical operation: {op}"),
    }
}

/// Bitwise operations on uninterpreted bytes.
fn bytes(op: PredefinedOp, input: &[u8], inout: &mut [u8]) {
    match op {
        O::Band => zip::<u8>(input, inout, |a, b| a & b),
        O::Bor => zip::<u8>(input, inout, |a, b| a | b),
        O::Bxor => zip::<u8>(input, inout, |a, b| a ^ b),
        _ => unreachable!("not a byte operation: {op}"),
    }
}

macro_rules! float_kernel {
    ($name:ident, $t:ty) => {
        fn $name(op: PredefinedOp, input: &[u8], inout: &mut [u8]) {
            match op {
                O::Max => zip::<$t>(input, inout, |a, b| if a > b { a } else { b }),
                O::Min => zip::<$t>(input, inout, |a, b| if a < b { a } else { b }),
                O::Sum => zip::<$t>(input, inout, |a, b| a + b),
                O::Prod => zip::<$t>(input, inout, |a, b| a * b),
                _ => unreachable!("not a floating-point operation: {op}"),
            }
        }
    };
}
float_kernel!(float32, f32);
float_kernel!(float64, f64);

fn long_double(op: PredefinedOp, input: &[u8], inout: &mut [u8]) {
    let gt = |a: F80, b: F80| a.compare(b) == Some(Ordering::Greater);
    let lt = |a: F80, b: F80| a.compare(b) == Some(Ordering::Less);
    match op {
        O::Max => zip::<F80>(input, inout, |a, b| if gt(a, b) { a } else { b }),
        O::Min => zip::<F80>(input, inout, |a, b| if lt(a, b) { a } else { b }),
        O::Sum => zip::<F80>(input, inout, F80::add),
        O::Prod => zip::<F80>(input, inout, F80::mul),
        _ => unreachable!("not a floating-point operation: {op}"),
    }
}

macro_rules! complex_kernel {
    ($name:ident, $t:ty) => {
        fn $name(op: PredefinedOp, input: &[u8], inout: &mut [u8]) {
            const H: usize = std::mem::size_of::<$t>();
            let pairs = inout.chunks_exact_mut(2 * H).zip(input.chunks_exact(2 * H));
            match op {
                O::Sum => {
                    // Component-wise: the same as a flat real sum.
                    zip::<$t>(input, inout, |a, b| a + b)
                }
                O::Prod => {
                    for (o, i) in pairs {
                        let (ar, ai) = (<$t>::load(i), <$t>::load(&i[H..]));
                        let (br, bi) = (<$t>::load(o), <$t>::load(&o[H..]));
                        (ar * br - ai * bi).store(o);
                        (ar * bi + ai * br).store(&mut o[H..]);
                    }
                }
                _ => unreachable!("not a complex operation: {op}"),
            }
        }
    };
}
complex_kernel!(complex32, f32);
complex_kernel!(complex64, f64);

fn complex_long_double(op: PredefinedOp, input: &[u8], inout: &mut [u8]) {
    for (o, i) in inout.chunks_exact_mut(32).zip(input.chunks_exact(32)) {
        let (ar, ai) = (F80::load(i), F80::load(&i[16..]));
        let (br, bi) = (F80::load(o), F80::load(&o[16..]));
        let (re, im) = match op {
            O::Sum => (ar.add(br), ai.add(bi)),
            O::Prod => (ar.mul(br).add(ai.mul(bi).neg()), ar.mul(bi).add(ai.mul(br))),
            _ => unreachable!("not a complex operation: {op}"),
        };
        re.store(o);
        im.store(&mut o[16..]);
    }
}

/// Apply `op` to whole elements of one primitive (every non-pair type).
pub(super) fn elementwise(op: PredefinedOp, prim: Primitive, input: &[u8], inout: &mut [u8]) {
    if op == O::Replace {
        inout.copy_from_slice(input);
        return;
    }
    match prim {
        Primitive::I8 => integer::<i8>(op, input, inout),
        Primitive::I16 => integer::<i16>(op, input, inout),
        Primitive::I32 => integer::<i32>(op, input, inout),
        Primitive::I64 => integer::<i64>(op, input, inout),
        Primitive::U8 => integer::<u8>(op, input, inout),
        Primitive::U16 => integer::<u16>(op, input, inout),
        Primitive::U32 => integer::<u32>(op, input, inout),
        Primitive::U64 => integer::<u64>(op, input, inout),
        Primitive::F32 => float32(op, input, inout),
        Primitive::F64 => float64(op, input, inout),
        Primitive::LongDouble => long_double(op, input, inout),
        Primitive::C32 => complex32(op, input, inout),
        Primitive::C64 => complex64(op, input, inout),
        Primitive::CLongDouble => complex_long_double(op, input, inout),
        Primitive::Bool => logical::<u8>(op, input, inout),
        Primitive::Logical => logical::<u32>(op, input, inout),
        Primitive::Logical2 => logical::<u16>(op, input, inout),
        Primitive::Logical8 => logical::<u64>(op, input, inout),
        Primitive::Logical16 => logical::<u128>(op, input, inout),
        Primitive::F16 => float16(op, input, inout),
        Primitive::C16 => complex16(op, input, inout),
        Primitive::Byte => bytes(op, input, inout),
        Primitive::F128 | Primitive::C128 => {
            unreachable!("check_op admits no arithmetic on binary128")
        }
    }
}

/// `out[k] = f(a[k], b[k])` over whole elements of a plain machine type `T`.
#[inline(always)]
fn zip3<T: Scalar>(a: &[u8], b: &[u8], out: &mut [u8], f: impl Fn(T, T) -> T) {
    debug_assert!(T::NATIVE && std::mem::size_of::<T>() == T::SIZE);
    let n = out.len().min(a.len()).min(b.len()) / T::SIZE;
    let (pa, pb, po) = (
        a.as_ptr() as *const T,
        b.as_ptr() as *const T,
        out.as_mut_ptr() as *mut T,
    );
    for k in 0..n {
        // SAFETY: element k lies inside all three slices; T is a plain machine type valid
        // for any bit pattern, read and written unaligned; `out` is borrowed mutably, so
        // it overlaps neither input.
        unsafe {
            let v = f(pa.add(k).read_unaligned(), pb.add(k).read_unaligned());
            po.add(k).write_unaligned(v);
        }
    }
}

#[inline(always)]
fn integer3<T: Int>(op: PredefinedOp, a: &[u8], b: &[u8], out: &mut [u8]) -> bool {
    match op {
        O::Max => zip3::<T>(a, b, out, |x, y| if x > y { x } else { y }),
        O::Min => zip3::<T>(a, b, out, |x, y| if x < y { x } else { y }),
        O::Sum => zip3::<T>(a, b, out, T::wadd),
        O::Prod => zip3::<T>(a, b, out, T::wmul),
        O::Band => zip3::<T>(a, b, out, T::and),
        O::Bor => zip3::<T>(a, b, out, T::or),
        O::Bxor => zip3::<T>(a, b, out, T::xor),
        _ => return false,
    }
    true
}

macro_rules! float_kernel3 {
    ($name:ident, $t:ty) => {
        #[inline(always)]
        fn $name(op: PredefinedOp, a: &[u8], b: &[u8], out: &mut [u8]) -> bool {
            match op {
                O::Max => zip3::<$t>(a, b, out, |x, y| if x > y { x } else { y }),
                O::Min => zip3::<$t>(a, b, out, |x, y| if x < y { x } else { y }),
                O::Sum => zip3::<$t>(a, b, out, |x, y| x + y),
                O::Prod => zip3::<$t>(a, b, out, |x, y| x * y),
                _ => return false,
            }
            true
        }
    };
}
float_kernel3!(float32_3, f32);
float_kernel3!(float64_3, f64);

/// `out = a op b` in one pass for the arithmetic, ordering and bitwise operations on
/// plain integers and binary floats (and complex sums); false, touching nothing, for
/// the rest.
pub(super) fn elementwise3(
    op: PredefinedOp,
    prim: Primitive,
    a: &[u8],
    b: &[u8],
    out: &mut [u8],
) -> bool {
    match prim {
        Primitive::I8 => integer3::<i8>(op, a, b, out),
        Primitive::I16 => integer3::<i16>(op, a, b, out),
        Primitive::I32 => integer3::<i32>(op, a, b, out),
        Primitive::I64 => integer3::<i64>(op, a, b, out),
        Primitive::U8 => integer3::<u8>(op, a, b, out),
        Primitive::U16 => integer3::<u16>(op, a, b, out),
        Primitive::U32 => integer3::<u32>(op, a, b, out),
        Primitive::U64 => integer3::<u64>(op, a, b, out),
        Primitive::F32 => float32_3(op, a, b, out),
        Primitive::F64 => float64_3(op, a, b, out),
        Primitive::C32 if op == O::Sum => float32_3(op, a, b, out),
        Primitive::C64 if op == O::Sum => float64_3(op, a, b, out),
        _ => false,
    }
}

/// `out = a op b` over whole elements, compiled for one (operation, primitive) pair:
/// what a planned call resolves once and then applies with no dispatch.
pub type Fold3 = fn(&[u8], &[u8], &mut [u8]);

fn int3_of<T: Int, const OP: usize>(a: &[u8], b: &[u8], out: &mut [u8]) {
    integer3::<T>(PredefinedOp::ALL[OP], a, b, out);
}

fn f32_3_of<const OP: usize>(a: &[u8], b: &[u8], out: &mut [u8]) {
    float32_3(PredefinedOp::ALL[OP], a, b, out);
}

fn f64_3_of<const OP: usize>(a: &[u8], b: &[u8], out: &mut [u8]) {
    float64_3(PredefinedOp::ALL[OP], a, b, out);
}

fn int3_for<T: Int>(op: PredefinedOp) -> Option<Fold3> {
    Some(match op {
        O::Max => int3_of::<T, { O::Max as usize }>,
        O::Min => int3_of::<T, { O::Min as usize }>,
        O::Sum => int3_of::<T, { O::Sum as usize }>,
        O::Prod => int3_of::<T, { O::Prod as usize }>,
        O::Band => int3_of::<T, { O::Band as usize }>,
        O::Bor => int3_of::<T, { O::Bor as usize }>,
        O::Bxor => int3_of::<T, { O::Bxor as usize }>,
        _ => return None,
    })
}

macro_rules! float3_for {
    ($name:ident, $of:ident) => {
        fn $name(op: PredefinedOp) -> Option<Fold3> {
            Some(match op {
                O::Max => $of::<{ O::Max as usize }>,
                O::Min => $of::<{ O::Min as usize }>,
                O::Sum => $of::<{ O::Sum as usize }>,
                O::Prod => $of::<{ O::Prod as usize }>,
                _ => return None,
            })
        }
    };
}
float3_for!(f32_3_for, f32_3_of);
float3_for!(f64_3_for, f64_3_of);

/// The [`Fold3`] of `op` on `prim`: the pairs [`elementwise3`] computes in one pass.
pub(super) fn fold3(op: PredefinedOp, prim: Primitive) -> Option<Fold3> {
    match prim {
        Primitive::I8 => int3_for::<i8>(op),
        Primitive::I16 => int3_for::<i16>(op),
        Primitive::I32 => int3_for::<i32>(op),
        Primitive::I64 => int3_for::<i64>(op),
        Primitive::U8 => int3_for::<u8>(op),
        Primitive::U16 => int3_for::<u16>(op),
        Primitive::U32 => int3_for::<u32>(op),
        Primitive::U64 => int3_for::<u64>(op),
        Primitive::F32 => f32_3_for(op),
        Primitive::F64 => f64_3_for(op),
        Primitive::C32 if op == O::Sum => f32_3_for(op),
        Primitive::C64 if op == O::Sum => f64_3_for(op),
        _ => None,
    }
}

/// A value or index of a pair type, compared like C's relational operators.
trait Ordered: Scalar {
    fn cmp_c(self, o: Self) -> Option<Ordering>;
}

macro_rules! ordered {
    ($($t:ty),*) => {$(
        impl Ordered for $t {
            #[inline(always)]
            fn cmp_c(self, o: Self) -> Option<Ordering> { self.partial_cmp(&o) }
        }
    )*};
}
ordered!(i16, i32, i64, f32, f64);

impl Ordered for F80 {
    fn cmp_c(self, o: Self) -> Option<Ordering> {
        self.compare(o)
    }
}

/// Geometry of one pair buffer: element stride and where the index sits in an element.
#[derive(Clone, Copy)]
struct PairShape {
    index_off: usize,
    stride: usize,
    count: usize,
}

fn pair_typed<V: Ordered, I: Ordered>(
    op: PredefinedOp,
    shape: PairShape,
    input: &[u8],
    inout: &mut [u8],
) {
    let PairShape {
        index_off,
        stride,
        count,
    } = shape;
    for k in 0..count {
        let base = k * stride;
        let (va, ia) = (V::load(&input[base..]), I::load(&input[base + index_off..]));
        let (vb, ib) = (V::load(&inout[base..]), I::load(&inout[base + index_off..]));
        let take_input = match op {
            O::Maxloc => va.cmp_c(vb) == Some(Ordering::Greater),
            O::Minloc => va.cmp_c(vb) == Some(Ordering::Less),
            _ => unreachable!("not a pair operation: {op}"),
        };
        if take_input {
            va.store(&mut inout[base..]);
            ia.store(&mut inout[base + index_off..]);
        } else if va.cmp_c(vb) == Some(Ordering::Equal) && ia.cmp_c(ib) == Some(Ordering::Less) {
            // Equal values: the smaller index wins.
            ia.store(&mut inout[base + index_off..]);
        }
    }
}

fn pair_value<V: Ordered>(
    op: PredefinedOp,
    index: Primitive,
    shape: PairShape,
    input: &[u8],
    inout: &mut [u8],
) {
    match index {
        Primitive::I32 => pair_typed::<V, i32>(op, shape, input, inout),
        Primitive::F32 => pair_typed::<V, f32>(op, shape, input, inout),
        Primitive::F64 => pair_typed::<V, f64>(op, shape, input, inout),
        Primitive::I64 => pair_typed::<V, i64>(op, shape, input, inout),
        Primitive::I16 => pair_typed::<V, i16>(op, shape, input, inout),
        other => unreachable!("no predefined pair type has a {other:?} index"),
    }
}

/// `MINLOC` / `MAXLOC` / `REPLACE` on a pair type (value, index) laid out with
/// `stride` bytes per element and the index at `index_off`.
#[allow(clippy::too_many_arguments)]
pub(super) fn pair(
    op: PredefinedOp,
    value: Primitive,
    index: Primitive,
    index_off: usize,
    stride: usize,
    input: &[u8],
    inout: &mut [u8],
    count: usize,
) {
    if op == O::Replace {
        // A byte move of the value and the index; padding stays untouched.
        let (vs, is) = (value.size(), index.size());
        for k in 0..count {
            let base = k * stride;
            inout[base..base + vs].copy_from_slice(&input[base..base + vs]);
            let at = base + index_off;
            inout[at..at + is].copy_from_slice(&input[at..at + is]);
        }
        return;
    }
    let shape = PairShape {
        index_off,
        stride,
        count,
    };
    match value {
        Primitive::I16 => pair_value::<i16>(op, index, shape, input, inout),
        Primitive::I32 => pair_value::<i32>(op, index, shape, input, inout),
        Primitive::I64 => pair_value::<i64>(op, index, shape, input, inout),
        Primitive::F32 => pair_value::<f32>(op, index, shape, input, inout),
        Primitive::F64 => pair_value::<f64>(op, index, shape, input, inout),
        Primitive::LongDouble => pair_value::<F80>(op, index, shape, input, inout),
        other => unreachable!("no predefined pair type has a {other:?} value"),
    }
}

#[cfg(test)]
mod half_tests {
    use super::Half;

    #[test]
    fn every_binary16_round_trips_through_f32() {
        for h in 0..=u16::MAX {
            let f = Half(h).to_f32();
            if f.is_nan() {
                assert!(Half::from_f32(f).to_f32().is_nan());
                continue;
            }
            assert_eq!(Half::from_f32(f).0, h, "binary16 {h:#06x} = {f}");
        }
    }

    #[test]
    fn rounding_to_binary16() {
        let r = |x: f32| Half::from_f32(x).to_f32();
        assert_eq!(r(1.0 + 1.0 / 4096.0), 1.0); // below half an ulp
        assert_eq!(r(1.0 + 3.0 / 2048.0), 1.0 + 2.0 / 1024.0); // tie to even, up
        assert_eq!(r(1.0 + 1.0 / 2048.0), 1.0); // tie to even, down
        assert_eq!(r(65504.0), 65504.0);
        assert_eq!(r(65520.0), f32::INFINITY);
        assert_eq!(r(-1e9), f32::NEG_INFINITY);
        assert_eq!(r(2f32.powi(-24)), 2f32.powi(-24)); // smallest subnormal
        assert_eq!(r(2f32.powi(-26)), 0.0);
        assert_eq!(r(3.0 * 2f32.powi(-25)), 2.0 * 2f32.powi(-24)); // subnormal tie to even
        assert_eq!(Half::from_f32(-0.0).0, 0x8000);
    }
}
