//! Reduction schedules: reduce (binomial, order-preserving for non-commutative
//! operations; Rabenseifner reduce-scatter + gather), allreduce (recursive doubling with
//! the non-power-of-two fold, Rabenseifner, ring), reduce-scatter (recursive halving,
//! ring, reduce + scatterv).
//!
//! Non-power-of-two sizes use the usual fold: of the first `2 * rem` ranks
//! (`rem = n - pof2`), one of each pair hands its whole vector to the other and sits
//! out; the remaining `pof2` ranks run the power-of-two algorithm; results go back at
//! the end. Where order matters the pair is (even, odd) and the odd rank, holding the
//! higher contribution, combines as `even op odd`.

use super::spec::{Algorithm, Block};
use super::{even_split, lowbit, pof2_floor, rooted, BufRef, Region, Schedule};

/// Where a reduction reads and writes.
#[derive(Clone, Copy, Debug)]
pub(super) struct Io {
    /// This rank's contribution (`bytes` from offset 0).
    pub input: BufRef,
    /// Where the result goes (offset 0), on the ranks that get one.
    pub output: BufRef,
    pub bytes: usize,
    pub elem_size: usize,
}

fn whole(buf: BufRef, bytes: usize) -> Region {
    Region::new(buf, 0, bytes)
}

/// A lazily allocated temporary buffer that grows to the largest size asked for.
struct Lazy(Option<BufRef>);

impl Lazy {
    fn get(&mut self, b: &mut Schedule, size: usize) -> BufRef {
        let t = *self.0.get_or_insert_with(|| b.tmp(0));
        b.grow(t, size);
        t
    }
}

/// Binomial-tree reduce to `root`. Commutative: the tree is rooted at `root` directly.
/// Otherwise it is rooted at rank 0, where each node's accumulator covers a contiguous
/// ascending rank range and a child's range follows it (`acc op child`), then rank 0
/// sends the result to `root`. Receive buffers alternate so no copy is ever needed.
pub(super) fn binomial(
    b: &mut Schedule,
    n: usize,
    r: usize,
    root: usize,
    io: Io,
    commutative: bool,
) {
    let Io {
        input,
        output,
        bytes,
        ..
    } = io;
    if bytes == 0 {
        return;
    }
    if n == 1 {
        b.copy(whole(input, bytes), whole(output, bytes));
        return;
    }
    let (base, hop) = if commutative {
        (root, false)
    } else {
        (0, root != 0)
    };
    let v = (r + n - base) % n;
    let real = |x: usize| (x + base) % n;
    let top = if v == 0 {
        n.next_power_of_two()
    } else {
        lowbit(v)
    };
    let children: Vec<usize> = (0..top.trailing_zeros())
        .map(|i| v + (1 << i))
        .filter(|&c| c < n)
        .collect();
    let k = children.len();
    let result_here = v == 0 && r == root;
    let (mut t1, mut t2) = (Lazy(None), Lazy(None));
    let mut acc = input;
    for (i, &child) in children.iter().enumerate() {
        let x = if result_here {
            // Alternate backwards from the last receive, which lands in `output`.
            let x = if (k - 1 - i) % 2 == 0 {
                output
            } else {
                t1.get(b, bytes)
            };
            if x == acc {
                t2.get(b, bytes)
            } else {
                x
            }
        } else if i % 2 == 0 {
            t1.get(b, bytes)
        } else {
            t2.get(b, bytes)
        };
        b.recv(real(child), whole(x, bytes));
        b.reduce(whole(acc, bytes), whole(x, bytes));
        acc = x;
    }
    if result_here {
        // Only an in-place root with a single child ends outside `output`.
        b.copy(whole(acc, bytes), whole(output, bytes));
    }
    b.next_round();
    if v != 0 {
        b.send(real(v - lowbit(v)), whole(acc, bytes));
        b.next_round();
    }
    if hop {
        if r == 0 {
            b.send(root, whole(acc, bytes));
        } else if r == root {
            b.recv(0, whole(output, bytes));
        }
        b.next_round();
    }
}

