//! MPI point-to-point operations: argument checks, rank and datatype translation, send
//! modes, buffered sends, completion calls (wait/test and their any/all/some forms),
//! probe, cancel and persistent requests, on top of the device.
//!
//! Error messages here name the argument and the value; the bindings prefix the name of
//! the call (`MPI_Send: ...`).

use crate::comm::{Comm, CommId};
use crate::device::matching::Spec;
use crate::device::{
    Direct, Direction, Finish, Layout, Persistent, RecvArgs, ReqId, SendArgs, SendMode, Status,
    DONE_SEND,
};
use crate::error::{err, Error, ErrorClass, Result};
use crate::runtime::{self, Runtime};
use crate::types::{TypeId, TypeInfo};
use crate::{ANY_SOURCE, ANY_TAG, PROC_NULL, TAG_UB};
use std::cell::Cell;

/// A user buffer as MPI describes it: start address, element count, datatype. The
/// device keeps the same plain triple for persistent requests.
pub use crate::device::BufRef as Buf;

/// The four send modes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Standard,
    Buffered,
    Synchronous,
    Ready,
}

/// A finished request as the completion calls report it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Completion {
    pub status: Status,
    /// The request no longer exists (the binding sets the handle to `MPI_REQUEST_NULL`);
    /// false for persistent requests, which become inactive.
    pub freed: bool,
}

// ----- argument checks -------------------------------------------------------------

// The checks every send and receive makes are inline; the errors they report are built
// out of line (`#[cold]`), which keeps the hot path short.

#[inline(always)]
fn check_count(count: i64) -> Result<usize> {
    if count < 0 {
        return bad_count(count);
    }
    Ok(count as usize)
}

#[cold]
#[inline(never)]
fn bad_count(count: i64) -> Result<usize> {
    err(
        ErrorClass::Count,
        format!("invalid count {count} (must be >= 0)"),
    )
}

#[inline(always)]
fn check_buffer(b: &Buf, t: &TypeInfo) -> Result<()> {
    if b.addr == 0 && b.count > 0 && t.size > 0 && t.predefined.is_some() {
        return null_buffer(b.count);
    }
    Ok(())
}

#[cold]
#[inline(never)]
fn null_buffer(count: i64) -> Result<()> {
    err(
        ErrorClass::Buffer,
        format!("null buffer with count {count} of a non-empty datatype"),
    )
}

#[inline(always)]
fn check_send_tag(tag: i32) -> Result<()> {
    if !(0..=TAG_UB).contains(&tag) {
        return bad_send_tag(tag);
    }
    Ok(())
}

#[cold]
#[inline(never)]
fn bad_send_tag(tag: i32) -> Result<()> {
    err(
        ErrorClass::Tag,
        format!("invalid tag {tag} (must be between 0 and MPI_TAG_UB = {TAG_UB})"),
    )
}

#[inline(always)]
fn check_recv_tag(tag: i32) -> Result<()> {
    if tag != ANY_TAG && !(0..=TAG_UB).contains(&tag) {
        return bad_recv_tag(tag);
    }
    Ok(())
}

/// A receive or probe tag on communicator `c`: valid, and not `MPI_ANY_TAG` where the
/// program asserted `mpi_assert_no_any_tag`.
#[inline(always)]
fn check_recv_tag_on(c: &Comm, tag: i32) -> Result<()> {
    check_recv_tag(tag)?;
    if tag == ANY_TAG && c.hints.no_any_tag {
        return asserted_away("MPI_ANY_TAG", "mpi_assert_no_any_tag", ErrorClass::Tag);
    }
    Ok(())
}

/// A wildcard used on a communicator whose hints promise it is not (erroneous by
/// MPI 4.1 section 7.4.4; refused so that the engine may rely on the assertion).
#[cold]
#[inline(never)]
fn asserted_away(what: &str, key: &str, class: ErrorClass) -> Result<()> {
    err(
        class,
        format!("{what} is not allowed on this communicator: its info sets {key} to true"),
    )
}

#[cold]
#[inline(never)]
fn bad_recv_tag(tag: i32) -> Result<()> {
    err(
        ErrorClass::Tag,
        format!("invalid tag {tag} (must be MPI_ANY_TAG or between 0 and {TAG_UB})"),
    )
}

/// Resolves a destination rank: Ok(None) for `MPI_PROC_NULL`.
#[inline]
fn dest_world(c: &Comm, dest: i32, rt: &Runtime) -> Result<Option<u32>> {
    if dest == PROC_NULL {
        return Ok(None);
    }
    let g = c.peer_group();
    match g.world_of(dest) {
        Some(w) => {
            if rt.device.route(w) == crate::transport::Route::Unreachable {
                return unreachable_rank(dest, w);
            }
            Ok(Some(w))
        }
        None => bad_rank("rank", dest, g.size()),
    }
}

#[cold]
#[inline(never)]
fn unreachable_rank(dest: i32, w: u32) -> Result<Option<u32>> {
    err(
        ErrorClass::Other,
        format!(
            "rank {dest} (world rank {w}) is on another node and no network transport is available"
        ),
    )
}

#[cold]
#[inline(never)]
fn bad_rank<T>(what: &str, rank: i32, size: i32) -> Result<T> {
    err(
        ErrorClass::Rank,
        format!("invalid {what} {rank} (communicator size {size})"),
    )
}

fn check_source(c: &Comm, src: i32) -> Result<()> {
    if src == ANY_SOURCE {
        if c.hints.no_any_source {
            return asserted_away(
                "MPI_ANY_SOURCE",
                "mpi_assert_no_any_source",
                ErrorClass::Rank,
            );
        }
        return Ok(());
    }
    if src == PROC_NULL {
        return Ok(());
    }
    let n = c.peer_group().size();
    if !(0..n).contains(&src) {
        return bad_rank("source rank", src, n);
    }
    Ok(())
}

// ----- staging of non-contiguous buffers ---------------------------------------------

