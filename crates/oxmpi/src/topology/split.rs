//! Making new intracommunicators from a [`SimpleCommunicator`]: duplicates
//! (`MPI_Comm_dup`), splits by color and key (`MPI_Comm_split`), by node
//! (`MPI_Comm_split_type`), by subgroup (`MPI_Comm_create`, `MPI_Comm_create_group`),
//! and the comparison of communicators (`MPI_Comm_compare`).

use super::{SimpleCommunicator, UserGroup};
use crate::error::{engine, Error, ErrorClass, Result};
use crate::point_to_point::Tag;
use oxmpi_core::comm::CommId;
use oxmpi_core::commops::{self, SplitType};
use oxmpi_core::group::Comparison;

/// The color of a split: processes with the same color end up in the same new
/// communicator; [`Color::undefined`] takes part in no new communicator.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Color(i32);

impl Color {
    /// A color; it must be non-negative (class `MPI_ERR_ARG` otherwise).
    pub fn with_value(value: i32) -> Color {
        Color(value)
    }

    /// `MPI_UNDEFINED`: this process gets no communicator.
    pub fn undefined() -> Color {
        Color(crate::UNDEFINED)
    }

    /// The value passed to the engine.
    pub fn value(&self) -> i32 {
        self.0
    }
}

/// The key of a split: it orders the ranks in the new communicator (ties broken by the
/// rank in the old one).
pub type Key = i32;

/// How two communicators relate (`MPI_Comm_compare`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CommunicatorRelation {
    /// The same communicator (`MPI_IDENT`).
    Identical,
    /// Same group in the same order, different contexts (`MPI_CONGRUENT`).
    Congruent,
    /// Same members in another order (`MPI_SIMILAR`).
    Similar,
    /// Different members (`MPI_UNEQUAL`).
    Unequal,
}

impl CommunicatorRelation {
    pub(crate) fn from_core(c: Comparison) -> CommunicatorRelation {
        match c {
            Comparison::Ident => CommunicatorRelation::Identical,
            Comparison::Congruent => CommunicatorRelation::Congruent,
            Comparison::Similar => CommunicatorRelation::Similar,
            Comparison::Unequal => CommunicatorRelation::Unequal,
        }
    }
}

fn adopt_some(method: &'static str, r: Option<CommId>) -> Result<Option<SimpleCommunicator>> {
    r.map(|id| SimpleCommunicator::adopt(method, id))
        .transpose()
}

impl SimpleCommunicator {
    /// A new communicator with the same group and topology, and attributes copied
    /// (`MPI_Comm_dup`). Collective.
    pub fn duplicate(&self) -> Result<SimpleCommunicator> {
        const M: &str = "duplicate";
        let id = commops::comm_dup(self.id).map_err(engine(M))?;
        SimpleCommunicator::adopt(M, id)
    }

    /// Splits the communicator: one new communicator per color, ranks in the order of
    /// the old ones (`MPI_Comm_split` with key 0). `None` for [`Color::undefined`].
    /// Collective.
    pub fn split_by_color(&self, color: Color) -> Result<Option<SimpleCommunicator>> {
        self.split_by_color_with_key(color, 0)
    }

    /// Splits the communicator: one new communicator per color, ranks ordered by `key`
    /// (`MPI_Comm_split`). `None` for [`Color::undefined`]. Collective.
    pub fn split_by_color_with_key(
        &self,
        color: Color,
        key: Key,
    ) -> Result<Option<SimpleCommunicator>> {
        const M: &str = "split_by_color_with_key";
        let r = commops::comm_split(self.id, color.value(), key).map_err(engine(M))?;
        adopt_some(M, r)
    }

    /// Splits the communicator into the processes that share memory, one communicator
    /// per node, ranks ordered by `key` (`MPI_Comm_split_type` with
    /// `MPI_COMM_TYPE_SHARED`). Collective.
    pub fn split_shared(&self, key: Key) -> Result<SimpleCommunicator> {
        const M: &str = "split_shared";
        let r = commops::comm_split_type(self.id, SplitType::Shared, key).map_err(engine(M))?;
        adopt_some(M, r)?
            .ok_or_else(|| Error::new(M, ErrorClass::Intern, "no communicator was made"))
    }

    /// A communicator of the processes of `group`, in its order (`MPI_Comm_create`);
    /// `None` at processes not in it. Collective over the whole communicator, which
    /// must all pass the same group.
    pub fn split_by_subgroup_collective(
        &self,
        group: &UserGroup,
    ) -> Result<Option<SimpleCommunicator>> {
        const M: &str = "split_by_subgroup_collective";
        let r = commops::comm_create(self.id, group.core()).map_err(engine(M))?;
        adopt_some(M, r)
    }

    /// A communicator of the processes of `group` (`MPI_Comm_create_group` with tag 0);
    /// collective over the members of `group` only. `None` at processes not in it
    /// (which need not call it).
    pub fn split_by_subgroup(&self, group: &UserGroup) -> Result<Option<SimpleCommunicator>> {
        self.split_by_subgroup_with_tag(group, 0)
    }

    /// Like [`split_by_subgroup`](SimpleCommunicator::split_by_subgroup), with a tag
    /// that tells concurrent creations on the same communicator apart.
    pub fn split_by_subgroup_with_tag(
        &self,
        group: &UserGroup,
        tag: Tag,
    ) -> Result<Option<SimpleCommunicator>> {
        const M: &str = "split_by_subgroup_with_tag";
        let r = commops::comm_create_group(self.id, group.core(), tag).map_err(engine(M))?;
        adopt_some(M, r)
    }
}
