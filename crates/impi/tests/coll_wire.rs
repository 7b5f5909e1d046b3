//! Chapter 4 on the wire: a mock foreign client (one host, one proc: world rank 2),
//! written from the specification's byte layouts, joins an oxmpi client of two ranks
//! that runs `tests/impi/progs/coll_wire.c`, and checks every packet the oxmpi ranks
//! send it: `pk_cid` (1 for `MPI_COMM_WORLD`'s collectives, the agreed id plus one for
//! a duplicate), `pk_tag` (4.25), `pk_lsrank`, and that only the master (rank 0) of
//! the oxmpi client talks to it. It answers as an IMPI 0.0 implementation would.
//!
//! Needs the staged prefix (`make stage`: `target/oxmpi`, or `OXMPI_PREFIX`) for
//! `impirun`, `mpiexec` and `mpicc`; without it the test says so and passes.

mod common;

use common::*;
use std::io::{Read, Write};
use std::net::{Ipv4Addr, TcpListener, TcpStream};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const TIMEOUT: Duration = Duration::from_secs(60);

/// A child process killed when dropped.
struct Kid(std::process::Child);

impl Drop for Kid {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The next packet other than a `PROTOACK`, with its data.
fn next_packet(ch: &mut TcpStream) -> (Pk, Vec<u8>) {
    loop {
        let (p, data) = read_packet(ch);
        if p.kind != PROTOACK {
            return (p, data);
        }
    }
}

/// The mock's end of one channel: its own proc, the oxmpi proc, the counters.
struct Chan {
    s: TcpStream,
    me: ([u8; 16], i64),
    them: ([u8; 16], i64),
    sent: u64,
}

impl Chan {
    /// Sends a message of the collective context `cid` with `tag` as world rank 2.
    fn send(&mut self, cid: u64, tag: i32, data: &[u8]) {
        self.sent += 1;
        let p = Pk {
            lsrank: 2,
            tag,
            cid,
            seq: self.sent,
            ..Pk::new(
                DATA,
                data.len() as u32,
                self.me,
                self.them,
                self.sent,
                data.len() as u64,
            )
        };
        self.s.write_all(&p.encode()).unwrap();
        self.s.write_all(data).unwrap();
    }