/// The address of the data when `count` elements at `b` are one run of memory in
/// packed order (the zero-copy path; contiguous derived types included, their data
/// starting at the base plus their displacement); None when they must be staged.
#[inline(always)]
fn zero_copy_addr(t: &TypeInfo, b: &Buf, count: usize) -> Option<usize> {
    if t.contiguous {
        // Predefined types and derived ones without holes, data at the base address.
        return Some(b.addr);
    }
    t.contiguous_block(count)
        .map(|(disp, _)| b.addr.wrapping_add(disp as usize))
}

/// The description of a non-contiguous buffer that the device moves piece by piece.
fn layout(t: &TypeInfo, b: &Buf, count: usize) -> Layout {
    Layout {
        base: b.addr,
        count,
        size: t.size,
        ty: t.datatype().clone(),
        skip: 0,
    }
}

// ----- starting operations -------------------------------------------------------------

struct SendPlan {
    args: SendArgs,
    /// The buffer when it is not contiguous (packed by the device as it sends, or into
    /// the attached buffer for buffered mode).
    layout: Option<Box<Layout>>,
    /// The message in external32 toward a rank of another IMPI client (`args` points
    /// here; see `impi_wire`).
    ext32: Option<Vec<u8>>,
}

#[inline(always)]
fn plan_send(
    rt: &Runtime,
    b: &Buf,
    dest: i32,
    tag: i32,
    comm: CommId,
    mode: Mode,
) -> Result<Option<SendPlan>> {
    let c = rt.comms.get(comm)?;
    let count = check_count(b.count)?;
    let t = rt.types.for_comm(b.ty)?;
    check_buffer(b, t)?;
    check_send_tag(tag)?;
    let Some(w) = dest_world(c, dest, rt)? else {
        return Ok(None);
    };
    let len = count.checked_mul(t.size).ok_or_else(|| {
        Error::new(
            ErrorClass::Count,
            format!("message of {count} elements is too large"),
        )
    })?;
    let mode = match mode {
        Mode::Synchronous => SendMode::Synchronous,
        Mode::Ready => SendMode::Ready,
        _ => SendMode::Standard,
    };
    if crate::impi_wire::send_converts(rt, w, t) {
        let v = crate::impi_wire::pack(t, b, count)?;
        return Ok(Some(SendPlan {
            args: SendArgs {
                dest: w,
                ctx: c.ctx,
                src_rank: c.rank,
                tag,
                buf: v.as_ptr(),
                len: v.len(),
                mode,
            },
            layout: None,
            ext32: Some(v),
        }));
    }
    let direct = zero_copy_addr(t, b, count);
    let layout = if direct.is_none() && len > 0 {
        Some(Box::new(layout(t, b, count)))
    } else {
        None
    };
    Ok(Some(SendPlan {
        args: SendArgs {
            dest: w,
            ctx: c.ctx,
            src_rank: c.rank,
            tag,
            buf: direct.unwrap_or(b.addr) as *const u8,
            len,
            mode,
        },
        layout,
        ext32: None,
    }))
}

/// Starts a planned send: a small contiguous standard or ready send that can leave at
/// once goes straight to the transport (`Device::send_now`) and gets the shared
/// request `DONE_SEND`; anything else gets a request of its own.
#[inline(always)]
fn start_plan(rt: &mut Runtime, p: SendPlan, mode: Mode, comm: CommId) -> Result<ReqId> {
    let (dest, len) = (p.args.dest, p.args.len);
    // Taken apart first: a plan with nothing staged owns no memory, so the message
    // that leaves at once skips the out-of-line drop of the whole plan.
    let p = match p {
        SendPlan {
            args,
            layout: None,
            ext32,
        } if mode != Mode::Buffered => {
            if rt.device.send_now(&args) {
                // The transport copied the message (external32 bytes included).
                drop(ext32);
                rt.stats.sent(dest, len);
                return Ok(DONE_SEND);
            }
            SendPlan {
                args,
                layout: None,
                ext32,
            }
        }
        p => p,
    };
    let id = start_plan_request(rt, p, mode, comm)?;
    rt.stats.sent(dest, len);
    Ok(id)
}

/// [`start_plan`] for a send that needs a request (`send_now` was tried already where
/// it could apply).
fn start_plan_request(rt: &mut Runtime, p: SendPlan, mode: Mode, comm: CommId) -> Result<ReqId> {
    let id = if mode == Mode::Buffered {
        bsend_copy(rt, p, comm)?;
        rt.device.complete_request(Status::EMPTY, Direction::Send)
    } else {
        match (p.layout, p.ext32) {
            (_, Some(v)) => rt.device.isend_staged(p.args, v),
            (Some(l), None) => rt.device.isend_layout(p.args, *l),
            (None, None) => rt.device.isend_request(p.args),
        }
    };
    set_owner(rt, id, comm);
    Ok(id)
}

pub(crate) fn set_owner(rt: &mut Runtime, id: ReqId, comm: CommId) {
    if let Some(r) = rt.device.request_mut(id) {
        r.owner = comm;
    }
}