/// Recursive-halving reduce-scatter among `pof2` ranks (`newrank` is ours; `to_real`
/// maps back). `seg` (length `pof2 + 1`) holds the byte boundaries of the segments.
/// On entry this rank's vector is in `input` (read only) or, if `cur_is_w`, in `w`;
/// on exit `w[seg[newrank]..seg[newrank + 1]]` holds the fully reduced segment.
/// Commutative operations only.
#[allow(clippy::too_many_arguments)]
fn halving(
    b: &mut Schedule,
    newrank: usize,
    pof2: usize,
    seg: &[usize],
    to_real: &dyn Fn(usize) -> usize,
    input: BufRef,
    w: BufRef,
    mut cur_is_w: bool,
    t: &mut Lazy,
) {
    let range = |buf: BufRef, lo: usize, hi: usize| Region::new(buf, seg[lo], seg[hi] - seg[lo]);
    let (mut lo, mut hi) = (0, pof2);
    let mut mask = pof2 / 2;
    while mask > 0 {
        let mid = lo + mask;
        let peer = to_real(newrank ^ mask);
        let (keep, give) = if newrank & mask == 0 {
            ((lo, mid), (mid, hi))
        } else {
            ((mid, hi), (lo, mid))
        };
        let src = if cur_is_w { w } else { input };
        b.send(peer, range(src, give.0, give.1));
        let kept = range(w, keep.0, keep.1);
        if cur_is_w {
            let tt = t.get(b, kept.len);
            b.recv(peer, Region::new(tt, 0, kept.len));
            b.reduce(Region::new(tt, 0, kept.len), kept);
        } else {
            b.recv(peer, kept);
            b.reduce(range(input, keep.0, keep.1), kept);
        }
        b.next_round();
        cur_is_w = true;
        (lo, hi) = keep;
        mask >>= 1;
    }
}

/// Folds the vector of one of a pair of ranks into the other's `w` (commutative).
/// Afterwards `w` holds the combined vector.
fn fold_in(b: &mut Schedule, from: usize, input: BufRef, w: BufRef, bytes: usize, t: &mut Lazy) {
    if input == w {
        let tt = t.get(b, bytes);
        b.recv(from, whole(tt, bytes));
        b.reduce(whole(tt, bytes), whole(w, bytes));
    } else {
        b.recv(from, whole(w, bytes));
        b.reduce(whole(input, bytes), whole(w, bytes));
    }
    b.next_round();
}

/// Rabenseifner's reduce: reduce-scatter by recursive halving, then a binomial gather
/// of the segments to the root. Commutative operations only.
pub(super) fn rabenseifner_reduce(
    b: &mut Schedule,
    n: usize,
    r: usize,
    root: usize,
    io: Io,
    count: usize,
) {
    let Io {
        input,
        output,
        bytes,
        elem_size,
    } = io;
    if bytes == 0 {
        return;
    }
    if n == 1 {
        b.copy(whole(input, bytes), whole(output, bytes));
        return;
    }
    let pof2 = pof2_floor(n);
    let rem = n - pof2;
    let v = (r + n - root) % n;
    let real = |x: usize| (x + root) % n;
    // Relative rank 0 (the root) must stay in: the odd member of each pair leaves.
    if v < 2 * rem && v % 2 == 1 {
        b.send(real(v - 1), whole(input, bytes));
        b.next_round();
        return;
    }
    let w = if r == root { output } else { b.tmp(bytes) };
    let mut t = Lazy(None);
    let mut cur_is_w = input == w;
    let newrank = if v < 2 * rem {
        fold_in(b, real(v + 1), input, w, bytes, &mut t);
        cur_is_w = true;
        v / 2
    } else {
        v - rem
    };
    let to_real = move |p: usize| real(if p < rem { 2 * p } else { p + rem });
    let seg = even_split(count, elem_size, pof2);
    halving(b, newrank, pof2, &seg, &to_real, input, w, cur_is_w, &mut t);
    // Binomial gather of the segments to newrank 0: all children at once, then the parent.
    let span = |lo: usize, hi: usize| Region::new(w, seg[lo], seg[hi.min(pof2)] - seg[lo]);
    let mut mask = 1;
    while mask < pof2 && newrank & mask == 0 {
        b.recv(
            to_real(newrank + mask),
            span(newrank + mask, newrank + 2 * mask),
        );
        mask <<= 1;
    }
    b.next_round();
    if newrank != 0 {
        b.send(to_real(newrank - mask), span(newrank, newrank + mask));
        b.next_round();
    }
}

