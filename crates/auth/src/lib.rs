//! The job-secret challenge-response that authenticates every TCP connection of an oxmpi
//! job before anything else is read from it: a proxy's connection to the head `mpiexec`,
//! and a connection between two ranks. One implementation serves both, so both fail closed
//! in the same way.
//!
//! ```text
//! initiator -> acceptor  HELLO      magic[8] | context[C] | nonce_i[16]    (24 + C bytes)
//! acceptor -> initiator  CHALLENGE  magic[8] | nonce_a[16] | mac_a[32]     (56 bytes)
//! initiator -> acceptor  PROOF      mac_i[32]                              (32 bytes)
//!
//! mac_a = HMAC-SHA256(secret, acceptor_label  | context | nonce_i | nonce_a)
//! mac_i = HMAC-SHA256(secret, initiator_label | context | nonce_i | nonce_a)
//! ```
//!
//! A [`Scheme`] fixes the magic, the two role labels and the length of the context (who
//! talks to whom: a proxy id, or the two ranks) of one use. Each side proves the secret over
//! both fresh nonces under its own role's label, so no message can be replayed or reflected.
//!
//! Failing closed: a nonce comes from the operating system's random source, and when that
//! fails the handshake fails ([`Error::NoRandomness`]) instead of going on with a
//! predictable nonce. Proofs are compared in constant time. The decoders take any bytes and
//! never panic: a message of the wrong length or with the wrong magic is an error.
//!
//! The message functions are sans-IO, for event-driven callers (the TCP transport);
//! [`Scheme::initiate`] and [`Scheme::accept`] drive the exchange over a blocking stream
//! (the launcher).

use hmac::digest::KeyInit;
use hmac::{Hmac, Mac};
use sha2::Sha256;
use std::fmt;
use std::io::{Read, Write};

/// Bytes of a scheme's magic.
pub const MAGIC_LEN: usize = 8;
/// Bytes of a nonce.
pub const NONCE_LEN: usize = 16;
/// Bytes of an HMAC-SHA256 proof.
pub const MAC_LEN: usize = 32;
/// Bytes of a CHALLENGE.
pub const CHALLENGE_LEN: usize = MAGIC_LEN + NONCE_LEN + MAC_LEN;
/// Bytes of a PROOF.
pub const PROOF_LEN: usize = MAC_LEN;
/// The longest context a scheme may carry.
pub const MAX_CONTEXT: usize = 16;
const MAX_HELLO: usize = MAGIC_LEN + MAX_CONTEXT + NONCE_LEN;

/// A random nonce.
pub type Nonce = [u8; NONCE_LEN];

/// Why a handshake failed.
#[derive(Debug)]
pub enum Error {
    /// The operating system's random source failed: there is no fresh nonce or secret, so
    /// there is no handshake.
    NoRandomness(getrandom::Error),
    /// The peer's message does not start with the scheme's magic: not an oxmpi peer, or
    /// one of another version.
    BadGreeting,
    /// A message of the wrong length.
    BadLength {
        /// Which message.
        what: &'static str,
        /// Bytes received.
        got: usize,
        /// Bytes the scheme prescribes.
        want: usize,
    },
    /// The peer's proof does not verify: it does not know the job secret (or the message
    /// was tampered with, or belongs to another exchange).
    NotProven,
    /// The stream failed under a blocking driver.
    Io(std::io::Error),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::NoRandomness(e) => {
                write!(f, "the system's random source failed ({e})")
            }
            Error::BadGreeting => f.write_str("bad greeting"),
            Error::BadLength { what, got, want } => {
                write!(f, "{what} of {got} bytes where {want} are expected")
            }
            Error::NotProven => f.write_str("the peer did not prove the job secret"),
            Error::Io(e) => match e.kind() {
                std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut => {
                    f.write_str("no answer in time")
                }
                std::io::ErrorKind::UnexpectedEof => {
                    f.write_str("connection closed during authentication")
                }
                _ => write!(f, "{e}"),
            },
        }
    }
}

impl std::error::Error for Error {}

impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Self {
        Error::Io(e)
    }
}

/// Fills `buf` from the operating system's random source, or fails.
pub fn random(buf: &mut [u8]) -> Result<(), Error> {
    getrandom::getrandom(buf).map_err(Error::NoRandomness)
}