/// Copies a buffered-mode message into the attached buffer and sends the copy.
fn bsend_copy(rt: &mut Runtime, p: SendPlan, comm: CommId) -> Result<()> {
    // A buffer attached to the communicator, or automatic buffering, takes precedence
    // over the attached buffer of the process (MPI 4.1 section 3.6).
    if let Some(space) = crate::p2p_mpi4::buffer_for(rt, comm) {
        return crate::p2p_mpi4::bsend_elsewhere(rt, space, p.args, p.layout.as_deref(), comm);
    }
    let len = p.args.len;
    if !rt.device.bsend.is_attached() {
        return err(
            ErrorClass::Buffer,
            format!(
                "buffered send of {len} bytes with no buffer attached (call MPI_Buffer_attach)"
            ),
        );
    }
    let slot = match rt.device.bsend.alloc(len) {
        Some(s) => s,
        None => {
            // Earlier buffered messages may have left meanwhile.
            runtime::progress(&mut rt.device);
            rt.device.bsend.alloc(len).ok_or_else(|| {
                Error::new(
                    ErrorClass::Buffer,
                    format!(
                        "attached buffer too small for a buffered send of {len} bytes (plus MPI_BSEND_OVERHEAD) with the messages still pending"
                    ),
                )
            })?
        }
    };
    let dst = rt.device.bsend.addr(slot);
    match &p.layout {
        // SAFETY: the pool region at `dst` has room for len bytes (alloc above) and
        // does not overlap the user buffer, which holds the layout's elements.
        Some(l) => unsafe {
            l.pack_at(0, std::slice::from_raw_parts_mut(dst, len));
        },
        // SAFETY: the user buffer holds len bytes (validated count and type); the pool
        // region at `dst` has room for them (alloc above).
        None if len > 0 => unsafe { std::ptr::copy_nonoverlapping(p.args.buf, dst, len) },
        None => {}
    }
    let mut a = p.args;
    a.buf = dst;
    rt.device.start_bsend_copy(a, slot);
    Ok(())
}

/// `MPI_Isend`, `MPI_Ibsend`, `MPI_Issend`, `MPI_Irsend`.
///
/// # Safety
/// The buffer must hold `count` elements of the datatype and stay valid (and unmodified)
/// until the request completes.
pub unsafe fn isend(b: Buf, dest: i32, tag: i32, comm: CommId, mode: Mode) -> Result<ReqId> {
    runtime::with(|rt| match plan_send(rt, &b, dest, tag, comm, mode)? {
        None => {
            let id = rt
                .device
                .complete_request(Status::proc_null(), Direction::Send);
            Ok(id)
        }
        Some(p) => start_plan(rt, p, mode, comm),
    })
}

/// A standard send in `comm`'s collective context: the point-to-point step of a
/// collective algorithm that must look like a user send on the wire (IMPI chapter 4
/// runs its collectives as sends and receives in the collective context).
///
/// # Safety
/// As for [`isend`].
pub(crate) unsafe fn isend_coll(b: Buf, dest: i32, tag: i32, comm: CommId) -> Result<ReqId> {
    runtime::with(
        |rt| match plan_send(rt, &b, dest, tag, comm, Mode::Standard)? {
            None => Ok(rt
                .device
                .complete_request(Status::proc_null(), Direction::Send)),
            Some(mut p) => {
                p.args.ctx += 1;
                start_plan_request(rt, p, Mode::Standard, comm)
            }
        },
    )
}

/// A receive in `comm`'s collective context (see [`isend_coll`]).
///
/// # Safety
/// As for [`irecv`].
pub(crate) unsafe fn irecv_coll(b: Buf, src: i32, tag: i32, comm: CommId) -> Result<ReqId> {
    runtime::with(|rt| match plan_recv(rt, &b, src, tag, comm)? {
        None => Ok(rt
            .device
            .complete_request(Status::proc_null(), Direction::Recv)),
        Some(mut p) => {
            p.args.spec.ctx += 1;
            // The collective context keeps MPI order whatever the communicator asserts.
            p.overtaking = false;
            Ok(post_recv(rt, p, comm))
        }
    })
}

/// `MPI_Send`, `MPI_Bsend`, `MPI_Ssend`, `MPI_Rsend`.
///
/// # Safety
/// The buffer must hold `count` elements of the datatype.
pub unsafe fn send(b: Buf, dest: i32, tag: i32, comm: CommId, mode: Mode) -> Result<()> {
    // A send that completes at once (eager, buffered, to MPI_PROC_NULL) is finished
    // under the same lock that started it: the small-message latency path.
    let started = runtime::with(|rt| {
        let id = match plan_send(rt, &b, dest, tag, comm, mode)? {
            None => return Ok(None),
            Some(p) => start_plan(rt, p, mode, comm)?,
        };
        // A small standard or ready send that left at once (`start_plan`).
        if id == DONE_SEND {
            return Ok(None);
        }
        Ok(match try_finish(rt, id) {
            Some(_) => None,
            None => Some(id),
        })
    })?;
    match started {
        None => Ok(()),
        Some(id) => runtime::block_on(|rt| Ok(try_finish(rt, id))).map(|_| ()),
    }
}

struct RecvPlan {
    args: RecvArgs,
    /// The buffer when it is not contiguous (the device unpacks into it).
    layout: Option<Box<Layout>>,
    /// The world rank of the source when the receive names one and its buffer is
    /// contiguous: the receive may then take the source's next packet directly.
    from: Option<u32>,
    /// The communicator asserts `mpi_assert_allow_overtaking`.
    overtaking: bool,
}

#[inline(always)]
fn plan_recv(rt: &Runtime, b: &Buf, src: i32, tag: i32, comm: CommId) -> Result<Option<RecvPlan>> {
    let c = rt.comms.get(comm)?;
    let count = check_count(b.count)?;
    let t = rt.types.for_comm(b.ty)?;
    check_buffer(b, t)?;
    check_recv_tag_on(c, tag)?;
    check_source(c, src)?;
    if src == PROC_NULL {
        return Ok(None);
    }
    let cap = count.checked_mul(t.size).ok_or_else(|| {
        Error::new(
            ErrorClass::Count,
            format!("receive of {count} elements is too large"),
        )
    })?;
    // A receive that may match a rank of another IMPI client carries its layout even
    // when contiguous: the device converts such a message from external32 with it.
    let mut direct = zero_copy_addr(t, b, count);
    if direct.is_some() && crate::impi_wire::recv_converts(rt, c, src, t) {
        direct = None;
    }
    let args = RecvArgs {
        spec: Spec {
            ctx: c.ctx,
            src,
            tag,
        },
        buf: direct.unwrap_or(b.addr) as *mut u8,
        cap,
    };
    Ok(Some(match direct {
        Some(_) => RecvPlan {
            args,
            layout: None,
            from: c.peer_group().world_of(src),
            overtaking: c.hints.allow_overtaking,
        },
        None => recv_plan_staged(t, b, count, args),
    }))
}

