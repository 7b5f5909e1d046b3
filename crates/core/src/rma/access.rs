//! The RMA operations, carried out by the origin: checks (target rank, epoch, datatypes,
//! range), then the data moved between the origin buffer and the target's memory —
//! one copy where it is mapped here (packing or unpacking straight into or out of the
//! window when either side's datatype is contiguous), `process_vm_readv`/`writev`
//! where it is another process's own memory. The commonest calls take the short path
//! of `fast.rs` first. On the message transport the same checks run here and the
//! target's pieces travel with the request (`am.rs`); such operations complete when the
//! target answers, and the request forms (`MPI_Rput` ...) get a request of their own
//! that completes then.

use super::am::{self, DataOp, Deliver, Kind};
use super::atomic::{self, Elem};
use super::table::with_win;
use super::{fast, Flavor, Part, Win, WinId};
use crate::coll::op::{data_range, Op, Reducer};
use crate::device::ReqId;
use crate::error::{err, ErrorClass, Result};
use crate::runtime;
use crate::types::{TypeId, TypeInfo};
use oxmpi_coll::ops::PredefinedOp;

/// The origin side of an operation: `count` elements of `ty` at `addr`.
#[derive(Clone, Copy, Debug)]
pub struct Origin {
    pub addr: usize,
    pub count: usize,
    pub ty: TypeId,
}

/// The target side: `count` elements of `ty` at displacement `disp` of rank `rank`.
#[derive(Clone, Copy, Debug)]
pub struct TargetSpec {
    pub rank: i32,
    pub disp: i64,
    pub count: usize,
    pub ty: TypeId,
}

/// A checked target: its part, the byte offset of the target buffer in it, its type.
struct Resolved {
    t: usize,
    part: Part,
    offset: usize,
    info: TypeInfo,
    count: usize,
}

fn type_info(ty: TypeId) -> Result<TypeInfo> {
    runtime::with(|rt| Ok(rt.types.for_comm(ty)?.clone()))
}

/// Checks the target of an operation; `None` for `MPI_PROC_NULL`.
fn resolve(w: &Win, tg: &TargetSpec) -> Result<Option<Resolved>> {
    let Some(t) = w.target(tg.rank, "target_rank")? else {
        return Ok(None);
    };
    w.check_epoch(t)?;
    // Any operation past this point may store to target memory.
    w.note_stored();
    let info = type_info(tg.ty)?;
    let part = w.part(t);
    if tg.disp < 0 {
        return err(
            ErrorClass::Disp,
            format!("target_disp {} is negative", tg.disp),
        );
    }
    let (lo, hi) = data_range(&info, tg.count);
    if w.flavor() == super::Flavor::Dynamic {
        // Displacements are addresses in the target; the data must lie in one region
        // the target attached (checked by the target on the message transport).
        let a = tg.disp as i128 + lo as i128;
        let b = tg.disp as i128 + hi as i128;
        let outside = a < 0
            || b > usize::MAX as i128
            || (!w.is_am() && !w.region_covers(t, a as usize, b as usize));
        if hi > lo && outside {
            return err(
                ErrorClass::RmaRange,
                format!(
                    "target_disp {:#x} with target_count {} reaches addresses {a:#x}..{b:#x}, which no region attached by target rank {t} holds",
                    tg.disp, tg.count
                ),
            );
        }
        return Ok(Some(Resolved {
            t,
            part,
            offset: tg.disp as usize,
            info,
            count: tg.count,
        }));
    }
    let start = (tg.disp as i128) * part.disp_unit as i128;
    let bad = start + (lo as i128) < 0 || start + hi as i128 > part.size as i128;
    if bad && hi > lo {
        return err(
            ErrorClass::RmaRange,
            format!(
                "target_disp {} (disp_unit {}) with target_count {} reaches bytes {}..{} of target rank {t}'s window of {} bytes",
                tg.disp,
                part.disp_unit,
                tg.count,
                start + lo as i128,
                start + hi as i128,
                part.size
            ),
        );
    }
    Ok(Some(Resolved {
        t,
        part,
        offset: start as usize,
        info,
        count: tg.count,
    }))
}

