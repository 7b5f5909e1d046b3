//! `impirun -server`: the server state machine over TCP. One thread accepts, one thread
//! per connection reads; the main thread owns the state machine and writes.

use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::{IpAddr, Ipv4Addr, Shutdown, SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::process::ExitCode;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use oxmpi_impi::{Action, AuthConfig, ConnId, Server, ServerConfig};

use crate::args::ServerArgs;

/// How long a connection may take to authenticate before it is closed.
const AUTH_TIMEOUT: Duration = Duration::from_secs(30);

enum Event {
    Connected(ConnId, TcpStream, SocketAddr),
    Data(ConnId, Vec<u8>),
    Closed(ConnId),
    AcceptFailed(String),
}

/// The address to print when listening on all addresses: the first non-loopback IPv4
/// address of the host name, else loopback.
fn local_ip() -> IpAddr {
    let name = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default();
    let name = name.trim();
    if !name.is_empty() {
        if let Ok(addrs) = (name, 0).to_socket_addrs() {
            for a in addrs {
                if let IpAddr::V4(v4) = a.ip() {
                    if !v4.is_loopback() && !v4.is_unspecified() {
                        return a.ip();
                    }
                }
            }
        }
    }
    IpAddr::V4(Ipv4Addr::LOCALHOST)
}

pub fn run(a: ServerArgs) -> ExitCode {
    let auth = match AuthConfig::from_env() {
        Ok(x) => x,
        Err(e) => {
            eprintln!("impirun: server: {e}");
            return ExitCode::from(2);
        }
    };
    let mut sm = match Server::new(ServerConfig {
        nclients: a.count,
        auth,
        preference: a.auth.clone(),
    }) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("Error: {e}.\nAborting.");
            return ExitCode::from(2);
        }
    };
    let bind_ip = a.bind.unwrap_or(IpAddr::V4(Ipv4Addr::UNSPECIFIED));
    let listener = match TcpListener::bind((bind_ip, a.port)) {
        Ok(l) => l,
        Err(e) => {
            eprintln!(
                "impirun: server: cannot listen on {bind_ip}:{}: {e}",
                a.port
            );
            return ExitCode::from(1);
        }
    };
    let port = listener.local_addr().map(|x| x.port()).unwrap_or(a.port);
    let shown = if bind_ip.is_unspecified() {
        local_ip()
    } else {
        bind_ip
    };
    // The one line of standard output (scripts read it with `head -1`).
    println!("{shown}:{port}");
    let _ = std::io::stdout().flush();

    let (tx, rx) = mpsc::channel::<Event>();
    {
        let tx = tx.clone();
        std::thread::spawn(move || {
            let mut next: ConnId = 0;
            loop {
                match listener.accept() {
                    Ok((s, peer)) => {
                        let id = next;
                        next += 1;
                        let Ok(reader) = s.try_clone() else { continue };
                        if tx.send(Event::Connected(id, s, peer)).is_err() {
                            return;
                        }
                        let tx = tx.clone();
                        std::thread::spawn(move || read_loop(id, reader, tx));
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(e) if e.raw_os_error() == Some(24) || e.raw_os_error() == Some(23) => {
                        // Out of descriptors: wait rather than spin.
                        std::thread::sleep(Duration::from_millis(100));
                    }
                    Err(e) => {
                        let _ = tx.send(Event::AcceptFailed(e.to_string()));
                        return;
                    }
                }
            }
        });
    }
    drop(tx);

    let deadline = a
        .timeout_secs
        .map(|t| Instant::now() + Duration::from_secs(t));
    let mut streams: HashMap<ConnId, TcpStream> = HashMap::new();
    // Connections that have not authenticated yet, and since when.
    let mut unauthenticated: HashMap<ConnId, Instant> = HashMap::new();
    loop {
        let now = Instant::now();
        if let Some(d) = deadline {
            if !sm.startup_complete() && now >= d {
                eprintln!(
                    "impirun: server: the startup exchange did not complete within {} s; aborting the job",
                    a.timeout_secs.unwrap()
                );
                close_all(&streams);
                return ExitCode::from(1);
            }
        }
        unauthenticated.retain(|id, since| {
            if sm.authenticated(*id) || !streams.contains_key(id) {
                return false;
            }
            if now.duration_since(*since) < AUTH_TIMEOUT {
                return true;
            }
            eprintln!(
                "impirun: server: connection {id} did not authenticate within {} s; closed",
                AUTH_TIMEOUT.as_secs()
            );
            if let Some(s) = streams.get(id) {
                let _ = s.shutdown(Shutdown::Both);
            }
            false
        });
        // Wake up at least every 100 ms for the deadlines above.
        let ev = match rx.recv_timeout(Duration::from_millis(100)) {
            Ok(ev) => ev,
            Err(mpsc::RecvTimeoutError::Timeout) => continue,
            Err(mpsc::RecvTimeoutError::Disconnected) => return ExitCode::from(1),
        };
        match ev {
            Event::Connected(id, s, peer) => {
                let _ = s.set_nodelay(true);
                let _ = s.set_write_timeout(Some(Duration::from_secs(60)));
                streams.insert(id, s);
                unauthenticated.insert(id, Instant::now());
                sm.connected(id, peer.to_string());
            }
            Event::Data(id, b) => sm.received(id, &b),
            Event::Closed(id) => {
                streams.remove(&id);
                sm.closed(id);
            }
            Event::AcceptFailed(e) => {
                eprintln!("impirun: server: accept failed: {e}");
                close_all(&streams);
                return ExitCode::from(1);
            }
        }
        while let Some(act) = sm.poll_action() {
            match act {
                Action::Send(id, bytes) => {
                    let ok = streams.get_mut(&id).map(|s| s.write_all(&bytes));
                    if let Some(Err(e)) = ok {
                        eprintln!("impirun: server: writing to connection {id}: {e}");
                        if let Some(s) = streams.remove(&id) {
                            let _ = s.shutdown(Shutdown::Both);
                        }
                        sm.closed(id);
                    }
                }
                Action::Reject { conn, reason } => {
                    eprintln!("impirun: server: rejected {reason}");
                    if let Some(s) = streams.remove(&conn) {
                        let _ = s.shutdown(Shutdown::Both);
                    }
                }
                Action::Warn(w) => eprintln!("impirun: server: {w}"),
                Action::Abort(m) => {
                    eprintln!("impirun: server: {m}; aborting the job");
                    close_all(&streams);
                    return ExitCode::from(1);
                }
                Action::Finished => {
                    close_all(&streams);
                    return ExitCode::SUCCESS;
                }
            }
        }
    }
}

fn close_all(streams: &HashMap<ConnId, TcpStream>) {
    for s in streams.values() {
        let _ = s.shutdown(Shutdown::Both);
    }
}

fn read_loop(id: ConnId, mut s: TcpStream, tx: mpsc::Sender<Event>) {
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        match s.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                if tx.send(Event::Data(id, buf[..n].to_vec())).is_err() {
                    return;
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => break,
        }
    }
    let _ = tx.send(Event::Closed(id));
}
