//! What the runtime keeps to let several threads of a process be inside MPI at once
//! (`MPI_THREAD_MULTIPLE`, or the progress thread at any level): whether that can
//! happen at all, which threads sleep in a wait and must be woken when another thread
//! changes the state, and how many threads are inside a blocking wait; and, below
//! `MULTIPLE`, which thread alone may call MPI now ([`OWNER`]), so that a call from
//! another one is refused.
//!
//! Nothing here costs a call more than plain loads and stores: one load of [`SLEEPERS`]
//! as it releases the runtime lock, one of [`OWNER`] (and the thread pointer) as it
//! takes it, and a store to [`WAITING`] or [`OWNER`] as a blocking wait starts and ends
//! (under the lock, so no atomic read-modify-write). The sleeper counters are only
//! touched while [`concurrent`] is true, which under `MULTIPLE` begins with the first
//! call of a second thread: a program that asks for `MULTIPLE` and calls from one thread
//! runs `SINGLE`'s code.
//!
//! The wake-up rule: a thread that decides to sleep counts itself in [`SLEEPERS`] while
//! it still holds the runtime lock, reads the doorbell counter it will sleep on, and
//! releases the lock without waking anyone. Any later holder of the lock sees the count
//! and, before releasing, bumps that counter and wakes every sleeper (whatever it did may
//! be what they wait for: a message it received for them, a send to this very rank, a
//! request it completed). A sleeper woken for nothing polls once and sleeps again.

#[cfg(all(test, loom))]
mod loom_models;
mod words;

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicUsize, Ordering};
use std::time::Duration;
use words::{Sleepers, WaitCount};

/// True once more than one thread may be inside MPI at a time.
static CONCURRENT: AtomicBool = AtomicBool::new(false);

/// Threads of this process asleep in a wait (counted only while [`concurrent`]), plus
/// [`BACKGROUND`] while the progress thread sleeps; and the doorbell of threads that
/// cannot sleep on the node's (a rank without a shared-memory segment), and of the
/// second and later threads of a rank with TCP connections (one thread at a time sleeps
/// in the epoll set, see [`EPOLL_TAKEN`]).
#[cfg(not(loom))]
static SLEEPERS: Sleepers = Sleepers::new();

/// Threads inside a blocking wait (counted only while [`concurrent`], see [`Inside`]).
#[cfg(not(loom))]
static WAITING: WaitCount = WaitCount::new();

#[cfg(loom)]
loom::lazy_static! {
    static ref SLEEPERS: Sleepers = Sleepers::new();
    static ref WAITING: WaitCount = WaitCount::new();
}

/// The sleeper count's bit of the sleeping progress thread. It is woken only when a
/// lock holder leaves it something no packet will announce (see `runtime`), not after
/// every call as the application's own sleeping threads are.
pub(crate) const BACKGROUND: u32 = words::BACKGROUND;

/// A thread of this process sleeps in the TCP epoll set.
static EPOLL_TAKEN: AtomicBool = AtomicBool::new(false);

/// Whether several threads may be inside MPI at once.
#[inline]
pub fn concurrent() -> bool {
    CONCURRENT.load(Ordering::Relaxed)
}

/// From now on several threads may be inside MPI at once (never turned off: the
/// counters stay exact). Set when a session is granted `MULTIPLE`, when a second thread
/// calls under `MULTIPLE`, and when the progress thread starts.
pub(crate) fn allow_concurrency() {
    CONCURRENT.store(true, Ordering::SeqCst);
}

/// Who sleeps (a count of application threads and the [`BACKGROUND`] bit); nonzero
/// asks a lock holder to consider waking them. Read with the runtime lock held.
#[inline]
pub(crate) fn sleepers() -> u32 {
    SLEEPERS.count()
}

/// Counts the calling thread among the sleepers (with the runtime lock held) and
/// returns the count of the process-local doorbell, for [`sleep_local`]. `bg`: the
/// progress thread.
pub(crate) fn start_sleeping(bg: bool) -> u32 {
    SLEEPERS.start(bg)
}

/// The calling thread no longer sleeps.
pub(crate) fn stop_sleeping(bg: bool) {
    SLEEPERS.stop(bg)
}

/// Wakes the threads sleeping on the process-local doorbell (the caller wakes those on
/// the node's doorbell and in epoll through the device).
pub(crate) fn ring_local() {
    SLEEPERS.ring()
}

/// The calling thread will sleep on the process-local doorbell (with the runtime lock
/// held, after [`start_sleeping`]): ringing it then makes the system call.
pub(crate) fn will_sleep_local() {
    SLEEPERS.on_bell()
}

