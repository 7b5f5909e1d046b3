//! Type signatures in constant space: a polynomial hash of the sequence of primitive
//! elements (MPI's "type signature"), composable under concatenation and repetition so
//! that it is computed once per constructor, never by expanding the type map.
//!
//! Two types with the same sequence of primitives have equal signatures whatever
//! their layout (e.g. `contiguous(4, MPI_INT)` and a vector of 2 blocks of 2 ints);
//! different sequences collide with probability about `len / 2^61`.

use crate::Primitive;

const P: u64 = (1 << 61) - 1;
const BASE: u64 = 0x0f2b_7c4d_91e3_a567 % P;

fn mulmod(a: u64, b: u64) -> u64 {
    ((a as u128 * b as u128) % P as u128) as u64
}

fn addmod(a: u64, b: u64) -> u64 {
    (a + b) % P
}

/// The type signature of a sequence of primitive elements.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Signature {
    hash: u64,
    /// `BASE^elements mod P`.
    pow: u64,
    elements: u64,
    bytes: u64,
}

impl Default for Signature {
    fn default() -> Signature {
        Signature::EMPTY
    }
}

impl Signature {
    /// The empty sequence.
    pub const EMPTY: Signature = Signature {
        hash: 0,
        pow: 1,
        elements: 0,
        bytes: 0,
    };

    /// A single primitive element.
    pub fn of(p: Primitive) -> Signature {
        // Distinct non-zero symbols per primitive.
        let symbol = (p as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15) % P;
        Signature {
            hash: symbol.max(1),
            pow: BASE,
            elements: 1,
            bytes: p.size() as u64,
        }
    }

    /// This sequence followed by `other`.
    pub fn then(self, other: Signature) -> Signature {
        Signature {
            hash: addmod(mulmod(self.hash, other.pow), other.hash),
            pow: mulmod(self.pow, other.pow),
            elements: self.elements.saturating_add(other.elements),
            bytes: self.bytes.saturating_add(other.bytes),
        }
    }

    /// This sequence `n` times over (the signature of `n` elements of a type).
    pub fn repeat(self, mut n: u64) -> Signature {
        let mut acc = Signature::EMPTY;
        let mut sq = self;
        while n > 0 {
            if n & 1 == 1 {
                acc = acc.then(sq);
            }
            n >>= 1;
            if n > 0 {
                sq = sq.then(sq);
            }
        }
        acc
    }

    /// Number of primitive elements (saturating).
    pub fn elements(self) -> u64 {
        self.elements
    }

    /// Number of data bytes (saturating).
    pub fn bytes(self) -> u64 {
        self.bytes
    }
}
