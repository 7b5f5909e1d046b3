//! Intercommunicators: two disjoint groups that talk to each other
//! (`MPI_Intercomm_create`, `MPI_Intercomm_merge`, `MPI_Comm_remote_size`,
//! `MPI_Comm_remote_group`).
//!
//! On an [`InterCommunicator`], `process_at_rank(r)` names process `r` of the remote
//! group, and the collectives follow MPI's intercommunicator rules (see
//! [`collective`](crate::collective)).

use super::{
    free_comm, rank_and_size, AsCommId, Communicator, Rank, SimpleCommunicator, UserGroup,
};
use crate::error::{engine, Error, ErrorClass, Result};
use crate::point_to_point::Tag;
use oxmpi_core::comm::CommId;
use oxmpi_core::commops;

/// A communicator between a local and a remote group; freed when dropped.
#[derive(Debug, PartialEq, Eq)]
pub struct InterCommunicator {
    id: CommId,
    rank: Rank,
    size: Rank,
}

impl InterCommunicator {
    pub(crate) fn adopt(method: &'static str, id: CommId) -> Result<InterCommunicator> {
        match rank_and_size(method, id) {
            Ok((rank, size)) => Ok(InterCommunicator { id, rank, size }),
            Err(e) => {
                free_comm(id);
                Err(e)
            }
        }
    }

    /// Number of processes in the remote group (`MPI_Comm_remote_size`).
    pub fn remote_size(&self) -> Result<Rank> {
        commops::comm_remote_size(self.id).map_err(engine("remote_size"))
    }

    /// The remote group (`MPI_Comm_remote_group`).
    pub fn remote_group(&self) -> Result<UserGroup> {
        const M: &str = "remote_group";
        let c = commops::snapshot(self.id).map_err(engine(M))?;
        c.remote
            .map(UserGroup::from_core)
            .ok_or_else(|| Error::new(M, ErrorClass::Comm, "the communicator has no remote group"))
    }

    /// An intracommunicator of both groups (`MPI_Intercomm_merge`): the group whose
    /// processes pass `high = false` comes first. Collective over both groups.
    pub fn merge(&self, high: bool) -> Result<SimpleCommunicator> {
        const M: &str = "merge";
        let id = commops::intercomm_merge(self.id, high).map_err(engine(M))?;
        SimpleCommunicator::adopt(M, id)
    }

    /// A new intercommunicator between the same groups (`MPI_Comm_dup`).
    pub fn duplicate(&self) -> Result<InterCommunicator> {
        const M: &str = "duplicate";
        let id = commops::comm_dup(self.id).map_err(engine(M))?;
        InterCommunicator::adopt(M, id)
    }
}

impl Drop for InterCommunicator {
    fn drop(&mut self) {
        free_comm(self.id);
    }
}

impl AsCommId for InterCommunicator {
    fn comm_id(&self) -> CommId {
        self.id
    }
}

impl Communicator for InterCommunicator {
    /// This process's rank in the local group.
    fn rank(&self) -> Rank {
        self.rank
    }

    /// The size of the local group.
    fn size(&self) -> Rank {
        self.size
    }
}

impl SimpleCommunicator {
    /// Connects this communicator's group with another, disjoint group
    /// (`MPI_Intercomm_create`). Both groups call it; `local_leader` is the rank in
    /// this communicator of the process that talks to the other group's leader through
    /// `peer` (significant at the local leader only), where that leader has rank
    /// `remote_leader`; `tag` tells concurrent creations apart.
    pub fn intercommunicator_create<P: AsCommId + ?Sized>(
        &self,
        local_leader: Rank,
        peer: &P,
        remote_leader: Rank,
        tag: Tag,
    ) -> Result<InterCommunicator> {
        const M: &str = "intercommunicator_create";
        let id = commops::intercomm_create(
            self.comm_id(),
            local_leader,
            Some(peer.comm_id()),
            remote_leader,
            tag,
        )
        .map_err(engine(M))?;
        InterCommunicator::adopt(M, id)
    }
}
