//! `impirun` end to end on loopback: a server and clients as processes, plus a mock
//! foreign client written from the specification's byte layouts (not this crate's
//! encoders). Every process is bounded in time and killed at the end.

mod common;

use common::*;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::sync::mpsc;
use std::time::{Duration, Instant};

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
        take(&mut s, 12),
        cmd(b"AUTH", &[0, 0, 0, 2]),
        "AUTH {{4}} mask 0x0002"
    );
    s.write_all(&[0, 0, 0, 1, 0, 0, 0, 0]).unwrap();
    assert_eq!(take(&mut s, 8), 5678u64.to_be_bytes(), "IMPI_Auth_key");
    assert_eq!(take(&mut s, 12), cmd(b"IMPI", &0i32.to_be_bytes()));
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
        let h = take(&mut s, 8);
        assert_eq!(&h[..4], b"COLL");
        let len = be32(&h[4..]) as usize;
        let p = take(&mut s, len);
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
    assert_eq!(take(&mut s, 8), cmd(b"DONE", &[]));
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
    ch.write_all(&Pk::new(DATASYNC, 3, me, them, 77, 3).encode())
        .unwrap();
    ch.write_all(b"abc").unwrap();
    // oxmpi: FINI first, then SYNCACK {srqid 77} and PROTOACK (ackmark 1).
    let mut got = Vec::new();
    for _ in 0..3 {
        got.push(take(&mut ch, 128));
    }
    assert_eq!(got[0], fini().encode().to_vec());
    let syncack = Pk::new(SYNCACK, 0, them, me, 77, 0);
    assert_eq!(got[1], syncack.encode().to_vec(), "SYNCACK");
    let ack = Pk::new(PROTOACK, 0, them, me, 0, 0);
    assert_eq!(got[2], ack.encode().to_vec(), "PROTOACK");
    // oxmpi closes its channel, then sends FINI to the server.
    answer_fini(&mut ch);
    drop(ch);
    expect_client_fini(s);
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
