//! Test helpers: a naive reference for type maps, built only from the public
//! envelope/contents API and the standard's definitions (never from the compiler),
//! plus guard-filled memory arenas and a random type generator for proptest.
#![allow(dead_code)]

use oxmpi_datatype::{Combiner, Datatype, Distribution, Order, Predefined, Primitive};
use proptest::prelude::*;

/// One primitive element of a type map: byte displacement, size, kind.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Entry {
    pub disp: i64,
    pub len: usize,
    pub prim: Primitive,
    pub pred: Predefined,
}

fn named(p: Predefined, disp: i64, out: &mut Vec<Entry>) {
    for (o, q) in p.offsets().into_iter().zip(p.primitives()) {
        out.push(Entry {
            disp: disp + o as i64,
            len: q.size(),
            prim: *q,
            pred: p,
        });
    }
}

fn rep(t: &Datatype, n: i64, disp: i64, out: &mut Vec<Entry>) {
    let ext = t.extent() as i64;
    for k in 0..n {
        flatten_at(t, disp + k * ext, out);
    }
}

/// Global element offsets (in elements) of an `order` array of `sizes` that satisfy
/// `keep(dim, index)` in every dimension, in memory order.
fn box_offsets(sizes: &[i64], order: Order, keep: &dyn Fn(usize, i64) -> bool) -> Vec<i64> {
    let n = sizes.len();
    // Dimensions from slowest to fastest.
    let dims: Vec<usize> = match order {
        Order::C => (0..n).collect(),
        Order::Fortran => (0..n).rev().collect(),
    };
    let mut strides = vec![1i64; n];
    let mut s = 1;
    for &d in dims.iter().rev() {
        strides[d] = s;
        s *= sizes[d];
    }
    let total: i64 = sizes.iter().product();
    let mut out = Vec::new();
    for lin in 0..total {
        // Decompose lin in memory order.
        let mut ok = true;
        for d in 0..n {
            let idx = (lin / strides[d]) % sizes[d];
            if !keep(d, idx) {
                ok = false;
                break;
            }
        }
        if ok {
            out.push(lin);
        }
    }
    out
}

