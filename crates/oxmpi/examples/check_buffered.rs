//! Test program: buffered-mode sends through a `BufferAttachment`. Each rank sends to
//! every rank (itself included) several buffered messages before receiving, so the
//! sends must complete from the attached buffer; a message that cannot fit is an error
//! of class MPI_ERR_BUFFER; a second attachment is refused; detaching waits for the
//! messages to leave.

use oxmpi::buffer::{buffered_size, BufferAttachment};
use oxmpi::point_to_point::SendMode;
use oxmpi::request;
use oxmpi::traits::*;
use oxmpi::ErrorClass;

mod common;

const PER_PEER: usize = 3;
const LEN: usize = 3000; // f64s: 24 000 bytes, above the eager limit

fn main() -> Result<(), oxmpi::Error> {
    let universe = oxmpi::initialize()?;
    let world = universe.world();
    let (rank, size) = (world.rank(), world.size());
    let n = size as usize;

    let attachment = BufferAttachment::new(n * PER_PEER * buffered_size::<f64>(LEN))?;
    check_eq!(
        rank,
        attachment.size(),
        n * PER_PEER * buffered_size::<f64>(LEN),
        "attachment size"
    );
    let e = BufferAttachment::new(64).expect_err("second attachment");
    check_eq!(rank, e.class(), ErrorClass::Buffer, "{e}");
    check!(
        rank,
        e.message()
            .starts_with("BufferAttachment::new: MPI_ERR_BUFFER"),
        "{e}"
    );

    // Fill the buffer: PER_PEER messages to every rank, blocking and immediate.
    for dest in 0..size {
        let p = world.process_at_rank(dest);
        for k in 0..PER_PEER {
            let data: Vec<f64> = (0..LEN)
                .map(|i| (rank * 1000 + dest) as f64 + k as f64 * 0.25 + i as f64)
                .collect();
            if k == 1 {
                request::scope(|s| -> Result<(), oxmpi::Error> {
                    // Completes as soon as the data is copied out.
                    p.immediate_buffered_send_with_tag(s, &data[..], k as i32)?
                        .wait()?;
                    Ok(())
                })?;
            } else {
                p.buffered_send_with_tag(&data[..], k as i32)?;
            }
        }
    }
    // A message larger than the whole attached buffer can never fit.
    let too_big = vec![0f64; attachment.size() / 8 + 1];
    let e = world
        .this_process()
        .buffered_send(&too_big[..])
        .expect_err("message larger than the buffer");
    check_eq!(rank, e.class(), ErrorClass::Buffer, "{e}");
    check!(
        rank,
        e.message()
            .starts_with("buffered_send: MPI_ERR_BUFFER: attached buffer too small"),
        "{e}"
    );

    for src in 0..size {
        let p = world.process_at_rank(src);
        for k in 0..PER_PEER {
            let (v, s) = p.receive_vec_with_tag::<f64>(k as i32)?;
            check_eq!(
                rank,
                (s.source_rank(), s.tag(), v.len()),
                (src, k as i32, LEN),
                "buffered message status"
            );
            let ok = v
                .iter()
                .enumerate()
                .all(|(i, &x)| x == (src * 1000 + rank) as f64 + k as f64 * 0.25 + i as f64);
            check!(rank, ok, "data of buffered message {k} from {src}");
        }
    }

    // Persistent buffered sends to the next rank, restarted with new data.
    let next = world.process_at_rank((rank + 1) % size);
    let prev = world.process_at_rank((rank + size - 1) % size);
    let mut out = [0u32; 5];
    request::scope(|s| -> Result<(), oxmpi::Error> {
        let mut send = next.send_init_with_mode(s, &mut out, 9, SendMode::Buffered)?;
        for round in 0..4u32 {
            send.buffer_mut()
                .expect("inactive")
                .fill(round + rank as u32);
            send.start()?;
            send.wait()?;
            let (v, _) = prev.receive_with_tag::<[u32; 5]>(9)?;
            check_eq!(
                rank,
                v,
                [round + prev.rank() as u32; 5],
                "persistent buffered round {round}"
            );
        }
        Ok(())
    })?;

    // Detach (waits for anything still buffered), then buffered sends fail again.
    world
        .this_process()
        .buffered_send_with_tag(&[1u8, 2, 3], 11)?;
    attachment.detach()?;
    let e = world
        .this_process()
        .buffered_send(&1u8)
        .expect_err("bsend after detach");
    check_eq!(rank, e.class(), ErrorClass::Buffer, "{e}");
    let (v, _) = world.this_process().receive_with_tag::<[u8; 3]>(11)?;
    check_eq!(rank, v, [1, 2, 3], "message buffered before the detach");

    // A new attachment works, and dropping it detaches.
    {
        let _again = BufferAttachment::new(buffered_size::<u8>(8))?;
        next.buffered_send_with_tag(&[rank as u8; 8], 12)?;
    }
    let (v, _) = prev.receive_with_tag::<[u8; 8]>(12)?;
    check_eq!(rank, v, [prev.rank() as u8; 8], "after re-attaching");

    if rank == 0 {
        println!("check_buffered: passed on {size} ranks");
    }
    Ok(())
}
