//! Point-to-point communication: the [`Destination`] and [`Source`] traits (implemented
//! by [`Process`] and, for receiving, [`AnyProcess`]), the [`Status`] of a received
//! message, and the combined send-receive functions, blocking and immediate.

use crate::datatype::{Buffer, BufferMut, DatatypeRef, Equivalence};
use crate::error::{engine, Error, ErrorClass, Result};
use crate::raw::{check_status, engine_count, recv_buf, send_buf, zeroed_vec, Fixup};
use crate::request::{PersistentRequest, Request, Scope};
use crate::topology::{AnyProcess, AsCommId, Process, Rank};
use oxmpi_core::device::Status as CoreStatus;
use oxmpi_core::p2p::{self, Buf, Mode};
use std::mem::MaybeUninit;

mod exchange;
mod matched;
pub use exchange::{immediate_send_receive_into, immediate_send_receive_replace_into};
pub use matched::Message;

/// A message tag.
pub type Tag = i32;

/// A count of elements, as MPI reports it.
pub type Count = i32;

/// The four send modes of MPI.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SendMode {
    /// The library chooses between buffering and waiting for the receiver (`MPI_Send`).
    Standard,
    /// The message is copied into the attached buffer
    /// ([`BufferAttachment`](crate::buffer::BufferAttachment)) and the send completes at
    /// once (`MPI_Bsend`).
    Buffered,
    /// The send completes only once the receiver has started receiving (`MPI_Ssend`).
    Synchronous,
    /// The receiver must already have posted its receive (`MPI_Rsend`); otherwise the
    /// program is erroneous.
    Ready,
}

impl SendMode {
    pub(crate) fn to_core(self) -> Mode {
        match self {
            SendMode::Standard => Mode::Standard,
            SendMode::Buffered => Mode::Buffered,
            SendMode::Synchronous => Mode::Synchronous,
            SendMode::Ready => Mode::Ready,
        }
    }
}

/// What a completed receive (or a probe) reports about a message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Status {
    inner: CoreStatus,
}

impl Status {
    pub(crate) fn from_core(inner: CoreStatus) -> Status {
        Status { inner }
    }

    /// The engine's status.
    pub fn raw(&self) -> CoreStatus {
        self.inner
    }

    /// The sender's rank ([`PROC_NULL`](crate::PROC_NULL) for a receive from the null
    /// process; [`ANY_SOURCE`](crate::ANY_SOURCE) for a send or a cancelled receive).
    pub fn source_rank(&self) -> Rank {
        self.inner.source
    }

    /// The message's tag.
    pub fn tag(&self) -> Tag {
        self.inner.tag
    }

    /// Bytes of data received.
    pub fn byte_count(&self) -> usize {
        self.inner.bytes as usize
    }

    /// How many values of `datatype` the message holds (`MPI_Get_count`);
    /// [`UNDEFINED`](crate::UNDEFINED) when it is not a whole number of them (or too
    /// many to count in an `i32`).
    pub fn count(&self, datatype: DatatypeRef) -> Count {
        let unit = datatype.value_size() as u64;
        let bytes = self.inner.bytes;
        if unit == 0 {
            return if bytes == 0 { 0 } else { crate::UNDEFINED };
        }
        if bytes % unit != 0 {
            return crate::UNDEFINED;
        }
        Count::try_from(bytes / unit).unwrap_or(crate::UNDEFINED)
    }

    /// How many values of `T` the message holds; see [`count`](Status::count).
    pub fn count_of<T: Equivalence>(&self) -> Count {
        self.count(T::equivalent_datatype())
    }

    /// True when the operation was cancelled (`MPI_Test_cancelled`).
    pub fn is_cancelled(&self) -> bool {
        self.inner.cancelled
    }
}

fn send_with_mode<D: Destination + ?Sized, B: Buffer + ?Sized>(
    d: &D,
    method: &'static str,
    buf: &B,
    tag: Tag,
    mode: SendMode,
) -> Result<()> {
    let b = send_buf(method, buf)?;
    // SAFETY: `b` describes `buf`, borrowed for the whole blocking call.
    unsafe { p2p::send(b, d.destination_rank(), tag, d.comm_id(), mode.to_core()) }
        .map_err(engine(method))
}

