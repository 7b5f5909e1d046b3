//! The engine's tunables in the form the device and transports use, filled once at
//! `MPI_Init` from the validated [`Settings`] of the tunables registry
//! ([`crate::tunables`], which declares and parses every `OXMPI_*` variable).

use crate::device::stream_stores::Policy;
use crate::placement::Bind;
use crate::tunables::{Id, Settings};

/// Engine tunables. Defaults are chosen for a small shared-memory node.
#[derive(Clone, Debug)]
pub struct Config {
    /// Messages up to this many bytes travel eagerly through shared memory.
    pub shm_eager_limit: usize,
    /// `OXMPI_SHM_EAGER_LIMIT` was set; else the limit follows the ring size.
    pub shm_eager_set: bool,
    /// Bytes of each per-pair shared-memory ring (power of two): the value set, or
    /// the largest the automatic choice may take (see [`Config::shm_ring_set`]).
    pub shm_ring_bytes: usize,
    /// `OXMPI_SHM_RING_BYTES` was set; else the ring size follows the node's rank count.
    pub shm_ring_set: bool,
    /// Disable single-copy rendezvous (`process_vm_readv`) and use the pipelined copy.
    pub shm_no_cma: bool,
    /// Largest piece of the pipelined rendezvous copy (every piece, when set).
    pub shm_chunk_bytes: usize,
    /// `OXMPI_SHM_CHUNK_BYTES` was set; else the piece size follows the ring size.
    pub shm_chunk_set: bool,
    /// Stores that write the pieces of long contiguous rendezvous messages into a ring.
    pub shm_stream_stores: Policy,
    /// Polling iterations before a blocked rank starts yielding (0 when oversubscribed by default).
    pub spin_iters: u32,
    /// `sched_yield` rounds before a blocked rank sleeps on its doorbell.
    pub yield_iters: u32,
    /// `OXMPI_SPIN_THREADS`: threads of a rank that may spin at once; None = from the CPUs.
    pub spin_threads: Option<usize>,
    /// `OXMPI_ASYNC_PROGRESS`: a progress thread per rank (see `runtime`).
    pub async_progress: bool,
    /// Forced value for "more ranks than cores on this node"; None = detect.
    pub oversubscribed: Option<bool>,
    /// Whether ranks of an oversubscribed node bind themselves to CPUs.
    pub bind: Bind,
    /// `OXMPI_NETMOD=tcp`: every peer (even on this node) is reached over TCP.
    pub netmod_tcp: bool,
    /// `OXMPI_RMA_TRANSPORT=am`: windows use active messages even on one node.
    pub rma_transport_am: bool,
    /// Messages up to this many bytes travel eagerly over TCP.
    pub tcp_eager_limit: usize,
    /// Piece size of a rendezvous message streamed over TCP.
    pub tcp_chunk_bytes: usize,
    /// `OXMPI_TCP_ADDR`: IPv4 address to listen on and publish.
    pub tcp_addr: Option<String>,
    /// `OXMPI_TCP_IF`: interface whose IPv4 address to listen on and publish.
    pub tcp_if: Option<String>,
    /// Seconds to wait for a peer to accept and authenticate a connection.
    pub tcp_connect_timeout_secs: u64,
    /// `OXMPI_TCP_DEBUG=1`: log TCP connection events to stderr.
    pub tcp_debug: bool,
    /// Seconds `MPI_Comm_connect` waits for an accept (`OXMPI_DPM_CONNECT_TIMEOUT`).
    pub dpm_connect_timeout_secs: u64,
}

/// Largest ring the automatic choice gives (nodes of up to 6 ranks get it; 7 and 8
/// ranks get half of it within [`AUTO_RING_BUDGET`]).
pub const AUTO_RING_MAX: usize = 2 << 20;
/// Smallest ring the automatic choice gives before the many-rank rule shrinks it.
pub const AUTO_RING_MIN: usize = 64 * 1024;
/// Largest ring the automatic choice gives on an oversubscribed node.
pub const AUTO_RING_OVERSUBSCRIBED: usize = 256 * 1024;
/// Bytes all rings of a node may take together under the automatic choice.
pub const AUTO_RING_BUDGET: usize = 64 << 20;

/// The eager limit of shared memory when `OXMPI_SHM_EAGER_LIMIT` is not set, for rings
/// of `ring_bytes` on a node that is `oversubscribed` or not (the caller caps it at what
/// a ring record holds).
///
/// - Oversubscribed, 64 KiB (rings of 256 KiB or more): a rendezvous there costs a
///   context switch or two before the data moves (the receiver must run to pull it or
///   to answer `Cts`, the sender again to finish), while an eager message leaves in one
///   copy. An 8-rank ring exchange of 64 KiB on 2 CPUs took 77 µs per iteration against
///   103 µs with single-copy rendezvous (8 interleaved rounds, Open MPI 118 µs).
/// - Rings of 512 KiB or more, 32 KiB: a 32 KiB ping-pong took 0.84x the time of a
///   rendezvous and bidirectional bandwidth at 32 KiB was 1.08x; at 64 KiB the two
///   cores' pipelined rendezvous copy is as fast as one eager copy.
/// - Else 16 KiB, so that several eager messages fit a small ring.
pub fn auto_shm_eager_limit(ring_bytes: usize, oversubscribed: bool) -> usize {
    if oversubscribed && ring_bytes >= 256 * 1024 {
        64 * 1024
    } else if ring_bytes >= 512 * 1024 {
        32 * 1024
    } else {
        16 * 1024
    }
}

