//! Payloads of eager messages that arrived before their receive was posted: small ones
//! are kept inside the stored message itself, larger ones in buffers that are reused
//! from one message to the next.

/// Payloads up to this many bytes are kept inline (no buffer at all).
pub const INLINE_BYTES: usize = 24;
/// Buffers of delivered messages kept for the next ones.
const SPARE_BUFFERS: usize = 64;
/// Largest buffer kept (bytes of capacity).
const SPARE_BUFFER_BYTES: usize = 4096;

/// The payload of one stored eager message.
pub enum Stored {
    Inline { len: u8, bytes: [u8; INLINE_BYTES] },
    Buffer(Vec<u8>),
}

impl Stored {
    pub fn bytes(&self) -> &[u8] {
        match self {
            Stored::Inline { len, bytes } => &bytes[..*len as usize],
            Stored::Buffer(v) => v,
        }
    }
}

/// Makes [`Stored`] payloads, keeping the buffers of delivered ones (a busy exchange
/// stores most of its messages before their receives are posted).
#[derive(Default)]
pub struct PayloadStore {
    spare: Vec<Vec<u8>>,
}

impl PayloadStore {
    /// A stored copy of `payload`.
    #[inline]
    pub fn store(&mut self, payload: &[u8]) -> Stored {
        if payload.len() <= INLINE_BYTES {
            let mut bytes = [0u8; INLINE_BYTES];
            // SAFETY: `bytes` has room for the payload (checked above); they cannot overlap.
            unsafe { super::copy_small(payload.as_ptr(), bytes.as_mut_ptr(), payload.len()) };
            return Stored::Inline {
                len: payload.len() as u8,
                bytes,
            };
        }
        let mut v = self.spare.pop().unwrap_or_default();
        v.clear();
        v.extend_from_slice(payload);
        Stored::Buffer(v)
    }

    /// Takes back the payload of a delivered message (its buffer, if small enough, serves
    /// a later one).
    #[inline]
    pub fn recycle(&mut self, s: Stored) {
        if let Stored::Buffer(v) = s {
            if v.capacity() <= SPARE_BUFFER_BYTES && self.spare.len() < SPARE_BUFFERS {
                self.spare.push(v);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_payloads_stay_inline_and_large_ones_reuse_buffers() {
        let mut p = PayloadStore::default();
        for n in [0, 1, 8, INLINE_BYTES] {
            let data: Vec<u8> = (0..n as u8).collect();
            let s = p.store(&data);
            assert!(matches!(s, Stored::Inline { .. }));
            assert_eq!(s.bytes(), &data[..]);
            p.recycle(s);
        }
        assert!(p.spare.is_empty());
        let big: Vec<u8> = (0..100u8).collect();
        let s = p.store(&big);
        assert_eq!(s.bytes(), &big[..]);
        let Stored::Buffer(v) = &s else {
            panic!("a {}-byte payload is not inline", big.len())
        };
        let at = v.as_ptr();
        p.recycle(s);
        let s2 = p.store(&big[..50]);
        assert_eq!(s2.bytes(), &big[..50]);
        assert!(
            matches!(&s2, Stored::Buffer(v) if v.as_ptr() == at),
            "buffer reused"
        );
    }
}
