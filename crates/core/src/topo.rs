//! Process topologies as plain data: Cartesian grids (rank ↔ coordinates, shifts,
//! sub-grids), general graphs and distributed graphs, the argument checks of their
//! constructors and queries, and `MPI_Dims_create`'s balanced factorisation.
//!
//! Communicator creation (which needs communication) lives in `commops`; this module
//! only computes.

use crate::error::{err, ErrorClass, Result};
use crate::{PROC_NULL, UNDEFINED};

/// `MPI_GRAPH`, `MPI_CART`, `MPI_DIST_GRAPH` as `MPI_Topo_test` reports them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TopoKind {
    Graph = 1,
    Cart = 2,
    DistGraph = 3,
}

/// A Cartesian grid: extents and periodicity per dimension, row-major rank order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cart {
    pub dims: Vec<i32>,
    pub periods: Vec<bool>,
}

/// A general graph in the standard's `index`/`edges` form.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Graph {
    /// `index[i]` = total number of neighbours of nodes 0..=i.
    pub index: Vec<i32>,
    pub edges: Vec<i32>,
}

/// This process's view of a distributed graph.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DistGraph {
    pub sources: Vec<i32>,
    pub source_weights: Vec<i32>,
    pub destinations: Vec<i32>,
    pub dest_weights: Vec<i32>,
    /// False when the process passed `MPI_UNWEIGHTED`.
    pub weighted: bool,
}

/// The topology attached to a communicator.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Topology {
    Cart(Cart),
    Graph(Graph),
    DistGraph(DistGraph),
}

impl Topology {
    pub fn kind(&self) -> TopoKind {
        match self {
            Topology::Cart(_) => TopoKind::Cart,
            Topology::Graph(_) => TopoKind::Graph,
            Topology::DistGraph(_) => TopoKind::DistGraph,
        }
    }

    /// The in-neighbours (sources) and out-neighbours (destinations) of the process at
    /// `rank`, in the order of the neighbourhood collectives' buffer blocks (MPI 4.1
    /// section 8.6): for a Cartesian grid, per dimension the -1 then the +1 neighbour
    /// (`MPI_PROC_NULL` past the ends of open dimensions), both lists alike; for a
    /// graph, `MPI_Graph_neighbors` for both; for a distributed graph, its sources and
    /// destinations.
    pub fn neighbors(&self, rank: i32) -> Result<(Vec<i32>, Vec<i32>)> {
        match self {
            Topology::Cart(c) => {
                let mut v = Vec::with_capacity(2 * c.ndims());
                for d in 0..c.ndims() {
                    let (lo, hi) = c.shift(rank, d as i32, 1)?;
                    v.push(lo);
                    v.push(hi);
                }
                Ok((v.clone(), v))
            }
            Topology::Graph(g) => {
                let v = g.neighbors(rank)?.to_vec();
                Ok((v.clone(), v))
            }
            Topology::DistGraph(g) => Ok((g.sources.clone(), g.destinations.clone())),
        }
    }
}

fn product(dims: &[i32]) -> Result<i32> {
    dims.iter().try_fold(1i32, |p, &d| {
        p.checked_mul(d).ok_or_else(|| {
            crate::Error::new(ErrorClass::Dims, "the grid has more than 2^31 processes")
        })
    })
}

impl Cart {
    /// Checks `MPI_Cart_create`'s arguments for a group of `size` processes.
    pub fn new(dims: &[i32], periods: &[bool], size: i32) -> Result<Cart> {
        for (i, &d) in dims.iter().enumerate() {
            if d <= 0 {
                return err(
                    ErrorClass::Dims,
                    format!("invalid dims[{i}] = {d} (must be positive)"),
                );
            }
        }
        let n = product(dims)?;
        if n > size {
            return err(
                ErrorClass::Arg,
                format!("the grid needs {n} processes but the communicator has only {size}"),
            );
        }
        Ok(Cart {
            dims: dims.to_vec(),
            periods: periods.to_vec(),
        })
    }

    pub fn ndims(&self) -> usize {
        self.dims.len()
    }

    /// Number of processes in the grid.
    pub fn size(&self) -> i32 {
        self.dims.iter().product()
    }

