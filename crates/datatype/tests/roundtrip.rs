//! Property tests: random nested types (depth <= 4) against the naive reference of
//! `common` — pack, resumable pack, unpack into guard-filled memory, block iteration,
//! element counting, signatures and true bounds.

mod common;

use common::{desc, flatten, flatten_n, ref_pack, ref_unpack, Arena, Entry};
use oxmpi_datatype::{pack, unpack, Datatype, Signature};
use proptest::prelude::*;

fn pattern(i: usize) -> u8 {
    (i as u8).wrapping_mul(37).wrapping_add(11)
}

const GUARD_BYTE: u8 = 0xA5;

/// Splits `0..total` at the given cut points (taken modulo total).
fn pieces(total: usize, cuts: &[usize]) -> Vec<(usize, usize)> {
    let mut pts: Vec<usize> = cuts
        .iter()
        .map(|c| if total == 0 { 0 } else { c % (total + 1) })
        .collect();
    pts.push(0);
    pts.push(total);
    pts.sort_unstable();
    pts.dedup();
    pts.windows(2).map(|w| (w[0], w[1] - w[0])).collect()
}

fn small_enough(t: &Datatype) -> bool {
    t.size() <= 4096 && t.extent().unsigned_abs() <= 1 << 16 && t.true_extent() <= 1 << 16
}

proptest! {
    #[test]
    fn pack_unpack_match_reference(d in desc(), count in 0usize..4, cuts in prop::collection::vec(0usize..5000, 0..4)) {
        let Some(t) = d.build() else { return Ok(()) };
        prop_assume!(small_enough(&t));
        if count % 2 == 0 { t.commit(); }
        let map = flatten_n(&t, count);
        let one: Vec<Entry> = flatten(&t);

        // Layout consistency with the type map.
        prop_assert_eq!(t.size(), one.iter().map(|e| e.len).sum::<usize>());
        if let (Some(lo), Some(hi)) = (one.iter().map(|e| e.disp).min(), one.iter().map(|e| e.disp + e.len as i64).max()) {
            prop_assert_eq!(t.true_lb() as i64, lo);
            prop_assert_eq!(t.true_ub() as i64, hi);
        }

        let src = Arena::for_map(&map, pattern);
        let expect = ref_pack(&map, &src);
        let total = expect.len();

        // One-shot pack.
        let mut out = vec![0u8; total + 8];
        // SAFETY: the arena covers the whole type map of `count` elements.
        let n = unsafe { pack(&t, src.ptr(), count, 0, &mut out) };
        prop_assert_eq!(n, total);
        prop_assert_eq!(&out[..n], &expect[..]);

        // Resumable pack at random split points.
        let mut joined = Vec::new();
        for (off, len) in pieces(total, &cuts) {
            let mut buf = vec![0u8; len];
            // SAFETY: as above.
            let got = unsafe { pack(&t, src.ptr(), count, off, &mut buf) };
            prop_assert_eq!(got, len);
            joined.extend_from_slice(&buf);
        }
        prop_assert_eq!(&joined, &expect);
        // Past the end nothing moves.
        // SAFETY: as above.
        prop_assert_eq!(unsafe { pack(&t, src.ptr(), count, total, &mut out) }, 0);

        // Unpack (in pieces) into guard-filled memory equals the reference unpack.
        let incoming: Vec<u8> = (0..total).map(|i| pattern(i + 101)).collect();
        let mut dst = Arena::for_map(&map, |_| GUARD_BYTE);
        let mut want = Arena::for_map(&map, |_| GUARD_BYTE);
        ref_unpack(&map, &mut want, &incoming);
        for (off, len) in pieces(total, &cuts) {
            // SAFETY: the arena covers the whole type map.
            let got = unsafe { unpack(&t, dst.mut_ptr(), count, off, &incoming[off..off + len]) };
            prop_assert_eq!(got, len);
        }
        prop_assert!(dst.bytes == want.bytes, "unpack differs from reference");

        // unpack(pack(x)) restores the type map bytes and leaves the rest alone.
        let mut back = Arena::for_map(&map, |_| GUARD_BYTE);
        // SAFETY: as above.
        unsafe { unpack(&t, back.mut_ptr(), count, 0, &expect) };
        let mut touched = vec![false; back.bytes.len()];
        for e in &map {
            let a = back.at(e.disp);
            touched[a..a + e.len].iter_mut().for_each(|x| *x = true);
        }
        for (i, b) in back.bytes.iter().enumerate() {
            if touched[i] { prop_assert_eq!(*b, src.bytes[i]); } else { prop_assert_eq!(*b, GUARD_BYTE); }
        }
    }

    #[test]
    fn blocks_cover_the_stream(d in desc(), count in 0usize..4, from in 0usize..5000, len in 0usize..5000) {
        let Some(t) = d.build() else { return Ok(()) };
        prop_assume!(small_enough(&t));
        let map = flatten_n(&t, count);
        let src = Arena::for_map(&map, pattern);
        let expect = ref_pack(&map, &src);
        let total = expect.len();
        let from = if total == 0 { 0 } else { from % (total + 1) };
        let end = (from + len).min(total);
        let mut got = Vec::new();
        let mut prev: Option<(isize, usize)> = None;
        for (disp, n) in t.blocks(count, from, len) {
            prop_assert!(n > 0);
            if let Some((pd, pn)) = prev {
                prop_assert!(pd + pn as isize != disp, "adjacent pieces were not merged");
            }
            let a = src.at(disp as i64);
            got.extend_from_slice(&src.bytes[a..a + n]);
            prev = Some((disp, n));
        }
        prop_assert_eq!(&got[..], &expect[from..end]);

        // The zero-copy answer agrees with the type map.
        if let Some((disp, n)) = t.contiguous_block(count) {
            prop_assert_eq!(n, total);
            let mut at = disp as i64;
            for e in &map {
                prop_assert_eq!(e.disp, at);
                at += e.len as i64;
            }
        }
    }

    #[test]
    fn elements_and_signature_match_reference(d in desc(), count in 0usize..4, cut in 0usize..5000) {
        let Some(t) = d.build() else { return Ok(()) };
        prop_assume!(small_enough(&t));
        let map = flatten_n(&t, count);
        let total: usize = map.iter().map(|e| e.len).sum();
        let bytes = if total == 0 { 0 } else { cut % (total + 1) };
        let mut used = 0;
        let mut whole = 0u64;
        for e in &map {
            used += e.len;
            if used > bytes { break; }
            whole += 1;
        }
        prop_assert_eq!(t.elements_in(bytes as u64), whole);
        let sig = map.iter().fold(Signature::EMPTY, |s, e| s.then(Signature::of(e.prim)));
        prop_assert_eq!(t.signature().repeat(count as u64), sig);
        prop_assert_eq!(sig.elements(), map.len() as u64);
        prop_assert_eq!(t.element_count() * count as u64, map.len() as u64);
        let mut preds: Vec<_> = flatten(&t).iter().map(|e| e.pred).collect();
        preds.dedup();
        preds.sort_by_key(|p| *p as u32);
        preds.dedup();
        prop_assert_eq!(t.basic_type(), if preds.len() == 1 { Some(preds[0]) } else { None });
    }
}
