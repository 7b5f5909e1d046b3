//! Groups and communicators: who is in a communication universe, which context ids
//! separate its traffic, and which error handler reports its errors.

use crate::error::{err, ErrorClass, Result};
use std::sync::Arc;

/// Index of a communicator in the runtime's table.
pub type CommId = u32;
/// `MPI_COMM_WORLD`.
pub const WORLD: CommId = 0;
/// `MPI_COMM_SELF`.
pub const SELF: CommId = 1;

/// An ordered set of processes, named by world rank.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Group {
    members: Vec<u32>,
}

impl Group {
    pub fn new(members: Vec<u32>) -> Group {
        Group { members }
    }

    pub fn size(&self) -> i32 {
        self.members.len() as i32
    }

    /// World rank of group rank `r`.
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

/// The table of communicators; index = [`CommId`].
#[derive(Default)]
pub struct CommTable {
    slots: Vec<Option<Comm>>,
}

impl CommTable {
    pub fn insert(&mut self, c: Comm) -> CommId {
        if let Some(i) = self.slots.iter().skip(2).position(|s| s.is_none()) {
            self.slots[i + 2] = Some(c);
            (i + 2) as CommId
        } else {
            self.slots.push(Some(c));
            (self.slots.len() - 1) as CommId
        }
    }

    /// Puts a predefined communicator at its fixed index.
    pub fn set(&mut self, id: CommId, c: Comm) {
        let i = id as usize;
        if self.slots.len() <= i {
            self.slots.resize_with(i + 1, || None);
        }
        self.slots[i] = Some(c);
    }

    pub fn get(&self, id: CommId) -> Result<&Comm> {
        match self.slots.get(id as usize).and_then(|s| s.as_ref()) {
            Some(c) => Ok(c),
            None => err(ErrorClass::Comm, format!("invalid communicator (index {id})")),
        }
    }

    pub fn get_mut(&mut self, id: CommId) -> Result<&mut Comm> {
        match self.slots.get_mut(id as usize).and_then(|s| s.as_mut()) {
            Some(c) => Ok(c),
            None => err(ErrorClass::Comm, format!("invalid communicator (index {id})")),
        }
    }

    pub fn remove(&mut self, id: CommId) -> Option<Comm> {
        self.slots.get_mut(id as usize).and_then(|s| s.take())
    }
}
