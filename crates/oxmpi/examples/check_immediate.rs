//! Test program: nonblocking operations in scopes. All-to-all exchange with immediate
//! sends and receives completed by `wait_all`, `wait_any` and `test_any`; `test` polling;
//! requests dropped or forgotten unfinished (the scope waits for them); bytes other than
//! 0 and 1 received as `bool` (repaired to `true`); persistent requests restarted with
//! new data each round.

use oxmpi::request::{self, Request};
use oxmpi::traits::*;

mod common;

fn main() -> Result<(), oxmpi::Error> {
    let universe = oxmpi::initialize()?;
    let world = universe.world();
    let (rank, size) = (world.rank(), world.size());
    let n = size as usize;
    let next = world.process_at_rank((rank + 1) % size);
    let prev = world.process_at_rank((rank + size - 1) % size);

    // 1. All-to-all: receives completed with wait_any, sends with wait_all.
    let out: Vec<[i64; 4]> = (0..size).map(|d| [rank.into(), d.into(), 7, -1]).collect();
    let mut inbox = vec![[0i64; 4]; n];
    let mut order = Vec::new();
    request::scope(|scope| -> Result<(), oxmpi::Error> {
        let mut recvs: Vec<Request<'_, _>> = Vec::new();
        for (src, slot) in inbox.iter_mut().enumerate() {
            recvs.push(
                world
                    .process_at_rank(src as i32)
                    .immediate_receive_into_with_tag(scope, slot, 5)?,
            );
        }
        let mut sends = Vec::new();
        for (dest, msg) in out.iter().enumerate() {
            sends.push(
                world
                    .process_at_rank(dest as i32)
                    .immediate_send_with_tag(scope, msg, 5)?,
            );
        }
        let mut index_of: Vec<usize> = (0..n).collect();
        while let Some((i, s)) = request::wait_any(&mut recvs)? {
            let src = index_of.remove(i);
            check_eq!(
                rank,
                s.source_rank(),
                src as i32,
                "wait_any index {i} maps to source"
            );
            check_eq!(rank, s.count_of::<[i64; 4]>(), 1, "count from {src}");
            order.push(src);
        }
        let statuses = request::wait_all(&mut sends)?;
        check!(
            rank,
            sends.is_empty() && statuses.len() == n,
            "wait_all drained the sends"
        );
        Ok(())
    })?;
    for (src, m) in inbox.iter().enumerate() {
        check_eq!(
            rank,
            *m,
            [src as i64, rank.into(), 7, -1],
            "all-to-all data from {src}"
        );
    }
    order.sort_unstable();
    check!(
        rank,
        order == (0..n).collect::<Vec<_>>(),
        "every source once: {order:?}"
    );

    // 2. test_any and Request::test polling, synchronous and ready modes.
    let mut a = [0u32; 16];
    let mut b = [0u32; 16];
    let big_out = vec![rank as u32; 50_000];
    let mut big_in = vec![0u32; 50_000];
    let small_out = [rank as u32 + 1; 16];
    request::scope(|scope| -> Result<(), oxmpi::Error> {
        let mut recvs = vec![
            prev.immediate_receive_into_with_tag(scope, &mut a, 1)?,
            prev.immediate_receive_into_with_tag(scope, &mut b, 2)?,
        ];
        let big = prev.immediate_receive_into_with_tag(scope, &mut big_in[..], 3)?;
        // Tell the previous rank our receives are posted (ready mode needs that).
        prev.send_with_tag(&0u8, 9)?;
        next.receive_with_tag::<u8>(9)?;
        let s2 = next.immediate_ready_send_with_tag(scope, &small_out, 2)?;
        let s1 = next.immediate_synchronous_send_with_tag(scope, &small_out, 1)?;
        let s3 = next.immediate_send_with_tag(scope, &big_out[..], 3)?;
        let mut got = Vec::new();
        while !recvs.is_empty() {
            if let Some((i, s)) = request::test_any(&mut recvs)? {
                got.push((i, s.tag()));
            }
        }
        check!(rank, got.len() == 2, "test_any completed both: {got:?}");
        let mut big = big;
        let status = loop {
            match big.test()? {
                Ok(s) => break s,
                Err(pending) => big = pending,
            }
        };
        check_eq!(
            rank,
            status.count_of::<u32>(),
            50_000,
            "large receive by test polling"
        );
        for s in [s1, s2, s3] {
            s.wait()?;
        }
        Ok(())
    })?;
    check!(
        rank,
        a == [prev.rank() as u32 + 1; 16] && b == a,
        "tagged receives"
    );
    check!(
        rank,
        big_in.iter().all(|&x| x == prev.rank() as u32),
        "large data"
    );

    // 3. Unfinished requests: one dropped (waits), one forgotten (the scope waits).
    let mut dropped_into = [0u16; 8];
    let mut forgotten_into = [0u16; 8];
    let payload = [rank as u16 * 3; 8];
    request::scope(|scope| -> Result<(), oxmpi::Error> {
        let r1 = prev.immediate_receive_into_with_tag(scope, &mut dropped_into, 30)?;
        let r2 = prev.immediate_receive_into_with_tag(scope, &mut forgotten_into, 31)?;
        next.send_with_tag(&payload, 30)?;
        next.send_with_tag(&payload, 31)?;
        drop(r1);
        std::mem::forget(r2);
        Ok(())
    })?;
    check_eq!(
        rank,
        dropped_into,
        [prev.rank() as u16 * 3; 8],
        "dropped request completed"
    );
    check_eq!(
        rank,
        forgotten_into,
        [prev.rank() as u16 * 3; 8],
        "forgotten request completed by the scope"
    );

    // 4. Bytes 0..=255 received as bool: only 0 is false.
    let raw: Vec<u8> = (0..=255).collect();
    let mut flags = vec![false; 256];
    request::scope(|scope| -> Result<(), oxmpi::Error> {
        let r = prev.immediate_receive_into_with_tag(scope, &mut flags[..], 40)?;
        next.send_with_tag(&raw[..], 40)?;
        r.wait()?;
        Ok(())
    })?;
    check!(
        rank,
        !flags[0] && flags[1..].iter().all(|&f| f),
        "bool repair"
    );
    next.send_with_tag(&[0u8, 2, 1, 77], 41)?;
    let (v, _) = prev.receive_with_tag::<[bool; 4]>(41)?;
    check_eq!(
        rank,
        v,
        [false, true, true, true],
        "bool array repair (blocking)"
    );
    let as_bytes: [u8; 4] = v.map(u8::from);
    check_eq!(
        rank,
        as_bytes,
        [0, 1, 1, 1],
        "repaired bools are 0 or 1 in memory"
    );

    // 5. Persistent requests: the data changes every round.
    let mut send_buf = [0i32; 10];
    let mut recv_buf = [0i32; 10];
    request::scope(|scope| -> Result<(), oxmpi::Error> {
        let mut recv = prev.receive_init_with_tag(scope, &mut recv_buf, 50)?;
        let mut send = next.send_init_with_mode(
            scope,
            &mut send_buf,
            50,
            oxmpi::point_to_point::SendMode::Standard,
        )?;
        for round in 0..5 {
            send.buffer_mut().expect("inactive")[..].fill(rank * 100 + round);
            recv.start()?;
            send.start()?;
            check!(
                rank,
                send.buffer().is_none(),
                "buffer is lent to the engine while active"
            );
            let e = send.start().expect_err("starting an active request");
            check_eq!(
                rank,
                e.class(),
                oxmpi::ErrorClass::Request,
                "double start: {e}"
            );
            let s = recv.wait()?;
            check_eq!(
                rank,
                (s.source_rank(), s.tag(), s.count_of::<i32>()),
                (prev.rank(), 50, 10),
                "persistent status"
            );
            send.wait()?;
            let got = *recv.buffer().expect("inactive");
            check_eq!(
                rank,
                got,
                [prev.rank() * 100 + round; 10],
                "persistent data in round {round}"
            );
        }
        let idle = recv.wait()?;
        check_eq!(
            rank,
            idle.source_rank(),
            oxmpi::ANY_SOURCE,
            "wait on an inactive request is empty"
        );
        Ok(())
    })?;
    check_eq!(
        rank,
        recv_buf,
        [prev.rank() * 100 + 4; 10],
        "last persistent round"
    );

    // 6. The static scope: requests on 'static buffers need no scope.
    static OUT: [u8; 3] = [1, 2, 3];
    let r = next.immediate_send_with_tag(request::StaticScope, &OUT, 60)?;
    let (v, _) = prev.receive_with_tag::<[u8; 3]>(60)?;
    r.wait()?;
    check_eq!(rank, v, OUT, "static-scope send");

    if rank == 0 {
        println!("check_immediate: passed on {size} ranks");
    }
    Ok(())
}