/// The plan of a receive into a buffer that is not one run of memory (or may get a
/// message in external32): the device unpacks through the layout.
#[cold]
#[inline(never)]
fn recv_plan_staged(t: &TypeInfo, b: &Buf, count: usize, args: RecvArgs) -> RecvPlan {
    RecvPlan {
        args,
        layout: (args.cap > 0).then(|| Box::new(layout(t, b, count))),
        from: None,
        overtaking: false,
    }
}

/// Posts a planned receive (matching it against stored messages first, then, for a
/// contiguous receive from a named source, against the source's next packet).
fn post_recv(rt: &mut Runtime, p: RecvPlan, comm: CommId) -> ReqId {
    match (p.layout, p.from) {
        (None, Some(from)) => rt.device.irecv_from(from, p.args, p.overtaking, comm),
        (layout, _) => {
            let id = match layout {
                None => rt.device.irecv(p.args),
                Some(l) => rt.device.irecv_layout(p.args, *l),
            };
            set_owner(rt, id, comm);
            id
        }
    }
}

/// `MPI_Irecv`.
///
/// # Safety
/// The buffer must hold `count` elements of the datatype and stay valid until the
/// request completes.
pub unsafe fn irecv(b: Buf, src: i32, tag: i32, comm: CommId) -> Result<ReqId> {
    runtime::with(|rt| match plan_recv(rt, &b, src, tag, comm)? {
        None => {
            let id = rt
                .device
                .complete_request(Status::proc_null(), Direction::Recv);
            set_owner(rt, id, comm);
            Ok(id)
        }
        Some(p) => Ok(post_recv(rt, p, comm)),
    })
}

/// `MPI_Recv`.
///
/// # Safety
/// The buffer must hold `count` elements of the datatype.
pub unsafe fn recv(b: Buf, src: i32, tag: i32, comm: CommId) -> Result<Status> {
    enum Started {
        Done(Status),
        /// Waiting for the source's next packet, which it may take directly.
        Direct(RecvArgs, u32),
        Posted(ReqId),
    }
    // A receive whose message already arrived completes under the lock that started it.
    let started = runtime::with(|rt| {
        let Some(p) = plan_recv(rt, &b, src, tag, comm)? else {
            return Ok(Started::Done(Status::proc_null()));
        };
        if let Some(from) = p.from {
            match rt.device.recv_direct(from, &p.args) {
                Direct::Took(s) => {
                    rt.stats.received(from, s.bytes);
                    return Ok(Started::Done(s));
                }
                Direct::Empty => return Ok(Started::Direct(p.args, from)),
                Direct::Busy => {}
            }
        }
        let id = post_recv(rt, p, comm);
        Ok(match try_finish(rt, id) {
            Some(c) => Started::Done(c.status),
            None => Started::Posted(id),
        })
    })?;
    match started {
        Started::Done(status) => Ok(status),
        Started::Posted(id) => runtime::block_on(|rt| Ok(try_finish(rt, id))).map(|c| c.status),
        // SAFETY: `a` is the caller's buffer (this function's contract).
        Started::Direct(a, from) => unsafe { recv_wait_direct(a, from, comm) },
    }
}

/// The wait of a blocking receive (contiguous buffer, named source at world rank `from`)
/// whose first look found nothing from the source: take the packet before the progress
/// engine would store it as unexpected; post the receive once the direct path no longer
/// applies.
///
/// # Safety
/// `a.buf` holds `a.cap` writable bytes until the call returns.
pub unsafe fn recv_wait_direct(a: RecvArgs, from: u32, comm: CommId) -> Result<Status> {
    let posted: Cell<Option<ReqId>> = Cell::new(None);
    runtime::block_on_first(
        |rt| {
            if posted.get().is_some() {
                return Ok(None);
            }
            match rt.device.recv_direct(from, &a) {
                Direct::Took(s) => {
                    rt.stats.received(from, s.bytes);
                    return Ok(Some(s));
                }
                Direct::Empty => {}
                Direct::Busy => {
                    let p = RecvPlan {
                        args: a,
                        layout: None,
                        from: None,
                        overtaking: false,
                    };
                    posted.set(Some(post_recv(rt, p, comm)));
                }
            }
            Ok(None)
        },
        |rt| {
            Ok(posted
                .get()
                .and_then(|id| try_finish(rt, id))
                .map(|c| c.status))
        },
    )
}

/// `MPI_Send_init` and friends: a persistent send, inactive until started.
///
/// # Safety
/// As for [`isend`], for every start of the request.
pub unsafe fn send_init(b: Buf, dest: i32, tag: i32, comm: CommId, mode: Mode) -> Result<ReqId> {
    runtime::with(|rt| {
        let id = match plan_send(rt, &b, dest, tag, comm, mode)? {
            None => rt
                .device
                .persistent_request(Persistent::ProcNull, Direction::Send),
            Some(p) => {
                let kind = if mode == Mode::Buffered {
                    Persistent::Bsend(p.args)
                } else {
                    Persistent::Send(p.args)
                };
                rt.device.persistent_request(kind, Direction::Send)
            }
        };
        set_owner(rt, id, comm);
        // The request names the type by index at every start: keep the index valid
        // even if the user frees the type (released by `request_free`).
        rt.types.hold(b.ty)?;
        rt.device
            .request_mut(id)
            .expect("just created")
            .set_persistent_buf(b);
        Ok(id)
    })
}

