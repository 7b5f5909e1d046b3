//! Every (operation, predefined type) pair against a reference computed element by
//! element with plain Rust arithmetic, plus the standard's special rules.

use super::x87::F80;
use super::*;
use oxmpi_datatype::{Category, Predefined, Primitive};

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

/// A random, interesting value of one primitive, written into `out`.
fn fill_prim(rng: &mut Rng, p: Primitive, out: &mut [u8]) {
    let r = rng.next();
    match p {
        Primitive::F32 => {
            let v = match r % 16 {
                0 => f32::NAN,
                1 => -0.0,
                2 => 0.0,
                3 => f32::INFINITY,
                _ => ((r >> 8) % 2001) as f32 / 8.0 - 125.0,
            };
            out[..4].copy_from_slice(&v.to_ne_bytes());
        }
        Primitive::F64 => {
            let v = match r % 16 {
                0 => f64::NAN,
                1 => -0.0,
                2 => 0.0,
                3 => f64::NEG_INFINITY,
                _ => ((r >> 8) % 200001) as f64 / 64.0 - 1500.0,
            };
            out[..8].copy_from_slice(&v.to_ne_bytes());
        }
        Primitive::LongDouble => {
            let v = match r % 16 {
                0 => f64::NAN,
                1 => -0.0,
                2 => f64::INFINITY,
                _ => ((r >> 8) % 2001) as f64 - 1000.0,
            };
            F80::from_f64(v).store(out);
            // Padding bytes stay random.
        }
        Primitive::C32 => {
            fill_prim(rng, Primitive::F32, out);
            fill_prim(rng, Primitive::F32, &mut out[4..]);
        }
        Primitive::C64 => {
            fill_prim(rng, Primitive::F64, out);
            fill_prim(rng, Primitive::F64, &mut out[8..]);
        }
        Primitive::CLongDouble => {
            for half in [0, 16] {
                let v = ((rng.next() >> 8) % 201) as f64 - 100.0;
                F80::from_f64(v).store(&mut out[half..]);
            }
        }
        Primitive::F16 => {
            // Small integers: sums and products stay exact in binary16.
            let v = ((r >> 8) % 17) as f32 - 8.0;
            out[..2].copy_from_slice(&exact_half(v).to_ne_bytes());
        }
        Primitive::C16 => {
            fill_prim(rng, Primitive::F16, out);
            fill_prim(rng, Primitive::F16, &mut out[2..]);
        }
        Primitive::Bool => out[0] = [0, 1, 1, 2][(r % 4) as usize],
        Primitive::Logical => {
            out[..4].copy_from_slice(&[0u32, 1, 1, 7][(r % 4) as usize].to_ne_bytes())
        }
        _ => {
            // Integers and raw bytes: a mix of small values and the extremes.
            for b in out[..p.size()].iter_mut() {
                *b = (rng.next() >> 3) as u8;
            }
        }
    }
}

/// The binary16 bits of `v`, which must be zero or a normal binary16 value exactly
/// (the test values are small integers), by moving the `f32` fields.
fn exact_half(v: f32) -> u16 {
    if v == 0.0 {
        return 0;
    }
    let b = v.to_bits();
    let exp = (b >> 23) & 0xff;
    assert!(
        b & 0x1fff == 0 && (113..143).contains(&exp),
        "{v} is not an exact binary16"
    );
    (((b >> 16) & 0x8000) | ((exp - 112) << 10) | ((b >> 13) & 0x3ff)) as u16
}

/// The value of binary16 bits that [`exact_half`] made (zero or normal).
fn half_value(h: u16) -> f32 {
    let e = i32::from((h >> 10) & 0x1f);
    let m = f32::from(h & 0x3ff);
    let sign = if h & 0x8000 != 0 { -1.0 } else { 1.0 };
    if e == 0 {
        return sign * m * 2f32.powi(-24);
    }
    sign * (1.0 + m / 1024.0) * 2f32.powi(e - 15)
}

fn f80_to_f64_exact(v: F80) -> f64 {
    // Only used on values produced from f64 by exact arithmetic in these tests.
    let m = u64::from_le_bytes(v.0[..8].try_into().unwrap());
    let se = u16::from_le_bytes([v.0[8], v.0[9]]);
    let sign = if se >> 15 == 1 { -1.0 } else { 1.0 };
    let e = (se & 0x7fff) as i32;
    if e == 0x7fff {
        return if m << 1 == 0 {
            sign * f64::INFINITY
        } else {
            f64::NAN
        };
    }
    if m == 0 {
        return sign * 0.0;
    }
    sign * (m as f64) * 2f64.powi(e - 16383 - 63)
}

