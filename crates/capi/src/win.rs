//! One-sided communication entry points (`MPI_Win_*`, `MPI_Put`, `MPI_Get`, the
//! accumulates): handle translation and argument checks over the engine's windows
//! (`oxmpi_core::rma`). Errors of calls on a window go to the window's error handler.

use crate::convert::{self, comm};
use crate::errhandler::{self as eh, HandlerFn};
use crate::export::Target;
use crate::handles::{
    self, KeyvalRef, MPI_Aint, MPI_Comm, MPI_Datatype, MPI_Errhandler, MPI_Group, MPI_Info, MPI_Op,
    MPI_Win, PredefinedKeyval,
};
use crate::handles::{KeyvalObject, MPI_Count, MPI_Request};
use crate::mpi_fn;
use crate::plain::plain;
use oxmpi_core::attr::{AttrHooks, AttrKind, AttrObject, KeyvalId};
use oxmpi_core::commops;
use oxmpi_core::errhandler::{self, ErrObject};
use oxmpi_core::rma::{self, Flavor, LockKind, Origin, TargetSpec, WinId};
use oxmpi_core::{Error, ErrorClass, Result};
use std::ffi::{c_char, c_void, CStr};
use std::os::raw::c_int;
use std::sync::Arc;

/// `MPI_LOCK_EXCLUSIVE` and `MPI_LOCK_SHARED` (MPICH's values).
const LOCK_EXCLUSIVE: c_int = 234;
const LOCK_SHARED: c_int = 235;

/// The engine index of a window handle.
fn win(h: MPI_Win) -> Result<WinId> {
    if h == handles::MPI_WIN_NULL {
        return Err(Error::new(ErrorClass::Win, "invalid window MPI_WIN_NULL"));
    }
    handles::win_index(h)
        .ok_or_else(|| Error::new(ErrorClass::Win, format!("invalid window handle {h:#x}")))
}

/// Error-handler target of a window argument.
fn target(h: MPI_Win) -> Target {
    match handles::win_index(h) {
        Some(w) => Target::Win(w),
        None => Target::None,
    }
}

fn count(n: i64, what: &str) -> Result<usize> {
    if n < 0 {
        return Err(Error::new(
            ErrorClass::Count,
            format!("{what} {n} is negative"),
        ));
    }
    Ok(n as usize)
}

fn origin(addr: *const c_void, n: i64, ty: MPI_Datatype, what: &str) -> Result<Origin> {
    Ok(Origin {
        addr: addr as usize,
        count: count(n, what)?,
        ty: convert::datatype(ty)?,
    })
}

fn target_spec(rank: c_int, disp: MPI_Aint, n: i64, ty: MPI_Datatype) -> Result<TargetSpec> {
    Ok(TargetSpec {
        rank,
        disp,
        count: count(n, "target_count")?,
        ty: convert::datatype(ty)?,
    })
}

// ----- creation and free -------------------------------------------------------------------

/// # Safety
/// `out` must be null (refused) or writable.
unsafe fn make(
    comm_h: MPI_Comm,
    info: MPI_Info,
    c: rma::Create,
    out: *mut MPI_Win,
    baseptr: Option<*mut c_void>,
) -> Result<()> {
    let out = convert::out(out, "win")?;
    let base_out = match baseptr {
        Some(p) => Some(convert::out(p as *mut usize, "baseptr")?),
        None => None,
    };
    let mut c = c;
    c.info = crate::info::optional_info(info)?;
    let id = comm(comm_h)?;
    let (w, base) = rma::create(id, c)?;
    // SAFETY: both checked non-null; the C caller's writable handle and pointer
    // (`baseptr` is a `void **` passed as `void *`, MPI's contract).
    unsafe {
        *out = handles::win_handle(w);
        if let Some(b) = base_out {
            *b = base;
        }
    }
    Ok(())
}

fn size_arg(size: MPI_Aint) -> Result<i64> {
    if size < 0 {
        return Err(Error::new(
            ErrorClass::Size,
            format!("size {size} is negative"),
        ));
    }
    Ok(size)
}

mpi_fn! { MPI_Win_create / PMPI_Win_create (base: *mut c_void, size: MPI_Aint, disp_unit: c_int, info: MPI_Info, c: MPI_Comm, out: *mut MPI_Win) target(convert::target(c)) {
    let cr = rma::Create { flavor: Flavor::Create, size: size_arg(size)?, disp_unit: i64::from(disp_unit), base: base as usize, info: None };
    // SAFETY: `out` is NULL or the caller's writable handle; `make` checks.
    unsafe { make(c, info, cr, out, None) }
}}

mpi_fn! { MPI_Win_allocate / PMPI_Win_allocate (size: MPI_Aint, disp_unit: c_int, info: MPI_Info, c: MPI_Comm, baseptr: *mut c_void, out: *mut MPI_Win) target(convert::target(c)) {
    let cr = rma::Create { flavor: Flavor::Allocate, size: size_arg(size)?, disp_unit: i64::from(disp_unit), base: 0, info: None };
    // SAFETY: `out` and `baseptr` are NULL or the caller's writable locations; `make` checks.
    unsafe { make(c, info, cr, out, Some(baseptr)) }
}}

