//! Spawning from a singleton (a process started without a launcher): it has no process
//! manager to ask, so it starts one, as MPICH does. The launcher is oxmpi's `mpiexec`
//! found next to the library (`<prefix>/lib/libmpi.so.12` → `<prefix>/bin/mpiexec`) or
//! next to the program (Rust programs link the library statically), run as
//! `mpiexec --singleton-spawn` with the spawn request, a new job name and a secret in its
//! environment; it starts the children as a spawned job whose parent is this process.
//!
//! The launcher is this process's child: it ends with this process (parent-death
//! signal, which ends its children), and a thread reaps it. A launcher that ends before
//! the children connected (a program that does not exist, children that failed) makes
//! the spawn fail instead of waiting forever.

use crate::error::{Error, ErrorClass, Result};
use oxmpi_pmi::spawn::SpawnRequest;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};

/// Launchers started so far (names their jobs).
static STARTED: AtomicU32 = AtomicU32::new(0);

fn spawn_err(msg: String) -> Error {
    Error::new(ErrorClass::Spawn, format!("MPI_Comm_spawn: {msg}"))
}

/// The file this code was loaded from: the shared library, or the program.
fn my_object() -> Option<PathBuf> {
    // SAFETY: dladdr only reads the loader's tables for the address of a function of this
    // object, and fills the zeroed struct; dli_fname, when set, is a NUL-terminated string
    // owned by the loader that stays valid while the object is loaded (we copy it at once).
    unsafe {
        let mut info: libc::Dl_info = std::mem::zeroed();
        if libc::dladdr(my_object as *const libc::c_void, &mut info) == 0
            || info.dli_fname.is_null()
        {
            return None;
        }
        let s = std::ffi::CStr::from_ptr(info.dli_fname).to_str().ok()?;
        Some(PathBuf::from(s))
    }
}

/// Where oxmpi's `mpiexec` may be, best first.
fn candidates() -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Some(obj) = my_object().and_then(|p| std::fs::canonicalize(p).ok()) {
        if let Some(dir) = obj.parent() {
            out.push(dir.join("../bin/mpiexec"));
        }
    }
    if let Some(dir) = std::env::current_exe()
        .ok()
        .and_then(|p| p.parent().map(Into::into))
    {
        let dir: PathBuf = dir;
        out.push(dir.join("mpiexec"));
        // cargo puts examples and tests one directory below the binaries.
        out.push(dir.join("../mpiexec"));
    }
    out.dedup();
    out
}

fn is_executable(p: &std::path::Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// A started launcher; [`Launcher::check`] says whether it is still running.
pub struct Launcher {
    child: Option<Child>,
}

impl Launcher {
    /// Starts `mpiexec --singleton-spawn` for `req`.
    pub fn start(req: &SpawnRequest) -> Result<Launcher> {
        let list = candidates();
        let exe = list.iter().find(|p| is_executable(p)).ok_or_else(|| {
            let tried: Vec<String> = list.iter().map(|p| p.display().to_string()).collect();
            spawn_err(format!(
                "this process was started without mpiexec, and oxmpi's mpiexec (which would start the children) is not found (tried {})",
                tried.join(", ")
            ))
        })?;
        let word = oxmpi_pmi::spawn::to_word(req)
            .map_err(|e| spawn_err(format!("the request cannot be encoded: {e}")))?;
        let n = STARTED.fetch_add(1, Ordering::Relaxed) + 1;
        let kvsname = format!("oxmpi-{}-single-s{n}", std::process::id());
        let secret = crate::port::hex(&crate::port::random_key()?);
        let mut cmd = Command::new(exe);
        cmd.arg("--singleton-spawn")
            .env("OXMPI_SPAWN_REQUEST", word)
            .env("OXMPI_SPAWN_KVSNAME", kvsname)
            .env("OXMPI_SPAWN_SECRET", secret)
            .stdin(Stdio::null());
        // SAFETY: the closure runs in the forked child before exec and only calls prctl,
        // which is async-signal-safe, with integer arguments.
        unsafe {
            cmd.pre_exec(|| {
                // The launcher ends its job on SIGTERM; this process's end ends it.
                if libc::prctl(
                    libc::PR_SET_PDEATHSIG,
                    libc::SIGTERM as libc::c_ulong,
                    0,
                    0,
                    0,
                ) != 0
                {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let child = cmd
            .spawn()
            .map_err(|e| spawn_err(format!("cannot run {}: {e}", exe.display())))?;
        Ok(Launcher { child: Some(child) })
    }

    /// An error when the launcher has ended (while the parent still waits for the
    /// children, that means the spawn failed; the launcher printed why).
    pub fn check(&mut self) -> Result<()> {
        let Some(c) = self.child.as_mut() else {
            return Ok(());
        };
        match c.try_wait() {
            Ok(None) => Ok(()),
            Ok(Some(st)) => {
                self.child = None;
                Err(spawn_err(format!(
                    "the launcher (oxmpi's mpiexec) ended ({st}) before the children connected"
                )))
            }
            Err(e) => Err(spawn_err(format!("cannot watch the launcher: {e}"))),
        }
    }
}

impl Drop for Launcher {
    /// Reaps the launcher when it ends, on a thread of its own.
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = std::thread::Builder::new()
                .name("oxmpi-launcher-reaper".into())
                .spawn(move || {
                    let _ = c.wait();
                });
        }
    }
}
