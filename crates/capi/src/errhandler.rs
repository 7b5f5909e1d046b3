//! Error handlers: the predefined ones map to the engine's `Errhandler` values; user
//! handlers (C functions) live in a table here, since only this binding can call them.

use crate::convert::{self, comm};
use crate::export::Target;
use crate::handles::{self, MPI_Comm, MPI_Errhandler};
use crate::mpi_fn;
use oxmpi_core::comm::Errhandler;
use oxmpi_core::{runtime, Error, ErrorClass, Result};
use std::os::raw::c_int;
use std::sync::Mutex;

/// `MPI_Comm_errhandler_function`: `void f(MPI_Comm *, int *, ...)`.
pub type HandlerFn = unsafe extern "C" fn(*mut MPI_Comm, *mut c_int, ...);

struct UserHandler {
    func: HandlerFn,
    /// Live references: the handle itself plus each communicator using it.
    refs: usize,
}

static USER: Mutex<Vec<Option<UserHandler>>> = Mutex::new(Vec::new());

fn user_table() -> std::sync::MutexGuard<'static, Vec<Option<UserHandler>>> {
    USER.lock().unwrap_or_else(|p| p.into_inner())
}

fn from_handle(h: MPI_Errhandler) -> Result<Errhandler> {
    let bad = || Error::new(ErrorClass::Arg, format!("invalid error handler {h:#x}"));
    if h == handles::MPI_ERRHANDLER_NULL {
        return Err(Error::new(
            ErrorClass::Arg,
            "invalid error handler MPI_ERRHANDLER_NULL",
        ));
    }
    let i = handles::errhandler_index(h).ok_or_else(bad)?;
    Ok(match i {
        handles::ERRORS_ARE_FATAL_INDEX => Errhandler::Fatal,
        handles::ERRORS_RETURN_INDEX => Errhandler::Return,
        handles::ERRORS_ABORT_INDEX => Errhandler::Abort,
        i => {
            let slot = (i - handles::FIRST_CREATED_ERRHANDLER) as usize;
            if user_table().get(slot).is_none_or(|s| s.is_none()) {
                return Err(bad());
            }
            Errhandler::User(slot as u32)
        }
    })
}

fn to_handle(e: Errhandler) -> MPI_Errhandler {
    handles::errhandler_handle(match e {
        Errhandler::Fatal => handles::ERRORS_ARE_FATAL_INDEX,
        Errhandler::Return => handles::ERRORS_RETURN_INDEX,
        Errhandler::Abort => handles::ERRORS_ABORT_INDEX,
        Errhandler::User(i) => i + handles::FIRST_CREATED_ERRHANDLER,
    })
}

fn retain(e: Errhandler) {
    if let Errhandler::User(i) = e {
        if let Some(Some(u)) = user_table().get_mut(i as usize) {
            u.refs += 1;
        }
    }
}

fn release(e: Errhandler) {
    if let Errhandler::User(i) = e {
        let mut t = user_table();
        if let Some(slot) = t.get_mut(i as usize) {
            if let Some(u) = slot {
                u.refs -= 1;
                if u.refs == 0 {
                    *slot = None;
                }
            }
        }
    }
}

/// Calls the user handler of `target` with `code`; returns the code for the caller.
pub fn call_user(target: Target, code: c_int) -> c_int {
    let id = match target {
        Target::Comm(c) => c,
        Target::None => oxmpi_core::comm::SELF,
    };
    let eh = runtime::with(|rt| Ok(rt.comms.get(id)?.errhandler));
    let Ok(Errhandler::User(i)) = eh else {
        return code;
    };
    let func = user_table()
        .get(i as usize)
        .and_then(|s| s.as_ref())
        .map(|u| u.func);
    if let Some(f) = func {
        let mut h = handles::comm_handle(id);
        let mut c = code;
        // SAFETY: a user-supplied handler with the standard's signature; called with
        // no engine lock held, so it may call MPI itself.
        unsafe { f(&mut h, &mut c) };
    }
    code
}

