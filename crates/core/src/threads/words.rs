//! The words of the thread machinery that threads share without a lock of their own:
//! the sleeper count and the process-local doorbell of the wake-up rule, and the count
//! of threads inside a blocking wait. Types over [`crate::sync`], so that the model
//! checks (`loom_models` below, `--cfg loom`) run this very code.

use crate::sync::AtomicU32;
use std::sync::atomic::Ordering;
use std::time::Duration;

/// Who sleeps in a wait, and the process-local doorbell they sleep on (see
/// [`super`]'s wake-up rule).
pub(crate) struct Sleepers {
    /// Application threads asleep (counted only while several threads may be inside
    /// MPI), plus [`BACKGROUND`] while the progress thread sleeps.
    count: AtomicU32,
    /// The futex word of threads that sleep on no node doorbell.
    bell: AtomicU32,
    /// How many threads sleep on `bell` (the others sleep on the node's doorbell or in
    /// epoll): a ring with none costs no system call.
    on_bell: AtomicU32,
    #[cfg(loom)]
    parking: crate::sync::Parking,
}

/// [`Sleepers`]' bit of the sleeping progress thread.
pub(crate) const BACKGROUND: u32 = 1 << 31;

impl Sleepers {
    #[cfg(not(loom))]
    pub(crate) const fn new() -> Sleepers {
        Sleepers {
            count: AtomicU32::new(0),
            bell: AtomicU32::new(0),
            on_bell: AtomicU32::new(0),
        }
    }

    #[cfg(loom)]
    pub(crate) fn new() -> Sleepers {
        Sleepers {
            count: AtomicU32::new(0),
            bell: AtomicU32::new(0),
            on_bell: AtomicU32::new(0),
            parking: crate::sync::Parking::new(),
        }
    }

    /// The count; read with the runtime lock held, under which every sleeper counts
    /// itself (so a relaxed load sees every sleeper of an earlier holder).
    #[inline]
    pub(crate) fn count(&self) -> u32 {
        self.count.load(Ordering::Relaxed)
    }

    /// Counts the calling thread (with the runtime lock held) and returns the
    /// doorbell's value, for [`Sleepers::sleep`]. `bg`: the progress thread.
    pub(crate) fn start(&self, bg: bool) -> u32 {
        if bg {
            self.count.fetch_or(BACKGROUND, Ordering::SeqCst);
        } else {
            self.count.fetch_add(1, Ordering::SeqCst);
        }
        self.bell.load(Ordering::SeqCst)
    }

    /// The calling thread no longer sleeps.
    pub(crate) fn stop(&self, bg: bool) {
        if bg {
            self.count.fetch_and(!BACKGROUND, Ordering::SeqCst);
        } else {
            self.count.fetch_sub(1, Ordering::SeqCst);
        }
    }

    /// Rings the doorbell: every thread asleep on it wakes. The system call is made
    /// only when a thread counted itself on the bell ([`Sleepers::on_bell`]): both
    /// sides act with the runtime lock held, so the count read here is exact but for
    /// sleepers that already woke.
    pub(crate) fn ring(&self) {
        self.bell.fetch_add(1, Ordering::SeqCst);
        if self.on_bell.load(Ordering::Relaxed) == 0 {
            return;
        }
        #[cfg(not(loom))]
        crate::sys::futex::wake(&self.bell, i32::MAX);
        #[cfg(loom)]
        self.parking.wake_all();
    }

    /// The calling thread, counted by [`Sleepers::start`], will sleep on the bell
    /// (runtime lock held); [`Sleepers::sleep`] uncounts it.
    pub(crate) fn on_bell(&self) {
        self.on_bell.fetch_add(1, Ordering::SeqCst);
    }

    /// Sleeps on the doorbell unless it rang since `seen`, at most `nap` (after
    /// [`Sleepers::on_bell`]).
    pub(crate) fn sleep(&self, seen: u32, nap: Duration) {
        #[cfg(not(loom))]
        crate::sys::futex::wait(&self.bell, seen, nap);
        #[cfg(loom)]
        {
            let _ = nap;
            self.parking.wait(&self.bell, seen);
        }
        self.on_bell.fetch_sub(1, Ordering::Relaxed);
    }
}

/// The count of threads inside a blocking wait. Every change is made with the runtime
/// lock held, so a plain load and store suffice: no read-modify-write (a locked
/// instruction on x86) on a call's path.
pub(crate) struct WaitCount(AtomicU32);

impl WaitCount {
    #[cfg(not(loom))]
    pub(crate) const fn new() -> WaitCount {
        WaitCount(AtomicU32::new(0))
    }

    #[cfg(loom)]
    pub(crate) fn new() -> WaitCount {
        WaitCount(AtomicU32::new(0))
    }

    /// One more thread waits (runtime lock held).
    #[inline]
    pub(crate) fn enter(&self) {
        self.0
            .store(self.0.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
    }

    /// One thread fewer waits (runtime lock held).
    #[inline]
    pub(crate) fn leave(&self) {
        self.0
            .store(self.0.load(Ordering::Relaxed) - 1, Ordering::Relaxed);
    }

    /// The count (runtime lock held).
    #[inline]
    pub(crate) fn get(&self) -> u32 {
        self.0.load(Ordering::Relaxed)
    }
}
