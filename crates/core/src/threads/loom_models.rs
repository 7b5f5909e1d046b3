//! Loom models of the thread machinery's lock-free parts: the runtime lock
//! ([`StateLock`]), the wait count under it ([`WaitCount`], what `threads::Inside`
//! changes), and the wake-up rule of [`Sleepers`] (a sleeper counts itself under the
//! lock, every later holder that sees it rings). Loom runs each model under every
//! interleaving and every outcome the memory model allows (up to a preemption bound);
//! a lost wake-up leaves a thread asleep for good, which it reports as a deadlock.
//!
//! `RUSTFLAGS="--cfg loom" cargo test --release -p oxmpi-core --lib loom`

use super::words::{Sleepers, WaitCount};
use crate::state_lock::StateLock;
use loom::cell::UnsafeCell;
use loom::sync::Arc;
use loom::thread;
use std::time::Duration;

/// Loom with a bound on preemptions, and room for the branches of the lock's spin
/// (every spin yields, and each yield is a branch of loom's schedule).
fn model(f: impl Fn() + Sync + Send + 'static) {
    let mut b = loom::model::Builder::new();
    b.preemption_bound = Some(2);
    b.max_branches = 100_000;
    b.check(f);
}

/// Two threads update plain data under the lock: loom reports a data race on the cell
/// if taking (Acquire) and releasing (Release) the flag did not order the accesses, and
/// the sum shows a lost update. A failed `try_lock` leaves the holder's lock held.
#[test]
fn loom_state_lock_excludes_and_orders() {
    model(|| {
        let lock = Arc::new(StateLock::new(UnsafeCell::new(0u32)));
        let other = {
            let lock = lock.clone();
            thread::spawn(move || {
                let g = lock.lock();
                g.with_mut(|v| unsafe_add(v, 1));
            })
        };
        match lock.try_lock() {
            Some(g) => g.with_mut(|v| unsafe_add(v, 2)),
            None => {
                let g = lock.lock();
                g.with_mut(|v| unsafe_add(v, 2));
            }
        }
        other.join().unwrap();
        let g = lock.lock();
        assert!(
            lock.try_lock().is_none(),
            "a failed try_lock released the lock"
        );
        assert_eq!(g.with(read), 3);
    });
}

/// `threads::Inside`: two waits enter and leave the wait count with a plain load and
/// store each, under the runtime lock, and read it there (as `MPI_Finalize` and
/// `crowded` do). No update is lost and no reader sees a count the waits never made.
#[test]
fn loom_wait_count_under_the_lock() {
    model(|| {
        let lock = Arc::new(StateLock::new(()));
        let count = Arc::new(WaitCount::new());
        let wait = |lock: &StateLock<()>, count: &WaitCount| {
            {
                let _g = lock.lock();
                count.enter();
                assert!(count.get() <= 2);
            }
            let _g = lock.lock();
            count.leave();
        };
        let other = {
            let (lock, count) = (lock.clone(), count.clone());
            thread::spawn(move || wait(&lock, &count))
        };
        wait(&lock, &count);
        other.join().unwrap();
        let _g = lock.lock();
        assert_eq!(count.get(), 0);
    });
}

/// The wake-up rule with one waiter and one producer through the lock: the waiter
/// takes an item if there is one, else counts itself a sleeper under the lock, reads
/// the doorbell, releases the lock quietly and sleeps; the producer puts the item and,
/// as `runtime::Locked`'s release does, rings (still holding the lock) when it sees a
/// sleeper. The waiter always gets the item (no deadlock: no wake-up is lost).
#[test]
fn loom_sleeper_is_woken_by_the_next_release() {
    model(|| {
        let lock = Arc::new(StateLock::new(0u32));
        let sleepers = Arc::new(Sleepers::new());
        let waiter = {
            let (lock, sleepers) = (lock.clone(), sleepers.clone());
            thread::spawn(move || waiter_takes(&lock, &sleepers, false))
        };
        produce(&lock, &sleepers);
        waiter.join().unwrap();
        assert_eq!(sleepers.count(), 0);
    });
}

/// The same rule for the progress thread, which sleeps as a bit of the count
/// (`fetch_or`/`fetch_and` rather than an increment): it is woken too, and the bit is
/// clear afterwards. (Three threads, a thread and the progress thread waiting beside a
/// producer, exceed a few minutes of loom even with two preemptions.)
#[test]
fn loom_background_sleeper_is_woken() {
    model(|| {
        let lock = Arc::new(StateLock::new(0u32));
        let sleepers = Arc::new(Sleepers::new());
        let bg = {
            let (lock, sleepers) = (lock.clone(), sleepers.clone());
            thread::spawn(move || waiter_takes(&lock, &sleepers, true))
        };
        produce(&lock, &sleepers);
        bg.join().unwrap();
        assert_eq!(sleepers.count(), 0);
        assert_eq!(*lock.lock(), 0);
    });
}

/// Waits for an item behind the lock and takes it.
fn waiter_takes(lock: &StateLock<u32>, sleepers: &Sleepers, bg: bool) {
    loop {
        let mut g = lock.lock();
        if *g > 0 {
            *g -= 1;
            // A release that sees a sleeper rings, as every release does.
            if sleepers.count() != 0 {
                sleepers.ring();
            }
            return;
        }
        // Counted while still holding the lock; released without ringing.
        let seen = sleepers.start(bg);
        sleepers.on_bell();
        drop(g);
        sleepers.sleep(seen, Duration::from_secs(1));
        sleepers.stop(bg);
    }
}

/// Puts an item, ringing before the release if anyone sleeps.
fn produce(lock: &StateLock<u32>, sleepers: &Sleepers) {
    let mut g = lock.lock();
    *g += 1;
    if sleepers.count() != 0 {
        sleepers.ring();
    }
    drop(g);
}

fn unsafe_add(v: *mut u32, n: u32) {
    // SAFETY: called inside the cell's `with_mut` while the lock is held: no other
    // access to the cell (loom checks this).
    unsafe { *v += n }
}

fn read(v: *const u32) -> u32 {
    // SAFETY: as for `unsafe_add`, with the lock held.
    unsafe { *v }
}
