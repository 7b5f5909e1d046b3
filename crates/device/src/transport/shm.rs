//! The node's shared-memory segment: a ring for each ordered pair of local ranks and a
//! futex doorbell for each rank.
//!
//! Layout: a 4 KiB header page (magic, geometry), then one 128-byte doorbell per local
//! rank, then `nlocal * nlocal` rings (ring `from -> to` at index `from * nlocal + to`;
//! the diagonal is unused). The lowest world rank of the node creates and initialises
//! the segment as an anonymous memfd and hands its descriptor to the other local ranks
//! (`fd_share`): it never has a name, so nothing is left in `/dev/shm` whenever and
//! however the job ends.

use super::ring::{self, Consumer, Producer};
use crate::sys::{futex, shm};
use std::io;
use std::os::fd::OwnedFd;
use std::sync::atomic::{fence, AtomicU32, AtomicU64, Ordering};
use std::time::Duration;

const MAGIC: u64 = 0x6f78_6d70_6973_686d; // "oxmpishm"
const HEADER_BYTES: usize = 4096;
const BELL_BYTES: usize = 128;
/// `Doorbell::sleeping` bit of a rank's thread sleeping in its TCP epoll set; the bits
/// below it count the rank's threads sleeping on the futex (several with
/// `MPI_THREAD_MULTIPLE` or the progress thread, see `oxmpi-core`'s `runtime`).
const SLEEP_EPOLL: u32 = 1 << 31;

#[repr(C)]
struct SegHeader {
    magic: AtomicU64,
    nlocal: AtomicU64,
    ring_cap: AtomicU64,
}

/// Words of a doorbell's sender mask: nodes of up to 448 ranks track who sends.
pub const SENDER_WORDS: usize = 7;

/// A rank's doorbell: senders ring it when the rank sleeps waiting for packets. It also
/// holds the mask of local ranks that send to the rank, whose rings it polls: a sender
/// sets its bit when it finds it clear after writing a packet (it reads this line after
/// each packet anyway, for `sleeping`), and the rank clears the bits of peers that
/// stopped sending. Both are rare, so the line stays in every reader's cache.
#[repr(C)]
pub struct Doorbell {
    seq: AtomicU32,
    sleeping: AtomicU32,
    senders: [AtomicU64; SENDER_WORDS],
    /// Counts the sleeps the rank's threads began (each bumps it before it blocks): a
    /// sender that already woke sleep `n` need not wake it again for every packet it
    /// writes while the sleeper gets back on a core.
    naps: AtomicU32,
}

const _: () = assert!(std::mem::size_of::<Doorbell>() <= BELL_BYTES);

/// How long a rank that announced it sleeps keeps checking for work before it blocks
/// (see [`ShmNode::notify`]).
pub const SLEEP_GRACE: Duration = Duration::from_micros(3);

/// Polls `has_work` for [`SLEEP_GRACE`]; true as soon as it says there is work.
fn work_within_grace(has_work: &impl Fn() -> bool) -> bool {
    let start = std::time::Instant::now();
    loop {
        if has_work() {
            return true;
        }
        if start.elapsed() >= SLEEP_GRACE {
            return false;
        }
        std::hint::spin_loop();
    }
}

/// This process's view of the node segment.
pub struct ShmNode {
    map: shm::Mapping,
    nlocal: usize,
    me: usize,
    ring_cap: usize,
    /// Per local rank: the value of its `naps` when this process last woke it (see
    /// [`ShmNode::notify`]); process-local memory.
    woken: Box<[AtomicU32]>,
}

fn segment_bytes(nlocal: usize, ring_cap: usize) -> usize {
    HEADER_BYTES + nlocal * BELL_BYTES + nlocal * nlocal * ring::ring_bytes(ring_cap)
}

impl ShmNode {
    /// Creates and initialises the segment (called by the node's leader); the
    /// descriptor is what the other local ranks map ([`ShmNode::open`]).
    pub fn create(nlocal: usize, me: usize, ring_cap: usize) -> io::Result<(ShmNode, OwnedFd)> {
        let (fd, map) = shm::create_anonymous(segment_bytes(nlocal, ring_cap))?;
        let node = ShmNode {
            map,
            nlocal,
            me,
            ring_cap,
            woken: (0..nlocal).map(|_| AtomicU32::new(0)).collect(),
        };
        for from in 0..nlocal {
            for to in 0..nlocal {
                // SAFETY: ring_base is inside the fresh mapping and 128-byte aligned.
                unsafe { ring::init(node.ring_base(from, to)) };
            }
        }
        node.populate_rings();
        let h = node.header();
        h.nlocal.store(nlocal as u64, Ordering::Relaxed);
        h.ring_cap.store(ring_cap as u64, Ordering::Relaxed);
        h.magic.store(MAGIC, Ordering::Release);
        Ok((node, fd))
    }

