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

/// Best time per run over `reps` runs after a warm-up.
fn best(reps: usize, mut f: impl FnMut()) -> Duration {
    f();
    (0..reps)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed()
        })
        .min()
        .unwrap()
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

    let t_memcpy = best(reps, || {
        dst.copy_from_slice(&src[..total]);
        black_box(&mut dst);
    });
    let t_loop = best(reps, || {
        for k in 0..count {
            dst[k * block..(k + 1) * block].copy_from_slice(&src[k * stride..k * stride + block]);
        }
        black_box(&mut dst);
    });
    let t_pack = best(reps, || {
        // SAFETY: the vector's type map lies inside `src`.
        let n = unsafe { pack(&v, src.as_ptr(), 1, 0, &mut dst) };
        assert_eq!(n, total);
        black_box(&mut dst);
    });
    let piece = 64 << 10;
    let t_pieces = best(reps, || {
        let mut off = 0;
        while off < total {
            let end = (off + piece).min(total);
            // SAFETY: as above.
            off += unsafe { pack(&v, src.as_ptr(), 1, off, &mut dst[off..end]) };
        }
        black_box(&mut dst);
    });
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
