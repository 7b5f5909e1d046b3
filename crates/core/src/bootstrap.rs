//! Start-up of a process: learn rank and size from PMI (or run as a singleton),
//! exchange business cards, find the ranks on this node and map the node's shared
//! segment.
//!
//! Business card of each rank, stored under `oxmpi-card-<rank>`:
//! `<node key>,<pid>,<cpus>,<ip>:<port>[+lo]` — `<cpus>` is the CPU set the rank may run
//! on ([`placement::cpu_card`]), the last field the rank's TCP listening address (`+lo`:
//! it also answers on 127.0.0.1, for peers on the same node). The node
//! key is the host name, the kernel boot id and the network namespace (`OXMPI_NODE_ID`
//! overrides it), so ranks with equal keys can share memory; others talk over TCP, and
//! with `OXMPI_NETMOD=tcp` every pair does.
//!
//! The TCP job secret is `OXMPI_JOB_SECRET` (set by oxmpi's `mpiexec`). Under another
//! launcher (Hydra, Slurm) rank 0 draws a random secret and publishes it in the job's
//! key-value space as `oxmpi-secret`: connections then prove knowledge of a value only
//! the job's PMI server hands out, which keeps out strangers and other jobs, though not
//! someone who can query that PMI server.

use crate::config::{
    Config, AUTO_RING_BUDGET, AUTO_RING_MAX, AUTO_RING_MIN, AUTO_RING_OVERSUBSCRIBED,
};
use crate::device::Peer;
use crate::error::{Error, ErrorClass, Result};
use crate::impi_attr::ImpiPlaces;
use crate::placement::{self, CardCpus};
use crate::transport::bell::{Bell, Poker};
use crate::transport::fd_share::{self, FdOffer};
use crate::transport::impi::{ImpiJoin, ImpiNet};
use crate::transport::shm::ShmNode;
use crate::transport::tcp::{self, TcpNet, TcpSettings};
use crate::transport::{ring, Route};
use oxmpi_pmi::Client;
use std::os::fd::AsFd;
use std::sync::Arc;
use std::time::Duration;

/// How long the node's ranks wait for each other to hand over the shared segment after
/// the fence (they all passed it, so only a rank dying or a machine stalled for this
/// long makes it expire).
const SEGMENT_HANDOVER: Duration = Duration::from_secs(120);

/// What start-up learned.
pub struct Bootstrap {
    pub rank: u32,
    pub size: u32,
    pub pmi: Option<Client>,
    pub peers: Vec<Peer>,
    pub node: Option<Arc<ShmNode>>,
    /// World ranks on this node, in local-index order.
    pub local_world: Vec<u32>,
    pub appnum: i32,
    pub universe_size: Option<u32>,
    /// Effective ring size after scaling to the node's rank count.
    pub ring_bytes: usize,
    /// Ranks on this node (sharing memory or not), for the oversubscription policy.
    pub node_size: usize,
    /// Their world ranks, ascending (the `mpix://SHARED` process set of sessions).
    pub node_ranks: Vec<u32>,
    /// More ranks on this node than the CPUs they share (or `OXMPI_OVERSUBSCRIBED`);
    /// every rank of the node reaches the same answer.
    pub oversubscribed: bool,
    /// The CPUs the node's ranks share (see `placement::node_cpus`).
    pub node_cpus: usize,
    /// This rank's position among them, in world-rank order.
    pub node_index: usize,
    /// The TCP transport, when some peer is reached over TCP.
    pub tcp: Option<TcpNet>,
    /// Wakes local ranks that sleep in their TCP epoll set (with a shared segment).
    pub poker: Option<Poker>,
    /// The host channels toward the other clients of an IMPI job.
    pub impi: Option<ImpiNet>,
    /// What IMPI's collectives (chapter 4) need to know of the job.
    pub impi_world: Option<crate::coll::impi::World>,
    /// Each world rank's IMPI client and host (IMPI jobs only).
    pub impi_places: Option<ImpiPlaces>,
}

fn pmi_err(what: &str, e: impl std::fmt::Display) -> Error {
    Error::new(ErrorClass::Other, format!("{what}: {e}"))
}

