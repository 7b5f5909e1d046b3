//! The collectives' share of the runtime: the operation table, the decision table's
//! tuning (filled from the tunables registry at `MPI_Init`: thresholds, forced
//! algorithms, the shared-memory path's limits), per-communicator sequence numbers (each
//! call's tag), a small cache of built schedules, and the pool of temporaries the
//! executor reuses.

use super::exec::Pool;
use super::op::OpTable;
use crate::comm::{Comm, Group};
use crate::error::{Error, ErrorClass, Result};
use crate::transport::Route;
use oxmpi_coll::decision::{choose, Tuning};
use oxmpi_coll::schedule::{build, Algorithm, Member, Schedule, ScheduleError, Spec};
use std::sync::{Arc, Weak};

/// Collective tags run over `0..TAG_SPACE`: below the tags communicator management
/// reserves on collective contexts (`0x7E00_0000` and up).
const TAG_SPACE: u32 = 0x4000_0000;
/// Schedules kept for reuse.
const CACHE_SLOTS: usize = 32;

/// The sequence counter of one context.
struct Seq {
    /// The group of the communicator that used the context when the count began; a
    /// different group object means a new communicator took the context id.
    group: Weak<Group>,
    next: u32,
    /// Every member is reachable by some transport.
    reachable: bool,
}

struct Cached {
    spec: Spec<'static>,
    me: Member,
    algo: Algorithm,
    sched: Arc<Schedule>,
}

/// Collective state of one process.
pub struct State {
    pub ops: OpTable,
    pub tuning: Tuning,
    seqs: Vec<Option<Seq>>,
    cache: Vec<Cached>,
    cache_next: usize,
    pool: Option<Pool>,
    /// Fast-path state by context slot.
    pub(crate) fast: Vec<Option<super::shm::Entry>>,
    /// Calls that ran each algorithm (by `Algorithm as usize`), and the last one run
    /// (index + 1, 0 before the first): the tools interface's collective variables.
    pub algo_calls: [u64; Algorithm::ALL.len()],
    pub last_algo: u32,
    /// Nonblocking and persistent collectives under way or initialised.
    pub nbc: super::nbc::Table,
    /// The IMPI job this process is part of (chapter 4's collectives), if any.
    pub impi: Option<Arc<super::impi::World>>,
}

impl State {
    /// The collective state for validated settings (`OXMPI_COLL_*`).
    pub fn from_settings(s: &crate::tunables::Settings) -> State {
        State::with_tuning(crate::tunables::coll_tuning(s))
    }

    pub fn with_tuning(tuning: Tuning) -> State {
        State {
            ops: OpTable::default(),
            tuning,
            seqs: Vec::new(),
            cache: Vec::with_capacity(CACHE_SLOTS),
            cache_next: 0,
            pool: Some(Pool::default()),
            fast: Vec::new(),
            algo_calls: [0; Algorithm::ALL.len()],
            last_algo: 0,
            nbc: Default::default(),
            impi: None,
        }
    }

    /// The tag of the next collective call on `c` (all members call collectives on a
    /// communicator in the same order, so they agree on it). Fails when a member cannot
    /// be reached by any transport.
    pub(crate) fn next_tag(&mut self, c: &Comm, route: impl Fn(u32) -> Route) -> Result<i32> {
        let slot = c.ctx as usize / 2;
        if self.seqs.len() <= slot {
            self.seqs.resize_with(slot + 1, || None);
        }
        let fresh = match &self.seqs[slot] {
            Some(s) => s.group.as_ptr() != Arc::as_ptr(&c.group),
            None => true,
        };
        if fresh {
            let remote = c.remote.as_deref().map(|g| g.members()).unwrap_or(&[]);
            let reachable = c
                .group
                .members()
                .iter()
                .chain(remote)
                .all(|&w| route(w) != Route::Unreachable);
            self.seqs[slot] = Some(Seq {
                group: Arc::downgrade(&c.group),
                next: 0,
                reachable,
            });
        }
        let s = self.seqs[slot].as_mut().expect("just set");
        if !s.reachable {
            return Err(Error::new(
                ErrorClass::Other,
                "a member of the communicator is on another node and no network transport is available",
            ));
        }
        let tag = s.next;
        s.next = (s.next + 1) % TAG_SPACE;
        Ok(tag as i32)
    }

    /// Forgets the sequence number of context `ctx` (its communicator was freed), so a
    /// communicator that later gets the same id starts at 0 at every member.
    pub fn forget_context(&mut self, ctx: u32) {
        if let Some(s) = self.seqs.get_mut(ctx as usize / 2) {
            *s = None;
        }
        if let Some(f) = self.fast.get_mut(ctx as usize / 2) {
            *f = None;
        }
    }

