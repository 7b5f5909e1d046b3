//! The data-transfer packet header `IMPI_Packet` (spec 3.5): 128 bytes in network byte
//! order, its eight packet types, and constructors that fill the fields Table 3.1 lists
//! for each type (the others are zero). Also the 4-byte host rank a connecting host sends
//! first on a host connection (spec 2.3.8).

use crate::wire::{get_i32, get_i64, get_u32, get_u64, ProtocolError};

/// Size of `IMPI_Packet`.
pub const HEADER_LEN: usize = 128;
/// Size of `IMPI_Proc` (16-byte host identifier, `IMPI_Int8` pid).
pub const PROC_LEN: usize = 24;

/// `IMPI_Proc`: a process identifier unique in the job.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, PartialOrd, Ord)]
pub struct Proc {
    pub hostid: [u8; 16],
    pub pid: i64,
}

impl Proc {
    fn put(&self, b: &mut [u8]) {
        b[..16].copy_from_slice(&self.hostid);
        b[16..24].copy_from_slice(&self.pid.to_be_bytes());
    }

    fn get(b: &[u8]) -> Proc {
        Proc {
            hostid: b[..16].try_into().unwrap(),
            pid: get_i64(b, 16),
        }
    }
}

/// `pk_type` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u32)]
pub enum PacketType {
    /// `IMPI_PK_DATA`: message data.
    Data = 0,
    /// `IMPI_PK_DATASYNC`: message data; the sender wants a synchronization ACK.
    DataSync = 1,
    /// `IMPI_PK_PROTOACK`: flow-control acknowledgment of `IMPI_Pk_ackmark` packets.
    ProtoAck = 2,
    /// `IMPI_PK_SYNCACK`: the message was matched (sync send, or first packet of a long one).
    SyncAck = 3,
    /// `IMPI_PK_CANCEL`: cancel request.
    Cancel = 4,
    /// `IMPI_PK_CANCELYES`: the message was cancelled.
    CancelYes = 5,
    /// `IMPI_PK_CANCELNO`: the message had been received; not cancelled.
    CancelNo = 6,
    /// `IMPI_PK_FINI`: the agent ends the connection.
    Fini = 7,
}

impl PacketType {
    pub fn from_u32(v: u32) -> Option<PacketType> {
        use PacketType::*;
        Some(match v {
            0 => Data,
            1 => DataSync,
            2 => ProtoAck,
            3 => SyncAck,
            4 => Cancel,
            5 => CancelYes,
            6 => CancelNo,
            7 => Fini,
            _ => return None,
        })
    }

    /// Whether user data follows the header (`pk_len` bytes).
    pub fn carries_data(self) -> bool {
        matches!(self, PacketType::Data | PacketType::DataSync)
    }

    pub fn name(self) -> &'static str {
        use PacketType::*;
        match self {
            Data => "IMPI_PK_DATA",
            DataSync => "IMPI_PK_DATASYNC",
            ProtoAck => "IMPI_PK_PROTOACK",
            SyncAck => "IMPI_PK_SYNCACK",
            Cancel => "IMPI_PK_CANCEL",
            CancelYes => "IMPI_PK_CANCELYES",
            CancelNo => "IMPI_PK_CANCELNO",
            Fini => "IMPI_PK_FINI",
        }
    }
}

/// `IMPI_Packet`, every field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Packet {
    pub pk_type: PacketType,
    /// Bytes of user data following this header.
    pub pk_len: u32,
    pub pk_src: Proc,
    pub pk_dest: Proc,
    /// Source request identifier.
    pub pk_srqid: u64,
    /// Destination request identifier (echoed from a SYNCACK in later data packets).
    pub pk_drqid: u64,
    /// Total message length.
    pub pk_msglen: u64,
    /// The sender's rank in the communicator.
    pub pk_lsrank: i32,
    pub pk_tag: i32,
    /// Context identifier.
    pub pk_cid: u64,
    pub pk_seqnum: u64,
    /// QoS: element count.
    pub pk_count: i64,
    /// QoS: the sender's datatype handle.
    pub pk_dtype: u64,
    pub pk_reserved: u64,
}

