//! Error handlers: which handler reports an error, the user handlers and their
//! reference counts, and what each handler does with an error.
//!
//! The bindings only translate: they turn an [`Error`] into their own error code, name
//! the object the call was about ([`ErrObject`]), and call [`dispatch`], which picks the
//! handler ([`handler_for`]), runs a user handler through the [`UserHandler`] the
//! binding registered (with no lock held, so it may call MPI), and takes the fatal path
//! for `MPI_ERRORS_ARE_FATAL` / `MPI_ERRORS_ABORT`.
//!
//! A user handler lives while anything refers to it: each handle the program holds
//! (`MPI_Comm_create_errhandler`, and every `MPI_Comm_get_errhandler`, which returns a
//! new reference) and each communicator it is set on. `MPI_Errhandler_free` drops the
//! program's reference only; the communicator table drops its references when a
//! communicator is freed ([`crate::comm::CommTable`] calls [`retain`] and [`release`]).

use crate::comm::{CommId, Errhandler, SELF, WORLD};
use crate::error::{err, Error, ErrorClass, Result};
use crate::runtime;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

/// A user error handler as its binding implements it (the C library calls the
/// program's C function).
pub trait UserHandler: Send + Sync {
    /// Called for an error with `code` (the binding's error code) on communicator
    /// `comm`, whose handler this is.
    fn call(&self, comm: CommId, code: i32);

    /// Called for an error with `code` on session `session` (an index of
    /// [`crate::session`]'s table), whose handler this is. By default the handler runs
    /// as for no communicator.
    fn call_session(&self, session: u32, code: i32) {
        let _ = session;
        self.call(crate::comm::NO_COMM, code);
    }

    /// Called for an error with `code` on window `win` (an index of [`crate::rma`]'s
    /// table), whose handler this is. By default the handler runs as for no
    /// communicator.
    fn call_win(&self, win: u32, code: i32) {
        let _ = win;
        self.call(crate::comm::NO_COMM, code);
    }
}

/// The object an error is reported on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrObject {
    Comm(CommId),
    /// A session (`MPI_Session_*` calls, `MPI_Group_from_session_pset`): its handler.
    Session(u32),
    /// A window (`MPI_Win_*` and RMA calls): its handler.
    Win(u32),
    /// A handler given to the call itself (`MPI_Comm_create_from_group`,
    /// `MPI_Intercomm_create_from_groups`, which have no object yet when they fail); a
    /// user handler gets `MPI_COMM_NULL`.
    Handler(Errhandler),
    /// No valid object (a group or datatype call, a null or freed communicator, a
    /// request without a communicator): see [`handler_for`].
    None,
}

struct Entry {
    handler: Arc<dyn UserHandler>,
    /// Handles the program holds plus communicators the handler is set on.
    refs: usize,
}

static USER: Mutex<Vec<Option<Entry>>> = Mutex::new(Vec::new());

/// The program set a handler on `MPI_COMM_SELF` / `MPI_COMM_WORLD` (see [`handler_for`]).
static SELF_SET: AtomicBool = AtomicBool::new(false);
static WORLD_SET: AtomicBool = AtomicBool::new(false);

fn table() -> MutexGuard<'static, Vec<Option<Entry>>> {
    USER.lock().unwrap_or_else(|p| p.into_inner())
}

/// `MPI_Comm_create_errhandler`: a new user handler holding one reference (the
/// program's handle).
pub fn create(handler: Arc<dyn UserHandler>) -> Errhandler {
    let mut t = table();
    let e = Entry { handler, refs: 1 };
    let i = match t.iter().position(|s| s.is_none()) {
        Some(i) => {
            t[i] = Some(e);
            i
        }
        None => {
            t.push(Some(e));
            t.len() - 1
        }
    };
    Errhandler::User(i as u32)
}

/// True when user handler `index` exists (some reference to it is alive).
pub fn is_live(index: u32) -> bool {
    table().get(index as usize).is_some_and(|s| s.is_some())
}

