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
//! address each listens on plus the incarnation of each (a random number drawn when its
//! transport starts), as exchanged when the peer was added, under a magic of their own
//! and the key agreed for that peer (the port's one-time key):
//!
//! ```text
//! HELLO  "OXMPI-D2" | dialer ip[4] | dialer port u16 | acceptor port u16
//!                   | dialer incarnation u32 | acceptor incarnation u32 | nonce_i[16]  (40 bytes)
//! ```
//!
//! and the CHALLENGE and PROOF as above, with labels `oxmpi-dyn-connect` / `oxmpi-dyn-accept`.
//! The incarnations tell a later process that listens on the port of an exited one from
//! that one: a HELLO names the process it is for, and the acceptor finds the dialer's
//! record by address and incarnation, never another process's record at that address.

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

/// Between processes of different jobs: the context is the dialer's listening address,
/// the acceptor's listening port and both incarnations.
const DYN: Scheme<16> = Scheme::new(*b"OXMPI-D2", b"oxmpi-dyn-connect", b"oxmpi-dyn-accept");
/// Bytes of a HELLO from a process of another job.
pub const DYN_HELLO_BYTES: usize = Scheme::<16>::HELLO_LEN;
/// Bytes that tell the two kinds of HELLO apart (the magic).
pub const MAGIC_BYTES: usize = oxmpi_auth::MAGIC_LEN;

/// True when a HELLO starting with `magic` comes from a process of another job.
pub fn is_dyn_hello(magic: &[u8; MAGIC_BYTES]) -> bool {
    magic == b"OXMPI-D2"
}

/// Why a HELLO for an earlier process at this port is refused (see
/// [`parse_hello_dyn`]): the dialer holds a stale record, and learns so when the
/// connection closes; not worth a line in the log.
pub const FOR_EARLIER_PROCESS: &str = "greeting is for an earlier process at this port";

/// Why an accepted connection closed before its dialer proved itself, when the dialer
/// said nothing yet or said it is a process of another job: such processes come and go
/// (a spawned child or a connected job that exits while its own dial to a peer is still
/// pending, the peer's crossing dial having carried their messages), and the dialer
/// claimed nothing; not worth a line in the log either.
pub const ABANDONED_DIAL: &str = "closed by its dialer before the handshake ended";

/// Who the two sides of a connection are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Who {
    /// Ranks `from` (dialer) and `to` of one job.
    Job { from: u32, to: u32 },
    /// Processes of different jobs: the dialer listens at `from` (incarnation
    /// `from_inc`), the acceptor on port `to` (incarnation `to_inc`).
    Dyn {
        from: SocketAddrV4,
        from_inc: u32,
        to: u16,
        to_inc: u32,
    },
}

/// The MAC scheme of either kind of peer, with its context.
enum Ctx {
    Job([u8; 8]),
    Dyn([u8; 16]),
}

impl Who {
    fn ctx(&self) -> Ctx {
        match *self {
            Who::Job { from, to } => Ctx::Job(ctx(from, to)),
            Who::Dyn {
                from,
                from_inc,
                to,
                to_inc,
            } => {
                let mut c = [0u8; 16];
                c[..4].copy_from_slice(&from.ip().octets());
                c[4..6].copy_from_slice(&from.port().to_le_bytes());
                c[6..8].copy_from_slice(&to.to_le_bytes());
                c[8..12].copy_from_slice(&from_inc.to_le_bytes());
                c[12..].copy_from_slice(&to_inc.to_le_bytes());
                Ctx::Dyn(c)
            }
        }
    }
}

/// The initiator's first message, for either kind of peer.
pub fn hello_for(who: Who, ni: &Nonce) -> Vec<u8> {
    match who.ctx() {
        Ctx::Job(c) => TCP.hello(&c, ni).as_bytes().to_vec(),
        Ctx::Dyn(c) => DYN.hello(&c, ni).as_bytes().to_vec(),
    }
}

/// Checks a HELLO from a process of another job, received by the process listening on
/// port `my_port` as incarnation `my_inc`: gives the dialer's listening address, its
/// incarnation and its nonce. A HELLO for another incarnation at this port (the dialer
/// still holds the record of a process that exited) is refused with
/// [`FOR_EARLIER_PROCESS`].
pub fn parse_hello_dyn(
    b: &[u8; DYN_HELLO_BYTES],
    my_port: u16,
    my_inc: u32,
) -> Result<(SocketAddrV4, u32, Nonce), String> {
    let (c, ni) = DYN.parse_hello(b).map_err(|e| e.to_string())?;
    let ip = std::net::Ipv4Addr::new(c[0], c[1], c[2], c[3]);
    let port = u16::from_le_bytes([c[4], c[5]]);
    let to = u16::from_le_bytes([c[6], c[7]]);
    let from_inc = u32::from_le_bytes([c[8], c[9], c[10], c[11]]);
    let to_inc = u32::from_le_bytes([c[12], c[13], c[14], c[15]]);
    if to != my_port {
        return Err(format!(
            "greeting is addressed to port {to}, not to this process (port {my_port})"
        ));
    }
    if to_inc != my_inc {
        return Err(FOR_EARLIER_PROCESS.to_string());
    }
    Ok((SocketAddrV4::new(ip, port), from_inc, ni))
}