    /// Records the fast-path state of the communicator with `group` on context slot
    /// `slot` (`None`: it uses the point-to-point algorithms).
    pub(crate) fn set_fast(
        &mut self,
        slot: usize,
        group: &Arc<Group>,
        comm: Option<Arc<super::shm::ShmComm>>,
    ) {
        if self.fast.len() <= slot {
            self.fast.resize_with(slot + 1, || None);
        }
        self.fast[slot] = Some(super::shm::entry(group, comm));
    }

    /// The schedule for `spec` on this rank: chosen by the decision table, built once and
    /// then reused (only specs without per-rank arrays are cached).
    pub(crate) fn schedule(
        &mut self,
        spec: &Spec<'_>,
        me: Member,
    ) -> std::result::Result<Arc<Schedule>, ScheduleError> {
        let algo = choose(&self.tuning, spec, me.size);
        self.algo_calls[algo as usize] += 1;
        self.last_algo = algo as u32 + 1;
        let key = cacheable(spec);
        if let Some(k) = &key {
            if let Some(c) = self
                .cache
                .iter()
                .find(|c| c.spec == *k && c.me == me && c.algo == algo)
            {
                return Ok(c.sched.clone());
            }
        }
        let sched = Arc::new(build(spec, me, algo)?);
        if let Some(k) = key {
            let entry = Cached {
                spec: k,
                me,
                algo,
                sched: sched.clone(),
            };
            if self.cache.len() < CACHE_SLOTS {
                self.cache.push(entry);
            } else {
                self.cache[self.cache_next] = entry;
                self.cache_next = (self.cache_next + 1) % CACHE_SLOTS;
            }
        }
        Ok(sched)
    }

    pub(crate) fn take_pool(&mut self) -> Pool {
        self.pool.take().unwrap_or_default()
    }

    pub(crate) fn put_pool(&mut self, p: Pool) {
        self.pool = Some(p);
    }
}

/// The spec with a `'static` lifetime when it carries no per-rank arrays.
fn cacheable(spec: &Spec<'_>) -> Option<Spec<'static>> {
    Some(match *spec {
        Spec::Barrier => Spec::Barrier,
        Spec::Bcast { root, bytes } => Spec::Bcast { root, bytes },
        Spec::Reduce {
            root,
            elems,
            commutative,
            in_place,
        } => Spec::Reduce {
            root,
            elems,
            commutative,
            in_place,
        },
        Spec::Allreduce {
            elems,
            commutative,
            in_place,
        } => Spec::Allreduce {
            elems,
            commutative,
            in_place,
        },
        Spec::ReduceScatterBlock {
            elems,
            commutative,
            in_place,
        } => Spec::ReduceScatterBlock {
            elems,
            commutative,
            in_place,
        },
        Spec::Scan {
            elems,
            commutative,
            in_place,
        } => Spec::Scan {
            elems,
            commutative,
            in_place,
        },
        Spec::Exscan {
            elems,
            commutative,
            in_place,
        } => Spec::Exscan {
            elems,
            commutative,
            in_place,
        },
        Spec::Gather {
            root,
            bytes,
            in_place,
        } => Spec::Gather {
            root,
            bytes,
            in_place,
        },
        Spec::Scatter {
            root,
            bytes,
            in_place,
        } => Spec::Scatter {
            root,
            bytes,
            in_place,
        },
        Spec::Allgather { bytes, in_place } => Spec::Allgather { bytes, in_place },
        Spec::Alltoall { bytes, in_place } => Spec::Alltoall { bytes, in_place },
        Spec::ReduceScatter { .. }
        | Spec::Gatherv { .. }
        | Spec::Scatterv { .. }
        | Spec::Allgatherv { .. }
        | Spec::Alltoallv { .. } => return None,
    })
}

/// The engine error for a schedule that cannot be built.
pub(crate) fn schedule_error(e: ScheduleError) -> Error {
    let class = match e {
        ScheduleError::BadRoot { .. } => ErrorClass::Root,
        ScheduleError::InPlaceNotAllowed { .. } => ErrorClass::Buffer,
        ScheduleError::SizeMismatch { .. } => ErrorClass::Truncate,
        ScheduleError::BadLength { .. } | ScheduleError::BadSize { .. } => ErrorClass::Count,
        ScheduleError::BadMember { .. } | ScheduleError::Unsuitable { .. } => ErrorClass::Intern,
    };
    Error::new(class, e.to_string())
}
