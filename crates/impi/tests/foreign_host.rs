//! The conformance tester's mock foreign host (IMPI chapter 3): a mock server that
//! also plays a foreign client 1 (one host, one proc, no oxmpi extension) drives an
//! oxmpi client 0 that runs a small program, and exchanges packets with the oxmpi rank
//! over the host connection: every header field oxmpi sends is checked, and the mock
//! sends what a foreign implementation would, including faults. Needs the staged
//! prefix (`make stage`); without it each test says so and passes.

mod common;

use common::*;
use std::io::{Read, Write};
use std::net::{Ipv4Addr, Shutdown, TcpListener, TcpStream};
use std::process::Command;
use std::time::Duration;

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
    assert_eq!(take(&mut s, 12), cmd(b"AUTH", &[0, 0, 0, 2]));
    s.write_all(&[0, 0, 0, 1, 0, 0, 0, 0]).unwrap();
    assert_eq!(take(&mut s, 8), 5678u64.to_be_bytes());
    assert_eq!(take(&mut s, 12), cmd(b"IMPI", &0i32.to_be_bytes()));
    s.write_all(&cmd(b"IMPI", &2i32.to_be_bytes())).unwrap();

    let ip = mapped_loopback();
    let foreign_pid = 77i64;
    let u4 = |v: u32| v.to_be_bytes().to_vec();
    let host1 = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
    let host1_port = host1.local_addr().unwrap().port() as u32;
    let (mut port0, mut pid0) = (0u16, 0i64);
    loop {
        let h = take(&mut s, 8);
        if h == cmd(b"DONE", &[]) {
            break;
        }
        assert_eq!(&h[..4], b"COLL");
        let p = take(&mut s, be32(&h[4..]) as usize);
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
        server: s,
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
            let h = take(ch, 128);
            if field(&h, 0, 4) == 2 {
                let ack = Pk::new(PROTOACK, 0, them, me, 0, 0);
                assert_eq!(h, ack.encode().to_vec(), "PROTOACK");
                acks.set(acks.get() + 1);
                continue;
            }
            let n = if field(&h, 0, 4) <= 1 {
                field(&h, 4, 4)
            } else {
                0
            };
            let d = take(ch, n as usize);
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
    let syncack = Pk::new(SYNCACK, 0, me, them, sync_srqid, 0);
    ch.write_all(&syncack.encode()).unwrap();
    let cid = cid.unwrap();
    let reply = |tag: i32, seq: u64, data: &[u8]| {
        let p = Pk {
            lsrank: 1,
            tag,
            cid,
            seq,
            ..Pk::new(
                DATA,
                data.len() as u32,
                me,
                them,
                500 + seq,
                data.len() as u64,
            )
        };
        p.with(data)
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
    assert_eq!(h, fini().encode().to_vec(), "IMPI_PK_FINI");
    answer_fini(&mut ch);
    drop(ch);
    expect_client_fini(s);
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
    let p = Pk {
        lsrank: 1,
        tag: 5,
        seq: 1,
        ..Pk::new(DATASYNC, 4000, job.foreign, job.oxmpi_proc, 9, 100_000)
    };
    job.ch.write_all(&p.encode()).unwrap();
    job.ch.write_all(&[7u8; 4000]).unwrap();
    // Whether or not `pk_cid` 0 is MPI_COMM_WORLD's context here (the receive matches
    // or the message waits), the host goes away with the message unfinished.
    std::thread::sleep(Duration::from_millis(300));
    job.ch.shutdown(Shutdown::Both).unwrap();
    let o = failed_job(job);
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

/// The mock foreign host's side of a [`MockJob`] channel: sends as world rank 1 in
/// `MPI_COMM_WORLD` (context 0, 4.3), keeping to oxmpi's window (ackmark 1, hiwater 4,
/// as `mock_job` starts it), and reads oxmpi's packets, counting its PROTOACKs.
struct Host {
    ch: TcpStream,
    me: ProcId,
    them: ProcId,
    /// Data packets sent and PROTOACKs received.
    sent: u32,
    acks: u32,
    /// Packets read while waiting for a PROTOACK.
    early: std::collections::VecDeque<(Pk, Vec<u8>)>,
    seq: u64,
}

/// oxmpi's `IMPI_H_HIWATER` in a [`MockJob`].
const OXMPI_HIWATER: u32 = 4;

impl Host {
    fn new(job: &MockJob) -> Host {
        Host {
            ch: job.ch.try_clone().unwrap(),
            me: job.foreign,
            them: job.oxmpi_proc,
            sent: 0,
            acks: 0,
            early: Default::default(),
            seq: 0,
        }
    }

    /// A data packet of this host's message (`pk_lsrank` 1, context 0).
    fn data(&mut self, kind: u32, tag: i32, srqid: u64, msglen: u64, data: &[u8]) -> Vec<u8> {
        self.seq += 1;
        Pk {
            lsrank: 1,
            tag,
            seq: self.seq,
            ..Pk::new(kind, data.len() as u32, self.me, self.them, srqid, msglen)
        }
        .with(data)
    }

    /// Sends a data packet, waiting first for the window when it is full.
    fn send_packet(&mut self, bytes: &[u8]) {
        while self.sent - self.acks >= OXMPI_HIWATER {
            let p = read_packet(&mut self.ch);
            if p.0.kind == PROTOACK {
                self.acks += 1;
            } else {
                self.early.push_back(p);
            }
        }
        self.sent += 1;
        self.ch.write_all(bytes).unwrap();
    }

    /// Sends a short message.
    fn send(&mut self, kind: u32, tag: i32, srqid: u64, data: &[u8]) {
        let b = self.data(kind, tag, srqid, data.len() as u64, data);
        self.send_packet(&b);
    }

    /// Sends a header-only packet (SYNCACK, CANCEL, ...).
    fn control(&mut self, kind: u32, srqid: u64, drqid: u64) {
        let p = Pk {
            drqid,
            ..Pk::new(kind, 0, self.me, self.them, srqid, 0)
        };
        self.ch.write_all(&p.encode()).unwrap();
    }

    /// The next packet from oxmpi other than a PROTOACK (checked and counted).
    fn next(&mut self) -> (Pk, Vec<u8>) {
        if let Some(p) = self.early.pop_front() {
            return p;
        }
        loop {
            let (p, d) = read_packet(&mut self.ch);
            if p.kind == PROTOACK {
                assert_eq!(
                    p,
                    Pk::new(PROTOACK, 0, self.them, self.me, 0, 0),
                    "PROTOACK"
                );
                self.acks += 1;
                continue;
            }
            return (p, d);
        }
    }

    /// Checks the fields of a header-only packet from oxmpi (table 3.1: the rest zero).
    fn expect_control(&mut self, kind: u32, srqid: u64, what: &str) -> Pk {
        let (p, d) = self.next();
        let want = Pk {
            drqid: p.drqid,
            ..Pk::new(kind, 0, self.them, self.me, srqid, 0)
        };
        assert_eq!((p, d.len()), (want, 0), "{what}");
        p
    }

    /// MPI_Finalize's chapter 4 barrier on MPI_COMM_WORLD (4.24), then IMPI_PK_FINI
    /// both ways (3.8); returns when oxmpi has closed the channel.
    fn finalize(mut self) {
        let barrier = self.data(DATA, 110, 9999, 0, &[]);
        let mut b = Pk::decode(&barrier);
        b.cid = 1;
        self.send_packet(&b.encode());
        let (p, d) = self.next();
        assert_eq!(
            (p.kind, p.tag, p.cid, d.len()),
            (DATA, 110, 1, 0),
            "barrier: {p:?}"
        );
        let (p, _) = self.next();
        assert_eq!(p, fini(), "IMPI_PK_FINI");
        assert_eq!(
            self.acks, self.sent,
            "a PROTOACK for every packet (ackmark 1)"
        );
        answer_fini(&mut self.ch);
    }
}

/// Runs `prog` in a [`MockJob`] and exchanges packets with it through `talk` as the
/// mock foreign host, which then finalizes the channel; the job must end well.
fn exchange(name: &str, prog: &str, talk: impl FnOnce(&mut Host)) {
    let Some(job) = mock_job(name, prog) else {
        return;
    };
    let mut h = Host::new(&job);
    talk(&mut h);
    h.finalize();
    finish_job(job);
}

/// Ends a [`MockJob`] whose host channel has been finalized: FINI to the server, and
/// the program's " No Errors".
fn finish_job(job: MockJob) {
    let MockJob {
        oxmpi,
        server: s,
        ch,
        dir,
        ..
    } = job;
    drop(ch);
    expect_client_fini(s);
    let o = oxmpi.finish_within(Duration::from_secs(60));
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(o.code, 0, "{}\n{}", o.stdout, o.stderr);
    assert!(
        o.stdout.contains(" No Errors"),
        "{}\n{}",
        o.stdout,
        o.stderr
    );
}

/// Ends a [`MockJob`] that must fail: the server hears no `FINI`, the host channel is
/// dropped, and the client ends with an error status in bounded time; its output.
fn failed_job(job: MockJob) -> Output {
    let MockJob {
        oxmpi,
        server: mut s,
        ch,
        dir,
        ..
    } = job;
    let mut rest = Vec::new();
    let _ = s.read_to_end(&mut rest);
    assert!(
        !rest.windows(4).any(|w| w == b"FINI"),
        "no FINI after a failed job"
    );
    drop(ch);
    let o = oxmpi.finish_within(Duration::from_secs(60));
    let _ = std::fs::remove_dir_all(&dir);
    assert_ne!(o.code, 0, "{}", o.stdout);
    o
}

fn pattern(n: usize, salt: u8) -> Vec<u8> {
    (0..n).map(|i| (i * 7 + i / 255) as u8 ^ salt).collect()
}

/// Long messages (3.7.2) both ways, with the mock's `IMPI_C_DATALEN` of 4000 as the
/// negotiated maximum: oxmpi's 10003-byte message comes as a `DATASYNC` of 4000 bytes,
/// then (after the mock's `SYNCACK`, whose `pk_drqid` it must echo) `DATA` packets of
/// 4000 and 2003 bytes, every header field checked; the mock's 9000-byte message is
/// answered with a `SYNCACK` naming its `pk_srqid` and a `pk_drqid` that the mock's
/// later packets carry, and arrives whole (the program checks every byte).
#[test]
fn long_messages_split_at_maxdatalen() {
    const PROG: &str = r#"
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
static unsigned char pat(int i, int salt) { return (unsigned char)((i * 7 + i / 255) ^ salt); }
int main(int argc, char **argv) {
    int errs = 0, cnt;
    MPI_Init(&argc, &argv);
    unsigned char *b = malloc(10003);
    for (int i = 0; i < 10003; i++) b[i] = pat(i, 0x5a);
    MPI_Send(b, 10003, MPI_BYTE, 1, 21, MPI_COMM_WORLD);
    MPI_Status st;
    MPI_Recv(b, 10003, MPI_BYTE, 1, 22, MPI_COMM_WORLD, &st);
    MPI_Get_count(&st, MPI_BYTE, &cnt);
    if (cnt != 9000 || st.MPI_SOURCE != 1 || st.MPI_TAG != 22) errs++;
    for (int i = 0; i < 9000; i++)
        if (b[i] != pat(i, 0x33)) { errs++; break; }
    printf(errs ? " Found %d errors\n" : " No Errors\n", errs);
    MPI_Finalize();
    return 0;
}
"#;
    exchange("long", PROG, |h| {
        // oxmpi to the mock.
        let msg = pattern(10003, 0x5a);
        let (first, d) = h.next();
        let want = Pk {
            lsrank: 0,
            tag: 21,
            cid: 0,
            seq: first.seq,
            ..Pk::new(DATASYNC, 4000, h.them, h.me, first.srqid, 10003)
        };
        assert_eq!(first, want, "a long message's first packet");
        assert_ne!(first.seq, 0, "pk_seqnum of the first packet: {first:?}");
        assert_eq!(d, msg[..4000], "the first 4000 bytes");
        h.control(SYNCACK, first.srqid, 0xD00D_F00D_1234);
        let mut off = 4000;
        let mut seq = first.seq;
        while off < msg.len() {
            let (p, d) = h.next();
            let n = (msg.len() - off).min(4000);
            let want = Pk {
                drqid: 0xD00D_F00D_1234,
                lsrank: 0,
                tag: 21,
                cid: 0,
                seq: p.seq,
                ..Pk::new(DATA, n as u32, h.them, h.me, first.srqid, 10003)
            };
            assert_eq!(p, want, "the packet at byte {off}");
            assert!(p.seq > seq, "pk_seqnum grows: {p:?}");
            seq = p.seq;
            assert_eq!(d, msg[off..off + n], "bytes {off}..{}", off + n);
            off += n;
        }
        // The mock to oxmpi: 9000 bytes in packets of 4000, 4000 and 1000.
        let back = pattern(9000, 0x33);
        let b = h.data(DATASYNC, 22, 0x77_0000_0001, 9000, &back[..4000]);
        h.send_packet(&b);
        let ack = h.expect_control(
            SYNCACK,
            0x77_0000_0001,
            "SYNCACK of the mock's long message",
        );
        assert_ne!(ack.drqid, 0, "pk_drqid of a long message's SYNCACK");
        for piece in back[4000..].chunks(4000) {
            let mut p = Pk::decode(&h.data(DATA, 22, 0x77_0000_0001, 9000, piece));
            p.drqid = ack.drqid;
            h.send_packet(&p.with(piece));
        }
    });
}

/// Synchronous messages and cancellation (3.7.1, 3.7.4) against the mock host:
/// - the mock's `DATASYNC` that no receive has matched, then its `CANCEL`: oxmpi
///   answers `CANCELYES` and the message is gone (the program's probe finds nothing);
/// - the mock's `DATASYNC` that the program receives: `SYNCACK`, and a later `CANCEL`
///   gets `CANCELNO`;
/// - the program's `MPI_Issend` then `MPI_Cancel`: oxmpi sends `CANCEL` naming the
///   send's `pk_srqid`; the mock's `CANCELYES` cancels it, and for a second one a
///   `SYNCACK` and `CANCELNO` let it complete uncancelled.
#[test]
fn synchronous_sends_and_cancel() {
    const PROG: &str = r#"
#include <mpi.h>
#include <stdio.h>
int main(int argc, char **argv) {
    int errs = 0, flag, v = 0, go;
    MPI_Init(&argc, &argv);
    MPI_Status st;
    /* The mock's DATASYNC (tag 51), received: SYNCACK. */
    MPI_Recv(&v, 1, MPI_INT, 1, 51, MPI_COMM_WORLD, &st);
    if (v != 51) errs++;
    /* The mock cancelled its tag-50 message, then says go. */
    MPI_Recv(&go, 1, MPI_INT, 1, 1, MPI_COMM_WORLD, &st);
    MPI_Iprobe(1, 50, MPI_COMM_WORLD, &flag, &st);
    if (flag) { printf("the cancelled message is still there\n"); errs++; }
    /* Our synchronous sends, cancelled: yes, then no. */
    int x = 60, y = 61;
    MPI_Request r;
    MPI_Issend(&x, 1, MPI_INT, 1, 60, MPI_COMM_WORLD, &r);
    MPI_Cancel(&r);
    MPI_Wait(&r, &st);
    MPI_Test_cancelled(&st, &flag);
    if (!flag) { printf("Issend 60 not cancelled\n"); errs++; }
    MPI_Issend(&y, 1, MPI_INT, 1, 61, MPI_COMM_WORLD, &r);
    MPI_Cancel(&r);
    MPI_Wait(&r, &st);
    MPI_Test_cancelled(&st, &flag);
    if (flag) { printf("Issend 61 cancelled\n"); errs++; }
    printf(errs ? " Found %d errors\n" : " No Errors\n", errs);
    MPI_Finalize();
    return 0;
}
"#;
    exchange("cancel", PROG, |h| {
        let be = |v: i32| v.to_be_bytes();
        // Received: SYNCACK with its pk_srqid, then CANCELNO.
        h.send(DATASYNC, 51, 0x51, &be(51));
        h.expect_control(SYNCACK, 0x51, "SYNCACK of a matched DATASYNC");
        h.control(CANCEL, 0x51, 0);
        h.expect_control(CANCELNO, 0x51, "CANCELNO for a matched message");
        // Unmatched: CANCELYES, and the message is destroyed.
        h.send(DATASYNC, 50, 0x50, &be(50));
        h.control(CANCEL, 0x50, 0);
        h.expect_control(CANCELYES, 0x50, "CANCELYES for an unmatched message");
        h.send(DATA, 1, 0x1, &be(1));
        // The program's Issend 60 and its cancel request.
        let (p, d) = h.next();
        assert_eq!(
            (p.kind, p.tag, p.msglen, &d[..]),
            (DATASYNC, 60, 4, &be(60)[..]),
            "{p:?}"
        );
        h.expect_control(CANCEL, p.srqid, "CANCEL of an Issend");
        h.control(CANCELYES, p.srqid, 0);
        // Issend 61: the mock has matched it (SYNCACK) when the cancel request comes.
        let (p, d) = h.next();
        assert_eq!(
            (p.kind, p.tag, &d[..]),
            (DATASYNC, 61, &be(61)[..]),
            "{p:?}"
        );
        h.control(SYNCACK, p.srqid, 0);
        h.expect_control(CANCEL, p.srqid, "CANCEL of an Issend");
        h.control(CANCELNO, p.srqid, 0);
    });
}

/// A sender ignoring flow control (3.6): the mock sends 12 messages with oxmpi's
/// window of 4 without waiting for a PROTOACK. The receiver cannot tell this from a
/// sender whose ACKs crossed its packets (it acknowledges packets as they arrive,
/// docs/impi.md reading 35), and it reads every packet, so nothing is lost: the
/// messages arrive in order and each is acknowledged. A PROTOACK for packets never
/// sent, which the receiver can tell, ends the job with an error naming the host.
#[test]
fn sender_ignoring_flow_control() {
    const PROG: &str = r#"
#include <mpi.h>
#include <stdio.h>
int main(int argc, char **argv) {
    int errs = 0, v;
    MPI_Init(&argc, &argv);
    for (int i = 0; i < 12; i++) {
        MPI_Recv(&v, 1, MPI_INT, 1, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (v != i) errs++;
    }
    printf(errs ? " Found %d errors\n" : " No Errors\n", errs);
    MPI_Finalize();
    return 0;
}
"#;
    exchange("flood", PROG, |h| {
        for i in 0..12i32 {
            let b = h.data(DATA, 5, 100 + i as u64, 4, &i.to_be_bytes());
            h.sent += 1;
            h.ch.write_all(&b).unwrap();
        }
    });

    let Some(job) = mock_job("spurious-ack", PROG) else {
        return;
    };
    let mut h = Host::new(&job);
    h.ch.write_all(&Pk::new(PROTOACK, 0, h.me, h.them, 0, 0).encode())
        .unwrap();
    drop(h);
    let o = failed_job(job);
    assert!(
        o.stderr.contains("from IMPI host 1") && o.stderr.contains("PROTOACK"),
        "{}",
        o.stderr
    );
}

/// The foreign host vanishes after oxmpi's first packet of a long message, before its
/// `SYNCACK`: the sending rank, blocked in `MPI_Send`, reports the channel's end naming
/// the host, and its client ends with an error, in bounded time, without a `FINI`.
#[test]
fn foreign_host_vanishing_before_syncack() {
    const PROG: &str = r#"
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    char *b = calloc(1, 50000);
    MPI_Send(b, 50000, MPI_BYTE, 1, 5, MPI_COMM_WORLD);
    printf("sent\n");
    MPI_Finalize();
    return 0;
}
"#;
    let Some(job) = mock_job("vanish-send", PROG) else {
        return;
    };
    let mut h = Host::new(&job);
    let (p, d) = h.next();
    assert_eq!(
        (p.kind, p.len, p.msglen, d.len()),
        (DATASYNC, 4000, 50000, 4000),
        "{p:?}"
    );
    drop(h);
    job.ch.shutdown(Shutdown::Both).unwrap();
    let o = failed_job(job);
    assert!(!o.stdout.contains("sent"), "{}", o.stdout);
    assert!(
        o.stderr.contains("IMPI host 1 closed its channel")
            || o.stderr.contains("IMPI channel to host 1"),
        "{}",
        o.stderr
    );
}
