//! The bridge between the safe types and the engine's raw calls: buffer descriptors,
//! the repair step after receives, and turning a completed status into a result.

use crate::datatype::{Buffer, BufferMut, Equivalence};
use crate::error::{Error, ErrorClass, Result};
use oxmpi_core::device::Status as CoreStatus;
use oxmpi_core::p2p::Buf;

/// Element count of `n` values of `T` as the engine's `int` count.
pub(crate) fn engine_count<T: Equivalence>(method: &'static str, n: usize) -> Result<i32> {
    let d = T::equivalent_datatype();
    n.checked_mul(d.multiplicity())
        .and_then(|c| i32::try_from(c).ok())
        .ok_or_else(|| {
            Error::new(
                method,
                ErrorClass::Count,
                format_args!(
                    "buffer of {n} values of {} is too large for one message (more than {} elements of the engine datatype)",
                    std::any::type_name::<T>(),
                    i32::MAX
                ),
            )
        })
}

/// Describes a send buffer for the engine.
pub(crate) fn send_buf<B: Buffer + ?Sized>(method: &'static str, b: &B) -> Result<Buf> {
    if let Some((d, n)) = b.datatype_view() {
        return Ok(Buf::new(b.pointer().cast::<u8>(), n.into(), d.type_id()));
    }
    let count = engine_count::<B::Element>(method, b.count())?;
    let d = B::Element::equivalent_datatype();
    Ok(Buf::new(
        b.pointer().cast::<u8>(),
        count.into(),
        d.type_id(),
    ))
}

/// A receive buffer for the engine, with what must happen to it after a receive.
pub(crate) struct RecvBuf {
    pub buf: Buf,
    pub fixup: Fixup,
}

/// Describes a receive buffer for the engine.
pub(crate) fn recv_buf<B: BufferMut + ?Sized>(method: &'static str, b: &mut B) -> Result<RecvBuf> {
    let n = b.count();
    if let Some((d, count)) = b.datatype_view() {
        let ptr = b.pointer_mut();
        let mut fixup = Fixup::new(ptr, n);
        fixup.capacity = d.engine_size().saturating_mul(count.max(0) as usize);
        return Ok(RecvBuf {
            buf: Buf::new(ptr.cast::<u8>(), count.into(), d.type_id()),
            fixup,
        });
    }
    let count = engine_count::<B::Element>(method, n)?;
    let d = B::Element::equivalent_datatype();
    let ptr = b.pointer_mut();
    Ok(RecvBuf {
        buf: Buf::new(ptr.cast::<u8>(), count.into(), d.type_id()),
        fixup: Fixup::new(ptr, n),
    })
}

/// What to do to a receive buffer once the engine has written it: repair invalid bit
/// patterns (for types that need it), and know its capacity for error messages.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Fixup {
    repair: Option<unsafe fn(*mut u8, usize)>,
    ptr: *mut u8,
    count: usize,
    /// Capacity in bytes.
    pub capacity: usize,
}

unsafe fn repair_erased<T: Equivalence>(p: *mut u8, n: usize) {
    // SAFETY: forwarded contract of `T::repair` (p points to n values of T).
    unsafe { T::repair(p.cast::<T>(), n) }
}

impl Fixup {
    pub(crate) fn new<T: Equivalence>(ptr: *mut T, count: usize) -> Fixup {
        Fixup {
            repair: T::NEEDS_REPAIR.then_some(repair_erased::<T> as unsafe fn(*mut u8, usize)),
            ptr: ptr.cast::<u8>(),
            count,
            capacity: T::equivalent_datatype().value_size().saturating_mul(count),
        }
    }

    /// A fixup for send-side requests: nothing to repair, no capacity.
    pub(crate) fn none() -> Fixup {
        Fixup {
            repair: None,
            ptr: std::ptr::null_mut(),
            count: 0,
            capacity: 0,
        }
    }

