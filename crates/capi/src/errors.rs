//! Error codes handed to C callers. A code is the error class in its low 8 bits and,
//! above them, the slot of the specific message in a ring of recent errors, so that
//! `MPI_Error_class` is a mask and `MPI_Error_string` can return the full text
//! (call, argument, value) long after the call returned.
//!
//! Classes and codes a program adds (`MPI_Add_error_class`, `MPI_Add_error_code`,
//! `MPI_Add_error_string`, and MPI-4.1's `MPI_Remove_error_*`, bound here) live above `MPI_ERR_LASTCODE` in the engine's
//! registry (`oxmpi_core::user_errors`). A code that a user callback returned (a
//! generalized request's query function, say) goes back to the program unchanged:
//! [`passthrough`] wraps it in an engine error that carries it (`Error::code`).

use crate::convert;
use crate::export::Target;
use crate::mpi_fn;
use oxmpi_core::user_errors;
use oxmpi_core::{Error, ErrorClass, Result};
use std::ffi::CStr;
use std::os::raw::{c_char, c_int};
use std::sync::Mutex;

const SLOTS: usize = 4095;

struct Ring {
    msgs: Vec<String>,
    next: usize,
}

static RING: Mutex<Ring> = Mutex::new(Ring {
    msgs: Vec::new(),
    next: 0,
});

fn ring() -> std::sync::MutexGuard<'static, Ring> {
    RING.lock().unwrap_or_else(|p| p.into_inner())
}

/// An engine error standing for `code`, an error code a user callback returned:
/// [`code_for`] gives the code back unchanged, so the program sees its own value.
/// `what` names the callback, e.g. "the query function of a generalized request".
pub fn passthrough(code: i32, what: &str) -> Error {
    let class = class_of(code)
        .and_then(ErrorClass::from_code)
        .unwrap_or(ErrorClass::Other);
    let text = string_of(code).unwrap_or_default();
    Error::from_callback(
        code,
        class,
        format!("{what} returned error code {code} ({text})"),
    )
}

/// Records the full message of `e` raised by `call` and returns its error code.
pub fn code_for(call: &str, e: &Error) -> i32 {
    if let Some(code) = e.code {
        return code;
    }
    let text = format!("{call}: {}: {}", e.class.name(), e.message);
    let mut r = ring();
    if r.msgs.len() < SLOTS {
        r.msgs.push(text);
        let slot = r.msgs.len();
        (slot << 8) as i32 | e.class as i32
    } else {
        let slot = r.next;
        r.next = (r.next + 1) % SLOTS;
        r.msgs[slot] = text;
        ((slot + 1) << 8) as i32 | e.class as i32
    }
}

/// The return codes of the tool information interface (`MPI_T_ERR_*`), which are
/// error classes too: number, name, description.
const TOOL_CLASSES: [(i32, &str, &str); 18] = [
    (59, "MPI_T_ERR_MEMORY", "out of memory"),
    (
        60,
        "MPI_T_ERR_NOT_INITIALIZED",
        "the tool information interface is not initialized",
    ),
    (
        61,
        "MPI_T_ERR_CANNOT_INIT",
        "the tool information interface cannot be initialized",
    ),
    (
        62,
        "MPI_T_ERR_INVALID_INDEX",
        "invalid or out-of-range index",
    ),
    (63, "MPI_T_ERR_INVALID_ITEM", "invalid item index"),
    (64, "MPI_T_ERR_INVALID_HANDLE", "invalid handle"),
    (65, "MPI_T_ERR_OUT_OF_HANDLES", "no more handles available"),
    (
        66,
        "MPI_T_ERR_OUT_OF_SESSIONS",
        "no more sessions available",
    ),
    (67, "MPI_T_ERR_INVALID_SESSION", "invalid session"),
    (
        68,
        "MPI_T_ERR_CVAR_SET_NOT_NOW",
        "the control variable cannot be set at this moment",
    ),
    (
        69,
        "MPI_T_ERR_CVAR_SET_NEVER",
        "the control variable cannot be set until the end of execution",
    ),
    (
        70,
        "MPI_T_ERR_PVAR_NO_STARTSTOP",
        "the performance variable cannot be started or stopped",
    ),
    (
        71,
        "MPI_T_ERR_PVAR_NO_WRITE",
        "the performance variable cannot be written or reset",
    ),
    (
        72,
        "MPI_T_ERR_PVAR_NO_ATOMIC",
        "the performance variable cannot be read and written atomically",
    ),
    (
        73,
        "MPI_T_ERR_INVALID_NAME",
        "invalid variable or category name",
    ),
    (
        74,
        "MPI_T_ERR_INVALID",
        "invalid use of the tool information interface",
    ),
    (
        78,
        "MPI_T_ERR_NOT_SUPPORTED",
        "requested functionality not supported",
    ),
    // MPI-4.1; not in MPICH 4.0.2, so numbered after MPI_ERR_ERRHANDLER (79).
    (
        80,
        "MPI_T_ERR_NOT_ACCESSIBLE",
        "requested functionality not accessible",
    ),
];

