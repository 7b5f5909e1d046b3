//! Test program: every send mode (standard, buffered, synchronous, ready), blocking and
//! immediate, at small (eager) and large (rendezvous) sizes, for several element types.
//! Each rank sends to the next rank and receives from the previous one; data, source,
//! tag and count are checked. Exits non-zero on the first wrong result.

use oxmpi::buffer::{buffered_size, BufferAttachment};
use oxmpi::point_to_point::{SendMode, Status};
use oxmpi::topology::Process;
use oxmpi::traits::*;

mod common;

const ACK: i32 = 999;
const MODES: [SendMode; 4] = [
    SendMode::Standard,
    SendMode::Buffered,
    SendMode::Synchronous,
    SendMode::Ready,
];

/// One exchange around the ring: the receive is posted, the previous rank is told so
/// (ready mode needs it), then the message is sent in `mode`.
#[allow(clippy::too_many_arguments)]
fn exchange<T: Equivalence + Copy + PartialEq + std::fmt::Debug>(
    rank: i32,
    next: &Process<'_>,
    prev: &Process<'_>,
    out: &[T],
    mut incoming: Vec<T>,
    expected: &[T],
    tag: i32,
    mode: SendMode,
    immediate: bool,
) -> Result<(), oxmpi::Error> {
    let status: Status = oxmpi::request::scope(|scope| -> Result<Status, oxmpi::Error> {
        let recv = prev.immediate_receive_into_with_tag(scope, &mut incoming[..], tag)?;
        let none: [u8; 0] = [];
        prev.send_with_tag(&none[..], ACK)?;
        let mut got_ack: [u8; 0] = [];
        next.receive_into_with_tag(&mut got_ack[..], ACK)?;
        if immediate {
            let send = next.immediate_send_with_mode(scope, out, tag, mode)?;
            let s = send.wait()?;
            check!(rank, !s.is_cancelled(), "send status not cancelled");
        } else {
            next.send_with_mode(out, tag, mode)?;
        }
        recv.wait()
    })?;
    let what = format!(
        "{mode:?} immediate={immediate} tag={tag} {} values of {}",
        out.len(),
        std::any::type_name::<T>()
    );
    check_eq!(rank, status.source_rank(), prev.rank(), "source of {what}");
    check_eq!(rank, status.tag(), tag, "tag of {what}");
    check_eq!(
        rank,
        status.count_of::<T>(),
        expected.len() as i32,
        "count of {what}"
    );
    check!(
        rank,
        incoming[..expected.len()] == *expected,
        "data of {what}"
    );
    Ok(())
}

fn main() -> Result<(), oxmpi::Error> {
    let universe = oxmpi::initialize()?;
    let world = universe.world();
    let (rank, size) = (world.rank(), world.size());
    let next = world.process_at_rank((rank + 1) % size);
    let prev = world.process_at_rank((rank + size - 1) % size);
    let _attachment = BufferAttachment::new(2 * buffered_size::<f64>(40_000))?;

    let mut tag = 0;
    for mode in MODES {
        for immediate in [false, true] {
            for n in [0usize, 1, 7, 40_000] {
                tag += 1;
                let out: Vec<f64> = (0..n)
                    .map(|i| f64::from(rank) * 1e6 + i as f64 + 0.5)
                    .collect();
                let exp: Vec<f64> = (0..n)
                    .map(|i| f64::from(prev.rank()) * 1e6 + i as f64 + 0.5)
                    .collect();
                // A receive buffer larger than the message: the count tells the length.
                exchange(
                    rank,
                    &next,
                    &prev,
                    &out,
                    vec![0.0; n + 3],
                    &exp,
                    tag,
                    mode,
                    immediate,
                )?;
            }
            tag += 1;
            let out: Vec<[u16; 3]> = (0..100).map(|i| [rank as u16, i, 7]).collect();
            let exp: Vec<[u16; 3]> = (0..100).map(|i| [prev.rank() as u16, i, 7]).collect();
            exchange(
                rank,
                &next,
                &prev,
                &out,
                vec![[0; 3]; 100],
                &exp,
                tag,
                mode,
                immediate,
            )?;
            tag += 1;
            let out: Vec<bool> = (0..33).map(|i| (i + rank) % 3 == 0).collect();
            let exp: Vec<bool> = (0..33).map(|i| (i + prev.rank()) % 3 == 0).collect();
            exchange(
                rank,
                &next,
                &prev,
                &out,
                vec![false; 33],
                &exp,
                tag,
                mode,
                immediate,
            )?;
            tag += 1;
            let out: Vec<i8> = (0..5).map(|i| -(i as i8) - rank as i8).collect();
            let exp: Vec<i8> = (0..5).map(|i| -(i as i8) - prev.rank() as i8).collect();
            exchange(
                rank,
                &next,
                &prev,
                &out,
                vec![0; 5],
                &exp,
                tag,
                mode,
                immediate,
            )?;
        }
    }

    // Single values with the blocking receive of a value.
    next.send_with_tag(&(u64::MAX - rank as u64), 1)?;
    let (v, s) = prev.receive_with_tag::<u64>(1)?;
    check_eq!(rank, v, u64::MAX - prev.rank() as u64, "u64 value");
    check_eq!(
        rank,
        (s.source_rank(), s.tag()),
        (prev.rank(), 1),
        "u64 status"
    );
    next.buffered_send_with_tag(&[rank as f32; 4], 2)?;
    let (arr, _) = prev.receive_with_tag::<[f32; 4]>(2)?;
    check_eq!(rank, arr, [prev.rank() as f32; 4], "array value");

    if rank == 0 {
        println!("check_modes: all modes passed on {size} ranks");
    }
    Ok(())
}
