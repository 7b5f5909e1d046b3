//! The rendezvous protocol of large messages: the receiver of an `Rts` copies the
//! message itself (its own memory, or a single-copy pull from a local peer) and answers
//! `Fin`, or answers `Cts` and the sender streams `Data` pieces, which the receiver
//! copies (or unpacks) into the receive buffer as they land.

use super::{Io, Payload, Protocol};
use crate::device::packet::{Header, Kind, FLAG_IOVLIST, FLAG_NONCONTIG};
use crate::device::request::{Layout, Op, RecvState, ReqId, Request};
use crate::transport::Route;
use std::sync::Arc;

/// First piece of a message streamed through a ring (automatic piece size): the
/// receiver starts copying out after this many bytes, whatever the largest piece.
const FIRST_PIECE: u64 = 32 * 1024;

/// A rendezvous message being streamed to a receiver that asked for it with `Cts`.
pub(crate) struct Stream {
    pub(crate) dest: u32,
    pub(crate) sreq: ReqId,
    pub(crate) rreq: u32,
    pub(crate) buf: *const u8,
    pub(crate) len: u64,
    pub(crate) off: u64,
    /// The send buffer when it is not contiguous (`buf` is then its base only).
    pub(crate) layout: Option<Arc<Layout>>,
    /// For a layout over TCP: the next piece, packed once (`piece_off` is its stream
    /// offset, `u64::MAX` for none), so a socket that has no room now costs no repacking.
    pub(crate) piece: Vec<u8>,
    pub(crate) piece_off: u64,
}

/// The size of the piece at byte `off` of a stream of `len` bytes: pieces grow with
/// the offset (each as large as everything sent before it) from `first` up to
/// `largest`, and to at most a quarter of the message (so that the sender's copy in
/// and the receiver's copy out overlap), but never below `first`.
///
/// A message then reaches the receiver after a small first piece, and a long one moves
/// in large pieces. On the 2-core development VM (10 interleaved rounds each), pieces
/// growing to 256 KiB gave 1-4 MiB window bandwidth 1.29-1.40x Open MPI's against
/// 1.09-1.15x with 32 KiB pieces, and bidirectional bandwidth 1.24x against 1.01-1.11x.
pub(crate) fn stream_piece(off: u64, len: u64, first: u64, largest: u64) -> u64 {
    let cap = largest.min((len / 4).max(first));
    off.max(first).min(cap).min(len - off)
}

impl Protocol {
    /// Writes what there is room for of every rendezvous stream (in pieces sized by
    /// [`stream_piece`]); completes the sends whose last byte has left. Returns true if
    /// anything was written.
    pub(crate) fn pump_streams(&mut self, io: &mut impl Io) -> bool {
        if self.streams.is_empty() {
            return false;
        }
        let mut did = false;
        let largest = self.cfg.shm_chunk_bytes as u64;
        let first = if self.cfg.shm_chunk_fixed {
            largest
        } else {
            FIRST_PIECE.min(largest)
        };
        let mut i = 0;
        while i < self.streams.len() {
            let s = &self.streams[i];
            let (dest, rreq, buf, len, mut off, sreq) =
                (s.dest, s.rreq, s.buf, s.len, s.off, s.sreq);
            let may_write = self.pending[dest as usize].is_empty();
            let route = self.route(dest);
            // Toward an IMPI peer a contiguous stream leaves straight from the send
            // buffer (the protocol stages non-contiguous ones into one).
            if route == Route::Tcp || (route == Route::Impi && self.streams[i].layout.is_none()) {
                let s = &mut self.streams[i];
                let (progressed, done) = if route == Route::Tcp {
                    io.pump_tcp_stream(s, may_write)
                } else {
                    io.pump_impi_stream(s, may_write)
                };
                did |= progressed;
                if done {
                    self.streams.swap_remove(i);
                    self.complete(sreq, io);
                } else {
                    i += 1;
                }
                continue;
            }
            if may_write {
                let layout = self.streams[i].layout.as_deref();
                while off < len {
                    let n = stream_piece(off, len, first, largest);
                    let mut h = Header::new(Kind::Data);
                    h.rreq = rreq;
                    h.addr = off;
                    h.len = n;
                    let written = match layout {
                        Some(l) => io.try_write_packed(dest, &h, l, off, n),
                        None => {
                            // SAFETY: [buf+off, buf+off+n) lies within the send buffer,
                            // which stays valid until this send completes after its last
                            // piece.
                            let piece = unsafe {
                                std::slice::from_raw_parts(buf.add(off as usize), n as usize)
                            };
                            io.try_write_piece(dest, &h, piece, len)
                        }
                    };
                    if !written {
                        break;
                    }
                    off += n;
                    did = true;
                }
            }
            if off >= len {
                self.streams.swap_remove(i);
                self.complete(sreq, io);
            } else {
                self.streams[i].off = off;
                i += 1;
            }
        }
        did
    }

