//! Transports move encoded packets between world ranks; they know nothing of matching.
//!
//! - `self`: a rank sending to itself — an in-process queue kept by the device.
//! - [`shm`]: ranks on the same node — one shared segment with a ring per ordered pair.
//!
//! TCP between nodes comes later behind the same routing decision.

pub mod ring;
pub mod shm;

/// How the device reaches a world rank.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Route {
    /// This process.
    SelfLoop,
    /// A rank on this node: its index among the node's ranks.
    Shm(usize),
    /// No transport reaches this rank (no inter-node transport yet).
    Unreachable,
}
