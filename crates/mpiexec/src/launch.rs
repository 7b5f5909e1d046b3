//! Starting rank processes: program lookup, each rank's environment, and the fork/exec
//! with a PMI socketpair, stdio pipes, the job's process group and a parent-death signal.

use crate::args::{AppSpec, EnvMode, LaunchSpec};
use nix::sys::socket::{socketpair, AddressFamily, SockFlag, SockType};
use std::ffi::OsString;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Finds `program` the way a shell would: as a path if it contains `/`, else in `PATH`.
pub fn resolve_program(program: &str, path_var: Option<&OsString>) -> Result<PathBuf, String> {
    let check = |p: &Path| -> Result<(), String> {
        let meta = std::fs::metadata(p).map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => format!("program {program:?} not found"),
            _ => format!("program {program:?}: {e}"),
        })?;
        if meta.is_dir() {
            return Err(format!("program {program:?} is a directory"));
        }
        if meta.permissions().mode() & 0o111 == 0
            || nix::unistd::access(p, nix::unistd::AccessFlags::X_OK).is_err()
        {
            return Err(format!("program {program:?} is not executable"));
        }
        Ok(())
    };
    if program.contains('/') {
        let p = PathBuf::from(program);
        check(&p)?;
        return Ok(p);
    }
    let mut last_err = None;
    if let Some(paths) = path_var {
        for dir in std::env::split_paths(paths) {
            let dir = if dir.as_os_str().is_empty() {
                PathBuf::from(".")
            } else {
                dir
            };
            let cand = dir.join(program);
            if cand.exists() {
                match check(&cand) {
                    Ok(()) => return Ok(cand),
                    Err(e) => last_err = Some(e),
                }
            }
        }
    }
    Err(last_err.unwrap_or_else(|| format!("program {program:?} not found in PATH")))
}

/// Variables a launcher above us may have set that must not reach our ranks.
const FOREIGN_PMI_VARS: &[&str] = &[
    "PMI_PORT",
    "PMI_ID",
    "PMI_JOBID",
    "PMI_VERSION",
    "PMI_SUBVERSION",
    "PMI2_SUN_PATH",
    "HYDI_CONTROL_FD",
    "PMIX_RANK",
    "PMIX_NAMESPACE",
    "PMIX_SERVER_URI2",
    "PMIX_SERVER_URI21",
    "PMIX_SERVER_URI3",
    "PMIX_SERVER_URI4",
];

/// Job-wide facts every rank's environment carries.
#[derive(Debug, Clone)]
pub struct JobIdentity {
    pub kvsname: String,
    pub secret: String,
    pub size: u32,
    /// Started by a spawn (`PMI_SPAWNED=1`).
    pub spawned: bool,
}

/// One rank to start.
pub struct RankLaunch<'a> {
    pub rank: u32,
    pub app: &'a AppSpec,
    pub resolved: &'a Path,
    /// Process group to join; `None` for the first rank, which creates it.
    pub pgid: Option<i32>,
    /// Give the rank a pipe for stdin (rank 0) instead of /dev/null.
    pub stdin_pipe: bool,
    /// (index among the ranks on this host, number of ranks on this host).
    pub local: (u32, u32),
}

/// A started rank and mpiexec's ends of its channels.
#[derive(Debug)]
pub struct Started {
    pub pid: i32,
    pub pmi: OwnedFd,
    pub stdout: OwnedFd,
    pub stderr: OwnedFd,
    pub stdin: Option<OwnedFd>,
}

/// The environment a rank gets, besides the PMI variables added at spawn.
pub fn rank_env(
    spec: &LaunchSpec,
    app: &AppSpec,
    own_env: &[(OsString, OsString)],
) -> Vec<(OsString, OsString)> {
    let mode = app.env_mode.as_ref().unwrap_or(&spec.genv_mode);
    let mut env: Vec<(OsString, OsString)> = match mode {
        EnvMode::All => own_env.to_vec(),
        EnvMode::None => Vec::new(),
        EnvMode::List(names) => own_env
            .iter()
            .filter(|(k, _)| names.iter().any(|n| k == n.as_str()))
            .cloned()
            .collect(),
    };
    env.retain(|(k, _)| !FOREIGN_PMI_VARS.iter().any(|f| k == f));
    let mut set = |k: &str, v: &str| {
        env.retain(|(ek, _)| ek != k);
        env.push((k.into(), v.into()));
    };
    for (k, v) in spec.genv.iter().chain(&app.env) {
        set(k, v);
    }
    env
}

