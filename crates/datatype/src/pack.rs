//! Packing and unpacking in the native representation: runs a compiled program
//! between user memory (described by the type map from a base address) and a
//! contiguous byte stream, starting at any byte offset of the stream.
//!
//! Locating an offset costs one division per loop level and a binary search per
//! block list, so a multi-MiB message can be moved in pieces without rescanning.

use std::ptr;

use crate::blockcopy::{copy_blocks, Run};
use crate::datatype::Datatype;
use crate::program::{Node, NodeKind, Program};

/// The direction of a copy between user memory (an address) and the stream buffer.
trait Dir {
    /// Moves `n` bytes between memory at `mem` and `buf`.
    ///
    /// # Safety
    /// `mem..mem+n` and `buf..buf+n` must be valid for the access and not overlap.
    unsafe fn copy(mem: usize, buf: *mut u8, n: usize);

    /// Moves `N` bytes (a constant, so the compiler emits plain loads and stores).
    ///
    /// # Safety
    /// As for [`Dir::copy`] with `n == N`.
    unsafe fn copy_fixed<const N: usize>(mem: usize, buf: *mut u8);

    /// Moves `n` blocks of `len` bytes, the memory side `stride` bytes apart, the
    /// stream side back to back.
    ///
    /// # Safety
    /// As for [`Dir::copy`], for every block.
    unsafe fn copy_run(mem: usize, stride: i64, buf: *mut u8, len: usize, n: usize);
}

/// Memory to stream.
struct Gather;
/// Stream to memory.
struct Scatter;

impl Dir for Gather {
    #[inline(always)]
    unsafe fn copy(mem: usize, buf: *mut u8, n: usize) {
        // SAFETY: the caller guarantees both ranges are valid and disjoint.
        unsafe { ptr::copy_nonoverlapping(mem as *const u8, buf, n) }
    }

    #[inline(always)]
    unsafe fn copy_fixed<const N: usize>(mem: usize, buf: *mut u8) {
        // SAFETY: as for `copy`; unaligned accesses are used on purpose.
        unsafe {
            let v = ptr::read_unaligned(mem as *const [u8; N]);
            ptr::write_unaligned(buf as *mut [u8; N], v);
        }
    }

    #[inline(always)]
    unsafe fn copy_run(mem: usize, stride: i64, buf: *mut u8, len: usize, n: usize) {
        // SAFETY: forwarded caller contract (stream blocks back to back).
        unsafe {
            copy_blocks(Run {
                dst: buf as usize,
                dst_stride: len as i64,
                src: mem,
                src_stride: stride,
                len,
                n,
            })
        }
    }
}

impl Dir for Scatter {
    #[inline(always)]
    unsafe fn copy(mem: usize, buf: *mut u8, n: usize) {
        // SAFETY: the caller guarantees both ranges are valid and disjoint; `buf` is
        // only read.
        unsafe { ptr::copy_nonoverlapping(buf as *const u8, mem as *mut u8, n) }
    }

    #[inline(always)]
    unsafe fn copy_fixed<const N: usize>(mem: usize, buf: *mut u8) {
        // SAFETY: as for `copy`; unaligned accesses are used on purpose.
        unsafe {
            let v = ptr::read_unaligned(buf as *const [u8; N]);
            ptr::write_unaligned(mem as *mut [u8; N], v);
        }
    }

    #[inline(always)]
    unsafe fn copy_run(mem: usize, stride: i64, buf: *mut u8, len: usize, n: usize) {
        // SAFETY: forwarded caller contract (stream blocks back to back).
        unsafe {
            copy_blocks(Run {
                dst: mem,
                dst_stride: stride,
                src: buf as usize,
                src_stride: len as i64,
                len,
                n,
            })
        }
    }
}

#[inline(always)]
fn offset(addr: usize, by: i64) -> usize {
    addr.wrapping_add(by as usize)
}

/// `n` blocks of `len` bytes, the memory side `stride` bytes apart, the stream side
/// back to back.
#[inline(always)]
unsafe fn strided<D: Dir>(mem: usize, stride: i64, buf: *mut u8, len: usize, n: usize) {
    macro_rules! fixed {
        ($w:literal) => {{
            let mut m = mem;
            let mut b = buf;
            for _ in 0..n {
                // SAFETY: block k lies inside the caller's memory and stream ranges.
                unsafe { D::copy_fixed::<$w>(m, b) };
                m = offset(m, stride);
                b = b.wrapping_add($w);
            }
        }};
    }
    match len {
        1 => fixed!(1),
        2 => fixed!(2),
        4 => fixed!(4),
        8 => fixed!(8),
        12 => fixed!(12),
        16 => fixed!(16),
        24 => fixed!(24),
        32 => fixed!(32),
        64 => fixed!(64),
        // SAFETY: every block lies inside the caller's memory and stream ranges.
        _ => unsafe { D::copy_run(mem, stride, buf, len, n) },
    }
}

