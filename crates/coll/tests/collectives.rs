//! Every collective algorithm, run on the simulated network at every communicator size
//! 1..=17, 32, 33 and 64, every root, zero and uneven sizes, in place and not, with
//! real data and two operations: wrapping i64 sum and (non-commutative) 2x2 wrapping
//! integer matrix product, whose results prove the canonical rank order.

mod sim;

use oxmpi_coll::decision::{self, Tuning};
use oxmpi_coll::schedule::{build, Algorithm, Block, Elems, Member, Schedule, Spec};
use sim::{Bufs, OpFn, Rng};

const SIZES: [usize; 20] = [
    1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 32, 33, 64,
];
const SENTINEL: u8 = 0xEE;

fn byte(rank: usize, k: usize, salt: u64) -> u8 {
    let mut r = Rng(salt ^ ((rank as u64) << 32) ^ k as u64);
    r.next() as u8
}

fn data(rank: usize, len: usize, salt: u64) -> Vec<u8> {
    (0..len).map(|k| byte(rank, k, salt)).collect()
}

/// A reduction operation for the tests, with its reference `a op b`.
#[derive(Clone, Copy)]
struct TestOp {
    name: &'static str,
    elem: usize,
    commutative: bool,
    combine: fn(&[u8], &[u8]) -> Vec<u8>,
}

fn words(b: &[u8]) -> Vec<u64> {
    b.chunks(8)
        .map(|c| u64::from_ne_bytes(c.try_into().unwrap()))
        .collect()
}

fn unwords(w: &[u64]) -> Vec<u8> {
    w.iter().flat_map(|x| x.to_ne_bytes()).collect()
}

fn sum_i64(a: &[u8], b: &[u8]) -> Vec<u8> {
    let (a, b) = (words(a), words(b));
    unwords(
        &a.iter()
            .zip(&b)
            .map(|(x, y)| (*x as i64).wrapping_add(*y as i64) as u64)
            .collect::<Vec<_>>(),
    )
}

fn matmul(a: &[u8], b: &[u8]) -> Vec<u8> {
    let (a, b) = (words(a), words(b));
    let mut out = Vec::with_capacity(a.len());
    for (x, y) in a.chunks(4).zip(b.chunks(4)) {
        let m = |i: usize, j: usize| {
            x[2 * i]
                .wrapping_mul(y[j])
                .wrapping_add(x[2 * i + 1].wrapping_mul(y[2 + j]))
        };
        out.extend([m(0, 0), m(0, 1), m(1, 0), m(1, 1)]);
    }
    unwords(&out)
}

const SUM: TestOp = TestOp {
    name: "sum_i64",
    elem: 8,
    commutative: true,
    combine: sum_i64,
};
const MATMUL: TestOp = TestOp {
    name: "matmul2x2",
    elem: 32,
    commutative: false,
    combine: matmul,
};

impl TestOp {
    fn apply(self) -> impl Fn(&[u8], &mut [u8]) {
        move |src: &[u8], dst: &mut [u8]| {
            assert_eq!(src.len() % self.elem, 0, "reduction on partial elements");
            let r = (self.combine)(src, dst);
            dst.copy_from_slice(&r);
        }
    }

    /// x_lo op ... op x_(hi-1) over the given inputs.
    fn fold(&self, inputs: &[Vec<u8>]) -> Vec<u8> {
        let mut acc = inputs[0].clone();
        for x in &inputs[1..] {
            acc = (self.combine)(&acc, x);
        }
        acc
    }
}

fn no_op(_: &[u8], _: &mut [u8]) {
    panic!("reduction in a data-movement collective");
}

/// Builds, validates and runs the schedules of all ranks.
#[allow(clippy::too_many_arguments)]
fn simulate<'a>(
    ctx: &str,
    n: usize,
    algo: Algorithm,
    spec: impl Fn(usize) -> Spec<'a>,
    mut bufs: Vec<Bufs>,
    op: &OpFn,
    elem: usize,
    seed: u64,
) -> (Vec<Bufs>, sim::Trace) {
    let scheds: Vec<Schedule> = (0..n)
        .map(|r| {
            build(
                &spec(r),
                Member {
                    rank: r as u32,
                    size: n as u32,
                },
                algo,
            )
            .unwrap_or_else(|e| panic!("{ctx}: rank {r}: build failed: {e}"))
        })
        .collect();
    for (r, s) in scheds.iter().enumerate() {
        s.validate(bufs[r].send.len(), bufs[r].recv.len(), elem)
            .unwrap_or_else(|e| panic!("{ctx}: rank {r}: {e}\n{s}"));
    }
    let trace = sim::run(&scheds, &mut bufs, op, seed, seed % 3 == 0)
        .unwrap_or_else(|e| panic!("{ctx}: {e}"));
    (bufs, trace)
}

