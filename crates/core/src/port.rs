//! Ports (`MPI_Open_port`, `MPI_Close_port`) and the conversation between the roots of
//! two groups that build an intercommunicator across jobs (`MPI_Comm_accept` /
//! `MPI_Comm_connect`, `MPI_Comm_spawn`, `MPI_Comm_join`).
//!
//! A port is a TCP socket the opening process listens on, plus a one-time key of 16
//! random bytes. Its name carries both:
//!
//! ```text
//! oxmpi-port:<IPv4>:<port>:<node>:<lo|->:<key, 32 hex digits>
//! ```
//!
//! (`node`: 16 hex digits of a hash of the node key, so a connector on the same node
//! dials 127.0.0.1 when the listener allows it; all characters are PMI-token safe, so a
//! port name can be published). Whoever holds the name may connect: the key is the
//! credential, as a job secret is within a job. The connecting root proves the key
//! (the `oxmpi-auth` challenge-response, magic `OXMPI-P1`) before the accepting root
//! reads anything else, and the two groups' processes then authenticate each other's
//! device connections with the same key (`oxmpi_device`'s `OXMPI-D1` handshake).
//!
//! After the proof both roots send their [`Side`] (the context slots free at every
//! member of the group, and each member's listening address and node), and each
//! computes the same context id: the lowest slot free on both sides. Messages are
//! `u32` length-prefixed and read with a deadline.

use crate::context::Mask;
use crate::error::{err, Error, ErrorClass, Result};
use crate::internal_coll::{Reader, Writer};
use oxmpi_auth::Scheme;
use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::{Ipv4Addr, SocketAddrV4, TcpListener, TcpStream};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Root to root, over the port's socket; the context is empty.
const PORT: Scheme<8> = Scheme::new(*b"OXMPI-P1", b"oxmpi-port-connect", b"oxmpi-port-accept");
/// Bytes of the one-time key.
pub const KEY_BYTES: usize = 16;
/// Largest message between roots (a side of a million processes fits).
const MAX_MESSAGE: usize = 64 << 20;
/// Prefix of every port name.
const PREFIX: &str = "oxmpi-port:";

/// A parsed port name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PortName {
    pub addr: SocketAddrV4,
    pub node: u64,
    pub loopback_ok: bool,
    pub key: [u8; KEY_BYTES],
}

impl PortName {
    pub fn format(&self) -> String {
        format!(
            "{PREFIX}{}:{}:{:016x}:{}:{}",
            self.addr.ip(),
            self.addr.port(),
            self.node,
            if self.loopback_ok { "lo" } else { "-" },
            hex(&self.key)
        )
    }

    /// Parses a port name; `MPI_ERR_PORT` naming `call` when it is not one of ours.
    pub fn parse(call: &str, s: &str) -> Result<PortName> {
        let bad = |why: &str| {
            Error::new(
                ErrorClass::Port,
                format!("{call}: port_name {s:?} is not a port name of this MPI library ({why})"),
            )
        };
        let rest = s
            .strip_prefix(PREFIX)
            .ok_or_else(|| bad("it does not start with \"oxmpi-port:\""))?;
        let f: Vec<&str> = rest.split(':').collect();
        if f.len() != 5 {
            return Err(bad("wrong number of fields"));
        }
        let ip: Ipv4Addr = f[0].parse().map_err(|_| bad("bad address"))?;
        let port: u16 = f[1].parse().map_err(|_| bad("bad TCP port"))?;
        if port == 0 {
            return Err(bad("bad TCP port"));
        }
        let node = u64::from_str_radix(f[2], 16).map_err(|_| bad("bad node"))?;
        let loopback_ok = match f[3] {
            "lo" => true,
            "-" => false,
            _ => return Err(bad("bad loopback flag")),
        };
        let kb = unhex(f[4]).ok_or_else(|| bad("bad key"))?;
        let key: [u8; KEY_BYTES] = kb.try_into().map_err(|_| bad("bad key length"))?;
        Ok(PortName {
            addr: SocketAddrV4::new(ip, port),
            node,
            loopback_ok,
            key,
        })
    }

    /// Where a process on node `my_node` dials the port.
    pub fn dial_addr(&self, my_node: u64) -> SocketAddrV4 {
        if self.loopback_ok && self.node == my_node {
            SocketAddrV4::new(Ipv4Addr::LOCALHOST, self.addr.port())
        } else {
            self.addr
        }
    }
}

pub fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn unhex(s: &str) -> Option<Vec<u8>> {
    if s.len() % 2 != 0 || !s.bytes().all(|c| c.is_ascii_hexdigit()) {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).ok())
        .collect()
}

/// A 64-bit FNV-1a hash (of the node key).
pub fn node_hash(key: &str) -> u64 {
    key.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ b as u64).wrapping_mul(0x0100_0000_01b3)
    })
}

