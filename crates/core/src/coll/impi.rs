//! IMPI chapter 4: the collective algorithms on communicators that span several
//! clients of an IMPI job (docs/impi.md, "Collectives and context ids").
//!
//! A communicator whose group holds ranks of more than one client runs the blocking
//! MPI-1 collectives as chapter 4 prescribes them: point-to-point messages in the
//! communicator's collective context, with the tags of 4.25, between one *master* per
//! client (the lowest rank of the client in the communicator), linear or on a
//! binomial tree by the negotiated `IMPI_C_COLL_MAXLINEAR`, short or long by
//! `IMPI_C_COLL_XSIZE`; the "short" protocols carry external32 packed bytes. The local
//! phases (inside one client), which the specification leaves free, are linear
//! exchanges with the same tags. Context ids of new communicators are agreed as in
//! 4.3.1 ([`new_cid`]). Communicators inside one client never come here.

use super::check::Input;
use super::movement::VBuf;
use super::nbc::How;
use super::op::{data_range, OpId};
use crate::comm::CommId;
use crate::error::{err, Error, ErrorClass, Result};
use crate::p2p::{self, Buf};
use crate::runtime;
use crate::types::{TypeId, TypeInfo};
use oxmpi_coll::ops::PredefinedOp;
use oxmpi_datatype::{pack_external, pack_external_size, unpack_external, Predefined};
use std::sync::atomic::{AtomicBool, Ordering};

/// The tags of 4.25.
pub const BARRIER_TAG: i32 = 110;
pub const BCAST_TAG: i32 = 120;
pub const GATHER_TAG: i32 = 130;
pub const GATHERV_TAG: i32 = 140;
pub const SCATTER_TAG: i32 = 150;
pub const SCATTERV_TAG: i32 = 160;
pub const ALLTOALL_TAG: i32 = 170;
pub const ALLTOALLV_TAG: i32 = 180;
pub const REDUCE_TAG: i32 = 190;
pub const SCAN_TAG: i32 = 200;
/// `IMPI_MAX_CID` of 4.25.
pub const MAX_CID: u64 = 18_446_744_073_709_551_600;

/// What the collectives need to know of the IMPI job.
#[derive(Clone, Debug)]
pub struct World {
    /// The client of each `MPI_COMM_WORLD` rank.
    pub client: Vec<u32>,
    /// `IMPI_COLL_CROSSOVER`: the negotiated `IMPI_C_COLL_XSIZE`.
    pub xsize: usize,
    /// `IMPI_MAX_LINEAR_*`: the negotiated `IMPI_C_COLL_MAXLINEAR`.
    pub maxlinear: usize,
}

impl World {
    /// From the job description `impirun` gave this rank.
    pub fn of_job(j: &crate::transport::impi::ImpiJoin) -> World {
        World {
            client: j
                .procs
                .iter()
                .map(|(host, _)| j.hosts[*host as usize].client)
                .collect(),
            xsize: j.coll_xsize as usize,
            maxlinear: j.coll_maxlinear as usize,
        }
    }
}

/// Chapter 4's view of one intracommunicator that spans clients (4.2).
pub(crate) struct Span {
    comm: CommId,
    rank: usize,
    /// The client of each rank.
    client: Vec<u32>,
    /// The ranks of the masters, by master number.
    masters: Vec<usize>,
    xsize: usize,
    maxlinear: usize,
}

/// Whether this process runs in an IMPI job: set once when the runtime starts, read
/// without the runtime lock by every blocking collective (which asks [`span`] first).
static IMPI_JOB: AtomicBool = AtomicBool::new(false);

/// Records at start-up whether the process is part of an IMPI job.
pub(crate) fn set_job(impi: bool) {
    IMPI_JOB.store(impi, Ordering::Release);
}

/// The [`Span`] of `comm` when it is an intracommunicator of an IMPI job whose group
/// holds ranks of more than one client. Outside an IMPI job, one atomic load.
#[inline]
pub(crate) fn span(comm: CommId) -> Result<Option<Span>> {
    if !IMPI_JOB.load(Ordering::Acquire) {
        return Ok(None);
    }
    span_slow(comm)
}

#[cold]
fn span_slow(comm: CommId) -> Result<Option<Span>> {
    runtime::with(|rt| {
        let Some(w) = rt.coll.impi.clone() else {
            return Ok(None);
        };
        let c = rt.comms.get(comm)?;
        if c.is_inter() {
            return Ok(None);
        }
        let client: Vec<u32> = c
            .group
            .members()
            .iter()
            .map(|&m| w.client.get(m as usize).copied().unwrap_or(u32::MAX))
            .collect();
        if client.iter().all(|&x| x == client[0]) {
            return Ok(None);
        }
        let mut seen = std::collections::HashSet::new();
        let masters = (0..client.len())
            .filter(|&r| seen.insert(client[r]))
            .collect();
        Ok(Some(Span {
            comm,
            rank: c.rank as usize,
            client,
            masters,
            xsize: w.xsize,
            maxlinear: w.maxlinear,
        }))
    })
}

/// Whether intercommunicator `c` joins ranks of more than one client of this IMPI job
/// (both groups counted, so both sides agree): its `MPI_Comm_dup` and `MPI_Comm_free`
/// then follow 4.6 and 4.5. An intercommunicator to processes outside the job
/// (connected or spawned) does not.
pub(crate) fn inter_spans(c: &crate::comm::Comm) -> Result<bool> {
    if !IMPI_JOB.load(Ordering::Acquire) {
        return Ok(false);
    }
    let Some(w) = runtime::with(|rt| Ok(rt.coll.impi.clone()))? else {
        return Ok(false);
    };
    let remote = c.remote.as_ref().map_or(&[][..], |g| g.members());
    let mut clients = c
        .group
        .members()
        .iter()
        .chain(remote)
        .map(|&m| w.client.get(m as usize).copied());
    let Some(Some(first)) = clients.next() else {
        return Ok(false);
    };
    let mut spans = false;
    for x in clients {
        match x {
            Some(x) => spans |= x != first,
            None => return Ok(false),
        }
    }
    Ok(spans)
}

/// The hook at the top of each MPI-1 collective: a blocking call on an
/// intracommunicator that spans IMPI clients runs chapter 4's algorithm `f` (the
/// nonblocking and persistent forms keep oxmpi's, reading 46). True when `f` ran.
pub(crate) fn chapter4(
    comm: CommId,
    how: How,
    f: impl FnOnce(&Span) -> Result<()>,
) -> Result<bool> {
    if how != How::Block {
        return Ok(false);
    }
    match span(comm)? {
        Some(s) => f(&s).map(|()| true),
        None => Ok(false),
    }
}

/// Waits for a request of a collective's message; the bytes it moved.
fn wait_coll(id: crate::device::ReqId) -> Result<usize> {
    let c = p2p::wait(id)?;
    match ErrorClass::from(c.status.error) {
        ErrorClass::Success => Ok(c.status.bytes as usize),
        class => err(class, "a message of the collective failed"),
    }
}

/// `cubedim` of 4.2: the dimension of the smallest hypercube with at least `n`
/// vertices (`n` ≥ 1).
fn cubedim(n: usize) -> i32 {
    let mut d = 0;
    while (1usize << d) < n {
        d += 1;
    }
    d
}