    /// Receive `id` matched rendezvous message `hdr` from `from`: copy it at once when
    /// it is our own or a single-copy pull is allowed (then `Fin`), else ask for a
    /// stream with `Cts`. A pull that fails disables pulls and falls back to `Cts`.
    pub(super) fn start_pull(&mut self, id: ReqId, from: u32, hdr: &Header, io: &mut impl Io) {
        self.restage_ext32(id, from);
        let a = self.recv_args(id);
        let n = self.set_recv_status(id, hdr, a.cap);
        if self.is_lost(from) {
            self.fail(id, io);
            return;
        }
        let layout = self.reqs.get(id).and_then(|r| r.layout().cloned());
        let mut pulled = false;
        if n == 0 {
            pulled = true;
        } else if hdr.flags & FLAG_NONCONTIG != 0 {
            // The sender's data is scattered: read it piece by piece when it published
            // its piece list, else it streams packed pieces after Cts.
            if hdr.flags & FLAG_IOVLIST != 0
                && self.cma_ok
                && matches!(self.route(from), Route::Shm(_))
            {
                match io.pull_listed(from, hdr, n, a.buf, layout.as_deref()) {
                    Ok(()) => pulled = true,
                    Err(_) => self.cma_ok = false,
                }
            }
        } else if from == self.me {
            // SAFETY: the sender's buffer (our own memory) holds hdr.len >= n bytes and
            // stays valid until we send Fin; the receive buffer holds cap >= n bytes
            // (packed size of the layout's elements, when it has one).
            unsafe {
                match &layout {
                    Some(l) => {
                        l.unpack_at(0, std::slice::from_raw_parts(hdr.addr as *const u8, n));
                    }
                    None => std::ptr::copy(hdr.addr as *const u8, a.buf, n),
                }
            }
            pulled = true;
        } else if self.cma_ok && self.oversubscribed && matches!(self.route(from), Route::Shm(_)) {
            // With a core per rank, the message streams through the ring (the sender
            // copies in while the receiver copies or unpacks out, in parallel, the ring
            // staying in cache): about twice the rate of one process pulling alone with
            // process_vm_readv. Oversubscribed, the single copy wins.
            match io.pull(from, hdr.addr as usize, n, a.buf, layout.as_deref()) {
                Ok(()) => pulled = true,
                Err(_) => self.cma_ok = false,
            }
        }
        if pulled {
            let mut h = Header::new(Kind::Fin);
            h.sreq = hdr.sreq;
            self.complete(id, io);
            self.post_packet(from, h, Payload::Empty, None, io);
        } else {
            if let Some(Request {
                op: Op::Recv(_, st),
                ..
            }) = self.reqs.get_mut(id)
            {
                *st = RecvState::Streaming {
                    want: n as u64,
                    got: 0,
                    from,
                };
            }
            let mut h = Header::new(Kind::Cts);
            h.sreq = hdr.sreq;
            h.rreq = id;
            h.len = n as u64;
            self.post_packet(from, h, Payload::Empty, None, io);
        }
    }