fn create(f: Option<HandlerFn>, out: *mut MPI_Errhandler) -> Result<()> {
    let out = convert::out(out, "errhandler")?;
    let f = f.ok_or_else(|| Error::new(ErrorClass::Arg, "null error handler function"))?;
    let mut t = user_table();
    let slot = match t.iter().position(|s| s.is_none()) {
        Some(i) => i,
        None => {
            t.push(None);
            t.len() - 1
        }
    };
    t[slot] = Some(UserHandler { func: f, refs: 1 });
    // SAFETY: checked non-null.
    unsafe { *out = to_handle(Errhandler::User(slot as u32)) };
    Ok(())
}

fn set(c: MPI_Comm, h: MPI_Errhandler) -> Result<()> {
    let id = comm(c)?;
    let e = from_handle(h)?;
    retain(e);
    let old = runtime::with(|rt| {
        let cm = rt.comms.get_mut(id)?;
        Ok(std::mem::replace(&mut cm.errhandler, e))
    });
    match old {
        Ok(o) => {
            release(o);
            Ok(())
        }
        Err(err) => {
            release(e);
            Err(err)
        }
    }
}

fn get(c: MPI_Comm, out: *mut MPI_Errhandler) -> Result<()> {
    let out = convert::out(out, "errhandler")?;
    let id = comm(c)?;
    let e = runtime::with(|rt| Ok(rt.comms.get(id)?.errhandler))?;
    retain(e);
    // SAFETY: checked non-null.
    unsafe { *out = to_handle(e) };
    Ok(())
}

mpi_fn! { MPI_Errhandler_create / PMPI_Errhandler_create (f: Option<HandlerFn>, out: *mut MPI_Errhandler) target(Target::None) {
    create(f, out)
}}
mpi_fn! { MPI_Comm_create_errhandler / PMPI_Comm_create_errhandler (f: Option<HandlerFn>, out: *mut MPI_Errhandler) target(Target::None) {
    create(f, out)
}}
mpi_fn! { MPI_Errhandler_set / PMPI_Errhandler_set (c: MPI_Comm, h: MPI_Errhandler) target(convert::target(c)) {
    set(c, h)
}}
mpi_fn! { MPI_Comm_set_errhandler / PMPI_Comm_set_errhandler (c: MPI_Comm, h: MPI_Errhandler) target(convert::target(c)) {
    set(c, h)
}}
mpi_fn! { MPI_Errhandler_get / PMPI_Errhandler_get (c: MPI_Comm, out: *mut MPI_Errhandler) target(convert::target(c)) {
    get(c, out)
}}
mpi_fn! { MPI_Comm_get_errhandler / PMPI_Comm_get_errhandler (c: MPI_Comm, out: *mut MPI_Errhandler) target(convert::target(c)) {
    get(c, out)
}}
mpi_fn! { MPI_Errhandler_free / PMPI_Errhandler_free (h: *mut MPI_Errhandler) target(Target::None) {
    let h = convert::out(h, "errhandler")?;
    // SAFETY: checked non-null.
    let e = from_handle(unsafe { *h })?;
    release(e);
    // SAFETY: checked non-null.
    unsafe { *h = handles::MPI_ERRHANDLER_NULL };
    Ok(())
}}

mpi_fn! { MPI_Comm_call_errhandler / PMPI_Comm_call_errhandler (c: MPI_Comm, code: c_int) target(convert::target(c)) {
    let id = comm(c)?;
    let e = Error::new(
        crate::errors::class_of(code).and_then(ErrorClass::from_code).unwrap_or(ErrorClass::Other),
        crate::errors::string_of(code).unwrap_or_else(|| format!("error code {code}")),
    );
    match runtime::with(|rt| Ok(rt.comms.get(id)?.errhandler))? {
        Errhandler::Return => Ok(()),
        Errhandler::User(_) => {
            call_user(Target::Comm(id), code);
            Ok(())
        }
        Errhandler::Fatal | Errhandler::Abort => crate::export::fatal_exit("MPI_Comm_call_errhandler", &e),
    }
}}
