//! Test program: matched probes. Every rank sends the next rank two messages with one
//! tag (A then B, eager or rendezvous sized); the receiver takes A with a matched
//! probe, after which a probe and a plain receive see only B, and A's own receive gets
//! A. Also: the immediate matched probe with an immediate matched receive, a value
//! received through `matched_receive`, a probe of `PROC_NULL`, and a dropped message
//! that is discarded (its sender completes, nothing else sees it).

use oxmpi::traits::*;
use oxmpi::ErrorClass;

mod common;

fn payload(sender: i32, which: u32, len: usize) -> Vec<u32> {
    (0..len)
        .map(|i| (sender as u32) << 24 | which << 20 | i as u32)
        .collect()
}

fn main() -> Result<(), oxmpi::Error> {
    let universe = oxmpi::initialize()?;
    let world = universe.world();
    let (rank, size) = (world.rank(), world.size());
    let next = world.process_at_rank((rank + 1) % size);
    let prev = world.process_at_rank((rank + size - 1) % size);
    let p = prev.rank();

    for (round, len) in [(0, 3usize), (1, 40_000)] {
        let tag = 10 + round;
        let (a, b) = (payload(rank, 1, len), payload(rank, 2, len));
        oxmpi::request::scope(|scope| -> Result<(), oxmpi::Error> {
            let sa = next.immediate_send_with_tag(scope, &a[..], tag)?;
            let sb = next.immediate_send_with_tag(scope, &b[..], tag)?;
            let (msg, s) = prev.matched_probe_with_tag(tag)?;
            check_eq!(
                rank,
                (s.source_rank(), s.tag(), s.count_of::<u32>()),
                (p, tag, len as i32),
                "matched probe of A ({len} values)"
            );
            // B is the only message left with this envelope.
            let s = prev.probe_with_tag(tag)?;
            check_eq!(
                rank,
                s.count_of::<u32>(),
                len as i32,
                "probe after the match"
            );
            let (got_b, _) = world.any_process().receive_vec_with_tag::<u32>(tag)?;
            check!(rank, got_b == payload(p, 2, len), "a plain receive got B");
            check!(
                rank,
                prev.immediate_matched_probe_with_tag(tag)?.is_none(),
                "nothing left to match"
            );
            let (got_a, s) = msg.matched_receive_vec::<u32>()?;
            check!(
                rank,
                got_a == payload(p, 1, len) && s.tag() == tag,
                "the matched receive got A"
            );
            sa.wait()?;
            sb.wait()?;
            Ok(())
        })?;
    }

    // Immediate matched probe and immediate matched receive; a truncation is reported.
    let big = payload(rank, 3, 1000);
    let mut into = vec![0u32; 1000];
    oxmpi::request::scope(|scope| -> Result<(), oxmpi::Error> {
        let s = next.immediate_send_with_tag(scope, &big[..], 20)?;
        let (msg, st) = loop {
            if let Some(found) = world.any_process().immediate_matched_probe()? {
                break found;
            }
        };
        check_eq!(
            rank,
            (st.source_rank(), st.tag()),
            (p, 20),
            "immediate match"
        );
        check_eq!(rank, msg.status().count_of::<u32>(), 1000, "status kept");
        let r = msg.immediate_matched_receive_into(scope, &mut into[..])?;
        let st = r.wait()?;
        check_eq!(
            rank,
            st.count_of::<u32>(),
            1000,
            "immediate matched receive"
        );
        s.wait()?;
        Ok(())
    })?;
    check!(
        rank,
        into == payload(p, 3, 1000),
        "data of the immediate receive"
    );

    next.send_with_tag(&(rank * 7), 21)?;
    let (v, st) = prev
        .matched_probe_with_tag(21)?
        .0
        .matched_receive::<i32>()?;
    check_eq!(rank, (v, st.source_rank()), (p * 7, p), "matched value");

    next.send_with_tag(&big[..8], 22)?;
    let (msg, _) = prev.matched_probe_with_tag(22)?;
    let mut small = [0u32; 4];
    let e = msg
        .matched_receive_into(&mut small[..])
        .expect_err("8 values into 4 must fail");
    check_eq!(rank, e.class(), ErrorClass::Truncate, "truncation: {e}");
    check!(rank, small[..] == payload(p, 3, 4)[..], "truncated data");

    // PROC_NULL: the no-process message, received at once.
    let none = world.process_at_rank(oxmpi::PROC_NULL);
    let (msg, st) = none.matched_probe()?;
    check!(
        rank,
        msg.is_no_proc(),
        "PROC_NULL gives the no-process message"
    );
    check_eq!(rank, st.source_rank(), oxmpi::PROC_NULL, "PROC_NULL status");
    let st = msg.matched_receive_into(&mut small[..])?;
    check_eq!(
        rank,
        st.source_rank(),
        oxmpi::PROC_NULL,
        "PROC_NULL receive"
    );

    // A dropped message is discarded: the sender completes and the next one is seen.
    let large = payload(rank, 4, 40_000);
    oxmpi::request::scope(|scope| -> Result<(), oxmpi::Error> {
        let s = next.immediate_send_with_tag(scope, &large[..], 23)?;
        let (msg, _) = prev.matched_probe_with_tag(23)?;
        drop(msg);
        s.wait()?;
        Ok(())
    })?;
    next.send_with_tag(&1u8, 23)?;
    let (v, _) = prev.receive_with_tag::<u8>(23)?;
    check_eq!(rank, v, 1, "the message after a dropped one");

    if rank == 0 {
        println!("check_matched_probe: passed on {size} ranks");
    }
    Ok(())
}
