//! Every tunable of the engine, read once from the environment at `MPI_Init`.
//!
//! This is the single place where `OXMPI_*` variables are parsed; `oxmpi-info` and the
//! README list the same table ([`Config::describe`]).

use std::env;

use crate::device::stream_stores::Policy;
use crate::placement::Bind;

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
    /// Forced value for "more ranks than cores on this node"; None = detect.
    pub oversubscribed: Option<bool>,
    /// Whether ranks of an oversubscribed node bind themselves to CPUs.
    pub bind: Bind,
    /// `OXMPI_NETMOD=tcp`: every peer (even on this node) is reached over TCP.
    pub netmod_tcp: bool,
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

/// One documented tunable: name, default, meaning.
pub struct Tunable {
    pub name: &'static str,
    pub default: &'static str,
    pub meaning: &'static str,
}

/// The documented list of every tunable environment variable.
pub const TUNABLES: &[Tunable] = &[
    Tunable {
        name: "OXMPI_SHM_EAGER_LIMIT",
        default: "auto",
        meaning: "largest message (bytes) sent eagerly through shared memory; larger ones use rendezvous; auto: 64 KiB on a node with more ranks than CPUs (rings of 256 KiB or more), else 32 KiB with rings of 512 KiB or more (nodes of up to 11 ranks), else 16 KiB (at most half a ring)",
    },
    Tunable {
        name: "OXMPI_SHM_RING_BYTES",
        default: "auto",
        meaning: "size of each sender-to-receiver shared-memory ring (rounded up to a power of two); auto: 2 MiB for up to 6 ranks on a node, 1 MiB for 7-8, shrinking to 64 KiB at 32 (all rings within 64 MiB), less beyond; at most 256 KiB on a node with more ranks than CPUs whose ranks may read each other's memory (not with OXMPI_SHM_NO_CMA=1 or Yama ptrace_scope >= 1)",
    },
    Tunable {
        name: "OXMPI_SHM_NO_CMA",
        default: "0",
        meaning: "1 disables single-copy rendezvous (process_vm_readv) and uses the pipelined copy",
    },
    Tunable {
        name: "OXMPI_SHM_CHUNK_BYTES",
        default: "auto",
        meaning: "piece size of the pipelined rendezvous copy; auto: pieces grow from 32 KiB to an eighth of the ring (16-256 KiB) and to at most a quarter of the message; a value set fixes every piece at that size",
    },
    Tunable {
        name: "OXMPI_SHM_STREAM_STORES",
        default: "cached",
        meaning: "stores that write the pieces of contiguous messages of 256 KiB and more into the ring in the pipelined copy: cached, or nt (non-temporal: through memory; several times faster where cache-to-cache transfers between the cores are slow, about half as fast where they are fast)",
    },
    Tunable {
        name: "OXMPI_SPIN",
        default: "2000 (0 when oversubscribed)",
        meaning: "polling iterations before a blocked rank starts to yield the CPU",
    },
    Tunable {
        name: "OXMPI_YIELD",
        default: "200",
        meaning: "sched_yield rounds before a blocked rank sleeps on its futex doorbell",
    },
    Tunable {
        name: "OXMPI_OVERSUBSCRIBED",
        default: "auto",
        meaning: "1/0 forces the oversubscribed waiting policy and ring size on/off (auto: more ranks on the node than the CPUs their CPU sets cover together)",
    },
    Tunable {
        name: "OXMPI_BIND",
        default: "block",
        meaning: "block: on a node with more ranks than CPUs, each rank binds itself to one CPU, consecutive local ranks in blocks (0-3 on the first of 2 CPUs, 4-7 on the second, for 8 ranks); none: the kernel places ranks",
    },
    Tunable {
        name: "OXMPI_NETMOD",
        default: "auto",
        meaning: "tcp: reach every other rank over TCP, even on this node (auto: shared memory within a node, TCP between nodes)",
    },
    Tunable {
        name: "OXMPI_TCP_EAGER_LIMIT",
        default: "65536",
        meaning: "largest message (bytes) sent eagerly over TCP (at most 1048576); larger ones use rendezvous",
    },
    Tunable {
        name: "OXMPI_TCP_CHUNK_BYTES",
        default: "1048576",
        meaning: "piece size of a rendezvous message streamed over TCP",
    },
    Tunable {
        name: "OXMPI_TCP_ADDR",
        default: "auto",
        meaning: "IPv4 address to listen on and publish (auto: listen on all, publish the first non-loopback address that is up)",
    },
    Tunable {
        name: "OXMPI_TCP_IF",
        default: "auto",
        meaning: "network interface whose IPv4 address is used for TCP (ignored when OXMPI_TCP_ADDR is set)",
    },
    Tunable {
        name: "OXMPI_TCP_CONNECT_TIMEOUT",
        default: "30",
        meaning: "seconds to wait for a peer to accept and authenticate a TCP connection before the job fails",
    },
    Tunable {
        name: "OXMPI_TCP_DEBUG",
        default: "0",
        meaning: "1 logs TCP listening addresses and connection events to stderr",
    },
    Tunable {
        name: "OXMPI_NODE_ID",
        default: "auto",
        meaning: "ranks with equal node ids share memory (auto: host name, boot id and network namespace)",
    },
    Tunable {
        name: "OXMPI_PMI",
        default: "auto",
        meaning: "1 or 2 forces the PMI wire protocol (auto: PMI-2 under Slurm's PMI2 variables, else PMI-1)",
    },
    Tunable {
        name: "OXMPI_COLL_SHM",
        default: "1",
        meaning: "0 turns off the shared-memory fast path of collectives on single-node communicators",
    },
    Tunable {
        name: "OXMPI_COLL_SHM_MAX",
        default: "2048",
        meaning: "largest contribution (bytes per rank) a collective sends through the fast path's slots",
    },
    Tunable {
        name: "OXMPI_COLL_SHM_LARGE_MAX",
        default: "1048576",
        meaning: "largest single-node Bcast/Reduce/Allreduce (bytes) moved through shared staging areas; unset: used only on oversubscribed nodes (with a core per rank the point-to-point algorithms are faster)",
    },
];