fn immediate_with_mode<'a, D, Sc, B>(
    d: &D,
    method: &'static str,
    scope: Sc,
    buf: &'a B,
    tag: Tag,
    mode: SendMode,
) -> Result<Request<'a, Sc>>
where
    D: Destination + ?Sized,
    Sc: Scope<'a>,
    B: Buffer + ?Sized,
{
    let b = send_buf(method, buf)?;
    // SAFETY: `buf` is borrowed for 'a and the request cannot outlive 'a nor be dropped
    // before the operation completes (see `request`).
    let id = unsafe { p2p::isend(b, d.destination_rank(), tag, d.comm_id(), mode.to_core()) }
        .map_err(engine(method))?;
    Ok(Request::new(id, scope, Fixup::none(), method))
}

/// A process that messages can be sent to.
pub trait Destination: AsCommId {
    /// The destination's rank in its communicator.
    fn destination_rank(&self) -> Rank;

    /// Sends `buf` with tag 0 in standard mode (`MPI_Send`).
    fn send<B: Buffer + ?Sized>(&self, buf: &B) -> Result<()> {
        send_with_mode(self, "send", buf, 0, SendMode::Standard)
    }

    /// Sends `buf` with `tag` in standard mode (`MPI_Send`).
    fn send_with_tag<B: Buffer + ?Sized>(&self, buf: &B, tag: Tag) -> Result<()> {
        send_with_mode(self, "send_with_tag", buf, tag, SendMode::Standard)
    }

    /// Sends `buf` with tag 0 in buffered mode (`MPI_Bsend`); needs an attached buffer.
    fn buffered_send<B: Buffer + ?Sized>(&self, buf: &B) -> Result<()> {
        send_with_mode(self, "buffered_send", buf, 0, SendMode::Buffered)
    }

    /// Sends `buf` with `tag` in buffered mode (`MPI_Bsend`).
    fn buffered_send_with_tag<B: Buffer + ?Sized>(&self, buf: &B, tag: Tag) -> Result<()> {
        send_with_mode(self, "buffered_send_with_tag", buf, tag, SendMode::Buffered)
    }

    /// Sends `buf` with tag 0 in synchronous mode (`MPI_Ssend`).
    fn synchronous_send<B: Buffer + ?Sized>(&self, buf: &B) -> Result<()> {
        send_with_mode(self, "synchronous_send", buf, 0, SendMode::Synchronous)
    }

    /// Sends `buf` with `tag` in synchronous mode (`MPI_Ssend`).
    fn synchronous_send_with_tag<B: Buffer + ?Sized>(&self, buf: &B, tag: Tag) -> Result<()> {
        send_with_mode(
            self,
            "synchronous_send_with_tag",
            buf,
            tag,
            SendMode::Synchronous,
        )
    }

    /// Sends `buf` with tag 0 in ready mode (`MPI_Rsend`): the receive must be posted.
    fn ready_send<B: Buffer + ?Sized>(&self, buf: &B) -> Result<()> {
        send_with_mode(self, "ready_send", buf, 0, SendMode::Ready)
    }

    /// Sends `buf` with `tag` in ready mode (`MPI_Rsend`).
    fn ready_send_with_tag<B: Buffer + ?Sized>(&self, buf: &B, tag: Tag) -> Result<()> {
        send_with_mode(self, "ready_send_with_tag", buf, tag, SendMode::Ready)
    }

    /// Sends `buf` with `tag` in `mode`.
    fn send_with_mode<B: Buffer + ?Sized>(&self, buf: &B, tag: Tag, mode: SendMode) -> Result<()> {
        send_with_mode(self, "send_with_mode", buf, tag, mode)
    }

