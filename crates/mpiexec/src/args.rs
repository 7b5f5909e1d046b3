//! Command-line parsing in the MPICH/Hydra style: long options with one dash (two also
//! work), `-opt value` or `-opt=value`, MPMD sections separated by `:`, and everything after
//! a section's program passed through to it untouched.

use crate::hosts::{self, HostSpec};
use std::fmt;
use std::path::PathBuf;

/// Which of mpiexec's own environment variables a rank inherits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EnvMode {
    /// All of them (the default).
    All,
    /// None.
    None,
    /// Only the named ones.
    List(Vec<String>),
}

/// One MPMD section: `-n N [local options] program args...`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AppSpec {
    pub nprocs: u32,
    pub program: String,
    pub args: Vec<String>,
    /// `-env NAME VALUE` settings of this section.
    pub env: Vec<(String, String)>,
    /// `-envall` / `-envnone` / `-envlist`; `None` means the global setting.
    pub env_mode: Option<EnvMode>,
    pub wdir: Option<PathBuf>,
}

/// A parsed launch request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LaunchSpec {
    pub apps: Vec<AppSpec>,
    /// `-genv NAME VALUE` settings for every rank.
    pub genv: Vec<(String, String)>,
    pub genv_mode: EnvMode,
    /// `-l`: prefix output lines with `[rank] `.
    pub label: bool,
    /// `--timeout SECONDS`.
    pub timeout_secs: Option<u64>,
    pub verbose: bool,
    /// `-hosts h1,h2:4`.
    pub hosts: Option<Vec<HostSpec>>,
    /// `-f FILE` (also `-hostfile`, `-machinefile`).
    pub hostfile: Option<PathBuf>,
    /// `-ppn N`: ranks per host in each block.
    pub ppn: Option<u32>,
    /// `-rr`: round-robin placement.
    pub round_robin: bool,
    /// `-launcher NAME` / `-launcher-exec TEMPLATE`.
    pub launcher: Option<String>,
    /// `-usize N`: the universe size the job's processes see (`MPI_UNIVERSE_SIZE`).
    pub universe_size: Option<u32>,
    /// `-nameserver HOST:PORT`: the standalone name server (`oxmpi-nameserver`).
    pub nameserver: Option<String>,
}

impl LaunchSpec {
    /// Total number of ranks.
    pub fn size(&self) -> u64 {
        self.apps.iter().map(|a| u64::from(a.nprocs)).sum()
    }
}

/// What the command line asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Request {
    Run(LaunchSpec),
    Help,
    Version,
    /// Internal: run as the proxy of a multi-host job.
    Proxy {
        head: String,
        id: u32,
    },
}

/// A command-line mistake; the text is shown after `mpiexec: `.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UsageError(pub String);

impl fmt::Display for UsageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Largest accepted `-n`.
pub const MAX_RANKS: u64 = 65536;

pub const HELP: &str = "\
Usage: mpiexec [global options] [local options] PROGRAM [ARGS...] [: [local options] PROGRAM [ARGS...]]...

Starts an MPI job: N copies of PROGRAM, each an MPI rank, on this machine or (with
-hosts or -f) on several hosts, through one proxy per host started by the launcher.
Sections separated by ':' start different programs in one job (MPMD); they get
application numbers 0, 1, ... in order.

Local options (per section):
  -n N, -np N            number of ranks to start (default 1)
  -env NAME VALUE        set an environment variable for the ranks of this section
  -envlist A,B,...       pass only these of mpiexec's environment variables
  -envall / -envnone     pass all / none of mpiexec's environment variables
  -wdir DIR              working directory of the ranks

Global options:
  -genv NAME VALUE       set an environment variable for every rank
  -genvlist A,B,...      pass only these of mpiexec's environment variables to every rank
  -genvall / -genvnone   pass all (default) / none of mpiexec's environment variables
  -l, -prepend-rank      prefix every output line with [rank]
  --timeout SECONDS      end the job with exit code 124 after SECONDS
                         (also MPIEXEC_TIMEOUT in the environment)
  -v, -verbose           print what mpiexec does (also OXMPI_MPIEXEC_VERBOSE=1)
  -nameserver HOST:PORT  answer MPI_Publish_name/Lookup_name/Unpublish_name from the
                         oxmpi-nameserver there (shared by separately started jobs)
                         instead of this job's own table; also OXMPI_NAMESERVER

