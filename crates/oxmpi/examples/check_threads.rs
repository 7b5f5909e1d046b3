//! `Threading::Multiple`: several threads of each rank use MPI at once, each on its own
//! duplicate of the world communicator (communicators are `Send + Sync`), inside
//! `std::thread::scope`. Every worker exchanges tokens around the ring and reduces on
//! its communicator, and also sends to a sibling worker of its own rank over a
//! communicator all workers share (told apart by tag); the results are checked.

use oxmpi::collective::SystemOperation;
use oxmpi::traits::*;
use oxmpi::Threading;

mod common;

const WORKERS: i32 = 4;
const ROUNDS: i32 = 50;

fn main() -> Result<(), oxmpi::Error> {
    let (universe, provided) = oxmpi::initialize_with_threading(Threading::Multiple)?;
    let world = universe.world();
    let (rank, size) = (world.rank(), world.size());
    check_eq!(rank, provided, Threading::Multiple, "threading provided");
    check_eq!(
        rank,
        universe.threading_support(),
        Threading::Multiple,
        "threading support"
    );
    let comms = (0..WORKERS)
        .map(|_| world.duplicate())
        .collect::<Result<Vec<_>, _>>()?;
    let shared = world.duplicate()?;
    let me = universe.self_comm();
    std::thread::scope(|s| -> Result<(), oxmpi::Error> {
        let mut workers = Vec::new();
        for (w, comm) in comms.iter().enumerate() {
            let w = w as i32;
            let (shared, me) = (&shared, &me);
            workers.push(s.spawn(move || -> Result<(), oxmpi::Error> {
                let next = comm.process_at_rank((rank + 1) % size);
                let prev = comm.process_at_rank((rank + size - 1) % size);
                for round in 0..ROUNDS {
                    let token = rank * 1000 + w * 100 + round;
                    let (got, _) =
                        oxmpi::point_to_point::send_receive::<i32, _, _, _>(&token, &next, &prev)?;
                    check_eq!(
                        rank,
                        got,
                        ((rank + size - 1) % size) * 1000 + w * 100 + round,
                        "ring token of worker {w}"
                    );
                    let mut sum = 0i32;
                    comm.all_reduce_into(&(w + round), &mut sum, SystemOperation::sum())?;
                    check_eq!(rank, sum, size * (w + round), "sum of worker {w}");
                    // On the shared communicator: worker w sends to rank `next`'s worker w.
                    let tag = w;
                    let sn = shared.process_at_rank((rank + 1) % size);
                    let sp = shared.process_at_rank((rank + size - 1) % size);
                    let (got, _) = oxmpi::point_to_point::send_receive_with_tags::<i32, _, _, _>(
                        &(token + 7),
                        &sn,
                        tag,
                        &sp,
                        tag,
                    )?;
                    check_eq!(
                        rank,
                        got,
                        ((rank + size - 1) % size) * 1000 + w * 100 + round + 7,
                        "shared token of worker {w}"
                    );
                    // Sibling workers (w, w ^ 1) of this rank meet on MPI_COMM_SELF.
                    let partner = w ^ 1;
                    let peer = me.process_at_rank(0);
                    if w & 1 == 1 {
                        peer.send_with_tag(&(w * 10 + round), 1000 + partner * 100 + round)?;
                    } else {
                        let (v, _) = peer.receive_with_tag::<i32>(1000 + w * 100 + round)?;
                        check_eq!(rank, v, partner * 10 + round, "sibling of worker {w}");
                    }
                }
                Ok(())
            }));
        }
        for h in workers {
            h.join().expect("a worker thread panicked")?;
        }
        Ok(())
    })?;
    drop(comms);
    world.barrier()?;
    if rank == 0 {
        println!("check_threads: passed on {size} ranks");
    }
    Ok(())
}
