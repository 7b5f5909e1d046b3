//! Test program: the tool information interface from Rust. Before MPI starts, the
//! shared-memory path of collectives is switched off through its control variable;
//! then every rank counts, in a performance-variable session bound to the world, the
//! messages and bytes it exchanges with its ring neighbours (exact values by peer), and
//! forces the algorithm of `all_reduce_into` at run time, which the collective
//! variables then report.

use oxmpi::collective::SystemOperation;
use oxmpi::tools::{CvarValue, PvarValue, Tools};
use oxmpi::traits::*;

mod common;

fn u64s(v: PvarValue) -> Vec<u64> {
    match v {
        PvarValue::U64(x) => x,
        other => panic!("not a counter: {other:?}"),
    }
}

/// Unwraps a result of the tools interface or fails the program.
fn ok<T>(rank: i32, r: oxmpi::tools::Result<T>, what: &str) -> T {
    match r {
        Ok(v) => v,
        Err(e) => common::fail(rank, format_args!("{what}: {e}")),
    }
}

fn main() -> Result<(), oxmpi::Error> {
    let tools = Tools::init().expect("MPI_T_init_thread");
    tools
        .write_cvar("OXMPI_COLL_SHM", &CvarValue::Int(0))
        .expect("write before MPI_Init");
    let universe = oxmpi::initialize()?;
    let world = universe.world();
    let (rank, size) = (world.rank(), world.size());
    check_eq!(
        rank,
        tools.read_cvar("OXMPI_COLL_SHM").unwrap(),
        CvarValue::Int(0),
        "OXMPI_COLL_SHM after MPI_Init"
    );
    let session = ok(rank, tools.session(), "session");
    let names = [
        "p2p_messages_sent",
        "p2p_bytes_sent",
        "p2p_messages_received",
        "p2p_bytes_received",
    ];
    let handles: Vec<_> = names
        .iter()
        .map(|n| ok(rank, session.pvar(n, Some(&world)), n))
        .collect();
    for h in &handles {
        check_eq!(rank, h.count(), size as usize, "elements by rank");
        ok(rank, h.start(), "start");
    }
    let next = world.process_at_rank((rank + 1) % size);
    let prev = world.process_at_rank((rank + size - 1) % size);
    // Three messages of 1, 2 and 3 u64 to the next rank, received from the previous.
    let data: Vec<u64> = (0..6).collect();
    oxmpi::request::scope(|scope| -> Result<(), oxmpi::Error> {
        let mut sends = Vec::new();
        for (k, range) in [(0, 0..1), (1, 1..3), (2, 3..6)] {
            sends.push(next.immediate_send_with_tag(scope, &data[range], k)?);
        }
        for k in 0..3 {
            let (v, _) = prev.receive_vec_with_tag::<u64>(k)?;
            check_eq!(rank, v.len(), k as usize + 1, "message {k}");
        }
        oxmpi::request::wait_all(&mut sends)?;
        Ok(())
    })?;
    for h in &handles {
        ok(rank, h.stop(), "stop");
    }
    let mut want = vec![vec![0u64; size as usize]; 4];
    want[0][next.rank() as usize] += 3;
    want[1][next.rank() as usize] += 48;
    want[2][prev.rank() as usize] += 3;
    want[3][prev.rank() as usize] += 48;
    for (k, h) in handles.iter().enumerate() {
        check_eq!(
            rank,
            u64s(ok(rank, h.read(), "read")),
            want[k],
            "{}",
            names[k]
        );
    }

    // A collective algorithm forced while MPI runs.
    if size >= 2 {
        let calls = ok(rank, session.pvar("coll_algorithm_calls", None), "calls");
        let last = ok(rank, session.pvar("coll_last_algorithm", None), "last");
        ok(rank, calls.start(), "start");
        let words = tools
            .cvars()
            .into_iter()
            .find(|c| c.name == "OXMPI_COLL_ALLREDUCE_ALGO")
            .and_then(|c| c.items)
            .expect("the allreduce algorithm is an enumeration");
        let ring = words.iter().position(|w| *w == "ring").expect("ring") as i32;
        ok(
            rank,
            tools.write_cvar("OXMPI_COLL_ALLREDUCE_ALGO", &CvarValue::Int(ring)),
            "force ring",
        );
        let x = [rank as i64 + 1; 32];
        let mut y = [0i64; 32];
        world.all_reduce_into(&x[..], &mut y[..], SystemOperation::sum())?;
        check_eq!(rank, y[0], (size as i64) * (size as i64 + 1) / 2, "sum");
        let counts = u64s(ok(rank, calls.read(), "read"));
        check_eq!(rank, counts.iter().sum::<u64>(), 1, "one algorithm run");
        let state = match ok(rank, last.read(), "read") {
            PvarValue::Int(v) => v[0],
            other => common::fail(rank, format_args!("not a state: {other:?}")),
        };
        check_eq!(
            rank,
            counts[state as usize - 1],
            1,
            "the last algorithm is the one counted"
        );
        let forced = oxmpi::tools::algorithm_name(state);
        check_eq!(rank, forced, Some("Allreduce:ring"), "algorithm run");
    }
    drop(session);
    if rank == 0 {
        println!("check_tools: passed on {size} ranks");
    }
    Ok(())
}