/// Reference result for one primitive element: `out = a op b`.
fn reference_prim(op: PredefinedOp, p: Primitive, a: &[u8], b: &[u8], out: &mut [u8]) {
    use PredefinedOp as O;
    macro_rules! ints {
        ($t:ty) => {{
            let x = <$t>::from_ne_bytes(a[..std::mem::size_of::<$t>()].try_into().unwrap());
            let y = <$t>::from_ne_bytes(b[..std::mem::size_of::<$t>()].try_into().unwrap());
            let r: $t = match op {
                O::Max => x.max(y),
                O::Min => x.min(y),
                O::Sum => x.wrapping_add(y),
                O::Prod => x.wrapping_mul(y),
                O::Band => x & y,
                O::Bor => x | y,
                O::Bxor => x ^ y,
                O::Land => ((x != 0) && (y != 0)) as $t,
                O::Lor => ((x != 0) || (y != 0)) as $t,
                O::Lxor => ((x != 0) ^ (y != 0)) as $t,
                _ => panic!("{op:?}"),
            };
            out[..std::mem::size_of::<$t>()].copy_from_slice(&r.to_ne_bytes());
        }};
    }
    macro_rules! floats {
        ($t:ty) => {{
            let x = <$t>::from_ne_bytes(a[..std::mem::size_of::<$t>()].try_into().unwrap());
            let y = <$t>::from_ne_bytes(b[..std::mem::size_of::<$t>()].try_into().unwrap());
            let r: $t = match op {
                O::Max => {
                    if x > y {
                        x
                    } else {
                        y
                    }
                }
                O::Min => {
                    if x < y {
                        x
                    } else {
                        y
                    }
                }
                O::Sum => x + y,
                O::Prod => x * y,
                _ => panic!("{op:?}"),
            };
            out[..std::mem::size_of::<$t>()].copy_from_slice(&r.to_ne_bytes());
        }};
    }
    macro_rules! complex {
        ($t:ty) => {{
            const H: usize = std::mem::size_of::<$t>();
            let g =
                |s: &[u8], i: usize| <$t>::from_ne_bytes(s[i * H..(i + 1) * H].try_into().unwrap());
            let (ar, ai, br, bi) = (g(a, 0), g(a, 1), g(b, 0), g(b, 1));
            let (re, im) = match op {
                O::Sum => (ar + br, ai + bi),
                O::Prod => (ar * br - ai * bi, ar * bi + ai * br),
                _ => panic!("{op:?}"),
            };
            out[..H].copy_from_slice(&re.to_ne_bytes());
            out[H..2 * H].copy_from_slice(&im.to_ne_bytes());
        }};
    }
    match p {
        Primitive::I8 => ints!(i8),
        Primitive::I16 => ints!(i16),
        Primitive::I32 => ints!(i32),
        Primitive::I64 => ints!(i64),
        Primitive::U8 => ints!(u8),
        Primitive::U16 => ints!(u16),
        Primitive::U32 => ints!(u32),
        Primitive::U64 => ints!(u64),
        Primitive::Byte => ints!(u8),
        Primitive::F32 => floats!(f32),
        Primitive::F64 => floats!(f64),
        Primitive::C32 => complex!(f32),
        Primitive::C64 => complex!(f64),
        Primitive::Bool => ints!(u8),
        Primitive::Logical => ints!(u32),
        Primitive::Logical2 => ints!(u16),
        Primitive::Logical8 => ints!(u64),
        Primitive::Logical16 => ints!(u128),
        Primitive::F16 | Primitive::C16 => {
            let g = |s: &[u8], i: usize| half_value(u16::from_ne_bytes([s[2 * i], s[2 * i + 1]]));
            let parts: Vec<f32> = if p == Primitive::F16 {
                let (x, y) = (g(a, 0), g(b, 0));
                vec![match op {
                    O::Max => x.max(y),
                    O::Min => x.min(y),
                    O::Sum => x + y,
                    O::Prod => x * y,
                    _ => panic!("{op:?}"),
                }]
            } else {
                let (ar, ai, br, bi) = (g(a, 0), g(a, 1), g(b, 0), g(b, 1));
                match op {
                    O::Sum => vec![ar + br, ai + bi],
                    O::Prod => vec![ar * br - ai * bi, ar * bi + ai * br],
                    _ => panic!("{op:?}"),
                }
            };
            for (i, v) in parts.into_iter().enumerate() {
                // Keep the sign of a zero result as the kernel computes it.
                let h = if v == 0.0 && v.is_sign_negative() {
                    0x8000
                } else {
                    exact_half(v)
                };
                out[2 * i..2 * i + 2].copy_from_slice(&h.to_ne_bytes());
            }
        }
        Primitive::LongDouble => {
            let (x, y) = (
                f80_to_f64_exact(F80::load(a)),
                f80_to_f64_exact(F80::load(b)),
            );
            let r = match op {
                O::Max => {
                    if x > y {
                        F80::load(a)
                    } else {
                        F80::load(b)
                    }
                }
                O::Min => {
                    if x < y {
                        F80::load(a)
                    } else {
                        F80::load(b)
                    }
                }
                O::Sum => F80::from_f64(x + y),
                O::Prod => F80::from_f64(x * y),
                _ => panic!("{op:?}"),
            };
            r.store(out);
        }
        Primitive::CLongDouble => {
            let g = |s: &[u8], i: usize| f80_to_f64_exact(F80::load(&s[i * 16..]));
            let (ar, ai, br, bi) = (g(a, 0), g(a, 1), g(b, 0), g(b, 1));
            let (re, im) = match op {
                O::Sum => (ar + br, ai + bi),
                O::Prod => (ar * br - ai * bi, ar * bi + ai * br),
                _ => panic!("{op:?}"),
            };
            F80::from_f64(re).store(out);
            F80::from_f64(im).store(&mut out[16..]);
        }
        Primitive::F128 | Primitive::C128 => panic!("no arithmetic on binary128"),
    }
}

