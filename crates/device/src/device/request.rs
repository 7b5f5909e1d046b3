//! Requests: the state of one point-to-point operation from start to completion, kept
//! in a slab addressed by small integer ids (the C layer encodes them as `MPI_Request`).

use super::matching::Spec;
use oxmpi_datatype::Datatype;
use std::sync::Arc;

/// Index of a request in the device's table.
pub type ReqId = u32;

/// The id of the one request shared by every standard or ready send that left in full
/// when it was started (an eager message written straight into the transport). It is
/// always complete, reports an empty status, and is never released: waiting on it,
/// testing, freeing or cancelling it costs no table slot. Ids stay below 2^26 (the
/// table never grows that far), so a binding may encode them in 26 bits; the C library
/// checks at compile time that this one fits its request handles.
pub const DONE_SEND: ReqId = (1 << 26) - 1;

/// How an operation ended, as far as the device knows (the MPI layer maps it to an
/// error class).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    Success,
    /// The message was longer than the receive buffer: only its first bytes landed.
    Truncated,
    /// The peer this operation needed was lost before it finished.
    PeerLost,
}

/// The device refused an operation on a request: it does not exist, or it is not in
/// the state the operation needs (starting an active or non-persistent request,
/// completing one that is not a pending generalized request).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InvalidRequest;

/// What a completed operation reports (`MPI_Status` without its C layout).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Status {
    pub source: i32,
    pub tag: i32,
    pub error: Outcome,
    /// Bytes received (packed size; the C layer turns it into element counts).
    pub bytes: u64,
    pub cancelled: bool,
}

impl Status {
    /// The "empty" status of the standard: any source, any tag, no error, zero count.
    pub const EMPTY: Status = Status {
        source: super::matching::ANY_SOURCE,
        tag: super::matching::ANY_TAG,
        error: Outcome::Success,
        bytes: 0,
        cancelled: false,
    };

    /// Status of an operation with `MPI_PROC_NULL`.
    pub fn proc_null() -> Status {
        Status {
            source: super::matching::PROC_NULL,
            tag: super::matching::ANY_TAG,
            ..Status::EMPTY
        }
    }
}

/// Send modes of the standard.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SendMode {
    Standard,
    Synchronous,
    Ready,
}

/// Everything needed to (re)start a send.
#[derive(Clone, Copy, Debug)]
pub struct SendArgs {
    /// World rank of the destination.
    pub dest: u32,
    pub ctx: u32,
    /// Sender's rank in the communicator.
    pub src_rank: i32,
    pub tag: i32,
    pub buf: *const u8,
    pub len: usize,
    pub mode: SendMode,
}

/// Everything needed to (re)start a receive.
#[derive(Clone, Copy, Debug)]
pub struct RecvArgs {
    pub spec: Spec,
    pub buf: *mut u8,
    /// Capacity of the receive buffer in bytes.
    pub cap: usize,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SendState {
    /// Handed to the transport queue; completes when written.
    Queued,
    /// Synchronous eager message written; waiting for the match acknowledgement.
    WaitAck,
    /// Rendezvous announced; waiting for the receiver to pull or ask for a stream.
    WaitFin,
    /// Streaming pieces to the receiver.
    Streaming,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RecvState {
    /// In the matcher's posted queue.
    Posted,
    /// Matched a rendezvous message from world rank `from`; pieces arrive until
    /// `got == want`.
    Streaming { want: u64, got: u64, from: u32 },
}

/// The operation a request stands for.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Op {
    Send(SendArgs, SendState),
    Recv(RecvArgs, RecvState),
    /// Finished (or never had anything to do); the status is final.
    Done,
    /// A persistent request between completion and the next start.
    Inactive,
}

/// What a persistent request does each time it is started.
#[derive(Clone, Copy, Debug)]
pub enum Persistent {
    Send(SendArgs),
    Recv(RecvArgs),
    /// Send or receive with `MPI_PROC_NULL`: completes at once.
    ProcNull,
    /// Buffered-mode send: packs into the attached buffer at each start.
    Bsend(SendArgs),
}

/// Whether a request stands for a send or a receive (what `MPI_Test_cancelled`,
/// `MPI_Request_get_status` and error reporting need to know).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    Send,
    Recv,
}

