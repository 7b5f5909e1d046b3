//! A single-producer single-consumer byte ring in shared memory.
//!
//! One ring carries the packets of one sender to one receiver on the same node. Records
//! start on a cache line and take whole lines: a 64-bit word (body length, flags, and a
//! bit that says the record is there) followed by the body. A small packet (header and a
//! few bytes of data) is therefore one cache line, which the receiver watches directly:
//! seeing the word change brings the packet with it, instead of a first miss on a shared
//! `tail` and a second on the record.
//!
//! The receiver only ever reads the word where the next record will start, and that word
//! is zero until the record is there: before the producer publishes a record, it clears
//! the word just past it (where the following record will go), so the consumer never
//! mistakes what an earlier lap left there for a new record. When a record does not fit
//! before the end of the data area, the producer writes it at offset zero first and then
//! a wrap marker where it would have started, so a record is always one contiguous slice
//! the consumer reads in place. A record may use at most half of the ring, which
//! guarantees it fits once the ring drains.
//!
//! Control words sit on separate cache lines: `tail` (written by the producer after each
//! record, read only by a rank deciding whether it may sleep), `head` (written by the
//! consumer when it hands space back) and `producer_waiting` (set by a producer that found
//! the ring full and is about to sleep; the consumer clears it and rings the producer's
//! doorbell).

use std::sync::atomic::{fence, AtomicU32, AtomicU64, Ordering};

/// Bytes of control area before the data area of each ring.
pub const CONTROL_BYTES: usize = 384;
/// Records start on this boundary (a cache line).
const LINE: usize = 64;
const WORD: usize = 8;
/// Record word flag: the record is there (a cleared word reads as "not yet").
const PRESENT: u64 = 1 << 33;
/// Record word flag: skip to offset zero of the data area.
const WRAP: u64 = 1 << 32;
const LEN_MASK: u64 = 0xffff_ffff;

#[repr(C)]
struct Control {
    tail: AtomicU64,
    _p0: [u8; 120],
    head: AtomicU64,
    _p1: [u8; 120],
    producer_waiting: AtomicU32,
    _p2: [u8; 124],
}

const _: () = assert!(std::mem::size_of::<Control>() == CONTROL_BYTES);
const _: () = assert!(CONTROL_BYTES % LINE == 0);

/// Total bytes a ring with `cap` data bytes occupies in the segment.
pub const fn ring_bytes(cap: usize) -> usize {
    CONTROL_BYTES + cap
}

/// Largest body a ring of `cap` bytes accepts.
pub const fn max_body(cap: usize) -> usize {
    cap / 2 - WORD
}

fn record_len(body: usize) -> usize {
    (WORD + body).next_multiple_of(LINE)
}

/// The record word at byte `pos` of a data area.
///
/// # Safety
/// `data + pos` must be 8-byte aligned and inside a mapped data area.
unsafe fn word_at<'a>(data: *const u8, pos: usize) -> &'a AtomicU64 {
    // SAFETY: per the contract; every access to record words is atomic.
    unsafe { &*(data.add(pos) as *const AtomicU64) }
}

/// The sending end of a ring.
pub struct Producer {
    ctl: *const Control,
    data: *mut u8,
    cap: u64,
    tail: u64,
    head_cache: u64,
}

/// The receiving end of a ring.
pub struct Consumer {
    ctl: *const Control,
    data: *const u8,
    cap: u64,
    head: u64,
    /// Head value last published to the producer.
    published: u64,
}

// SAFETY: each end is owned by exactly one process/thread; the pointers refer to a
// shared mapping that outlives both ends (the transport keeps the mapping alive).
unsafe impl Send for Producer {}
// SAFETY: as above.
unsafe impl Send for Consumer {}

/// Initialises a ring's control area in freshly zeroed memory.
///
/// # Safety
/// `base` must point to `ring_bytes(cap)` writable bytes, 128-byte aligned, whose data
/// area is zeroed.
pub unsafe fn init(base: *mut u8) {
    let ctl = base as *const Control;
    // SAFETY: per the contract the control area is valid and aligned.
    unsafe {
        (*ctl).tail.store(0, Ordering::Relaxed);
        (*ctl).head.store(0, Ordering::Relaxed);
        (*ctl).producer_waiting.store(0, Ordering::Relaxed);
    }
}