/// The type map of one element of `t` at `disp`, from the standard's definitions.
pub fn flatten_at(t: &Datatype, disp: i64, out: &mut Vec<Entry>) {
    let env = t.envelope();
    if env.combiner == Combiner::Named {
        named(t.as_predefined().unwrap(), disp, out);
        return;
    }
    let c = t.contents().unwrap();
    assert_eq!(c.integers.len(), env.num_integers);
    assert_eq!(c.addresses.len(), env.num_addresses);
    assert_eq!(c.datatypes.len(), env.num_datatypes);
    let ints = &c.integers;
    let addrs = &c.addresses;
    let old = &c.datatypes[0];
    let ext = old.extent() as i64;
    match env.combiner {
        Combiner::Dup | Combiner::Resized => flatten_at(old, disp, out),
        Combiner::Contiguous => rep(old, ints[0], disp, out),
        Combiner::Vector => {
            for i in 0..ints[0] {
                rep(old, ints[1], disp + i * ints[2] * ext, out);
            }
        }
        Combiner::Hvector => {
            for i in 0..ints[0] {
                rep(old, ints[1], disp + i * addrs[0], out);
            }
        }
        Combiner::Indexed => {
            let n = ints[0] as usize;
            for i in 0..n {
                rep(old, ints[1 + i], disp + ints[1 + n + i] * ext, out);
            }
        }
        Combiner::Hindexed => {
            let n = ints[0] as usize;
            for i in 0..n {
                rep(old, ints[1 + i], disp + addrs[i], out);
            }
        }
        Combiner::IndexedBlock => {
            for i in 0..ints[0] as usize {
                rep(old, ints[1], disp + ints[2 + i] * ext, out);
            }
        }
        Combiner::HindexedBlock => {
            for a in &addrs[..ints[0] as usize] {
                rep(old, ints[1], disp + a, out);
            }
        }
        Combiner::Struct => {
            for i in 0..ints[0] as usize {
                rep(&c.datatypes[i], ints[1 + i], disp + addrs[i], out);
            }
        }
        Combiner::Subarray => {
            let n = ints[0] as usize;
            let sizes = &ints[1..1 + n];
            let subsizes = &ints[1 + n..1 + 2 * n];
            let starts = &ints[1 + 2 * n..1 + 3 * n];
            let order = Order::from_mpich(ints[1 + 3 * n] as i32).unwrap();
            let keep = |d: usize, i: i64| i >= starts[d] && i < starts[d] + subsizes[d];
            for off in box_offsets(sizes, order, &keep) {
                flatten_at(old, disp + off * ext, out);
            }
        }
        Combiner::Darray => {
            let (size, rank, n) = (ints[0], ints[1], ints[2] as usize);
            let gsizes = &ints[3..3 + n];
            let distribs: Vec<Distribution> = ints[3 + n..3 + 2 * n]
                .iter()
                .map(|&d| Distribution::from_mpich(d as i32).unwrap())
                .collect();
            let dargs = &ints[3 + 2 * n..3 + 3 * n];
            let psizes = &ints[3 + 3 * n..3 + 4 * n];
            let order = Order::from_mpich(ints[3 + 4 * n] as i32).unwrap();
            // Row-major coordinates of `rank`.
            let mut coords = vec![0i64; n];
            let mut r = rank;
            let mut rest = size;
            for d in 0..n {
                rest /= psizes[d];
                coords[d] = r / rest;
                r %= rest;
            }
            let dflt = i64::from(oxmpi_datatype::mpich::DISTRIBUTE_DFLT_DARG);
            let keep = |d: usize, i: i64| match distribs[d] {
                Distribution::None => true,
                Distribution::Block => {
                    let b = if dargs[d] == dflt {
                        (gsizes[d] + psizes[d] - 1) / psizes[d]
                    } else {
                        dargs[d]
                    };
                    i / b == coords[d]
                }
                Distribution::Cyclic => {
                    let b = if dargs[d] == dflt { 1 } else { dargs[d] };
                    (i / b) % psizes[d] == coords[d]
                }
            };
            for off in box_offsets(gsizes, order, &keep) {
                flatten_at(old, disp + off * ext, out);
            }
        }
        other => panic!("unexpected combiner {other:?}"),
    }
}

pub fn flatten(t: &Datatype) -> Vec<Entry> {
    let mut v = Vec::new();
    flatten_at(t, 0, &mut v);
    v
}

/// The type map of `count` elements.
pub fn flatten_n(t: &Datatype, count: usize) -> Vec<Entry> {
    let one = flatten(t);
    let ext = t.extent() as i64;
    let mut v = Vec::new();
    for e in 0..count as i64 {
        v.extend(one.iter().map(|x| Entry {
            disp: x.disp + e * ext,
            ..*x
        }));
    }
    v
}

/// Memory covering a type map with `GUARD` bytes on each side; `base` is the offset of
/// displacement 0.
pub struct Arena {
    pub bytes: Vec<u8>,
    pub base: usize,
}

pub const GUARD: usize = 16;

impl Arena {
    pub fn for_map(map: &[Entry], fill: impl Fn(usize) -> u8) -> Arena {
        let lo = map.iter().map(|e| e.disp).min().unwrap_or(0).min(0);
        let hi = map
            .iter()
            .map(|e| e.disp + e.len as i64)
            .max()
            .unwrap_or(0)
            .max(0);
        let len = (hi - lo) as usize + 2 * GUARD;
        Arena {
            bytes: (0..len).map(fill).collect(),
            base: (GUARD as i64 - lo) as usize,
        }
    }

    pub fn ptr(&self) -> *const u8 {
        self.bytes[self.base..].as_ptr()
    }

    pub fn mut_ptr(&mut self) -> *mut u8 {
        self.bytes[self.base..].as_mut_ptr()
    }

    pub fn at(&self, disp: i64) -> usize {
        (self.base as i64 + disp) as usize
    }
}

/// Reference pack: each entry's bytes in type-map order.
pub fn ref_pack(map: &[Entry], mem: &Arena) -> Vec<u8> {
    let mut out = Vec::new();
    for e in map {
        let a = mem.at(e.disp);
        out.extend_from_slice(&mem.bytes[a..a + e.len]);
    }
    out
}

