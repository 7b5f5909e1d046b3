//! How a user buffer argument appears to a schedule: as packed contiguous bytes.
//!
//! Contiguous datatypes map straight onto user memory ([`View::direct`]): the
//! schedule's offsets become addresses, no copy is made. Other datatypes are either
//! streamed or staged.
//!
//! A streamed view ([`View::streamed`], [`View::streamed_blocks`]) is a device
//! [`Layout`] over the buffer's packed bytes: the executor sends and receives each
//! region as a window of that layout, which the device packs and unpacks piece by
//! piece as the message moves, so no copy of the whole buffer exists and nothing is
//! done before or after the schedule. The data-movement collectives use it (their
//! schedules never reduce).
//!
//! A staged view ([`View::single`], [`View::blocks`]) gets a staging copy: the parts the
//! collective reads from this buffer are packed into it before the schedule runs, and
//! the parts it writes are unpacked afterwards ([`View::finish`]), block by block, so
//! bytes between the blocks of a v-variant are never touched. Reductions need it (their
//! kernels run on packed elements), as do the exchanges of intercommunicator and
//! neighbourhood collectives, which read the view's memory themselves.

use crate::device::Layout;
use crate::error::{err, ErrorClass, Result};
use crate::types::TypeInfo;
use oxmpi_coll::schedule::Block;
use oxmpi_datatype::Datatype;
use std::ptr::NonNull;

/// `count` elements of `types[ty]` at user address `user`, at byte `off` of the staging copy.
#[derive(Clone, Copy, Debug)]
struct Run {
    user: usize,
    off: usize,
    count: usize,
    ty: usize,
}

struct Staged {
    data: Vec<u8>,
    types: Vec<TypeInfo>,
    pre: Vec<Run>,
    post: Vec<Run>,
}

/// One buffer argument of a collective as the schedule sees it.
pub(crate) struct View {
    /// Where the schedule's offset 0 lies (meaningless for a streamed view).
    pub base: *mut u8,
    staged: Option<Staged>,
    /// A streamed view's packed bytes (`skip` 0).
    stream: Option<Layout>,
}

/// Which elements of a buffer the collective reads (`pre`) or writes (`post`): pairs
/// of (first element, element count).
pub(crate) type Parts<'a> = &'a [(usize, usize)];

impl View {
    /// A buffer the call does not use on this rank.
    pub fn unused() -> View {
        View {
            base: NonNull::<u8>::dangling().as_ptr(),
            staged: None,
            stream: None,
        }
    }

    fn direct(addr: usize) -> View {
        View {
            base: addr as *mut u8,
            staged: None,
            stream: None,
        }
    }

    /// The layout a streamed view moves its regions through.
    pub fn stream(&self) -> Option<&Layout> {
        self.stream.as_ref()
    }

    fn streaming(l: Layout) -> View {
        View {
            base: NonNull::<u8>::dangling().as_ptr(),
            staged: None,
            stream: Some(l),
        }
    }

    /// A streamed buffer of `total` elements of `t` at `addr` (direct when contiguous).
    /// Whatever the schedule reads is packed from the buffer when it is sent, and
    /// whatever it writes is unpacked into the buffer as it arrives.
    ///
    /// # Safety
    /// `addr` must hold `total` elements of `t` until the schedule has run.
    pub unsafe fn streamed(addr: usize, t: &TypeInfo, total: usize) -> View {
        if t.contiguous || total == 0 {
            return View::direct(addr);
        }
        if let Some((d, _)) = t.contiguous_block(total) {
            return View::direct(addr.wrapping_add(d as usize));
        }
        View::streaming(Layout {
            base: addr,
            count: total,
            size: t.size,
            ty: t.datatype().clone(),
            skip: 0,
        })
    }

    /// A streamed v-variant buffer (blocks as for [`View::blocks`]): one layout whose
    /// single element is a struct of the used blocks, in block order.
    ///
    /// # Safety
    /// `addr` must hold every block until the schedule has run (MPI contract).
    pub unsafe fn streamed_blocks(
        addr: usize,
        t: &TypeInfo,
        counts: &[usize],
        displs: &[i64],
    ) -> Result<(View, Vec<Block>)> {
        let types: Vec<&TypeInfo> = vec![t; counts.len()];
        let disp = element_displs(t, counts, displs);
        // SAFETY: forwarded contract.
        unsafe { View::general(addr, &types, counts, &disp, Mode::Streamed) }
    }