/// A non-contiguous user buffer: `count` elements of a datatype at `base`. The device
/// moves its packed byte stream piece by piece (packing each piece as it is sent,
/// unpacking each piece as it arrives), never as one temporary copy of the message.
///
/// A message may be a window of that stream: its byte 0 is stream byte `skip` (a
/// collective schedule sends and receives regions of a buffer's packed bytes, which
/// need not start on an element). Point-to-point messages have `skip == 0`.
#[derive(Clone, Debug)]
pub struct Layout {
    pub base: usize,
    pub count: usize,
    /// Data bytes of one element (the type's size).
    pub size: usize,
    /// The type's pack program (a reference count, shared with the MPI layer's type).
    pub ty: Datatype,
    /// The stream offset of the message's first byte.
    pub skip: usize,
}

impl Layout {
    /// Bytes of the packed stream from the message's first byte on.
    pub fn bytes(&self) -> usize {
        (self.count * self.size).saturating_sub(self.skip)
    }

    /// Packs message bytes `off..off + out.len()` into `out`; returns bytes written.
    ///
    /// # Safety
    /// The buffer must hold `count` elements of the type (readable) and not overlap `out`.
    pub unsafe fn pack_at(&self, off: usize, out: &mut [u8]) -> usize {
        let off = self.skip + off;
        // SAFETY: forwarded caller contract.
        unsafe { oxmpi_datatype::pack(&self.ty, self.base as *const u8, self.count, off, out) }
    }

    /// Unpacks `data` as message bytes `off..off + data.len()`; returns bytes consumed.
    ///
    /// # Safety
    /// The buffer must hold `count` elements of the type (writable) and not overlap `data`.
    pub unsafe fn unpack_at(&self, off: usize, data: &[u8]) -> usize {
        let off = self.skip + off;
        // SAFETY: forwarded caller contract.
        unsafe { oxmpi_datatype::unpack(&self.ty, self.base as *mut u8, self.count, off, data) }
    }

    /// The average length of the memory pieces behind the message's first `n` bytes,
    /// judged from the first 64 KiB of them.
    pub fn average_piece(&self, n: usize) -> usize {
        let probe = n.min(64 * 1024);
        probe / self.pieces(0, probe).count().max(1)
    }

    /// The memory pieces `(address, length)` behind message bytes `off..off + len`, in
    /// stream order.
    pub fn pieces(&self, off: usize, len: usize) -> impl Iterator<Item = (usize, usize)> + '_ {
        self.ty
            .blocks(self.count, self.skip + off, len)
            .map(move |(d, n)| (self.base.wrapping_add(d as usize), n))
    }
}

/// The user buffer of a persistent request as the MPI layer describes it (address,
/// element count, its datatype id): the device keeps it with the request for the MPI
/// layer, which re-describes the buffer at each start, and never reads it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BufRef {
    pub addr: usize,
    pub count: i64,
    pub ty: u32,
}

impl BufRef {
    pub fn new<T>(ptr: *const T, count: i64, ty: u32) -> BufRef {
        BufRef {
            addr: ptr as usize,
            count,
            ty,
        }
    }
}

/// What only some requests need (non-contiguous buffers, buffered sends, persistent
/// buffers), kept out of line so that a plain request stays small.
#[derive(Default)]
pub(crate) struct Extra {
    /// Offset of this send's copy in the attached buffered-send pool.
    pub(crate) bsend_slot: Option<usize>,
    /// Bytes staged for a non-contiguous buffer (the transport reads/writes here).
    pub(crate) scratch: Option<Vec<u8>>,
    /// A non-contiguous user buffer moved piece by piece (instead of `scratch`); the
    /// `buf` of the operation's arguments is then only its base address.
    pub(crate) layout: Option<Arc<Layout>>,
    /// For a non-contiguous rendezvous send: the list of its buffer's pieces (see
    /// [`super::pieces`]), which the receiver reads with cross-memory attach (empty when
    /// not published).
    pub(crate) piece_list: Vec<super::pieces::Entry>,
    /// Where a piece for a non-contiguous receive lands from TCP before it is unpacked.
    pub(crate) bounce: Vec<u8>,
    /// The user buffer of a persistent request (re-staged at each start when its type
    /// is not contiguous).
    pub(crate) persistent_buf: Option<BufRef>,
    /// A receive restaged for a message in external32 (from an IMPI peer): the user's
    /// buffer, filled from `scratch` at completion (`protocol::ext32`).
    pub(crate) ext32: Option<Arc<Layout>>,
    /// For `ext32`: the end of the bytes landed in `scratch` in order from its start,
    /// and the elements converted from them into the user's buffer so far
    /// (`protocol::ext32`: whole elements are converted as the pieces land).
    pub(crate) ext32_landed: usize,
    pub(crate) ext32_done: usize,
}

