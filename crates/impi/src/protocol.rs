//! The packet-level rules of chapter 3 that do not depend on how a host is built: how a
//! message is cut into packets and which packet types carry it (3.7.1, 3.7.2), and the
//! flow control of a process pair (3.6). The data path drives these; they do no I/O.

use crate::packet::PacketType;
use crate::wire::ProtocolError;

/// How a message of `msglen` bytes travels, for a negotiated maximum data length.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MessagePlan {
    pub msglen: u64,
    pub maxdatalen: u32,
    /// The sender asked for synchronous mode (`MPI_Ssend`, `MPI_Issend`).
    pub sync: bool,
}

impl MessagePlan {
    pub fn new(msglen: u64, maxdatalen: u32, sync: bool) -> MessagePlan {
        assert!(maxdatalen >= 1, "IMPI_Pk_maxdatalen is at least 1");
        MessagePlan {
            msglen,
            maxdatalen,
            sync,
        }
    }

    /// A long message needs more than one packet (3.7: "a message with length of up to
    /// IMPI_Pk_maxdatalen bytes is categorized as a short message").
    pub fn is_long(&self) -> bool {
        self.msglen > u64::from(self.maxdatalen)
    }

    /// Number of data packets (a zero-length message still takes one).
    pub fn packets(&self) -> u64 {
        self.msglen.div_ceil(u64::from(self.maxdatalen)).max(1)
    }

    /// Offset and length of packet `i`.
    pub fn packet(&self, i: u64) -> (u64, u32) {
        let off = i * u64::from(self.maxdatalen);
        let len = (self.msglen - off.min(self.msglen)).min(u64::from(self.maxdatalen));
        (off, len as u32)
    }

    /// The type of packet `i`: a long message's first packet is `DATASYNC` whatever the
    /// mode, and the rest `DATA`; a short message is `DATASYNC` only in synchronous mode.
    pub fn packet_type(&self, i: u64) -> PacketType {
        if i == 0 && (self.sync || self.is_long()) {
            PacketType::DataSync
        } else {
            PacketType::Data
        }
    }

    /// Whether the sender must wait for the synchronization ACK before the packets after
    /// the first (long messages) or before completing (synchronous short messages).
    pub fn needs_syncack(&self) -> bool {
        self.sync || self.is_long()
    }
}

/// Sender half of a process pair's flow control: at most `hiwater` packets not yet
/// covered by a protocol ACK; each ACK covers `ackmark` packets.
#[derive(Debug, Clone)]
pub struct SendWindow {
    ackmark: u32,
    hiwater: u32,
    outstanding: u32,
}

impl SendWindow {
    pub fn new(ackmark: u32, hiwater: u32) -> SendWindow {
        assert!(
            1 <= ackmark && ackmark <= hiwater,
            "1 <= ackmark <= hiwater (spec 3.9)"
        );
        SendWindow {
            ackmark,
            hiwater,
            outstanding: 0,
        }
    }

    /// Whether one more packet may go now.
    pub fn can_send(&self) -> bool {
        self.outstanding < self.hiwater
    }

    /// How many packets may go now.
    pub fn room(&self) -> u32 {
        self.hiwater - self.outstanding
    }

    /// Counts a data packet sent (acknowledgments, cancels and FINI do not count).
    pub fn sent(&mut self) {
        debug_assert!(self.can_send());
        self.outstanding += 1;
    }

    /// A protocol ACK arrived.
    pub fn acked(&mut self) -> Result<(), ProtocolError> {
        if self.outstanding < self.ackmark {
            return Err(ProtocolError::new(format!(
                "IMPI_PK_PROTOACK with {} packets outstanding (an ACK covers {})",
                self.outstanding, self.ackmark
            )));
        }
        self.outstanding -= self.ackmark;
        Ok(())
    }

    pub fn outstanding(&self) -> u32 {
        self.outstanding
    }
}

/// Receiver half. 3.6 counts packets "received by the destination process" for ACKs and
/// bounds "unreceived packets" by hiwater: a packet that has arrived waits in the host's
/// buffer until the destination process takes it (matches it, or it is destroyed), and
/// every `ackmark` packets taken send one protocol ACK back. Packets arrived and not yet
/// covered by an ACK can never exceed hiwater when the sender keeps to its window, so
/// more is a sender ignoring flow control.
#[derive(Debug, Clone)]
pub struct RecvWindow {
    ackmark: u32,
    hiwater: u32,
    /// Arrived, not yet taken by the destination process.
    buffered: u32,
    /// Taken since the last protocol ACK.
    taken: u32,
}

