//! Attribute caching on communicators: keys with C copy/delete callbacks
//! (`MPI_Comm_create_keyval`, MPI-1 `MPI_Keyval_create`), and setting, getting and
//! deleting values (`MPI_Comm_set_attr` / `MPI_Attr_put` and friends).
//!
//! The engine decides when callbacks run; this module only adapts the user's C
//! functions to the engine's `AttrHooks`. Predefined attributes are returned as
//! pointers to ints that live as long as the library.
//!
//! Datatype attributes are bound in `type_attr.rs`, window attributes in `win.rs`.

use crate::convert::{self, comm};
use crate::export::Target;
use crate::handles::{self, KeyvalObject, KeyvalRef, MPI_Comm, PredefinedKeyval};
use crate::mpi_fn;
use oxmpi_core::attr::{AttrHooks, AttrKind, AttrObject, Key, KeyvalId, Predefined};
use oxmpi_core::commops::{self, AttrValue};
use oxmpi_core::{Error, ErrorClass, Result};
use std::ffi::c_void;
use std::os::raw::c_int;
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::Arc;

/// `MPI_Comm_copy_attr_function` (and MPI-1 `MPI_Copy_function`).
pub type CopyFn = unsafe extern "C" fn(
    MPI_Comm,
    c_int,
    *mut c_void,
    *mut c_void,
    *mut c_void,
    *mut c_int,
) -> c_int;
/// `MPI_Comm_delete_attr_function` (and MPI-1 `MPI_Delete_function`).
pub type DeleteFn = unsafe extern "C" fn(MPI_Comm, c_int, *mut c_void, *mut c_void) -> c_int;

/// The user's C callbacks of one key.
struct CHooks {
    copy: Option<CopyFn>,
    delete: Option<DeleteFn>,
    extra_state: usize,
}

fn comm_handle_of(obj: AttrObject) -> MPI_Comm {
    match obj {
        AttrObject::Comm(id) => handles::comm_handle(id),
        _ => handles::MPI_COMM_NULL,
    }
}

fn callback_failed(which: &str, key: KeyvalId, code: c_int) -> Error {
    let class = crate::errors::class_of(code)
        .and_then(ErrorClass::from_code)
        .filter(|c| *c != ErrorClass::Success)
        .unwrap_or(ErrorClass::Other);
    Error::new(
        class,
        format!(
            "the attribute {which} function of keyval {:#x} returned error code {code}",
            handles::keyval_handle(KeyvalObject::Comm, key)
        ),
    )
}

impl AttrHooks for CHooks {
    fn copy(&self, obj: AttrObject, key: KeyvalId, value: usize) -> Result<Option<usize>> {
        let Some(f) = self.copy else {
            return Ok(None);
        };
        let mut out: *mut c_void = std::ptr::null_mut();
        let mut flag: c_int = 0;
        // SAFETY: a user callback with the standard's signature, given valid output
        // pointers; called with no engine lock held.
        let rc = unsafe {
            f(
                comm_handle_of(obj),
                handles::keyval_handle(KeyvalObject::Comm, key),
                self.extra_state as *mut c_void,
                value as *mut c_void,
                &mut out as *mut *mut c_void as *mut c_void,
                &mut flag,
            )
        };
        if rc != 0 {
            return Err(callback_failed("copy", key, rc));
        }
        Ok((flag != 0).then_some(out as usize))
    }

    fn delete(&self, obj: AttrObject, key: KeyvalId, value: usize) -> Result<()> {
        let Some(f) = self.delete else {
            return Ok(());
        };
        // SAFETY: a user callback with the standard's signature; no engine lock held.
        let rc = unsafe {
            f(
                comm_handle_of(obj),
                handles::keyval_handle(KeyvalObject::Comm, key),
                value as *mut c_void,
                self.extra_state as *mut c_void,
            )
        };
        if rc != 0 {
            return Err(callback_failed("delete", key, rc));
        }
        Ok(())
    }
}