/// The acceptor's answer for either kind of peer.
pub fn challenge_for(secret: &[u8], who: Who, ni: &Nonce, na: &Nonce) -> [u8; CHALLENGE_BYTES] {
    match who.ctx() {
        Ctx::Job(c) => TCP.challenge(secret, &c, ni, na),
        Ctx::Dyn(c) => DYN.challenge(secret, &c, ni, na),
    }
}

/// The initiator checks the acceptor's proof, for either kind of peer.
pub fn verify_challenge_for(
    secret: &[u8],
    who: Who,
    ni: &Nonce,
    b: &[u8; CHALLENGE_BYTES],
) -> Result<Nonce, String> {
    match who.ctx() {
        Ctx::Job(c) => TCP.verify_challenge(secret, &c, ni, b),
        Ctx::Dyn(c) => DYN.verify_challenge(secret, &c, ni, b),
    }
    .map_err(|e| match e {
        Error::BadGreeting => "the peer is not an oxmpi process (bad greeting)".to_string(),
        e => e.to_string(),
    })
}

/// The initiator's proof, for either kind of peer.
pub fn proof_for(secret: &[u8], who: Who, ni: &Nonce, na: &Nonce) -> [u8; PROOF_BYTES] {
    match who.ctx() {
        Ctx::Job(c) => TCP.proof(secret, &c, ni, na),
        Ctx::Dyn(c) => DYN.proof(secret, &c, ni, na),
    }
}

/// The acceptor checks the initiator's proof, for either kind of peer.
pub fn verify_proof_for(
    secret: &[u8],
    who: Who,
    ni: &Nonce,
    na: &Nonce,
    b: &[u8; PROOF_BYTES],
) -> Result<(), String> {
    match who.ctx() {
        Ctx::Job(c) => TCP.verify_proof(secret, &c, ni, na, b),
        Ctx::Dyn(c) => DYN.verify_proof(secret, &c, ni, na, b),
    }
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
    fn processes_of_two_jobs_authenticate_by_address_and_incarnation() {
        let k = b"port key";
        let from: SocketAddrV4 = "10.1.2.3:4000".parse().unwrap();
        let who = Who::Dyn {
            from,
            from_inc: 11,
            to: 5000,
            to_inc: 22,
        };
        let ni = nonce().unwrap();
        let h: [u8; DYN_HELLO_BYTES] = hello_for(who, &ni).try_into().unwrap();
        assert_eq!(&h[..8], b"OXMPI-D2");
        assert_eq!(
            hello_for(Who::Job { from: 0, to: 1 }, &ni),
            hello(0, 1, &ni).to_vec()
        );
        assert!(is_dyn_hello(h[..8].try_into().unwrap()));
        assert!(!is_dyn_hello(hello(0, 1, &ni)[..8].try_into().unwrap()));
        assert_eq!(parse_hello_dyn(&h, 5000, 22).unwrap(), (from, 11, ni));
        assert!(parse_hello_dyn(&h, 5001, 22).is_err());
        // A later process listening on the same port is not the one the HELLO is for.
        assert_eq!(
            parse_hello_dyn(&h, 5000, 23).unwrap_err(),
            FOR_EARLIER_PROCESS
        );
        let na = nonce().unwrap();
        let c = challenge_for(k, who, &ni, &na);
        assert_eq!(verify_challenge_for(k, who, &ni, &c).unwrap(), na);
        assert!(verify_challenge_for(b"other", who, &ni, &c).is_err());
        let p = proof_for(k, who, &ni, &na);
        verify_proof_for(k, who, &ni, &na, &p).unwrap();
        let elsewhere = Who::Dyn {
            from: "10.1.2.3:4001".parse().unwrap(),
            from_inc: 11,
            to: 5000,
            to_inc: 22,
        };
        assert!(verify_proof_for(k, elsewhere, &ni, &na, &p).is_err());
        let other_incarnation = Who::Dyn {
            from,
            from_inc: 12,
            to: 5000,
            to_inc: 22,
        };
        assert!(verify_proof_for(k, other_incarnation, &ni, &na, &p).is_err());
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
