//! Process-topology entry points: Cartesian grids, graphs and distributed graphs
//! (creation, queries, mapping) and `MPI_Dims_create`.

use crate::abi;
use crate::comm::new_comm_out;
use crate::convert::{self, comm};
use crate::export::Target;
use crate::group::ints;
use crate::handles::{self, MPI_Comm, MPI_Info};
use crate::mpi_fn;
use oxmpi_core::comm::CommId;
use oxmpi_core::commops;
use oxmpi_core::topo::{self, Graph};
use oxmpi_core::{runtime, Error, ErrorClass, Result, UNDEFINED};
use std::os::raw::c_int;

/// # Safety
/// `out` must be null (refused) or point to a writable `MPI_Comm`.
unsafe fn put_new(out: *mut MPI_Comm, id: Option<CommId>) -> Result<()> {
    // SAFETY: `out` is NULL or the C caller's writable communicator handle (MPI contract);
    // `new_comm_out` refuses NULL.
    let out = unsafe { new_comm_out(out, "newcomm")? };
    // SAFETY: checked non-null.
    unsafe { *out = id.map_or(handles::MPI_COMM_NULL, handles::comm_handle) };
    Ok(())
}

/// Writes `v` to a C array that the caller says holds `max` entries.
unsafe fn write_ints(dst: *mut c_int, max: c_int, v: &[i32], what: &str) -> Result<()> {
    if max < 0 {
        return Err(Error::new(
            ErrorClass::Arg,
            format!("invalid length {max} of {what}"),
        ));
    }
    let n = v.len().min(max as usize);
    if n == 0 {
        return Ok(());
    }
    let dst = convert::out(dst, what)?;
    // SAFETY: the array holds `max` >= n ints (MPI contract).
    unsafe { std::ptr::copy_nonoverlapping(v.as_ptr(), dst, n) };
    Ok(())
}

fn check_ndims(ndims: c_int) -> Result<()> {
    if ndims < 0 {
        return Err(Error::new(
            ErrorClass::Arg,
            format!("invalid ndims {ndims} (must be >= 0)"),
        ));
    }
    Ok(())
}

fn check_max(what: &str, max: c_int, need: usize) -> Result<()> {
    if max < 0 || (max as usize) < need {
        return Err(Error::new(
            ErrorClass::Arg,
            format!("{what} = {max} is smaller than the {need} entries to return"),
        ));
    }
    Ok(())
}

fn comm_size(id: CommId) -> Result<i32> {
    runtime::with(|rt| {
        let c = rt.comms.get(id)?;
        if c.is_inter() {
            return Err(Error::new(
                ErrorClass::Comm,
                "topologies need an intracommunicator",
            ));
        }
        Ok(c.size())
    })
}

/// A weights argument: `None` for `MPI_UNWEIGHTED`.
unsafe fn weights<'a>(p: *const c_int, n: c_int, what: &str) -> Result<Option<&'a [c_int]>> {
    if p as *const std::ffi::c_void == abi::MPI_UNWEIGHTED.0 {
        return Ok(None);
    }
    if p as *const std::ffi::c_void == abi::MPI_WEIGHTS_EMPTY.0 {
        if n > 0 {
            return Err(Error::new(
                ErrorClass::Arg,
                format!("{what} is MPI_WEIGHTS_EMPTY but {n} weights are needed"),
            ));
        }
        return Ok(Some(&[]));
    }
    // SAFETY: p holds n ints (MPI contract).
    unsafe { ints(p, n, what).map(Some) }
}

mpi_fn! { MPI_Dims_create / PMPI_Dims_create (nnodes: c_int, ndims: c_int, dims: *mut c_int) target(Target::None) {
    check_ndims(ndims)?;
    if ndims == 0 {
        let mut none: [i32; 0] = [];
        return topo::dims_create(nnodes, &mut none);
    }
    let dims = convert::out(dims, "dims")?;
    // SAFETY: dims holds ndims ints (MPI contract).
    let d = unsafe { std::slice::from_raw_parts_mut(dims, ndims as usize) };
    let mut v = d.to_vec();
    topo::dims_create(nnodes, &mut v)?;
    d.copy_from_slice(&v);
    Ok(())
}}