    /// `MPI_Cart_rank`: periodic dimensions wrap; open ones must be in range.
    pub fn rank_of(&self, coords: &[i32]) -> Result<i32> {
        let mut r: i64 = 0;
        for (i, (&c, (&d, &p))) in coords
            .iter()
            .zip(self.dims.iter().zip(&self.periods))
            .enumerate()
        {
            let c = if p {
                c.rem_euclid(d)
            } else if (0..d).contains(&c) {
                c
            } else {
                return err(
                    ErrorClass::Arg,
                    format!("coordinate coords[{i}] = {c} is outside the non-periodic dimension of extent {d}"),
                );
            };
            r = r * d as i64 + c as i64;
        }
        Ok(r as i32)
    }

    /// `MPI_Cart_coords`.
    pub fn coords_of(&self, rank: i32) -> Result<Vec<i32>> {
        if !(0..self.size()).contains(&rank) {
            return err(
                ErrorClass::Rank,
                format!(
                    "invalid rank {rank} (the grid has {} processes)",
                    self.size()
                ),
            );
        }
        let mut c = vec![0; self.ndims()];
        let mut r = rank;
        for i in (0..self.ndims()).rev() {
            c[i] = r % self.dims[i];
            r /= self.dims[i];
        }
        Ok(c)
    }

    /// `MPI_Cart_shift`: (source, destination) of a shift by `disp` along `direction`
    /// from `rank`; `MPI_PROC_NULL` past the ends of open dimensions.
    pub fn shift(&self, rank: i32, direction: i32, disp: i32) -> Result<(i32, i32)> {
        if !(0..self.ndims() as i32).contains(&direction) {
            return err(
                ErrorClass::Arg,
                format!(
                    "invalid direction {direction} (the grid has {} dimensions)",
                    self.ndims()
                ),
            );
        }
        let d = direction as usize;
        let coords = self.coords_of(rank)?;
        let extent = self.dims[d] as i64;
        let at = |delta: i64| -> i32 {
            let c = coords[d] as i64 + delta;
            let c = if self.periods[d] {
                c.rem_euclid(extent)
            } else if (0..extent).contains(&c) {
                c
            } else {
                return PROC_NULL;
            };
            let mut cc = coords.clone();
            cc[d] = c as i32;
            self.rank_of(&cc).unwrap_or(PROC_NULL)
        };
        Ok((at(-(disp as i64)), at(disp as i64)))
    }

    /// `MPI_Cart_sub` for the process at `rank`: the colour (which sub-grid) and the
    /// sub-grid itself.
    pub fn sub(&self, rank: i32, remain: &[bool]) -> Result<(i32, Cart)> {
        let coords = self.coords_of(rank)?;
        let mut color: i64 = 0;
        let mut dims = Vec::new();
        let mut periods = Vec::new();
        for i in 0..self.ndims() {
            if remain[i] {
                dims.push(self.dims[i]);
                periods.push(self.periods[i]);
            } else {
                color = color * self.dims[i] as i64 + coords[i] as i64;
            }
        }
        Ok((color as i32, Cart { dims, periods }))
    }
}

/// `MPI_Cart_map` without reordering: the rank of the calling process (`rank` of a
/// communicator of `size`) in a grid of `dims`, or `MPI_UNDEFINED` when the grid has no
/// place for it. A zero extent makes a grid of no processes, so every caller gets
/// `MPI_UNDEFINED` (as in MPICH; rsmpi's `cartesian_map` example maps such a grid);
/// negative extents are `MPI_ERR_DIMS`, a grid larger than the communicator
/// `MPI_ERR_ARG`.
pub fn cart_map(dims: &[i32], size: i32, rank: i32) -> Result<i32> {
    if let Some((i, &d)) = dims.iter().enumerate().find(|&(_, &d)| d < 0) {
        return err(
            ErrorClass::Dims,
            format!("invalid dims[{i}] = {d} (must be non-negative)"),
        );
    }
    let n = if dims.contains(&0) { 0 } else { product(dims)? };
    if n > size {
        return err(
            ErrorClass::Arg,
            format!("the grid needs {n} processes but the communicator has only {size}"),
        );
    }
    Ok(map_rank(rank, n))
}

/// `MPI_Cart_map` / `MPI_Graph_map` without reordering: the calling rank if it is
/// part of the first `n` processes, else `MPI_UNDEFINED`.
pub fn map_rank(rank: i32, n: i32) -> i32 {
    if rank < n {
        rank
    } else {
        UNDEFINED
    }
}

