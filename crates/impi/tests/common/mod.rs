//! What the IMPI integration tests share: the byte layouts of the specification
//! written out independently of this crate's encoders (commands of 2.3.2, the
//! 128-byte `IMPI_Packet` of 3.2), reading helpers, the staged prefix, and `impirun`
//! processes bounded in time and killed at the end.

// Each test file uses a part of this module.
#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub const IMPIRUN: &str = env!("CARGO_BIN_EXE_impirun");
/// How long a test waits for an `impirun` process to end.
pub const LIMIT: Duration = Duration::from_secs(30);
/// The job key every test uses (`IMPI_AUTH_KEY`).
pub const KEY: &[(&str, &str)] = &[("IMPI_AUTH_KEY", "5678")];

/// An `IMPI_Cmd` (2.3.2) with its payload.
pub fn cmd(code: &[u8; 4], payload: &[u8]) -> Vec<u8> {
    let mut v = code.to_vec();
    v.extend_from_slice(&(payload.len() as u32).to_be_bytes());
    v.extend_from_slice(payload);
    v
}

/// Reads exactly `n` bytes (the stream's read timeout bounds the wait).
pub fn take(s: &mut TcpStream, n: usize) -> Vec<u8> {
    let mut v = vec![0u8; n];
    s.read_exact(&mut v).expect("read from the peer");
    v
}

/// One command: its code and payload.
pub fn next_command(s: &mut TcpStream) -> ([u8; 4], Vec<u8>) {
    let h = take(s, 8);
    let len = be32(&h[4..]) as usize;
    (h[..4].try_into().unwrap(), take(s, len))
}

pub fn be32(b: &[u8]) -> u32 {
    u32::from_be_bytes(b[..4].try_into().unwrap())
}

/// 127.0.0.1 in the IPv4-mapped 16-byte form (1.2.3).
pub fn mapped_loopback() -> [u8; 16] {
    let mut a = [0u8; 16];
    a[10] = 0xff;
    a[11] = 0xff;
    a[12..].copy_from_slice(&[127, 0, 0, 1]);
    a
}

/// An `IMPI_Proc`: host id and pid.
pub type ProcId = ([u8; 16], i64);

/// The packet types of 3.3.
pub const DATA: u32 = 0;
pub const DATASYNC: u32 = 1;
pub const PROTOACK: u32 = 2;
pub const SYNCACK: u32 = 3;
pub const CANCEL: u32 = 4;
pub const CANCELYES: u32 = 5;
pub const CANCELNO: u32 = 6;
pub const FINI: u32 = 7;

/// Every field of an `IMPI_Packet` (3.2), at the specification's offsets.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Pk {
    pub kind: u32,
    pub len: u32,
    pub src: ProcId,
    pub dest: ProcId,
    pub srqid: u64,
    pub drqid: u64,
    pub msglen: u64,
    pub lsrank: i32,
    pub tag: i32,
    pub cid: u64,
    pub seq: u64,
    pub count: i64,
    pub dtype: u64,
    pub reserved: u64,
}

impl Pk {
    /// A packet with the given fields, the rest zero.
    pub fn new(kind: u32, len: u32, src: ProcId, dest: ProcId, srqid: u64, msglen: u64) -> Pk {
        Pk {
            kind,
            len,
            src,
            dest,
            srqid,
            msglen,
            ..Pk::default()
        }
    }

    pub fn encode(&self) -> [u8; 128] {
        let mut b = [0u8; 128];
        b[0..4].copy_from_slice(&self.kind.to_be_bytes());
        b[4..8].copy_from_slice(&self.len.to_be_bytes());
        b[8..24].copy_from_slice(&self.src.0);
        b[24..32].copy_from_slice(&self.src.1.to_be_bytes());
        b[32..48].copy_from_slice(&self.dest.0);
        b[48..56].copy_from_slice(&self.dest.1.to_be_bytes());
        b[56..64].copy_from_slice(&self.srqid.to_be_bytes());
        b[64..72].copy_from_slice(&self.drqid.to_be_bytes());
        b[72..80].copy_from_slice(&self.msglen.to_be_bytes());
        b[80..84].copy_from_slice(&self.lsrank.to_be_bytes());
        b[84..88].copy_from_slice(&self.tag.to_be_bytes());
        b[88..96].copy_from_slice(&self.cid.to_be_bytes());
        b[96..104].copy_from_slice(&self.seq.to_be_bytes());
        b[104..112].copy_from_slice(&self.count.to_be_bytes());
        b[112..120].copy_from_slice(&self.dtype.to_be_bytes());
        b[120..128].copy_from_slice(&self.reserved.to_be_bytes());
        b
    }