/// True when the ring at `base` holds records its consumer has not yet handed back
/// (used by a rank deciding whether it may sleep; the device hands consumed space back
/// whenever it finds a ring empty, so this is exact for an idle rank).
///
/// # Safety
/// `base` must point to an initialised ring that stays mapped during the call.
pub unsafe fn has_unconsumed(base: *const u8) -> bool {
    let ctl = base as *const Control;
    // SAFETY: valid per contract; only atomics are read.
    unsafe { (*ctl).tail.load(Ordering::SeqCst) != (*ctl).head.load(Ordering::SeqCst) }
}

/// Where a consumer's next record will appear: a rank waiting without the device lock
/// watches these words (see [`Consumer::watch`]).
#[derive(Clone, Copy)]
pub struct Watch(*const AtomicU64);

static NEVER: AtomicU64 = AtomicU64::new(0);

impl Watch {
    /// A word that never reports a record (fills unused watch slots).
    pub const NONE: Watch = Watch(&NEVER);

    /// True when a record (or a wrap marker) is there.
    ///
    /// # Safety
    /// The ring's mapping must still be mapped (the caller holds the node).
    #[inline]
    pub unsafe fn ready(&self) -> bool {
        // SAFETY: per the contract the word is mapped; it is only accessed atomically.
        unsafe { (*self.0).load(Ordering::Acquire) != 0 }
    }
}

impl Producer {
    /// # Safety
    /// `base` must point to an initialised ring of `cap` data bytes (power of two, at
    /// least 4 KiB) that stays mapped for the life of the producer, and no other producer
    /// may exist.
    pub unsafe fn new(base: *mut u8, cap: usize) -> Producer {
        let ctl = base as *const Control;
        // SAFETY: valid per contract.
        let tail = unsafe { (*ctl).tail.load(Ordering::Acquire) };
        Producer {
            ctl,
            // SAFETY: the data area follows the control area inside the ring.
            data: unsafe { base.add(CONTROL_BYTES) },
            cap: cap as u64,
            tail,
            head_cache: tail,
        }
    }

    fn ctl(&self) -> &Control {
        // SAFETY: the mapping outlives the producer (constructor contract).
        unsafe { &*self.ctl }
    }

    fn free(&self) -> u64 {
        self.cap - (self.tail - self.head_cache)
    }

    /// Appends one record whose body is the concatenation of `parts`. Returns false
    /// (writing nothing) when the ring lacks space now.
    #[cfg(test)]
    pub fn try_push(&mut self, parts: &[&[u8]]) -> bool {
        let body: usize = parts.iter().map(|p| p.len()).sum();
        self.try_push_with(body, |mut dst| {
            for p in parts {
                let (head, rest) = dst.split_at_mut(p.len());
                head.copy_from_slice(p);
                dst = rest;
            }
        })
    }

    /// Appends one record of `body` bytes that `fill` writes in place (it is handed the
    /// whole body, uninitialised bytes zeroed or stale, and must write all of it).
    /// Returns false, calling nothing, when the ring lacks space now.
    #[inline]
    pub fn try_push_with(&mut self, body: usize, fill: impl FnOnce(&mut [u8])) -> bool {
        debug_assert!(body <= max_body(self.cap as usize));
        let need = record_len(body) as u64;
        let pos = self.tail & (self.cap - 1);
        let to_end = self.cap - pos;
        let wraps = to_end < need;
        let total = if wraps { need + to_end } else { need };
        // Strictly more than the record: the word after it must be free to clear.
        if self.free() <= total {
            self.head_cache = self.ctl().head.load(Ordering::Acquire);
            if self.free() <= total {
                return false;
            }
        }
        let at = if wraps { 0 } else { pos as usize };
        let end = (at + need as usize) & (self.cap as usize - 1);
        // SAFETY: [at, at + need) and the word at `end` lie inside the data area and in
        // free space owned by the producer (checked above); the consumer reads none of it
        // before the record word (or the wrap marker) is published below.
        let dst = unsafe {
            word_at(self.data, end).store(0, Ordering::Relaxed);
            std::slice::from_raw_parts_mut(self.data.add(at + WORD), body)
        };
        fill(dst);
        // SAFETY: `at` and `pos` are line-aligned offsets inside the data area.
        unsafe {
            word_at(self.data, at).store(PRESENT | body as u64, Ordering::Release);
            if wraps {
                word_at(self.data, pos as usize).store(PRESENT | WRAP, Ordering::Release);
            }
        }
        self.tail += total;
        self.ctl().tail.store(self.tail, Ordering::Release);
        true
    }

