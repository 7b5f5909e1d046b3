//! `mpiexec`: starts an MPI job on this machine and serves PMI to its ranks.
//!
//! This file wires the pieces: [`args`] parses the command line, [`launch`] starts the
//! ranks, [`job`] runs the event loop, [`outcome`] decides the message and exit status,
//! [`shm`] removes leftover shared-memory files, [`cluster`] and [`proxy`] run multi-host
//! jobs, [`spawn`] starts the jobs that a job spawns (within the universe's slots that
//! [`slots`] counts, for the `soft` info key), [`nameclient`] forwards name publishing to
//! a standalone name server.

mod args;
mod auth;
mod cluster;
mod hosts;
mod job;
mod launch;
mod nameclient;
mod outcome;
mod output;
mod proxy;
mod shm;
mod signals;
mod slots;
mod spawn;
mod wire;

use args::{LaunchSpec, Request};
use job::{Job, JobOptions, RankProc};
use launch::{JobIdentity, RankLaunch};
use outcome::Cause;
use oxmpi_pmi::{JobConfig, Server};
use oxmpi_tunables::{Id, Program, Settings};
use std::ffi::OsString;
use std::path::Path;

fn main() {
    let mut args = Vec::new();
    for a in std::env::args_os().skip(1) {
        match a.into_string() {
            Ok(s) => args.push(s),
            Err(a) => {
                eprintln!("mpiexec: argument {a:?} is not valid UTF-8");
                std::process::exit(2);
            }
        }
    }
    std::process::exit(run(&args));
}

pub(crate) fn usage_error(msg: &str) -> i32 {
    eprintln!("mpiexec: {msg}");
    eprintln!("mpiexec: try 'mpiexec --help' for usage");
    2
}

fn run(args: &[String]) -> i32 {
    ensure_standard_fds();
    let singleton;
    let args = if args.len() == 1 && args[0] == spawn::SINGLETON_ARG {
        singleton = match spawn::singleton_command_line() {
            Ok(a) => a,
            Err(e) => return usage_error(&e),
        };
        &singleton[..]
    } else {
        args
    };
    match args::parse(args) {
        Err(e) => usage_error(&e.0),
        Ok(Request::Help) => {
            print!("{}", args::HELP);
            0
        }
        Ok(Request::Version) => {
            println!("mpiexec (oxmpi) {}", env!("CARGO_PKG_VERSION"));
            0
        }
        Ok(Request::Run(spec)) => launch_job(spec),
        Ok(Request::Proxy { head, id }) => proxy::run(&head, id),
    }
}

/// Makes sure descriptors 0, 1 and 2 are open, so that sockets and pipes created later
/// never take those numbers.
fn ensure_standard_fds() {
    for fd in 0..3 {
        // SAFETY: F_GETFD only queries the descriptor table.
        if unsafe { libc::fcntl(fd, libc::F_GETFD) } < 0 {
            let flags = if fd == 0 {
                libc::O_RDONLY
            } else {
                libc::O_WRONLY
            };
            // SAFETY: the path is a NUL-terminated literal; open returns the lowest free
            // descriptor, which is `fd` here.
            unsafe { libc::open(c"/dev/null".as_ptr(), flags) };
        }
    }
}

/// The job's unique PMI name and its secret, from the system's random source; without one
/// the launch fails (exit status 1) rather than run a job whose secret could be guessed.
fn job_name_and_secret() -> Result<(String, String), i32> {
    let made = oxmpi_auth::random_hex(8).and_then(|n| Ok((n, oxmpi_auth::random_hex(16)?)));
    match made {
        Ok((n, secret)) => Ok((format!("oxmpi-{}-{n}", std::process::id()), secret)),
        Err(e) => {
            eprintln!("mpiexec: cannot make the job secret: {e}");
            Err(1)
        }
    }
}

/// Raises the soft open-file limit to the hard one; returns the original limit for the
/// ranks, and the usable count.
fn raise_nofile() -> (Option<libc::rlimit>, u64) {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes into the struct passed by pointer.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } != 0 {
        return (None, 1024);
    }
    let original = lim;
    let mut raised = lim;
    raised.rlim_cur = lim.rlim_max;
    // SAFETY: setrlimit reads the struct passed by pointer.
    if lim.rlim_cur < lim.rlim_max && unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &raised) } == 0
    {
        (Some(original), raised.rlim_cur)
    } else {
        (None, lim.rlim_cur)
    }
}

