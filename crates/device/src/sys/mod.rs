//! Thin wrappers over the Linux system calls the transports need and no crate covers
//! safely: futex waits/wakes on shared memory, cross-process reads, CPU counts.

pub mod cma;
pub mod futex;
pub mod shm;

/// Number of CPUs this process may run on.
pub fn available_cpus() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
}
