//! Session entry points (MPI-4.1 section 11.3: `MPI_Session_*`,
//! `MPI_Group_from_session_pset`, `MPI_Comm_create_from_group`,
//! `MPI_Intercomm_create_from_groups`) and the two dynamic-process calls a program
//! needs without spawning (`MPI_Comm_get_parent`, `MPI_Comm_disconnect`): handle
//! translation and argument reading around `oxmpi_core::session` and `oxmpi_core::dpm`.
//!
//! Errors of a call on a session go to the session's handler; errors of the two
//! communicator constructors go to the handler passed to them (the standard's rule:
//! they have no communicator yet); `MPI_Session_init` reports to the handler it is
//! given. `MPI_Session_c2f` / `MPI_Session_f2c` are macros in `mpi.h`, as in MPICH.

use crate::convert::{self, comm};
use crate::errhandler::{self as eh, HandlerFn};
use crate::errors::c_string;
use crate::export::Target;
use crate::group::group_of;
use crate::handles::{self, MPI_Comm, MPI_Errhandler, MPI_Group, MPI_Info, MPI_Session};
use crate::info::optional_info;
use crate::mpi_fn;
use oxmpi_core::comm::Errhandler;
use oxmpi_core::runtime::ThreadLevel;
use oxmpi_core::session::{self as core_session, SessionId, MAX_PSET_NAME};
use oxmpi_core::{commops, dpm, info as core_info, Error, ErrorClass, Result};
use std::os::raw::{c_char, c_int};

/// The session a handle names.
pub(crate) fn session(h: MPI_Session) -> Result<SessionId> {
    let bad = || {
        if h == handles::MPI_SESSION_NULL {
            Error::new(ErrorClass::Session, "invalid session MPI_SESSION_NULL")
        } else {
            Error::new(
                ErrorClass::Session,
                format!("invalid session handle {h:#x}"),
            )
        }
    };
    let id = handles::session_index(h).ok_or_else(bad)?;
    core_session::check(id)?;
    Ok(id)
}

/// Error-handler target for a session argument.
pub(crate) fn target(h: MPI_Session) -> Target {
    match handles::session_index(h) {
        Some(s) if core_session::check(s).is_ok() => Target::Session(s),
        _ => Target::None,
    }
}

/// Error-handler target for a call that reports to the handler it is given.
fn handler_target(h: MPI_Errhandler) -> Target {
    match eh::from_handle(h) {
        Ok(e) => Target::Handler(e),
        Err(_) => Target::None,
    }
}

/// Reads a string argument of at most `max - 1` bytes.
///
/// # Safety
/// `p` must be null (refused) or a NUL-terminated string.
unsafe fn string_arg<'a>(p: *const c_char, what: &str, max: usize) -> Result<&'a str> {
    // SAFETY: per the contract.
    let s = unsafe { c_string(p, what)? };
    let s = s
        .to_str()
        .map_err(|_| Error::new(ErrorClass::Arg, format!("{what} is not valid UTF-8: {s:?}")))?;
    if s.len() >= max {
        return Err(Error::new(
            ErrorClass::Arg,
            format!("{what} is {} bytes long (at most {})", s.len(), max - 1),
        ));
    }
    Ok(s)
}

/// A new info object holding `entries`, written to `out`.
///
/// # Safety
/// `out` must be null (refused) or point to a writable `MPI_Info`.
unsafe fn new_info(out: *mut MPI_Info, entries: &[(String, String)]) -> Result<()> {
    let out = convert::out(out, "info")?;
    let id = core_info::create();
    for (k, v) in entries {
        if let Err(e) = core_info::set(id, k.as_bytes(), v.as_bytes()) {
            let _ = core_info::free(id);
            return Err(e);
        }
    }
    // SAFETY: checked non-null.
    unsafe { *out = handles::info_handle(id) };
    Ok(())
}

/// The thread level a session asks for: the info key `thread_level` (MPI-4.1 11.3.1),
/// `MPI_THREAD_MULTIPLE` when absent (as MPICH); the level provided is reported by
/// `MPI_Session_get_info`.
fn requested_level(info: Option<core_info::InfoId>) -> Result<ThreadLevel> {
    let Some(id) = info else {
        return Ok(ThreadLevel::Multiple);
    };
    let Some(v) = core_info::get(id, b"thread_level")? else {
        return Ok(ThreadLevel::Multiple);
    };
    Ok(match v.as_slice() {
        b"MPI_THREAD_SINGLE" => ThreadLevel::Single,
        b"MPI_THREAD_FUNNELED" => ThreadLevel::Funneled,
        b"MPI_THREAD_SERIALIZED" => ThreadLevel::Serialized,
        b"MPI_THREAD_MULTIPLE" => ThreadLevel::Multiple,
        other => {
            return Err(Error::new(
                ErrorClass::InfoValue,
                format!(
                    "invalid value {:?} of info key thread_level (MPI_THREAD_SINGLE, _FUNNELED, _SERIALIZED or _MULTIPLE)",
                    String::from_utf8_lossy(other)
                ),
            ))
        }
    })
}

