//! Groups and communicators: who is in a communication universe, which context ids
//! separate its traffic, which error handler reports its errors, what attributes and
//! topology it carries; and the table of communicators behind `MPI_Comm` handles.
//!
//! Group algebra lives in [`crate::group`], creation and destruction of communicators
//! (which need communication) in [`crate::commops`].

use crate::attr::AttrList;
use crate::error::{err, ErrorClass, Result};
use crate::session::SessionId;
use crate::topo::Topology;
use std::sync::Arc;

/// Index of a communicator in the runtime's table.
pub type CommId = u32;
/// `MPI_COMM_WORLD`.
pub const WORLD: CommId = 0;
/// `MPI_COMM_SELF`.
pub const SELF: CommId = 1;
/// The owner of requests that belong to no communicator (generalized requests): their
/// errors go to the handler of no object (`errhandler::handler_for`).
pub const NO_COMM: CommId = CommId::MAX;

/// An ordered set of processes, named by world rank.
#[derive(Clone, Debug)]
pub struct Group {
    members: Vec<u32>,
    /// The session the group was made from (`MPI_Group_from_session_pset`), which
    /// communicators made from it belong to; not part of the group's identity.
    session: Option<SessionId>,
}

impl PartialEq for Group {
    fn eq(&self, other: &Group) -> bool {
        self.members == other.members
    }
}

impl Eq for Group {}

impl Group {
    pub fn new(members: Vec<u32>) -> Group {
        Group {
            members,
            session: None,
        }
    }

    /// The group marked as made from session `s` (or from none).
    pub fn in_session(mut self, s: Option<SessionId>) -> Group {
        self.session = s;
        self
    }

    /// The session the group was made from, if any.
    pub fn session(&self) -> Option<SessionId> {
        self.session
    }

    pub fn size(&self) -> i32 {
        self.members.len() as i32
    }

    /// World rank of group rank `r`.
    #[inline]
    pub fn world_of(&self, r: i32) -> Option<u32> {
        usize::try_from(r)
            .ok()
            .and_then(|i| self.members.get(i).copied())
    }

    /// Group rank of world rank `w`.
    pub fn rank_of_world(&self, w: u32) -> Option<i32> {
        self.members.iter().position(|&m| m == w).map(|i| i as i32)
    }

    pub fn members(&self) -> &[u32] {
        &self.members
    }
}

/// Predefined error handlers, plus user ones by index.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Errhandler {
    /// `MPI_ERRORS_ARE_FATAL`: print the error and end the job.
    Fatal,
    /// `MPI_ERRORS_RETURN`: return the error code to the caller.
    Return,
    /// `MPI_ERRORS_ABORT` (MPI-4): abort the processes of the communicator.
    Abort,
    /// A user handler (the bindings keep the function; this is their index).
    User(u32),
}

/// A communicator.
#[derive(Clone, Debug)]
pub struct Comm {
    /// Point-to-point context id; collectives use `ctx + 1`.
    pub ctx: u32,
    /// This process's rank in the (local) group.
    pub rank: i32,
    pub group: Arc<Group>,
    /// The remote group of an intercommunicator.
    pub remote: Option<Arc<Group>>,
    pub errhandler: Errhandler,
    pub name: String,
    /// Cached attributes (user keys; the predefined ones are answered by `commops`).
    pub attrs: AttrList,
    /// The process topology, if the communicator was made with one.
    pub topo: Option<Arc<Topology>>,
    /// The assertions of MPI 4.1 section 7.4.4 the program made on this communicator
    /// (`MPI_Comm_set_info`, `MPI_Comm_dup_with_info`; `MPI_Comm_dup` copies them).
    pub hints: Hints,
    /// The session the communicator was derived from (made from a session's group, or
    /// from such a communicator); `None` in the world model. Buffered sends use its
    /// session buffer (`crate::p2p_mpi4`).
    pub session: Option<SessionId>,
}

/// The communicator assertions of MPI 4.1 section 7.4.4, all false by default. A
/// receive or probe that uses a wildcard the program asserted it would not use is
/// refused (`crate::p2p`); the others are recorded for the engine to rely on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Hints {
    /// `mpi_assert_no_any_tag`: no `MPI_ANY_TAG` receive or probe.
    pub no_any_tag: bool,
    /// `mpi_assert_no_any_source`: no `MPI_ANY_SOURCE` receive or probe.
    pub no_any_source: bool,
    /// `mpi_assert_exact_length`: every message fills its receive buffer exactly.
    pub exact_length: bool,
    /// `mpi_assert_allow_overtaking`: messages need not match in send order.
    pub allow_overtaking: bool,
}

impl Hints {
    /// The info keys of the assertions, in the order [`Hints::values`] gives them.
    pub const KEYS: [&'static str; 4] = [
        "mpi_assert_no_any_tag",
        "mpi_assert_no_any_source",
        "mpi_assert_exact_length",
        "mpi_assert_allow_overtaking",
    ];

    /// The assertions in the order of [`Hints::KEYS`].
    pub fn values(&self) -> [bool; 4] {
        [
            self.no_any_tag,
            self.no_any_source,
            self.exact_length,
            self.allow_overtaking,
        ]
    }

