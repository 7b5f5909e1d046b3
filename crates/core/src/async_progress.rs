//! The asynchronous progress thread (`OXMPI_ASYNC_PROGRESS=1`): one per process, started
//! with the runtime and joined before it is torn down. It runs the engine's progress
//! (the device, rendezvous transfers, nonblocking and persistent collectives, parked
//! user reductions) while the application computes, and sleeps on the rank's doorbell
//! (or in its epoll set) whenever a round finds nothing to do: packets wake it as they
//! would wake a blocked call, and a call of the application that leaves it work no
//! packet will announce wakes it on releasing the runtime lock (`runtime`). The `MPI_T`
//! control variable `OXMPI_ASYNC_PROGRESS` also starts and stops it while MPI runs.

use crate::error::{Error, ErrorClass, Result};
use crate::runtime::{self, Waiter};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

/// The running thread and the flag that asks it to end. Each thread has its own flag:
/// a thread started after a stop cannot clear the request its predecessor has yet to see.
struct Running {
    handle: JoinHandle<()>,
    stop: Arc<AtomicBool>,
}

static THREAD: Mutex<Option<Running>> = Mutex::new(None);

/// Starts the progress thread unless it runs (several threads are then inside MPI at
/// times, whatever level the application asked for). Called with the runtime running
/// and its lock not held: at initialisation (`OXMPI_ASYNC_PROGRESS=1` or its `MPI_T`
/// control variable written before), or when a session asks for it (the info key
/// `oxmpi_async_progress` of `MPI_Session_init`, or the control variable written while
/// MPI runs).
pub(crate) fn start() -> Result<()> {
    // Held while the thread starts: two sessions asking at once start one thread.
    let mut slot = THREAD.lock().unwrap_or_else(|p| p.into_inner());
    if slot.is_some() {
        return Ok(());
    }
    crate::threads::allow_concurrency();
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    let handle = std::thread::Builder::new()
        .name("oxmpi-progress".into())
        .spawn(move || run(&flag))
        .map_err(|e| {
            Error::new(
                ErrorClass::Other,
                format!("OXMPI_ASYNC_PROGRESS=1: the progress thread could not start: {e}"),
            )
        })?;
    *slot = Some(Running { handle, stop });
    // A thread of the application asleep in a wait that began before the counting
    // started is not counted among the sleepers: wake it, so that it sleeps again
    // counted and the progress thread's releases reach it.
    runtime::wake_background();
    Ok(())
}

fn run(stop: &AtomicBool) {
    crate::threads::mark_background(true);
    // Ends when asked to, or when the runtime is gone.
    let _ = runtime::wait(
        Waiter::Background,
        |_| Ok(None),
        |_| Ok(stop.load(Ordering::SeqCst).then_some(())),
    );
    crate::threads::mark_background(false);
}

/// Stops the progress thread, if one runs, and waits for it to end. Called without the
/// runtime lock (the thread takes it to see the request). The slot stays locked until
/// the thread has ended, so a start asked for meanwhile never runs two at once (they
/// would share the sleeper bit and the background tag).
pub(crate) fn stop() {
    let mut slot = THREAD.lock().unwrap_or_else(|p| p.into_inner());
    let Some(Running { handle, stop }) = slot.take() else {
        return;
    };
    stop.store(true, Ordering::SeqCst);
    // Taking and releasing the lock wakes it: it sleeps with the stop pending.
    runtime::wake_background();
    let _ = handle.join();
}
