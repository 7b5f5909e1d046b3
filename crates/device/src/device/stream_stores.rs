//! How a rendezvous sender writes the pieces of a long contiguous message into a
//! shared-memory ring in the pipelined copy: with ordinary (cached) stores, or with
//! non-temporal stores (`OXMPI_SHM_STREAM_STORES=nt`).
//!
//! With ordinary stores the receiver reads each piece out of the sender's cache. Where
//! the two cores share a fast cache and the receiver trails the sender by enough of the
//! ring that the pieces have left the sender's private cache, that is the quickest path
//! (on the 2-core development VM about 35 GB/s for 1-4 MiB messages). Otherwise it is
//! not: on that VM ordinary stores fall to about 13 GB/s whenever the receiver reads the
//! pieces straight out of the sender's cache, and to 2-7 GB/s while the host places the
//! vCPUs so that a cache-line round trip between them takes about 350 ns instead of
//! 70 ns (as across sockets on real nodes). Non-temporal stores send the pieces to
//! memory instead, from where the receiver reads them at 17-24 GB/s in every one of
//! these cases. Ordinary stores stay the default; choosing per peer from measured
//! throughput needs the receiver's side of the measurement and is not done yet.

/// Streams shorter than this always use ordinary stores (their receiver is likely to
/// use the data soon, and the whole message may stay in cache).
pub const MIN_STREAM: u64 = 256 * 1024;

/// Which stores write the pieces (`OXMPI_SHM_STREAM_STORES`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Policy {
    /// Ordinary stores (the default).
    Cached,
    /// Non-temporal stores for the pieces of contiguous messages of [`MIN_STREAM`] bytes
    /// and more.
    NonTemporal,
}

impl Policy {
    /// Parses the tunable's value (`cached`, `nt`); None for anything else.
    pub fn parse(v: &str) -> Option<Policy> {
        match v.trim().to_ascii_lowercase().as_str() {
            "cached" => Some(Policy::Cached),
            "nt" | "non-temporal" => Some(Policy::NonTemporal),
            _ => None,
        }
    }
}

/// Copies `n` bytes from `src` to `dst` with non-temporal stores (where the CPU has
/// them), ordered before any later store (the ring's publishing store).
///
/// # Safety
/// Both ranges must hold `n` bytes and must not overlap.
pub unsafe fn copy_non_temporal(src: *const u8, dst: *mut u8, n: usize) {
    // SAFETY: forwarded contract.
    unsafe { oxmpi_datatype::copy_streamed(dst, src, n) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn policy_values() {
        assert_eq!(Policy::parse("nt"), Some(Policy::NonTemporal));
        assert_eq!(Policy::parse(" Cached "), Some(Policy::Cached));
        assert_eq!(Policy::parse("fast"), None);
    }

    #[test]
    fn non_temporal_copy_copies() {
        let src: Vec<u8> = (0..10_000u32).map(|i| (i * 7 % 251) as u8).collect();
        for (off, n) in [(0, 0), (1, 15), (3, 64), (5, 1000), (7, 9000)] {
            let mut dst = vec![0u8; 10_016];
            // SAFETY: both ranges hold n bytes and are distinct vectors.
            unsafe { copy_non_temporal(src.as_ptr(), dst.as_mut_ptr().add(off), n) };
            assert_eq!(&dst[off..off + n], &src[..n]);
            assert!(dst[..off].iter().all(|&b| b == 0));
            assert!(dst[off + n..].iter().all(|&b| b == 0));
        }
    }
}