/// `highbit` of 4.2: the highest bit set among the lowest `dim` bits of `r`, or -1.
fn highbit(r: usize, dim: i32) -> i32 {
    (0..dim).rev().find(|&i| r & (1 << i) != 0).unwrap_or(-1)
}

fn byte_buf(addr: usize, len: usize) -> Buf {
    Buf {
        addr,
        count: len as i64,
        ty: Predefined::Byte as TypeId,
    }
}

fn info(ty: TypeId) -> Result<TypeInfo> {
    runtime::with(|rt| Ok(rt.types.for_comm(ty)?.clone()))
}

fn count_of(n: i64, what: &str) -> Result<usize> {
    usize::try_from(n).or_else(|_| err(ErrorClass::Count, format!("{what} {n} is negative")))
}

/// Bytes of `n` elements of `t` in external32 (`MPI_Pack_size` on a non-native
/// communicator, 4.1).
fn ext_size(t: &TypeInfo, n: usize) -> Result<usize> {
    pack_external_size(t.datatype(), n)
        .ok_or_else(|| Error::new(ErrorClass::Count, format!("{n} elements are too many")))
}

/// Packs `b` in external32 (what `MPI_Pack` does on a non-native communicator, 4.1).
fn pack32(b: Buf) -> Result<Vec<u8>> {
    let t = info(b.ty)?;
    let n = count_of(b.count, "count")?;
    let mut out = vec![0u8; ext_size(&t, n)?];
    // SAFETY: the caller's buffer holds `count` elements of its type (the collective's
    // contract).
    unsafe { pack_external(t.datatype(), b.addr as *const u8, n, &mut out) }
        .map_err(crate::types::engine_error)?;
    Ok(out)
}

/// Unpacks external32 bytes into `b`.
fn unpack32(b: Buf, data: &[u8]) -> Result<()> {
    let t = info(b.ty)?;
    let n = count_of(b.count, "count")?;
    // SAFETY: as for `pack32`.
    unsafe { unpack_external(t.datatype(), b.addr as *mut u8, n, data) }
        .map_err(crate::types::engine_error)?;
    Ok(())
}

/// Copies `from` into `to` (the same type signature), as a send to oneself would.
fn copy(from: Buf, to: Buf) -> Result<()> {
    let (fi, ti) = (info(from.ty)?, info(to.ty)?);
    let (fnum, tnum) = (count_of(from.count, "count")?, count_of(to.count, "count")?);
    let bytes = fnum * fi.size;
    if bytes > tnum * ti.size {
        return err(
            ErrorClass::Truncate,
            format!(
                "{bytes} bytes do not fit a receive buffer of {} bytes",
                tnum * ti.size
            ),
        );
    }
    let mut v = vec![0u8; bytes];
    // SAFETY: both buffers hold their counts of elements (the collective's contract).
    unsafe {
        fi.pack(from.addr as *const u8, fnum, &mut v);
        ti.unpack(to.addr as *mut u8, &v);
    }
    Ok(())
}

/// Element `i * count` of a buffer of `count`-element blocks.
fn block(b: Buf, i: usize) -> Result<Buf> {
    let t = info(b.ty)?;
    let off = (i as isize)
        .wrapping_mul(b.count as isize)
        .wrapping_mul(t.signed_extent);
    Ok(Buf {
        addr: b.addr.wrapping_add(off as usize),
        ..b
    })
}

/// A scratch buffer for `n` elements of a type, laid out as the type places them.
struct Scratch {
    _mem: Vec<u128>,
    base: usize,
}

impl Scratch {
    fn new(ty: TypeId, n: usize) -> Result<Scratch> {
        let t = info(ty)?;
        let (lo, hi) = data_range(&t, n);
        let mem = vec![0u128; ((hi - lo) as usize).div_ceil(16).max(1)];
        let base = (mem.as_ptr() as usize).wrapping_sub(lo as usize);
        Ok(Scratch { _mem: mem, base })
    }

    fn buf(&self, ty: TypeId, n: usize) -> Buf {
        Buf {
            addr: self.base,
            count: n as i64,
            ty,
        }
    }
}

impl Span {
    fn size(&self) -> usize {
        self.client.len()
    }

    fn are_local(&self, a: usize, b: usize) -> bool {
        self.client[a] == self.client[b]
    }

    fn is_master(&self, r: usize) -> bool {
        self.masters.contains(&r)
    }

    fn nmasters(&self) -> usize {
        self.masters.len()
    }

    /// `local_master_num`: the master number of the client of rank `r`.
    fn lmn(&self, r: usize) -> usize {
        self.masters
            .iter()
            .position(|&m| self.client[m] == self.client[r])
            .expect("every client has a master")
    }

    /// `locals_to_master`: the ranks of master `n`'s client, ascending.
    fn locals(&self, n: usize) -> Vec<usize> {
        let c = self.client[self.masters[n]];
        (0..self.size()).filter(|&r| self.client[r] == c).collect()
    }

    fn linear(&self) -> bool {
        self.nmasters() <= self.maxlinear
    }

    fn check_root(&self, root: i32) -> Result<usize> {
        match usize::try_from(root) {
            Ok(r) if r < self.size() => Ok(r),
            _ => err(
                ErrorClass::Root,
                format!(
                    "root {root} is not a rank of the communicator (size {})",
                    self.size()
                ),
            ),
        }
    }

    fn isend(&self, b: Buf, dest: usize, tag: i32) -> Result<crate::device::ReqId> {
        // SAFETY: the buffer holds its elements until the wait (the callers wait
        // before returning).
        unsafe { p2p::isend_coll(b, dest as i32, tag, self.comm) }
    }

    fn irecv(&self, b: Buf, src: usize, tag: i32) -> Result<crate::device::ReqId> {
        // SAFETY: as for `isend`.
        unsafe { p2p::irecv_coll(b, src as i32, tag, self.comm) }
    }

    /// Waits for a request; the bytes it moved.
    fn wait(&self, id: crate::device::ReqId) -> Result<usize> {
        wait_coll(id)
    }

    fn send(&self, b: Buf, dest: usize, tag: i32) -> Result<()> {
        let id = self.isend(b, dest, tag)?;
        self.wait(id).map(drop)
    }

    fn recv(&self, b: Buf, src: usize, tag: i32) -> Result<usize> {
        let id = self.irecv(b, src, tag)?;
        self.wait(id)
    }

    fn send_bytes(&self, v: &[u8], dest: usize, tag: i32) -> Result<()> {
        self.send(byte_buf(v.as_ptr() as usize, v.len()), dest, tag)
    }

    fn recv_bytes(&self, v: &mut [u8], src: usize, tag: i32) -> Result<usize> {
        self.recv(byte_buf(v.as_mut_ptr() as usize, v.len()), src, tag)
    }
}

// ----- 4.10 Barrier ---------------------------------------------------------------------

