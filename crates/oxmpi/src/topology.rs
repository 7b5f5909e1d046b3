//! Communicators and the processes in them: the [`Communicator`] trait,
//! [`SimpleCommunicator`] (world, self, and later duplicates and splits), and the
//! [`Process`] / [`AnyProcess`] endpoints that point-to-point calls are made on.

use oxmpi_core::comm::{CommId, SELF, WORLD};
use oxmpi_core::runtime;
use std::marker::PhantomData;

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

/// A communicator: `MPI_COMM_WORLD`, `MPI_COMM_SELF`, or (later) one derived from them.
///
/// It holds the engine's communicator index and caches this process's rank and the
/// size, which never change during the communicator's life.
#[derive(Debug, PartialEq, Eq)]
pub struct SimpleCommunicator {
    id: CommId,
    rank: Rank,
    size: Rank,
}

impl SimpleCommunicator {
    pub(crate) fn world_with(rank: Rank, size: Rank) -> SimpleCommunicator {
        SimpleCommunicator {
            id: WORLD,
            rank,
            size,
        }
    }

    /// The communicator of this process alone (`MPI_COMM_SELF`).
    pub fn self_comm() -> SimpleCommunicator {
        SimpleCommunicator {
            id: SELF,
            rank: 0,
            size: 1,
        }
    }

    /// Wraps an engine communicator whose rank and size are known.
    ///
    /// This is how communicator constructors (dup, split, ...) hand out their results;
    /// `id` must name a live engine communicator in which this process has rank `rank`
    /// among `size`. A wrong description makes calls fail or address the wrong peers,
    /// never touches memory unsafely.
    pub fn from_raw_parts(id: CommId, rank: Rank, size: Rank) -> SimpleCommunicator {
        SimpleCommunicator { id, rank, size }
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