fn same_size(o: &TypeInfo, ocount: usize, r: &Resolved, what: &str) -> Result<usize> {
    let ob = o.size * ocount;
    let tb = r.info.size * r.count;
    if ob != tb {
        return err(
            ErrorClass::Type,
            format!("the {what} data ({ob} bytes) and the target data ({tb} bytes) differ in size"),
        );
    }
    Ok(ob)
}

/// Packs the origin's elements.
fn pack(info: &TypeInfo, o: &Origin) -> Vec<u8> {
    let mut v = vec![0u8; info.size * o.count];
    if info.contiguous && !v.is_empty() {
        // SAFETY: as below; the elements are exactly these bytes.
        unsafe { std::ptr::copy_nonoverlapping(o.addr as *const u8, v.as_mut_ptr(), v.len()) };
    } else if !v.is_empty() {
        // SAFETY: the program passed `count` elements of the type at `addr` (MPI's
        // contract for the origin buffer); `v` is a fresh buffer of their packed size.
        unsafe { info.pack(o.addr as *const u8, o.count, &mut v) };
    }
    v
}

/// Unpacks into the origin's (or result) buffer.
fn unpack(info: &TypeInfo, addr: usize, data: &[u8]) {
    if info.contiguous && !data.is_empty() {
        // SAFETY: as below; the elements are exactly these bytes.
        unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), addr as *mut u8, data.len()) };
    } else if !data.is_empty() {
        // SAFETY: the program passed a buffer for these elements (MPI's contract for
        // the origin and result buffers); `data` is our own.
        unsafe { info.unpack(addr as *mut u8, data) };
    }
}

/// The target's pieces of `r` (offset from the target buffer, length) for `n` bytes.
fn target_blocks(r: &Resolved, n: usize) -> Vec<(isize, usize)> {
    pieces(&r.info, r.count, n).collect()
}

/// The memory pieces (displacement from the buffer, length) of the first `n` packed
/// bytes of `count` elements of `info`, in packed order.
fn pieces(
    info: &TypeInfo,
    count: usize,
    n: usize,
) -> Box<dyn Iterator<Item = (isize, usize)> + '_> {
    if info.contiguous {
        Box::new((n > 0).then_some((0, n)).into_iter())
    } else {
        Box::new(info.blocks(count, 0, n))
    }
}

/// Walks two piece lists of the same packed length in step: `f(displacement in a,
/// displacement in b, length)` for each run that lies in one piece of each.
fn zip_pieces(
    mut a: impl Iterator<Item = (isize, usize)>,
    mut b: impl Iterator<Item = (isize, usize)>,
    mut f: impl FnMut(isize, isize, usize) -> Result<()>,
) -> Result<()> {
    let (mut x, mut y) = (a.next(), b.next());
    while let (Some((da, la)), Some((db, lb))) = (x, y) {
        let len = la.min(lb);
        if len > 0 {
            f(da, db, len)?;
        }
        x = if la > len {
            Some((da + len as isize, la - len))
        } else {
            a.next()
        };
        y = if lb > len {
            Some((db + len as isize, lb - len))
        } else {
            b.next()
        };
    }
    Ok(())
}

/// Moves the packed target data between `buf` and the target's memory.
fn transfer(r: &Resolved, buf: &mut [u8], write: bool) -> Result<()> {
    let n = buf.len();
    let local = buf.as_mut_ptr() as usize;
    let at = r.part.addr.wrapping_add(r.offset);
    let tp = pieces(&r.info, r.count, n);
    if r.part.direct {
        return zip_pieces(std::iter::once((0, n)), tp, |od, td, len| {
            // SAFETY: the target piece lies inside the target's window memory (the
            // range was checked against its size), mapped in this process for the
            // window's life; the local piece is inside our own buffer.
            unsafe { copy_piece(local, od, at, td, len, write) };
            Ok(())
        });
    }
    cma_pieces(r.part.pid, at, tp, local, std::iter::once((0, n)), write)
}

