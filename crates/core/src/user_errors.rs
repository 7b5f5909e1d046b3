//! Error classes, codes and strings that programs add (`MPI_Add_error_class`,
//! `MPI_Add_error_code`, `MPI_Add_error_string`) and remove (MPI-4.1's
//! `MPI_Remove_error_class`, `MPI_Remove_error_code`, `MPI_Remove_error_string`), and
//! the `MPI_LASTUSEDCODE` value.
//!
//! Added values sit above `MPI_ERR_LASTCODE` (0x3fffffff), so they can never be taken
//! for a predefined class or for a code the library returns: bit 30 is set, a class
//! has its number in the low 15 bits, a code has its number in bits 15..30. Numbers
//! are handed out in order, so processes that add the same classes and codes in the
//! same order get the same values (what the standard asks of portable programs).
//! A removed value is never handed out again, for the same reason, and
//! `MPI_LASTUSEDCODE` does not go down.
//!
//! The registry is process-wide and outside the runtime lock: the standard lets
//! these values be queried (`MPI_Error_class`, `MPI_Error_string`) at any time.

use crate::error::{err, ErrorClass, Result};
use std::sync::{Mutex, MutexGuard};

/// `MPI_ERR_LASTCODE`: the largest value a predefined class or a library-returned code
/// may have.
pub const LAST_CODE: i32 = 0x3fff_ffff;
/// `MPI_MAX_ERROR_STRING`: a string, with its terminating NUL, fits in this many bytes.
pub const MAX_STRING: usize = 512;

const DYNAMIC: i32 = 0x4000_0000;
const FIELD: i32 = 0x7fff;
const CODE_SHIFT: u32 = 15;

struct Registry {
    /// String of each added class (index k - 1 for class number k); `None` once the
    /// class is removed.
    classes: Vec<Option<Option<String>>>,
    /// (class, string) of each added code (index j - 1 for code number j); `None`
    /// once the code is removed.
    codes: Vec<Option<(i32, Option<String>)>>,
    last_used: i32,
}

static REGISTRY: Mutex<Registry> = Mutex::new(Registry {
    classes: Vec::new(),
    codes: Vec::new(),
    last_used: LAST_CODE,
});

fn registry() -> MutexGuard<'static, Registry> {
    REGISTRY.lock().unwrap_or_else(|p| p.into_inner())
}

/// What an added value is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Dyn {
    Class(usize),
    Code(usize),
}

fn decode(v: i32) -> Option<Dyn> {
    if v < 0 || v & DYNAMIC == 0 {
        return None;
    }
    let class = v & FIELD;
    let code = (v >> CODE_SHIFT) & FIELD;
    match (code, class) {
        (0, k) if k > 0 => Some(Dyn::Class(k as usize - 1)),
        (j, 0) if j > 0 => Some(Dyn::Code(j as usize - 1)),
        _ => None,
    }
}

/// True when `v` has the shape of an added class or code (whether or not it exists).
pub fn is_dynamic(v: i32) -> bool {
    v >= 0 && v & DYNAMIC != 0
}

/// `MPI_Add_error_class`.
pub fn add_class() -> Result<i32> {
    let mut r = registry();
    if r.classes.len() >= FIELD as usize {
        return err(
            ErrorClass::Other,
            format!("no more error classes can be added (limit {FIELD})"),
        );
    }
    r.classes.push(Some(None));
    let v = DYNAMIC | r.classes.len() as i32;
    r.last_used = r.last_used.max(v);
    Ok(v)
}

/// True when `class` is a predefined class or one added by the program.
pub fn is_class(class: i32) -> bool {
    if ErrorClass::from_code(class).is_some() {
        return true;
    }
    matches!(decode(class), Some(Dyn::Class(k)) if matches!(registry().classes.get(k), Some(Some(_))))
}

/// `MPI_Add_error_code`: a new code of `class` (predefined or added).
pub fn add_code(class: i32) -> Result<i32> {
    if !is_class(class) {
        return err(ErrorClass::Arg, format!("invalid error class {class}"));
    }
    let mut r = registry();
    if r.codes.len() >= FIELD as usize {
        return err(
            ErrorClass::Other,
            format!("no more error codes can be added (limit {FIELD})"),
        );
    }
    r.codes.push(Some((class, None)));
    let v = DYNAMIC | ((r.codes.len() as i32) << CODE_SHIFT);
    r.last_used = r.last_used.max(v);
    Ok(v)
}

