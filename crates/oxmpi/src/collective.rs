//! Collective communication: [`CommunicatorCollectives`] (the calls every member makes
//! alike: barrier, all-gather, all-to-all, all-reduce, reduce-scatter, scans) and
//! [`Root`] (the rooted calls, made on the root's [`Process`]: broadcast, gather,
//! scatter, reduce), with their reduction [`Operation`]s and the [`Partition`]s of the
//! varcount calls.
//!
//! Buffers are typed by [`Equivalence`]. The buffers of a
//! reduction hold the same element type (the operation is typed too); the buffers of
//! the calls that only move data may differ in type as long as their engine elements
//! match (an `[i32; 2]` sent, two `i32` received), as MPI's type-signature rule asks.
//! A buffer cut into one block per process (the receive buffer of a gather, both
//! buffers of an all-to-all) must hold a whole number of blocks: its length in engine
//! elements divided by the number of processes is the block length, and any other
//! length fails with class `MPI_ERR_COUNT`.
//!
//! ```no_run
//! use oxmpi::collective::SystemOperation;
//! use oxmpi::traits::*;
//! let universe = oxmpi::initialize()?;
//! let world = universe.world();
//! let root = world.process_at_rank(0);
//! let mut x = if world.rank() == 0 { 42u64 } else { 0 };
//! root.broadcast_into(&mut x)?;
//! let mut total = 0u64;
//! world.all_reduce_into(&x, &mut total, SystemOperation::sum())?;
//! assert_eq!(total, 42 * world.size() as u64);
//! # Ok::<(), oxmpi::Error>(())
//! ```
//!
//! On an intercommunicator, the rooted calls follow MPI's rule for the root argument:
//! the root calls the `_root` method on `process_at_rank(oxmpi::ROOT)`, the other
//! members of its group call the plain method on `process_at_rank(oxmpi::PROC_NULL)`,
//! and the other group names the root by its rank in the remote group.

mod operation;
mod partition;

pub use operation::{reduce_local_into, Location, Operation, SystemOperation, UserOperation};
pub use partition::{Partition, PartitionMut, PartitionedBuffer, PartitionedBufferMut};

use crate::datatype::{Buffer, BufferMut, Equivalence};
use crate::error::{engine, Error, ErrorClass, Result};
use crate::raw::{recv_buf, send_buf, Fixup};
use crate::request::{Request, Scope, StaticScope};
use crate::topology::{AsCommId, Communicator, Process, Rank};
use operation::{same_length, ReductionType};
use oxmpi_core::coll::{self, How, Input, Shape, VBuf};
use oxmpi_core::comm::CommId;
use oxmpi_core::device::ReqId;
use oxmpi_core::p2p::Buf;
use oxmpi_core::types::TypeId;
use partition::blocks;

/// The facts about the communicator a call needs.
fn shape(method: &'static str, comm: CommId) -> Result<Shape> {
    coll::shape(comm).map_err(engine(method))
}

/// The block length of a buffer of `len` engine elements cut into `peers` equal blocks.
fn per_block(method: &'static str, which: &str, len: usize, peers: usize) -> Result<usize> {
    if peers == 0 || len % peers != 0 {
        return Err(Error::new(
            method,
            ErrorClass::Count,
            format_args!(
                "the {which} buffer holds {len} elements, not a whole number of blocks for {peers} processes"
            ),
        ));
    }
    Ok(len / peers)
}

/// A send buffer cut into `peers` equal blocks: the engine's view of one block.
fn send_blocks<B: Buffer + ?Sized>(method: &'static str, b: &B, peers: usize) -> Result<Buf> {
    let mut sb = send_buf(method, b)?;
    sb.count = per_block(method, "send", sb.count as usize, peers)? as i64;
    Ok(sb)
}

/// A receive buffer cut into `peers` equal blocks: the engine's view of one block and
/// the repair step of the whole buffer.
fn recv_blocks<B: BufferMut + ?Sized>(
    method: &'static str,
    b: &mut B,
    peers: usize,
) -> Result<(Buf, Fixup)> {
    let mut r = recv_buf(method, b)?;
    r.buf.count = per_block(method, "receive", r.buf.count as usize, peers)? as i64;
    Ok((r.buf, r.fixup))
}

/// Calls that combine values or cut buffers into varying blocks work on plain buffers
/// of their element type, not on views.
pub(crate) fn no_view(method: &'static str, is_view: bool) -> Result<()> {
    if is_view {
        return Err(Error::new(
            method,
            ErrorClass::Buffer,
            "this call does not take a buffer seen through a datatype (View or MutView)",
        ));
    }
    Ok(())
}

/// A placeholder for a buffer argument that is insignificant on this process.
fn unused() -> Buf {
    Buf {
        addr: 0,
        count: 0,
        ty: oxmpi_datatype::Predefined::Byte as TypeId,
    }
}