    /// Runs the repair step.
    ///
    /// # Safety
    /// The buffer this fixup was made for must still be alive and no longer written by
    /// the engine (its request is complete), with no reference to it in use.
    pub(crate) unsafe fn apply(&self) {
        if let Some(f) = self.repair {
            // SAFETY: per the contract the buffer holds `count` values.
            unsafe { f(self.ptr, self.count) }
        }
    }
}

/// What is wrong with a completed operation's status, if anything: truncation and other
/// per-request errors, as (class, detail).
pub(crate) fn status_problem(s: &CoreStatus, capacity: usize) -> Option<(ErrorClass, String)> {
    match ErrorClass::from(s.error) {
        ErrorClass::Success => None,
        ErrorClass::Truncate => Some((
            ErrorClass::Truncate,
            format!(
                "message from rank {} with tag {} is longer than the receive buffer ({capacity} bytes)",
                s.source, s.tag
            ),
        )),
        c => Some((
            c,
            format!("operation with rank {} and tag {} failed", s.source, s.tag),
        )),
    }
}

/// Turns a completed operation's status into the call's result.
pub(crate) fn check_status(method: &'static str, s: &CoreStatus, capacity: usize) -> Result<()> {
    match status_problem(s, capacity) {
        None => Ok(()),
        Some((class, detail)) => Err(Error::new(method, class, detail)),
    }
}

/// A vector of `n` values of `T` whose bytes are all zero (valid per the
/// [`Equivalence`] contract once repaired).
pub(crate) fn zeroed_vec<T: Equivalence>(n: usize) -> Vec<T> {
    let mut v: Vec<T> = Vec::with_capacity(n);
    // SAFETY: the capacity holds n values; all-zero bytes repaired are a valid value of
    // an `Equivalence` type, and the repair runs before `set_len` exposes them.
    unsafe {
        std::ptr::write_bytes(v.as_mut_ptr(), 0, n);
        T::repair(v.as_mut_ptr(), n);
        v.set_len(n);
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_scale_with_arrays_and_overflow_is_an_error() {
        assert_eq!(engine_count::<[u8; 4]>("t", 3).unwrap(), 12);
        let e = engine_count::<[u8; 4]>("send", usize::MAX / 2).unwrap_err();
        assert_eq!(e.class(), ErrorClass::Count);
        assert!(e.message().starts_with("send: MPI_ERR_COUNT: buffer of"));
        assert!(engine_count::<u8>("t", i32::MAX as usize).is_ok());
        assert!(engine_count::<u8>("t", i32::MAX as usize + 1).is_err());
    }

    #[test]
    fn buffers_describe_engine_elements() {
        let v = [[1.0f32; 3]; 2];
        let b = send_buf("t", &v[..]).unwrap();
        assert_eq!(b.count, 6);
        assert_eq!(b.addr, v.as_ptr() as usize);
        let mut x = [true; 5];
        let r = recv_buf("t", &mut x[..]).unwrap();
        assert_eq!(r.buf.count, 5);
        assert_eq!(r.fixup.capacity, 5);
    }

    #[test]
    fn truncation_status_becomes_an_error() {
        let s = CoreStatus {
            source: 3,
            tag: 9,
            error: oxmpi_core::device::Outcome::Truncated,
            bytes: 8,
            cancelled: false,
        };
        let e = check_status("receive_into", &s, 8).unwrap_err();
        assert_eq!(e.class(), ErrorClass::Truncate);
        assert_eq!(
            e.message(),
            "receive_into: MPI_ERR_TRUNCATE: message from rank 3 with tag 9 is longer than the receive buffer (8 bytes)"
        );
        assert!(check_status("x", &CoreStatus::EMPTY, 0).is_ok());
    }

    #[test]
    fn zeroed_vectors_are_valid() {
        assert_eq!(zeroed_vec::<bool>(3), vec![false; 3]);
        assert_eq!(zeroed_vec::<[i64; 2]>(2), vec![[0; 2]; 2]);
    }
}
