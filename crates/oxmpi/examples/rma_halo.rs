//! A halo exchange with fence epochs: each rank owns a strip of a 1-D grid with one
//! ghost cell at each end; in every step it puts its edge values into its neighbours'
//! ghost cells (periodic), then updates its interior from the ghosts. Checked against
//! the same computation done serially on every rank.

use oxmpi::traits::*;
use oxmpi::window::Window;

mod common;
use common::ok;

const CELLS: usize = 8;
const STEPS: usize = 5;

/// One step of the smoothing rule on a strip with ghosts at 0 and CELLS + 1.
fn step(strip: &mut [f64]) {
    let old = strip.to_vec();
    for i in 1..=CELLS {
        strip[i] = (old[i - 1] + 2.0 * old[i] + old[i + 1]) / 4.0;
    }
}

fn main() -> Result<(), oxmpi::Error> {
    let universe = oxmpi::initialize()?;
    let world = universe.world();
    let (rank, size) = (world.rank(), world.size());
    let init = |g: usize| ((g * 37) % 11) as f64;
    let start: Vec<f64> = (0..CELLS + 2)
        .map(|i| {
            if (1..=CELLS).contains(&i) {
                init(rank as usize * CELLS + i - 1)
            } else {
                0.0
            }
        })
        .collect();
    let mut win = ok(rank, Window::create(&world, start), "create");
    let left = (rank + size - 1) % size;
    let right = (rank + 1) % size;
    for _ in 0..STEPS {
        let (first, last) = ok(rank, win.with_local(|s| (s[1], s[CELLS])), "with_local");
        let (first, last) = ([first], [last]);
        ok(
            rank,
            win.fence_epoch(|e| {
                // My first cell is my left neighbour's right ghost, my last its left one.
                e.put(&first, left, CELLS + 1)?;
                e.put(&last, right, 0)
            }),
            "fence epoch",
        );
        ok(rank, win.with_local(step), "step");
    }
    // The serial computation of the whole grid.
    let n = CELLS * size as usize;
    let mut grid: Vec<f64> = (0..n).map(init).collect();
    for _ in 0..STEPS {
        let old = grid.clone();
        for (g, v) in grid.iter_mut().enumerate() {
            *v = (old[(g + n - 1) % n] + 2.0 * old[g] + old[(g + 1) % n]) / 4.0;
        }
    }
    let mine = ok(
        rank,
        win.with_local(|s| s[1..=CELLS].to_vec()),
        "with_local",
    );
    let want = &grid[rank as usize * CELLS..(rank as usize + 1) * CELLS];
    check_eq!(rank, mine.as_slice(), want, "strip after {STEPS} steps");
    world.barrier()?;
    ok(rank, win.free(), "free");
    if rank == 0 {
        println!("rma_halo: passed on {size} ranks");
    }
    Ok(())
}