/// An empty varcount argument, insignificant on this process.
fn unused_v() -> VBuf<'static> {
    VBuf {
        addr: 0,
        counts: &[],
        displs: &[],
        ty: oxmpi_datatype::Predefined::Byte as TypeId,
    }
}

/// A whole receive buffer: the engine's view and the repair step.
fn whole_buf<B: BufferMut + ?Sized>(method: &'static str, b: &mut B) -> Result<(Buf, Fixup)> {
    let r = recv_buf(method, b)?;
    Ok((r.buf, r.fixup))
}

/// Runs the repair step of a receive buffer and turns the engine's result into ours.
///
/// # Safety
/// As [`Fixup::apply`]: the buffer is alive and no longer written.
unsafe fn finish(method: &'static str, r: oxmpi_core::Result<()>, fixups: &[Fixup]) -> Result<()> {
    for f in fixups {
        // SAFETY: forwarded contract.
        unsafe { f.apply() };
    }
    r.map_err(engine(method))
}

/// The request of a started nonblocking collective.
fn started(method: &'static str, r: oxmpi_core::Result<Option<ReqId>>) -> Result<ReqId> {
    r.map_err(engine(method))?
        .ok_or_else(|| Error::new(method, ErrorClass::Intern, "the collective made no request"))
}

fn root_error(method: &'static str, root: Rank, s: &Shape, want_root: bool) -> Error {
    let detail = if want_root {
        format!(
            "this process (rank {}) is not the root {root}; the other processes call the method without `_root`",
            s.rank
        )
    } else {
        format!(
            "this process (rank {}) is the root {root}; the root calls the `_root` variant",
            s.rank
        )
    };
    Error::new(method, ErrorClass::Root, detail)
}

/// Checks that this process is (or is not) the root.
fn rooted(method: &'static str, comm: CommId, root: Rank, want_root: bool) -> Result<Shape> {
    let s = shape(method, comm)?;
    if s.is_root(root) != want_root {
        return Err(root_error(method, root, &s, want_root));
    }
    Ok(s)
}

/// The collectives every member of a communicator calls alike.
///
/// Implemented for every [`Communicator`]; bring it into scope with
/// `use oxmpi::traits::*;`.
pub trait CommunicatorCollectives: Communicator {
    /// Waits until every member has called it (`MPI_Barrier`).
    fn barrier(&self) -> Result<()> {
        coll::barrier(self.comm_id()).map_err(engine("barrier"))
    }

    /// Gathers `sendbuf` of every process into `recvbuf` of every process, in rank order
    /// (`MPI_Allgather`). `recvbuf` holds one block per process.
    fn all_gather_into<S, R>(&self, sendbuf: &S, recvbuf: &mut R) -> Result<()>
    where
        S: Buffer + ?Sized,
        R: BufferMut + ?Sized,
    {
        const M: &str = "all_gather_into";
        let s = shape(M, self.comm_id())?;
        let sb = send_buf(M, sendbuf)?;
        let (rb, fix) = recv_blocks(M, recvbuf, s.peers)?;
        // SAFETY: `sb` and `rb` describe the borrowed buffers (`rb` one block per process,
        // so `peers * per` values, all inside `recvbuf`) for the whole blocking call.
        let r = unsafe { coll::allgather(Input::Data(sb), rb, self.comm_id()) };
        // SAFETY: the call is over.
        unsafe { finish(M, r, &[fix]) }
    }

    /// Gathers `sendbuf` of every process into the blocks of `recvbuf` on every process
    /// (`MPI_Allgatherv`): process `i`'s values go to block `i`.
    fn all_gather_varcount_into<S, R>(&self, sendbuf: &S, recvbuf: &mut R) -> Result<()>
    where
        S: Buffer + ?Sized,
        R: PartitionedBufferMut + ?Sized,
    {
        const M: &str = "all_gather_varcount_into";
        let s = shape(M, self.comm_id())?;
        let d = R::Element::equivalent_datatype();
        no_view(M, recvbuf.is_view())?;
        let b = blocks(
            M,
            recvbuf.counts(),
            recvbuf.displs(),
            recvbuf.count(),
            d.multiplicity(),
            s.peers,
        )?;
        let sb = send_buf(M, sendbuf)?;
        let n = recvbuf.count();
        let p = recvbuf.pointer_mut();
        let v = VBuf {
            addr: p as usize,
            counts: &b.counts,
            displs: &b.displs,
            ty: d.type_id(),
        };
        // SAFETY: the blocks were checked to lie inside `recvbuf`; both buffers are
        // borrowed for the whole blocking call.
        let r = unsafe { coll::allgatherv(Input::Data(sb), v, self.comm_id()) };
        // SAFETY: the call is over.
        unsafe { finish(M, r, &[Fixup::new(p, n)]) }
    }