/// Random bytes for keys.
pub fn random_key() -> Result<[u8; KEY_BYTES]> {
    let mut k = [0u8; KEY_BYTES];
    oxmpi_auth::random(&mut k).map_err(|e| {
        Error::new(
            ErrorClass::Other,
            format!("no random source for a port key: {e}"),
        )
    })?;
    Ok(k)
}

// ----- open ports ----------------------------------------------------------------------

/// The ports this process opened, by name.
static PORTS: Mutex<Option<HashMap<String, TcpListener>>> = Mutex::new(None);

fn ports() -> std::sync::MutexGuard<'static, Option<HashMap<String, TcpListener>>> {
    PORTS.lock().unwrap_or_else(|e| e.into_inner())
}

/// Opens a port: a socket listening where this process's TCP transport would
/// (`OXMPI_TCP_ADDR`, `OXMPI_TCP_IF`), and a fresh key.
pub fn open(tcp_addr: Option<&str>, tcp_if: Option<&str>, node: u64) -> Result<String> {
    let l = crate::transport::tcp::Listener::open(tcp_addr, tcp_if).map_err(|e| {
        Error::new(
            ErrorClass::Other,
            format!("MPI_Open_port: cannot open a port: {e}"),
        )
    })?;
    let (addr, loopback_ok) = crate::transport::tcp::parse_card(&l.card())
        .ok_or_else(|| Error::new(ErrorClass::Intern, "unreadable listening address"))?;
    let name = PortName {
        addr,
        node,
        loopback_ok,
        key: random_key()?,
    }
    .format();
    ports()
        .get_or_insert_with(HashMap::new)
        .insert(name.clone(), l.into_socket());
    Ok(name)
}

/// `MPI_Close_port`: stops listening; `MPI_ERR_PORT` for a name this process did not
/// open (or closed already).
pub fn close(name: &str) -> Result<()> {
    match ports().as_mut().and_then(|m| m.remove(name)) {
        Some(_) => Ok(()),
        None => err(
            ErrorClass::Port,
            format!("MPI_Close_port: port {name:?} is not open in this process"),
        ),
    }
}

/// A duplicate of the listening socket of open port `name`, for accepting without
/// holding the table.
fn listener(call: &str, name: &str) -> Result<TcpListener> {
    let g = ports();
    let l = g.as_ref().and_then(|m| m.get(name)).ok_or_else(|| {
        Error::new(
            ErrorClass::Port,
            format!("{call}: port {name:?} is not open in this process (MPI_Open_port opens one)"),
        )
    })?;
    l.try_clone()
        .map_err(|e| Error::new(ErrorClass::Other, format!("{call}: {e}")))
}

// ----- the roots' conversation ---------------------------------------------------------

/// One member of a group, as the other group sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Remote {
    /// Where it listens and its incarnation (its identity).
    pub addr: SocketAddrV4,
    pub inc: u32,
    pub loopback_ok: bool,
    pub node: u64,
}

impl Remote {
    /// Where a process on node `my_node` dials it.
    pub fn dial_addr(&self, my_node: u64) -> SocketAddrV4 {
        if self.loopback_ok && self.node == my_node {
            SocketAddrV4::new(Ipv4Addr::LOCALHOST, self.addr.port())
        } else {
            self.addr
        }
    }

    pub fn write(&self, w: &mut Writer) {
        w.u32(u32::from(*self.addr.ip()))
            .u32(self.addr.port() as u32)
            .u32(self.inc)
            .u32(self.loopback_ok as u32)
            .u32(self.node as u32)
            .u32((self.node >> 32) as u32);
    }

    pub fn read(r: &mut Reader) -> Result<Remote> {
        let ip = Ipv4Addr::from(r.u32()?);
        let port = r.u32()? as u16;
        let inc = r.u32()?;
        let loopback_ok = r.u32()? != 0;
        let node = r.u32()? as u64 | (r.u32()? as u64) << 32;
        Ok(Remote {
            addr: SocketAddrV4::new(ip, port),
            inc,
            loopback_ok,
            node,
        })
    }
}

/// What a root tells the other: the slots free at every member, and the members.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Side {
    pub mask: Mask,
    pub members: Vec<Remote>,
    /// Random bytes toward the key, where the two sides make one (`MPI_Comm_join`).
    pub salt: [u8; KEY_BYTES],
}

impl Side {
    pub fn encode(&self) -> Vec<u8> {
        let mut w = Writer::default();
        w.bytes(&self.mask.encode())
            .bytes(&self.salt)
            .u32(self.members.len() as u32);
        for m in &self.members {
            m.write(&mut w);
        }
        w.finish()
    }