/// Rabenseifner's allreduce: recursive-halving reduce-scatter, then recursive-doubling
/// allgather of the segments. Commutative operations only.
pub(super) fn rabenseifner_allreduce(b: &mut Schedule, n: usize, r: usize, io: Io, count: usize) {
    let Io {
        input,
        output,
        bytes,
        elem_size,
    } = io;
    if bytes == 0 {
        return;
    }
    if n == 1 {
        b.copy(whole(input, bytes), whole(output, bytes));
        return;
    }
    let pof2 = pof2_floor(n);
    let rem = n - pof2;
    let w = output;
    if r < 2 * rem && r % 2 == 0 {
        b.send(r + 1, whole(input, bytes));
        b.next_round();
        b.recv(r + 1, whole(output, bytes));
        b.next_round();
        return;
    }
    let mut t = Lazy(None);
    let mut cur_is_w = input == w;
    let newrank = if r < 2 * rem {
        fold_in(b, r - 1, input, w, bytes, &mut t);
        cur_is_w = true;
        r / 2
    } else {
        r - rem
    };
    let to_real = move |p: usize| if p < rem { 2 * p + 1 } else { p + rem };
    let seg = even_split(count, elem_size, pof2);
    halving(b, newrank, pof2, &seg, &to_real, input, w, cur_is_w, &mut t);
    let span = |lo: usize, hi: usize| Region::new(w, seg[lo], seg[hi] - seg[lo]);
    let mut mask = 1;
    while mask < pof2 {
        let partner = newrank ^ mask;
        let (mine, theirs) = (newrank & !(mask - 1), partner & !(mask - 1));
        b.recv(to_real(partner), span(theirs, theirs + mask));
        b.send(to_real(partner), span(mine, mine + mask));
        b.next_round();
        mask <<= 1;
    }
    if r < 2 * rem {
        b.send(r - 1, whole(output, bytes));
        b.next_round();
    }
}

/// Recursive-doubling allreduce, correct for any operation: each exchange combines
/// with the partner's block on the correct side (lower ranks on the left).
pub(super) fn allreduce_recursive_doubling(
    b: &mut Schedule,
    n: usize,
    r: usize,
    io: Io,
    commutative: bool,
) {
    let Io {
        input,
        output: out,
        bytes,
        ..
    } = io;
    if bytes == 0 {
        return;
    }
    if n == 1 {
        b.copy(whole(input, bytes), whole(out, bytes));
        return;
    }
    let pof2 = pof2_floor(n);
    let rem = n - pof2;
    if r < 2 * rem && r % 2 == 0 {
        b.send(r + 1, whole(input, bytes));
        b.next_round();
        b.recv(r + 1, whole(out, bytes));
        b.next_round();
        return;
    }
    let mut t = Lazy(None);
    let mut acc = input;
    if !commutative {
        // Both working buffers must be writable: start from a copy in `out`.
        b.copy(whole(input, bytes), whole(out, bytes));
        acc = out;
    }
    let mut step = |b: &mut Schedule, peer: usize, send: bool, lower: bool, acc: &mut BufRef| {
        let x = if *acc == out { t.get(b, bytes) } else { out };
        b.recv(peer, whole(x, bytes));
        if send {
            b.send(peer, whole(*acc, bytes));
        }
        if commutative && *acc == out {
            b.reduce(whole(x, bytes), whole(out, bytes));
        } else if commutative || !lower {
            // acc op x, landing in x (for commutative: acc is the read-only input).
            b.reduce(whole(*acc, bytes), whole(x, bytes));
            *acc = x;
        } else {
            b.reduce(whole(x, bytes), whole(*acc, bytes));
        }
        b.next_round();
    };
    let newrank = if r < 2 * rem {
        step(b, r - 1, false, true, &mut acc);
        r / 2
    } else {
        r - rem
    };
    let to_real = |p: usize| if p < rem { 2 * p + 1 } else { p + rem };
    let mut mask = 1;
    while mask < pof2 {
        let partner = newrank ^ mask;
        step(b, to_real(partner), true, partner < newrank, &mut acc);
        mask <<= 1;
    }
    b.copy(whole(acc, bytes), whole(out, bytes));
    if r < 2 * rem {
        b.send(r - 1, whole(out, bytes));
        b.next_round();
    }
}

/// Ring allreduce: ring reduce-scatter (rank `r` ends with block `r`), then ring
/// allgather. `2 (n - 1)` rounds, each moving `1/n` of the vector. Commutative only.
pub(super) fn allreduce_ring(b: &mut Schedule, n: usize, r: usize, io: Io, count: usize) {
    let Io {
        input,
        output,
        bytes,
        elem_size,
    } = io;
    if bytes == 0 {
        return;
    }
    if n == 1 {
        b.copy(whole(input, bytes), whole(output, bytes));
        return;
    }
    let blk = even_split(count, elem_size, n);
    let block = |buf: BufRef, i: usize| Region::new(buf, blk[i], blk[i + 1] - blk[i]);
    let (left, right) = ((r + n - 1) % n, (r + 1) % n);
    let in_place = input == output;
    let mut t = Lazy(None);
    for s in 0..n - 1 {
        let (sb, rb) = ((r + 2 * n - s - 1) % n, (r + 2 * n - s - 2) % n);
        let into = block(output, rb);
        if in_place {
            let tt = t.get(b, into.len);
            b.recv(left, Region::new(tt, 0, into.len));
            b.send(right, block(output, sb));
            b.reduce(Region::new(tt, 0, into.len), into);
        } else {
            b.recv(left, into);
            b.send(right, block(if s == 0 { input } else { output }, sb));
            b.reduce(block(input, rb), into);
        }
        b.next_round();
    }
    for s in 0..n - 1 {
        b.recv(left, block(output, (r + 2 * n - s - 1) % n));
        b.send(right, block(output, (r + n - s) % n));
        b.next_round();
    }
}

