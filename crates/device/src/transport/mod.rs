//! Transports move encoded packets between world ranks; they know nothing of matching.
//!
//! - `self`: a rank sending to itself — an in-process queue kept by the device.
//! - [`shm`]: ranks on the same node — one shared segment with a ring per ordered pair,
//!   handed from the node's leader to the others by [`fd_share`].
//! - [`tcp`]: ranks on other nodes (or every rank with `OXMPI_NETMOD=tcp`); [`bell`]
//!   lets shared-memory senders wake a rank that sleeps in the TCP epoll set.
//! - [`impi`]: ranks of the other clients of an IMPI job (IMPI 0.0 host channels).

pub mod bell;
pub mod fd_share;
pub mod impi;
pub mod ring;
pub mod shm;
pub mod tcp;

/// How the device reaches a world rank.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Route {
    /// This process.
    SelfLoop,
    /// A rank on this node: its index among the node's ranks.
    Shm(usize),
    /// A rank reached over TCP.
    Tcp,
    /// A rank of another client of an IMPI job, reached over its host channel.
    Impi,
    /// No transport reaches this rank.
    Unreachable,
}