mpi_fn! { MPI_Win_allocate_shared / PMPI_Win_allocate_shared (size: MPI_Aint, disp_unit: c_int, info: MPI_Info, c: MPI_Comm, baseptr: *mut c_void, out: *mut MPI_Win) target(convert::target(c)) {
    let cr = rma::Create { flavor: Flavor::Shared, size: size_arg(size)?, disp_unit: i64::from(disp_unit), base: 0, info: None };
    // SAFETY: `out` and `baseptr` are NULL or the caller's writable locations; `make` checks.
    unsafe { make(c, info, cr, out, Some(baseptr)) }
}}

mpi_fn! { MPI_Win_create_dynamic / PMPI_Win_create_dynamic (info: MPI_Info, c: MPI_Comm, out: *mut MPI_Win) target(convert::target(c)) {
    let cr = rma::Create { flavor: Flavor::Dynamic, size: 0, disp_unit: 1, base: 0, info: None };
    // SAFETY: `out` is NULL or the caller's writable handle; `make` checks.
    unsafe { make(c, info, cr, out, None) }
}}

mpi_fn! { MPI_Win_attach / PMPI_Win_attach (w: MPI_Win, base: *mut c_void, size: MPI_Aint) target(target(w)) {
    let id = win(w)?;
    let size = size_arg(size)?;
    rma::attach(id, base as usize, size as usize)
}}

mpi_fn! { MPI_Win_detach / PMPI_Win_detach (w: MPI_Win, base: *const c_void) target(target(w)) {
    rma::detach(win(w)?, base as usize)
}}

mpi_fn! { MPI_Win_set_info / PMPI_Win_set_info (w: MPI_Win, info: MPI_Info) target(target(w)) {
    let id = win(w)?;
    rma::set_info(id, crate::info::info(info)?)
}}

mpi_fn! { MPI_Win_get_info / PMPI_Win_get_info (w: MPI_Win, out: *mut MPI_Info) target(target(w)) {
    let id = win(w)?;
    let out = convert::out(out, "info_used")?;
    let i = rma::get_info(id)?;
    // SAFETY: checked non-null; the caller's writable handle.
    unsafe { *out = handles::info_handle(i) };
    Ok(())
}}

mpi_fn! { MPI_Win_shared_query / PMPI_Win_shared_query (w: MPI_Win, rank: c_int, size: *mut MPI_Aint, disp_unit: *mut c_int, baseptr: *mut c_void) target(target(w)) {
    let id = win(w)?;
    let size = convert::out(size, "size")?;
    let unit = convert::out(disp_unit, "disp_unit")?;
    let base = convert::out(baseptr as *mut usize, "baseptr")?;
    let (s, u, b) = rma::shared_query(id, rank)?;
    // SAFETY: all three checked non-null; the caller's writable locations (MPI contract).
    unsafe {
        *size = s as MPI_Aint;
        *unit = u as c_int;
        *base = b;
    }
    Ok(())
}}

mpi_fn! { MPI_Win_free / PMPI_Win_free (w: *mut MPI_Win) target(lazy {
    // SAFETY: read only when the call failed, before the handle was reset.
    if w.is_null() { Target::None } else { target(unsafe { *w }) }
}) {
    let p = convert::out(w, "win")?;
    // SAFETY: checked non-null.
    let id = win(unsafe { *p })?;
    rma::free(id)?;
    // SAFETY: checked non-null.
    unsafe { *p = handles::MPI_WIN_NULL };
    Ok(())
}}

// ----- queries -----------------------------------------------------------------------------

mpi_fn! { MPI_Win_get_group / PMPI_Win_get_group (w: MPI_Win, out: *mut MPI_Group) target(target(w)) {
    let id = win(w)?;
    let out = convert::out(out, "group")?;
    let g = rma::group(id)?;
    // SAFETY: checked non-null; the caller's writable handle.
    unsafe { *out = handles::group_handle(g) };
    Ok(())
}}

mpi_fn! { MPI_Win_get_attr / PMPI_Win_get_attr (w: MPI_Win, key: c_int, value: *mut c_void, flag: *mut c_int) target(target(w)) {
    let id = win(w)?;
    let value = convert::out(value as *mut usize, "attribute_val")?;
    let flag = convert::out(flag, "flag")?;
    let a = rma::attr_cells(id)?;
    let v: usize = match handles::keyval_from_handle(key) {
        Some(KeyvalRef::Predefined(PredefinedKeyval::WinBase)) => a.base,
        Some(KeyvalRef::Predefined(PredefinedKeyval::WinSize)) => a.size,
        Some(KeyvalRef::Predefined(PredefinedKeyval::WinDispUnit)) => a.disp_unit,
        Some(KeyvalRef::Predefined(PredefinedKeyval::WinCreateFlavor)) => a.flavor,
        Some(KeyvalRef::Predefined(PredefinedKeyval::WinModel)) => a.model,
        _ => match rma::attr_get(id, win_key(key)?)? {
            Some(v) => v,
            None => {
                // SAFETY: checked non-null.
                unsafe { *flag = 0 };
                return Ok(());
            }
        },
    };
    // SAFETY: both checked non-null; the caller's writable `void *` and int.
    unsafe {
        *value = v;
        *flag = 1;
    }
    Ok(())
}}