fn seed_of(parts: &[usize]) -> u64 {
    parts.iter().fold(0x1234_5678u64, |h, &p| {
        h.wrapping_mul(0x100_0000_01b3).wrapping_add(p as u64 + 1)
    })
}

#[test]
fn barrier_synchronises() {
    for n in SIZES {
        let (_, trace) = simulate(
            &format!("barrier n={n}"),
            n,
            Algorithm::BarrierDissemination,
            |_| Spec::Barrier,
            vec![Bufs::default(); n],
            &no_op,
            0,
            seed_of(&[n]),
        );
        let last_in = trace.entered.iter().max().unwrap();
        let first_out = trace.finished.iter().min().unwrap();
        assert!(
            n == 1 || last_in < first_out,
            "barrier n={n}: a rank left before all entered"
        );
    }
}

#[test]
fn bcast() {
    for algo in [
        Algorithm::BcastBinomial,
        Algorithm::BcastScatterRingAllgather,
    ] {
        for n in SIZES {
            for root in 0..n {
                for bytes in [0, 1, 5, 100, 1000] {
                    let ctx = format!("{algo} n={n} root={root} bytes={bytes}");
                    let want = data(root, bytes, 1);
                    let bufs = (0..n)
                        .map(|r| Bufs {
                            send: vec![],
                            recv: if r == root {
                                want.clone()
                            } else {
                                vec![SENTINEL; bytes]
                            },
                            tmp: vec![],
                        })
                        .collect();
                    let spec = |_| Spec::Bcast {
                        root: root as u32,
                        bytes,
                    };
                    let (out, _) = simulate(
                        &ctx,
                        n,
                        algo,
                        spec,
                        bufs,
                        &no_op,
                        0,
                        seed_of(&[n, root, bytes]),
                    );
                    for (r, b) in out.iter().enumerate() {
                        assert_eq!(b.recv, want, "{ctx}: rank {r}");
                    }
                }
            }
        }
    }
}

fn reduction_inputs(n: usize, count: usize, op: TestOp, salt: u64) -> Vec<Vec<u8>> {
    (0..n).map(|r| data(r, count * op.elem, salt)).collect()
}

fn check_reduce(
    algo: Algorithm,
    op: TestOp,
    n: usize,
    root: usize,
    count: usize,
    in_place: bool,
    seed: u64,
) {
    let ctx = format!(
        "{algo} {} n={n} root={root} count={count} in_place={in_place}",
        op.name
    );
    let inputs = reduction_inputs(n, count, op, seed);
    let bytes = count * op.elem;
    let bufs = (0..n)
        .map(|r| {
            let ip = in_place && r == root;
            Bufs {
                send: if ip { vec![] } else { inputs[r].clone() },
                recv: if ip {
                    inputs[r].clone()
                } else if r == root {
                    vec![SENTINEL; bytes]
                } else {
                    vec![]
                },
                tmp: vec![],
            }
        })
        .collect();
    let spec = |r: usize| Spec::Reduce {
        root: root as u32,
        elems: Elems::new(count, op.elem),
        commutative: op.commutative,
        in_place: in_place && r == root,
    };
    let f = op.apply();
    let (out, _) = simulate(&ctx, n, algo, spec, bufs, &f, op.elem, seed);
    let want = if count == 0 { vec![] } else { op.fold(&inputs) };
    assert_eq!(out[root].recv, want, "{ctx}");
}

#[test]
fn reduce() {
    let cases = [
        (Algorithm::ReduceBinomial, SUM),
        (Algorithm::ReduceBinomial, MATMUL),
        (Algorithm::ReduceRabenseifner, SUM),
    ];
    for (algo, op) in cases {
        for n in SIZES {
            for root in 0..n {
                for count in [0, 1, 5, 37] {
                    for in_place in [false, true] {
                        check_reduce(
                            algo,
                            op,
                            n,
                            root,
                            count,
                            in_place,
                            seed_of(&[n, root, count, in_place as usize]),
                        );
                    }
                }
            }
        }
    }
}

