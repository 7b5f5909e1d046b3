//! The predefined datatypes whose elements are their bytes in order, decoded from their
//! handles with one table look-up: what the short paths of `MPI_Put`/`MPI_Get`
//! (`win.rs`) and of the small point-to-point calls (`p2p.rs`) accept before any other
//! argument processing. A handle not in the table sends the call to its general path.

use crate::handles::{self, MPI_Datatype};
use oxmpi_core::rma;
use oxmpi_datatype::Predefined;
use std::ffi::c_void;
use std::sync::OnceLock;

/// A predefined datatype whose elements are their bytes: its handle, engine index and
/// size.
#[derive(Clone, Copy, Default)]
pub struct Plain {
    pub handle: MPI_Datatype,
    pub ty: u32,
    pub size: usize,
}

/// The [`Plain`] types by the low byte of their (builtin) handles; zero elsewhere.
fn plain_types() -> &'static [Plain; 256] {
    static TABLE: OnceLock<[Plain; 256]> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut t = [Plain::default(); 256];
        for &p in Predefined::ALL {
            let handle = handles::predefined_handle(p);
            let size = rma::plain_type_size(p as u32);
            if size > 0 && handles::is_builtin_datatype(handle) {
                t[(handle as u32 & 0xff) as usize] = Plain {
                    handle,
                    ty: p as u32,
                    size,
                };
            }
        }
        t
    })
}

/// Decodes `h` if it is a [`Plain`] type.
#[inline]
pub fn plain(h: MPI_Datatype) -> Option<Plain> {
    let e = plain_types()[(h as u32 & 0xff) as usize];
    (e.handle == h && e.size > 0).then_some(e)
}

/// The bytes of a buffer of `count` elements of `dt` at `ptr` when the short path of a
/// point-to-point call may move them as one run: a [`Plain`] type, a valid count, an
/// address that is neither null (with data) nor `MPI_IN_PLACE`. None otherwise (the
/// general path then reports what is wrong, if anything).
#[inline(always)]
pub fn buf_bytes(ptr: *const c_void, count: i64, dt: MPI_Datatype) -> Option<usize> {
    let n = usize::try_from(count).ok()?.checked_mul(plain(dt)?.size)?;
    if (ptr.is_null() && n > 0) || std::ptr::eq(ptr, handles::MPI_IN_PLACE) {
        return None;
    }
    Some(n)
}
