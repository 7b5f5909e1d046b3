//! Start-up of a process: learn rank and size from PMI (or run as a singleton),
//! exchange business cards, find the ranks on this node and map the node's shared
//! segment.
//!
//! Business card of each rank, stored under `oxmpi-card-<rank>`: `<node key>,<pid>`.
//! The node key is the host name plus the kernel boot id (`OXMPI_NODE_ID` overrides
//! it), so ranks with equal keys can share memory.

use crate::config::Config;
use crate::device::Peer;
use crate::error::{Error, ErrorClass, Result};
use crate::sys::shm;
use crate::transport::shm::ShmNode;
use crate::transport::{ring, Route};
use oxmpi_pmi::Client;
use std::sync::Arc;

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
    sanitize(&format!("{}-{}", host, boot.trim()))
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

/// Ring size for a node with `nlocal` ranks: the configured size up to 16 ranks,
/// shrinking beyond so the segment stays near the size it has at 16.
fn ring_bytes_for(cfg: &Config, nlocal: usize) -> usize {
    let base = cfg.shm_ring_bytes;
    if nlocal <= 16 {
        base
    } else {
        (base * 16 / nlocal).next_power_of_two().max(16 * 1024).min(base)
    }
}

fn singleton(pmi: Option<Client>, appnum: i32, universe: Option<u32>) -> Bootstrap {
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
    }
}

/// Runs start-up. Errors are fatal to `MPI_Init`.
pub fn run(cfg: &Config) -> Result<Bootstrap> {
    let client = Client::from_env().map_err(|e| pmi_err("PMI initialisation failed", e))?;
    let Some(mut pmi) = client else {
        return Ok(singleton(None, 0, Some(1)));
    };
    let rank = pmi.rank();
    let size = pmi.size();
    let appnum = pmi.appnum();
    let universe = pmi.universe_size();
    if size <= 1 {
        return Ok(singleton(Some(pmi), appnum, universe));
    }
    let key = node_key();
    let pid = std::process::id() as i32;
    pmi.put(&format!("oxmpi-card-{rank}"), &format!("{key},{pid}"))
        .map_err(|e| pmi_err("PMI put of the business card failed", e))?;
    pmi.fence()
        .map_err(|e| pmi_err("PMI fence failed", e))?;

    let mut cards = Vec::with_capacity(size as usize);
    for r in 0..size {
        if r == rank {
            cards.push((key.clone(), pid));
            continue;
        }
        let v = pmi
            .get(&format!("oxmpi-card-{r}"))
            .map_err(|e| pmi_err(&format!("PMI get of rank {r}'s business card failed"), e))?;
        let (k, p) = v.rsplit_once(",").ok_or_else(|| {
            Error::new(ErrorClass::Other, format!("malformed business card of rank {r}: {v:?}"))
        })?;
        let p: i32 = p.parse().map_err(|_| {
            Error::new(ErrorClass::Other, format!("malformed pid in business card of rank {r}: {v:?}"))
        })?;
        cards.push((k.to_string(), p));
    }
    let local_world: Vec<u32> = (0..size).filter(|&r| cards[r as usize].0 == key).collect();
    let my_local = local_world
        .iter()
        .position(|&r| r == rank)
        .expect("this rank is on its own node");
    let nlocal = local_world.len();
    let ring_bytes = ring_bytes_for(cfg, nlocal);

    let peers: Vec<Peer> = (0..size)
        .map(|r| {
            let route = if r == rank {
                Route::SelfLoop
            } else if let Some(i) = local_world.iter().position(|&w| w == r) {
                Route::Shm(i)
            } else {
                Route::Unreachable
            };
            Peer {
                route,
                pid: cards[r as usize].1,
            }
        })
        .collect();

    let node = if nlocal > 1 {
        let leader = local_world[0];
        let name = format!("/oxmpi.{}.{}", sanitize(pmi.kvsname()), leader);
        let created = if rank == leader {
            // A segment of the same name can only be a leftover of a crashed job with
            // the same kvsname; replace it.
            let _ = shm::unlink(&name);
            Some(ShmNode::create(&name, nlocal, my_local, ring_bytes).map_err(|e| {
                Error::new(ErrorClass::Other, format!("cannot create shared memory {name}: {e}"))
            })?)
        } else {
            None
        };
        pmi.fence()
            .map_err(|e| pmi_err("PMI fence failed", e))?;
        let node = match created {
            Some(n) => n,
            None => ShmNode::open(&name, nlocal, my_local, ring_bytes).map_err(|e| {
                Error::new(ErrorClass::Other, format!("cannot map shared memory {name}: {e}"))
            })?,
        };
        if node.mark_attached() {
            let _ = shm::unlink(&name);
        }
        Some(Arc::new(node))
    } else {
        None
    };
    debug_assert!(ring::max_body(ring_bytes.max(4096)) > 0);

    Ok(Bootstrap {
        rank,
        size,
        pmi: Some(pmi),
        peers,
        node,
        local_world,
        appnum,
        universe_size: universe,
        ring_bytes,
    })
}
