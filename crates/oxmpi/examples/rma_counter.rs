//! A distributed counter with one-sided fetch-and-add: every rank takes tickets from a
//! counter that lives in rank 0's window, in shared-lock epochs; the tickets each rank
//! got are distinct, and together they are exactly 0..N*ITERS. Then a compare-and-swap
//! flag: exactly one rank wins it.

use oxmpi::collective::SystemOperation;
use oxmpi::traits::*;
use oxmpi::window::{LockType, Window};

mod common;
use common::ok;

const ITERS: usize = 50;

fn main() -> Result<(), oxmpi::Error> {
    let universe = oxmpi::initialize()?;
    let world = universe.world();
    let (rank, size) = (world.rank(), world.size());
    let mut win = ok(rank, Window::<i64>::allocate(&world, 2), "allocate");
    ok(rank, win.with_local(|v| v.fill(0)), "with_local");
    world.barrier()?;

    let one = 1i64;
    let mut mine = Vec::with_capacity(ITERS);
    for _ in 0..ITERS {
        let mut ticket = -1i64;
        ok(
            rank,
            win.lock_epoch(0, LockType::Shared, |e| {
                e.fetch_and_op(&one, &mut ticket, 0, 0, &SystemOperation::sum())
            }),
            "fetch_and_op epoch",
        );
        check!(
            rank,
            mine.last().is_none_or(|&l| ticket > l),
            "tickets grow: {ticket} after {mine:?}"
        );
        mine.push(ticket);
    }
    // Rank 0 gathers every ticket and checks they are 0..size*ITERS, each once.
    let all = mine.clone();
    let mut gathered = vec![0i64; ITERS * size as usize];
    let root = world.process_at_rank(0);
    if rank == 0 {
        root.gather_into_root(&all[..], &mut gathered[..])?;
        gathered.sort_unstable();
        let want: Vec<i64> = (0..(ITERS * size as usize) as i64).collect();
        check_eq!(rank, gathered, want, "every ticket handed out once");
    } else {
        root.gather_into(&all[..])?;
    }

    // Compare-and-swap: the flag in slot 1 of the last rank goes from 0 to the
    // winner's rank + 1, once.
    let last = size - 1;
    let (new, zero) = (i64::from(rank) + 1, 0i64);
    let mut before = -1i64;
    ok(
        rank,
        win.lock_epoch(last, LockType::Exclusive, |e| {
            e.compare_and_swap(&new, &zero, &mut before, last, 1)
        }),
        "compare_and_swap epoch",
    );
    let won = i32::from(before == 0);
    let mut winners = 0i32;
    world.all_reduce_into(&won, &mut winners, SystemOperation::sum())?;
    check_eq!(rank, winners, 1, "one winner of the flag");
    world.barrier()?;
    ok(rank, win.free(), "free");
    if rank == 0 {
        println!("rma_counter: passed on {size} ranks");
    }
    Ok(())
}
