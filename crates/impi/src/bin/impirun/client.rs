//! `impirun -client`: one IMPI client of oxmpi. It is also the client's one IMPI host:
//! it listens for the host connections, submits its procs' labels, does the
//! connect/accept dance with the other clients' hosts (spec 2.3.8), and at the end runs
//! the finalization on each host channel (spec 3.8) before FINI to the server (spec 2.4).

use std::io::{ErrorKind, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use oxmpi_impi::extension;
use oxmpi_impi::finalize::Finalizer;
use oxmpi_impi::job::{ip_from_bytes, ipv6_bytes};
use oxmpi_impi::packet::{decode_host_rank, encode_host_rank, PacketStream};
use oxmpi_impi::{
    AuthConfig, Client, ClientConfig, Job, LocalClient, LocalHost, LocalProc, Version,
};

use crate::args::ClientArgs;
use crate::launch;

/// How long the host connections may take to form, and each channel's finalization.
const HOST_TIMEOUT: Duration = Duration::from_secs(120);

/// How a failure message starts when mpiexec's `--timeout` expired (exit status 124).
const TIMED_OUT: &str = "timed out";

pub struct Fail(pub String);

impl<E: std::fmt::Display> From<E> for Fail {
    fn from(e: E) -> Fail {
        Fail(e.to_string())
    }
}

pub fn run(a: ClientArgs) -> ExitCode {
    let auth = match AuthConfig::from_env() {
        Ok(x) => x,
        Err(e) => {
            eprintln!("impirun: client {}: {e}", a.rank);
            return ExitCode::from(2);
        }
    };
    if auth.available().is_empty() {
        eprintln!("Error: No authentication methods available for negotiation.\nAborting.");
        return ExitCode::from(1);
    }
    match session(&a, auth) {
        Ok(()) => ExitCode::SUCCESS,
        Err(Fail(m)) => {
            eprintln!("impirun: client {}: {m}", a.rank);
            ExitCode::from(if m.starts_with(TIMED_OUT) { 124 } else { 1 })
        }
    }
}

fn connect_server(addr: &str) -> Result<TcpStream, Fail> {
    let addrs: Vec<SocketAddr> = addr
        .to_socket_addrs()
        .map_err(|e| Fail(format!("server address {addr}: {e}")))?
        .collect();
    let mut last = None;
    for sa in &addrs {
        match TcpStream::connect_timeout(sa, Duration::from_secs(30)) {
            Ok(s) => return Ok(s),
            Err(e) => last = Some(e),
        }
    }
    Err(Fail(match last {
        Some(e) => format!("cannot connect to the server at {addr}: {e}"),
        None => format!("server address {addr} resolves to nothing"),
    }))
}

/// Reads from the server and feeds the state machine until `done` holds (or the
/// deadline of mpiexec's `--timeout` passes).
fn pump(
    s: &mut TcpStream,
    c: &mut Client,
    deadline: Option<(Instant, u64)>,
    done: impl Fn(&Client) -> bool,
) -> Result<(), Fail> {
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let out = c.take_output();
        if !out.is_empty() {
            s.write_all(&out)
                .map_err(|e| Fail(format!("writing to the server: {e}")))?;
        }
        if done(c) {
            return Ok(());
        }
        if let Some((d, secs)) = deadline {
            let left = d.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(Fail(format!(
                    "{TIMED_OUT} after {secs} s: the startup exchange was at {:?}",
                    c.stage()
                )));
            }
            s.set_read_timeout(Some(left))?;
        }
        let n = match s.read(&mut buf) {
            Ok(0) => return Err(Fail(c.closed().0)),
            Ok(n) => n,
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(e)
                if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut)
                    && deadline.is_some() =>
            {
                continue
            }
            Err(e) if e.kind() == ErrorKind::ConnectionReset => return Err(Fail(c.closed().0)),
            Err(e) => return Err(Fail(format!("reading from the server: {e}"))),
        };
        c.received(&buf[..n])
            .map_err(|e| Fail(format!("from the server: {e}")))?;
    }
}

