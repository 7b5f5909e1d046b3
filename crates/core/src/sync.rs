//! The synchronisation primitives of the thread machinery's lock-free parts (the runtime
//! lock's flag, the sleeper count and the process-local doorbell, the wait count):
//! std's, or loom's when the crate is built with `--cfg loom` for the model checks
//! (docs/ARCHITECTURE.md, threads). Loom's atomics have no `const` constructor and its
//! threads must yield in every spin, so the code that uses these goes through this
//! module only.

#[cfg(loom)]
pub(crate) use loom::sync::atomic::{AtomicBool, AtomicU32};
#[cfg(not(loom))]
pub(crate) use std::sync::atomic::{AtomicBool, AtomicU32};

/// A pause in a spin that waits for another thread (loom runs that thread instead).
#[inline]
pub(crate) fn spin_loop() {
    #[cfg(loom)]
    loom::thread::yield_now();
    #[cfg(not(loom))]
    std::hint::spin_loop();
}

/// Gives the CPU to another thread.
#[inline]
pub(crate) fn yield_now() {
    #[cfg(loom)]
    loom::thread::yield_now();
    #[cfg(not(loom))]
    std::thread::yield_now();
}

/// A futex word's wait and wake under loom, where no system call can block a modelled
/// thread: the word's check and the sleep are atomic with respect to a wake, as the
/// kernel makes them. There is no timeout: a wake-up the protocol loses leaves a thread
/// asleep for good, which loom reports as a deadlock.
#[cfg(loom)]
pub(crate) struct Parking {
    lock: loom::sync::Mutex<()>,
    cond: loom::sync::Condvar,
}

#[cfg(loom)]
impl Parking {
    pub(crate) fn new() -> Parking {
        Parking {
            lock: loom::sync::Mutex::new(()),
            cond: loom::sync::Condvar::new(),
        }
    }

    /// Sleeps until woken unless `word` differs from `seen`.
    pub(crate) fn wait(&self, word: &AtomicU32, seen: u32) {
        let g = self.lock.lock().unwrap();
        if word.load(std::sync::atomic::Ordering::SeqCst) == seen {
            drop(self.cond.wait(g).unwrap());
        }
    }

    /// Wakes every thread asleep in [`Parking::wait`].
    pub(crate) fn wake_all(&self) {
        let _g = self.lock.lock().unwrap();
        self.cond.notify_all();
    }
}
