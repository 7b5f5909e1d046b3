//! Prints one line per rank: `Hello from rank R of N`.

use oxmpi::traits::*;

fn main() -> Result<(), oxmpi::Error> {
    let universe = oxmpi::initialize()?;
    let world = universe.world();
    println!("Hello from rank {} of {}", world.rank(), world.size());
    Ok(())
}