impl Graph {
    /// Checks `MPI_Graph_create`'s arrays for a group of `size` processes.
    pub fn new(index: &[i32], edges: &[i32], size: i32) -> Result<Graph> {
        let nnodes = index.len() as i32;
        if nnodes > size {
            return err(
                ErrorClass::Arg,
                format!(
                    "the graph has {nnodes} nodes but the communicator has only {size} processes"
                ),
            );
        }
        let mut prev = 0;
        for (i, &x) in index.iter().enumerate() {
            if x < prev {
                return err(
                    ErrorClass::Arg,
                    format!("index[{i}] = {x} is smaller than the previous entry {prev} (index must be non-decreasing from 0)"),
                );
            }
            prev = x;
        }
        if prev as usize != edges.len() {
            return err(
                ErrorClass::Arg,
                format!(
                    "index[nnodes-1] = {prev} does not match the {} edges given",
                    edges.len()
                ),
            );
        }
        for (i, &e) in edges.iter().enumerate() {
            if !(0..nnodes).contains(&e) {
                return err(
                    ErrorClass::Arg,
                    format!("edges[{i}] = {e} is not a node of the graph (nnodes = {nnodes})"),
                );
            }
        }
        Ok(Graph {
            index: index.to_vec(),
            edges: edges.to_vec(),
        })
    }

    pub fn nnodes(&self) -> i32 {
        self.index.len() as i32
    }

    /// `MPI_Graph_neighbors`.
    pub fn neighbors(&self, rank: i32) -> Result<&[i32]> {
        if !(0..self.nnodes()).contains(&rank) {
            return err(
                ErrorClass::Rank,
                format!(
                    "invalid rank {rank} (the graph has {} nodes)",
                    self.nnodes()
                ),
            );
        }
        let r = rank as usize;
        let lo = if r == 0 {
            0
        } else {
            self.index[r - 1] as usize
        };
        Ok(&self.edges[lo..self.index[r] as usize])
    }
}

/// Checks a list of neighbour ranks of a distributed graph.
pub fn check_neighbors(what: &str, ranks: &[i32], size: i32) -> Result<()> {
    for (i, &r) in ranks.iter().enumerate() {
        if !(0..size).contains(&r) {
            return err(
                ErrorClass::Rank,
                format!("invalid rank {r} in {what}[{i}] (communicator size {size})"),
            );
        }
    }
    Ok(())
}

/// `MPI_Dims_create`: fills the zero entries of `dims` so that the product of all
/// entries is `nnodes` and the filled ones are as close to each other as possible,
/// in non-increasing order.
pub fn dims_create(nnodes: i32, dims: &mut [i32]) -> Result<()> {
    if nnodes < 0 {
        return err(
            ErrorClass::Arg,
            format!("invalid nnodes {nnodes} (must be >= 0)"),
        );
    }
    let mut fixed: i64 = 1;
    let mut free = 0usize;
    for (i, &d) in dims.iter().enumerate() {
        if d < 0 {
            return err(
                ErrorClass::Dims,
                format!("invalid dims[{i}] = {d} (must be >= 0)"),
            );
        }
        if d == 0 {
            free += 1;
        } else {
            fixed *= d as i64;
        }
    }
    if nnodes == 0 {
        // Only an all-free request has a (degenerate) answer.
        if free != dims.len() {
            return err(ErrorClass::Dims, "nnodes is 0 but some dims are fixed");
        }
        dims.iter_mut().for_each(|d| *d = 0);
        return Ok(());
    }
    if fixed == 0 || nnodes as i64 % fixed != 0 {
        return err(
            ErrorClass::Dims,
            format!("nnodes = {nnodes} is not a multiple of the product {fixed} of the fixed dims"),
        );
    }
    let rest = (nnodes as i64 / fixed) as u64;
    if free == 0 {
        if rest != 1 {
            return err(
                ErrorClass::Dims,
                format!("the fixed dims multiply to {fixed}, not nnodes = {nnodes}"),
            );
        }
        return Ok(());
    }
    let best = balanced_factors(rest, free);
    let mut it = best.into_iter();
    for d in dims.iter_mut().filter(|d| **d == 0) {
        *d = it.next().expect("one factor per free entry") as i32;
    }
    Ok(())
}

fn prime_factors(mut n: u64) -> Vec<u64> {
    let mut f = Vec::new();
    let mut p = 2;
    while p * p <= n {
        while n % p == 0 {
            f.push(p);
            n /= p;
        }
        p += 1;
    }
    if n > 1 {
        f.push(n);
    }
    f
}