/// Longest window name kept (`MPI_MAX_OBJECT_NAME` - 1).
const MAX_NAME: usize = 127;

mpi_fn! { MPI_Win_set_name / PMPI_Win_set_name (w: MPI_Win, name: *const c_char) target(target(w)) {
    let id = win(w)?;
    if name.is_null() {
        return Err(Error::new(ErrorClass::Arg, "null pointer for win_name"));
    }
    // SAFETY: a NUL-terminated string (MPI contract).
    let s = unsafe { CStr::from_ptr(name) }.to_string_lossy();
    let mut end = s.len().min(MAX_NAME);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    rma::set_name(id, &s[..end])
}}

mpi_fn! { MPI_Win_get_name / PMPI_Win_get_name (w: MPI_Win, name: *mut c_char, len: *mut c_int) target(target(w)) {
    // The null handle is a predefined object with a predefined name (MPI 4.1 section 7.8).
    if w == handles::MPI_WIN_NULL {
        return convert::write_name("MPI_WIN_NULL", MAX_NAME, name, len, "win_name");
    }
    let id = win(w)?;
    let s = rma::get_name(id)?;
    convert::write_name(&s, MAX_NAME, name, len, "win_name")
}}

// ----- error handlers --------------------------------------------------------------------

mpi_fn! { MPI_Win_create_errhandler / PMPI_Win_create_errhandler (f: Option<HandlerFn>, out: *mut MPI_Errhandler) target(Target::None) {
    // SAFETY: `out` is NULL or the C caller's writable handle; `create` refuses NULL. A
    // window handler has the communicator handler's shape (a handle pointer, a code).
    unsafe { eh::create(f, out) }
}}

mpi_fn! { MPI_Win_set_errhandler / PMPI_Win_set_errhandler (w: MPI_Win, h: MPI_Errhandler) target(target(w)) {
    let id = win(w)?;
    rma::set_errhandler(id, eh::from_handle(h)?)
}}

mpi_fn! { MPI_Win_get_errhandler / PMPI_Win_get_errhandler (w: MPI_Win, out: *mut MPI_Errhandler) target(target(w)) {
    let id = win(w)?;
    let out = convert::out(out, "errhandler")?;
    let h = rma::get_errhandler(id)?;
    // SAFETY: checked non-null.
    unsafe { *out = eh::to_handle(h) };
    Ok(())
}}

mpi_fn! { MPI_Win_call_errhandler / PMPI_Win_call_errhandler (w: MPI_Win, code: c_int) target(target(w)) {
    let id = win(w)?;
    rma::win(id)?;
    let e = Error::new(
        crate::errors::class_of(code).and_then(ErrorClass::from_code).unwrap_or(ErrorClass::Other),
        crate::errors::string_of(code).unwrap_or_else(|| format!("error code {code}")),
    );
    errhandler::dispatch("MPI_Win_call_errhandler", ErrObject::Win(id), &e, code);
    Ok(())
}}

// ----- operations --------------------------------------------------------------------------

/// The bytes a put or get moves when both sides are [`Plain`] types of valid counts
/// and equal total size: then the short path may try it.
#[inline]
fn plain_bytes(
    ocount: i64,
    otype: MPI_Datatype,
    tcount: i64,
    ttype: MPI_Datatype,
) -> Option<usize> {
    let (o, t) = (plain(otype)?, plain(ttype)?);
    let n = usize::try_from(ocount).ok()?.checked_mul(o.size)?;
    (usize::try_from(tcount).ok()?.checked_mul(t.size)? == n).then_some(n)
}

/// The engine index of window handle `h` for the short path (an index no window has
/// when `h` is not a window handle: the short path then declines).
#[inline]
fn win_fast(h: MPI_Win) -> WinId {
    handles::win_index(h).unwrap_or(WinId::MAX)
}

/// The arguments a put or get and their request forms share.
#[derive(Clone, Copy)]
struct Xfer {
    oaddr: *const c_void,
    ocount: i64,
    otype: MPI_Datatype,
    rank: c_int,
    disp: MPI_Aint,
    tcount: i64,
    ttype: MPI_Datatype,
    w: MPI_Win,
}

impl Xfer {
    /// The short path of a put (`write`) or get, or of their request forms (`passive`):
    /// true when `rma::transfer_fast` carried it out.
    #[inline(always)]
    fn short(&self, write: bool, passive: bool) -> bool {
        let Some(n) = plain_bytes(self.ocount, self.otype, self.tcount, self.ttype) else {
            return false;
        };
        let x = rma::Transfer {
            addr: self.oaddr as usize,
            n,
            rank: self.rank,
            disp: self.disp,
            write,
            passive,
        };
        rma::transfer_fast(win_fast(self.w), &x)
    }

    fn origin(&self) -> Result<Origin> {
        origin(self.oaddr, self.ocount, self.otype, "origin_count")
    }

    fn target(&self) -> Result<TargetSpec> {
        target_spec(self.rank, self.disp, self.tcount, self.ttype)
    }
}