mpi_fn! { MPI_Cart_create / PMPI_Cart_create (c: MPI_Comm, ndims: c_int, dims: *const c_int, periods: *const c_int, reorder: c_int, out: *mut MPI_Comm) target(convert::target(c)) {
    let id = comm(c)?;
    check_ndims(ndims)?;
    // SAFETY: both arrays hold ndims ints (MPI contract).
    let (d, p) = unsafe { (ints(dims, ndims, "dims")?, ints(periods, ndims, "periods")?) };
    let p: Vec<bool> = p.iter().map(|&x| x != 0).collect();
    // SAFETY: `out` is NULL or the C caller's writable communicator handle (MPI contract);
    // `new_comm_out` refuses NULL.
    unsafe { new_comm_out(out, "comm_cart")? };
    let new = commops::cart_create(id, d, &p, reorder != 0)?;
    // SAFETY: `out` is NULL or the C caller's writable communicator handle (MPI contract);
    // `put_new` refuses NULL.
    unsafe { put_new(out, new) }
}}

mpi_fn! { MPI_Cartdim_get / PMPI_Cartdim_get (c: MPI_Comm, ndims: *mut c_int) target(convert::target(c)) {
    let ndims = convert::out(ndims, "ndims")?;
    let (cart, _) = commops::cart_of(comm(c)?)?;
    // SAFETY: checked non-null.
    unsafe { *ndims = cart.ndims() as c_int };
    Ok(())
}}

mpi_fn! { MPI_Cart_get / PMPI_Cart_get (c: MPI_Comm, maxdims: c_int, dims: *mut c_int, periods: *mut c_int, coords: *mut c_int) target(convert::target(c)) {
    let (cart, rank) = commops::cart_of(comm(c)?)?;
    let per: Vec<i32> = cart.periods.iter().map(|&p| p as i32).collect();
    let xy = cart.coords_of(rank)?;
    check_max("maxdims", maxdims, cart.ndims())?;
    // SAFETY: each array holds maxdims ints (MPI contract).
    unsafe {
        write_ints(dims, maxdims, &cart.dims, "dims")?;
        write_ints(periods, maxdims, &per, "periods")?;
        write_ints(coords, maxdims, &xy, "coords")?;
    }
    Ok(())
}}

mpi_fn! { MPI_Cart_rank / PMPI_Cart_rank (c: MPI_Comm, coords: *const c_int, rank: *mut c_int) target(convert::target(c)) {
    let rank = convert::out(rank, "rank")?;
    let (cart, _) = commops::cart_of(comm(c)?)?;
    // SAFETY: coords holds ndims ints (MPI contract).
    let xy = unsafe { ints(coords, cart.ndims() as c_int, "coords")? };
    let r = cart.rank_of(xy)?;
    // SAFETY: checked non-null.
    unsafe { *rank = r };
    Ok(())
}}

mpi_fn! { MPI_Cart_coords / PMPI_Cart_coords (c: MPI_Comm, rank: c_int, maxdims: c_int, coords: *mut c_int) target(convert::target(c)) {
    let (cart, _) = commops::cart_of(comm(c)?)?;
    let xy = cart.coords_of(rank)?;
    check_max("maxdims", maxdims, cart.ndims())?;
    // SAFETY: coords holds maxdims ints (MPI contract).
    unsafe { write_ints(coords, maxdims, &xy, "coords") }
}}

mpi_fn! { MPI_Cart_shift / PMPI_Cart_shift (c: MPI_Comm, direction: c_int, disp: c_int, src: *mut c_int, dst: *mut c_int) target(convert::target(c)) {
    let src = convert::out(src, "rank_source")?;
    let dst = convert::out(dst, "rank_dest")?;
    let (cart, rank) = commops::cart_of(comm(c)?)?;
    let (s, d) = cart.shift(rank, direction, disp)?;
    // SAFETY: both checked non-null.
    unsafe {
        *src = s;
        *dst = d;
    }
    Ok(())
}}