fn read_f64ish(p: Primitive, s: &[u8]) -> f64 {
    match p {
        Primitive::F32 => f32::from_ne_bytes(s[..4].try_into().unwrap()) as f64,
        Primitive::F64 => f64::from_ne_bytes(s[..8].try_into().unwrap()),
        Primitive::I16 => i16::from_ne_bytes(s[..2].try_into().unwrap()) as f64,
        Primitive::I32 => i32::from_ne_bytes(s[..4].try_into().unwrap()) as f64,
        Primitive::I64 => i64::from_ne_bytes(s[..8].try_into().unwrap()) as f64,
        Primitive::LongDouble => f80_to_f64_exact(F80::load(s)),
        other => panic!("{other:?}"),
    }
}

/// Reference MINLOC/MAXLOC/REPLACE on one pair element at `base` (value at 0, index at `io`).
fn reference_pair(op: PredefinedOp, ty: Predefined, io: usize, a: &[u8], b: &mut [u8]) {
    let (vp, ip) = (ty.primitives()[0], ty.primitives()[1]);
    let (vs, is) = (vp.size(), ip.size());
    if op == PredefinedOp::Replace {
        b[..vs].copy_from_slice(&a[..vs]);
        b[io..io + is].copy_from_slice(&a[io..io + is]);
        return;
    }
    let (va, vb) = (read_f64ish(vp, a), read_f64ish(vp, b));
    let (ia, ib) = (read_f64ish(ip, &a[io..]), read_f64ish(ip, &b[io..]));
    let better = if op == PredefinedOp::Maxloc {
        va > vb
    } else {
        va < vb
    };
    if better {
        let vlen = if vp == Primitive::LongDouble { 10 } else { vs };
        b[..vlen].copy_from_slice(&a[..vlen]);
        b[io..io + is].copy_from_slice(&a[io..io + is]);
    } else if va == vb && ia < ib {
        b[io..io + is].copy_from_slice(&a[io..io + is]);
    }
}

fn fill_pair(rng: &mut Rng, ty: Predefined, io: usize, out: &mut [u8]) {
    let (vp, ip) = (ty.primitives()[0], ty.primitives()[1]);
    let small = (rng.next() % 4) as i64; // few distinct values: many ties
    let idx = (rng.next() % 6) as i64;
    let put = |p: Primitive, v: i64, s: &mut [u8]| match p {
        Primitive::F32 => s[..4].copy_from_slice(&(v as f32).to_ne_bytes()),
        Primitive::F64 => s[..8].copy_from_slice(&(v as f64).to_ne_bytes()),
        Primitive::I16 => s[..2].copy_from_slice(&(v as i16).to_ne_bytes()),
        Primitive::I32 => s[..4].copy_from_slice(&(v as i32).to_ne_bytes()),
        Primitive::I64 => s[..8].copy_from_slice(&v.to_ne_bytes()),
        Primitive::LongDouble => F80::from_f64(v as f64).store(s),
        other => panic!("{other:?}"),
    };
    put(vp, small - 1, out);
    put(ip, idx, &mut out[io..]);
}

