//! Matched probe (`MPI_Mprobe`, `MPI_Improbe`) and the [`Message`] it returns, which
//! only its own matched receive (`MPI_Mrecv`, `MPI_Imrecv`) can get: no other receive
//! or probe, in this thread or another, can take the message in between.

use super::{Status, Tag};
use crate::datatype::{BufferMut, Equivalence};
use crate::error::{engine, Error, ErrorClass, Result};
use crate::raw::{check_status, engine_count, recv_buf, zeroed_vec};
use crate::request::{Request, Scope};
use oxmpi_core::mprobe::{self, RecvBuf};
use std::mem::MaybeUninit;

/// A message taken out of the queue by a matched probe
/// ([`Source::matched_probe`](super::Source::matched_probe)),
/// waiting for its receive (`MPI_Message`). Each receive method consumes it. A message
/// dropped without being received is discarded: it is received into an empty buffer,
/// so that its sender is not left waiting.
#[derive(Debug)]
#[must_use = "a matched message is only received through its own receive methods"]
pub struct Message {
    inner: Option<mprobe::Message>,
    /// The probe's status (what the message holds).
    status: Status,
}

impl Message {
    fn new(inner: mprobe::Message, status: Status) -> Message {
        Message {
            inner: Some(inner),
            status,
        }
    }

    /// True for the message of a probe of [`PROC_NULL`](crate::PROC_NULL)
    /// (`MPI_MESSAGE_NO_PROC`): its receive completes at once and receives nothing.
    pub fn is_no_proc(&self) -> bool {
        self.inner == Some(mprobe::Message::NoProc)
    }

    /// What the probe reported about the message (source, tag, length).
    pub fn status(&self) -> Status {
        self.status
    }

    fn take(&mut self) -> mprobe::Message {
        self.inner.take().expect("a message is received only once")
    }

    /// Receives the message into `buf` (`MPI_Mrecv`). It may be shorter than `buf`
    /// (see [`Status::count_of`]); a longer one fails with class `MPI_ERR_TRUNCATE`
    /// after filling `buf`.
    pub fn matched_receive_into<B: BufferMut + ?Sized>(self, buf: &mut B) -> Result<Status> {
        self.receive_into_as("matched_receive_into", buf)
    }

    fn receive_into_as<B: BufferMut + ?Sized>(
        mut self,
        method: &'static str,
        buf: &mut B,
    ) -> Result<Status> {
        let r = recv_buf(method, buf)?;
        let rb = RecvBuf {
            addr: r.buf.addr,
            count: r.buf.count,
            ty: r.buf.ty,
        };
        // SAFETY: `rb` describes `buf`, mutably borrowed for the whole blocking call.
        let s = unsafe { mprobe::mrecv(rb, self.take()) };
        // SAFETY: the receive is over (or never started); the buffer is alive and unused.
        unsafe { r.fixup.apply() };
        let s = s.map_err(engine(method))?;
        check_status(method, &s, r.fixup.capacity)?;
        Ok(Status::from_core(s))
    }