/// `MPI_Put` (`write`) and `MPI_Get` and their `_c` forms: the short path of
/// `rma::transfer_fast` first, the general one (with every check) when it declines.
#[inline(always)]
fn put_get(a: Xfer, write: bool) -> Result<()> {
    if a.short(write, false) {
        return Ok(());
    }
    let id = win(a.w)?;
    let (o, tg) = (a.origin()?, a.target()?);
    if write {
        rma::put(id, o, tg)
    } else {
        rma::get(id, o, tg)
    }
}

mpi_fn! { MPI_Put / PMPI_Put (oaddr: *const c_void, ocount: c_int, otype: MPI_Datatype, rank: c_int, disp: MPI_Aint, tcount: c_int, ttype: MPI_Datatype, w: MPI_Win) target(target(w)) {
    put_get(Xfer { oaddr, ocount: i64::from(ocount), otype, rank, disp, tcount: i64::from(tcount), ttype, w }, true)
}}

mpi_fn! { MPI_Get / PMPI_Get (oaddr: *mut c_void, ocount: c_int, otype: MPI_Datatype, rank: c_int, disp: MPI_Aint, tcount: c_int, ttype: MPI_Datatype, w: MPI_Win) target(target(w)) {
    put_get(Xfer { oaddr, ocount: i64::from(ocount), otype, rank, disp, tcount: i64::from(tcount), ttype, w }, false)
}}

mpi_fn! { MPI_Accumulate / PMPI_Accumulate (oaddr: *const c_void, ocount: c_int, otype: MPI_Datatype, rank: c_int, disp: MPI_Aint, tcount: c_int, ttype: MPI_Datatype, op: MPI_Op, w: MPI_Win) target(target(w)) {
    let id = win(w)?;
    let op = crate::op::op(op)?;
    rma::accumulate(id, origin(oaddr, i64::from(ocount), otype, "origin_count")?, target_spec(rank, disp, i64::from(tcount), ttype)?, op)
}}

/// The body of `MPI_Get_accumulate` (and `MPI_Rget_accumulate`).
fn get_acc(
    oaddr: *const c_void,
    ocount: i64,
    otype: MPI_Datatype,
    raddr: *mut c_void,
    rcount: i64,
    rtype: MPI_Datatype,
    rank: c_int,
    disp: MPI_Aint,
    tcount: i64,
    ttype: MPI_Datatype,
    op: MPI_Op,
    w: MPI_Win,
    user: bool,
) -> Result<Option<oxmpi_core::device::ReqId>> {
    let id = win(w)?;
    let op = crate::op::op(op)?;
    let no_op = op == NO_OP_INDEX;
    // With MPI_NO_OP the origin arguments are ignored (MPI-4.1 12.3.4).
    let o = if no_op {
        Origin {
            addr: 0,
            count: 0,
            ty: convert::datatype(rtype)?,
        }
    } else {
        origin(oaddr, ocount, otype, "origin_count")?
    };
    let r = origin(raddr, rcount, rtype, "result_count")?;
    rma::get_accumulate_req(id, o, r, target_spec(rank, disp, tcount, ttype)?, op, user)
}

mpi_fn! { MPI_Get_accumulate / PMPI_Get_accumulate (oaddr: *const c_void, ocount: c_int, otype: MPI_Datatype, raddr: *mut c_void, rcount: c_int, rtype: MPI_Datatype, rank: c_int, disp: MPI_Aint, tcount: c_int, ttype: MPI_Datatype, op: MPI_Op, w: MPI_Win) target(target(w)) {
    get_acc(oaddr, i64::from(ocount), otype, raddr, i64::from(rcount), rtype, rank, disp, i64::from(tcount), ttype, op, w, false).map(drop)
}}

/// Table index of `MPI_NO_OP` (see `handles::FIRST_CREATED_OP`'s order).
const NO_OP_INDEX: u32 = 13;

mpi_fn! { MPI_Fetch_and_op / PMPI_Fetch_and_op (oaddr: *const c_void, raddr: *mut c_void, ty: MPI_Datatype, rank: c_int, disp: MPI_Aint, op: MPI_Op, w: MPI_Win) target(target(w)) {
    if let (Some(t), Some(o)) = (plain(ty), handles::op_index(op)) {
        let f = rma::Fop { origin: oaddr as usize, result: raddr as usize, ty: t.ty, rank, disp, op: o };
        if rma::fetch_and_op_fast(win_fast(w), &f) {
            return Ok(());
        }
    }
    let id = win(w)?;
    let op = crate::op::op(op)?;
    let t = convert::datatype(ty)?;
    let o = Origin { addr: oaddr as usize, count: (op != NO_OP_INDEX) as usize, ty: t };
    let r = Origin { addr: raddr as usize, count: 1, ty: t };
    rma::fetch_and_op(id, o, r, TargetSpec { rank, disp, count: 1, ty: t }, op)
}}