mpi_fn! { MPI_Cart_sub / PMPI_Cart_sub (c: MPI_Comm, remain: *const c_int, out: *mut MPI_Comm) target(convert::target(c)) {
    let id = comm(c)?;
    // SAFETY: `out` is NULL or the C caller's writable communicator handle (MPI contract);
    // `new_comm_out` refuses NULL.
    let out = unsafe { new_comm_out(out, "newcomm")? };
    let (cart, _) = commops::cart_of(id)?;
    // SAFETY: remain_dims holds ndims ints (MPI contract).
    let r = unsafe { ints(remain, cart.ndims() as c_int, "remain_dims")? };
    let r: Vec<bool> = r.iter().map(|&x| x != 0).collect();
    let new = commops::cart_sub(id, &r)?;
    // SAFETY: `out` is NULL or the C caller's writable communicator handle (MPI contract);
    // `put_new` refuses NULL.
    unsafe { put_new(out, Some(new)) }
}}

mpi_fn! { MPI_Cart_map / PMPI_Cart_map (c: MPI_Comm, ndims: c_int, dims: *const c_int, periods: *const c_int, newrank: *mut c_int) target(convert::target(c)) {
    let id = comm(c)?;
    let newrank = convert::out(newrank, "newrank")?;
    check_ndims(ndims)?;
    // SAFETY: both arrays hold ndims ints (MPI contract). Without reordering the
    // periods change nothing, but they are an argument like dims (NULL is an error).
    let (d, _periods) = unsafe { (ints(dims, ndims, "dims")?, ints(periods, ndims, "periods")?) };
    let size = comm_size(id)?;
    let rank = oxmpi_core::p2p::comm_rank(id)?;
    let mapped = topo::cart_map(d, size, rank)?;
    // SAFETY: checked non-null.
    unsafe { *newrank = mapped };
    Ok(())
}}

unsafe fn graph_args<'a>(
    nnodes: c_int,
    index: *const c_int,
    edges: *const c_int,
) -> Result<(&'a [c_int], &'a [c_int])> {
    if nnodes < 0 {
        return Err(Error::new(
            ErrorClass::Arg,
            format!("invalid nnodes {nnodes} (must be >= 0)"),
        ));
    }
    // SAFETY: index holds nnodes ints (MPI contract).
    let idx = unsafe { ints(index, nnodes, "index")? };
    let nedges = idx.last().copied().unwrap_or(0);
    if nedges < 0 {
        return Err(Error::new(
            ErrorClass::Arg,
            format!("index[nnodes-1] = {nedges} is negative"),
        ));
    }
    // SAFETY: edges holds index[nnodes-1] ints (MPI contract).
    let e = unsafe { ints(edges, nedges, "edges")? };
    Ok((idx, e))
}

mpi_fn! { MPI_Graph_create / PMPI_Graph_create (c: MPI_Comm, nnodes: c_int, index: *const c_int, edges: *const c_int, reorder: c_int, out: *mut MPI_Comm) target(convert::target(c)) {
    let id = comm(c)?;
    // SAFETY: `out` is NULL or the C caller's writable communicator handle (MPI contract);
    // `new_comm_out` refuses NULL.
    unsafe { new_comm_out(out, "comm_graph")? };
    // SAFETY: arrays per the MPI contract.
    let (idx, e) = unsafe { graph_args(nnodes, index, edges)? };
    let new = commops::graph_create(id, idx, e, reorder != 0)?;
    // SAFETY: `out` is NULL or the C caller's writable communicator handle (MPI contract);
    // `put_new` refuses NULL.
    unsafe { put_new(out, new) }
}}

mpi_fn! { MPI_Graphdims_get / PMPI_Graphdims_get (c: MPI_Comm, nnodes: *mut c_int, nedges: *mut c_int) target(convert::target(c)) {
    let nnodes = convert::out(nnodes, "nnodes")?;
    let nedges = convert::out(nedges, "nedges")?;
    let g = commops::graph_of(comm(c)?)?;
    // SAFETY: both checked non-null.
    unsafe {
        *nnodes = g.nnodes();
        *nedges = g.edges.len() as c_int;
    }
    Ok(())
}}