    /// Receives the next data packet and checks its envelope (sender rank 0).
    fn expect(&mut self, cid: u64, tag: i32, len: usize, what: &str) -> Vec<u8> {
        let (p, data) = next_packet(&mut self.s);
        assert_eq!(p.kind, 0, "{what}: a DATA packet: {p:?}");
        assert_eq!(
            (p.src, p.dest, p.lsrank, p.tag, p.cid, p.msglen, data.len()),
            (self.them, self.me, 0, tag, cid, len as u64, len),
            "{what}: {p:?}"
        );
        data
    }
}

#[test]
fn bcast_reduce_dup_and_barriers_send_what_chapter_4_says() {
    let pre = prefix();
    let (impirun, mpicc) = (pre.join("bin/impirun"), pre.join("bin/mpicc"));
    if !impirun.exists() || !mpicc.exists() {
        eprintln!(
            "coll_wire: no staged oxmpi at {} (make stage); skipped",
            pre.display()
        );
        return;
    }
    let dir = std::env::temp_dir().join(format!("oxmpi-coll-wire-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let prog = dir.join("coll_wire");
    let src = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/impi/progs/coll_wire.c");
    let cc = Command::new(&mpicc)
        .arg("-o")
        .arg(&prog)
        .arg(&src)
        .status()
        .unwrap();
    assert!(cc.success(), "mpicc failed");

    let mut server = Command::new(&impirun);
    server
        .args(["-server", "2", "-bind", "127.0.0.1", "-timeout", "60"])
        .env("IMPI_AUTH_KEY", "5678")
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let mut server = Kid(server.spawn().unwrap());
    let mut line = Vec::new();
    let mut out = server.0.stdout.take().unwrap();
    let mut byte = [0u8; 1];
    while out.read(&mut byte).unwrap() == 1 && byte[0] != b'\n' {
        line.push(byte[0]);
    }
    let addr = String::from_utf8(line).unwrap();

    // The oxmpi client: two ranks, the tree algorithms (IMPI_C_COLL_MAXLINEAR 1).
    let client = Command::new(&impirun)
        .args(["-client", "0", &addr, "-coll-maxlinear", "1", "-np", "2"])
        .arg(&prog)
        .env("IMPI_AUTH_KEY", "5678")
        .env_remove("IMPI_AUTH_NONE")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut client = Kid(client);

    // The mock foreign client 1.
    let mut s = TcpStream::connect(&addr).unwrap();
    s.set_read_timeout(Some(TIMEOUT)).unwrap();
    s.write_all(&cmd(b"AUTH", &[0, 0, 0, 2])).unwrap();
    assert_eq!(
        take(&mut s, 8),
        [0, 0, 0, 1, 0, 0, 0, 0],
        "IMPI_AUTH_KEY chosen"
    );
    s.write_all(&5678u64.to_be_bytes()).unwrap();
    s.write_all(&cmd(b"IMPI", &1i32.to_be_bytes())).unwrap();
    assert_eq!(
        next_command(&mut s),
        (*b"IMPI", 2i32.to_be_bytes().to_vec())
    );

    let mut host = [0u8; 16];
    host[10] = 0xff;
    host[11] = 0xff;
    host[12..].copy_from_slice(&[127, 0, 0, 1]);
    let pid = 4242i64;
    let idle = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
    let port = idle.local_addr().unwrap().port() as u32;
    let u4 = |v: u32| v.to_be_bytes().to_vec();
    let labels: Vec<(i32, Vec<u8>)> = vec![
        (0x1000, [u4(0), u4(0)].concat()),
        (0x1100, u4(1)),
        (0x1200, u4(1)),
        (0x1300, u4(4000)),
        (0x1400, u4(32767)),
        (0x1500, u4(u32::MAX)),
        (0x1600, u4(1)),
        (0x2000, host.to_vec()),
        (0x2100, u4(port)),
        (0x2200, u4(1)),
        (0x2300, u4(100)),
        (0x2400, u4(200)),
        (0x3000, host.to_vec()),
        (0x3100, pid.to_be_bytes().to_vec()),
    ];
    let (mut ports, mut ips, mut pids) = (Vec::new(), Vec::new(), Vec::new());
    for (label, data) in &labels {
        let mut c = label.to_be_bytes().to_vec();
        c.extend_from_slice(data);
        s.write_all(&cmd(b"COLL", &c)).unwrap();
        loop {
            let (code, p) = next_command(&mut s);
            assert_eq!(&code, b"COLL");
            let got = i32::from_be_bytes(p[..4].try_into().unwrap());
            let d = &p[8..];
            match got {
                0x2100 => {
                    ports = d[..8]
                        .chunks(4)
                        .map(|c| u32::from_be_bytes(c.try_into().unwrap()))
                        .collect()
                }
                0x3000 => {
                    ips = d[..32]
                        .chunks(16)
                        .map(|c| <[u8; 16]>::try_from(c).unwrap())
                        .collect()
                }
                0x3100 => {
                    pids = d[..16]
                        .chunks(8)
                        .map(|c| i64::from_be_bytes(c.try_into().unwrap()))
                        .collect()
                }
                _ => {}
            }
            if got == *label {
                break;
            }
        }
    }
    s.write_all(&cmd(b"DONE", &[])).unwrap();
    loop {
        let (code, _) = next_command(&mut s);
        if &code == b"DONE" {
            break;
        }
    }
    // The dance: host 2 connects to hosts 0 and 1 (each an oxmpi rank).
    let me = (host, pid);
    let mut chans: Vec<Chan> = (0..2)
        .map(|h| {
            let mut c = TcpStream::connect(("127.0.0.1", ports[h] as u16)).unwrap();
            c.set_read_timeout(Some(TIMEOUT)).unwrap();
            c.write_all(&2i32.to_be_bytes()).unwrap();
            Chan {
                s: c,
                me,
                them: (ips[h], pids[h]),
                sent: 0,
            }
        })
        .collect();
    let r0 = &mut chans[0];

    // MPI_Bcast from rank 0 on MPI_COMM_WORLD (collective context 1, IMPI_BCAST_TAG).
    let x = r0.expect(1, 120, 4, "bcast from 0");
    let ext32 = match x[..] {
        [0, 0, 0, 42] => true,
        [42, 0, 0, 0] => false,
        _ => panic!("bcast carried {x:?}"),
    };
    let i4 = |v: i32| {
        if ext32 {
            v.to_be_bytes()
        } else {
            v.to_le_bytes()
        }
    };
    // MPI_Reduce to 0: this client's master sends its value (3) with IMPI_REDUCE_TAG.
    r0.send(1, 190, &i4(3));
    // MPI_Comm_dup (4.6): the allreduce of IMPI_max_cid (ours is 1) is a reduce to 0,
    // then a bcast from 0 of the maximum, which oxmpi's masters alone send.
    let one = if ext32 {
        1u64.to_be_bytes()
    } else {
        1u64.to_le_bytes()
    };
    r0.send(1, 190, &one);
    let m = r0.expect(1, 120, 8, "maximum context id");
    let m = if ext32 {
        u64::from_be_bytes(m.try_into().unwrap())
    } else {
        u64::from_le_bytes(m.try_into().unwrap())
    };
    assert!(m >= 3 && m % 2 == 1, "IMPI_max_cid {m}");
    let dup = m + 2; // the duplicate's collective context: (max + 1) + 1
                     // MPI_Bcast from world rank 2 (us) on the duplicate.
    r0.send(dup, 120, &i4(7));
    // MPI_Comm_free (4.5): a barrier on the duplicate; then MPI_Finalize's on the world
    // (4.24). Linear or tree, with two masters each sends once and receives once.
    r0.send(dup, 110, &[]);
    r0.expect(dup, 110, 0, "barrier of MPI_Comm_free");
    r0.send(1, 110, &[]);
    r0.expect(1, 110, 0, "barrier of MPI_Finalize");
    // Finalization: nothing else came from rank 0, and nothing at all from rank 1 (no
    // global phase runs on a process that is not a master).
    for (i, c) in chans.iter_mut().enumerate() {
        let (p, _) = next_packet(&mut c.s);
        assert_eq!(p.kind, 7, "IMPI_PK_FINI from rank {i}: {p:?}");
        c.s.write_all(
            &Pk {
                kind: 7,
                ..Default::default()
            }
            .encode(),
        )
        .unwrap();
        c.s.shutdown(std::net::Shutdown::Write).unwrap();
    }
    for c in &mut chans {
        let mut rest = Vec::new();
        c.s.read_to_end(&mut rest).unwrap();
        assert!(rest.is_empty());
    }
    s.write_all(&cmd(b"FINI", &[])).unwrap();

    let start = Instant::now();
    let status = loop {
        if let Some(st) = client.0.try_wait().unwrap() {
            break st;
        }
        assert!(start.elapsed() < TIMEOUT, "the oxmpi client did not end");
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut stdout = String::new();
    client
        .0
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut stdout)
        .unwrap();
    let mut stderr = String::new();
    client
        .0
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    assert!(status.success(), "client: {stdout}{stderr}");
    assert!(stdout.contains(" No Errors"), "{stdout}{stderr}");
    drop(idle);
    let _ = std::fs::remove_dir_all(&dir);
}
