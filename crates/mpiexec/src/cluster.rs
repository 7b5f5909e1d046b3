//! The head of a multi-host job: places ranks on hosts, starts one proxy per host
//! through the launcher command (ssh by default, any template such as
//! `ip netns exec {host}`), authenticates the proxies' connections with the job secret,
//! sends each its share of the job, and then runs the same [`Job`] loop as a
//! single-host job, with every rank remote: the head serves PMI for the whole job and
//! the proxies relay PMI bytes, output and exits.
//!
//! The secret reaches a proxy on its standard input (never on a command line). A
//! launcher that exits before its proxy connected, a proxy that does not connect in
//! time (`OXMPI_LAUNCH_TIMEOUT`, default 60 s) or a host that goes away later ends the
//! job with a message naming the host.

use crate::args::{AppSpec, LaunchSpec};
use crate::auth;
use crate::hosts::{self, HostSpec, Placement};
use crate::job::{Job, JobOptions, RankProc};
use crate::launch;
use crate::outcome::Cause;
use crate::signals;
use crate::spawn::{self, Inherited, SpawnHosts};
use crate::wire::{AppRun, Msg, ProxySpec};
use nix::poll::{PollFd, PollFlags, PollTimeout};
use oxmpi_pmi::{JobConfig, Server};
use std::ffi::OsString;
use std::io::Write;
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::os::fd::AsFd;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The launcher used when none is given: `{host}` is replaced, the proxy command follows.
pub const DEFAULT_LAUNCHER: &str = "ssh -x -o BatchMode=yes {host}";

/// What a multi-host launch needs besides the [`LaunchSpec`].
pub struct ClusterPlan {
    pub hosts: Vec<HostSpec>,
    pub placement: Placement,
    pub launcher: String,
    /// How long every proxy has to connect (`OXMPI_LAUNCH_TIMEOUT`).
    pub launch_timeout: Duration,
    /// `OXMPI_TCP_ADDR`: where to wait for the proxies (validated by the registry).
    pub tcp_addr: Option<Ipv4Addr>,
    /// `OXMPI_TCP_IF`: the interface whose address the proxies connect to.
    pub tcp_if: Option<String>,
    /// `OXMPI_PROXY_PATH`: the mpiexec to run as proxy; None: this one.
    pub proxy_path: Option<String>,
}

/// The address the proxies connect to: `OXMPI_TCP_ADDR`, else the IPv4 address of
/// `OXMPI_TCP_IF`, else the first non-loopback interface that is up, else 127.0.0.1.
fn head_address(plan: &ClusterPlan) -> Result<Ipv4Addr, String> {
    if let Some(a) = plan.tcp_addr {
        return Ok(a);
    }
    let want = plan.tcp_if.as_deref();
    let mut first = None;
    if let Ok(list) = nix::ifaddrs::getifaddrs() {
        for i in list {
            let Some(ip) = i
                .address
                .as_ref()
                .and_then(|a| a.as_sockaddr_in())
                .map(|s| s.ip())
            else {
                continue;
            };
            match want {
                Some(w) if w == i.interface_name => return Ok(ip),
                Some(_) => {}
                None => {
                    let up = i.flags.contains(nix::net::if_::InterfaceFlags::IFF_UP);
                    if up && !ip.is_loopback() && first.is_none() {
                        first = Some(ip);
                    }
                }
            }
        }
    }
    if let Some(w) = want {
        return Err(format!(
            "OXMPI_TCP_IF={w:?}: no such interface with an IPv4 address"
        ));
    }
    Ok(first.unwrap_or(Ipv4Addr::LOCALHOST))
}

/// The launcher command line for `host`: the template's words with `{host}` replaced
/// (the host appended when the template has no `{host}`), then the proxy command.
pub fn launcher_argv(template: &str, host: &str, proxy: &[String]) -> Vec<String> {
    if template.trim() == "fork" {
        return proxy.to_vec();
    }
    let mut argv: Vec<String> = template
        .split_whitespace()
        .map(|w| w.replace("{host}", host))
        .collect();
    if !template.contains("{host}") {
        argv.push(host.to_string());
    }
    argv.extend(proxy.iter().cloned());
    argv
}