/// Reference unpack: writes each entry's bytes in type-map order.
pub fn ref_unpack(map: &[Entry], mem: &mut Arena, packed: &[u8]) {
    let mut pos = 0;
    for e in map {
        let a = mem.at(e.disp);
        mem.bytes[a..a + e.len].copy_from_slice(&packed[pos..pos + e.len]);
        pos += e.len;
    }
}

/// A description of a random type (Debug-printable for shrinking reports).
#[derive(Clone, Debug)]
pub enum Desc {
    Named(Predefined),
    Contiguous(i64, Box<Desc>),
    Vector(i64, i64, i64, Box<Desc>),
    Hvector(i64, i64, i64, Box<Desc>),
    Indexed(Vec<(i64, i64)>, Box<Desc>),
    Hindexed(Vec<(i64, i64)>, Box<Desc>),
    IndexedBlock(i64, Vec<i64>, Box<Desc>),
    HindexedBlock(i64, Vec<i64>, Box<Desc>),
    Struct(Vec<(i64, i64, Desc)>),
    Resized(i64, i64, Box<Desc>),
    Dup(Box<Desc>),
    Subarray(Vec<(i64, i64, i64)>, bool, Box<Desc>),
    Darray(i64, Vec<(i64, u8, i64, i64)>, bool, Box<Desc>),
}

impl Desc {
    pub fn build(&self) -> Option<Datatype> {
        Some(match self {
            Desc::Named(p) => Datatype::from(*p),
            Desc::Contiguous(n, d) => Datatype::contiguous(*n, &d.build()?).ok()?,
            Desc::Vector(c, b, s, d) => Datatype::vector(*c, *b, *s, &d.build()?).ok()?,
            Desc::Hvector(c, b, s, d) => Datatype::hvector(*c, *b, *s, &d.build()?).ok()?,
            Desc::Indexed(v, d) => {
                let (b, x): (Vec<i64>, Vec<i64>) = v.iter().copied().unzip();
                Datatype::indexed(&b, &x, &d.build()?).ok()?
            }
            Desc::Hindexed(v, d) => {
                let (b, x): (Vec<i64>, Vec<i64>) = v.iter().copied().unzip();
                Datatype::hindexed(&b, &x, &d.build()?).ok()?
            }
            Desc::IndexedBlock(b, x, d) => Datatype::indexed_block(*b, x, &d.build()?).ok()?,
            Desc::HindexedBlock(b, x, d) => Datatype::hindexed_block(*b, x, &d.build()?).ok()?,
            Desc::Struct(v) => {
                let b: Vec<i64> = v.iter().map(|x| x.0).collect();
                let x: Vec<i64> = v.iter().map(|x| x.1).collect();
                let t: Option<Vec<Datatype>> = v.iter().map(|x| x.2.build()).collect();
                Datatype::create_struct(&b, &x, &t?).ok()?
            }
            Desc::Resized(lb, ext, d) => Datatype::resized(&d.build()?, *lb, *ext).ok()?,
            Desc::Dup(d) => d.build()?.dup(),
            Desc::Subarray(dims, c_order, d) => {
                let sizes: Vec<i64> = dims.iter().map(|x| x.0).collect();
                let subsizes: Vec<i64> = dims.iter().map(|x| x.1.min(x.0)).collect();
                let starts: Vec<i64> = dims
                    .iter()
                    .map(|x| x.2 % (x.0 - x.1.min(x.0) + 1))
                    .collect();
                let order = if *c_order { Order::C } else { Order::Fortran };
                Datatype::subarray(&sizes, &subsizes, &starts, order, &d.build()?).ok()?
            }
            Desc::Darray(rank_seed, dims, c_order, d) => {
                let gsizes: Vec<i64> = dims.iter().map(|x| x.0).collect();
                let psizes: Vec<i64> = dims.iter().map(|x| x.3).collect();
                let size: i64 = psizes.iter().product();
                let dflt = i64::from(oxmpi_datatype::mpich::DISTRIBUTE_DFLT_DARG);
                let mut distribs = Vec::new();
                let mut dargs = Vec::new();
                for (i, x) in dims.iter().enumerate() {
                    let (dist, darg) = match x.1 % 5 {
                        0 => (Distribution::Block, dflt),
                        1 => (Distribution::Cyclic, dflt),
                        2 => (Distribution::Cyclic, x.2),
                        3 => (
                            Distribution::Block,
                            x.2.max((gsizes[i] + psizes[i] - 1) / psizes[i]),
                        ),
                        _ => (Distribution::None, dflt),
                    };
                    distribs.push(dist);
                    dargs.push(darg);
                }
                let psizes: Vec<i64> = psizes
                    .iter()
                    .zip(&distribs)
                    .map(|(&p, d)| if *d == Distribution::None { 1 } else { p })
                    .collect();
                let size2: i64 = psizes.iter().product();
                let _ = size;
                let order = if *c_order { Order::C } else { Order::Fortran };
                Datatype::darray(
                    size2,
                    rank_seed % size2,
                    &gsizes,
                    &distribs,
                    &dargs,
                    &psizes,
                    order,
                    &d.build()?,
                )
                .ok()?
            }
        })
    }
}