    /// Starts a standard-mode send of `buf` with tag 0 (`MPI_Isend`).
    fn immediate_send<'a, Sc: Scope<'a>, B: Buffer + ?Sized>(
        &self,
        scope: Sc,
        buf: &'a B,
    ) -> Result<Request<'a, Sc>> {
        immediate_with_mode(self, "immediate_send", scope, buf, 0, SendMode::Standard)
    }

    /// Starts a standard-mode send of `buf` with `tag` (`MPI_Isend`).
    fn immediate_send_with_tag<'a, Sc: Scope<'a>, B: Buffer + ?Sized>(
        &self,
        scope: Sc,
        buf: &'a B,
        tag: Tag,
    ) -> Result<Request<'a, Sc>> {
        immediate_with_mode(
            self,
            "immediate_send_with_tag",
            scope,
            buf,
            tag,
            SendMode::Standard,
        )
    }

    /// Starts a buffered-mode send of `buf` with tag 0 (`MPI_Ibsend`).
    fn immediate_buffered_send<'a, Sc: Scope<'a>, B: Buffer + ?Sized>(
        &self,
        scope: Sc,
        buf: &'a B,
    ) -> Result<Request<'a, Sc>> {
        immediate_with_mode(
            self,
            "immediate_buffered_send",
            scope,
            buf,
            0,
            SendMode::Buffered,
        )
    }

    /// Starts a buffered-mode send of `buf` with `tag` (`MPI_Ibsend`).
    fn immediate_buffered_send_with_tag<'a, Sc: Scope<'a>, B: Buffer + ?Sized>(
        &self,
        scope: Sc,
        buf: &'a B,
        tag: Tag,
    ) -> Result<Request<'a, Sc>> {
        immediate_with_mode(
            self,
            "immediate_buffered_send_with_tag",
            scope,
            buf,
            tag,
            SendMode::Buffered,
        )
    }

    /// Starts a synchronous-mode send of `buf` with tag 0 (`MPI_Issend`).
    fn immediate_synchronous_send<'a, Sc: Scope<'a>, B: Buffer + ?Sized>(
        &self,
        scope: Sc,
        buf: &'a B,
    ) -> Result<Request<'a, Sc>> {
        immediate_with_mode(
            self,
            "immediate_synchronous_send",
            scope,
            buf,
            0,
            SendMode::Synchronous,
        )
    }

    /// Starts a synchronous-mode send of `buf` with `tag` (`MPI_Issend`).
    fn immediate_synchronous_send_with_tag<'a, Sc: Scope<'a>, B: Buffer + ?Sized>(
        &self,
        scope: Sc,
        buf: &'a B,
        tag: Tag,
    ) -> Result<Request<'a, Sc>> {
        immediate_with_mode(
            self,
            "immediate_synchronous_send_with_tag",
            scope,
            buf,
            tag,
            SendMode::Synchronous,
        )
    }

    /// Starts a ready-mode send of `buf` with tag 0 (`MPI_Irsend`).
    fn immediate_ready_send<'a, Sc: Scope<'a>, B: Buffer + ?Sized>(
        &self,
        scope: Sc,
        buf: &'a B,
    ) -> Result<Request<'a, Sc>> {
        immediate_with_mode(self, "immediate_ready_send", scope, buf, 0, SendMode::Ready)
    }

    /// Starts a ready-mode send of `buf` with `tag` (`MPI_Irsend`).
    fn immediate_ready_send_with_tag<'a, Sc: Scope<'a>, B: Buffer + ?Sized>(
        &self,
        scope: Sc,
        buf: &'a B,
        tag: Tag,
    ) -> Result<Request<'a, Sc>> {
        immediate_with_mode(
            self,
            "immediate_ready_send_with_tag",
            scope,
            buf,
            tag,
            SendMode::Ready,
        )
    }

    /// Starts a send of `buf` with `tag` in `mode`.
    fn immediate_send_with_mode<'a, Sc: Scope<'a>, B: Buffer + ?Sized>(
        &self,
        scope: Sc,
        buf: &'a B,
        tag: Tag,
        mode: SendMode,
    ) -> Result<Request<'a, Sc>> {
        immediate_with_mode(self, "immediate_send_with_mode", scope, buf, tag, mode)
    }

    /// Sets up a persistent standard-mode send of `buf` with tag 0 (`MPI_Send_init`).
    ///
    /// The request holds the exclusive borrow of `buf` and lends it back between runs
    /// ([`PersistentRequest::buffer_mut`]), so the data can change from run to run.
    fn send_init<'a, Sc: Scope<'a>, B: Buffer + ?Sized>(
        &self,
        scope: Sc,
        buf: &'a mut B,
    ) -> Result<PersistentRequest<'a, B, Sc>> {
        self.send_init_with_mode(scope, buf, 0, SendMode::Standard)
    }

    /// Sets up a persistent send of `buf` with `tag` in `mode` (`MPI_Send_init`,
    /// `MPI_Bsend_init`, `MPI_Ssend_init`, `MPI_Rsend_init`).
    fn send_init_with_mode<'a, Sc: Scope<'a>, B: Buffer + ?Sized>(
        &self,
        scope: Sc,
        buf: &'a mut B,
        tag: Tag,
        mode: SendMode,
    ) -> Result<PersistentRequest<'a, B, Sc>> {
        PersistentRequest::new_send(
            buf,
            self.destination_rank(),
            tag,
            self.comm_id(),
            mode,
            scope,
        )
    }
}