/// Copies `len` bytes between `local + ld` and `remote + rd` (`write`: to `remote`).
///
/// # Safety
/// Both ranges are valid, mapped here, and do not overlap.
unsafe fn copy_piece(local: usize, ld: isize, remote: usize, rd: isize, len: usize, write: bool) {
    let l = local.wrapping_add_signed(ld) as *mut u8;
    let r = remote.wrapping_add_signed(rd) as *mut u8;
    // SAFETY: the caller's contract.
    unsafe {
        if write {
            std::ptr::copy_nonoverlapping(l, r, len);
        } else {
            std::ptr::copy_nonoverlapping(r, l, len);
        }
    }
}

/// Moves the `n` packed bytes of the operation between the origin buffer and the
/// target's memory mapped here (`write`: a put), packing or unpacking straight into or
/// out of the window where either side is contiguous, piece by piece along both types
/// otherwise.
fn copy_mapped(oi: &TypeInfo, o: &Origin, r: &Resolved, n: usize, write: bool) {
    if n == 0 {
        return;
    }
    let tbase = r.part.addr.wrapping_add(r.offset);
    // SAFETY: the target buffer's data (`n` bytes along its type from `tbase`) lies in
    // the target's window memory, mapped here for the window's life (checked by
    // `resolve`); the origin buffer holds `o.count` elements of its type (MPI's
    // contract); the two do not overlap (MPI forbids it); contiguous sides are exactly
    // their `n` bytes.
    unsafe {
        let o_bytes = || std::slice::from_raw_parts_mut(o.addr as *mut u8, n);
        let t_bytes = || std::slice::from_raw_parts_mut(tbase as *mut u8, n);
        match (oi.contiguous, r.info.contiguous, write) {
            (true, true, true) => {
                std::ptr::copy_nonoverlapping(o.addr as *const u8, tbase as *mut u8, n)
            }
            (true, true, false) => {
                std::ptr::copy_nonoverlapping(tbase as *const u8, o.addr as *mut u8, n)
            }
            (false, true, true) => oi.pack(o.addr as *const u8, o.count, t_bytes()),
            (false, true, false) => oi.unpack(o.addr as *mut u8, t_bytes()),
            (true, false, true) => r.info.unpack(tbase as *mut u8, o_bytes()),
            (true, false, false) => r.info.pack(tbase as *const u8, r.count, o_bytes()),
            (false, false, _) => {
                let op = pieces(oi, o.count, n);
                let tp = pieces(&r.info, r.count, n);
                let _ = zip_pieces(op, tp, |od, td, len| {
                    copy_piece(o.addr, od, tbase, td, len, write);
                    Ok(())
                });
            }
        }
    }
}

/// Moves the operation's `n` packed bytes between the origin buffer and the target's
/// memory in another process, along both datatypes, without packing either side.
fn copy_cma(oi: &TypeInfo, o: &Origin, r: &Resolved, n: usize, write: bool) -> Result<()> {
    let at = r.part.addr.wrapping_add(r.offset);
    let tp = pieces(&r.info, r.count, n);
    cma_pieces(r.part.pid, at, tp, o.addr, pieces(oi, o.count, n), write)
}

/// Most I/O vector entries one `process_vm_readv`/`writev` call takes (`IOV_MAX`).
const IOV_MAX: usize = 1024;

/// Moves data between pieces of our memory (`local` plus `lp`) and pieces of the
/// memory of process `pid` (`remote` plus `rp`), the two lists walked in step, with as
/// few system calls as the I/O vector limit allows.
fn cma_pieces(
    pid: i32,
    remote: usize,
    rp: impl Iterator<Item = (isize, usize)>,
    local: usize,
    lp: impl Iterator<Item = (isize, usize)>,
    write: bool,
) -> Result<()> {
    fn push(v: &mut Vec<libc::iovec>, at: usize, len: usize) {
        if let Some(last) = v.last_mut() {
            if last.iov_base as usize + last.iov_len == at {
                last.iov_len += len;
                return;
            }
        }
        v.push(libc::iovec {
            iov_base: at as *mut libc::c_void,
            iov_len: len,
        });
    }
    let (mut lv, mut rv) = (Vec::new(), Vec::new());
    zip_pieces(lp, rp, |ld, rd, len| {
        push(&mut lv, local.wrapping_add_signed(ld), len);
        push(&mut rv, remote.wrapping_add_signed(rd), len);
        if lv.len() == IOV_MAX || rv.len() == IOV_MAX {
            cma_iov(pid, &mut lv, &mut rv, write)?;
            lv.clear();
            rv.clear();
        }
        Ok(())
    })?;
    cma_iov(pid, &mut lv, &mut rv, write)
}