fn session(a: &ClientArgs, auth: AuthConfig) -> Result<(), Fail> {
    let mut server = connect_server(&a.server)?;
    let _ = server.set_nodelay(true);
    // The hosts listen on the address that reaches the server: one host for the whole
    // client with -startup-only, else one per rank (docs/impi.md, "Data path").
    let my_ip = server.local_addr()?.ip();
    let nhosts = if a.startup_only { 1 } else { a.nprocs };
    let mut listeners = Vec::new();
    for _ in 0..nhosts {
        listeners.push(
            TcpListener::bind((my_ip, 0))
                .map_err(|e| Fail(format!("cannot listen on {my_ip}: {e}")))?,
        );
    }
    let ipv6 = ipv6_bytes(my_ip);
    // Proc identifiers: this process's pid in the high half keeps them unique among
    // clients sharing the host; the low half is the proc's index in the client.
    let base = i64::from(std::process::id()) << 32;
    let per_host = a.nprocs / nhosts;
    let mut hosts = Vec::new();
    for (i, l) in listeners.iter().enumerate() {
        hosts.push(LocalHost {
            ipv6,
            port: u32::from(l.local_addr()?.port()),
            ackmark: a.ackmark,
            hiwater: a.hiwater,
            procs: (0..per_host)
                .map(|j| LocalProc {
                    ipv6,
                    pid: base | i64::from(i as u32 * per_host + j),
                })
                .collect(),
        });
    }
    let local = LocalClient {
        versions: vec![Version::V0_0],
        datalen: a.datalen,
        tagub: i32::MAX,
        coll_xsize: a.coll_xsize,
        coll_maxlinear: a.coll_maxlinear,
        hosts,
        extra_labels: Vec::new(),
        host_auth: true,
    };
    let auth_key = auth.key;
    let mut c = Client::new(ClientConfig {
        rank: a.rank,
        auth,
        local,
    })
    .map_err(Fail)?;
    let deadline = a
        .timeout_secs
        .map(|t| (Instant::now() + Duration::from_secs(t), t));
    pump(&mut server, &mut c, deadline, |c| c.job().is_some())?;
    server.set_read_timeout(None)?;
    let job = c.job().unwrap().clone();
    for ign in c.ignored_commands() {
        eprintln!("impirun: client {}: ignored {ign} from the server", a.rank);
    }
    let me = &job.clients[a.rank as usize];
    if a.verbose {
        for line in job.describe().lines() {
            println!("impirun: client {}: {line}", a.rank);
        }
    }
    for i in (0..me.nprocs).filter(|_| a.startup_only) {
        println!(
            "impirun: client {}: proc {i} is rank {} of {} in MPI_COMM_WORLD",
            a.rank,
            me.first_proc + i,
            job.procs.len()
        );
    }
    let _ = std::io::stdout().flush();

    // The key is shared with the other clients only when the server chose IMPI_AUTH_KEY.
    let key = if c.method() == Some(oxmpi_impi::auth::AUTH_KEY) {
        auth_key
    } else {
        None
    };
    let my_hosts: Vec<(u32, TcpListener)> = listeners
        .into_iter()
        .enumerate()
        .map(|(i, l)| (me.first_host + i as u32, l))
        .collect();
    let channels = dance(&job, &my_hosts, key, a.verbose, &mut server, &mut c)?;
    drop(my_hosts);
    if a.startup_only {
        finalize(&job, channels)?;
    } else {
        // The ranks take their channels over and finalize them themselves.
        let status = launch::run(a, &job, channels)?;
        if status != 0 {
            return Err(Fail(format!("the program ended with exit status {status}")));
        }
    }

    c.finish()?;
    server
        .write_all(&c.take_output())
        .map_err(|e| Fail(format!("sending FINI: {e}")))?;
    // Wait (briefly) for the server to close, so that FINI is read before our socket goes.
    let _ = server.shutdown(Shutdown::Write);
    let _ = server.set_read_timeout(Some(Duration::from_secs(5)));
    let mut sink = [0u8; 256];
    while let Ok(n) = server.read(&mut sink) {
        if n == 0 {
            break;
        }
    }
    Ok(())
}

/// One host channel: this client's host, the other host, the connection.
pub struct Channel {
    pub mine: u32,
    pub other: u32,
    pub stream: TcpStream,
}

