//! A single-producer single-consumer byte ring in shared memory.
//!
//! One ring carries the packets of one sender to one receiver on the same node. Records
//! are variable-length and 8-byte aligned: a 64-bit word (body length, flags) followed by
//! the body. When a record does not fit before the end of the data area, the producer
//! writes a wrap marker and starts again at offset zero, so a record is always one
//! contiguous slice the consumer can read in place. A record may use at most half of
//! the ring, which guarantees it fits once the ring drains.
//!
//! Control words sit on separate cache lines: `tail` (written by the producer), `head`
//! (written by the consumer) and `producer_waiting` (set by a producer that found the ring
//! full and is about to sleep; the consumer clears it and rings the producer's doorbell).

use std::sync::atomic::{fence, AtomicU32, AtomicU64, Ordering};

/// Bytes of control area before the data area of each ring.
pub const CONTROL_BYTES: usize = 384;
const WRAP: u64 = 1 << 32;
const WORD: usize = 8;

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

/// Total bytes a ring with `cap` data bytes occupies in the segment.
pub const fn ring_bytes(cap: usize) -> usize {
    CONTROL_BYTES + cap
}

/// Largest body a ring of `cap` bytes accepts.
pub const fn max_body(cap: usize) -> usize {
    cap / 2 - WORD
}

fn record_len(body: usize) -> usize {
    (WORD + body).next_multiple_of(WORD)
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
/// `base` must point to `ring_bytes(cap)` writable bytes, 128-byte aligned.
pub unsafe fn init(base: *mut u8) {
    let ctl = base as *const Control;
    // SAFETY: per the contract the control area is valid and aligned.
    unsafe {
        (*ctl).tail.store(0, Ordering::Relaxed);
        (*ctl).head.store(0, Ordering::Relaxed);
        (*ctl).producer_waiting.store(0, Ordering::Relaxed);
    }
}

/// True when the ring at `base` holds records its consumer has not yet published
/// as consumed (used by a sleeping rank that does not own its consumers right now).
///
/// # Safety
/// `base` must point to an initialised ring that stays mapped during the call.
pub unsafe fn has_unconsumed(base: *const u8) -> bool {
    let ctl = base as *const Control;
    // SAFETY: valid per contract; only atomics are read.
    unsafe { (*ctl).tail.load(Ordering::SeqCst) != (*ctl).head.load(Ordering::SeqCst) }
}

impl Producer {
    /// # Safety
    /// `base` must point to an initialised ring of `cap` data bytes (power of two) that
    /// stays mapped for the life of the producer, and no other producer may exist.
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
    pub fn try_push_with(&mut self, body: usize, fill: impl FnOnce(&mut [u8])) -> bool {
        debug_assert!(body <= max_body(self.cap as usize));
        let need = record_len(body) as u64;
        let pos = self.tail & (self.cap - 1);
        let to_end = self.cap - pos;
        let total = if to_end < need { need + to_end } else { need };
        if self.free() < total {
            self.head_cache = self.ctl().head.load(Ordering::Acquire);
            if self.free() < total {
                return false;
            }
        }
        if to_end < need {
            // SAFETY: pos is 8-aligned and inside the data area, and [tail, tail+to_end)
            // is free space owned by the producer.
            unsafe { (self.data.add(pos as usize) as *mut u64).write(WRAP) };
            self.tail += to_end;
        }
        let pos = (self.tail & (self.cap - 1)) as usize;
        // SAFETY: [pos, pos+need) lies inside the data area (no wrap needed now) and is
        // free space owned by the producer until `tail` is published; the consumer does
        // not read it before then.
        let dst = unsafe {
            (self.data.add(pos) as *mut u64).write(body as u64);
            std::slice::from_raw_parts_mut(self.data.add(pos + WORD), body)
        };
        fill(dst);
        self.tail += need;
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

    /// True when a record is waiting (a cheap check for idle polling).
    #[inline]
    pub fn has_data(&self) -> bool {
        self.ctl().tail.load(Ordering::Acquire) != self.head
    }

    /// The body of the next record, if any, without consuming it. The slice stays valid
    /// until [`Consumer::pop`].
    pub fn peek(&mut self) -> Option<&[u8]> {
        let tail = self.ctl().tail.load(Ordering::Acquire);
        loop {
            if tail == self.head {
                return None;
            }
            let pos = (self.head & (self.cap - 1)) as usize;
            // SAFETY: [head, tail) was published by the producer (Acquire above) and is
            // not written again until head moves past it.
            let word = unsafe { (self.data.add(pos) as *const u64).read() };
            if word & WRAP != 0 {
                self.head += self.cap - pos as u64;
                continue;
            }
            let len = (word & 0xffff_ffff) as usize;
            if len > max_body(self.cap as usize) || pos + WORD + len > self.cap as usize {
                // A corrupt record can only come from a broken peer; treat it as empty
                // rather than read outside the ring.
                return None;
            }
            // SAFETY: the body lies inside the data area and inside the published range.
            return Some(unsafe { std::slice::from_raw_parts(self.data.add(pos + WORD), len) });
        }
    }

    /// Consumes the record last returned by [`Consumer::peek`].
    pub fn pop(&mut self) {
        let pos = (self.head & (self.cap - 1)) as usize;
        // SAFETY: as in peek; the record was validated there.
        let word = unsafe { (self.data.add(pos) as *const u64).read() };
        self.head += record_len((word & 0xffff_ffff) as usize) as u64;
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
        assert!(p.try_push(&[&big]));
        assert!(!p.try_push(&[&big]));
        assert!(!p.announce_waiting());
        assert!(c.peek().is_some());
        c.pop();
        assert!(c.publish());
        assert!(p.try_push(&[&big]));
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
