//! The short path of the commonest point-to-point calls: a standard-mode send
//! (`MPI_Send`, `MPI_Isend`) or a receive (`MPI_Recv`, `MPI_Irecv`) of a contiguous
//! buffer of a predefined type (the binding passes plain bytes), on an
//! intracommunicator, to or from a named rank reached over shared memory, with a
//! named tag. It skips the general path's decoding (datatype table, send modes,
//! layouts, IMPI conversion, plans) and calls the same device operations the general
//! path ends in for such a call (`Device::send_now`, `recv_direct`, `irecv_from`), so
//! every ordering and matching rule is theirs: a send queued for the peer keeps later
//! ones behind it, a posted or stored receive (a wildcard one too) keeps the ring's
//! next packet from a receive that would take it directly.
//!
//! Each function declines (`false`, `None`, [`ShortRecv::Declined`]) when the call is
//! not one it handles or would fail — `MPI_PROC_NULL`, wildcards, a bad rank, tag or
//! communicator, a message above the eager limit, a call a thread level refuses — and
//! the general path then carries it out or reports the error, with the same outcome.
//! The runtime lock is taken as by every call, so thread levels keep their rules.

use crate::comm::{Comm, CommId};
use crate::device::matching::Spec;
use crate::device::{Direct, RecvArgs, ReqId, SendArgs, SendMode, Status};
use crate::runtime::{self, Runtime};
use crate::transport::Route;
use crate::TAG_UB;

/// The world rank of rank `rank` of intracommunicator `c` if the device reaches it
/// over shared memory.
#[inline(always)]
fn shm_peer(rt: &Runtime, c: &Comm, rank: i32) -> Option<u32> {
    if c.remote.is_some() {
        return None;
    }
    let w = c.group.world_of(rank)?;
    matches!(rt.device.route(w), Route::Shm(_)).then_some(w)
}

/// A tag a send may carry and a receive may name (not `MPI_ANY_TAG`).
#[inline(always)]
fn named_tag(tag: i32) -> bool {
    (0..=TAG_UB).contains(&tag)
}

/// A standard-mode send of the `len` bytes at `buf` to rank `dest` of `comm`: true
/// when the message left (the call is complete; `MPI_Isend` hands out `DONE_SEND`).
///
/// # Safety
/// `buf` holds `len` bytes (MPI contract).
#[inline]
pub unsafe fn send(buf: *const u8, len: usize, dest: i32, tag: i32, comm: CommId) -> bool {
    if !named_tag(tag) {
        return false;
    }
    runtime::with(|rt| {
        let Ok(c) = rt.comms.get(comm) else {
            return Ok(false);
        };
        let Some(w) = shm_peer(rt, c, dest) else {
            return Ok(false);
        };
        let a = SendArgs {
            dest: w,
            ctx: c.ctx,
            src_rank: c.rank,
            tag,
            buf,
            len,
            mode: SendMode::Standard,
        };
        if !rt.device.send_now(&a) {
            return Ok(false);
        }
        rt.stats.sent(w, len);
        Ok(true)
    })
    .unwrap_or(false)
}

/// What [`recv`] did.
pub enum ShortRecv {
    /// The message was received.
    Took(Status),
    /// Nothing from the source yet: wait for its next packet
    /// ([`crate::p2p::recv_wait_direct`]).
    Wait(RecvArgs, u32),
    /// The short path does not apply: take the general one.
    Declined,
}

/// The receive arguments of the short path and the source's world rank, when it applies.
#[inline(always)]
fn recv_args(
    rt: &Runtime,
    c: &Comm,
    buf: *mut u8,
    cap: usize,
    src: i32,
    tag: i32,
) -> Option<(RecvArgs, u32)> {
    let w = shm_peer(rt, c, src)?;
    let spec = Spec {
        ctx: c.ctx,
        src,
        tag,
    };
    Some((RecvArgs { spec, buf, cap }, w))
}

/// `MPI_Recv` into the `cap` bytes at `buf` from rank `src` of `comm`: the source's next
/// packet straight from the ring when nothing posted or stored comes before it.
///
/// # Safety
/// `buf` holds `cap` writable bytes (MPI contract).
#[inline]
pub unsafe fn recv(buf: *mut u8, cap: usize, src: i32, tag: i32, comm: CommId) -> ShortRecv {
    if !named_tag(tag) {
        return ShortRecv::Declined;
    }
    runtime::with(|rt| {
        let Ok(c) = rt.comms.get(comm) else {
            return Ok(ShortRecv::Declined);
        };
        let Some((a, w)) = recv_args(rt, c, buf, cap, src, tag) else {
            return Ok(ShortRecv::Declined);
        };
        Ok(match rt.device.recv_direct(w, &a) {
            Direct::Took(s) => {
                rt.stats.received(w, s.bytes);
                ShortRecv::Took(s)
            }
            Direct::Empty => ShortRecv::Wait(a, w),
            Direct::Busy => ShortRecv::Declined,
        })
    })
    .unwrap_or(ShortRecv::Declined)
}

/// `MPI_Irecv` into the `cap` bytes at `buf` from rank `src` of `comm`: the request,
/// complete when a stored message or the ring's next packet matched at once.
///
/// # Safety
/// `buf` holds `cap` writable bytes and stays valid until the request completes.
#[inline]
pub unsafe fn irecv(buf: *mut u8, cap: usize, src: i32, tag: i32, comm: CommId) -> Option<ReqId> {
    if !named_tag(tag) {
        return None;
    }
    runtime::with(|rt| {
        let Ok(c) = rt.comms.get(comm) else {
            return Ok(None);
        };
        let overtaking = c.hints.allow_overtaking;
        let Some((a, w)) = recv_args(rt, c, buf, cap, src, tag) else {
            return Ok(None);
        };
        Ok(Some(rt.device.irecv_from(w, a, overtaking, comm)))
    })
    .unwrap_or(None)
}