/// For each of this client's hosts, connects to the lower-ranked hosts of other
/// clients (sending the host's rank) and accepts the higher-ranked ones on its
/// listener, watching the server connection meanwhile (the server closing means the job
/// was aborted). Between two oxmpi clients that share the job key, the connecting host
/// then proves the key ([`extension`]). An accepted connection that sends no valid rank
/// or fails the proof is dropped with a warning: an unauthenticated peer must not end
/// the job.
fn dance(
    job: &Job,
    my_hosts: &[(u32, TcpListener)],
    key: Option<u64>,
    verbose: bool,
    server: &mut TcpStream,
    c: &mut Client,
) -> Result<Vec<Channel>, Fail> {
    let me = job.my_client;
    let authed = extension::host_auth_clients(job);
    // Both ends are oxmpi clients that authenticated with the key.
    let secure = |h: u32| -> Option<[u8; 8]> {
        let other = job.hosts[h as usize].client;
        match key {
            Some(k) if authed[me as usize] && authed[other as usize] => Some(extension::secret(k)),
            _ => None,
        }
    };
    let report = |mine: u32, h: u32, how: &str| {
        if verbose {
            let with = format!(
                "host connection with host {h} (client {}): {how}",
                job.hosts[h as usize].client
            );
            if my_hosts.len() == 1 {
                println!("impirun: client {me}: {with}");
            } else {
                println!("impirun: client {me}: host {mine}: {with}");
            }
        }
    };
    let mut chans = Vec::new();
    let mut waiting: Vec<(u32, u32)> = Vec::new();
    for (my_host, listener) in my_hosts {
        let my_host = *my_host;
        let (connect, accept) = job.dance(my_host);
        waiting.extend(accept.into_iter().map(|h| (my_host, h)));
        listener.set_nonblocking(true)?;
        for h in connect {
            let host = &job.hosts[h as usize];
            let addr = SocketAddr::new(ip_from_bytes(host.ipv6), host.port as u16);
            let mut s =
                TcpStream::connect_timeout(&addr, Duration::from_secs(30)).map_err(|e| {
                    Fail(format!(
                        "connecting to host {h} (client {}) at {addr}: {e}",
                        host.client
                    ))
                })?;
            s.write_all(&encode_host_rank(my_host))
                .map_err(|e| Fail(format!("sending the host rank to host {h} at {addr}: {e}")))?;
            if let Some(secret) = secure(h) {
                s.set_read_timeout(Some(Duration::from_secs(10)))?;
                extension::SCHEME
                    .initiate(&mut s, &secret, &extension::context(my_host, h))
                    .map_err(|e| {
                        Fail(format!(
                            "host {h} at {addr} failed oxmpi's host authentication: {e}"
                        ))
                    })?;
                s.set_read_timeout(None)?;
                report(my_host, h, "authenticated with the job key");
            } else {
                report(my_host, h, "IMPI 0.0 (unauthenticated)");
            }
            let _ = s.set_nodelay(true);
            chans.push(Channel {
                mine: my_host,
                other: h,
                stream: s,
            });
        }
    }
    server.set_nonblocking(true)?;
    let deadline = Instant::now() + HOST_TIMEOUT;
    let mut buf = [0u8; 4096];
    while !waiting.is_empty() {
        let mut idle = true;
        for (my_host, listener) in my_hosts {
            let my_host = *my_host;
            match listener.accept() {
                Ok((mut s, peer)) => {
                    idle = false;
                    s.set_nonblocking(false)?;
                    s.set_read_timeout(Some(Duration::from_secs(10)))?;
                    let mut r = [0u8; 4];
                    let claimed = s
                        .read_exact(&mut r)
                        .map_err(|e| format!("sent no host rank: {e}"))
                        .and_then(|()| decode_host_rank(r, job.hosts.len() as u32).map_err(|e| format!("sent an invalid rank: {}", e.0)))
                        .and_then(|h| {
                            if waiting.contains(&(my_host, h)) {
                                Ok(h)
                            } else {
                                Err(format!(
                                    "says it is host {h}, which is not one host {my_host} still waits for"
                                ))
                            }
                        });
                    let checked = claimed.and_then(|h| match secure(h) {
                        None => Ok((h, "IMPI 0.0 (unauthenticated)")),
                        Some(secret) => match extension::SCHEME.accept(&mut s, &secret) {
                            Ok(ctx) if ctx == extension::context(h, my_host) => {
                                Ok((h, "authenticated with the job key"))
                            }
                            Ok(_) => Err(format!("claims host {h} but proved another connection")),
                            Err(e) => Err(format!(
                                "claims host {h} but failed oxmpi's host authentication: {e}"
                            )),
                        },
                    });
                    match checked {
                        Ok((h, how)) => {
                            waiting.retain(|&w| w != (my_host, h));
                            s.set_read_timeout(None)?;
                            let _ = s.set_nodelay(true);
                            report(my_host, h, how);
                            chans.push(Channel {
                                mine: my_host,
                                other: h,
                                stream: s,
                            });
                        }
                        Err(why) => {
                            eprintln!(
                                "impirun: client {me}: dropped a host connection from {peer}: it {why}"
                            );
                        }
                    }
                }
                Err(e)
                    if e.kind() == ErrorKind::WouldBlock || e.kind() == ErrorKind::Interrupted => {}
                Err(e) => return Err(Fail(format!("accepting host connections: {e}"))),
            }
        }
        match server.read(&mut buf) {
            Ok(0) => return Err(Fail(c.closed().0)),
            Ok(n) => c
                .received(&buf[..n])
                .map_err(|e| Fail(format!("from the server: {e}")))?,
            Err(e) if e.kind() == ErrorKind::WouldBlock || e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return Err(Fail(format!("reading from the server: {e}"))),
        }
        if Instant::now() > deadline {
            let hosts: Vec<u32> = waiting.iter().map(|w| w.1).collect();
            return Err(Fail(format!(
                "hosts {hosts:?} did not connect within {} s",
                HOST_TIMEOUT.as_secs()
            )));
        }
        if idle {
            std::thread::sleep(Duration::from_millis(5));
        }
    }
    server.set_nonblocking(false)?;
    chans.sort_by_key(|c| (c.mine, c.other));
    Ok(chans)
}

