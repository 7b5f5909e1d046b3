//! `impirun` end to end on loopback: a server and clients as processes, plus a mock
//! foreign client written from the specification's byte layouts (not this crate's
//! encoders). Every process is bounded in time and killed at the end.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

const IMPIRUN: &str = env!("CARGO_BIN_EXE_impirun");
const LIMIT: Duration = Duration::from_secs(30);

/// A child process killed when dropped.
struct Proc {
    child: Option<Child>,
    name: String,
}

impl Drop for Proc {
    fn drop(&mut self) {
        if let Some(c) = self.child.as_mut() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

struct Output {
    code: i32,
    stdout: String,
    stderr: String,
}

impl Proc {
    fn spawn(args: &[&str], env: &[(&str, &str)]) -> Proc {
        let mut cmd = Command::new(IMPIRUN);
        cmd.args(args)
            .env_remove("IMPI_AUTH_KEY")
            .env_remove("IMPI_AUTH_NONE")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for (k, v) in env {
            cmd.env(k, v);
        }
        Proc {
            child: Some(cmd.spawn().unwrap()),
            name: args.join(" "),
        }
    }

    /// Waits (bounded) and collects the output.
    fn finish(mut self) -> Output {
        let mut c = self.child.take().unwrap();
        let out = c.stdout.take();
        let mut err = c.stderr.take().unwrap();
        let t_out = std::thread::spawn(move || {
            let mut s = String::new();
            if let Some(mut out) = out {
                let _ = out.read_to_string(&mut s);
            }
            s
        });
        let t_err = std::thread::spawn(move || {
            let mut s = String::new();
            let _ = err.read_to_string(&mut s);
            s
        });
        let start = Instant::now();
        let status = loop {
            if let Some(s) = c.try_wait().unwrap() {
                break s;
            }
            if start.elapsed() > LIMIT {
                let _ = c.kill();
                let _ = c.wait();
                panic!("impirun {} did not end within {LIMIT:?}", self.name);
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        Output {
            code: status.code().unwrap_or(-1),
            stdout: t_out.join().unwrap(),
            stderr: t_err.join().unwrap(),
        }
    }
}

/// A server on loopback; returns it with its printed address and the rest of its stdout.
fn server(n: u32, extra: &[&str], env: &[(&str, &str)]) -> (Proc, String, mpsc::Receiver<String>) {
    let n = n.to_string();
    let mut args = vec![
        "-server",
        n.as_str(),
        "-bind",
        "127.0.0.1",
        "-timeout",
        "20",
    ];
    args.extend_from_slice(extra);
    let mut p = Proc::spawn(&args, env);
    let out = p.child.as_mut().unwrap().stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(out).lines() {
            let Ok(l) = line else { break };
            if tx.send(l).is_err() {
                break;
            }
        }
    });
    let first = rx
        .recv_timeout(Duration::from_secs(10))
        .expect("server printed no address");
    assert!(first.starts_with("127.0.0.1:"), "{first}");
    (p, first, rx)
}

fn client(rank: u32, addr: &str, np: u32, extra: &[&str], env: &[(&str, &str)]) -> Proc {
    let (r, n) = (rank.to_string(), np.to_string());
    let mut args = vec!["-client", r.as_str(), addr, "-startup-only"];
    args.extend_from_slice(extra);
    args.extend_from_slice(&["-np", n.as_str(), "./a.out"]);
    Proc::spawn(&args, env)
}

const KEY: &[(&str, &str)] = &[("IMPI_AUTH_KEY", "5678")];

#[test]
fn two_clients_start_up_and_shut_down() {
    let (srv, addr, rest) = server(2, &[], KEY);
    let c1 = client(
        1,
        &addr,
        3,
        &["-v", "-datalen", "4000", "-ackmark", "2", "-hiwater", "4"],
        KEY,
    );
    let c0 = client(0, &addr, 2, &["-v"], KEY);
    let (o0, o1) = (c0.finish(), c1.finish());
    assert_eq!(o0.code, 0, "{}", o0.stderr);
    assert_eq!(o1.code, 0, "{}", o1.stderr);
    let s = srv.finish();
    assert_eq!(s.code, 0, "{}", s.stderr);
    // The address is the only line of the server's standard output.
    assert!(rest.try_recv().is_err());
    for o in [&o0, &o1] {
        assert!(o.stdout.contains("IMPI job: 2 clients, version 0.0, maxdatalen 4000, tag_ub 2147483647, coll_xsize 1024, coll_maxlinear 4"), "{}", o.stdout);
        assert!(o
            .stdout
            .contains("client 0: versions 0.0 hosts 1 procs 2 first_rank 0"));
        assert!(o
            .stdout
            .contains("client 1: versions 0.0 hosts 1 procs 3 first_rank 2"));
        assert!(o.stdout.contains("ackmark 2 hiwater 4"));
        assert!(o.stdout.contains("host 0: client 0 address 127.0.0.1 port"));
    }
    assert!(o0
        .stdout
        .contains("impirun: client 0: proc 1 is rank 1 of 5 in MPI_COMM_WORLD"));
    // Two oxmpi clients with the job key authenticate their host connection (extension).
    assert!(
        o0.stdout
            .contains("host connection with host 1 (client 1): authenticated with the job key"),
        "{}",
        o0.stdout
    );
    assert!(
        o1.stdout
            .contains("host connection with host 0 (client 0): authenticated with the job key"),
        "{}",
        o1.stdout
    );
    assert!(o1
        .stdout
        .contains("impirun: client 1: proc 0 is rank 2 of 5 in MPI_COMM_WORLD"));
    assert!(o1
        .stdout
        .contains("impirun: client 1: proc 2 is rank 4 of 5 in MPI_COMM_WORLD"));
}

#[test]
fn wrong_key_is_refused_and_the_job_still_runs() {
    let (srv, addr, _rest) = server(2, &[], KEY);
    let bad = client(0, &addr, 1, &[], &[("IMPI_AUTH_KEY", "1234")]).finish();
    assert_eq!(bad.code, 1);
    assert!(
        bad.stderr
            .contains("Server disconnected (wrong authentication key?"),
        "{}",
        bad.stderr
    );
    let c0 = client(0, &addr, 1, &[], KEY);
    let c1 = client(1, &addr, 1, &[], KEY);
    assert_eq!(c0.finish().code, 0);
    assert_eq!(c1.finish().code, 0);
    let s = srv.finish();
    assert_eq!(s.code, 0);
    assert!(
        s.stderr.contains("wrong authentication key"),
        "{}",
        s.stderr
    );
}

#[test]
fn auth_none_only_when_set_and_with_a_warning() {
    let none: &[(&str, &str)] = &[("IMPI_AUTH_NONE", "")];
    let (srv, addr, _rest) = server(1, &[], none);
    // No method available: the client aborts before connecting.
    let nothing = client(0, &addr, 1, &[], &[]).finish();
    assert_eq!(nothing.code, 1);
    assert!(
        nothing
            .stderr
            .contains("No authentication methods available for negotiation"),
        "{}",
        nothing.stderr
    );
    // A key the server does not offer: no common method.
    let keyed = client(0, &addr, 1, &[], KEY).finish();
    assert_eq!(keyed.code, 1);
    let ok = client(0, &addr, 2, &[], none).finish();
    assert_eq!(ok.code, 0, "{}", ok.stderr);
    let s = srv.finish();
    assert_eq!(s.code, 0);
    assert!(
        s.stderr.contains("no common authentication method"),
        "{}",
        s.stderr
    );
    assert!(
        s.stderr.contains("Warning: client 127.0.0.1:")
            && s.stderr.contains("has authenticated with IMPI_AUTH_NONE"),
        "{}",
        s.stderr
    );
    // A server with no method refuses to start; -auth can exclude NONE.
    let p = Proc::spawn(&["-server", "1", "-bind", "127.0.0.1"], &[]).finish();
    assert_eq!(p.code, 2);
    assert!(p.stderr.contains("No authentication methods available"));
    let p = Proc::spawn(&["-server", "1", "-bind", "127.0.0.1", "-auth", "1"], none).finish();
    assert_eq!(p.code, 2);
}

// ---- a mock foreign client, from the spec's layouts ----

fn cmd(code: &[u8; 4], payload: &[u8]) -> Vec<u8> {
    let mut v = code.to_vec();
    v.extend_from_slice(&(payload.len() as i32).to_be_bytes());
    v.extend_from_slice(payload);
    v
}

fn coll(label: i32, data: &[u8]) -> Vec<u8> {
    let mut p = label.to_be_bytes().to_vec();
    p.extend_from_slice(data);
    cmd(b"COLL", &p)
}

fn read_cmd(s: &mut TcpStream) -> (Vec<u8>, Vec<u8>) {
    let mut h = [0u8; 8];
    s.read_exact(&mut h).unwrap();
    let len = i32::from_be_bytes(h[4..].try_into().unwrap()) as usize;
    let mut p = vec![0u8; len];
    s.read_exact(&mut p).unwrap();
    (h[..4].to_vec(), p)
}

fn mapped_loopback() -> [u8; 16] {
    let mut a = [0u8; 16];
    a[10] = 0xff;
    a[11] = 0xff;
    a[12..].copy_from_slice(&[127, 0, 0, 1]);
    a
}

fn authenticate(addr: &str, key: u64) -> TcpStream {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    s.write_all(&cmd(b"AUTH", &2u32.to_be_bytes())).unwrap();
    let mut sa = [0u8; 8];
    s.read_exact(&mut sa).unwrap();
    assert_eq!(sa, [0, 0, 0, 1, 0, 0, 0, 0], "IMPI_Server_auth {{1, 0}}");
    s.write_all(&key.to_be_bytes()).unwrap();
    s
}

/// A foreign client 1 with one host and two procs, which also submits an extension
/// label the oxmpi client does not know; it goes through the whole startup, the host
/// connection (it is the higher-ranked host, so it connects) and the shutdown.
#[test]
fn foreign_client_with_an_unknown_label() {
    let (srv, addr, _rest) = server(2, &[], KEY);
    let oxmpi = client(0, &addr, 2, &["-v"], KEY);
    let mut s = authenticate(&addr, 5678);
    s.write_all(&cmd(b"IMPI", &1i32.to_be_bytes())).unwrap();
    assert_eq!(
        read_cmd(&mut s),
        (b"IMPI".to_vec(), 2i32.to_be_bytes().to_vec())
    );
    let host = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
    let port = host.local_addr().unwrap().port() as u32;
    let u4 = |v: u32| v.to_be_bytes().to_vec();
    let ip = mapped_loopback();
    let labels: Vec<(i32, Vec<u8>)> = vec![
        (0x1000, [u4(0), u4(0), u4(0), u4(1)].concat()), // versions 0.0 and 0.1
        (0x1100, u4(1)),
        (0x1200, u4(2)),
        (0x1300, u4(1000)),
        (0x1400, u4(40000)),
        (0x1500, (-1i32).to_be_bytes().to_vec()),
        (0x1600, (-1i32).to_be_bytes().to_vec()),
        (0x2000, ip.to_vec()),
        (0x2100, u4(port)),
        (0x2200, u4(2)),
        (0x2300, u4(1)),
        (0x2400, u4(1)),
        (0x2500, b"extension".to_vec()),
        (0x3000, [ip, ip].concat()),
        (0x3100, [7i64.to_be_bytes(), 8i64.to_be_bytes()].concat()),
    ];
    let mut host0 = None;
    for (label, data) in &labels {
        s.write_all(&coll(*label, data)).unwrap();
        // Broadcasts up to and including ours.
        loop {
            let (c, p) = read_cmd(&mut s);
            assert_eq!(c, b"COLL");
            let got = i32::from_be_bytes(p[..4].try_into().unwrap());
            let mask = u32::from_be_bytes(p[4..8].try_into().unwrap());
            if got == 0x2100 {
                host0 = Some(u32::from_be_bytes(p[8..12].try_into().unwrap()));
            }
            if got == 0x2500 {
                assert_eq!(
                    (mask, &p[8..]),
                    (0x2, &b"extension"[..]),
                    "relayed as submitted"
                );
            } else {
                assert_eq!(mask, 0x3, "label 0x{got:x}");
            }
            if got == *label {
                break;
            }
        }
    }
    s.write_all(&cmd(b"DONE", &[])).unwrap();
    // oxmpi's own extension label (relayed like any other), then DONE.
    let mut ext = 0x4F58_4841i32.to_be_bytes().to_vec();
    ext.extend_from_slice(&[0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1]);
    assert_eq!(read_cmd(&mut s), (b"COLL".to_vec(), ext));
    assert_eq!(read_cmd(&mut s), (b"DONE".to_vec(), vec![]));
    // The dance: host 1 connects to host 0 and sends its rank.
    let mut ch = TcpStream::connect(SocketAddr::from((
        Ipv4Addr::LOCALHOST,
        host0.unwrap() as u16,
    )))
    .unwrap();
    ch.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    ch.write_all(&1i32.to_be_bytes()).unwrap();
    // Finalization: our IMPI_PK_FINI (pk_type 7, all else zero), then theirs.
    let mut fini = [0u8; 128];
    fini[3] = 7;
    ch.write_all(&fini).unwrap();
    let mut got = [0u8; 128];
    ch.read_exact(&mut got).unwrap();
    assert_eq!(got, fini);
    drop(ch);
    drop(host);
    s.write_all(&cmd(b"FINI", &[])).unwrap();
    let o = oxmpi.finish();
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(
        o.stdout
            .contains("label 0x2500: client_mask 0x2, 9 bytes (not an IMPI 0.0 label; ignored)"),
        "{}",
        o.stdout
    );
    assert!(
        o.stdout.contains("maxdatalen 1000, tag_ub 40000"),
        "{}",
        o.stdout
    );
    assert!(
        o.stdout
            .contains("client 1: versions 0.0,0.1 hosts 1 procs 2 first_rank 2"),
        "{}",
        o.stdout
    );
    assert!(
        o.stdout
            .contains("proc 3: client 1 host 1 address 127.0.0.1 pid 8"),
        "{}",
        o.stdout
    );
    assert!(
        o.stdout
            .contains("host connection with host 1 (client 1): IMPI 0.0 (unauthenticated)"),
        "{}",
        o.stdout
    );
    let srv = srv.finish();
    assert_eq!(srv.code, 0, "{}", srv.stderr);
}

/// A malformed command from an authenticated client ends the job: the server names the
/// client and the fault, and the waiting oxmpi client exits with an error, no hang.
#[test]
fn malformed_command_ends_the_job() {
    let (srv, addr, _rest) = server(2, &[], KEY);
    let oxmpi = client(0, &addr, 1, &[], KEY);
    let mut s = authenticate(&addr, 5678);
    s.write_all(&cmd(b"IMPI", &[0, 1])).unwrap();
    let o = srv.finish();
    assert_eq!(o.code, 1);
    assert!(
        o.stderr
            .contains("IMPI with len 2 (must be 4); aborting the job"),
        "{}",
        o.stderr
    );
    let c = oxmpi.finish();
    assert_eq!(c.code, 1);
    assert!(
        c.stderr.contains("impirun: client 0: Server disconnected"),
        "{}",
        c.stderr
    );
}

/// Labels out of order, and a client that vanishes before FINI.
#[test]
fn out_of_order_labels_and_a_vanishing_client() {
    let (srv, addr, _rest) = server(1, &[], KEY);
    let mut s = authenticate(&addr, 5678);
    s.write_all(&cmd(b"IMPI", &0i32.to_be_bytes())).unwrap();
    assert_eq!(read_cmd(&mut s).0, b"IMPI");
    s.write_all(&coll(0x1200, &1u32.to_be_bytes())).unwrap();
    let _ = read_cmd(&mut s);
    s.write_all(&coll(0x1100, &1u32.to_be_bytes())).unwrap();
    let o = srv.finish();
    assert_eq!(o.code, 1);
    assert!(
        o.stderr.contains("client 0 (127.0.0.1:")
            && o.stderr.contains("IMPI_C_NHOSTS after IMPI_C_NPROCS"),
        "{}",
        o.stderr
    );

    let (srv, addr, _rest) = server(2, &[], KEY);
    let oxmpi = client(1, &addr, 1, &[], KEY);
    let mut s = authenticate(&addr, 5678);
    s.write_all(&cmd(b"IMPI", &0i32.to_be_bytes())).unwrap();
    assert_eq!(read_cmd(&mut s).0, b"IMPI");
    drop(s);
    let o = srv.finish();
    assert_eq!(o.code, 1);
    assert!(
        o.stderr.contains("client 0") && o.stderr.contains("disconnected before sending FINI"),
        "{}",
        o.stderr
    );
    assert_eq!(oxmpi.finish().code, 1);
}

#[test]
fn startup_timeout_and_usage_errors() {
    let p = Proc::spawn(
        &["-server", "2", "-bind", "127.0.0.1", "-timeout", "1"],
        KEY,
    );
    let o = p.finish();
    assert_eq!(o.code, 1);
    assert!(
        o.stderr.contains("did not complete within 1 s"),
        "{}",
        o.stderr
    );
    for args in [
        &["-server"][..],
        &["-bogus"],
        &["-client", "0", "127.0.0.1:1", "-startup-only"],
    ] {
        let o = Proc::spawn(args, KEY).finish();
        assert_eq!(o.code, 2, "{args:?}: {}", o.stderr);
        assert!(o.stderr.starts_with("impirun: "), "{}", o.stderr);
    }
    // No server there.
    let l = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
    let dead = l.local_addr().unwrap().to_string();
    drop(l);
    let o = client(0, &dead, 1, &[], KEY).finish();
    assert_eq!(o.code, 1);
    assert!(
        o.stderr.contains("cannot connect to the server"),
        "{}",
        o.stderr
    );
}

/// `-port` is honoured, and `-auth 0,1` makes the server prefer IMPI_AUTH_NONE when the
/// client offers both (its warning says so).
#[test]
fn fixed_port_and_preference_list() {
    let l = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
    let port = l.local_addr().unwrap().port().to_string();
    drop(l);
    let both: &[(&str, &str)] = &[("IMPI_AUTH_KEY", "0x162e"), ("IMPI_AUTH_NONE", "1")];
    let (srv, addr, _rest) = server(1, &["-port", &port, "-auth", "0,1"], both);
    assert_eq!(addr, format!("127.0.0.1:{port}"));
    let c = client(0, &addr, 1, &[], both).finish();
    assert_eq!(c.code, 0, "{}", c.stderr);
    let s = srv.finish();
    assert_eq!(s.code, 0);
    assert!(
        s.stderr.contains("has authenticated with IMPI_AUTH_NONE"),
        "{}",
        s.stderr
    );
    // The default order prefers the key: no warning. 0x162e is 5678.
    let (srv, addr, _rest) = server(1, &[], both);
    let c = client(
        0,
        &addr,
        1,
        &[],
        &[("IMPI_AUTH_KEY", "5678"), ("IMPI_AUTH_NONE", "")],
    )
    .finish();
    assert_eq!(c.code, 0, "{}", c.stderr);
    let s = srv.finish();
    assert_eq!(s.code, 0);
    assert!(!s.stderr.contains("IMPI_AUTH_NONE"), "{}", s.stderr);
}

fn read_exact_n(s: &mut TcpStream, n: usize) -> Vec<u8> {
    let mut v = vec![0u8; n];
    s.read_exact(&mut v).unwrap();
    v
}

fn be32(b: &[u8]) -> u32 {
    u32::from_be_bytes(b[..4].try_into().unwrap())
}

/// A 128-byte IMPI_Packet with the given fields, the rest zero.
fn packet(
    kind: u32,
    len: u32,
    src: ([u8; 16], i64),
    dest: ([u8; 16], i64),
    srqid: u64,
    msglen: u64,
) -> [u8; 128] {
    let mut b = [0u8; 128];
    b[0..4].copy_from_slice(&kind.to_be_bytes());
    b[4..8].copy_from_slice(&len.to_be_bytes());
    b[8..24].copy_from_slice(&src.0);
    b[24..32].copy_from_slice(&src.1.to_be_bytes());
    b[32..48].copy_from_slice(&dest.0);
    b[48..56].copy_from_slice(&dest.1.to_be_bytes());
    b[56..64].copy_from_slice(&srqid.to_be_bytes());
    b[72..80].copy_from_slice(&msglen.to_be_bytes());
    b
}

/// A mock server that also plays a foreign client 1 (one host, one proc) drives an oxmpi
/// client 0 and checks every field it sends: the AUTH mask and key, its rank, each label
/// in ascending order with its exact bytes, DONE, the host connection, the
/// finalization (answering a synchronous message with SYNCACK and PROTOACK), and FINI.
/// It also sends an unknown command and an unknown label, which the client ignores.
#[test]
fn mock_server_checks_every_field() {
    let mock = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
    let addr = mock.local_addr().unwrap().to_string();
    let oxmpi = client(
        0,
        &addr,
        2,
        &["-v", "-datalen", "1000", "-ackmark", "1", "-hiwater", "1"],
        KEY,
    );
    mock.set_nonblocking(false).unwrap();
    let (mut s, _) = mock.accept().unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();

    assert_eq!(
        read_exact_n(&mut s, 12),
        cmd(b"AUTH", &[0, 0, 0, 2]),
        "AUTH {{4}} mask 0x0002"
    );
    s.write_all(&[0, 0, 0, 1, 0, 0, 0, 0]).unwrap();
    assert_eq!(
        read_exact_n(&mut s, 8),
        5678u64.to_be_bytes(),
        "IMPI_Auth_key"
    );
    assert_eq!(read_exact_n(&mut s, 12), cmd(b"IMPI", &0i32.to_be_bytes()));
    s.write_all(&cmd(b"XTRA", b"hello")).unwrap();
    s.write_all(&cmd(b"IMPI", &2i32.to_be_bytes())).unwrap();

    let ip = mapped_loopback();
    let mut foreign_host = [0u8; 16];
    foreign_host[10] = 0xff;
    foreign_host[11] = 0xff;
    foreign_host[12..].copy_from_slice(&[127, 0, 0, 1]);
    let foreign_pid = 4242i64;
    let u4 = |v: u32| v.to_be_bytes().to_vec();
    let mut oxmpi_host_port = 0u32;
    let mut pids = Vec::new();
    // (label, check of client 0's data, foreign client 1's data)
    let expected: Vec<(i32, Vec<u8>)> = vec![
        (0x1000, [u4(0), u4(0)].concat()),
        (0x1100, u4(1)),
        (0x1200, u4(2)),
        (0x1300, u4(1000)),
        (0x1400, u4(0x7fff_ffff)),
        (0x1500, u4(u32::MAX)),
        (0x1600, u4(u32::MAX)),
        (0x2000, ip.to_vec()),
        (0x2100, vec![]),
        (0x2200, u4(2)),
        (0x2300, u4(1)),
        (0x2400, u4(1)),
        (0x3000, [ip, ip].concat()),
        (0x3100, vec![]),
        (0x4F58_4841, [u4(1), u4(1)].concat()),
    ];
    let foreign: Vec<Vec<u8>> = vec![
        [u4(0), u4(0)].concat(),
        u4(1),
        u4(1),
        u4(4000),
        u4(32767),
        u4(u32::MAX),
        u4(u32::MAX),
        foreign_host.to_vec(),
        vec![], // port, filled below
        u4(1),
        u4(1),
        u4(1),
        foreign_host.to_vec(),
        foreign_pid.to_be_bytes().to_vec(),
        // The foreign client claims oxmpi's extension too: its host must prove the key.
        [u4(1), u4(1)].concat(),
    ];
    let host1 = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
    let host1_port = host1.local_addr().unwrap().port() as u32;
    for (i, (label, want)) in expected.iter().enumerate() {
        let h = read_exact_n(&mut s, 8);
        assert_eq!(&h[..4], b"COLL");
        let len = be32(&h[4..]) as usize;
        let p = read_exact_n(&mut s, len);
        assert_eq!(be32(&p) as i32, *label, "labels in ascending order");
        let data = &p[4..];
        match label {
            0x2100 => {
                assert_eq!(data.len(), 4);
                oxmpi_host_port = be32(data);
                assert!(oxmpi_host_port > 0 && oxmpi_host_port < 65536);
            }
            0x3100 => {
                assert_eq!(data.len(), 16);
                let a = i64::from_be_bytes(data[..8].try_into().unwrap());
                let b = i64::from_be_bytes(data[8..].try_into().unwrap());
                assert_ne!(a, b, "IMPI_P_PID unique");
                pids = vec![a, b];
            }
            _ => assert_eq!(data, &want[..], "data of label 0x{label:x}"),
        }
        // An extension label of client 1 goes out before IMPI_H_PORT.
        if *label == 0x2100 {
            let mut x = 0x2050i32.to_be_bytes().to_vec();
            x.extend_from_slice(&2u32.to_be_bytes());
            x.extend_from_slice(b"ext");
            s.write_all(&cmd(b"COLL", &x)).unwrap();
        }
        let theirs = if *label == 0x2100 {
            u4(host1_port)
        } else {
            foreign[i].clone()
        };
        let mut out = label.to_be_bytes().to_vec();
        out.extend_from_slice(&3u32.to_be_bytes());
        out.extend_from_slice(data);
        out.extend_from_slice(&theirs);
        s.write_all(&cmd(b"COLL", &out)).unwrap();
    }
    assert_eq!(read_exact_n(&mut s, 8), cmd(b"DONE", &[]));
    s.write_all(&cmd(b"DONE", &[])).unwrap();

    // Rogues first: a rank out of range, then host 1's rank with the wrong key. Each is
    // dropped and the oxmpi host keeps waiting.
    let host0 = ("127.0.0.1", oxmpi_host_port as u16);
    let mut rogue = TcpStream::connect(host0).unwrap();
    rogue.write_all(&7i32.to_be_bytes()).unwrap();
    drop(rogue);
    let mut rogue = TcpStream::connect(host0).unwrap();
    rogue
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    rogue.write_all(&1i32.to_be_bytes()).unwrap();
    let ctx = oxmpi_impi::extension::context(1, 0);
    assert!(oxmpi_impi::extension::SCHEME
        .initiate(&mut rogue, &oxmpi_impi::extension::secret(1234), &ctx)
        .is_err());
    drop(rogue);
    // Host 1 connects to host 0 (oxmpi), sends its rank and proves the key.
    let mut ch = TcpStream::connect(host0).unwrap();
    ch.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    ch.write_all(&1i32.to_be_bytes()).unwrap();
    oxmpi_impi::extension::SCHEME
        .initiate(&mut ch, &oxmpi_impi::extension::secret(5678), &ctx)
        .unwrap();
    // A synchronous 3-byte message to oxmpi's rank 0 that nobody will receive.
    let me = (foreign_host, foreign_pid);
    let them = (ip, pids[0]);
    ch.write_all(&packet(1, 3, me, them, 77, 3)).unwrap();
    ch.write_all(b"abc").unwrap();
    // oxmpi: FINI first, then SYNCACK {srqid 77} and PROTOACK (ackmark 1).
    let mut got = Vec::new();
    for _ in 0..3 {
        got.push(read_exact_n(&mut ch, 128));
    }
    let fini = packet(7, 0, ([0; 16], 0), ([0; 16], 0), 0, 0);
    assert_eq!(got[0], fini.to_vec());
    assert_eq!(got[1], packet(3, 0, them, me, 77, 0).to_vec(), "SYNCACK");
    assert_eq!(got[2], packet(2, 0, them, me, 0, 0).to_vec(), "PROTOACK");
    ch.write_all(&fini).unwrap();
    // oxmpi closes its channel, then sends FINI to the server.
    let mut rest = Vec::new();
    ch.read_to_end(&mut rest).unwrap();
    assert!(rest.is_empty());
    drop(ch);
    assert_eq!(read_exact_n(&mut s, 8), cmd(b"FINI", &[]));
    drop(s);
    drop(host1);
    let o = oxmpi.finish();
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(
        o.stderr
            .contains("ignored unknown command 0x58545241 (5 bytes) from the server"),
        "{}",
        o.stderr
    );
    assert!(
        o.stderr
            .contains("1 unmatched message(s) from host 1 destroyed"),
        "{}",
        o.stderr
    );
    assert!(
        o.stdout
            .contains("label 0x2050: client_mask 0x2, 3 bytes (not an IMPI 0.0 label; ignored)"),
        "{}",
        o.stdout
    );
    assert!(
        o.stdout.contains("maxdatalen 1000, tag_ub 32767"),
        "{}",
        o.stdout
    );
    assert!(
        o.stdout
            .contains("proc 2: client 1 host 1 address 127.0.0.1 pid 4242"),
        "{}",
        o.stdout
    );
    assert!(
        o.stderr
            .contains("sent an invalid rank: host rank 7 is out of range"),
        "{}",
        o.stderr
    );
    assert!(
        o.stderr
            .contains("claims host 1 but failed oxmpi's host authentication"),
        "{}",
        o.stderr
    );
    assert!(
        o.stdout
            .contains("host connection with host 1 (client 1): authenticated with the job key"),
        "{}",
        o.stdout
    );
}

/// A server that accepts and never answers: the client's --timeout ends it with 124.
#[test]
fn silent_server_and_client_timeout() {
    let mock = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
    let addr = mock.local_addr().unwrap().to_string();
    let start = Instant::now();
    let o = client(0, &addr, 1, &["--timeout", "1"], KEY).finish();
    assert_eq!(o.code, 124, "{}", o.stderr);
    assert!(
        o.stderr
            .contains("timed out after 1 s: the startup exchange was at Auth"),
        "{}",
        o.stderr
    );
    assert!(start.elapsed() < Duration::from_secs(10));
    drop(mock);
}

// ---- the data path against a mock foreign host (chapter 3, external32) ----

/// A C program for the oxmpi side of `data_path_in_external32`: world rank 0 (oxmpi)
/// sends to world rank 1 (the mock foreign proc) and receives from it.
const DATA_PROG: &str = r#"
#include <mpi.h>
#include <stdio.h>
int main(int argc, char **argv) {
    int errs = 0, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int v[3] = {1, -2, 0x01020304};
    long l[2] = {-5, 100000};
    double d = 1.5;
    MPI_Send(v, 3, MPI_INT, 1, 7, MPI_COMM_WORLD);
    MPI_Send(l, 2, MPI_LONG, 1, 8, MPI_COMM_WORLD);
    MPI_Ssend(&d, 1, MPI_DOUBLE, 1, 9, MPI_COMM_WORLD);
    int got[2] = {0, 0}, cnt = -1;
    long lg = 0;
    MPI_Status st;
    MPI_Recv(got, 2, MPI_INT, 1, 10, MPI_COMM_WORLD, &st);
    MPI_Get_count(&st, MPI_INT, &cnt);
    if (got[0] != 3 || got[1] != -4 || cnt != 2 || st.MPI_SOURCE != 1) errs++;
    MPI_Recv(&lg, 1, MPI_LONG, MPI_ANY_SOURCE, 11, MPI_COMM_WORLD, &st);
    MPI_Get_count(&st, MPI_LONG, &cnt);
    if (lg != -6 || cnt != 1 || size != 2) errs++;
    printf(errs ? " Found %d errors\n" : " No Errors\n", errs);
    MPI_Finalize();
    return 0;
}
"#;

/// The staged `mpicc`, when the tree has been staged (`make stage`).
fn staged_mpicc() -> Option<std::path::PathBuf> {
    let prefix = std::env::var_os("OXMPI_PREFIX")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| {
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/oxmpi")
        });
    let cc = prefix.join("bin/mpicc");
    cc.exists().then_some(cc)
}

/// One `IMPI_Packet` header field, big-endian, at `off`.
fn field(h: &[u8], off: usize, n: usize) -> u64 {
    h[off..off + n]
        .iter()
        .fold(0u64, |a, &b| a << 8 | u64::from(b))
}

/// A job of an oxmpi client 0 running `prog` (one rank) and a mock foreign client 1
/// (one host, one proc, no oxmpi extension), with the mock server between them.
struct MockJob {
    oxmpi: Proc,
    /// The mock server's connection to the oxmpi client.
    server: TcpStream,
    /// The host channel from the foreign host to the oxmpi rank.
    ch: TcpStream,
    /// The foreign host's listening socket (kept open until the end).
    _host1: TcpListener,
    /// The IMPI_Proc identifiers: (host id, pid) of the foreign proc and oxmpi's rank.
    foreign: ([u8; 16], i64),
    oxmpi_proc: ([u8; 16], i64),
    dir: std::path::PathBuf,
}

/// Compiles `prog` with the staged `mpicc` (None when the tree is not staged) and runs
/// the startup of a [`MockJob`] up to the host connection, the mock server answering
/// every label oxmpi sends with the foreign client's value appended.
fn mock_job(name: &str, prog: &str) -> Option<MockJob> {
    let Some(cc) = staged_mpicc() else {
        eprintln!("{name}: no staged mpicc (run `make stage`); not run");
        return None;
    };
    let dir = std::env::temp_dir().join(format!("impi-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let src = dir.join("prog.c");
    let exe = dir.join("prog");
    std::fs::write(&src, prog).unwrap();
    let ok = Command::new(&cc)
        .arg("-o")
        .arg(&exe)
        .arg(&src)
        .status()
        .unwrap();
    assert!(ok.success(), "mpicc failed");

    let mock = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
    let addr = mock.local_addr().unwrap().to_string();
    let exe_s = exe.to_str().unwrap().to_string();
    let oxmpi = Proc::spawn(
        &[
            "-client", "0", &addr, "-ackmark", "1", "-hiwater", "4", "-np", "1", &exe_s,
        ],
        KEY,
    );
    let (mut s, _) = mock.accept().unwrap();
    s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    assert_eq!(read_exact_n(&mut s, 12), cmd(b"AUTH", &[0, 0, 0, 2]));
    s.write_all(&[0, 0, 0, 1, 0, 0, 0, 0]).unwrap();
    assert_eq!(read_exact_n(&mut s, 8), 5678u64.to_be_bytes());
    assert_eq!(read_exact_n(&mut s, 12), cmd(b"IMPI", &0i32.to_be_bytes()));
    s.write_all(&cmd(b"IMPI", &2i32.to_be_bytes())).unwrap();

    let ip = mapped_loopback();
    let foreign_pid = 77i64;
    let u4 = |v: u32| v.to_be_bytes().to_vec();
    let host1 = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
    let host1_port = host1.local_addr().unwrap().port() as u32;
    let (mut port0, mut pid0) = (0u16, 0i64);
    loop {
        let h = read_exact_n(&mut s, 8);
        if h == cmd(b"DONE", &[]) {
            break;
        }
        assert_eq!(&h[..4], b"COLL");
        let p = read_exact_n(&mut s, be32(&h[4..]) as usize);
        let (label, data) = (be32(&p) as i32, &p[4..]);
        let theirs = match label {
            0x1000 => Some([u4(0), u4(0)].concat()),
            0x1100 | 0x1200 | 0x2200 => Some(u4(1)),
            0x1300 => Some(u4(4000)),
            0x1400 => Some(u4(32767)),
            0x1500 | 0x1600 => Some(u4(u32::MAX)),
            0x2000 | 0x3000 => Some(ip.to_vec()),
            0x2100 => Some(u4(host1_port)),
            // The foreign host acknowledges every 50 packets and takes 100.
            0x2300 => Some(u4(50)),
            0x2400 => Some(u4(100)),
            0x3100 => Some(foreign_pid.to_be_bytes().to_vec()),
            _ => None, // oxmpi's extension label: this client does not submit it
        };
        match label {
            0x2100 => port0 = be32(data) as u16,
            0x3100 => pid0 = i64::from_be_bytes(data[..8].try_into().unwrap()),
            _ => {}
        }
        let mut out = label.to_be_bytes().to_vec();
        out.extend_from_slice(&(if theirs.is_some() { 3u32 } else { 1 }).to_be_bytes());
        out.extend_from_slice(data);
        out.extend_from_slice(&theirs.unwrap_or_default());
        s.write_all(&cmd(b"COLL", &out)).unwrap();
    }
    s.write_all(&cmd(b"DONE", &[])).unwrap();
    let mut ch = TcpStream::connect(("127.0.0.1", port0)).unwrap();
    ch.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    ch.write_all(&1i32.to_be_bytes()).unwrap();
    Some(MockJob {
        oxmpi,
        server: s,
        ch,
        _host1: host1,
        foreign: (ip, foreign_pid),
        oxmpi_proc: (ip, pid0),
        dir,
    })
}

/// A mock server that plays a foreign client 1 (one host, one proc, no oxmpi
/// extension) drives an oxmpi client 0 that runs a program: the program's sends arrive
/// as `DATA`/`DATASYNC` packets whose every header field is checked and whose data is
/// external32 (big-endian, `MPI_LONG` in 4 bytes); the mock answers `SYNCACK`, sends
/// external32 data back (which the program checks in native form), and finalizes the
/// channel with `IMPI_PK_FINI`.
#[test]
fn data_path_in_external32() {
    let Some(job) = mock_job("data", DATA_PROG) else {
        return;
    };
    let MockJob {
        oxmpi,
        server: mut s,
        mut ch,
        _host1,
        foreign: me,
        oxmpi_proc: them,
        dir,
    } = job;
    let (ip, foreign_pid, pid0) = (me.0, me.1, them.1);

    // Reads the next packet other than PROTOACK (checked: oxmpi acknowledges every
    // packet with ackmark 1), with its data.
    let acks = std::cell::Cell::new(0);
    let next = |ch: &mut TcpStream| -> (Vec<u8>, Vec<u8>) {
        loop {
            let h = read_exact_n(ch, 128);
            if field(&h, 0, 4) == 2 {
                assert_eq!(h, packet(2, 0, them, me, 0, 0).to_vec(), "PROTOACK");
                acks.set(acks.get() + 1);
                continue;
            }
            let n = if field(&h, 0, 4) <= 1 {
                field(&h, 4, 4)
            } else {
                0
            };
            let d = read_exact_n(ch, n as usize);
            return (h, d);
        }
    };
    let mut cid = None;
    // (type, tag, external32 bytes)
    let sends: [(u64, u64, Vec<u8>); 3] = [
        (
            0,
            7,
            [1i32, -2, 0x0102_0304]
                .iter()
                .flat_map(|v| v.to_be_bytes())
                .collect(),
        ),
        (
            0,
            8,
            [-5i32, 100_000]
                .iter()
                .flat_map(|v| v.to_be_bytes())
                .collect(),
        ),
        (1, 9, 1.5f64.to_be_bytes().to_vec()),
    ];
    let mut seq = 0;
    let mut sync_srqid = 0;
    for (kind, tag, bytes) in &sends {
        let (h, d) = next(&mut ch);
        seq += 1;
        assert_eq!(
            field(&h, 0, 4),
            *kind,
            "pk_type of the message with tag {tag}"
        );
        assert_eq!(field(&h, 4, 4), bytes.len() as u64, "pk_len");
        assert_eq!(&h[8..24], &ip, "pk_src host id");
        assert_eq!(field(&h, 24, 8) as i64, pid0, "pk_src pid");
        assert_eq!(&h[32..48], &ip, "pk_dest host id");
        assert_eq!(field(&h, 48, 8) as i64, foreign_pid, "pk_dest pid");
        assert_eq!(field(&h, 64, 8), 0, "pk_drqid of a first packet");
        assert_eq!(field(&h, 72, 8), bytes.len() as u64, "pk_msglen");
        assert_eq!(field(&h, 80, 4), 0, "pk_lsrank");
        assert_eq!(field(&h, 84, 4), *tag, "pk_tag");
        let c = field(&h, 88, 8);
        assert_eq!(*cid.get_or_insert(c), c, "one pk_cid for MPI_COMM_WORLD");
        assert_eq!(field(&h, 96, 8), seq, "pk_seqnum");
        assert_eq!(
            &h[104..128],
            &[0u8; 24][..],
            "pk_count, pk_dtype, pk_reserved"
        );
        assert_eq!(&d, bytes, "external32 data of the message with tag {tag}");
        if *kind == 1 {
            sync_srqid = field(&h, 56, 8);
        }
    }
    assert_eq!(acks.get(), 0, "no PROTOACK before this host sent anything");
    let mut syncack = packet(3, 0, me, them, sync_srqid, 0);
    syncack[72..80].fill(0);
    ch.write_all(&syncack).unwrap();
    let cid = cid.unwrap();
    let reply = |tag: i32, seq: u64, data: &[u8]| {
        let mut p = packet(0, data.len() as u32, me, them, 500 + seq, data.len() as u64);
        p[80..84].copy_from_slice(&1i32.to_be_bytes());
        p[84..88].copy_from_slice(&tag.to_be_bytes());
        p[88..96].copy_from_slice(&cid.to_be_bytes());
        p[96..104].copy_from_slice(&seq.to_be_bytes());
        let mut v = p.to_vec();
        v.extend_from_slice(data);
        v
    };
    let ints: Vec<u8> = [3i32, -4].iter().flat_map(|v| v.to_be_bytes()).collect();
    ch.write_all(&reply(10, 1, &ints)).unwrap();
    ch.write_all(&reply(11, 2, &(-6i32).to_be_bytes())).unwrap();
    // MPI_Finalize starts with chapter 4's barrier on MPI_COMM_WORLD (4.24): with one
    // master in each client, each sends one empty message in the world's collective
    // context (pk_cid + 1) with IMPI_BARRIER_TAG. Ours goes first, whatever order the
    // rank uses.
    let mut barrier = reply(110, 3, &[]);
    barrier[88..96].copy_from_slice(&(cid + 1).to_be_bytes());
    ch.write_all(&barrier).unwrap();
    let (h, d) = next(&mut ch);
    assert_eq!(field(&h, 0, 4), 0, "the barrier's pk_type");
    assert_eq!(field(&h, 84, 4), 110, "IMPI_BARRIER_TAG");
    assert_eq!(field(&h, 88, 8), cid + 1, "the world's collective context");
    assert!(d.is_empty(), "an empty barrier message");
    // Each packet is acknowledged (ackmark 1), then the rank finalizes.
    let (h, _) = next(&mut ch);
    assert_eq!(
        acks.get(),
        3,
        "a PROTOACK for each of the three data packets"
    );
    let fini = packet(7, 0, ([0; 16], 0), ([0; 16], 0), 0, 0);
    assert_eq!(h, fini.to_vec(), "IMPI_PK_FINI");
    ch.write_all(&fini).unwrap();
    let mut rest = Vec::new();
    ch.read_to_end(&mut rest).unwrap();
    assert!(rest.is_empty());
    drop(ch);
    assert_eq!(read_exact_n(&mut s, 8), cmd(b"FINI", &[]));
    drop(s);
    let o = oxmpi.finish();
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(
        o.stdout.contains(" No Errors"),
        "{}\n{}",
        o.stdout,
        o.stderr
    );
}

/// The foreign host announces a long message (its first `DATASYNC` carries 4000 of
/// 100000 bytes) and vanishes before the rest: the oxmpi rank reports the channel's
/// end naming the host, and its client ends with an error, in bounded time, without a
/// `FINI` to the server.
#[test]
fn foreign_host_vanishing_mid_message() {
    const PROG: &str = r#"
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    char *b = malloc(100000);
    MPI_Recv(b, 100000, MPI_BYTE, 1, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    printf("received\n");
    MPI_Finalize();
    return 0;
}
"#;
    let Some(mut job) = mock_job("vanish", PROG) else {
        return;
    };
    let mut p = packet(1, 4000, job.foreign, job.oxmpi_proc, 9, 100_000);
    p[80..84].copy_from_slice(&1i32.to_be_bytes());
    p[84..88].copy_from_slice(&5i32.to_be_bytes());
    p[96..104].copy_from_slice(&1u64.to_be_bytes());
    job.ch.write_all(&p).unwrap();
    job.ch.write_all(&[7u8; 4000]).unwrap();
    // Whether or not `pk_cid` 0 is MPI_COMM_WORLD's context here (the receive matches
    // or the message waits), the host goes away with the message unfinished.
    std::thread::sleep(Duration::from_millis(300));
    drop(job.ch);
    let mut rest = Vec::new();
    let _ = job.server.read_to_end(&mut rest);
    assert!(
        !rest.windows(4).any(|w| w == b"FINI"),
        "no FINI after a failed job"
    );
    let o = job.oxmpi.finish();
    let _ = std::fs::remove_dir_all(&job.dir);
    assert_ne!(o.code, 0, "{}", o.stdout);
    assert!(!o.stdout.contains("received"), "{}", o.stdout);
    // A close with oxmpi's answers unread is a reset; either way the error names the
    // host and the channel.
    assert!(
        o.stderr.contains("IMPI host 1 closed its channel")
            || o.stderr
                .contains("IMPI channel to host 1: Connection reset"),
        "{}",
        o.stderr
    );
}