pub struct Request {
    pub(crate) op: Op,
    pub(crate) status: Status,
    pub(crate) complete: bool,
    /// A cancel request is travelling to the receiver; the request must not finish
    /// (nor its id be reused) until the answer arrives.
    pub(crate) cancel_pending: bool,
    /// `MPI_Request_free` was called, or the request is internal: release on completion.
    pub(crate) detached: bool,
    /// A generalized request (`MPI_Grequest_start`): its op stays `Done` and it
    /// completes only when the program calls `MPI_Grequest_complete`; its status and
    /// callbacks belong to the binding that created it.
    pub(crate) generalized: bool,
    /// Released: the slot is free and this request only waits to be reused.
    reusable: bool,
    pub direction: Direction,
    /// Opaque tag of the owner (the core stores the communicator index, so errors can
    /// be reported to its error handler).
    pub owner: u32,
    pub persistent: Option<Persistent>,
    /// See [`Extra`]; None for most requests.
    pub(crate) extra: Option<Box<Extra>>,
}

impl std::fmt::Debug for Request {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Request")
            .field("op", &self.op)
            .field("status", &self.status)
            .field("complete", &self.complete)
            .field("persistent", &self.persistent)
            .finish_non_exhaustive()
    }
}

impl Request {
    pub(crate) fn new(op: Op, direction: Direction) -> Request {
        Request {
            op,
            status: Status::EMPTY,
            complete: false,
            cancel_pending: false,
            detached: false,
            generalized: false,
            reusable: false,
            direction,
            owner: 0,
            persistent: None,
            extra: None,
        }
    }

    /// Makes a released request into a fresh one (as [`Request::new`] would), reusing
    /// its slot in place.
    #[inline]
    fn reset(&mut self, op: Op, direction: Direction) {
        self.op = op;
        self.status = Status::EMPTY;
        self.complete = false;
        self.cancel_pending = false;
        self.detached = false;
        self.generalized = false;
        self.reusable = false;
        self.direction = direction;
        self.owner = 0;
        self.persistent = None;
        // Released requests hold nothing out of line.
        debug_assert!(self.extra.is_none());
    }

    /// Drops what a released request owns and marks it free for reuse.
    #[inline]
    fn release(&mut self) {
        if self.extra.is_some() {
            self.extra = None;
        }
        self.reusable = true;
    }

    /// The out-of-line part, if any.
    #[inline]
    pub(crate) fn extra(&self) -> Option<&Extra> {
        self.extra.as_deref()
    }

    /// The out-of-line part, made when missing.
    pub(crate) fn extra_mut(&mut self) -> &mut Extra {
        self.extra.get_or_insert_with(Default::default)
    }

    /// The non-contiguous buffer moved piece by piece, if any.
    #[inline]
    pub(crate) fn layout(&self) -> Option<&Arc<Layout>> {
        self.extra().and_then(|x| x.layout.as_ref())
    }

    /// The user buffer of a persistent request, if any.
    pub fn persistent_buf(&self) -> Option<BufRef> {
        self.extra().and_then(|x| x.persistent_buf)
    }

    /// Records the user buffer of a persistent request (see [`BufRef`]).
    pub fn set_persistent_buf(&mut self, b: BufRef) {
        self.extra_mut().persistent_buf = Some(b);
    }

