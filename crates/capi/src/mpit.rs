//! The MPI tool information interface's C entry points (`MPI_T_*` and `PMPI_T_*`,
//! MPI 4.1 chapter 15) over the engine's model (`oxmpi_core::mpit`).
//!
//! These functions work before `MPI_Init` and after `MPI_Finalize`, return the
//! `MPI_T_ERR_*` class itself (never an error code with a message) and never call an
//! error handler, as the standard requires; a panic becomes `MPI_T_ERR_INVALID`.
//! Handles (`MPI_T_enum`, `MPI_T_cvar_handle`, `MPI_T_pvar_handle`,
//! `MPI_T_pvar_session`, `MPI_T_event_registration`) are pointer-sized opaque values,
//! as in MPICH's header; oxmpi's are tagged integers, never dereferenced.
//!
//! Strings follow the interface's convention (section 15.3.3): with a length argument
//! `n`, at most `n - 1` characters and a NUL are written, and the length becomes the
//! returned string's length plus one (`n` when truncated, as MPICH and Open MPI read
//! the rule); a NULL buffer or a length of 0 returns only the full length plus one; a
//! NULL length returns nothing. Other NULL output arguments of the `get_info` calls
//! are skipped; a NULL where the call's result must go is `MPI_T_ERR_INVALID`.
//!
//! oxmpi defines no event type: `MPI_T_event_get_num` gives 0, every event index is
//! invalid (`MPI_T_ERR_INVALID_INDEX`), no event registration or instance can exist
//! (`MPI_T_ERR_INVALID_HANDLE`), and every category has no events.

use crate::handles::{self, MPI_Comm, MPI_Count, MPI_Datatype, MPI_Info};
use oxmpi_core::mpit::cvars::{self, CvarValue};
use oxmpi_core::mpit::pvars::{self, PvarValue};
use oxmpi_core::mpit::{self, TErr, TResult, VarType};
use std::ffi::CStr;
use std::os::raw::{c_char, c_int, c_void};
use std::panic::{catch_unwind, AssertUnwindSafe};

/// An opaque MPI_T handle as C sees it.
pub type Handle = *mut c_void;

/// `MPI_T_PVAR_ALL_HANDLES`, a data symbol as in MPICH's ABI.
#[repr(transparent)]
pub struct AllHandles(*const c_void);

// SAFETY: the value is an immutable tag that is never dereferenced.
unsafe impl Sync for AllHandles {}

#[no_mangle]
pub static MPI_T_PVAR_ALL_HANDLES: AllHandles =
    AllHandles(mpit::ALL_HANDLES as usize as *const c_void);

/// `MPI_T_SOURCE_ORDERED`.
const SOURCE_ORDERED: c_int = 0;

/// Runs an entry point's body: its `MPI_T_ERR_*` class, 0 on success.
fn run(f: impl FnOnce() -> TResult<()>) -> c_int {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(())) => 0,
        Ok(Err(e)) => e.code(),
        Err(_) => TErr::Invalid.code(),
    }
}

/// Defines `PMPI_T_name` with the body and `MPI_T_name` forwarding to it.
macro_rules! mpit_fn {
    ($name:ident / $pname:ident ( $($arg:ident : $ty:ty),* $(,)? ) $body:block) => {
        /// # Safety
        /// C entry point; pointer arguments must be valid as the MPI standard requires.
        #[no_mangle]
        pub unsafe extern "C" fn $pname($($arg: $ty),*) -> c_int {
            run(move || $body)
        }

        /// # Safety
        /// C entry point; see the `PMPI_T_` variant.
        #[no_mangle]
        pub unsafe extern "C" fn $name($($arg: $ty),*) -> c_int {
            // SAFETY: same contract as the PMPI_T_ variant.
            unsafe { $pname($($arg),*) }
        }
    };
}

fn h2u(h: *const c_void) -> u64 {
    h as usize as u64
}

fn u2h(v: u64) -> Handle {
    v as usize as Handle
}