/// `k` factors of `n`, non-increasing, as close to each other as possible: the
/// smallest difference between largest and smallest, then the largest smallest
/// factor, then the smallest sum of squares.
pub fn balanced_factors(n: u64, k: usize) -> Vec<u64> {
    let mut primes = prime_factors(n);
    if k > primes.len() {
        // Some factors must be 1; the primes themselves are then the best choice
        // (and this keeps the search depth at most 31).
        primes.sort_unstable_by(|a, b| b.cmp(a));
        primes.resize(k, 1);
        return primes;
    }
    // Divisors of n, ascending.
    let mut divs = vec![1u64];
    let mut i = 0;
    while i < primes.len() {
        let p = primes[i];
        let mult = primes[i..].iter().take_while(|&&q| q == p).count();
        let base = divs.len();
        let mut pk = 1u64;
        for _ in 0..mult {
            pk *= p;
            for j in 0..base {
                divs.push(divs[j] * pk);
            }
        }
        i += mult;
    }
    divs.sort_unstable();
    let mut best: Option<Vec<u64>> = None;
    let mut cur = Vec::with_capacity(k);
    search(n, k, u64::MAX, &divs, &mut cur, &mut best);
    best.expect("1 * ... * n is always a factorisation")
}

fn better(a: &[u64], b: &[u64]) -> bool {
    // Smallest spread, then largest smallest factor, then smallest sum of squares
    // (the choice MPICH makes, so both give programs the same grids).
    let key = |f: &[u64]| {
        let (max, min) = (f[0], *f.last().expect("k >= 1"));
        let sq: u128 = f.iter().map(|&x| x as u128 * x as u128).sum();
        (max - min, std::cmp::Reverse(min), sq)
    };
    key(a) < key(b)
}

/// `d^k >= n`, without overflow.
fn pow_at_least(d: u64, k: usize, n: u64) -> bool {
    let mut p: u64 = 1;
    for _ in 0..k {
        p = match p.checked_mul(d) {
            Some(x) => x,
            None => return true,
        };
        if p >= n {
            return true;
        }
    }
    p >= n
}

/// An upper bound of the `k`-th root of `n`.
fn root_bound(n: u64, k: usize) -> u64 {
    (n as f64).powf(1.0 / k as f64).floor() as u64 + 1
}