/// `MPI_Recv_init`.
///
/// # Safety
/// As for [`irecv`], for every start of the request.
pub unsafe fn recv_init(b: Buf, src: i32, tag: i32, comm: CommId) -> Result<ReqId> {
    runtime::with(|rt| {
        let id = match plan_recv(rt, &b, src, tag, comm)? {
            None => rt
                .device
                .persistent_request(Persistent::ProcNull, Direction::Recv),
            Some(p) => rt
                .device
                .persistent_request(Persistent::Recv(p.args), Direction::Recv),
        };
        set_owner(rt, id, comm);
        // The request names the type by index at every start: keep the index valid
        // even if the user frees the type (released by `request_free`).
        rt.types.hold(b.ty)?;
        rt.device
            .request_mut(id)
            .expect("just created")
            .set_persistent_buf(b);
        Ok(id)
    })
}

fn start_one(rt: &mut Runtime, id: ReqId) -> Result<()> {
    if crate::coll::nbc::start(rt, id)? || crate::partitioned::start(rt, id)? {
        return Ok(());
    }
    let Some(r) = rt.device.request(id) else {
        return err(ErrorClass::Request, "invalid request");
    };
    let Some(p) = r.persistent else {
        return err(ErrorClass::Request, "request is not persistent");
    };
    if !r.is_inactive() {
        return err(ErrorClass::Request, "persistent request is already active");
    }
    let b = r.persistent_buf();
    let t = match b {
        Some(b) => Some(rt.types.for_comm_held(b.ty)?.clone()),
        None => None,
    };
    let staged = match (&t, &b) {
        (Some(t), Some(b)) => b.count > 0 && zero_copy_addr(t, b, b.count as usize).is_none(),
        _ => false,
    };
    // Toward a rank of another IMPI client the message goes in external32, packed at
    // each start; a receive in an IMPI job carries its layout (see `impi_wire`).
    let ext32 = match (p, &t, &b) {
        (Persistent::Send(a) | Persistent::Bsend(a), Some(t), Some(b))
            if crate::impi_wire::send_converts(rt, a.dest, t) =>
        {
            Some(crate::impi_wire::pack(t, b, b.count as usize)?)
        }
        _ => None,
    };
    let staged = staged
        || (matches!(p, Persistent::Recv(_))
            && rt.impi_places.is_some()
            && t.as_ref().is_some_and(crate::impi_wire::converts)
            && b.is_some_and(|b| b.count > 0));
    let started = match p {
        Persistent::Bsend(mut a) => {
            if let Some(v) = &ext32 {
                a.buf = v.as_ptr();
                a.len = v.len();
            }
            let plan = SendPlan {
                args: a,
                layout: (staged && ext32.is_none()).then(|| {
                    let b = b.expect("buf");
                    Box::new(layout(t.as_ref().expect("type"), &b, b.count as usize))
                }),
                ext32,
            };
            let owner = r.owner;
            bsend_copy(rt, plan, owner)?;
            let _ = rt.device.start(id).err(); // Bsend templates are not started by the device
            rt.device.mark_done(id, Status::EMPTY);
            Ok(())
        }
        Persistent::Send(_) if ext32.is_some() => rt
            .device
            .start_staged(id, ext32.expect("packed"))
            .map_err(|_| Error::new(ErrorClass::Request, "cannot start request")),
        Persistent::Send(_) | Persistent::Recv(_) if staged => {
            let (t, b) = (t.expect("type"), b.expect("buf"));
            rt.device
                .start_layout(id, layout(&t, &b, b.count as usize))
                .map_err(|_| Error::new(ErrorClass::Request, "cannot start request"))
        }
        _ => rt
            .device
            .start(id)
            .map_err(|_| Error::new(ErrorClass::Request, "cannot start request")),
    };
    if let (Ok(()), Persistent::Send(a) | Persistent::Bsend(a)) = (&started, p) {
        rt.stats.sent(a.dest, a.len);
    }
    started
}

/// `MPI_Start`.
pub fn start(id: ReqId) -> Result<()> {
    runtime::with(|rt| start_one(rt, id))
}

/// `MPI_Startall`.
pub fn startall(ids: &[ReqId]) -> Result<()> {
    runtime::with(|rt| {
        for &id in ids {
            start_one(rt, id)?;
        }
        Ok(())
    })
}

// ----- completion ----------------------------------------------------------------------

#[cold]
pub(crate) fn invalid_request<T>(id: ReqId) -> Result<T> {
    err(ErrorClass::Request, format!("invalid request (index {id})"))
}

fn check_request(rt: &Runtime, id: ReqId) -> Result<()> {
    if rt.device.request(id).is_none() {
        return invalid_request(id);
    }
    Ok(())
}

/// The completion a finished request reports (None unless it was finished).
fn finished(f: Finish) -> Option<Completion> {
    match f {
        Finish::Done { status, released } => Some(Completion {
            status,
            freed: released,
        }),
        Finish::NotComplete | Finish::Inactive => None,
    }
}

/// The communicator of request `id`, which a completion call just reported finished
/// with `status`, an error (the handler of that communicator reports it). Looked up
/// only on failure, so that completions carry nothing more; `None` when the request's
/// slot has been reused since (another thread started a request).
#[cold]
#[inline(never)]
pub fn failed_comm(id: ReqId, status: &Status) -> Option<CommId> {
    runtime::with(|rt| Ok(rt.device.finished_owner(id, status)))
        .ok()
        .flatten()
}

/// `Device::finish_if_complete`, counting a receive that finishes for the tools
/// interface (`mpit::counters`); the request is looked up once for both.
#[inline]
fn finish_counted(rt: &mut Runtime, id: ReqId) -> Finish {
    let (f, recv_on) = rt.device.finish_noting_receive(id);
    if let (Some(comm), Finish::Done { status, .. }) = (recv_on, &f) {
        crate::mpit::counters::count_receive(rt, comm, status);
    }
    f
}

/// Finishes `id` if complete; an inactive persistent request reports the empty status.
pub(crate) fn try_finish(rt: &mut Runtime, id: ReqId) -> Option<Completion> {
    crate::p2p_mpi4::advance(rt);
    match finish_counted(rt, id) {
        Finish::Inactive => Some(Completion {
            status: Status::EMPTY,
            freed: false,
        }),
        f => finished(f),
    }
}