fn check_type_op(ty: Predefined, op: PredefinedOp, layout: Layout, seed: u64) {
    let mut rng = Rng(seed | 1);
    let count = 37;
    let size = ty.size();
    let stride = if layout == Layout::Extent {
        ty.extent()
    } else {
        size
    };
    let prims = ty.primitives();
    // One spare byte in front so the data is unaligned.
    let mut input = vec![0u8; 1 + count * stride];
    let mut inout = vec![0u8; 1 + count * stride];
    for b in input.iter_mut().chain(inout.iter_mut()) {
        *b = rng.next() as u8;
    }
    let pair = ty.category() == Category::Pair;
    let io = if layout == Layout::Extent {
        ty.offsets().get(1).copied().unwrap_or(0)
    } else {
        prims[0].size()
    };
    for k in 0..count {
        let at = 1 + k * stride;
        if pair {
            fill_pair(&mut rng, ty, io, &mut input[at..]);
            fill_pair(&mut rng, ty, io, &mut inout[at..]);
        } else if ty.category() != Category::Other
            && ty.category() != Category::Byte
            && !matches!(prims[0], Primitive::F128 | Primitive::C128)
        {
            fill_prim(&mut rng, prims[0], &mut input[at..]);
            fill_prim(&mut rng, prims[0], &mut inout[at..]);
        } else if k % 3 == 0 {
            // Zeros among the random text bytes, for the logical operations.
            input[at] = 0;
        }
    }
    let mut expected = inout.clone();
    for k in 0..count {
        let at = 1 + k * stride;
        if op == PredefinedOp::NoOp {
            continue;
        }
        if pair {
            let a = input[at..at + stride.max(size)].to_vec();
            reference_pair(op, ty, io, &a, &mut expected[at..]);
        } else if op == PredefinedOp::Replace {
            expected[at..at + size].copy_from_slice(&input[at..at + size]);
        } else {
            let b = inout[at..].to_vec();
            // Text types reduce as signed char (the extension), checked by value below.
            let p = if prims[0] == Primitive::Byte && ty.category() == Category::Other {
                Primitive::I8
            } else {
                prims[0]
            };
            reference_prim(op, p, &input[at..], &b, &mut expected[at..]);
        }
    }
    let span = if pair && layout == Layout::Extent {
        io + prims[1].size()
    } else {
        size
    };
    let n = (count - 1) * stride + span;
    reduce(
        op,
        ty,
        layout,
        &input[1..1 + n],
        &mut inout[1..1 + n],
        count,
    )
    .unwrap();
    for k in 0..count {
        let at = 1 + k * stride;
        // The whole element including padding (only the data span of the last one).
        let end = (at + stride).min(1 + n);
        let (got, want) = (&inout[at..end], &expected[at..end]);
        if got != want {
            // NaN results compare by NaN-ness only.
            let nan = |p: Primitive, s: &[u8]| match p {
                Primitive::F32 | Primitive::C32 => s
                    .chunks(4)
                    .any(|c| f32::from_ne_bytes(c.try_into().unwrap()).is_nan()),
                Primitive::F64 | Primitive::C64 => s
                    .chunks(8)
                    .any(|c| f64::from_ne_bytes(c.try_into().unwrap()).is_nan()),
                Primitive::LongDouble | Primitive::CLongDouble => s
                    .chunks(16)
                    .any(|c| f80_to_f64_exact(F80::load(c)).is_nan()),
                _ => false,
            };
            assert!(
                !pair && nan(prims[0], got) && nan(prims[0], want),
                "{op} on {} ({layout:?}) element {k}: got {got:?}, want {want:?}",
                ty.name()
            );
        }
    }
    // Bytes outside the elements (the spare byte in front) are untouched.
    assert_eq!(inout[0], expected[0]);
}

#[test]
fn every_valid_pair_matches_reference() {
    let mut checked = 0;
    for (ti, &ty) in Predefined::ALL.iter().enumerate() {
        for (oi, &op) in PredefinedOp::ALL.iter().enumerate() {
            if !op_valid(op, ty) {
                continue;
            }
            for layout in [Layout::Extent, Layout::Packed] {
                check_type_op(ty, op, layout, (ti * 100 + oi) as u64 * 7919 + 13);
            }
            checked += 1;
        }
    }
    assert!(checked > 300, "only {checked} pairs checked");
}

