//! The TCP wire format of device packets: a 4-byte little-endian payload length, the
//! 40-byte packet header, then the payload.
//!
//! Sans-IO: [`encode_prefix`] builds the bytes before a payload and [`parse_prefix`]
//! validates what a peer sent. Decoding is hostile-input safe: unknown packet kinds,
//! payloads on packets that carry none, lengths that disagree with the header and
//! oversized eager payloads are errors, never panics or unbounded allocations.

use crate::device::packet::{Header, Kind, HEADER_BYTES};
use std::fmt;

/// Bytes before the payload of every frame.
pub const PREFIX_BYTES: usize = 4 + HEADER_BYTES;

/// Largest payload of one frame (the length field is 32 bits; pieces of a streamed
/// message are cut below this).
pub const MAX_FRAME_PAYLOAD: u64 = u32::MAX as u64;

/// Why a frame was rejected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FrameError(pub String);

impl fmt::Display for FrameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// The bytes that precede a payload of `payload_len` bytes.
pub fn encode_prefix(hdr: &[u8; HEADER_BYTES], payload_len: usize) -> [u8; PREFIX_BYTES] {
    debug_assert!(payload_len as u64 <= MAX_FRAME_PAYLOAD);
    let mut b = [0u8; PREFIX_BYTES];
    b[..4].copy_from_slice(&(payload_len as u32).to_le_bytes());
    b[4..].copy_from_slice(hdr);
    b
}

/// Decodes a frame prefix from the front of `b`. `Ok(None)` when fewer than
/// [`PREFIX_BYTES`] bytes are there. `max_eager` bounds the payload of an `Eager`
/// packet (it must be held whole in memory); `Data` payloads go straight to their
/// receive buffer and are only bounded by the length field.
pub fn parse_prefix(b: &[u8], max_eager: usize) -> Result<Option<(Header, usize)>, FrameError> {
    if b.len() < PREFIX_BYTES {
        return Ok(None);
    }
    let plen = u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize;
    let hdr = Header::decode(&b[4..PREFIX_BYTES])
        .ok_or_else(|| FrameError(format!("unknown packet kind {}", b[4])))?;
    match hdr.kind {
        Kind::Eager => {
            if plen as u64 != hdr.len {
                return Err(FrameError(format!(
                    "eager packet of {} bytes carries {plen} bytes",
                    hdr.len
                )));
            }
            if plen > max_eager {
                return Err(FrameError(format!(
                    "eager packet of {plen} bytes exceeds the limit of {max_eager}"
                )));
            }
        }
        Kind::Data => {
            if plen as u64 != hdr.len {
                return Err(FrameError(format!(
                    "data piece of {} bytes carries {plen} bytes",
                    hdr.len
                )));
            }
        }
        k => {
            if plen != 0 {
                return Err(FrameError(format!(
                    "{k:?} packet carries a {plen}-byte payload"
                )));
            }
        }
    }
    Ok(Some((hdr, plen)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn eager(len: u64) -> Header {
        let mut h = Header::new(Kind::Eager);
        h.len = len;
        h.tag = 5;
        h
    }

    #[test]
    fn round_trip() {
        let h = eager(12);
        let p = encode_prefix(&h.encode(), 12);
        assert_eq!(parse_prefix(&p, 100).unwrap(), Some((h, 12)));
        assert_eq!(parse_prefix(&p[..10], 100).unwrap(), None);
    }

    #[test]
    fn hostile_prefixes_are_rejected() {
        // Length disagrees with the header.
        let p = encode_prefix(&eager(12).encode(), 13);
        assert!(parse_prefix(&p, 100).is_err());
        // Eager payload above the limit.
        let p = encode_prefix(&eager(200).encode(), 200);
        assert!(parse_prefix(&p, 100).unwrap_err().0.contains("exceeds"));
        // Control packet with a payload.
        let p = encode_prefix(&Header::new(Kind::Fin).encode(), 1);
        assert!(parse_prefix(&p, 100).is_err());
        // Unknown kind.
        let mut p = encode_prefix(&Header::new(Kind::Fin).encode(), 0);
        p[4] = 99;
        assert!(parse_prefix(&p, 100).unwrap_err().0.contains("unknown"));
        // Data pieces may be large.
        let mut d = Header::new(Kind::Data);
        d.len = 1 << 30;
        let p = encode_prefix(&d.encode(), 1 << 30);
        assert_eq!(parse_prefix(&p, 100).unwrap().unwrap().1, 1 << 30);
    }

    #[test]
    fn random_bytes_never_panic() {
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        for _ in 0..20_000 {
            let mut b = [0u8; PREFIX_BYTES];
            for byte in b.iter_mut() {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                *byte = x as u8;
            }
            b[4] = (x % 10) as u8;
            let _ = parse_prefix(&b, 65536);
        }
    }
}
