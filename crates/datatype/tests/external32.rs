//! external32: exact bytes for each kind of conversion, round trips through derived
//! types, and the error cases.

mod common;

use common::{desc, flatten_n, Arena};
use oxmpi_datatype::{
    pack_external, pack_external_size, unpack_external, Datatype, ErrorClass, Predefined as P,
};
use proptest::prelude::*;

fn packed<T: Copy>(p: P, vals: &[T]) -> Vec<u8> {
    let t = Datatype::from(p);
    assert_eq!(std::mem::size_of::<T>(), t.extent() as usize);
    let mut out = vec![0u8; pack_external_size(&t, vals.len()).unwrap()];
    // SAFETY: `vals` holds `vals.len()` elements of the type.
    let n = unsafe { pack_external(&t, vals.as_ptr().cast(), vals.len(), &mut out) }.unwrap();
    assert_eq!(n, out.len());
    out
}

fn unpacked<T: Copy + Default>(p: P, bytes: &[u8], count: usize) -> Vec<T> {
    let t = Datatype::from(p);
    let mut v = vec![T::default(); count];
    // SAFETY: `v` holds `count` elements of the type.
    let n = unsafe { unpack_external(&t, v.as_mut_ptr().cast(), count, bytes) }.unwrap();
    assert_eq!(n, bytes.len());
    v
}

#[test]
fn integers_are_big_endian_with_standard_sizes() {
    assert_eq!(
        packed(P::Int, &[1i32, -2]),
        [0, 0, 0, 1, 0xff, 0xff, 0xff, 0xfe]
    );
    // MPI_LONG is 4 bytes in external32.
    assert_eq!(
        packed(P::Long, &[1i64, -2]),
        [0, 0, 0, 1, 0xff, 0xff, 0xff, 0xfe]
    );
    assert_eq!(
        unpacked::<i64>(P::Long, &[0, 0, 0, 1, 0xff, 0xff, 0xff, 0xfe], 2),
        [1, -2]
    );
    assert_eq!(
        packed(P::UnsignedLong, &[0xfffe_fffdu64]),
        [0xff, 0xfe, 0xff, 0xfd]
    );
    assert_eq!(
        unpacked::<u64>(P::UnsignedLong, &[0xff, 0xfe, 0xff, 0xfd], 1),
        [0xfffe_fffd]
    );
    assert_eq!(
        packed(P::LongLongInt, &[1i64, -2]),
        [0, 0, 0, 0, 0, 0, 0, 1, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe]
    );
    assert_eq!(packed(P::Short, &[0x1234i16]), [0x12, 0x34]);
    assert_eq!(
        packed(P::Aint, &[0x0102_0304_0506_0708i64]),
        [1, 2, 3, 4, 5, 6, 7, 8]
    );
    assert_eq!(packed(P::CBool, &[1u8, 0]), [1, 0]);
    // MPI_WCHAR is 2 bytes; Linux wchar_t is 4.
    assert_eq!(packed(P::Wchar, &[0x20ACi32]), [0x20, 0xAC]);
    assert_eq!(unpacked::<i32>(P::Wchar, &[0xff, 0xfe], 1), [0xfffe]);
}

#[test]
fn floats_and_complex() {
    assert_eq!(
        packed(P::Float, &[1.0f32, 2.0]),
        [0x3f, 0x80, 0, 0, 0x40, 0, 0, 0]
    );
    assert_eq!(packed(P::Double, &[-2.0f64]), [0xc0, 0, 0, 0, 0, 0, 0, 0]);
    assert_eq!(
        packed(P::CFloatComplex, &[[1.0f32, 2.0]]),
        [0x3f, 0x80, 0, 0, 0x40, 0, 0, 0]
    );
    let back: Vec<[f64; 2]> = unpacked(
        P::CDoubleComplex,
        &packed(P::CDoubleComplex, &[[1.5f64, -0.25]]),
        1,
    );
    assert_eq!(back, [[1.5, -0.25]]);
    // REAL*16 is binary128 already: only the byte order changes.
    let q: u128 = 0x3fff_8000_0000_0000_0000_0000_0000_0001;
    assert_eq!(packed(P::Real16, &[q]), q.to_be_bytes());
}

#[cfg(target_arch = "x86_64")]
#[test]
fn long_double_is_binary128() {
    // x87 1.0 and 2.0 as stored in memory (16 bytes each, 6 of them padding).
    let x87 = |mant: u64, se: u16| {
        let mut b = [0u8; 16];
        b[..8].copy_from_slice(&mant.to_le_bytes());
        b[8..10].copy_from_slice(&se.to_le_bytes());
        b
    };
    let vals = [x87(1 << 63, 0x3fff), x87(1 << 63, 0x4000)];
    let out = packed(P::LongDouble, &vals);
    let mut want = vec![0u8; 32];
    want[0] = 0x3f;
    want[1] = 0xff;
    want[16] = 0x40;
    assert_eq!(out, want);
    assert_eq!(unpacked::<[u8; 16]>(P::LongDouble, &out, 2), vals);
    // long double pairs and complex.
    let pair: [u8; 32] = {
        let mut b = [0u8; 32];
        b[..16].copy_from_slice(&x87(1 << 63, 0xbfff));
        b[16..20].copy_from_slice(&7i32.to_ne_bytes());
        b
    };
    let out = packed(P::LongDoubleInt, &[pair]);
    assert_eq!(out.len(), 20);
    assert_eq!(&out[..2], &[0xbf, 0xff]);
    assert_eq!(&out[16..], &[0, 0, 0, 7]);
}