#[test]
fn table_follows_the_standard() {
    use Predefined as T;
    use PredefinedOp as O;
    let valid = [
        (O::Sum, T::SignedChar),
        (O::Sum, T::UnsignedChar),
        (O::Max, T::Int),
        (O::Max, T::Integer2),
        (O::Max, T::LongDouble),
        (O::Prod, T::DoubleComplex),
        (O::Sum, T::CLongDoubleComplex),
        (O::Land, T::Int),
        (O::Land, T::Logical),
        (O::Lxor, T::CBool),
        (O::Lor, T::CxxBool),
        (O::Band, T::Byte),
        (O::Band, T::Integer),
        (O::Bxor, T::Aint),
        (O::Sum, T::Count),
        (O::Max, T::Offset),
        (O::Minloc, T::DoubleInt),
        (O::Maxloc, T::TwoDoublePrecision),
        (O::Maxloc, T::LongDoubleInt),
        (O::Replace, T::Char),
        (O::Replace, T::Real16),
        (O::NoOp, T::Packed),
    ];
    for (op, ty) in valid {
        assert!(op_valid(op, ty), "{op} on {} should be valid", ty.name());
    }
    let invalid = [
        (O::Minloc, T::Char),
        (O::Maxloc, T::Character),
        (O::Sum, T::Wchar),
        (O::Land, T::Wchar),
        (O::Band, T::Packed),
        (O::Sum, T::Packed),
        (O::Sum, T::Byte),
        (O::Land, T::Byte),
        (O::Land, T::Integer),
        (O::Lor, T::Integer4),
        (O::Land, T::Double),
        (O::Lor, T::Float),
        (O::Lxor, T::LongDouble),
        (O::Max, T::Complex),
        (O::Max, T::Logical),
        (O::Sum, T::CBool),
        (O::Band, T::Double),
        (O::Band, T::Logical),
        (O::Minloc, T::Int),
        (O::Sum, T::TwoInt),
        (O::Replace, T::Lb),
        (O::Sum, T::Ub),
    ];
    for (op, ty) in invalid {
        assert_eq!(
            check_op(op, ty),
            Err(OpError::NotDefined { op, ty }),
            "{op} on {}",
            ty.name()
        );
    }
    for op in [O::Sum, O::Prod, O::Max, O::Min] {
        assert_eq!(
            check_op(op, T::Real16),
            Err(OpError::Unsupported { op, ty: T::Real16 })
        );
    }
    // COMPLEX*32 is two binary128 values, not two x87 long doubles: refused, not miscomputed.
    for op in [O::Sum, O::Prod] {
        assert_eq!(
            check_op(op, T::Complex32),
            Err(OpError::Unsupported {
                op,
                ty: T::Complex32
            })
        );
    }
    assert!(check_op(O::Replace, T::Complex32).is_ok());
    let err = check_op(O::Sum, T::Wchar).unwrap_err();
    assert_eq!(
        err.to_string(),
        "MPI_SUM is not defined for datatype MPI_WCHAR (MPI 4.1 section 6.9.2)"
    );
    assert_eq!(err.class_name(), "MPI_ERR_OP");
    assert!(check_op(O::Sum, T::Real16)
        .unwrap_err()
        .to_string()
        .contains("MPI_REAL16"));
    // Invalid pairs are also refused by the kernels, leaving the buffer alone.
    let mut inout = [7u8; 4];
    assert!(reduce_local(O::Sum, T::Packed, &[1; 4], &mut inout, 4).is_err());
    assert_eq!(inout, [7; 4]);
}

/// The pairs outside the standard's table that MPICH and Open MPI both accept (their
/// intersection, found by trying every predefined op on every predefined type).
#[test]
fn extension_is_the_mpich_open_mpi_intersection() {
    use Predefined as T;
    use PredefinedOp as O;
    let text = [
        O::Max,
        O::Min,
        O::Sum,
        O::Prod,
        O::Land,
        O::Lor,
        O::Lxor,
        O::Band,
        O::Bor,
        O::Bxor,
    ];
    let mut want: Vec<(PredefinedOp, Predefined)> = Vec::new();
    for ty in [T::Char, T::Character] {
        want.extend(text.iter().map(|&op| (op, ty)));
    }
    for ty in [
        T::Integer1,
        T::Integer2,
        T::Integer8,
        T::Aint,
        T::Offset,
        T::Count,
    ] {
        want.extend([O::Land, O::Lor, O::Lxor].map(|op| (op, ty)));
    }
    let mut got = Vec::new();
    for &ty in Predefined::ALL {
        for op in PredefinedOp::ALL {
            if is_extension(op, ty) {
                got.push((op, ty));
                assert!(op_valid(op, ty), "{op} on {}", ty.name());
                assert!(check_collective_op(op, ty).is_ok());
            }
        }
    }
    want.sort_by_key(|&(o, t)| (t as u32, o as u8));
    got.sort_by_key(|&(o, t)| (t as u32, o as u8));
    assert_eq!(got, want);
}

