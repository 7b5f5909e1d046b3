//! The progress thread's start/stop handshake in a singleton process: `MPI_Init` starts
//! it, calls from several threads wake it while it sleeps, and `MPI_Finalize` stops and
//! joins it, whether it is asleep or still in its first round. Also run under
//! ThreadSanitizer (docs/ARCHITECTURE.md, threads).

use oxmpi_core::runtime::{self, ThreadLevel};

#[test]
fn progress_thread_starts_is_woken_and_stops() {
    // Read by the runtime at initialisation (no other thread runs yet).
    std::env::set_var("OXMPI_ASYNC_PROGRESS", "1");
    assert_eq!(
        runtime::init(ThreadLevel::Multiple).unwrap(),
        ThreadLevel::Multiple
    );
    std::thread::scope(|s| {
        for _ in 0..3 {
            s.spawn(|| {
                for i in 0..200 {
                    assert_eq!(runtime::thread_level().unwrap(), ThreadLevel::Multiple);
                    runtime::with(|rt| Ok(rt.world_size)).unwrap();
                    if i % 50 == 0 {
                        std::thread::sleep(std::time::Duration::from_millis(1));
                    }
                }
            });
        }
    });
    runtime::finalize().unwrap();
    assert!(runtime::finalized());
}
