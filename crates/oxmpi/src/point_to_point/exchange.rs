//! Nonblocking send-receive (`MPI_Isendrecv`, `MPI_Isendrecv_replace`): one request that
//! completes when both the send and the receive have, with the receive's status. The
//! buffers are borrowed for the request's scope like those of the other immediate
//! operations ([`crate::request`]).

use super::{same_comm, Destination, Source, Tag};
use crate::datatype::{Buffer, BufferMut};
use crate::error::{engine, Result};
use crate::raw::{recv_buf, send_buf};
use crate::request::{Request, Scope};
use oxmpi_core::p2p_mpi4;

/// Starts sending `msg` to `destination` with tag `sendtag` and receiving into `buf` a
/// message from `source` with tag `receivetag` (or [`ANY_TAG`](crate::ANY_TAG))
/// (`MPI_Isendrecv`). The request's status is the receive's; a message longer than `buf`
/// fails with class `MPI_ERR_TRUNCATE` when the request is finished.
///
/// ```no_run
/// use oxmpi::traits::*;
///
/// let universe = oxmpi::initialize()?;
/// let world = universe.world();
/// let next = world.process_at_rank((world.rank() + 1) % world.size());
/// let prev = world.process_at_rank((world.rank() + world.size() - 1) % world.size());
/// let out = [world.rank(); 4];
/// let mut got = [0i32; 4];
/// oxmpi::request::scope(|scope| -> oxmpi::Result<()> {
///     let r = oxmpi::point_to_point::immediate_send_receive_into(
///         scope, &out[..], &next, 7, &mut got[..], &prev, 7,
///     )?;
///     let status = r.wait()?;
///     assert_eq!(status.source_rank(), prev.rank());
///     Ok(())
/// })?;
/// # Ok::<(), oxmpi::Error>(())
/// ```
#[allow(clippy::too_many_arguments)]
pub fn immediate_send_receive_into<'a, Sc, S, D, B, Src>(
    scope: Sc,
    msg: &'a S,
    destination: &D,
    sendtag: Tag,
    buf: &'a mut B,
    source: &Src,
    receivetag: Tag,
) -> Result<Request<'a, Sc>>
where
    Sc: Scope<'a>,
    S: Buffer + ?Sized,
    D: Destination + ?Sized,
    B: BufferMut + ?Sized,
    Src: Source + ?Sized,
{
    const M: &str = "immediate_send_receive_into";
    let comm = same_comm(M, destination, source)?;
    let sb = send_buf(M, msg)?;
    let r = recv_buf(M, buf)?;
    // SAFETY: `msg` (shared) and `buf` (mutable, so they do not overlap) are borrowed for
    // 'a; the request cannot outlive 'a and is waited for before it is released (see
    // `crate::request`).
    let id = unsafe {
        p2p_mpi4::isendrecv(
            sb,
            destination.destination_rank(),
            sendtag,
            r.buf,
            source.source_rank(),
            receivetag,
            comm,
        )
    }
    .map_err(engine(M))?;
    Ok(Request::new(id, scope, r.fixup, M))
}

/// Starts sending the contents of `buf` to `destination` with tag `sendtag` and
/// replacing them with a message from `source` with tag `receivetag`
/// (`MPI_Isendrecv_replace`). The message to send is copied when the call starts.
pub fn immediate_send_receive_replace_into<'a, Sc, B, D, Src>(
    scope: Sc,
    buf: &'a mut B,
    destination: &D,
    sendtag: Tag,
    source: &Src,
    receivetag: Tag,
) -> Result<Request<'a, Sc>>
where
    Sc: Scope<'a>,
    B: BufferMut + ?Sized,
    D: Destination + ?Sized,
    Src: Source + ?Sized,
{
    const M: &str = "immediate_send_receive_replace_into";
    let comm = same_comm(M, destination, source)?;
    let r = recv_buf(M, buf)?;
    // SAFETY: `buf` is mutably borrowed for 'a; the request cannot outlive 'a and is
    // waited for before it is released; the engine sends from its own copy.
    let id = unsafe {
        p2p_mpi4::isendrecv_replace(
            r.buf,
            destination.destination_rank(),
            sendtag,
            source.source_rank(),
            receivetag,
            comm,
        )
    }
    .map_err(engine(M))?;
    Ok(Request::new(id, scope, r.fixup, M))
}