/// Moves up to `avail` bytes of `count` copies of `child` (copy k with origin
/// `at + k * stride`), skipping the first `skip` packed bytes. Returns bytes moved.
unsafe fn repeat<D: Dir>(
    count: u64,
    stride: i64,
    child: &Node,
    at: usize,
    skip: u64,
    buf: *mut u8,
    avail: usize,
) -> usize {
    let cs = child.size;
    let mut k = skip / cs;
    let s = skip % cs;
    let mut done = 0usize;
    let origin = |k: u64| offset(at, (k as i64).wrapping_mul(stride));
    if s != 0 {
        // SAFETY: forwarded caller contract.
        done = unsafe { walk::<D>(child, origin(k), s, buf, avail) };
        k += 1;
        if done == avail {
            return done;
        }
    }
    if let NodeKind::Block = child.kind {
        let len = cs as usize;
        let full = (count - k).min(((avail - done) / len) as u64);
        // SAFETY: the `full` blocks are inside the caller's ranges.
        unsafe {
            strided::<D>(
                offset(origin(k), child.disp),
                stride,
                buf.add(done),
                len,
                full as usize,
            )
        };
        done += full as usize * len;
        k += full;
        if k < count && done < avail {
            let n = avail - done;
            // SAFETY: a prefix of block k, inside the caller's ranges.
            unsafe { D::copy(offset(origin(k), child.disp), buf.add(done), n) };
            done += n;
        }
        return done;
    }
    if let NodeKind::Blocks { disps, starts } = &child.kind {
        let len = cs as usize;
        let full = (count - k).min(((avail - done) / len) as u64) as usize;
        let at = offset(origin(k), child.disp);
        // SAFETY: the `full` whole elements are inside the caller's ranges.
        let moved = full > 0
            && unsafe { small_elements::<D>(disps, starts, at, stride, buf.add(done), full) };
        if moved {
            done += full * len;
            k += full as u64;
        }
    }
    while k < count && done < avail {
        // SAFETY: forwarded caller contract.
        done += unsafe { walk::<D>(child, origin(k), 0, buf.add(done), avail - done) };
        k += 1;
    }
    done
}

/// Most blocks an element may have to take the [`small_elements`] loop.
const SMALL_BLOCKS: usize = 8;

/// Moves `n` whole elements made of a few blocks (`disps`, packed ranges `starts`),
/// element k at `mem + k * stride`, the stream side back to back. Elements of two
/// blocks of 1-16 bytes (a struct of two scalars) get a loop compiled for their
/// exact widths; other small shapes one loop over fixed-width moves. Returns false,
/// moving nothing, when the shape has too many blocks for either.
///
/// # Safety
/// Every block of the `n` elements and the `n` packed elements of the stream must
/// be inside the caller's ranges.
#[inline(always)]
unsafe fn small_elements<D: Dir>(
    disps: &[i64],
    starts: &[u64],
    mem: usize,
    stride: i64,
    buf: *mut u8,
    n: usize,
) -> bool {
    if disps.len() > SMALL_BLOCKS {
        return false;
    }
    if disps.len() == 2 {
        let (a, b) = (starts[1] as usize, (starts[2] - starts[1]) as usize);
        let p = Pair {
            d0: disps[0],
            d1: disps[1],
            mem,
            stride,
            buf,
            n,
        };
        // SAFETY: forwarded caller contract.
        if unsafe { pair_first::<D>(a, b, p) } {
            return true;
        }
    }
    let mut shape = [(0i64, 0usize); SMALL_BLOCKS];
    for (i, d) in disps.iter().enumerate() {
        shape[i] = (*d, (starts[i + 1] - starts[i]) as usize);
    }
    let shape = &shape[..disps.len()];
    let size = starts[disps.len()] as usize;
    let (mut m, mut b) = (mem, buf);
    for _ in 0..n {
        let mut at = b;
        for &(d, len) in shape {
            // SAFETY: block of this element, inside the caller's ranges.
            unsafe { copy_small::<D>(offset(m, d), at, len) };
            at = at.wrapping_add(len);
        }
        m = offset(m, stride);
        b = b.wrapping_add(size);
    }
    true
}