pub(crate) fn barrier(s: &Span) -> Result<()> {
    let t = BARRIER_TAG;
    let none = byte_buf(0, 0);
    let me = s.rank;
    let mine = s.lmn(me);
    let lm = s.masters[mine];
    // Local phase: fan in to the local master.
    if me != lm {
        s.send(none, lm, t)?;
        s.recv(none, lm, t)?;
        return Ok(());
    }
    let locals = s.locals(mine);
    for &r in locals.iter().filter(|&&r| r != me) {
        s.recv(none, r, t)?;
    }
    let n = s.nmasters();
    if s.linear() {
        if me == 0 {
            for i in 1..n {
                s.recv(none, s.masters[i], t)?;
            }
            for i in 1..n {
                s.send(none, s.masters[i], t)?;
            }
        } else {
            s.send(none, 0, t)?;
            s.recv(none, 0, t)?;
        }
    } else {
        let dim = cubedim(n);
        let hibit = highbit(mine, dim);
        let dim = dim - 1;
        let mut i = dim;
        while i > hibit {
            let peer = mine | (1 << i);
            if peer < n {
                s.recv(none, s.masters[peer], t)?;
            }
            i -= 1;
        }
        if mine > 0 {
            let peer = s.masters[mine & !(1 << hibit)];
            s.send(none, peer, t)?;
            s.recv(none, peer, t)?;
        }
        for i in hibit + 1..=dim {
            let peer = mine | (1 << i);
            if peer < n {
                s.send(none, s.masters[peer], t)?;
            }
        }
    }
    // Local phase: fan out.
    for &r in locals.iter().filter(|&&r| r != me) {
        s.send(none, r, t)?;
    }
    Ok(())
}

// ----- 4.11 Bcast -----------------------------------------------------------------------

pub(crate) fn bcast(s: &Span, b: Buf, root: i32) -> Result<()> {
    let root = s.check_root(root)?;
    let me = s.rank;
    if me == root || (s.is_master(me) && !s.are_local(me, root)) {
        master_bcast(s, b, root)?;
    }
    // Local phase: from the root, or from the local master.
    let from = if s.are_local(me, root) {
        root
    } else {
        s.masters[s.lmn(me)]
    };
    if me == from {
        for r in s.locals(s.lmn(me)).into_iter().filter(|&r| r != me) {
            s.send(b, r, BCAST_TAG)?;
        }
    } else {
        s.recv(b, from, BCAST_TAG)?;
    }
    Ok(())
}

fn master_bcast(s: &Span, b: Buf, root: usize) -> Result<()> {
    let t = BCAST_TAG;
    let me = s.rank;
    let n = s.nmasters();
    let rootnum = s.lmn(root);
    if s.linear() {
        if me == root {
            for i in (0..n).filter(|&i| i != rootnum) {
                s.send(b, s.masters[i], t)?;
            }
        } else {
            s.recv(b, root, t)?;
        }
        return Ok(());
    }
    // The root plays its client's master (reading 40 of docs/impi.md).
    let vnum = (s.lmn(me) + n - rootnum) % n;
    let dim = cubedim(n);
    let hibit = highbit(vnum, dim);
    let dim = dim - 1;
    if vnum > 0 {
        let mut peer = s.masters[((vnum & !(1 << hibit)) + rootnum) % n];
        if s.are_local(peer, root) {
            peer = root;
        }
        s.recv(b, peer, t)?;
    }
    for i in hibit + 1..=dim {
        let peer = vnum | (1 << i);
        if peer < n {
            s.send(b, s.masters[(peer + rootnum) % n], t)?;
        }
    }
    Ok(())
}

// ----- 4.12, 4.13 Gather(v) ----------------------------------------------------------

/// The order in which a rooted short gather's buffers reach the root: master numbers,
/// the root's own skipped (linear: ascending; tree: rotated to start after the root's).
fn gather_order(s: &Span, rootnum: usize) -> Vec<usize> {
    let n = s.nmasters();
    if s.linear() {
        (0..n).filter(|&i| i != rootnum).collect()
    } else {
        (1..n).map(|v| (v + rootnum) % n).collect()
    }
}

/// The global phase of a short gather(v): the root and the masters of other clients
/// move `tmp` (the concatenated packed buffers, `size` bytes filled) to the root.
fn gather_global(
    s: &Span,
    root: usize,
    tmp: &mut [u8],
    mut size: usize,
    tag: i32,
) -> Result<usize> {
    let me = s.rank;
    let n = s.nmasters();
    let rootnum = s.lmn(root);
    if s.linear() {
        if me == root {
            for i in gather_order(s, rootnum) {
                size += s.recv_bytes(&mut tmp[size..], s.masters[i], tag)?;
            }
        } else {
            s.send_bytes(&tmp[..size], root, tag)?;
        }
        return Ok(size);
    }
    let vnum = (s.lmn(me) + n - rootnum) % n;
    let mut mask = 1;
    while mask < n {
        if vnum & mask != 0 {
            let mut peer = s.masters[((vnum & !mask) + rootnum) % n];
            if s.are_local(peer, root) {
                peer = root;
            }
            s.send_bytes(&tmp[..size], peer, tag)?;
            break;
        }
        let peer = vnum | mask;
        if peer < n {
            let peer = s.masters[(peer + rootnum) % n];
            size += s.recv_bytes(&mut tmp[size..], peer, tag)?;
        }
        mask <<= 1;
    }
    Ok(size)
}

/// `MPI_Gather` (4.12). `recv` matters at the root.
pub(crate) fn gather(s: &Span, send: Input<Buf>, recv: Buf, root: i32) -> Result<()> {
    let root = s.check_root(root)?;
    let me = s.rank;
    let (send, in_place) = own_input(s, send, root, || block(recv, me))?;
    let st = info(send.ty)?;
    let packsize = ext_size(&st, count_of(send.count, "sendcount")?)?;
    let rblock = |r: usize| block(recv, r);
    if packsize >= s.xsize {
        return gather_long(s, send, in_place, root, &rblock, GATHER_TAG);
    }
    let sizes = vec![packsize; s.size()];
    gather_short(s, send, in_place, root, &sizes, &rblock, GATHER_TAG)
}

/// `gather_long`, `gatherv_long`: every rank sends its buffer to the root.
fn gather_long(
    s: &Span,
    send: Buf,
    in_place: bool,
    root: usize,
    rblock: &dyn Fn(usize) -> Result<Buf>,
    tag: i32,
) -> Result<()> {
    let me = s.rank;
    if me != root {
        return s.send(send, root, tag);
    }
    for i in 0..s.size() {
        if i != me {
            s.recv(rblock(i)?, i, tag)?;
        } else if !in_place {
            copy(send, rblock(i)?)?;
        }
    }
    Ok(())
}

