//! External32 on the wire toward IMPI peers (IMPI 1.2.2), at the sender and in the
//! choice of how a receive is posted. A send to a rank of another client of an IMPI
//! job is packed here in the external32 representation (so that a value with no
//! external32 form fails the send with `MPI_ERR_CONVERSION`); a receive that may match
//! such a rank is posted with the layout of its buffer, which the device needs to
//! convert the message back (`oxmpi-device`'s `protocol::ext32`). Types made of bytes
//! alone (`MPI_CHAR`, `MPI_BYTE`, ...) are their own external32 form and take the
//! native paths (zero copy when contiguous). Ranks of the same client keep their
//! native representation.

use crate::comm::Comm;
use crate::device::BufRef;
use crate::error::Result;
use crate::runtime::Runtime;
use crate::transport::Route;
use crate::types::{engine_error, TypeInfo};
use crate::ANY_SOURCE;

/// Whether world rank `w` is a rank of another IMPI client.
#[inline]
fn is_impi_peer(rt: &Runtime, w: u32) -> bool {
    rt.impi_places.is_some() && rt.device.route(w) == Route::Impi
}

/// Whether data of type `t` changes on its way to external32 (types made of bytes
/// alone are the same bytes in both forms, and travel as they are).
#[inline]
pub(crate) fn converts(t: &TypeInfo) -> bool {
    !oxmpi_datatype::external32_is_native(t.datatype())
}

/// Whether a send of type `t` to world rank `w` must be packed in external32 here:
/// `w` is a rank of another IMPI client and the type's external32 form differs.
#[inline]
pub(crate) fn send_converts(rt: &Runtime, w: u32, t: &TypeInfo) -> bool {
    is_impi_peer(rt, w) && converts(t)
}

/// Whether a receive of type `t` from `src` (a rank of `c`'s peer group, or
/// `MPI_ANY_SOURCE`) may match a message from a rank of another IMPI client that the
/// device must convert from external32.
#[inline]
pub(crate) fn recv_converts(rt: &Runtime, c: &Comm, src: i32, t: &TypeInfo) -> bool {
    if rt.impi_places.is_none() || !converts(t) {
        return false;
    }
    if src == ANY_SOURCE {
        return true;
    }
    c.peer_group()
        .world_of(src)
        .is_some_and(|w| rt.device.route(w) == Route::Impi)
}

/// The external32 form of `count` elements of `t` at `b`.
pub(crate) fn pack(t: &TypeInfo, b: &BufRef, count: usize) -> Result<Vec<u8>> {
    let n = oxmpi_datatype::pack_external_size(t.datatype(), count).ok_or_else(|| {
        crate::error::Error::new(
            crate::error::ErrorClass::Count,
            format!("external32 size of {count} elements overflows"),
        )
    })?;
    let mut v = vec![0u8; n];
    // SAFETY: the caller validated that the buffer holds `count` elements of the type
    // (MPI contract); `v` is our own memory of the external32 size.
    let done =
        unsafe { oxmpi_datatype::pack_external(t.datatype(), b.addr as *const u8, count, &mut v) }
            .map_err(engine_error)?;
    v.truncate(done);
    Ok(v)
}
