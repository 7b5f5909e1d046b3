//! Communicator hints (MPI 4.1 section 7.4.4): the assertions a program makes about how
//! it uses a communicator (`mpi_assert_no_any_tag`, `mpi_assert_no_any_source`,
//! `mpi_assert_exact_length`, `mpi_assert_allow_overtaking`), given through an
//! [`Info`] object and read back as [`CommHints`].

use super::SimpleCommunicator;
use crate::error::{engine, Result};
use crate::info::Info;
use oxmpi_core::commops;

/// The assertions in force on a communicator (all false unless the program set them).
/// With `no_any_source` or `no_any_tag` set, a receive or probe with
/// [`ANY_SOURCE`](crate::ANY_SOURCE) / [`ANY_TAG`](crate::ANY_TAG) on the communicator
/// fails with class `MPI_ERR_RANK` / `MPI_ERR_TAG`.
pub type CommHints = oxmpi_core::comm::Hints;

impl SimpleCommunicator {
    /// A duplicate (as [`duplicate`](SimpleCommunicator::duplicate)) whose hints are
    /// those of `info` instead of this communicator's (`MPI_Comm_dup_with_info`).
    /// Collective.
    pub fn duplicate_with_info(&self, info: &Info) -> Result<SimpleCommunicator> {
        const M: &str = "duplicate_with_info";
        let id = commops::comm_dup_with_info(self.id, Some(info.info_id())).map_err(engine(M))?;
        SimpleCommunicator::adopt(M, id)
    }

    /// Sets the assertions `info` names (`"true"` or `"false"`); the others keep their
    /// values, and keys the library does not know are ignored (`MPI_Comm_set_info`).
    pub fn set_info(&self, info: &Info) -> Result<()> {
        commops::comm_set_info(self.id, info.info_id()).map_err(engine("set_info"))
    }

    /// The hints in force, as a new info object with every assertion the library
    /// supports and its value (`MPI_Comm_get_info`).
    pub fn info(&self) -> Result<Info> {
        commops::comm_get_info(self.id)
            .map(Info::from_id)
            .map_err(engine("info"))
    }

    /// The assertions in force on this communicator.
    pub fn hints(&self) -> Result<CommHints> {
        commops::comm_hints(self.id).map_err(engine("hints"))
    }
}