    fn slot(&mut self, i: usize) -> &mut bool {
        match i {
            0 => &mut self.no_any_tag,
            1 => &mut self.no_any_source,
            2 => &mut self.exact_length,
            _ => &mut self.allow_overtaking,
        }
    }

    /// These hints updated by the (key, value) pairs of an info object: a recognised
    /// key with the value `true` or `false` (case and surrounding blanks aside) sets
    /// its assertion; other keys, and other values, are hints oxmpi ignores, as the
    /// standard allows.
    pub fn updated<'a>(mut self, entries: impl IntoIterator<Item = (&'a [u8], &'a [u8])>) -> Hints {
        for (k, v) in entries {
            let Some(i) = Self::KEYS.iter().position(|key| key.as_bytes() == k) else {
                continue;
            };
            let v = String::from_utf8_lossy(v);
            match v.trim().to_ascii_lowercase().as_str() {
                "true" => *self.slot(i) = true,
                "false" => *self.slot(i) = false,
                _ => {}
            }
        }
        self
    }
}

impl Comm {
    /// Number of processes in the local group.
    pub fn size(&self) -> i32 {
        self.group.size()
    }

    pub fn is_inter(&self) -> bool {
        self.remote.is_some()
    }

    /// The group that ranks in point-to-point calls refer to.
    pub fn peer_group(&self) -> &Group {
        self.remote.as_deref().unwrap_or(&self.group)
    }

    pub fn coll_ctx(&self) -> u32 {
        self.ctx + 1
    }
}

enum Slot {
    Free,
    Live(Comm),
    /// Freed by the user while its traffic may still be in flight: the index and the
    /// context id stay reserved until [`crate::context::sweep`] finds it drained.
    Retired {
        ctx: u32,
    },
    /// Reserved for the communicator of an `MPI_Comm_idup` in progress: its handle
    /// exists, it cannot be used yet, except to set its error handler (a local setting
    /// that MPICH and Open MPI accept there; mpi4py sets one right after the call). The
    /// handler set is held here, with its reference, until the communicator is filled in.
    Pending {
        errhandler: Option<Errhandler>,
    },
}

/// The error of a look-up of `id` that found no live communicator (`pending`: one an
/// `MPI_Comm_idup` is still creating).
#[cold]
#[inline(never)]
fn not_live<T>(id: CommId, pending_idup: bool) -> Result<T> {
    if pending_idup {
        return err(ErrorClass::Comm, pending(id));
    }
    err(
        ErrorClass::Comm,
        format!("invalid communicator (index {id}, freed or never created)"),
    )
}

fn pending(id: CommId) -> String {
    format!("communicator (index {id}) is not usable yet: the MPI_Comm_idup that creates it has not completed")
}

/// The table of communicators; index = [`CommId`].
#[derive(Default)]
pub struct CommTable {
    slots: Vec<Slot>,
    /// Context slots held by agreements in progress (see [`crate::context`]).
    pub claims: crate::context::Claims,
}

impl CommTable {
    /// Adds a communicator; it holds a reference to its error handler until removed.
    pub fn insert(&mut self, c: Comm) -> CommId {
        crate::errhandler::retain(c.errhandler);
        if let Some(i) = self
            .slots
            .iter()
            .skip(2)
            .position(|s| matches!(s, Slot::Free))
        {
            self.slots[i + 2] = Slot::Live(c);
            (i + 2) as CommId
        } else {
            if self.slots.len() < 2 {
                self.slots.resize_with(2, || Slot::Free);
            }
            self.slots.push(Slot::Live(c));
            (self.slots.len() - 1) as CommId
        }
    }

    /// Puts a predefined communicator at its fixed index.
    pub fn set(&mut self, id: CommId, c: Comm) {
        let i = id as usize;
        if self.slots.len() <= i {
            self.slots.resize_with(i + 1, || Slot::Free);
        }
        self.slots[i] = Slot::Live(c);
    }

    /// Reserves an index for a communicator whose creation is in progress.
    pub fn reserve(&mut self) -> CommId {
        if let Some(i) = self
            .slots
            .iter()
            .skip(2)
            .position(|s| matches!(s, Slot::Free))
        {
            self.slots[i + 2] = Slot::Pending { errhandler: None };
            (i + 2) as CommId
        } else {
            if self.slots.len() < 2 {
                self.slots.resize_with(2, || Slot::Free);
            }
            self.slots.push(Slot::Pending { errhandler: None });
            (self.slots.len() - 1) as CommId
        }
    }

    /// Puts the communicator into its reserved index; it holds a reference to its error
    /// handler until removed.
    pub fn fill(&mut self, id: CommId, mut c: Comm) {
        if let Some(s @ Slot::Pending { .. }) = self.slots.get_mut(id as usize) {
            match s {
                // Set while pending: its reference moves into the communicator.
                Slot::Pending {
                    errhandler: Some(e),
                } => c.errhandler = *e,
                _ => crate::errhandler::retain(c.errhandler),
            }
            *s = Slot::Live(c);
        }
    }

