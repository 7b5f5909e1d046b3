//! Mutual authentication of a TCP connection between two ranks of a job, before any
//! packet is read: a challenge/response over HMAC-SHA256 keyed with the job secret.
//!
//! ```text
//! initiator -> acceptor  HELLO      "OXMPI-T1" | from u32 | to u32 | nonce_i[16]      (32 bytes)
//! acceptor -> initiator  CHALLENGE  "OXMPI-T1" | nonce_a[16] | mac_a[32]              (56 bytes)
//! initiator -> acceptor  PROOF      mac_i[32]                                         (32 bytes)
//!
//! mac_a = HMAC(secret, "oxmpi-tcp-accept"  | from | to | nonce_i | nonce_a)
//! mac_i = HMAC(secret, "oxmpi-tcp-connect" | from | to | nonce_i | nonce_a)
//! ```
//!
//! Each side proves the secret over both fresh nonces, under a label of its own role, so
//! neither message can be replayed or reflected. The exchange is [`oxmpi_auth`]'s (shared
//! with the launcher's proxies); this module fixes its magic, labels and context (the two
//! ranks) and checks the ranks. Sans-IO: fixed-size messages in and out.
//!
//! A process of another job (added at run time by `MPI_Comm_spawn`, `MPI_Comm_accept`
//! and friends) has no rank in this job, so the two sides name each other by the
//! address each listens on (as exchanged when the peer was added), under a magic of
//! their own and the key agreed for that peer (the port's one-time key):
//!
//! ```text
//! HELLO  "OXMPI-D1" | dialer ip[4] | dialer port u16 | acceptor port u16 | nonce_i[16]  (32 bytes)
//! ```
//!
//! and the CHALLENGE and PROOF as above, with labels `oxmpi-dyn-connect` / `oxmpi-dyn-accept`.

use oxmpi_auth::{Error, Scheme};
use std::net::SocketAddrV4;

/// Rank to rank: the context is `from | to`, little-endian.
const TCP: Scheme<8> = Scheme::new(*b"OXMPI-T1", b"oxmpi-tcp-connect", b"oxmpi-tcp-accept");
/// Bytes of a HELLO.
pub const HELLO_BYTES: usize = Scheme::<8>::HELLO_LEN;
/// Bytes of a CHALLENGE.
pub const CHALLENGE_BYTES: usize = oxmpi_auth::CHALLENGE_LEN;
/// Bytes of a PROOF.
pub const PROOF_BYTES: usize = oxmpi_auth::PROOF_LEN;

/// Between processes of different jobs: the context is the dialer's listening address
/// and the acceptor's listening port.
const DYN: Scheme<8> = Scheme::new(*b"OXMPI-D1", b"oxmpi-dyn-connect", b"oxmpi-dyn-accept");

/// Who the two sides of a connection are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Who {
    /// Ranks `from` (dialer) and `to` of one job.
    Job { from: u32, to: u32 },
    /// Processes of different jobs: the dialer listens at `from`, the acceptor on port `to`.
    Dyn { from: SocketAddrV4, to: u16 },
}

impl Who {
    fn scheme(&self) -> (&'static Scheme<8>, [u8; 8]) {
        match *self {
            Who::Job { from, to } => (&TCP, ctx(from, to)),
            Who::Dyn { from, to } => {
                let mut c = [0u8; 8];
                c[..4].copy_from_slice(&from.ip().octets());
                c[4..6].copy_from_slice(&from.port().to_le_bytes());
                c[6..].copy_from_slice(&to.to_le_bytes());
                (&DYN, c)
            }
        }
    }
}

/// The initiator's first message toward a process of another job.
pub fn hello_dyn(who: Who, ni: &Nonce) -> [u8; HELLO_BYTES] {
    let (s, c) = who.scheme();
    let mut b = [0u8; HELLO_BYTES];
    b.copy_from_slice(s.hello(&c, ni).as_bytes());
    b
}

/// Checks a HELLO from a process of another job, received by the process listening on
/// port `my_port`: gives the dialer's listening address and nonce. `Ok(None)` when the
/// HELLO is not of that kind (try [`parse_hello`]).
pub fn parse_hello_dyn(
    b: &[u8; HELLO_BYTES],
    my_port: u16,
) -> Result<Option<(SocketAddrV4, Nonce)>, String> {
    let (c, ni) = match DYN.parse_hello(b) {
        Ok(x) => x,
        Err(Error::BadGreeting) => return Ok(None),
        Err(e) => return Err(e.to_string()),
    };
    let ip = std::net::Ipv4Addr::new(c[0], c[1], c[2], c[3]);
    let port = u16::from_le_bytes([c[4], c[5]]);
    let to = u16::from_le_bytes([c[6], c[7]]);
    if to != my_port {
        return Err(format!(
            "greeting is addressed to port {to}, not to this process (port {my_port})"
        ));
    }
    Ok(Some((SocketAddrV4::new(ip, port), ni)))
}

