//! Shared-memory segments: anonymous ones (a memfd, handed to other processes as a file
//! descriptor, so nothing can outlive them) and named POSIX ones (create with mode 0600,
//! exclusive; open, map, unlink).

use nix::fcntl::OFlag;
use nix::sys::mman::{mmap, munmap, shm_open, shm_unlink, MapFlags, ProtFlags};
use nix::sys::stat::Mode;
use std::io;
use std::num::NonZeroUsize;
use std::ptr::NonNull;

/// A mapping of a shared-memory segment; unmapped on drop.
pub struct Mapping {
    ptr: NonNull<u8>,
    len: usize,
}

// SAFETY: the mapping is plain memory; synchronisation of its contents is the job of
// the structures placed in it (atomics), not of this handle.
unsafe impl Send for Mapping {}
// SAFETY: as above; `&Mapping` only exposes the base pointer and length.
unsafe impl Sync for Mapping {}

impl Mapping {
    pub fn as_ptr(&self) -> *mut u8 {
        self.ptr.as_ptr()
    }
    pub fn len(&self) -> usize {
        self.len
    }
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Maps bytes `off..off + len` into this process's page tables now, writable,
    /// without changing their contents (`MADV_POPULATE_WRITE`), so the first messages
    /// through them do not each take page faults. Best effort: kernels before 5.14
    /// refuse the advice and the pages fault in on first use as before.
    pub fn populate(&self, off: usize, len: usize) {
        let page = 4096;
        let start = off / page * page;
        let end = (off + len).min(self.len);
        if start >= end {
            return;
        }
        // SAFETY: the range lies inside this mapping (clamped above, start page
        // aligned); the advice only pre-faults pages, it never changes their data.
        unsafe {
            libc::madvise(
                self.ptr.as_ptr().add(start).cast(),
                end - start,
                libc::MADV_POPULATE_WRITE,
            );
        }
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: ptr/len are exactly what mmap returned; nothing references the
        // mapping once its owner is dropped.
        unsafe {
            let _ = munmap(self.ptr.cast(), self.len);
        }
    }
}

fn to_io(e: nix::Error) -> io::Error {
    io::Error::from_raw_os_error(e as i32)
}

fn map_fd(fd: &std::os::fd::OwnedFd, len: usize) -> io::Result<Mapping> {
    let nz = NonZeroUsize::new(len).ok_or_else(|| io::Error::other("empty segment"))?;
    // SAFETY: mapping a shared-memory object we opened; the kernel picks the address.
    let p = unsafe {
        mmap(
            None,
            nz,
            ProtFlags::PROT_READ | ProtFlags::PROT_WRITE,
            MapFlags::MAP_SHARED,
            fd,
            0,
        )
    }
    .map_err(to_io)?;
    Ok(Mapping { ptr: p.cast(), len })
}

/// Creates an anonymous segment of `len` zeroed bytes (a close-on-exec memfd) and maps
/// it; the descriptor is what other processes map (see `transport::fd_share`).
pub fn create_anonymous(len: usize) -> io::Result<(std::os::fd::OwnedFd, Mapping)> {
    use nix::sys::memfd::{memfd_create, MemFdCreateFlag};
    let fd = memfd_create(c"oxmpi-node", MemFdCreateFlag::MFD_CLOEXEC).map_err(to_io)?;
    nix::unistd::ftruncate(&fd, len as i64).map_err(to_io)?;
    let map = map_fd(&fd, len)?;
    Ok((fd, map))
}

/// Maps `len` bytes of the segment behind `fd`, which must be at least that long.
pub fn map_fd_checked(fd: &std::os::fd::OwnedFd, len: usize) -> io::Result<Mapping> {
    let st = nix::sys::stat::fstat(std::os::fd::AsRawFd::as_raw_fd(fd)).map_err(to_io)?;
    if (st.st_size as usize) < len {
        return Err(io::Error::other(format!(
            "shared segment has {} bytes, expected {len}",
            st.st_size
        )));
    }
    map_fd(fd, len)
}

/// Creates a new segment `name` (which must start with '/') of `len` zeroed bytes,
/// failing if it already exists, and maps it.
pub fn create(name: &str, len: usize) -> io::Result<Mapping> {
    let fd = shm_open(
        name,
        OFlag::O_CREAT | OFlag::O_EXCL | OFlag::O_RDWR,
        Mode::S_IRUSR | Mode::S_IWUSR,
    )
    .map_err(to_io)?;
    if let Err(e) = nix::unistd::ftruncate(&fd, len as i64) {
        let _ = shm_unlink(name);
        return Err(to_io(e));
    }
    map_fd(&fd, len).inspect_err(|_| {
        let _ = shm_unlink(name);
    })
}

/// Opens and maps an existing segment of `len` bytes.
pub fn open(name: &str, len: usize) -> io::Result<Mapping> {
    let fd = shm_open(name, OFlag::O_RDWR, Mode::empty()).map_err(to_io)?;
    map_fd_checked(&fd, len).map_err(|e| io::Error::other(format!("{name}: {e}")))
}

/// Removes the segment's name (mappings stay valid).
pub fn unlink(name: &str) -> io::Result<()> {
    shm_unlink(name).map_err(to_io)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn create_open_unlink() {
        let name = format!("/oxmpi.test-{}", std::process::id());
        let a = create(&name, 8192).unwrap();
        // SAFETY: both mappings are 8192 bytes of the same segment.
        unsafe { a.as_ptr().add(100).write(42) };
        let b = open(&name, 8192).unwrap();
        // SAFETY: as above.
        assert_eq!(unsafe { b.as_ptr().add(100).read() }, 42);
        assert!(create(&name, 8192).is_err());
        unlink(&name).unwrap();
        assert!(open(&name, 8192).is_err());
    }
}