/// `MPI_Add_error_string`: sets (or replaces) the text of an added class or code.
pub fn add_string(code: i32, text: &str) -> Result<()> {
    if text.len() >= MAX_STRING {
        return err(
            ErrorClass::Arg,
            format!(
                "error string of {} bytes is too long (at most {} plus the terminating NUL)",
                text.len(),
                MAX_STRING - 1
            ),
        );
    }
    let mut r = registry();
    *string_slot(&mut r, code, "take a string")? = Some(text.to_string());
    Ok(())
}

/// The string slot of a live added class or code; `action` says what only they may
/// do, for the message about a predefined one.
fn string_slot<'a>(r: &'a mut Registry, code: i32, action: &str) -> Result<&'a mut Option<String>> {
    let slot = match decode(code) {
        Some(Dyn::Class(k)) => r.classes.get_mut(k).and_then(Option::as_mut),
        Some(Dyn::Code(j)) => r.codes.get_mut(j).and_then(Option::as_mut).map(|(_, s)| s),
        None if (0..=LAST_CODE).contains(&code) => {
            return err(
                ErrorClass::Arg,
                format!("error code {code} is predefined: only added classes and codes {action}"),
            )
        }
        None => None,
    };
    match slot {
        Some(s) => Ok(s),
        None => err(
            ErrorClass::Arg,
            format!("invalid error code {code} (not added by MPI_Add_error_class or MPI_Add_error_code, or removed)"),
        ),
    }
}

/// `MPI_Remove_error_string`: forgets the text of an added class or code (it reads
/// as empty again).
pub fn remove_string(code: i32) -> Result<()> {
    let mut r = registry();
    *string_slot(&mut r, code, "have a string to remove")? = None;
    Ok(())
}

/// `MPI_Remove_error_code`: removes a code added by `MPI_Add_error_code`, once its string
/// was removed.
pub fn remove_code(code: i32) -> Result<()> {
    let mut r = registry();
    match decode(code) {
        Some(Dyn::Code(j)) if matches!(r.codes.get(j), Some(Some(_))) => {
            if matches!(r.codes[j], Some((_, Some(_)))) {
                // MPI-4.1 section 9.5: erroneous before its string is removed.
                return err(
                    ErrorClass::Arg,
                    format!("error code {code} still has an error string: remove it first with MPI_Remove_error_string"),
                );
            }
            r.codes[j] = None;
            Ok(())
        }
        _ if (0..=LAST_CODE).contains(&code) => err(
            ErrorClass::Arg,
            format!("error code {code} is predefined and cannot be removed"),
        ),
        _ => err(
            ErrorClass::Arg,
            format!("invalid error code {code} (not added by MPI_Add_error_code, or removed)"),
        ),
    }
}

/// `MPI_Remove_error_class`: removes a class added by `MPI_Add_error_class`, once no
/// added code of it and no string remain (MPI-4.1 section 9.5 makes removing it earlier
/// erroneous).
pub fn remove_class(class: i32) -> Result<()> {
    let mut r = registry();
    match decode(class) {
        Some(Dyn::Class(k)) if matches!(r.classes.get(k), Some(Some(_))) => {
            let codes = r
                .codes
                .iter()
                .flatten()
                .filter(|(c, _)| *c == class)
                .count();
            if codes > 0 {
                return err(
                    ErrorClass::Arg,
                    format!("error class {class} still has {codes} error code(s): remove them first with MPI_Remove_error_code"),
                );
            }
            if matches!(r.classes[k], Some(Some(_))) {
                // As for codes (and as mpi4py's test of MPI-4.1 expects): the string goes first.
                return err(
                    ErrorClass::Arg,
                    format!("error class {class} still has an error string: remove it first with MPI_Remove_error_string"),
                );
            }
            r.classes[k] = None;
            Ok(())
        }
        _ if (0..=LAST_CODE).contains(&class) => err(
            ErrorClass::Arg,
            format!("error class {class} is predefined and cannot be removed"),
        ),
        _ => err(
            ErrorClass::Arg,
            format!("invalid error class {class} (not added by MPI_Add_error_class, or removed)"),
        ),
    }
}