/// One block of a small element: fixed-width moves for the common widths (the
/// pattern repeats every element, so the branch is predicted).
#[inline(always)]
unsafe fn copy_small<D: Dir>(mem: usize, buf: *mut u8, len: usize) {
    // SAFETY: in all arms, `len` bytes at `mem` and `buf` are inside the caller's ranges.
    unsafe {
        match len {
            1 => D::copy_fixed::<1>(mem, buf),
            2 => D::copy_fixed::<2>(mem, buf),
            4 => D::copy_fixed::<4>(mem, buf),
            8 => D::copy_fixed::<8>(mem, buf),
            12 => D::copy_fixed::<12>(mem, buf),
            16 => D::copy_fixed::<16>(mem, buf),
            _ => D::copy(mem, buf, len),
        }
    }
}

/// `n` elements of two blocks at `d0` and `d1`, element k at `mem + k * stride`,
/// packed back to back at `buf`.
#[derive(Clone, Copy)]
struct Pair {
    d0: i64,
    d1: i64,
    mem: usize,
    stride: i64,
    buf: *mut u8,
    n: usize,
}

/// Picks the compiled loop for a pair of blocks of `a` and `b` bytes by the first width.
#[inline(always)]
unsafe fn pair_first<D: Dir>(a: usize, b: usize, p: Pair) -> bool {
    // SAFETY: forwarded caller contract, in all arms.
    unsafe {
        match a {
            1 => pair_second::<D, 1>(b, p),
            2 => pair_second::<D, 2>(b, p),
            4 => pair_second::<D, 4>(b, p),
            8 => pair_second::<D, 8>(b, p),
            16 => pair_second::<D, 16>(b, p),
            _ => false,
        }
    }
}

/// Picks the compiled loop for a pair of blocks by the second width.
#[inline(always)]
unsafe fn pair_second<D: Dir, const A: usize>(b: usize, p: Pair) -> bool {
    // SAFETY: forwarded caller contract, in all arms.
    unsafe {
        match b {
            1 => pair::<D, A, 1>(p),
            2 => pair::<D, A, 2>(p),
            4 => pair::<D, A, 4>(p),
            8 => pair::<D, A, 8>(p),
            16 => pair::<D, A, 16>(p),
            _ => return false,
        }
    }
    true
}

/// The elements of `p`: an `A`-byte block at `d0` and a `B`-byte block at `d1`.
unsafe fn pair<D: Dir, const A: usize, const B: usize>(p: Pair) {
    let (mut m, mut b) = (p.mem, p.buf);
    for _ in 0..p.n {
        // SAFETY: both blocks of element k and its packed bytes are inside the
        // caller's ranges.
        unsafe {
            D::copy_fixed::<A>(offset(m, p.d0), b);
            D::copy_fixed::<B>(offset(m, p.d1), b.wrapping_add(A));
        }
        m = offset(m, p.stride);
        b = b.wrapping_add(A + B);
    }
}

/// Moves up to `avail` bytes of `node` placed at `origin`, skipping `skip` bytes.
unsafe fn walk<D: Dir>(node: &Node, origin: usize, skip: u64, buf: *mut u8, avail: usize) -> usize {
    let at = offset(origin, node.disp);
    match &node.kind {
        NodeKind::Block => {
            let n = (node.size - skip).min(avail as u64) as usize;
            // SAFETY: a piece of this block, inside the caller's ranges.
            unsafe { D::copy(at.wrapping_add(skip as usize), buf, n) };
            n
        }
        NodeKind::Repeat {
            count,
            stride,
            child,
        } => {
            // SAFETY: forwarded caller contract.
            unsafe { repeat::<D>(*count, *stride, child, at, skip, buf, avail) }
        }
        NodeKind::Seq { items, starts } => {
            let mut i = starts[..items.len()].partition_point(|&s| s <= skip) - 1;
            let mut s = skip - starts[i];
            let mut done = 0usize;
            while i < items.len() && done < avail {
                // SAFETY: forwarded caller contract.
                done += unsafe { walk::<D>(&items[i], at, s, buf.add(done), avail - done) };
                s = 0;
                i += 1;
            }
            done
        }
        NodeKind::Blocks { disps, starts } => {
            let mut i = starts[..disps.len()].partition_point(|&s| s <= skip) - 1;
            let mut s = skip - starts[i];
            let mut done = 0usize;
            while i < disps.len() && done < avail {
                let n = ((starts[i + 1] - starts[i] - s) as usize).min(avail - done);
                // SAFETY: a piece of block i, inside the caller's ranges.
                unsafe {
                    D::copy(
                        offset(at, disps[i]).wrapping_add(s as usize),
                        buf.add(done),
                        n,
                    )
                };
                done += n;
                s = 0;
                i += 1;
            }
            done
        }
    }
}