    /// Sets the error handler of communicator `id` (the caller has taken a reference to
    /// `e`), also on one an `MPI_Comm_idup` is still creating; returns the handler it
    /// replaces, whose reference the caller gives back.
    pub fn replace_errhandler(&mut self, id: CommId, e: Errhandler) -> Result<Option<Errhandler>> {
        match self.slots.get_mut(id as usize) {
            Some(Slot::Pending { errhandler }) => Ok(errhandler.replace(e)),
            _ => Ok(Some(std::mem::replace(
                &mut self.get_mut(id)?.errhandler,
                e,
            ))),
        }
    }

    /// Gives back a reserved index that was never filled.
    pub fn unreserve(&mut self, id: CommId) {
        if let Some(s @ Slot::Pending { .. }) = self.slots.get_mut(id as usize) {
            if let Slot::Pending {
                errhandler: Some(e),
            } = std::mem::replace(s, Slot::Free)
            {
                crate::errhandler::release(e);
            }
        }
    }

    /// The live communicator `id` (every call on a communicator looks it up: the
    /// lookup is inline, the errors are built out of line).
    #[inline]
    pub fn get(&self, id: CommId) -> Result<&Comm> {
        match self.slots.get(id as usize) {
            Some(Slot::Live(c)) => Ok(c),
            s => not_live(id, matches!(s, Some(Slot::Pending { .. }))),
        }
    }

    #[inline]
    pub fn get_mut(&mut self, id: CommId) -> Result<&mut Comm> {
        match self.slots.get_mut(id as usize) {
            Some(Slot::Live(c)) => Ok(c),
            s => not_live(id, matches!(s, Some(Slot::Pending { .. }))),
        }
    }

    /// Removes a communicator at once, freeing its index and context id.
    pub fn remove(&mut self, id: CommId) -> Option<Comm> {
        let c = match self.slots.get_mut(id as usize) {
            Some(s @ Slot::Live(_)) => match std::mem::replace(s, Slot::Free) {
                Slot::Live(c) => Some(c),
                _ => None,
            },
            _ => None,
        };
        if let Some(c) = &c {
            crate::errhandler::release(c.errhandler);
        }
        c
    }

    /// Removes a communicator from use but keeps its index and context id reserved
    /// until [`CommTable::release`].
    pub fn retire(&mut self, id: CommId) -> Option<Comm> {
        let s = self.slots.get_mut(id as usize)?;
        let ctx = match s {
            Slot::Live(c) => c.ctx,
            _ => return None,
        };
        match std::mem::replace(s, Slot::Retired { ctx }) {
            Slot::Live(c) => {
                crate::errhandler::release(c.errhandler);
                Some(c)
            }
            _ => None,
        }
    }

    /// Retired communicators: (index, context id).
    pub fn retired(&self) -> impl Iterator<Item = (CommId, u32)> + '_ {
        self.slots.iter().enumerate().filter_map(|(i, s)| match s {
            Slot::Retired { ctx } => Some((i as CommId, *ctx)),
            _ => None,
        })
    }

    /// Frees a retired entry.
    pub fn release(&mut self, id: CommId) {
        if let Some(s) = self.slots.get_mut(id as usize) {
            if matches!(s, Slot::Retired { .. }) {
                *s = Slot::Free;
            }
        }
    }

    /// Context ids (p2p) of live and retired communicators.
    pub fn contexts_in_use(&self) -> impl Iterator<Item = u32> + '_ {
        self.slots.iter().filter_map(|s| match s {
            Slot::Live(c) => Some(c.ctx),
            Slot::Retired { ctx } => Some(*ctx),
            Slot::Free | Slot::Pending { .. } => None,
        })
    }

    /// Indices of live communicators.
    pub fn live_ids(&self) -> impl Iterator<Item = CommId> + '_ {
        self.slots.iter().enumerate().filter_map(|(i, s)| match s {
            Slot::Live(_) => Some(i as CommId),
            _ => None,
        })
    }
}

#[cfg(test)]
mod hints_tests {
    use super::Hints;

    fn with(pairs: &[(&str, &str)], base: Hints) -> Hints {
        base.updated(pairs.iter().map(|(k, v)| (k.as_bytes(), v.as_bytes())))
    }

    #[test]
    fn recognised_keys_with_boolean_values_set_assertions() {
        let h = with(
            &[
                ("mpi_assert_no_any_tag", "true"),
                ("mpi_assert_no_any_source", " TRUE "),
                ("mpi_assert_exact_length", "yes"),
                ("mpi_assert_allow_overtaking", "true"),
                ("some_other_hint", "true"),
            ],
            Hints::default(),
        );
        assert_eq!(h.values(), [true, true, false, true]);
        let h = with(
            &[
                ("mpi_assert_allow_overtaking", "false"),
                ("mpi_assert_no_any_tag", "garbage"),
            ],
            h,
        );
        assert_eq!(h.values(), [true, true, false, false]);
        assert_eq!(Hints::KEYS.len(), h.values().len());
    }
}
