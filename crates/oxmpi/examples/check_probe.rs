//! Test program: probes and `receive_vec`. Every rank sends the next rank messages of
//! lengths that depend on the sender (including empty and rendezvous-sized ones); the
//! receiver probes to learn source, tag and length, then receives them into vectors
//! sized by the message. A message that is not a whole number of elements is an error
//! of class MPI_ERR_TYPE and is consumed.

use oxmpi::traits::*;
use oxmpi::ErrorClass;

mod common;

fn payload(sender: i32, k: usize) -> Vec<u32> {
    let len = match k {
        0 => 0,
        1 => 1 + sender as usize,
        2 => 100 * (sender as usize + 1),
        _ => 60_000 + sender as usize, // beyond the eager limit
    };
    (0..len).map(|i| (sender as u32) << 24 | i as u32).collect()
}

fn main() -> Result<(), oxmpi::Error> {
    let universe = oxmpi::initialize()?;
    let world = universe.world();
    let (rank, size) = (world.rank(), world.size());
    let next = world.process_at_rank((rank + 1) % size);
    let prev = world.process_at_rank((rank + size - 1) % size);
    let p = prev.rank();

    let msgs: Vec<Vec<u32>> = (0..4).map(|k| payload(rank, k)).collect();
    let odd: [u8; 6] = [1, 2, 3, 4, 5, 6];
    let triple = [rank as u32; 3];
    oxmpi::request::scope(|scope| -> Result<(), oxmpi::Error> {
        let mut sends = Vec::new();
        for (k, m) in msgs.iter().enumerate() {
            sends.push(next.immediate_send_with_tag(scope, &m[..], 10 + k as i32)?);
        }
        sends.push(next.immediate_send_with_tag(scope, &odd[..], 20)?);
        sends.push(next.immediate_send_with_tag(scope, &triple, 21)?);

        // Blocking probe with the source fixed: the first message (tag 10, empty).
        let s = prev.probe()?;
        check_eq!(
            rank,
            (s.source_rank(), s.tag(), s.count_of::<u32>()),
            (p, 10, 0),
            "probe of the empty message"
        );
        let (v, s) = prev.receive_vec::<u32>()?;
        check!(
            rank,
            v.is_empty() && s.tag() == 10,
            "empty message received as an empty vector"
        );

        // Probe for a given tag, out of order: tag 12 before 11.
        let s = prev.probe_with_tag(12)?;
        check_eq!(
            rank,
            s.count_of::<u32>(),
            payload(p, 2).len() as i32,
            "probed length of tag 12"
        );
        check_eq!(
            rank,
            s.byte_count(),
            4 * payload(p, 2).len(),
            "probed bytes of tag 12"
        );
        let (v, _) = prev.receive_vec_with_tag::<u32>(12)?;
        check!(rank, v == payload(p, 2), "data of tag 12");

        // Immediate probe with any source until the tag 11 message shows up.
        let s = loop {
            if let Some(s) = world.any_process().immediate_probe_with_tag(11)? {
                break s;
            }
        };
        check_eq!(
            rank,
            (s.source_rank(), s.count_of::<u32>()),
            (p, payload(p, 1).len() as i32),
            "iprobe of tag 11"
        );
        let (v, s) = world.any_process().receive_vec_with_tag::<u32>(11)?;
        check!(
            rank,
            v == payload(p, 1) && s.source_rank() == p,
            "data of tag 11"
        );

        // The large message through receive_vec with any source and tag.
        let (v, s) = world.any_process().receive_vec::<u32>()?;
        check_eq!(
            rank,
            (s.tag(), v.len()),
            (13, payload(p, 3).len()),
            "large message"
        );
        check!(rank, v == payload(p, 3), "data of the large message");

        // Six bytes are not a whole number of u32: an error, and the message is consumed.
        let e = prev
            .receive_vec_with_tag::<u32>(20)
            .expect_err("6 bytes as u32 must fail");
        check_eq!(
            rank,
            e.class(),
            ErrorClass::Type,
            "class of the partial-element error: {e}"
        );
        check!(
            rank,
            e.message()
                .starts_with("receive_vec_with_tag: MPI_ERR_TYPE: message from rank"),
            "message: {e}"
        );
        check!(
            rank,
            prev.immediate_probe_with_tag(20)?.is_none(),
            "the partial message was consumed"
        );

        // As arrays: 3 u32 are one [u32; 3].
        let (v, s) = prev.receive_vec_with_tag::<[u32; 3]>(21)?;
        check_eq!(
            rank,
            (v, s.count_of::<[u32; 3]>()),
            (vec![[p as u32; 3]], 1),
            "array message"
        );

        oxmpi::request::wait_all(&mut sends)?;
        Ok(())
    })?;
    if rank == 0 {
        println!("check_probe: passed on {size} ranks");
    }
    Ok(())
}