fn receive_value<T: Equivalence>(
    method: &'static str,
    src: Rank,
    tag: Tag,
    comm: u32,
) -> Result<(T, Status)> {
    let d = T::equivalent_datatype();
    let count = engine_count::<T>(method, 1)?;
    let mut v = MaybeUninit::<T>::zeroed();
    let p = v.as_mut_ptr();
    // SAFETY: `v` has room for one T, which is `count` elements of the datatype.
    let s = unsafe {
        p2p::recv(
            Buf::new(p.cast::<u8>(), count.into(), d.type_id()),
            src,
            tag,
            comm,
        )
    }
    .map_err(engine(method))?;
    // SAFETY: the receive is over; `v` holds zeroed bytes overwritten by received ones,
    // which repair makes a valid T (Equivalence contract).
    unsafe { T::repair(p, 1) };
    check_status(method, &s, d.value_size())?;
    if s.bytes as usize != d.value_size() {
        return Err(Error::new(
            method,
            ErrorClass::Count,
            format_args!(
                "message from rank {} with tag {} has {} bytes, but one {} has {} (use receive_vec or receive_into for messages of other lengths)",
                s.source,
                s.tag,
                s.bytes,
                std::any::type_name::<T>(),
                d.value_size()
            ),
        ));
    }
    // SAFETY: every data byte was received and repaired; padding bytes are zero.
    Ok((unsafe { v.assume_init() }, Status::from_core(s)))
}

fn receive_into_raw<B: BufferMut + ?Sized>(
    method: &'static str,
    buf: &mut B,
    src: Rank,
    tag: Tag,
    comm: u32,
) -> Result<Status> {
    let r = recv_buf(method, buf)?;
    // SAFETY: `r.buf` describes `buf`, mutably borrowed for the whole blocking call.
    let s = unsafe { p2p::recv(r.buf, src, tag, comm) };
    // SAFETY: the receive is over (or never started); the buffer is alive and unused.
    unsafe { r.fixup.apply() };
    let s = s.map_err(engine(method))?;
    check_status(method, &s, r.fixup.capacity)?;
    Ok(Status::from_core(s))
}

fn receive_vec_raw<T: Equivalence>(
    method: &'static str,
    src: Rank,
    tag: Tag,
    comm: u32,
) -> Result<(Vec<T>, Status)> {
    // A matched probe: the message sized is the one received, whatever other threads
    // receive meanwhile.
    let (m, _) = matched::matched_probe(method, src, tag, comm)?;
    m.receive_vec_as(method)
}