/// `MPI_CHAR` arithmetic is C `signed char` arithmetic, as in MPICH and Open MPI.
#[test]
fn char_reduces_as_signed_char() {
    use Predefined as T;
    use PredefinedOp as O;
    let run = |op: O, ty: T, a: [i8; 4], b: [i8; 4]| -> [i8; 4] {
        let a = a.map(|x| x as u8);
        let mut b = b.map(|x| x as u8);
        reduce_local(op, ty, &a, &mut b, 4).unwrap();
        b.map(|x| x as i8)
    };
    let (x, y) = ([100, 100, -128, 5], [100, 27, -1, 7]);
    assert_eq!(run(O::Sum, T::Char, x, y), [-56, 127, 127, 12]);
    assert_eq!(run(O::Sum, T::Character, x, y), [-56, 127, 127, 12]);
    let (x, y) = ([100, -100, -128, 5], [-100, 27, 1, 7]);
    assert_eq!(run(O::Max, T::Char, x, y), [100, 27, 1, 7]);
    assert_eq!(run(O::Min, T::Char, x, y), [-100, -100, -128, 5]);
    let (x, y) = ([100, -100, -128, 5], [-100, 27, 2, 7]);
    assert_eq!(run(O::Prod, T::Char, x, y), [-16, 116, 0, 35]);
    let (x, y) = ([0, 2, 0, 5], [0, 0, 3, 7]);
    assert_eq!(run(O::Lxor, T::Char, x, y), [0, 1, 1, 0]);
    assert_eq!(run(O::Land, T::Character, x, y), [0, 0, 0, 1]);
    assert_eq!(run(O::Lor, T::Char, x, y), [0, 1, 1, 1]);
    assert_eq!(run(O::Bxor, T::Char, x, y), [0, 2, 3, 2]);
    // The logical operations on the Fortran-side integer types.
    let a: Vec<u8> = [0i64, 5, -2].iter().flat_map(|v| v.to_ne_bytes()).collect();
    let mut b: Vec<u8> = [7i64, 0, 0].iter().flat_map(|v| v.to_ne_bytes()).collect();
    reduce_local(O::Lor, T::Aint, &a, &mut b, 3).unwrap();
    let r: Vec<i64> = b
        .chunks(8)
        .map(|c| i64::from_ne_bytes(c.try_into().unwrap()))
        .collect();
    assert_eq!(r, [1, 1, 1]);
    // The collective kernel agrees (one pass into a third buffer).
    let k = FlatKernel::new(O::Sum, T::Char).unwrap();
    let mut out = [0u8; 2];
    k.apply_into(&[100, 0x80], &[100, 0xFF], &mut out);
    assert_eq!(out, [(-56i8) as u8, 127]);
}

#[test]
fn replace_and_no_op_are_not_for_collectives() {
    assert_eq!(
        check_collective_op(PredefinedOp::Replace, Predefined::Int),
        Err(OpError::NotForCollectives {
            op: PredefinedOp::Replace
        })
    );
    assert!(check_collective_op(PredefinedOp::NoOp, Predefined::Int).is_err());
    assert!(check_collective_op(PredefinedOp::Sum, Predefined::Int).is_ok());
    assert!(!PredefinedOp::Replace.is_commutative());
    assert!(PredefinedOp::Maxloc.is_commutative());
}

#[test]
fn handles_follow_mpich() {
    assert_eq!(PredefinedOp::Max.handle(), 0x5800_0001);
    assert_eq!(PredefinedOp::NoOp.handle(), 0x5800_000e);
    for op in PredefinedOp::ALL {
        assert_eq!(PredefinedOp::from_handle(op.handle()), Some(op));
    }
    assert_eq!(PredefinedOp::from_handle(0x5800_0000), None);
    assert_eq!(PredefinedOp::from_handle(0x5800_000f), None);
    assert_eq!(PredefinedOp::from_handle(0), None);
}

fn ints<T: Copy>(v: &[T], to: fn(T) -> Vec<u8>) -> Vec<u8> {
    v.iter().flat_map(|&x| to(x)).collect()
}

#[test]
fn integer_arithmetic_wraps() {
    let a = ints(&[i32::MAX, i32::MIN, -1], |x| x.to_ne_bytes().to_vec());
    let mut b = ints(&[1, -1, i32::MIN], |x| x.to_ne_bytes().to_vec());
    reduce_local(PredefinedOp::Sum, Predefined::Int, &a, &mut b, 3).unwrap();
    assert_eq!(
        b,
        ints(&[i32::MIN, i32::MAX, i32::MAX], |x| x
            .to_ne_bytes()
            .to_vec())
    );
    let mut c = vec![200u8, 255];
    reduce_local(
        PredefinedOp::Prod,
        Predefined::UnsignedChar,
        &[2, 255],
        &mut c,
        2,
    )
    .unwrap();
    assert_eq!(c, vec![144, 1]);
    let mut d = i64::MIN.to_ne_bytes().to_vec();
    reduce_local(
        PredefinedOp::Prod,
        Predefined::Long,
        &(-1i64).to_ne_bytes(),
        &mut d,
        1,
    )
    .unwrap();
    assert_eq!(d, i64::MIN.to_ne_bytes());
}

#[test]
fn logical_results_are_zero_or_one() {
    let mut b = ints(&[5u32, 0, 9, 0], |x| x.to_ne_bytes().to_vec());
    let a = ints(&[3u32, 0, 0, 2], |x| x.to_ne_bytes().to_vec());
    reduce_local(PredefinedOp::Land, Predefined::Logical, &a, &mut b, 4).unwrap();
    assert_eq!(b, ints(&[1u32, 0, 0, 0], |x| x.to_ne_bytes().to_vec()));
    let mut c = vec![2u8, 0, 3];
    reduce_local(PredefinedOp::Lxor, Predefined::CBool, &[1, 0, 0], &mut c, 3).unwrap();
    assert_eq!(c, vec![0, 0, 1]);
}