/// Counts one more reference to `e` (nothing for the predefined handlers).
pub fn retain(e: Errhandler) {
    if let Errhandler::User(i) = e {
        if let Some(Some(u)) = table().get_mut(i as usize) {
            u.refs += 1;
        }
    }
}

/// Drops one reference to `e`; the last one frees the handler.
pub fn release(e: Errhandler) {
    if let Errhandler::User(i) = e {
        // The handler's own drop runs after the lock is released.
        let _gone = {
            let mut t = table();
            match t.get_mut(i as usize) {
                Some(slot @ Some(_)) => {
                    let u = slot.as_mut().expect("matched");
                    u.refs -= 1;
                    if u.refs == 0 {
                        slot.take()
                    } else {
                        None
                    }
                }
                _ => None,
            }
        };
    }
}

/// `MPI_Errhandler_free`: the program gives up one handle to `e`.
pub fn free(e: Errhandler) -> Result<()> {
    match e {
        Errhandler::User(i) if !is_live(i) => err(
            ErrorClass::Errhandler,
            format!("invalid error handler (user handler {i} was freed)"),
        ),
        e => {
            release(e);
            Ok(())
        }
    }
}

/// `MPI_Comm_set_errhandler`.
pub fn set_comm(id: CommId, e: Errhandler) -> Result<()> {
    if let Errhandler::User(i) = e {
        if !is_live(i) {
            return err(
                ErrorClass::Errhandler,
                format!("invalid error handler (user handler {i} was freed)"),
            );
        }
    }
    retain(e);
    let old = runtime::with(|rt| rt.comms.replace_errhandler(id, e));
    match old {
        Ok(old) => {
            if let Some(old) = old {
                release(old);
            }
            match id {
                SELF => SELF_SET.store(true, Ordering::Relaxed),
                WORLD => WORLD_SET.store(true, Ordering::Relaxed),
                _ => {}
            }
            Ok(())
        }
        Err(x) => {
            release(e);
            Err(x)
        }
    }
}

/// `MPI_Comm_get_errhandler`: the handler, with a new reference for the caller (who
/// frees it with `MPI_Errhandler_free`).
pub fn get_comm(id: CommId) -> Result<Errhandler> {
    let e = runtime::with(|rt| Ok(rt.comms.get(id)?.errhandler))?;
    retain(e);
    Ok(e)
}

/// The communicator whose handler reports an error on `obj`, and that handler.
///
/// A live communicator reports its own errors. Errors with no valid object go, as
/// MPI-4 says, to `MPI_COMM_SELF`'s handler when the program set one on it; programs
/// written for MPI-1 to 3 set `MPI_ERRORS_RETURN` on `MPI_COMM_WORLD` and expect it to
/// apply (as MPICH and Open MPI do), so otherwise the handler the program set on
/// `MPI_COMM_WORLD` is used; else the default, `MPI_ERRORS_ARE_FATAL`.
pub fn handler_for(obj: ErrObject) -> (CommId, Errhandler) {
    // Any thread: a call refused for its thread (`runtime::lock_call`) still reports
    // to the handler the program chose.
    let of =
        |id: CommId| runtime::with_any_thread(|rt| Ok(rt.comms.get(id).map(|c| c.errhandler).ok()));
    if let ErrObject::Comm(id) = obj {
        if let Ok(Some(e)) = of(id) {
            return (id, e);
        }
    }
    let id = if !SELF_SET.load(Ordering::Relaxed) && WORLD_SET.load(Ordering::Relaxed) {
        WORLD
    } else {
        SELF
    };
    match of(id) {
        Ok(Some(e)) => (id, e),
        _ => (SELF, Errhandler::Fatal),
    }
}

