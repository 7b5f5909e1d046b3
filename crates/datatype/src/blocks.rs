//! An iterator over the contiguous memory pieces behind a range of the packed
//! stream, for building I/O vectors (`process_vm_readv`, `writev`) instead of packing.
//! It positions itself at any stream offset the way [`crate::pack`] does, then walks
//! the program with an explicit stack, merging pieces that touch in memory.

use crate::datatype::Datatype;
use crate::program::{Node, NodeKind, Program};

enum Frame<'a> {
    Repeat {
        child: &'a Node,
        at: i64,
        stride: i64,
        next: u64,
        count: u64,
    },
    Seq {
        items: &'a [Node],
        at: i64,
        next: usize,
    },
    Blocks {
        disps: &'a [i64],
        starts: &'a [u64],
        at: i64,
        next: usize,
    },
}

/// Iterator of `(displacement from base, length)` pieces; see [`Datatype::blocks`].
pub struct BlockIter<'a> {
    prog: &'a Program,
    count: u64,
    elem: u64,
    stack: Vec<Frame<'a>>,
    /// Bytes still to yield.
    left: u64,
    /// A piece already found but not yet yielded.
    held: Option<(i64, u64)>,
}

impl<'a> BlockIter<'a> {
    fn new(prog: &'a Program, count: usize, from: usize, len: usize) -> BlockIter<'a> {
        let mut it = BlockIter {
            prog,
            count: count as u64,
            elem: 0,
            stack: Vec::new(),
            left: 0,
            held: None,
        };
        let total = (count as u64).saturating_mul(prog.size);
        let from = from as u64;
        let Some(root) = &prog.root else { return it };
        if from >= total {
            return it;
        }
        it.left = (total - from).min(len as u64);
        it.elem = from / prog.size;
        let origin = (it.elem as i64).wrapping_mul(prog.extent);
        it.held = Some(it.seek(root, origin, from % prog.size));
        it
    }

    /// Pushes the frames leading to packed byte `skip` of `node` and returns the rest of
    /// the leaf block that holds it.
    fn seek(&mut self, mut node: &'a Node, mut origin: i64, mut skip: u64) -> (i64, u64) {
        loop {
            let at = origin.wrapping_add(node.disp);
            match &node.kind {
                NodeKind::Block => return (at.wrapping_add(skip as i64), node.size - skip),
                NodeKind::Repeat {
                    count,
                    stride,
                    child,
                } => {
                    let k = skip / child.size;
                    self.stack.push(Frame::Repeat {
                        child,
                        at,
                        stride: *stride,
                        next: k + 1,
                        count: *count,
                    });
                    origin = at.wrapping_add((k as i64).wrapping_mul(*stride));
                    skip %= child.size;
                    node = child;
                }
                NodeKind::Seq { items, starts } => {
                    let i = starts[..items.len()].partition_point(|&s| s <= skip) - 1;
                    self.stack.push(Frame::Seq {
                        items,
                        at,
                        next: i + 1,
                    });
                    skip -= starts[i];
                    origin = at;
                    node = &items[i];
                }
                NodeKind::Blocks { disps, starts } => {
                    let i = starts[..disps.len()].partition_point(|&s| s <= skip) - 1;
                    self.stack.push(Frame::Blocks {
                        disps,
                        starts,
                        at,
                        next: i + 1,
                    });
                    let off = skip - starts[i];
                    return (
                        at.wrapping_add(disps[i]).wrapping_add(off as i64),
                        starts[i + 1] - starts[i] - off,
                    );
                }
            }
        }
    }

    /// The next leaf block in packed order (unmerged), across element boundaries.
    fn next_leaf(&mut self) -> Option<(i64, u64)> {
        loop {
            let Some(top) = self.stack.last_mut() else {
                self.elem += 1;
                if self.elem >= self.count {
                    return None;
                }
                let root = self.prog.root.as_ref()?;
                let origin = (self.elem as i64).wrapping_mul(self.prog.extent);
                return Some(self.seek(root, origin, 0));
            };
            match top {
                Frame::Repeat {
                    child,
                    at,
                    stride,
                    next,
                    count,
                } => {
                    if *next < *count {
                        let origin = at.wrapping_add((*next as i64).wrapping_mul(*stride));
                        *next += 1;
                        let child: &'a Node = child;
                        return Some(self.seek(child, origin, 0));
                    }
                }
                Frame::Seq { items, at, next } => {
                    if *next < items.len() {
                        let items: &'a [Node] = items;
                        let (i, at) = (*next, *at);
                        *next += 1;
                        return Some(self.seek(&items[i], at, 0));
                    }
                }
                Frame::Blocks {
                    disps,
                    starts,
                    at,
                    next,
                } => {
                    if *next < disps.len() {
                        let i = *next;
                        *next += 1;
                        return Some((at.wrapping_add(disps[i]), starts[i + 1] - starts[i]));
                    }
                }
            }
            self.stack.pop();
        }
    }
}

impl Iterator for BlockIter<'_> {
    type Item = (isize, usize);

    fn next(&mut self) -> Option<(isize, usize)> {
        if self.left == 0 {
            return None;
        }
        let (addr, mut len) = match self.held.take() {
            Some(piece) => piece,
            None => self.next_leaf()?,
        };
        while len < self.left {
            match self.next_leaf() {
                Some((a, l)) if a == addr.wrapping_add(len as i64) => len += l,
                Some(piece) => {
                    self.held = Some(piece);
                    break;
                }
                None => break,
            }
        }
        let len = len.min(self.left);
        self.left -= len;
        Some((addr as isize, len as usize))
    }
}

impl Datatype {
    /// The memory pieces holding packed bytes `offset..offset + len` of a message of
    /// `count` elements, in packed order, as `(displacement from the buffer base,
    /// length)`; pieces adjacent in memory are merged. With `MPI_BOTTOM` the
    /// displacements are absolute addresses. Compiles the type on first use.
    pub fn blocks(&self, count: usize, offset: usize, len: usize) -> BlockIter<'_> {
        BlockIter::new(self.program(), count, offset, len)
    }
}