#[test]
fn complex_product() {
    let f = |v: &[f64]| ints(v, |x| x.to_ne_bytes().to_vec());
    let mut b = f(&[3.0, 4.0, 0.0, 1.0]);
    reduce_local(
        PredefinedOp::Prod,
        Predefined::DoubleComplex,
        &f(&[1.0, 2.0, 0.0, 1.0]),
        &mut b,
        2,
    )
    .unwrap();
    assert_eq!(b, f(&[-5.0, 10.0, -1.0, 0.0]));
    let g = |v: &[f32]| ints(v, |x| x.to_ne_bytes().to_vec());
    let mut c = g(&[3.0, 4.0]);
    reduce_local(
        PredefinedOp::Prod,
        Predefined::CFloatComplex,
        &g(&[1.0, -2.0]),
        &mut c,
        1,
    )
    .unwrap();
    assert_eq!(c, g(&[11.0, -2.0]));
    let mut e = vec![0u8; 32];
    let mut i = vec![0u8; 32];
    F80::from_f64(3.0).store(&mut e);
    F80::from_f64(4.0).store(&mut e[16..]);
    F80::from_f64(1.0).store(&mut i);
    F80::from_f64(2.0).store(&mut i[16..]);
    reduce_local(
        PredefinedOp::Prod,
        Predefined::CLongDoubleComplex,
        &i,
        &mut e,
        1,
    )
    .unwrap();
    assert_eq!(F80::load(&e), F80::from_f64(-5.0));
    assert_eq!(F80::load(&e[16..]), F80::from_f64(10.0));
}

#[test]
fn minloc_maxloc_ties_take_smaller_index() {
    let enc = |v: &[(i32, i32)]| ints(v, |(a, b)| [a.to_ne_bytes(), b.to_ne_bytes()].concat());
    let a = enc(&[(5, 9), (5, 1), (7, 3), (2, 8)]);
    let mut b = enc(&[(5, 4), (5, 4), (6, 0), (3, 0)]);
    let mut c = b.clone();
    reduce_local(PredefinedOp::Maxloc, Predefined::TwoInt, &a, &mut b, 4).unwrap();
    assert_eq!(b, enc(&[(5, 4), (5, 1), (7, 3), (3, 0)]));
    reduce_local(PredefinedOp::Minloc, Predefined::TwoInt, &a, &mut c, 4).unwrap();
    assert_eq!(c, enc(&[(5, 4), (5, 1), (6, 0), (2, 8)]));
    // MPI_DOUBLE_INT in user layout: value at 0, index at 8, extent 16.
    let mut x = vec![0u8; 16];
    let mut y = vec![0xAAu8; 16];
    x[..8].copy_from_slice(&1.5f64.to_ne_bytes());
    x[8..12].copy_from_slice(&2i32.to_ne_bytes());
    y[..8].copy_from_slice(&1.5f64.to_ne_bytes());
    y[8..12].copy_from_slice(&7i32.to_ne_bytes());
    reduce_local(PredefinedOp::Minloc, Predefined::DoubleInt, &x, &mut y, 1).unwrap();
    assert_eq!(i32::from_ne_bytes(y[8..12].try_into().unwrap()), 2);
    assert_eq!(&y[12..], &[0xAA; 4], "padding untouched");
}

#[test]
fn float_max_min_follow_c_conditional() {
    let f = |v: &[f64]| ints(v, |x| x.to_ne_bytes().to_vec());
    let mut b = f(&[f64::NAN, 1.0, -0.0]);
    reduce_local(
        PredefinedOp::Max,
        Predefined::Double,
        &f(&[1.0, f64::NAN, 0.0]),
        &mut b,
        3,
    )
    .unwrap();
    let r: Vec<f64> = b
        .chunks(8)
        .map(|c| f64::from_ne_bytes(c.try_into().unwrap()))
        .collect();
    assert!(r[0].is_nan(), "NaN in inout is kept");
    assert_eq!(r[1], 1.0, "NaN in input is ignored");
    assert!(
        r[2] == 0.0 && r[2].is_sign_negative(),
        "equal zeros keep inout"
    );
}