/// Reports `e` (raised by `call`, with the binding's error `code`) to the handler of
/// `obj`. Returns the code for the caller when the handler lets the call return;
/// `MPI_ERRORS_ARE_FATAL` and `MPI_ERRORS_ABORT` end the job.
#[cold]
#[inline(never)]
pub fn dispatch(call: &str, obj: ErrObject, e: &Error, code: i32) -> i32 {
    let (to, h) = match obj {
        ErrObject::Session(s) => match crate::session::errhandler_of(s) {
            Some(h) => (To::Session(s), h),
            None => {
                let (c, h) = handler_for(ErrObject::None);
                (To::Comm(c), h)
            }
        },
        ErrObject::Win(w) => match crate::rma::errhandler_of(w) {
            Some(h) => (To::Win(w), h),
            None => {
                let (c, h) = handler_for(ErrObject::None);
                (To::Comm(c), h)
            }
        },
        ErrObject::Handler(h) => (To::Comm(crate::comm::NO_COMM), h),
        obj => {
            let (c, h) = handler_for(obj);
            (To::Comm(c), h)
        }
    };
    match h {
        Errhandler::Return => code,
        Errhandler::User(i) => {
            match to {
                To::Comm(comm) => invoke(i, comm, code),
                To::Session(s) => invoke_session(i, s, code),
                To::Win(w) => {
                    if let Some(h) = user(i) {
                        h.call_win(w, code);
                    }
                }
            }
            code
        }
        Errhandler::Fatal | Errhandler::Abort => fatal(call, e),
    }
}

/// `MPI_Comm_call_errhandler`: runs the handler of communicator `id` for `e` (with the
/// binding's `code`); the call itself succeeds unless the handler is fatal.
pub fn call_comm(id: CommId, e: &Error, code: i32) -> Result<()> {
    runtime::with(|rt| rt.comms.get(id).map(|_| ()))?;
    dispatch("MPI_Comm_call_errhandler", ErrObject::Comm(id), e, code);
    Ok(())
}

/// Who a user handler is called for.
enum To {
    Comm(CommId),
    Session(u32),
    Win(u32),
}

fn user(index: u32) -> Option<Arc<dyn UserHandler>> {
    table()
        .get(index as usize)
        .and_then(|s| s.as_ref())
        .map(|u| u.handler.clone())
}

/// Calls user handler `index` for `comm` with no lock held.
fn invoke(index: u32, comm: CommId, code: i32) {
    if let Some(h) = user(index) {
        h.call(comm, code);
    }
}

/// Calls user handler `index` for session `session` with no lock held.
fn invoke_session(index: u32, session: u32, code: i32) {
    if let Some(h) = user(index) {
        h.call_session(session, code);
    }
}

/// The fatal path: prints the error the way `MPI_ERRORS_ARE_FATAL` does and ends the
/// job (`oxmpi: rank R: MPI_Send: MPI_ERR_RANK: ... (error handler MPI_ERRORS_ARE_FATAL)`).
pub fn fatal(call: &str, e: &Error) -> ! {
    let rank = runtime::with_any_thread(|rt| Ok(rt.world_rank as i64)).unwrap_or(-1);
    let who = if rank >= 0 {
        format!("rank {rank}")
    } else {
        "process".to_string()
    };
    let line = format!(
        "oxmpi: {who}: {call}: {}: {} (error handler MPI_ERRORS_ARE_FATAL)",
        e.class.name(),
        e.message
    );
    runtime::abort(1, &line)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    struct Count(AtomicUsize);
    impl UserHandler for Count {
        fn call(&self, _: CommId, _: i32) {
            self.0.fetch_add(1, Ordering::Relaxed);
        }
    }

    #[test]
    fn user_handlers_live_until_the_last_reference() {
        let h = Arc::new(Count(AtomicUsize::new(0)));
        let e = create(h.clone());
        let Errhandler::User(i) = e else {
            panic!("not a user handler")
        };
        retain(e); // set on a communicator
        free(e).unwrap(); // the program's handle
        assert!(is_live(i));
        invoke(i, SELF, 5);
        assert_eq!(h.0.load(Ordering::Relaxed), 1);
        release(e); // the communicator is freed
        assert!(!is_live(i));
        assert_eq!(free(e).unwrap_err().class, ErrorClass::Errhandler);
        // Predefined handlers are not counted.
        free(Errhandler::Return).unwrap();
    }
}
