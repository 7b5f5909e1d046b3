//! The device's packet header: what one rank tells another about a message or a
//! protocol step. Encoded explicitly little-endian so the same bytes cross any transport.

/// Kinds of packets exchanged by the device's protocols.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Kind {
    /// A whole message inline (flag SYNC: the receiver acknowledges the match).
    Eager = 1,
    /// Rendezvous request: a large message waits at the sender (`addr`, `len`).
    Rts = 2,
    /// The match of a synchronous eager message (`sreq`).
    SyncAck = 3,
    /// The receiver has pulled a rendezvous message itself; the sender may complete (`sreq`).
    Fin = 4,
    /// Clear to send: the receiver asks the sender to stream `len` bytes to `rreq`.
    Cts = 5,
    /// A piece of a streamed rendezvous message at offset `addr` for `rreq`.
    Data = 6,
    /// The sender asks to cancel its unmatched message `sreq`.
    CancelReq = 7,
    /// Answer to a cancel request (flag CANCELLED when it succeeded).
    CancelResp = 8,
}

impl Kind {
    fn from_u8(v: u8) -> Option<Kind> {
        Some(match v {
            1 => Kind::Eager,
            2 => Kind::Rts,
            3 => Kind::SyncAck,
            4 => Kind::Fin,
            5 => Kind::Cts,
            6 => Kind::Data,
            7 => Kind::CancelReq,
            8 => Kind::CancelResp,
            _ => return None,
        })
    }
}

/// Flag: the sender wants a [`Kind::SyncAck`] when the message is matched.
pub const FLAG_SYNC: u8 = 1;
/// Flag on [`Kind::CancelResp`]: the message was removed before it matched.
pub const FLAG_CANCELLED: u8 = 2;
/// Local mark on a stored unexpected message (never sent): the application has seen it
/// through `MPI_Probe`/`MPI_Iprobe`, so its sender may no longer cancel it (a receive
/// that follows the probe must get the probed message).
pub const FLAG_PROBED: u8 = 4;

/// Flag on [`Kind::Rts`]: the sender's buffer is not one contiguous range (`addr` means
/// nothing), so the receiver cannot pull it and answers [`Kind::Cts`] for a stream of
/// packed pieces.
pub const FLAG_NONCONTIG: u8 = 8;

/// Flag on a non-contiguous [`Kind::Rts`]: `addr` is the address, in the sender's
/// memory, of the list of its buffer's pieces (`rreq` entries of the form
/// [`super::pieces::Entry`], native-endian: both ends run on one node), so a receiver
/// allowed to read the sender's memory copies the message itself; others answer
/// [`Kind::Cts`].
pub const FLAG_IOVLIST: u8 = 16;

/// Size of an encoded header in bytes.
pub const HEADER_BYTES: usize = 40;

/// A decoded packet header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    pub kind: Kind,
    pub flags: u8,
    /// Sender's rank in the communicator (what `MPI_SOURCE` reports).
    pub src_rank: i32,
    /// Context id of the communicator (p2p or collective).
    pub ctx: u32,
    pub tag: i32,
    /// Message length in bytes (Eager, Rts, Cts: bytes wanted).
    pub len: u64,
    /// Sender's request id.
    pub sreq: u32,
    /// Receiver's request id.
    pub rreq: u32,
    /// Rts: sender buffer address; Data: byte offset of the piece.
    pub addr: u64,
}

impl Header {
    /// A header of `kind` with every other field zero.
    pub fn new(kind: Kind) -> Header {
        Header {
            kind,
            flags: 0,
            src_rank: 0,
            ctx: 0,
            tag: 0,
            len: 0,
            sreq: 0,
            rreq: 0,
            addr: 0,
        }
    }

    pub fn encode(&self) -> [u8; HEADER_BYTES] {
        let mut b = [0u8; HEADER_BYTES];
        b[0] = self.kind as u8;
        b[1] = self.flags;
        b[4..8].copy_from_slice(&self.src_rank.to_le_bytes());
        b[8..12].copy_from_slice(&self.ctx.to_le_bytes());
        b[12..16].copy_from_slice(&self.tag.to_le_bytes());
        b[16..24].copy_from_slice(&self.len.to_le_bytes());
        b[24..28].copy_from_slice(&self.sreq.to_le_bytes());
        b[28..32].copy_from_slice(&self.rreq.to_le_bytes());
        b[32..40].copy_from_slice(&self.addr.to_le_bytes());
        b
    }

    /// Decodes a header from the front of `b`; None for short or unknown input.
    pub fn decode(b: &[u8]) -> Option<Header> {
        if b.len() < HEADER_BYTES {
            return None;
        }
        let u32_at = |i: usize| u32::from_le_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
        let u64_at = |i: usize| {
            let mut w = [0u8; 8];
            w.copy_from_slice(&b[i..i + 8]);
            u64::from_le_bytes(w)
        };
        Some(Header {
            kind: Kind::from_u8(b[0])?,
            flags: b[1],
            src_rank: u32_at(4) as i32,
            ctx: u32_at(8),
            tag: u32_at(12) as i32,
            len: u64_at(16),
            sreq: u32_at(24),
            rreq: u32_at(28),
            addr: u64_at(32),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_garbage() {
        let h = Header {
            kind: Kind::Rts,
            flags: FLAG_SYNC,
            src_rank: -7,
            ctx: 9,
            tag: 123456,
            len: 5 << 33,
            sreq: 77,
            rreq: 88,
            addr: 0xdead_beef_0000,
        };
        assert_eq!(Header::decode(&h.encode()), Some(h));
        assert_eq!(Header::decode(&[0u8; 10]), None);
        assert_eq!(Header::decode(&[200u8; 40]), None);
    }
}
