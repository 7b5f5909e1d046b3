//! Authentication of a proxy's connection to the head `mpiexec` with the job secret:
//! HMAC-SHA256 challenge/response both ways over fresh nonces, before any frame is read.
//!
//! ```text
//! proxy -> head  HELLO      "OXMPI-P1" | proxy id u32 | nonce_p[16]   (28 bytes)
//! head -> proxy  CHALLENGE  "OXMPI-P1" | nonce_h[16] | mac_h[32]      (56 bytes)
//! proxy -> head  PROOF      mac_p[32]                                 (32 bytes)
//! mac_h = HMAC(secret, "oxmpi-head"  | id | nonce_p | nonce_h)
//! mac_p = HMAC(secret, "oxmpi-proxy" | id | nonce_p | nonce_h)
//! ```
//! Both ends run it blocking, under a read timeout set by the caller.

use hmac::{Hmac, Mac};
use sha2::Sha256;
use std::io::{Read, Write};

const MAGIC: &[u8; 8] = b"OXMPI-P1";

fn nonce() -> [u8; 16] {
    let mut n = [0u8; 16];
    let _ = getrandom::getrandom(&mut n);
    n
}

fn mac(secret: &[u8], label: &[u8], id: u32, np: &[u8], nh: &[u8]) -> Hmac<Sha256> {
    let mut m = Hmac::<Sha256>::new_from_slice(secret).expect("HMAC takes keys of any length");
    m.update(label);
    m.update(&id.to_le_bytes());
    m.update(np);
    m.update(nh);
    m
}

fn io_err(e: std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut => {
            "no answer in time".to_string()
        }
        std::io::ErrorKind::UnexpectedEof => "connection closed during authentication".into(),
        _ => e.to_string(),
    }
}

/// The proxy's side: proves the secret and checks the head's proof.
pub fn proxy_side(s: &mut (impl Read + Write), secret: &[u8], id: u32) -> Result<(), String> {
    let np = nonce();
    let mut hello = Vec::with_capacity(28);
    hello.extend_from_slice(MAGIC);
    hello.extend_from_slice(&id.to_le_bytes());
    hello.extend_from_slice(&np);
    s.write_all(&hello).map_err(io_err)?;
    let mut ch = [0u8; 56];
    s.read_exact(&mut ch).map_err(io_err)?;
    if &ch[..8] != MAGIC {
        return Err("the head is not an oxmpi mpiexec".into());
    }
    let nh = &ch[8..24];
    mac(secret, b"oxmpi-head", id, &np, nh)
        .verify_slice(&ch[24..])
        .map_err(|_| "the head did not prove the job secret".to_string())?;
    let p = mac(secret, b"oxmpi-proxy", id, &np, nh)
        .finalize()
        .into_bytes();
    s.write_all(&p).map_err(io_err)?;
    Ok(())
}

/// The head's side: returns the proxy id once the proxy proved the secret.
pub fn head_side(s: &mut (impl Read + Write), secret: &[u8]) -> Result<u32, String> {
    let mut hello = [0u8; 28];
    s.read_exact(&mut hello).map_err(io_err)?;
    if &hello[..8] != MAGIC {
        return Err("not an oxmpi proxy (bad greeting)".into());
    }
    let id = u32::from_le_bytes([hello[8], hello[9], hello[10], hello[11]]);
    let np = &hello[12..28];
    let nh = nonce();
    let mut ch = Vec::with_capacity(56);
    ch.extend_from_slice(MAGIC);
    ch.extend_from_slice(&nh);
    ch.extend_from_slice(
        &mac(secret, b"oxmpi-head", id, np, &nh)
            .finalize()
            .into_bytes(),
    );
    s.write_all(&ch).map_err(io_err)?;
    let mut p = [0u8; 32];
    s.read_exact(&mut p).map_err(io_err)?;
    mac(secret, b"oxmpi-proxy", id, np, &nh)
        .verify_slice(&p)
        .map_err(|_| "wrong job secret".to_string())?;
    Ok(id)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::net::UnixStream;

    #[test]
    fn agree_and_refuse() {
        for (a, b, ok) in [(b"k1", b"k1", true), (b"k1", b"k2", false)] {
            let (mut x, mut y) = UnixStream::pair().unwrap();
            let t = std::thread::spawn(move || head_side(&mut y, a));
            let p = proxy_side(&mut x, b, 7);
            drop(x);
            let h = t.join().unwrap();
            if ok {
                assert_eq!(h, Ok(7));
                assert!(p.is_ok());
            } else {
                assert!(p.unwrap_err().contains("did not prove"));
                assert!(h.is_err());
            }
        }
    }
}