/// Runs an all-ranks reduction whose input is a whole vector and returns each rank's Recv.
#[allow(clippy::too_many_arguments)]
fn all_ranks<'a>(
    ctx: &str,
    n: usize,
    algo: Algorithm,
    op: TestOp,
    inputs: &[Vec<u8>],
    recv_len: usize,
    in_place: bool,
    spec: impl Fn(usize) -> Spec<'a>,
    seed: u64,
) -> Vec<Vec<u8>> {
    let bufs = (0..n)
        .map(|r| {
            let mut recv = vec![SENTINEL; recv_len.max(if in_place { inputs[r].len() } else { 0 })];
            if in_place {
                recv[..inputs[r].len()].copy_from_slice(&inputs[r]);
            }
            Bufs {
                send: if in_place { vec![] } else { inputs[r].clone() },
                recv,
                tmp: vec![],
            }
        })
        .collect();
    let f = op.apply();
    let (out, _) = simulate(ctx, n, algo, spec, bufs, &f, op.elem, seed);
    out.into_iter().map(|b| b.recv).collect()
}

fn check_allreduce(algo: Algorithm, op: TestOp, n: usize, count: usize, in_place: bool, seed: u64) {
    let ctx = format!("{algo} {} n={n} count={count} in_place={in_place}", op.name);
    let inputs = reduction_inputs(n, count, op, seed);
    let spec = |_| Spec::Allreduce {
        elems: Elems::new(count, op.elem),
        commutative: op.commutative,
        in_place,
    };
    let out = all_ranks(
        &ctx,
        n,
        algo,
        op,
        &inputs,
        count * op.elem,
        in_place,
        spec,
        seed,
    );
    let want = if count == 0 { vec![] } else { op.fold(&inputs) };
    for (r, got) in out.iter().enumerate() {
        assert_eq!(*got, want, "{ctx}: rank {r}");
    }
}

const ALLREDUCE_CASES: [(Algorithm, TestOp); 6] = [
    (Algorithm::AllreduceRecursiveDoubling, SUM),
    (Algorithm::AllreduceRecursiveDoubling, MATMUL),
    (Algorithm::AllreduceRabenseifner, SUM),
    (Algorithm::AllreduceRing, SUM),
    (Algorithm::AllreduceReduceBcast, SUM),
    (Algorithm::AllreduceReduceBcast, MATMUL),
];

#[test]
fn allreduce() {
    for (algo, op) in ALLREDUCE_CASES {
        for n in SIZES {
            // 2000 sums (16000 bytes) make reduce_bcast use the scatter-ring broadcast.
            for count in [0, 1, 5, 37, 2000] {
                if count == 2000 && algo != Algorithm::AllreduceReduceBcast {
                    continue;
                }
                for in_place in [false, true] {
                    check_allreduce(
                        algo,
                        op,
                        n,
                        count,
                        in_place,
                        seed_of(&[n, count, in_place as usize, algo as usize]),
                    );
                }
            }
        }
    }
}

fn check_reduce_scatter(
    n: usize,
    algo: Algorithm,
    op: TestOp,
    counts: &[usize],
    block: bool,
    in_place: bool,
    seed: u64,
) {
    let total: usize = counts.iter().sum();
    let ctx = format!(
        "{algo} {} n={n} counts={counts:?} in_place={in_place}",
        op.name
    );
    let inputs = reduction_inputs(n, total, op, seed);
    let spec = |_| {
        if block {
            Spec::ReduceScatterBlock {
                elems: Elems::new(counts[0], op.elem),
                commutative: op.commutative,
                in_place,
            }
        } else {
            Spec::ReduceScatter {
                counts,
                elem_size: op.elem,
                commutative: op.commutative,
                in_place,
            }
        }
    };
    let seed = seed_of(&[n, total, in_place as usize, algo as usize]);
    let out = all_ranks(
        &ctx,
        n,
        algo,
        op,
        &inputs,
        counts.iter().max().unwrap() * op.elem,
        in_place,
        spec,
        seed,
    );
    if total == 0 {
        return;
    }
    let full = op.fold(&inputs);
    let mut at = 0;
    for (r, got) in out.iter().enumerate() {
        let len = counts[r] * op.elem;
        assert_eq!(got[..len], full[at..at + len], "{ctx}: rank {r}");
        at += len;
    }
}