/// What one locked wait of [`wait`] ended with.
enum Waited {
    Done(Completion),
    /// A started fast-path collective waits for its peers: watched without the lock.
    Watch(crate::coll::shm::poll::Watch),
}

/// `MPI_Wait`.
pub fn wait(id: ReqId) -> Result<Completion> {
    let checked = std::cell::Cell::new(false);
    let finish = |rt: &mut Runtime| {
        if !checked.get() {
            check_request(rt, id)?;
            checked.set(true);
        }
        Ok(try_finish(rt, id).map(Waited::Done))
    };
    loop {
        // A request already complete (a collective that finished when it started, a
        // receive whose message arrived) is finished before a round of progress.
        let w = runtime::block_on_first(
            |rt| {
                if rt.device.request(id).is_some_and(|r| r.is_complete()) {
                    finish(rt)
                } else {
                    Ok(crate::coll::nbc::wait_watch(rt, id).map(Waited::Watch))
                }
            },
            &finish,
        )?;
        match w {
            Waited::Done(c) => return Ok(c),
            Waited::Watch(w) => w.wait()?,
        }
    }
}

/// `MPI_Test`: Some when complete.
pub fn test(id: ReqId) -> Result<Option<Completion>> {
    crate::coll::nbc::run_parked();
    runtime::with(|rt| {
        check_request(rt, id)?;
        if let Some(c) = try_finish(rt, id) {
            return Ok(Some(c));
        }
        runtime::progress_all(rt);
        Ok(try_finish(rt, id))
    })
}

fn active(rt: &Runtime, id: Option<ReqId>) -> Option<ReqId> {
    id.filter(|&i| rt.device.request(i).is_some_and(|r| !r.is_inactive()))
}

fn check_all(rt: &Runtime, ids: &[Option<ReqId>]) -> Result<()> {
    for id in ids.iter().flatten() {
        check_request(rt, *id)?;
    }
    Ok(())
}

fn first_done(rt: &mut Runtime, ids: &[Option<ReqId>]) -> Option<(usize, Completion)> {
    for (i, id) in ids.iter().enumerate() {
        if let Some(id) = active(rt, *id) {
            if let Some(c) = try_finish(rt, id) {
                return Some((i, c));
            }
        }
    }
    None
}

/// `MPI_Waitany`: None when every entry is null or inactive.
pub fn waitany(ids: &[Option<ReqId>]) -> Result<Option<(usize, Completion)>> {
    runtime::with(|rt| check_all(rt, ids))?;
    runtime::block_on(|rt| {
        if ids.iter().all(|id| active(rt, *id).is_none()) {
            return Ok(Some(None));
        }
        Ok(first_done(rt, ids).map(Some))
    })
}

/// `MPI_Testany`: (flag, which).
pub fn testany(ids: &[Option<ReqId>]) -> Result<(bool, Option<(usize, Completion)>)> {
    crate::coll::nbc::run_parked();
    runtime::with(|rt| {
        check_all(rt, ids)?;
        if ids.iter().all(|id| active(rt, *id).is_none()) {
            return Ok((true, None));
        }
        if let Some(d) = first_done(rt, ids) {
            return Ok((true, Some(d)));
        }
        runtime::progress_all(rt);
        Ok(match first_done(rt, ids) {
            Some(d) => (true, Some(d)),
            None => (false, None),
        })
    })
}

/// [`check_all`] and [`all_done`] in one pass.
fn check_all_done(rt: &Runtime, ids: &[Option<ReqId>]) -> Result<bool> {
    let mut done = true;
    for &id in ids.iter().flatten() {
        match rt.device.request(id) {
            Some(r) => done &= r.is_complete(),
            None => return invalid_request(id),
        }
    }
    Ok(done)
}

fn all_done(rt: &Runtime, ids: &[Option<ReqId>]) -> bool {
    // An inactive persistent request counts as complete (`is_complete`); a missing one
    // was rejected by the caller's checks.
    ids.iter()
        .flatten()
        .all(|&i| rt.device.request(i).is_none_or(|r| r.is_complete()))
}

fn finish_all(rt: &mut Runtime, ids: &[Option<ReqId>]) -> Vec<Option<Completion>> {
    let mut out = vec![None; ids.len()];
    finish_all_into(rt, ids, &mut out);
    out
}

/// Finishes every complete request of `ids`; null and inactive entries give None.
fn finish_all_into(rt: &mut Runtime, ids: &[Option<ReqId>], out: &mut [Option<Completion>]) {
    for (id, o) in ids.iter().zip(out) {
        *o = id.and_then(|i| finished(finish_counted(rt, i)));
    }
}

/// `MPI_Waitall`: one entry per request; None for null or inactive entries (their
/// status is the empty status).
pub fn waitall(ids: &[Option<ReqId>]) -> Result<Vec<Option<Completion>>> {
    let mut out = vec![None; ids.len()];
    waitall_into(ids, &mut out)?;
    Ok(out)
}

/// [`waitall`] into `out` (at least as long as `ids`), which the caller may keep
/// off the heap.
pub fn waitall_into(ids: &[Option<ReqId>], out: &mut [Option<Completion>]) -> Result<()> {
    if ids.len() <= 64 {
        return waitall_each(ids, out);
    }
    let mut checked = false;
    // Completion is checked before each round of progress: requests that completed when
    // they started (a receive whose message had arrived, a send that left at once) then
    // finish without polling rings whose next packet is not there yet.
    runtime::block_on_first(
        |rt| {
            crate::p2p_mpi4::advance(rt);
            let done = if checked {
                all_done(rt, ids)
            } else {
                checked = true;
                check_all_done(rt, ids)?
            };
            if !done {
                return Ok(None);
            }
            finish_all_into(rt, ids, out);
            Ok(Some(()))
        },
        |_| Ok(None),
    )
}