/// Reads every `OXMPI_*` variable mpiexec reads through the tunables registry; a
/// malformed or out-of-range value is a usage error naming it, before anything starts.
fn read_settings() -> Result<Settings, i32> {
    Settings::from_env_for(Program::Mpiexec).map_err(|e| usage_error(&e.to_string()))
}

fn launch_job(mut spec: LaunchSpec) -> i32 {
    // First, before the environment is read for the ranks: a spawned job's identity.
    let inherited = match spawn::take_inherited() {
        Ok(i) => i,
        Err(e) => return usage_error(&e),
    };
    let settings = match read_settings() {
        Ok(s) => s,
        Err(code) => return code,
    };
    let verbose = spec.verbose || settings.flag(Id::MpiexecVerbose) == Some(true);
    if spec.timeout_secs.is_none() {
        if let Ok(v) = std::env::var("MPIEXEC_TIMEOUT") {
            match v.trim().parse::<u64>() {
                Ok(s) if s > 0 => spec.timeout_secs = Some(s),
                _ => {
                    return usage_error(&format!(
                        "MPIEXEC_TIMEOUT={v:?} is not a positive number of seconds"
                    ))
                }
            }
        }
    }
    if spec.nameserver.is_none() {
        spec.nameserver = settings.text(Id::Nameserver);
        if let Some(ns) = &spec.nameserver {
            if let Err(e) = args::check_host_port(ns) {
                return usage_error(&format!("{}={ns:?}: {e}", Id::Nameserver.name()));
            }
        }
    }
    if let Some(ns) = &spec.nameserver {
        // Jobs this job spawns (a new mpiexec each) inherit the environment: they use the
        // same name server. mpiexec has started no thread yet.
        std::env::set_var(Id::Nameserver.name(), ns);
    }
    let path = std::env::var_os("PATH");
    let mut resolved = Vec::new();
    for app in &spec.apps {
        match launch::resolve_program(&app.program, path.as_ref()) {
            Ok(p) => resolved.push(p),
            Err(e) => return usage_error(&e),
        }
        if let Some(d) = &app.wdir {
            if !d.is_dir() {
                return usage_error(&format!("-wdir {}: not a directory", d.display()));
            }
        }
    }
    if spec.hosts.is_some() || spec.hostfile.is_some() {
        return launch_cluster(spec, verbose, &settings, inherited);
    }
    let size = spec.size();
    let (child_nofile, nofile) = raise_nofile();
    if 4 * size + 32 > nofile {
        return usage_error(&format!(
            "{size} ranks need about {} open files, but the limit is {nofile}",
            4 * size + 32
        ));
    }
    let size = size as u32;
    let (kvsname, secret) = match &inherited {
        Some(i) => (i.kvsname.clone(), i.secret.clone()),
        None => match job_name_and_secret() {
            Ok(x) => x,
            Err(code) => return code,
        },
    };
    let ident = JobIdentity {
        kvsname: kvsname.clone(),
        secret: secret.clone(),
        size,
        spawned: inherited.is_some(),
    };
    let mut cfg = JobConfig::new(kvsname.clone(), size);
    cfg.appnums = spec
        .apps
        .iter()
        .enumerate()
        .flat_map(|(i, a)| std::iter::repeat_n(i as i32, a.nprocs as usize))
        .collect();
    cfg.universe_size = spec.universe_size.unwrap_or(size);
    let mut slots = None;
    if let Some(i) = inherited {
        cfg.preput = i.preput;
        slots = i.slots;
    }
    // A family with a universe size counts its processes there (for `soft`).
    if slots.is_none() {
        if let Some(u) = spec.universe_size {
            match slots::Slots::create(u, size) {
                Ok(s) => slots = Some(s),
                Err(e) => {
                    eprintln!("mpiexec: {e}");
                    return 1;
                }
            }
        }
    }
    let mut server = match Server::new(cfg) {
        Ok(s) => s,
        Err(e) => return usage_error(&e),
    };
    use_nameserver(&mut server, &spec);
    let sigfd = match signals::install() {
        Ok(fd) => fd,
        Err(e) => {
            eprintln!("mpiexec: cannot set up signal handling: {e}");
            return 1;
        }
    };
    let own_env: Vec<(OsString, OsString)> = std::env::vars_os().collect();
    let mut conns = Vec::new();
    for r in 0..size {
        match server.add_connection(Some(r)) {
            Ok(c) => conns.push(c),
            Err(e) => {
                eprintln!("mpiexec: internal error: {e}");
                return 1;
            }
        }
    }
    let mut job = Job::new(
        server,
        sigfd,
        None,
        JobOptions {
            timeout_secs: spec.timeout_secs,
            verbose,
        },
    );
    job.enable_spawn(kvsname.clone(), secret);
    job.spawn_in_slots(slots);
    if verbose {
        eprintln!(
            "mpiexec(verbose): job {kvsname}: {size} ranks, {} application(s)",
            spec.apps.len()
        );
    }
    let mut rank = 0u32;
    'spawn: for (app, path) in spec.apps.iter().zip(&resolved) {
        let env = launch::rank_env(&spec, app, &own_env);
        for _ in 0..app.nprocs {
            let l = RankLaunch {
                rank,
                app,
                resolved: path,
                pgid: job.pgid(),
                stdin_pipe: rank == 0,
                local: (rank, size),
            };
            match launch::spawn_rank(&ident, &l, &env, child_nofile) {
                Ok(st) => {
                    if verbose {
                        eprintln!(
                            "mpiexec(verbose): rank {rank}: pid {} {}",
                            st.pid,
                            path.display()
                        );
                    }
                    if rank == 0 {
                        job.set_stdin(st.stdin);
                    }
                    job.add_rank(RankProc::new(
                        rank,
                        st.pid,
                        conns[rank as usize],
                        st.pmi,
                        st.stdout,
                        st.stderr,
                        spec.label,
                    ));
                }
                Err(e) => {
                    job.fail(Cause::LaunchFailed {
                        rank,
                        program: app.program.clone(),
                        error: e.to_string(),
                    });
                    break 'spawn;
                }
            }
            rank += 1;
        }
    }
    let cause = job.run();
    let removed = shm::remove_leftovers(Path::new("/dev/shm"), &kvsname);
    if verbose && !removed.is_empty() {
        eprintln!(
            "mpiexec(verbose): removed /dev/shm files: {}",
            removed.join(" ")
        );
    }
    cause.map_or(0, |c| c.exit_code())
}

