//! Dynamic-process entry points beyond `MPI_Comm_get_parent` / `MPI_Comm_disconnect`
//! (which live with sessions): name publishing (`MPI_Publish_name`, `MPI_Lookup_name`,
//! `MPI_Unpublish_name`) around `oxmpi_core::namepub`. Errors belong to no object
//! (`docs/errors.md`). The info argument is checked and has no keys oxmpi reads.

use crate::errors::c_string;
use crate::export::Target;
use crate::handles::MPI_Info;
use crate::info::optional_info;
use crate::mpi_fn;
use oxmpi_core::{namepub, Error, ErrorClass, Result};
use std::os::raw::c_char;

/// `MPI_MAX_PORT_NAME`: port names are shorter (the NUL included).
const MAX_PORT_NAME: usize = 256;

/// Reads a string argument of fewer than `max` bytes (no limit with `max == 0`).
///
/// # Safety
/// `p` must be null (refused) or a NUL-terminated string.
unsafe fn string_arg<'a>(p: *const c_char, what: &str, max: usize) -> Result<&'a str> {
    // SAFETY: per the contract.
    let s = unsafe { c_string(p, what)? };
    let s = s
        .to_str()
        .map_err(|_| Error::new(ErrorClass::Arg, format!("{what} is not valid UTF-8: {s:?}")))?;
    if s.is_empty() {
        return Err(Error::new(ErrorClass::Arg, format!("{what} is empty")));
    }
    if max != 0 && s.len() >= max {
        return Err(Error::new(
            ErrorClass::Arg,
            format!("{what} is {} bytes long (at most {})", s.len(), max - 1),
        ));
    }
    Ok(s)
}

mpi_fn! { MPI_Publish_name / PMPI_Publish_name (service_name: *const c_char, info: MPI_Info, port_name: *const c_char) target(Target::None) {
    // SAFETY: NUL-terminated strings (MPI contract); null is refused.
    let service = unsafe { string_arg(service_name, "service_name", 0)? };
    // SAFETY: as above.
    let port = unsafe { string_arg(port_name, "port_name", MAX_PORT_NAME)? };
    optional_info(info)?;
    namepub::publish(service, port)
}}

mpi_fn! { MPI_Unpublish_name / PMPI_Unpublish_name (service_name: *const c_char, info: MPI_Info, port_name: *const c_char) target(Target::None) {
    // SAFETY: NUL-terminated strings (MPI contract); null is refused.
    let service = unsafe { string_arg(service_name, "service_name", 0)? };
    // SAFETY: as above.
    unsafe { string_arg(port_name, "port_name", MAX_PORT_NAME)? };
    optional_info(info)?;
    namepub::unpublish(service)
}}

mpi_fn! { MPI_Lookup_name / PMPI_Lookup_name (service_name: *const c_char, info: MPI_Info, port_name: *mut c_char) target(Target::None) {
    // SAFETY: a NUL-terminated string (MPI contract); null is refused.
    let service = unsafe { string_arg(service_name, "service_name", 0)? };
    optional_info(info)?;
    if port_name.is_null() {
        return Err(Error::new(ErrorClass::Arg, "null pointer for port_name"));
    }
    let port = namepub::lookup(service)?;
    // A port published by another implementation may be longer than ours: it would not
    // fit the caller's MPI_MAX_PORT_NAME buffer.
    if port.len() >= MAX_PORT_NAME || port.as_bytes().contains(&0) {
        return Err(Error::new(
            ErrorClass::Name,
            format!(
                "the port published under service name {service:?} is {} bytes long (at most {})",
                port.len(),
                MAX_PORT_NAME - 1
            ),
        ));
    }
    // SAFETY: the caller's buffer holds MPI_MAX_PORT_NAME characters (MPI contract);
    // the port and its NUL are shorter than that.
    unsafe {
        std::ptr::copy_nonoverlapping(port.as_ptr(), port_name.cast::<u8>(), port.len());
        *port_name.add(port.len()) = 0;
    }
    Ok(())
}}
