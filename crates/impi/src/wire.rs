//! The command layer of the startup protocol (spec 2.3.2): the `IMPI_Cmd` header, the
//! command codes, big-endian integer helpers and the byte buffer the state machines
//! read from. Every integer on the wire is big-endian two's complement (spec 1.2.1).

use std::fmt;

/// `IMPI_CMD_AUTH`: ASCII "AUTH".
pub const CMD_AUTH: i32 = 0x4155_5448;
/// `IMPI_CMD_IMPI`: ASCII "IMPI".
pub const CMD_IMPI: i32 = 0x494D_5049;
/// `IMPI_CMD_COLL`: ASCII "COLL".
pub const CMD_COLL: i32 = 0x434F_4C4C;
/// `IMPI_CMD_DONE`: ASCII "DONE".
pub const CMD_DONE: i32 = 0x444F_4E45;
/// `IMPI_CMD_FINI`: ASCII "FINI".
pub const CMD_FINI: i32 = 0x4649_4E49;

/// Size of `IMPI_Cmd` on the wire: two `IMPI_Int4`.
pub const CMD_HEADER_LEN: usize = 8;

/// Largest command payload the server accepts from a client (16 MiB: the proc labels of
/// a client with a million procs). A larger `len` is refused before anything is buffered.
pub const MAX_CLIENT_PAYLOAD: usize = 16 << 20;
/// Largest command payload a client accepts from the server (the concatenation of every
/// client's payload for one label).
pub const MAX_SERVER_PAYLOAD: usize = 256 << 20;

/// A protocol violation, with a message naming what was wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProtocolError(pub String);

impl ProtocolError {
    pub fn new(msg: impl Into<String>) -> Self {
        ProtocolError(msg.into())
    }
}

impl fmt::Display for ProtocolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ProtocolError {}

/// The `IMPI_Cmd` header: command code and payload length in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CmdHeader {
    pub cmd: i32,
    pub len: i32,
}

impl CmdHeader {
    pub fn encode(&self) -> [u8; CMD_HEADER_LEN] {
        let mut b = [0u8; CMD_HEADER_LEN];
        b[..4].copy_from_slice(&self.cmd.to_be_bytes());
        b[4..].copy_from_slice(&self.len.to_be_bytes());
        b
    }

    pub fn decode(b: &[u8]) -> CmdHeader {
        CmdHeader {
            cmd: get_i32(b, 0),
            len: get_i32(b, 4),
        }
    }
}

/// A whole command: header followed by `payload`.
pub fn encode_cmd(cmd: i32, payload: &[u8]) -> Vec<u8> {
    let mut v = Vec::with_capacity(CMD_HEADER_LEN + payload.len());
    let len = i32::try_from(payload.len()).expect("IMPI command payload over 2 GiB");
    v.extend_from_slice(&CmdHeader { cmd, len }.encode());
    v.extend_from_slice(payload);
    v
}

/// "AUTH", "COLL", ... for the known codes, else the code in hex.
pub fn command_name(cmd: i32) -> String {
    match cmd {
        CMD_AUTH => "AUTH".into(),
        CMD_IMPI => "IMPI".into(),
        CMD_COLL => "COLL".into(),
        CMD_DONE => "DONE".into(),
        CMD_FINI => "FINI".into(),
        _ => format!("unknown command 0x{:08x}", cmd as u32),
    }
}

pub fn put_i32(v: &mut Vec<u8>, x: i32) {
    v.extend_from_slice(&x.to_be_bytes());
}
pub fn put_u32(v: &mut Vec<u8>, x: u32) {
    v.extend_from_slice(&x.to_be_bytes());
}
pub fn put_i64(v: &mut Vec<u8>, x: i64) {
    v.extend_from_slice(&x.to_be_bytes());
}
pub fn put_u64(v: &mut Vec<u8>, x: u64) {
    v.extend_from_slice(&x.to_be_bytes());
}

/// Reads a big-endian `IMPI_Int4` at `off`; the caller guarantees the bytes are there.
pub fn get_i32(b: &[u8], off: usize) -> i32 {
    i32::from_be_bytes(b[off..off + 4].try_into().unwrap())
}
pub fn get_u32(b: &[u8], off: usize) -> u32 {
    u32::from_be_bytes(b[off..off + 4].try_into().unwrap())
}
pub fn get_i64(b: &[u8], off: usize) -> i64 {
    i64::from_be_bytes(b[off..off + 8].try_into().unwrap())
}
pub fn get_u64(b: &[u8], off: usize) -> u64 {
    u64::from_be_bytes(b[off..off + 8].try_into().unwrap())
}

/// Bytes received and not yet consumed (`buf[start..end]`). Consumed bytes are dropped
/// lazily, when room is needed, so that taking pieces does not shift the buffer each
/// time; the buffer stays initialized, so a socket can read straight into it.
#[derive(Debug, Default)]
pub struct Inbox {
    buf: Vec<u8>,
    start: usize,
    end: usize,
}