fn key_of(h: c_int) -> Result<Key> {
    if h == handles::MPI_KEYVAL_INVALID {
        return Err(Error::new(
            ErrorClass::Keyval,
            "invalid attribute key MPI_KEYVAL_INVALID",
        ));
    }
    match handles::keyval_from_handle(h) {
        Some(KeyvalRef::Predefined(p)) => Ok(Key::Predefined(match p {
            PredefinedKeyval::TagUb => Predefined::TagUb,
            PredefinedKeyval::Host => Predefined::Host,
            PredefinedKeyval::Io => Predefined::Io,
            PredefinedKeyval::WtimeIsGlobal => Predefined::WtimeIsGlobal,
            PredefinedKeyval::UniverseSize => Predefined::UniverseSize,
            PredefinedKeyval::LastUsedCode => Predefined::LastUsedCode,
            PredefinedKeyval::AppNum => Predefined::AppNum,
            PredefinedKeyval::ImpiClientSize => Predefined::ImpiClientSize,
            PredefinedKeyval::ImpiClientColor => Predefined::ImpiClientColor,
            PredefinedKeyval::ImpiHostSize => Predefined::ImpiHostSize,
            PredefinedKeyval::ImpiHostColor => Predefined::ImpiHostColor,
            _ => {
                return Err(Error::new(
                    ErrorClass::Keyval,
                    format!(
                        "attribute key {} belongs to windows, not communicators",
                        p.name()
                    ),
                ))
            }
        })),
        Some(KeyvalRef::Created {
            object: KeyvalObject::Comm,
            index,
        }) => Ok(Key::User(index)),
        Some(KeyvalRef::Created { .. }) => Err(Error::new(
            ErrorClass::Keyval,
            format!("attribute key {h:#x} was not created for communicators"),
        )),
        None => Err(Error::new(
            ErrorClass::Keyval,
            format!("invalid attribute key {h:#x}"),
        )),
    }
}

/// Storage for the predefined attributes' values: `MPI_Comm_get_attr` hands out
/// pointers into it, so it lives as long as the library.
static PREDEFINED: [AtomicI32; 7] = [const { AtomicI32::new(0) }; 7];

fn predefined_slot(p: Predefined) -> &'static AtomicI32 {
    &PREDEFINED[match p {
        Predefined::TagUb => 0,
        Predefined::Host => 1,
        Predefined::Io => 2,
        Predefined::WtimeIsGlobal => 3,
        Predefined::UniverseSize => 4,
        Predefined::LastUsedCode => 5,
        Predefined::AppNum => 6,
        // Answered from `interned` (their values differ between communicators).
        Predefined::ImpiClientSize
        | Predefined::ImpiClientColor
        | Predefined::ImpiHostSize
        | Predefined::ImpiHostColor => 0,
    }]
}

/// The IMPI 2.5 attributes, whose values depend on the communicator.
fn impi_attr(p: Predefined) -> bool {
    matches!(
        p,
        Predefined::ImpiClientSize
            | Predefined::ImpiClientColor
            | Predefined::ImpiHostSize
            | Predefined::ImpiHostColor
    )
}

/// A value that never changes at a stable address, for an attribute whose value
/// depends on the communicator: a pointer `MPI_Comm_get_attr` handed out for one
/// communicator must keep its value when another is queried. The values are small
/// (sizes and colors below the world size), so the set stays small.
fn interned(v: i32) -> &'static i32 {
    static VALUES: std::sync::Mutex<Vec<&'static i32>> = std::sync::Mutex::new(Vec::new());
    let mut vals = VALUES.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(&r) = vals.iter().find(|&&r| *r == v) {
        return r;
    }
    let r: &'static i32 = Box::leak(Box::new(v));
    vals.push(r);
    r
}

/// # Safety
/// `out` must be null (refused) or point to a writable `int`; `extra` is stored, never
/// dereferenced here.
unsafe fn create_keyval(
    copy: Option<CopyFn>,
    delete: Option<DeleteFn>,
    out: *mut c_int,
    extra: *mut c_void,
) -> Result<()> {
    let out = convert::out(out, "keyval")?;
    let hooks = Arc::new(CHooks {
        copy,
        delete,
        extra_state: extra as usize,
    });
    let id = commops::create_keyval(AttrKind::Comm, hooks)?;
    if id > handles::MAX_KEYVAL_INDEX {
        return Err(Error::new(ErrorClass::Other, "too many attribute keys"));
    }
    // SAFETY: checked non-null.
    unsafe { *out = handles::keyval_handle(KeyvalObject::Comm, id) };
    Ok(())
}

/// # Safety
/// `k` must be null (refused) or point to a readable, writable `int`.
unsafe fn free_keyval(k: *mut c_int) -> Result<()> {
    let k = convert::out(k, "keyval")?;
    // SAFETY: checked non-null.
    let key = key_of(unsafe { *k })?;
    match key {
        Key::Predefined(p) => {
            return Err(Error::new(
                ErrorClass::Keyval,
                format!("the predefined attribute key {} cannot be freed", p.name()),
            ))
        }
        Key::User(id) => commops::free_keyval(id, AttrKind::Comm)?,
    }
    // SAFETY: checked non-null.
    unsafe { *k = handles::MPI_KEYVAL_INVALID };
    Ok(())
}

