//! Prints, once initialized, the CPUs each rank may run on, one line per rank:
//! `rank R of N cpus LIST` with LIST as the kernel writes it (`Cpus_allowed_list`).

use oxmpi::traits::*;

fn main() -> Result<(), oxmpi::Error> {
    let universe = oxmpi::initialize()?;
    let world = universe.world();
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let cpus = status
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
        .map_or("unknown", str::trim);
    println!("rank {} of {} cpus {cpus}", world.rank(), world.size());
    Ok(())
}