/// The info key `oxmpi_async_progress` (`true` or `false`): `true` starts the
/// asynchronous progress thread as `OXMPI_ASYNC_PROGRESS=1` does, if it does not run yet.
fn async_progress_asked(info: Option<core_info::InfoId>) -> Result<bool> {
    let Some(id) = info else {
        return Ok(false);
    };
    match core_info::get(id, b"oxmpi_async_progress")?.as_deref() {
        None | Some(b"false") => Ok(false),
        Some(b"true") => Ok(true),
        Some(other) => Err(Error::new(
            ErrorClass::InfoValue,
            format!(
                "invalid value {:?} of info key oxmpi_async_progress (true or false)",
                String::from_utf8_lossy(other)
            ),
        )),
    }
}

mpi_fn! { MPI_Session_init / PMPI_Session_init (info: MPI_Info, errhandler: MPI_Errhandler, out: *mut MPI_Session) target(handler_target(errhandler)) {
    let e: Errhandler = eh::from_handle(errhandler)?;
    let out = convert::out(out, "session")?;
    let info = optional_info(info)?;
    let level = requested_level(info)?;
    let progress = async_progress_asked(info)?;
    let id = core_session::init(level, e)?;
    if progress {
        if let Err(err) = oxmpi_core::runtime::start_async_progress() {
            let _ = core_session::finalize(id);
            return Err(err);
        }
    }
    // SAFETY: checked non-null.
    unsafe { *out = handles::session_handle(id) };
    Ok(())
}}

mpi_fn! { MPI_Session_finalize / PMPI_Session_finalize (s: *mut MPI_Session) target(lazy {
    if s.is_null() {
        Target::None
    } else {
        // SAFETY: non-null, the caller's session handle (MPI contract).
        target(unsafe { *s })
    }
}) {
    let s = convert::out(s, "session")?;
    // SAFETY: checked non-null.
    let id = session(unsafe { *s })?;
    core_session::finalize(id)?;
    // SAFETY: checked non-null.
    unsafe { *s = handles::MPI_SESSION_NULL };
    Ok(())
}}

mpi_fn! { MPI_Session_get_num_psets / PMPI_Session_get_num_psets (s: MPI_Session, info: MPI_Info, n: *mut c_int) target(target(s)) {
    let id = session(s)?;
    optional_info(info)?;
    let n = convert::out(n, "npset_names")?;
    let sets = core_session::psets(id)?;
    // SAFETY: checked non-null.
    unsafe { *n = sets.len() as c_int };
    Ok(())
}}

mpi_fn! { MPI_Session_get_nth_pset / PMPI_Session_get_nth_pset (s: MPI_Session, info: MPI_Info, n: c_int, len: *mut c_int, name: *mut c_char) target(target(s)) {
    let id = session(s)?;
    optional_info(info)?;
    let len = convert::out(len, "pset_len")?;
    let sets = core_session::psets(id)?;
    let set = usize::try_from(n).ok().and_then(|i| sets.get(i)).ok_or_else(|| {
        Error::new(
            ErrorClass::Arg,
            format!("invalid n {n} (the session has {} process sets: 0 ..= {})", sets.len(), sets.len() - 1),
        )
    })?;
    // SAFETY: checked non-null.
    let cap = unsafe { *len };
    if cap < 0 {
        return Err(Error::new(ErrorClass::Arg, format!("invalid pset_len {cap} (must be >= 0)")));
    }
    if cap == 0 {
        // A query: the length of the name with its NUL.
        // SAFETY: checked non-null.
        unsafe { *len = set.len() as c_int + 1 };
        return Ok(());
    }
    let name = convert::out(name, "pset_name")?;
    let k = set.len().min(cap as usize - 1);
    // SAFETY: the caller's buffer holds `cap` bytes (MPI contract); k + 1 <= cap.
    unsafe {
        std::ptr::copy_nonoverlapping(set.as_ptr(), name as *mut u8, k);
        *name.add(k) = 0;
    }
    Ok(())
}}

mpi_fn! { MPI_Session_get_pset_info / PMPI_Session_get_pset_info (s: MPI_Session, pset: *const c_char, out: *mut MPI_Info) target(target(s)) {
    let id = session(s)?;
    // SAFETY: the caller passes a NUL-terminated string (MPI contract); NULL is refused.
    let name = unsafe { string_arg(pset, "pset_name", MAX_PSET_NAME)? };
    let entries = core_session::pset_info(id, name)?;
    // SAFETY: `out` is NULL (refused) or the caller's writable handle (MPI contract).
    unsafe { new_info(out, &entries) }
}}

mpi_fn! { MPI_Session_get_info / PMPI_Session_get_info (s: MPI_Session, out: *mut MPI_Info) target(target(s)) {
    let id = session(s)?;
    let entries = core_session::info(id)?;
    // SAFETY: `out` is NULL (refused) or the caller's writable handle (MPI contract).
    unsafe { new_info(out, &entries) }
}}

