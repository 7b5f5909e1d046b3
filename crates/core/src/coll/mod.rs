//! Collective operations and reduction operations (MPI 4.1 chapter 6): the MPI-level
//! calls with their argument checks, the `MPI_Op` table, and the executor that runs the
//! schedules of `oxmpi_coll` over the device in each communicator's collective context.
//!
//! - [`op`]: predefined and user operations, [`Reducer`](op::Reducer).
//! - [`reduction`]: `MPI_Reduce`, `Allreduce`, `Reduce_scatter(_block)`, `Scan`,
//!   `Exscan`, `Reduce_local`.
//! - [`movement`]: `MPI_Barrier`, `Bcast`, `Gather(v)`, `Scatter(v)`, `Allgather(v)`,
//!   `Alltoall(v,w)`.
//! - `exec`, `stage`, `state`, `check`: the executor, the mapping of user buffers to
//!   the schedules' packed view, the per-process state, the shared checks.
//! - `shm`: the shared-memory fast path for small calls on single-node communicators.
//! - `inter`: the collectives on intercommunicators.
//! - [`nbc`]: nonblocking and persistent collectives, moved forward by the progress
//!   engine.
//!
//! Each collective `x` has a twin `x_how(.., how)`: [`How::Block`] is `x`,
//! [`How::Start`] the nonblocking call (`MPI_Ix`) and [`How::Init`] the persistent one
//! (`MPI_X_init`), which return a request; for those two the `# Safety` contract on the
//! buffers holds until the request completes (for a persistent request, from every
//! start to its completion, and the buffer addresses stay those given at
//! initialisation).
//!
//! Every call takes the next tag of its communicator's collective sequence (all
//! members call collectives on a communicator in the same order), so the messages of
//! one call never match those of another, nor user messages (other context id).
//! User reduction functions run without the runtime lock held.

mod check;
mod exec;
pub(crate) mod impi;
mod inter;
pub mod movement;
pub mod nbc;
pub mod neighbor;
pub mod op;
pub mod reduction;
pub(crate) mod shm;
mod stage;
mod state;

pub use check::Input;
pub use movement::{
    allgather, allgather_how, allgatherv, allgatherv_how, alltoall, alltoall_how, alltoallv,
    alltoallv_how, alltoallw, alltoallw_how, barrier, barrier_how, bcast, bcast_how, gather,
    gather_how, gatherv, gatherv_how, scatter, scatter_how, scatterv, scatterv_how, VBuf, WBuf,
};
pub use nbc::How;
pub use op::{OpId, UserFn, FIRST_CREATED_OP};
pub use reduction::{
    allreduce, allreduce_how, exscan, exscan_how, reduce, reduce_how, reduce_local, reduce_scatter,
    reduce_scatter_block, reduce_scatter_block_how, reduce_scatter_how, scan, scan_how,
};
pub use state::State;

use crate::error::Result;
use crate::runtime;

/// `MPI_Op_create`: a user operation; `commutative` as the caller promises.
pub fn op_create(func: UserFn, commutative: bool) -> Result<OpId> {
    runtime::with(|rt| Ok(rt.coll.ops.insert(op::UserOp { func, commutative })))
}

/// `MPI_Op_free` (collectives already running keep their reference to the function).
pub fn op_free(id: OpId) -> Result<()> {
    runtime::with(|rt| rt.coll.ops.remove(id))
}

/// `MPI_Op_commutative`.
pub fn op_commutative(id: OpId) -> Result<bool> {
    runtime::with(|rt| Ok(rt.coll.ops.get(id)?.commutative()))
}

/// Forgets the collective sequence of context `ctx`; communicator management calls it
/// when a communicator is freed, so the next communicator with that id starts afresh.
pub fn forget_context(ctx: u32) -> Result<()> {
    runtime::with(|rt| {
        rt.coll.forget_context(ctx);
        Ok(())
    })
}

/// What a binding needs to know to read a collective's array arguments.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shape {
    /// The communicator is an intercommunicator.
    pub inter: bool,
    /// This process's rank in its (local) group.
    pub rank: i32,
    /// Entries of per-peer arrays (`sendcounts`, `displs`, ...): the size of the group
    /// the peers are in (the remote group of an intercommunicator).
    pub peers: usize,
    /// Size of the local group (`recvcounts` of `MPI_Reduce_scatter`).
    pub local: usize,
}

impl Shape {
    /// Whether the root-only arguments of a rooted collective are significant here.
    pub fn is_root(&self, root: i32) -> bool {
        if self.inter {
            root == crate::ROOT
        } else {
            root == self.rank
        }
    }
}

/// The [`Shape`] of communicator `comm`.
pub fn shape(comm: crate::comm::CommId) -> Result<Shape> {
    runtime::with(|rt| {
        let c = rt.comms.get(comm)?;
        Ok(Shape {
            inter: c.is_inter(),
            rank: c.rank,
            peers: c.peer_group().size() as usize,
            local: c.size() as usize,
        })
    })
}