/// `gather_short` and `gatherv_short`: `sizes[r]` is rank r's packed size (known at
/// the root and, for its own rank, everywhere), `rblock(r)` its receive block at the
/// root.
#[allow(clippy::too_many_arguments)]
fn gather_short(
    s: &Span,
    send: Buf,
    in_place: bool,
    root: usize,
    sizes: &[usize],
    rblock: &dyn Fn(usize) -> Result<Buf>,
    tag: i32,
) -> Result<()> {
    let me = s.rank;
    let mine = s.lmn(me);
    let lm = s.masters[mine];
    let root_local = s.are_local(me, root);
    let cap = sizes.iter().sum::<usize>().max(s.size() * sizes[me]);
    let mut tmp = Vec::new();
    let mut size = 0;
    // Local phase.
    if root_local {
        if me == root {
            for r in s.locals(mine) {
                if r != me {
                    s.recv(rblock(r)?, r, tag)?;
                } else if !in_place {
                    copy(send, rblock(r)?)?;
                }
            }
        } else {
            s.send(send, root, tag)?;
        }
    } else if me != lm {
        s.send_bytes(&pack32(send)?, lm, tag)?;
    } else {
        tmp = vec![0u8; cap];
        for r in s.locals(mine) {
            if r == me {
                let p = pack32(send)?;
                tmp[size..size + p.len()].copy_from_slice(&p);
                size += p.len();
            } else {
                size += s.recv_bytes(&mut tmp[size..], r, tag)?;
            }
        }
    }
    // Global phase.
    if me == root || (me == lm && !root_local) {
        if me == root {
            tmp = vec![0u8; cap];
            size = 0;
        }
        size = gather_global(s, root, &mut tmp, size, tag)?;
    }
    if me == root {
        let mut off = 0;
        for m in gather_order(s, s.lmn(root)) {
            for r in s.locals(m) {
                let end = off + sizes[r];
                if end > size {
                    return err(
                        ErrorClass::Truncate,
                        format!("the gathered data ({size} bytes) lack rank {r}'s part"),
                    );
                }
                unpack32(rblock(r)?, &tmp[off..end])?;
                off = end;
            }
        }
    }
    Ok(())
}

/// Root's `maxsize` of `gatherv_is_short` / `scatterv_is_short`, broadcast (0: long).
fn v_is_short(s: &Span, v: Option<(&[i64], TypeId)>, root: usize) -> Result<i32> {
    let mut maxsize: i32 = 0;
    if let Some((counts, ty)) = v {
        let one = ext_size(&info(ty)?, 1)?;
        let mut m = 0usize;
        for (i, &c) in counts.iter().enumerate().take(s.size()) {
            m = m.max(count_of(c, &format!("counts[{i}]"))? * one);
        }
        maxsize = if m > s.xsize { 0 } else { m as i32 };
    }
    let b = Buf {
        addr: &mut maxsize as *mut i32 as usize,
        count: 1,
        ty: Predefined::Int32 as TypeId,
    };
    bcast(s, b, root as i32)?;
    Ok(maxsize)
}

fn vblock(v: &VBuf<'_>, r: usize) -> Result<Buf> {
    let t = info(v.ty)?;
    let (Some(&c), Some(&d)) = (v.counts.get(r), v.displs.get(r)) else {
        return err(
            ErrorClass::Arg,
            format!("no count or displacement for rank {r}"),
        );
    };
    Ok(Buf {
        addr: v
            .addr
            .wrapping_add((d as isize).wrapping_mul(t.signed_extent) as usize),
        count: c,
        ty: v.ty,
    })
}

/// `MPI_Gatherv` (4.13). `recv` matters at the root.
pub(crate) fn gatherv(s: &Span, send: Input<Buf>, recv: &VBuf<'_>, root: i32) -> Result<()> {
    let root = s.check_root(root)?;
    let me = s.rank;
    let (send, in_place) = own_input(s, send, root, || vblock(recv, me))?;
    let at_root = me == root;
    let maxsize = v_is_short(s, at_root.then_some((recv.counts, recv.ty)), root)?;
    if maxsize == 0 {
        // gatherv_long (reading 41: the tag is IMPI_GATHERV_TAG on both sides).
        let rblock = |r: usize| vblock(recv, r);
        return gather_long(s, send, in_place, root, &rblock, GATHERV_TAG);
    }
    let mut sizes = vec![maxsize as usize; s.size()];
    sizes[me] = ext_size(&info(send.ty)?, count_of(send.count, "sendcount")?)?;
    if at_root {
        let one = ext_size(&info(recv.ty)?, 1)?;
        for (r, z) in sizes.iter_mut().enumerate() {
            *z = count_of(recv.counts[r], "recvcounts")? * one;
        }
    }
    let rblock = |r: usize| vblock(recv, r);
    gather_short(s, send, in_place, root, &sizes, &rblock, GATHERV_TAG)
}

// ----- 4.14, 4.15 Scatter(v) ---------------------------------------------------------

/// The short scatter(v): `sblock(r)` is rank r's block at the root; `recv` this rank's
/// receive buffer.
fn scatter_short(
    s: &Span,
    sblock: &dyn Fn(usize) -> Result<Buf>,
    recv: Input<Buf>,
    root: usize,
    cap: usize,
    tag: i32,
) -> Result<()> {
    let me = s.rank;
    let mine = s.lmn(me);
    let lm = s.masters[mine];
    let mut tmp = Vec::new();
    // Global phase.
    if me == root {
        let rootnum = s.lmn(root);
        for i in (0..s.nmasters()).filter(|&i| i != rootnum) {
            let mut buf = Vec::new();
            for r in s.locals(i) {
                buf.extend_from_slice(&pack32(sblock(r)?)?);
            }
            s.send_bytes(&buf, s.masters[i], tag)?;
        }
    } else if me == lm && !s.are_local(me, root) {
        tmp = vec![0u8; cap];
        let got = s.recv_bytes(&mut tmp, root, tag)?;
        tmp.truncate(got);
    }
    // Local phase.
    if s.are_local(me, root) {
        if me == root {
            for r in s.locals(mine) {
                if r != me {
                    s.send(sblock(r)?, r, tag)?;
                } else if let Input::Data(b) = recv {
                    copy(sblock(r)?, b)?;
                }
            }
        } else {
            s.recv(data_or_arg(recv)?, root, tag)?;
        }
        return Ok(());
    }
    let recv = data_or_arg(recv)?;
    let mysize = ext_size(&info(recv.ty)?, count_of(recv.count, "recvcount")?)?;
    if me != lm {
        // Tell the master how much of its buffer is this rank's, then take it.
        s.send_bytes(&(mysize as u64).to_be_bytes(), lm, tag)?;
        let mut mine = vec![0u8; mysize];
        let got = s.recv_bytes(&mut mine, lm, tag)?;
        return unpack32(recv, &mine[..got]);
    }
    let mut off = 0;
    for r in s.locals(mine) {
        let z = if r == me {
            mysize
        } else {
            let mut b = [0u8; 8];
            s.recv_bytes(&mut b, r, tag)?;
            u64::from_be_bytes(b) as usize
        };
        let end = off + z;
        if end > tmp.len() {
            return err(
                ErrorClass::Truncate,
                format!(
                    "the scattered data ({} bytes) lack rank {r}'s part",
                    tmp.len()
                ),
            );
        }
        if r == me {
            unpack32(recv, &tmp[off..end])?;
        } else {
            s.send_bytes(&tmp[off..end], r, tag)?;
        }
        off = end;
    }
    Ok(())
}

/// `MPI_Scatter` (4.14). `send` matters at the root.
pub(crate) fn scatter(s: &Span, send: Buf, recv: Input<Buf>, root: i32) -> Result<()> {
    let root = s.check_root(root)?;
    let me = s.rank;
    let mine = match recv {
        Input::Data(b) => b,
        Input::InPlace if me == root => send,
        Input::InPlace => return in_place_off_root(),
    };
    let packsize = ext_size(&info(mine.ty)?, count_of(mine.count, "recvcount")?)?;
    let sblock = |r: usize| block(send, r);
    if packsize < s.xsize {
        let cap = s.locals(s.lmn(me)).len() * packsize;
        return scatter_short(s, &sblock, recv, root, cap, SCATTER_TAG);
    }
    scatter_long(s, &sblock, recv, root, SCATTER_TAG)
}

