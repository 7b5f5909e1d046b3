//! The window table: window indices to windows, and a per-thread copy of it that the
//! operations and flushes read without a lock or a reference-count update.
//!
//! The table itself is a mutex-protected vector of `Arc<Win>`. Each thread keeps a
//! copy of the entries it used, stamped with the table's generation, which every
//! install and removal advances; a thread whose copy is stale drops it and copies again
//! at its next lookup. So a window removed by `MPI_Win_free` lives on (mapped, but in
//! no table) until each thread that used it makes its next window call or exits; the
//! freeing thread drops its copy at once. A copy is never changed while a lookup of the
//! same thread is using it (a nested lookup that would change it takes the table's
//! entry).

use super::{Win, WinId};
use crate::error::{Error, ErrorClass, Result};
use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

static WINS: Mutex<Vec<Option<Arc<Win>>>> = Mutex::new(Vec::new());

/// Advanced by every change of [`WINS`].
static GENERATION: AtomicU64 = AtomicU64::new(1);

/// This thread's copy of the table.
struct Copy {
    generation: u64,
    wins: Vec<Option<Arc<Win>>>,
}

thread_local! {
    static COPY: RefCell<Copy> = const {
        RefCell::new(Copy {
            generation: 0,
            wins: Vec::new(),
        })
    };
}

fn table() -> MutexGuard<'static, Vec<Option<Arc<Win>>>> {
    WINS.lock().unwrap_or_else(|p| p.into_inner())
}

fn invalid(id: WinId) -> Error {
    Error::new(
        ErrorClass::Win,
        format!("invalid window (index {id} is not a live window)"),
    )
}

/// The window `id`, or `MPI_ERR_WIN`.
pub fn win(id: WinId) -> Result<Arc<Win>> {
    table()
        .get(id as usize)
        .and_then(|s| s.clone())
        .ok_or_else(|| invalid(id))
}

/// Runs `f` on window `id` (or fails with `MPI_ERR_WIN`) through this thread's copy of
/// the table: no lock and no reference count on the usual path.
#[inline]
pub(crate) fn with_win<R>(id: WinId, f: impl FnOnce(&Win) -> Result<R>) -> Result<R> {
    let generation = GENERATION.load(Ordering::Acquire);
    COPY.with(|c| {
        // Shared borrows of the copy last while `f` runs, so a nested lookup that
        // would change it (refresh, fill) cannot, and takes the table's entry instead.
        if let Ok(copy) = c.try_borrow() {
            if copy.generation == generation {
                if let Some(Some(w)) = copy.wins.get(id as usize) {
                    return f(w);
                }
            }
        }
        match c.try_borrow_mut() {
            Ok(mut copy) => {
                if copy.generation != generation {
                    copy.wins.clear();
                    copy.generation = generation;
                }
                let w = win(id)?;
                let i = id as usize;
                if copy.wins.len() <= i {
                    copy.wins.resize(i + 1, None);
                }
                copy.wins[i] = Some(w);
            }
            Err(_) => {
                let w = win(id)?;
                return f(&w);
            }
        }
        let copy = c.borrow();
        match copy.wins.get(id as usize) {
            Some(Some(w)) => f(w),
            _ => {
                let w = win(id)?;
                f(&w)
            }
        }
    })
}

/// Adds a window; returns its index.
pub(crate) fn install(w: Arc<Win>) -> WinId {
    let mut t = table();
    let w = Some(w);
    let id = match t.iter().position(|s| s.is_none()) {
        Some(i) => {
            t[i] = w;
            i as WinId
        }
        None => {
            t.push(w);
            (t.len() - 1) as WinId
        }
    };
    GENERATION.fetch_add(1, Ordering::AcqRel);
    id
}

/// Removes window `id` from the table (and from this thread's copy).
pub(crate) fn remove(id: WinId) {
    let gone = {
        let mut t = table();
        let gone = t.get_mut(id as usize).and_then(|s| s.take());
        GENERATION.fetch_add(1, Ordering::AcqRel);
        gone
    };
    let _ = COPY.try_with(|c| {
        if let Ok(mut c) = c.try_borrow_mut() {
            c.wins.clear();
            c.generation = 0;
        }
    });
    drop(gone);
}
