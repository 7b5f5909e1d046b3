//! Test program: sessions. A session started before `initialize` (a library that
//! initialises first), its process sets and groups against the world's, communicators
//! from groups next to the world's, an intercommunicator from two groups, errors with
//! their classes, and a second session after the first one ended.

use oxmpi::collective::SystemOperation;
use oxmpi::session::Session;
use oxmpi::topology::{GroupRelation, InterCommunicator, SimpleCommunicator};
use oxmpi::traits::*;
use oxmpi::ErrorClass;

mod common;
use common::ok;

fn main() -> Result<(), oxmpi::Error> {
    let session = Session::init()?;
    check!(
        -1,
        !oxmpi::is_initialized(),
        "a session is not the world model"
    );
    let sets = session.process_sets()?;
    check!(
        -1,
        sets.iter().any(|s| s == "mpi://WORLD") && sets.iter().any(|s| s == "mpi://SELF"),
        "process sets {sets:?}"
    );
    let wg = session.group("mpi://WORLD")?;
    let lib = SimpleCommunicator::from_group(&wg, "org.oxmpi.check.lib")?;
    let (rank, size) = (lib.rank(), lib.size());
    check_eq!(
        rank,
        session.process_set_size("mpi://WORLD")?,
        size,
        "mpi_size"
    );
    check_eq!(
        rank,
        session.process_set_size("mpi://SELF")?,
        1,
        "mpi_size of SELF"
    );

    let universe = oxmpi::initialize()?;
    let world = universe.world();
    check_eq!(rank, world.rank(), rank, "world rank");
    check_eq!(
        rank,
        ok(rank, world.group(), "world group").compare(&wg),
        GroupRelation::Identical,
        "mpi://WORLD vs the world's group"
    );
    check_eq!(
        rank,
        session
            .group("mpi://SELF")?
            .compare(&ok(rank, universe.self_comm().group(), "self group")),
        GroupRelation::Identical,
        "mpi://SELF vs the self communicator's group"
    );

    // The same tag on both: each receive gets its communicator's message.
    let next = (rank + 1) % size;
    let prev = (rank + size - 1) % size;
    let (mut a, mut b) = (-1i32, -1i32);
    let (x, y) = (100 + rank, 200 + rank);
    oxmpi::request::scope(|s| -> Result<(), oxmpi::Error> {
        let ra = lib
            .process_at_rank(prev)
            .immediate_receive_into(s, &mut a)?;
        let rb = world
            .process_at_rank(prev)
            .immediate_receive_into(s, &mut b)?;
        let sa = world.process_at_rank(next).immediate_send(s, &y)?;
        let sb = lib.process_at_rank(next).immediate_send(s, &x)?;
        for r in [ra, rb] {
            r.wait()?;
        }
        sa.wait()?;
        sb.wait()?;
        Ok(())
    })?;
    check_eq!(rank, a, 100 + prev, "library message");
    check_eq!(rank, b, 200 + prev, "world message");

    // Two groups of the session joined by an intercommunicator.
    if size >= 2 {
        let evens: Vec<i32> = (0..size).step_by(2).collect();
        let even = wg.include(&evens)?;
        let odd = wg.exclude(&evens)?;
        let mine = rank % 2 == 1;
        let (l, r) = if mine { (&odd, &even) } else { (&even, &odd) };
        let ic = InterCommunicator::from_groups(l, 0, r, 0, "org.oxmpi.check.inter")?;
        check_eq!(rank, ic.remote_size()?, r.size(), "remote size");
        let merged = ic.merge(mine)?;
        let mut s = 0i32;
        merged.all_reduce_into(&rank, &mut s, SystemOperation::sum())?;
        check_eq!(rank, s, size * (size - 1) / 2, "sum over the merge");
    }

    // Errors.
    let e = session.group("mpi://NOWHERE").unwrap_err();
    check_eq!(rank, e.class(), ErrorClass::Arg, "unknown process set: {e}");
    let e = SimpleCommunicator::from_group(&wg, &"t".repeat(300)).unwrap_err();
    check_eq!(rank, e.class(), ErrorClass::Arg, "long tag: {e}");
    if size > 1 {
        let others = wg.exclude(&[rank])?;
        let e = SimpleCommunicator::from_group(&others, "t").unwrap_err();
        check_eq!(rank, e.class(), ErrorClass::Group, "not a member: {e}");
    }

    // End the library's session; start another one.
    drop(lib);
    session.finalize()?;
    let again = Session::init()?;
    let c = SimpleCommunicator::from_group(&again.group("mpi://WORLD")?, "org.oxmpi.check.again")?;
    let mut s = 0i32;
    c.all_reduce_into(&rank, &mut s, SystemOperation::sum())?;
    check_eq!(
        rank,
        s,
        size * (size - 1) / 2,
        "sum over the second session"
    );
    drop(c);
    again.finalize()?;

    world.barrier()?;
    if rank == 0 {
        println!("check_sessions: passed on {size} ranks");
    }
    Ok(())
}