impl Packet {
    /// A header with every field but the type zero.
    pub fn empty(pk_type: PacketType) -> Packet {
        Packet {
            pk_type,
            pk_len: 0,
            pk_src: Proc::default(),
            pk_dest: Proc::default(),
            pk_srqid: 0,
            pk_drqid: 0,
            pk_msglen: 0,
            pk_lsrank: 0,
            pk_tag: 0,
            pk_cid: 0,
            pk_seqnum: 0,
            pk_count: 0,
            pk_dtype: 0,
            pk_reserved: 0,
        }
    }

    /// A data packet (`sync`: `IMPI_PK_DATASYNC`); the QoS fields stay zero.
    #[allow(clippy::too_many_arguments)]
    pub fn data(
        sync: bool,
        src: Proc,
        dest: Proc,
        srqid: u64,
        drqid: u64,
        msglen: u64,
        len: u32,
        lsrank: i32,
        tag: i32,
        cid: u64,
        seqnum: u64,
    ) -> Packet {
        Packet {
            pk_len: len,
            pk_src: src,
            pk_dest: dest,
            pk_srqid: srqid,
            pk_drqid: drqid,
            pk_msglen: msglen,
            pk_lsrank: lsrank,
            pk_tag: tag,
            pk_cid: cid,
            pk_seqnum: seqnum,
            ..Packet::empty(if sync {
                PacketType::DataSync
            } else {
                PacketType::Data
            })
        }
    }

    /// A synchronization ACK from the receiver `src` to the sender `dest`.
    pub fn sync_ack(src: Proc, dest: Proc, srqid: u64, drqid: u64) -> Packet {
        Packet {
            pk_src: src,
            pk_dest: dest,
            pk_srqid: srqid,
            pk_drqid: drqid,
            ..Packet::empty(PacketType::SyncAck)
        }
    }

    /// A protocol ACK from the receiver `src` to the sender `dest`.
    pub fn proto_ack(src: Proc, dest: Proc) -> Packet {
        Packet {
            pk_src: src,
            pk_dest: dest,
            ..Packet::empty(PacketType::ProtoAck)
        }
    }

    /// A cancel request for the message of send request `srqid`.
    pub fn cancel(src: Proc, dest: Proc, srqid: u64) -> Packet {
        Packet {
            pk_src: src,
            pk_dest: dest,
            pk_srqid: srqid,
            ..Packet::empty(PacketType::Cancel)
        }
    }

    /// A cancel reply (`yes`: `IMPI_PK_CANCELYES`) from the receiver `src`.
    pub fn cancel_reply(yes: bool, src: Proc, dest: Proc, srqid: u64) -> Packet {
        Packet {
            pk_src: src,
            pk_dest: dest,
            pk_srqid: srqid,
            ..Packet::empty(if yes {
                PacketType::CancelYes
            } else {
                PacketType::CancelNo
            })
        }
    }

    /// The finalization packet.
    pub fn fini() -> Packet {
        Packet::empty(PacketType::Fini)
    }

    /// Bytes of user data that follow this header on the channel: `pk_len` for the data
    /// types; none for the header-only types (Table 3.1 does not list `pk_len` for them).
    pub fn payload_len(&self) -> usize {
        if self.pk_type.carries_data() {
            self.pk_len as usize
        } else {
            0
        }
    }

    pub fn encode(&self) -> [u8; HEADER_LEN] {
        let mut b = [0u8; HEADER_LEN];
        b[0..4].copy_from_slice(&(self.pk_type as u32).to_be_bytes());
        b[4..8].copy_from_slice(&self.pk_len.to_be_bytes());
        self.pk_src.put(&mut b[8..32]);
        self.pk_dest.put(&mut b[32..56]);
        b[56..64].copy_from_slice(&self.pk_srqid.to_be_bytes());
        b[64..72].copy_from_slice(&self.pk_drqid.to_be_bytes());
        b[72..80].copy_from_slice(&self.pk_msglen.to_be_bytes());
        b[80..84].copy_from_slice(&self.pk_lsrank.to_be_bytes());
        b[84..88].copy_from_slice(&self.pk_tag.to_be_bytes());
        b[88..96].copy_from_slice(&self.pk_cid.to_be_bytes());
        b[96..104].copy_from_slice(&self.pk_seqnum.to_be_bytes());
        b[104..112].copy_from_slice(&self.pk_count.to_be_bytes());
        b[112..120].copy_from_slice(&self.pk_dtype.to_be_bytes());
        b[120..128].copy_from_slice(&self.pk_reserved.to_be_bytes());
        b
    }

