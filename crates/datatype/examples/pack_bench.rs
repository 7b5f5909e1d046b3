//! Micro benchmark (run by hand, no assertions):
//! `cargo run --release -p oxmpi-datatype --example pack_bench`
//!
//! Packs strided vectors with 4 KiB, 64 B and 8 B blocks and compares the throughput
//! with `memcpy` of the same number of bytes (one contiguous copy) and with a
//! hand-written loop of one `memcpy` per block. Also packs the 4 KiB case in 64 KiB
//! pieces (as a pipelined send would).

use std::hint::black_box;
use std::time::{Duration, Instant};

use oxmpi_datatype::{pack, Datatype, Predefined};

/// Best time of each function over `reps` rounds; the functions run interleaved so
/// that load changes on a shared machine hit all of them alike.
fn best<const N: usize>(reps: usize, fs: &mut [&mut dyn FnMut(); N]) -> [Duration; N] {
    let mut best = [Duration::MAX; N];
    for f in fs.iter_mut() {
        f(); // warm-up
    }
    for _ in 0..reps {
        for (i, f) in fs.iter_mut().enumerate() {
            let t = Instant::now();
            f();
            best[i] = best[i].min(t.elapsed());
        }
    }
    best
}

fn gbps(bytes: usize, d: Duration) -> f64 {
    bytes as f64 / d.as_secs_f64() / 1e9
}

fn run(total: usize, block: usize, reps: usize) {
    let stride = 2 * block;
    let count = total / block;
    let src: Vec<u8> = (0..count * stride).map(|i| i as u8).collect();
    let mut dst = vec![0u8; total];
    let byte = Datatype::from(Predefined::Byte);
    let v = Datatype::vector(count as i64, block as i64, stride as i64, &byte).unwrap();
    v.commit();

    let piece = 64 << 10;
    let (mut d1, mut d2, mut d3, mut d4) = (dst.clone(), dst.clone(), dst.clone(), dst.clone());
    let mut memcpy = || {
        d1.copy_from_slice(&src[..total]);
        black_box(&mut d1);
    };
    let mut per_block = || {
        for k in 0..count {
            d2[k * block..(k + 1) * block].copy_from_slice(&src[k * stride..k * stride + block]);
        }
        black_box(&mut d2);
    };
    let mut packed = || {
        // SAFETY: the vector's type map lies inside `src`.
        let n = unsafe { pack(&v, src.as_ptr(), 1, 0, &mut d3) };
        assert_eq!(n, total);
        black_box(&mut d3);
    };
    let mut pieces = || {
        let mut off = 0;
        while off < total {
            let end = (off + piece).min(total);
            // SAFETY: as above.
            off += unsafe { pack(&v, src.as_ptr(), 1, off, &mut d4[off..end]) };
        }
        black_box(&mut d4);
    };
    let [t_memcpy, t_loop, t_pack, t_pieces] = best(
        reps,
        &mut [&mut memcpy, &mut per_block, &mut packed, &mut pieces],
    );
    dst.copy_from_slice(&d4);
    assert_eq!(d3, d4);
    // Check the result once.
    for k in [0, count / 2, count - 1] {
        assert_eq!(
            dst[k * block..(k + 1) * block],
            src[k * stride..k * stride + block]
        );
    }
    println!(
        "{:>5} KiB msg, {:>4} B blocks: memcpy {:6.2} GB/s | per-block memcpy {:6.2} GB/s | pack {:6.2} GB/s ({:.2}x memcpy) | pack in 64 KiB pieces {:6.2} GB/s ({:.2}x)",
        total >> 10,
        block,
        gbps(total, t_memcpy),
        gbps(total, t_loop),
        gbps(total, t_pack),
        t_memcpy.as_secs_f64() / t_pack.as_secs_f64(),
        gbps(total, t_pieces),
        t_memcpy.as_secs_f64() / t_pieces.as_secs_f64(),
    );
}

fn main() {
    for &total in &[1usize << 20, 16 << 20] {
        let reps = if total > 4 << 20 { 20 } else { 200 };
        for &block in &[4096usize, 64, 8] {
            run(total, block, reps);
        }
    }
}