#[test]
fn long_double_keeps_extended_precision() {
    let one = F80::from_f64(1.0);
    // 2^-63: representable in the 64-bit significand of 1 + 2^-63, not in f64.
    let tiny = F80::from_f64(2f64.powi(-63));
    let mut inout = vec![0u8; 16];
    one.store(&mut inout);
    let mut input = vec![0u8; 16];
    tiny.store(&mut input);
    reduce_local(
        PredefinedOp::Sum,
        Predefined::LongDouble,
        &input,
        &mut inout,
        1,
    )
    .unwrap();
    let r = F80::load(&inout);
    assert_eq!(
        u64::from_le_bytes(r.0[..8].try_into().unwrap()),
        0x8000_0000_0000_0001
    );
    assert_eq!(u16::from_le_bytes([r.0[8], r.0[9]]), 16383);
    // And MAX sees the difference that f64 could not.
    let mut m = vec![0u8; 16];
    one.store(&mut m);
    reduce_local(PredefinedOp::Max, Predefined::LongDouble, &inout, &mut m, 1).unwrap();
    assert_eq!(F80::load(&m), r);
}

#[test]
fn short_buffers_are_rejected() {
    let mut out = [0u8; 7];
    let e = reduce_local(PredefinedOp::Sum, Predefined::Int, &[0; 8], &mut out, 2).unwrap_err();
    assert_eq!(
        e,
        OpError::BufferTooShort {
            which: "inout",
            needed: 8,
            len: 7
        }
    );
    // The last pair element needs only its size (12), not its extent (16).
    let mut y = [0u8; 28];
    assert!(reduce_local(
        PredefinedOp::Maxloc,
        Predefined::DoubleInt,
        &[0; 28],
        &mut y,
        2
    )
    .is_ok());
    assert!(reduce_local(
        PredefinedOp::Maxloc,
        Predefined::DoubleInt,
        &[0; 27],
        &mut y,
        2
    )
    .is_err());
}

/// Packed operands of `count` elements of `ty` with interesting values.
fn packed_operand(rng: &mut Rng, ty: Predefined, count: usize) -> Vec<u8> {
    let size = ty.size();
    let mut v = vec![0u8; count * size];
    for k in 0..count {
        let at = k * size;
        if ty.category() == Category::Pair {
            fill_pair(rng, ty, ty.primitives()[0].size(), &mut v[at..]);
        } else if ty.category() != Category::Other {
            fill_prim(rng, ty.primitives()[0], &mut v[at..]);
        } else {
            for b in &mut v[at..at + size] {
                *b = rng.next() as u8;
            }
        }
    }
    v
}

#[test]
fn three_operand_form_matches_copy_then_reduce() {
    let count = 41;
    for (ti, &ty) in Predefined::ALL.iter().enumerate() {
        for (oi, &op) in PredefinedOp::ALL.iter().enumerate() {
            if !op_valid(op, ty) {
                continue;
            }
            let mut rng = Rng((ti * 131 + oi) as u64 * 104_729 + 7);
            let a = packed_operand(&mut rng, ty, count);
            let b = packed_operand(&mut rng, ty, count);
            let mut expected = b.clone();
            reduce_packed(op, ty, &a, &mut expected, count).unwrap();
            let mut got = vec![0xA5u8; b.len()];
            reduce_packed_into(op, ty, &a, &b, &mut got, count).unwrap();
            assert_eq!(got, expected, "{op} on {ty:?}");
        }
    }
    let short = vec![0u8; 3];
    let mut out = vec![0u8; 64];
    assert!(matches!(
        reduce_packed_into(
            PredefinedOp::Sum,
            Predefined::Int,
            &short,
            &short,
            &mut out,
            2
        ),
        Err(OpError::BufferTooShort { .. })
    ));
}

#[test]
fn compiled_folds_match_the_dispatched_kernel() {
    let count = 37;
    let mut with_fold = 0;
    for (ti, &ty) in Predefined::ALL.iter().enumerate() {
        for (oi, &op) in PredefinedOp::ALL.iter().enumerate() {
            let Some(k) = FlatKernel::new(op, ty) else {
                continue;
            };
            let Some(f) = k.fold3() else {
                continue;
            };
            with_fold += 1;
            let mut rng = Rng((ti * 131 + oi) as u64 * 7_919 + 3);
            let a = packed_operand(&mut rng, ty, count);
            let b = packed_operand(&mut rng, ty, count);
            let mut expected = vec![0u8; b.len()];
            k.apply_into(&a, &b, &mut expected);
            let mut got = vec![0x5Au8; b.len()];
            f(&a, &b, &mut got);
            assert_eq!(got, expected, "{op} on {ty:?}");
        }
    }
    // At least the sums, products, extrema and bitwise operations of the plain types.
    assert!(with_fold > 60, "{with_fold} compiled folds");
    let sum = FlatKernel::new(PredefinedOp::Sum, Predefined::Double).unwrap();
    let mut out = [0u8; 8];
    sum.fold3().unwrap()(&1.5f64.to_ne_bytes(), &2.25f64.to_ne_bytes(), &mut out);
    assert_eq!(f64::from_ne_bytes(out), 3.75);
    assert!(FlatKernel::new(PredefinedOp::Land, Predefined::Int)
        .unwrap()
        .fold3()
        .is_none());
}