    /// Decodes a header. An unknown `pk_type` is an error: the length of what follows it
    /// cannot be known, so the channel cannot go on.
    pub fn decode(b: &[u8; HEADER_LEN]) -> Result<Packet, ProtocolError> {
        let t = get_u32(b, 0);
        let pk_type = PacketType::from_u32(t)
            .ok_or_else(|| ProtocolError::new(format!("unknown packet type {t} (pk_type)")))?;
        Ok(Packet {
            pk_type,
            pk_len: get_u32(b, 4),
            pk_src: Proc::get(&b[8..32]),
            pk_dest: Proc::get(&b[32..56]),
            pk_srqid: get_u64(b, 56),
            pk_drqid: get_u64(b, 64),
            pk_msglen: get_u64(b, 72),
            pk_lsrank: get_i32(b, 80),
            pk_tag: get_i32(b, 84),
            pk_cid: get_u64(b, 88),
            pk_seqnum: get_u64(b, 96),
            pk_count: get_i64(b, 104),
            pk_dtype: get_u64(b, 112),
            pk_reserved: get_u64(b, 120),
        })
    }

    /// Checks a data packet against the negotiated `IMPI_Pk_maxdatalen`: `pk_len` at most
    /// that and at most `pk_msglen`.
    pub fn check_data(&self, maxdatalen: u32) -> Result<(), ProtocolError> {
        if !self.pk_type.carries_data() {
            return Ok(());
        }
        if self.pk_len > maxdatalen {
            return Err(ProtocolError::new(format!(
                "{} with pk_len {} over the negotiated maximum data length {maxdatalen}",
                self.pk_type.name(),
                self.pk_len
            )));
        }
        if u64::from(self.pk_len) > self.pk_msglen {
            return Err(ProtocolError::new(format!(
                "{} with pk_len {} over its message length pk_msglen {}",
                self.pk_type.name(),
                self.pk_len,
                self.pk_msglen
            )));
        }
        Ok(())
    }
}

/// The host rank a connecting host sends first (spec 2.3.8: "its rank as a 32-bit value").
pub fn encode_host_rank(rank: u32) -> [u8; 4] {
    (rank as i32).to_be_bytes()
}

/// Decodes the connecting host's rank; fails unless it is one of `nhosts`.
pub fn decode_host_rank(b: [u8; 4], nhosts: u32) -> Result<u32, ProtocolError> {
    let r = i32::from_be_bytes(b);
    if r < 0 || r as u32 >= nhosts {
        return Err(ProtocolError::new(format!(
            "host rank {r} is out of range (the job has {nhosts} hosts)"
        )));
    }
    Ok(r as u32)
}

/// Cuts a host channel's byte stream into packets (header and user data).
#[derive(Debug)]
pub struct PacketStream {
    inbox: crate::wire::Inbox,
    header: Option<Packet>,
    maxdatalen: u32,
}

impl PacketStream {
    /// Data packets longer than `maxdatalen` (the negotiated `IMPI_Pk_maxdatalen`) are errors.
    pub fn new(maxdatalen: u32) -> PacketStream {
        PacketStream {
            inbox: crate::wire::Inbox::default(),
            header: None,
            maxdatalen,
        }
    }

    pub fn push(&mut self, bytes: &[u8]) {
        self.inbox.push(bytes);
    }

    /// Whether a packet has been started and not finished.
    pub fn partial(&self) -> bool {
        self.header.is_some() || !self.inbox.is_empty()
    }

    /// The bytes that have arrived and are not consumed yet, to read more into
    /// ([`crate::wire::Inbox::read_from`], [`crate::wire::Inbox::read_after`]: the rest
    /// of a packet's data that the caller receives itself, see [`PacketStream::detach`]).
    pub fn inbox(&mut self) -> &mut crate::wire::Inbox {
        &mut self.inbox
    }

    /// The header of the next packet, once it has arrived, and how many bytes of its
    /// data have (the packet stays next).
    pub fn peek_header(&mut self) -> Result<Option<(Packet, usize)>, ProtocolError> {
        if self.header.is_none() {
            let Some(h) = self.inbox.take_ref(HEADER_LEN) else {
                return Ok(None);
            };
            let p = Packet::decode(h.try_into().unwrap())?;
            p.check_data(self.maxdatalen)?;
            self.header = Some(p);
        }
        let p = self.header.unwrap();
        Ok(Some((p, self.inbox.len().min(p.payload_len()))))
    }