    /// A streamed `MPI_Alltoallw` buffer (blocks as for [`View::wblocks`]).
    ///
    /// # Safety
    /// `addr` must hold every block until the schedule has run (MPI contract).
    pub unsafe fn streamed_wblocks(
        addr: usize,
        types: &[&TypeInfo],
        counts: &[usize],
        displs: &[i64],
    ) -> Result<(View, Vec<Block>)> {
        let disp: Vec<isize> = displs[..counts.len()].iter().map(|&d| d as isize).collect();
        // SAFETY: forwarded contract.
        unsafe { View::general(addr, types, counts, &disp, Mode::Streamed) }
    }

    fn staged(len: usize, types: Vec<TypeInfo>, pre: Vec<Run>, post: Vec<Run>) -> View {
        let mut s = Staged {
            data: spare::take(len),
            types,
            pre,
            post,
        };
        s.pack();
        let base = s.data.as_mut_ptr();
        View {
            base,
            staged: Some(s),
            stream: None,
        }
    }

    /// Packs the parts the collective reads again (a persistent collective's next
    /// start: the program may have changed its buffer since).
    ///
    /// # Safety
    /// The user buffer must still hold the `pre` parts.
    pub unsafe fn repack(&mut self) {
        if let Some(s) = &mut self.staged {
            s.pack();
        }
    }

    /// After the schedule, without consuming the view: unpacks what the collective
    /// wrote into a staged buffer.
    ///
    /// # Safety
    /// The user buffer must still be valid for the `post` parts.
    pub unsafe fn unpack(&self) {
        if let Some(s) = &self.staged {
            for r in &s.post {
                let t = &s.types[r.ty];
                let n = r.count * t.size;
                // SAFETY: per the contract; the run lies inside the staging copy.
                unsafe { t.unpack(r.user as *mut u8, &s.data[r.off..r.off + n]) };
            }
        }
    }

    /// A buffer of `total` elements of `t` at `addr`, of which the parts `pre` are read
    /// and the parts `post` written by the collective.
    ///
    /// # Safety
    /// `addr` must hold `total` elements of `t` (the `pre` parts readable).
    pub unsafe fn single(
        addr: usize,
        t: &TypeInfo,
        total: usize,
        pre: Parts<'_>,
        post: Parts<'_>,
    ) -> View {
        if t.contiguous || total == 0 {
            return View::direct(addr);
        }
        if let Some((d, _)) = t.contiguous_block(total) {
            return View::direct(addr.wrapping_add(d as usize));
        }
        let run = |&(first, count): &(usize, usize)| Run {
            user: addr.wrapping_add((first as isize).wrapping_mul(t.signed_extent) as usize),
            off: first * t.size,
            count,
            ty: 0,
        };
        let pre: Vec<Run> = pre.iter().map(run).collect();
        let post: Vec<Run> = post.iter().map(run).collect();
        View::staged(total * t.size, vec![t.clone()], pre, post)
    }

    /// A v-variant buffer: block `i` is `counts[i]` elements of `t` at element
    /// displacement `displs[i]` from `addr`. Returns the view and the blocks in its
    /// packed byte space; `pre(i)` / `post(i)` say whether block `i` is read / written.
    ///
    /// # Safety
    /// `addr` must hold every block (MPI contract).
    pub unsafe fn blocks(
        addr: usize,
        t: &TypeInfo,
        counts: &[usize],
        displs: &[i64],
        pre: impl Fn(usize) -> bool,
        post: impl Fn(usize) -> bool,
    ) -> Result<(View, Vec<Block>)> {
        let types: Vec<&TypeInfo> = vec![t; counts.len()];
        let disp = element_displs(t, counts, displs);
        // SAFETY: forwarded contract.
        unsafe { View::general(addr, &types, counts, &disp, Mode::Staged(&pre, &post)) }
    }

