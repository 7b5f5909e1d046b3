//! Dynamic-process entry points beyond `MPI_Comm_get_parent` / `MPI_Comm_disconnect`
//! (which live with sessions): name publishing (`MPI_Publish_name`, `MPI_Lookup_name`,
//! `MPI_Unpublish_name`) around `oxmpi_core::namepub`, whose errors belong to no object
//! (`docs/errors.md`) and whose info argument has no keys oxmpi reads; ports
//! (`MPI_Open_port`, `MPI_Close_port`); and the calls that make intercommunicators
//! between jobs (`MPI_Comm_spawn`, `MPI_Comm_spawn_multiple`, `MPI_Comm_accept`,
//! `MPI_Comm_connect`, `MPI_Comm_join`) around `oxmpi_core::dpm`, whose errors go to
//! the communicator's handler. Arguments significant only at the root are read only
//! there, and an error in them reaches every member (the engine broadcasts it).

use crate::comm::{new_comm_out, put_comm};
use crate::convert::{self, comm};
use crate::errors::c_string;
use crate::export::Target;
use crate::handles::{MPI_Comm, MPI_Info};
use crate::info::optional_info;
use crate::mpi_fn;
use oxmpi_core::comm::CommId;
use oxmpi_core::dpm::{self, RootArgs, SpawnApp};
use oxmpi_core::{commops, namepub, Error, ErrorClass, Result};
use std::os::raw::{c_char, c_int};

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

// ----- ports ---------------------------------------------------------------------------

mpi_fn! { MPI_Open_port / PMPI_Open_port (info: MPI_Info, port_name: *mut c_char) target(Target::None) {
    optional_info(info)?;
    if port_name.is_null() {
        return Err(Error::new(ErrorClass::Arg, "MPI_Open_port: null pointer for port_name"));
    }
    let name = dpm::open_port()?;
    debug_assert!(name.len() < MAX_PORT_NAME);
    // SAFETY: the caller's buffer holds MPI_MAX_PORT_NAME characters (MPI contract); our
    // port names and their NUL are shorter.
    unsafe {
        std::ptr::copy_nonoverlapping(name.as_ptr(), port_name.cast::<u8>(), name.len());
        *port_name.add(name.len()) = 0;
    }
    Ok(())
}}

mpi_fn! { MPI_Close_port / PMPI_Close_port (port_name: *const c_char) target(Target::None) {
    // SAFETY: a NUL-terminated string (MPI contract); null is refused.
    let name = unsafe { string_arg(port_name, "port_name", MAX_PORT_NAME)? };
    dpm::close_port(name)
}}

/// True when this process is `root` of `c` (root-only arguments are read there).
fn is_root(c: CommId, root: c_int) -> Result<bool> {
    Ok(commops::snapshot(c)?.rank == root)
}

/// The port name argument at the root; a bad one is `MPI_ERR_PORT`.
///
/// # Safety
/// `p` must be null or a NUL-terminated string.
unsafe fn port_arg(p: *const c_char, call: &str) -> Result<String> {
    // SAFETY: per the contract.
    let s = unsafe { string_arg(p, "port_name", MAX_PORT_NAME) }
        .map_err(|e| Error::new(ErrorClass::Port, format!("{call}: {}", e.message)))?;
    Ok(s.to_owned())
}

mpi_fn! { MPI_Comm_accept / PMPI_Comm_accept (port_name: *const c_char, info: MPI_Info, root: c_int, c: MPI_Comm, newcomm: *mut MPI_Comm) target(convert::target(c)) {
    // SAFETY: NULL (refused) or the caller's writable handle (MPI contract).
    let out = unsafe { new_comm_out(newcomm, "newcomm")? };
    let id = comm(c)?;
    let args: RootArgs<String> = if is_root(id, root)? {
        // SAFETY: significant at the root: a NUL-terminated string (MPI contract).
        Some(optional_info(info).and_then(|_| unsafe { port_arg(port_name, "MPI_Comm_accept") }))
    } else {
        None
    };
    let new = dpm::accept(args, root, id)?;
    // SAFETY: non-null, writable (checked by new_comm_out).
    unsafe { put_comm(out, Some(new)) };
    Ok(())
}}

