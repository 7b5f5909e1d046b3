//! Test program: nonblocking collectives in scopes. A barrier, a broadcast, a
//! reduction to a root, all-reduce (a predefined and a non-commutative user operation),
//! all-gather, all-to-all and both scans started together and completed with
//! `wait_all`, `test` polling and drops (which wait); then overlapped with
//! point-to-point messages; then nonblocking duplications (`MPI_Comm_idup`) completed by
//! `wait`, by `test` polling while an all-reduce is outstanding, and by a drop.

use oxmpi::collective::{SystemOperation, UserOperation};
use oxmpi::request::{self, Request};
use oxmpi::traits::*;

mod common;

fn main() -> Result<(), oxmpi::Error> {
    let universe = oxmpi::initialize()?;
    let world = universe.world();
    let (rank, size) = (world.rank(), world.size());
    let n = size as usize;
    let root = world.process_at_rank(size - 1);
    let sum_ranks: i64 = (0..size as i64).sum();

    // The lowest rank's value wins: associative, not commutative.
    let first = UserOperation::non_commutative(|x: &[i64], y: &mut [i64]| {
        y.copy_from_slice(x);
    })?;

    for round in 0..5i64 {
        let mine = [rank as i64 + round, 1];
        let mut bc = if rank == size - 1 { [round; 3] } else { [0; 3] };
        let mut red = [0i64; 2];
        let mut ar = [0i64; 2];
        let mut ar_user = [0i64; 2];
        let mut ag = vec![0i64; 2 * n];
        let out: Vec<i64> = (0..size as i64).map(|d| 100 * rank as i64 + d).collect();
        let mut ata = vec![0i64; n];
        let mut sc = [0i64; 2];
        let mut ex = [-5i64; 2];
        world.immediate_barrier()?.wait()?;
        // Outstanding across everything below (a request on no buffer: static scope).
        let barrier = world.immediate_barrier()?;
        request::scope(|scope| -> Result<(), oxmpi::Error> {
            let mut reqs: Vec<Request<'_, _>> = vec![
                root.immediate_broadcast_into(scope, &mut bc)?,
                world.immediate_all_reduce_into(scope, &mine, &mut ar, SystemOperation::sum())?,
                world.immediate_all_reduce_into(scope, &mine[..], &mut ar_user[..], &first)?,
                world.immediate_all_gather_into(scope, &mine, &mut ag[..])?,
                world.immediate_all_to_all_into(scope, &out[..], &mut ata[..])?,
                world.immediate_scan_into(scope, &mine, &mut sc, SystemOperation::sum())?,
                world.immediate_exclusive_scan_into(
                    scope,
                    &mine,
                    &mut ex,
                    SystemOperation::sum(),
                )?,
            ];
            if rank == size - 1 {
                reqs.push(root.immediate_reduce_into_root(
                    scope,
                    &mine,
                    &mut red,
                    SystemOperation::max(),
                )?);
            } else {
                reqs.push(root.immediate_reduce_into(scope, &mine, SystemOperation::max())?);
            }
            match round % 3 {
                0 => {
                    request::wait_all(&mut reqs)?;
                }
                1 => {
                    // Poll the last one first, then wait for the rest in reverse.
                    let mut last = reqs.pop().expect("eight requests");
                    loop {
                        match last.test()? {
                            Ok(_) => break,
                            Err(r) => last = r,
                        }
                    }
                    while let Some(r) = reqs.pop() {
                        r.wait()?;
                    }
                }
                _ => drop(reqs), // dropping waits
            }
            Ok(())
        })?;
        barrier.wait()?;
        check_eq!(rank, bc, [round; 3], "immediate broadcast round {round}");
        check_eq!(
            rank,
            ar,
            [sum_ranks + n as i64 * round, n as i64],
            "immediate all-reduce"
        );
        check_eq!(
            rank,
            ar_user,
            [round, 1],
            "immediate all-reduce, user operation"
        );
        for j in 0..n {
            check_eq!(
                rank,
                ag[2 * j],
                j as i64 + round,
                "immediate all-gather block {j}"
            );
            check_eq!(
                rank,
                ata[j],
                100 * j as i64 + rank as i64,
                "immediate all-to-all block {j}"
            );
        }
        let r = rank as i64;
        check_eq!(
            rank,
            sc,
            [r * (r + 1) / 2 + (r + 1) * round, r + 1],
            "immediate scan"
        );
        if rank > 0 {
            check_eq!(
                rank,
                ex,
                [r * (r - 1) / 2 + r * round, r],
                "immediate exclusive scan"
            );
        }
        if rank == size - 1 {
            check_eq!(
                rank,
                red,
                [size as i64 - 1 + round, 1],
                "immediate reduce (max)"
            );
        }
    }

    // Overlap with point-to-point: a ring of messages while an all-reduce is pending.
    if size > 1 {
        let next = world.process_at_rank((rank + 1) % size);
        let prev = world.process_at_rank((rank + size - 1) % size);
        let x = [rank as i64];
        let mut y = [0i64];
        request::scope(|scope| -> Result<(), oxmpi::Error> {
            let c = world.immediate_all_reduce_into(scope, &x, &mut y, SystemOperation::sum())?;
            let s = next.immediate_send_with_tag(scope, &x, 3)?;
            let (got, _) = prev.receive_with_tag::<[i64; 1]>(3)?;
            check_eq!(rank, got, [prev.rank() as i64], "ring message");
            s.wait()?;
            c.wait()?;
            Ok(())
        })?;
        check_eq!(rank, y, [sum_ranks], "all-reduce across point-to-point");
    }

    // Nonblocking duplication: two duplications outstanding at once with a reduction on
    // the parent; each duplicate is a working communicator of the same group.
    let mut hint = oxmpi::info::Info::new();
    hint.set("mpi_assert_no_any_tag", "true")?;
    let x = [rank as i64 + 1];
    let mut y = [0i64];
    let (dup, dup2) = request::scope(|scope| -> Result<_, oxmpi::Error> {
        let d = world.immediate_duplicate(scope)?;
        let d2 = world.immediate_duplicate_with_info(scope, &hint)?;
        let c = world.immediate_all_reduce_into(scope, &x, &mut y, SystemOperation::sum())?;
        let dup = d.wait()?;
        let mut d2 = d2;
        let dup2 = loop {
            match d2.test()? {
                Ok(comm) => break comm,
                Err(again) => d2 = again,
            }
        };
        c.wait()?;
        Ok((dup, dup2))
    })?;
    check_eq!(
        rank,
        y,
        [sum_ranks + size as i64],
        "all-reduce beside duplications"
    );
    for (name, comm) in [("idup", &dup), ("idup_with_info", &dup2)] {
        check_eq!(
            rank,
            (comm.rank(), comm.size()),
            (rank, size),
            "{name} rank and size"
        );
        let mut s = [0i64];
        comm.all_reduce_into(&[rank as i64], &mut s, SystemOperation::sum())?;
        check_eq!(rank, s, [sum_ranks], "all-reduce on the {name} duplicate");
    }
    check_eq!(
        rank,
        dup.hints()?.no_any_tag,
        false,
        "idup keeps the parent's hints"
    );
    check_eq!(
        rank,
        dup2.hints()?.no_any_tag,
        true,
        "idup_with_info takes the info's hints"
    );
    // Dropped unfinished: waits (every member takes part) and frees the duplicate.
    drop(dup.immediate_duplicate(oxmpi::request::StaticScope)?);
    let last = dup2
        .immediate_duplicate(oxmpi::request::StaticScope)?
        .wait()?;
    last.barrier()?;

    if rank == 0 {
        println!("check_immediate_collectives: passed on {size} ranks");
    }
    Ok(())
}
