//! Binary-safe KVS values: [`encode_value`] turns bytes into a string made only of
//! characters that both PMI wires carry unchanged and unescaped, [`decode_value`] turns it
//! back.
//!
//! Format: the letter `b` followed by the bytes in unpadded base64url
//! (`A-Z a-z 0-9 - _`). The leading letter keeps every encoded value non-empty (some PMI
//! servers reject empty values) and leaves room for other encodings later.

use crate::error::PmiError;

const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
const PREFIX: char = 'b';

/// Encodes arbitrary bytes as a KVS value. The result has `1 + ceil(4 * len / 3)`
/// characters, so up to [`crate::limits::MAX_BINARY_VALUE_LEN`] bytes fit in one value.
pub fn encode_value(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(1 + bytes.len().div_ceil(3) * 4);
    out.push(PREFIX);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        let chars = chunk.len() + 1;
        for i in 0..chars {
            let idx = (n >> (18 - 6 * i)) & 63;
            out.push(char::from(ALPHABET[idx as usize]));
        }
    }
    out
}

fn sextet(c: u8) -> Option<u32> {
    let v = match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'-' => 62,
        b'_' => 63,
        _ => return None,
    };
    Some(u32::from(v))
}

/// Decodes a value produced by [`encode_value`]. Anything else is an
/// [`PmiError::InvalidArgument`] naming the problem.
pub fn decode_value(s: &str) -> Result<Vec<u8>, PmiError> {
    let bad = |why: &str| {
        let shown: String = s.chars().take(40).collect();
        PmiError::InvalidArgument(format!("not an encoded PMI value ({why}): {shown:?}"))
    };
    let body = s
        .strip_prefix(PREFIX)
        .ok_or_else(|| bad("missing the 'b' prefix"))?
        .as_bytes();
    if body.len() % 4 == 1 {
        return Err(bad("impossible length"));
    }
    let mut out = Vec::with_capacity(body.len() * 3 / 4);
    for chunk in body.chunks(4) {
        let mut n = 0u32;
        for (i, &c) in chunk.iter().enumerate() {
            let v = sextet(c).ok_or_else(|| bad("invalid character"))?;
            n |= v << (18 - 6 * i);
        }
        let bytes = [(n >> 16) as u8, (n >> 8) as u8, n as u8];
        let keep = chunk.len() - 1;
        // Unused low bits of a short final chunk must be zero (canonical form).
        let used_bits = chunk.len() * 6;
        let spare = used_bits - keep * 8;
        if spare > 0 && (n >> (24 - used_bits)) & ((1 << spare) - 1) != 0 {
            return Err(bad("non-canonical final character"));
        }
        out.extend_from_slice(&bytes[..keep]);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::limits::{MAX_BINARY_VALUE_LEN, MAX_VALUE_LEN};
    use proptest::prelude::*;

    #[test]
    fn known_vectors() {
        assert_eq!(encode_value(b""), "b");
        assert_eq!(encode_value(b"f"), "bZg");
        assert_eq!(encode_value(b"fo"), "bZm8");
        assert_eq!(encode_value(b"foo"), "bZm9v");
        assert_eq!(encode_value(&[0xfb, 0xff]), "b-_8");
        assert_eq!(decode_value("bZm9vYg").unwrap(), b"foob");
    }

    #[test]
    fn capacity() {
        assert!(encode_value(&[0xab; MAX_BINARY_VALUE_LEN]).len() <= MAX_VALUE_LEN);
        assert!(encode_value(&[0xab; MAX_BINARY_VALUE_LEN + 1]).len() > MAX_VALUE_LEN);
    }

    #[test]
    fn rejects() {
        assert!(decode_value("").is_err());
        assert!(decode_value("Zm9v").is_err());
        assert!(decode_value("bZ").is_err());
        assert!(decode_value("bZm9v=").is_err());
        assert!(decode_value("bZh").is_err()); // non-canonical
    }

    proptest! {
        #[test]
        fn round_trip(bytes in proptest::collection::vec(any::<u8>(), 0..800)) {
            let s = encode_value(&bytes);
            prop_assert!(s.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'-' || c == b'_'));
            prop_assert_eq!(decode_value(&s).unwrap(), bytes);
        }

        #[test]
        fn decode_never_panics(s in "\\PC{0,64}") {
            let _ = decode_value(&s);
        }
    }
}
