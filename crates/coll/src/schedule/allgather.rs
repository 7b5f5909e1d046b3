//! Allgather schedules: recursive doubling (power-of-two sizes), Bruck (any size,
//! `ceil(log2 n)` rounds), ring (`n - 1` rounds, bandwidth-optimal), and the ring for
//! allgatherv. `input == None` means in place: the own block is already in `Recv`.

use super::spec::Block;
use super::{BufRef, Region, Schedule};

fn own_block(b: &mut Schedule, input: Option<BufRef>, dst: Region) {
    if let Some(input) = input {
        b.copy(Region::new(input, 0, dst.len), dst);
    }
}

/// Recursive doubling: in step `k` exchange the `2^k` blocks held with rank `r ^ 2^k`.
pub(super) fn recursive_doubling(
    b: &mut Schedule,
    n: usize,
    r: usize,
    bytes: usize,
    input: Option<BufRef>,
) {
    if bytes == 0 {
        return;
    }
    let blocks =
        |first: usize, count: usize| Region::new(BufRef::Recv, first * bytes, count * bytes);
    own_block(b, input, blocks(r, 1));
    let mut mask = 1;
    while mask < n {
        let partner = r ^ mask;
        b.recv(partner, blocks(partner & !(mask - 1), mask));
        b.send(partner, blocks(r & !(mask - 1), mask));
        b.next_round();
        mask <<= 1;
    }
}

/// Bruck: work in a buffer rotated so this rank's block comes first; in step `k` send
/// the first `min(2^k, n - 2^k)` blocks to `r - 2^k` and append as many from `r + 2^k`;
/// finally undo the rotation. Rank 0's rotation is the identity, so it works in `Recv`.
pub(super) fn bruck(b: &mut Schedule, n: usize, r: usize, bytes: usize, input: Option<BufRef>) {
    if bytes == 0 {
        return;
    }
    let w = if r == 0 {
        BufRef::Recv
    } else {
        b.tmp(n * bytes)
    };
    let at =
        |buf: BufRef, first: usize, count: usize| Region::new(buf, first * bytes, count * bytes);
    b.copy(
        at(
            input.unwrap_or(BufRef::Recv),
            if input.is_some() { 0 } else { r },
            1,
        ),
        at(w, 0, 1),
    );
    let mut k = 1;
    while k < n {
        let count = k.min(n - k);
        b.recv((r + k) % n, at(w, k, count));
        b.send((r + n - k) % n, at(w, 0, count));
        b.next_round();
        k <<= 1;
    }
    if r != 0 {
        b.copy(at(w, 0, n - r), at(BufRef::Recv, r, n - r));
        b.copy(at(w, n - r, r), at(BufRef::Recv, 0, r));
    }
}

/// Ring: in step `s` pass block `r - s` to the right and take block `r - s - 1` from the left.
pub(super) fn ring(b: &mut Schedule, n: usize, r: usize, bytes: usize, input: Option<BufRef>) {
    if bytes == 0 {
        return;
    }
    let blocks: Vec<Block> = (0..n)
        .map(|i| Block {
            off: i * bytes,
            len: bytes,
        })
        .collect();
    ringv(b, n, r, &blocks, input);
}

/// Ring allgatherv over arbitrary blocks (empty blocks send nothing).
pub(super) fn ringv(b: &mut Schedule, n: usize, r: usize, blocks: &[Block], input: Option<BufRef>) {
    let block = |i: usize| Region::new(BufRef::Recv, blocks[i].off, blocks[i].len);
    own_block(b, input, block(r));
    let (left, right) = ((r + n - 1) % n, (r + 1) % n);
    for s in 0..n - 1 {
        b.recv(left, block((r + 2 * n - s - 1) % n));
        b.send(right, block((r + n - s) % n));
        b.next_round();
    }
}
