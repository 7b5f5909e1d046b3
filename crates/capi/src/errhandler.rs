//! Error-handler entry points. The engine owns the handlers (`oxmpi_core::errhandler`:
//! selection, reference counts, the fatal path); this module translates handles and
//! adapts the program's C functions to the engine's `UserHandler`.

use crate::convert::{self, comm};
use crate::export::Target;
use crate::handles::{self, MPI_Comm, MPI_Errhandler};
use crate::mpi_fn;
use oxmpi_core::comm::{CommId, Errhandler};
use oxmpi_core::errhandler::{self, UserHandler};
use oxmpi_core::{Error, ErrorClass, Result};
use std::os::raw::c_int;
use std::sync::Arc;

/// `MPI_Comm_errhandler_function`: `void f(MPI_Comm *, int *, ...)`.
pub type HandlerFn = unsafe extern "C" fn(*mut MPI_Comm, *mut c_int, ...);

/// A handler the program wrote in C.
struct CHandler(HandlerFn);

impl UserHandler for CHandler {
    fn call(&self, comm: CommId, code: i32) {
        let mut h = if comm == oxmpi_core::comm::NO_COMM {
            handles::MPI_COMM_NULL
        } else {
            handles::comm_handle(comm)
        };
        let mut c = code;
        // SAFETY: a user-supplied handler with the standard's signature, given valid
        // pointers; the engine calls it with no lock held, so it may call MPI itself.
        unsafe { (self.0)(&mut h, &mut c) };
    }

    fn call_session(&self, session: u32, code: i32) {
        // `MPI_Session_errhandler_function` has the same shape: a handle and a code.
        let mut h = handles::session_handle(session);
        let mut c = code;
        // SAFETY: as in `call`; the session's handle is an `int` like a communicator's.
        unsafe { (self.0)(&mut h, &mut c) };
    }

    fn call_win(&self, win: u32, code: i32) {
        // `MPI_Win_errhandler_function` has the same shape: a handle and a code.
        let mut h = handles::win_handle(win);
        let mut c = code;
        // SAFETY: as in `call`; the window's handle is an `int` like a communicator's.
        unsafe { (self.0)(&mut h, &mut c) };
    }
}

pub(crate) fn from_handle(h: MPI_Errhandler) -> Result<Errhandler> {
    let bad = || {
        Error::new(
            ErrorClass::Errhandler,
            format!("invalid error handler {h:#x}"),
        )
    };
    if h == handles::MPI_ERRHANDLER_NULL {
        return Err(Error::new(
            ErrorClass::Errhandler,
            "invalid error handler MPI_ERRHANDLER_NULL",
        ));
    }
    let i = handles::errhandler_index(h).ok_or_else(bad)?;
    Ok(match i {
        handles::ERRORS_ARE_FATAL_INDEX => Errhandler::Fatal,
        handles::ERRORS_RETURN_INDEX => Errhandler::Return,
        handles::ERRORS_ABORT_INDEX => Errhandler::Abort,
        i => {
            let index = i - handles::FIRST_CREATED_ERRHANDLER;
            if !errhandler::is_live(index) {
                return Err(bad());
            }
            Errhandler::User(index)
        }
    })
}

pub(crate) fn to_handle(e: Errhandler) -> MPI_Errhandler {
    handles::errhandler_handle(match e {
        Errhandler::Fatal => handles::ERRORS_ARE_FATAL_INDEX,
        Errhandler::Return => handles::ERRORS_RETURN_INDEX,
        Errhandler::Abort => handles::ERRORS_ABORT_INDEX,
        Errhandler::User(i) => i + handles::FIRST_CREATED_ERRHANDLER,
    })
}

/// # Safety
/// `out` must be null (refused) or point to a writable `MPI_Errhandler`.
pub(crate) unsafe fn create(f: Option<HandlerFn>, out: *mut MPI_Errhandler) -> Result<()> {
    let out = convert::out(out, "errhandler")?;
    let f = f.ok_or_else(|| Error::new(ErrorClass::Arg, "null error handler function"))?;
    let e = errhandler::create(Arc::new(CHandler(f)));
    // SAFETY: checked non-null.
    unsafe { *out = to_handle(e) };
    Ok(())
}

fn set(c: MPI_Comm, h: MPI_Errhandler) -> Result<()> {
    let id = comm(c)?;
    errhandler::set_comm(id, from_handle(h)?)
}

/// # Safety
/// `out` must be null (refused) or point to a writable `MPI_Errhandler`.
unsafe fn get(c: MPI_Comm, out: *mut MPI_Errhandler) -> Result<()> {
    let out = convert::out(out, "errhandler")?;
    let e = errhandler::get_comm(comm(c)?)?;
    // SAFETY: checked non-null.
    unsafe { *out = to_handle(e) };
    Ok(())
}

mpi_fn! { MPI_Errhandler_create / PMPI_Errhandler_create (f: Option<HandlerFn>, out: *mut MPI_Errhandler) target(Target::None) {
    // SAFETY: `out` is NULL or the C caller's writable handle (MPI contract); `create` refuses
    // NULL.
    unsafe { create(f, out) }
}}
mpi_fn! { MPI_Comm_create_errhandler / PMPI_Comm_create_errhandler (f: Option<HandlerFn>, out: *mut MPI_Errhandler) target(Target::None) {
    // SAFETY: `out` is NULL or the C caller's writable handle (MPI contract); `create` refuses
    // NULL.
    unsafe { create(f, out) }
}}
mpi_fn! { MPI_Errhandler_set / PMPI_Errhandler_set (c: MPI_Comm, h: MPI_Errhandler) target(convert::target(c)) {
    set(c, h)
}}
mpi_fn! { MPI_Comm_set_errhandler / PMPI_Comm_set_errhandler (c: MPI_Comm, h: MPI_Errhandler) target(convert::target(c)) {
    set(c, h)
}}
mpi_fn! { MPI_Errhandler_get / PMPI_Errhandler_get (c: MPI_Comm, out: *mut MPI_Errhandler) target(convert::target(c)) {
    // SAFETY: `out` is NULL or the C caller's writable handle (MPI contract); `get` refuses NULL.
    unsafe { get(c, out) }
}}
mpi_fn! { MPI_Comm_get_errhandler / PMPI_Comm_get_errhandler (c: MPI_Comm, out: *mut MPI_Errhandler) target(convert::target(c)) {
    // SAFETY: `out` is NULL or the C caller's writable handle (MPI contract); `get` refuses NULL.
    unsafe { get(c, out) }
}}
mpi_fn! { MPI_Errhandler_free / PMPI_Errhandler_free (h: *mut MPI_Errhandler) target(Target::None) {
    let h = convert::out(h, "errhandler")?;
    // SAFETY: checked non-null.
    errhandler::free(from_handle(unsafe { *h })?)?;
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
    errhandler::call_comm(id, &e, code)
}}