    /// Sends block `i` of `sendbuf` to process `i` and receives block `j` of `recvbuf`
    /// from process `j` (`MPI_Alltoall`). Both buffers hold one block per process.
    fn all_to_all_into<S, R>(&self, sendbuf: &S, recvbuf: &mut R) -> Result<()>
    where
        S: Buffer + ?Sized,
        R: BufferMut + ?Sized,
    {
        const M: &str = "all_to_all_into";
        let s = shape(M, self.comm_id())?;
        let sb = send_blocks(M, sendbuf, s.peers)?;
        let (rb, fix) = recv_blocks(M, recvbuf, s.peers)?;
        // SAFETY: both describe `peers` blocks inside the borrowed buffers.
        let r = unsafe { coll::alltoall(Input::Data(sb), rb, self.comm_id()) };
        // SAFETY: the call is over.
        unsafe { finish(M, r, &[fix]) }
    }

    /// Sends block `i` of `sendbuf` to process `i` and receives the values from process
    /// `j` into block `j` of `recvbuf` (`MPI_Alltoallv`).
    fn all_to_all_varcount_into<S, R>(&self, sendbuf: &S, recvbuf: &mut R) -> Result<()>
    where
        S: PartitionedBuffer + ?Sized,
        R: PartitionedBufferMut + ?Sized,
    {
        const M: &str = "all_to_all_varcount_into";
        let s = shape(M, self.comm_id())?;
        let d = S::Element::equivalent_datatype();
        let e = R::Element::equivalent_datatype();
        no_view(M, sendbuf.is_view() || recvbuf.is_view())?;
        let sbl = blocks(
            M,
            sendbuf.counts(),
            sendbuf.displs(),
            sendbuf.count(),
            d.multiplicity(),
            s.peers,
        )?;
        let rbl = blocks(
            M,
            recvbuf.counts(),
            recvbuf.displs(),
            recvbuf.count(),
            e.multiplicity(),
            s.peers,
        )?;
        let n = recvbuf.count();
        let p = recvbuf.pointer_mut();
        let sv = VBuf {
            addr: sendbuf.pointer() as usize,
            counts: &sbl.counts,
            displs: &sbl.displs,
            ty: d.type_id(),
        };
        let rv = VBuf {
            addr: p as usize,
            counts: &rbl.counts,
            displs: &rbl.displs,
            ty: e.type_id(),
        };
        // SAFETY: all blocks were checked to lie inside their borrowed buffers.
        let r = unsafe { coll::alltoallv(Input::Data(sv), rv, self.comm_id()) };
        // SAFETY: the call is over.
        unsafe { finish(M, r, &[Fixup::new(p, n)]) }
    }

    /// Combines `sendbuf` of every process with `op` and stores the result in `recvbuf`
    /// of every process (`MPI_Allreduce`). The buffers have the same length.
    fn all_reduce_into<S, R, O>(&self, sendbuf: &S, recvbuf: &mut R, op: O) -> Result<()>
    where
        S: Buffer + ?Sized,
        R: BufferMut<Element = S::Element> + ?Sized,
        O: Operation<S::Element>,
    {
        reduce_like(
            "all_reduce_into",
            Like::All,
            self.comm_id(),
            sendbuf,
            recvbuf,
            &op,
        )
    }

    /// Combines `sendbuf` of every process with `op` and scatters the result: process
    /// `i` receives block `i` (`MPI_Reduce_scatter_block`). `sendbuf` holds one block of
    /// `recvbuf.count()` values per process of the (local) group.
    fn reduce_scatter_block_into<S, R, O>(&self, sendbuf: &S, recvbuf: &mut R, op: O) -> Result<()>
    where
        S: Buffer + ?Sized,
        R: BufferMut<Element = S::Element> + ?Sized,
        O: Operation<S::Element>,
    {
        const M: &str = "reduce_scatter_block_into";
        no_view(
            M,
            sendbuf.datatype_view().is_some() || recvbuf.datatype_view().is_some(),
        )?;
        let s = shape(M, self.comm_id())?;
        let per = per_block(M, "send", sendbuf.count(), s.local)?;
        same_length(M, per, recvbuf.count())?;
        let rt = ReductionType::new::<S::Element, O>(M, &op, per)?;
        let n = recvbuf.count();
        let p = recvbuf.pointer_mut();
        // SAFETY: `sendbuf` holds `local * per` values and `recvbuf` `per`, both borrowed
        // for the whole call; `rt` describes `per` values.
        let r = unsafe {
            coll::reduce_scatter_block(
                Input::Data(sendbuf.pointer() as usize),
                p as usize,
                rt.count.into(),
                rt.ty,
                op.op_id(),
                self.comm_id(),
            )
        };
        // SAFETY: the call is over.
        unsafe { finish(M, r, &[Fixup::new(p, n)]) }
    }

