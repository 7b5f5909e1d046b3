//! Passes a token around the ring of ranks: rank 0 starts it at 0, every rank adds its
//! own rank and passes it on, and rank 0 checks that it comes back as 0 + 1 + ... + (N-1).

use oxmpi::traits::*;

mod common;

fn main() -> Result<(), oxmpi::Error> {
    let universe = oxmpi::initialize()?;
    let world = universe.world();
    let (rank, size) = (world.rank(), world.size());
    let next = world.process_at_rank((rank + 1) % size);
    let prev = world.process_at_rank((rank + size - 1) % size);

    if rank == 0 {
        next.send(&0i64)?;
        let (token, status) = prev.receive::<i64>()?;
        let expected = i64::from(size) * i64::from(size - 1) / 2;
        check_eq!(
            rank,
            token,
            expected,
            "token after a trip around {size} ranks"
        );
        check_eq!(
            rank,
            status.source_rank(),
            prev.rank(),
            "sender of the token"
        );
        println!("ring: the token went around {size} ranks and came back as {token}");
    } else {
        let (token, _) = prev.receive::<i64>()?;
        next.send(&(token + i64::from(rank)))?;
    }
    Ok(())
}
