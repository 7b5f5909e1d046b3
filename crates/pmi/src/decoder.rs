//! [`StreamDecoder`]: cuts a byte stream from a PMI peer into [`Message`]s.
//!
//! The decoder knows which wire the stream currently speaks ([`Wire`]). A server starts in
//! [`Wire::Detect`] and learns the wire from the first byte (`c`/`m` for PMI-1 lines, a
//! digit or space for a PMI-2 length header); the caller switches it to [`Wire::V2`] when a
//! PMI-1 `init` asks for version 2, as MPICH and Slurm clients do. Every length is bounded
//! by [`MAX_MESSAGE_LEN`]; after the first error the decoder stays failed.

use crate::error::CodecError;
use crate::limits::MAX_MESSAGE_LEN;
use crate::message::Message;
use crate::v1::preview;
use crate::{v1, v2};

/// The wire format of a stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wire {
    /// Not known yet: decided by the first byte received.
    Detect,
    /// PMI-1 lines.
    V1,
    /// PMI-2 length-prefixed messages.
    V2,
}

/// One decoded message and the wire it came on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decoded {
    pub wire: Wire,
    pub msg: Message,
    /// True for a PMI-1 multi-line `mcmd=` block.
    pub multi_line: bool,
}

/// Incremental decoder for one PMI byte stream.
#[derive(Debug)]
pub struct StreamDecoder {
    buf: Vec<u8>,
    pos: usize,
    wire: Wire,
    failed: Option<CodecError>,
}

impl StreamDecoder {
    pub fn new(wire: Wire) -> Self {
        StreamDecoder {
            buf: Vec::new(),
            pos: 0,
            wire,
            failed: None,
        }
    }

    /// The wire the next message is expected on.
    pub fn wire(&self) -> Wire {
        self.wire
    }

    /// Switches the wire for the following messages.
    pub fn set_wire(&mut self, wire: Wire) {
        self.wire = wire;
    }

    /// Bytes received but not yet returned as messages.
    pub fn buffered(&self) -> usize {
        self.buf.len() - self.pos
    }

    /// Appends received bytes. Call [`StreamDecoder::next_message`] until it returns
    /// `Ok(None)` after each push, so that at most one partial message stays buffered.
    pub fn push(&mut self, bytes: &[u8]) {
        if self.failed.is_some() {
            return;
        }
        if self.pos > 0 && self.pos >= self.buf.len() / 2 {
            self.buf.drain(..self.pos);
            self.pos = 0;
        }
        self.buf.extend_from_slice(bytes);
    }

    /// The next complete message, `Ok(None)` if more bytes are needed.
    pub fn next_message(&mut self) -> Result<Option<Decoded>, CodecError> {
        if let Some(e) = &self.failed {
            return Err(e.clone());
        }
        match self.decode_one() {
            Ok(r) => Ok(r),
            Err(e) => {
                self.failed = Some(e.clone());
                self.buf = Vec::new();
                self.pos = 0;
                Err(e)
            }
        }
    }

    fn decode_one(&mut self) -> Result<Option<Decoded>, CodecError> {
        let data = &self.buf[self.pos..];
        let Some(&first) = data.first() else {
            return Ok(None);
        };
        if self.wire == Wire::Detect {
            self.wire = match first {
                b'c' | b'm' => Wire::V1,
                b'0'..=b'9' | b' ' => Wire::V2,
                _ => {
                    return Err(CodecError::new(format!(
                        "stream starts with neither a PMI-1 nor a PMI-2 message: {:?}",
                        preview(data)
                    )))
                }
            };
        }
        match self.wire {
            Wire::V1 if data.starts_with(b"mcmd=") || b"mcmd=".starts_with(data) => {
                self.decode_mcmd()
            }
            Wire::V1 => self.decode_line(),
            _ => self.decode_frame(),
        }
    }

    fn decode_line(&mut self) -> Result<Option<Decoded>, CodecError> {
        let data = &self.buf[self.pos..];
        match data.iter().position(|&b| b == b'\n') {
            Some(nl) => {
                if nl > MAX_MESSAGE_LEN {
                    return Err(CodecError::new(format!(
                        "PMI-1 line longer than {MAX_MESSAGE_LEN} bytes"
                    )));
                }
                let msg = v1::parse_line(&data[..nl])?;
                self.pos += nl + 1;
                Ok(Some(Decoded {
                    wire: Wire::V1,
                    msg,
                    multi_line: false,
                }))
            }
            None if data.len() > MAX_MESSAGE_LEN => Err(CodecError::new(format!(
                "PMI-1 line longer than {MAX_MESSAGE_LEN} bytes"
            ))),
            None => Ok(None),
        }
    }

    fn decode_mcmd(&mut self) -> Result<Option<Decoded>, CodecError> {
        let data = &self.buf[self.pos..];
        const END: &[u8] = b"\nendcmd\n";
        let limit = data.len().min(MAX_MESSAGE_LEN + END.len());
        match data[..limit].windows(END.len()).position(|w| w == END) {
            Some(at) => {
                let end = at + END.len();
                let msg = v1::parse_mcmd(&data[..end])?;
                self.pos += end;
                Ok(Some(Decoded {
                    wire: Wire::V1,
                    msg,
                    multi_line: true,
                }))
            }
            None if data.len() > MAX_MESSAGE_LEN => Err(CodecError::new(format!(
                "PMI-1 mcmd block longer than {MAX_MESSAGE_LEN} bytes"
            ))),
            None => Ok(None),
        }
    }

