//! Partitioned communication with the Rust API: every rank sends to the next one in a
//! ring, 6 partitions of 5 values on the sending side and 3 partitions of 10 on the
//! receiving side. Each run fills and readies the send partitions one at a time from
//! the last, polls `arrived` on the receive side and checks each partition as soon as
//! it has arrived, then waits; the same requests run four times.

use oxmpi::partitioned::{PartitionedReceive, PartitionedSend};
use oxmpi::traits::*;

mod common;

fn value(src: i32, run: usize, k: usize) -> u64 {
    src as u64 * 1_000_000 + run as u64 * 1000 + k as u64
}

fn main() -> Result<(), oxmpi::Error> {
    let universe = oxmpi::initialize()?;
    let world = universe.world();
    let (rank, size) = (world.rank(), world.size());
    let next = world.process_at_rank((rank + 1) % size);
    let prev = world.process_at_rank((rank + size - 1) % size);

    let mut out = vec![0u64; 30];
    let mut inbox = vec![0u64; 30];
    let mut send = PartitionedSend::new(&next, &mut out[..], 6, 4)?;
    let mut recv = PartitionedReceive::new(&prev, &mut inbox[..], 3, 4)?;
    for run in 0..4 {
        recv.start()?;
        send.start()?;
        let mut seen = [false; 3];
        for p in (0..6).rev() {
            let part = send.partition_mut(p).expect("not ready yet");
            for (j, v) in part.iter_mut().enumerate() {
                *v = value(rank, run, p * 5 + j);
            }
            send.ready(p)?;
            check!(
                rank,
                send.partition_mut(p).is_none(),
                "partition {p} lent out after ready"
            );
            for (q, s) in seen.iter_mut().enumerate() {
                if !*s && recv.arrived(q)? {
                    let got = recv.partition(q).expect("arrived");
                    for (j, v) in got.iter().enumerate() {
                        check_eq!(
                            rank,
                            *v,
                            value(prev.rank(), run, q * 10 + j),
                            "run {run} partition {q}"
                        );
                    }
                    *s = true;
                }
            }
        }
        let status = recv.wait()?;
        send.wait()?;
        check_eq!(rank, status.source_rank(), prev.rank(), "source");
        check_eq!(rank, status.tag(), 4, "tag");
        check_eq!(rank, status.count_of::<u64>(), 30, "count");
        let all = recv.buffer().expect("inactive");
        for (k, v) in all.iter().enumerate() {
            check_eq!(
                rank,
                *v,
                value(prev.rank(), run, k),
                "run {run} element {k}"
            );
        }
    }
    drop(send);
    drop(recv);
    world.barrier()?;
    if rank == 0 {
        println!("check_partitioned: passed on {size} ranks");
    }
    Ok(())
}