    /// Maps the segment the leader created (its descriptor) and checks its geometry.
    pub fn open(fd: &OwnedFd, nlocal: usize, me: usize, ring_cap: usize) -> io::Result<ShmNode> {
        let map = shm::map_fd_checked(fd, segment_bytes(nlocal, ring_cap))?;
        let node = ShmNode {
            map,
            nlocal,
            me,
            ring_cap,
            woken: (0..nlocal).map(|_| AtomicU32::new(0)).collect(),
        };
        let h = node.header();
        if h.magic.load(Ordering::Acquire) != MAGIC
            || h.nlocal.load(Ordering::Relaxed) != nlocal as u64
            || h.ring_cap.load(Ordering::Relaxed) != ring_cap as u64
        {
            return Err(io::Error::other(
                "the node's shared segment does not have the expected layout",
            ));
        }
        node.populate_rings();
        Ok(node)
    }

    /// Pre-faults the rings this rank writes and reads (a first pass through a large
    /// ring otherwise costs a page fault per 4 KiB: 50 us on a 64 KiB message).
    fn populate_rings(&self) {
        let bytes = ring::ring_bytes(self.ring_cap);
        let base = self.map.as_ptr() as usize;
        for j in (0..self.nlocal).filter(|&j| j != self.me) {
            for (from, to) in [(self.me, j), (j, self.me)] {
                self.map
                    .populate(self.ring_base(from, to) as usize - base, bytes);
            }
        }
    }

    fn header(&self) -> &SegHeader {
        // SAFETY: the header page is the start of the mapping, suitably aligned.
        unsafe { &*(self.map.as_ptr() as *const SegHeader) }
    }

    fn bell(&self, i: usize) -> &Doorbell {
        assert!(i < self.nlocal);
        // SAFETY: doorbell i lies inside the mapping (index checked above), aligned.
        unsafe { &*(self.map.as_ptr().add(HEADER_BYTES + i * BELL_BYTES) as *const Doorbell) }
    }

    fn ring_base(&self, from: usize, to: usize) -> *mut u8 {
        assert!(from < self.nlocal && to < self.nlocal);
        let off = HEADER_BYTES
            + self.nlocal * BELL_BYTES
            + (from * self.nlocal + to) * ring::ring_bytes(self.ring_cap);
        // SAFETY: off + ring bytes <= segment size by construction of segment_bytes.
        unsafe { self.map.as_ptr().add(off) }
    }

    pub fn local_rank(&self) -> usize {
        self.me
    }

    /// The sending end of the ring from this rank to local rank `to`.
    pub fn producer(&self, to: usize) -> Producer {
        // SAFETY: the ring was initialised by the leader; this process is its only
        // producer; the mapping outlives the producer because the device drops its
        // rings before the node.
        unsafe { Producer::new(self.ring_base(self.me, to), self.ring_cap) }
    }

    /// The receiving end of the ring from local rank `from` to this rank.
    pub fn consumer(&self, from: usize) -> Consumer {
        // SAFETY: as for `producer`, for the single consumer.
        unsafe { Consumer::new(self.ring_base(from, self.me), self.ring_cap) }
    }

    /// True when some ring toward this rank holds unconsumed packets.
    pub fn incoming_pending(&self) -> bool {
        (0..self.nlocal)
            .filter(|&j| j != self.me)
            // SAFETY: ring_base(j, me) is an initialised ring inside our mapping.
            .any(|j| unsafe { ring::has_unconsumed(self.ring_base(j, self.me)) })
    }