/// [`waitall_into`] for up to 64 requests: each is finished as soon as it is complete
/// (once all are valid), so none is looked at again.
fn waitall_each(ids: &[Option<ReqId>], out: &mut [Option<Completion>]) -> Result<()> {
    // Entries still to finish, by bit.
    let mut pending: Option<u64> = None;
    runtime::block_on_first(
        |rt| {
            let mut left = match pending {
                Some(p) => p,
                None => {
                    check_all(rt, ids)?;
                    let mut p = 0u64;
                    for (i, (id, o)) in ids.iter().zip(out.iter_mut()).enumerate() {
                        *o = match *id {
                            // The shared request of sends that left at once.
                            Some(DONE_SEND) => Some(Completion {
                                status: Status::EMPTY,
                                freed: true,
                            }),
                            Some(_) => {
                                p |= 1 << i;
                                None
                            }
                            None => None,
                        };
                    }
                    p
                }
            };
            crate::p2p_mpi4::advance(rt);
            let mut m = left;
            while m != 0 {
                let i = m.trailing_zeros() as usize;
                m &= m - 1;
                let Some(id) = ids[i] else { continue };
                match finish_counted(rt, id) {
                    Finish::NotComplete => continue,
                    f => out[i] = finished(f),
                }
                left &= !(1u64 << i);
            }
            pending = Some(left);
            Ok((left == 0).then_some(()))
        },
        |_| Ok(None),
    )
}

/// `MPI_Testall`: Some(all) when every request is complete, None otherwise (nothing is
/// released then).
pub fn testall(ids: &[Option<ReqId>]) -> Result<Option<Vec<Option<Completion>>>> {
    crate::coll::nbc::run_parked();
    runtime::with(|rt| {
        check_all(rt, ids)?;
        crate::p2p_mpi4::advance(rt);
        if !all_done(rt, ids) {
            runtime::progress_all(rt);
        }
        Ok(all_done(rt, ids).then(|| finish_all(rt, ids)))
    })
}

fn some_done(rt: &mut Runtime, ids: &[Option<ReqId>]) -> Vec<(usize, Completion)> {
    let mut out = Vec::new();
    for (i, id) in ids.iter().enumerate() {
        if let Some(id) = active(rt, *id) {
            if let Some(c) = try_finish(rt, id) {
                out.push((i, c));
            }
        }
    }
    out
}

/// `MPI_Waitsome`: None when every entry is null or inactive (outcount
/// `MPI_UNDEFINED`), else at least one completion.
pub fn waitsome(ids: &[Option<ReqId>]) -> Result<Option<Vec<(usize, Completion)>>> {
    runtime::with(|rt| check_all(rt, ids))?;
    runtime::block_on(|rt| {
        if ids.iter().all(|id| active(rt, *id).is_none()) {
            return Ok(Some(None));
        }
        let d = some_done(rt, ids);
        Ok((!d.is_empty()).then_some(Some(d)))
    })
}

/// `MPI_Testsome`: like [`waitsome`] but may return an empty list.
pub fn testsome(ids: &[Option<ReqId>]) -> Result<Option<Vec<(usize, Completion)>>> {
    crate::coll::nbc::run_parked();
    runtime::with(|rt| {
        check_all(rt, ids)?;
        if ids.iter().all(|id| active(rt, *id).is_none()) {
            return Ok(None);
        }
        runtime::progress_all(rt);
        Ok(Some(some_done(rt, ids)))
    })
}

/// `MPI_Request_get_status`: the status if complete, without releasing the request.
pub fn request_status(id: ReqId) -> Result<Option<Status>> {
    crate::coll::nbc::run_parked();
    runtime::with(|rt| {
        check_request(rt, id)?;
        runtime::progress_all(rt);
        let r = rt.device.request(id).expect("checked");
        if r.is_inactive() {
            return Ok(Some(Status::EMPTY));
        }
        Ok(r.is_complete().then(|| *r.status()))
    })
}

/// `MPI_Request_free`.
pub fn request_free(id: ReqId) -> Result<()> {
    runtime::with(|rt| {
        check_request(rt, id)?;
        if crate::coll::nbc::free(rt, id)? || crate::partitioned::free(rt, id)? {
            return Ok(());
        }
        let held = rt
            .device
            .request(id)
            .and_then(|r| r.persistent_buf())
            .map(|b| b.ty);
        rt.device.free_request(id);
        if let Some(ty) = held {
            rt.types.release(ty);
        }
        Ok(())
    })
}

/// `MPI_Cancel`.
pub fn cancel(id: ReqId) -> Result<()> {
    runtime::with(|rt| {
        check_request(rt, id)?;
        if crate::coll::nbc::owns(rt, id) {
            return err(
                ErrorClass::Request,
                "the request of a nonblocking or persistent collective cannot be cancelled",
            );
        }
        if crate::partitioned::owns(rt, id) {
            return Err(crate::partitioned::cancel_refused());
        }
        if !crate::p2p_mpi4::cancel_parts(rt, id) {
            rt.device.cancel(id);
        }
        Ok(())
    })
}

/// The communicator a request was started on (for error reporting).
pub fn request_comm(id: ReqId) -> Option<CommId> {
    runtime::with(|rt| Ok(rt.device.request(id).map(|r| r.owner)))
        .ok()
        .flatten()
}

// ----- probe -----------------------------------------------------------------------------

pub(crate) fn probe_spec(rt: &Runtime, src: i32, tag: i32, comm: CommId) -> Result<Option<Spec>> {
    let c = rt.comms.get(comm)?;
    check_recv_tag_on(c, tag)?;
    check_source(c, src)?;
    if src == PROC_NULL {
        return Ok(None);
    }
    Ok(Some(Spec {
        ctx: c.ctx,
        src,
        tag,
    }))
}

