//! Ping-pong between ranks 0 and 1 for message sizes from 1 byte to 1 MiB: prints the
//! half round-trip time and the bandwidth, and checks the data of every last exchange.
//! Other ranks take no part. Usage: `pingpong [iterations]` (default 100).

use oxmpi::traits::*;

mod common;

fn main() -> Result<(), oxmpi::Error> {
    let universe = oxmpi::initialize()?;
    let world = universe.world();
    let rank = world.rank();
    if world.size() < 2 {
        if rank == 0 {
            println!("pingpong needs at least 2 ranks; nothing to do");
        }
        return Ok(());
    }
    if rank > 1 {
        return Ok(());
    }
    let iterations: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(100)
        .max(1);
    let peer = world.process_at_rank(1 - rank);
    if rank == 0 {
        println!("{:>10} {:>14} {:>14}", "bytes", "latency (us)", "MB/s");
    }
    let mut size = 1usize;
    while size <= 1 << 20 {
        let mut buf = vec![0u8; size];
        let start = oxmpi::time();
        for i in 0..iterations {
            if rank == 0 {
                let fill = (i % 251) as u8;
                buf.iter_mut().for_each(|b| *b = fill);
                peer.send(&buf[..])?;
                let status = peer.receive_into(&mut buf[..])?;
                check_eq!(rank, status.count_of::<u8>(), size as i32, "echo length");
                check!(
                    rank,
                    buf.iter().all(|&b| b == fill.wrapping_add(1)),
                    "echo data for {size} bytes"
                );
            } else {
                peer.receive_into(&mut buf[..])?;
                buf.iter_mut().for_each(|b| *b = b.wrapping_add(1));
                peer.send(&buf[..])?;
            }
        }
        let elapsed = oxmpi::time() - start;
        if rank == 0 {
            let half = elapsed / (2 * iterations) as f64;
            println!(
                "{size:>10} {:>14.2} {:>14.1}",
                half * 1e6,
                size as f64 / half / 1e6
            );
        }
        size *= 4;
    }
    Ok(())
}