mpi_fn! { MPI_Compare_and_swap / PMPI_Compare_and_swap (oaddr: *const c_void, caddr: *const c_void, raddr: *mut c_void, ty: MPI_Datatype, rank: c_int, disp: MPI_Aint, w: MPI_Win) target(target(w)) {
    if let Some(t) = plain(ty) {
        let cas = rma::Cas { origin: oaddr as usize, compare: caddr as usize, result: raddr as usize, ty: t.ty, rank, disp };
        let any_null = oaddr.is_null() || caddr.is_null() || raddr.is_null();
        if !any_null && rma::compare_and_swap_fast(win_fast(w), &cas) {
            return Ok(());
        }
    }
    let id = win(w)?;
    let t = convert::datatype(ty)?;
    for (p, what) in [(oaddr, "origin_addr"), (caddr, "compare_addr"), (raddr as *const c_void, "result_addr")] {
        if p.is_null() && rank != oxmpi_core::PROC_NULL {
            return Err(Error::new(ErrorClass::Buffer, format!("null pointer for {what}")));
        }
    }
    rma::compare_and_swap(id, rma::Cas { origin: oaddr as usize, compare: caddr as usize, result: raddr as usize, ty: t, rank, disp })
}}

// ----- synchronisation ---------------------------------------------------------------------

mpi_fn! { MPI_Win_fence / PMPI_Win_fence (assert: c_int, w: MPI_Win) target(target(w)) {
    rma::fence(win(w)?, assert)
}}

mpi_fn! { MPI_Win_lock / PMPI_Win_lock (lock_type: c_int, rank: c_int, assert: c_int, w: MPI_Win) target(target(w)) {
    let id = win(w)?;
    let kind = match lock_type {
        LOCK_EXCLUSIVE => LockKind::Exclusive,
        LOCK_SHARED => LockKind::Shared,
        t => {
            return Err(Error::new(
                ErrorClass::Locktype,
                format!("lock_type {t} is neither MPI_LOCK_EXCLUSIVE nor MPI_LOCK_SHARED"),
            ))
        }
    };
    rma::lock(id, kind, rank, assert)
}}

mpi_fn! { MPI_Win_unlock / PMPI_Win_unlock (rank: c_int, w: MPI_Win) target(target(w)) {
    rma::unlock(win(w)?, rank)
}}

mpi_fn! { MPI_Win_lock_all / PMPI_Win_lock_all (assert: c_int, w: MPI_Win) target(target(w)) {
    rma::lock_all(win(w)?, assert)
}}

mpi_fn! { MPI_Win_unlock_all / PMPI_Win_unlock_all (w: MPI_Win) target(target(w)) {
    rma::unlock_all(win(w)?)
}}

mpi_fn! { MPI_Win_flush / PMPI_Win_flush (rank: c_int, w: MPI_Win) target(target(w)) {
    if rma::flush_fast(win_fast(w), rank) {
        return Ok(());
    }
    rma::flush(win(w)?, Some(rank))
}}

mpi_fn! { MPI_Win_flush_local / PMPI_Win_flush_local (rank: c_int, w: MPI_Win) target(target(w)) {
    rma::flush_local(win(w)?, Some(rank))
}}

mpi_fn! { MPI_Win_flush_all / PMPI_Win_flush_all (w: MPI_Win) target(target(w)) {
    rma::flush(win(w)?, None)
}}

mpi_fn! { MPI_Win_flush_local_all / PMPI_Win_flush_local_all (w: MPI_Win) target(target(w)) {
    rma::flush_local(win(w)?, None)
}}

mpi_fn! { MPI_Win_sync / PMPI_Win_sync (w: MPI_Win) target(target(w)) {
    rma::sync(win(w)?)
}}

// ----- general active target -------------------------------------------------------------

mpi_fn! { MPI_Win_post / PMPI_Win_post (g: MPI_Group, assert: c_int, w: MPI_Win) target(target(w)) {
    let id = win(w)?;
    rma::post(id, &*crate::group::group_of(g)?, assert)
}}

mpi_fn! { MPI_Win_start / PMPI_Win_start (g: MPI_Group, assert: c_int, w: MPI_Win) target(target(w)) {
    let id = win(w)?;
    rma::start(id, &*crate::group::group_of(g)?, assert)
}}

mpi_fn! { MPI_Win_complete / PMPI_Win_complete (w: MPI_Win) target(target(w)) {
    rma::complete(win(w)?)
}}

mpi_fn! { MPI_Win_wait / PMPI_Win_wait (w: MPI_Win) target(target(w)) {
    rma::wait(win(w)?, true).map(|_| ())
}}

mpi_fn! { MPI_Win_test / PMPI_Win_test (w: MPI_Win, flag: *mut c_int) target(target(w)) {
    let id = win(w)?;
    let flag = convert::out(flag, "flag")?;
    let done = rma::wait(id, false)?;
    // SAFETY: checked non-null; the caller's writable int.
    unsafe { *flag = done as c_int };
    Ok(())
}}

// ----- request-based operations ------------------------------------------------------------

/// Hands out the request of an operation that completed when issued: the shared
/// request of completed sends, which every completion call finishes at once.
///
/// # Safety
/// `out` was checked non-null and is the caller's writable request.
unsafe fn done_request(out: *mut MPI_Request) {
    // SAFETY: per the contract.
    unsafe { *out = convert::request_handle(oxmpi_core::device::DONE_SEND) };
}