fn tool_class(code: i32) -> Option<(i32, &'static str, &'static str)> {
    TOOL_CLASSES.iter().copied().find(|t| t.0 == code)
}

/// The class of an error code (the code itself for a bare class).
pub fn class_of(code: i32) -> Option<i32> {
    if code < 0 {
        return None;
    }
    if user_errors::is_dynamic(code) {
        return user_errors::class_of(code);
    }
    if tool_class(code).is_some() {
        return Some(code);
    }
    let class = code & 0xff;
    let slot = (code >> 8) as usize;
    if slot > SLOTS {
        return None;
    }
    if slot > 0 && ring().msgs.len() < slot {
        return None;
    }
    ErrorClass::from_code(class).map(|c| c as i32)
}

/// The text for an error code: the specific message if one was recorded, else the
/// class's description.
pub fn string_of(code: i32) -> Option<String> {
    if user_errors::is_dynamic(code) {
        return user_errors::string_of(code);
    }
    if let Some((_, name, what)) = tool_class(code) {
        return Some(format!("{name}: {what}"));
    }
    let class = ErrorClass::from_code(class_of(code)?)?;
    let slot = (code >> 8) as usize;
    if slot > 0 {
        if let Some(m) = ring().msgs.get(slot - 1) {
            return Some(m.clone());
        }
    }
    Some(format!("{}: {}", class.name(), class.description()))
}

// ----- classes, codes and strings added by the program ---------------------------------------

mpi_fn! { MPI_Add_error_class / PMPI_Add_error_class (errorclass: *mut c_int) target(Target::None) {
    let out = convert::out(errorclass, "errorclass")?;
    let c = user_errors::add_class()?;
    // SAFETY: checked non-null.
    unsafe { *out = c };
    Ok(())
}}

mpi_fn! { MPI_Add_error_code / PMPI_Add_error_code (errorclass: c_int, errorcode: *mut c_int) target(Target::None) {
    let out = convert::out(errorcode, "errorcode")?;
    let c = user_errors::add_code(errorclass)?;
    // SAFETY: checked non-null.
    unsafe { *out = c };
    Ok(())
}}

/// Reads a NUL-terminated C string argument.
///
/// # Safety
/// `s` must be null or point to a NUL-terminated string.
pub unsafe fn c_string<'a>(s: *const c_char, what: &str) -> Result<&'a CStr> {
    if s.is_null() {
        return Err(Error::new(
            ErrorClass::Arg,
            format!("null pointer for {what}"),
        ));
    }
    // SAFETY: non-null and NUL-terminated per the contract.
    Ok(unsafe { CStr::from_ptr(s) })
}

mpi_fn! { MPI_Add_error_string / PMPI_Add_error_string (errorcode: c_int, string: *const c_char) target(Target::None) {
    // SAFETY: the caller passes a NUL-terminated string (MPI contract).
    let s = unsafe { c_string(string, "string")? };
    user_errors::add_string(errorcode, &String::from_utf8_lossy(s.to_bytes()))
}}

mpi_fn! { MPI_Remove_error_class / PMPI_Remove_error_class (errorclass: c_int) target(Target::None) {
    user_errors::remove_class(errorclass)
}}

mpi_fn! { MPI_Remove_error_code / PMPI_Remove_error_code (errorcode: c_int) target(Target::None) {
    user_errors::remove_code(errorcode)
}}

mpi_fn! { MPI_Remove_error_string / PMPI_Remove_error_string (errorcode: c_int) target(Target::None) {
    user_errors::remove_string(errorcode)
}}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_keep_class_and_message() {
        let e = Error::new(ErrorClass::Rank, "invalid rank 7 (communicator size 4)");
        let c = code_for("MPI_Send", &e);
        assert_eq!(class_of(c), Some(6));
        assert_eq!(
            string_of(c).unwrap(),
            "MPI_Send: MPI_ERR_RANK: invalid rank 7 (communicator size 4)"
        );
        assert_eq!(class_of(14), Some(14));
        assert!(string_of(14).unwrap().starts_with("MPI_ERR_TRUNCATE"));
        assert_eq!(class_of(-3), None);
        assert_eq!(class_of(54), None);
    }

    #[test]
    fn passthrough_keeps_the_code() {
        let c = user_errors::add_class().unwrap();
        let k = user_errors::add_code(c).unwrap();
        let e = passthrough(k, "the query function");
        assert_eq!(code_for("MPI_Wait", &e), k);
        assert_ne!(
            code_for("MPI_Wait", &Error::new(e.class, e.message.clone())),
            k
        );
        assert_eq!(class_of(k), Some(c));
        assert_eq!(string_of(k).as_deref(), Some(""));
        let e = passthrough(ErrorClass::Io as i32, "the free function");
        assert_eq!(e.class, ErrorClass::Io);
        assert_eq!(code_for("MPI_Wait", &e), ErrorClass::Io as i32);
    }
}
