//! Cross-memory attach: copying straight out of another process's address space with
//! `process_vm_readv`, the single-copy path of shared-memory rendezvous.

use std::io;

/// Largest byte count one `process_vm_readv` call is asked to move (the kernel caps a
/// call near 2 GiB; multi-GiB messages are read in several calls).
const MAX_PER_CALL: usize = 1 << 30;

/// Copies `len` bytes from address `remote` in process `pid` to `local`.
///
/// # Safety
/// `local` must be valid for writes of `len` bytes. The remote range is checked by the
/// kernel; a bad remote address yields an error, never memory corruption here.
pub unsafe fn read_from(pid: i32, remote: usize, local: *mut u8, len: usize) -> io::Result<()> {
    let mut done = 0usize;
    while done < len {
        let want = (len - done).min(MAX_PER_CALL);
        let liov = libc::iovec {
            // SAFETY: done < len, so the offset stays inside the caller's buffer.
            iov_base: unsafe { local.add(done) } as *mut libc::c_void,
            iov_len: want,
        };
        let riov = libc::iovec {
            iov_base: (remote + done) as *mut libc::c_void,
            iov_len: want,
        };
        // SAFETY: both iovecs describe valid ranges per the caller's contract (local) or
        // are validated by the kernel (remote).
        let n = unsafe { libc::process_vm_readv(pid, &liov, 1, &riov, 1, 0) };
        if n < 0 {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        if n == 0 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "process_vm_readv moved no bytes",
            ));
        }
        done += n as usize;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_own_memory() {
        let src: Vec<u8> = (0..100_000u32).map(|i| (i % 251) as u8).collect();
        let mut dst = vec![0u8; src.len()];
        // SAFETY: dst is valid for src.len() bytes.
        let r = unsafe {
            read_from(
                std::process::id() as i32,
                src.as_ptr() as usize,
                dst.as_mut_ptr(),
                src.len(),
            )
        };
        if r.is_ok() {
            assert_eq!(src, dst);
        }
    }
}