/// Sleeps on the process-local doorbell unless it rang since `seen`, at most `nap`
/// (after [`will_sleep_local`]).
pub(crate) fn sleep_local(seen: u32, nap: Duration) {
    SLEEPERS.sleep(seen, nap)
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
        if SLEEPERS.count() != 0 {
            ring_local();
        }
    }
}

/// A blocking wait's place in the bookkeeping above ([`WAITING`], [`OWNER`]). Every
/// change is made while the caller holds the runtime lock, so a plain load and store
/// suffice: no read-modify-write (a locked instruction on x86) on a call's path.
#[derive(Default)]
pub(crate) struct Inside {
    counted: bool,
    owner: bool,
}

impl Inside {
    /// Called with the runtime lock held at each poll of a wait; only the first one of
    /// a wait does anything.
    #[inline]
    pub(crate) fn enter(&mut self) {
        if self.counted || self.owner {
            return;
        }
        if concurrent() {
            WAITING.enter();
            self.counted = true;
        } else if OWNER.load(Ordering::Relaxed) == 0 {
            OWNER.store(self_tag(), Ordering::Relaxed);
            self.owner = true;
        }
    }

    /// Called with the runtime lock held as the wait returns.
    #[inline]
    pub(crate) fn leave(&mut self) {
        if self.counted {
            WAITING.leave();
        }
        if self.owner {
            OWNER.store(0, Ordering::Relaxed);
        }
        *self = Inside::default();
    }
}

/// Threads inside a blocking wait now (read with the runtime lock held).
pub(crate) fn waiting() -> u32 {
    WAITING.get()
}

/// The only thread that may call MPI now, as [`self_tag`]; 0: any thread. Under
/// `MPI_THREAD_FUNNELED` the main thread's for good; under `SINGLE` and `SERIALIZED`
/// that of a thread inside a blocking wait while it waits (a call that is not a wait
/// holds the lock throughout, and a second thread finds it taken). Under `MULTIPLE`
/// the thread that called `MPI_Init_thread` until another thread calls (it then runs
/// `SINGLE`'s code: no sleeper or wait counts; see `runtime::second_thread_arrives`),
/// then 0. Written and read with the runtime lock held.
static OWNER: AtomicUsize = AtomicUsize::new(0);

/// Only the calling thread may call MPI from now on (`MPI_THREAD_FUNNELED`; under
/// `MULTIPLE`, until another thread calls).
pub(crate) fn funnel_to_caller() {
    OWNER.store(self_tag(), Ordering::Relaxed);
}

/// Any thread may call MPI (a session opened, or the runtime ended).
pub(crate) fn unfunnel() {
    OWNER.store(0, Ordering::Relaxed);
}

/// The progress thread's [`self_tag`] while it runs (0: none). It is internal to the
/// library and may call at any level (the user reductions it runs use the engine's
/// calls).
static BACKGROUND_TAG: AtomicUsize = AtomicUsize::new(0);

/// The calling thread is the progress thread (`on`), or no longer.
pub(crate) fn mark_background(on: bool) {
    BACKGROUND_TAG.store(if on { self_tag() } else { 0 }, Ordering::Relaxed);
}

/// True if a thread other than the caller is the only one that may call MPI now (see
/// [`OWNER`]); read with the runtime lock held.
#[inline]
pub(crate) fn excluded() -> bool {
    let o = OWNER.load(Ordering::Relaxed);
    o != 0 && o != self_tag() && self_tag() != BACKGROUND_TAG.load(Ordering::Relaxed)
}

/// A word that differs between the threads alive at one time and costs no call: the
/// thread pointer (on Linux the address of the thread's control block, which is what
/// `pthread_self` returns).
#[inline]
pub(crate) fn self_tag() -> usize {
    #[cfg(all(target_arch = "x86_64", target_os = "linux"))]
    {
        let v: usize;
        // SAFETY: reads the first word of the thread control block that %fs points at
        // (glibc and musl keep the block's own address there); no memory is written.
        unsafe {
            std::arch::asm!("mov {}, fs:0", out(reg) v, options(nostack, readonly, preserves_flags, pure));
        }
        v
    }
    #[cfg(all(target_arch = "aarch64", target_os = "linux"))]
    {
        let v: usize;
        // SAFETY: reads the thread pointer register, which every thread has.
        unsafe {
            std::arch::asm!("mrs {}, tpidr_el0", out(reg) v, options(nomem, nostack, preserves_flags, pure));
        }
        v
    }
    #[cfg(not(all(
        any(target_arch = "x86_64", target_arch = "aarch64"),
        target_os = "linux"
    )))]
    {
        // SAFETY: pthread_self has no precondition.
        unsafe { libc::pthread_self() as usize }
    }
}