/// `MPI_Scatterv` (4.15). `send` matters at the root.
pub(crate) fn scatterv(s: &Span, send: &VBuf<'_>, recv: Input<Buf>, root: i32) -> Result<()> {
    let root = s.check_root(root)?;
    let me = s.rank;
    if recv.is_in_place() && me != root {
        return in_place_off_root();
    }
    let maxsize = v_is_short(s, (me == root).then_some((send.counts, send.ty)), root)?;
    let sblock = |r: usize| vblock(send, r);
    if maxsize > 0 {
        let cap = s.locals(s.lmn(me)).len() * maxsize as usize;
        return scatter_short(s, &sblock, recv, root, cap, SCATTERV_TAG);
    }
    scatter_long(s, &sblock, recv, root, SCATTERV_TAG)
}

/// `scatter_long`, `scatterv_long`: the root sends each rank its block.
fn scatter_long(
    s: &Span,
    sblock: &dyn Fn(usize) -> Result<Buf>,
    recv: Input<Buf>,
    root: usize,
    tag: i32,
) -> Result<()> {
    let me = s.rank;
    if me != root {
        s.recv(data_or_arg(recv)?, root, tag)?;
        return Ok(());
    }
    for i in 0..s.size() {
        if i != me {
            s.send(sblock(i)?, i, tag)?;
        } else if let Input::Data(b) = recv {
            copy(sblock(i)?, b)?;
        }
    }
    Ok(())
}

fn in_place_off_root<T>() -> Result<T> {
    err(
        ErrorClass::Buffer,
        "MPI_IN_PLACE is allowed only at the root",
    )
}

fn data_or_arg(i: Input<Buf>) -> Result<Buf> {
    match i {
        Input::Data(b) => Ok(b),
        Input::InPlace => in_place_off_root(),
    }
}

/// A rooted gather's own contribution: the send buffer, or (in place, at the root
/// only) its block of the receive buffer; and whether it is in place.
fn own_input(
    s: &Span,
    send: Input<Buf>,
    root: usize,
    own: impl FnOnce() -> Result<Buf>,
) -> Result<(Buf, bool)> {
    match send {
        Input::Data(b) => Ok((b, false)),
        Input::InPlace if s.rank == root => Ok((own()?, true)),
        Input::InPlace => in_place_off_root(),
    }
}

// ----- 4.19, 4.20 Allgather(v) -------------------------------------------------------

/// `MPI_Allgather` (4.19): gather to 0, then broadcast from 0.
pub(crate) fn allgather(s: &Span, send: Input<Buf>, recv: Buf) -> Result<()> {
    // In place everywhere: rank 0 gathers in place, the others send their block.
    let send = match send {
        Input::InPlace if s.rank != 0 => Input::Data(block(recv, s.rank)?),
        other => other,
    };
    gather(s, send, recv, 0)?;
    let all = Buf {
        count: recv.count * s.size() as i64,
        ..recv
    };
    bcast(s, all, 0)
}

/// `MPI_Allgatherv` (4.20): gatherv to 0, then a broadcast from 0 of all the
/// elements, in rank order (reading 44: an indexed type over the blocks).
pub(crate) fn allgatherv(s: &Span, send: Input<Buf>, recv: &VBuf<'_>) -> Result<()> {
    let send = match send {
        Input::InPlace if s.rank != 0 => Input::Data(vblock(recv, s.rank)?),
        other => other,
    };
    gatherv(s, send, recv, 0)?;
    let n = s.size();
    let ty = crate::types::indexed(&recv.counts[..n], &recv.displs[..n], recv.ty)?;
    let r = crate::types::commit(ty).and_then(|_| {
        bcast(
            s,
            Buf {
                addr: recv.addr,
                count: 1,
                ty,
            },
            0,
        )
    });
    crate::types::free(ty)?;
    r
}

// ----- 4.22, 4.23 Alltoall(v) --------------------------------------------------------

/// Posts every receive, then every send, then waits (`alltoall_long`, `MPI_Alltoallv`).
fn exchange(s: &Span, pairs: &[(Buf, Buf, usize)], tag: i32) -> Result<()> {
    let mut ids = Vec::with_capacity(2 * pairs.len());
    for &(_, r, peer) in pairs {
        ids.push(s.irecv(r, peer, tag)?);
    }
    for &(snd, _, peer) in pairs {
        ids.push(s.isend(snd, peer, tag)?);
    }
    let mut first = Ok(0);
    for id in ids {
        let r = s.wait(id);
        if first.is_ok() {
            first = r;
        }
    }
    first.map(drop)
}

/// `MPI_Alltoall` (4.22).
pub(crate) fn alltoall(s: &Span, send: Buf, recv: Buf) -> Result<()> {
    let me = s.rank;
    let one = ext_size(&info(send.ty)?, 1)?;
    let packsize = count_of(send.count, "sendcount")? * one;
    let t = ALLTOALL_TAG;
    if packsize >= s.xsize {
        let pairs = (0..s.size())
            .map(|i| Ok((block(send, i)?, block(recv, i)?, i)))
            .collect::<Result<Vec<_>>>()?;
        return exchange(s, &pairs, t);
    }
    // Local phase: all to all among the local processes.
    let mine = s.lmn(me);
    let locals = s.locals(mine);
    let pairs = locals
        .iter()
        .map(|&r| Ok((block(send, r)?, block(recv, r)?, r)))
        .collect::<Result<Vec<_>>>()?;
    exchange(s, &pairs, t)?;
    // Global phase: each client in turn sends every other client, through the masters,
    // what its processes have for that client's processes.
    let n = s.nmasters();
    for i in 0..n {
        let rootmaster = s.masters[i];
        let senders = s.locals(i);
        if s.are_local(me, rootmaster) {
            for j in (0..n).filter(|&j| j != i) {
                let receivers = s.locals(j);
                // Sender-major: this process's blocks for the receivers (reading 45).
                let mut part = Vec::new();
                for &r in &receivers {
                    part.extend_from_slice(&pack32(block(send, r)?)?);
                }
                if me != rootmaster {
                    s.send_bytes(&part, rootmaster, t)?;
                    continue;
                }
                let size = senders.len() * receivers.len() * packsize;
                let mut tmp = vec![0u8; size];
                let mut off = 0;
                for &q in &senders {
                    if q == me {
                        tmp[off..off + part.len()].copy_from_slice(&part);
                        off += part.len();
                    } else {
                        off += s.recv_bytes(&mut tmp[off..], q, t)?;
                    }
                }
                s.send_bytes(&tmp[..off], s.masters[j], t)?;
            }
        } else {
            let lm = s.masters[mine];
            let nroot = senders.len();
            if me == lm {
                let size = nroot * locals.len() * packsize;
                let mut tmp = vec![0u8; size];
                let got = s.recv_bytes(&mut tmp, rootmaster, t)?;
                if got != size {
                    return err(
                        ErrorClass::Truncate,
                        format!("all-to-all block of {got} bytes from rank {rootmaster}, {size} expected"),
                    );
                }
                for (k, &r) in locals.iter().enumerate() {
                    let mut mine_part = Vec::with_capacity(nroot * packsize);
                    for si in 0..nroot {
                        let o = (si * locals.len() + k) * packsize;
                        mine_part.extend_from_slice(&tmp[o..o + packsize]);
                    }
                    if r == me {
                        unpack_from(&senders, &mine_part, recv, packsize)?;
                    } else {
                        s.send_bytes(&mine_part, r, t)?;
                    }
                }
            } else {
                let mut part = vec![0u8; nroot * packsize];
                s.recv_bytes(&mut part, lm, t)?;
                unpack_from(&senders, &part, recv, packsize)?;
            }
        }
    }
    Ok(())
}