mpi_fn! { MPI_Group_from_session_pset / PMPI_Group_from_session_pset (s: MPI_Session, pset: *const c_char, out: *mut MPI_Group) target(target(s)) {
    let id = session(s)?;
    // SAFETY: the caller passes a NUL-terminated string (MPI contract); NULL is refused.
    let name = unsafe { string_arg(pset, "pset_name", MAX_PSET_NAME)? };
    let out = convert::out(out, "newgroup")?;
    let g = core_session::group_from_pset(id, name)?;
    let gid = commops::group_insert(g)?;
    // SAFETY: checked non-null.
    unsafe { *out = handles::group_handle(gid) };
    Ok(())
}}

mpi_fn! { MPI_Comm_create_from_group / PMPI_Comm_create_from_group (g: MPI_Group, tag: *const c_char, info: MPI_Info, errhandler: MPI_Errhandler, out: *mut MPI_Comm) target(handler_target(errhandler)) {
    let e = eh::from_handle(errhandler)?;
    let group = group_of(g)?;
    // SAFETY: the caller passes a NUL-terminated string (MPI contract); NULL is refused.
    let tag = unsafe { string_arg(tag, "stringtag", core_session::MAX_STRINGTAG)? };
    optional_info(info)?;
    let out = convert::out(out, "newcomm")?;
    let id = core_session::comm_create_from_group(&group, tag, e)?;
    // SAFETY: checked non-null.
    unsafe { *out = handles::comm_handle(id) };
    Ok(())
}}

mpi_fn! { MPI_Intercomm_create_from_groups / PMPI_Intercomm_create_from_groups (lg: MPI_Group, local_leader: c_int, rg: MPI_Group, remote_leader: c_int, tag: *const c_char, info: MPI_Info, errhandler: MPI_Errhandler, out: *mut MPI_Comm) target(handler_target(errhandler)) {
    let e = eh::from_handle(errhandler)?;
    let local = group_of(lg)?;
    let remote = group_of(rg)?;
    // SAFETY: the caller passes a NUL-terminated string (MPI contract); NULL is refused.
    let tag = unsafe { string_arg(tag, "stringtag", core_session::MAX_STRINGTAG)? };
    optional_info(info)?;
    let out = convert::out(out, "newintercomm")?;
    let id = core_session::intercomm_create_from_groups(&local, local_leader, &remote, remote_leader, tag, e)?;
    // SAFETY: checked non-null.
    unsafe { *out = handles::comm_handle(id) };
    Ok(())
}}

mpi_fn! { MPI_Session_create_errhandler / PMPI_Session_create_errhandler (f: Option<HandlerFn>, out: *mut MPI_Errhandler) target(Target::None) {
    // SAFETY: `out` is NULL or the C caller's writable handle (MPI contract); `create`
    // refuses NULL.
    unsafe { eh::create(f, out) }
}}

mpi_fn! { MPI_Session_set_errhandler / PMPI_Session_set_errhandler (s: MPI_Session, h: MPI_Errhandler) target(target(s)) {
    let id = session(s)?;
    core_session::set_errhandler(id, eh::from_handle(h)?)
}}

mpi_fn! { MPI_Session_get_errhandler / PMPI_Session_get_errhandler (s: MPI_Session, out: *mut MPI_Errhandler) target(target(s)) {
    let id = session(s)?;
    let out = convert::out(out, "errhandler")?;
    let e = core_session::get_errhandler(id)?;
    // SAFETY: checked non-null.
    unsafe { *out = eh::to_handle(e) };
    Ok(())
}}

mpi_fn! { MPI_Session_call_errhandler / PMPI_Session_call_errhandler (s: MPI_Session, code: c_int) target(target(s)) {
    let id = session(s)?;
    let e = Error::new(
        crate::errors::class_of(code).and_then(ErrorClass::from_code).unwrap_or(ErrorClass::Other),
        crate::errors::string_of(code).unwrap_or_else(|| format!("error code {code}")),
    );
    oxmpi_core::errhandler::dispatch(
        "MPI_Session_call_errhandler",
        oxmpi_core::errhandler::ErrObject::Session(id),
        &e,
        code,
    );
    Ok(())
}}

mpi_fn! { MPI_Comm_get_parent / PMPI_Comm_get_parent (out: *mut MPI_Comm) target(Target::None) {
    let out = convert::out(out, "parent")?;
    let p = dpm::parent()?;
    // SAFETY: checked non-null.
    unsafe { *out = p.map_or(handles::MPI_COMM_NULL, handles::comm_handle) };
    Ok(())
}}

mpi_fn! { MPI_Comm_disconnect / PMPI_Comm_disconnect (c: *mut MPI_Comm) target(lazy {
    if c.is_null() {
        Target::None
    } else {
        // SAFETY: non-null, the caller's communicator handle (MPI contract).
        convert::target(unsafe { *c })
    }
}) {
    let c = convert::out(c, "comm")?;
    // SAFETY: checked non-null.
    let id = comm(unsafe { *c })?;
    dpm::disconnect(id)?;
    // SAFETY: checked non-null.
    unsafe { *c = handles::MPI_COMM_NULL };
    Ok(())
}}
