//! The few collective exchanges communicator management needs (gather, broadcast,
//! scatter of byte strings, and a leaders' swap), run directly on the device's
//! point-to-point in a communicator's collective context with reserved tags.
//!
//! Simple and correct rather than fast: everything goes through a root. The
//! collectives subsystem may replace these once it is integrated.
//!
//! Reserved tags: every tag in `0x7E00_0000..=0x7EFF_FFFF` on a collective context
//! belongs to communicator management; collective algorithms must use others. All
//! receives name their source and tag exactly (never wildcards), and the envelope's
//! source is the sender's rank in the communicator whose context carries the traffic,
//! so concurrent operations over different subsets cannot take each other's messages.

use crate::device::matching::Spec;
use crate::device::{RecvArgs, ReqId, SendArgs, SendMode};
use crate::error::{err, Error, ErrorClass, Result};
use crate::runtime;
use crate::transport::Route;

const TAG_BASE: i32 = 0x7E00_0000;
/// Operations over all members of an intracommunicator.
pub const TAG_INTRA: i32 = TAG_BASE + 1;
/// Intercommunicator operations: traffic inside one group.
pub const TAG_LOCAL: i32 = TAG_BASE + 2;
/// Intercommunicator operations: traffic between the two leaders.
pub const TAG_CROSS: i32 = TAG_BASE + 3;
/// `MPI_Intercomm_create`: traffic inside each local communicator.
pub const TAG_ICREATE_LOCAL: i32 = TAG_BASE + 4;
/// Dynamic processes (spawn, accept, connect, join): traffic inside the local group.
pub const TAG_DPM: i32 = TAG_BASE + 5;
const TAG_ICREATE_PEER: i32 = TAG_BASE + 0x10_0000;
const TAG_CREATE_GROUP: i32 = TAG_BASE + 0x20_0000;
const TAG_FROM_GROUP: i32 = TAG_BASE + 0x30_0000;
const TAG_FROM_GROUPS_LEADERS: i32 = TAG_BASE + 0x40_0000;
const TAG_FROM_GROUPS_LOCAL: i32 = TAG_BASE + 0x50_0000;
const USER_TAG_BITS: i32 = 0xF_FFFF;

/// Tag of `MPI_Comm_create_from_group` with string-tag hash `h` (see `session`).
pub fn from_group_tag(h: i32) -> i32 {
    TAG_FROM_GROUP + (h & USER_TAG_BITS)
}

/// Tag of the leaders' exchange of `MPI_Intercomm_create_from_groups`.
pub fn from_groups_leaders_tag(h: i32) -> i32 {
    TAG_FROM_GROUPS_LEADERS + (h & USER_TAG_BITS)
}

/// Tag of the traffic inside each group of `MPI_Intercomm_create_from_groups`.
pub fn from_groups_local_tag(h: i32) -> i32 {
    TAG_FROM_GROUPS_LOCAL + (h & USER_TAG_BITS)
}

/// Tag of the leaders' exchange of `MPI_Intercomm_create` with user tag `tag`.
pub fn icreate_peer_tag(tag: i32) -> i32 {
    TAG_ICREATE_PEER + (tag & USER_TAG_BITS)
}

/// Tag of `MPI_Comm_create_group` with user tag `tag`.
pub fn create_group_tag(tag: i32) -> i32 {
    TAG_CREATE_GROUP + (tag & USER_TAG_BITS)
}

/// One participant: where it is, and the source rank its messages carry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Member {
    pub world: u32,
    pub id: i32,
}

/// The participants of one exchange, in a context under a tag.
#[derive(Clone, Debug)]
pub struct Team {
    pub ctx: u32,
    pub tag: i32,
    pub members: Vec<Member>,
    /// This process's position in `members`.
    pub me: usize,
    /// The position of the root.
    pub root: usize,
}

fn malformed() -> Error {
    Error::new(
        ErrorClass::Intern,
        "malformed communicator-management message from a peer",
    )
}

/// Starts a send of `data` (owned by the request until it completes).
fn isend(to: Member, from_id: i32, ctx: u32, tag: i32, data: Vec<u8>) -> Result<ReqId> {
    runtime::with(|rt| {
        if rt.device.route(to.world) == Route::Unreachable {
            return err(
                ErrorClass::Other,
                format!(
                    "world rank {} is on another node and no network transport is available",
                    to.world
                ),
            );
        }
        let args = SendArgs {
            dest: to.world,
            ctx,
            src_rank: from_id,
            tag,
            buf: std::ptr::null(),
            len: 0,
            mode: SendMode::Standard,
        };
        Ok(rt.device.isend_staged(args, data))
    })
}