    /// Announces that this producer will sleep until the consumer frees space. Returns
    /// true if space appeared meanwhile (the caller should retry instead of sleeping).
    pub fn announce_waiting(&mut self) -> bool {
        self.ctl().producer_waiting.store(1, Ordering::SeqCst);
        self.head_cache = self.ctl().head.load(Ordering::SeqCst);
        self.free() >= self.cap / 2
    }
}

impl Consumer {
    /// # Safety
    /// As for [`Producer::new`], for the single consumer.
    pub unsafe fn new(base: *mut u8, cap: usize) -> Consumer {
        let ctl = base as *const Control;
        // SAFETY: valid per contract.
        let head = unsafe { (*ctl).head.load(Ordering::Acquire) };
        Consumer {
            ctl,
            // SAFETY: the data area follows the control area.
            data: unsafe { base.add(CONTROL_BYTES) } as *const u8,
            cap: cap as u64,
            head,
            published: head,
        }
    }

    fn ctl(&self) -> &Control {
        // SAFETY: the mapping outlives the consumer (constructor contract).
        unsafe { &*self.ctl }
    }

    fn next_word(&self) -> &AtomicU64 {
        // SAFETY: head is line-aligned, so the word is aligned and inside the data area.
        unsafe { word_at(self.data, (self.head & (self.cap - 1)) as usize) }
    }

    /// True when a record is waiting (a cheap check for idle polling).
    #[inline]
    pub fn has_data(&self) -> bool {
        self.next_word().load(Ordering::Acquire) != 0
    }

    /// The word to watch for the next record. It stays meaningful until this consumer
    /// moves on; a stale one merely reports a record that was already taken.
    pub fn watch(&self) -> Watch {
        Watch(self.next_word())
    }

    /// The body of the next record, if any, without consuming it. The slice stays valid
    /// until [`Consumer::pop`].
    #[inline]
    pub fn peek(&mut self) -> Option<&[u8]> {
        loop {
            let word = self.next_word().load(Ordering::Acquire);
            if word == 0 {
                return None;
            }
            let pos = (self.head & (self.cap - 1)) as usize;
            if word & WRAP != 0 {
                self.head += self.cap - pos as u64;
                continue;
            }
            let len = (word & LEN_MASK) as usize;
            if len > max_body(self.cap as usize) || pos + WORD + len > self.cap as usize {
                // A corrupt record can only come from a broken peer; treat it as empty
                // rather than read outside the ring.
                return None;
            }
            // SAFETY: the record word was published (Acquire above) after its body,
            // which lies inside the data area and is not written again until head moves
            // past it.
            return Some(unsafe { std::slice::from_raw_parts(self.data.add(pos + WORD), len) });
        }
    }

    /// Consumes the record last returned by [`Consumer::peek`].
    #[inline]
    pub fn pop(&mut self) {
        let word = self.next_word().load(Ordering::Relaxed);
        self.head += record_len((word & LEN_MASK) as usize) as u64;
    }

    /// Consumes the record last returned by [`Consumer::peek`] and hands consumed space
    /// back once an eighth of the ring waits (otherwise the caller hands it back when it
    /// finds the ring empty). Returns true when the producer must be woken, as
    /// [`Consumer::publish`].
    #[inline]
    pub fn pop_and_hand_back(&mut self) -> bool {
        self.pop();
        self.head - self.published >= self.cap / 8 && self.publish()
    }