mpi_fn! { MPI_Comm_connect / PMPI_Comm_connect (port_name: *const c_char, info: MPI_Info, root: c_int, c: MPI_Comm, newcomm: *mut MPI_Comm) target(convert::target(c)) {
    // SAFETY: NULL (refused) or the caller's writable handle (MPI contract).
    let out = unsafe { new_comm_out(newcomm, "newcomm")? };
    let id = comm(c)?;
    let args = if is_root(id, root)? {
        Some((|| {
            let timeout = match optional_info(info)? {
                Some(i) => oxmpi_core::info::get(i, b"timeout")?,
                None => None,
            };
            let timeout = timeout.map(|t| String::from_utf8_lossy(&t).into_owned());
            let timeout = dpm::connect_timeout(timeout.as_deref())?;
            // SAFETY: significant at the root: a NUL-terminated string (MPI contract).
            let name = unsafe { port_arg(port_name, "MPI_Comm_connect")? };
            Ok((name, timeout))
        })())
    } else {
        None
    };
    let new = dpm::connect(args, root, id)?;
    // SAFETY: non-null, writable (checked by new_comm_out).
    unsafe { put_comm(out, Some(new)) };
    Ok(())
}}

mpi_fn! { MPI_Comm_join / PMPI_Comm_join (fd: c_int, intercomm: *mut MPI_Comm) target(convert::target(crate::handles::MPI_COMM_SELF)) {
    // SAFETY: NULL (refused) or the caller's writable handle (MPI contract).
    let out = unsafe { new_comm_out(intercomm, "intercomm")? };
    // SAFETY: fcntl on any integer is harmless; it tells whether fd is open.
    if fd < 0 || unsafe { libc::fcntl(fd, libc::F_GETFD) } < 0 {
        return Err(Error::new(ErrorClass::Arg, format!("MPI_Comm_join: fd {fd} is not an open file descriptor")));
    }
    // SAFETY: checked open above; borrowed for the call only (the program keeps it).
    let b = unsafe { std::os::fd::BorrowedFd::borrow_raw(fd) };
    let new = dpm::join(b)?;
    // SAFETY: non-null, writable (checked by new_comm_out).
    unsafe { put_comm(out, Some(new)) };
    Ok(())
}}

// ----- spawning --------------------------------------------------------------------------

/// Reads a NULL-terminated `argv` (`MPI_ARGV_NULL`: no arguments).
///
/// # Safety
/// `argv` must be null or an array of NUL-terminated strings ending with a null pointer.
unsafe fn argv_arg(argv: *const *const c_char, what: &str) -> Result<Vec<String>> {
    let mut out = Vec::new();
    if argv.is_null() {
        return Ok(out);
    }
    for i in 0.. {
        // SAFETY: the array ends with a null pointer (MPI contract).
        let a = unsafe { *argv.add(i) };
        if a.is_null() {
            break;
        }
        // SAFETY: a NUL-terminated string (MPI contract).
        let s = unsafe { c_string(a, what)? };
        out.push(
            s.to_str()
                .map_err(|_| {
                    Error::new(ErrorClass::Arg, format!("{what}[{i}] is not valid UTF-8"))
                })?
                .to_owned(),
        );
        if i > 4096 {
            return Err(Error::new(
                ErrorClass::Arg,
                format!("{what} has more than 4096 arguments (missing its NULL end?)"),
            ));
        }
    }
    Ok(out)
}

/// One command of a spawn, read at the root.
///
/// # Safety
/// As for [`string_arg`] and [`argv_arg`].
unsafe fn app_arg(
    command: *const c_char,
    argv: *const *const c_char,
    maxprocs: c_int,
    info: MPI_Info,
    i: usize,
) -> Result<SpawnApp> {
    // SAFETY: per the contract.
    let command = unsafe { string_arg(command, &format!("command {i}"), 0)? }.to_owned();
    // SAFETY: per the contract.
    let args = unsafe { argv_arg(argv, &format!("argv of command {i}"))? };
    if maxprocs <= 0 {
        return Err(Error::new(
            ErrorClass::Arg,
            format!("maxprocs {maxprocs} of command {i} ({command:?}): must be at least 1"),
        ));
    }
    let info = match optional_info(info)? {
        Some(id) => oxmpi_core::info::entries(id)?
            .into_iter()
            .map(|(k, v)| {
                (
                    String::from_utf8_lossy(&k).into_owned(),
                    String::from_utf8_lossy(&v).into_owned(),
                )
            })
            .collect(),
        None => Vec::new(),
    };
    Ok(SpawnApp {
        command,
        maxprocs: maxprocs as u32,
        args,
        info,
    })
}