    /// Inclusive prefix reduction (`MPI_Scan`): process `i` receives the combination of
    /// the values of processes `0..=i`, in rank order.
    fn scan_into<S, R, O>(&self, sendbuf: &S, recvbuf: &mut R, op: O) -> Result<()>
    where
        S: Buffer + ?Sized,
        R: BufferMut<Element = S::Element> + ?Sized,
        O: Operation<S::Element>,
    {
        reduce_like(
            "scan_into",
            Like::Scan,
            self.comm_id(),
            sendbuf,
            recvbuf,
            &op,
        )
    }

    /// Exclusive prefix reduction (`MPI_Exscan`): process `i > 0` receives the
    /// combination of the values of processes `0..i`; the receive buffer of process 0 is
    /// left as it was.
    fn exclusive_scan_into<S, R, O>(&self, sendbuf: &S, recvbuf: &mut R, op: O) -> Result<()>
    where
        S: Buffer + ?Sized,
        R: BufferMut<Element = S::Element> + ?Sized,
        O: Operation<S::Element>,
    {
        reduce_like(
            "exclusive_scan_into",
            Like::Exscan,
            self.comm_id(),
            sendbuf,
            recvbuf,
            &op,
        )
    }

    /// Starts a barrier (`MPI_Ibarrier`): the request completes once every member has
    /// started it.
    fn immediate_barrier(&self) -> Result<Request<'static>> {
        const M: &str = "immediate_barrier";
        let id = started(M, coll::barrier_how(self.comm_id(), How::Start))?;
        Ok(Request::new(id, StaticScope, Fixup::none(), M))
    }

    /// Starts [`all_gather_into`](Self::all_gather_into) (`MPI_Iallgather`); the buffers
    /// stay borrowed until the request completes.
    fn immediate_all_gather_into<'a, Sc, S, R>(
        &self,
        scope: Sc,
        sendbuf: &'a S,
        recvbuf: &'a mut R,
    ) -> Result<Request<'a, Sc>>
    where
        Sc: Scope<'a>,
        S: Buffer + ?Sized,
        R: BufferMut + ?Sized,
    {
        const M: &str = "immediate_all_gather_into";
        let s = shape(M, self.comm_id())?;
        let sb = send_buf(M, sendbuf)?;
        let (rb, fix) = recv_blocks(M, recvbuf, s.peers)?;
        // SAFETY: `sb` and `rb` describe buffers borrowed for 'a, and the request cannot
        // outlive 'a nor be dropped before the operation completes.
        let r = unsafe { coll::allgather_how(Input::Data(sb), rb, self.comm_id(), How::Start) };
        Ok(Request::new(started(M, r)?, scope, fix, M))
    }

    /// Starts [`all_to_all_into`](Self::all_to_all_into) (`MPI_Ialltoall`).
    fn immediate_all_to_all_into<'a, Sc, S, R>(
        &self,
        scope: Sc,
        sendbuf: &'a S,
        recvbuf: &'a mut R,
    ) -> Result<Request<'a, Sc>>
    where
        Sc: Scope<'a>,
        S: Buffer + ?Sized,
        R: BufferMut + ?Sized,
    {
        const M: &str = "immediate_all_to_all_into";
        let s = shape(M, self.comm_id())?;
        let sb = send_blocks(M, sendbuf, s.peers)?;
        let (rb, fix) = recv_blocks(M, recvbuf, s.peers)?;
        // SAFETY: as for `immediate_all_gather_into`.
        let r = unsafe { coll::alltoall_how(Input::Data(sb), rb, self.comm_id(), How::Start) };
        Ok(Request::new(started(M, r)?, scope, fix, M))
    }

    /// Starts [`all_reduce_into`](Self::all_reduce_into) (`MPI_Iallreduce`).
    fn immediate_all_reduce_into<'a, Sc, S, R, O>(
        &self,
        scope: Sc,
        sendbuf: &'a S,
        recvbuf: &'a mut R,
        op: O,
    ) -> Result<Request<'a, Sc>>
    where
        Sc: Scope<'a>,
        S: Buffer + ?Sized,
        R: BufferMut<Element = S::Element> + ?Sized,
        O: Operation<S::Element>,
    {
        start_reduce_like(
            "immediate_all_reduce_into",
            Like::All,
            self.comm_id(),
            scope,
            sendbuf,
            recvbuf,
            &op,
        )
    }

    /// Starts [`scan_into`](Self::scan_into) (`MPI_Iscan`).
    fn immediate_scan_into<'a, Sc, S, R, O>(
        &self,
        scope: Sc,
        sendbuf: &'a S,
        recvbuf: &'a mut R,
        op: O,
    ) -> Result<Request<'a, Sc>>
    where
        Sc: Scope<'a>,
        S: Buffer + ?Sized,
        R: BufferMut<Element = S::Element> + ?Sized,
        O: Operation<S::Element>,
    {
        start_reduce_like(
            "immediate_scan_into",
            Like::Scan,
            self.comm_id(),
            scope,
            sendbuf,
            recvbuf,
            &op,
        )
    }

    /// Starts [`exclusive_scan_into`](Self::exclusive_scan_into) (`MPI_Iexscan`).
    fn immediate_exclusive_scan_into<'a, Sc, S, R, O>(
        &self,
        scope: Sc,
        sendbuf: &'a S,
        recvbuf: &'a mut R,
        op: O,
    ) -> Result<Request<'a, Sc>>
    where
        Sc: Scope<'a>,
        S: Buffer + ?Sized,
        R: BufferMut<Element = S::Element> + ?Sized,
        O: Operation<S::Element>,
    {
        start_reduce_like(
            "immediate_exclusive_scan_into",
            Like::Exscan,
            self.comm_id(),
            scope,
            sendbuf,
            recvbuf,
            &op,
        )
    }
}

