//! Test program: receives from any source and with any tag. Every rank sends to rank 0
//! (itself included) a run of ordered messages and a few tagged ones; rank 0 receives
//! them with `any_process()` and `ANY_TAG` and checks sources, tags, values and that
//! messages from one sender never overtake each other.

use oxmpi::traits::*;

mod common;

const RUN: i32 = 20;
const ORDERED: i32 = 5;
const SPECIAL: i32 = 100;
const OTHER: i32 = 200;

fn main() -> Result<(), oxmpi::Error> {
    let universe = oxmpi::initialize()?;
    let world = universe.world();
    let (rank, size) = (world.rank(), world.size());
    let root = world.process_at_rank(0);

    // Every rank, rank 0 included, sends: the ordered run, then one SPECIAL, then one
    // OTHER with tag OTHER + rank. All small, so they are buffered eagerly.
    for i in 0..RUN {
        root.send_with_tag(&[rank, i], ORDERED)?;
    }
    root.send_with_tag(&rank, SPECIAL)?;
    root.send_with_tag(&(rank * 10), OTHER + rank)?;

    if rank == 0 {
        let any = world.any_process();
        // 1. Specific tag, any source: one SPECIAL from every rank.
        let mut seen = vec![false; size as usize];
        for _ in 0..size {
            let (v, s) = any.receive_with_tag::<i32>(SPECIAL)?;
            check_eq!(rank, s.tag(), SPECIAL, "tag of a SPECIAL message");
            check_eq!(
                rank,
                v,
                s.source_rank(),
                "value of SPECIAL equals its sender"
            );
            check!(rank, !seen[v as usize], "SPECIAL from rank {v} twice");
            seen[v as usize] = true;
        }
        // 2. Specific source, any tag: everything left from the last rank arrives in the
        //    order it was sent: the ordered run, then its OTHER message.
        let last = world.process_at_rank(size - 1);
        for i in 0..RUN {
            let (pair, s) = last.receive::<[i32; 2]>()?;
            check_eq!(
                rank,
                (s.source_rank(), s.tag()),
                (size - 1, ORDERED),
                "run message {i} from the last rank"
            );
            check_eq!(
                rank,
                pair,
                [size - 1, i],
                "non-overtaking order from the last rank"
            );
        }
        let (v, s) = last.receive::<i32>()?;
        check_eq!(
            rank,
            (s.tag(), v),
            (OTHER + size - 1, (size - 1) * 10),
            "OTHER from the last rank"
        );
        // 3. Any source, any tag: everything else, in per-sender order.
        let mut next_index = vec![0i32; size as usize];
        next_index[(size - 1) as usize] = RUN;
        let mut other_seen = vec![false; size as usize];
        other_seen[(size - 1) as usize] = true;
        let remaining = (size - 1) * (RUN + 1);
        for _ in 0..remaining {
            let status = any.probe()?;
            let src = status.source_rank();
            check!(rank, (0..size).contains(&src), "probed source {src}");
            if status.tag() == ORDERED {
                let (pair, s) = world
                    .process_at_rank(src)
                    .receive_with_tag::<[i32; 2]>(ORDERED)?;
                check_eq!(rank, s.source_rank(), src, "source after probe");
                check_eq!(
                    rank,
                    pair,
                    [src, next_index[src as usize]],
                    "per-sender order from {src}"
                );
                next_index[src as usize] += 1;
            } else {
                check_eq!(rank, status.tag(), OTHER + src, "tag of OTHER from {src}");
                check!(
                    rank,
                    next_index[src as usize] == RUN,
                    "OTHER from {src} overtook its run"
                );
                let (v, s) = any.receive_with_tag::<i32>(OTHER + src)?;
                check_eq!(
                    rank,
                    (s.source_rank(), v),
                    (src, src * 10),
                    "OTHER from {src}"
                );
                other_seen[src as usize] = true;
            }
        }
        check!(
            rank,
            next_index.iter().all(|&n| n == RUN),
            "every run complete: {next_index:?}"
        );
        check!(rank, other_seen.iter().all(|&b| b), "every OTHER received");
        check!(
            rank,
            any.immediate_probe()?.is_none(),
            "no message left over"
        );
        println!("check_wildcards: passed on {size} ranks");
    }
    Ok(())
}