mpi_fn! { MPI_Graph_get / PMPI_Graph_get (c: MPI_Comm, maxindex: c_int, maxedges: c_int, index: *mut c_int, edges: *mut c_int) target(convert::target(c)) {
    let g = commops::graph_of(comm(c)?)?;
    check_max("maxindex", maxindex, g.index.len())?;
    check_max("maxedges", maxedges, g.edges.len())?;
    // SAFETY: arrays hold maxindex / maxedges ints (MPI contract).
    unsafe {
        write_ints(index, maxindex, &g.index, "index")?;
        write_ints(edges, maxedges, &g.edges, "edges")?;
    }
    Ok(())
}}

mpi_fn! { MPI_Graph_neighbors_count / PMPI_Graph_neighbors_count (c: MPI_Comm, rank: c_int, n: *mut c_int) target(convert::target(c)) {
    let n = convert::out(n, "nneighbors")?;
    let g = commops::graph_of(comm(c)?)?;
    let k = g.neighbors(rank)?.len();
    // SAFETY: checked non-null.
    unsafe { *n = k as c_int };
    Ok(())
}}

mpi_fn! { MPI_Graph_neighbors / PMPI_Graph_neighbors (c: MPI_Comm, rank: c_int, max: c_int, out: *mut c_int) target(convert::target(c)) {
    let g = commops::graph_of(comm(c)?)?;
    let nb = g.neighbors(rank)?;
    check_max("maxneighbors", max, nb.len())?;
    // SAFETY: the array holds max ints (MPI contract).
    unsafe { write_ints(out, max, nb, "neighbors") }
}}

mpi_fn! { MPI_Graph_map / PMPI_Graph_map (c: MPI_Comm, nnodes: c_int, index: *const c_int, edges: *const c_int, newrank: *mut c_int) target(convert::target(c)) {
    let id = comm(c)?;
    let newrank = convert::out(newrank, "newrank")?;
    // SAFETY: arrays per the MPI contract.
    let (idx, e) = unsafe { graph_args(nnodes, index, edges)? };
    let size = comm_size(id)?;
    let g = Graph::new(idx, e, size)?;
    let rank = oxmpi_core::p2p::comm_rank(id)?;
    // SAFETY: checked non-null.
    unsafe { *newrank = topo::map_rank(rank, g.nnodes()) };
    Ok(())
}}

mpi_fn! { MPI_Topo_test / PMPI_Topo_test (c: MPI_Comm, status: *mut c_int) target(convert::target(c)) {
    let status = convert::out(status, "status")?;
    let t = commops::topology(comm(c)?)?;
    // SAFETY: checked non-null.
    unsafe { *status = t.map_or(UNDEFINED, |t| t.kind() as c_int) };
    Ok(())
}}

fn check_info(info: MPI_Info) -> Result<()> {
    // A live info object or MPI_INFO_NULL (a freed one is refused too).
    crate::info::optional_info(info).map(|_| ())
}

fn check_degree(what: &str, d: c_int) -> Result<()> {
    if d < 0 {
        return Err(Error::new(
            ErrorClass::Arg,
            format!("invalid {what} {d} (must be >= 0)"),
        ));
    }
    Ok(())
}

mpi_fn! { MPI_Dist_graph_create_adjacent / PMPI_Dist_graph_create_adjacent (c: MPI_Comm, indegree: c_int, sources: *const c_int, sourceweights: *const c_int, outdegree: c_int, destinations: *const c_int, destweights: *const c_int, info: MPI_Info, reorder: c_int, out: *mut MPI_Comm) target(convert::target(c)) {
    let id = comm(c)?;
    // SAFETY: `out` is NULL or the C caller's writable communicator handle (MPI contract);
    // `new_comm_out` refuses NULL.
    unsafe { new_comm_out(out, "comm_dist_graph")? };
    check_info(info)?;
    check_degree("indegree", indegree)?;
    check_degree("outdegree", outdegree)?;
    // SAFETY: arrays hold indegree / outdegree ints (MPI contract).
    let (s, sw, d, dw) = unsafe {
        (
            ints(sources, indegree, "sources")?,
            weights(sourceweights, indegree, "sourceweights")?,
            ints(destinations, outdegree, "destinations")?,
            weights(destweights, outdegree, "destweights")?,
        )
    };
    let new = commops::dist_graph_create_adjacent(id, s, sw, d, dw, reorder != 0)?;
    // SAFETY: `out` is NULL or the C caller's writable communicator handle (MPI contract);
    // `put_new` refuses NULL.
    unsafe { put_new(out, Some(new)) }
}}