    pub fn decode(b: &[u8]) -> Result<Side> {
        let bad = || {
            Error::new(
                ErrorClass::Other,
                "malformed message from the other group's root",
            )
        };
        let mut r = Reader::new(b);
        let mask = Mask::decode(r.bytes()?).ok_or_else(bad)?;
        let salt: [u8; KEY_BYTES] = r.bytes()?.try_into().map_err(|_| bad())?;
        let n = r.u32()? as usize;
        if n == 0 || n > b.len() / 20 {
            return Err(bad());
        }
        let members = (0..n)
            .map(|_| Remote::read(&mut r))
            .collect::<Result<_>>()?;
        Ok(Side {
            mask,
            members,
            salt,
        })
    }
}

fn send_msg(s: &mut impl Write, b: &[u8]) -> std::io::Result<()> {
    s.write_all(&(b.len() as u32).to_le_bytes())?;
    s.write_all(b)
}

fn recv_msg(s: &mut impl Read) -> std::io::Result<Vec<u8>> {
    let mut l = [0u8; 4];
    s.read_exact(&mut l)?;
    let n = u32::from_le_bytes(l) as usize;
    if n > MAX_MESSAGE {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("message of {n} bytes"),
        ));
    }
    let mut b = vec![0u8; n];
    s.read_exact(&mut b)?;
    Ok(b)
}

/// Both roots send their side and read the other's.
fn swap_sides(s: &mut (impl Read + Write), mine: &Side) -> std::io::Result<Vec<u8>> {
    send_msg(s, &mine.encode())?;
    recv_msg(s)
}

fn timed_out(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
    )
}

/// The connecting root: dials `port`, proves its key, and swaps sides. Gives up with
/// `MPI_ERR_PORT` when nothing listens there or nobody accepts within `timeout`.
pub fn connect_root(port: &PortName, my_node: u64, mine: &Side, timeout: Duration) -> Result<Side> {
    let call = "MPI_Comm_connect";
    let deadline = Instant::now() + timeout;
    let to = port.dial_addr(my_node);
    let perr = |why: String| {
        Error::new(
            ErrorClass::Port,
            format!("{call}: port {}: {why}", port.addr),
        )
    };
    let mut s = TcpStream::connect_timeout(&to.into(), timeout)
        .map_err(|e| perr(format!("cannot connect to {to} (is the port open?): {e}")))?;
    let _ = s.set_nodelay(true);
    let left = || {
        deadline
            .saturating_duration_since(Instant::now())
            .max(Duration::from_millis(1))
    };
    let waited = |e: std::io::Error| {
        if timed_out(&e) {
            perr(format!(
                "nobody accepted within {} s (info key \"timeout\", OXMPI_DPM_CONNECT_TIMEOUT)",
                timeout.as_secs()
            ))
        } else {
            perr(format!("the connection broke: {e}"))
        }
    };
    s.set_read_timeout(Some(left())).map_err(waited)?;
    s.set_write_timeout(Some(left())).map_err(waited)?;
    PORT.initiate(&mut s, &port.key, &[0; 8])
        .map_err(|e| match e {
            oxmpi_auth::Error::Io(e) => waited(e),
            e => perr(format!("the port's owner did not prove the key: {e}")),
        })?;
    s.set_read_timeout(Some(left())).map_err(waited)?;
    let b = swap_sides(&mut s, mine).map_err(waited)?;
    Side::decode(&b)
}

/// The accepting root: waits on open port `name` for a process that proves the key,
/// then swaps sides. Connections that fail the proof are dropped and logged; `idle`
/// runs between polls of the socket (the engine's progress).
pub fn accept_root(name: &str, mine: &Side, mut idle: impl FnMut() -> Result<()>) -> Result<Side> {
    let call = "MPI_Comm_accept";
    let port = PortName::parse(call, name)?;
    let l = listener(call, name)?;
    l.set_nonblocking(true)
        .map_err(|e| Error::new(ErrorClass::Other, format!("{call}: {e}")))?;
    loop {
        let (mut s, from) = match l.accept() {
            Ok(x) => x,
            Err(e) if timed_out(&e) || e.kind() == std::io::ErrorKind::Interrupted => {
                idle()?;
                std::thread::sleep(Duration::from_millis(1));
                continue;
            }
            Err(e) => return err(ErrorClass::Other, format!("{call}: accept failed: {e}")),
        };
        let r = (|| -> std::result::Result<Vec<u8>, String> {
            s.set_nonblocking(false).map_err(|e| e.to_string())?;
            let _ = s.set_nodelay(true);
            // A connector that proved the key answers at once; a stranger gets little time.
            s.set_read_timeout(Some(Duration::from_secs(30)))
                .map_err(|e| e.to_string())?;
            PORT.accept(&mut s, &port.key).map_err(|e| e.to_string())?;
            swap_sides(&mut s, mine).map_err(|e| e.to_string())
        })();
        match r {
            Ok(b) => return Side::decode(&b),
            Err(why) => {
                eprintln!("oxmpi: {call}: dropped a connection to the port from {from}: {why}");
            }
        }
    }
}