/// `MPI_Iprobe`.
pub fn iprobe(src: i32, tag: i32, comm: CommId) -> Result<Option<Status>> {
    runtime::with(|rt| {
        let Some(spec) = probe_spec(rt, src, tag, comm)? else {
            return Ok(Some(Status::proc_null()));
        };
        runtime::progress_all(rt);
        Ok(rt.device.probe_seen(spec))
    })
}

/// `MPI_Probe`.
pub fn probe(src: i32, tag: i32, comm: CommId) -> Result<Status> {
    let spec = runtime::with(|rt| probe_spec(rt, src, tag, comm))?;
    let Some(spec) = spec else {
        return Ok(Status::proc_null());
    };
    runtime::block_on(|rt| Ok(rt.device.probe_seen(spec)))
}

// ----- buffered-send buffer -----------------------------------------------------------------

/// `MPI_Buffer_attach`.
pub fn buffer_attach(addr: *mut u8, size: usize) -> Result<()> {
    runtime::with(|rt| {
        if addr.is_null() && size > 0 {
            return err(ErrorClass::Buffer, "null buffer");
        }
        if rt.device.bsend.is_attached() || rt.p2p4.automatic_process_buffer() {
            return err(ErrorClass::Buffer, "a buffer is already attached");
        }
        rt.device.bsend.attach(addr, size);
        Ok(())
    })
}

/// `MPI_Buffer_detach`: waits until every buffered message has left, then returns the
/// buffer.
pub fn buffer_detach() -> Result<(*mut u8, usize)> {
    runtime::with(|rt| {
        if !rt.device.bsend.is_attached() {
            return err(ErrorClass::Buffer, "no buffer is attached");
        }
        Ok(())
    })?;
    runtime::block_on(|rt| Ok((!rt.device.bsend.busy()).then(|| rt.device.bsend.detach())))
}

/// Bytes of a message of `count` elements of `ty` in packed form (`MPI_Pack_size`).
pub fn pack_size(count: i32, ty: TypeId) -> Result<usize> {
    runtime::with(|rt| {
        let count = check_count(count.into())?;
        let t = rt.types.get(ty)?;
        count
            .checked_mul(t.size)
            .ok_or_else(|| Error::new(ErrorClass::Count, "size overflows"))
    })
}

/// Size in bytes of one element of `ty`.
pub fn type_size(ty: TypeId) -> Result<usize> {
    runtime::with(|rt| Ok(rt.types.get(ty)?.size))
}

/// `MPI_Comm_size` (local group).
pub fn comm_size(comm: CommId) -> Result<i32> {
    runtime::with(|rt| Ok(rt.comms.get(comm)?.size()))
}

/// `MPI_Comm_rank`.
pub fn comm_rank(comm: CommId) -> Result<i32> {
    runtime::with(|rt| Ok(rt.comms.get(comm)?.rank))
}

/// `MPI_Sendrecv`.
///
/// # Safety
/// Both buffers must hold their counts of elements; they must not overlap.
#[allow(clippy::too_many_arguments)]
pub unsafe fn sendrecv(
    sb: Buf,
    dest: i32,
    stag: i32,
    rb: Buf,
    src: i32,
    rtag: i32,
    comm: CommId,
) -> Result<Status> {
    // SAFETY: forwarded contract.
    let r = unsafe { irecv(rb, src, rtag, comm)? };
    // SAFETY: forwarded contract.
    let s = match unsafe { isend(sb, dest, stag, comm, Mode::Standard) } {
        Ok(s) => s,
        Err(e) => {
            let _ = cancel(r);
            let _ = wait(r);
            return Err(e);
        }
    };
    let done = waitall(&[Some(s), Some(r)])?;
    Ok(done[1].map(|c| c.status).unwrap_or(Status::EMPTY))
}

/// `MPI_Sendrecv_replace`: the message is staged through a temporary copy.
///
/// # Safety
/// The buffer must hold `count` elements of the datatype.
pub unsafe fn sendrecv_replace(
    b: Buf,
    dest: i32,
    stag: i32,
    src: i32,
    rtag: i32,
    comm: CommId,
) -> Result<Status> {
    // SAFETY: forwarded contract.
    let (tmp, sb) = unsafe { replace_staging(&b, dest, comm)? };
    // SAFETY: `sb` describes `tmp`, which outlives the operation; `b` per contract.
    let s = unsafe { sendrecv(sb, dest, stag, b, src, rtag, comm) };
    drop(tmp);
    s
}

/// The packed copy of `b` that a send-receive with replace sends from, and the
/// buffer (bytes) that describes it. Toward a rank of another IMPI client the copy is
/// external32 already (sent as bytes, which external32 leaves as they are).
///
/// # Safety
/// The buffer must hold `count` elements of the datatype.
pub(crate) unsafe fn replace_staging(b: &Buf, dest: i32, comm: CommId) -> Result<(Vec<u8>, Buf)> {
    let (len, t, impi) = runtime::with(|rt| {
        let count = check_count(b.count)?;
        let t = rt.types.for_comm(b.ty)?.clone();
        check_buffer(b, &t)?;
        let c = rt.comms.get(comm)?;
        let impi = dest >= 0
            && c.peer_group()
                .world_of(dest)
                .is_some_and(|w| crate::impi_wire::send_converts(rt, w, &t));
        Ok((count * t.size, t, impi))
    })?;
    let count = b.count as usize;
    let mut tmp = vec![0u8; len];
    if impi {
        tmp = crate::impi_wire::pack(&t, b, count)?;
    } else if len > 0 {
        // SAFETY: the buffer holds count elements (contract).
        unsafe { t.pack(b.addr as *const u8, count, &mut tmp) };
    }
    let byte = crate::types::TypeId::from(oxmpi_datatype::Predefined::Byte as u32);
    let sb = Buf {
        addr: tmp.as_ptr() as usize,
        count: tmp.len() as i64,
        ty: byte,
    };
    Ok((tmp, sb))
}
