//! Cross-memory attach: copying straight out of another process's address space with
//! `process_vm_readv`, the single-copy path of shared-memory rendezvous.

use std::io;

/// Whether the Yama security module lets a rank read its sibling ranks' memory: no
/// Yama, or `ptrace_scope` 0. At 1 (Ubuntu's default) only ancestors may, and the ranks
/// of a job are siblings; at 2 and 3 only privileged processes, or none.
pub fn yama_permits_siblings() -> bool {
    match std::fs::read_to_string("/proc/sys/kernel/yama/ptrace_scope") {
        Ok(v) => v.trim() == "0",
        Err(_) => true,
    }
}

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

/// I/O vectors handed to one `process_vm_readv` call on each side (the kernel accepts
/// up to `IOV_MAX` = 1024).
const IOVECS_PER_CALL: usize = 512;

/// A source of memory pieces `(address, length)` that can take back the part of a
/// piece (or whole pieces) a batch did not use.
struct Pieces<'a> {
    it: &'a mut dyn Iterator<Item = (usize, usize)>,
    /// Pieces given back, the next one last.
    back: Vec<(usize, usize)>,
}

impl Pieces<'_> {
    fn next(&mut self) -> Option<(usize, usize)> {
        self.back.pop().or_else(|| self.it.next())
    }

    /// Fills `iov` with pieces worth at most `limit` bytes (splitting the last one);
    /// returns (vectors used, bytes).
    fn batch(&mut self, iov: &mut [libc::iovec], limit: usize) -> (usize, usize) {
        let mut k = 0;
        let mut bytes = 0;
        while k < iov.len() && bytes < limit {
            let Some((a, n)) = self.next() else { break };
            let take = n.min(limit - bytes);
            if take < n {
                self.back.push((a.wrapping_add(take), n - take));
            }
            iov[k] = libc::iovec {
                iov_base: a as *mut libc::c_void,
                iov_len: take,
            };
            k += 1;
            bytes += take;
        }
        (k, bytes)
    }

    /// Gives back the end of a batch so that only its first `keep` bytes are used;
    /// returns the vectors still used.
    fn trim(&mut self, iov: &mut [libc::iovec], mut k: usize, bytes: usize, keep: usize) -> usize {
        let mut excess = bytes - keep;
        while excess > 0 {
            let v = &mut iov[k - 1];
            if v.iov_len <= excess {
                excess -= v.iov_len;
                self.back.push((v.iov_base as usize, v.iov_len));
                k -= 1;
            } else {
                let kept = v.iov_len - excess;
                self.back.push((v.iov_base as usize + kept, excess));
                v.iov_len = kept;
                excess = 0;
            }
        }
        k
    }
}

/// Copies bytes from the pieces `remote` yields in process `pid` to the local pieces
/// `local` yields, both taken as one stream in order, until either runs out. Returns the
/// bytes copied. A short copy inside a call (a bad remote piece) is an error.
///
/// # Safety
/// Every local piece must be valid for writes of its length. The remote pieces are
/// checked by the kernel.
pub unsafe fn read_vectored(
    pid: i32,
    remote: &mut dyn Iterator<Item = (usize, usize)>,
    local: &mut dyn Iterator<Item = (usize, usize)>,
) -> io::Result<usize> {
    let empty = libc::iovec {
        iov_base: std::ptr::null_mut(),
        iov_len: 0,
    };
    let mut riov = [empty; IOVECS_PER_CALL];
    let mut liov = [empty; IOVECS_PER_CALL];
    let mut remote = Pieces {
        it: remote,
        back: Vec::new(),
    };
    let mut local = Pieces {
        it: local,
        back: Vec::new(),
    };
    let mut done = 0usize;
    loop {
        let (rk, rbytes) = remote.batch(&mut riov, MAX_PER_CALL);
        let (lk, lbytes) = local.batch(&mut liov, rbytes);
        if lbytes == 0 {
            return Ok(done);
        }
        let rk = remote.trim(&mut riov, rk, rbytes, lbytes);
        // SAFETY: liov[..lk] describe writable local pieces (caller contract); the
        // remote pieces are validated by the kernel.
        let n = unsafe {
            libc::process_vm_readv(
                pid,
                liov.as_ptr(),
                lk as libc::c_ulong,
                riov.as_ptr(),
                rk as libc::c_ulong,
                0,
            )
        };
        if n < 0 {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                // Nothing was copied: retry the same batch.
                local.trim(&mut liov, lk, lbytes, 0);
                remote.trim(&mut riov, rk, lbytes, 0);
                continue;
            }
            return Err(e);
        }
        if n as usize != lbytes {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                format!("process_vm_readv copied {n} of {lbytes} bytes"),
            ));
        }
        done += lbytes;
    }
}

/// Copies the bytes at `remote..` in process `pid` to the local pieces `(address,
/// length)` that `local` yields, in order. Returns the bytes copied.
///
/// # Safety
/// Every local piece must be valid for writes of its length. The remote range is
/// checked by the kernel.
pub unsafe fn read_scatter(
    pid: i32,
    remote: usize,
    local: &mut dyn Iterator<Item = (usize, usize)>,
) -> io::Result<usize> {
    let mut r = std::iter::once((remote, usize::MAX - remote));
    // SAFETY: forwarded caller contract.
    unsafe { read_vectored(pid, &mut r, local) }
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

    #[test]
    fn scatters_into_many_pieces() {
        // 3000 pieces of 7 bytes, 13 bytes apart (more than one batch of vectors).
        let src: Vec<u8> = (0..21_000u32).map(|i| (i % 253) as u8).collect();
        let mut dst = vec![0u8; 3000 * 13];
        let base = dst.as_mut_ptr() as usize;
        let mut pieces = (0..3000).map(|i| (base + i * 13, 7));
        // SAFETY: every piece lies inside dst.
        let r = unsafe {
            read_scatter(
                std::process::id() as i32,
                src.as_ptr() as usize,
                &mut pieces,
            )
        };
        if let Ok(n) = r {
            assert_eq!(n, 3000 * 7);
            for i in 0..3000 {
                assert_eq!(&dst[i * 13..i * 13 + 7], &src[i * 7..i * 7 + 7]);
                assert!(dst[i * 13 + 7..i * 13 + 13].iter().all(|&b| b == 0));
            }
        }
    }

    #[test]
    fn gathers_and_scatters_with_unequal_pieces() {
        // Remote: 1500 pieces of 11 bytes, 17 apart; local: pieces of 5 bytes, 9 apart.
        let src: Vec<u8> = (0..1500u32 * 17).map(|i| (i % 241) as u8 + 1).collect();
        let total = 1500 * 11;
        let nlocal = total / 5;
        let mut dst = vec![0u8; nlocal * 9];
        let sbase = src.as_ptr() as usize;
        let dbase = dst.as_mut_ptr() as usize;
        let mut remote = (0..1500).map(|i| (sbase + i * 17, 11));
        let mut local = (0..nlocal).map(|i| (dbase + i * 9, 5));
        // SAFETY: every local piece lies inside dst; remote pieces inside src.
        let r = unsafe { read_vectored(std::process::id() as i32, &mut remote, &mut local) };
        if let Ok(n) = r {
            assert_eq!(n, total);
            let packed: Vec<u8> = (0..1500)
                .flat_map(|i| src[i * 17..i * 17 + 11].to_vec())
                .collect();
            for i in 0..nlocal {
                assert_eq!(&dst[i * 9..i * 9 + 5], &packed[i * 5..i * 5 + 5]);
                assert!(dst[i * 9 + 5..i * 9 + 9].iter().all(|&b| b == 0));
            }
        }
    }
}
