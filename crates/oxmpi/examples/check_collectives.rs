//! Test program: every collective of the safe API, checking the values received on
//! every rank: barrier, broadcast, gather(v), scatter(v), all-gather(v), all-to-all(v),
//! reduce, all-reduce, reduce-scatter-block, scan, exclusive scan, with predefined
//! operations, commutative user operations and a non-commutative one that proves rank
//! order (concatenating decimal digits), plus local reductions and argument errors.

use oxmpi::collective::{
    reduce_local_into, Partition, PartitionMut, SystemOperation, UserOperation,
};
use oxmpi::traits::*;
use oxmpi::ErrorClass;

mod common;
use common::ok;

/// A sequence of decimal digits as `[length, number]`; combining two concatenates them,
/// which is associative but not commutative.
type Digits = [u64; 2];

fn concat(x: &[Digits], y: &mut [Digits]) {
    for (a, b) in x.iter().zip(y.iter_mut()) {
        *b = [a[0] + b[0], a[1] * 10u64.pow(b[0] as u32) + b[1]];
    }
}

/// The digits of ranks `lo..hi` concatenated.
fn digits(lo: i32, hi: i32) -> Digits {
    (lo..hi).fold([0, 0], |acc, r| [acc[0] + 1, acc[1] * 10 + r as u64])
}

