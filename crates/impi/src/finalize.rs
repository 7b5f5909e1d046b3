//! A host channel's finalization (spec 2.4 and 3.8): after its procs are done, a host
//! sends `IMPI_PK_FINI`, then keeps consuming what arrives — acknowledging as the
//! protocol requires, so that the other side never blocks, and destroying unmatched
//! messages — until the other host's `IMPI_PK_FINI` arrives. Only then may the channel
//! close.

use std::collections::HashMap;

use crate::packet::{Packet, PacketType, Proc};
use crate::wire::ProtocolError;

/// Finalization of one channel.
#[derive(Debug)]
pub struct Finalizer {
    /// This host's `IMPI_Pk_ackmark`: a protocol ACK goes back every `ackmark` packets
    /// received from one source for one destination.
    ackmark: u32,
    counts: HashMap<(Proc, Proc), u32>,
    sent: bool,
    received: bool,
    /// Messages destroyed unmatched.
    pub destroyed: u64,
}

impl Finalizer {
    pub fn new(ackmark: u32) -> Finalizer {
        Finalizer {
            ackmark: ackmark.max(1),
            counts: HashMap::new(),
            sent: false,
            received: false,
            destroyed: 0,
        }
    }

    /// Carries over `n` data packets from `src` to `dest` that arrived before the
    /// finalization and are not covered by a protocol ACK yet, so that the next ACK
    /// comes when the sender expects it.
    pub fn carry(&mut self, src: Proc, dest: Proc, n: u32) {
        *self.counts.entry((src, dest)).or_insert(0) = n % self.ackmark;
    }

    /// This host's `IMPI_PK_FINI`, to send once.
    pub fn start(&mut self) -> Packet {
        self.sent = true;
        Packet::fini()
    }

    /// Both FINI packets have crossed: the channel may close.
    pub fn complete(&self) -> bool {
        self.sent && self.received
    }

    /// Whether the other host's FINI has arrived.
    pub fn peer_finished(&self) -> bool {
        self.received
    }

    /// A packet arrived; returns the packets to send back.
    pub fn on_packet(&mut self, p: &Packet) -> Result<Vec<Packet>, ProtocolError> {
        let mut out = Vec::new();
        match p.pk_type {
            PacketType::Fini => {
                if self.received {
                    return Err(ProtocolError::new("second IMPI_PK_FINI on the channel"));
                }
                self.received = true;
            }
            PacketType::Data | PacketType::DataSync | PacketType::Cancel if self.received => {
                return Err(ProtocolError::new(format!(
                    "{} after the other host's IMPI_PK_FINI (only acknowledgments may follow it)",
                    p.pk_type.name()
                )));
            }
            PacketType::Data | PacketType::DataSync => {
                if p.pk_type == PacketType::DataSync {
                    // The first packet of a synchronous or long message: acknowledge it
                    // as matched so the sender does not wait; its data is destroyed.
                    self.destroyed += 1;
                    out.push(Packet::sync_ack(p.pk_dest, p.pk_src, p.pk_srqid, 0));
                } else if u64::from(p.pk_len) == p.pk_msglen {
                    // A short message (the later packets of a long one are not messages).
                    self.destroyed += 1;
                }
                let n = self.counts.entry((p.pk_src, p.pk_dest)).or_insert(0);
                *n += 1;
                if *n == self.ackmark {
                    *n = 0;
                    out.push(Packet::proto_ack(p.pk_dest, p.pk_src));
                }
            }
            PacketType::Cancel => {
                // Every buffered message is destroyed, so the cancel succeeds.
                out.push(Packet::cancel_reply(true, p.pk_dest, p.pk_src, p.pk_srqid));
            }
            PacketType::ProtoAck
            | PacketType::SyncAck
            | PacketType::CancelYes
            | PacketType::CancelNo => {}
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pr(pid: i64) -> Proc {
        Proc {
            hostid: [1; 16],
            pid,
        }
    }

    #[test]
    fn drains_with_acknowledgments_until_fini() {
        let mut f = Finalizer::new(2);
        assert_eq!(f.start().pk_type, PacketType::Fini);
        assert!(!f.complete());
        let (a, b) = (pr(1), pr(2));
        // A synchronous short message: SYNCACK back; the first packet counts for flow control.
        let out = f
            .on_packet(&Packet::data(true, a, b, 9, 0, 4, 4, 0, 1, 0, 0))
            .unwrap();
        assert_eq!(out, vec![Packet::sync_ack(b, a, 9, 0)]);
        // The second packet from a to b reaches ackmark 2: a protocol ACK.
        let out = f
            .on_packet(&Packet::data(false, a, b, 10, 0, 4, 4, 0, 1, 0, 0))
            .unwrap();
        assert_eq!(out, vec![Packet::proto_ack(b, a)]);
        let out = f.on_packet(&Packet::cancel(a, b, 10)).unwrap();
        assert_eq!(out, vec![Packet::cancel_reply(true, b, a, 10)]);
        assert_eq!(f.destroyed, 2);
        // A later packet of a long message is not another message.
        f.on_packet(&Packet::data(false, a, b, 11, 5, 9000, 4000, 0, 1, 0, 0))
            .unwrap();
        assert_eq!(f.destroyed, 2);
        assert!(f.on_packet(&Packet::proto_ack(a, b)).unwrap().is_empty());
        assert!(f.on_packet(&Packet::fini()).unwrap().is_empty());
        assert!(f.complete());
        // Acknowledgments may still come; data may not.
        assert!(f
            .on_packet(&Packet::sync_ack(a, b, 1, 1))
            .unwrap()
            .is_empty());
        assert!(f
            .on_packet(&Packet::data(false, a, b, 1, 0, 1, 1, 0, 0, 0, 0))
            .is_err());
        assert!(f.on_packet(&Packet::fini()).is_err());
    }
}
