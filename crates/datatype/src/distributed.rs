//! `MPI_Type_create_subarray` and `MPI_Type_create_darray`, built exactly as the
//! standard defines them (MPI 4.1, sections 5.1.3 and 5.1.4) out of simpler
//! constructors. The equivalent type is kept as the "expansion" of the new type;
//! `MPI_Type_get_contents` still reports the original arguments.

use crate::datatype::{Datatype, Distribution, Kind, Order};
use crate::error::{Error, Result};
use crate::mpich::DISTRIBUTE_DFLT_DARG;

fn overflow(what: &str) -> Error {
    Error::overflow(what.to_string())
}

/// One dimension of a subarray: `subsize` elements of `t` starting at element `start`
/// of a row of `size` elements; bounds are [0, size * extent(t)].
fn subarray_dim(size: i64, subsize: i64, start: i64, t: &Datatype) -> Result<Datatype> {
    let ext = t.layout().extent();
    let disp = start
        .checked_mul(ext)
        .ok_or_else(|| overflow("subarray start offset"))?;
    let row = size
        .checked_mul(ext)
        .ok_or_else(|| overflow("subarray row extent"))?;
    let block = Datatype::hindexed_block(subsize, &[disp], t)?;
    Datatype::resized(&block, 0, row)
}

/// The standard's `cyclic(darg, gsize, r, psize, oldtype)`: blocks of `darg` elements
/// dealt round-robin to `psize` processes; process `r` gets `count` blocks (the last
/// possibly shorter: `darg_last`), bounds [0, gsize * extent(oldtype)].
fn cyclic(darg: i64, gsize: i64, r: i64, psize: i64, t: &Datatype) -> Result<Datatype> {
    let ext = t.layout().extent();
    let nblocks = gsize / darg + i64::from(gsize % darg != 0);
    let mut count = nblocks / psize;
    let left_over = nblocks - count * psize;
    if r < left_over {
        count += 1;
    }
    let cycle = psize
        .checked_mul(darg)
        .ok_or_else(|| overflow("psize * darg"))?;
    let num_in_last_cyclic = gsize % cycle;
    let mut darg_last = if num_in_last_cyclic == 0 {
        darg
    } else {
        num_in_last_cyclic - darg * r
    };
    if darg_last > darg || darg_last <= 0 {
        darg_last = darg;
    }
    let first = (r * darg)
        .checked_mul(ext)
        .ok_or_else(|| overflow("darray block offset"))?;
    let stride = cycle
        .checked_mul(ext)
        .ok_or_else(|| overflow("darray block stride"))?;
    let body = if count == 0 {
        Datatype::contiguous(0, t)?
    } else if darg_last == darg {
        let v = Datatype::hvector(count, darg, stride, t)?;
        Datatype::hindexed_block(1, &[first], &v)?
    } else {
        // count - 1 full blocks, then the short last one.
        let full = Datatype::hvector(count - 1, darg, stride, t)?;
        let last = Datatype::contiguous(darg_last, t)?;
        let last_disp = (count - 1)
            .checked_mul(stride)
            .and_then(|v| v.checked_add(first))
            .ok_or_else(|| overflow("darray last block offset"))?;
        Datatype::create_struct(&[1, 1], &[first, last_disp], &[full, last])?
    };
    let ub = gsize
        .checked_mul(ext)
        .ok_or_else(|| overflow("darray extent"))?;
    Datatype::resized(&body, 0, ub)
}

fn check_positive(arg: String, v: i64) -> Result<()> {
    if v <= 0 {
        Err(Error::InvalidArg {
            arg,
            value: v,
            expected: "positive".into(),
        })
    } else {
        Ok(())
    }
}

fn check_ndims(ndims: usize, arrays: &[(&str, usize)]) -> Result<()> {
    if ndims == 0 {
        return Err(Error::InvalidDims { value: 0 });
    }
    for &(arg, len) in arrays {
        if len != ndims {
            return Err(Error::LengthMismatch {
                arg: arg.to_string(),
                len,
                expected: ndims,
            });
        }
    }
    Ok(())
}

/// Dimension indices from fastest-varying to slowest.
fn dims_fastest_first(ndims: usize, order: Order) -> Vec<usize> {
    match order {
        Order::Fortran => (0..ndims).collect(),
        Order::C => (0..ndims).rev().collect(),
    }
}