    fn decode_frame(&mut self) -> Result<Option<Decoded>, CodecError> {
        let data = &self.buf[self.pos..];
        if data.len() < v2::HEADER_LEN {
            // Reject an obviously bad header early, before more bytes arrive.
            if let Some(&b) = data.iter().find(|&&b| !(b.is_ascii_digit() || b == b' ')) {
                return Err(CodecError::new(format!(
                    "PMI-2 length header contains the byte 0x{b:02x}"
                )));
            }
            return Ok(None);
        }
        let len = v2::parse_header(&data[..v2::HEADER_LEN])?;
        let total = v2::HEADER_LEN + len;
        if data.len() < total {
            return Ok(None);
        }
        let msg = v2::parse_body(&data[v2::HEADER_LEN..total])?;
        self.pos += total;
        Ok(Some(Decoded {
            wire: Wire::V2,
            msg,
            multi_line: false,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(d: &mut StreamDecoder) -> Vec<Decoded> {
        let mut v = Vec::new();
        while let Some(m) = d.next_message().unwrap() {
            v.push(m);
        }
        v
    }

    #[test]
    fn detects_v1_and_splits_lines_across_pushes() {
        let mut d = StreamDecoder::new(Wire::Detect);
        d.push(b"cmd=init pmi_version=1 pmi_sub");
        assert!(all(&mut d).is_empty());
        d.push(b"version=1\ncmd=get_maxes\ncmd=bar");
        let got = all(&mut d);
        assert_eq!(got.len(), 2);
        assert_eq!(got[0].msg.cmd(), "init");
        assert_eq!(got[1].msg.cmd(), "get_maxes");
        assert_eq!(d.wire(), Wire::V1);
        d.push(b"rier_in\n");
        assert_eq!(all(&mut d)[0].msg.cmd(), "barrier_in");
        assert_eq!(d.buffered(), 0);
    }

    #[test]
    fn v1_then_switch_to_v2() {
        let mut d = StreamDecoder::new(Wire::Detect);
        let mut bytes = b"cmd=init pmi_version=2 pmi_subversion=0\n".to_vec();
        bytes.extend(v2::encode(&Message::new("fullinit").with("pmirank", 0)).unwrap());
        d.push(&bytes);
        let first = d.next_message().unwrap().unwrap();
        assert_eq!(first.wire, Wire::V1);
        d.set_wire(Wire::V2);
        let second = d.next_message().unwrap().unwrap();
        assert_eq!(second.wire, Wire::V2);
        assert_eq!(second.msg.get("pmirank"), Some("0"));
    }

    #[test]
    fn detects_v2_byte_by_byte() {
        let frame = v2::encode(&Message::new("kvs-fence")).unwrap();
        let mut d = StreamDecoder::new(Wire::Detect);
        let mut got = Vec::new();
        for b in &frame {
            d.push(std::slice::from_ref(b));
            got.extend(all(&mut d));
        }
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].msg.cmd(), "kvs-fence");
    }

    #[test]
    fn mcmd_blocks() {
        let mut d = StreamDecoder::new(Wire::V1);
        d.push(b"mcmd=spawn\nnprocs=1\nexecname=a\nendcmd\ncmd=finalize\n");
        let got = all(&mut d);
        assert_eq!(got.len(), 2);
        assert!(got[0].multi_line);
        assert_eq!(got[0].msg.get("execname"), Some("a"));
        assert_eq!(got[1].msg.cmd(), "finalize");
    }

    #[test]
    fn errors_are_sticky_and_bounded() {
        let mut d = StreamDecoder::new(Wire::Detect);
        d.push(b"\x00garbage");
        assert!(d.next_message().is_err());
        d.push(b"cmd=init\n");
        assert!(d.next_message().is_err());

        let mut d = StreamDecoder::new(Wire::V1);
        d.push(&vec![b'c'; MAX_MESSAGE_LEN + 1]);
        assert!(d.next_message().is_err());

        let mut d = StreamDecoder::new(Wire::V2);
        d.push(b"999999");
        assert!(d.next_message().is_err());

        let mut d = StreamDecoder::new(Wire::V2);
        d.push(b"12x");
        assert!(d.next_message().is_err());
    }
}

#[cfg(test)]
mod fuzz {
    use super::*;
    use proptest::prelude::*;

    fn attrs() -> impl Strategy<Value = Vec<(String, String)>> {
        proptest::collection::vec(("[a-zA-Z_][a-zA-Z0-9_-]{0,10}", "[ -~]{0,30}"), 0..6)
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

        #[test]
        fn garbage_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..400), split in 0usize..400, start in 0u8..3) {
            let wire = [Wire::Detect, Wire::V1, Wire::V2][start as usize];
            let mut d = StreamDecoder::new(wire);
            let split = split.min(bytes.len());
            for part in [&bytes[..split], &bytes[split..]] {
                d.push(part);
                for _ in 0..400 {
                    match d.next_message() {
                        Ok(Some(_)) => {}
                        _ => break,
                    }
                }
            }
        }

        #[test]
        fn v1_round_trip(cmd in "[a-z_]{1,12}", a in attrs()) {
            let mut m = Message::new(cmd);
            for (k, v) in a { m.push(k, v); }
            let bytes = v1::encode(&m).unwrap();
            let mut d = StreamDecoder::new(Wire::Detect);
            d.push(&bytes);
            let got = d.next_message().unwrap().unwrap();
            // PMI-1 cannot tell an empty value from a missing one, both decode to "".
            prop_assert_eq!(got.msg, m);
        }

        #[test]
        fn v2_round_trip(cmd in "[a-z-]{1,12}", a in attrs()) {
            let mut m = Message::new(cmd);
            for (k, v) in a { m.push(k, v); }
            let bytes = v2::encode(&m).unwrap();
            let mut d = StreamDecoder::new(Wire::Detect);
            for b in &bytes { d.push(std::slice::from_ref(b)); }
            let got = d.next_message().unwrap().unwrap();
            prop_assert_eq!(got.msg, m);
        }
    }
}