/// One copy between our `local` buffer and `remote` in process `pid`.
pub(crate) fn cma(pid: i32, remote: usize, local: &mut [u8], write: bool) -> Result<()> {
    let n = local.len();
    cma_pieces(
        pid,
        remote,
        std::iter::once((0, n)),
        local.as_mut_ptr() as usize,
        std::iter::once((0, n)),
        write,
    )
}

/// Moves the bytes of I/O vectors `l` (ours) and `r` (process `pid`'s), of the same
/// total length, resuming after partial transfers; the vectors are consumed.
fn cma_iov(pid: i32, l: &mut [libc::iovec], r: &mut [libc::iovec], write: bool) -> Result<()> {
    // The two calls take the same arguments; only the direction differs.
    let transfer = if write {
        libc::process_vm_writev
    } else {
        libc::process_vm_readv
    };
    let (mut li, mut ri) = (0usize, 0usize);
    while li < l.len() && ri < r.len() {
        let (lrest, rrest) = (&l[li..], &r[ri..]);
        // SAFETY: the local vector describes live memory of this process that the
        // operation may read (put) or write (get); the remote ranges are checked by
        // the kernel (a bad address is an error, never corruption here).
        let done = unsafe {
            transfer(
                pid,
                lrest.as_ptr(),
                lrest.len() as _,
                rrest.as_ptr(),
                rrest.len() as _,
                0,
            )
        };
        if done <= 0 {
            let e = std::io::Error::last_os_error();
            if done < 0 && e.kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return err(
                ErrorClass::Other,
                format!(
                    "cannot {} the memory of process {pid} (the window's target): {e}",
                    if write { "write" } else { "read" }
                ),
            );
        }
        li += consume(&mut l[li..], done as usize);
        ri += consume(&mut r[ri..], done as usize);
    }
    Ok(())
}

/// Drops the first `n` bytes of I/O vector `v`: the number of entries used up (the
/// next one is trimmed).
fn consume(v: &mut [libc::iovec], mut n: usize) -> usize {
    let mut k = 0;
    while n > 0 && k < v.len() {
        let take = n.min(v[k].iov_len);
        v[k].iov_base = (v[k].iov_base as usize + take) as *mut libc::c_void;
        v[k].iov_len -= take;
        n -= take;
        if v[k].iov_len == 0 {
            k += 1;
        }
    }
    k
}

/// The request of an operation of `kind` on target `r` with origin `data`, as the
/// message transport sends it: the target's pieces (offset from the window base, or
/// address on a dynamic window; length), no accumulate operation, no direct buffer.
fn data_op<'a>(kind: Kind, r: &Resolved, data: &'a [u8]) -> DataOp<'a> {
    let n = r.info.size * r.count;
    let pieces = target_blocks(r, n)
        .into_iter()
        .map(|(d, len)| ((r.offset as i64 + d as i64) as u64, len as u64))
        .collect();
    DataOp {
        kind,
        pieces,
        op: 0,
        basic: 0,
        data,
        direct: 0,
    }
}

/// `MPI_Put`.
pub fn put(id: WinId, o: Origin, tg: TargetSpec) -> Result<()> {
    with_win(id, |w| match fast::transfer(w, &o, &tg, true) {
        Some(done) => done,
        None => put_general(w, o, tg, false).map(drop),
    })
}

