//! MPI-4 sessions: a library initialises MPI for itself, without owning (or even
//! seeing) `MPI_COMM_WORLD`, and side by side with a program that uses [`initialize`]
//! or with other sessions.
//!
//! A [`Session`] lists process sets ([`Session::process_sets`]: `mpi://WORLD`,
//! `mpi://SELF`, `mpix://SHARED` for the processes of this node), gives their groups
//! ([`Session::group`]), and communicators come from groups
//! ([`SimpleCommunicator::from_group`], [`InterCommunicator::from_groups`]) by a
//! collective call over the group's members alone, told apart by a string tag.
//!
//! ```no_run
//! use oxmpi::session::Session;
//! use oxmpi::topology::SimpleCommunicator;
//! use oxmpi::traits::*;
//!
//! fn main() -> Result<(), oxmpi::Error> {
//!     let session = Session::init()?;
//!     let group = session.group("mpi://WORLD")?;
//!     let comm = SimpleCommunicator::from_group(&group, "org.example.mylib")?;
//!     println!("rank {} of {}", comm.rank(), comm.size());
//!     Ok(())
//!     // `comm`, then `session` are dropped: the communicator is freed, the session ends.
//! }
//! ```
//!
//! Drop the communicators made from a session before the session (the standard makes
//! ending a session with them still alive erroneous). The last session to end leaves
//! the engine running so that a new session (or [`initialize`]) can start later in the
//! process.
//!
//! [`initialize`]: crate::initialize

use crate::environment::Threading;
use crate::error::{engine, Result};
use crate::topology::{InterCommunicator, Rank, SimpleCommunicator, UserGroup};
use oxmpi_core::comm::Errhandler;
use oxmpi_core::session::{self as core, SessionId};
use std::sync::Arc;

/// An MPI session (`MPI_Session`); ended when dropped (`MPI_Session_finalize`).
#[derive(Debug)]
#[must_use = "dropping the Session ends it"]
pub struct Session {
    id: SessionId,
    threading: Threading,
    finalized: bool,
}

impl Session {
    /// Starts a session asking for [`Threading::Multiple`] (`MPI_Session_init`); the
    /// level provided is [`Session::threading_support`].
    pub fn init() -> Result<Session> {
        Session::init_with_threading(Threading::Multiple)
    }

    /// Starts a session asking for thread support `threading` (the info key
    /// `thread_level` of `MPI_Session_init`).
    pub fn init_with_threading(threading: Threading) -> Result<Session> {
        const M: &str = "Session::init";
        let id = core::init(threading.to_core(), Errhandler::Return).map_err(engine(M))?;
        let provided = core::thread_level(id).map_err(engine(M))?;
        Ok(Session {
            id,
            threading: Threading::from_core(provided),
            finalized: false,
        })
    }

    /// The level of thread support provided.
    pub fn threading_support(&self) -> Threading {
        self.threading
    }

    /// The names of the process sets (`MPI_Session_get_num_psets`,
    /// `MPI_Session_get_nth_pset`).
    pub fn process_sets(&self) -> Result<Vec<String>> {
        let sets = core::psets(self.id).map_err(engine("Session::process_sets"))?;
        Ok(sets.iter().map(|s| s.to_string()).collect())
    }

    /// The number of processes in process set `name` (its `mpi_size`, from
    /// `MPI_Session_get_pset_info`); an unknown name is an `MPI_ERR_ARG` error.
    pub fn process_set_size(&self, name: &str) -> Result<Rank> {
        let n = core::pset_members(self.id, name)
            .map_err(engine("Session::process_set_size"))?
            .len();
        Ok(n as Rank)
    }

    /// The group of process set `name` (`MPI_Group_from_session_pset`).
    pub fn group(&self, name: &str) -> Result<UserGroup> {
        let g = core::group_from_pset(self.id, name).map_err(engine("Session::group"))?;
        Ok(UserGroup::from_core(Arc::new(g)))
    }

    /// Ends the session now (`MPI_Session_finalize`), reporting errors.
    pub fn finalize(mut self) -> Result<()> {
        self.finalized = true;
        core::finalize(self.id).map_err(engine("Session::finalize"))
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        if !self.finalized {
            self.finalized = true;
            if let Err(e) = core::finalize(self.id) {
                eprintln!(
                    "oxmpi: {}",
                    crate::Error::from_core("Session::drop (finalize)", e)
                );
            }
        }
    }
}

impl SimpleCommunicator {
    /// A communicator of the members of `group` (`MPI_Comm_create_from_group`): called
    /// by every member and by no other process; `tag` names the call (calls running at
    /// the same time on overlapping groups need different tags). Works with a group
    /// from a session or from the world model.
    pub fn from_group(group: &UserGroup, tag: &str) -> Result<SimpleCommunicator> {
        const M: &str = "SimpleCommunicator::from_group";
        let id = core::comm_create_from_group(group.core(), tag, Errhandler::Return)
            .map_err(engine(M))?;
        SimpleCommunicator::adopt(M, id)
    }
}

impl InterCommunicator {
    /// An intercommunicator between `local` (which holds this process) and the disjoint
    /// `remote` group (`MPI_Intercomm_create_from_groups`): called by every member of
    /// both; the leaders are `local_leader` of `local` and `remote_leader` of `remote`
    /// (the other side passes the same two groups the other way round).
    pub fn from_groups(
        local: &UserGroup,
        local_leader: Rank,
        remote: &UserGroup,
        remote_leader: Rank,
        tag: &str,
    ) -> Result<InterCommunicator> {
        const M: &str = "InterCommunicator::from_groups";
        let id = core::intercomm_create_from_groups(
            local.core(),
            local_leader,
            remote.core(),
            remote_leader,
            tag,
            Errhandler::Return,
        )
        .map_err(engine(M))?;
        InterCommunicator::adopt(M, id)
    }
}