fn wait(id: ReqId) -> Result<()> {
    let st = runtime::block_on(|rt| {
        let done = rt.device.request(id).is_some_and(|r| r.is_complete());
        Ok(done.then(|| rt.device.finish(id)))
    })?;
    match ErrorClass::from(st.error) {
        ErrorClass::Success => Ok(()),
        c => err(c, "internal communicator-management message failed"),
    }
}

fn wait_all(ids: Vec<ReqId>) -> Result<()> {
    let mut first = Ok(());
    for id in ids {
        let r = wait(id);
        if first.is_ok() {
            first = r;
        }
    }
    first
}

/// Receives one message of any length from the process whose messages carry `src`.
fn recv(ctx: u32, src: i32, tag: i32) -> Result<Vec<u8>> {
    let spec = Spec { ctx, src, tag };
    let (id, buf) = runtime::block_on(|rt| {
        Ok(rt.device.probe(spec).map(|st| {
            let mut v = vec![0u8; st.bytes as usize];
            let id = rt.device.irecv(RecvArgs {
                spec,
                buf: v.as_mut_ptr(),
                cap: v.len(),
            });
            (id, v)
        }))
    })?;
    wait(id)?;
    Ok(buf)
}

/// Sends `data` to `peer` and receives its message, both on `ctx`/`tag`.
pub fn swap(peer: Member, my_id: i32, ctx: u32, tag: i32, data: Vec<u8>) -> Result<Vec<u8>> {
    let s = isend(peer, my_id, ctx, tag, data)?;
    let got = recv(ctx, peer.id, tag);
    let sent = wait(s);
    let got = got?;
    sent?;
    Ok(got)
}

impl Team {
    fn my_id(&self) -> i32 {
        self.members[self.me].id
    }

    pub fn is_root(&self) -> bool {
        self.me == self.root
    }

    /// Every member's `data` at the root (in member order); `None` elsewhere.
    pub fn gather(&self, data: Vec<u8>) -> Result<Option<Vec<Vec<u8>>>> {
        if !self.is_root() {
            let s = isend(
                self.members[self.root],
                self.my_id(),
                self.ctx,
                self.tag,
                data,
            )?;
            wait(s)?;
            return Ok(None);
        }
        let mut all = Vec::with_capacity(self.members.len());
        let mut data = Some(data);
        for (i, m) in self.members.iter().enumerate() {
            if i == self.me {
                all.push(data.take().unwrap_or_default());
            } else {
                all.push(recv(self.ctx, m.id, self.tag)?);
            }
        }
        Ok(Some(all))
    }

    /// The root's `data` at every member.
    pub fn bcast(&self, data: Option<Vec<u8>>) -> Result<Vec<u8>> {
        if !self.is_root() {
            return recv(self.ctx, self.members[self.root].id, self.tag);
        }
        let data =
            data.ok_or_else(|| Error::new(ErrorClass::Intern, "broadcast root without data"))?;
        let mut ids = Vec::new();
        for (i, m) in self.members.iter().enumerate() {
            if i != self.me {
                ids.push(isend(*m, self.my_id(), self.ctx, self.tag, data.clone())?);
            }
        }
        wait_all(ids)?;
        Ok(data)
    }

    /// Member `i` gets `parts[i]` of the root.
    pub fn scatter(&self, parts: Option<Vec<Vec<u8>>>) -> Result<Vec<u8>> {
        if !self.is_root() {
            return recv(self.ctx, self.members[self.root].id, self.tag);
        }
        let mut parts =
            parts.ok_or_else(|| Error::new(ErrorClass::Intern, "scatter root without data"))?;
        if parts.len() != self.members.len() {
            return err(ErrorClass::Intern, "scatter with the wrong number of parts");
        }
        let mine = std::mem::take(&mut parts[self.me]);
        let mut ids = Vec::new();
        for (i, (m, p)) in self.members.iter().zip(parts).enumerate() {
            if i != self.me {
                ids.push(isend(*m, self.my_id(), self.ctx, self.tag, p)?);
            }
        }
        wait_all(ids)?;
        Ok(mine)
    }
}

/// A little-endian encoder for the messages above.
#[derive(Default)]
pub struct Writer {
    pub buf: Vec<u8>,
}

impl Writer {
    pub fn i32(&mut self, v: i32) -> &mut Self {
        self.buf.extend_from_slice(&v.to_le_bytes());
        self
    }

    pub fn u32(&mut self, v: u32) -> &mut Self {
        self.buf.extend_from_slice(&v.to_le_bytes());
        self
    }

    /// A length-prefixed byte string.
    pub fn bytes(&mut self, b: &[u8]) -> &mut Self {
        self.u32(b.len() as u32);
        self.buf.extend_from_slice(b);
        self
    }

