//! External32 at the receiver (IMPI 1.2.2): the bytes of a message from an IMPI peer
//! (`Route::Impi`, a rank of another client) are in the external32 representation;
//! the sender's MPI layer packed them so. A receive that may match such a message
//! comes with the layout of its buffer (the MPI layer gives one even for a contiguous
//! type). Once it matches a message from an IMPI peer, the receive is restaged: the
//! message lands contiguously in a scratch buffer sized for the external32 form of the
//! receive's elements (which also judges truncation in external32 bytes), and at
//! completion the scratch is converted into the user's buffer and the status counts
//! native bytes again. A long message's whole elements are converted as its pieces
//! land in order (while their bytes are still in cache), the rest at completion. A
//! message from a rank of this client lands natively, as ever.

use super::{Io, Protocol};
use crate::device::request::Layout;
use crate::device::request::{
    InvalidRequest, Op, Outcome, Persistent, ReqId, Request, SendState, Status,
};
use crate::transport::Route;

impl Protocol {
    /// Receive `id` has matched a message from world rank `from`: restage it when the
    /// message comes from an IMPI peer and the receive has a layout.
    #[inline]
    pub(super) fn restage_ext32(&mut self, id: ReqId, from: u32) {
        if matches!(self.route(from), Route::Impi) {
            self.restage_impi(id);
        }
    }

    /// [`Protocol::restage_ext32`] for a message from an IMPI peer (out of line).
    #[inline(never)]
    fn restage_impi(&mut self, id: ReqId) {
        let Some(r) = self.reqs.get_mut(id) else {
            return;
        };
        let Op::Recv(a, _) = &mut r.op else {
            return;
        };
        let Some(x) = r.extra.as_mut() else {
            return;
        };
        // Types made of bytes alone are their own external32 form: they land natively.
        if x.layout
            .as_ref()
            .is_none_or(|l| oxmpi_datatype::external32_is_native(&l.ty))
        {
            return;
        }
        let Some(l) = x.layout.take() else {
            return;
        };
        let cap = oxmpi_datatype::pack_external_size(&l.ty, l.count).unwrap_or(usize::MAX);
        // A receive too large for memory keeps its layout; the sender could not have
        // packed such a message either.
        if cap > isize::MAX as usize {
            x.layout = Some(l);
            return;
        }
        let mut scratch = vec![0u8; cap];
        a.buf = scratch.as_mut_ptr();
        a.cap = cap;
        x.scratch = Some(scratch);
        x.ext32 = Some(l);
        x.ext32_landed = 0;
        x.ext32_done = 0;
    }

    /// A piece of `len` bytes at offset `off` of restaged receive `id` has landed in
    /// its scratch buffer: converts the whole elements the pieces landed in order from
    /// the start hold and that are not converted yet. A piece out of order stops this
    /// (the rest is converted at completion).
    pub(super) fn ext32_landed(&mut self, id: ReqId, off: u64, len: u64) {
        let Some(x) = self.reqs.get_mut(id).and_then(|r| r.extra.as_mut()) else {
            return;
        };
        let (Some(l), Some(scratch)) = (x.ext32.as_deref(), x.scratch.as_ref()) else {
            return;
        };
        if off as usize != x.ext32_landed {
            x.ext32_landed = usize::MAX;
            return;
        }
        x.ext32_landed = (off + len) as usize;
        let elem = oxmpi_datatype::pack_external_size(&l.ty, 1).unwrap_or(0);
        let upto = (x.ext32_landed.min(scratch.len()))
            .checked_div(elem)
            .unwrap_or(0)
            .min(l.count);
        if upto > x.ext32_done {
            convert(l, x.ext32_done, upto, scratch);
            x.ext32_done = upto;
        }
    }

    /// Restarts inactive persistent send `id` with the bytes of `scratch` (its message,
    /// packed in external32 by the MPI layer at this start).
    pub(crate) fn restart_staged(
        &mut self,
        id: ReqId,
        scratch: Vec<u8>,
        io: &mut impl Io,
    ) -> Result<(), InvalidRequest> {
        let Some(r) = self.reqs.get_mut(id) else {
            return Err(InvalidRequest);
        };
        let (Op::Inactive, Some(Persistent::Send(mut a))) = (r.op, r.persistent) else {
            return Err(InvalidRequest);
        };
        r.complete = false;
        r.status = Status::EMPTY;
        a.buf = scratch.as_ptr();
        a.len = scratch.len();
        r.op = Op::Send(a, SendState::Queued);
        let x = r.extra_mut();
        x.layout = None;
        x.scratch = Some(scratch);
        self.launch_send(id, a, io);
        Ok(())
    }
}

