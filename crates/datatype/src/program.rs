//! The datatype compiler: turns a type map into a compact tree of contiguous blocks
//! and loops (a "pack program") that pack/unpack walk with tight copy loops.
//!
//! A [`Node`] describes the bytes of one piece of an element, in type-map order,
//! relative to an origin address. While building, adjacent blocks are merged, loops
//! over back-to-back blocks become one block, nested loops whose strides line up
//! become one loop, and lists of equal blocks at a constant stride become a loop.
//! Sub-programs are shared through `Arc`, so the program is never larger than the
//! type description.

use std::sync::Arc;

use crate::datatype::{Datatype, Kind};
use crate::Predefined;

/// Small sequences are inlined into their parent so that blocks can merge across
/// constructor boundaries (e.g. a struct of structs); larger ones stay shared.
const FLATTEN_LIMIT: usize = 16;

/// One piece of a pack program.
#[derive(Clone, Debug)]
pub(crate) struct Node {
    /// Byte displacement from the origin the parent gives.
    pub disp: i64,
    /// Packed bytes this node produces (always > 0).
    pub size: u64,
    pub kind: NodeKind,
}

#[derive(Clone, Debug)]
pub(crate) enum NodeKind {
    /// `size` contiguous bytes at `disp`.
    Block,
    /// `count` copies of `child`, copy k with origin `disp + k * stride`.
    Repeat {
        count: u64,
        stride: i64,
        child: Arc<Node>,
    },
    /// The items in order, all with origin `disp`; `starts[i]` is the packed offset of
    /// item i, `starts[len] == size`.
    Seq {
        items: Arc<[Node]>,
        starts: Arc<[u64]>,
    },
    /// Contiguous blocks in order: block i is at `disp + disps[i]`, its packed range is
    /// `starts[i]..starts[i + 1]`.
    Blocks {
        disps: Arc<[i64]>,
        starts: Arc<[u64]>,
    },
}

/// The compiled form of a committed datatype: one element's program plus what is
/// needed to repeat it.
#[derive(Debug)]
pub(crate) struct Program {
    /// None when the type has no data.
    pub root: Option<Node>,
    pub size: u64,
    pub extent: i64,
    /// Contiguous blocks in one element after merging (saturating).
    pub blocks: u64,
}

impl Program {
    /// `(displacement, length)` of the single block one element occupies, if it does.
    pub fn element_block(&self) -> Option<(i64, u64)> {
        match &self.root {
            Some(
                n @ Node {
                    kind: NodeKind::Block,
                    ..
                },
            ) => Some((n.disp, n.size)),
            Some(_) => None,
            None => Some((0, 0)),
        }
    }
}

fn shifted(n: &Node, by: i64) -> Node {
    Node {
        disp: n.disp.wrapping_add(by),
        ..n.clone()
    }
}

fn block(disp: i64, size: u64) -> Node {
    Node {
        disp,
        size,
        kind: NodeKind::Block,
    }
}

/// `count` copies of `child` at `disp + k * stride`.
fn repeat(count: i64, stride: i64, child: Option<&Arc<Node>>, disp: i64) -> Option<Node> {
    let c = child?;
    if count <= 0 {
        return None;
    }
    let count = count as u64;
    if count == 1 {
        return Some(shifted(c, disp));
    }
    let size = c.size * count;
    let at = disp.wrapping_add(c.disp);
    match &c.kind {
        NodeKind::Block if stride == c.size as i64 => Some(block(at, size)),
        NodeKind::Repeat {
            count: c2,
            stride: s2,
            child: g,
        } if (*c2 as i64).checked_mul(*s2) == Some(stride) => Some(Node {
            disp: at,
            size,
            kind: NodeKind::Repeat {
                count: count * c2,
                stride: *s2,
                child: g.clone(),
            },
        }),
        _ => Some(Node {
            disp,
            size,
            kind: NodeKind::Repeat {
                count,
                stride,
                child: c.clone(),
            },
        }),
    }
}