impl Inbox {
    /// Makes room for `n` more bytes after the unconsumed ones.
    fn room(&mut self, n: usize) -> &mut [u8] {
        if self.start == self.end {
            (self.start, self.end) = (0, 0);
        }
        if self.buf.len() - self.end < n {
            if self.start > 0 {
                self.buf.copy_within(self.start..self.end, 0);
                self.end -= self.start;
                self.start = 0;
            }
            if self.buf.len() - self.end < n {
                self.buf.resize(self.end + n, 0);
            }
        }
        &mut self.buf[self.end..self.end + n]
    }

    pub fn push(&mut self, bytes: &[u8]) {
        self.room(bytes.len()).copy_from_slice(bytes);
        self.end += bytes.len();
    }

    /// Reads at most `n` bytes from `r` into the inbox (one `read` call).
    pub fn read_from(&mut self, r: &mut impl std::io::Read, n: usize) -> std::io::Result<usize> {
        let k = r.read(self.room(n))?;
        self.end += k;
        Ok(k)
    }

    /// Reads from `r` with one vectored call: first into the slices of `first` (bytes
    /// the caller consumes itself: a packet's data, headers it checks), then at most
    /// `n` bytes into the inbox. Returns how many went to `first` (filled in order) and
    /// how many to the inbox.
    pub fn read_after(
        &mut self,
        r: &mut impl std::io::Read,
        first: &mut [&mut [u8]],
        n: usize,
    ) -> std::io::Result<(usize, usize)> {
        let f: usize = first.iter().map(|s| s.len()).sum();
        let room = self.room(n);
        let mut iov: Vec<std::io::IoSliceMut<'_>> = Vec::with_capacity(first.len() + 1);
        iov.extend(first.iter_mut().map(|s| std::io::IoSliceMut::new(s)));
        iov.push(std::io::IoSliceMut::new(room));
        let k = r.read_vectored(&mut iov)?;
        let rest = k.saturating_sub(f);
        self.end += rest;
        Ok((k - rest, rest))
    }

    /// Removes and lends every byte that has arrived.
    pub fn take_all(&mut self) -> &[u8] {
        let s = self.start;
        self.start = self.end;
        &self.buf[s..self.end]
    }

    pub fn len(&self) -> usize {
        self.end - self.start
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The next `n` bytes, if they have all arrived.
    pub fn peek(&self, n: usize) -> Option<&[u8]> {
        (self.len() >= n).then(|| &self.buf[self.start..self.start + n])
    }

    /// Removes and returns the next `n` bytes, if they have all arrived.
    pub fn take(&mut self, n: usize) -> Option<Vec<u8>> {
        self.take_ref(n).map(<[u8]>::to_vec)
    }

    /// Removes the next `n` bytes, if they have all arrived, and lends them.
    pub fn take_ref(&mut self, n: usize) -> Option<&[u8]> {
        if self.len() < n {
            return None;
        }
        self.start += n;
        Some(&self.buf[self.start - n..self.start])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_codes_are_their_ascii_names() {
        for (code, name) in [
            (CMD_AUTH, b"AUTH"),
            (CMD_IMPI, b"IMPI"),
            (CMD_COLL, b"COLL"),
            (CMD_DONE, b"DONE"),
            (CMD_FINI, b"FINI"),
        ] {
            assert_eq!(&code.to_be_bytes(), name);
            assert_eq!(command_name(code).as_bytes(), name);
        }
        assert_eq!(command_name(0x1234), "unknown command 0x00001234");
    }

    #[test]
    fn header_is_big_endian() {
        let b = encode_cmd(CMD_AUTH, &[0, 0, 0, 1]);
        assert_eq!(b, [b'A', b'U', b'T', b'H', 0, 0, 0, 4, 0, 0, 0, 1]);
        assert_eq!(
            CmdHeader::decode(&b),
            CmdHeader {
                cmd: CMD_AUTH,
                len: 4
            }
        );
    }

    #[test]
    fn inbox_takes_in_pieces() {
        let mut i = Inbox::default();
        i.push(&[1, 2, 3]);
        assert_eq!(i.take(4), None);
        i.push(&[4, 5]);
        assert_eq!(i.take(4), Some(vec![1, 2, 3, 4]));
        assert_eq!(i.len(), 1);
        assert_eq!(i.peek(1), Some(&[5u8][..]));
        assert_eq!(i.take_all(), &[5u8][..]);
        assert!(i.is_empty());
    }

    #[test]
    fn vectored_reads_fill_the_caller_first() {
        let mut i = Inbox::default();
        let (mut a, mut b) = ([0u8; 2], [0u8; 1]);
        let mut src: &[u8] = &[1, 2, 3, 4, 5, 6];
        assert_eq!(
            i.read_after(&mut src, &mut [&mut a, &mut b], 2).unwrap(),
            (3, 2)
        );
        assert_eq!((a, b, i.take(2)), ([1, 2], [3], Some(vec![4, 5])));
        let mut src: &[u8] = &[7];
        assert_eq!(i.read_after(&mut src, &mut [&mut a], 2).unwrap(), (1, 0));
        assert!(i.is_empty());
    }
}