mpi_fn! { MPI_Dist_graph_create / PMPI_Dist_graph_create (c: MPI_Comm, n: c_int, sources: *const c_int, degrees: *const c_int, destinations: *const c_int, w: *const c_int, info: MPI_Info, reorder: c_int, out: *mut MPI_Comm) target(convert::target(c)) {
    let id = comm(c)?;
    // SAFETY: `out` is NULL or the C caller's writable communicator handle (MPI contract);
    // `new_comm_out` refuses NULL.
    unsafe { new_comm_out(out, "comm_dist_graph")? };
    check_info(info)?;
    check_degree("n", n)?;
    // SAFETY: sources and degrees hold n ints (MPI contract).
    let (s, deg) = unsafe { (ints(sources, n, "sources")?, ints(degrees, n, "degrees")?) };
    let mut total: i64 = 0;
    for (i, &d) in deg.iter().enumerate() {
        check_degree(&format!("degrees[{i}]"), d)?;
        total += d as i64;
    }
    let total = c_int::try_from(total)
        .map_err(|_| Error::new(ErrorClass::Arg, "the degrees add up to more than 2^31 edges"))?;
    // SAFETY: destinations and weights hold sum(degrees) ints (MPI contract).
    let (d, wt) = unsafe { (ints(destinations, total, "destinations")?, weights(w, total, "weights")?) };
    let new = commops::dist_graph_create(id, s, deg, d, wt, reorder != 0)?;
    // SAFETY: `out` is NULL or the C caller's writable communicator handle (MPI contract);
    // `put_new` refuses NULL.
    unsafe { put_new(out, Some(new)) }
}}

mpi_fn! { MPI_Dist_graph_neighbors_count / PMPI_Dist_graph_neighbors_count (c: MPI_Comm, indegree: *mut c_int, outdegree: *mut c_int, weighted: *mut c_int) target(convert::target(c)) {
    let i = convert::out(indegree, "indegree")?;
    let o = convert::out(outdegree, "outdegree")?;
    let w = convert::out(weighted, "weighted")?;
    let g = commops::dist_graph_of(comm(c)?)?;
    // SAFETY: all checked non-null.
    unsafe {
        *i = g.sources.len() as c_int;
        *o = g.destinations.len() as c_int;
        *w = g.weighted as c_int;
    }
    Ok(())
}}

mpi_fn! { MPI_Dist_graph_neighbors / PMPI_Dist_graph_neighbors (c: MPI_Comm, maxin: c_int, sources: *mut c_int, sourceweights: *mut c_int, maxout: c_int, destinations: *mut c_int, destweights: *mut c_int) target(convert::target(c)) {
    let g = commops::dist_graph_of(comm(c)?)?;
    check_max("maxindegree", maxin, g.sources.len())?;
    check_max("maxoutdegree", maxout, g.destinations.len())?;
    let unweighted = |p: *mut c_int| p as *const std::ffi::c_void == abi::MPI_UNWEIGHTED.0;
    // SAFETY: arrays hold maxin / maxout ints (MPI contract).
    unsafe {
        write_ints(sources, maxin, &g.sources, "sources")?;
        write_ints(destinations, maxout, &g.destinations, "destinations")?;
        if g.weighted && !unweighted(sourceweights) {
            write_ints(sourceweights, maxin, &g.source_weights, "sourceweights")?;
        }
        if g.weighted && !unweighted(destweights) {
            write_ints(destweights, maxout, &g.dest_weights, "destweights")?;
        }
    }
    Ok(())
}}
