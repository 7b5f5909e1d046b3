//! Attribute caching on datatypes: `MPI_Type_create_keyval` / `free_keyval` with the
//! user's C copy and delete callbacks, and `MPI_Type_set_attr` / `get_attr` /
//! `delete_attr`. The engine (`oxmpi_core::types`) decides when callbacks run (on
//! `MPI_Type_dup`, `MPI_Type_free`, replacement and deletion); this module adapts the C
//! functions to its `AttrHooks`.

use crate::convert::{self, datatype};
use crate::export::Target;
use crate::handles::{self, KeyvalObject, KeyvalRef, MPI_Datatype};
use crate::mpi_fn;
use oxmpi_core::attr::{AttrHooks, AttrKind, AttrObject, KeyvalId};
use oxmpi_core::{commops, types};
use oxmpi_core::{Error, ErrorClass, Result};
use std::ffi::c_void;
use std::os::raw::c_int;
use std::sync::Arc;

/// `MPI_Type_copy_attr_function`.
pub type TypeCopyFn = unsafe extern "C" fn(
    MPI_Datatype,
    c_int,
    *mut c_void,
    *mut c_void,
    *mut c_void,
    *mut c_int,
) -> c_int;
/// `MPI_Type_delete_attr_function`.
pub type TypeDeleteFn =
    unsafe extern "C" fn(MPI_Datatype, c_int, *mut c_void, *mut c_void) -> c_int;

struct TypeHooks {
    copy: Option<TypeCopyFn>,
    delete: Option<TypeDeleteFn>,
    extra_state: usize,
}

fn type_handle_of(obj: AttrObject) -> MPI_Datatype {
    match obj {
        AttrObject::Datatype(id) => crate::datatype::handle_of(id),
        _ => handles::MPI_DATATYPE_NULL,
    }
}

fn key_handle(key: KeyvalId) -> c_int {
    handles::keyval_handle(KeyvalObject::Datatype, key)
}

fn callback_failed(which: &str, key: KeyvalId, code: c_int) -> Error {
    let class = crate::errors::class_of(code)
        .and_then(ErrorClass::from_code)
        .filter(|c| *c != ErrorClass::Success)
        .unwrap_or(ErrorClass::Other);
    Error::new(
        class,
        format!(
            "the attribute {which} function of datatype keyval {:#x} returned error code {code}",
            key_handle(key)
        ),
    )
}

impl AttrHooks for TypeHooks {
    fn copy(&self, obj: AttrObject, key: KeyvalId, value: usize) -> Result<Option<usize>> {
        let Some(f) = self.copy else {
            return Ok(None);
        };
        let mut out: *mut c_void = std::ptr::null_mut();
        let mut flag: c_int = 0;
        // SAFETY: a user callback with the standard's signature, given valid output
        // pointers; the engine calls hooks with no lock held.
        let rc = unsafe {
            f(
                type_handle_of(obj),
                key_handle(key),
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
                type_handle_of(obj),
                key_handle(key),
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

fn key_of(h: c_int) -> Result<KeyvalId> {
    if h == handles::MPI_KEYVAL_INVALID {
        return Err(Error::new(
            ErrorClass::Keyval,
            "invalid attribute key MPI_KEYVAL_INVALID",
        ));
    }
    match handles::keyval_from_handle(h) {
        Some(KeyvalRef::Created {
            object: KeyvalObject::Datatype,
            index,
        }) => Ok(index),
        Some(_) => Err(Error::new(
            ErrorClass::Keyval,
            format!("attribute key {h:#x} was not created for datatypes"),
        )),
        None => Err(Error::new(
            ErrorClass::Keyval,
            format!("invalid attribute key {h:#x}"),
        )),
    }
}

mpi_fn! { MPI_Type_create_keyval / PMPI_Type_create_keyval (copy: Option<TypeCopyFn>, delete: Option<TypeDeleteFn>, keyval: *mut c_int, extra: *mut c_void) target(Target::None) {
    let keyval = convert::out(keyval, "type_keyval")?;
    let hooks = Arc::new(TypeHooks { copy, delete, extra_state: extra as usize });
    let id = commops::create_keyval(AttrKind::Datatype, hooks)?;
    if id > handles::MAX_KEYVAL_INDEX {
        let _ = commops::free_keyval(id, AttrKind::Datatype);
        return Err(Error::new(ErrorClass::Other, "too many attribute keys"));
    }
    // SAFETY: checked non-null.
    unsafe { *keyval = key_handle(id) };
    Ok(())
}}

mpi_fn! { MPI_Type_free_keyval / PMPI_Type_free_keyval (keyval: *mut c_int) target(Target::None) {
    let keyval = convert::out(keyval, "type_keyval")?;
    // SAFETY: checked non-null.
    let id = key_of(unsafe { *keyval })?;
    commops::free_keyval(id, AttrKind::Datatype)?;
    // SAFETY: checked non-null.
    unsafe { *keyval = handles::MPI_KEYVAL_INVALID };
    Ok(())
}}

mpi_fn! { MPI_Type_set_attr / PMPI_Type_set_attr (dt: MPI_Datatype, k: c_int, val: *mut c_void) target(Target::None) {
    types::attr_set(datatype(dt)?, key_of(k)?, val as usize)
}}

mpi_fn! { MPI_Type_get_attr / PMPI_Type_get_attr (dt: MPI_Datatype, k: c_int, val: *mut c_void, flag: *mut c_int) target(Target::None) {
    let id = datatype(dt)?;
    let flag = convert::out(flag, "flag")?;
    match types::attr_get(id, key_of(k)?)? {
        Some(v) => {
            let val = convert::out(val, "attribute_val")?;
            // SAFETY: attribute_val is the address of a `void *` (MPI contract); flag checked.
            unsafe {
                *(val as *mut *mut c_void) = v as *mut c_void;
                *flag = 1;
            }
        }
        // SAFETY: checked non-null.
        None => unsafe { *flag = 0 },
    }
    Ok(())
}}

mpi_fn! { MPI_Type_delete_attr / PMPI_Type_delete_attr (dt: MPI_Datatype, k: c_int) target(Target::None) {
    types::attr_delete(datatype(dt)?, key_of(k)?)
}}