    /// Whether this request's operation (under way, or the template of a persistent
    /// request) uses a context id for which `on` holds.
    pub fn uses_context(&self, on: impl Fn(u32) -> bool) -> bool {
        (match &self.op {
            Op::Send(a, _) => on(a.ctx),
            Op::Recv(a, _) => on(a.spec.ctx),
            Op::Done | Op::Inactive => false,
        }) || match &self.persistent {
            Some(Persistent::Send(a)) | Some(Persistent::Bsend(a)) => on(a.ctx),
            Some(Persistent::Recv(a)) => on(a.spec.ctx),
            _ => false,
        }
    }

    /// True for a request made by [`super::Device::generalized_request`].
    pub fn is_generalized(&self) -> bool {
        self.generalized
    }

    /// True when waiting on this request would return at once.
    pub fn is_complete(&self) -> bool {
        (self.complete && !self.cancel_pending) || matches!(self.op, Op::Inactive)
    }

    /// True for a persistent request that has not been started (or has completed and
    /// been waited for).
    pub fn is_inactive(&self) -> bool {
        matches!(self.op, Op::Inactive)
    }

    pub fn status(&self) -> &Status {
        &self.status
    }
}

/// What `RequestTable::finish_if_complete` found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Finish {
    /// The request is still under way (or does not exist).
    NotComplete,
    /// A persistent request that is not started: nothing to finish.
    Inactive,
    /// Finished with `status`; `released` when the request is gone (not persistent).
    Done { status: Status, released: bool },
}

/// A slab of requests with id reuse, plus the shared request [`DONE_SEND`].
pub struct RequestTable {
    slots: Vec<Option<Request>>,
    free: Vec<ReqId>,
    live: usize,
    /// What [`DONE_SEND`] names: a complete send with an empty status. Only [`get`]
    /// reaches it; [`get_mut`] and [`remove`] see no such request, so nothing changes it.
    ///
    /// [`get`]: RequestTable::get
    /// [`get_mut`]: RequestTable::get_mut
    /// [`remove`]: RequestTable::remove
    done_send: Request,
}

impl Default for RequestTable {
    fn default() -> Self {
        let mut done_send = Request::new(Op::Done, Direction::Send);
        done_send.complete = true;
        RequestTable {
            slots: Vec::new(),
            free: Vec::new(),
            live: 0,
            done_send,
        }
    }
}

impl RequestTable {
    /// A fresh slot index (the table refuses to reach [`DONE_SEND`]).
    fn grow(&mut self) -> ReqId {
        assert!(
            self.slots.len() < DONE_SEND as usize,
            "more than {DONE_SEND} requests exist at once"
        );
        self.slots.push(None);
        (self.slots.len() - 1) as ReqId
    }

    /// A new request for `op`, built in its slot (a request is a few hundred bytes:
    /// building it elsewhere and moving it in costs more than the small-message path
    /// it serves).
    #[inline]
    pub(crate) fn insert_new(&mut self, op: Op, direction: Direction) -> ReqId {
        self.insert_slot(op, direction).0
    }

    /// A new request that is complete already, with `status`.
    #[inline]
    pub(crate) fn insert_complete(&mut self, status: Status, direction: Direction) -> ReqId {
        let (id, r) = self.insert_slot(Op::Done, direction);
        r.status = status;
        r.complete = true;
        id
    }

    /// A new request for `op`, with access to it for the fields its kind sets.
    #[inline]
    pub(crate) fn insert_slot(&mut self, op: Op, direction: Direction) -> (ReqId, &mut Request) {
        self.live += 1;
        let id = match self.free.pop() {
            Some(id) => id,
            None => self.grow(),
        };
        let slot = &mut self.slots[id as usize];
        if slot.as_ref().is_some_and(|r| r.reusable) {
            // A freed slot keeps its request: reset it field by field in place.
            let r = slot.as_mut().expect("checked");
            r.reset(op, direction);
            return (id, r);
        }
        (id, slot.insert(Request::new(op, direction)))
    }

    #[inline]
    pub fn get(&self, id: ReqId) -> Option<&Request> {
        match self.slots.get(id as usize) {
            Some(s) => s.as_ref().filter(|r| !r.reusable),
            None => (id == DONE_SEND).then_some(&self.done_send),
        }
    }

