//! The life cycle of MPI in a process: [`initialize`] returns the [`Universe`], dropping
//! it finalizes; plus the environment queries (time, versions, processor name).

use crate::error::{engine, Error, ErrorClass, Result};
use crate::topology::{Rank, SimpleCommunicator};
use oxmpi_core::runtime::{self, ThreadLevel};
use std::sync::atomic::{AtomicBool, Ordering};

/// Set by the first call of [`initialize`] or [`initialize_with_threading`].
static STARTED: AtomicBool = AtomicBool::new(false);

/// Levels of thread support, ordered from least to most.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Threading {
    /// Only one thread will run (`MPI_THREAD_SINGLE`).
    Single,
    /// Only the main thread calls MPI (`MPI_THREAD_FUNNELED`).
    Funneled,
    /// Any thread calls MPI, one at a time (`MPI_THREAD_SERIALIZED`).
    Serialized,
    /// Any thread calls MPI at any time (`MPI_THREAD_MULTIPLE`).
    Multiple,
}

impl Threading {
    /// The standard's name of the level, e.g. `"MPI_THREAD_SERIALIZED"` (as
    /// `MPI_INFO_ENV`'s `thread_level` reports it).
    pub fn name(self) -> &'static str {
        self.to_core().name()
    }

    pub(crate) fn to_core(self) -> ThreadLevel {
        match self {
            Threading::Single => ThreadLevel::Single,
            Threading::Funneled => ThreadLevel::Funneled,
            Threading::Serialized => ThreadLevel::Serialized,
            Threading::Multiple => ThreadLevel::Multiple,
        }
    }

    pub(crate) fn from_core(l: ThreadLevel) -> Threading {
        match l {
            ThreadLevel::Single => Threading::Single,
            ThreadLevel::Funneled => Threading::Funneled,
            ThreadLevel::Serialized => Threading::Serialized,
            ThreadLevel::Multiple => Threading::Multiple,
        }
    }
}

/// The initialised MPI environment of this process. Dropping it finalizes MPI
/// (`MPI_Finalize`); use [`Universe::finalize`] to see errors of finalization.
///
/// There is at most one per process: MPI cannot be initialised twice, not even after it
/// has been finalized.
#[derive(Debug)]
#[must_use = "dropping the Universe finalizes MPI"]
pub struct Universe {
    world_rank: Rank,
    world_size: Rank,
    threading: Threading,
    finalized: bool,
}

/// Initialises MPI with [`Threading::Single`] support (`MPI_Init`).
///
/// Fails with class `MPI_ERR_OTHER` when MPI was initialised before in this process, or
/// when start-up under the launcher fails.
pub fn initialize() -> Result<Universe> {
    initialize_with_threading(Threading::Single).map(|(u, _)| u)
}

/// Initialises MPI asking for thread support `threading` (`MPI_Init_thread`); returns the
/// universe and the level provided, which may be lower than the one asked for.
pub fn initialize_with_threading(threading: Threading) -> Result<(Universe, Threading)> {
    const M: &str = "initialize";
    if STARTED.swap(true, Ordering::SeqCst) {
        return Err(Error::new(
            M,
            ErrorClass::Other,
            "MPI was already initialized in this process (there can be only one Universe, and MPI cannot be initialized again after finalization)",
        ));
    }
    let provided = runtime::init(threading.to_core()).map_err(engine(M))?;
    let (world_rank, world_size) =
        runtime::with(|rt| Ok((rt.world_rank as Rank, rt.world_size as Rank)))
            .map_err(engine(M))?;
    let provided = Threading::from_core(provided);
    Ok((
        Universe {
            world_rank,
            world_size,
            threading: provided,
            finalized: false,
        },
        provided,
    ))
}

impl Universe {
    /// The communicator of every process of the job (`MPI_COMM_WORLD`).
    pub fn world(&self) -> SimpleCommunicator {
        SimpleCommunicator::world_with(self.world_rank, self.world_size)
    }

    /// The communicator of this process alone (`MPI_COMM_SELF`).
    pub fn self_comm(&self) -> SimpleCommunicator {
        SimpleCommunicator::self_comm()
    }

    /// The level of thread support provided.
    pub fn threading_support(&self) -> Threading {
        self.threading
    }

    /// The number of processes the job may grow to (`MPI_UNIVERSE_SIZE`), when the
    /// launcher says.
    pub fn universe_size(&self) -> Option<usize> {
        runtime::with(|rt| Ok(rt.universe_size))
            .ok()
            .flatten()
            .map(|n| n as usize)
    }

    /// Finalizes MPI now (`MPI_Finalize`), reporting errors. Buffered sends still in
    /// flight are completed first.
    pub fn finalize(mut self) -> Result<()> {
        self.finalized = true;
        runtime::finalize().map_err(engine("finalize"))
    }
}

impl Drop for Universe {
    fn drop(&mut self) {
        if !self.finalized {
            self.finalized = true;
            if let Err(e) = runtime::finalize() {
                eprintln!(
                    "oxmpi: {}",
                    Error::from_core("Universe::drop (finalize)", e)
                );
            }
        }
    }
}

/// True once MPI has been initialised in this process (`MPI_Initialized`); stays true
/// after finalization.
pub fn is_initialized() -> bool {
    runtime::initialized()
}

/// True once MPI has been finalized in this process (`MPI_Finalized`).
pub fn is_finalized() -> bool {
    runtime::finalized()
}

/// Seconds on a monotonic clock (`MPI_Wtime`); only differences are meaningful.
pub fn time() -> f64 {
    runtime::wtime()
}

/// Resolution of [`time`] in seconds (`MPI_Wtick`).
pub fn time_resolution() -> f64 {
    runtime::wtick()
}

/// The name of the machine this process runs on (`MPI_Get_processor_name`).
pub fn processor_name() -> String {
    runtime::with(|rt| Ok(rt.processor_name.clone()))
        .unwrap_or_else(|_| oxmpi_core::bootstrap::processor_name())
}

/// The version of the MPI standard implemented, as (version, subversion)
/// (`MPI_Get_version`); the same as the C library reports.
pub fn version() -> (i32, i32) {
    oxmpi_core::MPI_VERSION
}

/// A description of the library (`MPI_Get_library_version`).
pub fn library_version() -> String {
    let (v, s) = version();
    format!(
        "oxmpi {} (MPI {v}.{s} interface, safe Rust API)",
        oxmpi_core::VERSION
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn threading_levels_round_trip_and_order() {
        for t in [
            Threading::Single,
            Threading::Funneled,
            Threading::Serialized,
            Threading::Multiple,
        ] {
            assert_eq!(Threading::from_core(t.to_core()), t);
        }
        assert!(Threading::Single < Threading::Multiple);
    }

    #[test]
    fn clock_and_versions() {
        let a = time();
        let b = time();
        assert!(b >= a);
        assert!(time_resolution() > 0.0 && time_resolution() < 1.0);
        assert_eq!(version(), (4, 1));
        assert!(library_version().starts_with("oxmpi "));
        assert!(!processor_name().is_empty());
    }
}
