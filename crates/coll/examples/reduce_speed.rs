//! Throughput of the predefined reduction kernels on 1 MiB buffers, aligned and not:
//! `cargo run --release -p oxmpi-coll --example reduce_speed`.

use std::time::Instant;

use oxmpi_coll::{reduce_packed, PredefinedOp};
use oxmpi_datatype::Predefined;

fn main() {
    let bytes = 1 << 20;
    let input = vec![1u8; bytes + 1];
    let mut inout = vec![2u8; bytes + 1];
    for (ty, op) in [
        (Predefined::Double, PredefinedOp::Sum),
        (Predefined::Double, PredefinedOp::Max),
        (Predefined::Float, PredefinedOp::Sum),
        (Predefined::Int, PredefinedOp::Sum),
        (Predefined::Long, PredefinedOp::Min),
        (Predefined::DoubleComplex, PredefinedOp::Prod),
        (Predefined::LongDouble, PredefinedOp::Sum),
    ] {
        for skew in [0, 1] {
            let count = bytes / ty.size();
            let reps = 200;
            let start = Instant::now();
            for _ in 0..reps {
                reduce_packed(
                    op,
                    ty,
                    &input[skew..skew + bytes],
                    &mut inout[skew..skew + bytes],
                    count,
                )
                .expect("valid pair");
            }
            let secs = start.elapsed().as_secs_f64();
            let gbs = (reps * bytes) as f64 / secs / 1e9;
            println!(
                "{:<22} {:<9} offset {skew}: {gbs:6.2} GB/s",
                ty.name(),
                op.name()
            );
        }
    }
}
