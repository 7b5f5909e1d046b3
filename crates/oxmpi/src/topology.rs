//! Communicators and the processes in them: the [`Communicator`] trait,
//! [`SimpleCommunicator`] (world, self, duplicates and splits), [`InterCommunicator`],
//! [`CartesianCommunicator`], groups ([`UserGroup`]), and the [`Process`] /
//! [`AnyProcess`] endpoints that point-to-point calls are made on.
//!
//! Communicators made by this crate are freed (`MPI_Comm_free`) when dropped; the
//! borrow of a [`Process`] keeps its communicator alive.

use crate::error::{engine, Error, Result};
use oxmpi_core::comm::{CommId, SELF, WORLD};
use oxmpi_core::commops;
use oxmpi_core::runtime;
use std::marker::PhantomData;

mod cartesian;
mod dynamic;
mod group;
mod hints;
mod idup;
mod inter;
mod split;

pub use cartesian::{dims_create, CartesianCommunicator, CartesianLayout};
pub use dynamic::{parent, Command, Port};
pub use group::{GroupRelation, UserGroup};
pub use hints::CommHints;
pub use idup::DuplicateRequest;
pub use inter::InterCommunicator;
pub use split::{Color, CommunicatorRelation, Key};

/// A process's rank in a communicator.
pub type Rank = i32;

/// Anything that names an engine communicator.
pub trait AsCommId {
    /// The engine's index of the communicator.
    fn comm_id(&self) -> CommId;
}

/// A communication universe: a group of processes with a private context for messages.
pub trait Communicator: AsCommId {
    /// This process's rank (`MPI_Comm_rank`).
    fn rank(&self) -> Rank;

    /// The number of processes (`MPI_Comm_size`).
    fn size(&self) -> Rank;

    /// The process with rank `r`. Ranks are checked when the process is used: an
    /// out-of-range rank makes each call fail with class `MPI_ERR_RANK`.
    /// [`PROC_NULL`](crate::PROC_NULL) gives the null process: sends to it do nothing and
    /// receives from it complete at once with an empty message.
    fn process_at_rank(&self, r: Rank) -> Process<'_> {
        Process {
            comm: self.comm_id(),
            rank: r,
            _comm: PhantomData,
        }
    }

    /// This process, as a member of the communicator.
    fn this_process(&self) -> Process<'_> {
        self.process_at_rank(self.rank())
    }

    /// Any process of the communicator, for receives and probes that accept a message
    /// from any source (`MPI_ANY_SOURCE`).
    fn any_process(&self) -> AnyProcess<'_> {
        AnyProcess {
            comm: self.comm_id(),
            _comm: PhantomData,
        }
    }

    /// The group of the communicator (the local group of an intercommunicator)
    /// (`MPI_Comm_group`).
    fn group(&self) -> Result<UserGroup> {
        commops::snapshot(self.comm_id())
            .map(|c| UserGroup::from_core(c.group))
            .map_err(engine("group"))
    }

    /// How this communicator relates to `other` (`MPI_Comm_compare`).
    fn compare<C: AsCommId + ?Sized>(&self, other: &C) -> Result<CommunicatorRelation> {
        commops::comm_compare(self.comm_id(), other.comm_id())
            .map(CommunicatorRelation::from_core)
            .map_err(engine("compare"))
    }

    /// True for an intercommunicator (`MPI_Comm_test_inter`).
    fn is_inter(&self) -> Result<bool> {
        commops::comm_test_inter(self.comm_id()).map_err(engine("is_inter"))
    }

    /// The communicator's name (`MPI_Comm_get_name`); empty when it has none.
    fn get_name(&self) -> Result<String> {
        commops::comm_get_name(self.comm_id()).map_err(engine("get_name"))
    }

    /// Names the communicator (`MPI_Comm_set_name`; longer names are cut to 127 bytes).
    fn set_name(&self, name: &str) -> Result<()> {
        commops::comm_set_name(self.comm_id(), name).map_err(engine("set_name"))
    }

    /// Ends the whole job with `errorcode` (`MPI_Abort`); never returns.
    fn abort(&self, errorcode: i32) -> ! {
        runtime::abort(
            errorcode,
            &format!(
                "oxmpi: rank {} called abort with error code {errorcode}",
                self.rank()
            ),
        )
    }
}

/// An intracommunicator: `MPI_COMM_WORLD`, `MPI_COMM_SELF`, or one made from them
/// (duplicates, splits, subgroups, merged intercommunicators).
///
/// It holds the engine's communicator index and caches this process's rank and the
/// size, which never change during the communicator's life. One made by this crate is
/// freed when dropped.
///
/// Communicators are `Send` and `Sync`. Under [`crate::Threading::Multiple`] threads
/// may use one at once for point-to-point calls (messages of different threads told
/// apart by tag or source) and for probes; a collective call on one communicator must
/// not overlap with another collective call on the same one (MPI leaves that erroneous),
/// so give each thread that runs collectives its own duplicate. Under the lower levels
/// a call that finds another thread inside MPI fails with `ErrorClass::Other`.
#[derive(Debug, PartialEq, Eq)]
pub struct SimpleCommunicator {
    id: CommId,
    rank: Rank,
    size: Rank,
    owned: bool,
}