/// Spawns `apps` (read at the root) and writes the outputs: the intercommunicator, and
/// one code per process asked for at every member, as MPICH does: `MPI_SUCCESS` for each
/// process started, `MPI_ERR_SPAWN` for those the process manager did not start (the
/// `soft` info key lets it start fewer), or the spawn's error class everywhere when it
/// failed. The root's numbers reach the others with the outcome, also of a failed spawn
/// (the array is untouched where the call failed before).
///
/// # Safety
/// `out` non-null and writable; `errcodes` null or holding `nprocs` ints at the root and
/// as many as the root asked for at the others.
unsafe fn spawn_out(
    args: RootArgs<Vec<SpawnApp>>,
    root: c_int,
    id: CommId,
    out: *mut MPI_Comm,
    errcodes: *mut c_int,
    nprocs: usize,
) -> Result<()> {
    let asked = u32::try_from(nprocs).unwrap_or(u32::MAX);
    let (r, counts) = dpm::spawn_counted(args, asked, root, id);
    // The codes are an output at every member (MPI 4.1, MPI_COMM_SPAWN: array_of_errcodes
    // is OUT, not significant only at the root as the inputs are).
    let nprocs = if nprocs > 0 { nprocs } else { counts.asked };
    if !errcodes.is_null() && nprocs > 0 {
        let failed = r.as_ref().err().map_or(0, |e| e.class as c_int);
        let codes = counts.codes(r.is_ok(), ErrorClass::Spawn as c_int, failed);
        // SAFETY: the caller's array holds one int per process (MPI contract).
        let dst = unsafe { std::slice::from_raw_parts_mut(errcodes, nprocs) };
        for (d, c) in dst
            .iter_mut()
            .zip(codes.iter().chain(std::iter::repeat(&failed)))
        {
            *d = *c;
        }
    }
    // SAFETY: per the contract.
    unsafe { put_comm(out, r.as_ref().ok().copied()) };
    r.map(|_| ())
}

mpi_fn! { MPI_Comm_spawn / PMPI_Comm_spawn (command: *const c_char, argv: *const *const c_char, maxprocs: c_int, info: MPI_Info, root: c_int, c: MPI_Comm, intercomm: *mut MPI_Comm, errcodes: *mut c_int) target(convert::target(c)) {
    // SAFETY: NULL (refused) or the caller's writable handle (MPI contract).
    let out = unsafe { new_comm_out(intercomm, "intercomm")? };
    let id = comm(c)?;
    let (args, n) = if is_root(id, root)? {
        // SAFETY: significant at the root: strings and a NULL-terminated argv (MPI contract).
        let a = unsafe { app_arg(command, argv, maxprocs, info, 0) };
        (Some(a.map(|a| vec![a])), maxprocs.max(0) as usize)
    } else {
        (None, 0)
    };
    // SAFETY: `out` checked; errcodes holds maxprocs ints at the root (MPI contract).
    unsafe { spawn_out(args, root, id, out, errcodes, n) }
}}

mpi_fn! { MPI_Comm_spawn_multiple / PMPI_Comm_spawn_multiple (count: c_int, commands: *const *const c_char, argvs: *const *const *const c_char, maxprocs: *const c_int, infos: *const MPI_Info, root: c_int, c: MPI_Comm, intercomm: *mut MPI_Comm, errcodes: *mut c_int) target(convert::target(c)) {
    // SAFETY: NULL (refused) or the caller's writable handle (MPI contract).
    let out = unsafe { new_comm_out(intercomm, "intercomm")? };
    let id = comm(c)?;
    let (args, n) = if is_root(id, root)? {
        let mut total = 0usize;
        let a = (|| {
            if count <= 0 {
                return Err(Error::new(ErrorClass::Arg, format!("count {count}: must be at least 1")));
            }
            for (p, what) in [(commands.is_null(), "array_of_commands"), (maxprocs.is_null(), "array_of_maxprocs"), (infos.is_null(), "array_of_info")] {
                if p {
                    return Err(Error::new(ErrorClass::Arg, format!("null pointer for {what}")));
                }
            }
            let mut apps = Vec::with_capacity(count as usize);
            for i in 0..count as usize {
                // SAFETY: each array holds `count` entries (MPI contract); argvs may be
                // MPI_ARGVS_NULL.
                let app = unsafe {
                    let argv = if argvs.is_null() { std::ptr::null() } else { *argvs.add(i) };
                    app_arg(*commands.add(i), argv, *maxprocs.add(i), *infos.add(i), i)?
                };
                total += app.maxprocs as usize;
                apps.push(app);
            }
            Ok(apps)
        })();
        (Some(a), total)
    } else {
        (None, 0)
    };
    // SAFETY: `out` checked; errcodes holds one int per process at the root (MPI contract).
    unsafe { spawn_out(args, root, id, out, errcodes, n) }
}}
