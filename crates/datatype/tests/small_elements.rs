//! Many elements of small fixed-layout structs (the compiled loops of `pack.rs`):
//! pack and unpack, whole and resumed at odd offsets, against the naive reference.

mod common;

use common::{flatten_n, ref_pack, ref_unpack, Arena};
use oxmpi_datatype::{pack, unpack, Datatype, Predefined as P};

fn st(items: &[(i64, P)], extent: Option<i64>) -> Datatype {
    let b: Vec<i64> = items.iter().map(|_| 1).collect();
    let d: Vec<i64> = items.iter().map(|x| x.0).collect();
    let ty: Vec<Datatype> = items.iter().map(|x| Datatype::predefined(x.1)).collect();
    let t = Datatype::create_struct(&b, &d, &ty).unwrap();
    match extent {
        Some(e) => Datatype::resized(&t, 0, e).unwrap(),
        None => t,
    }
}

fn check(t: &Datatype, count: usize) {
    t.commit();
    let map = flatten_n(t, count);
    let src = Arena::for_map(&map, |i| (i as u8).wrapping_mul(29).wrapping_add(3));
    let expect = ref_pack(&map, &src);
    let total = expect.len();
    let mut out = vec![0u8; total];
    // SAFETY: the arena covers the type map of `count` elements.
    assert_eq!(unsafe { pack(t, src.ptr(), count, 0, &mut out) }, total);
    assert_eq!(out, expect);
    // Resumed at offsets that cut elements and blocks.
    for step in [1usize, 5, 13, 4096 + 7] {
        let mut joined = Vec::new();
        let mut off = 0;
        while off < total {
            let mut piece = vec![0u8; step.min(total - off)];
            // SAFETY: as above.
            let n = unsafe { pack(t, src.ptr(), count, off, &mut piece) };
            assert_eq!(n, piece.len());
            joined.extend_from_slice(&piece);
            off += n;
        }
        assert_eq!(joined, expect, "pack in pieces of {step}");
    }
    let incoming: Vec<u8> = (0..total).map(|i| (i as u8).wrapping_mul(7)).collect();
    let mut want = Arena::for_map(&map, |_| 0xA5);
    ref_unpack(&map, &mut want, &incoming);
    for step in [total, 3, 4096 + 9] {
        let mut dst = Arena::for_map(&map, |_| 0xA5);
        let mut off = 0;
        while off < total {
            let end = (off + step).min(total);
            // SAFETY: the arena covers the type map; `incoming` is separate.
            let n = unsafe { unpack(t, dst.mut_ptr(), count, off, &incoming[off..end]) };
            assert_eq!(n, end - off);
            off = end;
        }
        assert!(dst.bytes == want.bytes, "unpack in pieces of {step}");
    }
}

#[test]
fn pairs_of_scalars() {
    for count in [1usize, 2, 1000] {
        check(&st(&[(0, P::Int), (8, P::Double)], None), count);
        check(&st(&[(0, P::Int), (8, P::Double)], Some(24)), count);
        check(&st(&[(0, P::Double), (8, P::Int)], None), count);
        check(&st(&[(0, P::Char), (2, P::Short)], None), count);
        check(&st(&[(0, P::LongDouble), (16, P::Char)], None), count);
        // A width outside the compiled pairs (12 bytes) takes the general loop.
        check(
            &st(&[(0, P::Int), (8, P::Double), (16, P::Int)], None),
            count,
        );
    }
}

#[test]
fn general_small_shapes() {
    for count in [1usize, 3, 777] {
        check(
            &st(&[(0, P::Int), (8, P::Float), (16, P::Double)], None),
            count,
        );
        check(
            &st(
                &[(0, P::Char), (4, P::Int), (12, P::Short), (16, P::Double)],
                Some(40),
            ),
            count,
        );
    }
}