    /// An `MPI_Alltoallw` buffer: block `i` is `counts[i]` elements of `types[i]` at
    /// byte displacement `displs[i]`. `pre` / `post` as for [`View::blocks`].
    ///
    /// # Safety
    /// `addr` must hold every block (MPI contract).
    pub unsafe fn wblocks(
        addr: usize,
        types: &[&TypeInfo],
        counts: &[usize],
        displs: &[i64],
        pre: bool,
        post: bool,
    ) -> Result<(View, Vec<Block>)> {
        let disp: Vec<isize> = displs[..counts.len()].iter().map(|&d| d as isize).collect();
        // SAFETY: forwarded contract.
        unsafe {
            View::general(
                addr,
                types,
                counts,
                &disp,
                Mode::Staged(&|_| pre, &|_| post),
            )
        }
    }

    /// Blocks of `counts[i]` elements of `types[i]` at byte displacement `disp[i]`.
    /// When every non-empty block is one contiguous run of memory the view maps user
    /// memory directly (offsets relative to the lowest block); otherwise the blocks
    /// are staged or streamed one after another.
    unsafe fn general(
        addr: usize,
        types: &[&TypeInfo],
        counts: &[usize],
        disp: &[isize],
        mode: Mode<'_>,
    ) -> Result<(View, Vec<Block>)> {
        let n = counts.len();
        let used = |i: usize| counts[i] > 0 && types[i].size > 0;
        let mut lens = Vec::with_capacity(n);
        for i in 0..n {
            lens.push(checked_len(counts[i], types[i].size)?);
        }
        // Direct: the address of each block's packed run, when it is one run.
        let mut starts = Vec::with_capacity(n);
        for i in 0..n {
            if !used(i) {
                starts.push(None);
                continue;
            }
            match types[i].contiguous_block(counts[i]) {
                Some((d, _)) => starts.push(Some(disp[i].wrapping_add(d))),
                None => break,
            }
        }
        if starts.len() == n {
            let lo = starts.iter().flatten().copied().min().unwrap_or(0);
            let blocks = (0..n)
                .map(|i| Block {
                    off: starts[i].map_or(0, |s| (s - lo) as usize),
                    len: lens[i],
                })
                .collect();
            return Ok((View::direct(addr.wrapping_add(lo as usize)), blocks));
        }
        let Mode::Staged(pre, post) = mode else {
            return streamed_struct(addr, types, counts, disp, &lens);
        };
        let mut blocks = Vec::with_capacity(n);
        let (mut pre_runs, mut post_runs) = (Vec::new(), Vec::new());
        let mut tys = Vec::new();
        let mut off = 0usize;
        for i in 0..n {
            blocks.push(Block { off, len: lens[i] });
            if used(i) {
                let ty = match tys.iter().position(|t: &TypeInfo| {
                    oxmpi_datatype::Datatype::ptr_eq(t.datatype(), types[i].datatype())
                }) {
                    Some(k) => k,
                    None => {
                        tys.push(types[i].clone());
                        tys.len() - 1
                    }
                };
                let run = Run {
                    user: addr.wrapping_add(disp[i] as usize),
                    off,
                    count: counts[i],
                    ty,
                };
                if pre(i) {
                    pre_runs.push(run);
                }
                if post(i) {
                    post_runs.push(run);
                }
            }
            off = off.checked_add(lens[i]).ok_or_else(too_large)?;
        }
        Ok((View::staged(off, tys, pre_runs, post_runs), blocks))
    }

    /// After the schedule: unpacks what the collective wrote into a staged buffer.
    ///
    /// # Safety
    /// The user buffer must still be valid for the `post` parts.
    pub unsafe fn finish(self) {
        // SAFETY: forwarded contract.
        unsafe { self.unpack() }
    }
}

/// Whether [`View::general`] stages or streams non-contiguous blocks; a staged view
/// packs the blocks `pre(i)` names and unpacks those `post(i)` names.
enum Mode<'a> {
    Staged(&'a dyn Fn(usize) -> bool, &'a dyn Fn(usize) -> bool),
    Streamed,
}