/// Hands out the request of an operation: its own (message transport), or the shared
/// completed one.
///
/// # Safety
/// As for [`done_request`].
unsafe fn give_request(out: *mut MPI_Request, r: Option<oxmpi_core::device::ReqId>) {
    match r {
        // SAFETY: per the contract.
        Some(id) => unsafe { *out = convert::request_handle(id) },
        // SAFETY: per the contract.
        None => unsafe { done_request(out) },
    }
}

/// `MPI_Rput` (`write`) and `MPI_Rget` and their `_c` forms: in a passive-target epoch
/// on shared memory the short path carries the operation out and hands out the
/// completed request; otherwise the general path, with every check.
#[inline(always)]
fn rput_get(a: Xfer, req: *mut MPI_Request, write: bool) -> Result<()> {
    if !req.is_null() && a.short(write, true) {
        // SAFETY: checked non-null; the caller's writable request (MPI contract).
        unsafe { done_request(req) };
        return Ok(());
    }
    let id = win(a.w)?;
    let req = convert::out(req, "request")?;
    rma::check_passive(id, a.rank)?;
    let (o, tg) = (a.origin()?, a.target()?);
    let r = if write {
        rma::put_req(id, o, tg, true)?
    } else {
        rma::get_req(id, o, tg, true)?
    };
    // SAFETY: checked non-null.
    unsafe { give_request(req, r) };
    Ok(())
}

mpi_fn! { MPI_Rput / PMPI_Rput (oaddr: *const c_void, ocount: c_int, otype: MPI_Datatype, rank: c_int, disp: MPI_Aint, tcount: c_int, ttype: MPI_Datatype, w: MPI_Win, req: *mut MPI_Request) target(target(w)) {
    rput_get(Xfer { oaddr, ocount: i64::from(ocount), otype, rank, disp, tcount: i64::from(tcount), ttype, w }, req, true)
}}

mpi_fn! { MPI_Rget / PMPI_Rget (oaddr: *mut c_void, ocount: c_int, otype: MPI_Datatype, rank: c_int, disp: MPI_Aint, tcount: c_int, ttype: MPI_Datatype, w: MPI_Win, req: *mut MPI_Request) target(target(w)) {
    rput_get(Xfer { oaddr, ocount: i64::from(ocount), otype, rank, disp, tcount: i64::from(tcount), ttype, w }, req, false)
}}

mpi_fn! { MPI_Raccumulate / PMPI_Raccumulate (oaddr: *const c_void, ocount: c_int, otype: MPI_Datatype, rank: c_int, disp: MPI_Aint, tcount: c_int, ttype: MPI_Datatype, op: MPI_Op, w: MPI_Win, req: *mut MPI_Request) target(target(w)) {
    let id = win(w)?;
    let req = convert::out(req, "request")?;
    let op = crate::op::op(op)?;
    rma::check_passive(id, rank)?;
    let r = rma::accumulate_req(id, origin(oaddr, i64::from(ocount), otype, "origin_count")?, target_spec(rank, disp, i64::from(tcount), ttype)?, op, true)?;
    // SAFETY: checked non-null.
    unsafe { give_request(req, r) };
    Ok(())
}}

mpi_fn! { MPI_Rget_accumulate / PMPI_Rget_accumulate (oaddr: *const c_void, ocount: c_int, otype: MPI_Datatype, raddr: *mut c_void, rcount: c_int, rtype: MPI_Datatype, rank: c_int, disp: MPI_Aint, tcount: c_int, ttype: MPI_Datatype, op: MPI_Op, w: MPI_Win, req: *mut MPI_Request) target(target(w)) {
    let id = win(w)?;
    let req = convert::out(req, "request")?;
    rma::check_passive(id, rank)?;
    let r = get_acc(oaddr, i64::from(ocount), otype, raddr, i64::from(rcount), rtype, rank, disp, i64::from(tcount), ttype, op, w, true)?;
    // SAFETY: checked non-null.
    unsafe { give_request(req, r) };
    Ok(())
}}

// ----- large-count forms -------------------------------------------------------------------

mpi_fn! { MPI_Win_create_c / PMPI_Win_create_c (base: *mut c_void, size: MPI_Aint, disp_unit: MPI_Aint, info: MPI_Info, c: MPI_Comm, out: *mut MPI_Win) target(convert::target(c)) {
    let cr = rma::Create { flavor: Flavor::Create, size: size_arg(size)?, disp_unit, base: base as usize, info: None };
    // SAFETY: `out` is NULL or the caller's writable handle; `make` checks.
    unsafe { make(c, info, cr, out, None) }
}}

mpi_fn! { MPI_Win_allocate_c / PMPI_Win_allocate_c (size: MPI_Aint, disp_unit: MPI_Aint, info: MPI_Info, c: MPI_Comm, baseptr: *mut c_void, out: *mut MPI_Win) target(convert::target(c)) {
    let cr = rma::Create { flavor: Flavor::Allocate, size: size_arg(size)?, disp_unit, base: 0, info: None };
    // SAFETY: `out` and `baseptr` are NULL or the caller's writable locations; `make` checks.
    unsafe { make(c, info, cr, out, Some(baseptr)) }
}}