/// Draws a fresh nonce; an error when the random source fails (never a weak nonce).
pub fn nonce() -> Result<Nonce, Error> {
    nonce_from(getrandom::getrandom)
}

/// A nonce from `fill`, which fills its buffer or fails.
fn nonce_from(
    fill: impl FnOnce(&mut [u8]) -> Result<(), getrandom::Error>,
) -> Result<Nonce, Error> {
    let mut n = [0u8; NONCE_LEN];
    fill(&mut n).map_err(Error::NoRandomness)?;
    Ok(n)
}

/// `bytes` random bytes in lower-case hex (a job secret or a unique name); an error when the
/// random source fails.
pub fn random_hex(bytes: usize) -> Result<String, Error> {
    let mut b = vec![0u8; bytes];
    random(&mut b)?;
    Ok(b.iter().map(|x| format!("{x:02x}")).collect())
}

/// A HELLO, ready to send.
#[derive(Clone, Copy)]
pub struct Hello {
    buf: [u8; MAX_HELLO],
    len: usize,
}

impl Hello {
    /// The message's bytes.
    pub fn as_bytes(&self) -> &[u8] {
        &self.buf[..self.len]
    }
}

/// One use of the challenge-response: its magic, role labels and context of `C` bytes.
#[derive(Clone, Copy, Debug)]
pub struct Scheme<const C: usize> {
    magic: [u8; MAGIC_LEN],
    initiator: &'static [u8],
    acceptor: &'static [u8],
}

impl<const C: usize> Scheme<C> {
    /// Bytes of this scheme's HELLO.
    pub const HELLO_LEN: usize = MAGIC_LEN + C + NONCE_LEN;
    // Evaluated by `new`, so a scheme with too long a context does not compile.
    const CONTEXT_FITS: () = assert!(C <= MAX_CONTEXT, "context too long for a HELLO");

    /// A scheme. The labels of the two roles must differ (that is what stops reflection).
    pub const fn new(
        magic: [u8; MAGIC_LEN],
        initiator: &'static [u8],
        acceptor: &'static [u8],
    ) -> Self {
        #[allow(clippy::let_unit_value)]
        let () = Self::CONTEXT_FITS;
        Scheme {
            magic,
            initiator,
            acceptor,
        }
    }

    fn mac(
        &self,
        secret: &[u8],
        label: &[u8],
        ctx: &[u8; C],
        ni: &Nonce,
        na: &Nonce,
    ) -> Hmac<Sha256> {
        // HMAC accepts a key of any length, so this never takes the error arm; mapping it
        // to the empty key keeps the code panic-free (a proof under it would not verify).
        let mut m = <Hmac<Sha256> as KeyInit>::new_from_slice(secret)
            .unwrap_or_else(|_| <Hmac<Sha256> as KeyInit>::new(&Default::default()));
        m.update(label);
        m.update(ctx);
        m.update(ni);
        m.update(na);
        m
    }

    /// The initiator's first message.
    pub fn hello(&self, ctx: &[u8; C], ni: &Nonce) -> Hello {
        let mut buf = [0u8; MAX_HELLO];
        let (magic, rest) = buf.split_at_mut(MAGIC_LEN);
        magic.copy_from_slice(&self.magic);
        let (c, rest) = rest.split_at_mut(C);
        c.copy_from_slice(ctx);
        rest[..NONCE_LEN].copy_from_slice(ni);
        Hello {
            buf,
            len: Self::HELLO_LEN,
        }
    }

    /// Decodes a HELLO from a peer: its context (for the caller to check) and nonce.
    pub fn parse_hello(&self, msg: &[u8]) -> Result<([u8; C], Nonce), Error> {
        let bad = || bad_length("greeting", msg, Self::HELLO_LEN);
        if msg.len() != Self::HELLO_LEN {
            return Err(bad());
        }
        let mut r = msg;
        let (Some(magic), Some(ctx), Some(ni)) = (
            take::<MAGIC_LEN>(&mut r),
            take::<C>(&mut r),
            take::<NONCE_LEN>(&mut r),
        ) else {
            return Err(bad());
        };
        if magic != self.magic {
            return Err(Error::BadGreeting);
        }
        Ok((ctx, ni))
    }