    /// Removes the next packet, whose header has arrived and whose data has not all
    /// ([`PacketStream::peek_header`]), and lends the part of its data that has: the
    /// caller reads the rest from the source itself, before the stream reads again.
    pub fn detach(&mut self) -> &[u8] {
        debug_assert!(self
            .header
            .is_some_and(|p| self.inbox.len() < p.payload_len()));
        self.header = None;
        self.inbox.take_all()
    }

    /// The next whole packet, if it has arrived.
    pub fn next_packet(&mut self) -> Result<Option<(Packet, Vec<u8>)>, ProtocolError> {
        Ok(self.next_packet_ref()?.map(|(p, d)| (p, d.to_vec())))
    }

    /// The next whole packet, if it has arrived, its data lent from the stream.
    pub fn next_packet_ref(&mut self) -> Result<Option<(Packet, &[u8])>, ProtocolError> {
        let Some((p, _)) = self.peek_header()? else {
            return Ok(None);
        };
        let n = p.payload_len();
        let Some(data) = self.inbox.take_ref(n) else {
            return Ok(None);
        };
        Ok(Some((self.header.take().unwrap(), data)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn proc(b: u8, pid: i64) -> Proc {
        let mut hostid = [0u8; 16];
        hostid[10] = 0xff;
        hostid[11] = 0xff;
        hostid[12..].copy_from_slice(&[127, 0, 0, b]);
        Proc { hostid, pid }
    }

    #[test]
    fn header_is_128_bytes_with_the_spec_offsets() {
        let p = Packet {
            pk_type: PacketType::DataSync,
            pk_len: 0x0102_0304,
            pk_src: proc(1, 0x1122_3344_5566_7788),
            pk_dest: proc(2, -2),
            pk_srqid: 0xA1,
            pk_drqid: 0xA2,
            pk_msglen: 0xA3,
            pk_lsrank: -5,
            pk_tag: 0x7fff,
            pk_cid: 0xA4,
            pk_seqnum: 0xA5,
            pk_count: -6,
            pk_dtype: 0xA6,
            pk_reserved: 0xA7,
        };
        let b = p.encode();
        assert_eq!(b.len(), 128);
        assert_eq!(&b[0..8], &[0, 0, 0, 1, 1, 2, 3, 4]);
        assert_eq!(&b[8..24], &p.pk_src.hostid);
        assert_eq!(
            &b[24..32],
            &[0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88]
        );
        assert_eq!(
            &b[48..56],
            &[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe]
        );
        assert_eq!(b[63], 0xA1);
        assert_eq!(b[71], 0xA2);
        assert_eq!(b[79], 0xA3);
        assert_eq!(&b[80..84], &[0xff, 0xff, 0xff, 0xfb]);
        assert_eq!(&b[84..88], &[0, 0, 0x7f, 0xff]);
        assert_eq!(b[95], 0xA4);
        assert_eq!(b[103], 0xA5);
        assert_eq!(
            &b[104..112],
            &[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfa]
        );
        assert_eq!(b[119], 0xA6);
        assert_eq!(b[127], 0xA7);
        assert_eq!(Packet::decode(&b).unwrap(), p);
    }

    #[test]
    fn every_type_round_trips_with_table_3_1_fields() {
        let (a, b) = (proc(1, 10), proc(2, 20));
        let packets = [
            Packet::data(false, a, b, 7, 0, 5, 5, 0, 3, 0, 1),
            Packet::data(true, a, b, 7, 0, 9000, 4000, 1, 3, 2, 2),
            Packet::proto_ack(b, a),
            Packet::sync_ack(b, a, 7, 99),
            Packet::cancel(a, b, 7),
            Packet::cancel_reply(true, b, a, 7),
            Packet::cancel_reply(false, b, a, 7),
            Packet::fini(),
        ];
        for (i, p) in packets.iter().enumerate() {
            assert_eq!(p.pk_type as u32, i as u32);
            let back = Packet::decode(&p.encode()).unwrap();
            assert_eq!(&back, p);
        }
        // Header-only types carry nothing after the header.
        assert_eq!(packets[1].payload_len(), 4000);
        for p in &packets[2..] {
            assert_eq!(p.payload_len(), 0);
            assert_eq!(p.pk_msglen, 0);
        }
        // Fini uses pk_type alone.
        assert_eq!(&Packet::fini().encode()[..4], &[0, 0, 0, 7]);
        assert!(Packet::fini().encode()[4..].iter().all(|&x| x == 0));
        // Sync ACK: type, src, dest, srqid, drqid.
        let s = Packet::sync_ack(b, a, 7, 99);
        assert_eq!(
            Packet {
                pk_srqid: 0,
                pk_drqid: 0,
                ..s
            },
            Packet {
                pk_src: b,
                pk_dest: a,
                ..Packet::empty(PacketType::SyncAck)
            }
        );
    }

    #[test]
    fn bad_headers() {
        let mut b = Packet::fini().encode();
        b[3] = 8;
        assert!(Packet::decode(&b)
            .unwrap_err()
            .0
            .contains("unknown packet type 8"));
        let (a, c) = (proc(1, 1), proc(2, 2));
        let long = Packet::data(true, a, c, 1, 0, 9000, 4001, 0, 0, 0, 0);
        assert!(long.check_data(4000).is_err());
        assert!(long.check_data(8000).is_ok());
        let over = Packet::data(false, a, c, 1, 0, 3, 4, 0, 0, 0, 0);
        assert!(over.check_data(4000).is_err());
    }

    #[test]
    fn stream_cuts_packets_at_any_split() {
        let (a, c) = (proc(1, 1), proc(2, 2));
        let mut bytes = Packet::data(false, a, c, 1, 0, 3, 3, 0, 5, 0, 0)
            .encode()
            .to_vec();
        bytes.extend_from_slice(b"xyz");
        bytes.extend_from_slice(&Packet::proto_ack(c, a).encode());
        bytes.extend_from_slice(&Packet::fini().encode());
        for split in 0..bytes.len() {
            let mut s = PacketStream::new(100);
            let mut got = Vec::new();
            for part in [&bytes[..split], &bytes[split..]] {
                s.push(part);
                while let Some(p) = s.next_packet().unwrap() {
                    got.push(p);
                }
            }
            assert!(!s.partial());
            assert_eq!(got.len(), 3);
            assert_eq!(got[0].1, b"xyz");
            assert_eq!(got[1].0.pk_type, PacketType::ProtoAck);
            assert_eq!(got[2].0.pk_type, PacketType::Fini);
        }
        let mut s = PacketStream::new(2);
        s.push(&bytes);
        assert!(s
            .next_packet()
            .unwrap_err()
            .0
            .contains("maximum data length 2"));
    }

    #[test]
    fn a_packet_s_data_can_be_received_past_the_stream() {
        let (a, c) = (proc(1, 1), proc(2, 2));
        let mut bytes = Packet::data(false, a, c, 1, 9, 6, 6, 0, 5, 0, 0)
            .encode()
            .to_vec();
        bytes.extend_from_slice(b"abcdef");
        bytes.extend_from_slice(&Packet::proto_ack(c, a).encode());
        let mut s = PacketStream::new(100);
        s.push(&bytes[..HEADER_LEN + 2]);
        let (p, have) = s.peek_header().unwrap().unwrap();
        assert_eq!((p.pk_drqid, p.payload_len(), have), (9, 6, 2));
        assert_eq!(s.detach(), b"ab");
        // The caller takes the other 4 bytes; the stream goes on with the next packet.
        let mut rest = [0u8; 4];
        let mut src = &bytes[HEADER_LEN + 2..];
        let got = s
            .inbox()
            .read_after(&mut src, &mut [&mut rest], 1000)
            .unwrap();
        assert_eq!((got, &rest), ((4, HEADER_LEN), b"cdef"));
        let (p, d) = s.next_packet().unwrap().unwrap();
        assert_eq!((p.pk_type, d.len()), (PacketType::ProtoAck, 0));
        assert!(!s.partial());
    }

    #[test]
    fn host_rank_hello() {
        assert_eq!(encode_host_rank(3), [0, 0, 0, 3]);
        assert_eq!(decode_host_rank([0, 0, 0, 3], 4), Ok(3));
        assert!(decode_host_rank([0, 0, 0, 4], 4).is_err());
        assert!(decode_host_rank([0xff; 4], 4).is_err());
    }
}