mpi_fn! { MPI_Win_allocate_shared_c / PMPI_Win_allocate_shared_c (size: MPI_Aint, disp_unit: MPI_Aint, info: MPI_Info, c: MPI_Comm, baseptr: *mut c_void, out: *mut MPI_Win) target(convert::target(c)) {
    let cr = rma::Create { flavor: Flavor::Shared, size: size_arg(size)?, disp_unit, base: 0, info: None };
    // SAFETY: `out` and `baseptr` are NULL or the caller's writable locations; `make` checks.
    unsafe { make(c, info, cr, out, Some(baseptr)) }
}}

mpi_fn! { MPI_Win_shared_query_c / PMPI_Win_shared_query_c (w: MPI_Win, rank: c_int, size: *mut MPI_Aint, disp_unit: *mut MPI_Aint, baseptr: *mut c_void) target(target(w)) {
    let id = win(w)?;
    let size = convert::out(size, "size")?;
    let unit = convert::out(disp_unit, "disp_unit")?;
    let base = convert::out(baseptr as *mut usize, "baseptr")?;
    let (s, u, b) = rma::shared_query(id, rank)?;
    // SAFETY: all three checked non-null; the caller's writable locations (MPI contract).
    unsafe {
        *size = s as MPI_Aint;
        *unit = u as MPI_Aint;
        *base = b;
    }
    Ok(())
}}

mpi_fn! { MPI_Put_c / PMPI_Put_c (oaddr: *const c_void, ocount: MPI_Count, otype: MPI_Datatype, rank: c_int, disp: MPI_Aint, tcount: MPI_Count, ttype: MPI_Datatype, w: MPI_Win) target(target(w)) {
    put_get(Xfer { oaddr, ocount, otype, rank, disp, tcount, ttype, w }, true)
}}

mpi_fn! { MPI_Get_c / PMPI_Get_c (oaddr: *mut c_void, ocount: MPI_Count, otype: MPI_Datatype, rank: c_int, disp: MPI_Aint, tcount: MPI_Count, ttype: MPI_Datatype, w: MPI_Win) target(target(w)) {
    put_get(Xfer { oaddr, ocount, otype, rank, disp, tcount, ttype, w }, false)
}}

mpi_fn! { MPI_Accumulate_c / PMPI_Accumulate_c (oaddr: *const c_void, ocount: MPI_Count, otype: MPI_Datatype, rank: c_int, disp: MPI_Aint, tcount: MPI_Count, ttype: MPI_Datatype, op: MPI_Op, w: MPI_Win) target(target(w)) {
    let id = win(w)?;
    let op = crate::op::op(op)?;
    rma::accumulate(id, origin(oaddr, ocount, otype, "origin_count")?, target_spec(rank, disp, tcount, ttype)?, op)
}}

mpi_fn! { MPI_Get_accumulate_c / PMPI_Get_accumulate_c (oaddr: *const c_void, ocount: MPI_Count, otype: MPI_Datatype, raddr: *mut c_void, rcount: MPI_Count, rtype: MPI_Datatype, rank: c_int, disp: MPI_Aint, tcount: MPI_Count, ttype: MPI_Datatype, op: MPI_Op, w: MPI_Win) target(target(w)) {
    get_acc(oaddr, ocount, otype, raddr, rcount, rtype, rank, disp, tcount, ttype, op, w, false).map(drop)
}}

mpi_fn! { MPI_Rput_c / PMPI_Rput_c (oaddr: *const c_void, ocount: MPI_Count, otype: MPI_Datatype, rank: c_int, disp: MPI_Aint, tcount: MPI_Count, ttype: MPI_Datatype, w: MPI_Win, req: *mut MPI_Request) target(target(w)) {
    rput_get(Xfer { oaddr, ocount, otype, rank, disp, tcount, ttype, w }, req, true)
}}

mpi_fn! { MPI_Rget_c / PMPI_Rget_c (oaddr: *mut c_void, ocount: MPI_Count, otype: MPI_Datatype, rank: c_int, disp: MPI_Aint, tcount: MPI_Count, ttype: MPI_Datatype, w: MPI_Win, req: *mut MPI_Request) target(target(w)) {
    rput_get(Xfer { oaddr, ocount, otype, rank, disp, tcount, ttype, w }, req, false)
}}

mpi_fn! { MPI_Raccumulate_c / PMPI_Raccumulate_c (oaddr: *const c_void, ocount: MPI_Count, otype: MPI_Datatype, rank: c_int, disp: MPI_Aint, tcount: MPI_Count, ttype: MPI_Datatype, op: MPI_Op, w: MPI_Win, req: *mut MPI_Request) target(target(w)) {
    let id = win(w)?;
    let req = convert::out(req, "request")?;
    let op = crate::op::op(op)?;
    rma::check_passive(id, rank)?;
    let r = rma::accumulate_req(id, origin(oaddr, ocount, otype, "origin_count")?, target_spec(rank, disp, tcount, ttype)?, op, true)?;
    // SAFETY: checked non-null.
    unsafe { give_request(req, r) };
    Ok(())
}}

