//! The numbers that describe one element of a datatype (size, bounds, true bounds,
//! alignment, element counts) and the arithmetic that derives them for a new type
//! from the replicas of its component types, with overflow checks throughout.
//!
//! Bounds follow the standard's type-map rules (MPI 4.1, section 5.1.7) with MPI-1
//! markers: entries of the conceptual types `lb_marker`/`ub_marker` (from `MPI_LB`,
//! `MPI_UB` or `MPI_Type_create_resized`) are *sticky*: once present they decide the
//! bound of every type built on top, ignoring the data. Without markers the bounds
//! come from the data, and a struct's upper bound is padded so that its extent is a
//! multiple of the largest alignment of its components (the standard's epsilon, as
//! MPICH and C compilers do).

use crate::error::{Error, Result};
use crate::signature::Signature;
use crate::{external32, Predefined};

/// Deepest nesting of type constructors accepted (`MPI_Type_dup` does not count).
/// Bounds the recursion of the compiler and of the type-map walkers.
pub const MAX_DEPTH: usize = 1024;

/// Which predefined type the data elements are made of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Basic {
    /// No data.
    Empty,
    /// Every data element is of this predefined type.
    One(Predefined),
    /// Several predefined types.
    Mixed,
}

impl Basic {
    fn merge(self, other: Basic) -> Basic {
        match (self, other) {
            (Basic::Empty, x) | (x, Basic::Empty) => x,
            (Basic::One(a), Basic::One(b)) if a == b => Basic::One(a),
            _ => Basic::Mixed,
        }
    }
}

/// Size and bounds of one element of a datatype.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Layout {
    /// Data bytes (`MPI_Type_size`).
    pub size: i64,
    /// Lower bound from the data and bounds of non-marker entries.
    pub nlb: Option<i64>,
    /// Upper bound from the data and bounds of non-marker entries, padded.
    pub nub: Option<i64>,
    /// Lowest explicit lower-bound marker.
    pub slb: Option<i64>,
    /// Highest explicit upper-bound marker.
    pub sub: Option<i64>,
    /// Lowest data byte, if there is data.
    pub tlb: Option<i64>,
    /// One past the highest data byte, if there is data.
    pub tub: Option<i64>,
    /// Largest alignment of the basic types inside (1 if none).
    pub align: i64,
    /// Number of basic elements (what `MPI_Get_elements` counts).
    pub elements: i64,
    /// Bytes of one element in the external32 representation.
    pub ext32: i64,
    /// Constructor nesting depth (0 for predefined types).
    pub depth: usize,
    /// Type signature of one element.
    pub sig: Signature,
    /// The predefined type of all data elements, if there is one.
    pub basic: Basic,
}

impl Layout {
    /// Layout of a predefined type.
    pub fn named(p: Predefined) -> Layout {
        let prims = p.primitives();
        let (slb, sub, nlb, nub) = match p {
            Predefined::Lb => (Some(0), None, None, None),
            Predefined::Ub => (None, Some(0), None, None),
            _ => (None, None, Some(0), Some(p.extent() as i64)),
        };
        let tub = p
            .offsets()
            .iter()
            .zip(prims)
            .map(|(o, q)| (o + q.size()) as i64)
            .max();
        Layout {
            size: p.size() as i64,
            nlb,
            nub,
            slb,
            sub,
            tlb: tub.map(|_| 0),
            tub,
            align: prims.iter().map(|q| q.align() as i64).max().unwrap_or(1),
            elements: prims.len() as i64,
            ext32: external32::size_of(p) as i64,
            depth: 0,
            sig: prims
                .iter()
                .fold(Signature::EMPTY, |s, &q| s.then(Signature::of(q))),
            basic: if prims.is_empty() {
                Basic::Empty
            } else {
                Basic::One(p)
            },
        }
    }

    /// `MPI_Type_get_extent`'s lower bound.
    pub fn lb(&self) -> i64 {
        self.slb.or(self.nlb).unwrap_or(0)
    }

    /// Upper bound (lower bound + extent).
    pub fn ub(&self) -> i64 {
        self.sub.or(self.nub).unwrap_or(0)
    }

    /// Extent; construction guarantees `ub - lb` does not overflow.
    pub fn extent(&self) -> i64 {
        self.ub() - self.lb()
    }

    /// True lower bound (0 when there is no data).
    pub fn true_lb(&self) -> i64 {
        self.tlb.unwrap_or(0)
    }

    /// True upper bound (0 when there is no data).
    pub fn true_ub(&self) -> i64 {
        self.tub.unwrap_or(0)
    }

    /// The same layout one constructor level deeper (for types defined by an expansion).
    pub fn wrapped(&self) -> Result<Layout> {
        let depth = self.depth + 1;
        if depth > MAX_DEPTH {
            return Err(Error::TooDeep { depth });
        }
        Ok(Layout {
            depth,
            ..self.clone()
        })
    }

    /// The layout of `MPI_Type_create_resized(self, lb, extent)`.
    pub fn resized(&self, lb: i64, extent: i64) -> Result<Layout> {
        let ub = lb
            .checked_add(extent)
            .ok_or_else(|| Error::overflow(format!("lb {lb} + extent {extent}")))?;
        let depth = self.depth + 1;
        if depth > MAX_DEPTH {
            return Err(Error::TooDeep { depth });
        }
        Ok(Layout {
            slb: Some(lb),
            sub: Some(ub),
            nlb: None,
            nub: None,
            depth,
            ..self.clone()
        })
    }
}