fn main() -> Result<(), oxmpi::Error> {
    let universe = oxmpi::initialize()?;
    let world = universe.world();
    let (rank, size) = (world.rank(), world.size());
    let n = size as usize;
    let last = world.process_at_rank(size - 1);
    let first = world.process_at_rank(0);

    // Lets the launch tests see that a panicking user operation ends the job cleanly.
    if std::env::var_os("OXMPI_EXAMPLE_PANIC").is_some() {
        let bad = ok(
            rank,
            UserOperation::commutative(|_: &[i32], _: &mut [i32]| panic!("user op failed")),
            "UserOperation",
        );
        let mut y = 0i32;
        let r = world.all_reduce_into(&rank, &mut y, &bad);
        common::fail(rank, format_args!("the panicking operation returned {r:?}"));
    }

    ok(rank, world.barrier(), "barrier");

    // Broadcast: arrays, a long vector (rendezvous sizes), bools (repaired).
    let mut a = if rank == size - 1 {
        [7i32, -8, 9]
    } else {
        [0; 3]
    };
    ok(rank, last.broadcast_into(&mut a), "broadcast array");
    check_eq!(rank, a, [7, -8, 9], "broadcast array");
    let mut long: Vec<u32> = if rank == 0 {
        (0..100_000).collect()
    } else {
        vec![0; 100_000]
    };
    ok(rank, first.broadcast_into(&mut long[..]), "broadcast long");
    check!(
        rank,
        long.iter().enumerate().all(|(i, &x)| x == i as u32),
        "broadcast long data"
    );
    let mut flags = [rank == 0, false, rank == 0];
    ok(rank, first.broadcast_into(&mut flags), "broadcast bools");
    check_eq!(rank, flags, [true, false, true], "broadcast bools");

    // Gather and scatter, the root being the last rank.
    let mine = [rank, rank * 10];
    if rank == size - 1 {
        let mut all = vec![[0i32; 2]; n];
        ok(
            rank,
            last.gather_into_root(&mine, &mut all[..]),
            "gather_into_root",
        );
        check!(
            rank,
            all.iter()
                .enumerate()
                .all(|(i, v)| *v == [i as i32, i as i32 * 10]),
            "gathered {all:?}"
        );
    } else {
        ok(rank, last.gather_into(&mine), "gather_into");
    }
    let mut got = [0u16; 2];
    if rank == 0 {
        let out: Vec<u16> = (0..2 * n as u16).collect();
        ok(
            rank,
            first.scatter_into_root(&out[..], &mut got),
            "scatter_into_root",
        );
    } else {
        ok(rank, first.scatter_into(&mut got), "scatter_into");
    }
    check_eq!(
        rank,
        got,
        [2 * rank as u16, 2 * rank as u16 + 1],
        "scattered block"
    );

    // Varcount gather and scatter: rank i has i + 1 values.
    let counts: Vec<i32> = (1..=size).collect();
    let displs: Vec<i32> = (0..size).map(|i| i * (i + 1) / 2).collect();
    let total = (n * (n + 1)) / 2;
    let mine: Vec<f64> = (0..=rank).map(|k| rank as f64 + k as f64 / 10.0).collect();
    let expect: Vec<f64> = (0..size)
        .flat_map(|i| (0..=i).map(move |k| i as f64 + k as f64 / 10.0))
        .collect();
    if rank == 0 {
        let mut all = vec![0f64; total];
        let mut part = PartitionMut::new(&mut all[..], &counts[..], &displs[..]);
        ok(
            rank,
            first.gather_varcount_into_root(&mine[..], &mut part),
            "gather_varcount_into_root",
        );
        check_eq!(rank, all, expect, "gathered varcount");
        let mut back = vec![0f64; 1];
        ok(
            rank,
            first.scatter_varcount_into_root(
                &Partition::new(&all[..], &counts[..], &displs[..]),
                &mut back[..],
            ),
            "scatter_varcount_into_root",
        );
        check_eq!(rank, back, mine, "scatter varcount at root");
    } else {
        ok(
            rank,
            first.gather_varcount_into(&mine[..]),
            "gather_varcount_into",
        );
        let mut back = vec![0f64; rank as usize + 1];
        ok(
            rank,
            first.scatter_varcount_into(&mut back[..]),
            "scatter_varcount_into",
        );
        check_eq!(rank, back, mine, "scatter varcount");
    }

    // All-gather, fixed and varcount.
    let mut all = vec![0i64; 2 * n];
    ok(
        rank,
        world.all_gather_into(&[rank as i64, -(rank as i64)], &mut all[..]),
        "all_gather_into",
    );
    check!(
        rank,
        (0..n).all(|i| all[2 * i] == i as i64 && all[2 * i + 1] == -(i as i64)),
        "all-gathered {all:?}"
    );
    let mut all = vec![0f64; total];
    let mut part = PartitionMut::new(&mut all[..], &counts[..], &displs[..]);
    ok(
        rank,
        world.all_gather_varcount_into(&mine[..], &mut part),
        "all_gather_varcount_into",
    );
    check_eq!(rank, all, expect, "all-gathered varcount");

    // All-to-all: block j of rank i is [i * 100 + j; 2].
    let out: Vec<u32> = (0..n)
        .flat_map(|j| [rank as u32 * 100 + j as u32; 2])
        .collect();
    let mut inbox = vec![0u32; 2 * n];
    ok(
        rank,
        world.all_to_all_into(&out[..], &mut inbox[..]),
        "all_to_all_into",
    );
    check!(
        rank,
        (0..n)
            .all(|j| inbox[2 * j] == j as u32 * 100 + rank as u32
                && inbox[2 * j + 1] == inbox[2 * j]),
        "all-to-all {inbox:?}"
    );
    // Varcount: rank i sends j + 1 values i * 1000 + j * 10 + k to rank j, so it
    // receives rank + 1 values from every rank.
    let scounts: Vec<i32> = (1..=size).collect();
    let sdispls = displs.clone();
    let out: Vec<i32> = (0..size)
        .flat_map(|j| (0..=j).map(move |k| rank * 1000 + j * 10 + k))
        .collect();
    let rcounts = vec![rank + 1; n];
    let rdispls: Vec<i32> = (0..size).map(|i| i * (rank + 1)).collect();
    let mut inbox = vec![-1i32; n * (rank as usize + 1)];
    ok(
        rank,
        world.all_to_all_varcount_into(
            &Partition::new(&out[..], scounts, sdispls),
            &mut PartitionMut::new(&mut inbox[..], rcounts, rdispls),
        ),
        "all_to_all_varcount_into",
    );
    let want: Vec<i32> = (0..size)
        .flat_map(|i| (0..=rank).map(move |k| i * 1000 + rank * 10 + k))
        .collect();
    check_eq!(rank, inbox, want, "all-to-all varcount");

    // Reductions with predefined operations.
    let sum_ranks = (size * (size - 1) / 2) as i64;
    let mut s = 0i64;
    if rank == 0 {
        ok(
            rank,
            first.reduce_into_root(&(rank as i64), &mut s, SystemOperation::sum()),
            "reduce_into_root",
        );
        check_eq!(rank, s, sum_ranks, "reduce sum");
    } else {
        ok(
            rank,
            first.reduce_into(&(rank as i64), SystemOperation::sum()),
            "reduce_into",
        );
    }
    let mut v = [0f64; 3];
    let x = [rank as f64, -(rank as f64), 1.5];
    ok(
        rank,
        world.all_reduce_into(&x, &mut v, SystemOperation::sum()),
        "all_reduce sum",
    );
    check_eq!(
        rank,
        v,
        [sum_ranks as f64, -(sum_ranks as f64), 1.5 * size as f64],
        "all_reduce sum"
    );
    let mut m = [0i32; 2];
    ok(
        rank,
        world.all_reduce_into(&[rank, -rank], &mut m, SystemOperation::max()),
        "all_reduce max",
    );
    check_eq!(rank, m, [size - 1, 0], "all_reduce max");
    ok(
        rank,
        world.all_reduce_into(&[rank, -rank], &mut m, SystemOperation::min()),
        "all_reduce min",
    );
    check_eq!(rank, m, [0, 1 - size], "all_reduce min");
    let mut p = 0u64;
    ok(
        rank,
        world.all_reduce_into(&(rank as u64 + 1), &mut p, SystemOperation::product()),
        "all_reduce product",
    );
    check_eq!(rank, p, (1..=n as u64).product::<u64>(), "product");
    let mut bits = 0u32;
    ok(
        rank,
        world.all_reduce_into(&(1u32 << rank), &mut bits, SystemOperation::bitwise_or()),
        "bitwise_or",
    );
    check_eq!(rank, bits, (1u32 << size) - 1, "bitwise_or");
    let mut both = [false; 2];
    ok(
        rank,
        world.all_reduce_into(
            &[true, rank == 0],
            &mut both,
            SystemOperation::logical_and(),
        ),
        "logical_and",
    );
    check_eq!(rank, both, [true, size == 1], "logical_and");

    // Minimum and maximum with their locations.
    let mine = [
        oxmpi::collective::Location {
            value: ((rank * 7) % size) as f64,
            location: rank,
        },
        oxmpi::collective::Location {
            value: 1.0,
            location: rank,
        },
    ];
    let mut m = [oxmpi::collective::Location::default(); 2];
    ok(
        rank,
        world.all_reduce_into(&mine[..], &mut m[..], SystemOperation::max_location()),
        "max_location",
    );
    let top = (0..size)
        .max_by_key(|r| ((r * 7) % size, -r))
        .expect("ranks");
    check_eq!(
        rank,
        (m[0].value, m[0].location, m[1].location),
        (((top * 7) % size) as f64, top, 0),
        "max_location (ties: lowest location)"
    );
    let mut l = [oxmpi::collective::Location::<i32>::default(); 1];
    ok(
        rank,
        world.all_reduce_into(
            &[oxmpi::collective::Location {
                value: -rank,
                location: 10 + rank,
            }][..],
            &mut l[..],
            SystemOperation::min_location(),
        ),
        "min_location",
    );
    check_eq!(
        rank,
        (l[0].value, l[0].location),
        (1 - size, 9 + size),
        "min_location"
    );

    // Reduce-scatter-block: block j of rank r is [r + j, 1]; rank i gets the sums.
    let out: Vec<i32> = (0..size).flat_map(|j| [rank + j, 1]).collect();
    let mut blk = [0i32; 2];
    ok(
        rank,
        world.reduce_scatter_block_into(&out[..], &mut blk[..], SystemOperation::sum()),
        "reduce_scatter_block_into",
    );
    check_eq!(
        rank,
        blk,
        [sum_ranks as i32 + size * rank, size],
        "reduce-scatter-block"
    );

    // Scans.
    let mut sc = 0i32;
    ok(
        rank,
        world.scan_into(&(rank + 1), &mut sc, SystemOperation::sum()),
        "scan_into",
    );
    check_eq!(rank, sc, (rank + 1) * (rank + 2) / 2, "scan");
    let mut ex = -99i32;
    ok(
        rank,
        world.exclusive_scan_into(&(rank + 1), &mut ex, SystemOperation::sum()),
        "exclusive_scan_into",
    );
    let want = if rank == 0 {
        -99
    } else {
        rank * (rank + 1) / 2
    };
    check_eq!(rank, ex, want, "exclusive scan (rank 0 untouched)");

    // A non-commutative user operation: results in rank order everywhere.
    let cat = ok(
        rank,
        UserOperation::non_commutative(concat),
        "UserOperation::non_commutative",
    );
    check!(rank, !cat.is_commutative(), "commutativity");
    let me: Digits = [1, rank as u64];
    let mut r = [0u64; 2];
    ok(
        rank,
        world.all_reduce_into(&me, &mut r, &cat),
        "all_reduce concat",
    );
    check_eq!(rank, r, digits(0, size), "all_reduce concat");
    ok(rank, world.scan_into(&me, &mut r, &cat), "scan concat");
    check_eq!(rank, r, digits(0, rank + 1), "scan concat");
    let mut e = [5u64, 5];
    ok(
        rank,
        world.exclusive_scan_into(&me, &mut e, &cat),
        "exclusive scan concat",
    );
    if rank > 0 {
        check_eq!(rank, e, digits(0, rank), "exclusive scan concat");
    }
    let mine3 = [me; 3];
    let mut r3 = vec![[0u64; 2]; 3];
    if rank == size - 1 {
        ok(
            rank,
            last.reduce_into_root(&mine3[..], &mut r3[..], &cat),
            "reduce concat",
        );
        check!(
            rank,
            r3.iter().all(|d| *d == digits(0, size)),
            "reduce concat {r3:?}"
        );
    } else {
        ok(rank, last.reduce_into(&mine3[..], &cat), "reduce concat");
    }
    let out: Vec<Digits> = (0..size).map(|j| [1, ((rank + j) % 10) as u64]).collect();
    let mut d = [0u64; 2];
    ok(
        rank,
        world.reduce_scatter_block_into(&out[..], &mut d, &cat),
        "reduce_scatter concat",
    );
    let want = (0..size).fold([0, 0], |acc, r| {
        [acc[0] + 1, acc[1] * 10 + ((r + rank) % 10) as u64]
    });
    check_eq!(rank, d, want, "reduce-scatter concat");

    // A commutative user operation on a long vector (several pieces in the engine).
    let maxabs = ok(
        rank,
        UserOperation::commutative(|x: &[i64], y: &mut [i64]| {
            for (a, b) in x.iter().zip(y.iter_mut()) {
                if a.abs() > b.abs() {
                    *b = *a;
                }
            }
        }),
        "UserOperation::commutative",
    );
    let long: Vec<i64> = (0..50_000i64)
        .map(|i| if (i as i32) % size == rank { -i - 1 } else { i })
        .collect();
    let mut res = vec![0i64; long.len()];
    ok(
        rank,
        world.all_reduce_into(&long[..], &mut res[..], &maxabs),
        "all_reduce maxabs",
    );
    check!(
        rank,
        res.iter().enumerate().all(|(i, &x)| x == -(i as i64) - 1),
        "maxabs result"
    );

    // Local reductions.
    let mut acc = [1i32, 2, 3];
    ok(
        rank,
        reduce_local_into(&[10, 20, 30], &mut acc, SystemOperation::sum()),
        "reduce_local sum",
    );
    check_eq!(rank, acc, [11, 22, 33], "reduce_local sum");
    let mut acc = [[1u64, 2], [1, 3]];
    ok(
        rank,
        reduce_local_into(&[[1u64, 1], [2, 45]][..], &mut acc[..], &cat),
        "reduce_local concat",
    );
    check_eq!(rank, acc, [[2, 12], [3, 453]], "reduce_local concat");

    // Errors: reported before any communication, on every rank alike.
    let e = world
        .all_reduce_into(&[true], &mut [false], SystemOperation::sum())
        .unwrap_err();
    check_eq!(rank, e.class(), ErrorClass::Op, "sum on bool: {e}");
    let e = world
        .all_reduce_into(&[1u8, 2][..], &mut [0u8; 3][..], SystemOperation::sum())
        .unwrap_err();
    check_eq!(rank, e.class(), ErrorClass::Count, "lengths: {e}");
    if size > 1 {
        let e = world
            .all_gather_into(&1u8, &mut vec![0u8; n + 1][..])
            .unwrap_err();
        check_eq!(rank, e.class(), ErrorClass::Count, "blocks: {e}");
        check!(
            rank,
            e.message()
                .starts_with("all_gather_into: MPI_ERR_COUNT: the receive buffer holds"),
            "{e}"
        );
    }
    let mut small = [0u8; 1];
    let bad = world.all_gather_varcount_into(
        &1u8,
        &mut PartitionMut::new(&mut small[..], vec![1; n], vec![1; n]),
    );
    check_eq!(
        rank,
        bad.unwrap_err().class(),
        ErrorClass::Arg,
        "block past the end"
    );
    let root = world.process_at_rank((rank + 1) % size);
    if size > 1 {
        let e = root
            .gather_into_root(&1u8, &mut vec![0u8; n][..])
            .unwrap_err();
        check_eq!(rank, e.class(), ErrorClass::Root, "not the root: {e}");
    }
    let e = world
        .this_process()
        .reduce_into(&1u8, SystemOperation::sum());
    check_eq!(
        rank,
        e.unwrap_err().class(),
        ErrorClass::Root,
        "is the root"
    );
    let e = world
        .process_at_rank(size)
        .broadcast_into(&mut 0u8)
        .unwrap_err();
    check_eq!(rank, e.class(), ErrorClass::Root, "invalid root: {e}");

    ok(rank, world.barrier(), "final barrier");
    if rank == 0 {
        println!("check_collectives: passed on {size} ranks");
    }
    Ok(())
}