Several hosts:
  -hosts H1[:N],H2,...   run on these hosts (N: ranks per block on that host, default 1)
  -f, -hostfile FILE     hosts from FILE, one 'host[:slots]' per line, '#' comments
  -ppn N                 N consecutive ranks per host (overrides slots)
  -rr                    round-robin placement: rank r on host r mod hosts
  -usize N               the universe size (MPI_UNIVERSE_SIZE) the job sees; default the
                         host list's slots (a host without :N counts 1), at least -n;
                         spawns with the soft info key fit into its free slots
  -launcher ssh|fork     how proxies start: ssh (default; localhost and this host's
                         name are started directly) or fork (every host is this machine)
  -launcher-exec TMPL    launcher command template, e.g. 'ip netns exec {host}'
                         ({host} is replaced; without it the host is appended);
                         also OXMPI_LAUNCHER. The proxy command follows the template.
                         Proxies connect back to OXMPI_TCP_ADDR / OXMPI_TCP_IF (default:
                         the first non-loopback address) within OXMPI_LAUNCH_TIMEOUT s.
  -h, --help             show this help
  --version              show the oxmpi version

Exit status: 0 when every rank exits 0; otherwise the code of the first failure:
the rank's exit code, the MPI_Abort code, 128+N for a rank killed by signal N (or
mpiexec itself receiving signal N), 124 for --timeout, 1 for a rank that exited
without MPI_Finalize after MPI_Init, 2 for usage or launch errors.
";

/// Checks that `v` has the form `HOST:PORT` (a name server's address).
pub fn check_host_port(v: &str) -> Result<(), String> {
    match v.rsplit_once(':') {
        Some((h, p)) if !h.is_empty() && p.parse::<u16>().is_ok_and(|p| p > 0) => Ok(()),
        _ => Err("not HOST:PORT".into()),
    }
}

#[derive(Default)]
struct Section {
    nprocs: Option<u32>,
    program: Option<String>,
    args: Vec<String>,
    env: Vec<(String, String)>,
    env_mode: Option<EnvMode>,
    wdir: Option<PathBuf>,
}

fn env_name_ok(name: &str) -> bool {
    !name.is_empty() && !name.contains('=') && !name.contains('\0')
}

fn parse_list(opt: &str, v: &str) -> Result<Vec<String>, UsageError> {
    let names: Vec<String> = v
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect();
    if let Some(bad) = names.iter().find(|n| !env_name_ok(n)) {
        return Err(UsageError(format!("{opt}: bad variable name {bad:?}")));
    }
    Ok(names)
}

