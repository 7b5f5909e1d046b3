//! Authentication of a proxy's connection to the head `mpiexec` with the job secret,
//! before any frame is read: [`oxmpi_auth`]'s challenge-response (the same as between
//! ranks) under the proxies' magic and labels, with the proxy id as context.
//!
//! ```text
//! proxy -> head  HELLO      "OXMPI-P1" | proxy id u32 | nonce_p[16]   (28 bytes)
//! head -> proxy  CHALLENGE  "OXMPI-P1" | nonce_h[16] | mac_h[32]      (56 bytes)
//! proxy -> head  PROOF      mac_p[32]                                 (32 bytes)
//! mac_h = HMAC(secret, "oxmpi-head"  | id | nonce_p | nonce_h)
//! mac_p = HMAC(secret, "oxmpi-proxy" | id | nonce_p | nonce_h)
//! ```
//! Both ends run it blocking, under a read timeout set by the caller. Either end fails
//! (and the launch with it) when the system has no random source for its nonce.

use oxmpi_auth::{Error, Scheme};
use std::io::{Read, Write};

/// Proxy to head: the context is the proxy id, little-endian.
const PROXY: Scheme<4> = Scheme::new(*b"OXMPI-P1", b"oxmpi-proxy", b"oxmpi-head");

/// The proxy's side: proves the secret and checks the head's proof.
pub fn proxy_side(s: &mut (impl Read + Write), secret: &[u8], id: u32) -> Result<(), String> {
    PROXY
        .initiate(s, secret, &id.to_le_bytes())
        .map_err(|e| match e {
            Error::BadGreeting => "the head is not an oxmpi mpiexec".to_string(),
            Error::NotProven => "the head did not prove the job secret".to_string(),
            e => e.to_string(),
        })
}

/// The head's side: returns the proxy id once the proxy proved the secret.
pub fn head_side(s: &mut (impl Read + Write), secret: &[u8]) -> Result<u32, String> {
    PROXY
        .accept(s, secret)
        .map(u32::from_le_bytes)
        .map_err(|e| match e {
            Error::BadGreeting => "not an oxmpi proxy (bad greeting)".to_string(),
            Error::NotProven => "wrong job secret".to_string(),
            e => e.to_string(),
        })
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

    fn hex(s: &str) -> Vec<u8> {
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }

    #[test]
    fn wire_format_is_unchanged() {
        // Known answers of the format above, computed independently (Python's hmac).
        let (np, nh): ([u8; 16], [u8; 16]) = (
            std::array::from_fn(|i| i as u8),
            std::array::from_fn(|i| 100 + i as u8),
        );
        let ctx = 9u32.to_le_bytes();
        let mut hello = b"OXMPI-P1".to_vec();
        hello.extend_from_slice(&ctx);
        hello.extend_from_slice(&np);
        assert_eq!(PROXY.hello(&ctx, &np).as_bytes(), &hello[..]);
        let ch = PROXY.challenge(b"s", &ctx, &np, &nh);
        assert_eq!(&ch[..8], b"OXMPI-P1");
        assert_eq!(ch[8..24], nh);
        assert_eq!(
            ch[24..],
            hex("3698ae728972e56cce5d2b17e5f6a94488138416f7ef91bb62d579f50b8ae702")
        );
        assert_eq!(
            PROXY.proof(b"s", &ctx, &np, &nh)[..],
            hex("75fc06a204873ca82962584ce000ef68c12eb08575c006a9b67ef865986dcb19")
        );
    }

    #[test]
    fn a_greeting_from_something_else_is_refused() {
        let (mut x, mut y) = UnixStream::pair().unwrap();
        x.write_all(b"GET / HTTP/1.1\r\nHost: example\r\n\r\n")
            .unwrap();
        let e = head_side(&mut y, b"s").unwrap_err();
        assert!(e.contains("bad greeting"), "{e}");
    }
}