/// The acceptor's answer for either kind of peer.
pub fn challenge_for(secret: &[u8], who: Who, ni: &Nonce, na: &Nonce) -> [u8; CHALLENGE_BYTES] {
    let (s, c) = who.scheme();
    s.challenge(secret, &c, ni, na)
}

/// The initiator checks the acceptor's proof, for either kind of peer.
pub fn verify_challenge_for(
    secret: &[u8],
    who: Who,
    ni: &Nonce,
    b: &[u8; CHALLENGE_BYTES],
) -> Result<Nonce, String> {
    let (s, c) = who.scheme();
    s.verify_challenge(secret, &c, ni, b).map_err(|e| match e {
        Error::BadGreeting => "the peer is not an oxmpi process (bad greeting)".to_string(),
        e => e.to_string(),
    })
}

/// The initiator's proof, for either kind of peer.
pub fn proof_for(secret: &[u8], who: Who, ni: &Nonce, na: &Nonce) -> [u8; PROOF_BYTES] {
    let (s, c) = who.scheme();
    s.proof(secret, &c, ni, na)
}

/// The acceptor checks the initiator's proof, for either kind of peer.
pub fn verify_proof_for(
    secret: &[u8],
    who: Who,
    ni: &Nonce,
    na: &Nonce,
    b: &[u8; PROOF_BYTES],
) -> Result<(), String> {
    let (s, c) = who.scheme();
    s.verify_proof(secret, &c, ni, na, b)
        .map_err(|e| match (e, who) {
            (Error::NotProven, Who::Job { .. }) => "wrong job secret".to_string(),
            (Error::NotProven, Who::Dyn { .. }) => "wrong key of another job's peer".to_string(),
            (e, _) => e.to_string(),
        })
}

/// A random 16-byte nonce.
pub type Nonce = oxmpi_auth::Nonce;

/// Draws a fresh nonce; an error (the connection fails) when the system has no random
/// source, never a predictable nonce.
pub fn nonce() -> Result<Nonce, String> {
    oxmpi_auth::nonce().map_err(|e| e.to_string())
}

fn ctx(from: u32, to: u32) -> [u8; 8] {
    let mut c = [0u8; 8];
    c[..4].copy_from_slice(&from.to_le_bytes());
    c[4..].copy_from_slice(&to.to_le_bytes());
    c
}

/// The initiator's first message.
pub fn hello(from: u32, to: u32, ni: &Nonce) -> [u8; HELLO_BYTES] {
    let mut b = [0u8; HELLO_BYTES];
    b.copy_from_slice(TCP.hello(&ctx(from, to), ni).as_bytes());
    b
}

/// Checks a HELLO received by rank `me` of a job of `size`; gives the initiator's rank
/// and nonce.
pub fn parse_hello(b: &[u8; HELLO_BYTES], me: u32, size: u32) -> Result<(u32, Nonce), String> {
    let (c, ni) = TCP.parse_hello(b).map_err(|e| match e {
        Error::BadGreeting => "not an oxmpi connection (bad greeting)".to_string(),
        e => e.to_string(),
    })?;
    let from = u32::from_le_bytes([c[0], c[1], c[2], c[3]]);
    let to = u32::from_le_bytes([c[4], c[5], c[6], c[7]]);
    if to != me {
        return Err(format!(
            "greeting is addressed to rank {to}, not to this rank"
        ));
    }
    if from >= size || from == me {
        return Err(format!(
            "greeting claims to come from rank {from} (job size {size})"
        ));
    }
    Ok((from, ni))
}

/// The acceptor's answer: its nonce and its proof of the secret.
pub fn challenge(
    secret: &[u8],
    from: u32,
    to: u32,
    ni: &Nonce,
    na: &Nonce,
) -> [u8; CHALLENGE_BYTES] {
    TCP.challenge(secret, &ctx(from, to), ni, na)
}

/// The initiator checks the acceptor's proof; gives the acceptor's nonce.
pub fn verify_challenge(
    secret: &[u8],
    from: u32,
    to: u32,
    ni: &Nonce,
    b: &[u8; CHALLENGE_BYTES],
) -> Result<Nonce, String> {
    TCP.verify_challenge(secret, &ctx(from, to), ni, b)
        .map_err(|e| match e {
            Error::BadGreeting => "the peer is not an oxmpi rank (bad greeting)".to_string(),
            e => e.to_string(),
        })
}

/// The initiator's proof of the secret.
pub fn proof(secret: &[u8], from: u32, to: u32, ni: &Nonce, na: &Nonce) -> [u8; PROOF_BYTES] {
    TCP.proof(secret, &ctx(from, to), ni, na)
}