/// Parses the arguments after the program name.
pub fn parse(args: &[String]) -> Result<Request, UsageError> {
    let mut spec = LaunchSpec {
        apps: Vec::new(),
        genv: Vec::new(),
        genv_mode: EnvMode::All,
        label: false,
        timeout_secs: None,
        verbose: false,
        hosts: None,
        hostfile: None,
        ppn: None,
        round_robin: false,
        launcher: None,
        universe_size: None,
        nameserver: None,
    };
    let mut proxy: (Option<String>, Option<u32>) = (None, None);
    let mut sec = Section::default();
    let mut it = args.iter().peekable();
    while let Some(arg) = it.next() {
        if arg == ":" {
            finish(&mut spec, std::mem::take(&mut sec))?;
            continue;
        }
        if sec.program.is_some() {
            sec.args.push(arg.clone());
            continue;
        }
        if arg.len() < 2 || !arg.starts_with('-') {
            sec.program = Some(arg.clone());
            continue;
        }
        let body = arg.strip_prefix("--").unwrap_or(&arg[1..]);
        let (name, inline) = match body.split_once('=') {
            Some((n, v)) => (n, Some(v.to_owned())),
            None => (body, None),
        };
        let mut value = |what: &str| -> Result<String, UsageError> {
            if let Some(v) = inline.clone() {
                return Ok(v);
            }
            match it.next() {
                Some(v) if v != ":" => Ok(v.clone()),
                _ => Err(UsageError(format!("option {arg} needs {what}"))),
            }
        };
        match name {
            "n" | "np" => {
                let v = value("a number of ranks")?;
                let n: u64 = v
                    .parse()
                    .map_err(|_| UsageError(format!("{arg}: {v:?} is not a number of ranks")))?;
                if n == 0 {
                    return Err(UsageError(format!("{arg} 0: at least one rank is needed")));
                }
                if n > MAX_RANKS {
                    return Err(UsageError(format!(
                        "{arg} {n}: at most {MAX_RANKS} ranks are supported"
                    )));
                }
                sec.nprocs = Some(n as u32);
            }
            "genv" | "env" => {
                if inline.is_some() {
                    return Err(UsageError(format!("{arg} takes two arguments: NAME VALUE")));
                }
                let k = value("NAME VALUE")?;
                let v = value("NAME VALUE")?;
                if !env_name_ok(&k) {
                    return Err(UsageError(format!("{arg}: bad variable name {k:?}")));
                }
                if name == "genv" {
                    spec.genv.push((k, v));
                } else {
                    sec.env.push((k, v));
                }
            }
            "genvlist" => {
                spec.genv_mode = EnvMode::List(parse_list(arg, &value("a list of names")?)?)
            }
            "envlist" => {
                sec.env_mode = Some(EnvMode::List(parse_list(arg, &value("a list of names")?)?))
            }
            "genvall" => spec.genv_mode = EnvMode::All,
            "genvnone" => spec.genv_mode = EnvMode::None,
            "envall" => sec.env_mode = Some(EnvMode::All),
            "envnone" => sec.env_mode = Some(EnvMode::None),
            "wdir" => sec.wdir = Some(PathBuf::from(value("a directory")?)),
            "l" | "label" | "prepend-rank" => spec.label = true,
            "timeout" => {
                let v = value("a number of seconds")?;
                let s: u64 = v.parse().ok().filter(|&s| s > 0).ok_or_else(|| {
                    UsageError(format!("{arg}: {v:?} is not a positive number of seconds"))
                })?;
                spec.timeout_secs = Some(s);
            }
            "v" | "verbose" => spec.verbose = true,
            "hosts" | "host" => {
                spec.hosts = Some(
                    hosts::parse_list(&value("a host list")?)
                        .map_err(|e| UsageError(format!("{arg}: {e}")))?,
                )
            }
            "f" | "hostfile" | "machinefile" => {
                spec.hostfile = Some(PathBuf::from(value("a file name")?))
            }
            "ppn" => {
                let v = value("a number of ranks per host")?;
                let n: u32 = v.parse().ok().filter(|&n| n > 0).ok_or_else(|| {
                    UsageError(format!("{arg}: {v:?} is not a positive number of ranks"))
                })?;
                spec.ppn = Some(n);
            }
            "rr" => spec.round_robin = true,
            "usize" => {
                let v = value("a number of processes")?;
                let n: u32 = v
                    .parse()
                    .ok()
                    .filter(|&n| n > 0 && u64::from(n) <= MAX_RANKS)
                    .ok_or_else(|| {
                        UsageError(format!(
                            "{arg}: {v:?} is not a number of processes from 1 to {MAX_RANKS}"
                        ))
                    })?;
                spec.universe_size = Some(n);
            }
            "nameserver" => {
                let v = value("HOST:PORT")?;
                check_host_port(&v).map_err(|e| UsageError(format!("{arg} {v:?}: {e}")))?;
                spec.nameserver = Some(v);
            }
            "launcher" => {
                let v = value("ssh or fork")?;
                spec.launcher = Some(match v.as_str() {
                    "ssh" => crate::cluster::DEFAULT_LAUNCHER.to_string(),
                    "fork" => "fork".to_string(),
                    _ => {
                        return Err(UsageError(format!(
                            "{arg} {v}: unknown launcher (ssh or fork; or -launcher-exec TEMPLATE)"
                        )))
                    }
                });
            }
            "launcher-exec" => {
                let v = value("a launcher command")?;
                if v.split_whitespace().next().is_none() {
                    return Err(UsageError(format!("{arg}: empty launcher command")));
                }
                spec.launcher = Some(v);
            }
            "proxy" => proxy.0 = Some(value("the head address")?),
            "proxy-id" => {
                let v = value("a proxy number")?;
                proxy.1 = Some(
                    v.parse()
                        .map_err(|_| UsageError(format!("{arg}: {v:?} is not a number")))?,
                );
            }
            "h" | "help" => return Ok(Request::Help),
            "version" => return Ok(Request::Version),
            _ => return Err(UsageError(format!("unknown option {arg}"))),
        }
    }
    if let (Some(head), Some(id)) = (proxy.0.clone(), proxy.1) {
        return Ok(Request::Proxy { head, id });
    }
    if proxy.0.is_some() || proxy.1.is_some() {
        return Err(UsageError("--proxy and --proxy-id go together".into()));
    }
    finish(&mut spec, sec)?;
    Ok(Request::Run(spec))
}

