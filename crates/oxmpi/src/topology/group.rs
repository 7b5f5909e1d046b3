//! Groups of processes (`MPI_Group`): [`UserGroup`] and its algebra (union,
//! intersection, difference, inclusion, exclusion), rank translation and comparison.
//!
//! A group is plain data here (an ordered list of world ranks), so groups need no
//! engine handle and nothing to free.

use super::Rank;
use crate::error::{engine, Result};
use oxmpi_core::comm::Group;
use oxmpi_core::group::{self, Comparison};
use oxmpi_core::runtime;
use std::sync::Arc;

/// How two groups relate (`MPI_Group_compare`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GroupRelation {
    /// Same members in the same order (`MPI_IDENT`).
    Identical,
    /// Same members in another order (`MPI_SIMILAR`).
    Similar,
    /// Different members (`MPI_UNEQUAL`).
    Unequal,
}

/// An ordered set of processes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UserGroup {
    inner: Arc<Group>,
}

impl UserGroup {
    pub(crate) fn from_core(inner: Arc<Group>) -> UserGroup {
        UserGroup { inner }
    }

    pub(crate) fn core(&self) -> &Group {
        &self.inner
    }

    fn wrap(g: Group) -> UserGroup {
        UserGroup { inner: Arc::new(g) }
    }

    /// The empty group (`MPI_GROUP_EMPTY`).
    pub fn empty() -> UserGroup {
        UserGroup::wrap(Group::new(Vec::new()))
    }

    /// Number of processes (`MPI_Group_size`).
    pub fn size(&self) -> Rank {
        self.inner.size()
    }

    /// This process's rank in the group, `None` when it is not a member
    /// (`MPI_Group_rank`).
    pub fn rank(&self) -> Option<Rank> {
        let me = runtime::with(|rt| Ok(rt.world_rank)).ok()?;
        self.inner.rank_of_world(me)
    }

    /// The members of `self`, then those of `other` not in `self` (`MPI_Group_union`).
    pub fn union(&self, other: &UserGroup) -> UserGroup {
        UserGroup::wrap(group::union(&self.inner, &other.inner))
    }

    /// The members of `self` that are in `other`, in `self`'s order
    /// (`MPI_Group_intersection`).
    pub fn intersection(&self, other: &UserGroup) -> UserGroup {
        UserGroup::wrap(group::intersection(&self.inner, &other.inner))
    }

    /// The members of `self` that are not in `other` (`MPI_Group_difference`).
    pub fn difference(&self, other: &UserGroup) -> UserGroup {
        UserGroup::wrap(group::difference(&self.inner, &other.inner))
    }

    /// The processes at `ranks`, in that order (`MPI_Group_incl`). Ranks must be valid
    /// and distinct (class `MPI_ERR_RANK` otherwise).
    pub fn include(&self, ranks: &[Rank]) -> Result<UserGroup> {
        group::incl(&self.inner, ranks)
            .map(UserGroup::wrap)
            .map_err(engine("include"))
    }

    /// The group without the processes at `ranks` (`MPI_Group_excl`).
    pub fn exclude(&self, ranks: &[Rank]) -> Result<UserGroup> {
        group::excl(&self.inner, ranks)
            .map(UserGroup::wrap)
            .map_err(engine("exclude"))
    }

    /// The rank in `other` of the process at `rank` in `self`; `None` when it is not in
    /// `other` (`MPI_Group_translate_ranks`).
    pub fn translate_rank(&self, rank: Rank, other: &UserGroup) -> Result<Option<Rank>> {
        Ok(self.translate_ranks(&[rank], other)?[0])
    }

    /// [`translate_rank`](UserGroup::translate_rank) for many ranks.
    /// [`PROC_NULL`](crate::PROC_NULL) translates to itself.
    pub fn translate_ranks(&self, ranks: &[Rank], other: &UserGroup) -> Result<Vec<Option<Rank>>> {
        let v = group::translate_ranks(&self.inner, ranks, &other.inner)
            .map_err(engine("translate_ranks"))?;
        Ok(v.into_iter()
            .map(|r| (r != crate::UNDEFINED).then_some(r))
            .collect())
    }

    /// How `self` relates to `other` (`MPI_Group_compare`).
    pub fn compare(&self, other: &UserGroup) -> GroupRelation {
        match group::compare(&self.inner, &other.inner) {
            Comparison::Ident => GroupRelation::Identical,
            Comparison::Similar => GroupRelation::Similar,
            _ => GroupRelation::Unequal,
        }
    }
}
