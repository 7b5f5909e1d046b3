//! Dynamic process management: the parent intercommunicator (`MPI_Comm_get_parent`)
//! and `MPI_Comm_disconnect`.
//!
//! The parent is the intercommunicator to the processes that spawned this one. A
//! process started by `mpiexec` (or as a singleton) has none; spawning, when it comes,
//! records the intercommunicator it builds at start-up with [`set_parent`]. Freeing or
//! disconnecting it makes `MPI_Comm_get_parent` return `MPI_COMM_NULL` again, as the
//! standard says.

use crate::comm::{CommId, NO_COMM, SELF, WORLD};
use crate::error::{err, ErrorClass, Result};
use crate::runtime;
use std::sync::atomic::{AtomicU32, Ordering};

/// The parent intercommunicator, or `NO_COMM`.
static PARENT: AtomicU32 = AtomicU32::new(NO_COMM);

/// Records the intercommunicator to the parents (for spawned processes).
pub fn set_parent(id: CommId) {
    PARENT.store(id, Ordering::Relaxed);
}

/// `MPI_Comm_get_parent`: the parent intercommunicator, None when the process was
/// not spawned or the parent was freed or disconnected.
pub fn parent() -> Result<Option<CommId>> {
    runtime::with(|_| Ok(()))?;
    let p = PARENT.load(Ordering::Relaxed);
    Ok((p != NO_COMM).then_some(p))
}

/// Called when communicator `id` is freed: it is no longer the parent.
pub fn forget(id: CommId) {
    let _ = PARENT.compare_exchange(id, NO_COMM, Ordering::Relaxed, Ordering::Relaxed);
}

/// True while a request started on communicator `id` has not completed.
fn pending(rt: &runtime::Runtime, id: CommId) -> bool {
    let dev = &rt.device;
    let live = dev.live_requests();
    let mut found = 0;
    let mut r = 0u32;
    while found < live {
        if let Some(q) = dev.request(r) {
            found += 1;
            if q.owner == id && !q.is_complete() {
                return true;
            }
        }
        r = r.wrapping_add(1);
        if r == 0 {
            break;
        }
    }
    false
}

/// `MPI_Comm_disconnect`: waits until every operation started on the communicator
/// here has completed, then until every member has got that far (a barrier over the
/// communicator, both groups of an intercommunicator), then frees it. The program's
/// request handles stay valid (completed) until it waits on or frees them.
pub fn disconnect(id: CommId) -> Result<()> {
    if id == WORLD || id == SELF {
        return err(
            ErrorClass::Comm,
            "MPI_COMM_WORLD and MPI_COMM_SELF cannot be disconnected",
        );
    }
    runtime::with(|rt| rt.comms.get(id).map(|_| ()))?;
    runtime::block_on(|rt| Ok((!pending(rt, id)).then_some(())))?;
    crate::coll::movement::barrier(id)?;
    crate::commops::comm_free(id)?;
    forget(id);
    Ok(())
}