/// The acceptor checks the initiator's proof.
pub fn verify_proof(
    secret: &[u8],
    from: u32,
    to: u32,
    ni: &Nonce,
    na: &Nonce,
    b: &[u8; PROOF_BYTES],
) -> Result<(), String> {
    TCP.verify_proof(secret, &ctx(from, to), ni, na, b)
        .map_err(|e| match e {
            Error::NotProven => "wrong job secret".to_string(),
            e => e.to_string(),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_sides_agree() {
        let s = b"secret";
        let ni = nonce().unwrap();
        let h = hello(3, 1, &ni);
        let (from, ni2) = parse_hello(&h, 1, 4).unwrap();
        assert_eq!((from, ni2), (3, ni));
        let na = nonce().unwrap();
        let c = challenge(s, 3, 1, &ni, &na);
        assert_eq!(verify_challenge(s, 3, 1, &ni, &c).unwrap(), na);
        let p = proof(s, 3, 1, &ni, &na);
        verify_proof(s, 3, 1, &ni, &na, &p).unwrap();
    }

    #[test]
    fn wrong_secret_or_tampering_fails() {
        let ni = nonce().unwrap();
        let na = nonce().unwrap();
        let c = challenge(b"a", 0, 1, &ni, &na);
        assert!(verify_challenge(b"b", 0, 1, &ni, &c).is_err());
        let p = proof(b"a", 0, 1, &ni, &na);
        assert!(verify_proof(b"b", 0, 1, &ni, &na, &p).is_err());
        // The acceptor's MAC is not accepted as an initiator's proof (reflection).
        let mut reflected = [0u8; 32];
        reflected.copy_from_slice(&c[24..]);
        assert!(verify_proof(b"a", 0, 1, &ni, &na, &reflected).is_err());
        // A proof for other nonces or ranks fails.
        assert!(verify_proof(b"a", 0, 1, &ni, &nonce().unwrap(), &p).is_err());
        assert!(verify_proof(b"a", 2, 1, &ni, &na, &p).is_err());
    }

    #[test]
    fn processes_of_two_jobs_authenticate_by_address() {
        let k = b"port key";
        let from: SocketAddrV4 = "10.1.2.3:4000".parse().unwrap();
        let who = Who::Dyn { from, to: 5000 };
        let ni = nonce().unwrap();
        let h = hello_dyn(who, &ni);
        assert_eq!(&h[..8], b"OXMPI-D1");
        assert_eq!(parse_hello_dyn(&h, 5000).unwrap(), Some((from, ni)));
        assert!(parse_hello_dyn(&h, 5001).is_err());
        // A rank's HELLO is not a dynamic one, and the other way round.
        assert_eq!(parse_hello_dyn(&hello(0, 1, &ni), 5000).unwrap(), None);
        assert!(parse_hello(&h, 1, 4).is_err());
        let na = nonce().unwrap();
        let c = challenge_for(k, who, &ni, &na);
        assert_eq!(verify_challenge_for(k, who, &ni, &c).unwrap(), na);
        assert!(verify_challenge_for(b"other", who, &ni, &c).is_err());
        let p = proof_for(k, who, &ni, &na);
        verify_proof_for(k, who, &ni, &na, &p).unwrap();
        let elsewhere = Who::Dyn {
            from: "10.1.2.3:4001".parse().unwrap(),
            to: 5000,
        };
        assert!(verify_proof_for(k, elsewhere, &ni, &na, &p).is_err());
        // A job's MAC is not a dynamic one.
        let job = Who::Job { from: 0, to: 1 };
        assert!(verify_proof_for(k, job, &ni, &na, &p).is_err());
    }

    #[test]
    fn bad_hellos() {
        let ni = nonce().unwrap();
        assert!(parse_hello(&hello(0, 2, &ni), 1, 4).is_err());
        assert!(parse_hello(&hello(9, 1, &ni), 1, 4).is_err());
        assert!(parse_hello(&hello(1, 1, &ni), 1, 4).is_err());
        let mut g = hello(0, 1, &ni);
        g[0] = b'X';
        assert!(parse_hello(&g, 1, 4).unwrap_err().contains("not an oxmpi"));
    }

    #[test]
    fn wire_format_is_unchanged() {
        // Known answers of the format above, computed independently (Python's hmac).
        let hex = |s: &str| -> Vec<u8> {
            (0..s.len())
                .step_by(2)
                .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
                .collect()
        };
        let (ni, na): (Nonce, Nonce) = (
            std::array::from_fn(|i| i as u8),
            std::array::from_fn(|i| 100 + i as u8),
        );
        let h = hello(3, 1, &ni);
        assert_eq!(&h[..8], b"OXMPI-T1");
        assert_eq!(h[8..16], [3, 0, 0, 0, 1, 0, 0, 0]);
        assert_eq!(h[16..], ni);
        let c = challenge(b"s", 3, 1, &ni, &na);
        assert_eq!(&c[..8], b"OXMPI-T1");
        assert_eq!(c[8..24], na);
        assert_eq!(
            c[24..],
            hex("2a87f2b25c69005da3a55a03f8dafbf9fed02a8bac2da2d8b953436fb1d7aef5")
        );
        assert_eq!(
            proof(b"s", 3, 1, &ni, &na)[..],
            hex("1eaeb21b44bcac4ce2e31fe84e3850e01255257bbf8e5715c937a0d77b98a076")
        );
    }
}