pub fn leaf() -> impl Strategy<Value = Desc> {
    prop_oneof![
        8 => prop::sample::select(vec![
            Predefined::Byte,
            Predefined::Char,
            Predefined::Short,
            Predefined::Int,
            Predefined::Double,
            Predefined::Float,
            Predefined::DoubleInt,
            Predefined::ShortInt,
            Predefined::FloatInt,
            Predefined::LongDouble,
            Predefined::CFloatComplex,
        ])
        .prop_map(Desc::Named),
        1 => prop::sample::select(vec![Predefined::Lb, Predefined::Ub]).prop_map(Desc::Named),
    ]
}

/// A count or block length in `0..max`, rarely zero.
fn cnt(max: i64) -> impl Strategy<Value = i64> + Clone {
    prop_oneof![1 => Just(0i64), 6 => 1..max]
}

/// Random nested types of depth <= 4.
pub fn desc() -> impl Strategy<Value = Desc> {
    leaf().prop_recursive(4, 256, 4, |inner| {
        let b = || inner.clone().prop_map(Box::new);
        prop_oneof![
            (cnt(5), b()).prop_map(|(n, d)| Desc::Contiguous(n, d)),
            (cnt(4), cnt(3), -3i64..4, b()).prop_map(|(c, bl, s, d)| Desc::Vector(c, bl, s, d)),
            (cnt(4), cnt(3), -64i64..64, b()).prop_map(|(c, bl, s, d)| Desc::Hvector(c, bl, s, d)),
            (prop::collection::vec((cnt(3), -4i64..6), 1..4), b())
                .prop_map(|(v, d)| Desc::Indexed(v, d)),
            (prop::collection::vec((cnt(3), -64i64..64), 1..4), b())
                .prop_map(|(v, d)| Desc::Hindexed(v, d)),
            (cnt(3), prop::collection::vec(-4i64..6, 1..4), b())
                .prop_map(|(bl, v, d)| Desc::IndexedBlock(bl, v, d)),
            (cnt(3), prop::collection::vec(-64i64..64, 1..4), b())
                .prop_map(|(bl, v, d)| Desc::HindexedBlock(bl, v, d)),
            prop::collection::vec((cnt(3), -64i64..64, inner.clone()), 1..4).prop_map(Desc::Struct),
            (-32i64..32, -16i64..48, b()).prop_map(|(lb, e, d)| Desc::Resized(lb, e, d)),
            b().prop_map(Desc::Dup),
            (
                prop::collection::vec((1i64..4, 0i64..4, 0i64..4), 1..3),
                any::<bool>(),
                b()
            )
                .prop_map(|(v, c, d)| Desc::Subarray(v, c, d)),
            (
                0i64..16,
                prop::collection::vec((1i64..6, 0u8..5, 1i64..3, 1i64..3), 1..3),
                any::<bool>(),
                b()
            )
                .prop_map(|(r, v, c, d)| Desc::Darray(r, v, c, d)),
        ]
    })
}