    /// The acceptor's answer: its nonce and its proof of the secret.
    pub fn challenge(
        &self,
        secret: &[u8],
        ctx: &[u8; C],
        ni: &Nonce,
        na: &Nonce,
    ) -> [u8; CHALLENGE_LEN] {
        let mut b = [0u8; CHALLENGE_LEN];
        let (magic, rest) = b.split_at_mut(MAGIC_LEN);
        magic.copy_from_slice(&self.magic);
        let (n, m) = rest.split_at_mut(NONCE_LEN);
        n.copy_from_slice(na);
        m.copy_from_slice(
            &self
                .mac(secret, self.acceptor, ctx, ni, na)
                .finalize()
                .into_bytes(),
        );
        b
    }

    /// The initiator checks the acceptor's CHALLENGE; gives the acceptor's nonce.
    pub fn verify_challenge(
        &self,
        secret: &[u8],
        ctx: &[u8; C],
        ni: &Nonce,
        msg: &[u8],
    ) -> Result<Nonce, Error> {
        let bad = || bad_length("challenge", msg, CHALLENGE_LEN);
        if msg.len() != CHALLENGE_LEN {
            return Err(bad());
        }
        let mut r = msg;
        let (Some(magic), Some(na), Some(mac)) = (
            take::<MAGIC_LEN>(&mut r),
            take::<NONCE_LEN>(&mut r),
            take::<MAC_LEN>(&mut r),
        ) else {
            return Err(bad());
        };
        if magic != self.magic {
            return Err(Error::BadGreeting);
        }
        self.mac(secret, self.acceptor, ctx, ni, &na)
            .verify_slice(&mac)
            .map_err(|_| Error::NotProven)?;
        Ok(na)
    }

    /// The initiator's PROOF of the secret.
    pub fn proof(&self, secret: &[u8], ctx: &[u8; C], ni: &Nonce, na: &Nonce) -> [u8; PROOF_LEN] {
        self.mac(secret, self.initiator, ctx, ni, na)
            .finalize()
            .into_bytes()
            .into()
    }

    /// The acceptor checks the initiator's PROOF (in constant time).
    pub fn verify_proof(
        &self,
        secret: &[u8],
        ctx: &[u8; C],
        ni: &Nonce,
        na: &Nonce,
        msg: &[u8],
    ) -> Result<(), Error> {
        if msg.len() != PROOF_LEN {
            return Err(bad_length("proof", msg, PROOF_LEN));
        }
        self.mac(secret, self.initiator, ctx, ni, na)
            .verify_slice(msg)
            .map_err(|_| Error::NotProven)
    }

    /// The initiator's side over a blocking stream: proves the secret for `ctx` and checks
    /// the acceptor's proof. The caller sets the stream's timeouts.
    pub fn initiate(
        &self,
        s: &mut (impl Read + Write),
        secret: &[u8],
        ctx: &[u8; C],
    ) -> Result<(), Error> {
        let ni = nonce()?;
        s.write_all(self.hello(ctx, &ni).as_bytes())?;
        let mut ch = [0u8; CHALLENGE_LEN];
        s.read_exact(&mut ch)?;
        let na = self.verify_challenge(secret, ctx, &ni, &ch)?;
        s.write_all(&self.proof(secret, ctx, &ni, &na))?;
        Ok(())
    }

    /// The acceptor's side over a blocking stream: gives the initiator's context once it
    /// proved the secret. The caller sets the stream's timeouts.
    pub fn accept(&self, s: &mut (impl Read + Write), secret: &[u8]) -> Result<[u8; C], Error> {
        let mut buf = [0u8; MAX_HELLO];
        let hello = buf.get_mut(..Self::HELLO_LEN).ok_or(Error::BadLength {
            what: "greeting",
            got: MAX_HELLO,
            want: Self::HELLO_LEN,
        })?;
        s.read_exact(hello)?;
        let (ctx, ni) = self.parse_hello(hello)?;
        let na = nonce()?;
        s.write_all(&self.challenge(secret, &ctx, &ni, &na))?;
        let mut p = [0u8; PROOF_LEN];
        s.read_exact(&mut p)?;
        self.verify_proof(secret, &ctx, &ni, &na, &p)?;
        Ok(ctx)
    }
}