/// # Safety
/// `flag` must be null (refused) or point to a writable `int`; `val` must be null (refused
/// when a value is found) or point to a writable `void *`.
unsafe fn get_attr(c: MPI_Comm, k: c_int, val: *mut c_void, flag: *mut c_int) -> Result<()> {
    let id = comm(c)?;
    let flag = convert::out(flag, "flag")?;
    let key = key_of(k)?;
    let v = commops::attr_get(id, key)?;
    let ptr: Option<*mut c_void> = match (v, key) {
        (None, _) => None,
        (Some(AttrValue::Word(w)), _) => Some(w as *mut c_void),
        (Some(AttrValue::Int(i)), Key::Predefined(p)) if impi_attr(p) => {
            Some(interned(i) as *const i32 as *mut c_void)
        }
        (Some(AttrValue::Int(i)), Key::Predefined(p)) => {
            let slot = predefined_slot(p);
            slot.store(i, Ordering::Relaxed);
            Some(slot.as_ptr() as *mut c_void)
        }
        (Some(AttrValue::Int(_)), Key::User(_)) => None,
    };
    match ptr {
        Some(p) => {
            let val = convert::out(val, "attribute_val")?;
            // SAFETY: attribute_val is the address of a `void *` (MPI contract).
            unsafe {
                *(val as *mut *mut c_void) = p;
                *flag = 1;
            }
        }
        // SAFETY: checked non-null.
        None => unsafe { *flag = 0 },
    }
    Ok(())
}

mpi_fn! { MPI_Comm_create_keyval / PMPI_Comm_create_keyval (copy: Option<CopyFn>, delete: Option<DeleteFn>, keyval: *mut c_int, extra: *mut c_void) target(Target::None) {
    // SAFETY: `keyval` is NULL or the C caller's writable int (MPI contract); `create_keyval`
    // refuses NULL.
    unsafe { create_keyval(copy, delete, keyval, extra) }
}}
mpi_fn! { MPI_Keyval_create / PMPI_Keyval_create (copy: Option<CopyFn>, delete: Option<DeleteFn>, keyval: *mut c_int, extra: *mut c_void) target(Target::None) {
    // SAFETY: `keyval` is NULL or the C caller's writable int (MPI contract); `create_keyval`
    // refuses NULL.
    unsafe { create_keyval(copy, delete, keyval, extra) }
}}
mpi_fn! { MPI_Comm_free_keyval / PMPI_Comm_free_keyval (keyval: *mut c_int) target(Target::None) {
    // SAFETY: `keyval` is NULL or the C caller's readable, writable key (MPI contract);
    // `free_keyval` refuses NULL.
    unsafe { free_keyval(keyval) }
}}
mpi_fn! { MPI_Keyval_free / PMPI_Keyval_free (keyval: *mut c_int) target(Target::None) {
    // SAFETY: `keyval` is NULL or the C caller's readable, writable key (MPI contract);
    // `free_keyval` refuses NULL.
    unsafe { free_keyval(keyval) }
}}
mpi_fn! { MPI_Comm_set_attr / PMPI_Comm_set_attr (c: MPI_Comm, k: c_int, val: *mut c_void) target(convert::target(c)) {
    let id = comm(c)?;
    commops::attr_set(id, key_of(k)?, val as usize)
}}
mpi_fn! { MPI_Attr_put / PMPI_Attr_put (c: MPI_Comm, k: c_int, val: *mut c_void) target(convert::target(c)) {
    let id = comm(c)?;
    commops::attr_set(id, key_of(k)?, val as usize)
}}
mpi_fn! { MPI_Comm_get_attr / PMPI_Comm_get_attr (c: MPI_Comm, k: c_int, val: *mut c_void, flag: *mut c_int) target(convert::target(c)) {
    // SAFETY: `flag` and `val` are NULL or the C caller's writable outputs (MPI contract);
    // `get_attr` refuses NULL.
    unsafe { get_attr(c, k, val, flag) }
}}
mpi_fn! { MPI_Attr_get / PMPI_Attr_get (c: MPI_Comm, k: c_int, val: *mut c_void, flag: *mut c_int) target(convert::target(c)) {
    // SAFETY: `flag` and `val` are NULL or the C caller's writable outputs (MPI contract);
    // `get_attr` refuses NULL.
    unsafe { get_attr(c, k, val, flag) }
}}
mpi_fn! { MPI_Comm_delete_attr / PMPI_Comm_delete_attr (c: MPI_Comm, k: c_int) target(convert::target(c)) {
    let id = comm(c)?;
    commops::attr_delete(id, key_of(k)?)
}}
mpi_fn! { MPI_Attr_delete / PMPI_Attr_delete (c: MPI_Comm, k: c_int) target(convert::target(c)) {
    let id = comm(c)?;
    commops::attr_delete(id, key_of(k)?)
}}
