//! The asynchronous progress thread (`OXMPI_ASYNC_PROGRESS=1`): one per process, started
//! with the runtime and joined before it is torn down. It runs the engine's progress
//! (the device, rendezvous transfers, nonblocking and persistent collectives, parked
//! user reductions) while the application computes, and sleeps on the rank's doorbell
//! (or in its epoll set) whenever a round finds nothing to do: packets wake it as they
//! would wake a blocked call, and a call of the application that leaves it work no
//! packet will announce wakes it on releasing the runtime lock (`runtime`).

use crate::error::{Error, ErrorClass, Result};
use crate::runtime::{self, Waiter};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::thread::JoinHandle;

/// Asks the thread to end.
static STOP: AtomicBool = AtomicBool::new(false);

/// The running thread.
static THREAD: Mutex<Option<JoinHandle<()>>> = Mutex::new(None);

/// Starts the progress thread unless it runs (several threads are then inside MPI at
/// times, whatever level the application asked for). Called with the runtime running
/// and its lock not held: at initialisation (`OXMPI_ASYNC_PROGRESS=1` or its `MPI_T`
/// control variable written before), or when a session asks for it (the info key
/// `oxmpi_async_progress` of `MPI_Session_init`).
pub(crate) fn start() -> Result<()> {
    // Held while the thread starts: two sessions asking at once start one thread.
    let mut slot = THREAD.lock().unwrap_or_else(|p| p.into_inner());
    if slot.is_some() {
        return Ok(());
    }
    crate::threads::allow_concurrency();
    STOP.store(false, Ordering::SeqCst);
    let h = std::thread::Builder::new()
        .name("oxmpi-progress".into())
        .spawn(run)
        .map_err(|e| {
            Error::new(
                ErrorClass::Other,
                format!("OXMPI_ASYNC_PROGRESS=1: the progress thread could not start: {e}"),
            )
        })?;
    *slot = Some(h);
    Ok(())
}

fn run() {
    crate::threads::mark_background(true);
    // Ends when asked to, or when the runtime is gone.
    let _ = runtime::wait(
        Waiter::Background,
        |_| Ok(None),
        |_| Ok(STOP.load(Ordering::SeqCst).then_some(())),
    );
    crate::threads::mark_background(false);
}

/// Stops the progress thread, if one runs, and waits for it to end.
pub(crate) fn stop() {
    let Some(h) = THREAD.lock().unwrap_or_else(|p| p.into_inner()).take() else {
        return;
    };
    STOP.store(true, Ordering::SeqCst);
    // Taking and releasing the lock wakes it: it sleeps with the stop pending.
    runtime::wake_background();
    let _ = h.join();
}