impl<C: Communicator + ?Sized> CommunicatorCollectives for C {}

/// Which of the like-shaped reductions [`reduce_like`] runs.
#[derive(Clone, Copy)]
enum Like {
    All,
    Scan,
    Exscan,
}

fn reduce_like<S, R, O>(
    method: &'static str,
    like: Like,
    comm: CommId,
    sendbuf: &S,
    recvbuf: &mut R,
    op: &O,
) -> Result<()>
where
    S: Buffer + ?Sized,
    R: BufferMut<Element = S::Element> + ?Sized,
    O: Operation<S::Element>,
{
    no_view(
        method,
        sendbuf.datatype_view().is_some() || recvbuf.datatype_view().is_some(),
    )?;
    same_length(method, sendbuf.count(), recvbuf.count())?;
    let rt = ReductionType::new::<S::Element, O>(method, op, sendbuf.count())?;
    let n = recvbuf.count();
    let p = recvbuf.pointer_mut();
    let f = match like {
        Like::All => coll::allreduce,
        Like::Scan => coll::scan,
        Like::Exscan => coll::exscan,
    };
    // SAFETY: both buffers hold `n` values, `rt.count` elements of `rt.ty`, borrowed
    // (shared and exclusive, so disjoint) for the whole blocking call.
    let r = unsafe {
        f(
            Input::Data(sendbuf.pointer() as usize),
            p as usize,
            rt.count.into(),
            rt.ty,
            op.op_id(),
            comm,
        )
    };
    // SAFETY: the call is over.
    unsafe { finish(method, r, &[Fixup::new(p, n)]) }
}

/// [`reduce_like`] started (`MPI_Iallreduce`, `MPI_Iscan`, `MPI_Iexscan`).
fn start_reduce_like<'a, Sc, S, R, O>(
    method: &'static str,
    like: Like,
    comm: CommId,
    scope: Sc,
    sendbuf: &'a S,
    recvbuf: &'a mut R,
    op: &O,
) -> Result<Request<'a, Sc>>
where
    Sc: Scope<'a>,
    S: Buffer + ?Sized,
    R: BufferMut<Element = S::Element> + ?Sized,
    O: Operation<S::Element>,
{
    no_view(
        method,
        sendbuf.datatype_view().is_some() || recvbuf.datatype_view().is_some(),
    )?;
    same_length(method, sendbuf.count(), recvbuf.count())?;
    let rt = ReductionType::new::<S::Element, O>(method, op, sendbuf.count())?;
    let n = recvbuf.count();
    let p = recvbuf.pointer_mut();
    let f = match like {
        Like::All => coll::allreduce_how,
        Like::Scan => coll::scan_how,
        Like::Exscan => coll::exscan_how,
    };
    // SAFETY: both buffers hold `n` values, `rt.count` elements of `rt.ty`, borrowed
    // (shared and exclusive, so disjoint) for 'a, which the request cannot outlive, nor
    // be dropped before the operation completes.
    let r = unsafe {
        f(
            Input::Data(sendbuf.pointer() as usize),
            p as usize,
            rt.count.into(),
            rt.ty,
            op.op_id(),
            comm,
            How::Start,
        )
    };
    Ok(Request::new(
        started(method, r)?,
        scope,
        Fixup::new(p, n),
        method,
    ))
}

/// The rooted collectives, called on the root's [`Process`]:
/// `world.process_at_rank(0).broadcast_into(&mut x)`.
///
/// The root calls the `_root` variant, the other processes the plain one; calling the
/// wrong one fails with class `MPI_ERR_ROOT` before any communication.
pub trait Root: AsCommId {
    /// The root's rank.
    fn root_rank(&self) -> Rank;