impl Datatype {
    /// `MPI_Type_create_subarray`: the `subsizes` box starting at `starts` inside an
    /// array of `sizes` elements of `old`, stored in `order`. Lower bound 0, extent
    /// `prod(sizes) * extent(old)`.
    pub fn subarray(
        sizes: &[i64],
        subsizes: &[i64],
        starts: &[i64],
        order: Order,
        old: &Datatype,
    ) -> Result<Datatype> {
        let n = sizes.len();
        check_ndims(
            n,
            &[
                ("array_of_subsizes", subsizes.len()),
                ("array_of_starts", starts.len()),
            ],
        )?;
        for i in 0..n {
            check_positive(format!("array_of_sizes[{i}]"), sizes[i])?;
            if subsizes[i] < 0 || subsizes[i] > sizes[i] {
                return Err(Error::arg(
                    format!("array_of_subsizes[{i}]"),
                    subsizes[i],
                    format!("in 0..={} (array_of_sizes[{i}])", sizes[i]),
                ));
            }
            if starts[i] < 0 || starts[i] > sizes[i] - subsizes[i] {
                return Err(Error::arg(
                    format!("array_of_starts[{i}]"),
                    starts[i],
                    format!("in 0..={} (size - subsize)", sizes[i] - subsizes[i]),
                ));
            }
        }
        let mut t = old.clone();
        for i in dims_fastest_first(n, order) {
            t = subarray_dim(sizes[i], subsizes[i], starts[i], &t)?;
        }
        let kind = Kind::Subarray {
            sizes: sizes.into(),
            subsizes: subsizes.into(),
            starts: starts.into(),
            order,
            old: old.clone(),
            expansion: t.clone(),
        };
        Ok(Datatype::new(kind, t.layout().wrapped()?))
    }

    /// `MPI_Type_create_darray`: the part of a global array of `gsizes` elements of
    /// `old` that process `rank` of `size` owns on a row-major process grid of `psizes`,
    /// with a block, cyclic or no distribution per dimension. `dargs[i]` may be
    /// [`crate::mpich::DISTRIBUTE_DFLT_DARG`]. Lower bound 0, extent
    /// `prod(gsizes) * extent(old)`.
    #[allow(clippy::too_many_arguments)] // mirrors the MPI signature
    pub fn darray(
        size: i64,
        rank: i64,
        gsizes: &[i64],
        distribs: &[Distribution],
        dargs: &[i64],
        psizes: &[i64],
        order: Order,
        old: &Datatype,
    ) -> Result<Datatype> {
        check_positive("size".into(), size)?;
        if rank < 0 || rank >= size {
            return Err(Error::RankOutOfRange { rank, size });
        }
        let n = gsizes.len();
        check_ndims(
            n,
            &[
                ("array_of_distribs", distribs.len()),
                ("array_of_dargs", dargs.len()),
                ("array_of_psizes", psizes.len()),
            ],
        )?;
        let dflt = i64::from(DISTRIBUTE_DFLT_DARG);
        let mut procs: i64 = 1;
        for i in 0..n {
            check_positive(format!("array_of_gsizes[{i}]"), gsizes[i])?;
            check_positive(format!("array_of_psizes[{i}]"), psizes[i])?;
            if dargs[i] != dflt && dargs[i] <= 0 {
                return Err(Error::arg(
                    format!("array_of_dargs[{i}]"),
                    dargs[i],
                    "positive or MPI_DISTRIBUTE_DFLT_DARG",
                ));
            }
            if distribs[i] == Distribution::None && psizes[i] != 1 {
                return Err(Error::arg(
                    format!("array_of_psizes[{i}]"),
                    psizes[i],
                    "1 for a dimension with MPI_DISTRIBUTE_NONE",
                ));
            }
            if distribs[i] == Distribution::Block && dargs[i] != dflt {
                let covered = dargs[i].saturating_mul(psizes[i]);
                if covered < gsizes[i] {
                    return Err(Error::arg(
                        format!("array_of_dargs[{i}]"),
                        dargs[i],
                        format!(
                            "at least {} so that darg * psize covers gsize {} (block distribution)",
                            gsizes[i] / psizes[i] + i64::from(gsizes[i] % psizes[i] != 0),
                            gsizes[i]
                        ),
                    ));
                }
            }
            procs = procs.saturating_mul(psizes[i]);
        }
        if procs != size {
            return Err(Error::arg(
                "array_of_psizes",
                procs,
                format!("a grid whose product equals size {size}"),
            ));
        }
        // Position of `rank` in the row-major process grid.
        let mut coords = vec![0i64; n];
        let mut t_rank = rank;
        let mut t_size = size;
        for i in 0..n {
            t_size /= psizes[i];
            coords[i] = t_rank / t_size;
            t_rank %= t_size;
        }
        let mut t = old.clone();
        for i in dims_fastest_first(n, order) {
            let (darg, r, p) = match distribs[i] {
                Distribution::None => (gsizes[i], 0, 1),
                Distribution::Block if dargs[i] == dflt => (
                    gsizes[i] / psizes[i] + i64::from(gsizes[i] % psizes[i] != 0),
                    coords[i],
                    psizes[i],
                ),
                Distribution::Cyclic if dargs[i] == dflt => (1, coords[i], psizes[i]),
                _ => (dargs[i], coords[i], psizes[i]),
            };
            t = cyclic(darg, gsizes[i], r, p, &t)?;
        }
        let kind = Kind::Darray {
            size,
            rank,
            gsizes: gsizes.into(),
            distribs: distribs.into(),
            dargs: dargs.into(),
            psizes: psizes.into(),
            order,
            old: old.clone(),
            expansion: t.clone(),
        };
        Ok(Datatype::new(kind, t.layout().wrapped()?))
    }
}
