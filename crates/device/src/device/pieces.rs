//! Piece lists: how a non-contiguous send buffer describes its memory to a receiver that
//! reads it with cross-memory attach. The list is a run-length form of the buffer's
//! pieces in stream order, `[address, length, stride, count]` = `count` pieces of
//! `length` bytes, `stride` bytes apart (a whole vector is one entry), published in the
//! sender's memory. This module builds, checks and expands lists and groups pieces into
//! spans that one contiguous read can fetch; it does no I/O.

/// One entry: `count` pieces of `len` bytes at `addr + k * stride` (wrapping arithmetic;
/// the stride may be negative).
pub type Entry = [u64; 4];

/// Bytes of one encoded entry.
pub const ENTRY_BYTES: usize = 32;

/// Builds the list of `pieces` (address, length), or None when it would need more
/// than `max_entries` entries.
pub fn build(
    pieces: impl Iterator<Item = (usize, usize)>,
    max_entries: usize,
) -> Option<Vec<Entry>> {
    let mut v: Vec<Entry> = Vec::new();
    for (a, n) in pieces {
        let (a, n) = (a as u64, n as u64);
        if let Some(e) = v.last_mut() {
            if e[1] == n {
                if e[3] == 1 {
                    e[2] = a.wrapping_sub(e[0]);
                    e[3] = 2;
                    continue;
                }
                if e[0].wrapping_add(e[2].wrapping_mul(e[3])) == a {
                    e[3] += 1;
                    continue;
                }
            }
        }
        if v.len() >= max_entries {
            return None;
        }
        v.push([a, n, 0, 1]);
    }
    Some(v)
}

/// Checks a list read from a peer: it must describe exactly `len` bytes in at most
/// `max_pieces` pieces. Returns the number of pieces.
pub fn check(list: &[Entry], len: u64, max_pieces: u64) -> Option<u64> {
    let mut total = 0u64;
    let mut pieces = 0u64;
    for e in list {
        if e[3] == 0 {
            return None;
        }
        total = total.checked_add(e[1].checked_mul(e[3])?)?;
        pieces = pieces.checked_add(e[3])?;
    }
    (total == len && pieces <= max_pieces).then_some(pieces)
}

/// The pieces of a (checked) list, in stream order.
pub fn expand(list: &[Entry]) -> impl Iterator<Item = (usize, usize)> + '_ {
    list.iter().flat_map(|e| {
        (0..e[3]).map(move |k| {
            (
                e[0].wrapping_add(e[2].wrapping_mul(k)) as usize,
                e[1] as usize,
            )
        })
    })
}

/// Gaps up to this many bytes between consecutive pieces are read along with them: two
/// mapped addresses less than a page apart have only mapped bytes between them.
pub const MAX_GAP: usize = 4096;

/// A span of remote memory `[start, start + len)` holding consecutive pieces, each
/// `(offset in the span, length)`.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Span {
    pub start: usize,
    pub len: usize,
    pub pieces: Vec<(usize, usize)>,
}

/// Groups pieces into spans of at most `max_span` bytes: a piece joins the span when it
/// starts at or after the span's end, less than [`MAX_GAP`] bytes after it. Pieces
/// longer than `max_span` are split.
pub struct Spans<I> {
    it: I,
    held: Option<(usize, usize)>,
    max_span: usize,
}

impl<I: Iterator<Item = (usize, usize)>> Spans<I> {
    pub fn new(it: I, max_span: usize) -> Spans<I> {
        Spans {
            it,
            held: None,
            max_span: max_span.max(1),
        }
    }

    /// Fills `s` with the next span; false when no pieces are left.
    pub fn next_into(&mut self, s: &mut Span) -> bool {
        s.pieces.clear();
        s.len = 0;
        loop {
            let Some((a, n)) = self.held.take().or_else(|| self.it.next()) else {
                return !s.pieces.is_empty();
            };
            if n == 0 {
                continue;
            }
            if s.pieces.is_empty() {
                let take = n.min(self.max_span);
                if take < n {
                    self.held = Some((a.wrapping_add(take), n - take));
                }
                s.start = a;
                s.len = take;
                s.pieces.push((0, take));
                if take < n {
                    return true;
                }
                continue;
            }
            // Joins only when the piece lies after the span's end, close to it, and the
            // span stays short (checked arithmetic: addresses come from another process).
            let joins = s.start.checked_add(s.len).is_some_and(|end| {
                a.checked_sub(end).is_some_and(|gap| gap < MAX_GAP)
                    && (a - s.start)
                        .checked_add(n)
                        .is_some_and(|e| e <= self.max_span)
            });
            if !joins {
                self.held = Some((a, n));
                return true;
            }
            s.pieces.push((a - s.start, n));
            s.len = a - s.start + n;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_vector_is_one_entry_and_expands_back() {
        let pieces: Vec<(usize, usize)> = (0..1000).map(|k| (4096 + k * 128, 64)).collect();
        let l = build(pieces.iter().copied(), 10).unwrap();
        assert_eq!(l, vec![[4096, 64, 128, 1000]]);
        assert_eq!(check(&l, 64_000, 1000), Some(1000));
        assert_eq!(check(&l, 64_001, 1000), None);
        assert_eq!(check(&l, 64_000, 999), None);
        assert_eq!(expand(&l).collect::<Vec<_>>(), pieces);
    }

    #[test]
    fn irregular_pieces_and_backward_strides() {
        let pieces = vec![
            (1000, 8),
            (900, 8),
            (800, 8),
            (5000, 3),
            (7000, 8),
            (6000, 8),
        ];
        let l = build(pieces.iter().copied(), 10).unwrap();
        assert_eq!(l.len(), 3);
        assert_eq!(expand(&l).collect::<Vec<_>>(), pieces);
        assert!(build(pieces.iter().copied(), 2).is_none());
    }

    #[test]
    fn hostile_lists_are_refused() {
        assert_eq!(check(&[[0, u64::MAX, 0, 2]], 0, 10), None);
        assert_eq!(check(&[[0, 8, 0, 0]], 0, 10), None);
        assert_eq!(
            check(&[[0, 1, 1, u64::MAX], [0, 1, 1, 2]], 1, u64::MAX),
            None
        );
    }

    #[test]
    fn spans_survive_addresses_at_the_top_of_memory() {
        let pieces = vec![(usize::MAX - 4, 4), (2, 4), (usize::MAX - 1, 8)];
        let mut sp = Spans::new(pieces.into_iter(), 16);
        let mut s = Span::default();
        let mut n = 0;
        while sp.next_into(&mut s) {
            assert!(s.pieces.iter().all(|&(o, l)| o + l <= s.len && s.len <= 16));
            n += 1;
        }
        assert_eq!(n, 3);
    }

    #[test]
    fn spans_group_close_pieces_and_split_long_ones() {
        let pieces = vec![
            (100, 10),
            (120, 10),
            (130, 5),
            (10_000, 4),
            (9_000, 4),
            (20_000, 25),
        ];
        let mut sp = Spans::new(pieces.into_iter(), 16);
        let mut s = Span::default();
        let mut got = Vec::new();
        while sp.next_into(&mut s) {
            got.push((s.start, s.len, s.pieces.clone()));
        }
        assert_eq!(
            got,
            vec![
                (100, 10, vec![(0, 10)]),
                (120, 15, vec![(0, 10), (10, 5)]),
                (10_000, 4, vec![(0, 4)]),
                (9_000, 4, vec![(0, 4)]),
                (20_000, 16, vec![(0, 16)]),
                (20_016, 9, vec![(0, 9)]),
            ]
        );
    }
}