    /// A length-prefixed list of i32.
    pub fn i32s(&mut self, v: &[i32]) -> &mut Self {
        self.u32(v.len() as u32);
        for &x in v {
            self.i32(x);
        }
        self
    }

    /// A length-prefixed list of u32.
    pub fn u32s(&mut self, v: &[u32]) -> &mut Self {
        self.u32(v.len() as u32);
        for &x in v {
            self.u32(x);
        }
        self
    }

    pub fn finish(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.buf)
    }
}

/// The decoder matching [`Writer`]; every read is bounds-checked.
pub struct Reader<'a> {
    buf: &'a [u8],
}

impl<'a> Reader<'a> {
    pub fn new(buf: &'a [u8]) -> Reader<'a> {
        Reader { buf }
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        if self.buf.len() < n {
            return Err(malformed());
        }
        let (a, b) = self.buf.split_at(n);
        self.buf = b;
        Ok(a)
    }

    pub fn i32(&mut self) -> Result<i32> {
        Ok(i32::from_le_bytes(
            self.take(4)?.try_into().map_err(|_| malformed())?,
        ))
    }

    pub fn u32(&mut self) -> Result<u32> {
        Ok(u32::from_le_bytes(
            self.take(4)?.try_into().map_err(|_| malformed())?,
        ))
    }

    pub fn bytes(&mut self) -> Result<&'a [u8]> {
        let n = self.u32()? as usize;
        self.take(n)
    }

    fn len_of(&mut self, elem: usize) -> Result<usize> {
        let n = self.u32()? as usize;
        if n.checked_mul(elem).is_none_or(|b| b > self.buf.len()) {
            return Err(malformed());
        }
        Ok(n)
    }

    pub fn i32s(&mut self) -> Result<Vec<i32>> {
        let n = self.len_of(4)?;
        (0..n).map(|_| self.i32()).collect()
    }

    pub fn u32s(&mut self) -> Result<Vec<u32>> {
        let n = self.len_of(4)?;
        (0..n).map(|_| self.u32()).collect()
    }
}

/// Encodes an outcome that a root or leader shares with the others: `Ok(payload)` or
/// the error it found.
pub fn encode_outcome(r: &Result<Vec<u8>>) -> Vec<u8> {
    let mut w = Writer::default();
    match r {
        Ok(p) => {
            w.i32(0).bytes(p);
        }
        Err(e) => {
            w.i32(e.class as i32).bytes(e.message.as_bytes());
        }
    }
    w.finish()
}

/// Decodes [`encode_outcome`].
pub fn decode_outcome(b: &[u8]) -> Result<Vec<u8>> {
    let mut r = Reader::new(b);
    let class = r.i32()?;
    let body = r.bytes()?;
    if class == 0 {
        return Ok(body.to_vec());
    }
    let class = ErrorClass::from_code(class).unwrap_or(ErrorClass::Other);
    Err(Error::new(
        class,
        String::from_utf8_lossy(body).into_owned(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codec_round_trip_and_hostile_input() {
        let mut w = Writer::default();
        w.i32(-5).u32(7).bytes(b"abc").i32s(&[1, -2]).u32s(&[9]);
        let b = w.finish();
        let mut r = Reader::new(&b);
        assert_eq!(r.i32().unwrap(), -5);
        assert_eq!(r.u32().unwrap(), 7);
        assert_eq!(r.bytes().unwrap(), b"abc");
        assert_eq!(r.i32s().unwrap(), vec![1, -2]);
        assert_eq!(r.u32s().unwrap(), vec![9]);
        assert!(r.i32().is_err());
        // A length prefix larger than the message is refused without allocating.
        let mut bad = Writer::default();
        bad.u32(u32::MAX);
        assert!(Reader::new(&bad.finish()).i32s().is_err());
        let e = Error::new(ErrorClass::Rank, "bad");
        assert_eq!(
            decode_outcome(&encode_outcome(&Err(e.clone()))).unwrap_err(),
            e
        );
        assert_eq!(
            decode_outcome(&encode_outcome(&Ok(vec![1, 2]))).unwrap(),
            vec![1, 2]
        );
        assert!(decode_outcome(&[1]).is_err());
    }

    #[test]
    fn tags_stay_in_the_reserved_range() {
        for t in [0, 1, i32::MAX, 12345] {
            assert!((TAG_BASE..TAG_BASE + 0x100_0000).contains(&icreate_peer_tag(t)));
            assert!((TAG_BASE..TAG_BASE + 0x100_0000).contains(&create_group_tag(t)));
        }
    }
}
