//! Chapter 4 on the wire: a mock foreign client (one host, one proc: world rank 2),
//! written from the specification's byte layouts, joins an oxmpi client of two ranks
//! that runs a program of `tests/impi/progs/`, and checks every packet the oxmpi ranks
//! send it: `pk_cid` (1 for `MPI_COMM_WORLD`'s collectives, the agreed id plus one for
//! a duplicate), `pk_tag` (4.25), `pk_lsrank`, `pk_seqnum`, the payload bytes, and
//! which rank talks to it. It answers as an IMPI 0.0 implementation would.
//! `coll_wire.c`: a bcast, a reduce, `MPI_Comm_dup` and its free on `MPI_COMM_WORLD`,
//! where only the master (rank 0) of the oxmpi client talks to it; `inter_wire.c`:
//! `MPI_Intercomm_create`, `MPI_Comm_dup` and `MPI_Comm_free` of an intercommunicator
//! (4.8, 4.6, 4.5), where both oxmpi ranks do.
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

/// The mock's end of one channel: its own proc, the oxmpi proc, the counters of data
/// packets sent and received (`pk_seqnum`).
struct Chan {
    s: TcpStream,
    me: ProcId,
    them: ProcId,
    sent: u64,
    got: u64,
}

impl Chan {
    /// Sends a message of context `cid` with `tag` as rank `lsrank` of the
    /// communicator.
    fn send(&mut self, cid: u64, tag: i32, lsrank: i32, data: &[u8]) {
        self.sent += 1;
        let p = Pk {
            lsrank,
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
        self.s.write_all(&p.with(data)).unwrap();
    }

    /// Receives the next data packet, a whole message of `len` bytes, and checks every
    /// header field but `pk_srqid` (the sender's own): sent by rank `lsrank` of the
    /// communicator, the next sequence number of the pair, the QoS fields zero.
    fn expect(&mut self, cid: u64, tag: i32, lsrank: i32, len: usize, what: &str) -> Vec<u8> {
        let (p, data) = next_packet(&mut self.s);
        self.got += 1;
        let want = Pk {
            srqid: p.srqid,
            lsrank,
            tag,
            cid,
            seq: self.got,
            ..Pk::new(DATA, len as u32, self.them, self.me, 0, len as u64)
        };
        assert_eq!(p, want, "{what}");
        assert_eq!(data.len(), len, "{what}");
        data
    }
}

/// The mock foreign client 1, joined to an oxmpi client 0 of two ranks that runs
/// `tests/impi/progs/<prog>.c`: the startup (2.3), the dance (host 2 connects to hosts
/// 0 and 1, each an oxmpi rank), then the channels to both ranks.
struct Mock {
    _server: Kid,
    client: Kid,
    s: TcpStream,
    chans: Vec<Chan>,
    _idle: TcpListener,
    dir: std::path::PathBuf,
}

impl Mock {
    /// None (the test is skipped) without a staged prefix.
    fn join(prog: &str) -> Option<Mock> {
        let pre = prefix();
        let (impirun, mpicc) = (pre.join("bin/impirun"), pre.join("bin/mpicc"));
        if !impirun.exists() || !mpicc.exists() {
            eprintln!(
                "coll_wire: no staged oxmpi at {} (make stage); skipped",
                pre.display()
            );
            return None;
        }
        let dir =
            std::env::temp_dir().join(format!("oxmpi-coll-wire-{prog}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let exe = dir.join(prog);
        let src = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join(format!("../../tests/impi/progs/{prog}.c"));
        let cc = Command::new(&mpicc)
            .arg("-o")
            .arg(&exe)
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
            .arg(&exe)
            .env("IMPI_AUTH_KEY", "5678")
            .env_remove("IMPI_AUTH_NONE")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let client = Kid(client);

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

        let host = mapped_loopback();
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
        let chans: Vec<Chan> = (0..2)
            .map(|h| {
                let mut c = TcpStream::connect(("127.0.0.1", ports[h] as u16)).unwrap();
                c.set_read_timeout(Some(TIMEOUT)).unwrap();
                c.write_all(&2i32.to_be_bytes()).unwrap();
                Chan {
                    s: c,
                    me,
                    them: (ips[h], pids[h]),
                    sent: 0,
                    got: 0,
                }
            })
            .collect();
        Some(Mock {
            _server: server,
            client,
            s,
            chans,
            _idle: idle,
            dir,
        })
    }

    /// `MPI_Finalize`: the barrier on `MPI_COMM_WORLD` (4.24; linear or tree, with two
    /// masters each sends once and receives once), then each channel's finalization
    /// (nothing else may come first), the client's `FINI`, and the oxmpi client's
    /// success with " No Errors".
    fn finish(mut self) {
        let r0 = &mut self.chans[0];
        r0.send(1, 110, 2, &[]);
        r0.expect(1, 110, 0, 0, "barrier of MPI_Finalize");
        for (i, c) in self.chans.iter_mut().enumerate() {
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
        for c in &mut self.chans {
            let mut rest = Vec::new();
            c.s.read_to_end(&mut rest).unwrap();
            assert!(rest.is_empty());
        }
        self.s.write_all(&cmd(b"FINI", &[])).unwrap();

        let start = Instant::now();
        let client = &mut self.client.0;
        let status = loop {
            if let Some(st) = client.try_wait().unwrap() {
                break st;
            }
            assert!(start.elapsed() < TIMEOUT, "the oxmpi client did not end");
            std::thread::sleep(Duration::from_millis(20));
        };
        let mut stdout = String::new();
        client
            .stdout
            .take()
            .unwrap()
            .read_to_string(&mut stdout)
            .unwrap();
        let mut stderr = String::new();
        client
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut stderr)
            .unwrap();
        assert!(status.success(), "client: {stdout}{stderr}");
        assert!(stdout.contains(" No Errors"), "{stdout}{stderr}");
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

#[test]
fn bcast_reduce_dup_and_barriers_send_what_chapter_4_says() {
    let Some(mut m) = Mock::join("coll_wire") else {
        return;
    };
    let r0 = &mut m.chans[0];

    // MPI_Bcast from rank 0 on MPI_COMM_WORLD (collective context 1, IMPI_BCAST_TAG).
    let x = r0.expect(1, 120, 0, 4, "bcast from 0");
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
    r0.send(1, 190, 2, &i4(3));
    // MPI_Comm_dup (4.6): the allreduce of IMPI_max_cid (ours is 1) is a reduce to 0,
    // then a bcast from 0 of the maximum, which oxmpi's masters alone send.
    let one = if ext32 {
        1u64.to_be_bytes()
    } else {
        1u64.to_le_bytes()
    };
    r0.send(1, 190, 2, &one);
    let m_ = r0.expect(1, 120, 0, 8, "maximum context id");
    let max = if ext32 {
        u64::from_be_bytes(m_.try_into().unwrap())
    } else {
        u64::from_le_bytes(m_.try_into().unwrap())
    };
    assert!(max >= 3 && max % 2 == 1, "IMPI_max_cid {max}");
    let dup = max + 2; // the duplicate's collective context: (max + 1) + 1
                       // MPI_Bcast from world rank 2 (us) on the duplicate.
    r0.send(dup, 120, 2, &i4(7));
    // MPI_Comm_free (4.5): a barrier on the duplicate. Linear or tree, with two masters
    // each sends once and receives once.
    r0.send(dup, 110, 2, &[]);
    r0.expect(dup, 110, 0, 0, "barrier of MPI_Comm_free");
    // Nothing else comes from rank 0, and nothing at all from rank 1 (no global phase
    // runs on a process that is not a master): `finish` checks that FINI comes next.
    m.finish();
}

/// 4.8, 4.6 and 4.5 on an intercommunicator whose local group is the two oxmpi ranks
/// and whose remote group is the mock (world rank 2): the exact bytes of every packet
/// the oxmpi ranks send it (header fields, the external32 payloads, the per-pair
/// sequence numbers), and the mock's packets as the specification writes them, which
/// the oxmpi ranks must accept (`progs/inter_wire.c` checks what they deliver).
#[test]
fn intercomm_create_dup_and_free_send_what_chapter_4_says() {
    let Some(mut m) = Mock::join("inter_wire") else {
        return;
    };
    let be8 = |v: u64| v.to_be_bytes().to_vec();
    let [r0, r1] = &mut m.chans[..] else {
        unreachable!()
    };
    // 4.8: the leaders' swap over MPI_COMM_WORLD (point-to-point context 0, the
    // caller's tag 77) of (maximum context id, group size) as two IMPI_UINT8 (reading
    // 51); the mock's maximum, 1001, is above oxmpi's.
    r0.send(0, 77, 2, &[be8(1001), be8(1)].concat());
    let out = r0.expect(0, 77, 0, 16, "4.8: (maxcid, lgsize)");
    let theirs = u64::from_be_bytes(out[..8].try_into().unwrap());
    assert!(
        theirs % 2 == 1 && (3..1001).contains(&theirs),
        "oxmpi's IMPI_max_cid {theirs}"
    );
    assert_eq!(out[8..], be8(2), "the local group size");
    // Then the groups' MPI_COMM_WORLD ranks, as MPI_INT: [0, 1] and [2].
    r0.send(0, 77, 2, &2i32.to_be_bytes());
    let ranks = r0.expect(0, 77, 0, 8, "4.8: the local group's world ranks");
    assert_eq!(ranks, [0, 0, 0, 0, 0, 0, 0, 1]);
    // The intercommunicator: contexts 1002 and 1003; IMPI_max_cid is 1003 everywhere.
    let inter = 1003;
    // 4.6 in the collective context with IMPI_DUP_TAG: the remote non-leader (oxmpi
    // rank 1) sends its IMPI_max_cid to the mock, the leaders swap, and the mock sends
    // the maximum to rank 1. The mock's 2001 wins: the duplicate has 2002 and 2003.
    assert_eq!(
        r1.expect(inter, 210, 1, 8, "4.6: the non-leader's IMPI_max_cid"),
        be8(1003)
    );
    r0.send(inter, 210, 0, &be8(2001));
    assert_eq!(
        r0.expect(inter, 210, 0, 8, "4.6: the leader's maximum"),
        be8(1003)
    );
    r1.send(inter, 210, 0, &be8(2001));
    // A message each way on the duplicate's point-to-point context.
    assert_eq!(
        r0.expect(2002, 9, 0, 4, "MPI_Send on the duplicate"),
        [1, 2, 3, 4]
    );
    r1.send(2002, 9, 0, &[0x0a, 0x0b, 0x0c, 0x0d]);
    // 4.5 for the duplicate, then for the intercommunicator: empty messages with
    // IMPI_COMM_FREE_TAG, rank 1 to the mock (the remote leader), the leaders' swap,
    // the mock to rank 1.
    for (cid, what) in [(2003, "the duplicate"), (inter, "the intercommunicator")] {
        r1.expect(cid, 230, 1, 0, what);
        r0.send(cid, 230, 0, &[]);
        r0.expect(cid, 230, 0, 0, what);
        r1.send(cid, 230, 0, &[]);
    }
    m.finish();
}