/// Unpacks one packed block per sender into the receive blocks of the senders.
fn unpack_from(senders: &[usize], data: &[u8], recv: Buf, packsize: usize) -> Result<()> {
    for (si, &q) in senders.iter().enumerate() {
        unpack32(block(recv, q)?, &data[si * packsize..(si + 1) * packsize])?;
    }
    Ok(())
}

/// `MPI_Alltoallv` (4.23).
pub(crate) fn alltoallv(s: &Span, send: &VBuf<'_>, recv: &VBuf<'_>) -> Result<()> {
    let pairs = (0..s.size())
        .map(|i| Ok((vblock(send, i)?, vblock(recv, i)?, i)))
        .collect::<Result<Vec<_>>>()?;
    exchange(s, &pairs, ALLTOALLV_TAG)
}

// ----- 4.16-4.18, 4.21 Reductions ----------------------------------------------------

/// `inout = input op inout` (the reduction function with invec `input`).
fn apply(input: Buf, inout: Buf, op: OpId) -> Result<()> {
    // SAFETY: both buffers hold `count` elements of the type (the callers' contract).
    unsafe { super::reduction::reduce_local(input.addr, inout.addr, input.count, input.ty, op) }
}

/// `MPI_Reduce` (4.16). `rbuf` matters at the root.
pub(crate) fn reduce(
    s: &Span,
    sbuf: Input<usize>,
    rbuf: usize,
    count: i64,
    ty: TypeId,
    op: OpId,
    root: i32,
) -> Result<()> {
    let root = s.check_root(root)?;
    let n = count_of(count, "count")?;
    let b = |addr| Buf { addr, count, ty };
    // In place (at the root only): the root's data is in `rbuf`, which the reduction
    // overwrites, so it is read from a copy.
    let saved;
    let sbuf = match sbuf {
        Input::Data(a) => a,
        Input::InPlace if s.rank == root => {
            saved = Scratch::new(ty, n)?;
            copy(b(rbuf), saved.buf(ty, n))?;
            saved.base
        }
        Input::InPlace => return in_place_off_root(),
    };
    // Checks the operation against the type before any message moves.
    let probe = Scratch::new(ty, 1)?;
    apply(probe.buf(ty, 0), probe.buf(ty, 0), op)?;
    if super::op_commutative(op)? {
        reduce_commutative(s, b(sbuf), b(rbuf), n, op, root)
    } else {
        reduce_noncommutative(s, b(sbuf), b(rbuf), n, op, root)
    }
}

fn reduce_commutative(
    s: &Span,
    sbuf: Buf,
    rbuf: Buf,
    n: usize,
    op: OpId,
    root: usize,
) -> Result<()> {
    let t = REDUCE_TAG;
    let ty = sbuf.ty;
    let me = s.rank;
    let mine = s.lmn(me);
    let lm = s.masters[mine];
    let root_local = s.are_local(me, root);
    let target = if root_local { root } else { lm };
    // Local phase: reduce to the root, or to the local master's `redbuf`.
    if me != target {
        return s.send(sbuf, target, t);
    }
    let tmp = Scratch::new(ty, n)?;
    let red = Scratch::new(ty, n)?;
    let acc = if me == root { rbuf } else { red.buf(ty, n) };
    copy(sbuf, acc)?;
    for r in s.locals(mine).into_iter().filter(|&r| r != me) {
        s.recv(tmp.buf(ty, n), r, t)?;
        apply(tmp.buf(ty, n), acc, op)?;
    }
    // Global phase.
    let nm = s.nmasters();
    let rootnum = s.lmn(root);
    if s.linear() {
        if me == root {
            for i in (0..nm).filter(|&i| i != rootnum) {
                s.recv(tmp.buf(ty, n), s.masters[i], t)?;
                apply(tmp.buf(ty, n), acc, op)?;
            }
        } else {
            s.send(acc, root, t)?;
        }
        return Ok(());
    }
    let vnum = (mine + nm - rootnum) % nm;
    let dim = cubedim(nm);
    let mut mask = 1;
    for _ in 0..dim {
        if vnum & mask != 0 {
            let mut peer = s.masters[((vnum & !mask) + rootnum) % nm];
            if s.are_local(peer, root) {
                peer = root;
            }
            return s.send(acc, peer, t);
        }
        let peer = vnum | mask;
        if peer < nm {
            s.recv(tmp.buf(ty, n), s.masters[(peer + rootnum) % nm], t)?;
            apply(tmp.buf(ty, n), acc, op)?;
        }
        mask <<= 1;
    }
    Ok(())
}

fn reduce_noncommutative(
    s: &Span,
    sbuf: Buf,
    rbuf: Buf,
    n: usize,
    op: OpId,
    root: usize,
) -> Result<()> {
    let t = REDUCE_TAG;
    let ty = sbuf.ty;
    let me = s.rank;
    let np = s.size();
    if me != root {
        return s.send(sbuf, root, t);
    }
    if me == np - 1 {
        copy(sbuf, rbuf)?;
    } else {
        s.recv(rbuf, np - 1, t)?;
    }
    let tmp = Scratch::new(ty, n)?;
    for i in (0..np - 1).rev() {
        let input = if i == me {
            sbuf
        } else {
            s.recv(tmp.buf(ty, n), i, t)?;
            tmp.buf(ty, n)
        };
        apply(input, rbuf, op)?;
    }
    Ok(())
}

/// `MPI_Allreduce` (4.21, lost in the scan: reduce to 0, then broadcast from 0,
/// reading 43).
pub(crate) fn allreduce(
    s: &Span,
    sbuf: Input<usize>,
    rbuf: usize,
    count: i64,
    ty: TypeId,
    op: OpId,
) -> Result<()> {
    // In place everywhere: the others' data is in `rbuf`, which a non-root's reduce
    // only reads.
    let sbuf = match sbuf {
        Input::InPlace if s.rank != 0 => Input::Data(rbuf),
        other => other,
    };
    reduce(s, sbuf, rbuf, count, ty, op, 0)?;
    bcast(
        s,
        Buf {
            addr: rbuf,
            count,
            ty,
        },
        0,
    )
}

