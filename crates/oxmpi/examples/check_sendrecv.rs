//! Test program: combined send-receive. Ring shifts with `send_receive`,
//! `send_receive_into` and `send_receive_replace_into` (with and without tags, at eager
//! and rendezvous sizes), exchanges with the null process, and the communicator and
//! environment queries.

use oxmpi::point_to_point::{
    send_receive, send_receive_into, send_receive_into_with_tags, send_receive_replace_into,
    send_receive_replace_into_with_tags, send_receive_with_tags,
};
use oxmpi::traits::*;

mod common;

fn main() -> Result<(), oxmpi::Error> {
    let (universe, provided) = oxmpi::initialize_with_threading(oxmpi::Threading::Funneled)?;
    let world = universe.world();
    let (rank, size) = (world.rank(), world.size());
    // Lets the launch tests see that a failed check fails the job.
    check!(
        rank,
        std::env::var_os("OXMPI_EXAMPLE_FAIL").is_none(),
        "failure requested by OXMPI_EXAMPLE_FAIL"
    );
    check!(
        rank,
        provided <= oxmpi::Threading::Funneled,
        "provided {provided:?}"
    );
    check_eq!(
        rank,
        universe.threading_support(),
        provided,
        "threading support"
    );
    check!(
        rank,
        oxmpi::is_initialized() && !oxmpi::is_finalized(),
        "initialized, not finalized"
    );
    check!(rank, !oxmpi::processor_name().is_empty(), "processor name");
    check!(
        rank,
        oxmpi::library_version().starts_with("oxmpi "),
        "library version"
    );
    let me = universe.self_comm();
    check_eq!(rank, (me.rank(), me.size()), (0, 1), "self communicator");

    let next = world.process_at_rank((rank + 1) % size);
    let prev = world.process_at_rank((rank + size - 1) % size);

    // A value around the ring.
    let (v, s) = send_receive::<f64, _, _, _>(&(rank as f64 + 0.5), &next, &prev)?;
    check_eq!(
        rank,
        (v, s.source_rank()),
        (prev.rank() as f64 + 0.5, prev.rank()),
        "send_receive"
    );
    let (v, s) = send_receive_with_tags::<[i32; 2], _, _, _>(
        &[rank, -rank],
        &next,
        4,
        &world.any_process(),
        4,
    )?;
    check_eq!(
        rank,
        (v, s.tag()),
        ([prev.rank(), -prev.rank()], 4),
        "send_receive_with_tags"
    );

    // Buffers, small and large.
    for len in [0usize, 3, 40_000] {
        let out: Vec<u32> = (0..len as u32).map(|i| i ^ rank as u32).collect();
        let mut got = vec![0u32; len];
        let s = send_receive_into(&out[..], &next, &mut got[..], &prev)?;
        check_eq!(
            rank,
            s.count_of::<u32>(),
            len as i32,
            "send_receive_into count"
        );
        check!(
            rank,
            got.iter()
                .enumerate()
                .all(|(i, &x)| x == i as u32 ^ prev.rank() as u32),
            "send_receive_into data"
        );

        let mut buf: Vec<u32> = (0..len as u32).map(|i| i + 10 * rank as u32).collect();
        let s = send_receive_replace_into(&mut buf[..], &next, &prev)?;
        check_eq!(rank, s.source_rank(), prev.rank(), "replace source");
        check!(
            rank,
            buf.iter()
                .enumerate()
                .all(|(i, &x)| x == i as u32 + 10 * prev.rank() as u32),
            "replace data"
        );
    }
    let mut flags = [false; 3];
    let s = send_receive_replace_into_with_tags(&mut flags, &next, 6, &prev, 6)?;
    check_eq!(rank, (s.tag(), flags), (6, [false; 3]), "replace with tags");
    let mut got = [0u8; 2];
    let s = send_receive_into_with_tags(&[1u8, 2], &next, 7, &mut got, &prev, 7)?;
    check_eq!(
        rank,
        (s.tag(), got),
        (7, [1, 2]),
        "send_receive_into_with_tags"
    );

    // The null process: sends vanish, receives complete at once with nothing.
    let null = world.process_at_rank(oxmpi::PROC_NULL);
    null.send(&[1u8; 4])?;
    let mut untouched = [9u8; 4];
    let s = null.receive_into(&mut untouched)?;
    check_eq!(
        rank,
        (s.source_rank(), s.count_of::<u8>(), untouched),
        (oxmpi::PROC_NULL, 0, [9; 4]),
        "PROC_NULL receive"
    );
    let s = send_receive_into(&[5u8; 4], &null, &mut untouched, &null)?;
    check_eq!(
        rank,
        (s.source_rank(), untouched),
        (oxmpi::PROC_NULL, [9; 4]),
        "PROC_NULL send_receive"
    );

    let t0 = oxmpi::time();
    check!(
        rank,
        oxmpi::time() >= t0 && oxmpi::time_resolution() > 0.0,
        "clock"
    );
    if rank == 0 {
        println!("check_sendrecv: passed on {size} ranks");
    }
    universe.finalize()?;
    check!(rank, oxmpi::is_finalized(), "finalized");
    Ok(())
}
