//! Error codes handed to C callers. A code is the error class in its low 8 bits and,
//! above them, the slot of the specific message in a ring of recent errors, so that
//! `MPI_Error_class` is a mask and `MPI_Error_string` can return the full text
//! (call, argument, value) long after the call returned.

use oxmpi_core::{Error, ErrorClass};
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

/// Records the full message of `e` raised by `call` and returns its error code.
pub fn code_for(call: &str, e: &Error) -> i32 {
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

/// The class of an error code (the code itself for a bare class).
pub fn class_of(code: i32) -> Option<i32> {
    if code < 0 {
        return None;
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
    let class = ErrorClass::from_code(class_of(code)?)?;
    let slot = (code >> 8) as usize;
    if slot > 0 {
        if let Some(m) = ring().msgs.get(slot - 1) {
            return Some(m.clone());
        }
    }
    Some(format!("{}: {}", class.name(), class.description()))
}

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
}