/// Stores `v` through `p` when `p` is not NULL.
///
/// # Safety
/// `p` is NULL or valid for a write of `T`.
unsafe fn put<T>(p: *mut T, v: T) {
    if !p.is_null() {
        // SAFETY: non-NULL and valid per the caller's contract.
        unsafe { p.write(v) };
    }
}

/// Stores `v` through `p`, which must not be NULL.
///
/// # Safety
/// `p` is NULL or valid for a write of `T`.
unsafe fn out<T>(p: *mut T, v: T) -> TResult<()> {
    if p.is_null() {
        return Err(TErr::Invalid);
    }
    // SAFETY: non-NULL and valid per the caller's contract.
    unsafe { p.write(v) };
    Ok(())
}

/// Returns `s` by the interface's string convention (see the module doc).
///
/// # Safety
/// `len` is NULL or valid; when `*len > 0`, `buf` is NULL or holds `*len` bytes.
unsafe fn put_string(s: &str, buf: *mut c_char, len: *mut c_int) {
    if len.is_null() {
        return;
    }
    // SAFETY: `len` is valid (contract).
    let n = unsafe { *len };
    let mut returned = s.len();
    if !buf.is_null() && n > 0 {
        returned = s.len().min(n as usize - 1);
        // SAFETY: `buf` holds n > returned bytes (contract); `s` has at least that many.
        unsafe {
            std::ptr::copy_nonoverlapping(s.as_ptr(), buf as *mut u8, returned);
            *buf.add(returned) = 0;
        }
    }
    // SAFETY: `len` is valid (contract).
    unsafe { *len = c_int::try_from(returned + 1).unwrap_or(c_int::MAX) };
}

/// A name argument: NUL-terminated text.
///
/// # Safety
/// `p` is NULL or a NUL-terminated string.
unsafe fn name_arg<'a>(p: *const c_char) -> TResult<&'a str> {
    if p.is_null() {
        return Err(TErr::InvalidName);
    }
    // SAFETY: a NUL-terminated string (contract).
    unsafe { CStr::from_ptr(p) }
        .to_str()
        .map_err(|_| TErr::InvalidName)
}

fn datatype(t: VarType) -> MPI_Datatype {
    match t {
        VarType::Int => handles::MPI_INT,
        VarType::UnsignedLongLong => handles::MPI_UNSIGNED_LONG_LONG,
        VarType::Double => handles::MPI_DOUBLE,
        VarType::Char => handles::MPI_CHAR,
    }
}

fn count_out(n: usize) -> c_int {
    c_int::try_from(n).unwrap_or(c_int::MAX)
}

/// Fills `indices[..len]` with the first entries of `list`.
///
/// # Safety
/// `indices` is NULL or holds `len` ints.
unsafe fn put_indices(list: &[usize], len: c_int, indices: *mut c_int) -> TResult<()> {
    if len < 0 {
        return Err(TErr::Invalid);
    }
    if len > 0 && indices.is_null() {
        return Err(TErr::Invalid);
    }
    for (k, &i) in list.iter().take(len as usize).enumerate() {
        // SAFETY: k < len entries (contract).
        unsafe { *indices.add(k) = i as c_int };
    }
    Ok(())
}

// ----- life cycle ----------------------------------------------------------------------

mpit_fn! { MPI_T_init_thread / PMPI_T_init_thread (required: c_int, provided: *mut c_int) {
    if !(0..=3).contains(&required) {
        return Err(TErr::Invalid);
    }
    if provided.is_null() {
        return Err(TErr::Invalid);
    }
    mpit::init_thread()?;
    // Every level: the interface serialises its calls itself.
    // SAFETY: checked non-NULL; valid per the MPI contract.
    unsafe { *provided = required };
    Ok(())
}}

mpit_fn! { MPI_T_finalize / PMPI_T_finalize () {
    mpit::finalize()
}}

// ----- enumerations --------------------------------------------------------------------