/// `MPI_Put`, or `MPI_Rput` (`user`): the request of an operation that completes
/// later, or `None` when it is complete already.
pub fn put_req(id: WinId, o: Origin, tg: TargetSpec, user: bool) -> Result<Option<ReqId>> {
    with_win(id, |w| match fast::transfer(w, &o, &tg, true) {
        Some(done) => done.map(|()| None),
        None => put_general(w, o, tg, user),
    })
}

fn put_general(w: &Win, o: Origin, tg: TargetSpec, user: bool) -> Result<Option<ReqId>> {
    let Some(r) = resolve(w, &tg)? else {
        return Ok(None);
    };
    let oi = type_info(o.ty)?;
    let n = same_size(&oi, o.count, &r, "origin")?;
    if w.is_am() && am::direct(&oi, n) {
        // Sent from the origin buffer, without packing it into the request.
        let d = DataOp {
            direct: o.addr,
            ..data_op(Kind::PutDirect, &r, &[])
        };
        return am::issue(w, r.t, &d, 0, Deliver::Ack, user);
    }
    if !w.is_am() {
        if r.part.direct {
            copy_mapped(&oi, &o, &r, n, true);
        } else {
            copy_cma(&oi, &o, &r, n, true)?;
        }
        return Ok(None);
    }
    let data = pack(&oi, &o);
    am::issue(
        w,
        r.t,
        &data_op(Kind::Put, &r, &data),
        0,
        Deliver::Ack,
        user,
    )
}

/// `MPI_Get`.
pub fn get(id: WinId, o: Origin, tg: TargetSpec) -> Result<()> {
    with_win(id, |w| match fast::transfer(w, &o, &tg, false) {
        Some(done) => done,
        None => get_general(w, o, tg, false).map(drop),
    })
}

/// `MPI_Get`, or `MPI_Rget` (`user`; see [`put_req`]).
pub fn get_req(id: WinId, o: Origin, tg: TargetSpec, user: bool) -> Result<Option<ReqId>> {
    with_win(id, |w| match fast::transfer(w, &o, &tg, false) {
        Some(done) => done.map(|()| None),
        None => get_general(w, o, tg, user),
    })
}

fn get_general(w: &Win, o: Origin, tg: TargetSpec, user: bool) -> Result<Option<ReqId>> {
    let Some(r) = resolve(w, &tg)? else {
        return Ok(None);
    };
    let oi = type_info(o.ty)?;
    let n = same_size(&oi, o.count, &r, "origin")?;
    if w.is_am() && am::direct(&oi, n) {
        // Received into the origin buffer, not unpacked from the reply.
        let d = DataOp {
            direct: o.addr,
            ..data_op(Kind::GetDirect, &r, &[])
        };
        return am::issue(w, r.t, &d, 0, Deliver::Ack, user);
    }
    if w.is_am() {
        let to = Deliver::Unpack {
            info: oi,
            addr: o.addr,
        };
        return am::issue(w, r.t, &data_op(Kind::Get, &r, &[]), n, to, user);
    }
    if r.part.direct {
        copy_mapped(&oi, &o, &r, n, false);
    } else {
        copy_cma(&oi, &o, &r, n, false)?;
    }
    Ok(None)
}

/// How an accumulate combines: replace, leave, or a reduction kernel.
#[allow(clippy::large_enum_variant)]
enum Combine {
    Replace,
    NoOp,
    Reduce(Reducer),
}

fn combiner(
    op: u32,
    origin: Option<&TypeInfo>,
    r: &Resolved,
    target_ty: TypeId,
) -> Result<Combine> {
    Ok(combiner_op(op, origin, r, target_ty)?.0)
}

