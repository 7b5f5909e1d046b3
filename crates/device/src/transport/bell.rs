//! Waking a rank that sleeps in epoll (because it has TCP connections) from a shared-
//! memory sender: the sleeper's shm doorbell says "sleeping in epoll", and the sender
//! then sends one datagram to the sleeper's abstract unix socket, which is in its epoll
//! set. Ranks that only use shared memory never touch this (they sleep on the futex).
//!
//! Socket names are `\0oxmpi-bell-<hash of kvsname>-<world rank>`: abstract (no file to
//! clean up), per network namespace, and the datagram carries no information.

use sha2::{Digest, Sha256};
use std::io;
use std::os::linux::net::SocketAddrExt;
use std::os::unix::net::{SocketAddr, UnixDatagram};
use std::sync::OnceLock;

/// The abstract socket name of `world`'s doorbell in job `kvsname`.
pub fn bell_name(kvsname: &str, world: u32) -> String {
    let h = Sha256::digest(kvsname.as_bytes());
    let hex: String = h[..8].iter().map(|b| format!("{b:02x}")).collect();
    format!("oxmpi-bell-{hex}-{world}")
}

/// This rank's doorbell socket, registered in its epoll set.
pub struct Bell {
    sock: UnixDatagram,
}

impl Bell {
    /// Binds the doorbell socket of `world` (non-blocking).
    pub fn bind(kvsname: &str, world: u32) -> io::Result<Bell> {
        let addr = SocketAddr::from_abstract_name(bell_name(kvsname, world).as_bytes())?;
        let sock = UnixDatagram::bind_addr(&addr)?;
        sock.set_nonblocking(true)?;
        Ok(Bell { sock })
    }

    pub fn socket(&self) -> &UnixDatagram {
        &self.sock
    }

    /// Reads away every pending poke.
    pub fn drain(&self) {
        let mut b = [0u8; 16];
        while self.sock.recv(&mut b).is_ok() {}
    }
}

/// Sends pokes to the doorbells of this node's ranks (by local index).
pub struct Poker {
    names: Vec<String>,
    sock: OnceLock<Option<UnixDatagram>>,
}

impl Poker {
    /// `local_world[i]` is the world rank of local index `i`.
    pub fn new(kvsname: &str, local_world: &[u32]) -> Poker {
        Poker {
            names: local_world.iter().map(|&w| bell_name(kvsname, w)).collect(),
            sock: OnceLock::new(),
        }
    }

    /// Wakes local rank `i` sleeping in epoll. Best effort: a full socket queue means a
    /// wake-up is already pending.
    pub fn poke(&self, i: usize) {
        let Some(name) = self.names.get(i) else {
            return;
        };
        let sock = self.sock.get_or_init(|| {
            let s = UnixDatagram::unbound().ok()?;
            s.set_nonblocking(true).ok()?;
            Some(s)
        });
        if let (Some(s), Ok(addr)) = (sock, SocketAddr::from_abstract_name(name.as_bytes())) {
            let _ = s.send_to_addr(&[1], &addr);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn poke_reaches_the_bell() {
        let kvs = format!("unit-bell-{}", std::process::id());
        let bell = Bell::bind(&kvs, 3).unwrap();
        let p = Poker::new(&kvs, &[7, 3]);
        p.poke(1);
        let mut b = [0u8; 4];
        assert_eq!(bell.socket().recv(&mut b).unwrap(), 1);
        p.poke(0); // nobody listens: ignored
        p.poke(9); // out of range: ignored
        bell.drain();
        assert!(bell.socket().recv(&mut b).is_err());
    }
}