/// Identifies this machine: ranks with the same key share memory.
pub fn node_key() -> String {
    if let Ok(id) = std::env::var("OXMPI_NODE_ID") {
        if !id.is_empty() {
            return sanitize(&id);
        }
    }
    let host = processor_name();
    let boot = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").unwrap_or_default();
    // Processes in different network namespaces are treated as different hosts.
    let netns = std::fs::read_link("/proc/self/ns/net")
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_default();
    sanitize(&format!("{}-{}-{}", host, boot.trim(), netns))
}

/// The host name (what `MPI_Get_processor_name` returns).
pub fn processor_name() -> String {
    nix::unistd::gethostname()
        .ok()
        .and_then(|h| h.into_string().ok())
        .unwrap_or_else(|| "localhost".to_string())
}

fn sanitize(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// Ring size for a node with `nlocal` ranks. Set explicitly: that size up to 16 ranks,
/// shrinking beyond so the segment stays near the size it has at 16. Automatic: the
/// largest power of two (at most [`AUTO_RING_MAX`]) whose `nlocal * (nlocal - 1)` rings
/// fit [`AUTO_RING_BUDGET`], not below [`AUTO_RING_MIN`] until the many-rank rule
/// applies. Large rings let big messages stream through the last-level cache rather
/// than bounce between the two cores' private caches: 1 MiB rings gave twice the rate
/// of smaller ones at 1-4 MiB, and 2 MiB rings (twice the 1 MiB L2 of the development
/// VM's cores) another 10-25% at 1-4 MiB and 1.5x at 64-256 KiB.
///
/// An oversubscribed node whose ranks may read each other's memory (`small_rings`) gets
/// at most [`AUTO_RING_OVERSUBSCRIBED`]: its large messages move in one copy out of the
/// sender, and small ones then reuse lines still in the cache instead of a new line of
/// a 1 MiB ring each: an 8-rank ring exchange on 2 CPUs spent 13% less user time per
/// iteration with 64 KiB rings than with 1 MiB ones, and 256 KiB rings (which hold the
/// 64 KiB eager messages of such a node) were as fast as 64 KiB ones. Without
/// cross-memory attach, large messages stream through the rings, and a small ring would
/// take a context switch for every few pieces.
fn ring_bytes_for(cfg: &Config, nlocal: usize, small_rings: bool) -> usize {
    let base = if cfg.shm_ring_set {
        cfg.shm_ring_bytes
    } else {
        let pairs = (nlocal * nlocal.saturating_sub(1)).max(1);
        let fit = AUTO_RING_BUDGET / pairs;
        let pow = if fit.is_power_of_two() {
            fit
        } else {
            fit.next_power_of_two() / 2
        };
        let auto = pow.clamp(AUTO_RING_MIN, AUTO_RING_MAX);
        if small_rings {
            auto.min(AUTO_RING_OVERSUBSCRIBED)
        } else {
            auto
        }
    };
    if nlocal <= 16 || !cfg.shm_ring_set && base > AUTO_RING_MIN {
        base
    } else {
        (base * 16 / nlocal)
            .next_power_of_two()
            .max(16 * 1024)
            .min(base)
    }
}

fn singleton(cfg: &Config, pmi: Option<Client>, appnum: i32, universe: Option<u32>) -> Bootstrap {
    Bootstrap {
        rank: 0,
        size: 1,
        pmi,
        peers: vec![Peer {
            route: Route::SelfLoop,
            pid: std::process::id() as i32,
        }],
        node: None,
        local_world: vec![0],
        appnum,
        universe_size: universe,
        ring_bytes: 0,
        node_size: 1,
        node_ranks: vec![0],
        oversubscribed: cfg.oversubscribed.unwrap_or(false),
        node_cpus: crate::sys::available_cpus(),
        node_index: 0,
        tcp: None,
        poker: None,
        impi: None,
        impi_world: None,
        impi_places: None,
    }
}

/// A peer's business card.
struct Card {
    key: String,
    pid: i32,
    cpus: CardCpus,
    tcp: Option<(std::net::SocketAddrV4, bool)>,
}

fn parse_card(r: u32, v: &str) -> Result<Card> {
    let bad = |what: &str| {
        Error::new(
            ErrorClass::Other,
            format!("malformed business card of rank {r} ({what}): {v:?}"),
        )
    };
    let mut it = v.split(',');
    let key = it
        .next()
        .filter(|k| !k.is_empty())
        .ok_or_else(|| bad("node key"))?;
    let pid: i32 = it
        .next()
        .and_then(|p| p.parse().ok())
        .ok_or_else(|| bad("pid"))?;
    let cpus = it
        .next()
        .and_then(placement::parse_cpu_card)
        .ok_or_else(|| bad("CPU set"))?;
    let tcp = match it.next() {
        None => None,
        Some(f) => Some(tcp::parse_card(f).ok_or_else(|| bad("TCP address"))?),
    };
    if it.next().is_some() {
        return Err(bad("extra fields"));
    }
    Ok(Card {
        key: key.to_string(),
        pid,
        cpus,
        tcp,
    })
}

fn random_hex(bytes: usize) -> Result<String> {
    let mut b = vec![0u8; bytes];
    getrandom::getrandom(&mut b).map_err(|e| {
        Error::new(
            ErrorClass::Other,
            format!("no random source for the job secret: {e}"),
        )
    })?;
    Ok(b.iter().map(|x| format!("{x:02x}")).collect())
}

/// Runs start-up. Errors are fatal to `MPI_Init`.
pub fn run(cfg: &Config) -> Result<Bootstrap> {
    let client = Client::from_env().map_err(|e| pmi_err("PMI initialisation failed", e))?;
    let Some(mut pmi) = client else {
        return Ok(singleton(cfg, None, 0, Some(1)));
    };
    let prank = pmi.rank();
    let psize = pmi.size();
    let appnum = pmi.appnum();
    let universe = pmi.universe_size();
    // A client of an IMPI job (`impirun -client`): this client's ranks are part of a
    // larger MPI_COMM_WORLD, from `off` on (docs/impi.md, "Data path").
    let impi = match std::env::var("OXMPI_IMPI") {
        Ok(path) if !path.is_empty() => Some(ImpiJoin::fetch(&path, prank).map_err(|e| {
            Error::new(
                ErrorClass::Other,
                format!("joining the IMPI job through impirun ({path}): {e}"),
            )
        })?),
        _ => None,
    };
    let (off, size) = match &impi {
        Some(j) => (j.world - prank, j.size()),
        None => (0, psize),
    };
    let rank = prank + off;
    // The universe of a joined job holds the other clients' procs too.
    let universe = universe.map(|u| u.saturating_add(size - psize));
    if size <= 1 {
        return Ok(singleton(cfg, Some(pmi), appnum, universe));
    }
    let key = node_key();
    let pid = std::process::id() as i32;
    let listener = tcp::Listener::open(cfg.tcp_addr.as_deref(), cfg.tcp_if.as_deref())
        .map_err(|e| Error::new(ErrorClass::Other, format!("TCP set-up failed: {e}")))?;
    let my_card = format!("{key},{pid},{},{}", placement::cpu_card(), listener.card());
    pmi.put(&format!("oxmpi-card-{prank}"), &my_card)
        .map_err(|e| pmi_err("PMI put of the business card failed", e))?;
    let env_secret = std::env::var("OXMPI_JOB_SECRET")
        .ok()
        .filter(|s| !s.is_empty());
    if env_secret.is_none() && prank == 0 {
        pmi.put("oxmpi-secret", &random_hex(32)?)
            .map_err(|e| pmi_err("PMI put of the job secret failed", e))?;
    }
    pmi.fence().map_err(|e| pmi_err("PMI fence failed", e))?;

    let mut cards = Vec::with_capacity(psize as usize);
    for r in 0..psize {
        let v = if r == prank {
            my_card.clone()
        } else {
            pmi.get(&format!("oxmpi-card-{r}"))
                .map_err(|e| pmi_err(&format!("PMI get of rank {r}'s business card failed"), e))?
        };
        cards.push(parse_card(r, &v)?);
    }
    let node_ranks: Vec<u32> = (0..psize)
        .filter(|&r| cards[r as usize].key == key)
        .map(|r| r + off)
        .collect();
    let node_size = node_ranks.len();
    let node_cpus = placement::node_cpus(cards.iter().filter(|c| c.key == key).map(|c| &c.cpus));
    let oversubscribed = cfg.oversubscribed.unwrap_or(node_size > node_cpus);
    let node_index = cards[..prank as usize]
        .iter()
        .filter(|c| c.key == key)
        .count();
    let local_world: Vec<u32> = if cfg.netmod_tcp {
        vec![rank]
    } else {
        (0..psize)
            .filter(|&r| cards[r as usize].key == key)
            .map(|r| r + off)
            .collect()
    };
    let my_local = local_world
        .iter()
        .position(|&r| r == rank)
        .expect("this rank is on its own node");
    let nlocal = local_world.len();
    // Small rings suit an oversubscribed node only where large messages skip them,
    // moving by cross-memory attach.
    let cma_likely = !cfg.shm_no_cma && crate::sys::cma::yama_permits_siblings();
    let ring_bytes = ring_bytes_for(cfg, nlocal, oversubscribed && cma_likely);

    let in_client = |r: u32| r >= off && r < off + psize;
    let peers: Vec<Peer> = (0..size)
        .map(|r| {
            if !in_client(r) {
                return Peer {
                    route: Route::Impi,
                    pid: 0,
                };
            }
            let route = if r == rank {
                Route::SelfLoop
            } else if let Some(i) = local_world.iter().position(|&w| w == r) {
                Route::Shm(i)
            } else if cards[(r - off) as usize].tcp.is_some() {
                Route::Tcp
            } else {
                Route::Unreachable
            };
            Peer {
                route,
                pid: cards[(r - off) as usize].pid,
            }
        })
        .collect();

    // The fence between creating and mapping segments is collective: every rank takes
    // part when any node has a segment, whether or not its own node has one.
    let any_segment = !cfg.netmod_tcp
        && cards
            .iter()
            .enumerate()
            .any(|(i, c)| cards[..i].iter().any(|d| d.key == c.key));
    if any_segment && nlocal <= 1 {
        pmi.fence().map_err(|e| pmi_err("PMI fence failed", e))?;
    }
    let node = if nlocal > 1 {
        // The leader creates the segment and offers its descriptor before the fence; the
        // others take it after (transport/fd_share.rs): the segment has no name, so it
        // cannot outlive the job however it ends.
        let leader = local_world[0];
        let shm_err = |what: &str, e: std::io::Error| {
            Error::new(
                ErrorClass::Other,
                format!("{what} the node's shared memory: {e}"),
            )
        };
        let created = if rank == leader {
            let (node, fd) = ShmNode::create(nlocal, my_local, ring_bytes)
                .map_err(|e| shm_err("cannot create", e))?;
            let offer =
                FdOffer::bind(pmi.kvsname(), leader).map_err(|e| shm_err("cannot offer", e))?;
            Some((node, fd, offer))
        } else {
            None
        };
        pmi.fence().map_err(|e| pmi_err("PMI fence failed", e))?;
        let node = match created {
            Some((node, fd, offer)) => {
                offer
                    .serve(fd.as_fd(), nlocal - 1, SEGMENT_HANDOVER)
                    .map_err(|e| shm_err("cannot hand out", e))?;
                node
            }
            None => {
                let fd = fd_share::fetch(pmi.kvsname(), leader, SEGMENT_HANDOVER)
                    .map_err(|e| shm_err("cannot receive", e))?;
                ShmNode::open(&fd, nlocal, my_local, ring_bytes)
                    .map_err(|e| shm_err("cannot map", e))?
            }
        };
        Some(Arc::new(node))
    } else {
        None
    };
    debug_assert!(ring::max_body(ring_bytes.max(4096)) > 0);

    let tcp = if peers.iter().any(|p| p.route == Route::Tcp) {
        let secret = match env_secret {
            Some(s) => s,
            None => pmi
                .get("oxmpi-secret")
                .map_err(|e| pmi_err("PMI get of the job secret failed", e))?,
        };
        let addrs = peers
            .iter()
            .enumerate()
            .map(|(r, p)| {
                let c = &cards[(r as u32).checked_sub(off).filter(|&i| i < psize)? as usize];
                let (a, lo) = c.tcp.filter(|_| p.route == Route::Tcp)?;
                Some(if lo && c.key == key {
                    std::net::SocketAddrV4::new(std::net::Ipv4Addr::LOCALHOST, a.port())
                } else {
                    a
                })
            })
            .collect();
        let bell = match &node {
            Some(_) => Some(Bell::bind(pmi.kvsname(), rank).map_err(|e| {
                Error::new(
                    ErrorClass::Other,
                    format!("cannot bind the doorbell socket: {e}"),
                )
            })?),
            None => None,
        };
        let settings = TcpSettings {
            connect_timeout: std::time::Duration::from_secs(cfg.tcp_connect_timeout_secs),
            debug: cfg.tcp_debug,
        };
        Some(
            TcpNet::new(
                rank,
                size,
                secret.into_bytes(),
                listener,
                addrs,
                bell,
                settings,
            )
            .map_err(|e| Error::new(ErrorClass::Other, format!("TCP set-up failed: {e}")))?,
        )
    } else {
        None
    };
    let poker = node
        .as_ref()
        .map(|_| Poker::new(pmi.kvsname(), &local_world));
    // A rank with IMPI channels sleeps in their epoll set; without a TCP transport
    // (whose set holds it otherwise) its doorbell socket goes there.
    let impi_bell = match (&impi, &node, &tcp) {
        (Some(_), Some(_), None) => Some(Bell::bind(pmi.kvsname(), rank).map_err(|e| {
            Error::new(
                ErrorClass::Other,
                format!("cannot bind the doorbell socket: {e}"),
            )
        })?),
        _ => None,
    };

    let impi_world = impi.as_ref().map(crate::coll::impi::World::of_job);
    let impi_places = impi.as_ref().map(|j| ImpiPlaces {
        client: j
            .procs
            .iter()
            .map(|(h, _)| j.hosts[*h as usize].client)
            .collect(),
        host: j.procs.iter().map(|(h, _)| *h).collect(),
    });
    Ok(Bootstrap {
        impi_world,
        rank,
        size,
        pmi: Some(pmi),
        peers,
        node,
        local_world,
        appnum,
        universe_size: universe,
        ring_bytes,
        node_size,
        node_ranks,
        oversubscribed,
        node_cpus,
        node_index,
        tcp,
        poker,
        impi: match impi {
            Some(j) => {
                Some(ImpiNet::new(j, impi_bell).map_err(|e| {
                    Error::new(ErrorClass::Other, format!("IMPI host channels: {e}"))
                })?)
            }
            None => None,
        },
        impi_places,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(set: Option<usize>) -> Config {
        let mut c = Config::from_env();
        c.shm_ring_set = set.is_some();
        c.shm_ring_bytes = set.unwrap_or(AUTO_RING_MAX);
        c
    }

    #[test]
    fn automatic_ring_sizes_follow_the_rank_count() {
        let auto = cfg(None);
        for (n, want) in [
            (1, 2 << 20),
            (2, 2 << 20),
            (6, 2 << 20),
            (7, 1 << 20),
            (8, 1 << 20),
            (9, 512 << 10),
            (16, 256 << 10),
            (24, 64 << 10),
            (64, 16 << 10),
        ] {
            assert_eq!(ring_bytes_for(&auto, n, false), want, "{n} ranks");
            assert!(n * (n - 1) * ring_bytes_for(&auto, n, false) <= AUTO_RING_BUDGET);
        }
    }

    #[test]
    fn oversubscribed_nodes_get_small_rings() {
        let auto = cfg(None);
        for (n, want) in [
            (3, 256 << 10),
            (8, 256 << 10),
            (16, 256 << 10),
            (32, 32 << 10),
        ] {
            assert_eq!(ring_bytes_for(&auto, n, true), want, "{n} ranks");
        }
        // A size that was asked for is kept.
        assert_eq!(ring_bytes_for(&cfg(Some(1 << 20)), 8, true), 1 << 20);
    }

    #[test]
    fn a_set_ring_size_is_kept_up_to_sixteen_ranks() {
        let set = cfg(Some(64 << 10));
        assert_eq!(ring_bytes_for(&set, 2, false), 64 << 10);
        assert_eq!(ring_bytes_for(&set, 16, false), 64 << 10);
        assert_eq!(ring_bytes_for(&set, 32, false), 32 << 10);
    }
}