mpit_fn! { MPI_T_enum_get_info / PMPI_T_enum_get_info (enumtype: Handle, num: *mut c_int, name: *mut c_char, name_len: *mut c_int) {
    let (n, items) = mpit::enum_info(h2u(enumtype))?;
    // SAFETY: output arguments valid or NULL (contract).
    unsafe {
        put(num, count_out(items));
        put_string(n, name, name_len);
    }
    Ok(())
}}

mpit_fn! { MPI_T_enum_get_item / PMPI_T_enum_get_item (enumtype: Handle, index: c_int, value: *mut c_int, name: *mut c_char, name_len: *mut c_int) {
    let (v, n) = mpit::enum_item(h2u(enumtype), index)?;
    // SAFETY: output arguments valid or NULL (contract).
    unsafe {
        put(value, v);
        put_string(n, name, name_len);
    }
    Ok(())
}}

// ----- control variables ---------------------------------------------------------------

mpit_fn! { MPI_T_cvar_get_num / PMPI_T_cvar_get_num (num_cvar: *mut c_int) {
    let n = cvars::num()?;
    // SAFETY: valid or NULL (contract).
    unsafe { out(num_cvar, count_out(n)) }
}}

mpit_fn! { MPI_T_cvar_get_info / PMPI_T_cvar_get_info (cvar_index: c_int, name: *mut c_char, name_len: *mut c_int, verbosity: *mut c_int, datatype_out: *mut MPI_Datatype, enumtype: *mut Handle, desc: *mut c_char, desc_len: *mut c_int, bind: *mut c_int, scope: *mut c_int) {
    let d = cvars::info(cvar_index)?;
    // SAFETY: output arguments valid or NULL (contract).
    unsafe {
        put_string(d.name, name, name_len);
        put(verbosity, d.verbosity as c_int);
        put(datatype_out, datatype(d.ty));
        put(enumtype, d.enum_index.map_or(std::ptr::null_mut(), |i| u2h(mpit::enum_handle(i))));
        put_string(&d.desc, desc, desc_len);
        put(bind, mpit::Bind::NoObject as c_int);
        put(scope, d.scope as c_int);
    }
    Ok(())
}}

mpit_fn! { MPI_T_cvar_get_index / PMPI_T_cvar_get_index (name: *const c_char, cvar_index: *mut c_int) {
    mpit::check_initialized()?;
    // SAFETY: a NUL-terminated string (contract).
    let n = unsafe { name_arg(name)? };
    let i = cvars::index(n)?;
    // SAFETY: valid or NULL (contract).
    unsafe { out(cvar_index, i as c_int) }
}}

mpit_fn! { MPI_T_cvar_handle_alloc / PMPI_T_cvar_handle_alloc (cvar_index: c_int, obj_handle: *mut c_void, handle: *mut Handle, count: *mut c_int) {
    // No control variable is bound to an object: `obj_handle` is ignored.
    let _ = obj_handle;
    if handle.is_null() || count.is_null() {
        mpit::check_initialized()?;
        return Err(TErr::Invalid);
    }
    let (h, n) = cvars::handle_alloc(cvar_index)?;
    // SAFETY: checked non-NULL; valid per the contract.
    unsafe {
        *handle = u2h(h);
        *count = count_out(n);
    }
    Ok(())
}}

mpit_fn! { MPI_T_cvar_handle_free / PMPI_T_cvar_handle_free (handle: *mut Handle) {
    if handle.is_null() {
        mpit::check_initialized()?;
        return Err(TErr::InvalidHandle);
    }
    // SAFETY: checked non-NULL; valid per the contract.
    let h = unsafe { *handle };
    cvars::handle_free(h2u(h))?;
    // SAFETY: as above.
    unsafe { *handle = std::ptr::null_mut() };
    Ok(())
}}