/// A process (or any process) that messages can be received from.
pub trait Source: AsCommId {
    /// The source's rank ([`ANY_SOURCE`](crate::ANY_SOURCE) for any process).
    fn source_rank(&self) -> Rank;

    /// Receives one value of `T` with any tag (`MPI_Recv`).
    ///
    /// The message must hold exactly one `T`: a longer one fails with class
    /// `MPI_ERR_TRUNCATE`, a shorter one with class `MPI_ERR_COUNT` (both consume it).
    fn receive<T: Equivalence>(&self) -> Result<(T, Status)> {
        receive_value(
            "receive",
            self.source_rank(),
            crate::ANY_TAG,
            self.comm_id(),
        )
    }

    /// Receives one value of `T` with tag `tag` (or [`ANY_TAG`](crate::ANY_TAG)).
    fn receive_with_tag<T: Equivalence>(&self, tag: Tag) -> Result<(T, Status)> {
        receive_value("receive_with_tag", self.source_rank(), tag, self.comm_id())
    }

    /// Receives a message with any tag into `buf` (`MPI_Recv`). The message may be
    /// shorter than `buf` (see [`Status::count_of`]); a longer one fails with class
    /// `MPI_ERR_TRUNCATE` after filling `buf`.
    fn receive_into<B: BufferMut + ?Sized>(&self, buf: &mut B) -> Result<Status> {
        receive_into_raw(
            "receive_into",
            buf,
            self.source_rank(),
            crate::ANY_TAG,
            self.comm_id(),
        )
    }

    /// Receives a message with tag `tag` (or [`ANY_TAG`](crate::ANY_TAG)) into `buf`.
    fn receive_into_with_tag<B: BufferMut + ?Sized>(
        &self,
        buf: &mut B,
        tag: Tag,
    ) -> Result<Status> {
        receive_into_raw(
            "receive_into_with_tag",
            buf,
            self.source_rank(),
            tag,
            self.comm_id(),
        )
    }

    /// Receives a message of any length with any tag into a new vector sized by the
    /// message (probe, then receive). A message that is not a whole number of `T` fails
    /// with class `MPI_ERR_TYPE` (and is consumed).
    fn receive_vec<T: Equivalence>(&self) -> Result<(Vec<T>, Status)> {
        receive_vec_raw(
            "receive_vec",
            self.source_rank(),
            crate::ANY_TAG,
            self.comm_id(),
        )
    }

    /// Like [`receive_vec`](Source::receive_vec), for a message with tag `tag`.
    fn receive_vec_with_tag<T: Equivalence>(&self, tag: Tag) -> Result<(Vec<T>, Status)> {
        receive_vec_raw(
            "receive_vec_with_tag",
            self.source_rank(),
            tag,
            self.comm_id(),
        )
    }

    /// Blocks until a message with any tag can be received, without receiving it
    /// (`MPI_Probe`).
    fn probe(&self) -> Result<Status> {
        p2p::probe(self.source_rank(), crate::ANY_TAG, self.comm_id())
            .map(Status::from_core)
            .map_err(engine("probe"))
    }

    /// Blocks until a message with tag `tag` can be received (`MPI_Probe`).
    fn probe_with_tag(&self, tag: Tag) -> Result<Status> {
        p2p::probe(self.source_rank(), tag, self.comm_id())
            .map(Status::from_core)
            .map_err(engine("probe_with_tag"))
    }

    /// Blocks until a message with any tag can be received and takes it (`MPI_Mprobe`):
    /// only the returned [`Message`]'s receive can get it.
    fn matched_probe(&self) -> Result<(Message, Status)> {
        matched::matched_probe(
            "matched_probe",
            self.source_rank(),
            crate::ANY_TAG,
            self.comm_id(),
        )
    }

    /// Blocks until a message with tag `tag` can be received and takes it (`MPI_Mprobe`).
    fn matched_probe_with_tag(&self, tag: Tag) -> Result<(Message, Status)> {
        matched::matched_probe(
            "matched_probe_with_tag",
            self.source_rank(),
            tag,
            self.comm_id(),
        )
    }