fn finish(spec: &mut LaunchSpec, sec: Section) -> Result<(), UsageError> {
    let program = sec.program.ok_or_else(|| {
        UsageError(if spec.apps.is_empty() {
            "missing program to run".to_owned()
        } else {
            format!("section {} (after ':') has no program", spec.apps.len() + 1)
        })
    })?;
    spec.apps.push(AppSpec {
        nprocs: sec.nprocs.unwrap_or(1),
        program,
        args: sec.args,
        env: sec.env,
        env_mode: sec.env_mode,
        wdir: sec.wdir,
    });
    if spec.size() > MAX_RANKS {
        return Err(UsageError(format!(
            "at most {MAX_RANKS} ranks are supported"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> Result<Request, UsageError> {
        let v: Vec<String> = s.split_whitespace().map(str::to_owned).collect();
        parse(&v)
    }

    fn run(s: &str) -> LaunchSpec {
        match p(s).unwrap() {
            Request::Run(r) => r,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn basic() {
        let r = run("-n 4 ./a.out -n 3 -l x");
        assert_eq!(r.apps.len(), 1);
        assert_eq!(r.apps[0].nprocs, 4);
        assert_eq!(r.apps[0].program, "./a.out");
        assert_eq!(r.apps[0].args, ["-n", "3", "-l", "x"]);
        assert!(!r.label);
    }

    #[test]
    fn option_spellings() {
        let r = run("--np=2 -l --timeout 5 -genv A 1 --genv B x=y prog");
        assert_eq!(r.apps[0].nprocs, 2);
        assert!(r.label);
        assert_eq!(r.timeout_secs, Some(5));
        assert_eq!(
            r.genv,
            [
                ("A".to_owned(), "1".to_owned()),
                ("B".to_owned(), "x=y".to_owned())
            ]
        );
    }

    #[test]
    fn nameserver_address() {
        let r = run("-nameserver 127.0.0.1:6392 -n 2 prog");
        assert_eq!(r.nameserver.as_deref(), Some("127.0.0.1:6392"));
        assert_eq!(run("-n 1 prog").nameserver, None);
        for bad in ["host", ":80", "host:0", "host:99999", "host:x"] {
            let e = p(&format!("-nameserver {bad} prog")).unwrap_err();
            assert!(e.0.contains("not HOST:PORT"), "{bad}: {}", e.0);
        }
    }

    #[test]
    fn genv_name_with_equals_is_rejected() {
        assert!(p("-genv B=x 2 prog").is_err());
    }

    #[test]
    fn mpmd() {
        let r = run("-n 1 -env X 1 ./a : -np 2 -wdir /tmp ./b q");
        assert_eq!(r.apps.len(), 2);
        assert_eq!(r.apps[0].env, [("X".to_owned(), "1".to_owned())]);
        assert_eq!(r.apps[1].nprocs, 2);
        assert_eq!(r.apps[1].args, ["q"]);
        assert_eq!(r.apps[1].wdir, Some(PathBuf::from("/tmp")));
        assert_eq!(r.size(), 3);
    }

    #[test]
    fn env_modes() {
        let r = run("-genvlist PATH,HOME -envnone prog");
        assert_eq!(
            r.genv_mode,
            EnvMode::List(vec!["PATH".into(), "HOME".into()])
        );
        assert_eq!(r.apps[0].env_mode, Some(EnvMode::None));
    }

    #[test]
    fn errors() {
        for (cmd, needle) in [
            ("-n 0 prog", "at least one rank"),
            ("-n x prog", "not a number"),
            ("-n", "needs"),
            ("", "missing program"),
            ("-n 2", "missing program"),
            ("-frob prog", "unknown option -frob"),
            ("prog :", "has no program"),
            ("--timeout 0 prog", "positive"),
            ("-genv A", "needs"),
            ("-n 99999999 prog", "at most"),
        ] {
            let e = p(cmd).unwrap_err();
            assert!(e.0.contains(needle), "{cmd:?}: {e}");
        }
    }

    #[test]
    fn help_and_version() {
        assert_eq!(p("-h").unwrap(), Request::Help);
        assert_eq!(p("--help").unwrap(), Request::Help);
        assert_eq!(p("--version").unwrap(), Request::Version);
        // After the program, -h belongs to the program.
        assert!(matches!(p("prog -h").unwrap(), Request::Run(_)));
    }
}