mpit_fn! { MPI_T_cvar_read / PMPI_T_cvar_read (handle: Handle, buf: *mut c_void) {
    let (_, v) = cvars::read(h2u(handle))?;
    if buf.is_null() {
        return Err(TErr::Invalid);
    }
    // SAFETY: `buf` holds `count` elements of the variable's type (the contract of
    // MPI_T_cvar_read), which is what each arm writes.
    unsafe {
        match v {
            CvarValue::Int(i) => (buf as *mut c_int).write_unaligned(i),
            CvarValue::U64(n) => (buf as *mut u64).write_unaligned(n),
            CvarValue::Text(s) => {
                let mut len = cvars::TEXT_COUNT as c_int;
                put_string(&s, buf as *mut c_char, &mut len);
            }
        }
    }
    Ok(())
}}

mpit_fn! { MPI_T_cvar_write / PMPI_T_cvar_write (handle: Handle, buf: *const c_void) {
    let (ty, _) = cvars::read(h2u(handle))?;
    if buf.is_null() {
        return Err(TErr::Invalid);
    }
    // SAFETY: `buf` holds one element of the variable's type, or a NUL-terminated string
    // within the variable's count (the contract of MPI_T_cvar_write), read byte by byte
    // up to its NUL.
    let v = unsafe {
        match ty {
            VarType::Int => CvarValue::Int((buf as *const c_int).read_unaligned()),
            VarType::UnsignedLongLong => CvarValue::U64((buf as *const u64).read_unaligned()),
            VarType::Double => return Err(TErr::Invalid),
            VarType::Char => {
                // Read up to the NUL only: the text may be shorter than the count.
                let p = buf as *const u8;
                let end = (0..cvars::TEXT_COUNT)
                    .find(|&k| *p.add(k) == 0)
                    .ok_or(TErr::Invalid)?;
                let bytes = std::slice::from_raw_parts(p, end);
                let s = std::str::from_utf8(bytes).map_err(|_| TErr::Invalid)?;
                CvarValue::Text(s.to_string())
            }
        }
    };
    cvars::write(h2u(handle), &v)
}}

// ----- performance variables -----------------------------------------------------------

mpit_fn! { MPI_T_pvar_get_num / PMPI_T_pvar_get_num (num_pvar: *mut c_int) {
    let n = pvars::num()?;
    // SAFETY: valid or NULL (contract).
    unsafe { out(num_pvar, count_out(n)) }
}}

mpit_fn! { MPI_T_pvar_get_info / PMPI_T_pvar_get_info (pvar_index: c_int, name: *mut c_char, name_len: *mut c_int, verbosity: *mut c_int, var_class: *mut c_int, datatype_out: *mut MPI_Datatype, enumtype: *mut Handle, desc: *mut c_char, desc_len: *mut c_int, bind: *mut c_int, readonly: *mut c_int, continuous: *mut c_int, atomic: *mut c_int) {
    let d = pvars::info(pvar_index)?;
    // SAFETY: output arguments valid or NULL (contract).
    unsafe {
        put_string(d.name, name, name_len);
        put(verbosity, d.verbosity as c_int);
        put(var_class, d.class as c_int);
        put(datatype_out, datatype(d.ty));
        put(enumtype, d.enum_index.map_or(std::ptr::null_mut(), |i| u2h(mpit::enum_handle(i))));
        put_string(&d.desc, desc, desc_len);
        put(bind, d.bind as c_int);
        put(readonly, d.readonly as c_int);
        put(continuous, d.continuous as c_int);
        put(atomic, d.atomic as c_int);
    }
    Ok(())
}}

mpit_fn! { MPI_T_pvar_get_index / PMPI_T_pvar_get_index (name: *const c_char, var_class: c_int, pvar_index: *mut c_int) {
    mpit::check_initialized()?;
    // SAFETY: a NUL-terminated string (contract).
    let n = unsafe { name_arg(name)? };
    let i = pvars::index(n, var_class)?;
    // SAFETY: valid or NULL (contract).
    unsafe { out(pvar_index, i as c_int) }
}}