fn bad_length(what: &'static str, msg: &[u8], want: usize) -> Error {
    Error::BadLength {
        what,
        got: msg.len(),
        want,
    }
}

/// Takes the next `N` bytes off the front of `r`; None when there are fewer. Never panics.
fn take<const N: usize>(r: &mut &[u8]) -> Option<[u8; N]> {
    let (a, rest) = r.split_at_checked(N)?;
    *r = rest;
    a.try_into().ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::net::UnixStream;

    const S: Scheme<8> = Scheme::new(*b"OXMPI-X1", b"test-initiator", b"test-acceptor");
    const CTX: [u8; 8] = [1, 0, 0, 0, 2, 0, 0, 0];

    #[test]
    fn both_sides_agree() {
        let ni = nonce().unwrap();
        let h = S.hello(&CTX, &ni);
        assert_eq!(h.as_bytes().len(), Scheme::<8>::HELLO_LEN);
        assert_eq!(&h.as_bytes()[..8], b"OXMPI-X1");
        assert_eq!(S.parse_hello(h.as_bytes()).unwrap(), (CTX, ni));
        let na = nonce().unwrap();
        let c = S.challenge(b"secret", &CTX, &ni, &na);
        assert_eq!(S.verify_challenge(b"secret", &CTX, &ni, &c).unwrap(), na);
        let p = S.proof(b"secret", &CTX, &ni, &na);
        S.verify_proof(b"secret", &CTX, &ni, &na, &p).unwrap();
    }

    #[test]
    fn wrong_secret_is_refused() {
        let (ni, na) = (nonce().unwrap(), nonce().unwrap());
        let c = S.challenge(b"a", &CTX, &ni, &na);
        assert!(matches!(
            S.verify_challenge(b"b", &CTX, &ni, &c),
            Err(Error::NotProven)
        ));
        let p = S.proof(b"a", &CTX, &ni, &na);
        assert!(matches!(
            S.verify_proof(b"b", &CTX, &ni, &na, &p),
            Err(Error::NotProven)
        ));
        // An empty secret is a secret like any other: it does not match a real one.
        assert!(S.verify_proof(b"", &CTX, &ni, &na, &p).is_err());
    }

    #[test]
    fn tampered_or_misdirected_messages_are_refused() {
        let (ni, na) = (nonce().unwrap(), nonce().unwrap());
        let c = S.challenge(b"k", &CTX, &ni, &na);
        let p = S.proof(b"k", &CTX, &ni, &na);
        for i in 0..CHALLENGE_LEN {
            let mut t = c;
            t[i] ^= 0x01;
            assert!(S.verify_challenge(b"k", &CTX, &ni, &t).is_err(), "byte {i}");
        }
        for i in 0..PROOF_LEN {
            let mut t = p;
            t[i] ^= 0x80;
            assert!(
                S.verify_proof(b"k", &CTX, &ni, &na, &t).is_err(),
                "byte {i}"
            );
        }
        // The acceptor's MAC is not an initiator's proof (reflection).
        assert!(S.verify_proof(b"k", &CTX, &ni, &na, &c[24..]).is_err());
        // Other nonces or another context do not verify.
        let other = nonce().unwrap();
        assert!(S.verify_proof(b"k", &CTX, &ni, &other, &p).is_err());
        assert!(S.verify_proof(b"k", &CTX, &other, &na, &p).is_err());
        assert!(S.verify_proof(b"k", &[9; 8], &ni, &na, &p).is_err());
        // A scheme with other labels does not accept this one's proofs.
        let s2: Scheme<8> = Scheme::new(*b"OXMPI-X1", b"other-initiator", b"test-acceptor");
        assert!(s2.verify_proof(b"k", &CTX, &ni, &na, &p).is_err());
        // A bad magic is a bad greeting.
        let mut t = c;
        t[0] = b'X';
        assert!(matches!(
            S.verify_challenge(b"k", &CTX, &ni, &t),
            Err(Error::BadGreeting)
        ));
        let mut h = S.hello(&CTX, &ni).as_bytes().to_vec();
        h[7] = b'9';
        assert!(matches!(S.parse_hello(&h), Err(Error::BadGreeting)));
    }

    #[test]
    fn short_or_long_messages_are_refused() {
        let (ni, na) = (nonce().unwrap(), nonce().unwrap());
        let h = S.hello(&CTX, &ni);
        let c = S.challenge(b"k", &CTX, &ni, &na);
        let p = S.proof(b"k", &CTX, &ni, &na);
        for n in 0..h.as_bytes().len() {
            assert!(matches!(
                S.parse_hello(&h.as_bytes()[..n]),
                Err(Error::BadLength { got, want: 32, .. }) if got == n
            ));
        }
        let mut long = h.as_bytes().to_vec();
        long.push(0);
        assert!(S.parse_hello(&long).is_err());
        for n in 0..CHALLENGE_LEN {
            assert!(matches!(
                S.verify_challenge(b"k", &CTX, &ni, &c[..n]),
                Err(Error::BadLength { .. })
            ));
        }
        for n in 0..PROOF_LEN {
            assert!(matches!(
                S.verify_proof(b"k", &CTX, &ni, &na, &p[..n]),
                Err(Error::BadLength { .. })
            ));
        }
        let mut long = p.to_vec();
        long.push(0);
        assert!(S.verify_proof(b"k", &CTX, &ni, &na, &long).is_err());
    }

    #[test]
    fn nonces_differ() {
        let mut seen: Vec<Nonce> = (0..64).map(|_| nonce().unwrap()).collect();
        assert!(seen.iter().all(|n| *n != [0; NONCE_LEN]));
        seen.sort();
        seen.dedup();
        assert_eq!(seen.len(), 64);
        let a = random_hex(16).unwrap();
        assert_eq!(a.len(), 32);
        assert!(a.bytes().all(|b| b.is_ascii_hexdigit()));
        assert_ne!(a, random_hex(16).unwrap());
    }

    #[test]
    fn no_random_source_is_an_error_not_a_weak_nonce() {
        let e = nonce_from(|_| Err(getrandom::Error::UNSUPPORTED)).unwrap_err();
        assert!(matches!(e, Error::NoRandomness(_)));
        assert!(e.to_string().contains("random source failed"), "{e}");
    }

    #[test]
    fn hostile_bytes_never_panic_and_never_verify() {
        let (ni, na) = (nonce().unwrap(), nonce().unwrap());
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for _ in 0..20_000 {
            let len = (next() % 80) as usize;
            let mut msg: Vec<u8> = (0..len).map(|_| next() as u8).collect();
            // Half of them with the right magic, to get past the first check.
            if next() % 2 == 0 && len >= 8 {
                msg[..8].copy_from_slice(b"OXMPI-X1");
            }
            let _ = S.parse_hello(&msg);
            assert!(S.verify_challenge(b"k", &CTX, &ni, &msg).is_err());
            assert!(S.verify_proof(b"k", &CTX, &ni, &na, &msg).is_err());
        }
    }

    #[test]
    fn blocking_drivers_agree_and_refuse() {
        const P: Scheme<4> = Scheme::new(*b"OXMPI-Y1", b"y-initiator", b"y-acceptor");
        for (a, b, ok) in [(b"k1", b"k1", true), (b"k1", b"k2", false)] {
            let (mut x, mut y) = UnixStream::pair().unwrap();
            let t = std::thread::spawn(move || P.accept(&mut y, a));
            let i = P.initiate(&mut x, b, &7u32.to_le_bytes());
            drop(x);
            let r = t.join().unwrap();
            if ok {
                assert_eq!(r.unwrap(), 7u32.to_le_bytes());
                i.unwrap();
            } else {
                assert!(matches!(i, Err(Error::NotProven)));
                assert!(r.is_err());
            }
        }
        // A peer that hangs up mid-greeting is refused, not waited for or panicked on.
        let (mut x, mut y) = UnixStream::pair().unwrap();
        x.write_all(b"OXMPI-Y1\x07").unwrap();
        drop(x);
        let e = P.accept(&mut y, b"k").unwrap_err();
        assert!(
            e.to_string().contains("closed during authentication"),
            "{e}"
        );
    }
}