/// Converts a restaged receive's external32 bytes into its user buffer as it
/// completes: whole elements are converted (a trailing partial element cannot be);
/// the status then counts the native bytes of what arrived.
pub(super) fn finish_ext32(r: &mut Request) {
    let Some(x) = r.extra.as_mut() else {
        return;
    };
    let Some(l) = x.ext32.take() else {
        return;
    };
    let scratch = x.scratch.take().unwrap_or_default();
    if r.status.cancelled || r.status.error == Outcome::PeerLost {
        return;
    }
    let elem = oxmpi_datatype::pack_external_size(&l.ty, 1).unwrap_or(0);
    let got = (r.status.bytes as usize).min(scratch.len());
    let whole = got.checked_div(elem).unwrap_or(0).min(l.count);
    let rest = got - whole * elem;
    if whole > x.ext32_done {
        convert(&l, x.ext32_done, whole, &scratch);
    }
    if rest > 0 && whole < l.count && elem == l.size {
        partial_element(&l, whole, &scratch[whole * elem..got]);
    }
    // A partial element counts as less than one native element, so MPI_Get_count
    // reports MPI_UNDEFINED for it as it would natively.
    let partial = if rest > 0 {
        rest.min(l.size.saturating_sub(1)).max(1)
    } else {
        0
    };
    r.status.bytes = (whole * l.size + partial) as u64;
}

/// Converts elements `from..to` of `l` from their external32 bytes in `scratch` (the
/// whole message's, from its start) into the user's buffer.
fn convert(l: &Layout, from: usize, to: usize, scratch: &[u8]) {
    let elem = oxmpi_datatype::pack_external_size(&l.ty, 1).unwrap_or(0);
    let at = (l.base as *mut u8).wrapping_offset(from as isize * l.ty.extent());
    // SAFETY: the user buffer holds `count >= to` elements of the type (MPI contract,
    // checked by the MPI layer), element `from` at `extent` bytes per element from the
    // base; `scratch` is our own memory and holds `to` elements.
    let done = unsafe {
        oxmpi_datatype::unpack_external(&l.ty, at, to - from, &scratch[from * elem..to * elem])
    };
    debug_assert!(
        done.is_ok(),
        "external32 unpack of a checked size: {done:?}"
    );
}

/// Lands the first bytes `part` of element `at` of `l`, whose type has the same size
/// in external32 as natively: then every one of its scalars does (none grows in
/// external32), so the received prefix is the same length in both forms. The element
/// is converted whole in a scratch copy (the missing bytes as zeros), packed natively,
/// and only the prefix is unpacked into the user's buffer, so nothing past the
/// received scalars is written.
fn partial_element(l: &Layout, at: usize, part: &[u8]) {
    let ty = &l.ty;
    let span = ty.true_extent().max(0) as usize;
    let mut ext = vec![0u8; l.size];
    ext[..part.len()].copy_from_slice(part);
    let mut tmp = vec![0u8; span.max(1)];
    // The element's origin in `tmp`: its data starts at the true lower bound.
    let origin = tmp.as_mut_ptr().wrapping_offset(-ty.true_lb());
    // SAFETY: one element of the type at `origin` occupies exactly
    // `tmp[..true_extent]`; `ext` holds its external32 size.
    if unsafe { oxmpi_datatype::unpack_external(ty, origin, 1, &ext) }.is_err() {
        return;
    }
    let mut native = vec![0u8; l.size];
    // SAFETY: as above, the element in `tmp` is readable; `native` is our own memory.
    unsafe { oxmpi_datatype::pack(ty, origin as *const u8, 1, 0, &mut native) };
    // SAFETY: the user buffer holds `count > at` elements (MPI contract); the prefix
    // is stream bytes of element `at`.
    unsafe { l.unpack_at(at * l.size, &native[..part.len()]) };
}