/// `MPI_Comm_join`'s root conversation over a connected socket: both sides send their
/// side at once (the order does not matter) and read the other's.
pub fn join_root(fd: std::os::fd::BorrowedFd<'_>, mine: &Side) -> Result<Side> {
    let own = fd
        .try_clone_to_owned()
        .map_err(|e| Error::new(ErrorClass::Arg, format!("MPI_Comm_join: fd: {e}")))?;
    let mut s = std::fs::File::from(own);
    let b = swap_sides(&mut s, mine).map_err(|e| {
        Error::new(
            ErrorClass::Other,
            format!("MPI_Comm_join: the exchange over the socket failed: {e}"),
        )
    })?;
    Side::decode(&b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn port_names_round_trip_and_bad_ones_are_port_errors() {
        let p = PortName {
            addr: "10.0.0.7:4321".parse().unwrap(),
            node: 0xdead_beef_0000_0001,
            loopback_ok: true,
            key: [7; KEY_BYTES],
        };
        let s = p.format();
        assert!(s.starts_with("oxmpi-port:10.0.0.7:4321:deadbeef00000001:lo:0707"));
        assert!(!s.contains([' ', '=', ';', '\\']));
        assert_eq!(PortName::parse("x", &s).unwrap(), p);
        assert_eq!(p.dial_addr(p.node), "127.0.0.1:4321".parse().unwrap());
        assert_eq!(p.dial_addr(1), p.addr);
        for bad in [
            "",
            "tag#0$description#x$",
            "oxmpi-port:10.0.0.7:4321",
            "oxmpi-port:10.0.0.300:4321:0:lo:00000000000000000000000000000000",
            "oxmpi-port:10.0.0.7:0:0:lo:00000000000000000000000000000000",
            "oxmpi-port:10.0.0.7:1:0:yes:00000000000000000000000000000000",
            "oxmpi-port:10.0.0.7:1:0:lo:0000",
            "oxmpi-port:10.0.0.7:1:0:lo:zz000000000000000000000000000000",
        ] {
            let e = PortName::parse("MPI_Comm_connect", bad).unwrap_err();
            assert_eq!(e.class, ErrorClass::Port, "{bad}");
        }
    }

    #[test]
    fn sides_round_trip() {
        let mut mask = Mask::full();
        mask.clear(3);
        let side = Side {
            mask,
            members: vec![
                Remote {
                    addr: "127.0.0.1:5".parse().unwrap(),
                    inc: 7,
                    loopback_ok: true,
                    node: u64::MAX - 1,
                },
                Remote {
                    addr: "10.1.1.1:65535".parse().unwrap(),
                    inc: u32::MAX,
                    loopback_ok: false,
                    node: 3,
                },
            ],
            salt: [9; KEY_BYTES],
        };
        assert_eq!(Side::decode(&side.encode()).unwrap(), side);
        assert!(Side::decode(&side.encode()[..100]).is_err());
    }

    #[test]
    fn roots_meet_through_a_port_and_strangers_are_dropped() {
        let name = open(Some("127.0.0.1"), None, 1).unwrap();
        let p = PortName::parse("t", &name).unwrap();
        let side = |n: u8| Side {
            mask: Mask::full(),
            members: vec![Remote {
                addr: SocketAddrV4::new(Ipv4Addr::new(127, 0, 0, n), 9),
                inc: n as u32,
                loopback_ok: false,
                node: n as u64,
            }],
            salt: [n; KEY_BYTES],
        };
        // A connector with the wrong key is dropped; the right one gets through.
        let mut wrong = p.clone();
        wrong.key = [0; KEY_BYTES];
        let n2 = name.clone();
        let t = std::thread::spawn(move || accept_root(&n2, &side(1), || Ok(())).unwrap());
        let e = connect_root(&wrong, 1, &side(3), Duration::from_secs(20)).unwrap_err();
        assert_eq!(e.class, ErrorClass::Port);
        let got = connect_root(&p, 1, &side(2), Duration::from_secs(20)).unwrap();
        assert_eq!(got, side(1));
        assert_eq!(t.join().unwrap(), side(2));
        // Nobody accepts: a timeout, as a port error.
        let e = connect_root(&p, 1, &side(2), Duration::from_secs(1)).unwrap_err();
        assert_eq!(e.class, ErrorClass::Port);
        assert!(e.message.contains("nobody accepted"), "{}", e.message);
        close(&name).unwrap();
        assert_eq!(close(&name).unwrap_err().class, ErrorClass::Port);
        // A closed port refuses at once.
        let e = connect_root(&p, 1, &side(2), Duration::from_secs(20)).unwrap_err();
        assert_eq!(e.class, ErrorClass::Port);
    }
}