/// `MPI_Reduce_scatter` (4.17): reduce to 0, then scatterv from 0.
pub(crate) fn reduce_scatter(
    s: &Span,
    sbuf: Input<usize>,
    rbuf: usize,
    rcounts: &[i64],
    ty: TypeId,
    op: OpId,
) -> Result<()> {
    let np = s.size();
    let counts = rcounts.get(..np).ok_or_else(|| {
        Error::new(
            ErrorClass::Arg,
            format!("recvcounts has fewer than {np} entries"),
        )
    })?;
    let mut total = 0usize;
    let mut disps = Vec::with_capacity(np);
    for (i, &c) in counts.iter().enumerate() {
        disps.push(total as i64);
        total += count_of(c, &format!("recvcounts[{i}]"))?;
    }
    let tmp = Scratch::new(ty, if s.rank == 0 { total } else { 0 })?;
    // In place: the input is in `rbuf` (read by the reduce, written by the scatterv).
    let sbuf = match sbuf {
        Input::Data(a) => a,
        Input::InPlace => rbuf,
    };
    reduce(s, Input::Data(sbuf), tmp.base, total as i64, ty, op, 0)?;
    let v = VBuf {
        addr: tmp.base,
        counts,
        displs: &disps,
        ty,
    };
    scatterv(
        s,
        &v,
        Input::Data(Buf {
            addr: rbuf,
            count: counts[s.rank],
            ty,
        }),
        0,
    )
}

/// `MPI_Scan` (4.18; its first lines are lost in the scan, reading 42).
pub(crate) fn scan(
    s: &Span,
    sbuf: Input<usize>,
    rbuf: usize,
    count: i64,
    ty: TypeId,
    op: OpId,
) -> Result<()> {
    let n = count_of(count, "count")?;
    let me = s.rank;
    let b = |addr| Buf { addr, count, ty };
    if let Input::Data(a) = sbuf {
        copy(b(a), b(rbuf))?;
    }
    if me > 0 {
        let tmp = Scratch::new(ty, n)?;
        s.recv(tmp.buf(ty, n), me - 1, SCAN_TAG)?;
        apply(tmp.buf(ty, n), b(rbuf), op)?;
    }
    if me + 1 < s.size() {
        s.send(b(rbuf), me + 1, SCAN_TAG)?;
    }
    Ok(())
}

// ----- 4.3 Context ids -------------------------------------------------------------------

/// The point-to-point context id of a new communicator derived from `s`'s (4.3.1,
/// 4.4, 4.6, 4.7): the maximum of every member's `IMPI_max_cid` plus one. This
/// process's `IMPI_max_cid` is the collective id of its highest context in use
/// (reading 38), so the new pair is free at every member.
pub(crate) fn new_cid(s: &Span) -> Result<u32> {
    let mine: u64 = runtime::with(|rt| Ok(crate::context::max_cid(rt)))?;
    let mut max: u64 = 0;
    let u8t = Predefined::Uint64 as TypeId;
    allreduce(
        s,
        Input::Data(&mine as *const u64 as usize),
        &mut max as *mut u64 as usize,
        1,
        u8t,
        PredefinedOp::Max as OpId,
    )?;
    cid_above(max)
}

/// The new pair's point-to-point id above the members' highest `IMPI_max_cid`
/// (4.3.1: max + 1, its collective id max + 2), or "out of contexts".
fn cid_above(max: u64) -> Result<u32> {
    if max >= MAX_CID - 1 || max + 1 >= 2 * crate::context::SLOTS as u64 {
        return err(
            ErrorClass::Other,
            format!("out of context ids: the members' highest is {max}"),
        );
    }
    Ok((max + 1) as u32)
}

// ----- 4.8, 4.9 Intercommunicators -----------------------------------------------------

/// `IMPI_MERGE_TAG` of 4.25.
pub const MERGE_TAG: i32 = 220;

/// Whether this process is a rank of an IMPI job (then intercommunicators are made
/// as chapter 4 says, by every rank alike).
pub(crate) fn in_job() -> Result<bool> {
    runtime::with(|rt| Ok(rt.impi_places.is_some()))
}

/// This process's `IMPI_max_cid`, made odd as 4.8 and 4.9 begin (oxmpi's is the
/// collective id of a pair, odd already).
fn odd_max_cid() -> Result<u64> {
    runtime::with(|rt| Ok(crate::context::max_cid(rt) | 1))
}

fn u64s(v: &mut [u64]) -> Buf {
    Buf {
        addr: v.as_mut_ptr() as usize,
        count: v.len() as i64,
        ty: Predefined::Uint64 as TypeId,
    }
}

fn ints(v: &mut [i32]) -> Buf {
    Buf {
        addr: v.as_mut_ptr() as usize,
        count: v.len() as i64,
        ty: Predefined::Int as TypeId,
    }
}

/// The context agreement and the exchange of groups of `MPI_Intercomm_create` (4.8):
/// the local members' `IMPI_max_cid` reduced to the local leader, the leaders' swap of
/// (maximum, group size) and of their groups' `MPI_COMM_WORLD` ranks over `peer`, each
/// broadcast in the local group. `lranks` are the local group's world ranks; `peer` is
/// given at the leader alone, checked (an error there reaches the local members as a
/// remote group of size 0). Returns
/// the new context id and the remote group's world ranks. The swap of (maximum, size)
/// is two `IMPI_UINT8` (reading 51).
pub(crate) fn intercomm_create(
    lcomm: CommId,
    lleader: i32,
    lranks: &[u32],
    peer: Option<Result<CommId>>,
    pleader: i32,
    tag: i32,
) -> Result<(u32, Vec<u32>)> {
    let mut mine = [odd_max_cid()?];
    let mut max = [0u64];
    let u8t = Predefined::Uint64 as TypeId;
    let (pcomm, failed) = match peer {
        Some(Ok(p)) => (Some(p), None),
        Some(Err(e)) => (None, Some(e)),
        None => (None, None),
    };
    // SAFETY: each buffer holds its one u64 for the call.
    unsafe {
        super::reduction::reduce(
            Input::Data(mine.as_mut_ptr() as usize),
            max.as_mut_ptr() as usize,
            1,
            u8t,
            PredefinedOp::Max as OpId,
            lleader,
            lcomm,
        )?;
    }
    let mut inmsg = [0u64; 2];
    if let Some(pcomm) = pcomm {
        let mut out = [max[0], lranks.len() as u64];
        // SAFETY: both buffers hold their two u64 for the call.
        unsafe {
            p2p::sendrecv(
                u64s(&mut out),
                pleader,
                tag,
                u64s(&mut inmsg),
                pleader,
                tag,
                pcomm,
            )?;
        }
        inmsg[0] = inmsg[0].max(max[0]);
    }
    // SAFETY: as above.
    unsafe { super::movement::bcast(u64s(&mut inmsg), lleader, lcomm)? };
    if let Some(e) = failed {
        return Err(e);
    }
    if inmsg[1] == 0 {
        return err(
            ErrorClass::Other,
            format!(
                "MPI_Intercomm_create: the local leader (rank {lleader}) refused its arguments"
            ),
        );
    }
    let ctx = cid_above(inmsg[0])?;
    let world = runtime::with(|rt| Ok(rt.device.world_size()))?;
    let rgsize = usize::try_from(inmsg[1])
        .ok()
        .filter(|&n| n >= 1 && n <= world as usize)
        .ok_or_else(|| {
            Error::new(
                ErrorClass::Intern,
                format!(
                    "MPI_Intercomm_create: remote group of {} processes",
                    inmsg[1]
                ),
            )
        })?;
    let mut rranks = vec![0i32; rgsize];
    if let Some(pcomm) = pcomm {
        let mut l: Vec<i32> = lranks.iter().map(|&w| w as i32).collect();
        // SAFETY: each vector holds its counted ints for the call.
        unsafe {
            p2p::sendrecv(
                ints(&mut l),
                pleader,
                tag,
                ints(&mut rranks),
                pleader,
                tag,
                pcomm,
            )?;
        }
    }
    // SAFETY: as above.
    unsafe { super::movement::bcast(ints(&mut rranks), lleader, lcomm)? };
    rranks
        .iter()
        .map(|&r| {
            u32::try_from(r).ok().filter(|&w| w < world).ok_or_else(|| {
                Error::new(
                    ErrorClass::Intern,
                    format!("MPI_Intercomm_create: remote world rank {r} of {world}"),
                )
            })
        })
        .collect::<Result<Vec<u32>>>()
        .map(|v| (ctx, v))
}