/// How many of this rank's threads may wait spinning at once: the CPUs the rank may
/// run on, at most its share of the node's (1 on an oversubscribed node). Set at start.
static SPIN_ROOM: AtomicU32 = AtomicU32::new(1);

/// Sets [`SPIN_ROOM`] (at least 1).
pub(crate) fn set_spin_room(cpus: usize) {
    SPIN_ROOM.store(cpus.clamp(1, u32::MAX as usize) as u32, Ordering::Relaxed);
}

/// More threads wait at once than the rank has CPUs for: none of them should spin on a
/// CPU the others need.
#[inline]
pub(crate) fn crowded() -> bool {
    concurrent() && WAITING.get() > SPIN_ROOM.load(Ordering::Relaxed)
}

/// Bumped by a lock holder whose progress moved something while several threads may
/// be inside MPI: it may have completed what another thread waits for, and a thread
/// that spins watching the rings without the lock would not see that (the packet it
/// watched for is gone from the ring). Changed with a plain load and store under the
/// runtime lock; read by the spinners without it.
static PROGRESSED: AtomicU32 = AtomicU32::new(0);

/// Notes that progress moved something (runtime lock held).
#[inline]
pub(crate) fn note_progress() {
    if concurrent() {
        PROGRESSED.store(
            PROGRESSED.load(Ordering::Relaxed).wrapping_add(1),
            Ordering::Release,
        );
    }
}

/// The count of [`note_progress`], for a spinner to compare with.
#[inline]
pub(crate) fn progressed() -> u32 {
    PROGRESSED.load(Ordering::Acquire)
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::state_lock::StateLock;
    use std::sync::atomic::AtomicU32;
    use std::sync::Arc;
    use std::time::Instant;

    /// The wake rule of the module doc, with the runtime lock and the process-local
    /// doorbell: waiters that find nothing count themselves as sleepers under the lock,
    /// release it quietly and sleep; every other release that sees a sleeper rings. A
    /// lost wake-up shows as a sleep that lasts its whole (long) nap. Run under
    /// ThreadSanitizer too (docs/ARCHITECTURE.md, threads).
    #[test]
    fn sleepers_are_woken_by_the_next_release() {
        const ITEMS: u32 = 300;
        const WAITERS: u32 = 3;
        let lock = Arc::new(StateLock::new(Vec::<u32>::new()));
        let slow = Arc::new(AtomicU32::new(0));
        let waiters: Vec<_> = (0..WAITERS)
            .map(|w| {
                let (lock, slow) = (lock.clone(), slow.clone());
                std::thread::spawn(move || {
                    // Waiter w takes the items i with i % WAITERS == w, in order.
                    let mut next = w;
                    while next < ITEMS {
                        let mut g = lock.lock();
                        if let Some(at) = g.iter().position(|&v| v == next) {
                            g.swap_remove(at);
                            next += WAITERS;
                            // As `runtime::Locked` does: ring before releasing.
                            if sleepers() != 0 {
                                ring_local();
                            }
                            drop(g);
                            continue;
                        }
                        let seen = start_sleeping(false);
                        will_sleep_local();
                        drop(g);
                        let t = Instant::now();
                        sleep_local(seen, Duration::from_secs(10));
                        stop_sleeping(false);
                        if t.elapsed() > Duration::from_secs(5) {
                            slow.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                })
            })
            .collect();
        for i in 0..ITEMS {
            let mut g = lock.lock();
            g.push(i);
            if sleepers() != 0 {
                ring_local();
            }
            drop(g);
            if i % 7 == 0 {
                std::thread::yield_now();
            }
        }
        for t in waiters {
            t.join().unwrap();
        }
        assert_eq!(slow.load(Ordering::Relaxed), 0, "a wake-up was lost");
        assert!(lock.lock().is_empty());
        assert_eq!(sleepers(), 0);
    }

    #[test]
    fn self_tag_differs_between_threads_and_is_stable() {
        let here = self_tag();
        assert_ne!(here, 0);
        assert_eq!(here, self_tag());
        let there = std::thread::spawn(self_tag).join().unwrap();
        assert_ne!(here, there);
        // SAFETY: pthread_self has no precondition.
        #[cfg(all(target_arch = "x86_64", target_os = "linux"))]
        assert_eq!(here, unsafe { libc::pthread_self() } as usize);
    }
}