#[test]
fn reduce_scatter() {
    let block_cases = [
        (Algorithm::ReduceScatterBlockRecursiveHalving, SUM),
        (Algorithm::ReduceScatterBlockRing, SUM),
        (Algorithm::ReduceScatterBlockReduceScatterv, SUM),
        (Algorithm::ReduceScatterBlockReduceScatterv, MATMUL),
    ];
    let v_cases = [
        (Algorithm::ReduceScatterRecursiveHalving, SUM),
        (Algorithm::ReduceScatterRing, SUM),
        (Algorithm::ReduceScatterReduceScatterv, SUM),
        (Algorithm::ReduceScatterReduceScatterv, MATMUL),
    ];
    for n in SIZES {
        for in_place in [false, true] {
            for (algo, op) in block_cases {
                for count in [0, 1, 3] {
                    check_reduce_scatter(
                        n,
                        algo,
                        op,
                        &vec![count; n],
                        true,
                        in_place,
                        seed_of(&[n, count, algo as usize]),
                    );
                }
            }
            for (algo, op) in v_cases {
                for salt in 0..3 {
                    let counts: Vec<usize> = (0..n).map(|i| (i * 7 + salt * 3 + 1) % 5).collect();
                    check_reduce_scatter(
                        n,
                        algo,
                        op,
                        &counts,
                        false,
                        in_place,
                        seed_of(&[n, salt, algo as usize]),
                    );
                }
                let mut one = vec![0; n];
                one[n / 2] = 3;
                check_reduce_scatter(
                    n,
                    algo,
                    op,
                    &one,
                    false,
                    in_place,
                    seed_of(&[n, 99, algo as usize]),
                );
            }
        }
    }
}

#[test]
fn scan_and_exscan() {
    for op in [SUM, MATMUL] {
        for exclusive in [false, true] {
            let algo = if exclusive {
                Algorithm::ExscanRecursiveDoubling
            } else {
                Algorithm::ScanRecursiveDoubling
            };
            for n in SIZES {
                for count in [0, 1, 5] {
                    for in_place in [false, true] {
                        let ctx =
                            format!("{algo} {} n={n} count={count} in_place={in_place}", op.name);
                        let inputs = reduction_inputs(n, count, op, 5);
                        let elems = Elems::new(count, op.elem);
                        let spec = |_| {
                            if exclusive {
                                Spec::Exscan {
                                    elems,
                                    commutative: op.commutative,
                                    in_place,
                                }
                            } else {
                                Spec::Scan {
                                    elems,
                                    commutative: op.commutative,
                                    in_place,
                                }
                            }
                        };
                        let seed = seed_of(&[n, count, in_place as usize, exclusive as usize]);
                        let out = all_ranks(
                            &ctx,
                            n,
                            algo,
                            op,
                            &inputs,
                            count * op.elem,
                            in_place,
                            spec,
                            seed,
                        );
                        for (r, got) in out.iter().enumerate() {
                            let want = if count == 0 {
                                vec![]
                            } else if exclusive && r == 0 {
                                // Rank 0's buffer is untouched by MPI_Exscan.
                                if in_place {
                                    inputs[0].clone()
                                } else {
                                    vec![SENTINEL; count * op.elem]
                                }
                            } else if exclusive {
                                op.fold(&inputs[..r])
                            } else {
                                op.fold(&inputs[..=r])
                            };
                            assert_eq!(*got, want, "{ctx}: rank {r}");
                        }
                    }
                }
            }
        }
    }
}

/// Irregular blocks for the v-variants: lengths with zeros, reversed order, gaps.
fn irregular(n: usize, salt: usize) -> (Vec<Block>, usize) {
    let lens: Vec<usize> = (0..n).map(|i| (i * 5 + salt * 3 + 2) % 7).collect();
    let mut blocks = vec![Block::default(); n];
    let mut at = 3;
    for i in (0..n).rev() {
        blocks[i] = Block {
            off: at,
            len: lens[i],
        };
        at += lens[i] + 2;
    }
    (blocks, at)
}