/// Depth-first search over non-increasing factorisations of `n` into `k` factors,
/// each at most `cap`, trying the most balanced first factors first.
fn search(
    n: u64,
    k: usize,
    cap: u64,
    divs: &[u64],
    cur: &mut Vec<u64>,
    best: &mut Option<Vec<u64>>,
) {
    if k == 1 {
        if n <= cap {
            cur.push(n);
            if best.as_ref().is_none_or(|b| better(cur, b)) {
                *best = Some(cur.clone());
            }
            cur.pop();
        }
        return;
    }
    // The next factor d is the largest of the remaining ones, so d^k >= n.
    let start = divs.partition_point(|&d| !pow_at_least(d, k, n));
    for &d in &divs[start..] {
        if d > cap {
            break;
        }
        if n % d != 0 {
            continue;
        }
        if let Some(b) = best.as_ref() {
            // The factors after d multiply to n/d, so the smallest of them is at
            // most its (k-1)-th root: the spread is at least first - that root,
            // which only grows with d.
            let first = cur.first().copied().unwrap_or(d);
            if first.saturating_sub(root_bound(n / d, k - 1)) > b[0] - b[b.len() - 1] {
                break;
            }
        }
        cur.push(d);
        search(n / d, k - 1, d, divs, cur, best);
        cur.pop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dc(n: i32, dims: &[i32]) -> Result<Vec<i32>> {
        let mut d = dims.to_vec();
        dims_create(n, &mut d).map(|_| d)
    }

    #[test]
    fn dims_create_standard_examples() {
        assert_eq!(dc(6, &[0, 0]).unwrap(), vec![3, 2]);
        assert_eq!(dc(7, &[0, 0]).unwrap(), vec![7, 1]);
        assert_eq!(dc(6, &[0, 3, 0]).unwrap(), vec![2, 3, 1]);
        assert_eq!(dc(7, &[0, 3, 0]).unwrap_err().class, ErrorClass::Dims);
    }

    #[test]
    fn dims_create_more() {
        assert_eq!(dc(1, &[0, 0, 0]).unwrap(), vec![1, 1, 1]);
        assert_eq!(dc(8, &[0, 0, 0]).unwrap(), vec![2, 2, 2]);
        assert_eq!(dc(16, &[0, 0]).unwrap(), vec![4, 4]);
        assert_eq!(dc(72, &[0, 0]).unwrap(), vec![9, 8]);
        assert_eq!(dc(12, &[0, 0, 0]).unwrap(), vec![3, 2, 2]);
        assert_eq!(dc(24, &[0, 0, 0]).unwrap(), vec![4, 3, 2]);
        assert_eq!(dc(4, &[2, 0]).unwrap(), vec![2, 2]);
        assert_eq!(dc(4, &[2, 2]).unwrap(), vec![2, 2]);
        assert_eq!(dc(4, &[2, 3]).unwrap_err().class, ErrorClass::Dims);
        assert_eq!(dc(5, &[]).unwrap_err().class, ErrorClass::Dims);
        assert_eq!(dc(1, &[]).unwrap(), Vec::<i32>::new());
        assert_eq!(dc(-1, &[0]).unwrap_err().class, ErrorClass::Arg);
        assert_eq!(dc(4, &[-1, 0]).unwrap_err().class, ErrorClass::Dims);
        assert_eq!(
            dc(2 * 3 * 5 * 7 * 11 * 13, &[0, 0, 0, 0])
                .unwrap()
                .iter()
                .product::<i32>(),
            30030
        );
        let big = dc(1 << 20, &[0; 10]).unwrap();
        assert_eq!(big, vec![4, 4, 4, 4, 4, 4, 4, 4, 4, 4]);
        assert_eq!(dc(1_000_003, &[0, 0, 0]).unwrap(), vec![1_000_003, 1, 1]);
        // Ties broken as MPICH does.
        assert_eq!(dc(20, &[0, 0, 0, 0]).unwrap(), vec![5, 2, 2, 1]);
        assert_eq!(dc(360, &[0, 0, 0]).unwrap(), vec![10, 6, 6]);
        assert_eq!(dc(42, &[0, 0, 0, 0]).unwrap(), vec![7, 3, 2, 1]);
        assert_eq!(dc(1 << 30, &[0, 0]).unwrap(), vec![32768, 32768]);
        assert_eq!(
            dc(735_134_400, &[0; 11]).unwrap(),
            vec![17, 13, 11, 7, 6, 6, 5, 5, 4, 4, 3]
        );
        assert_eq!(dc(i32::MAX, &[0; 5]).unwrap(), vec![i32::MAX, 1, 1, 1, 1]);
        let mut many = vec![0; 100_000];
        dims_create(12, &mut many).unwrap();
        assert_eq!(&many[..4], &[3, 2, 2, 1]);
        assert!(many[3..].iter().all(|&d| d == 1));
    }

    #[test]
    fn cart_rank_coords_round_trip() {
        let c = Cart::new(&[3, 4, 2], &[false, true, false], 24).unwrap();
        for r in 0..24 {
            let xy = c.coords_of(r).unwrap();
            assert_eq!(c.rank_of(&xy).unwrap(), r);
        }
        assert_eq!(c.coords_of(5).unwrap(), vec![0, 2, 1]);
        assert_eq!(
            c.rank_of(&[1, -1, 0]).unwrap(),
            c.rank_of(&[1, 3, 0]).unwrap()
        );
        assert_eq!(c.rank_of(&[3, 0, 0]).unwrap_err().class, ErrorClass::Arg);
        assert_eq!(c.coords_of(24).unwrap_err().class, ErrorClass::Rank);
        assert_eq!(
            Cart::new(&[3, 4], &[false, false], 11).unwrap_err().class,
            ErrorClass::Arg
        );
        assert_eq!(
            Cart::new(&[3, 0], &[false, false], 11).unwrap_err().class,
            ErrorClass::Dims
        );
    }

    #[test]
    fn cart_map_zero_extent_has_no_place() {
        assert_eq!(cart_map(&[0], 3, 0).unwrap(), UNDEFINED);
        assert_eq!(cart_map(&[2, 0], 3, 1).unwrap(), UNDEFINED);
        assert_eq!(cart_map(&[65536, 65536, 0], 3, 0).unwrap(), UNDEFINED);
        assert_eq!(cart_map(&[2], 3, 1).unwrap(), 1);
        assert_eq!(cart_map(&[2], 3, 2).unwrap(), UNDEFINED);
        assert_eq!(cart_map(&[], 3, 0).unwrap(), 0);
        assert_eq!(cart_map(&[], 3, 1).unwrap(), UNDEFINED);
        assert_eq!(
            cart_map(&[0, -1], 3, 0).unwrap_err().class,
            ErrorClass::Dims
        );
        assert_eq!(cart_map(&[2, 2], 3, 0).unwrap_err().class, ErrorClass::Arg);
    }

    #[test]
    fn cart_shift_edges() {
        let c = Cart::new(&[4, 3], &[true, false], 12).unwrap();
        // rank 0 = (0,0)
        assert_eq!(c.shift(0, 0, 1).unwrap(), (9, 3));
        assert_eq!(c.shift(0, 1, 1).unwrap(), (PROC_NULL, 1));
        assert_eq!(c.shift(2, 1, 1).unwrap(), (1, PROC_NULL));
        assert_eq!(c.shift(4, 1, -1).unwrap(), (5, 3));
        assert_eq!(c.shift(0, 0, 5).unwrap(), (9, 3));
        assert_eq!(c.shift(0, 1, 0).unwrap(), (0, 0));
        assert_eq!(c.shift(0, 1, 7).unwrap(), (PROC_NULL, PROC_NULL));
        assert_eq!(c.shift(0, 2, 1).unwrap_err().class, ErrorClass::Arg);
    }

    #[test]
    fn cart_sub_colors() {
        let c = Cart::new(&[2, 3, 2], &[true, false, true], 12).unwrap();
        // keep dim 1: colour from dims 0 and 2.
        let (col, s) = c
            .sub(c.rank_of(&[1, 2, 1]).unwrap(), &[false, true, false])
            .unwrap();
        assert_eq!(col, 3);
        assert_eq!(s.dims, vec![3]);
        assert_eq!(s.periods, vec![false]);
        let (col, s) = c.sub(7, &[false, false, false]).unwrap();
        assert_eq!(col, 7);
        assert_eq!(s.size(), 1);
    }

    #[test]
    fn neighbor_lists_in_block_order() {
        // 3 x 2 grid, periodic in dimension 1 only; rank 1 = (0,1).
        let c = Topology::Cart(Cart::new(&[3, 2], &[false, true], 6).unwrap());
        let (i, o) = c.neighbors(1).unwrap();
        assert_eq!(i, vec![PROC_NULL, 3, 0, 0]);
        assert_eq!(i, o);
        let (i, _) = c.neighbors(4).unwrap();
        assert_eq!(i, vec![2, PROC_NULL, 5, 5]);
        let g = Topology::Graph(Graph::new(&[2, 3, 4, 6], &[1, 3, 0, 3, 0, 2], 4).unwrap());
        assert_eq!(g.neighbors(3).unwrap(), (vec![0, 2], vec![0, 2]));
        let d = Topology::DistGraph(DistGraph {
            sources: vec![2],
            source_weights: vec![1],
            destinations: vec![0, 1, 0],
            dest_weights: vec![1, 1, 1],
            weighted: false,
        });
        assert_eq!(d.neighbors(0).unwrap(), (vec![2], vec![0, 1, 0]));
    }

    #[test]
    fn graph_checks_and_neighbors() {
        // The standard's example: 4 nodes.
        let g = Graph::new(&[2, 3, 4, 6], &[1, 3, 0, 3, 0, 2], 4).unwrap();
        assert_eq!(g.neighbors(0).unwrap(), &[1, 3]);
        assert_eq!(g.neighbors(3).unwrap(), &[0, 2]);
        assert_eq!(g.neighbors(4).unwrap_err().class, ErrorClass::Rank);
        assert_eq!(
            Graph::new(&[2, 1], &[1, 0], 4).unwrap_err().class,
            ErrorClass::Arg
        );
        assert_eq!(
            Graph::new(&[1, 2], &[1, 2], 4).unwrap_err().class,
            ErrorClass::Arg
        );
        assert_eq!(
            Graph::new(&[1, 3], &[1, 0], 4).unwrap_err().class,
            ErrorClass::Arg
        );
        assert_eq!(
            Graph::new(&[0, 0, 0], &[], 2).unwrap_err().class,
            ErrorClass::Arg
        );
        assert_eq!(map_rank(3, 4), 3);
        assert_eq!(map_rank(4, 4), UNDEFINED);
    }
}
