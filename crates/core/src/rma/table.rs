//! The window table: window indices to windows, readable by the operations and flushes
//! without a lock or a reference-count update.
//!
//! The table itself is a mutex-protected vector of `Arc<Win>`. The first
//! [`FAST_SLOTS`] indices also have an atomic pointer to their window, which a lookup
//! reads with one load. `MPI_Win_free` clears the pointer before it takes the window
//! out of the table, and the window then waits in a retired list until the next
//! window is installed or removed: MPI forbids freeing a window that a thread of the
//! process still uses, and even a program that breaks that rule with a racing thread
//! finds the window alive, not its memory reused.

use super::{Win, WinId};
use crate::error::{Error, ErrorClass, Result};
use std::sync::atomic::{AtomicPtr, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

static WINS: Mutex<Vec<Option<Arc<Win>>>> = Mutex::new(Vec::new());

/// Windows with an index below this have a lock-free entry in [`FAST`].
const FAST_SLOTS: usize = 64;

/// The window of each of the first indices, or null; each non-null pointer is that of
/// an `Arc<Win>` held by [`WINS`] or, once removed, by [`RETIRED`].
static FAST: [AtomicPtr<Win>; FAST_SLOTS] =
    [const { AtomicPtr::new(std::ptr::null_mut()) }; FAST_SLOTS];

/// The windows removed since the last install or removal before this one.
static RETIRED: Mutex<Vec<Arc<Win>>> = Mutex::new(Vec::new());

fn table() -> MutexGuard<'static, Vec<Option<Arc<Win>>>> {
    WINS.lock().unwrap_or_else(|p| p.into_inner())
}

fn retired() -> MutexGuard<'static, Vec<Arc<Win>>> {
    RETIRED.lock().unwrap_or_else(|p| p.into_inner())
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

/// Runs `f` on window `id` (or fails with `MPI_ERR_WIN`): no lock and no reference
/// count for the first [`FAST_SLOTS`] indices.
#[inline]
pub(crate) fn with_win<R>(id: WinId, f: impl FnOnce(&Win) -> Result<R>) -> Result<R> {
    if let Some(slot) = FAST.get(id as usize) {
        let p = slot.load(Ordering::Acquire);
        if !p.is_null() {
            // SAFETY: a non-null entry points to a window held by the table or the
            // retired list, which keeps it past any use a valid program makes (see
            // the module comment).
            return f(unsafe { &*p });
        }
    }
    let w = win(id)?;
    f(&w)
}

/// Runs `f` on window `id` if it has a lock-free entry; false otherwise (the caller's
/// general path then looks the window up, or reports it invalid).
#[inline]
pub(crate) fn peek(id: WinId, f: impl FnOnce(&Win) -> bool) -> bool {
    let Some(slot) = FAST.get(id as usize) else {
        return false;
    };
    let p = slot.load(Ordering::Acquire);
    // SAFETY: as in `with_win`.
    !p.is_null() && f(unsafe { &*p })
}

/// Adds a window; returns its index.
pub(crate) fn install(w: Arc<Win>) -> WinId {
    let old = std::mem::take(&mut *retired());
    let mut t = table();
    let p = Arc::as_ptr(&w) as *mut Win;
    let w = Some(w);
    let id = match t.iter().position(|s| s.is_none()) {
        Some(i) => {
            t[i] = w;
            i
        }
        None => {
            t.push(w);
            t.len() - 1
        }
    };
    if let Some(slot) = FAST.get(id) {
        slot.store(p, Ordering::Release);
    }
    drop(t);
    drop(old);
    id as WinId
}

/// Removes window `id` from the table.
pub(crate) fn remove(id: WinId) {
    if let Some(slot) = FAST.get(id as usize) {
        slot.store(std::ptr::null_mut(), Ordering::Release);
    }
    let gone = table().get_mut(id as usize).and_then(|s| s.take());
    let old = {
        let mut r = retired();
        let old = std::mem::take(&mut *r);
        r.extend(gone);
        old
    };
    drop(old);
}