#[test]
fn gather_and_gatherv() {
    for n in SIZES {
        for root in 0..n {
            for in_place in [false, true] {
                for algo in [Algorithm::GatherBinomial, Algorithm::GatherLinear] {
                    for bytes in [0, 1, 13] {
                        let ctx =
                            format!("{algo} n={n} root={root} bytes={bytes} in_place={in_place}");
                        let ip = |r: usize| in_place && r == root;
                        let bufs = (0..n)
                            .map(|r| {
                                let mut recv = if r == root {
                                    vec![SENTINEL; n * bytes]
                                } else {
                                    vec![]
                                };
                                if ip(r) {
                                    recv[r * bytes..(r + 1) * bytes]
                                        .copy_from_slice(&data(r, bytes, 6));
                                }
                                Bufs {
                                    send: if ip(r) { vec![] } else { data(r, bytes, 6) },
                                    recv,
                                    tmp: vec![],
                                }
                            })
                            .collect();
                        let spec = |r: usize| Spec::Gather {
                            root: root as u32,
                            bytes,
                            in_place: ip(r),
                        };
                        let seed = seed_of(&[n, root, bytes, in_place as usize]);
                        let (out, _) = simulate(&ctx, n, algo, spec, bufs, &no_op, 0, seed);
                        let want: Vec<u8> = (0..n).flat_map(|r| data(r, bytes, 6)).collect();
                        assert_eq!(out[root].recv, want, "{ctx}");
                    }
                }
                let (blocks, len) = irregular(n, root);
                let ctx = format!("gatherv n={n} root={root} in_place={in_place}");
                let ip = |r: usize| in_place && r == root;
                let mut want = vec![SENTINEL; len];
                for (r, b) in blocks.iter().enumerate() {
                    want[b.off..b.off + b.len].copy_from_slice(&data(r, b.len, 7));
                }
                let bufs = (0..n)
                    .map(|r| {
                        let recv =
                            if ip(r) {
                                let mut v = vec![SENTINEL; len];
                                v[blocks[r].off..blocks[r].off + blocks[r].len]
                                    .copy_from_slice(&data(r, blocks[r].len, 7));
                                v
                            } else if r == root {
                                vec![SENTINEL; len]
                            } else {
                                vec![]
                            };
                        Bufs {
                            send: if ip(r) {
                                vec![]
                            } else {
                                data(r, blocks[r].len, 7)
                            },
                            recv,
                            tmp: vec![],
                        }
                    })
                    .collect();
                let spec = |r: usize| Spec::Gatherv {
                    root: root as u32,
                    send_bytes: blocks[r].len,
                    recv: if r == root { &blocks } else { &[] },
                    in_place: ip(r),
                };
                let (out, _) = simulate(
                    &ctx,
                    n,
                    Algorithm::GathervLinear,
                    spec,
                    bufs,
                    &no_op,
                    0,
                    seed_of(&[n, root]),
                );
                assert_eq!(out[root].recv, want, "{ctx}");
            }
        }
    }
}