// Communicators cross threads (see above); keep it so.
const _: () = {
    fn send_sync<T: Send + Sync>() {}
    let _ = send_sync::<SimpleCommunicator>;
    let _ = send_sync::<inter::InterCommunicator>;
};

/// This process's rank and the (local) size of engine communicator `id`.
pub(crate) fn rank_and_size(method: &'static str, id: CommId) -> Result<(Rank, Rank)> {
    runtime::with(|rt| {
        let c = rt.comms.get(id)?;
        Ok((c.rank, c.size()))
    })
    .map_err(engine(method))
}

/// Frees a communicator this crate made, reporting (not panicking on) failures.
pub(crate) fn free_comm(id: CommId) {
    // Nothing to free once the engine is gone (communicators of a session may outlive
    // the world model, so "finalized" is not the test).
    if !runtime::is_running() {
        return;
    }
    if let Err(e) = commops::comm_free(id) {
        eprintln!("oxmpi: {}", Error::from_core("communicator drop (free)", e));
    }
}

impl SimpleCommunicator {
    pub(crate) fn world_with(rank: Rank, size: Rank) -> SimpleCommunicator {
        SimpleCommunicator {
            id: WORLD,
            rank,
            size,
            owned: false,
        }
    }

    /// Takes ownership of a communicator the engine just made for this process.
    pub(crate) fn adopt(method: &'static str, id: CommId) -> Result<SimpleCommunicator> {
        match rank_and_size(method, id) {
            Ok((rank, size)) => Ok(SimpleCommunicator {
                id,
                rank,
                size,
                owned: true,
            }),
            Err(e) => {
                free_comm(id);
                Err(e)
            }
        }
    }

    /// The communicator of this process alone (`MPI_COMM_SELF`).
    pub fn self_comm() -> SimpleCommunicator {
        SimpleCommunicator {
            id: SELF,
            rank: 0,
            size: 1,
            owned: false,
        }
    }

    /// Wraps an engine communicator whose rank and size are known.
    ///
    /// `id` must name a live engine communicator in which this process has rank `rank`
    /// among `size`; the value does not own it (dropping it frees nothing). A wrong
    /// description makes calls fail or address the wrong peers, never touches memory
    /// unsafely.
    pub fn from_raw_parts(id: CommId, rank: Rank, size: Rank) -> SimpleCommunicator {
        SimpleCommunicator {
            id,
            rank,
            size,
            owned: false,
        }
    }
}

impl Drop for SimpleCommunicator {
    fn drop(&mut self) {
        if self.owned {
            free_comm(self.id);
        }
    }
}

impl AsCommId for SimpleCommunicator {
    fn comm_id(&self) -> CommId {
        self.id
    }
}

impl Communicator for SimpleCommunicator {
    fn rank(&self) -> Rank {
        self.rank
    }

    fn size(&self) -> Rank {
        self.size
    }
}

/// One process of a communicator, as a destination and a source of messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Process<'a> {
    comm: CommId,
    rank: Rank,
    _comm: PhantomData<&'a ()>,
}

impl Process<'_> {
    /// The process's rank in its communicator.
    pub fn rank(&self) -> Rank {
        self.rank
    }
}

impl AsCommId for Process<'_> {
    fn comm_id(&self) -> CommId {
        self.comm
    }
}

/// Every process of a communicator, as the source of receives and probes that accept
/// any sender.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AnyProcess<'a> {
    comm: CommId,
    _comm: PhantomData<&'a ()>,
}

impl AsCommId for AnyProcess<'_> {
    fn comm_id(&self) -> CommId {
        self.comm
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn processes_carry_communicator_and_rank() {
        let c = SimpleCommunicator::world_with(2, 5);
        assert_eq!((c.rank(), c.size(), c.comm_id()), (2, 5, WORLD));
        let p = c.process_at_rank(4);
        assert_eq!((p.rank(), p.comm_id()), (4, WORLD));
        assert_eq!(c.this_process().rank(), 2);
        assert_eq!(c.any_process().comm_id(), WORLD);
        let s = SimpleCommunicator::self_comm();
        assert_eq!((s.rank(), s.size(), s.comm_id()), (0, 1, SELF));
        let d = SimpleCommunicator::from_raw_parts(7, 1, 3);
        assert_eq!(d.process_at_rank(0).comm_id(), 7);
    }
}