    /// Receives the message, which must hold exactly one `T` (`MPI_Mrecv`): a longer
    /// one fails with class `MPI_ERR_TRUNCATE`, a shorter one with `MPI_ERR_COUNT`.
    pub fn matched_receive<T: Equivalence>(mut self) -> Result<(T, Status)> {
        const METHOD: &str = "matched_receive";
        let d = T::equivalent_datatype();
        let count = engine_count::<T>(METHOD, 1)?;
        let mut v = MaybeUninit::<T>::zeroed();
        let p = v.as_mut_ptr();
        let rb = RecvBuf {
            addr: p as usize,
            count: i64::from(count),
            ty: d.type_id(),
        };
        // SAFETY: `v` has room for one T, which is `count` elements of the datatype.
        let s = unsafe { mprobe::mrecv(rb, self.take()) }.map_err(engine(METHOD))?;
        // SAFETY: the receive is over; `v` holds zeroed bytes overwritten by received
        // ones, which repair makes a valid T (Equivalence contract).
        unsafe { T::repair(p, 1) };
        check_status(METHOD, &s, d.value_size())?;
        if s.source >= 0 && s.bytes as usize != d.value_size() {
            return Err(Error::new(
                METHOD,
                ErrorClass::Count,
                format_args!(
                    "message from rank {} with tag {} has {} bytes, but one {} has {}",
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

    /// Receives the message into a new vector sized by it. A message that is not a
    /// whole number of `T` fails with class `MPI_ERR_TYPE` (and is consumed).
    pub fn matched_receive_vec<T: Equivalence>(self) -> Result<(Vec<T>, Status)> {
        self.receive_vec_as("matched_receive_vec")
    }

    /// [`Message::matched_receive_vec`] for method `method`.
    pub(super) fn receive_vec_as<T: Equivalence>(
        self,
        method: &'static str,
    ) -> Result<(Vec<T>, Status)> {
        let unit = T::equivalent_datatype().value_size();
        let bytes = self.status.byte_count();
        let n = if unit == 0 { 0 } else { bytes.div_ceil(unit) };
        let mut v = zeroed_vec::<T>(n);
        let s = self.receive_into_as(method, &mut v[..])?;
        if unit != 0 && s.byte_count() % unit != 0 {
            return Err(Error::new(
                method,
                ErrorClass::Type,
                format_args!(
                    "message from rank {} with tag {} has {} bytes, not a whole number of {} ({} bytes each)",
                    s.source_rank(),
                    s.tag(),
                    s.byte_count(),
                    std::any::type_name::<T>(),
                    unit
                ),
            ));
        }
        v.truncate(s.byte_count().checked_div(unit).unwrap_or(0));
        Ok((v, s))
    }

    /// Starts the receive of the message into `buf` (`MPI_Imrecv`).
    pub fn immediate_matched_receive_into<'a, Sc: Scope<'a>, B: BufferMut + ?Sized>(
        mut self,
        scope: Sc,
        buf: &'a mut B,
    ) -> Result<Request<'a, Sc>> {
        const METHOD: &str = "immediate_matched_receive_into";
        let r = recv_buf(METHOD, buf)?;
        let rb = RecvBuf {
            addr: r.buf.addr,
            count: r.buf.count,
            ty: r.buf.ty,
        };
        // SAFETY: `buf` is mutably borrowed for 'a; the request cannot outlive 'a and is
        // waited for before it is released (see `request`).
        let id = unsafe { mprobe::imrecv(rb, self.take()) }.map_err(engine(METHOD))?;
        Ok(Request::new(id, scope, r.fixup, METHOD))
    }
}

impl Drop for Message {
    fn drop(&mut self) {
        if let Some(m) = self.inner.take() {
            let nothing = RecvBuf {
                addr: 0,
                count: 0,
                ty: u8::equivalent_datatype().type_id(),
            };
            // SAFETY: a receive of zero elements writes nothing. Its truncation (or a
            // lost sender) is what discarding means, so the outcome is not reported.
            let _ = unsafe { mprobe::mrecv(nothing, m) };
        }
    }
}

/// The blocking matched probes of [`super::Source`].
pub(super) fn matched_probe(
    method: &'static str,
    src: i32,
    tag: Tag,
    comm: u32,
) -> Result<(Message, Status)> {
    let (m, s) = mprobe::mprobe(src, tag, comm).map_err(engine(method))?;
    let s = Status::from_core(s);
    Ok((Message::new(m, s), s))
}

/// The immediate matched probes of [`super::Source`].
pub(super) fn immediate_matched_probe(
    method: &'static str,
    src: i32,
    tag: Tag,
    comm: u32,
) -> Result<Option<(Message, Status)>> {
    let found = mprobe::improbe(src, tag, comm).map_err(engine(method))?;
    Ok(found.map(|(m, s)| {
        let s = Status::from_core(s);
        (Message::new(m, s), s)
    }))
}