    /// Sends `buffer` of the root to every process, into their `buffer`
    /// (`MPI_Bcast`); every process passes a buffer of the same length.
    fn broadcast_into<B: BufferMut + ?Sized>(&self, buffer: &mut B) -> Result<()> {
        const M: &str = "broadcast_into";
        let (b, fix) = whole_buf(M, buffer)?;
        // SAFETY: `b` describes the borrowed buffer for the whole blocking call.
        let r = unsafe { coll::bcast(b, self.root_rank(), self.comm_id()) };
        // SAFETY: the call is over.
        unsafe { finish(M, r, &[fix]) }
    }

    /// Starts [`broadcast_into`](Self::broadcast_into) (`MPI_Ibcast`); the buffer stays
    /// borrowed until the request completes.
    fn immediate_broadcast_into<'a, Sc, B>(
        &self,
        scope: Sc,
        buffer: &'a mut B,
    ) -> Result<Request<'a, Sc>>
    where
        Sc: Scope<'a>,
        B: BufferMut + ?Sized,
    {
        const M: &str = "immediate_broadcast_into";
        let (b, fix) = whole_buf(M, buffer)?;
        // SAFETY: `b` describes a buffer borrowed for 'a, which the request cannot
        // outlive, nor be dropped before the operation completes.
        let r = unsafe { coll::bcast_how(b, self.root_rank(), self.comm_id(), How::Start) };
        Ok(Request::new(started(M, r)?, scope, fix, M))
    }

    /// Starts [`reduce_into`](Self::reduce_into) (`MPI_Ireduce` at a non-root process).
    fn immediate_reduce_into<'a, Sc, S, O>(
        &self,
        scope: Sc,
        sendbuf: &'a S,
        op: O,
    ) -> Result<Request<'a, Sc>>
    where
        Sc: Scope<'a>,
        S: Buffer + ?Sized,
        O: Operation<S::Element>,
    {
        const M: &str = "immediate_reduce_into";
        no_view(M, sendbuf.datatype_view().is_some())?;
        rooted(M, self.comm_id(), self.root_rank(), false)?;
        let rt = ReductionType::new::<S::Element, O>(M, &op, sendbuf.count())?;
        // SAFETY: `sendbuf` holds `rt.count` elements of `rt.ty`, borrowed for 'a (see
        // `immediate_broadcast_into`); the receive side is insignificant here.
        let r = unsafe {
            coll::reduce_how(
                Input::Data(sendbuf.pointer() as usize),
                0,
                rt.count.into(),
                rt.ty,
                op.op_id(),
                self.root_rank(),
                self.comm_id(),
                How::Start,
            )
        };
        Ok(Request::new(started(M, r)?, scope, Fixup::none(), M))
    }

    /// Starts [`reduce_into_root`](Self::reduce_into_root) (`MPI_Ireduce` at the root).
    fn immediate_reduce_into_root<'a, Sc, S, R, O>(
        &self,
        scope: Sc,
        sendbuf: &'a S,
        recvbuf: &'a mut R,
        op: O,
    ) -> Result<Request<'a, Sc>>
    where
        Sc: Scope<'a>,
        S: Buffer + ?Sized,
        R: BufferMut<Element = S::Element> + ?Sized,
        O: Operation<S::Element>,
    {
        const M: &str = "immediate_reduce_into_root";
        no_view(
            M,
            sendbuf.datatype_view().is_some() || recvbuf.datatype_view().is_some(),
        )?;
        let s = rooted(M, self.comm_id(), self.root_rank(), true)?;
        let n = recvbuf.count();
        if !s.inter {
            same_length(M, sendbuf.count(), n)?;
        }
        let rt = ReductionType::new::<S::Element, O>(M, &op, n)?;
        let p = recvbuf.pointer_mut();
        // SAFETY: both buffers hold `n` values, borrowed (shared and exclusive, so
        // disjoint) for 'a (see `immediate_broadcast_into`).
        let r = unsafe {
            coll::reduce_how(
                Input::Data(sendbuf.pointer() as usize),
                p as usize,
                rt.count.into(),
                rt.ty,
                op.op_id(),
                self.root_rank(),
                self.comm_id(),
                How::Start,
            )
        };
        Ok(Request::new(started(M, r)?, scope, Fixup::new(p, n), M))
    }

    /// Sends `sendbuf` to the root, which gathers them (`MPI_Gather`); called by every
    /// process except the root.
    fn gather_into<S: Buffer + ?Sized>(&self, sendbuf: &S) -> Result<()> {
        const M: &str = "gather_into";
        rooted(M, self.comm_id(), self.root_rank(), false)?;
        let sb = send_buf(M, sendbuf)?;
        // SAFETY: `sb` describes the borrowed buffer; the receive side is insignificant.
        unsafe { coll::gather(Input::Data(sb), unused(), self.root_rank(), self.comm_id()) }
            .map_err(engine(M))
    }

    /// Gathers `sendbuf` of every process into `recvbuf` of the root, in rank order
    /// (`MPI_Gather`); called by the root. `recvbuf` holds one block per process.
    fn gather_into_root<S, R>(&self, sendbuf: &S, recvbuf: &mut R) -> Result<()>
    where
        S: Buffer + ?Sized,
        R: BufferMut + ?Sized,
    {
        const M: &str = "gather_into_root";
        let s = rooted(M, self.comm_id(), self.root_rank(), true)?;
        let sb = send_buf(M, sendbuf)?;
        let (rb, fix) = recv_blocks(M, recvbuf, s.peers)?;
        // SAFETY: `rb` describes `peers` blocks inside the borrowed `recvbuf`.
        let r = unsafe { coll::gather(Input::Data(sb), rb, self.root_rank(), self.comm_id()) };
        // SAFETY: the call is over.
        unsafe { finish(M, r, &[fix]) }
    }

    /// Sends `sendbuf` (of any length) to the root (`MPI_Gatherv`); called by every
    /// process except the root.
    fn gather_varcount_into<S: Buffer + ?Sized>(&self, sendbuf: &S) -> Result<()> {
        const M: &str = "gather_varcount_into";
        rooted(M, self.comm_id(), self.root_rank(), false)?;
        let sb = send_buf(M, sendbuf)?;
        // SAFETY: `sb` describes the borrowed buffer; the receive side is insignificant.
        unsafe {
            coll::gatherv(
                Input::Data(sb),
                unused_v(),
                self.root_rank(),
                self.comm_id(),
            )
        }
        .map_err(engine(M))
    }

    /// Gathers `sendbuf` of process `i` into block `i` of the root's `recvbuf`
    /// (`MPI_Gatherv`); called by the root.
    fn gather_varcount_into_root<S, R>(&self, sendbuf: &S, recvbuf: &mut R) -> Result<()>
    where
        S: Buffer + ?Sized,
        R: PartitionedBufferMut + ?Sized,
    {
        const M: &str = "gather_varcount_into_root";
        let s = rooted(M, self.comm_id(), self.root_rank(), true)?;
        let d = R::Element::equivalent_datatype();
        no_view(M, recvbuf.is_view())?;
        let b = blocks(
            M,
            recvbuf.counts(),
            recvbuf.displs(),
            recvbuf.count(),
            d.multiplicity(),
            s.peers,
        )?;
        let sb = send_buf(M, sendbuf)?;
        let n = recvbuf.count();
        let p = recvbuf.pointer_mut();
        let v = VBuf {
            addr: p as usize,
            counts: &b.counts,
            displs: &b.displs,
            ty: d.type_id(),
        };
        // SAFETY: the blocks were checked to lie inside the borrowed `recvbuf`.
        let r = unsafe { coll::gatherv(Input::Data(sb), v, self.root_rank(), self.comm_id()) };
        // SAFETY: the call is over.
        unsafe { finish(M, r, &[Fixup::new(p, n)]) }
    }

    /// Receives this process's block of the root's buffer (`MPI_Scatter`); called by
    /// every process except the root.
    fn scatter_into<R: BufferMut + ?Sized>(&self, recvbuf: &mut R) -> Result<()> {
        const M: &str = "scatter_into";
        rooted(M, self.comm_id(), self.root_rank(), false)?;
        let (rb, fix) = whole_buf(M, recvbuf)?;
        // SAFETY: `rb` describes the borrowed buffer; the send side is insignificant.
        let r =
            unsafe { coll::scatter(unused(), Input::Data(rb), self.root_rank(), self.comm_id()) };
        // SAFETY: the call is over.
        unsafe { finish(M, r, &[fix]) }
    }

    /// Sends block `i` of the root's `sendbuf` to process `i` (`MPI_Scatter`); called by
    /// the root, which receives its own block into `recvbuf`. `sendbuf` holds one block
    /// per process.
    fn scatter_into_root<S, R>(&self, sendbuf: &S, recvbuf: &mut R) -> Result<()>
    where
        S: Buffer + ?Sized,
        R: BufferMut + ?Sized,
    {
        const M: &str = "scatter_into_root";
        let s = rooted(M, self.comm_id(), self.root_rank(), true)?;
        let sb = send_blocks(M, sendbuf, s.peers)?;
        let (rb, fix) = whole_buf(M, recvbuf)?;
        // SAFETY: `sb` describes `peers` blocks inside the borrowed `sendbuf`, `rb` the
        // borrowed `recvbuf`.
        let r = unsafe { coll::scatter(sb, Input::Data(rb), self.root_rank(), self.comm_id()) };
        // SAFETY: the call is over.
        unsafe { finish(M, r, &[fix]) }
    }

    /// Receives this process's block of the root's partitioned buffer
    /// (`MPI_Scatterv`); called by every process except the root.
    fn scatter_varcount_into<R: BufferMut + ?Sized>(&self, recvbuf: &mut R) -> Result<()> {
        const M: &str = "scatter_varcount_into";
        rooted(M, self.comm_id(), self.root_rank(), false)?;
        let (rb, fix) = whole_buf(M, recvbuf)?;
        // SAFETY: `rb` describes the borrowed buffer; the send side is insignificant.
        let r = unsafe {
            coll::scatterv(
                unused_v(),
                Input::Data(rb),
                self.root_rank(),
                self.comm_id(),
            )
        };
        // SAFETY: the call is over.
        unsafe { finish(M, r, &[fix]) }
    }

    /// Sends block `i` of the root's partitioned `sendbuf` to process `i`
    /// (`MPI_Scatterv`); called by the root.
    fn scatter_varcount_into_root<S, R>(&self, sendbuf: &S, recvbuf: &mut R) -> Result<()>
    where
        S: PartitionedBuffer + ?Sized,
        R: BufferMut + ?Sized,
    {
        const M: &str = "scatter_varcount_into_root";
        let s = rooted(M, self.comm_id(), self.root_rank(), true)?;
        let d = S::Element::equivalent_datatype();
        no_view(M, sendbuf.is_view())?;
        let b = blocks(
            M,
            sendbuf.counts(),
            sendbuf.displs(),
            sendbuf.count(),
            d.multiplicity(),
            s.peers,
        )?;
        let v = VBuf {
            addr: sendbuf.pointer() as usize,
            counts: &b.counts,
            displs: &b.displs,
            ty: d.type_id(),
        };
        let (rb, fix) = whole_buf(M, recvbuf)?;
        // SAFETY: the blocks were checked to lie inside the borrowed `sendbuf`; `rb`
        // describes the borrowed `recvbuf`.
        let r = unsafe { coll::scatterv(v, Input::Data(rb), self.root_rank(), self.comm_id()) };
        // SAFETY: the call is over.
        unsafe { finish(M, r, &[fix]) }
    }

    /// Contributes `sendbuf` to a reduction whose result the root receives
    /// (`MPI_Reduce`); called by every process except the root.
    fn reduce_into<S, O>(&self, sendbuf: &S, op: O) -> Result<()>
    where
        S: Buffer + ?Sized,
        O: Operation<S::Element>,
    {
        const M: &str = "reduce_into";
        no_view(M, sendbuf.datatype_view().is_some())?;
        rooted(M, self.comm_id(), self.root_rank(), false)?;
        let rt = ReductionType::new::<S::Element, O>(M, &op, sendbuf.count())?;
        // SAFETY: `sendbuf` holds `rt.count` elements of `rt.ty` and is borrowed for the
        // whole call; the receive side is insignificant here.
        unsafe {
            coll::reduce(
                Input::Data(sendbuf.pointer() as usize),
                0,
                rt.count.into(),
                rt.ty,
                op.op_id(),
                self.root_rank(),
                self.comm_id(),
            )
        }
        .map_err(engine(M))
    }

    /// Combines `sendbuf` of every process with `op`, in rank order, into the root's
    /// `recvbuf` (`MPI_Reduce`); called by the root. The buffers have the same length.
    fn reduce_into_root<S, R, O>(&self, sendbuf: &S, recvbuf: &mut R, op: O) -> Result<()>
    where
        S: Buffer + ?Sized,
        R: BufferMut<Element = S::Element> + ?Sized,
        O: Operation<S::Element>,
    {
        const M: &str = "reduce_into_root";
        no_view(
            M,
            sendbuf.datatype_view().is_some() || recvbuf.datatype_view().is_some(),
        )?;
        let s = rooted(M, self.comm_id(), self.root_rank(), true)?;
        // On an intercommunicator the root contributes nothing.
        let n = recvbuf.count();
        if !s.inter {
            same_length(M, sendbuf.count(), n)?;
        }
        let rt = ReductionType::new::<S::Element, O>(M, &op, n)?;
        let p = recvbuf.pointer_mut();
        // SAFETY: both buffers hold `n` values (the send buffer is not read on an
        // intercommunicator), borrowed for the whole blocking call.
        let r = unsafe {
            coll::reduce(
                Input::Data(sendbuf.pointer() as usize),
                p as usize,
                rt.count.into(),
                rt.ty,
                op.op_id(),
                self.root_rank(),
                self.comm_id(),
            )
        };
        // SAFETY: the call is over.
        unsafe { finish(M, r, &[Fixup::new(p, n)]) }
    }
}

impl Root for Process<'_> {
    fn root_rank(&self) -> Rank {
        self.rank()
    }
}