/// Starts one rank.
pub fn spawn_rank(
    job: &JobIdentity,
    launch: &RankLaunch<'_>,
    env: &[(OsString, OsString)],
    child_nofile: Option<libc::rlimit>,
) -> std::io::Result<Started> {
    let (ours, theirs) = socketpair(
        AddressFamily::Unix,
        SockType::Stream,
        None,
        SockFlag::SOCK_CLOEXEC,
    )?;
    let child_fd: RawFd = theirs.as_raw_fd();
    let parent_pid = std::process::id() as libc::pid_t;

    let mut cmd = Command::new(launch.resolved);
    cmd.arg0(&launch.app.program)
        .args(&launch.app.args)
        .env_clear()
        .envs(env.iter().map(|(k, v)| (k, v)))
        .env("PMI_FD", child_fd.to_string())
        .env("PMI_RANK", launch.rank.to_string())
        .env("PMI_SIZE", job.size.to_string())
        .env("PMI_SPAWNED", if job.spawned { "1" } else { "0" })
        .env("OXMPI_KVSNAME", &job.kvsname)
        .env("OXMPI_JOB_SECRET", &job.secret)
        .env("MPI_LOCALNRANKS", launch.local.1.to_string())
        .env("MPI_LOCALRANKID", launch.local.0.to_string())
        .stdin(if launch.stdin_pipe {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(launch.pgid.unwrap_or(0));
    if let Some(dir) = &launch.app.wdir {
        cmd.current_dir(dir);
    }
    // SAFETY: the closure runs in the forked child before exec and only makes
    // async-signal-safe system calls (prctl, getppid, kill, sigprocmask, signal, fcntl,
    // setrlimit) on plain integers; it allocates nothing and takes no locks.
    unsafe {
        cmd.pre_exec(move || {
            if libc::prctl(
                libc::PR_SET_PDEATHSIG,
                libc::SIGKILL as libc::c_ulong,
                0,
                0,
                0,
            ) != 0
            {
                return Err(std::io::Error::last_os_error());
            }
            if libc::getppid() != parent_pid {
                // mpiexec died between fork and prctl.
                libc::kill(libc::getpid(), libc::SIGKILL);
            }
            let mut empty: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut empty);
            libc::sigprocmask(libc::SIG_SETMASK, &empty, std::ptr::null_mut());
            libc::signal(libc::SIGPIPE, libc::SIG_DFL);
            if libc::fcntl(child_fd, libc::F_SETFD, 0) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            if let Some(lim) = child_nofile {
                libc::setrlimit(libc::RLIMIT_NOFILE, &lim);
            }
            Ok(())
        });
    }
    let mut child = cmd.spawn()?;
    drop(theirs);
    let take = |o: Option<OwnedFd>| o.ok_or_else(|| std::io::Error::other("missing stdio pipe"));
    let started = Started {
        pid: child.id() as i32,
        pmi: ours,
        stdout: take(child.stdout.take().map(OwnedFd::from))?,
        stderr: take(child.stderr.take().map(OwnedFd::from))?,
        stdin: child.stdin.take().map(OwnedFd::from),
    };
    // The Child handle is dropped without waiting: the job loop reaps by pid.
    Ok(started)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolve() {
        let path = Some(OsString::from("/nonexistent:/bin:/usr/bin"));
        assert!(resolve_program("sh", path.as_ref())
            .unwrap()
            .ends_with("sh"));
        assert!(resolve_program("no-such-program-xyz", path.as_ref())
            .unwrap_err()
            .contains("not found"));
        let f = std::env::temp_dir().join(format!("oxmpi-resolve-{}", std::process::id()));
        std::fs::write(&f, "data").unwrap();
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o644)).unwrap();
        assert!(resolve_program(f.to_str().unwrap(), None)
            .unwrap_err()
            .contains("not executable"));
        std::fs::remove_file(&f).unwrap();
        assert!(resolve_program("/tmp", None)
            .unwrap_err()
            .contains("directory"));
        assert!(resolve_program("./nope/x", None)
            .unwrap_err()
            .contains("not found"));
    }

    #[test]
    fn env_composition() {
        let spec = match crate::args::parse(
            &["-genv", "A", "g", "-env", "B", "l", "prog"].map(String::from),
        )
        .unwrap()
        {
            crate::args::Request::Run(s) => s,
            _ => unreachable!(),
        };
        let own = vec![
            (OsString::from("PATH"), OsString::from("/bin")),
            (OsString::from("A"), OsString::from("old")),
            (OsString::from("PMI_PORT"), OsString::from("h:1")),
        ];
        let env = rank_env(&spec, &spec.apps[0], &own);
        let get = |k: &str| env.iter().find(|(ek, _)| ek == k).map(|(_, v)| v.clone());
        assert_eq!(get("A"), Some("g".into()));
        assert_eq!(get("B"), Some("l".into()));
        assert_eq!(get("PATH"), Some("/bin".into()));
        assert_eq!(get("PMI_PORT"), None);

        let mut spec2 = spec.clone();
        spec2.genv_mode = EnvMode::List(vec!["PATH".into()]);
        let env = rank_env(&spec2, &spec2.apps[0], &own);
        assert_eq!(env.len(), 3); // PATH + A + B
    }
}