    pub(super) fn receive_piece(&mut self, id: ReqId, off: u64, data: &[u8], io: &mut impl Io) {
        if let Some(l) = self.streaming_layout(id, off, data.len() as u64) {
            // SAFETY: the receive buffer holds the layout's elements and the piece lies
            // inside the packed bytes the request wants (checked above).
            unsafe { l.unpack_at(off as usize, data) };
            self.piece_landed(id, data.len() as u64, io);
            return;
        }
        let Some(dst) = self.piece_target(id, off, data.len() as u64) else {
            return;
        };
        // SAFETY: piece_target checked that [off, off+len) lies inside the receive buffer.
        unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), dst, data.len()) };
        self.ext32_landed(id, off, data.len() as u64);
        self.piece_landed(id, data.len() as u64, io);
    }

    /// The layout of streamed receive `id` when it has one and a piece of `len` bytes
    /// at `off` falls inside what it wants.
    fn streaming_layout(&self, id: ReqId, off: u64, len: u64) -> Option<Arc<Layout>> {
        let Some(
            r @ Request {
                op: Op::Recv(_, RecvState::Streaming { want, .. }),
                ..
            },
        ) = self.reqs.get(id)
        else {
            return None;
        };
        let l = r.layout()?;
        (off.checked_add(len)? <= *want).then(|| l.clone())
    }

    /// Where a piece of `len` bytes at `off` of streamed receive `id` goes; None if the
    /// request is not streaming or the range falls outside what it wants. A receive
    /// with a layout gets its bounce buffer, unpacked when the piece has landed
    /// ([`Protocol::data_landed`]).
    pub(crate) fn piece_target(&mut self, id: ReqId, off: u64, len: u64) -> Option<*mut u8> {
        self.piece_at(id, off, len, true)
    }

    /// [`Protocol::piece_target`] where the piece lands in the receive buffer itself
    /// (a receive without a layout), else None: the bytes after it are then the
    /// message's next ones.
    pub(crate) fn piece_span(&mut self, id: ReqId, off: u64, len: u64) -> Option<*mut u8> {
        self.piece_at(id, off, len, false)
    }

    fn piece_at(&mut self, id: ReqId, off: u64, len: u64, bounce: bool) -> Option<*mut u8> {
        let r = self.reqs.get_mut(id)?;
        let Op::Recv(a, RecvState::Streaming { want, .. }) = r.op else {
            return None;
        };
        if off.checked_add(len)? > want {
            return None;
        }
        if let Some(x) = r.extra.as_mut().filter(|x| x.layout.is_some()) {
            if !bounce {
                return None;
            }
            x.bounce.resize(len as usize, 0);
            return Some(x.bounce.as_mut_ptr());
        }
        // SAFETY: off <= want <= cap, inside the receive buffer.
        Some(unsafe { a.buf.add(off as usize) })
    }

    /// A `Data` piece (`hdr.rreq`, offset `hdr.addr`, `hdr.len` bytes) was written by
    /// the transport where [`Protocol::piece_target`] said: unpack it from the bounce
    /// buffer when the receive has a layout, and count it.
    pub(crate) fn data_landed(&mut self, hdr: &Header, io: &mut impl Io) {
        if let Some(x) = self.reqs.get(hdr.rreq).and_then(|r| r.extra()) {
            if let Some(l) = &x.layout {
                let n = (hdr.len as usize).min(x.bounce.len());
                // SAFETY: the receive buffer holds the layout's elements; piece_target
                // checked that the piece lies inside the packed bytes wanted.
                unsafe { l.unpack_at(hdr.addr as usize, &x.bounce[..n]) };
            }
        }
        self.ext32_landed(hdr.rreq, hdr.addr, hdr.len);
        self.piece_landed(hdr.rreq, hdr.len, io);
    }

    /// Counts `len` bytes of streamed receive `id` as arrived; completes it when all did.
    fn piece_landed(&mut self, id: ReqId, len: u64, io: &mut impl Io) {
        let Some(Request {
            op: Op::Recv(_, RecvState::Streaming { want, got, .. }),
            ..
        }) = self.reqs.get_mut(id)
        else {
            return;
        };
        *got += len;
        if *got >= *want {
            self.complete(id, io);
        }
    }
}
