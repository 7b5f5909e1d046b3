//! Inclusive and exclusive scan by recursive doubling, for any operation: in step `k`
//! exchange partial results with `rank ^ 2^k`; what comes from a lower rank is folded in
//! on the left, what comes from a higher rank only extends the partial result that is
//! passed on (on the right, for non-commutative operations).

use super::{BufRef, Region, Schedule};

pub(super) fn recursive_doubling(
    b: &mut Schedule,
    n: usize,
    r: usize,
    input: BufRef,
    bytes: usize,
    commutative: bool,
    exclusive: bool,
) {
    if bytes == 0 {
        return;
    }
    let all = |buf: BufRef| Region::new(buf, 0, bytes);
    let out = all(BufRef::Recv);
    if n == 1 {
        if !exclusive {
            b.copy(all(input), out);
        }
        return;
    }
    // `partial` covers this rank's current block of ranks; `got` receives the partner's.
    let (mut partial, mut got) = (b.tmp(bytes), b.tmp(bytes));
    b.copy(all(input), all(partial));
    if !exclusive {
        b.copy(all(input), out);
    }
    let mut have_lower = false;
    let mut mask = 1;
    while mask < n {
        let peer = r ^ mask;
        if peer < n {
            b.recv(peer, all(got));
            b.send(peer, all(partial));
            if peer < r {
                b.reduce(all(got), all(partial));
                if exclusive && !have_lower {
                    b.copy(all(got), out);
                } else {
                    b.reduce(all(got), out);
                }
                have_lower = true;
            } else if commutative {
                b.reduce(all(got), all(partial));
            } else {
                b.reduce(all(partial), all(got));
                std::mem::swap(&mut partial, &mut got);
            }
            b.next_round();
        }
        mask <<= 1;
    }
}
