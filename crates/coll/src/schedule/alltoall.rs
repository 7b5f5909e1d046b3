//! All-to-all schedules: Bruck (small blocks, `ceil(log2 n)` rounds with local packing),
//! linear (every message posted at once), pairwise exchange (`n - 1` rounds), and
//! linear / pairwise for the v-variant. In place, the data to send is first copied out
//! of `Recv` (Bruck needs no copy: it reads everything before anything arrives).

use super::spec::Block;
use super::{BufRef, Region, Schedule};

/// The buffer to send from, copying `Recv` aside when in place.
fn source(b: &mut Schedule, total: usize, in_place: bool) -> BufRef {
    if !in_place {
        return BufRef::Send;
    }
    let t = b.tmp(total);
    b.copy(
        Region::new(BufRef::Recv, 0, total),
        Region::new(t, 0, total),
    );
    t
}

/// Every receive and send posted in one round (peers in rotating order).
pub(super) fn linear(b: &mut Schedule, n: usize, r: usize, bytes: usize, in_place: bool) {
    if bytes == 0 {
        return;
    }
    let src = source(b, n * bytes, in_place);
    let at = |buf: BufRef, i: usize| Region::new(buf, i * bytes, bytes);
    for k in 1..n {
        let from = (r + n - k) % n;
        b.recv(from, at(BufRef::Recv, from));
    }
    for k in 1..n {
        let to = (r + k) % n;
        b.send(to, at(src, to));
    }
    b.copy(at(src, r), at(BufRef::Recv, r));
    b.next_round();
}

/// Pairwise exchange: in step `k` send to `r + k`, receive from `r - k`.
pub(super) fn pairwise(b: &mut Schedule, n: usize, r: usize, bytes: usize, in_place: bool) {
    if bytes == 0 {
        return;
    }
    let src = source(b, n * bytes, in_place);
    let at = |buf: BufRef, i: usize| Region::new(buf, i * bytes, bytes);
    b.copy(at(src, r), at(BufRef::Recv, r));
    for k in 1..n {
        let (to, from) = ((r + k) % n, (r + n - k) % n);
        b.recv(from, at(BufRef::Recv, from));
        b.send(to, at(src, to));
        b.next_round();
    }
}

/// Bruck: rotate so block `i` is the one for rank `r + i`; for each bit `k`, blocks
/// whose index has bit `k` set travel `k` ranks forward (packed into one message);
/// at the end block `i` came from rank `r - i`.
pub(super) fn bruck(b: &mut Schedule, n: usize, r: usize, bytes: usize, in_place: bool) {
    if bytes == 0 {
        return;
    }
    let input = if in_place { BufRef::Recv } else { BufRef::Send };
    let at =
        |buf: BufRef, first: usize, count: usize| Region::new(buf, first * bytes, count * bytes);
    let w = b.tmp(n * bytes);
    b.copy(at(input, r, n - r), at(w, 0, n - r));
    b.copy(at(input, 0, r), at(w, n - r, r));
    let most = n / 2 + 1;
    let (pack, unpack) = (b.tmp(most * bytes), b.tmp(most * bytes));
    let mut k = 1;
    while k < n {
        // Indices with bit k set come in runs [j, j + k) for j = k, 3k, 5k, ...
        let runs = || (k..n).step_by(2 * k).map(move |j| (j, k.min(n - j)));
        let mut packed = 0;
        for (j, len) in runs() {
            b.copy(at(w, j, len), at(pack, packed, len));
            packed += len;
        }
        b.recv((r + n - k) % n, at(unpack, 0, packed));
        b.send((r + k) % n, at(pack, 0, packed));
        let mut off = 0;
        for (j, len) in runs() {
            b.copy(at(unpack, off, len), at(w, j, len));
            off += len;
        }
        b.next_round();
        k <<= 1;
    }
    for i in 0..n {
        b.copy(at(w, i, 1), at(BufRef::Recv, (r + n - i) % n, 1));
    }
}

/// Alltoallv (and packed alltoallw): linear (one round) or pairwise (`n - 1` rounds).
pub(super) fn alltoallv(
    b: &mut Schedule,
    n: usize,
    r: usize,
    send: &[Block],
    recv: &[Block],
    in_place: bool,
    pairwise: bool,
) {
    let region = |buf: BufRef, blk: Block| Region::new(buf, blk.off, blk.len);
    // In place, the outgoing blocks are the recv blocks, copied aside contiguously.
    let staged: Vec<Block>;
    let (src, send) = if in_place {
        let mut off = 0;
        staged = recv
            .iter()
            .map(|blk| {
                let s = Block { off, len: blk.len };
                off += blk.len;
                s
            })
            .collect();
        let t = b.tmp(off);
        for (i, blk) in recv.iter().enumerate() {
            if i != r {
                b.copy(region(BufRef::Recv, *blk), region(t, staged[i]));
            }
        }
        (t, &staged[..])
    } else {
        (BufRef::Send, send)
    };
    if !in_place {
        let own = recv[r].len.min(send[r].len);
        b.copy(
            Region::new(src, send[r].off, own),
            Region::new(BufRef::Recv, recv[r].off, own),
        );
    }
    for k in 1..n {
        let (to, from) = ((r + k) % n, (r + n - k) % n);
        b.recv(from, region(BufRef::Recv, recv[from]));
        if pairwise {
            b.send(to, region(src, send[to]));
            b.next_round();
        }
    }
    if !pairwise {
        for k in 1..n {
            let to = (r + k) % n;
            b.send(to, region(src, send[to]));
        }
        b.next_round();
    }
}