/// Sends IMPI_PK_FINI on every channel, then consumes each until the other host's
/// IMPI_PK_FINI, answering with the acknowledgments the protocol requires.
fn finalize(job: &Job, chans: Vec<Channel>) -> Result<(), Fail> {
    let mut states = Vec::new();
    for ch in chans {
        let (h, mut s) = (ch.other, ch.stream);
        let mut f = Finalizer::new(job.hosts[ch.mine as usize].ackmark);
        s.write_all(&f.start().encode())
            .map_err(|e| Fail(format!("sending IMPI_PK_FINI to host {h}: {e}")))?;
        states.push((h, s, f));
    }
    let deadline = Instant::now() + HOST_TIMEOUT;
    let mut buf = vec![0u8; 64 * 1024];
    for (h, s, f) in states.iter_mut() {
        let mut stream = PacketStream::new(job.maxdatalen);
        while !f.complete() {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(Fail(format!(
                    "host {h} did not finish its channel within {} s",
                    HOST_TIMEOUT.as_secs()
                )));
            }
            s.set_read_timeout(Some(left))?;
            let n = match s.read(&mut buf) {
                Ok(0) => {
                    return Err(Fail(format!(
                        "host {h} (client {}) closed its channel before IMPI_PK_FINI (it ended abnormally)",
                        job.hosts[*h as usize].client
                    )))
                }
                Ok(n) => n,
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) => return Err(Fail(format!("reading from host {h}: {e}"))),
            };
            stream.push(&buf[..n]);
            while let Some((p, _data)) = stream
                .next_packet()
                .map_err(|e| Fail(format!("from host {h}: {e}")))?
            {
                for reply in f
                    .on_packet(&p)
                    .map_err(|e| Fail(format!("from host {h}: {e}")))?
                {
                    s.write_all(&reply.encode())
                        .map_err(|e| Fail(format!("writing to host {h}: {e}")))?;
                }
            }
        }
        if f.destroyed > 0 {
            eprintln!(
                "impirun: {} unmatched message(s) from host {h} destroyed at finalization",
                f.destroyed
            );
        }
    }
    // Close gracefully: our side first, then read to the other side's end, so that no
    // unread byte turns the close into a reset that could destroy its IMPI_PK_FINI.
    for (_, mut s, _) in states {
        let _ = s.shutdown(Shutdown::Write);
        let _ = s.set_read_timeout(Some(Duration::from_secs(5)));
        while let Ok(n) = s.read(&mut buf) {
            if n == 0 {
                break;
            }
        }
    }
    Ok(())
}