/// True when `a` and `b` describe the same bytes up to their displacement (cheap:
/// shared sub-programs are compared by identity).
fn same_shape(a: &Node, b: &Node) -> bool {
    if a.size != b.size {
        return false;
    }
    match (&a.kind, &b.kind) {
        (NodeKind::Block, NodeKind::Block) => true,
        (
            NodeKind::Repeat {
                count: c1,
                stride: s1,
                child: x,
            },
            NodeKind::Repeat {
                count: c2,
                stride: s2,
                child: y,
            },
        ) => c1 == c2 && s1 == s2 && x.disp == y.disp && (Arc::ptr_eq(x, y) || same_shape(x, y)),
        (NodeKind::Seq { items: x, .. }, NodeKind::Seq { items: y, .. }) => Arc::ptr_eq(x, y),
        (
            NodeKind::Blocks {
                disps: x,
                starts: sx,
            },
            NodeKind::Blocks {
                disps: y,
                starts: sy,
            },
        ) => Arc::ptr_eq(x, y) && Arc::ptr_eq(sx, sy),
        _ => false,
    }
}

fn push_merged(out: &mut Vec<Node>, n: Node) {
    if let (Some(last), NodeKind::Block) = (out.last_mut(), &n.kind) {
        if matches!(last.kind, NodeKind::Block)
            && last.disp.wrapping_add(last.size as i64) == n.disp
        {
            last.size += n.size;
            return;
        }
    }
    out.push(n);
}

fn prefix_starts(sizes: impl Iterator<Item = u64>) -> (Arc<[u64]>, u64) {
    let mut starts = vec![0u64];
    let mut total = 0u64;
    for s in sizes {
        total += s;
        starts.push(total);
    }
    (starts.into(), total)
}

/// The nodes in order, merged and simplified.
fn seq(items: impl IntoIterator<Item = Option<Node>>) -> Option<Node> {
    let mut out: Vec<Node> = Vec::new();
    for n in items.into_iter().flatten() {
        match &n.kind {
            NodeKind::Seq { items, .. } if items.len() <= FLATTEN_LIMIT => {
                for it in items.iter() {
                    push_merged(&mut out, shifted(it, n.disp));
                }
            }
            NodeKind::Blocks { disps, starts } if disps.len() <= FLATTEN_LIMIT => {
                for (i, d) in disps.iter().enumerate() {
                    push_merged(
                        &mut out,
                        block(n.disp.wrapping_add(*d), starts[i + 1] - starts[i]),
                    );
                }
            }
            _ => push_merged(&mut out, n),
        }
    }
    match out.len() {
        0 => return None,
        1 => return out.pop(),
        _ => {}
    }
    // The same piece at a constant stride is a loop.
    let first = &out[0];
    let stride = out[1].disp.wrapping_sub(first.disp);
    let regular = out.iter().enumerate().all(|(i, n)| {
        (i as i64)
            .checked_mul(stride)
            .and_then(|v| v.checked_add(first.disp))
            == Some(n.disp)
            && same_shape(first, n)
    });
    if regular {
        let unit = Arc::new(shifted(first, first.disp.wrapping_neg()));
        return repeat(out.len() as i64, stride, Some(&unit), first.disp);
    }
    if out.iter().all(|n| matches!(n.kind, NodeKind::Block)) {
        let (starts, size) = prefix_starts(out.iter().map(|n| n.size));
        let disps: Arc<[i64]> = out.iter().map(|n| n.disp).collect();
        return Some(Node {
            disp: 0,
            size,
            kind: NodeKind::Blocks { disps, starts },
        });
    }
    let (starts, size) = prefix_starts(out.iter().map(|n| n.size));
    Some(Node {
        disp: 0,
        size,
        kind: NodeKind::Seq {
            items: out.into(),
            starts,
        },
    })
}

fn named(p: Predefined) -> Option<Node> {
    let offsets = p.offsets();
    seq(p
        .primitives()
        .iter()
        .zip(offsets)
        .map(|(q, o)| Some(block(o as i64, q.size() as u64))))
}

/// Blocks per node (saturating), for callers deciding between iovecs and packing.
fn count_blocks(n: &Node) -> u64 {
    match &n.kind {
        NodeKind::Block => 1,
        NodeKind::Repeat { count, child, .. } => count.saturating_mul(count_blocks(child)),
        NodeKind::Seq { items, .. } => items
            .iter()
            .fold(0u64, |a, it| a.saturating_add(count_blocks(it))),
        NodeKind::Blocks { disps, .. } => disps.len() as u64,
    }
}