#[test]
fn conversion_and_size_errors() {
    let long = Datatype::from(P::Long);
    let mut out = [0u8; 4];
    let v = [1i64 << 40];
    // SAFETY: one long.
    let e = unsafe { pack_external(&long, v.as_ptr().cast(), 1, &mut out) }.unwrap_err();
    assert_eq!(e.class(), ErrorClass::ErrConversion);
    assert!(
        e.to_string().contains("MPI_LONG") && e.to_string().contains("1099511627776"),
        "{e}"
    );
    let w = [0x1F600i32];
    // SAFETY: one wchar_t.
    let e = unsafe { pack_external(&Datatype::from(P::Wchar), w.as_ptr().cast(), 1, &mut out) }
        .unwrap_err();
    assert_eq!(e.class(), ErrorClass::ErrConversion);
    // Too small an output buffer, too short an input.
    let ints = [1i32, 2, 3];
    let int = Datatype::from(P::Int);
    let mut small = [0u8; 11];
    // SAFETY: three ints.
    let e = unsafe { pack_external(&int, ints.as_ptr().cast(), 3, &mut small) }.unwrap_err();
    assert_eq!(e.class(), ErrorClass::ErrTruncate);
    assert!(
        e.to_string().contains("11") && e.to_string().contains("12"),
        "{e}"
    );
    let mut dst = [0i32; 3];
    // SAFETY: three ints.
    let e = unsafe { unpack_external(&int, dst.as_mut_ptr().cast(), 3, &small) }.unwrap_err();
    assert_eq!(e.class(), ErrorClass::ErrTruncate);
    assert_eq!(pack_external_size(&int, usize::MAX), None);
}

#[test]
fn derived_types_pack_without_padding() {
    // struct { char; double; } with its padding, two elements.
    let s = Datatype::create_struct(
        &[1, 1],
        &[0, 8],
        &[Datatype::from(P::Char), Datatype::from(P::Double)],
    )
    .unwrap();
    assert_eq!(pack_external_size(&s, 2), Some(18));
    let mut mem = [0u8; 32];
    mem[0] = b'a';
    mem[8..16].copy_from_slice(&1.0f64.to_ne_bytes());
    mem[16] = b'b';
    mem[24..32].copy_from_slice(&2.0f64.to_ne_bytes());
    let mut out = [0u8; 18];
    // SAFETY: two elements of extent 16 fit in `mem`.
    let packed = unsafe { pack_external(&s, mem.as_ptr(), 2, &mut out) };
    assert_eq!(packed.unwrap(), 18);
    assert_eq!(
        out,
        [b'a', 0x3f, 0xf0, 0, 0, 0, 0, 0, 0, b'b', 0x40, 0, 0, 0, 0, 0, 0, 0]
    );
    let mut back = [0u8; 32];
    // SAFETY: as above.
    unsafe { unpack_external(&s, back.as_mut_ptr(), 2, &out) }.unwrap();
    for i in [0, 16] {
        assert_eq!(back[i], mem[i]);
    }
    assert_eq!(back[8..16], mem[8..16]);
    assert_eq!(back[24..32], mem[24..32]);
    assert_eq!(back[1..8], [0; 7], "padding untouched");
}

proptest! {
    // Random derived types whose leaves convert exactly: external32 is the type map's
    // primitives byte-reversed, and unpacking restores the memory.
    #[test]
    fn external32_round_trip(d in desc(), count in 0usize..3) {
        let Some(t) = d.build() else { return Ok(()) };
        prop_assume!(t.size() <= 4096 && t.true_extent() <= 1 << 16 && t.extent().unsigned_abs() <= 1 << 16);
        let map = flatten_n(&t, count);
        // LongDouble bytes from a pattern may be invalid x87 encodings.
        prop_assume!(map.iter().all(|e| e.pred != P::LongDouble));
        let src = Arena::for_map(&map, |i| (i as u8).wrapping_mul(29).wrapping_add(3));
        let mut want = Vec::new();
        for e in &map {
            let a = src.at(e.disp);
            let bytes = &src.bytes[a..a + e.len];
            // Complex numbers are two scalars, each reversed.
            let scalar = if e.prim == oxmpi_datatype::Primitive::C32 { 4 } else { e.len };
            for chunk in bytes.chunks(scalar) {
                want.extend(chunk.iter().rev());
            }
        }
        let size = pack_external_size(&t, count).unwrap();
        prop_assert_eq!(size, want.len());
        let mut out = vec![0u8; size];
        // SAFETY: the arena covers the type map.
        let n = unsafe { pack_external(&t, src.ptr(), count, &mut out) }.unwrap();
        prop_assert_eq!(n, size);
        prop_assert_eq!(&out, &want);
        let mut back = Arena::for_map(&map, |_| 0xA5);
        // SAFETY: as above.
        unsafe { unpack_external(&t, back.mut_ptr(), count, &out) }.unwrap();
        let mut again = vec![0u8; size];
        // SAFETY: as above.
        unsafe { pack_external(&t, back.ptr(), count, &mut again) }.unwrap();
        // Overlapping entries make "restore" ambiguous; re-packing must agree when none overlap.
        let mut sorted = map.clone();
        sorted.sort_by_key(|e| e.disp);
        if sorted.windows(2).all(|w| w[0].disp + w[0].len as i64 <= w[1].disp) {
            prop_assert_eq!(&again, &out);
        }
    }
}