impl Config {
    /// The engine's tunables from validated settings.
    pub fn from_settings(s: &Settings) -> Config {
        // Variables with a fixed default always have a value here; those with an
        // automatic one get a placeholder that `MPI_Init` replaces once it knows the node.
        let ring_set = s.is_set(Id::ShmRingBytes);
        let ring = s
            .size(Id::ShmRingBytes)
            .unwrap_or(AUTO_RING_MAX)
            .clamp(4096, 1 << 26)
            .next_power_of_two();
        // A ring record may take at most half the ring (see the ring's wrap rule).
        let max_payload = ring / 2 - 128;
        Config {
            shm_eager_limit: s
                .size(Id::ShmEagerLimit)
                .unwrap_or(16 * 1024)
                .min(max_payload),
            shm_eager_set: s.is_set(Id::ShmEagerLimit),
            shm_ring_bytes: ring,
            shm_ring_set: ring_set,
            shm_no_cma: s.flag(Id::ShmNoCma).unwrap_or_default(),
            shm_chunk_bytes: s
                .size(Id::ShmChunkBytes)
                .unwrap_or(16 * 1024)
                .clamp(256, max_payload),
            shm_chunk_set: s.is_set(Id::ShmChunkBytes),
            shm_stream_stores: s
                .text(Id::ShmStreamStores)
                .and_then(|v| Policy::parse(&v))
                .unwrap_or(Policy::Cached),
            spin_iters: s
                .int(Id::Spin)
                .map_or(u32::MAX, |n| n.min(u32::MAX as u64 - 1) as u32),
            yield_iters: s.int(Id::Yield).unwrap_or_default().min(u32::MAX as u64) as u32,
            spin_threads: s.int(Id::SpinThreads).map(|n| n as usize),
            async_progress: s.flag(Id::AsyncProgress).unwrap_or_default(),
            oversubscribed: s.flag(Id::Oversubscribed),
            bind: s
                .text(Id::Bind)
                .and_then(|v| Bind::parse(&v))
                .unwrap_or(Bind::Block),
            netmod_tcp: s.text(Id::Netmod).is_some_and(|v| v == "tcp"),
            rma_transport_am: s.text(Id::RmaTransport).is_some_and(|v| v == "am"),
            tcp_eager_limit: s
                .size(Id::TcpEagerLimit)
                .unwrap_or_default()
                .min(crate::transport::tcp::MAX_EAGER),
            tcp_chunk_bytes: s
                .size(Id::TcpChunkBytes)
                .unwrap_or_default()
                .clamp(4096, 1 << 30),
            tcp_addr: s.text(Id::TcpAddr),
            tcp_if: s.text(Id::TcpIf),
            tcp_connect_timeout_secs: s.int(Id::TcpConnectTimeout).unwrap_or_default().max(1),
            tcp_debug: s.flag(Id::TcpDebug).unwrap_or_default(),
            dpm_connect_timeout_secs: s.int(Id::DpmConnectTimeout).unwrap_or_default().max(1),
        }
    }

    /// The tunables of the current environment, for the unit tests. `MPI_Init` reads
    /// [`Settings::from_env`] itself and reports a bad value as its error.
    ///
    /// # Panics
    /// When a variable has a malformed or out-of-range value (the message names it).
    #[cfg(test)]
    pub fn from_env() -> Config {
        match Settings::from_env() {
            Ok(s) => Config::from_settings(&s),
            Err(e) => panic!("{e}"),
        }
    }

    /// Spin iterations to use given whether the node is oversubscribed.
    pub fn effective_spin(&self, oversubscribed: bool) -> u32 {
        match self.spin_iters {
            u32::MAX if oversubscribed => 0,
            u32::MAX => 2000,
            n => n,
        }
    }
}

#[cfg(test)]
impl Default for Config {
    fn default() -> Self {
        Config::from_env()
    }
}

#[cfg(test)]
mod tests {
    use super::auto_shm_eager_limit;

    #[test]
    fn automatic_eager_limit_follows_the_ring_and_the_load() {
        const K: usize = 1024;
        assert_eq!(auto_shm_eager_limit(256 * K, true), 64 * K);
        assert_eq!(auto_shm_eager_limit(1024 * K, true), 64 * K);
        assert_eq!(auto_shm_eager_limit(64 * K, true), 16 * K);
        assert_eq!(auto_shm_eager_limit(2048 * K, false), 32 * K);
        assert_eq!(auto_shm_eager_limit(512 * K, false), 32 * K);
        assert_eq!(auto_shm_eager_limit(256 * K, false), 16 * K);
    }
}