    /// Takes a message with any tag if one can be received now (`MPI_Improbe`).
    fn immediate_matched_probe(&self) -> Result<Option<(Message, Status)>> {
        matched::immediate_matched_probe(
            "immediate_matched_probe",
            self.source_rank(),
            crate::ANY_TAG,
            self.comm_id(),
        )
    }

    /// Takes a message with tag `tag` if one can be received now (`MPI_Improbe`).
    fn immediate_matched_probe_with_tag(&self, tag: Tag) -> Result<Option<(Message, Status)>> {
        matched::immediate_matched_probe(
            "immediate_matched_probe_with_tag",
            self.source_rank(),
            tag,
            self.comm_id(),
        )
    }

    /// Checks whether a message with any tag can be received now (`MPI_Iprobe`).
    fn immediate_probe(&self) -> Result<Option<Status>> {
        p2p::iprobe(self.source_rank(), crate::ANY_TAG, self.comm_id())
            .map(|s| s.map(Status::from_core))
            .map_err(engine("immediate_probe"))
    }

    /// Checks whether a message with tag `tag` can be received now (`MPI_Iprobe`).
    fn immediate_probe_with_tag(&self, tag: Tag) -> Result<Option<Status>> {
        p2p::iprobe(self.source_rank(), tag, self.comm_id())
            .map(|s| s.map(Status::from_core))
            .map_err(engine("immediate_probe_with_tag"))
    }

    /// Starts a receive of a message with any tag into `buf` (`MPI_Irecv`).
    fn immediate_receive_into<'a, Sc: Scope<'a>, B: BufferMut + ?Sized>(
        &self,
        scope: Sc,
        buf: &'a mut B,
    ) -> Result<Request<'a, Sc>> {
        immediate_receive(self, "immediate_receive_into", scope, buf, crate::ANY_TAG)
    }

    /// Starts a receive of a message with tag `tag` into `buf` (`MPI_Irecv`).
    fn immediate_receive_into_with_tag<'a, Sc: Scope<'a>, B: BufferMut + ?Sized>(
        &self,
        scope: Sc,
        buf: &'a mut B,
        tag: Tag,
    ) -> Result<Request<'a, Sc>> {
        immediate_receive(self, "immediate_receive_into_with_tag", scope, buf, tag)
    }

    /// Sets up a persistent receive into `buf` of messages with tag `tag` (or
    /// [`ANY_TAG`](crate::ANY_TAG)) (`MPI_Recv_init`). Between runs the request lends
    /// the buffer back ([`PersistentRequest::buffer_mut`]) to read what arrived.
    fn receive_init_with_tag<'a, Sc: Scope<'a>, B: BufferMut + ?Sized>(
        &self,
        scope: Sc,
        buf: &'a mut B,
        tag: Tag,
    ) -> Result<PersistentRequest<'a, B, Sc>> {
        PersistentRequest::new_receive(buf, self.source_rank(), tag, self.comm_id(), scope)
    }

    /// Sets up a persistent receive into `buf` of messages with any tag.
    fn receive_init<'a, Sc: Scope<'a>, B: BufferMut + ?Sized>(
        &self,
        scope: Sc,
        buf: &'a mut B,
    ) -> Result<PersistentRequest<'a, B, Sc>> {
        self.receive_init_with_tag(scope, buf, crate::ANY_TAG)
    }
}

fn immediate_receive<'a, S, Sc, B>(
    s: &S,
    method: &'static str,
    scope: Sc,
    buf: &'a mut B,
    tag: Tag,
) -> Result<Request<'a, Sc>>
where
    S: Source + ?Sized,
    Sc: Scope<'a>,
    B: BufferMut + ?Sized,
{
    let r = recv_buf(method, buf)?;
    // SAFETY: `buf` is mutably borrowed for 'a; the request cannot outlive 'a and is
    // waited for before it is released (see `request`).
    let id =
        unsafe { p2p::irecv(r.buf, s.source_rank(), tag, s.comm_id()) }.map_err(engine(method))?;
    Ok(Request::new(id, scope, r.fixup, method))
}

