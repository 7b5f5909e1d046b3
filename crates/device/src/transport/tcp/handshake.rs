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
//! neither message can be replayed or reflected. Sans-IO: fixed-size messages in and out.

use hmac::{Hmac, Mac};
use sha2::Sha256;

const MAGIC: &[u8; 8] = b"OXMPI-T1";
/// Bytes of a HELLO.
pub const HELLO_BYTES: usize = 32;
/// Bytes of a CHALLENGE.
pub const CHALLENGE_BYTES: usize = 56;
/// Bytes of a PROOF.
pub const PROOF_BYTES: usize = 32;

/// A random 16-byte nonce.
pub type Nonce = [u8; 16];

/// Draws a fresh nonce.
pub fn nonce() -> Nonce {
    let mut n = [0u8; 16];
    if getrandom::getrandom(&mut n).is_err() {
        // No entropy source: still unique per process and moment (a nonce needs freshness,
        // not secrecy).
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0);
        n.copy_from_slice(&(t ^ (u128::from(std::process::id()) << 64)).to_le_bytes());
    }
    n
}

fn mac(secret: &[u8], label: &[u8], from: u32, to: u32, ni: &Nonce, na: &Nonce) -> Hmac<Sha256> {
    let mut m = Hmac::<Sha256>::new_from_slice(secret).expect("HMAC takes keys of any length");
    m.update(label);
    m.update(&from.to_le_bytes());
    m.update(&to.to_le_bytes());
    m.update(ni);
    m.update(na);
    m
}

/// The initiator's first message.
pub fn hello(from: u32, to: u32, ni: &Nonce) -> [u8; HELLO_BYTES] {
    let mut b = [0u8; HELLO_BYTES];
    b[..8].copy_from_slice(MAGIC);
    b[8..12].copy_from_slice(&from.to_le_bytes());
    b[12..16].copy_from_slice(&to.to_le_bytes());
    b[16..].copy_from_slice(ni);
    b
}

/// Checks a HELLO received by rank `me` of a job of `size`; gives the initiator's rank
/// and nonce.
pub fn parse_hello(b: &[u8; HELLO_BYTES], me: u32, size: u32) -> Result<(u32, Nonce), String> {
    if &b[..8] != MAGIC {
        return Err("not an oxmpi connection (bad greeting)".into());
    }
    let from = u32::from_le_bytes([b[8], b[9], b[10], b[11]]);
    let to = u32::from_le_bytes([b[12], b[13], b[14], b[15]]);
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
    let mut ni = [0u8; 16];
    ni.copy_from_slice(&b[16..]);
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
    let mut b = [0u8; CHALLENGE_BYTES];
    b[..8].copy_from_slice(MAGIC);
    b[8..24].copy_from_slice(na);
    let m = mac(secret, b"oxmpi-tcp-accept", from, to, ni, na)
        .finalize()
        .into_bytes();
    b[24..].copy_from_slice(&m);
    b
}

/// The initiator checks the acceptor's proof; gives the acceptor's nonce.
pub fn verify_challenge(
    secret: &[u8],
    from: u32,
    to: u32,
    ni: &Nonce,
    b: &[u8; CHALLENGE_BYTES],
) -> Result<Nonce, String> {
    if &b[..8] != MAGIC {
        return Err("the peer is not an oxmpi rank (bad greeting)".into());
    }
    let mut na = [0u8; 16];
    na.copy_from_slice(&b[8..24]);
    mac(secret, b"oxmpi-tcp-accept", from, to, ni, &na)
        .verify_slice(&b[24..])
        .map_err(|_| "the peer did not prove the job secret".to_string())?;
    Ok(na)
}

/// The initiator's proof of the secret.
pub fn proof(secret: &[u8], from: u32, to: u32, ni: &Nonce, na: &Nonce) -> [u8; PROOF_BYTES] {
    mac(secret, b"oxmpi-tcp-connect", from, to, ni, na)
        .finalize()
        .into_bytes()
        .into()
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
    mac(secret, b"oxmpi-tcp-connect", from, to, ni, na)
        .verify_slice(b)
        .map_err(|_| "wrong job secret".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_sides_agree() {
        let s = b"secret";
        let ni = nonce();
        let h = hello(3, 1, &ni);
        let (from, ni2) = parse_hello(&h, 1, 4).unwrap();
        assert_eq!((from, ni2), (3, ni));
        let na = nonce();
        let c = challenge(s, 3, 1, &ni, &na);
        assert_eq!(verify_challenge(s, 3, 1, &ni, &c).unwrap(), na);
        let p = proof(s, 3, 1, &ni, &na);
        verify_proof(s, 3, 1, &ni, &na, &p).unwrap();
    }

    #[test]
    fn wrong_secret_or_tampering_fails() {
        let ni = nonce();
        let na = nonce();
        let c = challenge(b"a", 0, 1, &ni, &na);
        assert!(verify_challenge(b"b", 0, 1, &ni, &c).is_err());
        let p = proof(b"a", 0, 1, &ni, &na);
        assert!(verify_proof(b"b", 0, 1, &ni, &na, &p).is_err());
        // The acceptor's MAC is not accepted as an initiator's proof (reflection).
        let mut reflected = [0u8; 32];
        reflected.copy_from_slice(&c[24..]);
        assert!(verify_proof(b"a", 0, 1, &ni, &na, &reflected).is_err());
        // A proof for other nonces or ranks fails.
        assert!(verify_proof(b"a", 0, 1, &ni, &nonce(), &p).is_err());
        assert!(verify_proof(b"a", 2, 1, &ni, &na, &p).is_err());
    }

    #[test]
    fn bad_hellos() {
        let ni = nonce();
        assert!(parse_hello(&hello(0, 2, &ni), 1, 4).is_err());
        assert!(parse_hello(&hello(9, 1, &ni), 1, 4).is_err());
        assert!(parse_hello(&hello(1, 1, &ni), 1, 4).is_err());
        let mut g = hello(0, 1, &ni);
        g[0] = b'X';
        assert!(parse_hello(&g, 1, 4).unwrap_err().contains("not an oxmpi"));
    }
}