mpit_fn! { MPI_T_pvar_session_create / PMPI_T_pvar_session_create (session: *mut Handle) {
    if session.is_null() {
        mpit::check_initialized()?;
        return Err(TErr::Invalid);
    }
    let s = pvars::session_create()?;
    // SAFETY: checked non-NULL; valid per the contract.
    unsafe { *session = u2h(s) };
    Ok(())
}}

mpit_fn! { MPI_T_pvar_session_free / PMPI_T_pvar_session_free (session: *mut Handle) {
    if session.is_null() {
        mpit::check_initialized()?;
        return Err(TErr::InvalidSession);
    }
    // SAFETY: checked non-NULL; valid per the contract.
    let s = unsafe { *session };
    pvars::session_free(h2u(s))?;
    // SAFETY: as above.
    unsafe { *session = std::ptr::null_mut() };
    Ok(())
}}

mpit_fn! { MPI_T_pvar_handle_alloc / PMPI_T_pvar_handle_alloc (session: Handle, pvar_index: c_int, obj_handle: *mut c_void, handle: *mut Handle, count: *mut c_int) {
    pvars::check_session(h2u(session))?;
    let d = pvars::info(pvar_index)?;
    let comm = match d.bind {
        mpit::Bind::Comm if !obj_handle.is_null() => {
            // SAFETY: a variable bound to a communicator takes a pointer to an
            // MPI_Comm as its object (MPI 4.1 section 15.3.2).
            let c: MPI_Comm = unsafe { *(obj_handle as *const MPI_Comm) };
            handles::comm_index(c)
        }
        _ => None,
    };
    if handle.is_null() || count.is_null() {
        return Err(TErr::Invalid);
    }
    let (h, n) = pvars::handle_alloc(h2u(session), pvar_index, comm)?;
    // SAFETY: checked non-NULL; valid per the contract.
    unsafe {
        *handle = u2h(h);
        *count = count_out(n);
    }
    Ok(())
}}

mpit_fn! { MPI_T_pvar_handle_free / PMPI_T_pvar_handle_free (session: Handle, handle: *mut Handle) {
    if handle.is_null() {
        pvars::check_session(h2u(session))?;
        return Err(TErr::InvalidHandle);
    }
    // SAFETY: checked non-NULL; valid per the contract.
    let h = unsafe { *handle };
    pvars::handle_free(h2u(session), h2u(h))?;
    // SAFETY: as above.
    unsafe { *handle = std::ptr::null_mut() };
    Ok(())
}}

mpit_fn! { MPI_T_pvar_start / PMPI_T_pvar_start (session: Handle, handle: Handle) {
    pvars::start(h2u(session), h2u(handle))
}}

mpit_fn! { MPI_T_pvar_stop / PMPI_T_pvar_stop (session: Handle, handle: Handle) {
    pvars::stop(h2u(session), h2u(handle))
}}

/// Writes a performance variable's value into the user's buffer.
///
/// # Safety
/// `buf` holds the handle's count of elements of the variable's type.
unsafe fn put_pvar(v: PvarValue, buf: *mut c_void) -> TResult<()> {
    if buf.is_null() {
        return Err(TErr::Invalid);
    }
    let (src, n) = match &v {
        PvarValue::U64(x) => (x.as_ptr() as *const u8, std::mem::size_of_val(&x[..])),
        PvarValue::Double(x) => (x.as_ptr() as *const u8, std::mem::size_of_val(&x[..])),
        PvarValue::Int(x) => (x.as_ptr() as *const u8, std::mem::size_of_val(&x[..])),
    };
    // SAFETY: the buffer holds the handle's count of elements of the variable's type
    // (contract), which is the `n` bytes of the value; copied bytewise, so the user
    // buffer need not be aligned.
    unsafe { std::ptr::copy_nonoverlapping(src, buf as *mut u8, n) };
    Ok(())
}