fn root_of(t: &Datatype) -> Option<Arc<Node>> {
    t.program().root.clone().map(Arc::new)
}

fn indexed(
    bls: impl Iterator<Item = i64>,
    disps: &[i64],
    scale: i64,
    old: &Datatype,
) -> Option<Node> {
    let child = root_of(old);
    let ext = old.layout().extent();
    let items: Vec<Option<Node>> = bls
        .zip(disps)
        .map(|(b, &d)| repeat(b, ext, child.as_ref(), d.wrapping_mul(scale)))
        .collect();
    seq(items)
}

/// Compiles one element of `t`.
pub(crate) fn compile(t: &Datatype) -> Program {
    let t = t.resolve();
    let root = match t.kind() {
        Kind::Named(p) => named(*p),
        Kind::Dup(_) => unreachable!("resolve() follows dups"),
        Kind::Contiguous { count, old } => {
            repeat(*count, old.layout().extent(), root_of(old).as_ref(), 0)
        }
        Kind::Vector {
            count,
            blocklength,
            stride,
            old,
        } => {
            let e = old.layout().extent();
            let inner = repeat(*blocklength, e, root_of(old).as_ref(), 0);
            repeat(
                *count,
                stride.wrapping_mul(e),
                inner.map(Arc::new).as_ref(),
                0,
            )
        }
        Kind::Hvector {
            count,
            blocklength,
            stride,
            old,
        } => {
            let e = old.layout().extent();
            let inner = repeat(*blocklength, e, root_of(old).as_ref(), 0);
            repeat(*count, *stride, inner.map(Arc::new).as_ref(), 0)
        }
        Kind::Indexed {
            blocklengths,
            displacements,
            old,
        } => indexed(
            blocklengths.iter().copied(),
            displacements,
            old.layout().extent(),
            old,
        ),
        Kind::Hindexed {
            blocklengths,
            displacements,
            old,
        } => indexed(blocklengths.iter().copied(), displacements, 1, old),
        Kind::IndexedBlock {
            blocklength,
            displacements,
            old,
        } => indexed(
            std::iter::repeat(*blocklength),
            displacements,
            old.layout().extent(),
            old,
        ),
        Kind::HindexedBlock {
            blocklength,
            displacements,
            old,
        } => indexed(std::iter::repeat(*blocklength), displacements, 1, old),
        Kind::Struct {
            blocklengths,
            displacements,
            types,
        } => {
            let items: Vec<Option<Node>> = blocklengths
                .iter()
                .zip(displacements.iter())
                .zip(types.iter())
                .map(|((&b, &d), ty)| repeat(b, ty.layout().extent(), root_of(ty).as_ref(), d))
                .collect();
            seq(items)
        }
        Kind::Resized { old, .. } => old.program().root.clone(),
        Kind::Subarray { expansion, .. } | Kind::Darray { expansion, .. } => {
            expansion.program().root.clone()
        }
    };
    let l = t.layout();
    debug_assert_eq!(root.as_ref().map_or(0, |n| n.size), l.size as u64);
    Program {
        blocks: root.as_ref().map_or(0, count_blocks),
        root,
        size: l.size as u64,
        extent: l.extent(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Predefined as P;

    fn root(t: &Datatype) -> Node {
        t.program().root.clone().expect("data")
    }

    fn is_block(n: &Node, disp: i64, size: u64) -> bool {
        matches!(n.kind, NodeKind::Block) && n.disp == disp && n.size == size
    }

    #[test]
    fn contiguous_runs_become_one_block() {
        let int = Datatype::from(P::Int);
        assert!(is_block(
            &root(&Datatype::contiguous(100, &int).unwrap()),
            0,
            400
        ));
        // A vector whose stride equals its block length is contiguous too.
        let v = Datatype::vector(10, 3, 3, &int).unwrap();
        assert!(is_block(&root(&v), 0, 120));
        // A struct of back-to-back members, and the pair types without holes.
        let s = Datatype::create_struct(&[1, 2], &[0, 4], &[int.clone(), int.clone()]).unwrap();
        assert!(is_block(&root(&s), 0, 12));
        assert!(is_block(&root(&Datatype::from(P::DoubleInt)), 0, 12));
        // Adjacent indexed blocks merge, also across nesting.
        let x = Datatype::indexed(&[2, 3], &[-2, 0], &int).unwrap();
        assert!(is_block(&root(&x), -8, 20));
        let c = Datatype::contiguous(4, &Datatype::resized(&x, -8, 20).unwrap()).unwrap();
        assert!(is_block(&root(&c), -8, 80));
    }

    #[test]
    fn regular_patterns_become_loops() {
        let dbl = Datatype::from(P::Double);
        let v = Datatype::vector(1000, 4, 8, &dbl).unwrap();
        let r = root(&v);
        match &r.kind {
            NodeKind::Repeat {
                count: 1000,
                stride: 64,
                child,
            } => assert!(is_block(child, 0, 32)),
            other => panic!("{other:?}"),
        }
        assert_eq!(v.program().blocks, 1000);
        // Equal blocks at a constant distance, given as a list.
        let h = Datatype::hindexed(&[1, 1, 1, 1], &[0, 24, 48, 72], &dbl).unwrap();
        match &root(&h).kind {
            NodeKind::Repeat {
                count: 4,
                stride: 24,
                child,
            } => assert!(is_block(child, 0, 8)),
            other => panic!("{other:?}"),
        }
        // A contiguous type of a vector whose extent lines up with its stride: one loop.
        let inner = Datatype::resized(&Datatype::vector(3, 1, 2, &dbl).unwrap(), 0, 48).unwrap();
        let c = Datatype::contiguous(5, &inner).unwrap();
        match &root(&c).kind {
            NodeKind::Repeat {
                count: 15,
                stride: 16,
                child,
            } => assert!(is_block(child, 0, 8)),
            other => panic!("{other:?}"),
        }
        // A 2-D subarray is a loop over rows.
        let s = Datatype::subarray(&[8, 10], &[4, 5], &[2, 3], crate::Order::C, &dbl).unwrap();
        let r = root(&s);
        match &r.kind {
            NodeKind::Repeat {
                count: 4,
                stride: 80,
                child,
            } => {
                assert_eq!(r.disp + child.disp, (2 * 10 + 3) * 8);
                assert!(matches!(child.kind, NodeKind::Block) && child.size == 40);
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn irregular_lists_are_compact_and_shared() {
        let int = Datatype::from(P::Int);
        let x = Datatype::indexed(&[1, 2, 1], &[0, 5, 3], &int).unwrap();
        match &root(&x).kind {
            NodeKind::Blocks { disps, starts } => {
                assert_eq!(&disps[..], &[0, 20, 12]);
                assert_eq!(&starts[..], &[0, 4, 12, 16]);
            }
            other => panic!("{other:?}"),
        }
        // Many copies of a large sub-program share it instead of copying it.
        let big = Datatype::indexed(
            &vec![1; 100],
            &(0..100).map(|i| i * 3).collect::<Vec<_>>(),
            &int,
        )
        .unwrap();
        let y = Datatype::hindexed(
            &vec![1; 1000],
            &(0..1000).map(|i| i * 7919).collect::<Vec<_>>(),
            &big,
        )
        .unwrap();
        match &root(&y).kind {
            NodeKind::Repeat {
                count: 1000,
                stride: 7919,
                child,
            } => {
                assert!(matches!(
                    child.kind,
                    NodeKind::Repeat {
                        count: 100,
                        stride: 12,
                        ..
                    }
                ))
            }
            other => panic!("{:?}", other.clone()),
        }
        let z = Datatype::hindexed(
            &vec![1; 1000],
            &(0..1000).map(|i| i * i).collect::<Vec<_>>(),
            &big,
        )
        .unwrap();
        match &root(&z).kind {
            NodeKind::Seq { items, .. } => {
                assert_eq!(items.len(), 1000);
                let first = match &items[0].kind {
                    NodeKind::Repeat { child, .. } => child.clone(),
                    _ => panic!("items are loops"),
                };
                // All items share one sub-program.
                assert!(items.iter().all(|it| matches!(&it.kind, NodeKind::Repeat { child, .. } if Arc::ptr_eq(child, &first))));
            }
            _ => panic!("expected a sequence"),
        }
        assert_eq!(z.program().blocks, 100_000);
    }
}