/// [`combiner`], with the predefined operation.
///
/// With no target data (a zero count or an empty type) nothing is combined, so the operation
/// need not be defined for the datatype: `MPI_Get_accumulate` of zero `MPI_BYTE`s with its
/// default `MPI_SUM` is a valid no-op, as in MPICH and Open MPI.
fn combiner_op(
    op: u32,
    origin: Option<&TypeInfo>,
    r: &Resolved,
    target_ty: TypeId,
) -> Result<(Combine, PredefinedOp)> {
    let target = &r.info;
    let o = runtime::with(|rt| rt.coll.ops.get(op))?;
    let p = match o {
        Op::Predefined(p) => p,
        Op::User(_) => {
            return err(
                ErrorClass::Op,
                "user-defined operations cannot be used in one-sided accumulates (only predefined operations, MPI_REPLACE and MPI_NO_OP)",
            )
        }
    };
    let basic = |t: &TypeInfo| t.predefined.or(t.basic);
    if let Some(oi) = origin {
        if target.size > 0 && basic(oi) != basic(target) {
            return err(
                ErrorClass::Type,
                "the origin and target datatypes of an accumulate must be made of the same predefined type",
            );
        }
    }
    if target.size > 0 && basic(target).is_none() {
        return err(
            ErrorClass::Type,
            "an accumulate's target datatype must be made of one predefined type",
        );
    }
    let c = match p {
        PredefinedOp::Replace => Combine::Replace,
        PredefinedOp::NoOp => Combine::NoOp,
        _ if target.size * r.count == 0 => Combine::NoOp,
        _ => Combine::Reduce(Reducer::new(&Op::Predefined(p), target_ty, target)?),
    };
    Ok((c, p))
}

/// Sends an accumulate (`want_old`: a get-accumulate) on the message transport.
fn am_accumulate(
    w: &Win,
    r: &Resolved,
    p: PredefinedOp,
    data: &[u8],
    result: Option<(TypeInfo, usize)>,
    user: bool,
) -> Result<Option<ReqId>> {
    let n = r.info.size * r.count;
    let Some(basic) = r.info.predefined.or(r.info.basic) else {
        // No data at all.
        return Ok(None);
    };
    let kind = if result.is_some() {
        Kind::GetAcc
    } else {
        Kind::Acc
    };
    let d = DataOp {
        op: am::op_index(p),
        basic: am::type_index(basic),
        ..data_op(kind, r, data)
    };
    match result {
        Some((info, addr)) => am::issue(w, r.t, &d, n, Deliver::Unpack { info, addr }, user),
        None => am::issue(w, r.t, &d, 0, Deliver::Ack, user),
    }
}

/// The element type when an accumulate with `op` (compare-and-swap: `None`) on `r`
/// runs with CPU atomics (the rule is in `atomic.rs`), and the address of every target
/// element.
fn atomic_plan(w: &Win, r: &Resolved, op: Option<PredefinedOp>) -> Option<(Elem, Vec<usize>)> {
    if !matches!(w.flavor(), Flavor::Allocate | Flavor::Shared) || !r.part.direct || w.is_am() {
        return None;
    }
    let t = atomic::elem_of(r.info.predefined.or(r.info.basic)?)?;
    if op.is_some_and(|p| !atomic::op_ok(t, p)) {
        return None;
    }
    let n = r.info.size * r.count;
    let mut at = Vec::with_capacity(n / t.size);
    for (d, len) in target_blocks(r, n) {
        let base = (r.part.addr as isize + r.offset as isize + d) as usize;
        if base % t.size != 0 || len % t.size != 0 {
            return None;
        }
        at.extend((0..len / t.size).map(|k| base + k * t.size));
    }
    Some((t, at))
}

/// Read, combine, write at the target: with CPU atomics element by element where the
/// rule allows, else under its accumulate mutex; returns the old data.
fn read_modify_write(
    w: &Win,
    r: &Resolved,
    input: &[u8],
    combine: &Combine,
    op: PredefinedOp,
    want_old: bool,
) -> Result<Vec<u8>> {
    let n = r.info.size * r.count;
    if let Some((t, at)) = atomic_plan(w, r, Some(op)) {
        let mut old = Vec::with_capacity(if want_old { n } else { 0 });
        for (i, &a) in at.iter().enumerate() {
            let v = input
                .get(i * t.size..(i + 1) * t.size)
                .map_or(0, atomic::bits);
            // SAFETY: `atomic_plan` checked the alignment; the address is in segment
            // memory inside the target's checked range.
            let o = unsafe { atomic::rmw(t, op, a, v) };
            if want_old {
                old.extend_from_slice(&o.to_le_bytes()[..t.size]);
            }
        }
        return Ok(old);
    }
    w.with_acc_lock(r.t, || {
        let mut cur = vec![0u8; n];
        if !matches!(combine, Combine::Replace) || want_old {
            transfer(r, &mut cur, false)?;
        }
        let old = if want_old { cur.clone() } else { Vec::new() };
        match combine {
            Combine::NoOp => {}
            Combine::Replace => {
                let mut v = input.to_vec();
                transfer(r, &mut v, true)?;
            }
            Combine::Reduce(red) => {
                red.apply(input, &mut cur)?;
                transfer(r, &mut cur, true)?;
            }
        }
        Ok(old)
    })
}