mpit_fn! { MPI_T_pvar_read / PMPI_T_pvar_read (session: Handle, handle: Handle, buf: *mut c_void) {
    let v = pvars::read(h2u(session), h2u(handle))?;
    // SAFETY: `buf` holds the handle's count of elements (contract).
    unsafe { put_pvar(v, buf) }
}}

mpit_fn! { MPI_T_pvar_readreset / PMPI_T_pvar_readreset (session: Handle, handle: Handle, buf: *mut c_void) {
    if buf.is_null() {
        // Validate the handles first, so their errors win over the buffer's.
        pvars::read(h2u(session), h2u(handle))?;
        return Err(TErr::Invalid);
    }
    let v = pvars::readreset(h2u(session), h2u(handle))?;
    // SAFETY: `buf` holds the handle's count of elements (contract).
    unsafe { put_pvar(v, buf) }
}}

mpit_fn! { MPI_T_pvar_reset / PMPI_T_pvar_reset (session: Handle, handle: Handle) {
    pvars::reset(h2u(session), h2u(handle))
}}

mpit_fn! { MPI_T_pvar_write / PMPI_T_pvar_write (session: Handle, handle: Handle, buf: *const c_void) {
    // The current value gives the type and count of what `buf` holds.
    let shape = pvars::read(h2u(session), h2u(handle))?;
    if buf.is_null() {
        return Err(TErr::Invalid);
    }
    // SAFETY: `buf` holds the handle's count of elements of the variable's type
    // (contract); each arm reads that many.
    let v = unsafe {
        match shape {
            PvarValue::U64(x) => PvarValue::U64(
                (0..x.len()).map(|k| (buf as *const u64).add(k).read_unaligned()).collect(),
            ),
            PvarValue::Double(x) => PvarValue::Double(
                (0..x.len()).map(|k| (buf as *const f64).add(k).read_unaligned()).collect(),
            ),
            PvarValue::Int(x) => PvarValue::Int(
                (0..x.len()).map(|k| (buf as *const i32).add(k).read_unaligned()).collect(),
            ),
        }
    };
    pvars::write(h2u(session), h2u(handle), &v)
}}

// ----- categories ----------------------------------------------------------------------

mpit_fn! { MPI_T_category_get_num / PMPI_T_category_get_num (num_cat: *mut c_int) {
    let n = mpit::category_num()?;
    // SAFETY: valid or NULL (contract).
    unsafe { out(num_cat, count_out(n)) }
}}

mpit_fn! { MPI_T_category_get_info / PMPI_T_category_get_info (cat_index: c_int, name: *mut c_char, name_len: *mut c_int, desc: *mut c_char, desc_len: *mut c_int, num_cvars: *mut c_int, num_pvars: *mut c_int, num_categories: *mut c_int) {
    let c = mpit::category_info(cat_index)?;
    // SAFETY: output arguments valid or NULL (contract).
    unsafe {
        put_string(c.name, name, name_len);
        put_string(c.desc, desc, desc_len);
        put(num_cvars, count_out(c.cvars.len()));
        put(num_pvars, count_out(c.pvars.len()));
        put(num_categories, count_out(c.categories.len()));
    }
    Ok(())
}}

mpit_fn! { MPI_T_category_get_index / PMPI_T_category_get_index (name: *const c_char, cat_index: *mut c_int) {
    mpit::check_initialized()?;
    // SAFETY: a NUL-terminated string (contract).
    let n = unsafe { name_arg(name)? };
    let i = mpit::category_index(n)?;
    // SAFETY: valid or NULL (contract).
    unsafe { out(cat_index, i as c_int) }
}}

mpit_fn! { MPI_T_category_get_cvars / PMPI_T_category_get_cvars (cat_index: c_int, len: c_int, indices: *mut c_int) {
    let c = mpit::category_info(cat_index)?;
    // SAFETY: `indices` holds `len` ints (contract).
    unsafe { put_indices(&c.cvars, len, indices) }
}}