/// Sends the job's name publishing to the standalone name server, if one is named.
pub(crate) fn use_nameserver(server: &mut Server, spec: &LaunchSpec) {
    if let Some(ns) = &spec.nameserver {
        server.set_name_service(Box::new(nameclient::RemoteNames::new(ns.clone())));
    }
}

/// A job on several hosts (see [`cluster`]).
fn launch_cluster(
    mut spec: LaunchSpec,
    verbose: bool,
    settings: &Settings,
    inherited: Option<spawn::Inherited>,
) -> i32 {
    spec.verbose = verbose;
    let hosts = match (&spec.hosts, &spec.hostfile) {
        (Some(h), None) => h.clone(),
        (None, Some(f)) => match std::fs::read_to_string(f) {
            Ok(text) => match hosts::parse_hostfile(&text) {
                Ok(h) => h,
                Err(e) => return usage_error(&format!("hostfile {}: {e}", f.display())),
            },
            Err(e) => return usage_error(&format!("hostfile {}: {e}", f.display())),
        },
        _ => return usage_error("give either -hosts or -f, not both"),
    };
    let placement = if spec.round_robin {
        hosts::Placement::RoundRobin
    } else {
        hosts::Placement::Block { ppn: spec.ppn }
    };
    let launcher = spec
        .launcher
        .clone()
        .or_else(|| settings.text(Id::Launcher))
        .unwrap_or_else(|| cluster::DEFAULT_LAUNCHER.to_string());
    let (kvsname, secret) = match &inherited {
        Some(i) => (i.kvsname.clone(), i.secret.clone()),
        None => match job_name_and_secret() {
            Ok(x) => x,
            Err(code) => return code,
        },
    };
    let plan = cluster::ClusterPlan {
        hosts,
        placement,
        launcher,
        launch_timeout: std::time::Duration::from_secs(
            settings.int(Id::LaunchTimeout).unwrap_or_default().max(1),
        ),
        tcp_addr: settings.ipv4(Id::TcpAddr),
        tcp_if: settings.text(Id::TcpIf),
        proxy_path: settings.text(Id::ProxyPath),
    };
    cluster::run(&spec, &plan, kvsname, secret, inherited)
}
