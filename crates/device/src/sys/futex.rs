//! Futex wait and wake on a 32-bit word in memory shared between processes.

use std::sync::atomic::AtomicU32;
use std::time::Duration;

/// Sleeps while `*word == expected`, at most `timeout`. Spurious returns are allowed;
/// callers re-check their condition.
pub fn wait(word: &AtomicU32, expected: u32, timeout: Duration) {
    let ts = libc::timespec {
        tv_sec: timeout.as_secs() as libc::time_t,
        tv_nsec: timeout.subsec_nanos() as libc::c_long,
    };
    // SAFETY: `word` is a valid, aligned 32-bit atomic for the duration of the call; the
    // kernel only reads it. The shared (non-PRIVATE) futex op is required because the
    // word lives in a mapping shared with other processes.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAIT,
            expected,
            &ts as *const libc::timespec,
            std::ptr::null::<u32>(),
            0u32,
        );
    }
}

/// Wakes up to `n` waiters sleeping on `word`.
pub fn wake(word: &AtomicU32, n: i32) {
    // SAFETY: as in `wait`; FUTEX_WAKE does not access memory beyond the word's address.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAKE,
            n,
            std::ptr::null::<libc::timespec>(),
            std::ptr::null::<u32>(),
            0u32,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::Ordering;
    use std::sync::Arc;

    #[test]
    fn wake_releases_waiter() {
        let w = Arc::new(AtomicU32::new(0));
        let w2 = w.clone();
        let t = std::thread::spawn(move || {
            while w2.load(Ordering::SeqCst) == 0 {
                wait(&w2, 0, Duration::from_secs(5));
            }
        });
        std::thread::sleep(Duration::from_millis(20));
        w.store(1, Ordering::SeqCst);
        wake(&w, 1);
        t.join().unwrap();
    }

    #[test]
    fn wait_times_out_and_returns_on_mismatch() {
        let w = AtomicU32::new(7);
        wait(&w, 7, Duration::from_millis(5));
        wait(&w, 8, Duration::from_secs(10)); // value differs: returns at once
    }
}