impl RecvWindow {
    pub fn new(ackmark: u32, hiwater: u32) -> RecvWindow {
        assert!(
            1 <= ackmark && ackmark <= hiwater,
            "1 <= ackmark <= hiwater (spec 3.9)"
        );
        RecvWindow {
            ackmark,
            hiwater,
            buffered: 0,
            taken: 0,
        }
    }

    /// A data packet arrived from the source.
    pub fn arrived(&mut self) -> Result<(), ProtocolError> {
        self.buffered += 1;
        if self.buffered + self.taken > self.hiwater {
            return Err(ProtocolError::new(format!(
                "{} packets unacknowledged, over the hiwater mark {} (the sender ignores flow control)",
                self.buffered + self.taken,
                self.hiwater
            )));
        }
        Ok(())
    }

    /// The destination process took one arrived packet; `true` when a protocol ACK must
    /// go back now.
    pub fn taken(&mut self) -> bool {
        debug_assert!(self.buffered > 0);
        self.buffered -= 1;
        self.taken += 1;
        if self.taken == self.ackmark {
            self.taken = 0;
            return true;
        }
        false
    }

    /// Packets arrived and waiting for the destination process.
    /// Packets taken that the next ACK will cover.
    pub fn unacked(&self) -> u32 {
        self.taken
    }

    pub fn buffered(&self) -> u32 {
        self.buffered
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_and_long_messages() {
        let s = MessagePlan::new(4000, 4000, false);
        assert!(!s.is_long());
        assert_eq!(
            (s.packets(), s.packet(0), s.packet_type(0)),
            (1, (0, 4000), PacketType::Data)
        );
        assert!(!s.needs_syncack());
        let ss = MessagePlan::new(10, 4000, true);
        assert_eq!(ss.packet_type(0), PacketType::DataSync);
        assert!(ss.needs_syncack());
        let z = MessagePlan::new(0, 4000, false);
        assert_eq!((z.packets(), z.packet(0)), (1, (0, 0)));
        let l = MessagePlan::new(9001, 4000, false);
        assert!(l.is_long() && l.needs_syncack());
        assert_eq!(l.packets(), 3);
        assert_eq!(
            [l.packet(0), l.packet(1), l.packet(2)],
            [(0, 4000), (4000, 4000), (8000, 1001)]
        );
        assert_eq!(
            [l.packet_type(0), l.packet_type(1), l.packet_type(2)],
            [PacketType::DataSync, PacketType::Data, PacketType::Data]
        );
        let exact = MessagePlan::new(8000, 4000, true);
        assert_eq!(exact.packets(), 2);
        assert_eq!(exact.packet(1), (4000, 4000));
    }

    #[test]
    fn windows_agree() {
        let (mut s, mut r) = (SendWindow::new(2, 4), RecvWindow::new(2, 4));
        let mut acks_in_flight = 0;
        for i in 0..100 {
            if !s.can_send() {
                for _ in 0..acks_in_flight {
                    s.acked().unwrap();
                }
                acks_in_flight = 0;
            }
            assert!(s.can_send());
            s.sent();
            r.arrived().unwrap();
            // The destination takes packets in bursts of three.
            if i % 3 == 2 {
                while r.buffered() > 0 {
                    if r.taken() {
                        acks_in_flight += 1;
                    }
                }
            }
        }
        assert!(s.outstanding() <= 4);
        assert!(SendWindow::new(2, 4).acked().is_err());
    }

    #[test]
    fn a_sender_ignoring_flow_control_is_caught() {
        let mut r = RecvWindow::new(2, 4);
        for _ in 0..4 {
            r.arrived().unwrap();
        }
        // Nothing taken, so no ACK went back: a fifth packet is over hiwater.
        let e = r.arrived().unwrap_err();
        assert!(e.0.contains("over the hiwater mark 4"), "{e}");
        // Taking two sends an ACK, which makes room for two more.
        let mut r = RecvWindow::new(2, 4);
        for _ in 0..4 {
            r.arrived().unwrap();
        }
        assert!(!r.taken());
        assert!(r.taken());
        r.arrived().unwrap();
        r.arrived().unwrap();
        assert!(r.arrived().is_err());
    }
}