    pub fn decode(b: &[u8]) -> Pk {
        let u4 = |o: usize| be32(&b[o..]);
        let u8_ = |o: usize| u64::from_be_bytes(b[o..o + 8].try_into().unwrap());
        Pk {
            kind: u4(0),
            len: u4(4),
            src: (b[8..24].try_into().unwrap(), u8_(24) as i64),
            dest: (b[32..48].try_into().unwrap(), u8_(48) as i64),
            srqid: u8_(56),
            drqid: u8_(64),
            msglen: u8_(72),
            lsrank: u4(80) as i32,
            tag: u4(84) as i32,
            cid: u8_(88),
            seq: u8_(96),
            count: u8_(104) as i64,
            dtype: u8_(112),
            reserved: u8_(120),
        }
    }

    /// The encoded header followed by `data`.
    pub fn with(&self, data: &[u8]) -> Vec<u8> {
        let mut v = self.encode().to_vec();
        v.extend_from_slice(data);
        v
    }
}

/// The next packet and its data (`DATA` and `DATASYNC` carry `pk_len` bytes).
pub fn read_packet(s: &mut TcpStream) -> (Pk, Vec<u8>) {
    let p = Pk::decode(&take(s, 128));
    let data = if p.kind == DATA || p.kind == DATASYNC {
        take(s, p.len as usize)
    } else {
        Vec::new()
    };
    (p, data)
}

/// `IMPI_PK_FINI` (3.8): the packet type, every other field zero.
pub fn fini() -> Pk {
    Pk::new(FINI, 0, ([0; 16], 0), ([0; 16], 0), 0, 0)
}

/// The end of a host channel whose other side has sent its `IMPI_PK_FINI` (3.8):
/// sends this side's, checks that the other side closes with nothing after it.
pub fn answer_fini(ch: &mut TcpStream) {
    ch.write_all(&fini().encode()).unwrap();
    let mut rest = Vec::new();
    ch.read_to_end(&mut rest).unwrap();
    assert!(rest.is_empty(), "nothing after IMPI_PK_FINI");
}

/// The server's side of a client that ended well: its `FINI` command (2.3.7), then
/// the connection is dropped.
pub fn expect_client_fini(mut s: TcpStream) {
    assert_eq!(take(&mut s, 8), cmd(b"FINI", &[]));
}

/// The staged prefix (`make stage`: `target/oxmpi`, or `OXMPI_PREFIX`).
pub fn prefix() -> PathBuf {
    match std::env::var_os("OXMPI_PREFIX") {
        Some(p) => PathBuf::from(p),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/oxmpi"),
    }
}

/// The staged `mpicc`, when the tree has been staged.
pub fn staged_mpicc() -> Option<PathBuf> {
    let cc = prefix().join("bin/mpicc");
    cc.exists().then_some(cc)
}

/// An `impirun` process, killed when dropped.
pub struct Proc {
    pub child: Option<Child>,
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

pub struct Output {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Proc {
    pub fn spawn(args: &[&str], env: &[(&str, &str)]) -> Proc {
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

    /// Waits (bounded by [`LIMIT`]) and collects the output.
    pub fn finish(self) -> Output {
        self.finish_within(LIMIT)
    }

    /// Waits at most `limit` and collects the output.
    pub fn finish_within(mut self, limit: Duration) -> Output {
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
            if start.elapsed() > limit {
                let _ = c.kill();
                let _ = c.wait();
                panic!("impirun {} did not end within {limit:?}", self.name);
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