impl Destination for Process<'_> {
    fn destination_rank(&self) -> Rank {
        self.rank()
    }
}

impl Source for Process<'_> {
    fn source_rank(&self) -> Rank {
        self.rank()
    }
}

impl Source for AnyProcess<'_> {
    fn source_rank(&self) -> Rank {
        crate::ANY_SOURCE
    }
}

fn same_comm<D: Destination + ?Sized, S: Source + ?Sized>(
    method: &'static str,
    d: &D,
    s: &S,
) -> Result<u32> {
    if d.comm_id() != s.comm_id() {
        return Err(Error::new(
            method,
            ErrorClass::Comm,
            "the destination and the source belong to different communicators",
        ));
    }
    Ok(d.comm_id())
}

/// Sends `msg` to `destination` with tag 0 and receives one value of `R` with any tag
/// from `source` (`MPI_Sendrecv`). The message received must hold exactly one `R`.
pub fn send_receive<R, S, D, Src>(msg: &S, destination: &D, source: &Src) -> Result<(R, Status)>
where
    R: Equivalence,
    S: Buffer + ?Sized,
    D: Destination + ?Sized,
    Src: Source + ?Sized,
{
    send_receive_with_tags(msg, destination, 0, source, crate::ANY_TAG)
}

/// Like [`send_receive`], with a send tag and a receive tag.
pub fn send_receive_with_tags<R, S, D, Src>(
    msg: &S,
    destination: &D,
    sendtag: Tag,
    source: &Src,
    receivetag: Tag,
) -> Result<(R, Status)>
where
    R: Equivalence,
    S: Buffer + ?Sized,
    D: Destination + ?Sized,
    Src: Source + ?Sized,
{
    const M: &str = "send_receive";
    let mut v = zeroed_vec::<R>(1);
    let s = send_receive_into_raw(M, msg, destination, sendtag, &mut v[..], source, receivetag)?;
    let unit = R::equivalent_datatype().value_size();
    if s.byte_count() != unit {
        return Err(Error::new(
            M,
            ErrorClass::Count,
            format_args!(
                "message from rank {} with tag {} has {} bytes, but one {} has {}",
                s.source_rank(),
                s.tag(),
                s.byte_count(),
                std::any::type_name::<R>(),
                unit
            ),
        ));
    }
    let value = v.pop().expect("one element");
    Ok((value, s))
}

/// Sends `msg` to `destination` with tag 0 and receives into `buf` a message with any
/// tag from `source` (`MPI_Sendrecv`).
pub fn send_receive_into<S, D, B, Src>(
    msg: &S,
    destination: &D,
    buf: &mut B,
    source: &Src,
) -> Result<Status>
where
    S: Buffer + ?Sized,
    D: Destination + ?Sized,
    B: BufferMut + ?Sized,
    Src: Source + ?Sized,
{
    send_receive_into_raw(
        "send_receive_into",
        msg,
        destination,
        0,
        buf,
        source,
        crate::ANY_TAG,
    )
}

/// Like [`send_receive_into`], with a send tag and a receive tag.
pub fn send_receive_into_with_tags<S, D, B, Src>(
    msg: &S,
    destination: &D,
    sendtag: Tag,
    buf: &mut B,
    source: &Src,
    receivetag: Tag,
) -> Result<Status>
where
    S: Buffer + ?Sized,
    D: Destination + ?Sized,
    B: BufferMut + ?Sized,
    Src: Source + ?Sized,
{
    send_receive_into_raw(
        "send_receive_into_with_tags",
        msg,
        destination,
        sendtag,
        buf,
        source,
        receivetag,
    )
}

