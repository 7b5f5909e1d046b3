//! Rooted data movement: gather and scatter (binomial tree or linear) and their
//! v-variants (linear).
//!
//! In the binomial trees, relative rank `v = (rank - root) mod n` owns the contiguous
//! relative ranks `[v, v + lowbit(v))`, kept in a temporary buffer in relative order.
//! Only the root's buffer is in real rank order, so a block range sent to or from the
//! root that wraps past rank `n - 1` travels as two messages.

use super::spec::Block;
use super::{lowbit, BufRef, Region, Schedule};

/// Size of relative rank `v`'s subtree.
fn subtree(n: usize, v: usize) -> usize {
    if v == 0 {
        n
    } else {
        lowbit(v).min(n - v)
    }
}

/// The real-rank pieces (at most two) of `len` blocks starting at real rank `start`:
/// `(first_block, blocks)` pairs in relative order.
fn pieces(n: usize, start: usize, len: usize) -> [(usize, usize); 2] {
    let first = len.min(n - start);
    [(start, first), (0, len - first)]
}

/// Gather `bytes` from every rank to the root's `out` (rank `i` at `i * bytes`).
/// At the root, `input == out` means its own block is already in place.
#[allow(clippy::too_many_arguments)]
pub(super) fn gather(
    b: &mut Schedule,
    n: usize,
    r: usize,
    root: usize,
    bytes: usize,
    input: BufRef,
    out: BufRef,
    linear: bool,
) {
    if bytes == 0 {
        return;
    }
    let at =
        |buf: BufRef, block: usize, blocks: usize| Region::new(buf, block * bytes, blocks * bytes);
    let v = (r + n - root) % n;
    let real = |x: usize| (x + root) % n;
    if v == 0 {
        if input != out {
            b.copy(at(input, 0, 1), at(out, r, 1));
        }
        let mut children = 1..n;
        let mut mask = 1;
        let mut next_child = || {
            if linear {
                children.next().map(|c| (c, 1))
            } else if mask < n {
                let c = mask;
                mask <<= 1;
                Some((c, subtree(n, c)))
            } else {
                None
            }
        };
        while let Some((c, len)) = next_child() {
            for (first, blocks) in pieces(n, real(c), len) {
                b.recv(real(c), at(out, first, blocks));
            }
        }
        b.next_round();
        return;
    }
    let parent = if linear { 0 } else { v - lowbit(v) };
    let sub = if linear { 1 } else { subtree(n, v) };
    let mut held = at(input, 0, 1);
    if sub > 1 {
        let t = b.tmp(sub * bytes);
        b.copy(held, at(t, 0, 1));
        let mut mask = 1;
        while mask < sub {
            b.recv(real(v + mask), at(t, mask, subtree(n, v + mask)));
            mask <<= 1;
        }
        b.next_round();
        held = at(t, 0, sub);
    }
    if parent == 0 {
        let mut off = 0;
        for (_, blocks) in pieces(n, r, sub) {
            b.send(root, held.sub(off, blocks * bytes));
            off += blocks * bytes;
        }
    } else {
        b.send(real(parent), held);
    }
    b.next_round();
}

/// Scatter block `i` of the root's `send` (`bytes` each) to rank `i`'s `out`.
/// `out == None` at an in-place root: its block stays where it is.
#[allow(clippy::too_many_arguments)]
pub(super) fn scatter(
    b: &mut Schedule,
    n: usize,
    r: usize,
    root: usize,
    bytes: usize,
    send: BufRef,
    out: Option<BufRef>,
    linear: bool,
) {
    if bytes == 0 {
        return;
    }
    let at =
        |buf: BufRef, block: usize, blocks: usize| Region::new(buf, block * bytes, blocks * bytes);
    let v = (r + n - root) % n;
    let real = |x: usize| (x + root) % n;
    if v == 0 {
        // Largest subtree first: it has the longest way to go.
        let children: Vec<(usize, usize)> = if linear {
            (1..n).map(|c| (c, 1)).collect()
        } else {
            let mut mask = n.next_power_of_two() >> 1;
            let mut c = Vec::new();
            while mask > 0 {
                c.push((mask, subtree(n, mask)));
                mask >>= 1;
            }
            c
        };
        for (c, len) in children {
            for (first, blocks) in pieces(n, real(c), len) {
                b.send(real(c), at(send, first, blocks));
            }
        }
        if let Some(out) = out {
            b.copy(at(send, r, 1), at(out, 0, 1));
        }
        b.next_round();
        return;
    }
    let out = out.unwrap_or(BufRef::Recv);
    let parent = if linear { 0 } else { v - lowbit(v) };
    let sub = if linear { 1 } else { subtree(n, v) };
    let held = if sub > 1 { b.tmp(sub * bytes) } else { out };
    if parent == 0 {
        let mut off = 0;
        for (_, blocks) in pieces(n, r, sub) {
            b.recv(root, Region::new(held, off, blocks * bytes));
            off += blocks * bytes;
        }
    } else {
        b.recv(real(parent), at(held, 0, sub));
    }
    b.next_round();
    if sub > 1 {
        let mut mask = lowbit(v) >> 1;
        while mask > 0 {
            if mask < sub {
                b.send(real(v + mask), at(held, mask, subtree(n, v + mask)));
            }
            mask >>= 1;
        }
        b.copy(at(held, 0, 1), at(out, 0, 1));
        b.next_round();
    }
}

/// Linear gatherv: every rank sends `send_bytes` to the root, which receives rank `i`'s
/// into `recv[i]` of `Recv`; an in-place root's own block is already there.
pub(super) fn gatherv(
    b: &mut Schedule,
    n: usize,
    r: usize,
    root: usize,
    send_bytes: usize,
    recv: &[Block],
    in_place: bool,
) {
    if r != root {
        b.send(root, Region::new(BufRef::Send, 0, send_bytes));
        b.next_round();
        return;
    }
    if !in_place {
        b.copy(
            Region::new(BufRef::Send, 0, send_bytes),
            Region::new(BufRef::Recv, recv[r].off, send_bytes),
        );
    }
    for i in (1..n).map(|k| (r + k) % n) {
        b.recv(i, Region::new(BufRef::Recv, recv[i].off, recv[i].len));
    }
    b.next_round();
}

/// Linear scatterv: the root sends `send[i]` of its `send` buffer to rank `i`, which
/// receives `recv_bytes` into `out` (`None` at an in-place root).
#[allow(clippy::too_many_arguments)]
pub(super) fn scatterv(
    b: &mut Schedule,
    n: usize,
    r: usize,
    root: usize,
    send: BufRef,
    blocks: &[Block],
    recv_bytes: usize,
    out: Option<BufRef>,
) {
    if r != root {
        b.recv(
            root,
            Region::new(out.unwrap_or(BufRef::Recv), 0, recv_bytes),
        );
        b.next_round();
        return;
    }
    for i in (1..n).map(|k| (r + k) % n) {
        b.send(i, Region::new(send, blocks[i].off, blocks[i].len));
    }
    if let Some(out) = out {
        b.copy(
            Region::new(send, blocks[r].off, recv_bytes),
            Region::new(out, 0, recv_bytes),
        );
    }
    b.next_round();
}
