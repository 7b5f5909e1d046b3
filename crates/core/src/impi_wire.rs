//! External32 on the wire toward IMPI peers (IMPI 1.2.2), at the sender and in the
//! choice of how a receive is posted. A send to a rank of another client of an IMPI
//! job is packed here in the external32 representation (so that a value with no
//! external32 form fails the send with `MPI_ERR_CONVERSION`); a receive that may match
//! such a rank is posted with the layout of its buffer, which the device needs to
//! convert the message back (`oxmpi-device`'s `protocol::ext32`). Ranks of the same
//! client keep their native representation.

use crate::comm::Comm;
use crate::device::BufRef;
use crate::error::Result;
use crate::runtime::Runtime;
use crate::transport::Route;
use crate::types::{engine_error, TypeInfo};
use crate::ANY_SOURCE;

/// Whether world rank `w` is a rank of another IMPI client.
#[inline]
pub(crate) fn is_impi_peer(rt: &Runtime, w: u32) -> bool {
    rt.impi_places.is_some() && rt.device.route(w) == Route::Impi
}

/// Whether a receive from `src` (a rank of `c`'s peer group, or `MPI_ANY_SOURCE`) may
/// match a message from a rank of another IMPI client.
#[inline]
pub(crate) fn recv_may_be_impi(rt: &Runtime, c: &Comm, src: i32) -> bool {
    if rt.impi_places.is_none() {
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
