//! Test program: errors are returned, with the right class and a message naming the
//! method, and the program goes on communicating afterwards. Covers truncation
//! (blocking, immediate, wait_all), invalid ranks and tags, short messages for
//! `receive`, mismatched communicators, buffered sends with no buffer, a second
//! initialisation, and cancelling a receive that nothing matches.

use oxmpi::point_to_point::{send_receive_into, SendMode};
use oxmpi::request;
use oxmpi::traits::*;
use oxmpi::ErrorClass;

mod common;

fn main() -> Result<(), oxmpi::Error> {
    let universe = oxmpi::initialize()?;
    let world = universe.world();
    let (rank, size) = (world.rank(), world.size());
    let next = world.process_at_rank((rank + 1) % size);
    let prev = world.process_at_rank((rank + size - 1) % size);

    // A second initialisation is refused.
    let e = oxmpi::initialize().expect_err("second initialize");
    check_eq!(rank, e.class(), ErrorClass::Other, "second initialize: {e}");
    check!(
        rank,
        e.message()
            .starts_with("initialize: MPI_ERR_OTHER: MPI was already initialized"),
        "{e}"
    );

    // Invalid destination and source ranks.
    let bad = world.process_at_rank(size + 3);
    let e = bad.send(&1i32).expect_err("send to an invalid rank");
    check_eq!(rank, e.class(), ErrorClass::Rank, "{e}");
    check_eq!(
        rank,
        e.message(),
        format!(
            "send: MPI_ERR_RANK: invalid rank {} (communicator size {size})",
            size + 3
        ),
        "message of the invalid-rank error"
    );
    let e = world
        .process_at_rank(-7)
        .receive::<i32>()
        .expect_err("receive from rank -7");
    check_eq!(rank, e.class(), ErrorClass::Rank, "{e}");
    check!(
        rank,
        e.message()
            .starts_with("receive: MPI_ERR_RANK: invalid source rank -7"),
        "{e}"
    );
    let e = bad.probe().expect_err("probe of an invalid rank");
    check_eq!(rank, e.class(), ErrorClass::Rank, "{e}");
    let r = request::scope(|s| bad.immediate_send(s, &5u8).map(|_| ()));
    check_eq!(
        rank,
        r.expect_err("immediate send to an invalid rank").class(),
        ErrorClass::Rank,
        "immediate"
    );

    // Invalid tags.
    let e = next.send_with_tag(&1u8, -5).expect_err("negative tag");
    check_eq!(rank, e.class(), ErrorClass::Tag, "{e}");
    check!(
        rank,
        e.message()
            .starts_with("send_with_tag: MPI_ERR_TAG: invalid tag -5"),
        "{e}"
    );
    let e = prev.receive_with_tag::<u8>(-9).expect_err("receive tag -9");
    check_eq!(rank, e.class(), ErrorClass::Tag, "{e}");

    // Buffered send without an attached buffer.
    let e = next
        .buffered_send(&[1u8; 4])
        .expect_err("bsend without a buffer");
    check_eq!(rank, e.class(), ErrorClass::Buffer, "{e}");
    check!(
        rank,
        e.message().starts_with("buffered_send: MPI_ERR_BUFFER"),
        "{e}"
    );

    // Truncation, blocking: 10 values into a buffer of 4. The part that fits arrives.
    next.send_with_tag(&[rank; 10], 1)?;
    let mut small = [0i32; 4];
    let e = prev
        .receive_into_with_tag(&mut small, 1)
        .expect_err("truncated receive");
    check_eq!(rank, e.class(), ErrorClass::Truncate, "{e}");
    check_eq!(
        rank,
        e.message(),
        format!(
            "receive_into_with_tag: MPI_ERR_TRUNCATE: message from rank {} with tag 1 is longer than the receive buffer (16 bytes)",
            prev.rank()
        ),
        "truncation message"
    );
    check_eq!(
        rank,
        small,
        [prev.rank(); 4],
        "the part of a truncated message that fits"
    );

    // Truncation of a single value and a too-short message for `receive`.
    next.send_with_tag(&[1u64, 2], 2)?;
    let e = prev
        .receive_with_tag::<u64>(2)
        .expect_err("two values into one");
    check_eq!(rank, e.class(), ErrorClass::Truncate, "{e}");
    next.send_with_tag(&7u16, 3)?;
    let e = prev
        .receive_with_tag::<u64>(3)
        .expect_err("two bytes as a u64");
    check_eq!(rank, e.class(), ErrorClass::Count, "{e}");
    check!(
        rank,
        e.message()
            .starts_with("receive_with_tag: MPI_ERR_COUNT: message from rank"),
        "{e}"
    );

    // Truncation seen by an immediate receive and by wait_all (with the request index).
    next.send_with_tag(&[0u8; 9], 4)?;
    next.send_with_tag(&[0u8; 2], 5)?;
    next.send_with_tag(&[0u8; 9], 6)?;
    let mut x = [0u8; 8];
    let mut y = [0u8; 8];
    let mut z = [0u8; 8];
    request::scope(|s| -> Result<(), oxmpi::Error> {
        let r = prev.immediate_receive_into_with_tag(s, &mut x, 4)?;
        let e = r.wait().expect_err("immediate truncation");
        check_eq!(rank, e.class(), ErrorClass::Truncate, "{e}");
        check!(
            rank,
            e.message()
                .starts_with("immediate_receive_into_with_tag: MPI_ERR_TRUNCATE"),
            "{e}"
        );
        let mut both = vec![
            prev.immediate_receive_into_with_tag(s, &mut y, 5)?,
            prev.immediate_receive_into_with_tag(s, &mut z, 6)?,
        ];
        let e = request::wait_all(&mut both).expect_err("wait_all with a truncated receive");
        check_eq!(rank, e.class(), ErrorClass::Truncate, "{e}");
        check!(
            rank,
            e.message()
                .starts_with("wait_all: MPI_ERR_TRUNCATE: request 1: message from rank"),
            "{e}"
        );
        check!(rank, both.is_empty(), "wait_all finished every request");
        Ok(())
    })?;

    // Destination and source from different communicators.
    let me = universe.self_comm();
    let mut sink = [0u8; 1];
    let e = send_receive_into(&[1u8], &next, &mut sink, &me.process_at_rank(0))
        .expect_err("mixed communicators");
    check_eq!(rank, e.class(), ErrorClass::Comm, "{e}");

    // Cancel a receive nothing will match: it completes as cancelled, buffer untouched.
    let mut untouched = [42i32; 3];
    request::scope(|s| -> Result<(), oxmpi::Error> {
        let r = world
            .any_process()
            .immediate_receive_into_with_tag(s, &mut untouched, 77)?;
        r.cancel()?;
        let st = r.wait()?;
        check!(rank, st.is_cancelled(), "receive reported cancelled");
        Ok(())
    })?;
    check_eq!(
        rank,
        untouched,
        [42; 3],
        "cancelled receive left the buffer alone"
    );

    // Persistent receive cancelled while active, then used normally.
    let mut pbuf = [0i16; 2];
    request::scope(|s| -> Result<(), oxmpi::Error> {
        let mut p = prev.receive_init_with_tag(s, &mut pbuf, 78)?;
        p.start()?;
        p.cancel()?;
        check!(
            rank,
            p.wait()?.is_cancelled(),
            "persistent receive cancelled"
        );
        p.start()?;
        // Send to the next rank only once it has cancelled its own receive.
        prev.send_with_tag(&0u8, 79)?;
        next.receive_with_tag::<u8>(79)?;
        next.send_with_tag(&[rank as i16, 1], 78)?;
        check!(
            rank,
            !p.wait()?.is_cancelled(),
            "restarted persistent receive completes"
        );
        check_eq!(
            rank,
            *p.buffer().expect("inactive"),
            [prev.rank() as i16, 1],
            "persistent data after cancel"
        );
        Ok(())
    })?;
    let mut one = [0u8; 1];
    let e = request::scope(|s| {
        bad.send_init_with_mode(s, &mut one, 0, SendMode::Standard)
            .map(|_| ())
    })
    .expect_err("send_init to an invalid rank");
    check_eq!(rank, e.class(), ErrorClass::Rank, "{e}");
    check!(
        rank,
        e.message().starts_with("send_init: MPI_ERR_RANK"),
        "{e}"
    );

    // After all that, communication still works: a ring exchange.
    let mut got = 0i32;
    send_receive_into(&rank, &next, &mut got, &prev)?;
    check_eq!(rank, got, prev.rank(), "ring exchange after the errors");
    check!(
        rank,
        world.any_process().immediate_probe()?.is_none(),
        "no stray message"
    );

    if rank == 0 {
        println!("check_errors: passed on {size} ranks");
    }
    Ok(())
}