/// Reduce-scatter with `counts[i]` elements for rank `i`; the result goes to the start
/// of `Recv`. `algo` picks recursive halving / ring (commutative) or reduce + scatterv.
#[allow(clippy::too_many_arguments)]
pub(super) fn reduce_scatter(
    b: &mut Schedule,
    n: usize,
    r: usize,
    counts: &[usize],
    elem_size: usize,
    input: BufRef,
    commutative: bool,
    algo: Algorithm,
) {
    let mut displ = Vec::with_capacity(n + 1);
    let mut at = 0;
    displ.push(0);
    for &c in counts {
        at += c * elem_size;
        displ.push(at);
    }
    let total = at;
    if total == 0 {
        return;
    }
    let mine = Region::new(BufRef::Recv, 0, counts[r] * elem_size);
    let block = |buf: BufRef, i: usize| Region::new(buf, displ[i], displ[i + 1] - displ[i]);
    if n == 1 {
        b.copy(block(input, 0), mine);
        return;
    }
    match algo {
        Algorithm::ReduceScatterRecursiveHalving
        | Algorithm::ReduceScatterBlockRecursiveHalving => {
            let pof2 = pof2_floor(n);
            let rem = n - pof2;
            if r < 2 * rem && r % 2 == 0 {
                b.send(r + 1, whole(input, total));
                b.next_round();
                b.recv(r + 1, mine);
                b.next_round();
                return;
            }
            let w = b.tmp(total);
            let mut t = Lazy(None);
            let newrank = if r < 2 * rem {
                fold_in(b, r - 1, input, w, total, &mut t);
                r / 2
            } else {
                r - rem
            };
            let first_real = |p: usize| if p < rem { 2 * p } else { p + rem };
            let seg: Vec<usize> = (0..=pof2)
                .map(|p| {
                    if p == pof2 {
                        total
                    } else {
                        displ[first_real(p)]
                    }
                })
                .collect();
            let to_real = move |p: usize| if p < rem { 2 * p + 1 } else { p + rem };
            halving(
                b,
                newrank,
                pof2,
                &seg,
                &to_real,
                input,
                w,
                r < 2 * rem,
                &mut t,
            );
            if r < 2 * rem {
                b.send(r - 1, block(w, r - 1));
            }
            b.copy(block(w, r), mine);
            b.next_round();
        }
        Algorithm::ReduceScatterRing | Algorithm::ReduceScatterBlockRing => {
            let in_place = input == BufRef::Recv;
            let (left, right) = ((r + n - 1) % n, (r + 1) % n);
            let largest = counts.iter().max().copied().unwrap_or(0) * elem_size;
            let (ta, tb) = (b.tmp(largest), b.tmp(largest));
            let mut prev = Region::new(ta, 0, 0);
            for s in 0..n - 1 {
                let (sb, rb) = ((r + 2 * n - s - 1) % n, (r + 2 * n - s - 2) % n);
                let len = displ[rb + 1] - displ[rb];
                let into = if s == n - 2 && !in_place {
                    mine
                } else {
                    Region::new(if s % 2 == 0 { ta } else { tb }, 0, len)
                };
                b.recv(left, into);
                b.send(right, if s == 0 { block(input, sb) } else { prev });
                b.reduce(block(input, rb), into);
                b.next_round();
                prev = into;
            }
            b.copy(prev, mine);
        }
        _ => {
            let result = if r == 0 { b.tmp(total) } else { BufRef::Recv };
            let io = Io {
                input,
                output: result,
                bytes: total,
                elem_size,
            };
            binomial(b, n, r, 0, io, commutative);
            b.next_round();
            let blocks: Vec<Block> = (0..n)
                .map(|i| Block {
                    off: displ[i],
                    len: displ[i + 1] - displ[i],
                })
                .collect();
            rooted::scatterv(b, n, r, 0, result, &blocks, mine.len, Some(BufRef::Recv));
        }
    }
}