/// `localhost`, a loopback address or this machine's host name.
fn is_this_host(h: &str) -> bool {
    h == "localhost"
        || h.parse::<Ipv4Addr>().is_ok_and(|a| a.is_loopback())
        || nix::unistd::gethostname().is_ok_and(|n| n.to_str() == Some(h))
}

struct Launched {
    host: String,
    child: Child,
    conn: Option<TcpStream>,
}

fn stop_launchers(ls: &mut [Launched]) {
    let deadline = Instant::now() + Duration::from_secs(2);
    for l in ls.iter_mut() {
        while Instant::now() < deadline {
            if let Ok(Some(_)) = l.child.try_wait() {
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        if let Ok(None) = l.child.try_wait() {
            let _ = l.child.kill();
            let _ = l.child.wait();
        }
    }
}

fn app_run(
    spec: &LaunchSpec,
    app: &AppSpec,
    own_env: &[(OsString, OsString)],
    cwd: &str,
) -> AppRun {
    let env = launch::rank_env(spec, app, own_env)
        .into_iter()
        .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
        .collect();
    AppRun {
        program: app.program.clone(),
        args: app.args.clone(),
        env,
        wdir: Some(
            app.wdir
                .as_ref()
                .map_or_else(|| cwd.to_string(), |d| d.to_string_lossy().into_owned()),
        ),
    }
}

/// The universe size of a multi-host job: `-usize`, else the host list's slots (a host
/// without a count has one), but at least the job's size.
fn universe_size(spec: &LaunchSpec, hosts: &[HostSpec], size: u32) -> u32 {
    spec.universe_size.unwrap_or_else(|| {
        let slots: u64 = hosts.iter().map(|h| u64::from(h.slots.unwrap_or(1))).sum();
        slots.clamp(u64::from(size), u64::from(u32::MAX)) as u32
    })
}

/// Runs a multi-host job; returns mpiexec's exit status. `inherited`: the job is a
/// spawned one (its name, secret, preput pairs and, when given, each rank's host).
pub fn run(
    spec: &LaunchSpec,
    plan: &ClusterPlan,
    kvsname: String,
    secret: String,
    inherited: Option<Inherited>,
) -> i32 {
    let verbose = spec.verbose;
    let size = spec.size() as u32;
    let spawned = inherited.is_some();
    let assign = match inherited.as_ref().and_then(|i| i.place.clone()) {
        Some(p) => {
            if p.len() != size as usize || p.iter().any(|&h| h >= plan.hosts.len()) {
                return crate::usage_error("the spawning job's placement does not fit the job");
            }
            p
        }
        None => hosts::place(&plan.hosts, size, plan.placement),
    };
    let mut cfg = JobConfig::new(kvsname.clone(), size);
    cfg.universe_size = universe_size(spec, &plan.hosts, size);
    let mut ready = None;
    let mut slots = None;
    if let Some(i) = inherited {
        cfg.preput = i.preput;
        ready = i.ready;
        slots = i.slots;
    }
    // The host list gives the family its universe size (for `soft`).
    if slots.is_none() {
        match crate::slots::Slots::create(cfg.universe_size, size) {
            Ok(s) => slots = Some(s),
            Err(e) => {
                eprintln!("mpiexec: {e}");
                return 1;
            }
        }
    }
    cfg.appnums = spec
        .apps
        .iter()
        .enumerate()
        .flat_map(|(i, a)| std::iter::repeat_n(i as i32, a.nprocs as usize))
        .collect();
    cfg.process_mapping = hosts::process_mapping(&assign);
    let mut server = match Server::new(cfg.clone()) {
        Ok(s) => s,
        Err(e) => return crate::usage_error(&e),
    };
    crate::use_nameserver(&mut server, spec);
    let ip = match head_address(plan) {
        Ok(ip) => ip,
        Err(e) => return crate::usage_error(&e),
    };
    let bind = if plan.tcp_addr.is_some() {
        ip
    } else {
        Ipv4Addr::UNSPECIFIED
    };
    let listener = match TcpListener::bind((bind, 0)) {
        Ok(l) => l,
        Err(e) => {
            eprintln!("mpiexec: cannot listen for proxies on {bind}: {e}");
            return 1;
        }
    };
    let port = listener.local_addr().map(|a| a.port()).unwrap_or(0);
    let _ = listener.set_nonblocking(true);
    let sigfd = match signals::install() {
        Ok(fd) => fd,
        Err(e) => {
            eprintln!("mpiexec: cannot set up signal handling: {e}");
            return 1;
        }
    };
    let exe = plan
        .proxy_path
        .clone()
        .or_else(|| {
            std::env::current_exe()
                .ok()
                .map(|p| p.to_string_lossy().into_owned())
        })
        .unwrap_or_else(|| "mpiexec".into());
    // Hosts that get at least one rank, in order of first use; proxy id = position.
    let mut used: Vec<usize> = Vec::new();
    for &h in &assign {
        if !used.contains(&h) {
            used.push(h);
        }
    }
    let mut launched: Vec<Launched> = Vec::new();
    for (id, &h) in used.iter().enumerate() {
        let host = plan.hosts[h].name.clone();
        let proxy = vec![
            exe.clone(),
            "--proxy".into(),
            format!("{ip}:{port}"),
            "--proxy-id".into(),
            id.to_string(),
        ];
        // As Hydra does, this machine itself is reached without ssh.
        let template = if plan.launcher == DEFAULT_LAUNCHER && is_this_host(&host) {
            "fork"
        } else {
            plan.launcher.as_str()
        };
        let argv = launcher_argv(template, &host, &proxy);
        if verbose {
            eprintln!(
                "mpiexec(verbose): starting proxy {id} on {host}: {}",
                argv.join(" ")
            );
        }
        let child = Command::new(&argv[0])
            .args(&argv[1..])
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn();
        match child {
            Ok(mut c) => {
                if let Some(mut sin) = c.stdin.take() {
                    let _ = sin.write_all(format!("{secret}\n").as_bytes());
                }
                launched.push(Launched {
                    host,
                    child: c,
                    conn: None,
                });
            }
            Err(e) => {
                let c = Cause::ProxyStart {
                    host,
                    error: format!("cannot run the launcher {:?}: {e}", argv[0]),
                };
                eprintln!("{}", c.message());
                stop_launchers(&mut launched);
                return c.exit_code();
            }
        }
    }
    if let Err(code) = accept_proxies(
        &listener,
        &sigfd,
        &mut launched,
        secret.as_bytes(),
        verbose,
        plan.launch_timeout,
    ) {
        stop_launchers(&mut launched);
        return code;
    }
    drop(listener);
    // A spawned job: its spawning mpiexec answers the spawn now.
    spawn::report_ready(ready);

    let mut job = Job::new(
        {
            // Connections are registered in rank order so that rank r is connection r.
            for r in 0..size {
                if let Err(e) = server.add_connection(Some(r)) {
                    eprintln!("mpiexec: internal error: {e}");
                    return 1;
                }
            }
            server
        },
        sigfd,
        None,
        JobOptions {
            timeout_secs: spec.timeout_secs,
            verbose,
        },
    );
    job.enable_spawn(kvsname.clone(), secret.clone());
    job.spawn_on_hosts(SpawnHosts {
        hosts: plan.hosts.iter().map(|h| h.name.clone()).collect(),
        launcher: plan.launcher.clone(),
        universe_size: cfg.universe_size,
        next: size as usize,
    });
    job.spawn_in_slots(slots);
    let mut proxy_of_host = vec![usize::MAX; plan.hosts.len()];
    for (id, l) in launched.iter_mut().enumerate() {
        let sock = l.conn.take().expect("every proxy connected");
        proxy_of_host[used[id]] = job.add_proxy(l.host.clone(), sock);
    }
    for r in 0..size {
        let p = proxy_of_host[assign[r as usize]];
        job.add_rank(RankProc::remote(r, r as usize, p, spec.label));
    }
    let own_env: Vec<(OsString, OsString)> = std::env::vars_os().collect();
    let cwd = std::env::current_dir()
        .map(|d| d.to_string_lossy().into_owned())
        .unwrap_or_else(|_| "/".into());
    let apps: Vec<AppRun> = spec
        .apps
        .iter()
        .map(|a| app_run(spec, a, &own_env, &cwd))
        .collect();
    let app_of: Vec<u32> = cfg.appnums.iter().map(|&a| a as u32).collect();
    for (id, &h) in used.iter().enumerate() {
        let ranks: Vec<(u32, u32)> = (0..size)
            .filter(|&r| assign[r as usize] == h)
            .map(|r| (r, app_of[r as usize]))
            .collect();
        let stdin_rank0 = assign[0] == h;
        let p = proxy_of_host[h];
        job.send_proxy(
            p,
            &Msg::Spec(ProxySpec {
                kvsname: kvsname.clone(),
                secret: secret.clone(),
                size,
                apps: apps.clone(),
                ranks,
                stdin_rank0,
                spawned,
            }),
        );
        if stdin_rank0 {
            job.set_stdin_proxy(p);
        }
        let _ = id;
    }
    let cause = job.run();
    stop_launchers(&mut launched);
    cause.map_or(0, |c| c.exit_code())
}

/// Waits until every launched proxy connected and proved the secret.
fn accept_proxies(
    listener: &TcpListener,
    sigfd: &nix::sys::signalfd::SignalFd,
    launched: &mut [Launched],
    secret: &[u8],
    verbose: bool,
    timeout: Duration,
) -> Result<(), i32> {
    let deadline = Instant::now() + timeout;
    let fail = |c: Cause| -> i32 {
        eprintln!("{}", c.message());
        c.exit_code()
    };
    while launched.iter().any(|l| l.conn.is_none()) {
        for l in launched.iter_mut() {
            if l.conn.is_none() {
                if let Ok(Some(st)) = l.child.try_wait() {
                    return Err(fail(Cause::ProxyStart {
                        host: l.host.clone(),
                        error: format!("the launcher ended ({st}) before the proxy connected"),
                    }));
                }
            }
        }
        if Instant::now() >= deadline {
            let missing: Vec<&str> = launched
                .iter()
                .filter(|l| l.conn.is_none())
                .map(|l| l.host.as_str())
                .collect();
            return Err(fail(Cause::ProxyStart {
                host: missing.join(","),
                error: format!("no connection within {} s", timeout.as_secs()),
            }));
        }
        let mut fds = [
            PollFd::new(listener.as_fd(), PollFlags::POLLIN),
            PollFd::new(sigfd.as_fd(), PollFlags::POLLIN),
        ];
        let _ = nix::poll::poll(&mut fds, PollTimeout::from(200u16));
        if fds[1].revents().is_some_and(|r| !r.is_empty()) {
            for s in signals::drain(sigfd) {
                if s != libc::SIGCHLD {
                    let c = Cause::Interrupted { signal: s };
                    return Err(fail(c));
                }
            }
        }
        loop {
            let (mut sock, peer): (TcpStream, SocketAddr) = match listener.accept() {
                Ok(x) => x,
                Err(_) => break,
            };
            let _ = sock.set_nonblocking(false);
            let _ = sock.set_nodelay(true);
            let _ = sock.set_read_timeout(Some(Duration::from_secs(10)));
            match auth::head_side(&mut sock, secret) {
                Ok(id)
                    if (id as usize) < launched.len() && launched[id as usize].conn.is_none() =>
                {
                    let _ = sock.set_read_timeout(None);
                    if verbose {
                        eprintln!(
                            "mpiexec(verbose): proxy {id} on {} connected from {peer}",
                            launched[id as usize].host
                        );
                    }
                    launched[id as usize].conn = Some(sock);
                }
                Ok(id) => {
                    eprintln!("mpiexec: refused a connection from {peer}: unexpected proxy id {id}")
                }
                Err(e) => eprintln!("mpiexec: refused a connection from {peer}: {e}"),
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_launcher_is_the_registry_default() {
        let s = oxmpi_tunables::Settings::defaults();
        assert_eq!(
            s.text(oxmpi_tunables::Id::Launcher).as_deref(),
            Some(DEFAULT_LAUNCHER)
        );
    }

    #[test]
    fn launcher_templates() {
        let p = vec!["/bin/mpiexec".to_string(), "--proxy".into()];
        assert_eq!(
            launcher_argv("ip netns exec {host}", "h1", &p),
            ["ip", "netns", "exec", "h1", "/bin/mpiexec", "--proxy"]
        );
        assert_eq!(
            launcher_argv("ssh -p 2222", "node7", &p),
            ["ssh", "-p", "2222", "node7", "/bin/mpiexec", "--proxy"]
        );
    }
}