/// `IMPI_DUP_TAG` and `IMPI_COMM_FREE_TAG` of 4.25.
pub const DUP_TAG: i32 = 210;
pub const COMM_FREE_TAG: i32 = 230;

/// The leaders' exchange that 4.5, 4.6 and 4.9 share, over intercommunicator `comm`
/// (this process's rank `rank` in its group, `rsize` ranks in the remote one), in its
/// collective context with `tag`: every non-leader sends `up` to the remote leader
/// (rank 0); each leader receives the remote non-leaders' messages (each into `got`,
/// then `fold(got)`), swaps `swap()` with the other leader (receiving into `down`,
/// then `fold(down)`), and sends `swap()` again to each remote non-leader, which
/// receives it into `down`. The messages are `MPI_UINT64_T` (`IMPI_UINT8`).
fn leaders_exchange(
    comm: CommId,
    (rank, rsize, tag): (i32, i32, i32),
    up: &mut [u64],
    down: &mut [u64],
    mut fold: impl FnMut(&[u64]),
    mut swap: impl FnMut() -> Vec<u64>,
) -> Result<()> {
    let send = |v: &mut [u64], dest: i32| -> Result<()> {
        // SAFETY: `v` is alive until the wait returns.
        wait_coll(unsafe { p2p::isend_coll(u64s(v), dest, tag, comm)? }).map(drop)
    };
    let recv = |v: &mut [u64], src: i32| -> Result<()> {
        // SAFETY: as for `send`.
        wait_coll(unsafe { p2p::irecv_coll(u64s(v), src, tag, comm)? }).map(drop)
    };
    if rank != 0 {
        send(up, 0)?;
        return recv(down, 0);
    }
    let mut got = vec![0u64; up.len()];
    for i in 1..rsize {
        recv(&mut got, i)?;
        fold(&got);
    }
    let mut out = swap();
    // SAFETY: `out` and `down` are alive until both waits return.
    let (s, r) = unsafe {
        (
            p2p::isend_coll(u64s(&mut out), 0, tag, comm)?,
            p2p::irecv_coll(u64s(down), 0, tag, comm)?,
        )
    };
    wait_coll(s)?;
    wait_coll(r)?;
    fold(down);
    for i in 1..rsize {
        send(&mut swap()[..], i)?;
    }
    Ok(())
}

/// The highest `IMPI_max_cid` of both groups of intercommunicator `comm` by the
/// leaders' exchange (4.6's, and 4.9's, which also swaps `high`): `extra`, when
/// given, travels after the maximum from each leader, and what the remote group's
/// leader sent of it is returned.
fn inter_max_cid(
    comm: CommId,
    (rank, rsize, tag): (i32, i32, i32),
    extra: Option<u64>,
) -> Result<(u64, Option<u64>)> {
    let mine = odd_max_cid()?;
    let mut up = [mine];
    let mut down = vec![0u64; 1 + usize::from(extra.is_some())];
    let max = std::cell::Cell::new(mine);
    leaders_exchange(
        comm,
        (rank, rsize, tag),
        &mut up,
        &mut down,
        |v| max.set(max.get().max(v[0])),
        || std::iter::once(max.get()).chain(extra).collect(),
    )?;
    let max = if rank == 0 { max.get() } else { down[0] };
    Ok((max, extra.map(|_| down[1])))
}

/// The context agreement of `MPI_Intercomm_merge` (4.9) with `IMPI_MERGE_TAG`.
/// Returns the new context id and the remote group's `high`.
pub(crate) fn intercomm_merge(
    comm: CommId,
    rank: i32,
    rsize: i32,
    high: bool,
) -> Result<(u32, bool)> {
    let (max, rhigh) = inter_max_cid(comm, (rank, rsize, MERGE_TAG), Some(u64::from(high)))?;
    Ok((cid_above(max)?, rhigh != Some(0)))
}

/// The context agreement of `MPI_Comm_dup` on an intercommunicator (4.6) with
/// `IMPI_DUP_TAG`: the new point-to-point context id.
pub(crate) fn intercomm_dup(comm: CommId, rank: i32, rsize: i32) -> Result<u32> {
    cid_above(inter_max_cid(comm, (rank, rsize, DUP_TAG), None)?.0)
}

/// `MPI_Comm_free` of an intercommunicator (4.5): the barrier made of empty messages
/// with `IMPI_COMM_FREE_TAG`, from the non-leaders to the remote leader, between the
/// leaders, and from each leader to the remote non-leaders.
pub(crate) fn intercomm_free_barrier(comm: CommId, rank: i32, rsize: i32) -> Result<()> {
    leaders_exchange(
        comm,
        (rank, rsize, COMM_FREE_TAG),
        &mut [],
        &mut [],
        |_| {},
        Vec::new,
    )
}

/// The allgather of (color, key, rank) of `MPI_Comm_split` (4.7), as the payloads
/// the split's member selection reads.
pub(crate) fn split_exchange(s: &Span, color: i32, key: i32) -> Result<Vec<(i32, i32)>> {
    let np = s.size();
    let mine = [color, key, s.rank as i32];
    let mut all = vec![0i32; 3 * np];
    let int = Predefined::Int as TypeId;
    allgather(
        s,
        Input::Data(Buf {
            addr: mine.as_ptr() as usize,
            count: 3,
            ty: int,
        }),
        Buf {
            addr: all.as_mut_ptr() as usize,
            count: 3,
            ty: int,
        },
    )?;
    Ok(all.chunks_exact(3).map(|c| (c[0], c[1])).collect())
}

/// The data of an all-to-all's send argument; `None` in place (MPI-2, which takes
/// oxmpi's own algorithm at every rank, reading 46).
pub(crate) fn data<T: Copy>(i: &Input<T>) -> Option<T> {
    match i {
        Input::Data(d) => Some(*d),
        Input::InPlace => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cube_helpers_follow_4_2() {
        assert_eq!(highbit(5, 3), 2);
        assert_eq!(highbit(5, 2), 0);
        assert_eq!(highbit(8, 2), -1);
        assert_eq!(cubedim(1), 0);
        assert_eq!(cubedim(2), 1);
        assert_eq!(cubedim(3), 2);
        assert_eq!(cubedim(4), 2);
        assert_eq!(cubedim(5), 3);
    }
}