    /// Makes consumed space available to the producer. Returns true when the producer
    /// had announced it is waiting for space (the caller must then wake it).
    pub fn publish(&mut self) -> bool {
        if self.head == self.published {
            return false;
        }
        self.published = self.head;
        self.ctl().head.store(self.head, Ordering::Release);
        fence(Ordering::SeqCst);
        let c = self.ctl();
        if c.producer_waiting.load(Ordering::Relaxed) != 0 {
            c.producer_waiting.store(0, Ordering::Relaxed);
            return true;
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[repr(C, align(128))]
    struct Mem([u8; CONTROL_BYTES + 4096]);

    fn pair(mem: &mut Mem) -> (Producer, Consumer) {
        let base = mem.0.as_mut_ptr();
        // SAFETY: the buffer is large and aligned enough for a 4096-byte ring.
        unsafe {
            init(base);
            (Producer::new(base, 4096), Consumer::new(base, 4096))
        }
    }

    #[test]
    fn fifo_with_wraps() {
        let mut mem = Box::new(Mem([0; CONTROL_BYTES + 4096]));
        let (mut p, mut c) = pair(&mut mem);
        let mut next_send = 0u32;
        let mut next_recv = 0u32;
        for round in 0..2000u32 {
            let n = (round * 37 % 1500) as usize;
            while p.try_push(&[&next_send.to_le_bytes(), &vec![(next_send % 256) as u8; n]]) {
                next_send += 1;
                if next_send % 3 == 0 {
                    break;
                }
            }
            while let Some(body) = c.peek() {
                let id = u32::from_le_bytes(body[..4].try_into().unwrap());
                assert_eq!(id, next_recv);
                assert!(body[4..].iter().all(|&b| b == (id % 256) as u8));
                next_recv += 1;
                c.pop();
            }
            c.publish();
        }
        assert_eq!(next_send, next_recv);
        assert!(next_send > 1000);
    }

    #[test]
    fn full_ring_refuses_and_waiting_flag_reported() {
        let mut mem = Box::new(Mem([0; CONTROL_BYTES + 4096]));
        let (mut p, mut c) = pair(&mut mem);
        let big = vec![1u8; max_body(4096)];
        assert!(p.try_push(&[&big]));
        // A second half-ring record would leave no word to clear after it.
        assert!(!p.try_push(&[&big]));
        assert!(p.try_push(&[&[7u8; 100]]));
        assert!(!p.announce_waiting());
        assert_eq!(c.peek().map(|b| b.len()), Some(max_body(4096)));
        c.pop();
        assert_eq!(c.peek(), Some(&[7u8; 100][..]));
        c.pop();
        assert_eq!(c.peek(), None);
        assert!(c.publish());
        // Wraps: the record goes to offset zero behind a wrap marker.
        assert!(p.try_push(&[&big]));
        assert_eq!(c.peek(), Some(&big[..]));
    }

    #[test]
    fn cross_thread_stream() {
        let mut mem = Box::new(Mem([0; CONTROL_BYTES + 4096]));
        let (mut p, mut c) = pair(&mut mem);
        let t = std::thread::spawn(move || {
            for i in 0..100_000u64 {
                let len = (i % 200) as usize;
                let payload = vec![(i % 251) as u8; len];
                while !p.try_push(&[&i.to_le_bytes(), &payload]) {
                    std::hint::spin_loop();
                }
            }
        });
        let mut expect = 0u64;
        while expect < 100_000 {
            if let Some(b) = c.peek() {
                let i = u64::from_le_bytes(b[..8].try_into().unwrap());
                assert_eq!(i, expect);
                assert_eq!(b.len() - 8, (i % 200) as usize);
                assert!(b[8..].iter().all(|&x| x == (i % 251) as u8));
                c.pop();
                c.publish();
                expect += 1;
            }
        }
        t.join().unwrap();
        drop(mem);
    }
}