/// `MPI_Accumulate`.
pub fn accumulate(id: WinId, o: Origin, tg: TargetSpec, op: u32) -> Result<()> {
    accumulate_req(id, o, tg, op, false).map(drop)
}

/// `MPI_Accumulate`, or `MPI_Raccumulate` (`user`; see [`put_req`]).
pub fn accumulate_req(
    id: WinId,
    o: Origin,
    tg: TargetSpec,
    op: u32,
    user: bool,
) -> Result<Option<ReqId>> {
    with_win(id, |w| accumulate_on(w, o, tg, op, user))
}

fn accumulate_on(w: &Win, o: Origin, tg: TargetSpec, op: u32, user: bool) -> Result<Option<ReqId>> {
    let Some(r) = resolve(w, &tg)? else {
        return Ok(None);
    };
    let oi = type_info(o.ty)?;
    let (c, p) = combiner_op(op, Some(&oi), &r, tg.ty)?;
    if matches!(p, PredefinedOp::NoOp) {
        return err(
            ErrorClass::Op,
            "MPI_NO_OP is not an operation of MPI_Accumulate",
        );
    }
    if same_size(&oi, o.count, &r, "origin")? == 0 {
        return Ok(None);
    }
    let data = pack(&oi, &o);
    if w.is_am() {
        return am_accumulate(w, &r, p, &data, None, user);
    }
    read_modify_write(w, &r, &data, &c, p, false)?;
    Ok(None)
}

/// `MPI_Get_accumulate` (and `MPI_Fetch_and_op`): `result` gets the target's data
/// before the operation.
pub fn get_accumulate(id: WinId, o: Origin, result: Origin, tg: TargetSpec, op: u32) -> Result<()> {
    get_accumulate_req(id, o, result, tg, op, false).map(drop)
}

/// `MPI_Get_accumulate`, or `MPI_Rget_accumulate` (`user`; see [`put_req`]).
pub fn get_accumulate_req(
    id: WinId,
    o: Origin,
    result: Origin,
    tg: TargetSpec,
    op: u32,
    user: bool,
) -> Result<Option<ReqId>> {
    with_win(id, |w| get_accumulate_on(w, o, result, tg, op, user))
}

/// `MPI_Fetch_and_op`: `o` has no element for `MPI_NO_OP`, `result` and `tg` one.
pub fn fetch_and_op(id: WinId, o: Origin, result: Origin, tg: TargetSpec, op: u32) -> Result<()> {
    with_win(id, |w| {
        let f = Fop {
            origin: o.addr,
            result: result.addr,
            ty: tg.ty,
            rank: tg.rank,
            disp: tg.disp,
            op,
        };
        match fast::fetch_and_op(w, &f) {
            Some(done) => done,
            None => get_accumulate_on(w, o, result, tg, op, false).map(drop),
        }
    })
}

fn get_accumulate_on(
    w: &Win,
    o: Origin,
    result: Origin,
    tg: TargetSpec,
    op: u32,
    user: bool,
) -> Result<Option<ReqId>> {
    let Some(r) = resolve(w, &tg)? else {
        return Ok(None);
    };
    let ri = type_info(result.ty)?;
    let (c, data) = if is_no_op(op)? {
        (Combine::NoOp, Vec::new())
    } else {
        let oi = type_info(o.ty)?;
        let c = combiner(op, Some(&oi), &r, tg.ty)?;
        same_size(&oi, o.count, &r, "origin")?;
        (c, pack(&oi, &o))
    };
    let (_, p) = combiner_op(op, Some(&ri), &r, tg.ty)?;
    if same_size(&ri, result.count, &r, "result")? == 0 {
        return Ok(None);
    }
    if w.is_am() {
        return am_accumulate(w, &r, p, &data, Some((ri, result.addr)), user);
    }
    let old = read_modify_write(w, &r, &data, &c, p, true)?;
    unpack(&ri, result.addr, &old);
    Ok(None)
}

