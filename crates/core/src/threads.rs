//! What the runtime keeps to let several threads of a process be inside MPI at once
//! (`MPI_THREAD_MULTIPLE`, or the progress thread at any level): whether that can
//! happen at all, which threads sleep in a wait and must be woken when another thread
//! changes the state, and how many threads are inside a blocking wait.
//!
//! Nothing here costs a process that never has two threads inside MPI more than one
//! load of [`SLEEPERS`] as a call releases the runtime lock: the counters are only
//! touched while [`concurrent`] is true.
//!
//! The wake-up rule: a thread that decides to sleep counts itself in [`SLEEPERS`] while
//! it still holds the runtime lock, reads the doorbell counter it will sleep on, and
//! releases the lock without waking anyone. Any later holder of the lock sees the count
//! and, before releasing, bumps that counter and wakes every sleeper (whatever it did may
//! be what they wait for: a message it received for them, a send to this very rank, a
//! request it completed). A sleeper woken for nothing polls once and sleeps again.

use crate::sys::futex;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::time::Duration;

/// True once more than one thread may be inside MPI at a time.
static CONCURRENT: AtomicBool = AtomicBool::new(false);

/// Threads of this process asleep in a wait (counted only while [`concurrent`]), plus
/// [`BACKGROUND`] while the progress thread sleeps.
static SLEEPERS: AtomicU32 = AtomicU32::new(0);

/// [`SLEEPERS`] bit of the sleeping progress thread. It is woken only when a lock
/// holder leaves it something no packet will announce (see `runtime`), not after
/// every call as the application's own sleeping threads are.
pub(crate) const BACKGROUND: u32 = 1 << 31;

/// The doorbell of threads that cannot sleep on the node's (a rank without a
/// shared-memory segment), and of the second and later threads of a rank with TCP
/// connections (one thread at a time sleeps in the epoll set, see [`EPOLL_TAKEN`]).
static LOCAL_BELL: AtomicU32 = AtomicU32::new(0);

/// A thread of this process sleeps in the TCP epoll set.
static EPOLL_TAKEN: AtomicBool = AtomicBool::new(false);

/// Threads inside a blocking wait (counted only while [`concurrent`]).
static WAITING: AtomicU32 = AtomicU32::new(0);

/// Whether several threads may be inside MPI at once.
#[inline]
pub fn concurrent() -> bool {
    CONCURRENT.load(Ordering::Relaxed)
}

/// From now on several threads may be inside MPI at once (never turned off: a thread
/// level is granted for the life of the process, and the counters stay exact).
pub(crate) fn allow_concurrency() {
    CONCURRENT.store(true, Ordering::SeqCst);
}

/// Who sleeps (a count of application threads and the [`BACKGROUND`] bit); nonzero
/// asks a lock holder to consider waking them. Read with the runtime lock held.
#[inline]
pub(crate) fn sleepers() -> u32 {
    SLEEPERS.load(Ordering::Relaxed)
}

/// Counts the calling thread among the sleepers (with the runtime lock held) and
/// returns the count of the process-local doorbell, for [`sleep_local`]. `bg`: the
/// progress thread.
pub(crate) fn start_sleeping(bg: bool) -> u32 {
    if bg {
        SLEEPERS.fetch_or(BACKGROUND, Ordering::SeqCst);
    } else {
        SLEEPERS.fetch_add(1, Ordering::SeqCst);
    }
    LOCAL_BELL.load(Ordering::SeqCst)
}

/// The calling thread no longer sleeps.
pub(crate) fn stop_sleeping(bg: bool) {
    if bg {
        SLEEPERS.fetch_and(!BACKGROUND, Ordering::SeqCst);
    } else {
        SLEEPERS.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Wakes the threads sleeping on the process-local doorbell (the caller wakes those on
/// the node's doorbell and in epoll through the device).
pub(crate) fn ring_local() {
    LOCAL_BELL.fetch_add(1, Ordering::SeqCst);
    futex::wake(&LOCAL_BELL, i32::MAX);
}

/// Sleeps on the process-local doorbell unless it rang since `seen`, at most `nap`.
pub(crate) fn sleep_local(seen: u32, nap: Duration) {
    futex::wait(&LOCAL_BELL, seen, nap);
}

/// Takes the right to sleep in the epoll set; true if the caller got it (release it
/// with [`release_epoll`]).
pub(crate) fn take_epoll() -> bool {
    !concurrent() || !EPOLL_TAKEN.swap(true, Ordering::AcqRel)
}

/// Gives back the right taken by [`take_epoll`], and wakes the threads on the local
/// doorbell: one of them takes the epoll set over if the caller leaves MPI (they hear
/// of shared-memory and TCP packets only through the thread in epoll).
pub(crate) fn release_epoll() {
    if concurrent() {
        EPOLL_TAKEN.store(false, Ordering::Release);
        if SLEEPERS.load(Ordering::SeqCst) != 0 {
            ring_local();
        }
    }
}

/// Counts a thread inside a blocking wait while it lives.
pub(crate) struct Waiting(bool);

impl Waiting {
    #[inline]
    pub(crate) fn enter() -> Waiting {
        let on = concurrent();
        if on {
            WAITING.fetch_add(1, Ordering::SeqCst);
        }
        Waiting(on)
    }
}

impl Drop for Waiting {
    #[inline]
    fn drop(&mut self) {
        if self.0 {
            WAITING.fetch_sub(1, Ordering::SeqCst);
        }
    }
}

/// Threads inside a blocking wait now.
pub(crate) fn waiting() -> u32 {
    WAITING.load(Ordering::SeqCst)
}

/// Several threads wait at once: none of them should spin on a CPU the others need.
#[inline]
pub(crate) fn crowded() -> bool {
    concurrent() && WAITING.load(Ordering::Relaxed) > 1
}