/// Byte displacements of blocks given in elements of `t`.
fn element_displs(t: &TypeInfo, counts: &[usize], displs: &[i64]) -> Vec<isize> {
    displs[..counts.len()]
        .iter()
        .map(|&d| (d as isize).wrapping_mul(t.signed_extent))
        .collect()
}

/// The streamed view of blocks that are not one run of memory: a struct type of the
/// used blocks in block order (so its packed stream is the blocks one after another)
/// at `addr`, and each block's place in that stream.
fn streamed_struct(
    addr: usize,
    types: &[&TypeInfo],
    counts: &[usize],
    disp: &[isize],
    lens: &[usize],
) -> Result<(View, Vec<Block>)> {
    let (mut bl, mut ds, mut tys) = (Vec::new(), Vec::new(), Vec::new());
    let mut blocks = Vec::with_capacity(counts.len());
    let mut off = 0usize;
    for i in 0..counts.len() {
        blocks.push(Block { off, len: lens[i] });
        off = off.checked_add(lens[i]).ok_or_else(too_large)?;
        if lens[i] > 0 {
            bl.push(i64::try_from(counts[i]).map_err(|_| too_large())?);
            ds.push(disp[i] as i64);
            tys.push(types[i].datatype().clone());
        }
    }
    let ty = Datatype::create_struct(&bl, &ds, &tys).map_err(|e| {
        crate::error::Error::new(
            ErrorClass::Intern,
            format!("cannot describe the blocks as one type: {e}"),
        )
    })?;
    let view = View::streaming(Layout {
        base: addr,
        count: 1,
        size: off,
        ty,
        skip: 0,
    });
    Ok((view, blocks))
}

impl Drop for Staged {
    fn drop(&mut self) {
        spare::give(std::mem::take(&mut self.data));
    }
}

/// Staging buffers kept per thread for the next call: a collective repeated with the
/// same sizes reuses its buffer instead of mapping and faulting in fresh pages (and
/// zeroing them) every call. A buffer may be longer than the call needs.
mod spare {
    use std::cell::RefCell;

    /// Buffers kept per thread, and the largest kept.
    const KEEP: usize = 2;
    const KEEP_MAX: usize = 32 << 20;

    thread_local! {
        static SPARE: RefCell<Vec<Vec<u8>>> = const { RefCell::new(Vec::new()) };
    }

    /// A buffer of at least `len` initialised bytes.
    pub(super) fn take(len: usize) -> Vec<u8> {
        let kept = SPARE
            .try_with(|s| {
                let mut s = s.try_borrow_mut().ok()?;
                let i = s.iter().position(|b| b.len() >= len)?;
                Some(s.swap_remove(i))
            })
            .ok()
            .flatten();
        kept.unwrap_or_else(|| vec![0u8; len])
    }

    /// Keeps `buf` for a later [`take`] on this thread if there is room.
    pub(super) fn give(buf: Vec<u8>) {
        if buf.is_empty() || buf.len() > KEEP_MAX {
            return;
        }
        let _ = SPARE.try_with(|s| {
            if let Ok(mut s) = s.try_borrow_mut() {
                if s.len() < KEEP {
                    s.push(buf);
                } else if let Some(small) = s.iter_mut().min_by_key(|b| b.len()) {
                    if small.len() < buf.len() {
                        *small = buf;
                    }
                }
            }
        });
    }
}

impl Staged {
    fn pack(&mut self) {
        for r in &self.pre {
            let t = &self.types[r.ty];
            let n = r.count * t.size;
            // SAFETY: the user buffer holds these elements (MPI contract, checked
            // counts); `off + n <= len` by construction of the runs.
            unsafe {
                t.pack(
                    r.user as *const u8,
                    r.count,
                    &mut self.data[r.off..r.off + n],
                )
            };
        }
    }
}

fn too_large() -> crate::error::Error {
    crate::error::Error::new(ErrorClass::Count, "the blocks' total size overflows")
}

fn checked_len(count: usize, size: usize) -> Result<usize> {
    match count.checked_mul(size) {
        Some(n) => Ok(n),
        None => err(
            ErrorClass::Count,
            format!("{count} elements of {size} bytes overflow"),
        ),
    }
}