/// The class of an added class or code; None when `code` was not added.
pub fn class_of(code: i32) -> Option<i32> {
    let r = registry();
    match decode(code)? {
        Dyn::Class(k) => matches!(r.classes.get(k), Some(Some(_))).then_some(code),
        Dyn::Code(j) => r.codes.get(j)?.as_ref().map(|(c, _)| *c),
    }
}

/// The string of an added class or code (empty when none was set); None when `code`
/// was not added.
pub fn string_of(code: i32) -> Option<String> {
    let r = registry();
    let s = match decode(code)? {
        Dyn::Class(k) => r.classes.get(k)?.as_ref()?.clone(),
        Dyn::Code(j) => r.codes.get(j)?.as_ref()?.1.clone(),
    };
    Some(s.unwrap_or_default())
}

/// The value of the `MPI_LASTUSEDCODE` attribute: the largest class or code in use,
/// never below `MPI_ERR_LASTCODE`.
pub fn last_used() -> i32 {
    registry().last_used
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_codes_strings() {
        let c = add_class().unwrap();
        assert!(c > LAST_CODE);
        assert!(is_class(c));
        assert_eq!(class_of(c), Some(c));
        assert_eq!(string_of(c).as_deref(), Some(""));
        let k = add_code(c).unwrap();
        assert!(k > LAST_CODE && k != c);
        assert_eq!(class_of(k), Some(c));
        add_string(k, "disk on fire").unwrap();
        assert_eq!(string_of(k).as_deref(), Some("disk on fire"));
        add_string(c, "hardware").unwrap();
        assert_eq!(string_of(c).as_deref(), Some("hardware"));
        assert!(last_used() >= k.max(c));
        let p = add_code(ErrorClass::Io as i32).unwrap();
        assert_eq!(class_of(p), Some(ErrorClass::Io as i32));
    }

    #[test]
    fn rejects_what_was_not_added() {
        assert_eq!(add_code(54).unwrap_err().class, ErrorClass::Arg);
        assert_eq!(
            add_code(DYNAMIC | FIELD).unwrap_err().class,
            ErrorClass::Arg
        );
        assert_eq!(
            add_string(ErrorClass::Rank as i32, "x").unwrap_err().class,
            ErrorClass::Arg
        );
        assert_eq!(
            add_string(DYNAMIC | (FIELD << CODE_SHIFT), "x")
                .unwrap_err()
                .class,
            ErrorClass::Arg
        );
        assert_eq!(class_of(DYNAMIC | 0x7ffe), None);
        assert_eq!(class_of(12), None);
        assert_eq!(class_of(-5), None);
        let c = add_class().unwrap();
        assert_eq!(
            add_string(c, &"x".repeat(MAX_STRING)).unwrap_err().class,
            ErrorClass::Arg
        );
        add_string(c, &"x".repeat(MAX_STRING - 1)).unwrap();
    }

    #[test]
    fn removal() {
        let c = add_class().unwrap();
        let k = add_code(c).unwrap();
        add_string(k, "gone soon").unwrap();
        // A class with codes stays.
        assert_eq!(remove_class(c).unwrap_err().class, ErrorClass::Arg);
        remove_string(k).unwrap();
        assert_eq!(string_of(k).as_deref(), Some(""));
        remove_code(k).unwrap();
        assert_eq!(class_of(k), None);
        assert_eq!(string_of(k), None);
        assert_eq!(remove_code(k).unwrap_err().class, ErrorClass::Arg);
        assert_eq!(add_string(k, "x").unwrap_err().class, ErrorClass::Arg);
        let last = last_used();
        remove_class(c).unwrap();
        assert!(!is_class(c));
        assert_eq!(class_of(c), None);
        assert_eq!(add_code(c).unwrap_err().class, ErrorClass::Arg);
        assert_eq!(remove_class(c).unwrap_err().class, ErrorClass::Arg);
        // Numbers are not reused, and MPI_LASTUSEDCODE does not go down.
        assert_eq!(last_used(), last);
        assert!(add_class().unwrap() > c);
        // Predefined values cannot be removed.
        assert_eq!(
            remove_class(ErrorClass::Rank as i32).unwrap_err().class,
            ErrorClass::Arg
        );
        assert_eq!(
            remove_code(ErrorClass::Rank as i32).unwrap_err().class,
            ErrorClass::Arg
        );
        assert_eq!(
            remove_string(ErrorClass::Rank as i32).unwrap_err().class,
            ErrorClass::Arg
        );
    }
}
