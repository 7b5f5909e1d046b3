//! The universe's slots, shared by the `mpiexec`s of a job family (a job and the jobs
//! it spawned, and theirs): what makes the `soft` spawn info key mean something.
//!
//! A job has a universe size when it is given one: `-usize`, or the slots of a multi-host
//! job's host list. Its `mpiexec` then keeps, in a small shared memory file (memfd), the
//! number of processes the family runs: its own ranks to begin with, plus every spawned
//! job's processes while that job runs. Spawned `mpiexec`s (all on the head host, the
//! spawning one's children) inherit the file's descriptor (`OXMPI_SPAWN_SLOTS`), so a
//! spawn anywhere in the family sees the slots left free by all of them. A spawn's
//! commands with `soft` start the largest allowed number that fits the free slots; those
//! without it start `maxprocs` processes whatever is free (oversubscription, as always).
//! Without a universe size there is no limit, and `soft` only picks the largest allowed
//! number up to `maxprocs`.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicU32, Ordering};

const ENV_SLOTS: &str = "OXMPI_SPAWN_SLOTS";
const MAP_LEN: usize = 4096;

/// The family's universe size and the shared count of its processes.
#[derive(Debug)]
pub struct Slots {
    universe: u32,
    fd: OwnedFd,
    used: &'static AtomicU32,
}

/// Maps the first page of `fd`, which the mapping outlives (never unmapped).
fn map(fd: &OwnedFd) -> Result<&'static AtomicU32, String> {
    // SAFETY: a shared read-write mapping of a descriptor we own, at an address the kernel
    // chooses; the result is checked against MAP_FAILED.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            MAP_LEN,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED,
            fd.as_raw_fd(),
            0,
        )
    };
    if p == libc::MAP_FAILED {
        return Err(format!(
            "cannot map the slot count: {}",
            std::io::Error::last_os_error()
        ));
    }
    // SAFETY: the mapping is page-aligned, MAP_LEN bytes long and never unmapped, so a
    // 'static reference to its first four bytes stays valid; every process of the
    // family reaches those bytes only through this atomic.
    Ok(unsafe { &*(p as *const AtomicU32) })
}

impl Slots {
    /// A new count for a family of `universe` slots whose first job has `used` processes.
    pub fn create(universe: u32, used: u32) -> Result<Slots, String> {
        // SAFETY: memfd_create with a NUL-terminated name and flags; the result is checked.
        let raw = unsafe { libc::memfd_create(c"oxmpi-slots".as_ptr(), libc::MFD_CLOEXEC) };
        if raw < 0 {
            return Err(format!(
                "cannot create the slot count: {}",
                std::io::Error::last_os_error()
            ));
        }
        // SAFETY: a descriptor just created and owned by nothing else.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        nix::unistd::ftruncate(&fd, MAP_LEN as i64)
            .map_err(|e| format!("cannot size the slot count: {e}"))?;
        let used_ref = map(&fd)?;
        used_ref.store(used, Ordering::SeqCst);
        Ok(Slots {
            universe,
            fd,
            used: used_ref,
        })
    }

    /// The count inherited from the spawning `mpiexec`, if any (removes the variable).
    /// Call before any thread starts.
    pub fn inherit() -> Result<Option<Slots>, String> {
        let Ok(v) = std::env::var(ENV_SLOTS) else {
            return Ok(None);
        };
        std::env::remove_var(ENV_SLOTS);
        let bad = || format!("malformed {ENV_SLOTS}={v:?}");
        let (fd, universe) = v.split_once(':').ok_or_else(bad)?;
        let fd: RawFd = fd.parse().ok().filter(|fd| *fd > 2).ok_or_else(bad)?;
        let universe: u32 = universe.parse().map_err(|_| bad())?;
        // SAFETY: fcntl on an integer descriptor only sets its flags; one that is not open
        // fails with EBADF.
        if unsafe { libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) } != 0 {
            return Err(format!("{ENV_SLOTS}: {fd} is not an open descriptor"));
        }
        // SAFETY: the spawning mpiexec passed this descriptor to this process alone, and
        // nothing else here owns it (the variable is removed above).
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        let used = map(&fd)?;
        Ok(Some(Slots { universe, fd, used }))
    }

    /// The universe size.
    pub fn universe(&self) -> u32 {
        self.universe
    }

    /// The variable (name, value) and the descriptor a spawned `mpiexec` inherits.
    pub fn for_child(&self) -> (&'static str, String, RawFd) {
        let fd = self.fd.as_raw_fd();
        (ENV_SLOTS, format!("{fd}:{}", self.universe), fd)
    }

    /// Reserves the processes `plan` decides on, given the free slots and the processes
    /// the family runs; returns its answer. Atomic against spawns elsewhere in the family.
    pub fn reserve(
        &self,
        plan: impl Fn(u32, u32) -> Result<Vec<u32>, String>,
    ) -> Result<Vec<u32>, String> {
        loop {
            let used = self.used.load(Ordering::SeqCst);
            let counts = plan(self.universe.saturating_sub(used), used)?;
            let total = counts.iter().fold(used, |a, &n| a.saturating_add(n));
            if self
                .used
                .compare_exchange(used, total, Ordering::SeqCst, Ordering::SeqCst)
                .is_ok()
            {
                return Ok(counts);
            }
        }
    }

    /// Gives back `n` slots (a spawned job ended, or could not start).
    pub fn release(&self, n: u32) {
        let _ = self
            .used
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |u| {
                Some(u.saturating_sub(n))
            });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reserve_and_release() {
        let s = Slots::create(4, 1).unwrap();
        let got = s.reserve(|free, used| {
            assert_eq!((free, used), (3, 1));
            Ok(vec![2, 1])
        });
        assert_eq!(got.unwrap(), [2, 1]);
        assert!(
            s.reserve(|free, _| Err(format!("{free} free")))
                .unwrap_err()
                == "0 free"
        );
        s.release(2);
        assert_eq!(s.reserve(|free, _| Ok(vec![free])).unwrap(), [2]);
        // A second mapping of the same file sees the same count.
        let again = map(&s.fd).unwrap();
        assert_eq!(again.load(Ordering::SeqCst), 4);
        let (name, value, fd) = s.for_child();
        assert_eq!((name, value), (ENV_SLOTS, format!("{fd}:4")));
    }
}
