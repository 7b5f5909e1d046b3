//! The lock around the process-wide runtime state.
//!
//! Every MPI call takes it, so its uncontended path is one compare-and-swap to take it
//! and a plain store to release it. (`std::sync::Mutex` releases with an atomic swap: a
//! full fence that also waits until the packet the call just wrote into shared memory
//! has left the core.) Calls hold it for short steps only (a blocked call releases it
//! between polls and never sleeps holding it), so a waiter spins briefly and then yields
//! the CPU instead of sleeping in the kernel.

use crate::sync::{spin_loop, yield_now, AtomicBool};
use std::cell::UnsafeCell;
use std::ops::{Deref, DerefMut};
use std::sync::atomic::Ordering;

/// Spins before a waiter starts yielding the CPU.
const SPINS: u32 = 64;

/// A value behind the lock.
pub struct StateLock<T> {
    locked: AtomicBool,
    value: UnsafeCell<T>,
}

// SAFETY: the value is only reached through a guard, and at most one guard exists at a
// time (the `locked` flag, taken with Acquire and released with Release, orders every
// access); T: Send because the value moves between the threads that take the lock.
unsafe impl<T: Send> Sync for StateLock<T> {}

impl<T> StateLock<T> {
    #[cfg(not(loom))]
    pub const fn new(value: T) -> StateLock<T> {
        StateLock {
            locked: AtomicBool::new(false),
            value: UnsafeCell::new(value),
        }
    }

    #[cfg(loom)]
    pub fn new(value: T) -> StateLock<T> {
        StateLock {
            locked: AtomicBool::new(false),
            value: UnsafeCell::new(value),
        }
    }

    /// The flag's address, which names the lock to Valgrind's tools (`vg`).
    #[inline]
    fn word(&self) -> *const u8 {
        std::ptr::from_ref(&self.locked).cast()
    }

    /// Takes the lock, waiting as long as another thread holds it.
    #[inline]
    pub fn lock(&self) -> StateGuard<'_, T> {
        if self
            .locked
            .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            self.lock_contended();
        }
        crate::vg::happens_after(self.word());
        StateGuard { lock: self }
    }

    /// Takes the lock if no other thread holds it.
    #[inline]
    pub fn try_lock(&self) -> Option<StateGuard<'_, T>> {
        // Not `then_some`: a guard made for a failed attempt would release the lock of
        // the thread that holds it when dropped.
        match self
            .locked
            .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
        {
            Ok(_) => {
                crate::vg::happens_after(self.word());
                Some(StateGuard { lock: self })
            }
            Err(_) => None,
        }
    }

    #[cold]
    fn lock_contended(&self) {
        let mut tries = 0u32;
        loop {
            if !self.locked.load(Ordering::Relaxed)
                && self
                    .locked
                    .compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed)
                    .is_ok()
            {
                return;
            }
            tries = tries.saturating_add(1);
            if tries < SPINS {
                spin_loop();
            } else {
                yield_now();
            }
        }
    }
}

/// Access to the value while the lock is held; dropping it releases the lock.
pub struct StateGuard<'a, T> {
    lock: &'a StateLock<T>,
}

impl<T> Deref for StateGuard<'_, T> {
    type Target = T;
    #[inline]
    fn deref(&self) -> &T {
        // SAFETY: this guard is the only one (see the Sync impl).
        unsafe { &*self.lock.value.get() }
    }
}

impl<T> DerefMut for StateGuard<'_, T> {
    #[inline]
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: as for deref, and the guard is borrowed mutably.
        unsafe { &mut *self.lock.value.get() }
    }
}

impl<T> Drop for StateGuard<'_, T> {
    #[inline]
    fn drop(&mut self) {
        crate::vg::happens_before(self.lock.word());
        self.lock.locked.store(false, Ordering::Release);
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn try_lock_fails_while_held_and_leaves_the_lock_held() {
        let lock = StateLock::new(0u32);
        let g = lock.lock();
        assert!(lock.try_lock().is_none());
        assert!(
            lock.try_lock().is_none(),
            "a failed try_lock released the lock"
        );
        drop(g);
        assert!(lock.try_lock().is_some());
    }

    #[test]
    fn excludes_concurrent_holders() {
        let lock = Arc::new(StateLock::new((0u64, 0u64)));
        let threads: Vec<_> = (0..4)
            .map(|_| {
                let lock = lock.clone();
                std::thread::spawn(move || {
                    for _ in 0..20_000 {
                        let mut g = lock.lock();
                        // Two plain fields updated apart: a second holder would tear them.
                        let a = g.0;
                        g.0 = a + 1;
                        std::hint::black_box(&mut *g);
                        g.1 += 1;
                        assert_eq!(g.0, g.1);
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        let g = lock.lock();
        assert_eq!(*g, (80_000, 80_000));
    }
}