    /// After publishing a packet to `to`: wake it if it sleeps. Returns true when it
    /// sleeps in its TCP epoll set instead of on the futex: the caller must then poke its
    /// doorbell socket ([`crate::transport::bell::Poker`]).
    ///
    /// No fence here: a full fence after every packet stalls the sender until the
    /// packet's cache lines are written back, which was most of the cost of a small
    /// message. Without it, the load of `sleeping` may pass the sender's still-buffered
    /// stores, so a receiver that just set `sleeping` might not be woken; it therefore
    /// keeps checking for work for [`SLEEP_GRACE`] after announcing that it sleeps, far
    /// longer than a running core takes to drain its store buffer (a descheduled sender's
    /// stores are drained by the context switch). The futex timeout bounds the rest.
    ///
    /// It also makes sure `to` polls the ring from this rank: it sets this rank's bit in
    /// `to`'s sender mask when it finds it clear.
    #[inline]
    pub fn notify(&self, to: usize) -> bool {
        let b = self.bell(to);
        self.announce(b);
        self.wake_sleeper(b, to)
    }

    /// Wakes `to` if it sleeps, like [`ShmNode::notify`] but without counting this rank
    /// among the senders whose rings `to` polls: for a rank that published something
    /// other than a packet (a collective's slot), which `to` does not look for in the
    /// rings. Announcing it there kept every peer of a barrier in every poll set for
    /// thousands of rounds. Returns true as `notify` does.
    #[inline]
    pub fn ring_bell(&self, to: usize) -> bool {
        self.wake_sleeper(self.bell(to), to)
    }

    /// Like [`ShmNode::ring_bell`], but advances `to`'s doorbell count even when it does
    /// not sleep: a rank that read the count ([`ShmNode::doorbell_seq`]) before looking
    /// for the change, and sleeps after, then returns at once. For changes the
    /// sleeper's own `has_work` cannot see (a nonblocking collective's slots).
    #[inline]
    pub fn bump_bell(&self, to: usize) -> bool {
        let b = self.bell(to);
        b.seq.fetch_add(1, Ordering::SeqCst);
        let s = b.sleeping.load(Ordering::SeqCst);
        if s & !SLEEP_EPOLL != 0 {
            futex::wake(&b.seq, i32::MAX);
        }
        s & SLEEP_EPOLL != 0
    }

    /// Wakes the sleepers of doorbell `b` (local rank `to`) unless this process woke
    /// them already in their current sleep: a burst of packets to a rank that is
    /// getting back on a core costs one system call, not one per packet.
    ///
    /// Skipping is safe: `naps` is bumped after the sleeper read the count it waits
    /// on, and the earlier wake saw that `naps` value (acquire) before it bumped `seq`,
    /// so that bump is later than the read and the sleep it began ends.
    #[inline]
    fn wake_sleeper(&self, b: &Doorbell, to: usize) -> bool {
        let s = b.sleeping.load(Ordering::Acquire);
        if s != 0 {
            let nap = b.naps.load(Ordering::Acquire);
            let woken = &self.woken[to];
            if woken.load(Ordering::Relaxed) == nap {
                return false;
            }
            woken.store(nap, Ordering::Relaxed);
            b.seq.fetch_add(1, Ordering::SeqCst);
            if s & !SLEEP_EPOLL != 0 {
                // Every sleeping thread: the one woken may not be the one the packet
                // is for, and waking one costs the same system call as waking all.
                futex::wake(&b.seq, i32::MAX);
            }
            return s & SLEEP_EPOLL != 0;
        }
        false
    }

    /// Whether this node tracks which ranks send to which (see [`Doorbell`]); a larger
    /// node polls every ring.
    pub fn tracks_senders(&self) -> bool {
        self.nlocal <= SENDER_WORDS * 64
    }

    /// Sets this rank's bit in the sender mask of doorbell `b` if it is clear.
    #[inline]
    fn announce(&self, b: &Doorbell) {
        if !self.tracks_senders() {
            return;
        }
        let (w, bit) = (self.me / 64, 1u64 << (self.me % 64));
        let word = &b.senders[w];
        if word.load(Ordering::Relaxed) & bit == 0 {
            word.fetch_or(bit, Ordering::Release);
        }
    }

    /// Clears local rank `j`'s bit in this rank's sender mask: the rank stops polling
    /// the ring from `j` until `j` sends again and sets it.
    pub fn withdraw_sender(&self, j: usize) {
        if self.tracks_senders() {
            self.bell(self.me).senders[j / 64].fetch_and(!(1u64 << (j % 64)), Ordering::AcqRel);
        }
    }

    /// Word `w` of the mask of local ranks that have sent to this rank (bit `j % 64` of
    /// word `j / 64` for local rank `j`).
    #[inline]
    pub fn senders(&self, w: usize) -> u64 {
        self.bell(self.me).senders[w].load(Ordering::Acquire)
    }