#[test]
fn scatter_and_scatterv() {
    for n in SIZES {
        for root in 0..n {
            for in_place in [false, true] {
                for algo in [Algorithm::ScatterBinomial, Algorithm::ScatterLinear] {
                    for bytes in [0, 1, 13] {
                        let ctx =
                            format!("{algo} n={n} root={root} bytes={bytes} in_place={in_place}");
                        let ip = |r: usize| in_place && r == root;
                        let all = data(root, n * bytes, 8);
                        let bufs = (0..n)
                            .map(|r| Bufs {
                                send: if r == root { all.clone() } else { vec![] },
                                recv: if ip(r) { vec![] } else { vec![SENTINEL; bytes] },
                                tmp: vec![],
                            })
                            .collect();
                        let spec = |r: usize| Spec::Scatter {
                            root: root as u32,
                            bytes,
                            in_place: ip(r),
                        };
                        let seed = seed_of(&[n, root, bytes, in_place as usize]);
                        let (out, _) = simulate(&ctx, n, algo, spec, bufs, &no_op, 0, seed);
                        for (r, b) in out.iter().enumerate() {
                            if !ip(r) {
                                assert_eq!(
                                    b.recv,
                                    all[r * bytes..(r + 1) * bytes],
                                    "{ctx}: rank {r}"
                                );
                            }
                        }
                    }
                }
                let (blocks, len) = irregular(n, root + 1);
                let ctx = format!("scatterv n={n} root={root} in_place={in_place}");
                let ip = |r: usize| in_place && r == root;
                let all = data(root, len, 9);
                let bufs = (0..n)
                    .map(|r| Bufs {
                        send: if r == root { all.clone() } else { vec![] },
                        recv: if ip(r) {
                            vec![]
                        } else {
                            vec![SENTINEL; blocks[r].len]
                        },
                        tmp: vec![],
                    })
                    .collect();
                let spec = |r: usize| Spec::Scatterv {
                    root: root as u32,
                    send: if r == root { &blocks } else { &[] },
                    recv_bytes: blocks[r].len,
                    in_place: ip(r),
                };
                let (out, _) = simulate(
                    &ctx,
                    n,
                    Algorithm::ScattervLinear,
                    spec,
                    bufs,
                    &no_op,
                    0,
                    seed_of(&[n, root, 1]),
                );
                for (r, b) in out.iter().enumerate() {
                    if !ip(r) {
                        assert_eq!(
                            b.recv,
                            all[blocks[r].off..blocks[r].off + blocks[r].len],
                            "{ctx}: rank {r}"
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn allgather_and_allgatherv() {
    for n in SIZES {
        for in_place in [false, true] {
            for algo in [
                Algorithm::AllgatherRecursiveDoubling,
                Algorithm::AllgatherBruck,
                Algorithm::AllgatherRing,
            ] {
                if algo == Algorithm::AllgatherRecursiveDoubling && !n.is_power_of_two() {
                    continue;
                }
                for bytes in [0, 1, 13] {
                    let ctx = format!("{algo} n={n} bytes={bytes} in_place={in_place}");
                    let want: Vec<u8> = (0..n).flat_map(|r| data(r, bytes, 10)).collect();
                    let bufs = (0..n)
                        .map(|r| {
                            let mut recv = vec![SENTINEL; n * bytes];
                            if in_place {
                                recv[r * bytes..(r + 1) * bytes]
                                    .copy_from_slice(&data(r, bytes, 10));
                            }
                            Bufs {
                                send: if in_place { vec![] } else { data(r, bytes, 10) },
                                recv,
                                tmp: vec![],
                            }
                        })
                        .collect();
                    let spec = |_| Spec::Allgather { bytes, in_place };
                    let (out, _) = simulate(
                        &ctx,
                        n,
                        algo,
                        spec,
                        bufs,
                        &no_op,
                        0,
                        seed_of(&[n, bytes, in_place as usize]),
                    );
                    for (r, b) in out.iter().enumerate() {
                        assert_eq!(b.recv, want, "{ctx}: rank {r}");
                    }
                }
            }
            let (blocks, len) = irregular(n, 2);
            let ctx = format!("allgatherv n={n} in_place={in_place}");
            let mut want = vec![SENTINEL; len];
            for (r, b) in blocks.iter().enumerate() {
                want[b.off..b.off + b.len].copy_from_slice(&data(r, b.len, 11));
            }
            let bufs = (0..n)
                .map(|r| {
                    let mut recv = vec![SENTINEL; len];
                    let b = blocks[r];
                    if in_place {
                        recv[b.off..b.off + b.len].copy_from_slice(&data(r, b.len, 11));
                    }
                    Bufs {
                        send: if in_place { vec![] } else { data(r, b.len, 11) },
                        recv,
                        tmp: vec![],
                    }
                })
                .collect();
            let spec = |_| Spec::Allgatherv {
                blocks: &blocks,
                in_place,
            };
            let (out, _) = simulate(
                &ctx,
                n,
                Algorithm::AllgathervRing,
                spec,
                bufs,
                &no_op,
                0,
                seed_of(&[n, 5]),
            );
            for (r, b) in out.iter().enumerate() {
                assert_eq!(b.recv, want, "{ctx}: rank {r}");
            }
        }
    }
}

#[test]
fn alltoall_and_alltoallv() {
    for n in SIZES {
        for in_place in [false, true] {
            for algo in [
                Algorithm::AlltoallBruck,
                Algorithm::AlltoallLinear,
                Algorithm::AlltoallPairwise,
            ] {
                for bytes in [0, 1, 7] {
                    let ctx = format!("{algo} n={n} bytes={bytes} in_place={in_place}");
                    // Rank r's block for rank j is data(r * n + j).
                    let outgoing = |r: usize| -> Vec<u8> {
                        (0..n).flat_map(|j| data(r * n + j, bytes, 12)).collect()
                    };
                    let bufs = (0..n)
                        .map(|r| Bufs {
                            send: if in_place { vec![] } else { outgoing(r) },
                            recv: if in_place {
                                outgoing(r)
                            } else {
                                vec![SENTINEL; n * bytes]
                            },
                            tmp: vec![],
                        })
                        .collect();
                    let spec = |_| Spec::Alltoall { bytes, in_place };
                    let (out, _) = simulate(
                        &ctx,
                        n,
                        algo,
                        spec,
                        bufs,
                        &no_op,
                        0,
                        seed_of(&[n, bytes, in_place as usize]),
                    );
                    for (r, b) in out.iter().enumerate() {
                        let want: Vec<u8> =
                            (0..n).flat_map(|j| data(j * n + r, bytes, 12)).collect();
                        assert_eq!(b.recv, want, "{ctx}: rank {r}");
                    }
                }
            }
            for algo in [Algorithm::AlltoallvLinear, Algorithm::AlltoallvPairwise] {
                let ctx = format!("{algo} n={n} in_place={in_place}");
                // The message from i to j has (i + 2j) % 5 bytes.
                let len = |i: usize, j: usize| (i + 2 * j) % 5;
                let layout = |r: usize, outgoing: bool| -> (Vec<Block>, usize) {
                    let mut at = 1;
                    let mut blocks = vec![Block::default(); n];
                    for k in (0..n).rev() {
                        let l = if outgoing || in_place {
                            len(r, k)
                        } else {
                            len(k, r)
                        };
                        let l = if in_place { len(r, k) } else { l };
                        blocks[k] = Block { off: at, len: l };
                        at += l + 1;
                    }
                    (blocks, at)
                };
                if in_place {
                    // In place needs symmetric sizes: use len(i, j) = len(j, i).
                    let sym = |i: usize, j: usize| (i + j) % 5;
                    let lay = |r: usize| -> (Vec<Block>, usize) {
                        let mut at = 1;
                        let mut blocks = vec![Block::default(); n];
                        for (k, b) in blocks.iter_mut().enumerate() {
                            *b = Block {
                                off: at,
                                len: sym(r, k),
                            };
                            at += sym(r, k) + 1;
                        }
                        (blocks, at)
                    };
                    let lays: Vec<(Vec<Block>, usize)> = (0..n).map(lay).collect();
                    let bufs = (0..n)
                        .map(|r| {
                            let (blocks, total) = &lays[r];
                            let mut recv = vec![SENTINEL; *total];
                            for (j, b) in blocks.iter().enumerate() {
                                recv[b.off..b.off + b.len].copy_from_slice(&data(
                                    r * n + j,
                                    b.len,
                                    13,
                                ));
                            }
                            Bufs {
                                send: vec![],
                                recv,
                                tmp: vec![],
                            }
                        })
                        .collect();
                    let spec = |r: usize| Spec::Alltoallv {
                        send: &[],
                        recv: &lays[r].0,
                        in_place: true,
                    };
                    let (out, _) = simulate(&ctx, n, algo, spec, bufs, &no_op, 0, seed_of(&[n, 9]));
                    for (r, b) in out.iter().enumerate() {
                        for (j, blk) in lays[r].0.iter().enumerate() {
                            assert_eq!(
                                b.recv[blk.off..blk.off + blk.len],
                                data(j * n + r, blk.len, 13)[..],
                                "{ctx}: {j}->{r}"
                            );
                        }
                    }
                    continue;
                }
                let sends: Vec<(Vec<Block>, usize)> = (0..n).map(|r| layout(r, true)).collect();
                let recvs: Vec<(Vec<Block>, usize)> = (0..n).map(|r| layout(r, false)).collect();
                let bufs = (0..n)
                    .map(|r| {
                        let (blocks, total) = &sends[r];
                        let mut send = vec![0u8; *total];
                        for (j, b) in blocks.iter().enumerate() {
                            send[b.off..b.off + b.len].copy_from_slice(&data(r * n + j, b.len, 14));
                        }
                        Bufs {
                            send,
                            recv: vec![SENTINEL; recvs[r].1],
                            tmp: vec![],
                        }
                    })
                    .collect();
                let spec = |r: usize| Spec::Alltoallv {
                    send: &sends[r].0,
                    recv: &recvs[r].0,
                    in_place: false,
                };
                let (out, _) = simulate(&ctx, n, algo, spec, bufs, &no_op, 0, seed_of(&[n, 10]));
                for (r, b) in out.iter().enumerate() {
                    let mut want = vec![SENTINEL; recvs[r].1];
                    for (j, blk) in recvs[r].0.iter().enumerate() {
                        want[blk.off..blk.off + blk.len].copy_from_slice(&data(
                            j * n + r,
                            blk.len,
                            14,
                        ));
                    }
                    assert_eq!(b.recv, want, "{ctx}: rank {r}");
                }
            }
        }
    }
}

#[test]
fn decision_always_builds() {
    let t = Tuning::default();
    let counts = [3usize; 64];
    for n in SIZES {
        for (count, commutative) in [
            (0, true),
            (1, false),
            (100_000, true),
            (100_000, false),
            (4, true),
        ] {
            let e = Elems::new(count, 8);
            let specs = [
                Spec::Barrier,
                Spec::Bcast {
                    root: 0,
                    bytes: count * 8,
                },
                Spec::Reduce {
                    root: (n - 1) as u32,
                    elems: e,
                    commutative,
                    in_place: false,
                },
                Spec::Allreduce {
                    elems: e,
                    commutative,
                    in_place: true,
                },
                Spec::ReduceScatterBlock {
                    elems: e,
                    commutative,
                    in_place: false,
                },
                Spec::ReduceScatter {
                    counts: &counts[..n],
                    elem_size: 8,
                    commutative,
                    in_place: false,
                },
                Spec::Scan {
                    elems: e,
                    commutative,
                    in_place: false,
                },
                Spec::Gather {
                    root: 0,
                    bytes: count,
                    in_place: false,
                },
                Spec::Scatter {
                    root: 0,
                    bytes: count,
                    in_place: false,
                },
                Spec::Allgather {
                    bytes: count,
                    in_place: false,
                },
                Spec::Alltoall {
                    bytes: count % 1000,
                    in_place: false,
                },
            ];
            for spec in specs {
                for rank in [0, n - 1] {
                    let (algo, s) = decision::plan(
                        &t,
                        &spec,
                        Member {
                            rank: rank as u32,
                            size: n as u32,
                        },
                    )
                    .unwrap_or_else(|e| panic!("{spec:?} n={n}: {e}"));
                    assert_eq!(algo.collective(), spec.collective());
                    assert!(s.validate(usize::MAX / 2, usize::MAX / 2, 8).is_ok());
                }
            }
        }
    }
}

#[test]
fn bad_specs_are_rejected() {
    let me = Member { rank: 0, size: 4 };
    let err = build(
        &Spec::Bcast { root: 4, bytes: 8 },
        me,
        Algorithm::BcastBinomial,
    )
    .unwrap_err();
    assert_eq!(err.to_string(), "invalid root 4 (communicator size 4)");
    let err = build(
        &Spec::Barrier,
        Member { rank: 4, size: 4 },
        Algorithm::BarrierDissemination,
    )
    .unwrap_err();
    assert!(err.to_string().contains("rank 4"));
    let nc = Spec::Allreduce {
        elems: Elems::new(8, 8),
        commutative: false,
        in_place: false,
    };
    let err = build(&nc, me, Algorithm::AllreduceRing).unwrap_err();
    assert!(err.to_string().contains("commutative"), "{err}");
    let err = build(
        &Spec::Allgather {
            bytes: 1,
            in_place: false,
        },
        Member { rank: 0, size: 6 },
        Algorithm::AllgatherRecursiveDoubling,
    )
    .unwrap_err();
    assert!(err.to_string().contains("power-of-two"), "{err}");
    let err = build(
        &Spec::Bcast { root: 0, bytes: 8 },
        me,
        Algorithm::GatherLinear,
    )
    .unwrap_err();
    assert!(err.to_string().contains("different collective"), "{err}");
    let red = Spec::Reduce {
        root: 1,
        elems: Elems::new(1, 8),
        commutative: true,
        in_place: true,
    };
    assert!(
        build(&red, me, Algorithm::ReduceBinomial).is_err(),
        "in place at a non-root"
    );
    let gv = Spec::Gatherv {
        root: 0,
        send_bytes: 1,
        recv: &[Block { off: 0, len: 1 }],
        in_place: false,
    };
    assert!(matches!(
        build(&gv, me, Algorithm::GathervLinear),
        Err(oxmpi_coll::schedule::ScheduleError::BadLength { .. })
    ));
    let huge = Spec::Allreduce {
        elems: Elems::new(usize::MAX, 8),
        commutative: true,
        in_place: false,
    };
    assert!(build(&huge, me, Algorithm::AllreduceRing).is_err());
    let zero_elem = Spec::Allreduce {
        elems: Elems::new(3, 0),
        commutative: true,
        in_place: false,
    };
    assert!(build(&zero_elem, me, Algorithm::AllreduceRing).is_err());
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig { cases: 96, ..Default::default() })]

    /// Random sizes, roots, counts and interleavings for the reductions, where most
    /// of the index arithmetic lives.
    #[test]
    fn random_reductions(
        n in 1usize..=40,
        count in 0usize..=70,
        root_pick in 0usize..1000,
        which in 0usize..13,
        in_place: bool,
        seed: u64,
    ) {
        let root = root_pick % n;
        match which {
            0..=5 => {
                let (algo, op) = ALLREDUCE_CASES[which];
                check_allreduce(algo, op, n, count, in_place, seed);
            }
            6 => check_reduce(Algorithm::ReduceBinomial, MATMUL, n, root, count, in_place, seed),
            7 => check_reduce(Algorithm::ReduceRabenseifner, SUM, n, root, count, in_place, seed),
            _ => {
                let algo = [
                    Algorithm::ReduceScatterRecursiveHalving,
                    Algorithm::ReduceScatterRing,
                    Algorithm::ReduceScatterReduceScatterv,
                    Algorithm::ReduceScatterReduceScatterv,
                    Algorithm::ReduceScatterRing,
                ][which - 8];
                let op = if which == 11 { MATMUL } else { SUM };
                let mut rng = Rng(seed);
                let counts: Vec<usize> = (0..n).map(|_| rng.below(count % 6 + 1)).collect();
                check_reduce_scatter(n, algo, op, &counts, false, in_place, seed);
            }
        }
    }
}