mpit_fn! { MPI_T_category_get_pvars / PMPI_T_category_get_pvars (cat_index: c_int, len: c_int, indices: *mut c_int) {
    let c = mpit::category_info(cat_index)?;
    // SAFETY: `indices` holds `len` ints (contract).
    unsafe { put_indices(&c.pvars, len, indices) }
}}

mpit_fn! { MPI_T_category_get_categories / PMPI_T_category_get_categories (cat_index: c_int, len: c_int, indices: *mut c_int) {
    let c = mpit::category_info(cat_index)?;
    // SAFETY: `indices` holds `len` ints (contract).
    unsafe { put_indices(&c.categories, len, indices) }
}}

mpit_fn! { MPI_T_category_get_num_events / PMPI_T_category_get_num_events (cat_index: c_int, num_events: *mut c_int) {
    mpit::category_info(cat_index)?;
    // SAFETY: valid or NULL (contract).
    unsafe { out(num_events, 0) }
}}

mpit_fn! { MPI_T_category_get_events / PMPI_T_category_get_events (cat_index: c_int, len: c_int, indices: *mut c_int) {
    mpit::category_info(cat_index)?;
    // SAFETY: `indices` holds `len` ints (contract); none is written.
    unsafe { put_indices(&[], len, indices) }
}}

mpit_fn! { MPI_T_category_changed / PMPI_T_category_changed (update_number: *mut c_int) {
    let n = mpit::category_changed()?;
    // SAFETY: valid or NULL (contract).
    unsafe { out(update_number, n) }
}}

// ----- sources -------------------------------------------------------------------------

mpit_fn! { MPI_T_source_get_num / PMPI_T_source_get_num (num_sources: *mut c_int) {
    let n = mpit::source_num()?;
    // SAFETY: valid or NULL (contract).
    unsafe { out(num_sources, count_out(n)) }
}}

mpit_fn! { MPI_T_source_get_info / PMPI_T_source_get_info (source_index: c_int, name: *mut c_char, name_len: *mut c_int, desc: *mut c_char, desc_len: *mut c_int, ordering: *mut c_int, ticks_per_second: *mut MPI_Count, max_ticks: *mut MPI_Count, info: *mut MPI_Info) {
    mpit::source(source_index)?;
    // SAFETY: output arguments valid or NULL (contract).
    unsafe {
        put_string(mpit::SOURCE_NAME, name, name_len);
        put_string(mpit::SOURCE_DESC, desc, desc_len);
        put(ordering, SOURCE_ORDERED);
        put(ticks_per_second, mpit::SOURCE_TICKS_PER_SECOND as MPI_Count);
        put(max_ticks, MPI_Count::MAX);
        // The source has no hints.
        put(info, handles::MPI_INFO_NULL);
    }
    Ok(())
}}

mpit_fn! { MPI_T_source_get_timestamp / PMPI_T_source_get_timestamp (source_index: c_int, timestamp: *mut MPI_Count) {
    let t = mpit::source_timestamp(source_index)?;
    // SAFETY: valid or NULL (contract).
    unsafe { out(timestamp, t as MPI_Count) }
}}

// ----- events (none defined) -----------------------------------------------------------

mpit_fn! { MPI_T_event_get_num / PMPI_T_event_get_num (num_events: *mut c_int) {
    let n = mpit::event_num()?;
    // SAFETY: valid or NULL (contract).
    unsafe { out(num_events, count_out(n)) }
}}

mpit_fn! { MPI_T_event_get_info / PMPI_T_event_get_info (event_index: c_int, name: *mut c_char, name_len: *mut c_int, verbosity: *mut c_int, array_of_datatypes: *mut MPI_Datatype, array_of_displacements: *mut handles::MPI_Aint, num_elements: *mut c_int, enumtype: *mut Handle, info: *mut MPI_Info, desc: *mut c_char, desc_len: *mut c_int, bind: *mut c_int) {
    let _ = (event_index, name, name_len, verbosity, array_of_datatypes, array_of_displacements, num_elements, enumtype, info, desc, desc_len, bind);
    mpit::check_initialized()?;
    Err(TErr::InvalidIndex)
}}