fn is_no_op(op: u32) -> Result<bool> {
    Ok(matches!(
        runtime::with(|rt| rt.coll.ops.get(op))?,
        Op::Predefined(PredefinedOp::NoOp)
    ))
}

/// The arguments of `MPI_Fetch_and_op` as its short path takes them: buffer
/// addresses, datatype, target rank and displacement, operation index.
#[derive(Clone, Copy, Debug)]
pub struct Fop {
    pub origin: usize,
    pub result: usize,
    pub ty: TypeId,
    pub rank: i32,
    pub disp: i64,
    pub op: u32,
}

/// The arguments of `MPI_Compare_and_swap`: buffer addresses, datatype, target rank
/// and displacement.
#[derive(Clone, Copy, Debug)]
pub struct Cas {
    pub origin: usize,
    pub compare: usize,
    pub result: usize,
    pub ty: TypeId,
    pub rank: i32,
    pub disp: i64,
}

/// `MPI_Compare_and_swap`: one element of a predefined integer-like type; the target's
/// element becomes `origin` if it equals `compare`; `result` gets the old one.
pub fn compare_and_swap(id: WinId, c: Cas) -> Result<()> {
    with_win(id, |w| match fast::compare_and_swap(w, &c) {
        Some(done) => done,
        None => cas_on(w, &c),
    })
}

fn cas_on(w: &Win, c: &Cas) -> Result<()> {
    let Cas {
        origin,
        compare,
        result,
        ty,
        rank,
        disp,
    } = *c;
    let tg = TargetSpec {
        rank,
        disp,
        count: 1,
        ty,
    };
    let Some(r) = resolve(w, &tg)? else {
        return Ok(());
    };
    if r.info.predefined.is_none() {
        return err(
            ErrorClass::Type,
            "MPI_Compare_and_swap needs a predefined datatype",
        );
    }
    let n = r.info.size;
    // SAFETY: the program passed one element of `ty` in each buffer (MPI's contract).
    let (new, cmp) = unsafe {
        (
            std::slice::from_raw_parts(origin as *const u8, n).to_vec(),
            std::slice::from_raw_parts(compare as *const u8, n).to_vec(),
        )
    };
    if w.is_am() {
        let mut data = new;
        data.extend_from_slice(&cmp);
        let d = data_op(Kind::Cas, &r, &data);
        let to = Deliver::Unpack {
            info: r.info.clone(),
            addr: result,
        };
        am::issue(w, r.t, &d, n, to, false)?;
        return Ok(());
    }
    if let Some((t, at)) = atomic_plan(w, &r, None) {
        // SAFETY: as in `read_modify_write`.
        let o = unsafe { atomic::cas(t.size, at[0], atomic::bits(&cmp), atomic::bits(&new)) };
        // SAFETY: `result` holds one element of `ty` (MPI's contract).
        unsafe { std::ptr::copy_nonoverlapping(o.to_le_bytes().as_ptr(), result as *mut u8, n) };
        return Ok(());
    }
    let old = w.with_acc_lock(r.t, || -> Result<Vec<u8>> {
        let mut cur = vec![0u8; n];
        transfer(&r, &mut cur, false)?;
        if cur == cmp {
            let mut v = new.clone();
            transfer(&r, &mut v, true)?;
        }
        Ok(cur)
    })?;
    // SAFETY: `result` holds one element of `ty` (MPI's contract); `old` is ours.
    unsafe { std::ptr::copy_nonoverlapping(old.as_ptr(), result as *mut u8, n) };
    Ok(())
}