fn var_usize(name: &str, default: usize) -> usize {
    env::var(name)
        .ok()
        .and_then(|v| v.trim().parse::<usize>().ok())
        .unwrap_or(default)
}

fn var_bool(name: &str) -> Option<bool> {
    env::var(name).ok().map(|v| {
        let v = v.trim().to_ascii_lowercase();
        matches!(v.as_str(), "1" | "yes" | "true" | "on")
    })
}

fn var_string(name: &str) -> Option<String> {
    env::var(name)
        .ok()
        .map(|v| v.trim().to_string())
        .filter(|v| !v.is_empty() && !v.eq_ignore_ascii_case("auto"))
}

impl Config {
    /// Reads the tunables from the environment.
    pub fn from_env() -> Config {
        let ring_set = env::var_os("OXMPI_SHM_RING_BYTES").is_some();
        let ring = var_usize("OXMPI_SHM_RING_BYTES", AUTO_RING_MAX)
            .clamp(4096, 1 << 26)
            .next_power_of_two();
        // A ring record may take at most half the ring (see the ring's wrap rule).
        let max_payload = ring / 2 - 128;
        Config {
            shm_eager_limit: var_usize("OXMPI_SHM_EAGER_LIMIT", 16 * 1024).min(max_payload),
            shm_eager_set: env::var_os("OXMPI_SHM_EAGER_LIMIT").is_some(),
            shm_ring_bytes: ring,
            shm_ring_set: ring_set,
            shm_no_cma: var_bool("OXMPI_SHM_NO_CMA").unwrap_or(false),
            shm_chunk_bytes: var_usize("OXMPI_SHM_CHUNK_BYTES", 16 * 1024).clamp(256, max_payload),
            shm_chunk_set: env::var_os("OXMPI_SHM_CHUNK_BYTES").is_some(),
            shm_stream_stores: env::var("OXMPI_SHM_STREAM_STORES")
                .ok()
                .and_then(|v| Policy::parse(&v))
                .unwrap_or(Policy::Cached),
            spin_iters: env::var("OXMPI_SPIN")
                .ok()
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or(u32::MAX),
            yield_iters: var_usize("OXMPI_YIELD", 200) as u32,
            oversubscribed: var_bool("OXMPI_OVERSUBSCRIBED"),
            bind: env::var("OXMPI_BIND")
                .ok()
                .and_then(|v| Bind::parse(&v))
                .unwrap_or(Bind::Block),
            netmod_tcp: env::var("OXMPI_NETMOD")
                .is_ok_and(|v| v.trim().eq_ignore_ascii_case("tcp")),
            tcp_eager_limit: var_usize("OXMPI_TCP_EAGER_LIMIT", 64 * 1024)
                .min(crate::transport::tcp::MAX_EAGER),
            tcp_chunk_bytes: var_usize("OXMPI_TCP_CHUNK_BYTES", 1 << 20).clamp(4096, 1 << 30),
            tcp_addr: var_string("OXMPI_TCP_ADDR"),
            tcp_if: var_string("OXMPI_TCP_IF"),
            tcp_connect_timeout_secs: var_usize("OXMPI_TCP_CONNECT_TIMEOUT", 30).max(1) as u64,
            tcp_debug: var_bool("OXMPI_TCP_DEBUG").unwrap_or(false),
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