mpit_fn! { MPI_T_event_get_index / PMPI_T_event_get_index (name: *const c_char, event_index: *mut c_int) {
    let _ = event_index;
    mpit::check_initialized()?;
    // SAFETY: a NUL-terminated string (contract).
    unsafe { name_arg(name)? };
    Err(TErr::InvalidName)
}}

mpit_fn! { MPI_T_event_handle_alloc / PMPI_T_event_handle_alloc (event_index: c_int, obj_handle: *mut c_void, info: MPI_Info, event_registration: *mut Handle) {
    let _ = (event_index, obj_handle, info, event_registration);
    mpit::check_initialized()?;
    Err(TErr::InvalidIndex)
}}

/// The answer of every call on an event registration or instance: none can exist.
fn no_event_object() -> TResult<()> {
    mpit::check_initialized()?;
    Err(TErr::InvalidHandle)
}

mpit_fn! { MPI_T_event_handle_set_info / PMPI_T_event_handle_set_info (event_registration: Handle, info: MPI_Info) {
    let _ = (event_registration, info);
    no_event_object()
}}

mpit_fn! { MPI_T_event_handle_get_info / PMPI_T_event_handle_get_info (event_registration: Handle, info_used: *mut MPI_Info) {
    let _ = (event_registration, info_used);
    no_event_object()
}}

mpit_fn! { MPI_T_event_register_callback / PMPI_T_event_register_callback (event_registration: Handle, cb_safety: c_int, info: MPI_Info, user_data: *mut c_void, event_cb_function: Option<unsafe extern "C" fn(Handle, Handle, c_int, *mut c_void)>) {
    let _ = (event_registration, cb_safety, info, user_data, event_cb_function);
    no_event_object()
}}

mpit_fn! { MPI_T_event_callback_set_info / PMPI_T_event_callback_set_info (event_registration: Handle, cb_safety: c_int, info: MPI_Info) {
    let _ = (event_registration, cb_safety, info);
    no_event_object()
}}

mpit_fn! { MPI_T_event_callback_get_info / PMPI_T_event_callback_get_info (event_registration: Handle, cb_safety: c_int, info_used: *mut MPI_Info) {
    let _ = (event_registration, cb_safety, info_used);
    no_event_object()
}}

mpit_fn! { MPI_T_event_handle_free / PMPI_T_event_handle_free (event_registration: Handle, user_data: *mut c_void, free_cb_function: Option<unsafe extern "C" fn(Handle, c_int, *mut c_void)>) {
    let _ = (event_registration, user_data, free_cb_function);
    no_event_object()
}}

mpit_fn! { MPI_T_event_set_dropped_handler / PMPI_T_event_set_dropped_handler (event_registration: Handle, dropped_cb_function: Option<unsafe extern "C" fn(MPI_Count, Handle, c_int, c_int, *mut c_void)>) {
    let _ = (event_registration, dropped_cb_function);
    no_event_object()
}}

mpit_fn! { MPI_T_event_read / PMPI_T_event_read (event_instance: Handle, element_index: c_int, buffer: *mut c_void) {
    let _ = (event_instance, element_index, buffer);
    no_event_object()
}}

mpit_fn! { MPI_T_event_copy / PMPI_T_event_copy (event_instance: Handle, buffer: *mut c_void) {
    let _ = (event_instance, buffer);
    no_event_object()
}}

mpit_fn! { MPI_T_event_get_timestamp / PMPI_T_event_get_timestamp (event_instance: Handle, event_timestamp: *mut MPI_Count) {
    let _ = (event_instance, event_timestamp);
    no_event_object()
}}

mpit_fn! { MPI_T_event_get_source / PMPI_T_event_get_source (event_instance: Handle, source_index: *mut c_int) {
    let _ = (event_instance, source_index);
    no_event_object()
}}