fn mul(a: i64, b: i64, what: &str) -> Result<i64> {
    a.checked_mul(b)
        .ok_or_else(|| Error::overflow(format!("{what} ({a} * {b})")))
}

fn add(a: i64, b: i64, what: &str) -> Result<i64> {
    a.checked_add(b)
        .ok_or_else(|| Error::overflow(format!("{what} ({a} + {b})")))
}

fn min_opt(a: Option<i64>, b: i64) -> Option<i64> {
    Some(a.map_or(b, |a| a.min(b)))
}

fn max_opt(a: Option<i64>, b: i64) -> Option<i64> {
    Some(a.map_or(b, |a| a.max(b)))
}

/// Accumulates the layout of a new type from replicas of component types.
#[derive(Default)]
pub(crate) struct Acc {
    size: i64,
    elements: i64,
    ext32: i64,
    nlb: Option<i64>,
    nub: Option<i64>,
    slb: Option<i64>,
    sub: Option<i64>,
    tlb: Option<i64>,
    tub: Option<i64>,
    align: i64,
    depth: usize,
    any: bool,
    sig: Signature,
    basic: Option<Basic>,
}

impl Acc {
    pub fn new() -> Acc {
        Acc {
            align: 1,
            sig: Signature::EMPTY,
            ..Acc::default()
        }
    }

    /// Records a component type that may contribute no replicas (for the depth).
    pub fn note(&mut self, child: &Layout) {
        self.depth = self.depth.max(child.depth + 1);
    }

    /// Adds `nblocks` blocks, the j-th at byte displacement `disp + j * stride`, each of
    /// `bl` consecutive copies of `child` (spaced by the child's extent).
    pub fn add(
        &mut self,
        child: &Layout,
        disp: i64,
        nblocks: i64,
        stride: i64,
        bl: i64,
    ) -> Result<()> {
        self.note(child);
        if nblocks == 0 || bl == 0 {
            return Ok(());
        }
        self.any = true;
        let copies = mul(nblocks, bl, "number of replicas")?;
        self.size = add(
            self.size,
            mul(copies, child.size, "type size")?,
            "type size",
        )?;
        self.elements = add(
            self.elements,
            mul(copies, child.elements, "element count")?,
            "element count",
        )?;
        self.ext32 = add(
            self.ext32,
            mul(copies, child.ext32, "external32 size")?,
            "external32 size",
        )?;
        let span_blocks = mul(nblocks - 1, stride, "block displacement")?;
        let span_in = mul(bl - 1, child.extent(), "block length times extent")?;
        let lo = add(
            add(disp, span_blocks.min(0), "displacement")?,
            span_in.min(0),
            "displacement",
        )?;
        let hi = add(
            add(disp, span_blocks.max(0), "displacement")?,
            span_in.max(0),
            "displacement",
        )?;
        if child.slb.is_some() || child.nlb.is_some() {
            let cand = add(lo, child.lb(), "lower bound")?;
            self.nlb = min_opt(self.nlb, cand);
            if child.slb.is_some() {
                self.slb = min_opt(self.slb, cand);
            }
        }
        if child.sub.is_some() || child.nub.is_some() {
            let cand = add(hi, child.ub(), "upper bound")?;
            self.nub = max_opt(self.nub, cand);
            if child.sub.is_some() {
                self.sub = max_opt(self.sub, cand);
            }
        }
        if let (Some(t0), Some(t1)) = (child.tlb, child.tub) {
            self.tlb = min_opt(self.tlb, add(lo, t0, "true lower bound")?);
            self.tub = max_opt(self.tub, add(hi, t1, "true upper bound")?);
        }
        self.align = self.align.max(child.align);
        self.sig = self.sig.then(child.sig.repeat(copies as u64));
        self.basic = Some(self.basic.unwrap_or(Basic::Empty).merge(child.basic));
        Ok(())
    }

    /// The finished layout; `pad` applies the struct alignment rule to the upper bound.
    pub fn finish(mut self, pad: bool) -> Result<Layout> {
        self.depth = self.depth.max(1);
        if self.depth > MAX_DEPTH {
            return Err(Error::TooDeep { depth: self.depth });
        }
        let mut l = Layout {
            size: self.size,
            nlb: self.nlb,
            nub: self.nub,
            slb: self.slb,
            sub: self.sub,
            tlb: self.tlb,
            tub: self.tub,
            align: self.align,
            elements: self.elements,
            ext32: self.ext32,
            depth: self.depth,
            sig: self.sig,
            basic: self.basic.unwrap_or(Basic::Empty),
        };
        if !self.any {
            // An empty type map: MPICH and Open MPI give it bounds [0, 0].
            l.nlb = Some(0);
            l.nub = Some(0);
        }
        if pad && l.sub.is_none() {
            if let Some(nub) = l.nub {
                let ext = nub
                    .checked_sub(l.lb())
                    .ok_or_else(|| Error::overflow("extent"))?;
                let rem = ext.rem_euclid(l.align);
                if rem != 0 {
                    l.nub = Some(add(nub, l.align - rem, "padded upper bound")?);
                }
            }
        }
        l.ub()
            .checked_sub(l.lb())
            .ok_or_else(|| Error::overflow(format!("extent ({} - {})", l.ub(), l.lb())))?;
        if let (Some(a), Some(b)) = (l.tlb, l.tub) {
            b.checked_sub(a)
                .ok_or_else(|| Error::overflow("true extent"))?;
        }
        Ok(l)
    }
}