    /// Wakes `to` unconditionally (it announced it waits for ring space). Returns true
    /// when it sleeps in epoll (poke its doorbell socket, as for [`ShmNode::notify`]).
    pub fn wake(&self, to: usize) -> bool {
        let b = self.bell(to);
        b.seq.fetch_add(1, Ordering::SeqCst);
        let s = b.sleeping.load(Ordering::SeqCst);
        if s & !SLEEP_EPOLL != 0 || s == 0 {
            futex::wake(&b.seq, i32::MAX);
        }
        s & SLEEP_EPOLL != 0
    }

    /// Wakes every thread of this rank sleeping on its doorbell (another thread of the
    /// rank changed something they may wait for). Returns true when a thread sleeps in
    /// epoll: poke this rank's doorbell socket too.
    ///
    /// Unlike [`ShmNode::wake`], no system call when no thread has counted itself in
    /// `sleeping`: the rank's own threads read the count they wait on before the bump
    /// here and count themselves with a full fence before they wait ([`ShmNode::sleep_since`]),
    /// so either this load sees them or their wait sees the bumped count and returns.
    pub fn wake_own(&self) -> bool {
        let b = self.bell(self.me);
        b.seq.fetch_add(1, Ordering::SeqCst);
        let s = b.sleeping.load(Ordering::SeqCst);
        if s & !SLEEP_EPOLL != 0 {
            futex::wake(&b.seq, i32::MAX);
        }
        s & SLEEP_EPOLL != 0
    }

    /// Sleeps on this rank's doorbell unless `has_work` says there is something to do.
    /// Several threads of the rank may sleep at once (the count in `sleeping`).
    pub fn sleep(&self, has_work: impl Fn() -> bool, timeout: Duration) {
        self.sleep_since(self.doorbell_seq(), has_work, timeout);
    }

    /// The count of this rank's doorbell. Read it before telling peers that this rank
    /// waits for ring space, and pass it to [`ShmNode::sleep_since`]: a wake that comes
    /// in between then keeps the rank from sleeping.
    pub fn doorbell_seq(&self) -> u32 {
        self.bell(self.me).seq.load(Ordering::SeqCst)
    }

    /// Like [`ShmNode::sleep`], but returns at once if the doorbell rang since it read
    /// `seen` (from [`ShmNode::doorbell_seq`]).
    pub fn sleep_since(&self, seen: u32, has_work: impl Fn() -> bool, timeout: Duration) {
        let b = self.bell(self.me);
        b.naps.fetch_add(1, Ordering::SeqCst);
        b.sleeping.fetch_add(1, Ordering::SeqCst);
        fence(Ordering::SeqCst);
        if !work_within_grace(&has_work) {
            futex::wait(&b.seq, seen, timeout);
        }
        b.sleeping.fetch_sub(1, Ordering::Relaxed);
    }

    /// Like [`ShmNode::sleep_since`] for a rank that also has TCP connections: `park`
    /// sleeps in its epoll set; shared-memory senders see the epoll mark and poke its
    /// doorbell socket.
    pub fn sleep_in_epoll(&self, seen: u32, has_work: impl Fn() -> bool, park: impl FnOnce()) {
        let b = self.bell(self.me);
        b.naps.fetch_add(1, Ordering::SeqCst);
        b.sleeping.fetch_or(SLEEP_EPOLL, Ordering::SeqCst);
        fence(Ordering::SeqCst);
        if !work_within_grace(&has_work) && b.seq.load(Ordering::SeqCst) == seen {
            park();
        }
        b.sleeping.fetch_and(!SLEEP_EPOLL, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_views_exchange_packets() {
        let (a, fd) = ShmNode::create(2, 0, 4096).unwrap();
        let b = ShmNode::open(&fd, 2, 1, 4096).unwrap();
        let mut p = a.producer(1);
        let mut c = b.consumer(0);
        assert!(p.try_push(&[b"hello"]));
        a.notify(1);
        assert_eq!(c.peek(), Some(&b"hello"[..]));
        c.pop();
        c.publish();
        // Nothing pending: sleep returns after the timeout.
        b.sleep(|| false, Duration::from_millis(1));
        // A view with another geometry is refused.
        assert!(ShmNode::open(&fd, 3, 1, 4096).is_err());
    }
}