    #[inline]
    pub fn get_mut(&mut self, id: ReqId) -> Option<&mut Request> {
        self.slots
            .get_mut(id as usize)
            .and_then(|s| s.as_mut())
            .filter(|r| !r.reusable)
    }

    /// Releases request `id` (its id is reused by a later request). The request's
    /// buffers are dropped; the slot keeps the rest for reuse by `insert_new`.
    pub fn remove(&mut self, id: ReqId) -> bool {
        let Some(Some(r)) = self.slots.get_mut(id as usize) else {
            return false;
        };
        if r.reusable {
            return false;
        }
        r.release();
        self.free.push(id);
        self.live -= 1;
        true
    }

    /// Finishes request `id` if it is complete, with one lookup: takes its final status,
    /// releases a non-persistent request and makes a persistent one inactive.
    #[inline]
    pub(crate) fn finish_if_complete(&mut self, id: ReqId) -> Finish {
        self.finish_noting_receive(id).0
    }

    /// [`RequestTable::finish_if_complete`], also giving the owner of a receive it
    /// finished (not a generalized request): what the tools interface's receive
    /// counters need, found in the same lookup.
    #[inline]
    pub(crate) fn finish_noting_receive(&mut self, id: ReqId) -> (Finish, Option<u32>) {
        let r = match self.slots.get_mut(id as usize) {
            Some(Some(r)) if !r.reusable => r,
            Some(_) => return (Finish::NotComplete, None),
            None if id == DONE_SEND => {
                let done = Finish::Done {
                    status: Status::EMPTY,
                    released: true,
                };
                return (done, None);
            }
            None => return (Finish::NotComplete, None),
        };
        if matches!(r.op, Op::Inactive) {
            return (Finish::Inactive, None);
        }
        if !r.complete || r.cancel_pending {
            return (Finish::NotComplete, None);
        }
        let status = r.status;
        let received_on = (r.direction == Direction::Recv && !r.generalized).then_some(r.owner);
        if r.persistent.is_some() {
            r.op = Op::Inactive;
            r.complete = false;
            let done = Finish::Done {
                status,
                released: false,
            };
            return (done, received_on);
        }
        r.release();
        self.free.push(id);
        self.live -= 1;
        let done = Finish::Done {
            status,
            released: true,
        };
        (done, received_on)
    }

    /// The owner of request `id`, which a completion call just reported finished with
    /// `status`: a finished request keeps both until its slot is reused (`None` then, as
    /// the status no longer matches). Read only for requests that failed, to report the
    /// error to the owner's handler.
    pub fn finished_owner(&self, id: ReqId, status: &Status) -> Option<u32> {
        let r = self.slots.get(id as usize)?.as_ref()?;
        (r.status == *status).then_some(r.owner)
    }

    /// Number of requests that exist.
    pub fn live(&self) -> usize {
        self.live
    }

    /// Ids of requests that exist ([`DONE_SEND`] aside).
    pub fn ids(&self) -> impl Iterator<Item = ReqId> + '_ {
        self.slots
            .iter()
            .enumerate()
            .filter(|(_, s)| s.as_ref().is_some_and(|r| !r.reusable))
            .map(|(i, _)| i as ReqId)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shared_done_send_is_complete_and_never_released() {
        let mut t = RequestTable::default();
        let a = t.insert_new(Op::Done, Direction::Recv);
        let r = t.get(DONE_SEND).expect("the shared request exists");
        assert!(r.is_complete() && !r.is_inactive());
        assert_eq!(r.direction, Direction::Send);
        assert_eq!(*r.status(), Status::EMPTY);
        assert!(r.persistent.is_none());
        assert!(t.get_mut(DONE_SEND).is_none(), "nobody may change it");
        assert!(!t.remove(DONE_SEND));
        assert!(t.get(DONE_SEND).is_some());
        assert_eq!(t.live(), 1);
        assert_eq!(t.ids().collect::<Vec<_>>(), vec![a]);
        assert!(t.remove(a));
        assert_eq!(t.live(), 0);
        assert!(t.get(a).is_none() && t.get(a + 1).is_none());
    }
}