mpi_fn! { MPI_Rget_accumulate_c / PMPI_Rget_accumulate_c (oaddr: *const c_void, ocount: MPI_Count, otype: MPI_Datatype, raddr: *mut c_void, rcount: MPI_Count, rtype: MPI_Datatype, rank: c_int, disp: MPI_Aint, tcount: MPI_Count, ttype: MPI_Datatype, op: MPI_Op, w: MPI_Win, req: *mut MPI_Request) target(target(w)) {
    let id = win(w)?;
    let req = convert::out(req, "request")?;
    rma::check_passive(id, rank)?;
    let r = get_acc(oaddr, ocount, otype, raddr, rcount, rtype, rank, disp, tcount, ttype, op, w, true)?;
    // SAFETY: checked non-null.
    unsafe { give_request(req, r) };
    Ok(())
}}

// ----- user attributes -----------------------------------------------------------------------

/// `MPI_Win_copy_attr_function` (never called: windows are not duplicated).
pub type WinCopyFn = unsafe extern "C" fn(
    MPI_Win,
    c_int,
    *mut c_void,
    *mut c_void,
    *mut c_void,
    *mut c_int,
) -> c_int;
/// `MPI_Win_delete_attr_function`.
pub type WinDeleteFn = unsafe extern "C" fn(MPI_Win, c_int, *mut c_void, *mut c_void) -> c_int;

struct WinHooks {
    delete: Option<WinDeleteFn>,
    extra_state: usize,
}

impl AttrHooks for WinHooks {
    fn copy(&self, _: AttrObject, _: KeyvalId, _: usize) -> Result<Option<usize>> {
        // Windows are never duplicated, so nothing is ever copied.
        Ok(None)
    }

    fn delete(&self, obj: AttrObject, key: KeyvalId, value: usize) -> Result<()> {
        let Some(f) = self.delete else {
            return Ok(());
        };
        let w = match obj {
            AttrObject::Win(id) => handles::win_handle(id),
            _ => handles::MPI_WIN_NULL,
        };
        // SAFETY: a user callback with the standard's signature; no engine lock held.
        let rc = unsafe {
            f(
                w,
                handles::keyval_handle(KeyvalObject::Win, key),
                value as *mut c_void,
                self.extra_state as *mut c_void,
            )
        };
        if rc != 0 {
            let class = crate::errors::class_of(rc)
                .and_then(ErrorClass::from_code)
                .filter(|c| *c != ErrorClass::Success)
                .unwrap_or(ErrorClass::Other);
            return Err(Error::new(
                class,
                format!(
                    "the attribute delete function of window keyval {:#x} returned error code {rc}",
                    handles::keyval_handle(KeyvalObject::Win, key)
                ),
            ));
        }
        Ok(())
    }
}

/// A window attribute key created by `MPI_Win_create_keyval`.
fn win_key(h: c_int) -> Result<KeyvalId> {
    if h == handles::MPI_KEYVAL_INVALID {
        return Err(Error::new(
            ErrorClass::Keyval,
            "invalid attribute key MPI_KEYVAL_INVALID",
        ));
    }
    match handles::keyval_from_handle(h) {
        Some(KeyvalRef::Created {
            object: KeyvalObject::Win,
            index,
        }) => Ok(index),
        Some(_) => Err(Error::new(
            ErrorClass::Keyval,
            format!("attribute key {h:#x} was not created for windows"),
        )),
        None => Err(Error::new(
            ErrorClass::Keyval,
            format!("invalid attribute key {h:#x}"),
        )),
    }
}

mpi_fn! { MPI_Win_create_keyval / PMPI_Win_create_keyval (copy: Option<WinCopyFn>, delete: Option<WinDeleteFn>, keyval: *mut c_int, extra: *mut c_void) target(Target::None) {
    let keyval = convert::out(keyval, "win_keyval")?;
    // The copy function is kept by the standard's signature only: windows are never
    // duplicated.
    let _ = copy;
    let hooks = Arc::new(WinHooks { delete, extra_state: extra as usize });
    let id = commops::create_keyval(AttrKind::Win, hooks)?;
    if id > handles::MAX_KEYVAL_INDEX {
        let _ = commops::free_keyval(id, AttrKind::Win);
        return Err(Error::new(ErrorClass::Other, "too many attribute keys"));
    }
    // SAFETY: checked non-null.
    unsafe { *keyval = handles::keyval_handle(KeyvalObject::Win, id) };
    Ok(())
}}

mpi_fn! { MPI_Win_free_keyval / PMPI_Win_free_keyval (keyval: *mut c_int) target(Target::None) {
    let keyval = convert::out(keyval, "win_keyval")?;
    // SAFETY: checked non-null.
    let id = win_key(unsafe { *keyval })?;
    commops::free_keyval(id, AttrKind::Win)?;
    // SAFETY: checked non-null.
    unsafe { *keyval = handles::MPI_KEYVAL_INVALID };
    Ok(())
}}

mpi_fn! { MPI_Win_set_attr / PMPI_Win_set_attr (w: MPI_Win, k: c_int, val: *mut c_void) target(target(w)) {
    let id = win(w)?;
    rma::attr_set(id, win_key(k)?, val as usize)
}}

mpi_fn! { MPI_Win_delete_attr / PMPI_Win_delete_attr (w: MPI_Win, k: c_int) target(target(w)) {
    let id = win(w)?;
    rma::attr_delete(id, win_key(k)?)
}}
