//! A manager/worker farm over `MPI_Comm_spawn`: the manager job (rank 0 hands out the
//! work; any number of ranks take part in the spawn) starts WORKERS copies of this
//! program (argument: a count, default 3) with the argument `worker`. Rank 0 sends the
//! numbers 1..=40 as tasks to whichever worker is free, each worker answers with the
//! square, and a task tag of 0 tells a worker to stop. The manager checks the sum of
//! the squares and prints `spawn_farm: passed on N ranks`.

use oxmpi::topology::{parent, Command};
use oxmpi::traits::*;

mod common;

const TASKS: i64 = 40;
const WORK: i32 = 1;
const STOP: i32 = 2;

fn worker(rank: i32, p: oxmpi::topology::InterCommunicator) {
    let manager = p.process_at_rank(0);
    loop {
        let (task, status) = common::ok(rank, manager.receive::<i64>(), "receive a task");
        if status.tag() == STOP {
            break;
        }
        common::ok(
            rank,
            manager.send_with_tag(&(task * task), WORK),
            "send a result",
        );
    }
    common::ok(rank, p.disconnect(), "disconnect from the manager");
}

fn main() -> Result<(), oxmpi::Error> {
    let universe = oxmpi::initialize()?;
    let world = universe.world();
    let rank = world.rank();
    if let Some(p) = parent()? {
        worker(rank, p);
        return Ok(());
    }
    let workers: i32 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(3);
    let me = std::env::current_exe().expect("the program's own path");
    let cmd = Command::new(me.to_string_lossy(), workers).arg("worker");
    let farm = world.spawn(0, &cmd)?;
    check_eq!(rank, farm.remote_size()?, workers, "workers started");
    if rank == 0 {
        let mut next = 1i64;
        let mut busy = 0;
        for w in 0..workers {
            if next <= TASKS {
                farm.process_at_rank(w).send_with_tag(&next, WORK)?;
                next += 1;
                busy += 1;
            }
        }
        let mut sum = 0i64;
        while busy > 0 {
            let (sq, status) = farm.any_process().receive::<i64>()?;
            sum += sq;
            busy -= 1;
            if next <= TASKS {
                farm.process_at_rank(status.source_rank())
                    .send_with_tag(&next, WORK)?;
                next += 1;
                busy += 1;
            }
        }
        for w in 0..workers {
            farm.process_at_rank(w).send_with_tag(&0i64, STOP)?;
        }
        check_eq!(
            rank,
            sum,
            TASKS * (TASKS + 1) * (2 * TASKS + 1) / 6,
            "sum of squares"
        );
    }
    farm.disconnect()?;
    if rank == 0 {
        println!("spawn_farm: passed on {} ranks", world.size());
    }
    Ok(())
}
