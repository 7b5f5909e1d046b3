//! Barrier (dissemination) and broadcast (binomial tree; scatter then ring allgather,
//! after van de Geijn) schedules.

use super::{lowbit, BufRef, Region, Schedule};

/// Dissemination barrier: in round `k` send to `rank + 2^k`, receive from `rank - 2^k`.
pub(super) fn barrier_dissemination(b: &mut Schedule, n: usize, r: usize) {
    let mut k = 1;
    while k < n {
        b.recv_signal((r + n - k) % n);
        b.send_signal((r + k) % n);
        b.next_round();
        k <<= 1;
    }
}

/// Binomial-tree broadcast of `buf[0..bytes]`: receive from the parent, then send to
/// all children at once (largest subtree first).
pub(super) fn binomial(
    b: &mut Schedule,
    n: usize,
    r: usize,
    root: usize,
    buf: BufRef,
    bytes: usize,
) {
    if bytes == 0 || n == 1 {
        return;
    }
    let all = Region::new(buf, 0, bytes);
    let v = (r + n - root) % n;
    let real = |x: usize| (x + root) % n;
    let mut mask = if v == 0 {
        n.next_power_of_two()
    } else {
        lowbit(v)
    };
    if v != 0 {
        b.recv(real(v - mask), all);
        b.next_round();
    }
    mask >>= 1;
    while mask > 0 {
        if v + mask < n {
            b.send(real(v + mask), all);
        }
        mask >>= 1;
    }
    b.next_round();
}

/// Scatter the buffer's `n` chunks down a binomial tree (relative rank `v` gets chunk
/// `v`), then circulate them round a ring so every rank has all chunks.
pub(super) fn scatter_ring_allgather(
    b: &mut Schedule,
    n: usize,
    r: usize,
    root: usize,
    buf: BufRef,
    bytes: usize,
) {
    if bytes == 0 || n == 1 {
        return;
    }
    let chunk = bytes.div_ceil(n);
    // Bytes of relative ranks [lo, hi)'s chunks.
    let span = |lo: usize, hi: usize| {
        let (a, z) = ((lo * chunk).min(bytes), (hi * chunk).min(bytes));
        Region::new(buf, a, z - a)
    };
    let v = (r + n - root) % n;
    let real = |x: usize| (x + root) % n;
    let mut mask = if v == 0 {
        n.next_power_of_two()
    } else {
        lowbit(v)
    };
    if v != 0 {
        b.recv(real(v - mask), span(v, (v + mask).min(n)));
        b.next_round();
    }
    mask >>= 1;
    while mask > 0 {
        if v + mask < n {
            b.send(real(v + mask), span(v + mask, (v + 2 * mask).min(n)));
        }
        mask >>= 1;
    }
    b.next_round();
    // Ring allgather. A rank skips the chunks its scatter subtree already gave it (the
    // root receives nothing), and its left neighbour skips sending them.
    let holds = |v: usize, c: usize| {
        let sub = if v == 0 { n } else { lowbit(v).min(n - v) };
        c >= v && c < v + sub
    };
    let (left, right) = ((r + n - 1) % n, (r + 1) % n);
    let next = (v + 1) % n;
    for s in 0..n - 1 {
        let out = (v + n - s) % n;
        let inc = (v + 2 * n - s - 1) % n;
        if !holds(v, inc) {
            b.recv(left, span(inc, inc + 1));
        }
        if !holds(next, out) {
            b.send(right, span(out, out + 1));
        }
        b.next_round();
    }
}