fn send_receive_into_raw<S, D, B, Src>(
    method: &'static str,
    msg: &S,
    destination: &D,
    sendtag: Tag,
    buf: &mut B,
    source: &Src,
    receivetag: Tag,
) -> Result<Status>
where
    S: Buffer + ?Sized,
    D: Destination + ?Sized,
    B: BufferMut + ?Sized,
    Src: Source + ?Sized,
{
    let comm = same_comm(method, destination, source)?;
    let sb = send_buf(method, msg)?;
    let r = recv_buf(method, buf)?;
    // SAFETY: `sb` and `r.buf` describe `msg` and `buf`, borrowed (shared and mutably,
    // so they do not overlap) for the whole blocking call.
    let s = unsafe {
        p2p::sendrecv(
            sb,
            destination.destination_rank(),
            sendtag,
            r.buf,
            source.source_rank(),
            receivetag,
            comm,
        )
    };
    // SAFETY: the operation is over; the buffer is alive and unused.
    unsafe { r.fixup.apply() };
    let s = s.map_err(engine(method))?;
    check_status(method, &s, r.fixup.capacity)?;
    Ok(Status::from_core(s))
}

/// Sends the contents of `buf` to `destination` with tag 0 and replaces them with a
/// message with any tag from `source` (`MPI_Sendrecv_replace`).
pub fn send_receive_replace_into<B, D, Src>(
    buf: &mut B,
    destination: &D,
    source: &Src,
) -> Result<Status>
where
    B: BufferMut + ?Sized,
    D: Destination + ?Sized,
    Src: Source + ?Sized,
{
    send_receive_replace_into_with_tags(buf, destination, 0, source, crate::ANY_TAG)
}

/// Like [`send_receive_replace_into`], with a send tag and a receive tag.
pub fn send_receive_replace_into_with_tags<B, D, Src>(
    buf: &mut B,
    destination: &D,
    sendtag: Tag,
    source: &Src,
    receivetag: Tag,
) -> Result<Status>
where
    B: BufferMut + ?Sized,
    D: Destination + ?Sized,
    Src: Source + ?Sized,
{
    const M: &str = "send_receive_replace_into";
    let comm = same_comm(M, destination, source)?;
    let r = recv_buf(M, buf)?;
    // SAFETY: `r.buf` describes `buf`, mutably borrowed for the whole blocking call; the
    // engine sends from a copy and receives into the buffer.
    let s = unsafe {
        p2p::sendrecv_replace(
            r.buf,
            destination.destination_rank(),
            sendtag,
            source.source_rank(),
            receivetag,
            comm,
        )
    };
    // SAFETY: the operation is over; the buffer is alive and unused.
    unsafe { r.fixup.apply() };
    let s = s.map_err(engine(M))?;
    check_status(M, &s, r.fixup.capacity)?;
    Ok(Status::from_core(s))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status(bytes: u64) -> Status {
        Status::from_core(CoreStatus {
            source: 2,
            tag: 5,
            bytes,
            ..CoreStatus::EMPTY
        })
    }

    #[test]
    fn counts_in_values_of_the_datatype() {
        let s = status(24);
        assert_eq!(s.count_of::<f64>(), 3);
        assert_eq!(s.count_of::<[f64; 3]>(), 1);
        assert_eq!(s.count_of::<u8>(), 24);
        assert_eq!(s.count_of::<[u8; 5]>(), crate::UNDEFINED);
        assert_eq!(s.count_of::<[u8; 0]>(), crate::UNDEFINED);
        assert_eq!(status(0).count_of::<[u8; 0]>(), 0);
        assert_eq!(status(1 << 40).count_of::<u8>(), crate::UNDEFINED);
        assert_eq!((s.source_rank(), s.tag(), s.byte_count()), (2, 5, 24));
        assert!(!s.is_cancelled());
    }

    #[test]
    fn send_modes_map_to_engine_modes() {
        assert_eq!(SendMode::Buffered.to_core(), Mode::Buffered);
        assert_eq!(SendMode::Ready.to_core(), Mode::Ready);
        assert_eq!(SendMode::Synchronous.to_core(), Mode::Synchronous);
        assert_eq!(SendMode::Standard.to_core(), Mode::Standard);
    }
}
