//! A shared array with `Window::allocate_shared`: each rank fills its part, then every
//! rank reads every other rank's part directly through the node's shared memory, and
//! rank 0 adds one to every value through accumulates, read back by everyone.

use oxmpi::collective::SystemOperation;
use oxmpi::traits::*;
use oxmpi::window::{LockType, Window};

mod common;
use common::ok;

const PART: usize = 4;

fn main() -> Result<(), oxmpi::Error> {
    let universe = oxmpi::initialize()?;
    let world = universe.world();
    let (rank, size) = (world.rank(), world.size());
    let mut win = ok(
        rank,
        Window::<u32>::allocate_shared(&world, PART),
        "allocate_shared",
    );
    ok(
        rank,
        win.with_local(|v| {
            for (i, x) in v.iter_mut().enumerate() {
                *x = rank as u32 * 100 + i as u32;
            }
        }),
        "with_local",
    );
    world.barrier()?;
    for r in 0..size {
        let part = ok(rank, win.with_shared(r, |p| p.to_vec()), "with_shared");
        let want: Vec<u32> = (0..PART as u32).map(|i| r as u32 * 100 + i).collect();
        check_eq!(rank, part, want, "part of rank {r}");
    }
    world.barrier()?;
    if rank == 0 {
        let ones = [1u32; PART];
        for r in 0..size {
            ok(
                rank,
                win.lock_epoch(r, LockType::Exclusive, |e| {
                    e.accumulate(&ones, r, 0, &SystemOperation::sum())
                }),
                "accumulate epoch",
            );
        }
    }
    world.barrier()?;
    let mut all = vec![0u32; PART * size as usize];
    for r in 0..size {
        let chunk = &mut all[r as usize * PART..(r as usize + 1) * PART];
        ok(
            rank,
            win.lock_epoch(r, LockType::Shared, |e| e.get(chunk, r, 0)),
            "get epoch",
        );
    }
    let want: Vec<u32> = (0..size as u32)
        .flat_map(|r| (0..PART as u32).map(move |i| r * 100 + i + 1))
        .collect();
    check_eq!(rank, all, want, "the array after the accumulates");
    world.barrier()?;
    ok(rank, win.free(), "free");
    if rank == 0 {
        println!("rma_shared: passed on {size} ranks");
    }
    Ok(())
}
