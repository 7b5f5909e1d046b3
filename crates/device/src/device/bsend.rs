//! The buffered-send pool: the user's attached buffer, carved into one region per
//! pending `MPI_Bsend` with `MPI_BSEND_OVERHEAD` bytes of bookkeeping charged to each,
//! as the standard's sizing rule (`MPI_Pack_size` + overhead) promises users.

/// Bytes charged per buffered message on top of its data (MPICH's `MPI_BSEND_OVERHEAD`).
pub const BSEND_OVERHEAD: usize = 96;

/// The attached buffer and the regions in use.
#[derive(Default)]
pub struct BsendPool {
    base: usize,
    len: usize,
    attached: bool,
    /// Regions in use, sorted by offset: (offset, bytes charged).
    used: Vec<(usize, usize)>,
}

impl BsendPool {
    pub fn is_attached(&self) -> bool {
        self.attached
    }

    pub fn attach(&mut self, base: *mut u8, len: usize) {
        self.base = base as usize;
        self.len = len;
        self.attached = true;
        self.used.clear();
    }

    /// True while buffered messages still occupy the pool.
    pub fn busy(&self) -> bool {
        !self.used.is_empty()
    }

    /// Forgets the buffer (the caller has waited until it is idle).
    pub fn detach(&mut self) -> (*mut u8, usize) {
        self.attached = false;
        let r = (self.base as *mut u8, self.len);
        self.base = 0;
        self.len = 0;
        r
    }

    /// Reserves room for a message of `bytes`; returns the offset where its data goes.
    pub fn alloc(&mut self, bytes: usize) -> Option<usize> {
        if !self.attached {
            return None;
        }
        let need = bytes + BSEND_OVERHEAD;
        let mut at = 0usize;
        let mut idx = 0usize;
        for (i, &(off, size)) in self.used.iter().enumerate() {
            if off - at >= need {
                idx = i;
                break;
            }
            at = off + size;
            idx = i + 1;
        }
        if at + need > self.len {
            return None;
        }
        self.used.insert(idx, (at, need));
        Some(at)
    }

    /// Address of the data of a region.
    pub fn addr(&self, offset: usize) -> *mut u8 {
        (self.base + offset) as *mut u8
    }

    pub fn free(&mut self, offset: usize) {
        if let Some(i) = self.used.iter().position(|&(o, _)| o == offset) {
            self.used.remove(i);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accounting_matches_the_standard_sizing_rule() {
        let mut buf = vec![0u8; 3 * (100 + BSEND_OVERHEAD)];
        let mut p = BsendPool::default();
        assert_eq!(p.alloc(1), None);
        p.attach(buf.as_mut_ptr(), buf.len());
        let a = p.alloc(100).unwrap();
        let b = p.alloc(100).unwrap();
        let c = p.alloc(100).unwrap();
        assert_eq!(p.alloc(1), None);
        p.free(b);
        assert_eq!(p.alloc(100), Some(b));
        p.free(a);
        p.free(b);
        p.free(c);
        assert!(!p.busy());
        assert_eq!(p.detach().1, buf.len());
    }
}