unsafe fn transfer<D: Dir>(
    prog: &Program,
    base: usize,
    count: usize,
    from: usize,
    buf: *mut u8,
    len: usize,
) -> usize {
    let total = (count as u64).saturating_mul(prog.size);
    let from = from as u64;
    if from >= total {
        return 0;
    }
    let avail = (total - from).min(len as u64) as usize;
    let Some(root) = &prog.root else { return 0 };
    if let Some((disp, size)) = prog.element_block() {
        if count == 1 || prog.extent == size as i64 {
            // SAFETY: the whole message is one block; this is a piece of it.
            unsafe { D::copy(offset(base, disp).wrapping_add(from as usize), buf, avail) };
            return avail;
        }
    }
    // SAFETY: forwarded caller contract.
    unsafe { repeat::<D>(count as u64, prog.extent, root, base, from, buf, avail) }
}

/// Packs `count` elements of `ty` at `base` into `out`, starting at byte `offset` of
/// the packed stream of the whole message; writes at most `out.len()` bytes and returns
/// how many it wrote (0 once `offset` reaches the end). Calls with consecutive
/// offsets produce the same bytes as one call. Compiles the type on first use.
///
/// # Safety
/// Every byte the type map of the `count` elements describes, at `base` plus its
/// displacement (absolute addresses when `base` is null, as with `MPI_BOTTOM`), must be
/// readable and must not overlap `out`.
pub unsafe fn pack(
    ty: &Datatype,
    base: *const u8,
    count: usize,
    offset: usize,
    out: &mut [u8],
) -> usize {
    // SAFETY: forwarded caller contract; `out` is a valid writable slice.
    unsafe {
        transfer::<Gather>(
            ty.program(),
            base as usize,
            count,
            offset,
            out.as_mut_ptr(),
            out.len(),
        )
    }
}

/// Unpacks bytes `offset..offset + input.len()` of the packed stream of `count`
/// elements of `ty` into memory at `base`; returns bytes consumed (less than
/// `input.len()` only at the end of the message). Resumable like [`pack`].
///
/// # Safety
/// Every byte the type map of the `count` elements describes, at `base` plus its
/// displacement (absolute when `base` is null), must be writable and must not overlap
/// `input`.
pub unsafe fn unpack(
    ty: &Datatype,
    base: *mut u8,
    count: usize,
    offset: usize,
    input: &[u8],
) -> usize {
    let buf = input.as_ptr() as *mut u8; // only read through (Scatter)
                                         // SAFETY: forwarded caller contract; `input` is a valid readable slice.
    unsafe { transfer::<Scatter>(ty.program(), base as usize, count, offset, buf, input.len()) }
}

/// `MPI_Pack_size` for the native representation: `count * size` bytes, or `None`
/// when that overflows.
pub fn pack_size(ty: &Datatype, count: usize) -> Option<usize> {
    count.checked_mul(ty.size())
}

impl Datatype {
    /// The zero-copy path: `Some((displacement, length))` when `count` elements occupy
    /// one contiguous run of memory, in packed order, at `base + displacement`
    /// (including structs and pair types that happen to have no holes).
    /// Compiles the type on first use.
    #[inline]
    pub fn contiguous_block(&self, count: usize) -> Option<(isize, usize)> {
        let p = self.program();
        if p.size == 0 || count == 0 {
            return Some((0, 0));
        }
        let (disp, size) = p.element_block()?;
        if count == 1 || p.extent == size as i64 {
            Some((disp as isize, (size as usize).checked_mul(count)?))
        } else {
            None
        }
    }

    /// True when any number of elements is one contiguous run (see
    /// [`contiguous_block`](Self::contiguous_block)).
    pub fn is_contiguous(&self) -> bool {
        self.contiguous_block(2).is_some()
    }

    /// Contiguous blocks in one element after merging (saturating); a hint for
    /// choosing between an I/O vector and packing.
    pub fn block_count(&self) -> u64 {
        self.program().blocks
    }
}
