//! The buffer of buffered-mode sends: [`BufferAttachment`] attaches memory on creation
//! (`MPI_Buffer_attach`) and detaches it, waiting for the messages in it to leave, when
//! dropped (`MPI_Buffer_detach`).

use crate::datatype::Equivalence;
use crate::error::{engine, Error, ErrorClass, Result};
use oxmpi_core::p2p;

/// Bytes of bookkeeping each buffered message takes in the attached buffer on top of its
/// data (`MPI_BSEND_OVERHEAD`).
pub const BSEND_OVERHEAD: usize = oxmpi_core::device::bsend::BSEND_OVERHEAD;

/// Bytes of attached buffer that one buffered message of `values` values of `T` needs
/// (its data plus [`BSEND_OVERHEAD`]). Add these up for messages in flight at once.
pub fn buffered_size<T: Equivalence>(values: usize) -> usize {
    T::equivalent_datatype()
        .value_size()
        .saturating_mul(values)
        .saturating_add(BSEND_OVERHEAD)
}

/// Memory attached for buffered-mode sends, owned by this guard.
///
/// Only one buffer can be attached at a time. Dropping the guard detaches the buffer,
/// blocking until every buffered message in it has been sent; call
/// [`detach`](BufferAttachment::detach) to see errors. If the guard is leaked, the memory
/// stays attached (and allocated) for the rest of the process.
#[derive(Debug)]
pub struct BufferAttachment {
    memory: Vec<u8>,
    attached: bool,
}

impl BufferAttachment {
    /// Allocates `size` bytes and attaches them. Fails with class `MPI_ERR_BUFFER` when
    /// a buffer is already attached, `MPI_ERR_ARG` when `size` exceeds `i32::MAX`.
    pub fn new(size: usize) -> Result<BufferAttachment> {
        const M: &str = "BufferAttachment::new";
        let n = i32::try_from(size).map_err(|_| {
            Error::new(
                M,
                ErrorClass::Arg,
                format_args!(
                    "buffer size {size} is larger than the largest attachable ({})",
                    i32::MAX
                ),
            )
        })?;
        let mut memory = vec![0u8; size];
        p2p::buffer_attach(memory.as_mut_ptr(), n as usize).map_err(engine(M))?;
        Ok(BufferAttachment {
            memory,
            attached: true,
        })
    }

    /// Size of the attached buffer in bytes.
    pub fn size(&self) -> usize {
        self.memory.len()
    }

    /// Waits until every message buffered so far has been sent, keeping the buffer
    /// attached (`MPI_Buffer_flush`).
    pub fn flush(&self) -> Result<()> {
        oxmpi_core::p2p_mpi4::buffer_flush(oxmpi_core::p2p_mpi4::Scope::Process)
            .map_err(engine("BufferAttachment::flush"))
    }

    /// Detaches the buffer now, waiting until the buffered messages in it have been sent.
    pub fn detach(mut self) -> Result<()> {
        self.attached = false;
        p2p::buffer_detach()
            .map(|_| ())
            .map_err(engine("BufferAttachment::detach"))
    }
}

impl Drop for BufferAttachment {
    fn drop(&mut self) {
        if self.attached {
            // Fails only when MPI is no longer running, and then nothing uses the memory.
            let _ = p2p::buffer_detach();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_include_the_overhead() {
        assert_eq!(buffered_size::<f64>(10), 80 + BSEND_OVERHEAD);
        assert_eq!(buffered_size::<[u8; 3]>(0), BSEND_OVERHEAD);
        assert_eq!(buffered_size::<u64>(usize::MAX), usize::MAX);
    }

    #[test]
    fn oversized_attachment_is_rejected_before_allocating() {
        let e = BufferAttachment::new(i32::MAX as usize + 1).unwrap_err();
        assert_eq!(e.class(), ErrorClass::Arg);
        assert!(e
            .message()
            .starts_with("BufferAttachment::new: MPI_ERR_ARG"));
    }
}
